"""The few CUDA runtime calls that pyctk's Python side makes itself, through ctypes.

They go to the very ``libcudart.so.N`` that pyctk's loader found (the one
libgpumatmul is bound to), so memory and streams made here are the ones the C
library sees. Only symbols that cudart 12.0 already exports are used
(tests/support/data/exports/cudart-12.0.txt).

>>> from pyctk._cuda import cudart              # doctest: +GPU
>>> with cudart.on_device(0):
...     cudart.call("cudaStreamSynchronize", 0)
>>> cudart.get_device(), cudart.device_count() >= 1
(0, True)

Every call returns a ``cudaError_t``; ``check`` turns a failure into pyctk's
exceptions. ``on_device`` is the only way this module changes the calling
thread's current device, and it always restores it.
"""

from __future__ import annotations

import _thread  # its lock is threading.Lock; importing threading would cost `import pyctk` ~0.6 ms
import ctypes
import os
from collections.abc import Iterator
from contextlib import contextmanager
from ctypes import POINTER, byref, c_char_p, c_int, c_long, c_size_t, c_uint, c_void_p
from typing import Any, Callable

from .._build_config import CUDA_MAJOR
from . import fork, status
from .errors import CONTEXT_LOST_ERRORS, CONTEXT_LOST_HELP


class PointerAttributes(ctypes.Structure):
    """``struct cudaPointerAttributes``: the CUDA 12 fields, then CUDA 13's extra 64 bytes
    (locality domain and reserved words), so the struct is large enough for either."""

    _fields_ = [
        ("type", c_int),
        ("device", c_int),
        ("device_pointer", c_void_p),
        ("host_pointer", c_void_p),
        ("cuda13_tail", c_long * 8),
    ]


# enum cudaMemoryType
MEMORY_UNREGISTERED, MEMORY_HOST, MEMORY_DEVICE, MEMORY_MANAGED = 0, 1, 2, 3
# enum cudaMemcpyKind
HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE = 1, 2, 3

_ERROR = c_int  # cudaError_t
# name -> (result type, argument types), as cuda_runtime_api.h declares them.
_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    "cudaGetDevice": (_ERROR, [POINTER(c_int)]),
    "cudaSetDevice": (_ERROR, [c_int]),
    "cudaFree": (_ERROR, [c_void_p]),
    "cudaGetDeviceCount": (_ERROR, [POINTER(c_int)]),
    "cudaMemcpyAsync": (_ERROR, [c_void_p, c_void_p, c_size_t, c_int, c_void_p]),
    "cudaMemcpyPeerAsync": (_ERROR, [c_void_p, c_int, c_void_p, c_int, c_size_t, c_void_p]),
    "cudaMemsetAsync": (_ERROR, [c_void_p, c_int, c_size_t, c_void_p]),
    "cudaStreamSynchronize": (_ERROR, [c_void_p]),
    "cudaEventCreateWithFlags": (_ERROR, [POINTER(c_void_p), c_uint]),
    "cudaEventRecord": (_ERROR, [c_void_p, c_void_p]),
    "cudaStreamWaitEvent": (_ERROR, [c_void_p, c_void_p, c_uint]),
    "cudaEventDestroy": (_ERROR, [c_void_p]),
    "cudaPointerGetAttributes": (_ERROR, [POINTER(PointerAttributes), c_void_p]),
    "cudaHostRegister": (_ERROR, [c_void_p, c_size_t, c_uint]),
    "cudaHostUnregister": (_ERROR, [c_void_p]),
    "cudaGetLastError": (_ERROR, []),
    "cudaGetErrorName": (c_char_p, [_ERROR]),
}

_runtime: ctypes.CDLL | None = None
_lock = _thread.allocate_lock()


def runtime() -> ctypes.CDLL:
    """The CUDA runtime pyctk's loader loaded (loading it on first use), with prototypes set.

    Only cudart is loaded here: arrays need no cuBLAS, and the loader loads it after cudart
    when the first product needs it. In a child forked after its parent started CUDA this
    raises ForkedAfterCudaError instead (see pyctk._cuda.fork).
    """
    global _runtime
    if _runtime is not None:  # the per-call path takes no lock
        return _runtime
    from . import loader  # imported here: `import pyctk` does not need the loader

    with _lock:
        if _runtime is None:
            fork.refuse_if_forked()
            fork.mark_cuda_started()  # the caller is about to call the runtime
            loaded = loader.load_library(loader.library_spec("cudart", CUDA_MAJOR))
            # The same handle as the loader's: dlopen of a loaded file.
            _runtime = loader.declare(ctypes.CDLL(loaded.path), _PROTOTYPES)
    return _runtime


def _forget_in_child() -> None:
    global _runtime, _lock
    # The child's first runtime() then goes through the fork check; a parent thread that
    # was loading the runtime at the fork would hold the old lock forever.
    _runtime, _lock = None, _thread.allocate_lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_in_child)


# ---------------------------------------------------------------------------
# Errors.

