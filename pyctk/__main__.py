"""python -m pyctk: report the environment, then multiply on the GPU with every backend and check.

Exits 0 when every check passes, 1 when something is missing or wrong
(with what was searched and how to fix it), never with a traceback.
With --cflags, --libs or --pkgconfig-path it prints what building a program
against libgpumatmul needs instead, and exits 0.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time

import numpy as np

from . import _info, matmul
from ._arrays.dtypes import DTYPES, PRODUCT_DTYPES
from ._build_config import CUDA_MAJOR
from ._cuda import c_build, library, nvrtc
from ._cuda.errors import PyctkError, UnsupportedError
from ._matmul.api import Backend
from ._matmul.options import BACKENDS as BACKEND_CODES

BACKENDS: tuple[Backend, ...] = ("tiled", "cublas")
TIMED_DTYPES = ("float32", "float64")
# Relative Frobenius error allowed against a float64/complex128 product of the same operands;
# integers and bool must match NumPy exactly.
TOLERANCE = {
    "float16": 2e-3,
    "bfloat16": 1.6e-2,
    "float32": 1e-5,
    "complex64": 1e-5,
    "float64": 1e-12,
    "complex128": 1e-12,
}
CHECK_SIZE = 200  # every other dtype: NumPy's own integer product is slow on the CPU


def print_report(report: dict) -> None:
    print(f"pyctk {report['pyctk_version']} ({report['distribution']}, built for CUDA {report['cuda_major']})")
    if report["warning"]:
        print(f"  WARNING: {report['warning']}")
    print(
        f"  NVIDIA driver:   {report['driver_release'] or 'not found'}"
        f" (CUDA driver API {report['driver_version'] or 'unavailable'})"
    )
    print(f"  CUDA runtime:    {report['runtime_version'] or 'not loaded'}")
    print(f"  cuBLAS:          {report['cublas_version'] or 'not loaded'}")
    nvrtc_version = report["nvrtc_version"] or f"not installed (optional: {nvrtc.install_command()})"
    print(f"  NVRTC:           {nvrtc_version}")
    print("Environment:" if report["environment"] else "Environment: none of pyctk's variables is set")
    for name, value in report["environment"].items():
        print(f"  {name}={value}")
    print("Libraries:")
    for loaded in report["libraries"]:
        print(f"  {loaded['name']:<10} {loaded['path']}  (found via {loaded['found_via']})")
    images = report["kernel_images"]
    if images:
        names = " ".join(image["name"] for image in images)
        print(f"Embedded kernel images ({len(images)}, {sum(i['size_bytes'] for i in images) // 1024} KiB): {names}")
    for device in report["devices"]:
        image = device["kernel_image"]
        chosen = f"{image['name']} ({image['kind']})" if image else "none fits this GPU"
        print(
            f"GPU {device['index']}: {device['name']}, compute capability {device['compute_capability']}, "
            f"{device['multiprocessors']} SMs, {device['total_memory_bytes'] / 2**30:.1f} GiB; "
            f"kernel image {chosen}"
        )


def relative_error(result: np.ndarray, reference: np.ndarray) -> float:
    scale = np.linalg.norm(reference)
    wide = result.astype(reference.dtype)
    return float(np.linalg.norm(wide - reference) / (scale if scale else 1.0))


def operands(rng: np.random.Generator, size: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    return _operand(rng, size, dtype), _operand(rng, size, dtype)


def _operand(rng: np.random.Generator, size: int, dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "b":
        return rng.integers(0, 2, (size, size)).astype(dtype)
    if dtype.kind in "iu":  # full-range integers, so that products wrap around as in NumPy
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, (size, size), dtype, endpoint=True)
    values = rng.standard_normal((size, size)) + (1j * rng.standard_normal((size, size)) if dtype.kind == "c" else 0)
    return values.astype(dtype)


def check(a: np.ndarray, b: np.ndarray, backend: Backend, repeats: int) -> tuple[float, str, bool]:
    """(best time, error text, passed) of pyctk.matmul(a, b) against NumPy."""
    matmul(a, b, backend=backend)  # warm-up: context, cuBLAS handle, module load
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = matmul(a, b, backend=backend)
        times.append(time.perf_counter() - start)
    if a.dtype.kind in "biu":
        passed = np.array_equal(result, np.matmul(a, b))
        return min(times), "exact" if passed else "differs", passed
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    error = relative_error(result, np.matmul(a.astype(wide), b.astype(wide)))
    return min(times), f"{error:.2e}", error <= TOLERANCE[a.dtype.name]


def dtypes_to_check() -> list[np.dtype]:
    names = list(PRODUCT_DTYPES)
    if importlib.util.find_spec("ml_dtypes") is None:
        print("  (bfloat16 not checked: it needs ml_dtypes, pip install ml_dtypes)")
        names.remove("bfloat16")
    else:
        import ml_dtypes  # noqa: F401  (registers bfloat16 with NumPy)
    return [np.dtype(name) for name in names]


def check_backends(size: int, repeats: int) -> bool:
    rng = np.random.default_rng(0)
    print(
        f"\nMultiplying random matrices on every backend that computes the dtype (NumPy in, NumPy "
        f"out; best of {repeats}): {size} x {size} for {' and '.join(TIMED_DTYPES)}, "
        f"{CHECK_SIZE} x {CHECK_SIZE} for the rest"
    )
    print(f"  {'backend':<8} {'dtype':<11} {'time':>10} {'TFLOP/s':>9} {'rel. error':>11}  check")
    passed = True
    for dtype in dtypes_to_check():
        n = size if dtype.name in TIMED_DTYPES else CHECK_SIZE
        a, b = operands(rng, n, dtype)
        for backend in BACKENDS:
            try:
                library.call("gpumatmul_backend_supports", BACKEND_CODES[backend], DTYPES[dtype.name].code, 0)
            except UnsupportedError:
                continue
            best, error, ok = check(a, b, backend, repeats)
            passed &= ok
            print(
                f"  {backend:<8} {dtype.name:<11} {best * 1e3:>8.2f} ms {2 * n**3 / best / 1e12:>9.2f}"
                f" {error:>11}  {'ok' if ok else 'FAILED'}"
            )
    return passed


def print_build_flags(cflags: bool, libs: bool, pkgconfig_path: bool) -> int:
    try:
        words = (
            (c_build.cflags() if cflags else [])
            + (c_build.libs() if libs else [])
            + ([c_build.pkgconfig_path()] if pkgconfig_path else [])
        )
        misses = c_build.runpath_misses() if libs else []
    except PyctkError as error:
        print(error, file=sys.stderr)
        return 1
    print(" ".join(words))
    for miss in misses:  # on stderr: $(python -m pyctk --libs) still gets only the flags
        print(
            f"python -m pyctk: warning: {miss}. A program links and starts with these flags "
            f"only where the linkers find it by themselves (LD_LIBRARY_PATH naming that "
            f"folder, or ldconfig); to need neither, install pyctk and the nvidia wheels into "
            f"one environment (a fresh venv: pip install pyctk-cu{CUDA_MAJOR}).",
            file=sys.stderr,
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyctk", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048, help="matrix size n for the check (default 2048)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per backend (default 3)")
    build = parser.add_argument_group(
        "building against the C library",
        "print these (in this order, on one line) instead of the report: cc app.c $(python -m pyctk --cflags --libs)",
    )
    build.add_argument("--cflags", action="store_true", help="compiler flags: -I the header's folder")
    build.add_argument(
        "--libs", action="store_true", help="linker flags: libgpumatmul and an rpath to it (no LD_LIBRARY_PATH needed)"
    )
    build.add_argument(
        "--pkgconfig-path", action="store_true", help="the folder holding gpumatmul.pc, for PKG_CONFIG_PATH"
    )
    args = parser.parse_args(argv)
    if args.cflags or args.libs or args.pkgconfig_path:
        return print_build_flags(args.cflags, args.libs, args.pkgconfig_path)

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
