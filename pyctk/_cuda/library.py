"""ctypes bindings to libgpumatmul: loading it, its prototypes, and ``call``.

State (documented in the README): the loaded library, created on first use and
kept until exit. Status codes -> exceptions are pyctk._cuda.status' concern, contexts
pyctk._cuda.contexts'.
"""

from __future__ import annotations

import _thread  # its lock is threading.Lock; importing threading would cost `import pyctk` ~0.6 ms
import ctypes
import os
import warnings
from ctypes import POINTER, c_char, c_char_p, c_int, c_int32, c_int64, c_size_t, c_void_p
from typing import Any

from .._build_config import CUDA_MAJOR
from . import distributions, status


class DeviceProperties(ctypes.Structure):
    """``gpumatmul_device_properties`` (gpumatmul.h)."""

    _fields_ = [
        ("name", c_char * 256),
        ("compute_capability_major", c_int),
        ("compute_capability_minor", c_int),
        ("multiprocessor_count", c_int),
        ("total_memory_bytes", c_size_t),
    ]


class GemmDesc(ctypes.Structure):
    """``gpumatmul_gemm_desc`` (gpumatmul.h): a product's shape and layout, without its data.

    Built once per layout and passed with three pointers per call: each argument that
    crosses ctypes costs time, and a described product has only six.
    """

    _fields_ = [
        ("backend", c_int32),
        ("dtype", c_int32),
        ("precision", c_int32),
        ("trans_a", c_int32),
        ("trans_b", c_int32),
        ("m", c_int64),
        ("n", c_int64),
        ("k", c_int64),
        ("batch_count", c_int64),
        ("lda", c_int64),
        ("stride_a", c_int64),
        ("ldb", c_int64),
        ("stride_b", c_int64),
        ("ldc", c_int64),
        ("stride_c", c_int64),
    ]


MAX_DIMS = 64  # GPUMATMUL_MAX_DIMS


class ArrayDesc(ctypes.Structure):
    """``gpumatmul_array_desc`` (gpumatmul.h): an n-dimensional array, strides in bytes."""

    _fields_ = [("dtype", c_int32), ("ndim", c_int32), ("shape", c_int64 * MAX_DIMS), ("strides", c_int64 * MAX_DIMS)]


class HostOptions(ctypes.Structure):
    """``gpumatmul_host_options`` (gpumatmul.h); ``struct_size`` says which fields it has."""

    _fields_ = [("struct_size", c_size_t), ("device_memory_limit", c_size_t)]


