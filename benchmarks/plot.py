"""Draw the benchmarks' results as PNG plots.

    pip install '.[bench]'      # matplotlib
    python benchmarks/plot.py [--out-dir benchmarks/plots]               # every results file
    python benchmarks/plot.py FILE.json [FILE.json ...] [--out-dir DIR]  # these files only

Without files, every file of benchmarks/results/ (``<machine>/<suite>.json``, see measured.py)
is drawn into ``<out-dir>/<machine>/<suite>-<plot>.png``; a file given by name goes to
``<out-dir>/<its name>-<plot>.png``. Each file gets the plots it has rows for (PLOTS):

- tflops: TFLOP/s (TOP/s for integers) against n of the "device" rows (matmul.py --only
  device), a panel per dtype, a line per backend.
- host-time: seconds against n of the "host" rows (NumPy in, NumPy out), log-log, a line per
  backend, each dtype's floor dashed.
- floor: fraction of the floor (floor / time; 1 is at the floor) of the "host" rows.
- per-call: per-call time of the tiny rows ("host-tiny", "device-call-tiny"), as bars; for
  gpuarray.py's file, microseconds per call of its small operations, a bar per library.
- speedup: the "speedup" over its peer of each "device-call-tiny" row that has one, as bars
  (builds.py's: a group per case and n, a bar per build); dashed at 1.
- startup: fresh process to first result ("startup") and ``import pyctk`` after NumPy
  ("import"), as bars; or, for startup.py's file, each step's median milliseconds.
- devices: one GPU against all of them ("host-devices"), as bars.
- bandwidth: gpuarray.py's "bandwidth" rows, percent of the copy's bandwidth, a group per
  operation, a bar per library (dashed: the target).
- overhead: dask_matmul.py's rows, seconds per row, dashed at 115% of "whole".
- choices: auto_table.py's rows, cuBLAS's time over the kernels' against n, a line per case
  (above 1: the kernels are faster).
- clocks: clocks.py's "sustained" rows, each held rate's share of the dense peak at the SM
  clock it held, as bars.

The docs' performance page draws the same figures at build time (docs/_ext/performance.py
imports this file), so nothing here needs to be run for the docs.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
from pathlib import Path
from typing import Callable

from matplotlib.figure import Figure  # not pyplot: files only, no display or backend to pick

RESULTS = Path(__file__).resolve().parent / "results"

SHOWN = {"n": "n={}"}  # how a key's value reads in a label, where not as itself


def label(r: dict, *keys: str) -> str:
    """The row's ``keys`` values, as a legend or bar label."""
    return " ".join(SHOWN.get(key, "{}").format(r[key]) for key in keys if r.get(key) is not None)


def lines(rows: list[dict], *keys: str) -> dict[str, list[dict]]:
    """The rows grouped into one line per label(row, *keys), each sorted by n."""
    grouped: dict[str, list[dict]] = {}
    for r in sorted(rows, key=lambda r: r["n"]):
        grouped.setdefault(label(r, *keys), []).append(r)
    return grouped


def sizes_axis(axis, rows: list[dict]) -> None:
    """A log x axis with a tick at each n of ``rows``, labelled as the number."""
    sizes = sorted({r["n"] for r in rows})
    axis.set_xscale("log", base=2)
    axis.set_xticks(sizes, [str(n) for n in sizes])
    axis.minorticks_off()


def title(data: dict, what: str) -> str:
    """``what``, with the GPU and date the file's "measured" object gives."""
    measured = data.get("measured", {})
    where = ", ".join(str(x) for x in (measured.get("gpu"), measured.get("date")) if x)
    return f"{what} ({where})" if where else what


def matmul_rows(data: dict, *kinds: str) -> list[dict]:
    """benchmarks/matmul.py's (and builds.py's) rows of ``kinds``."""
    return [r for r in data.get("rows", []) if "backend" in r and r.get("kind") in kinds]


