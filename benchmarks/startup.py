"""A fresh process's start-up: `import pyctk`, the first product beside CuPy's and PyTorch's,
and where its time goes. A table and JSON.

    python benchmarks/startup.py [--runs 10] [--out FILE]

Each measurement is a new Python started in an empty folder (so that an installed pyctk is
imported; benchmarks/fresh.py), and each row the median of --runs after one unrecorded run
(which warms the disk cache). Rows, in matmul.py's format:

- "import": `import pyctk` in a Python that has imported NumPy (what pyctk adds to a program
  that uses NumPy), timed inside the child; "import-matmul": the same, then `pyctk.matmul`,
  whose first use imports the modules a product needs (pyctk imports the modules behind its
  names on their first use);
- "startup": wall clock from just before a new Python starts to its first 16 x 16 float32
  product of NumPy arrays back in NumPy (NumPy's import, the library's, the driver's start),
  for pyctk, CuPy and PyTorch; a peer that is not installed has a line saying so in the table
  and a note in the JSON's "notes";
- "startup-floor": the same Python and NumPy, then only the CUDA driver's start and device
  0's primary context through libcuda (fresh.DRIVER_FLOOR): what no library can take off.

Then the steps: two kinds of run, alternated, --runs of each:

- "first product": what a user sees: import NumPy, import pyctk, then one 16 x 16 product of
  NumPy arrays (pyctk's own kernel: no cuBLAS call), then one 512 x 512 (cuBLAS);
- "one step at a time": the same work cut into its steps, each finished before the next
  starts, so that each can be timed: importing pyctk.matmul's modules, loading cudart,
  cuBLASLt, cuBLAS and libgpumatmul, the check that one pyctk distribution is installed
  (importlib.metadata), initialising the driver and device 0's primary context (cudaFree(0)),
  creating a cuBLAS handle and the context, then the two products. The first kind overlaps the driver's
  initialisation with the loading (pyctk._cuda.contexts.load_library): the difference is that.

Whether there is a GPU is asked first, in a fresh process (pyctk.info()), so that this one
starts no CUDA before the runs. Without one only the import rows are measured, and the table
says "no GPU" where the products would be. The JSON ("rows", "notes"; "runs": every
process's steps, "median": the steps' table) goes to benchmarks/results/<machine>/startup.json
(measured.py; --out to choose; without a GPU only with --out), with its "measured" object.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import fresh  # benchmarks/fresh.py and measured.py: this folder is first on sys.path
import measured

STEPS_CHILD = r"""
import json, sys, time
marks = [("python started", time.time())]
import ctypes
import numpy as np
marks.append(("import numpy", time.time()))
import pyctk
marks.append(("import pyctk", time.time()))
tiny, large = np.ones((16, 16), np.float32), np.ones((512, 512), np.float32)
if sys.argv[1] == "steps":
    from pyctk._cuda import contexts as _contexts
    from pyctk._cuda import library as _library
    from pyctk._cuda import loader as _loader
    from pyctk._build_config import CUDA_MAJOR
    pyctk.matmul  # its modules, imported on its first use
    marks.append(("pyctk.matmul's modules", time.time()))
    loaded = {}
    for name in ("cudart", "cublasLt", "cublas"):
        loaded[name] = _loader.load_library(_loader.library_spec(name, CUDA_MAJOR)).path
        marks.append((f"load {name}", time.time()))
    _loader.load_gpumatmul(CUDA_MAJOR)
    marks.append(("load libgpumatmul", time.time()))
    _library.library()  # the rest of its first use: are pyctk-cu12 and -cu13 both installed?
    marks.append(("importlib.metadata's check", time.time()))
    assert ctypes.CDLL(loaded["cudart"]).cudaFree(None) == 0
    marks.append(("driver + primary context", time.time()))
    handle = ctypes.c_void_p()
    assert ctypes.CDLL(loaded["cublas"]).cublasCreate_v2(ctypes.byref(handle)) == 0
    marks.append(("a cuBLAS handle", time.time()))
    _contexts.context(0)
    marks.append(("gpumatmul_create", time.time()))
pyctk.matmul(tiny, tiny)
marks.append(("16 x 16 product", time.time()))
pyctk.matmul(large, large)
marks.append(("512 x 512 product (cuBLAS)", time.time()))
print("MARKS" + json.dumps(marks))
"""

STEP_KINDS = {"first product": "user", "one step at a time": "steps"}

# A fresh process's answer to "is there a GPU?": pyctk.info() starts CUDA, so not in this one.
GPU_PROBE = "import json, pyctk\nreport = pyctk.info()\nprint(json.dumps([bool(report['devices']), report['error']]))"


def gpu_present() -> tuple[bool, str | None]:
    """(whether a fresh Python's pyctk sees a GPU, pyctk.info()'s error where it sees none)."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run([sys.executable, "-c", GPU_PROBE], cwd=folder, capture_output=True, text=True)
    if done.returncode:
        return False, f"pyctk.info() failed: {done.stderr.strip()[-300:]}"
    present, error = json.loads(done.stdout.splitlines()[-1])
    return present, error


