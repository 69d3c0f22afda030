"""Benchmark pyctk's backends: prints a table and writes JSON.

    python benchmarks/matmul.py [--json results.json] [--sizes 1024 4096 8192]

Rows:
- "device": operands already on the GPU (allocated through PyTorch, which must
  be installed), timed with CUDA events around gpumatmul_matmul_device; compared
  with torch.matmul on the same tensors (TF32 off). Median of --repeats.
- "device-call": pyctk.matmul called from Python on torch tensors (the GPU-array
  path) against torch.matmul, device time; "device-call-tiny": 16 x 16 per call
  from Python, against torch.matmul and cupy.matmul.
- "host": NumPy in, NumPy out through pyctk.matmul (copies included), wall clock,
  median of --repeats; plus per-call time for tiny 16 x 16 products.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import time

import numpy as np

import pyctk
from pyctk import _library

DTYPE_CODES = {"float32": 0, "float64": 1}
BACKEND_CODES = {"tiled": 1, "cublas": 2}


def device_rows(sizes, dtypes, repeats):
    try:
        import torch
    except ImportError:
        print("(PyTorch not installed: no device-side rows)")
        return []
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    context = _library.context()
    for dtype in dtypes:
        for n in sizes:
            a, b = (torch.randn(n, n, device="cuda", dtype=getattr(torch, dtype)) for _ in range(2))
            c = torch.empty_like(a)
            runs = {
                backend: (lambda code=code: _library.call(
                    "gpumatmul_matmul_device", context, code, DTYPE_CODES[dtype], 0, 0, n, n, n,
                    a.data_ptr(), n, b.data_ptr(), n, c.data_ptr(), n, None))
                for backend, code in BACKEND_CODES.items()}
            runs["torch"] = lambda: torch.matmul(a, b, out=c)
            for name, run in runs.items():
                run()
                torch.cuda.synchronize()
                times = []
                for _ in range(repeats):
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    run()
                    end.record()
                    end.synchronize()
                    times.append(start.elapsed_time(end) / 1e3)
                seconds = statistics.median(times)
                rows.append({"kind": "device", "backend": name, "dtype": dtype, "n": n,
                             "seconds": seconds, "tflops": 2 * n**3 / seconds / 1e12})
    return rows


def host_rows(sizes, dtypes, repeats):
    rows = []
    rng = np.random.default_rng(0)
    for dtype in dtypes:
        for n in sizes:
            a, b = (rng.standard_normal((n, n)).astype(dtype) for _ in range(2))
            for backend in BACKEND_CODES:
                pyctk.matmul(a, b, backend=backend)
                times = []
                for _ in range(repeats):
                    start = time.perf_counter()
                    pyctk.matmul(a, b, backend=backend)
                    times.append(time.perf_counter() - start)
                seconds = statistics.median(times)
                rows.append({"kind": "host", "backend": backend, "dtype": dtype, "n": n,
                             "seconds": seconds, "tflops": 2 * n**3 / seconds / 1e12})
    return rows


def tiny_rows(calls=2000):
    a = np.ones((16, 16), np.float32)
    rows = []
    for backend in BACKEND_CODES:
        pyctk.matmul(a, a, backend=backend)
        start = time.perf_counter()
        for _ in range(calls):
            pyctk.matmul(a, a, backend=backend)
        seconds = (time.perf_counter() - start) / calls
        rows.append({"kind": "host-tiny", "backend": backend, "dtype": "float32", "n": 16,
                     "seconds": seconds, "tflops": 2 * 16**3 / seconds / 1e12})
    return rows


def device_call_rows(sizes, repeats, calls=5000):
    """pyctk.matmul called from Python on torch CUDA tensors (the DeviceArray path, result
    allocated from the stream-ordered pool), side by side with torch.matmul and CuPy:
    per-call time for 16 x 16 float32 (wall clock over many calls, then a synchronise) and
    device time for large sizes."""
    try:
        import torch
    except ImportError:
        return []
    torch.backends.cuda.matmul.allow_tf32 = False
    peers = {"pyctk": lambda a, b: pyctk.matmul(a, b), "torch": torch.matmul}
    try:
        import cupy
        peers["cupy"] = lambda a, b: cupy.matmul(a, b)
        to_peer = {"cupy": cupy.asarray}
    except ImportError:
        to_peer = {}
    rows = []
    a = torch.ones(16, 16, device="cuda")
    for name, run in peers.items():
        x = to_peer.get(name, lambda t: t)(a)
        for _ in range(100):
            run(x, x)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            run(x, x)
        torch.cuda.synchronize()
        seconds = (time.perf_counter() - start) / calls
        rows.append({"kind": "device-call-tiny", "backend": name, "dtype": "float32", "n": 16,
                     "seconds": seconds, "tflops": 2 * 16**3 / seconds / 1e12})
    for n in sizes:
        a, b = (torch.randn(n, n, device="cuda") for _ in range(2))
        for name in ("pyctk", "torch"):
            run = peers[name]
            run(a, b)
            torch.cuda.synchronize()
            times = []
            for _ in range(repeats):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                run(a, b)
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
            seconds = statistics.median(times)
            rows.append({"kind": "device-call", "backend": name, "dtype": "float32", "n": n,
                         "seconds": seconds, "tflops": 2 * n**3 / seconds / 1e12})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096, 8192])
    parser.add_argument("--host-sizes", type=int, nargs="+", default=[4096])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", default="benchmark-matmul.json")
    args = parser.parse_args()

    report = pyctk.info()
    device = report["devices"][0]["name"] if report["devices"] else None
    if device is None:
        raise SystemExit(f"no GPU: {report['error']}")
    rows = (device_rows(args.sizes, args.dtypes, args.repeats)
            + host_rows(args.host_sizes, args.dtypes, max(3, args.repeats // 3)) + tiny_rows()
            + device_call_rows(args.sizes, args.repeats))
    print(f"GPU: {device}; CUDA runtime {report['runtime_version']}, cuBLAS {report['cublas_version']}")
    print(f"{'kind':<16} {'backend':<7} {'dtype':<8} {'n':>6} {'time':>12} {'TFLOP/s':>9}")
    for row in rows:
        t = row["seconds"]
        shown = f"{t * 1e6:.1f} us" if t < 1e-3 else f"{t * 1e3:.3f} ms"
        print(f"{row['kind']:<16} {row['backend']:<7} {row['dtype']:<8} {row['n']:>6} {shown:>12} {row['tflops']:>9.2f}")
    with open(args.json, "w") as out:
        json.dump({"device": device, "info": report, "rows": rows}, out, indent=1)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
