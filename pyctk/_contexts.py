"""libgpumatmul contexts: one per device and thread, created on first use; and fork.

State (documented in the README): each thread that multiplies on a device gets its own
context there (a cuBLAS handle and a stream of its own inside), so that threads never
share a handle whose stream another thread could change mid-call and never queue behind
one another's work. A thread's contexts are destroyed when the thread ends.

Fork: CUDA cannot be used in a child forked after the parent initialised it (the child
inherits a broken driver state: calls fail with cudaErrorInitializationError or hang).
A child forked after pyctk created a context gets ForkedAfterCudaError on its first GPU
call instead; a child forked before any GPU use works normally.
"""

from __future__ import annotations

import ctypes
import os
import threading
from contextlib import contextmanager
from ctypes import c_void_p
from typing import Iterator

from . import _cudart, _library
from ._errors import ForkedAfterCudaError

_local = threading.local()     # .contexts: device -> _Context, for this thread
_used_in_this_process = False  # a context was created: a fork child cannot use CUDA
_forked_after_use = False


class _Context:
    """One libgpumatmul context, destroyed with its thread's local storage."""

    __slots__ = ("handle",)

    def __init__(self, device: int) -> None:
        self.handle = None  # for __del__, if creation fails
        handle = c_void_p()
        with _cudart.on_device(device):  # libgpumatmul makes the device current: restore it
            _library.call("gpumatmul_create", ctypes.byref(handle), device)
        self.handle = handle

    def __del__(self) -> None:
        # Not at interpreter exit (the modules are being torn down, and the process's CUDA
        # state goes with it), nor in a fork child (the context is the parent's).
        if self.handle and _library is not None and not _forked_after_use:
            _library.library().gpumatmul_destroy(self.handle)


def context(device: int = 0) -> c_void_p:
    """The calling thread's context for ``device``, created on first use."""
    contexts = getattr(_local, "contexts", None)
    if contexts is not None and device in contexts:  # the per-call path: a dict lookup
        return contexts[device].handle
    if _forked_after_use:
        raise ForkedAfterCudaError(
            "pyctk cannot use the GPU in this process: it was forked (os.fork, or multiprocessing's "
            "default 'fork' start method on Linux) after its parent used the GPU, and CUDA does not "
            "survive a fork. Start worker processes with the 'spawn' or 'forkserver' method "
            "(multiprocessing.get_context('spawn')), or fork before the parent's first GPU call.")
    global _used_in_this_process
    created = _Context(device)
    _used_in_this_process = True
    if contexts is None:
        contexts = _local.contexts = {}
    contexts[device] = created
    return created.handle


@contextmanager
def using(device: int) -> Iterator[c_void_p]:
    """The calling thread's context for ``device``, with ``device`` current for the block.

    libgpumatmul's calls make their context's device current; the caller's current device
    is restored when the block ends, so pyctk never leaves a thread on another device.
    """
    handle = context(device)
    with _cudart.on_device(device):
        yield handle


def _after_fork_in_child() -> None:
    global _forked_after_use, _local
    if _used_in_this_process:
        _forked_after_use = True
    _local = threading.local()  # the parent's contexts are not this process's to use or free


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
