"""python -m pyctk: report the environment, then multiply on the GPU with every backend and check.

Exits 0 when every check passes, 1 when something is missing or wrong
(with what was searched and how to fix it), never with a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from . import _info, matmul
from ._errors import PyctkError

BACKENDS = ("tiled", "cublas")
TOLERANCE = {np.float32: 1e-5, np.float64: 1e-12}


def print_report(report: dict) -> None:
    print(f"pyctk {report['pyctk_version']} ({report['distribution']}, built for CUDA {report['cuda_major']})")
    if report["warning"]:
        print(f"  WARNING: {report['warning']}")
    print(f"  NVIDIA driver:   {report['driver_release'] or 'not found'}"
          f" (CUDA driver API {report['driver_version'] or 'unavailable'})")
    print(f"  CUDA runtime:    {report['runtime_version'] or 'not loaded'}")
    print(f"  cuBLAS:          {report['cublas_version'] or 'not loaded'}")
    print("Libraries:")
    for library in report["libraries"]:
        print(f"  {library['name']:<10} {library['path']}  (found via {library['found_via']})")
    images = report["kernel_images"]
    if images:
        names = " ".join(image["name"] for image in images)
        print(f"Embedded kernel images ({len(images)}, {sum(i['size_bytes'] for i in images) // 1024} KiB): {names}")
    for device in report["devices"]:
        image = device["kernel_image"]
        chosen = f"{image['name']} ({image['kind']})" if image else "none fits this GPU"
        print(f"GPU {device['index']}: {device['name']}, compute capability {device['compute_capability']}, "
              f"{device['multiprocessors']} SMs, {device['total_memory_bytes'] / 2**30:.1f} GiB; "
              f"kernel image {chosen}")


def relative_error(result: np.ndarray, reference: np.ndarray) -> float:
    scale = np.linalg.norm(reference)
    return float(np.linalg.norm(result.astype(np.float64) - reference) / (scale if scale else 1.0))


def check_backends(size: int, repeats: int) -> bool:
    rng = np.random.default_rng(0)
    print(f"\nMultiplying random {size} x {size} matrices (NumPy in, NumPy out; best of {repeats}):")
    print(f"  {'backend':<8} {'dtype':<8} {'time':>10} {'TFLOP/s':>9} {'rel. error':>11}  check")
    passed = True
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((size, size)).astype(dtype)
        b = rng.standard_normal((size, size)).astype(dtype)
        reference = a.astype(np.float64) @ b.astype(np.float64)
        for backend in BACKENDS:
            matmul(a, b, backend=backend)  # warm-up: context, cuBLAS handle, module load
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                result = matmul(a, b, backend=backend)
                times.append(time.perf_counter() - start)
            error = relative_error(result, reference)
            ok = error <= TOLERANCE[dtype]
            passed &= ok
            best = min(times)
            print(f"  {backend:<8} {np.dtype(dtype).name:<8} {best * 1e3:>8.2f} ms {2 * size**3 / best / 1e12:>9.2f}"
                  f" {error:>11.2e}  {'ok' if ok else 'FAILED (limit %.0e)' % TOLERANCE[dtype]}")
    return passed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyctk", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048, help="matrix size n for the check (default 2048)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per backend (default 3)")
    args = parser.parse_args(argv)

    report = _info.info()
    print_report(report)
    if report["error"] or not report["devices"]:
        print(f"\nNo GPU computation possible:\n{report['error']}", file=sys.stderr)
        return 1
    try:
        passed = check_backends(args.size, args.repeats)
    except PyctkError as error:
        print(f"\nThe GPU computation failed:\n{error}", file=sys.stderr)
        return 1
    print("\nAll checks passed." if passed else "\nSome checks FAILED.")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
