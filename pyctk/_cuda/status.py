"""libgpumatmul's status codes and the exception, with a fix, that pyctk raises for each.

One table for the C library and for the CUDA runtime calls pyctk makes itself
(pyctk._cuda.cudart maps each cudaError_t to the status of its kind).
"""

from __future__ import annotations

from .._build_config import CUDA_MAJOR
from .errors import (
    ContextLostError,
    CudaError,
    NoDeviceError,
    NoDriverError,
    NoKernelImageError,
    OutOfMemoryError,
    UnsupportedError,
)

# enum gpumatmul_status (gpumatmul.h), named as there; the values never change, new ones
# are appended.
NAMES = (
    "GPUMATMUL_SUCCESS",
    "GPUMATMUL_ERROR_INVALID_ARGUMENT",
    "GPUMATMUL_ERROR_NOT_SUPPORTED",
    "GPUMATMUL_ERROR_NO_DRIVER",
    "GPUMATMUL_ERROR_NO_DEVICE",
    "GPUMATMUL_ERROR_OUT_OF_MEMORY",
    "GPUMATMUL_ERROR_NO_KERNEL_IMAGE",
    "GPUMATMUL_ERROR_CUDA",
    "GPUMATMUL_ERROR_CUBLAS",
    "GPUMATMUL_ERROR_CONTEXT_LOST",
)
(
    SUCCESS,
    INVALID_ARGUMENT,
    NOT_SUPPORTED,
    NO_DRIVER,
    NO_DEVICE,
    OUT_OF_MEMORY,
    NO_KERNEL_IMAGE,
    CUDA,
    CUBLAS,
    CONTEXT_LOST,
) = range(len(NAMES))

_DRIVER_FIX = (
    "Install the NVIDIA driver (nvidia-smi must list your GPU); "
    f"CUDA {CUDA_MAJOR} needs driver {'525' if CUDA_MAJOR == 12 else '580'} or newer."
)
# Status -> (exception class, what the user can do about it).
_ERRORS: dict[int, tuple[type[Exception], str]] = {
    INVALID_ARGUMENT: (ValueError, "This is a bug in the caller of libgpumatmul."),
    NOT_SUPPORTED: (UnsupportedError, ""),
    NO_DRIVER: (NoDriverError, _DRIVER_FIX),
    NO_DEVICE: (NoDeviceError, "Check that nvidia-smi lists a GPU and that CUDA_VISIBLE_DEVICES does not hide it."),
    OUT_OF_MEMORY: (OutOfMemoryError, "Free GPU memory held by other processes or use smaller arrays."),
    NO_KERNEL_IMAGE: (NoKernelImageError, "This GPU is not supported by this build of pyctk."),
    CUDA: (CudaError, ""),
    CUBLAS: (CudaError, ""),
    CONTEXT_LOST: (ContextLostError, ""),  # the message says what to do
}


def exception(status: int, message: str) -> Exception:
    """The exception for a libgpumatmul status (or a CUDA error of that kind), with a fix."""
    kind, fix = _ERRORS.get(status, (CudaError, ""))
    name = NAMES[status] if 0 <= status < len(NAMES) else "GPUMATMUL_STATUS_UNKNOWN"
    message = f"{message} [{name}]"
    if kind is NoDriverError:
        if "libcuda.so.1" in message:  # libgpumatmul's: where the driver is and what to do
            fix = ""
        else:
            from . import loader  # imported here: `import pyctk` does not need the loader

            message = f"{message}; {loader.driver_status()}"
    message = f"{message}. {fix}" if fix else message
    return kind(message, name) if issubclass(kind, CudaError) else kind(message)
