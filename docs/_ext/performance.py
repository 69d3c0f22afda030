"""The performance page's figures, read from benchmarks/results/ when the docs are built.

No figure on the page is typed by hand: each table and plot is made from a results file
(``benchmarks/results/<machine>/<suite>.json``, written by the scripts of benchmarks/; see
benchmarks/measured.py), and a page that uses one is rebuilt when the file changes.

- ```` ```{benchmark-table} h200-cu13/matmul ```` renders the file: where and when it was
  measured (its "measured" object), the command that reproduces it, then a table per kind of
  row it has. ``:kinds: host host-tiny`` shows only those kinds (a file's kinds are the
  "kind" fields of its rows; auto_table.py's rows are "auto-table", startup.py's steps
  "startup-steps"); ``:measured: no`` leaves out the paragraph and the command (for a
  second table of a file already introduced).
- ```` ```{benchmark-plot} h200-cu13/device-call speedup ```` draws that plot of
  benchmarks/plot.py (its PLOTS) from the file, at build time, as an image.
- ```` ```{benchmark-headline} ```` renders benchmarks/headline.py's table, the README's.
- ```` ```{auto-choices} ```` renders the table backend="auto" uses, from
  libgpu/src/gemm/auto_table.c (which benchmarks/auto_table.py writes), with the shape
  classes' bounds from libgpu/src/gemm/tables.c.

A file, plot or kind that is missing is a warning (``-W`` fails the build), not a guess.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path
from typing import Any, Callable

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
RESULTS = BENCHMARKS / "results"
AUTO_TABLE = ROOT / "libgpu" / "src" / "gemm" / "auto_table.c"
SHAPE_CLASSES = ROOT / "libgpu" / "src" / "gemm" / "tables.c"


# ---------------------------------------------------------------------------
# Numbers and names as the tables show them.


def number(x: float) -> str:
    """Three significant digits, no exponent: 1359, 51.1, 4.78, 0.0457."""
    if x == 0:
        return "0"
    magnitude = abs(x)
    if magnitude >= 100:
        return f"{x:.0f}"
    if magnitude >= 10:
        return f"{x:.1f}"
    if magnitude >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def duration(seconds: float | None) -> str:
    """A time in the unit that suits it: s, ms or µs."""
    if seconds is None:
        return ""
    if seconds >= 1:
        return f"{number(seconds)}\u00a0s"  # no break between the number and its unit
    if seconds >= 1e-3:
        return f"{number(seconds * 1e3)}\u00a0ms"
    return f"{number(seconds * 1e6)}\u00a0µs"


def percent(fraction: float) -> str:
    return f"{100 * fraction:.0f}%" if fraction >= 0.995 or fraction < 0.095 else f"{100 * fraction:.1f}%"


def times(ratio: float) -> str:
    return f"{number(ratio)}x"


DTYPES = {
    "tf32": "float32 at TF32, a @ b",
    "tf32-abt": "float32 at TF32, a @ b.T",
    "c64-tf32": "complex64 at TF32",
    "int8-abt": "int8, a @ b.T",
    "float8_e4m3fn": "float8_e4m3fn, a @ b",
    "e4m3-abt": "float8_e4m3fn, a @ b.T",
    "float8_e5m2": "float8_e5m2, a @ b",
    "e5m2-abt": "float8_e5m2, a @ b.T",
}
INTEGERS = ("int8", "int8-abt", "uint8", "bool", "int16", "int32", "int64")
FLOAT8 = ("float8_e4m3fn", "e4m3-abt", "float8_e5m2", "e5m2-abt")
# the names of matmul.py's backends, by the kind of row (a name not here reads as itself)
BACKENDS = {
    "device": {
        "auto": "pyctk, auto",
        "tiled": "pyctk's kernels",
        "cublas": "cuBLAS",
        "torch": "torch",
        "cupy": "CuPy",
        "torch-int_mm": "torch._int_mm",
        "torch-scaled_mm": "torch._scaled_mm (cuBLASLt)",
        "torch-scaled_mm-fast": "torch._scaled_mm, fast accumulation",
    },
    "host": {
        "tiled": "pyctk, kernels",
        "cublas": "pyctk, cuBLAS",
        "torch": "torch",
        "cupy": "CuPy",
        "numpy": "NumPy (CPU)",
    },
    "call": {
        "pyctk": "pyctk on DeviceArrays",
        "pyctk-c": "pyctk's C call alone",
        "pyctk-torch": "pyctk on torch's tensors",
        "torch": "torch.matmul",
        "pyctk-cupy": "pyctk on CuPy's arrays",
        "cupy": "cupy.matmul",
    },
}
PEERS = {"torch": "torch", "cupy": "CuPy"}
LIBRARIES = {"pyctk": "pyctk", "cupy": "CuPy", "torch": "PyTorch"}


def backend(kind: str, name: str) -> str:
    return BACKENDS.get(kind, {}).get(name, name)


def in_order(rows: list[dict], key: str) -> list[Any]:
    return list(dict.fromkeys(r[key] for r in rows))


# ---------------------------------------------------------------------------
# Tables: each renderer takes a file's contents and the rows of its kind(s), and gives
# (caption, header, rows of cells).

Table = tuple[str, list[str], list[list[str]]]


def device_tables(data: dict, rows: list[dict]) -> list[Table]:
    """matmul.py's "device" rows: TFLOP/s per backend, and the kernels against the reference
    (cuBLAS, CuPy for the integers, cuBLASLt's torch._scaled_mm for FP8)."""
    tables = []
    integer = [r for r in rows if r["dtype"] in INTEGERS]
    float8 = [r for r in rows if r["dtype"] in FLOAT8]
    floating = [r for r in rows if r["dtype"] not in INTEGERS + FLOAT8]
    for chosen, unit, reference in (
        (floating, "TFLOP/s", "cublas"),
        (float8, "TFLOP/s", "torch-scaled_mm"),
        (integer, "TOP/s", "cupy"),
    ):
        if not chosen:
            continue
        names = in_order(chosen, "backend")
        ratio = f"pyctk's kernels / {backend('device', reference)}"
        body = []
        for dtype in in_order(chosen, "dtype"):
            for n in sorted({r["n"] for r in chosen if r["dtype"] == dtype}):
                found = {r["backend"]: r for r in chosen if r["dtype"] == dtype and r["n"] == n}
                cells = [DTYPES.get(dtype, dtype), str(n)]
                cells += [number(found[b]["tflops"]) if b in found else "" for b in names]
                if "tiled" in found and reference in found:
                    share = found["tiled"]["tflops"] / found[reference]["tflops"]
                    cells.append(percent(share) if reference != "cupy" and share < 1.5 else times(share))
                else:
                    cells.append("")
                body.append(cells)
        flops = (
            "8 n³ a product for complex dtypes, 2 n³ for the others"
            if unit == "TFLOP/s"
            else "2 n³ operations a product"
        )
        caption = f"GPU operands, n x n x n products, {unit} ({flops}): device time of one call, median of the repeats"
        tables.append((caption, ["dtype", "n", *(backend("device", b) for b in names), ratio], body))
    return tables


def host_tables(data: dict, rows: list[dict]) -> list[Table]:
    """matmul.py's "host" rows: NumPy in, NumPy out, per backend, with the floor."""
    names = in_order(rows, "backend")
    body = []
    for dtype in in_order(rows, "dtype"):
        for n in sorted({r["n"] for r in rows if r["dtype"] == dtype}):
            found = {r["backend"]: r for r in rows if r["dtype"] == dtype and r["n"] == n}
            floor = next((r["floor_seconds"] for r in found.values() if "floor_seconds" in r), None)
            ours = [found[b] for b in ("tiled", "cublas") if b in found and "fraction_of_floor" in found[b]]
            best = max((r["fraction_of_floor"] for r in ours), default=None)
            body.append(
                [
                    dtype,
                    str(n),
                    *(duration(found[b]["seconds"]) if b in found else "" for b in names),
                    duration(floor),
                    percent(best) if best is not None else "",
                ]
            )
    bandwidth = data.get("pinned_bandwidth")
    bus = (
        (f"; pinned bandwidth {bandwidth['h2d'] / 1e9:.1f} GB/s to the GPU and {bandwidth['d2h'] / 1e9:.1f} GB/s back")
        if bandwidth
        else ""
    )
    caption = (
        f"NumPy in, NumPy out, n x n x n, wall clock of one call, median of the repeats; "
        f"floor: the copies at the bus's speed or cuBLAS's time, whichever is longer{bus}"
    )
    header = ["dtype", "n", *(backend("host", b) for b in names), "floor", "floor / pyctk's best"]
    return [(caption, header, body)]


def host_tiny_tables(data: dict, rows: list[dict]) -> list[Table]:
    body = [[backend("host", r["backend"]), duration(r["seconds"])] for r in rows]
    n = rows[0]["n"]
    return [
        (
            f"{n} x {n} float32, NumPy in, NumPy out: time per call, each library in a fresh process of its own",
            ["library", "per call"],
            body,
        )
    ]


def host_large_tables(data: dict, rows: list[dict]) -> list[Table]:
    body = []
    for r in rows:
        share = f"{percent(r['fraction_of_cublas'])} (n = {r['cublas_n']})" if "fraction_of_cublas" in r else ""
        body.append(
            [
                f"({r['m']} x {r['k']}) @ ({r['k']} x {r['n_columns']})",
                duration(r["seconds"]),
                number(r["tflops"]),
                share,
            ]
        )
    return [
        (
            "A product larger than the GPU, float32, NumPy in, NumPy out (no peer multiplies what does not fit)",
            ["shape", "time", "TFLOP/s", "of cuBLAS's TFLOP/s in memory"],
            body,
        )
    ]


def process_tables(data: dict, rows: list[dict]) -> list[Table]:
    body = []
    for r in rows:
        what = script("fresh").WHAT[r["kind"]]  # benchmarks/fresh.py names what each kind measured
        body.append([LIBRARIES.get(r["backend"], r["backend"]), what, duration(r["seconds"]), str(r.get("runs", ""))])
    return [
        (
            "Fresh processes: a new Python that imports NumPy and the library and multiplies two "
            "16 x 16 float32 NumPy arrays; median of the runs",
            ["library", "measured", "time", "runs"],
            body,
        )
    ]


def call_tables(data: dict, rows: list[dict]) -> list[Table]:
    """matmul.py's "device-call-tiny" rows (or builds.py's): per call, with speedups."""
    if any("build" in r for r in rows):
        return builds_tables(data, rows)
    sizes = sorted({r["n"] for r in rows})
    speedups = any("speedup" in r for r in rows)
    body = []
    for name in in_order(rows, "backend"):
        found = {r["n"]: r for r in rows if r["backend"] == name}
        cells = [backend("call", name), *(duration(found[n]["seconds"]) if n in found else "" for n in sizes)]
        if speedups:
            peer = next((r["peer"] for r in found.values() if "peer" in r), None)
            cells.append(
                " / ".join(times(found[n]["speedup"]) for n in sizes if "speedup" in found.get(n, {}))
                + (f" {PEERS.get(peer, peer)}" if peer else "")
            )
        body.append(cells)
    rounds = next((r["rounds"] for r in rows if "rounds" in r), None)
    how = f"the median of {rounds} rounds in which every case takes its turn" if rounds else "wall clock over the calls"
    caption = f"n x n float32 products of GPU arrays called from Python: time per call, {how}"
    header = ["", *(f"n = {n}" for n in sizes)]
    if speedups:
        caption += "; speedup: the peer's time over pyctk's within each round, the median over rounds"
        header.append("speedup at " + " / ".join(str(n) for n in sizes))
    return [(caption, header, body)]


def builds_tables(data: dict, rows: list[dict]) -> list[Table]:
    sizes = sorted({r["n"] for r in rows})
    body = []
    for case in in_order(rows, "case"):
        for build in in_order(rows, "build"):
            found = {r["n"]: r for r in rows if r["case"] == case and r["build"] == build}
            if not found:
                continue
            cells = [backend("call", case), build]
            for n in sizes:
                r = found.get(n)
                if r is None:
                    cells.append("")
                    continue
                parts = [duration(r["seconds"])]
                if "speedup" in r:
                    parts.append(f"{times(r['speedup'])} {PEERS.get(r['peer'], r['peer'])}")
                if "cost" in r:
                    parts.append(f"cost {number(r['cost'])}")
                cells.append(", ".join(parts))
            body.append(cells)
    first = in_order(rows, "build")[0]
    return [
        (
            f"Builds of pyctk side by side on one host, n x n float32 per call: median of the "
            f"rounds of every process, speedup over the peer within each round, and cost against "
            f"{first} (its speedup over the build's)",
            ["case", "build", *(f"n = {n}" for n in sizes)],
            body,
        )
    ]


def device_call_tables(data: dict, rows: list[dict]) -> list[Table]:
    sizes = sorted({r["n"] for r in rows})
    body = []
    for name in in_order(rows, "backend"):
        found = {r["n"]: r for r in rows if r["backend"] == name}
        body.append([backend("call", name), *(duration(found[n]["seconds"]) if n in found else "" for n in sizes)])
    return [
        (
            "Large products of GPU arrays called from Python: device time per product of a stream "
            "of back-to-back calls",
            ["", *(f"n = {n}" for n in sizes)],
            body,
        )
    ]


def devices_tables(data: dict, rows: list[dict]) -> list[Table]:
    body = []
    for r in rows:
        name = "devices=[0]" if r["backend"] == "pyctk-1-gpu" else f'devices="all" ({r["backend"].split("-")[1]} GPUs)'
        body.append([name, duration(r["seconds"]), number(r["tflops"]), times(r["speedup"]) if "speedup" in r else ""])
    r = rows[0]
    return [
        (
            f"({r['m']} x {r['k']}) @ ({r['k']} x {r['n_columns']}) float32, NumPy in, NumPy out, "
            f"median of the repeats",
            ["pyctk.matmul", "time", "TFLOP/s", "speedup"],
            body,
        )
    ]


def gpuarray_tables(data: dict, rows: list[dict]) -> list[Table]:
    """gpuarray.py's rows: bandwidth, per call and first call, each library beside pyctk."""
    tables = []
    libraries = in_order(rows, "library")

    def header(first: str) -> list[str]:
        return [first, *(LIBRARIES.get(x, x) for x in libraries), "pyctk's target"]

    def target(found: dict) -> str:
        ours = found.get("pyctk", {})
        return f"{ours['target']}: {'met' if ours['met'] else 'missed'}" if "target" in ours else ""

    bandwidth = [r for r in rows if r["kind"] == "bandwidth"]
    if bandwidth:
        body = []
        for operation in in_order(bandwidth, "operation"):
            found = {r["library"]: r for r in bandwidth if r["operation"] == operation}
            body.append(
                [
                    operation,
                    *(percent(found[x]["fraction_of_copy"]) if x in found else "" for x in libraries),
                    target(found),
                ]
            )
        copy = data.get("copy_bandwidth")
        n = bandwidth[0]["n"]
        tables.append(
            (
                f"float32, {n} elements an array: the bytes an operation must move over its device "
                f"time, as a share of the device-to-device copy's"
                + (f" ({copy / 1e9:.0f} GB/s, read + write)" if copy else "")
                + "; median of the repeats",
                header("operation"),
                body,
            )
        )
    per_call = [r for r in rows if r["kind"] == "per-call"]
    if per_call:
        body = []
        for operation in in_order(per_call, "operation"):
            found = {r["library"]: r for r in per_call if r["operation"] == operation}
            body.append(
                [operation, *(duration(found[x]["seconds"]) if x in found else "" for x in libraries), target(found)]
            )
        n = per_call[0]["n"]
        rounds = per_call[0].get("rounds")
        tables.append(
            (
                f"Small operations ({n} float32 elements): host time per call, each library in "
                f"fresh processes" + (f", the median of {rounds} rounds" if rounds else ""),
                header("operation"),
                body,
            )
        )
    first = [r for r in rows if r["kind"] == "first-call"]
    if first:
        body = []
        for operation in in_order(first, "operation"):
            found = {r["library"]: r for r in first if r["operation"] == operation}
            cells = [f"{operation} kernel cache"]
            for x in libraries:
                r = found.get(x)
                cells.append(
                    ""
                    if r is None
                    else f"{duration(r['seconds'])}, NVRTC {'loaded' if r['nvrtc_loaded'] else 'not loaded'}"
                )
            body.append([*cells, target(found)])
        tables.append(
            (
                "A fresh process's first ElementwiseKernel over 1000 elements: its first call "
                "(build, compile or load, launch, synchronise), with an empty kernel cache "
                "(cold) and with the cache the cold run filled (cached)",
                header(""),
                body,
            )
        )
    return tables


def dask_tables(data: dict, rows: list[dict]) -> list[Table]:
    body = []
    for r in rows:
        chunks = " x ".join(map(str, r.get("chunks", []))) or ""
        target = f"{r['target']}: {'met' if r['met'] else 'missed'}" if "target" in r else ""
        body.append(
            [
                r["kind"],
                str(r.get("workers", 1)),
                chunks,
                duration(r["best_seconds"]),
                number(r["tflops"]),
                f"{100 * r['overhead']:+.1f}%",
                target,
            ]
        )
    settings = data.get("settings", {})
    return [
        (
            f"n = {settings.get('n')} float32, host arrays to a host result, on {settings.get('gpus')} "
            f'GPU(s): the best of {settings.get("repeats")} runs; overhead against "whole" '
            f"(pyctk.matmul in one process)",
            ["row", "workers", "chunks", "best", "TFLOP/s", "overhead", "target"],
            body,
        )
    ]


def auto_table_tables(data: dict, rows: list[dict]) -> list[Table]:
    classes = in_order(rows, "class")
    body = []
    for case in in_order(rows, "case"):
        cells = [case]
        for shape_class in classes:
            found = [r for r in rows if r["case"] == case and r["class"] == shape_class]
            ratios = [r["cublas"] / r["tiled"] for r in sorted(found, key=lambda r: r["n"])]
            won = bool(ratios) and all(x > 1 for x in ratios)
            cells.append(", ".join(times(x) for x in ratios) + (": kernels" if won else ""))
        body.append(cells)
    sizes = {c: sorted({r["n"] for r in rows if r["class"] == c}) for c in classes}
    header = ["case", *(f"{CLASS_NAMES.get(c, c)} (n = {', '.join(map(str, sizes[c]))})" for c in classes)]
    return [
        (
            "backend='auto': cuBLAS's time over the kernels' (above 1: the kernels are faster) at the two "
            'sizes of each shape class, in bursts of back-to-back calls; "kernels": faster at both, '
            "so auto takes them",
            header,
            body,
        )
    ]


def startup_tables(data: dict, rows: list[dict]) -> list[Table]:
    tables = []
    runs = len(next(iter(data.get("runs", {}).values()), []))
    for kind, steps in data["median"].items():
        body = [[step["step"], number(step["step_ms"]), number(step["since_start_s"])] for step in steps]
        tables.append(
            (f"{kind}: each step's median over {runs} fresh processes", ["step", "ms", "seconds since start"], body)
        )
    return tables


def clocks_tables(data: dict, rows: list[dict]) -> list[Table]:
    """clocks.py's rows: each product's rate in a burst and held, the SM clock and power it
    held, and its share of the peak at that clock."""
    body = []
    for r in rows:
        peak = r.get("peak_tflops_at_clock")
        body.append(
            [
                DTYPES.get(r["dtype"], r["dtype"]),
                backend("device", r["backend"]),
                number(r["burst_tflops"]),
                number(r["tflops"]),
                f"{r['sm_mhz']:.0f} ({r['least_sm_mhz']:.0f})",
                f"{r['watts']:.0f} of {r['power_limit_watts']:.0f}",
                number(peak) if peak else "",
                percent(r["fraction_of_peak_at_clock"]) if peak else "",
                ", ".join(r["reasons"]) or "none",
            ]
        )
    n = rows[0]["n"]
    caption = (
        f"n = {n}, GPU operands, TFLOP/s (TOP/s for integers): a burst (the median of a few calls) and "
        f"held (calls back to back for {data['settings']['seconds']:g} s), the SM clock NVML reported "
        "meanwhile (median, least), the board's power, the dense peak at that clock and the held "
        "rate's share of it, and why NVML said the clock was held down"
    )
    header = ["dtype", "backend", "burst", "held", "SM MHz", "W", "peak at the clock", "share", "held down by"]
    return [(caption, header, body)]


# kind of row -> renderer; the kinds one renderer takes together share its entry
RENDERERS: dict[tuple[str, ...], Callable[[dict, list[dict]], list[Table]]] = {
    ("device",): device_tables,
    ("host",): host_tables,
    ("host-tiny",): host_tiny_tables,
    ("host-large",): host_large_tables,
    ("startup", "startup-floor", "import", "import-matmul"): process_tables,
    ("device-call-tiny",): call_tables,
    ("device-call",): device_call_tables,
    ("host-devices",): devices_tables,
    ("bandwidth", "per-call", "first-call"): gpuarray_tables,
    ("whole", "dask-persist", "dask-store", "dask-compute"): dask_tables,
    ("auto-table",): auto_table_tables,
    ("startup-steps",): startup_tables,
    ("sustained",): clocks_tables,
}


def kind_of(data: dict, row: dict) -> str:
    if "tiled" in row and "cublas" in row and "class" in row:
        return "auto-table"
    return row.get("kind", "")


def tables(data: dict, kinds: list[str] | None = None) -> list[Table]:
    """Every table of a results file's contents (of ``kinds`` only, if given), in the order of
    the first row of each kind."""
    rows = data.get("rows", [])
    present = in_order([{"kind": kind_of(data, r)} for r in rows], "kind")
    if "median" in data:  # startup.py's file
        present.append("startup-steps")
    wanted = [k for k in present if kinds is None or k in kinds]
    made = []
    done: set[tuple[str, ...]] = set()
    for kind in wanted:
        group = next((g for g in RENDERERS if kind in g), None)
        if group is None:
            raise ValueError(f"no table for rows of kind {kind!r}")
        if group in done:
            continue
        done.add(group)
        chosen = [r for r in rows if kind_of(data, r) in group and (kinds is None or kind_of(data, r) in kinds)]
        made += RENDERERS[group](data, chosen)
    return made


def measured_text(data: dict) -> str:
    """Where and when a file was measured, as a sentence."""
    m = data.get("measured", {})
    parts = [f"{m['gpus']} x {m['gpu']}" if m.get("gpus", 1) > 1 else m.get("gpu", "")]
    machine = m.get("machine") or {}
    host = ", ".join(
        x
        for x in (
            f"{machine['cpu_cores']} CPU cores" if machine.get("cpu_cores") else "",
            f"{machine['memory_gib']} GiB" if machine.get("memory_gib") else "",
        )
        if x
    )
    if host:
        parts[0] += f" ({host})"
    if m.get("driver"):
        parts.append(f"driver {m['driver']}")
    if m.get("cuda"):
        parts.append(f"CUDA {m['cuda']}")
    if m.get("cublas"):
        parts.append(f"cuBLAS {m['cublas']}")
    if m.get("pyctk"):
        build = f", build {m['build']}" if m.get("build") else ""
        parts.append(f"pyctk {m['pyctk']} ({m.get('distribution') or 'pyctk'}{build})")
    names = {"numpy": "NumPy", "torch": "torch", "cupy": "CuPy", "dask": "Dask", "distributed": "distributed"}
    parts += [f"{names[k]} {v}" for k, v in (m.get("versions") or {}).items() if k in names]
    text = "Measured on " + ", ".join(p for p in parts if p) + f", {m.get('date', 'date not recorded')}."
    if m.get("remarks"):
        text += f" {m['remarks'][0].upper()}{m['remarks'][1:]}."
    return text


# ---------------------------------------------------------------------------
# backend="auto"'s table, from the C source that the library is built from.

CLASS_NAMES = {
    "SHAPE_TINY": "tiny",
    "SHAPE_VERY_SMALL": "very small",
    "SHAPE_SMALL": "small",
    "SHAPE_MEDIUM": "medium",
    "SHAPE_LARGE": "large",
}
PRECISIONS = {"HIGHEST": '"highest"', "TF32": '"tf32"', "FP16_ACCUMULATE": '"fp16_accumulate"'}


def shape_classes(source: str) -> list[tuple[str, int | None]]:
    """The shape classes in order, each with the cube root of its largest m n k batch (None for
    the last, unbounded), from tables.c's shape_class()."""
    bounds = re.findall(r"work <= ([\d.]+) \* (\d+) \* (\d+)\s*\? (SHAPE_\w+)", source)
    if not bounds:
        raise ValueError("tables.c: shape_class()'s bounds not found")
    found = [(name, int(float(a))) for a, _, _, name in bounds]
    last = re.search(r": (SHAPE_\w+);", source[source.index(bounds[-1][3]) :])
    return found + [(last.group(1), None)] if last else found


def choices(source: str) -> tuple[str, list[tuple[int, str, str, list[str]]]]:
    """auto_table.c's header comment's "last on ..." and its rows: (arch, dtype, precision, classes)."""
    where = re.search(r"last on (.*?),\s*\*?\s*(\d{4}-\d\d-\d\d)", source, re.S)
    said = " ".join(f"{where.group(1)}, {where.group(2)}".split()).replace("* ", "") if where else ""
    rows = []
    for arch, dtype, precision, classes in re.findall(
        r"\{(\d+), GPUMATMUL_(\w+), GPUMATMUL_PRECISION_(\w+),\s*([^}]*)\}", source
    ):
        rows.append((int(arch), dtype.lower(), precision, re.findall(r"SHAPE_\w+", classes)))
    return said, rows


def classes_text(taken: list[str], classes: list[tuple[str, int | None]]) -> str:
    """The products a row's classes cover, as ranges of m n k batch: "up to 64³"."""
    if not taken:
        return "none: cuBLAS for every size"
    spans, start = [], None
    for i, (name, _) in enumerate(classes + [("", None)]):
        inside = name in taken
        if inside and start is None:
            start = i
        if not inside and start is not None:
            spans.append((start, i - 1))
            start = None
    said = []
    for low, high in spans:
        above = classes[low - 1][1] if low else None
        top = classes[high][1]
        if above is None and top is None:
            said.append("every size")
        elif above is None:
            said.append(f"up to {top}³")
        elif top is None:
            said.append(f"above {above}³")
        else:
            said.append(f"above {above}³ up to {top}³")
    return ", and ".join(said)


# ---------------------------------------------------------------------------
# docutils nodes.


def table_node(caption: str, header: list[str], body: list[list[str]]) -> nodes.table:
    table = nodes.table(classes=["benchmark-table"])
    table += nodes.title(text=caption)
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)

    def line(cells: list[str]) -> nodes.row:
        made = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            paragraph = nodes.paragraph()
            for i, part in enumerate(cell.split("`")):  # `code` as literal text
                if part:
                    paragraph += nodes.literal(text=part) if i % 2 else nodes.Text(part)
            entry += paragraph
            made += entry
        return made

    head = nodes.thead()
    head += line(header)
    rows = nodes.tbody()
    for cells in body:
        rows += line(cells)
    group += head
    group += rows
    return table


