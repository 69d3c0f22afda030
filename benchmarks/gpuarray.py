"""Benchmark pyctk.gpuarray side by side with CuPy and PyTorch in one run: a table and JSON.

    python benchmarks/gpuarray.py [--quick] [--out FILE]    # on the GPU machine
    python benchmarks/gpuarray.py --from-json FILE          # the table again
    python benchmarks/plot.py                               # the plots (needs matplotlib)

Issue 25's targets, each measured beside its peers (a library that is not installed is
skipped with a note, printed and kept in the JSON's "notes"). Four kinds of row:

- "bandwidth": float32 arrays of --n elements (2^28: 1 GiB each; --quick 2^24), each library
  on its own arrays made from the same NumPy data. Device time of one call, CUDA events on
  the legacy default stream (where pyctk, CuPy and PyTorch all queue their work unless told
  otherwise), median of --repeats after WARMUP calls; the last warm-up's result is checked
  against NumPy first (on a sample of the elements; sums against float64). "gbps" is the
  bytes the operation must move (BYTES_PER_ELEMENT times n) over that time, and
  "fraction_of_copy" divides it by pyctk's "copy" row: cuMemcpyDtoD of the 1 GiB
  (`pyctk.driver.memcpy_dtod`), counted as bytes read plus bytes written. The operations:

  | operation   | pyctk                               | CuPy                   | PyTorch                  |
  |-------------|-------------------------------------|------------------------|--------------------------|
  | copy        | driver.memcpy_dtod                  | cupy.copyto            | z.copy_(a)               |
  | a*b+c fused | ElementwiseKernel, z[i] = a*b + c   | cupy.ElementwiseKernel | torch.addcmul(c, a, b, out=z) |
  | a*b+c       | a * b + c (two kernels, a temporary)| the same               | the same                 |
  | sum         | gpuarray.sum(a)                     | cupy.sum(a)            | torch.sum(a)             |
  | dot         | gpuarray.dot(a, b)                  | cupy.dot(a, b)         | torch.dot(a, b)          |

- "per-call": host time of one small operation (--small-n float32 elements, 1000: `a + b`
  and `a * 2.0`): time.perf_counter over --calls calls in a loop and one synchronisation,
  after WARMUP_CALLS calls, best of --percall-repeats; each library in a fresh process of its
  own (this script with --percall-child), since a process that has run the others' large
  operations, or imported them, slows every library's small calls. The libraries' processes
  run in turn, --percall-rounds times over (the host's speed drifts by more than the
  libraries differ: runs on one machine moved by 30%), and a row has the median of its
  rounds, with "least_seconds", "most_seconds" and "rounds".
- "first-call": a fresh Python (in an empty folder) whose first GPU kernel is an
  ElementwiseKernel over 1000 elements: "import_seconds" for importing the library after
  NumPy, "seconds" for the kernel's first call (building it, compiling or loading it, the
  launch and a synchronisation), and "nvrtc_loaded": whether any libnvrtc is mapped into the
  process afterwards (/proc/self/maps; pyctk's rows also keep pyctk's loaded_libraries()
  names). "cold" runs with a new, empty kernel cache (PYCTK_CACHE_DIR, CUPY_CACHE_DIR),
  "cached" with the cache the cold run filled. Median of --runs of each, after one
  unrecorded cold run (which warms the disk cache).

Each row has kind, library, operation, dtype, n and seconds; "speed_vs_cupy" is CuPy's
seconds of the same kind and operation over the row's (above 1: faster than CuPy). pyctk's
rows with a target (TARGETS) get "target" (what it asks) and "met".

The JSON goes to benchmarks/results/<machine>/gpuarray.json (measured.py; --out to choose),
with its "measured" object; benchmarks/plot.py draws it as gpuarray-bandwidth.png (percent of
the copy bandwidth, per operation and library) and gpuarray-percall.png (microseconds per call).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

import measured  # benchmarks/measured.py and matmul.py: this folder is first on sys.path
import pyctk
from matmul import shown_time

WARMUP = 2  # calls before a "bandwidth" row's timed ones (the first compiles)
WARMUP_CALLS = 100  # calls before a "per-call" row's timed ones
SAMPLE = 4099  # every SAMPLE-th element of a large result is checked against NumPy
BYTES_PER_ELEMENT = {  # bytes each operation must read and write per float32 element
    "copy": 4 + 4,
    "a*b+c fused": 3 * 4 + 4,  # read a, b, c; write z
    "a*b+c": (2 * 4 + 4) + (2 * 4 + 4),  # t = a * b, then t + c: two kernels, each 12 bytes
    "sum": 4,
    "dot": 2 * 4,
}
SMALL_OPERATIONS = {"a+b": lambda x, y: x + y, "a*2.0": lambda x, y: x * 2.0}
# Issue 25's targets for pyctk's rows: (kind, operation) -> {field: the least value it may
# have, or the value it must have where that is a bool}.
TARGETS: dict[tuple[str, str], dict[str, Any]] = {
    ("bandwidth", "a*b+c fused"): {"fraction_of_copy": 0.90, "speed_vs_cupy": 1.0},
    ("bandwidth", "a*b+c"): {"fraction_of_copy": 0.90, "speed_vs_cupy": 1.0},
    ("bandwidth", "sum"): {"fraction_of_copy": 0.85},
    ("bandwidth", "dot"): {"fraction_of_copy": 0.85},
    ("per-call", "a+b"): {"speed_vs_cupy": 1.0},
    ("per-call", "a*2.0"): {"speed_vs_cupy": 1.0},
    ("first-call", "cached"): {"nvrtc_loaded": False},
}
TARGET_WORDS: dict[str, Callable[[Any], str]] = {  # field -> the words of its TARGETS value
    "fraction_of_copy": lambda least: f">= {least:.0%} of copy",
    "speed_vs_cupy": lambda least: "not slower than CuPy",
    "nvrtc_loaded": lambda loaded: "NVRTC loaded" if loaded else "no NVRTC",
}

# The defaults, and --quick: a check, in well under a minute, that every row runs.
SETTINGS = {
    "full": {
        "n": 1 << 28,
        "repeats": 20,
        "small_n": 1000,
        "calls": 5000,
        "percall_repeats": 5,
        "percall_rounds": 5,
        "runs": 3,
    },
    "quick": {
        "n": 1 << 24,
        "repeats": 5,
        "small_n": 1000,
        "calls": 500,
        "percall_repeats": 3,
        "percall_rounds": 1,
        "runs": 1,
    },
}

NOTES: list[str] = []


def note(text: str) -> None:
    """Say why rows are missing, now and in the JSON."""
    print(f"({text})")
    NOTES.append(text)


# ---------------------------------------------------------------------------
# The libraries: what differs between them. Operators (a * b + c, a + b) are the same code.


class Library(NamedTuple):
    upload: Callable[[np.ndarray], Any]  # a NumPy array -> a new device array
    to_host: Callable[[Any], np.ndarray]  # a device array (0-d too) -> NumPy
    empty_like: Callable[[Any], Any]
    copy: Callable[[Any, Any], Any]  # copy(z, a): a into z; returns z
    fused: Callable[[Any, Any, Any, Any], Any]  # fused(a, b, c, z): z = a * b + c; returns z
    sum: Callable[[Any], Any]
    dot: Callable[[Any, Any], Any]
    synchronize: Callable[[], None]


def pyctk_library() -> Library:
    import pyctk.driver as cuda
    from pyctk import gpuarray
    from pyctk.elementwise import ElementwiseKernel

    fma = ElementwiseKernel("float *a, float *b, float *c, float *z", "z[i] = a[i]*b[i] + c[i]", "benchmark_fma")

    def copy(z, a):
        cuda.memcpy_dtod(z.gpudata, a.gpudata, a.nbytes)
        return z

    def fused(a, b, c, z):
        fma(a, b, c, z)
        return z

    return Library(
        gpuarray.to_gpu,
        lambda x: x.get(),
        lambda x: gpuarray.empty(x.shape, x.dtype),
        copy,
        fused,
        gpuarray.sum,
        gpuarray.dot,
        cuda.Context.synchronize,
    )


def cupy_library() -> Library:
    import cupy

    fma = cupy.ElementwiseKernel("float32 a, float32 b, float32 c", "float32 z", "z = a * b + c", "benchmark_fma")

    def copy(z, a):
        cupy.copyto(z, a)
        return z

    return Library(
        cupy.asarray,
        cupy.asnumpy,
        cupy.empty_like,
        copy,
        lambda a, b, c, z: fma(a, b, c, z),
        cupy.sum,
        cupy.dot,
        lambda: cupy.cuda.Device().synchronize(),
    )


def torch_library() -> Library:
    import torch

    if not torch.cuda.is_available():
        raise ImportError("this PyTorch has no CUDA")
    return Library(
        lambda x: torch.from_numpy(x).cuda(),
        lambda x: x.cpu().numpy(),
        torch.empty_like,
        lambda z, a: z.copy_(a),
        lambda a, b, c, z: torch.addcmul(c, a, b, out=z),
        torch.sum,
        torch.dot,
        torch.cuda.synchronize,
    )


LIBRARIES = {"pyctk": pyctk_library, "cupy": cupy_library, "torch": torch_library}


def available_libraries() -> dict[str, Library]:
    """The LIBRARIES that are installed (pyctk always: it is what is measured)."""
    libraries = {}
    for name, make in LIBRARIES.items():
        try:
            libraries[name] = make()
        except ImportError as error:
            if name == "pyctk":
                raise
            note(f"{name} not available ({error}): no {name} rows")
    return libraries


# ---------------------------------------------------------------------------
# Large operations: device time.


def large_operations(library: Library, a, b, c, z) -> dict[str, Callable[[], Any]]:
    """operation (BYTES_PER_ELEMENT's keys) -> a call of it on this library's arrays."""
    return {
        "copy": lambda: library.copy(z, a),
        "a*b+c fused": lambda: library.fused(a, b, c, z),
        "a*b+c": lambda: a * b + c,
        "sum": lambda: library.sum(a),
        "dot": lambda: library.dot(a, b),
    }


def exact_dot(a: np.ndarray, b: np.ndarray, chunk: int = 1 << 22) -> float:
    """a . b summed in float64, a chunk at a time (no 2 GiB float64 copies)."""
    return sum(
        float(np.dot(a[k : k + chunk].astype(np.float64), b[k : k + chunk].astype(np.float64)))
        for k in range(0, a.size, chunk)
    )


def expected_results(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> dict[str, Any]:
    """operation -> NumPy's answer: every SAMPLE-th element of an array result; a float64 sum."""
    s = slice(None, None, SAMPLE)
    return {
        "copy": a[s],
        "a*b+c fused": a[s] * b[s] + c[s],
        "a*b+c": a[s] * b[s] + c[s],
        "sum": a.sum(dtype=np.float64),
        "dot": exact_dot(a, b),
    }


def wrong(got: np.ndarray, expected: Any) -> str | None:
    """Why ``got`` (a whole result, on the host) is not ``expected``; None if it is.
    Elements: float32 rounding (a fused multiply-add may differ by an ulp); sums: 1e-4."""
    if np.ndim(expected) == 0:
        error = abs(float(got) - expected) / max(abs(expected), 1.0)
        return None if error <= 1e-4 else f"relative error {error:.2e} (got {float(got)}, expected {expected})"
    error = float(np.max(np.abs(got.reshape(-1)[::SAMPLE] - expected), initial=0.0))
    return None if error <= 1e-5 else f"elements off by up to {error:.2e}"


def device_seconds(run: Callable[[], Any], repeats: int) -> float:
    """Median device time of one ``run()``: CUDA events on the legacy default stream."""
    import pyctk.driver as cuda

    start, end = cuda.Event(), cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(end.time_since(start) / 1e3)
    return statistics.median(times)


def bandwidth_rows(libraries: dict[str, Library], n: int, repeats: int) -> list[dict]:
    """The "bandwidth" rows: operation by operation, each library's right after the others'
    (the same GPU clocks and temperature), on arrays that all stay alive meanwhile."""
    rng = np.random.default_rng(25)
    host = [rng.random(n, dtype=np.float32) for _ in range(3)]
    expected = expected_results(*host)
    operations = {}
    for name, library in libraries.items():
        a, b, c = (library.upload(x) for x in host)
        operations[name] = large_operations(library, a, b, c, library.empty_like(a))
    rows = []
    for operation in BYTES_PER_ELEMENT:
        for name, library in libraries.items():
            run = operations[name][operation]
            for _ in range(WARMUP):
                result = run()
            problem = wrong(library.to_host(result), expected[operation])
            if problem:
                raise SystemExit(f"{name} {operation} is wrong: {problem}")
            del result
            seconds = device_seconds(run, repeats)
            rows.append(bandwidth_row(name, operation, n, seconds))
    return rows


def bandwidth_row(library: str, operation: str, n: int, seconds: float) -> dict:
    moved = BYTES_PER_ELEMENT[operation] * n
    return {
        "kind": "bandwidth",
        "library": library,
        "operation": operation,
        "dtype": "float32",
        "n": n,
        "seconds": seconds,
        "bytes": moved,
        "gbps": moved / seconds / 1e9,
    }


# ---------------------------------------------------------------------------
# Small operations: host time per call, each library in a fresh process.


def per_call_seconds(library_name: str, n: int, calls: int, repeats: int) -> dict[str, float]:
    """operation -> seconds per call of SMALL_OPERATIONS on ``n`` float32 elements: the best
    of ``repeats`` loops of ``calls`` calls, each loop ended by one synchronisation."""
    library = LIBRARIES[library_name]()
    rng = np.random.default_rng(n)
    x_host, y_host = (rng.random(n, dtype=np.float32) for _ in range(2))
    x, y = library.upload(x_host), library.upload(y_host)
    seconds = {}
    for operation, compute in SMALL_OPERATIONS.items():
        problem = wrong(library.to_host(compute(x, y)), compute(x_host, y_host)[::SAMPLE])
        if problem:
            raise SystemExit(f"{library_name} {operation} is wrong: {problem}")
        for _ in range(WARMUP_CALLS):
            compute(x, y)
        library.synchronize()
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(calls):
                compute(x, y)
            library.synchronize()
            best = min(best, (time.perf_counter() - start) / calls)
        seconds[operation] = best
    return seconds


def per_call_rows(libraries: list[str], n: int, calls: int, repeats: int, rounds: int) -> list[dict]:
    """The "per-call" rows: each library's per_call_seconds in a fresh process, the libraries
    in turn, ``rounds`` times over; a row has the median of its rounds (and their least and
    most), so that the host's drift during the run falls on every library alike."""
    seconds: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for name in libraries:
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--percall-child",
                    name,
                    "--small-n",
                    str(n),
                    "--calls",
                    str(calls),
                    "--percall-repeats",
                    str(repeats),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode:
                note(f"per-call {name}: the fresh process failed: {done.stderr.strip()[-300:]}")
                continue
            for operation, value in json.loads(done.stdout.splitlines()[-1]).items():
                seconds.setdefault((name, operation), []).append(value)
    return [
        {
            "kind": "per-call",
            "library": name,
            "operation": operation,
            "dtype": "float32",
            "n": n,
            "seconds": statistics.median(values),
            "least_seconds": min(values),
            "most_seconds": max(values),
            "rounds": len(values),
            "calls": calls,
        }
        for (name, operation), values in seconds.items()
    ]


# ---------------------------------------------------------------------------
# A fresh process's first kernel: compiled (an empty cache) or loaded from the cache.

FIRST_CALL_BEFORE = "import json, time\nimport numpy as np\nstart = time.perf_counter()\n"
# library -> (the environment variable naming its kernel cache, code that imports it, sets
# imported, ready (arrays made, the GPU started) and done (the first kernel's call finished),
# result (on the host) and extra (more fields for the row))
FIRST_CALL = {
    "pyctk": (
        "PYCTK_CACHE_DIR",
        """
import pyctk.driver as cuda
from pyctk import gpuarray
from pyctk.elementwise import ElementwiseKernel
imported = time.perf_counter()
x = gpuarray.to_gpu(np.arange(1000, dtype=np.float32))
y = gpuarray.empty(x.shape, x.dtype)
cuda.Context.synchronize()
ready = time.perf_counter()
ElementwiseKernel("float *x, float *y", "y[i] = 2 * x[i] + 1", "first_kernel")(x, y)
cuda.Context.synchronize()
done = time.perf_counter()
result = y.get()
from pyctk._cuda import loader
extra = {"libraries": [library.name for library in loader.loaded_libraries()]}
""",
    ),
    "cupy": (
        "CUPY_CACHE_DIR",
        """
import cupy
imported = time.perf_counter()
x = cupy.asarray(np.arange(1000, dtype=np.float32))
y = cupy.empty_like(x)
cupy.cuda.Device().synchronize()
ready = time.perf_counter()
cupy.ElementwiseKernel("float32 x", "float32 y", "y = 2 * x + 1", "first_kernel")(x, y)
cupy.cuda.Device().synchronize()
done = time.perf_counter()
result = cupy.asnumpy(y)
extra = {}
""",
    ),
}
FIRST_CALL_AFTER = """
maps = [line.split() for line in open("/proc/self/maps")]
nvrtc = sorted({f[5] for f in maps if len(f) > 5 and "nvrtc" in f[5].rsplit("/", 1)[-1]})
print("RESULT" + json.dumps({"import_seconds": imported - start, "seconds": done - ready,
                             "right": bool((result == 2 * np.arange(1000, dtype=np.float32) + 1).all()),
                             "nvrtc": nvrtc, **extra}))
"""


def first_call(library: str, cache: str) -> dict:
    """One fresh Python's first kernel of ``library``, with its kernel cache in ``cache``."""
    variable, code = FIRST_CALL[library]
    environment = {**os.environ, variable: cache}
    environment.pop("PYCTK_DISABLE_CACHE", None)
    with tempfile.TemporaryDirectory() as folder:  # not a checkout's unbuilt pyctk/
        done = subprocess.run(
            [sys.executable, "-c", FIRST_CALL_BEFORE + code + FIRST_CALL_AFTER],
            cwd=folder,
            env=environment,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    if done.returncode:
        raise RuntimeError(done.stderr.strip()[-300:])
    return json.loads(done.stdout.split("RESULT")[-1])


def first_call_row(library: str, operation: str, runs: list[dict]) -> dict:
    """The "first-call" row of ``runs`` (first_call's results)."""
    row = {
        "kind": "first-call",
        "library": library,
        "operation": operation,
        "dtype": "float32",
        "n": 1000,
        "seconds": statistics.median(r["seconds"] for r in runs),
        "import_seconds": statistics.median(r["import_seconds"] for r in runs),
        "nvrtc_loaded": any(r["nvrtc"] for r in runs),
        "right": all(r["right"] for r in runs),
        "runs": len(runs),
        "nvrtc_files": sorted({f for r in runs for f in r["nvrtc"]}),
    }
    if "libraries" in runs[0]:
        row["libraries"] = runs[-1]["libraries"]
    return row


def first_call_rows(libraries: list[str], runs: int) -> list[dict]:
    """Per library of FIRST_CALL: "cold" (a new cache each run) and "cached" (that cache)."""
    rows = []
    for library in (name for name in FIRST_CALL if name in libraries):
        measured: dict[str, list[dict]] = {"cold": [], "cached": []}
        try:
            for k in range(runs + 1):
                with tempfile.TemporaryDirectory() as cache:
                    cold = first_call(library, cache)
                    cached = first_call(library, cache)
                if k:  # the first pair warms the disk cache
                    measured["cold"].append(cold)
                    measured["cached"].append(cached)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            note(f"first-call {library}: the fresh process failed: {error}")
            continue
        rows += [first_call_row(library, operation, done) for operation, done in measured.items()]
    return rows


# ---------------------------------------------------------------------------
# What the rows say: bandwidth, CuPy, targets.


def with_derived(rows: list[dict]) -> tuple[list[dict], float]:
    """``rows`` with fraction_of_copy (bandwidth rows), speed_vs_cupy (rows CuPy has too) and,
    on pyctk's rows of TARGETS, target and met; and the copy bandwidth (bytes/s: pyctk's
    "copy" row) they are fractions of."""
    copy = next(r for r in rows if r["kind"] == "bandwidth" and r["library"] == "pyctk" and r["operation"] == "copy")
    copy_bandwidth = copy["bytes"] / copy["seconds"]
    cupy = {(r["kind"], r["operation"]): r["seconds"] for r in rows if r["library"] == "cupy"}

    def derived(r: dict) -> dict:
        r = dict(r)
        if r["kind"] == "bandwidth":
            r["fraction_of_copy"] = r["bytes"] / r["seconds"] / copy_bandwidth
        if (r["kind"], r["operation"]) in cupy:
            r["speed_vs_cupy"] = cupy[r["kind"], r["operation"]] / r["seconds"]
        target = TARGETS.get((r["kind"], r["operation"]))
        if r["library"] == "pyctk" and target:
            r["target"] = target_words(target)
            r["met"] = met(r, target)
        return r

    return [derived(r) for r in rows], copy_bandwidth


def met(r: dict, target: dict[str, Any]) -> bool:
    """Whether row ``r`` meets ``target`` (a TARGETS value); a field the row lacks (no CuPy
    to compare with) is not held against it."""
    return all(
        r[field] == want if isinstance(want, bool) else r[field] >= want for field, want in target.items() if field in r
    )


def target_words(target: dict[str, Any]) -> str:
    return ", ".join(TARGET_WORDS[field](want) for field, want in target.items())


# ---------------------------------------------------------------------------
# Report: a table (benchmarks/plot.py draws the plots).


def remark(r: dict) -> str:
    """The table's last column: what a first-call row found, and the target."""
    parts = []
    if r["kind"] == "first-call":
        parts.append(
            f"import {shown_time(r['import_seconds'])}, NVRTC "
            f"{'loaded' if r['nvrtc_loaded'] else 'not loaded'}{'' if r['right'] else ', WRONG RESULT'}"
        )
    if "target" in r:
        parts.append(f"target {r['target']}: {'met' if r['met'] else 'MISSED'}")
    return "; ".join(parts)


def table_line(r: dict) -> str:
    gbps = f"{r['gbps']:.0f}" if "gbps" in r else ""
    fraction = f"{100 * r['fraction_of_copy']:.1f}%" if "fraction_of_copy" in r else ""
    versus = f"{r['speed_vs_cupy']:.2f}x" if "speed_vs_cupy" in r else ""
    return (
        f"{r['kind']:<10} {r['library']:<6} {r['operation']:<12} {r['n'] or '':>10} "
        f"{shown_time(r['seconds']):>11} {gbps:>6} {fraction:>7} {versus:>7}  {remark(r)}"
    )


def print_table(data: dict) -> None:
    print(
        f"GPU: {data['device']}; CUDA {data['cuda_major']}; "
        + ", ".join(f"{k} {v}" for k, v in data["versions"].items())
    )
    print(f"copy bandwidth (pyctk.driver.memcpy_dtod, read + write): {data['copy_bandwidth'] / 1e9:.0f} GB/s")
    print(
        f"{'kind':<10} {'lib':<6} {'operation':<12} {'n':>10} {'time':>11} {'GB/s':>6} "
        f"{'% copy':>7} {'vs CuPy':>7}  target / notes"
    )
    for r in data["rows"]:
        print(table_line(r))


# ---------------------------------------------------------------------------


def settings(args: argparse.Namespace) -> dict:
    """SETTINGS for --quick or not, overridden by what the command line gave."""
    given = {key: value for key, value in vars(args).items() if value is not None}
    return {**SETTINGS["quick" if args.quick else "full"], **given}


def measure(config: dict) -> dict:
    """Every row, on this machine's first GPU: the JSON's contents."""
    report = pyctk.info()
    if not report["devices"]:
        raise SystemExit(f"no GPU: {report['error']}")
    device = report["devices"][0]["name"]
    libraries = available_libraries()
    rows = bandwidth_rows(libraries, config["n"], config["repeats"])
    rows += per_call_rows(
        list(libraries), config["small_n"], config["calls"], config["percall_repeats"], config["percall_rounds"]
    )
    rows += first_call_rows(list(libraries), config["runs"])
    rows, copy_bandwidth = with_derived(rows)
    versions = {
        name: sys.modules[name].__version__
        for name in ("numpy", "pyctk", "cupy", "torch")
        if name in sys.modules and hasattr(sys.modules[name], "__version__")
    }
    return {
        "measured": measured.measured(report, versions=versions),
        "device": device,
        "cuda_major": report["cuda_major"],
        "info": report,
        "versions": versions,
        "settings": config,
        "copy_bandwidth": copy_bandwidth,
        "bytes_per_element": BYTES_PER_ELEMENT,
        "targets": {f"{kind} {operation}": target_words(t) for (kind, operation), t in TARGETS.items()},
        "notes": NOTES,
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, help="elements of the bandwidth rows (default 2^28)")
    parser.add_argument("--repeats", type=int, help="timed calls per bandwidth row (median)")
    parser.add_argument("--small-n", type=int, help="elements of the per-call rows (default 1000)")
    parser.add_argument("--calls", type=int, help="calls per timed loop of a per-call row")
    parser.add_argument("--percall-repeats", type=int, help="timed loops per per-call process (best)")
    parser.add_argument("--percall-rounds", type=int, help="fresh processes per per-call row (median)")
    parser.add_argument("--runs", type=int, help="fresh processes per first-call row (median)")
    parser.add_argument(
        "--out",
        "--json",
        dest="out",
        metavar="FILE",
        help="where the JSON goes (default: benchmarks/results/<machine>/gpuarray.json)",
    )
    parser.add_argument("--from-json", metavar="FILE", help="no measuring: the table of FILE")
    parser.add_argument("--percall-child", metavar="LIBRARY", help=argparse.SUPPRESS)  # per_call_rows' child
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats: a check that it all runs")
    args = parser.parse_args()
    config = settings(args)
    if args.percall_child:
        print(
            json.dumps(
                per_call_seconds(args.percall_child, config["small_n"], config["calls"], config["percall_repeats"])
            )
        )
        return
    if args.from_json:
        data = json.loads(Path(args.from_json).read_text())
    else:
        data = measure(config)
        path = args.out or measured.default_path(data["device"], data["cuda_major"], "gpuarray")
        measured.write(path, data)
        print(f"wrote {path}")
    print_table(data)


if __name__ == "__main__":
    main()
