"""libgpumatmul contexts: one per device for the whole process, created on first use.

State (documented in the README): a context (its device's kernel module, cuBLAS handle,
stream and memory pool) may be shared by threads, and libgpumatmul restores the calling
thread's current device, so every thread multiplies through its device's one context. The
per-call path is a dict lookup; a lock is taken only to create a context. Contexts live
until the process exits, which frees them with the rest of its CUDA state.

Fork (pyctk._cuda.fork): a child forked after its parent started CUDA drops the inherited
contexts, and its first GPU call raises ForkedAfterCudaError without calling CUDA. A child
forked before any GPU use creates its own contexts when it needs them.
"""

from __future__ import annotations

import _thread  # its lock is threading.Lock; importing threading would cost `import pyctk` ~0.6 ms
import ctypes
import os
from collections.abc import Iterator
from contextlib import contextmanager
from ctypes import c_void_p
from typing import Any

from . import cudart, fork, library, status

_contexts: dict[int, c_void_p] = {}  # device -> context
_arrays: dict[tuple[int, ...], ctypes.Array[c_void_p]] = {}  # devices -> their contexts, as a C array
_lock = _thread.allocate_lock()  # held only while a context is created
# Handles of the CUDA contexts pyctk.driver's Device.make_context made and has not destroyed
# (register_made, forget_made). The library's pools, streams, kernels and cuBLAS handles belong
# to each device's primary context, so its work is refused while one of these is current.
_made: set[int] = set()


def register_made(handle: int) -> None:
    """Refuse the library's work while context ``handle`` (one pyctk.driver made) is current."""
    _made.add(handle)


def forget_made(handle: int) -> None:
    """Context ``handle``, one ``register_made`` was told of, is destroyed."""
    _made.discard(handle)


def is_made(handle: int) -> bool:
    """Whether ``register_made`` was told of context ``handle`` and ``forget_made`` not yet."""
    return handle in _made


def refuse_made_context() -> None:
    """Raise pyctk.driver.LogicError, saying what to do, if the calling thread's current
    CUDA context is one pyctk.driver made (``register_made``)."""
    from . import constants, driver_api, driver_errors  # imported here: only pyctk.driver makes contexts,

    # and `import pyctk` does not need them (~2 ms)
    current = c_void_p()
    driver_api.call("cuCtxGetCurrent", ctypes.byref(current))
    if is_made(current.value or 0):
        raise driver_errors.LogicError(
            "pyctk.matmul and DeviceArray work in each device's primary context, but the current "
            "context is one pyctk.driver's Device.make_context made: Context.pop() it first, or "
            "use the primary context (Device.retain_primary_context().push(), pyctk.autoinit, "
            "pyctk.autoprimaryctx) in place of make_context",
            "CUDA_ERROR_INVALID_CONTEXT",
            constants.CUDA_ERROR_INVALID_CONTEXT,
        )


def context(device: int = 0) -> c_void_p:
    """The process's context for ``device``, created on first use.

    Raises ForkedAfterCudaError in a child forked after its parent started CUDA, and
    pyctk._cuda.status' exceptions when creation fails (nothing is kept then: the next call
    tries again); pyctk.driver.LogicError while a context Device.make_context made is current.
    """
    if _made:  # (empty unless pyctk.driver made a context: no cost otherwise)
        refuse_made_context()
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


def alive(device: int, handle: c_void_p | None) -> bool:
    """Whether ``handle`` is this process's context for ``device``: not one a forked child
    inherited from its parent (those are never used, nor destroyed, in the child), nor None
    (memory that is not from pyctk's pool: a subclass of ``Allocation`` that frees its own)."""
    return handle is not None and _contexts.get(device) is handle


def load_library(device: int) -> None:
    """Load libgpumatmul for work on ``device``, if it is not loaded yet.

    A fresh process's first GPU call spends about 0.2 s initialising the CUDA driver and
    ``device``'s primary context, and 0.1 s loading cuBLAS: here the two run at once, the
    first on a thread of its own. Host products call this before their last check (does
    the backend compute the dtype?), which needs the library: so the first call of a
    process starts CUDA even when that check then fails.
    """
    if library.loaded():
        return
    fork.refuse_if_forked()
    initialised = cudart.initialise_in_background(device)
    try:
        library.library()
    finally:
        initialised()


def contexts(devices: tuple[int, ...]) -> ctypes.Array[c_void_p]:
    """The contexts of ``devices`` as a C array (``gpumatmul_context *const *``), made once
    per tuple: for the host calls, whose every microsecond counts for small products."""
    if _made:
        refuse_made_context()
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
    with cudart.on_device(device):
        yield handle


def call_starting_cuda(name: str, *args: Any) -> None:
    """``library.call`` for a call that may start CUDA in this process.

    Refused in a child forked after its parent started CUDA, before CUDA is called.
    Otherwise recorded, so that this process's own fork children are refused: once a call
    has reached the driver, failed or not, the driver holds state that a child cannot use.
    """
    fork.refuse_if_forked()
    code = getattr(library.library(), name)(*args)
    if code != status.NO_DRIVER:  # without a usable driver CUDA never started
        fork.mark_cuda_started()
    if code:
        raise library.error(code)


def _after_fork_in_child() -> None:
    global _contexts, _arrays, _lock
    _contexts = {}  # the parent's: never to be used, nor destroyed, here
    _arrays = {}
    _lock = _thread.allocate_lock()  # a parent thread creating a context at the fork holds the old one forever


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)