def results_file(directive: SphinxDirective, name: str) -> dict | None:
    """The contents of results file ``name`` ("<machine>/<suite>"), noted as a dependency of
    the page; None (and a warning) if there is none."""
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        known = ", ".join(f"{p.parent.name}/{p.stem}" for p in sorted(RESULTS.glob("*/*.json")))
        logger.warning(
            f"{directive.name}: no results file {name!r} in benchmarks/results/ (there are: {known or 'none'})",
            location=directive.get_location(),
        )
        return None
    directive.env.note_dependency(str(path))
    return json.loads(path.read_text())


class BenchmarkTable(SphinxDirective):
    """```{benchmark-table} <machine>/<suite>```: a results file as tables."""

    required_arguments = 1
    option_spec = {"kinds": directives.unchanged, "measured": lambda text: directives.choice(text, ("yes", "no"))}

    def run(self) -> list[nodes.Node]:
        data = results_file(self, self.arguments[0])
        if data is None:
            return []
        kinds = self.options.get("kinds", "").split() or None
        try:
            made = tables(data, kinds)
        except (KeyError, ValueError, TypeError, ZeroDivisionError) as error:
            logger.warning(
                f"benchmark-table {self.arguments[0]}: {type(error).__name__}: {error}", location=self.get_location()
            )
            return []
        if not made:
            logger.warning(
                f"benchmark-table {self.arguments[0]}: no rows of kinds {kinds}", location=self.get_location()
            )
            return []
        out: list[nodes.Node] = []
        if self.options.get("measured", "yes") == "yes":
            out.append(nodes.paragraph(text=measured_text(data)))
            command = data.get("measured", {}).get("command")
            if command:
                block = nodes.literal_block(f"$ {command}", f"$ {command}", language="console")
                out.append(block)
        out += [table_node(*made_table) for made_table in made]
        return out