def plot_tflops(data: dict):
    rows = matmul_rows(data, "device")
    if not rows:
        return None
    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    columns = min(3, len(dtypes))
    grid = -(-len(dtypes) // columns)
    figure = Figure(figsize=(max(8.0, 4.2 * columns), 3.4 * grid + 0.6))
    axes = figure.subplots(grid, columns, squeeze=False)
    for axis, dtype in zip(axes.flat, dtypes):
        for name, line in lines([r for r in rows if r["dtype"] == dtype], "backend").items():
            axis.plot([r["n"] for r in line], [r["tflops"] for r in line], marker="o", label=name)
        integer = dtype.startswith(("int", "uint", "bool"))
        axis.set(title=dtype, xlabel="n (n x n @ n x n)", ylabel="TOP/s" if integer else "TFLOP/s")
        sizes_axis(axis, rows)
        axis.set_ylim(bottom=0)
        axis.legend(fontsize="small")
    for axis in list(axes.flat)[len(dtypes) :]:
        axis.set_visible(False)
    figure.suptitle(title(data, "GPU operands, device time"))
    figure.tight_layout()
    return figure


def plot_host_time(data: dict):
    rows = matmul_rows(data, "host")
    if not rows:
        return None
    figure = Figure(figsize=(8, 4.5))
    axis = figure.subplots()
    for name, line in lines(rows, "backend", "dtype").items():
        axis.plot([r["n"] for r in line], [r["seconds"] for r in line], marker="o", label=name)
    floors = {(r["dtype"], r["n"]): r for r in rows if "floor_seconds" in r}
    for name, line in lines(list(floors.values()), "dtype").items():
        axis.plot([r["n"] for r in line], [r["floor_seconds"] for r in line], "k--", label=f"{name} floor")
    axis.set(title=title(data, "NumPy in, NumPy out"), yscale="log", xlabel="n (n x n @ n x n)", ylabel="seconds")
    sizes_axis(axis, rows)
    axis.legend(fontsize="small")
    figure.tight_layout()
    return figure


def plot_floor(data: dict):
    floored = [r for r in matmul_rows(data, "host") if "fraction_of_floor" in r]
    if not floored:
        return None
    figure = Figure(figsize=(8, 4.5))
    axis = figure.subplots()
    for name, line in lines(floored, "backend", "dtype").items():
        axis.plot([r["n"] for r in line], [r["fraction_of_floor"] for r in line], marker="o", label=name)
    axis.axhline(1.0, color="k", linestyle="--", linewidth=0.8)
    axis.set(
        title=title(data, "NumPy in, NumPy out: floor / time"),
        ylim=(0, 1.05),
        xlabel="n (n x n @ n x n)",
        ylabel="fraction of the floor (1: at it)",
    )
    sizes_axis(axis, floored)
    axis.legend(fontsize="small")
    figure.tight_layout()
    return figure


def bars(names: list[str], values: list[float], unit: str, heading: str, parity: float | None = None):
    """Horizontal bars, first on top, each labelled with its value; dashed at ``parity``."""
    figure = Figure(figsize=(8, 1.2 + 0.3 * len(names)))
    axis = figure.subplots()
    axis.barh(names, values)
    axis.bar_label(axis.containers[0], fmt="%.3g", fontsize="small")
    axis.invert_yaxis()
    if parity is not None:
        axis.axvline(parity, color="k", linestyle="--", linewidth=0.8)
    axis.margins(x=0.12)
    axis.set(title=heading, xlabel=unit)
    figure.tight_layout()
    return figure


def plot_row_bars(
    data: dict, kinds: tuple[str, ...], field: str, scale: float, unit: str, heading: str, parity: float | None = None
):
    """Bars of ``field * scale`` for the matmul.py rows of ``kinds`` that have it (builds.py's
    rows: grouped by case, a bar per build)."""
    if any("build" in r for r in matmul_rows(data, *kinds)):
        return plot_builds(data, field, scale, unit, heading, parity)
    chosen = [r for r in matmul_rows(data, *kinds) if r.get(field) is not None]
    if not chosen:
        return None
    keys = ("backend", "n") if len({r["kind"] for r in chosen}) == 1 else ("kind", "backend", "n")
    return bars(
        [label(r, *keys) for r in chosen], [r[field] * scale for r in chosen], unit, title(data, heading), parity
    )


def plot_startup(data: dict):
    if "median" in data:  # startup.py's steps
        names, values = [], []
        for kind, steps in data["median"].items():
            names += [f"{kind}: {step['step']}" for step in steps]
            values += [step["step_ms"] for step in steps]
        return bars(
            names,
            values,
            "milliseconds (median of the processes)",
            title(data, "a fresh process's steps to its first product"),
        )
    return plot_row_bars(
        data, ("startup", "import"), "seconds", 1.0, "seconds", "fresh process to first result; import pyctk"
    )


def gpuarray_rows(data: dict, kind: str) -> list[dict]:
    return [r for r in data.get("rows", []) if "library" in r and r.get("kind") == kind]


def least_fraction(row: dict) -> float | None:
    """The least fraction of the copy a row's target asks (gpuarray.py writes it in words)."""
    found = re.search(r">= (\d+)% of copy", row.get("target", ""))
    return int(found.group(1)) / 100 if found else None


def grouped(
    groups: list[str],
    series: dict[str, dict[str, float]],
    ylabel: str,
    heading: str,
    lines: dict[str, float] | None = None,
):
    """Vertical bars: a group per ``groups`` entry, in it a bar per ``series`` name (its values
    by group; a missing group, no bar); dashed over a group, ``lines``' value for it."""
    width = 0.8 / len(series)
    figure = Figure(figsize=(max(8.0, 2 + 1.2 * len(groups) * max(1, len(series) / 3)), 4.5))
    axis = figure.subplots()
    for k, (name, values) in enumerate(series.items()):
        places = [i + (k - (len(series) - 1) / 2) * width for i, g in enumerate(groups) if g in values]
        drawn = axis.bar(places, [values[g] for g in groups if g in values], width, label=name)
        axis.bar_label(drawn, fmt="%.3g", fontsize="x-small")
    for i, group in enumerate(groups):
        if lines and group in lines:
            axis.hlines(lines[group], i - 0.45, i + 0.45, colors="k", linestyles="--", linewidth=0.8)
    axis.set_xticks(range(len(groups)), groups)
    axis.set(ylabel=ylabel, title=heading)
    axis.legend(fontsize="small")
    figure.tight_layout()
    return figure


def plot_gpuarray(data: dict, kind: str, value: Callable[[dict], float], ylabel: str, heading: str):
    """Bars of ``value(row)`` for gpuarray.py's rows of ``kind``: a group per operation, a bar
    per library; dashed, where pyctk's row has one, the least fraction of the copy asked."""
    chosen = gpuarray_rows(data, kind)
    if not chosen:
        return None
    operations = list(dict.fromkeys(r["operation"] for r in chosen))
    series = {
        library: {r["operation"]: value(r) for r in chosen if r["library"] == library}
        for library in dict.fromkeys(r["library"] for r in chosen)
    }
    targets = {
        r["operation"]: 100 * least_fraction(r)
        for r in chosen
        if r["library"] == "pyctk" and least_fraction(r) is not None
    }
    return grouped(operations, series, ylabel, title(data, heading), targets)


def plot_builds(data: dict, field: str, scale: float, ylabel: str, heading: str, parity: float | None):
    """builds.py's rows of pyctk's cases (those with a peer): a group per case and n, a bar per
    build."""
    chosen = [r for r in matmul_rows(data, "device-call-tiny") if "build" in r and "peer" in r]
    if not chosen:
        return None
    groups = list(dict.fromkeys(f"{r['case']}\nn={r['n']}" for r in chosen))
    series = {
        build: {f"{r['case']}\nn={r['n']}": r[field] * scale for r in chosen if r["build"] == build}
        for build in dict.fromkeys(r["build"] for r in chosen)
    }
    return grouped(
        groups, series, ylabel, title(data, heading), {g: parity for g in groups} if parity is not None else None
    )


def plot_per_call(data: dict):
    """matmul.py's and builds.py's tiny rows, or gpuarray.py's per-call rows."""
    if gpuarray_rows(data, "per-call"):
        return plot_gpuarray(
            data,
            "per-call",
            lambda r: r["seconds"] * 1e6,
            "microseconds per call",
            "small operations (1000 float32), host time per call",
        )
    return plot_row_bars(
        data, ("host-tiny", "device-call-tiny"), "seconds", 1e6, "microseconds per call", "per-call time, tiny products"
    )


DASK_TARGET = 0.15  # dask_matmul.py's TARGET_OVERHEAD


def plot_dask(data: dict):
    rows = [r for r in data.get("rows", []) if "best_seconds" in r]
    if not rows:
        return None
    figure = Figure(figsize=(8, 4.5))
    axis = figure.subplots()
    drawn = axis.bar([r["kind"] for r in rows], [r["best_seconds"] for r in rows])
    axis.bar_label(
        drawn, labels=[f"{r['best_seconds']:.2f} s\n{100 * r['overhead']:+.1f}%" for r in rows], fontsize="small"
    )
    axis.axhline(rows[0]["best_seconds"] * (1 + DASK_TARGET), color="k", linestyle="--", linewidth=0.8)
    settings = data.get("settings", {})
    axis.set(ylabel="seconds, host arrays to result")
    axis.set_title(
        title(
            data,
            f"n = {settings.get('n')} float32, {settings.get('gpus')} GPU(s), "
            f"{settings.get('workers')} workers (dashed: whole + 15%)",
        ),
        fontsize="medium",
    )
    axis.margins(y=0.2)
    figure.tight_layout()
    return figure


def plot_auto_table(data: dict):
    rows = [r for r in data.get("rows", []) if "tiled" in r and "cublas" in r]
    if not rows:
        return None
    figure = Figure(figsize=(8, 4.5))
    axis = figure.subplots()
    for name, line in lines(rows, "case").items():
        axis.plot([r["n"] for r in line], [r["cublas"] / r["tiled"] for r in line], marker="o", label=name)
    axis.axhline(1.0, color="k", linestyle="--", linewidth=0.8)
    axis.set(
        title=title(data, "backend='auto': cuBLAS's time / the kernels' (above 1: kernels)"),
        yscale="log",
        xlabel="n (n x n @ n x n), bursts of calls",
        ylabel="speedup",
    )
    sizes_axis(axis, rows)
    axis.legend(fontsize="small", ncol=2)
    figure.tight_layout()
    return figure


def plot_clocks(data: dict):
    """clocks.py's rows: each product's held rate as a share of the peak at its clock."""
    rows = [r for r in matmul_rows(data, "sustained") if r.get("fraction_of_peak_at_clock") is not None]
    if not rows:
        return None
    names = [f"{r['dtype']} {r['backend']} ({r['sm_mhz']:.0f} MHz)" for r in rows]
    values = [100 * r["fraction_of_peak_at_clock"] for r in rows]
    return bars(names, values, "% of the dense peak at the SM clock held", title(data, "held rate / peak at its clock"))


# name -> function of a results file's contents returning a figure, or None when it has no
# rows for it
PLOTS: dict[str, Callable[[dict], Figure | None]] = {
    "tflops": plot_tflops,
    "host-time": plot_host_time,
    "floor": plot_floor,
    "per-call": plot_per_call,
    "speedup": functools.partial(
        plot_row_bars,
        kinds=("device-call-tiny",),
        field="speedup",
        scale=1.0,
        unit="peer's time / pyctk's, within each round (1: as fast)",
        heading="per call: pyctk's speedup over its peer",
        parity=1.0,
    ),
    "startup": plot_startup,
    "devices": functools.partial(
        plot_row_bars,
        kinds=("host-devices",),
        field="seconds",
        scale=1.0,
        unit="seconds",
        heading="NumPy in, NumPy out, one GPU and all",
    ),
    "bandwidth": functools.partial(
        plot_gpuarray,
        kind="bandwidth",
        value=lambda r: 100 * r["fraction_of_copy"],
        ylabel="% of the copy bandwidth",
        heading="float32, bytes moved / time, over the copy's",
    ),
    "overhead": plot_dask,
    "choices": plot_auto_table,
    "clocks": plot_clocks,
}


def figures(data: dict) -> dict[str, Figure]:
    """Every plot of PLOTS that a results file's contents have rows for."""
    drawn = {name: plot(data) for name, plot in PLOTS.items()}
    return {name: figure for name, figure in drawn.items() if figure is not None}


def save(figure: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110, metadata={"Software": None})  # no version: the same bytes each time
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="JSON files (default: every file of benchmarks/results/)")
    parser.add_argument("--out-dir", default=str(Path(__file__).resolve().parent / "plots"))
    args = parser.parse_args()
    out_dir = Path(args.out_dir)
    if args.files:
        targets = {Path(f).stem: Path(f) for f in args.files}
    else:
        targets = {f"{p.parent.name}/{p.stem}": p for p in sorted(RESULTS.glob("*/*.json"))}
    for name, path in targets.items():
        for plot, figure in figures(json.loads(path.read_text())).items():
            print(f"wrote {save(figure, out_dir / f'{name}-{plot}.png')}")


if __name__ == "__main__":
    main()
