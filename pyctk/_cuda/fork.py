"""CUDA and ``fork``: whether this process may use the GPU, and the record that it started to.

CUDA does not survive a fork. A child forked after its parent started CUDA inherits
driver state it cannot use: its calls fail with cudaErrorInitializationError, or hang.
So pyctk records the first call that starts CUDA (``mark_cuda_started``); in a child
forked after it, every first GPU call raises ForkedAfterCudaError (``refuse_if_forked``)
without calling CUDA. A child forked before any GPU use starts CUDA itself when it needs
it. The modules that keep CUDA state (contexts, the runtime's handle) drop it in such a
child through their own ``os.register_at_fork`` hooks.

State (documented in the README): the two flags below, for the whole process.
"""

from __future__ import annotations

import os

from .errors import ForkedAfterCudaError

_cuda_started = False  # a pyctk call reached the CUDA driver in this process
_forked_after_cuda = False  # this process was forked from one where it had

_FORKED = (
    "pyctk cannot use the GPU in this process: it was forked (os.fork, or multiprocessing's 'fork' "
    "start method, the default on Linux before Python 3.14) after its parent had started using "
    "the GPU, and CUDA does not survive a fork. Fix: start worker processes with the 'spawn' or "
    "'forkserver' start method (multiprocessing.get_context('spawn'), or "
    "ProcessPoolExecutor(mp_context=multiprocessing.get_context('spawn'))), or do not use the GPU "
    "in the parent before forking."
)


def refuse_if_forked() -> None:
    """Raise ForkedAfterCudaError if this process was forked after its parent started CUDA."""
    if _forked_after_cuda:
        raise ForkedAfterCudaError(_FORKED)


def mark_cuda_started() -> None:
    """Record that this process is calling CUDA: its fork children will be refused."""
    global _cuda_started
    _cuda_started = True


def cuda_started() -> bool:
    """Whether a pyctk call has reached the CUDA driver in this process."""
    return _cuda_started


def _after_fork_in_child() -> None:
    global _forked_after_cuda
    _forked_after_cuda = _forked_after_cuda or _cuda_started


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)
