"""Turns at the GPU for parallel test workers (``pytest -n N``): every GPU test holds a shared
turn while it runs, and a test marked ``whole_gpu`` (one that takes nearly all the GPU's
memory for a moment) an exclusive one, so that no other worker's test runs out of memory
because of it. Without xdist there is one process, and a turn costs nothing.

Two ``flock`` locks: a gate, held exclusively by a whole-GPU test while it waits, which new
shared turns pass through (holding it shared for an instant), and the turn itself. So a
whole-GPU test waits only for the tests already running, not for a stream of new ones.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


def _lock_file(name: str) -> int:
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "serial")
    path = os.path.join(tempfile.gettempdir(), f"pyctk-tests-{run}-{name}.lock")
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


@contextmanager
def turn(whole_gpu: bool) -> Iterator[None]:
    """Hold a turn at the GPU for the block: exclusive if ``whole_gpu``, else shared."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    gate, held = _lock_file("gate"), _lock_file("turn")
    try:
        fcntl.flock(gate, fcntl.LOCK_EX if whole_gpu else fcntl.LOCK_SH)
        try:
            fcntl.flock(held, fcntl.LOCK_EX if whole_gpu else fcntl.LOCK_SH)
        finally:
            if not whole_gpu:
                fcntl.flock(gate, fcntl.LOCK_UN)
        yield
    finally:
        os.close(held)  # (closing releases the locks)
        os.close(gate)
