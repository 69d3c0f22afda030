"""The README's table of headline figures, made from benchmarks/results/.

    python benchmarks/headline.py                   # print the table (Markdown)
    python benchmarks/headline.py --write           # and put it into README.md
    python benchmarks/headline.py --write --readme FILE

``--write`` replaces what is between the lines ``<!-- headline:start -->`` and
``<!-- headline:end -->`` of README.md with the table (the markers stay); it fails if the
markers are not there. tests/benchmarks_tests/test_benchmark_headline.py checks that
README.md's table is what this prints, so a new results file is followed by ``--write``.

Each row (HEADLINE) is one figure a user compares, with its peers measured in the same run:
it is read from the first machine of MACHINES, and the first of the row's suites there, whose
results have it, and says which GPU and which day. The docs' performance page shows the same
rows (docs/_ext/performance.py).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE.parent / "README.md"
START, END = "<!-- headline:start -->", "<!-- headline:end -->"
MACHINES = ("h200-cu13", "h100-cu13")  # the newest GPU first
COLUMNS = ("pyctk", "cuBLAS", "PyTorch", "CuPy", "NumPy (CPU)")


class Figure(NamedTuple):
    """A headline row: its words (with the unit), the unit, the results files it is read from (suites, in
    order), the rows it takes (kind, dtype, n; None: any), and for each of COLUMNS the
    backend whose row fills it (None: left empty)."""

    words: str
    unit: str
    suites: tuple[str, ...]
    kind: str
    dtype: str | None
    n: int | None
    backends: tuple[str | None, ...]  # one per COLUMNS


HEADLINE = (
    Figure(
        "float32, 8192³ on GPU arrays, TFLOP/s (pyctk: its own kernel)",
        "TFLOP/s",
        ("matmul", "complex"),
        "device",
        "float32",
        8192,
        ("tiled", "cublas", "torch", "cupy", None),
    ),
    Figure(
        "float16, 8192³ on GPU arrays, TFLOP/s (pyctk: its own kernel)",
        "TFLOP/s",
        ("matmul",),
        "device",
        "float16",
        8192,
        ("tiled", "cublas", "torch", "cupy", None),
    ),
    Figure(
        "int8, 8192³ on GPU arrays, TOP/s (PyTorch: `torch._int_mm`)",
        "TOP/s",
        ("integers",),
        "device",
        "int8",
        8192,
        ("tiled", None, "torch-int_mm", "cupy", None),
    ),
    Figure(
        "float32, 4096³, NumPy in and out, ms (pyctk: with cuBLAS)",
        "ms",
        ("host",),
        "host",
        "float32",
        4096,
        ("cublas", None, "torch", "cupy", "numpy"),
    ),
    Figure(
        "16 x 16 float32 on GPU arrays, µs per call",
        "µs",
        ("device-call",),
        "device-call-tiny",
        "float32",
        16,
        ("pyctk", None, "torch", "cupy", None),
    ),
    Figure(
        "16 x 16 float32, NumPy in and out, µs per call",
        "µs",
        ("host",),
        "host-tiny",
        "float32",
        16,
        ("tiled", None, "torch", "cupy", "numpy"),
    ),
    Figure(
        "a fresh process to its first result, s",
        "s",
        ("host",),
        "startup",
        None,
        None,
        ("pyctk", None, "torch", "cupy", None),
    ),
)
SCALE = {"ms": 1e3, "µs": 1e6, "s": 1.0}  # from seconds


def number(x: float) -> str:
    """Three significant digits, no exponent (as the performance page's tables)."""
    magnitude = abs(x)
    if magnitude >= 100:
        return f"{x:.0f}"
    if magnitude >= 10:
        return f"{x:.1f}"
    if magnitude >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def results(folder: Path = RESULTS) -> dict[str, dict[str, dict]]:
    """Each machine's results files' contents: machine -> suite -> contents."""
    found: dict[str, dict[str, dict]] = {}
    for path in sorted(folder.glob("*/*.json")):
        found.setdefault(path.parent.name, {})[path.stem] = json.loads(path.read_text())
    return found


def value(row: dict, unit: str) -> float:
    if unit in SCALE:
        return row["seconds"] * SCALE[unit]
    return row["tflops"]


def find(figure: Figure, files: dict[str, dict[str, dict]]) -> tuple[dict, dict[str, dict]]:
    """The first file (MACHINES' order, then the figure's suites') with a pyctk row for
    ``figure``, and its rows by backend."""
    for machine in MACHINES:
        for data in (files.get(machine, {}).get(suite) for suite in figure.suites):
            if data is None:
                continue
            rows = {
                r["backend"]: r
                for r in data.get("rows", [])
                if "backend" in r
                and "build" not in r
                and r.get("kind") == figure.kind
                and (figure.dtype is None or r.get("dtype") == figure.dtype)
                and (figure.n is None or r.get("n") == figure.n)
            }
            if figure.backends[0] in rows:
                return data, rows
    raise SystemExit(f"headline: no results for {figure.words!r} in {', '.join(MACHINES)} (benchmarks/results/)")


def gpu_name(measured: dict) -> str:
    name = re.sub(r"^NVIDIA ", "", measured.get("gpu") or "?")
    return f"{measured['gpus']} x {name}" if measured.get("gpus", 1) > 1 else name


def rows(folder: Path = RESULTS) -> list[list[str]]:
    """The table's rows, each: the figure (with its unit), one cell per COLUMNS, where measured."""
    files = results(folder)
    made = []
    for figure in HEADLINE:
        data, found = find(figure, files)
        cells = [figure.words]
        cells += [number(value(found[b], figure.unit)) if b in found else "" for b in figure.backends]
        measured = data.get("measured", {})
        cells.append(f"{gpu_name(measured)}, {measured.get('date', '?')}")
        made.append(cells)
    return made


def table(folder: Path = RESULTS) -> str:
    """The headline table, as Markdown."""
    header = ["", *COLUMNS, "measured on"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows(folder)]
    return "\n".join(lines)


def block(text: str) -> str:
    """What is between the markers of ``text`` (README.md's contents), stripped."""
    if START not in text or END not in text or text.index(START) > text.index(END):
        raise ValueError(f"README.md has no {START} ... {END} block")
    return text[text.index(START) + len(START) : text.index(END)].strip()


def written(text: str, headline: str) -> str:
    """``text`` with its block replaced by ``headline``."""
    block(text)  # the markers are there, in order
    return text[: text.index(START) + len(START)] + "\n" + headline + "\n" + text[text.index(END) :]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"replace README.md's {START} block")
    parser.add_argument("--readme", default=str(README), help="the file --write changes (default README.md)")
    args = parser.parse_args()
    headline = table()
    print(headline)
    if args.write:
        path = Path(args.readme)
        try:
            path.write_text(written(path.read_text(), headline))
        except ValueError as error:
            raise SystemExit(f"{path}: {error}") from error
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
