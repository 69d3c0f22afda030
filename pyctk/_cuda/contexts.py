"""libgpumatmul contexts: one per CUDA context pyctk works in, created on first use.

State (documented in docs/guide/threads-and-errors.md): a libgpumatmul context (its kernel
module, cuBLAS handles, streams and memory pool) may be shared by threads, and libgpumatmul
restores the calling thread's current CUDA context, so every thread multiplies through one
context per device: the one in the device's primary context, which lives until the process
exits. While a context pyctk.driver's ``Device.make_context`` made is current on the calling
thread, work on its device goes to a libgpumatmul context of its own in that CUDA context
(``gpumatmul_create_in_context``), made on its first use there and destroyed with it
(``forget_made``), so that it computes on memory and streams of that context, as CuPy does in
whichever context is current. The per-call path is a dict lookup (and, once a context was
made, one ``cuCtxGetCurrent``); a lock is taken only to create a context.

Fork (pyctk._cuda.fork): a child forked after its parent started CUDA drops the inherited
contexts, and its first GPU call raises ForkedAfterCudaError without calling CUDA. A child
forked before any GPU use creates its own contexts when it needs them.
"""

from __future__ import annotations

import _thread  # its lock is threading.Lock; importing threading would cost `import pyctk` ~0.6 ms
import ctypes
import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from ctypes import c_void_p
from typing import Any

from . import cudart, fork, library, status

_contexts: dict[int, c_void_p] = {}  # device -> context in its primary context
_arrays: dict[tuple[int, ...], ctypes.Array[c_void_p]] = {}  # devices -> their contexts, as a C array
_lock = _thread.allocate_lock()  # held only while a context is created


class _Made:
    """A CUDA context pyctk.driver's Device.make_context made, on ``device``, and the
    libgpumatmul context in it once the library worked there."""

    __slots__ = ("device", "library_context")

    def __init__(self, device: int) -> None:
        self.device = device
        self.library_context: c_void_p | None = None


# CUDA context handle -> its record, for each context pyctk.driver made and has not destroyed
# (written only through register_made and forget_made).
_made: dict[int, _Made] = {}


def register_made(handle: int, device: int) -> None:
    """Context ``handle`` on ``device`` was made by pyctk.driver: work on ``device`` while it is
    current goes to a libgpumatmul context of its own, and ``cudart.on_device`` puts it back
    after work on another device."""
    _made[handle] = _Made(device)
    cudart.context_keeper = _keep_made_context


def _keep_made_context() -> Callable[[], None] | None:
    """What makes the calling thread's current context current again, if pyctk.driver made it
    (``cudart.context_keeper``)."""
    if not _made:  # (all destroyed since)
        return None
    from . import driver_api  # (imported here, as in _in_made_context)

    current = c_void_p()
    driver_api.call("cuCtxGetCurrent", ctypes.byref(current))
    if (current.value or 0) not in _made:
        return None
    return functools.partial(driver_api.call, "cuCtxSetCurrent", current)


def forget_made(handle: int, quiet: bool = False) -> None:
    """Context ``handle``, one ``register_made`` was told of, is about to be destroyed: destroy
    the libgpumatmul context in it first, while it lives (its memory then is never freed again:
    ``alive`` says so). ``quiet``: a failure is not raised (from a finaliser)."""
    made = _made.pop(handle, None)
    if made is None or made.library_context is None:
        return
    code = library.library().gpumatmul_destroy(made.library_context)
    if code and not quiet:  # (the library context is freed all the same)
        raise library.error(code)


def is_made(handle: int) -> bool:
    """Whether ``register_made`` was told of context ``handle`` and ``forget_made`` not yet."""
    return handle in _made


def _in_made_context(device: int) -> c_void_p | None:
    """The libgpumatmul context for ``device`` in the calling thread's current CUDA context if
    that is one pyctk.driver made on ``device`` (created on first use), else None."""
    from . import driver_api  # imported here: only pyctk.driver makes contexts, and `import pyctk`

    # does not need it (~2 ms)
    current = c_void_p()
    driver_api.call("cuCtxGetCurrent", ctypes.byref(current))
    made = _made.get(current.value or 0)
    if made is None or made.device != device:
        return None
    with _lock:
        if made.library_context is None:
            load_library(device)
            handle = c_void_p()
            call_starting_cuda("gpumatmul_create_in_context", ctypes.byref(handle), current)
            made.library_context = handle
    return made.library_context


def context(device: int = 0) -> c_void_p:
    """The libgpumatmul context for work on ``device``, created on first use: the one in the
    current CUDA context if pyctk.driver made that on ``device``, else the one in ``device``'s
    primary context.

    Raises ForkedAfterCudaError in a child forked after its parent started CUDA, and
    pyctk._cuda.status' exceptions when creation fails (nothing is kept then: the next call
    tries again).
    """
    if _made:  # (empty unless pyctk.driver made a context: no cost otherwise)
        in_made = _in_made_context(device)
        if in_made is not None:
            return in_made
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
    """Whether ``handle`` is one of this process's contexts for ``device``, not destroyed: not
    one a forked child inherited from its parent (those are never used, nor destroyed, in the
    child), nor one in a made context since destroyed, nor None (memory that is not from
    pyctk's pool: a subclass of ``Allocation`` that frees its own)."""
    if handle is None:
        return False
    if _contexts.get(device) is handle:
        return True
    return any(made.library_context is handle for made in _made.values())


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
    per tuple: for the host calls, whose every microsecond counts for small products (while
    pyctk.driver's made contexts exist, made at each call: the current context chooses)."""
    if _made:
        return (c_void_p * len(devices))(*(context(device) for device in devices))
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
    global _contexts, _arrays, _made, _lock
    _contexts = {}  # the parent's: never to be used, nor destroyed, here
    _arrays = {}
    _made = {}
    _lock = _thread.allocate_lock()  # a parent thread creating a context at the fork holds the old one forever


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)
