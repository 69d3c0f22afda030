"""cuRAND's host library through ctypes: its version, and the tables its Sobol generators start from.

cuRAND comes from NVIDIA's pip wheel (``nvidia-curand-cu12`` / ``nvidia-curand``), which
``pip install "pyctk-cu12[curand]"`` adds, with the device API's headers (``curand_kernel.h``)
that pyctk's random number generators compile in; pyctk's loader finds the library like
every other CUDA library (``PYCTK_DEBUG_LOAD=1`` logs it). Its file carries cuRAND's own
major, 10, with CUDA 12 and 13 alike (``libcurand.so.10``).

The tables are cuRAND's own, in host memory: ``DIMENSIONS`` rows of 32 or 64 direction
vectors (Joe and Kuo's polynomials), and ``DIMENSIONS`` scramble constants.

>>> from pyctk._cuda import curand
>>> curand.version()[:2] >= (10, 3)      # (10, 3, 10) with CUDA 12.9's wheel
True
>>> curand.table("curandGetDirectionVectors32", 101) != 0   # the host address of the table
True
"""

from __future__ import annotations

from ctypes import POINTER, byref, c_int, c_void_p

from .optional_library import OptionalLibrary

DIMENSIONS = 20000  # rows of each of cuRAND's direction-vector and scramble-constant tables

_TABLES = {  # function -> its arguments after the address it writes (a curandDirectionVectorSet_t)
    "curandGetDirectionVectors32": [c_int],
    "curandGetDirectionVectors64": [c_int],
    "curandGetScrambleConstants32": [],
    "curandGetScrambleConstants64": [],
}

# Loaded on first use: library() (LibraryNotFoundError with the pip command when absent).
library = OptionalLibrary(
    "curand",
    "makes random numbers with cuRAND, NVIDIA's random number library",
    "curand",
    {
        "curandGetVersion": (c_int, [POINTER(c_int)]),
        **{name: (c_int, [POINTER(c_void_p), *arguments]) for name, arguments in _TABLES.items()},
    },
)
install_command = library.install_command


def _check(status: int, call: str) -> None:
    if status:  # curandStatus_t; these calls fail only for a set cuRAND does not know
        raise RuntimeError(f"{call} failed: curandStatus_t {status}")


def version() -> tuple[int, int, int]:
    """cuRAND's (major, minor, patch): ``curandGetVersion`` gives major*1000 + minor*100 + patch."""
    number = c_int()
    _check(library().curandGetVersion(byref(number)), "curandGetVersion")
    return number.value // 1000, number.value % 1000 // 100, number.value % 100


def table(function: str, *arguments: int) -> int:
    """The host address of the table ``function`` (one of ``_TABLES``) points at."""
    address = c_void_p()
    _check(getattr(library(), function)(byref(address), *arguments), f"{function}{arguments}")
    return address.value or 0
