"""The exceptions of ``pyctk.driver``, one per kind of CUDA driver error, as PyCUDA names them.

Every ``CUresult`` a driver call returns maps to one class through one table; the
message names the call, the CUDA error (``CUDA_ERROR_ILLEGAL_ADDRESS``) and CUDA's
own description. Errors that CUDA makes *sticky* (a kernel faulted: illegal address,
misaligned address, illegal instruction, device-side assert, launch failure ...)
leave the process's GPU context unusable: every later CUDA call on it returns the
same error, so those raise ``ContextLostError`` with a message that says so.
"""

from __future__ import annotations

from ._errors import CudaError, OutOfMemoryError


class Error(CudaError):
    """A CUDA driver call failed (PyCUDA's ``pycuda.driver.Error``).

    ``code`` is the ``CUresult`` number, ``status`` its name (``"CUDA_ERROR_INVALID_VALUE"``).
    """

    def __init__(self, message: str, status: str = "", code: int = 0) -> None:
        super().__init__(message, status)
        self.code = code


class LogicError(Error):
    """The call was wrong: an invalid value, handle or context (a bug in the caller)."""


class LaunchError(Error):
    """A kernel could not be launched, or failed while running."""


class ContextLostError(LaunchError):
    """A kernel faulted and CUDA gave up on this process's GPU context.

    Every later CUDA call on that device in this process fails with the same error:
    device memory, modules, streams and events made before are gone. Only a new
    process can use the GPU again.
    """


class MemoryError(Error, OutOfMemoryError):  # noqa: A001 - PyCUDA's name; also a builtins.MemoryError
    """The GPU is out of memory."""


class RuntimeError(Error):  # noqa: A001 - PyCUDA's name; also a builtins.RuntimeError
    """Any other CUDA driver failure."""


# CUresult -> class; anything not listed is a RuntimeError.
_CLASSES: dict[int, type[Error]] = {
    1: LogicError,      # CUDA_ERROR_INVALID_VALUE
    2: MemoryError,     # CUDA_ERROR_OUT_OF_MEMORY
    101: LogicError,    # CUDA_ERROR_INVALID_DEVICE
    201: LogicError,    # CUDA_ERROR_INVALID_CONTEXT
    400: LogicError,    # CUDA_ERROR_INVALID_HANDLE
    401: LogicError,    # CUDA_ERROR_ILLEGAL_STATE
    500: LogicError,    # CUDA_ERROR_NOT_FOUND
    701: LaunchError,   # CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    720: LaunchError,   # CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
    912: LaunchError,   # CUDA_ERROR_INVALID_CLUSTER_SIZE
}
# The errors cuda.h says leave "the process in an inconsistent state": any further CUDA
# work returns the same error until the process ends. libgpu/src/status.c keeps the same list.
STICKY = frozenset({
    226,  # CUDA_ERROR_CONTAINED
    700,  # CUDA_ERROR_ILLEGAL_ADDRESS
    702,  # CUDA_ERROR_LAUNCH_TIMEOUT
    710,  # CUDA_ERROR_ASSERT (a device-side assert)
    714,  # CUDA_ERROR_HARDWARE_STACK_ERROR
    715,  # CUDA_ERROR_ILLEGAL_INSTRUCTION
    716,  # CUDA_ERROR_MISALIGNED_ADDRESS
    717,  # CUDA_ERROR_INVALID_ADDRESS_SPACE
    718,  # CUDA_ERROR_INVALID_PC
    719,  # CUDA_ERROR_LAUNCH_FAILED
    721,  # CUDA_ERROR_TENSOR_MEMORY_LEAK
    911,  # CUDA_ERROR_EXTERNAL_DEVICE
})

CONTEXT_LOST = (
    "The GPU context of this process is lost: a kernel faulted, and CUDA now fails every "
    "call on this device in this process with this same error (device memory, modules, "
    "streams and events made before are gone). Restart the process to use the GPU again. "
    "Kernels run asynchronously, so the faulty kernel may be an earlier launch than this "
    "call; to find the faulty access run the program under compute-sanitizer (from a CUDA "
    "toolkit), or set CUDA_LAUNCH_BLOCKING=1 to make each launch report its own failure.")


def error_class(code: int) -> type[Error]:
    """The class of the exception for ``CUresult`` ``code``."""
    return ContextLostError if code in STICKY else _CLASSES.get(code, RuntimeError)


def exception(code: int, name: str, description: str, what: str) -> Error:
    """The exception for ``what`` failing with ``CUresult`` ``code`` called ``name``."""
    message = f"{what} failed: {name}: {description}"
    if code in STICKY:
        message = f"{message}. {CONTEXT_LOST}"
    return error_class(code)(message, name, code)
