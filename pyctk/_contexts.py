"""libgpumatmul contexts: one per device for the whole process, created on first use; and fork.

State (documented in the README): a context (its device's kernel module, cuBLAS handle,
stream and memory pool) may be shared by threads, and libgpumatmul restores the calling
thread's current device, so every thread multiplies through its device's one context. The
per-call path is a dict lookup; a lock is taken only to create a context. Contexts live
until the process exits, which frees them with the rest of its CUDA state.

Fork: CUDA does not survive a fork. A child forked after its parent started CUDA inherits
driver state it cannot use: its calls fail with cudaErrorInitializationError, or hang. So
pyctk records the first call that starts CUDA; in a child forked after it, the inherited
contexts are dropped and the first GPU call raises ForkedAfterCudaError, without calling
CUDA. A child forked before any GPU use creates its own contexts when it needs them.
"""

from __future__ import annotations

import _thread  # its lock is threading.Lock; importing threading would cost `import pyctk` ~0.6 ms
import ctypes
import os
from contextlib import contextmanager
from ctypes import c_void_p
from typing import Iterator

from . import _cudart, _library, _status
from ._errors import ForkedAfterCudaError

_contexts: dict[int, c_void_p] = {}  # device -> context
_arrays: dict[tuple[int, ...], ctypes.Array] = {}  # devices -> their contexts, as a C array
_lock = _thread.allocate_lock()      # held only while a context is created
_cuda_started = False                # a pyctk call reached the CUDA driver in this process
_forked_after_cuda = False           # this process was forked from one where it had

_FORKED = (
    "pyctk cannot use the GPU in this process: it was forked (os.fork, or multiprocessing's 'fork' "
    "start method, the default on Linux before Python 3.14) after its parent had started using "
    "the GPU, and CUDA does not survive a fork. Fix: start worker processes with the 'spawn' or "
    "'forkserver' start method (multiprocessing.get_context('spawn'), or "
    "ProcessPoolExecutor(mp_context=multiprocessing.get_context('spawn'))), or do not use the GPU "
    "in the parent before forking.")


def context(device: int = 0) -> c_void_p:
    """The process's context for ``device``, created on first use.

    Raises ForkedAfterCudaError in a child forked after its parent started CUDA, and
    pyctk._status' exceptions when creation fails (nothing is kept then: the next call
    tries again).
    """
    handle = _contexts.get(device)
    if handle is not None:  # the per-call path: a dict lookup, no lock
        return handle
    with _lock:
        handle = _contexts.get(device)
        if handle is None:  # not created by another thread while this one waited
            load_library(device)
            handle = c_void_p()
            call_starting_cuda("gpumatmul_create", ctypes.byref(handle), device)
            _contexts[device] = handle
    return handle


def load_library(device: int) -> None:
    """Load libgpumatmul for work on ``device``, if it is not loaded yet.

    A fresh process's first GPU call spends about 0.2 s initialising the CUDA driver and
    ``device``'s primary context, and 0.1 s loading cuBLAS: here the two run at once, the
    first on a thread of its own. Host products call this before their last check (does
    the backend compute the dtype?), which needs the library: so the first call of a
    process starts CUDA even when that check then fails.
    """
    if _library.loaded():
        return
    refuse_if_forked()
    initialised = _cudart.initialise_in_background(device)
    try:
        _library.library()
    finally:
        initialised()


def contexts(devices: tuple[int, ...]) -> ctypes.Array:
    """The contexts of ``devices`` as a C array (``gpumatmul_context *const *``), made once
    per tuple: for the host calls, whose every microsecond counts for small products."""
    array = _arrays.get(devices)
    if array is None:
        array = (c_void_p * len(devices))(*(context(device) for device in devices))
        _arrays[devices] = array
    return array


@contextmanager
def using(device: int) -> Iterator[c_void_p]:
    """The context for ``device``, with ``device`` current for the block (for the CUDA runtime
    calls made in it); the caller's current device is restored when the block ends."""
    handle = context(device)  # first: in a forked child it raises before any CUDA call
    with _cudart.on_device(device):
        yield handle


def refuse_if_forked() -> None:
    """Raise ForkedAfterCudaError if this process was forked after its parent started CUDA."""
    if _forked_after_cuda:
        raise ForkedAfterCudaError(_FORKED)


def mark_cuda_started() -> None:
    """Record that this process is calling CUDA: its fork children will be refused."""
    global _cuda_started
    _cuda_started = True


def call_starting_cuda(name: str, *args) -> None:
    """``_library.call`` for a call that may start CUDA in this process.

    Refused in a child forked after its parent started CUDA, before CUDA is called.
    Otherwise recorded, so that this process's own fork children are refused: once a call
    has reached the driver, failed or not, the driver holds state that a child cannot use.
    """
    global _cuda_started
    refuse_if_forked()
    status = getattr(_library.library(), name)(*args)
    if status != _status.NO_DRIVER:  # without a usable driver CUDA never started
        _cuda_started = True
    if status:
        raise _status.error(status)


def _after_fork_in_child() -> None:
    global _contexts, _arrays, _lock, _forked_after_cuda
    _forked_after_cuda = _forked_after_cuda or _cuda_started
    _contexts = {}            # the parent's: never to be used, nor destroyed, here
    _arrays = {}
    _lock = _thread.allocate_lock()  # a parent thread creating a context at the fork holds the old one forever


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)