# cudaError_t -> the libgpumatmul status of that kind, whose exception and fix pyctk raises
# (pyctk._cuda.status.exception): one table of exceptions for the C library and the runtime.
_STATUSES = {
    2: status.OUT_OF_MEMORY,  # cudaErrorMemoryAllocation
    34: status.NO_DRIVER,
    35: status.NO_DRIVER,
    36: status.NO_DRIVER,  # stub, old driver
    100: status.NO_DEVICE,
    101: status.NO_DEVICE,  # no device, invalid device
    **dict.fromkeys(CONTEXT_LOST_ERRORS, status.CONTEXT_LOST),  # a kernel faulted
}


def error(result: int, what: str) -> Exception:
    """The exception for ``what`` failing with cudaError_t ``result``, named as CUDA names it."""
    # A failed call also sets the thread's last error; reported here, it must not be reported
    # again by the next library that asks cudaGetLastError (PyTorch does after each kernel).
    runtime().cudaGetLastError()
    name = runtime().cudaGetErrorName(result).decode()  # works with no driver too
    kind = _STATUSES.get(result, status.CUDA)
    message = f"{what} failed: {name} (cudaError_t {result})"
    if kind == status.CONTEXT_LOST:
        message = f"{message}. {CONTEXT_LOST_HELP}"
    return status.exception(kind, message)


def check(result: int, what: str) -> None:
    """Raise pyctk's exception for ``result`` unless it is cudaSuccess (0).

    >>> check(0, "cudaSetDevice")
    """
    if result:
        raise error(result, what)


def call(name: str, *args: Any) -> None:
    """Call the runtime's ``name`` and check its result."""
    check(getattr(runtime(), name)(*args), name)


# ---------------------------------------------------------------------------
# Devices.


def get_device() -> int:
    """The calling thread's current device (0 until the thread sets one)."""
    device = c_int()
    call("cudaGetDevice", byref(device))
    return device.value


def device_count() -> int:
    count = c_int()
    call("cudaGetDeviceCount", byref(count))
    return count.value


@contextmanager
def on_device(index: int) -> Iterator[None]:
    """Make ``index`` the current device for the block, then restore the caller's.

    pyctk never leaves the calling thread on another device. When ``index`` is already
    current nothing is changed. Restoring calls ``cudaSetDevice``, which (CUDA 12 and
    later) creates the primary context of the caller's device if it had none yet: a
    thread that never touched its current device gets that context too. Where the caller's
    context was not its device's primary one (pyctk.driver's ``Device.make_context`` made
    it), ``context_keeper`` puts it back after that.

    >>> before = get_device()                    # doctest: +GPU
    >>> with on_device(device_count() - 1):      # the last GPU: its legacy stream
    ...     call("cudaStreamSynchronize", 0)
    >>> get_device() == before                   # the caller stays put
    True
    """
    previous = get_device()
    if previous == index:
        yield
        return
    restore = context_keeper() if context_keeper is not None else None
    check(runtime().cudaSetDevice(index), f"cudaSetDevice({index})")
    try:
        yield
    finally:
        call("cudaSetDevice", previous)
        if restore is not None:
            restore()


# Set by pyctk._cuda.contexts once pyctk.driver made a context (None until then: no cost):
# called before on_device switches, it gives what makes the caller's current context current
# again after cudaSetDevice back, or None where that context is its device's primary one.
context_keeper: Callable[[], Callable[[], None] | None] | None = None


def initialise_in_background(device: int) -> Callable[[], None]:
    """Start initialising the CUDA driver and ``device``'s primary context on a thread of
    its own; return a function that waits for it to end.

    That initialisation takes a fresh process about 0.2 s, and loading cuBLAS about 0.1 s
    more: pyctk's first context runs the two at once. Failures are not reported here: the
    context's creation initialises again, and raises what fails. The thread has a current
    device of its own, so the caller's stays as it was.
    """
    library = runtime()
    try:
        # Loaded here first: the thread's first step would be to load it, and the dynamic
        # linker loads one library at a time, so it would wait for this thread's cuBLAS.
        ctypes.CDLL("libcuda.so.1")
    except OSError:  # no driver: nothing to initialise, and the context says what is missing
        return lambda: None
    started, finished = _thread.allocate_lock(), _thread.allocate_lock()
    started.acquire()
    finished.acquire()

    def initialise() -> None:
        try:
            started.release()
            library.cudaSetDevice(device)  # CUDA 12 and later: also creates the primary context
            library.cudaFree(None)
        finally:
            finished.release()

    _thread.start_new_thread(initialise, ())
    # Wait until the thread runs: it then holds the interpreter lock until its first call
    # releases it, inside the runtime, where this thread's loading cannot hold it back.
    started.acquire()

    def wait() -> None:
        finished.acquire()
        finished.release()

    return wait


# ---------------------------------------------------------------------------
# Pointers; each acts on the current device.


def pointer_device(pointer: int) -> tuple[int, int]:
    """(cudaMemoryType, device) of ``pointer``; memory CUDA does not know is unregistered."""
    attributes = PointerAttributes()
    call("cudaPointerGetAttributes", byref(attributes), pointer)
    return attributes.type, attributes.device
