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


class ForkedAfterCudaError(CudaError):
    """This process was forked after its parent started using the GPU, and CUDA does not
    survive a fork: start worker processes with multiprocessing's "spawn" or "forkserver"
    method instead, or fork before the parent's first GPU call."""


class DeviceMismatchError(PyctkError, ValueError):
    """Operands in host memory and on a GPU together, or on two GPUs: pyctk never copies silently."""


class CompileError(PyctkError):
    """NVRTC could not compile a kernel's source; the message is NVRTC's whole log.

    ``log`` is that log, ``options`` the options NVRTC was given.
    """

    def __init__(self, message: str, log: str = "", options: tuple = ()) -> None:
        super().__init__(message)
        self.log = log
        self.options = tuple(options)