def process_row(kind: str, backend: str, measure, runs: int, notes: list[str]) -> list[dict]:
    """[the row of fresh.median_of_runs(measure, runs)], or [] and a note if the child fails."""
    try:
        seconds = fresh.median_of_runs(measure, runs)
    except subprocess.CalledProcessError as error:
        notes.append(f"{kind} {backend}: the fresh process failed: {error.stderr.strip()[-300:]}")
        return []
    return [
        {"kind": kind, "backend": backend, "dtype": None, "n": None, "seconds": seconds, "tflops": None, "runs": runs}
    ]


def import_rows(runs: int, notes: list[str]) -> list[dict]:
    """The rows of fresh.IMPORTS: no GPU needed."""
    rows = []
    for kind in fresh.IMPORTS:
        rows += process_row(kind, "pyctk", functools.partial(fresh.import_seconds, kind), runs, notes)
    return rows


def first_result_rows(libraries: list[str], runs: int, notes: list[str]) -> list[dict]:
    """The "startup" row of each of ``libraries`` (names of fresh.FIRST_RESULT)."""
    rows = []
    for library in libraries:
        rows += process_row("startup", library, functools.partial(fresh.first_result_seconds, library), runs, notes)
    return rows


def not_installed() -> list[str]:
    """The libraries of fresh.FIRST_RESULT that this Python cannot import."""
    return [library for library in fresh.FIRST_RESULT if importlib.util.find_spec(library) is None]


def steps_run(kind: str) -> list[tuple[str, float]]:
    """One fresh process of STEPS_CHILD: (step, seconds since just before it started) each."""
    with tempfile.TemporaryDirectory() as folder:
        start = time.time()
        done = subprocess.run(
            [sys.executable, "-c", STEPS_CHILD, STEP_KINDS[kind]], cwd=folder, capture_output=True, text=True
        )
    if done.returncode:
        raise SystemExit(f"{kind}: the fresh process failed:\n{done.stderr[-3000:]}")
    return [(name, at - start) for name, at in json.loads(done.stdout.split("MARKS")[-1])]


def steps(runs: int) -> tuple[dict[str, list], dict[str, list[dict]]]:
    """Every process's steps by kind, and the table of their medians by kind."""
    found: dict[str, list] = {kind: [] for kind in STEP_KINDS}
    for _ in range(runs):  # alternated, so that both kinds see the same machine
        for kind in STEP_KINDS:
            found[kind].append(steps_run(kind))
    table = {}
    for kind, results in found.items():
        names = [name for name, _ in results[0]]
        since = [statistics.median(r[i][1] for r in results) for i in range(len(names))]
        table[kind] = [
            {"step": name, "since_start_s": t, "step_ms": 1e3 * (t - (since[i - 1] if i else 0))}
            for i, (name, t) in enumerate(zip(names, since))
        ]
    return found, table


def shown_time(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.3f} s"


def print_rows(rows: list[dict], runs: int, missing: dict[str, str]) -> None:
    """The rows' table; ``missing``: library -> why it has no "startup" row."""
    print(f"fresh processes, median of {runs} (after one unrecorded)")
    print(f"  {'library':<8} {'measured':<55} {'time':>13}")
    for r in rows:
        print(f"  {r['backend']:<8} {fresh.WHAT[r['kind']]:<55} {shown_time(r['seconds']):>13}")
    for library, why in missing.items():
        print(f"  {library:<8} {fresh.WHAT['startup']:<55} {why:>13}")


def print_steps(table: dict[str, list[dict]], runs: int) -> None:
    for kind, rows in table.items():
        print(f"{kind} (median of {runs} fresh processes)")
        print(f"  {'step':32s} {'ms':>8s} {'since start':>12s}")
        for step in rows:
            print(f"  {step['step']:32s} {step['step_ms']:8.1f} {step['since_start_s']:10.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--out",
        "--json",
        dest="out",
        metavar="FILE",
        help="where the JSON goes (default: benchmarks/results/<machine>/startup.json; without a GPU, none)",
    )
    args = parser.parse_args()
    notes: list[str] = []
    rows = import_rows(args.runs, notes)
    present, error = gpu_present()
    data: dict[str, Any] = {"settings": {"runs": args.runs}}
    absent = not_installed()
    notes += [f"{library} not installed: no startup row for it" for library in absent]
    missing = dict.fromkeys(absent, "not installed")
    if present:
        rows += first_result_rows([lib for lib in fresh.FIRST_RESULT if lib not in absent], args.runs, notes)
        rows += process_row("startup-floor", "cuda driver", fresh.floor_seconds, args.runs, notes)
        data["runs"], data["median"] = steps(args.runs)
    else:
        missing = {library: missing.get(library, "no GPU") for library in fresh.FIRST_RESULT}
    print_rows(rows, args.runs, missing)
    for note in notes:
        print(f"({note})")
    if not present:
        why = error.splitlines()[0] if error else "pyctk.info() lists no device"
        print(f"no GPU ({why}): no products, no steps")
    else:
        print_steps(data["median"], args.runs)
    report = None
    if present:
        import pyctk  # after the runs: its report starts CUDA in this process

        report = pyctk.info()
    path = args.out or (
        measured.default_path(report["devices"][0]["name"], report["cuda_major"], "startup") if report else None
    )
    if path is None:
        print("nothing written: --out FILE writes the rows without a GPU")
        return
    data.update(measured=measured.measured(report), notes=notes, rows=rows)
    measured.write(path, data)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