_scripts: dict[str, Any] = {}


def script(name: str):
    """benchmarks/<name>.py, loaded under a name of its own (benchmarks/ is not put on
    sys.path, where its scripts' names could shadow other modules)."""
    if name not in _scripts:
        spec = importlib.util.spec_from_file_location(f"pyctk_benchmarks_{name}", BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _scripts[name] = module
    return _scripts[name]


class BenchmarkHeadline(SphinxDirective):
    """```{benchmark-headline}```: benchmarks/headline.py's table (the README's)."""

    def run(self) -> list[nodes.Node]:
        module = script("headline")
        self.env.note_dependency(str(BENCHMARKS / "headline.py"))
        for path in sorted(RESULTS.glob("*/*.json")):
            self.env.note_dependency(str(path))
        try:
            made = module.rows(RESULTS)
        except SystemExit as error:  # a figure with no results
            logger.warning(f"benchmark-headline: {error}", location=self.get_location())
            return []
        header = ["", *module.COLUMNS, "measured on"]
        return [
            table_node(
                "Each row from one run; empty: the library has no such product, or was not measured", header, made
            )
        ]


class BenchmarkPlot(SphinxDirective):
    """```{benchmark-plot} <machine>/<suite> <plot>```: benchmarks/plot.py's plot of a results
    file, drawn now into the build's doctree folder and shown as an image."""

    required_arguments = 2
    option_spec = {"alt": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        name, plot = self.arguments
        data = results_file(self, name)
        if data is None:
            return []
        try:
            module = script("plot")
        except ImportError as error:
            logger.warning(
                f"benchmark-plot: benchmarks/plot.py needs matplotlib (the docs extra): {error}",
                location=self.get_location(),
            )
            return []
        self.env.note_dependency(str(BENCHMARKS / "plot.py"))
        if plot not in module.PLOTS:
            logger.warning(
                f"benchmark-plot: no plot {plot!r} (benchmarks/plot.py has: {', '.join(module.PLOTS)})",
                location=self.get_location(),
            )
            return []
        figure = module.PLOTS[plot](data)
        if figure is None:
            logger.warning(f"benchmark-plot: {name} has no rows for the {plot!r} plot", location=self.get_location())
            return []
        target = Path(self.env.app.doctreedir) / "benchmark-plots" / f"{name.replace('/', '-')}-{plot}.png"
        module.save(figure, target)
        # an image's path is relative to its page's folder; Sphinx copies it into the build
        page_folder = Path(self.env.doc2path(self.env.docname)).parent
        uri = Path(os.path.relpath(target, page_folder)).as_posix()
        alt = self.options.get("alt") or f"{plot} of benchmarks/results/{name}.json"
        # a width makes the HTML writer link the image to its full size
        return [nodes.image(uri=uri, alt=alt, width="100%", classes=["benchmark-plot"])]


class AutoChoices(SphinxDirective):
    """```{auto-choices}```: where backend="auto" takes pyctk's kernels, from auto_table.c."""

    def run(self) -> list[nodes.Node]:
        for path in (AUTO_TABLE, SHAPE_CLASSES):
            self.env.note_dependency(str(path))
        try:
            classes = shape_classes(SHAPE_CLASSES.read_text())
            said, rows = choices(AUTO_TABLE.read_text())
        except (OSError, ValueError) as error:
            logger.warning(f"auto-choices: {error}", location=self.get_location())
            return []
        if not rows:
            logger.warning("auto-choices: no rows in libgpu/src/gemm/auto_table.c", location=self.get_location())
            return []
        body = [
            [f"sm_{arch}", dtype, PRECISIONS.get(precision, precision), classes_text(taken, classes)]
            for arch, dtype, precision, taken in rows
        ]
        caption = (
            "backend='auto': the products (m · n · k · batch) it gives pyctk's kernels, by "
            "kernel image, dtype and precision"
            + (f", measured on {said}" if said else "")
            + ". The others, and every product on a kernel image not listed, go to cuBLAS "
            "where it computes the dtype at that precision, else to pyctk's kernels "
            "(integers and bool always)"
        )
        return [table_node(caption, ["kernel image", "dtype", "precision", "pyctk's kernels take"], body)]


def setup(app) -> dict[str, Any]:
    app.add_directive("benchmark-table", BenchmarkTable)
    app.add_directive("benchmark-plot", BenchmarkPlot)
    app.add_directive("benchmark-headline", BenchmarkHeadline)
    app.add_directive("auto-choices", AutoChoices)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
