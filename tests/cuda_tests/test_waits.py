"""Waits that Ctrl-C ends (pyctk/_cuda/waits.py), with a driver whose synchronize blocks for
seconds: a SIGINT to the process is the caller's KeyboardInterrupt at once."""

from __future__ import annotations

import os
import signal
import threading
import time
from types import SimpleNamespace

import pytest

from pyctk._cuda import constants as cu
from pyctk._cuda import driver_api, waits


@pytest.fixture
def slow_driver(monkeypatch):
    """A driver whose stream is busy for 3 s: its query says not ready, its synchronize blocks."""
    calls = []

    def synchronize(handle):
        calls.append(("synchronize", threading.get_ident()))
        time.sleep(3)
        return 0

    fake = SimpleNamespace(
        cuStreamQuery=lambda handle: cu.CUDA_ERROR_NOT_READY,
        cuStreamSynchronize=synchronize,
        cuCtxPushCurrent=lambda context: calls.append(("push", context.value)) or 0,
    )
    monkeypatch.setattr(driver_api, "driver", lambda: fake)
    monkeypatch.setattr(driver_api, "current_context", lambda: 0x1234)
    return calls


def interrupted_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_ends_a_wait_of_the_main_thread_at_once(slow_driver):
    if threading.current_thread() is not threading.main_thread():
        pytest.fail("signals reach only the main thread: run this test there (pytest without -p xdist's threads)")
    timer = interrupted_after(0.2)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        waits.wait("cuStreamSynchronize", 7, query="cuStreamQuery")
    timer.join()
    assert time.monotonic() - start < 0.7  # not the 3 s the GPU's work takes
    # the wait ran on a thread of its own, with the caller's context pushed there first
    assert slow_driver[0] == ("push", 0x1234)
    assert slow_driver[1][0] == "synchronize" and slow_driver[1][1] != threading.get_ident()


def test_a_wait_that_is_over_starts_no_thread(monkeypatch, slow_driver):
    monkeypatch.setattr(driver_api.driver(), "cuStreamQuery", lambda handle: 0)
    monkeypatch.setattr(waits._thread, "start_new_thread", lambda *args: pytest.fail("a thread was started"))
    waits.wait("cuStreamSynchronize", 7, query="cuStreamQuery")
    assert slow_driver == []


def test_the_waits_error_is_the_callers(monkeypatch, slow_driver):
    fake = driver_api.driver()
    monkeypatch.setattr(fake, "cuStreamSynchronize", lambda handle: 700)  # CUDA_ERROR_ILLEGAL_ADDRESS
    monkeypatch.setattr(fake, "cuGetErrorName", lambda code, name: 0, raising=False)
    monkeypatch.setattr(fake, "cuGetErrorString", lambda code, text: 0, raising=False)
    with pytest.raises(Exception, match="cuStreamSynchronize"):
        waits.wait("cuStreamSynchronize", 7, query="cuStreamQuery")
