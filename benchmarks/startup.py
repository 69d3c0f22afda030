"""Where a fresh process's time to its first product goes: a table and JSON.

    python benchmarks/startup.py [--runs 5] [--out FILE]

Each run is a new Python started in an empty folder (so an installed pyctk is imported), timed
from just before it starts. Two kinds of run, alternated:

- "first product": what a user sees: import NumPy, import pyctk, then one 16 x 16 product of
  NumPy arrays (pyctk's own kernel: no cuBLAS call), then one 512 x 512 (cuBLAS);
- "one step at a time": the same work cut into its steps, each finished before the next
  starts, so that each can be timed: loading cudart, cuBLASLt, cuBLAS and libgpumatmul,
  initialising the driver and device 0's primary context (cudaFree(0)), creating the cuBLAS
  handle and the context, then the two products. The first kind overlaps the driver's
  initialisation with the loading (pyctk._contexts.load_library): the difference is that.

The table gives each step's median over the runs, in milliseconds, and the time since start.
The JSON ("runs": every process's steps, "median": the table) goes to
benchmarks/results/<machine>/startup.json (measured.py; --out to choose), with its "measured"
object, taken after the runs (this process starts CUDA only then).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

import measured  # benchmarks/measured.py: this folder is first on sys.path

CHILD = r"""
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
    loaded = {}
    for name in ("cudart", "cublasLt", "cublas"):
        loaded[name] = _loader.load_library(_loader.library_spec(name, CUDA_MAJOR)).path
        marks.append((f"load {name}", time.time()))
    _library.library()
    marks.append(("load libgpumatmul", time.time()))
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

KINDS = {"first product": "user", "one step at a time": "steps"}


def run(kind: str) -> list[tuple[str, float]]:
    """One fresh process: (step, seconds since just before it started) for each step."""
    with tempfile.TemporaryDirectory() as folder:
        start = time.time()
        done = subprocess.run([sys.executable, "-c", CHILD, KINDS[kind]], cwd=folder, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{kind}: the fresh process failed:\n{done.stderr[-3000:]}")
    return [(name, at - start) for name, at in json.loads(done.stdout.split("MARKS")[-1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--out",
        "--json",
        dest="out",
        metavar="FILE",
        help="where the JSON goes (default: benchmarks/results/<machine>/startup.json)",
    )
    args = parser.parse_args()
    runs: dict[str, list] = {kind: [] for kind in KINDS}
    for _ in range(args.runs):  # alternated, so that both kinds see the same machine
        for kind in KINDS:
            runs[kind].append(run(kind))
    table = {}
    for kind, results in runs.items():
        names = [name for name, _ in results[0]]
        since = [statistics.median(r[i][1] for r in results) for i in range(len(names))]
        table[kind] = [
            {"step": name, "since_start_s": t, "step_ms": 1e3 * (t - (since[i - 1] if i else 0))}
            for i, (name, t) in enumerate(zip(names, since))
        ]
        print(f"{kind} (median of {len(results)} fresh processes)")
        print(f"  {'step':32s} {'ms':>8s} {'since start':>12s}")
        for step in table[kind]:
            print(f"  {step['step']:32s} {step['step_ms']:8.1f} {step['since_start_s']:10.3f} s")
    import pyctk  # after the runs: its report starts CUDA in this process

    report = pyctk.info()
    if not report["devices"]:
        raise SystemExit(f"no GPU: {report['error']}")
    path = args.out or measured.default_path(report["devices"][0]["name"], report["cuda_major"], "startup")
    measured.write(
        path, {"measured": measured.measured(report), "settings": {"runs": args.runs}, "runs": runs, "median": table}
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
