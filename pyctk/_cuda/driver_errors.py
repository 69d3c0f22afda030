"""The exceptions of ``pyctk.driver``, one per kind of CUDA driver error, as PyCUDA names them.

Every ``CUresult`` a driver call returns maps to one class through one table; the
message names the call, the CUDA error (``CUDA_ERROR_ILLEGAL_ADDRESS``) and CUDA's
own description. Errors that CUDA makes *sticky* (a kernel faulted: illegal address,
misaligned address, illegal instruction, device-side assert, launch failure ...)
leave the process's GPU context unusable: every later CUDA call on it returns the
same error, so those raise ``ContextLostError`` with a message that says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import constants as cu
from . import errors
from .errors import CONTEXT_LOST_ERRORS, CONTEXT_LOST_HELP, CudaError, OutOfMemoryError


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


class ContextLostError(LaunchError, errors.ContextLostError):
    """A kernel faulted and CUDA gave up on this process's GPU context (``pyctk.ContextLostError``
    from a driver call).

    Every later CUDA call on that device in this process fails with the same error:
    device memory, modules, streams and events made before are gone. Only a new
    process can use the GPU again.
    """


class MemoryError(Error, OutOfMemoryError):  # noqa: A001 - PyCUDA's name; also a builtins.MemoryError
    """The GPU is out of memory."""


class RuntimeError(Error):  # noqa: A001 - PyCUDA's name; also a builtins.RuntimeError
    """Any other CUDA driver failure."""


class CompileError(Error):
    """NVRTC could not compile a kernel's source (PyCUDA's ``CompileError``, an ``Error``);
    the message is NVRTC's whole log.

    ``log`` is that log, ``options`` the options NVRTC was given. PyCUDA's names for what
    nvcc said: ``msg`` (the message), ``stderr`` (the log), ``stdout`` (empty: NVRTC writes
    none), ``command_line`` (the options, as a list).
    """

    def __init__(self, message: str, log: str = "", options: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.log = log
        self.options = tuple(options)

    @property
    def msg(self) -> str:
        """The message, as PyCUDA's ``CompileError.msg``."""
        return str(self)

    @property
    def stderr(self) -> str:
        """NVRTC's log (PyCUDA: what nvcc wrote to stderr)."""
        return self.log

    @property
    def stdout(self) -> str:
        """Always empty: NVRTC writes nothing else (PyCUDA: nvcc's stdout)."""
        return ""

    @property
    def command_line(self) -> list[str]:
        """The options NVRTC was given (PyCUDA: nvcc's command line)."""
        return list(self.options)


CompileError.__module__ = "pyctk.compiler"  # where users find it (also pyctk.driver's)


# CUresult -> class; anything not listed is a RuntimeError.
_CLASSES: dict[int, type[Error]] = {
    cu.CUDA_ERROR_INVALID_VALUE: LogicError,
    cu.CUDA_ERROR_OUT_OF_MEMORY: MemoryError,
    cu.CUDA_ERROR_INVALID_DEVICE: LogicError,
    cu.CUDA_ERROR_INVALID_CONTEXT: LogicError,
    cu.CUDA_ERROR_INVALID_HANDLE: LogicError,
    cu.CUDA_ERROR_ILLEGAL_STATE: LogicError,
    cu.CUDA_ERROR_NOT_FOUND: LogicError,
    cu.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: LaunchError,
    cu.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: LaunchError,
    cu.CUDA_ERROR_INVALID_CLUSTER_SIZE: LaunchError,
}


def error_class(code: int) -> type[Error]:
    """The class of the exception for ``CUresult`` ``code``."""
    return ContextLostError if code in CONTEXT_LOST_ERRORS else _CLASSES.get(code, RuntimeError)


def exception(code: int, name: str, description: str, what: str) -> Error:
    """The exception for ``what`` failing with ``CUresult`` ``code`` called ``name``."""
    message = f"{what} failed: {name}: {description}"
    if code in CONTEXT_LOST_ERRORS:
        message = f"{message}. {CONTEXT_LOST_HELP}"
    return error_class(code)(message, name, code)


# Tracebacks and reprs name them where users find them: pyctk.driver.LogicError.
for _error in (Error, LogicError, LaunchError, ContextLostError, MemoryError, RuntimeError):
    _error.__module__ = "pyctk.driver"
del _error
