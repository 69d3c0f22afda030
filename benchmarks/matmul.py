"""Benchmark pyctk's backends: prints a table and writes JSON.

    python benchmarks/matmul.py [--json results.json] [--sizes 1024 4096 8192]

Rows:
- "device": operands already on the GPU (allocated through PyTorch, which must
  be installed), timed with CUDA events around gpumatmul_matmul_device; compared
  with torch.matmul on the same tensors (TF32 off). Median of --repeats.
- "device-call": pyctk.matmul called from Python on GPU data (backend "pyctk":
  DeviceArrays; "pyctk-torch": the torch tensors themselves) against torch.matmul,
  device time per product over 10 back-to-back calls; "device-call-tiny": 16, 32 and 64 per call from Python, against
  torch.matmul and cupy.matmul, each library on its own arrays.
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
BATCH = 10  # products per timed stream in the "device-call" rows
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
    """pyctk.matmul on GPU data side by side with torch.matmul and cupy.matmul, each on its
    own arrays (pyctk: DeviceArrays; "pyctk-torch": pyctk on the torch tensors, read through
    their CUDA Array Interface). Per-call time for tiny products (16, 32 and 64, float32:
    wall clock over many calls, then a synchronise), and device time for large sizes."""
    try:
        import torch
    except ImportError:
        return []
    torch.backends.cuda.matmul.allow_tf32 = False
    peers = {"pyctk": (pyctk.asarray, pyctk.matmul), "pyctk-torch": (lambda t: t, pyctk.matmul),
             "torch": (lambda t: t, torch.matmul)}
    try:
        import cupy
        peers["cupy"] = (cupy.asarray, cupy.matmul)
    except ImportError:
        pass
    rows = []
    for n in (16, 32, 64):
        a = torch.ones(n, n, device="cuda")
        for name, (convert, run) in peers.items():
            x = convert(a)
            for _ in range(100):
                run(x, x)
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                run(x, x)
            torch.cuda.synchronize()
            seconds = (time.perf_counter() - start) / calls
            rows.append({"kind": "device-call-tiny", "backend": name, "dtype": "float32", "n": n,
                         "seconds": seconds, "tflops": 2 * n**3 / seconds / 1e12})
    for n in sizes:
        a, b = (torch.randn(n, n, device="cuda") for _ in range(2))
        for name in ("pyctk", "pyctk-torch", "torch"):
            convert, run = peers[name]
            x, y = convert(a), convert(b)
            run(x, y)
            torch.cuda.synchronize()
            times = []
            for _ in range(repeats):
                # Device time per product of a stream of BATCH products: what the GPU spends,
                # with each library's host time per call hidden behind the products queued
                # before it, as in a program that multiplies in a loop.
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(BATCH):
                    run(x, y)
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3 / BATCH)
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
    print(f"{'kind':<16} {'backend':<11} {'dtype':<8} {'n':>6} {'time':>12} {'TFLOP/s':>9}")
    for row in rows:
        t = row["seconds"]
        shown = f"{t * 1e6:.1f} us" if t < 1e-3 else f"{t * 1e3:.3f} ms"
        print(f"{row['kind']:<16} {row['backend']:<11} {row['dtype']:<8} {row['n']:>6} {shown:>12} {row['tflops']:>9.2f}")
    with open(args.json, "w") as out:
        json.dump({"device": device, "info": report, "rows": rows}, out, indent=1)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
