"""Ctrl-C during a wait for a kernel that runs for seconds: Context, Stream and Event
synchronize each end at once with KeyboardInterrupt; the kernel runs on to its end."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

SPIN = r"""
extern "C" __global__ void spin(long long cycles, int *done) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  *done = 1;
}
"""


@pytest.fixture
def long_kernel():
    """Launches a kernel of about 3 s on a stream; returns (stream, flag it sets at its end)."""
    from pyctk import driver
    from pyctk.compiler import SourceModule

    spin = SourceModule(SPIN, no_extern_c=True).get_function("spin")
    cycles = 3 * driver.Context.get_device().clock_rate * 1000  # clock_rate: kHz
    done = driver.mem_alloc(4)
    driver.memset_d32(done, 0, 1)

    def launch(stream):
        spin(np.int64(cycles), done, block=(1, 1, 1), grid=(1, 1), stream=stream)
        return done

    yield launch
    driver.Context.synchronize()  # (uninterrupted: the kernel's end, before the next test)


@pytest.mark.parametrize("waiter", ["context", "stream", "event"])
def test_ctrl_c_ends_a_wait_for_a_long_kernel(long_kernel, waiter):
    from pyctk import driver

    assert threading.current_thread() is threading.main_thread(), "signals reach only the main thread"
    stream = driver.Stream()
    done = long_kernel(stream)
    event = driver.Event().record(stream)
    wait = {"context": driver.Context.synchronize, "stream": stream.synchronize, "event": event.synchronize}[waiter]
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        wait()
    interrupted = time.monotonic() - start
    timer.join()
    assert interrupted < 0.3 + 0.5, interrupted
    flag = np.zeros(1, np.int32)
    driver.memcpy_dtoh(flag, done)  # (waits for the kernel: the legacy stream)
    assert flag[0] == 1
