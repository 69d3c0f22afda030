"""Draw the JSON of benchmarks/matmul.py (or builds.py) as PNG plots.

    pip install '.[bench]'      # matplotlib
    python benchmarks/plot.py results.json [more.json ...] [--out-dir benchmarks/plots]

Writes into --out-dir, each where the files have rows for it:

- time.png: seconds against n, log-log, a panel per kind of row with sizes ("device",
  "device-call", "host"), a line per backend and dtype; the host panel also draws each dtype's
  floor, dashed.
- floor.png: fraction of the floor (floor / time; 1 is at the floor) against n, host rows.
- overhead.png: per-call time of the tiny rows ("host-tiny", "device-call-tiny"), as bars.
- speedup.png: the "speedup" over its peer of each "device-call-tiny" row that has one, as bars.
- startup.png: fresh process to first result ("startup") and `import pyctk` after NumPy
  ("import"), as bars.

With several files, each line and bar is labelled with its file's name too. Files written
before the floor was measured have no floor fields: they get no floor lines and no floor.png.
"""

from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path

from matplotlib.figure import Figure  # not pyplot: files only, no display or backend to pick

SIZED_KINDS = ("device", "device-call", "host")


def load(paths: list[str]) -> list[dict]:
    """Every row of every file, each with "source": the file's name when there are several."""
    rows = []
    for path in paths:
        source = Path(path).stem if len(paths) > 1 else ""
        rows += [{**r, "source": source} for r in json.loads(Path(path).read_text())["rows"]]
    return rows


SHOWN = {"n": "n={}"}  # how a key's value reads in a label, where not as itself


def label(r: dict, *keys: str) -> str:
    """The row's source and ``keys`` values, as a legend or bar label."""
    return " ".join(SHOWN.get(key, "{}").format(r[key]) for key in ("source", *keys) if r.get(key))


def lines(rows: list[dict], *keys: str) -> dict[str, list[dict]]:
    """The rows grouped into one line per label(row, *keys), each sorted by n."""
    grouped: dict[str, list[dict]] = {}
    for r in sorted(rows, key=lambda r: r["n"]):
        grouped.setdefault(label(r, *keys), []).append(r)
    return grouped


def plot_time(rows: list[dict]):
    kinds = [kind for kind in SIZED_KINDS if any(r["kind"] == kind for r in rows)]
    if not kinds:
        return None
    figure = Figure(figsize=(6 * len(kinds), 4.5))
    axes = figure.subplots(1, len(kinds), squeeze=False)
    for axis, kind in zip(axes[0], kinds):
        of_kind = [r for r in rows if r["kind"] == kind]
        for name, line in lines(of_kind, "backend", "dtype").items():
            axis.plot([r["n"] for r in line], [r["seconds"] for r in line], marker="o", label=name)
        floors = {(r["source"], r["dtype"], r["n"]): r for r in of_kind if "floor_seconds" in r}
        for name, line in lines(list(floors.values()), "dtype").items():
            axis.plot([r["n"] for r in line], [r["floor_seconds"] for r in line], "k--", label=f"{name} floor")
        axis.set(title=kind, xscale="log", yscale="log", xlabel="n (n x n @ n x n)", ylabel="seconds")
        axis.legend(fontsize="small")
    figure.tight_layout()
    return figure


def plot_floor(rows: list[dict]):
    floored = [r for r in rows if "fraction_of_floor" in r]
    if not floored:
        return None
    figure = Figure(figsize=(7, 4.5))
    axis = figure.subplots()
    for name, line in lines(floored, "backend", "dtype").items():
        axis.plot([r["n"] for r in line], [r["fraction_of_floor"] for r in line], marker="o", label=name)
    axis.axhline(1.0, color="k", linestyle="--", linewidth=0.8)
    axis.set(title="NumPy in, NumPy out: floor / time (1 = at the floor)", xscale="log",
             ylim=(0, 1.05), xlabel="n (n x n @ n x n)", ylabel="fraction of the floor")
    axis.legend(fontsize="small")
    figure.tight_layout()
    return figure


def plot_bars(rows: list[dict], kinds: tuple[str, ...], scale: float, unit: str, title: str,
              field: str = "seconds", parity: float | None = None):
    """Horizontal bars of ``field * scale`` for the rows of ``kinds`` that have it, one per row;
    a dashed line at ``parity``, if given."""
    chosen = [r for r in rows if r["kind"] in kinds and field in r]
    if not chosen:
        return None
    names = [label(r, "kind", "backend", "n") for r in chosen]
    values = [r[field] * scale for r in chosen]
    figure = Figure(figsize=(8, 1 + 0.3 * len(chosen)))
    axis = figure.subplots()
    axis.barh(names, values)
    axis.bar_label(axis.containers[0], fmt="%.3g", fontsize="small")
    axis.invert_yaxis()  # first row on top, as in the table
    if parity is not None:
        axis.axvline(parity, color="k", linestyle="--", linewidth=0.8)
    axis.set(title=title, xlabel=unit)
    figure.tight_layout()
    return figure


# file name -> function of the rows returning a figure, or None when no rows are for it
PLOTS = {
    "time.png": plot_time,
    "floor.png": plot_floor,
    "overhead.png": functools.partial(plot_bars, kinds=("host-tiny", "device-call-tiny"), scale=1e6,
                                      unit="microseconds per call", title="per-call time, tiny products"),
    "speedup.png": functools.partial(plot_bars, kinds=("device-call-tiny",), scale=1.0,
                                     field="speedup", parity=1.0,
                                     unit="peer's time / pyctk's, within each round (1: as fast)",
                                     title="per call: pyctk's speedup over its peer"),
    "startup.png": functools.partial(plot_bars, kinds=("startup", "import"), scale=1.0,
                                     unit="seconds", title="fresh process to first result; import pyctk"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="JSON written by benchmarks/matmul.py or builds.py")
    parser.add_argument("--out-dir", default="benchmarks/plots")
    args = parser.parse_args()
    rows = load(args.files)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, plot in PLOTS.items():
        figure = plot(rows)
        if figure is None:
            print(f"{name}: no rows for it")
            continue
        figure.savefig(out_dir / name, dpi=120)
        print(f"wrote {out_dir / name}")


if __name__ == "__main__":
    main()
