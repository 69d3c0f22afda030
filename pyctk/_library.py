"""ctypes bindings to libgpumatmul: prototypes, status codes to exceptions, ``call``.

State (documented in the README): the loaded library, created on first use and
kept until exit. Contexts are pyctk._contexts' concern.
"""

from __future__ import annotations

import ctypes
import threading
import warnings
from ctypes import POINTER, c_char, c_char_p, c_int, c_int64, c_size_t, c_void_p

from . import _distributions, _loader
from ._build_config import CUDA_MAJOR
from ._errors import (CudaError, NoDeviceError, NoDriverError, NoKernelImageError,
                      OutOfMemoryError, PyctkError, UnsupportedError)


class DeviceProperties(ctypes.Structure):
    _fields_ = [("name", c_char * 256), ("compute_capability_major", c_int),
                ("compute_capability_minor", c_int), ("multiprocessor_count", c_int),
                ("total_memory_bytes", c_size_t)]


# Sizes, leading dimensions and strides are int64_t in the header: no 2^31 limit on this side.
_MATMUL_ARGS = [c_void_p, c_int, c_int, c_int, c_int, c_int64, c_int64, c_int64,
                c_void_p, c_int64, c_void_p, c_int64, c_void_p, c_int64]
_STRIDED_BATCHED_ARGS = [
    c_void_p, c_int, c_int, c_int,                # context, backend, dtype, precision
    c_int, c_int,                                 # trans_a, trans_b
    c_int64, c_int64, c_int64, c_int64,           # m, n, k, batch_count
    c_void_p, c_int64, c_int64,                   # a, lda, stride_a
    c_void_p, c_int64, c_int64,                   # b, ldb, stride_b
    c_void_p, c_int64, c_int64]                   # c, ldc, stride_c
_PROTOTYPES = {  # name: (restype, argtypes); every other function returns a status
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
    "gpumatmul_destroy": (c_int, [c_void_p]),
    "gpumatmul_context_kernel_image": (c_int, [c_void_p, POINTER(c_int)]),
    "gpumatmul_backend_supports": (c_int, [c_int, c_int, c_int]),
    "gpumatmul_matmul_strided_batched_host": (c_int, _STRIDED_BATCHED_ARGS),
    "gpumatmul_matmul_strided_batched_device": (c_int, _STRIDED_BATCHED_ARGS + [c_void_p]),
    "gpumatmul_matmul_host": (c_int, _MATMUL_ARGS),
    "gpumatmul_matmul_device": (c_int, _MATMUL_ARGS + [c_void_p]),
}

# Status code -> (exception class, what the user can do about it).
_DRIVER_FIX = ("Install the NVIDIA driver (nvidia-smi must list your GPU); "
               f"CUDA {CUDA_MAJOR} needs driver {'525' if CUDA_MAJOR == 12 else '580'} or newer.")
_ERRORS = {
    1: (ValueError, "This is a bug in the caller of libgpumatmul."),
    2: (UnsupportedError, ""),
    3: (NoDriverError, _DRIVER_FIX),
    4: (NoDeviceError, "Check that nvidia-smi lists a GPU and that CUDA_VISIBLE_DEVICES does not hide it."),
    5: (OutOfMemoryError, "Free GPU memory held by other processes or use smaller arrays."),
    6: (NoKernelImageError, "This GPU is not supported by this build of pyctk."),
    7: (CudaError, ""),
    8: (CudaError, ""),
}

_library: ctypes.CDLL | None = None
_lock = threading.Lock()


def library() -> ctypes.CDLL:
    """libgpumatmul, loaded with its CUDA libraries on first use."""
    global _library
    if _library is not None:  # the per-call path takes no lock
        return _library
    with _lock:
        if _library is None:
            conflict = _distributions.conflict()
            if conflict:
                warnings.warn(conflict, RuntimeWarning, stacklevel=3)
            lib = _loader.load_gpumatmul(CUDA_MAJOR)
            for name, (restype, argtypes) in _PROTOTYPES.items():
                function = getattr(lib, name)
                function.restype, function.argtypes = restype, argtypes
            if lib.gpumatmul_cuda_major() != CUDA_MAJOR:  # never run one major's code on the other's
                raise PyctkError(
                    f"pyctk's files are mixed: its Python code is for CUDA {CUDA_MAJOR} but "
                    f"libgpumatmul.so is for CUDA {lib.gpumatmul_cuda_major()}. Reinstall one: "
                    f"pip uninstall -y pyctk-cu12 pyctk-cu13 && pip install pyctk-cu{CUDA_MAJOR}")
            _library = lib
    return _library


def error(status: int) -> Exception:
    """The exception for a failed call's status, with libgpumatmul's message and a fix."""
    return exception(status, library().gpumatmul_last_error_message().decode())


def exception(status: int, message: str) -> Exception:
    """The exception for a libgpumatmul status (or a CUDA error of that kind), with a fix."""
    kind, fix = _ERRORS.get(status, (CudaError, ""))
    name = library().gpumatmul_status_name(status).decode()
    message = f"{message} [{name}]"
    if kind is NoDriverError:
        message = f"{message}; {_loader.driver_status()}"
    message = f"{message}. {fix}" if fix else message
    return kind(message, name) if issubclass(kind, CudaError) else kind(message)


def call(name: str, *args) -> None:
    """Call libgpumatmul's ``name``; raise the matching exception if it fails."""
    status = getattr(library(), name)(*args)
    if status:
        raise error(status)


def context() -> c_void_p:
    """The calling thread's context for device 0 (see pyctk._contexts)."""
    from . import _contexts  # it imports this module

    return _contexts.context(0)


def query_int(name: str, *args) -> int:
    value = c_int()
    call(name, *args, ctypes.byref(value))
    return value.value