# Sizes, leading dimensions and strides are int64_t in the header: no 2^31 limit on this side.
_MATMUL_ARGS = [
    c_void_p,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int64,
    c_int64,
    c_int64,
    c_void_p,
    c_int64,
    c_void_p,
    c_int64,
    c_void_p,
    c_int64,
]
_STRIDED_BATCHED_ARGS = [
    c_void_p,
    c_int,
    c_int,
    c_int,  # context, backend, dtype, precision
    c_int,
    c_int,  # trans_a, trans_b
    c_int64,
    c_int64,
    c_int64,
    c_int64,  # m, n, k, batch_count
    c_void_p,
    c_int64,
    c_int64,  # a, lda, stride_a
    c_void_p,
    c_int64,
    c_int64,  # b, ldb, stride_b
    c_void_p,
    c_int64,
    c_int64,
]  # c, ldc, stride_c
_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {  # every function not here returns a status
    "gpumatmul_status_name": (c_char_p, [c_int]),
    "gpumatmul_last_error_message": (c_char_p, []),
    "gpumatmul_version": (c_int, []),
    "gpumatmul_cuda_major": (c_int, []),
    "gpumatmul_kernel_image_count": (c_int, []),
    "gpumatmul_driver_version": (c_int, [POINTER(c_int)]),
    "gpumatmul_runtime_version": (c_int, [POINTER(c_int)]),
    "gpumatmul_cublas_version": (c_int, [POINTER(c_int)]),
    "gpumatmul_device_count": (c_int, [POINTER(c_int)]),
    "gpumatmul_device_properties_get": (c_int, [c_int, POINTER(DeviceProperties)]),
    "gpumatmul_device_memory": (c_int, [c_int, POINTER(c_size_t), POINTER(c_size_t)]),
    "gpumatmul_kernel_image_info": (c_int, [c_int, POINTER(c_int), POINTER(c_int), POINTER(c_size_t)]),
    "gpumatmul_kernel_image_select": (c_int, [c_int, c_int, POINTER(c_int)]),
    "gpumatmul_create": (c_int, [POINTER(c_void_p), c_int]),
    "gpumatmul_create_in_context": (c_int, [POINTER(c_void_p), c_void_p]),
    "gpumatmul_destroy": (c_int, [c_void_p]),
    "gpumatmul_context_kernel_image": (c_int, [c_void_p, POINTER(c_int)]),
    "gpumatmul_backend_supports": (c_int, [c_int, c_int, c_int]),
    "gpumatmul_matmul_strided_batched_host": (c_int, _STRIDED_BATCHED_ARGS),
    "gpumatmul_matmul_strided_batched_device": (c_int, _STRIDED_BATCHED_ARGS + [c_void_p]),
    "gpumatmul_gemm_host": (c_int, [c_void_p, POINTER(GemmDesc), c_void_p, c_void_p, c_void_p]),
    "gpumatmul_gemm_host_multi": (
        c_int,
        [POINTER(c_void_p), c_int, POINTER(GemmDesc), c_void_p, c_void_p, c_void_p, POINTER(HostOptions)],
    ),
    "gpumatmul_gemm_device": (c_int, [c_void_p, POINTER(GemmDesc), c_void_p, c_void_p, c_void_p, c_void_p]),
    "gpumatmul_gemm_device_new": (
        c_int,
        [c_void_p, POINTER(GemmDesc), c_void_p, c_void_p, c_void_p, POINTER(c_void_p)],
    ),
    "gpumatmul_device_alloc": (c_int, [c_void_p, c_size_t, c_void_p, POINTER(c_void_p)]),
    "gpumatmul_device_free": (c_int, [c_void_p, c_void_p, c_void_p]),
    "gpumatmul_copy_device": (c_int, [c_void_p, POINTER(ArrayDesc), c_void_p, POINTER(ArrayDesc), c_void_p, c_void_p]),
    "gpumatmul_matmul_host": (c_int, _MATMUL_ARGS),
    "gpumatmul_matmul_device": (c_int, _MATMUL_ARGS + [c_void_p]),
}

_library: ctypes.CDLL | None = None
_lock = _thread.allocate_lock()


def library() -> ctypes.CDLL:
    """libgpumatmul, loaded with its CUDA libraries on first use."""
    global _library
    if _library is not None:  # the per-call path takes no lock
        return _library
    from . import loader  # imported here: `import pyctk` does not need the loader

    with _lock:
        if _library is None:
            try:
                # The loader refuses a libgpumatmul of the other CUDA major before loading it.
                lib = loader.load_gpumatmul(CUDA_MAJOR)
            finally:
                # Checked after loading, failed or not: during a process's first product the
                # driver is still starting on another thread then (contexts.load_library),
                # which hides the ~45 ms that importlib.metadata takes here.
                conflict = distributions.conflict()
                if conflict:
                    warnings.warn(conflict, RuntimeWarning, stacklevel=3)
            _library = loader.declare(lib, _PROTOTYPES)
    return _library


def loaded() -> bool:
    """Whether libgpumatmul is loaded (without loading it)."""
    return _library is not None


def _new_lock_in_child() -> None:
    global _lock
    # A parent thread that was loading the library at the fork does not exist in the child,
    # and the lock it held would stay held there forever.
    _lock = _thread.allocate_lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_in_child)


def call(name: str, *args: Any) -> None:
    """Call libgpumatmul's ``name``; raise the matching exception if it fails."""
    code = getattr(library(), name)(*args)
    if code:
        raise error(code)


def error(code: int) -> Exception:
    """The exception for the calling thread's last failed libgpumatmul call, which returned
    status ``code``: libgpumatmul's message (kept per thread), the status name and a fix."""
    return status.exception(code, library().gpumatmul_last_error_message().decode())


def query_int(name: str, *args: Any) -> int:
    """Call libgpumatmul's ``name`` whose last argument is an ``int *`` out; return that int."""
    value = c_int()
    call(name, *args, ctypes.byref(value))
    return value.value
