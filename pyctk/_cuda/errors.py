"""The exceptions pyctk raises. Standard library only: the loader imports it."""

from __future__ import annotations


class PyctkError(Exception):
    """Base class of pyctk's own errors."""


class LibraryNotFoundError(PyctkError, OSError):
    """A shared library could not be found or loaded; the message lists every place tried."""


class CudaError(PyctkError, RuntimeError):
    """A CUDA or cuBLAS call failed.

    ``status`` is the libgpumatmul status name (e.g. ``"GPUMATMUL_ERROR_CUDA"``);
    the message carries the CUDA error name and what to do about it.
    """

    def __init__(self, message: str, status: str = "") -> None:
        super().__init__(message)
        self.status = status


class NoDriverError(CudaError):
    """No NVIDIA driver is installed, or it is older than the CUDA runtime."""


class NoDeviceError(CudaError):
    """A driver is present but there is no usable GPU (or the index is out of range)."""


class NoKernelImageError(CudaError):
    """None of the kernel images embedded in libgpumatmul runs on this GPU."""


class OutOfMemoryError(CudaError, MemoryError):
    """The GPU ran out of memory."""


class UnsupportedError(PyctkError, NotImplementedError):
    """A valid request that this version of pyctk does not implement yet."""


class ContextLostError(CudaError):
    """A kernel faulted (an illegal or misaligned address, a device-side assert ...) and CUDA
    gave up on this process's GPU context.

    Every later CUDA call on that device in this process fails with the same error: device
    memory, modules, streams and events made before are gone, and only a new process can use
    the GPU again. The faulty kernel may have been launched before the call that reports it,
    by pyctk or by another library. ``pyctk.driver.ContextLostError`` is a subclass.
    """


# The CUDA errors that raise ContextLostError: cuda.h says they leave "the process in an
# inconsistent state". The runtime (cudaError_t) and the driver (CUresult) number them alike;
# libgpu/src/core/status.c keeps the same list for libgpumatmul's status and messages.
CONTEXT_LOST_ERRORS = frozenset({
    226,  # CONTAINED
    700,  # ILLEGAL_ADDRESS
    702,  # LAUNCH_TIMEOUT
    710,  # ASSERT (a device-side assert)
    714,  # HARDWARE_STACK_ERROR
    715,  # ILLEGAL_INSTRUCTION
    716,  # MISALIGNED_ADDRESS
    717,  # INVALID_ADDRESS_SPACE
    718,  # INVALID_PC
    719,  # LAUNCH_FAILED
    721,  # TENSOR_MEMORY_LEAK
    911,  # EXTERNAL_DEVICE
})

# What a ContextLostError's message adds to CUDA's own words.
CONTEXT_LOST_HELP = (
    "The GPU context of this process is lost: a kernel faulted, and CUDA now fails every "
    "call on this device in this process with this same error (device memory, modules, "
    "streams and events made before are gone). Restart the process to use the GPU again. "
    "Kernels run asynchronously, so the faulty kernel may be an earlier launch than this "
    "call; to find the faulty access run the program under compute-sanitizer (from a CUDA "
    "toolkit), or set CUDA_LAUNCH_BLOCKING=1 to make each launch report its own failure.")


class ForkedAfterCudaError(CudaError):
    """This process was forked after its parent started using the GPU, and CUDA does not
    survive a fork: start worker processes with multiprocessing's "spawn" or "forkserver"
    method instead, or fork before the parent's first GPU call."""


class DeviceMismatchError(PyctkError, ValueError):
    """Operands in host memory and on a GPU together, or on two GPUs: pyctk never copies silently."""


# Tracebacks and reprs name them where users find them: pyctk.NoDriverError.
for _error in (PyctkError, LibraryNotFoundError, CudaError, NoDriverError, NoDeviceError,
               NoKernelImageError, OutOfMemoryError, UnsupportedError, ContextLostError,
               ForkedAfterCudaError, DeviceMismatchError):
    _error.__module__ = "pyctk"
del _error
