"""pyctk._cuda.contexts without a GPU: one context per device, created once however many threads
race for it, no lock on the per-call path; and fork.

libgpumatmul is replaced by a fake that creates contexts (FakeLibrary), so this runs anywhere.
Fork is tested in a subprocess that forks (os.fork in the test process would copy pytest):
a child forked after CUDA was started (simulated: the fake's creation succeeded, or the
state is set by hand) is refused with ForkedAfterCudaError and never reaches libgpumatmul
or the CUDA runtime; one forked before creates its own context; a spawned one is not
refused. tests/cuda_tests/test_threads_and_fork_on_gpu.py does the same on a GPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import pyctk
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import fork as _fork
from pyctk._cuda import library as _library
from pyctk._cuda import status as _status


class FakeLibrary:
    """libgpumatmul's context creation: returns ``statuses`` in turn (then success), gives
    device d the handle 1000 + d, and records every creation."""

    def __init__(self, *statuses: int) -> None:
        self.statuses = list(statuses)
        self.created: list[int] = []

    def gpumatmul_create(self, handle, device: int) -> int:
        time.sleep(0.01)  # widens the window in which racing threads could both create
        self.created.append(device)
        status = self.statuses.pop(0) if self.statuses else _status.SUCCESS
        if status == _status.SUCCESS:
            handle._obj.value = 1000 + device
        return status

    def gpumatmul_last_error_message(self) -> bytes:
        return b"fake failure"


@pytest.fixture
def fake(monkeypatch):
    """A fresh _contexts state over a fake libgpumatmul (replace it to set statuses)."""
    library = FakeLibrary()
    monkeypatch.setattr(_library, "library", lambda: library)
    monkeypatch.setattr(_contexts, "_contexts", {})
    monkeypatch.setattr(_contexts, "_lock", threading.Lock())
    monkeypatch.setattr(_fork, "_cuda_started", False)
    monkeypatch.setattr(_fork, "_forked_after_cuda", False)
    return library


def run_threads(count: int, work) -> list[BaseException]:
    """Run ``work(index)`` in ``count`` threads started together; the exceptions they raised."""
    barrier, errors = threading.Barrier(count), []

    def body(index: int) -> None:
        barrier.wait()
        try:
            work(index)
        except BaseException as error:  # noqa: BLE001 - returned to the test
            errors.append(error)

    threads = [threading.Thread(target=body, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_racing_threads_create_one_context_per_device(fake):
    handles: dict[int, set[int]] = {device: set() for device in range(4)}

    def work(index: int) -> None:
        for device in (index % 4, (index + 1) % 4, 0):
            handles[device].add(_contexts.context(device).value)

    assert run_threads(16, work) == []
    assert sorted(fake.created) == [0, 1, 2, 3]  # each device's context created exactly once
    assert handles == {device: {1000 + device} for device in range(4)}
    assert _contexts.context(2) is _contexts.context(2)


def test_the_per_call_path_takes_no_lock(fake):
    handle = _contexts.context(0)
    got = []
    with _contexts._lock:  # as if another thread were creating a context for another device
        reader = threading.Thread(target=lambda: got.append(_contexts.context(0)))
        reader.start()
        reader.join(timeout=10)
        assert not reader.is_alive(), "context() waited for the creation lock"
    assert got == [handle]


def test_device_0_is_the_default(fake):
    assert _contexts.context() is _contexts.context(0)
    assert fake.created == [0]


def test_a_failed_creation_raises_keeps_nothing_and_is_tried_again(fake, monkeypatch):
    library = FakeLibrary(_status.NO_DEVICE)
    monkeypatch.setattr(_library, "library", lambda: library)
    with pytest.raises(pyctk.NoDeviceError, match=r"fake failure \[GPUMATMUL_ERROR_NO_DEVICE\]") as caught:
        _contexts.context(3)
    assert caught.value.status == "GPUMATMUL_ERROR_NO_DEVICE"
    assert _contexts._contexts == {}
    assert _contexts.context(3).value == 1003
    assert library.created == [3, 3]


@pytest.mark.parametrize(
    "status, started",
    [
        (_status.SUCCESS, True),
        (_status.NO_DEVICE, True),
        (_status.CUDA, True),
        (_status.OUT_OF_MEMORY, True),
        (_status.NO_DRIVER, False),  # no usable driver: CUDA never started, a fork child may try
    ],
)
def test_a_call_that_reached_the_driver_is_recorded(fake, monkeypatch, status, started):
    monkeypatch.setattr(_library, "library", lambda: FakeLibrary(status))
    try:
        _contexts.context(0)
    except pyctk.PyctkError:
        assert status != _status.SUCCESS
    assert _fork.cuda_started() is started


# The process a test runs: it sets the parent's state, holds the locks (as a thread creating a
# context or loading the library at the moment of the fork would), forks, and reports what the
# child and its own child (the grandchild) saw, as JSON. A hang fails the test by its timeout.
FORKS = textwrap.dedent(r'''
    import json, os, sys, traceback
    from ctypes import c_void_p
    import pyctk
    from pyctk._cuda import contexts as _contexts
    from pyctk._cuda import cudart as _cudart
    from pyctk._cuda import fork as _fork
    from pyctk._cuda import library as _library

    class FakeLibrary:
        """Creates contexts (handle 99); any other libgpumatmul function fails the test."""
        def gpumatmul_create(self, handle, device):
            handle._obj.value = 99
            return 0
        def __getattr__(self, name):
            raise AssertionError(f"libgpumatmul's {name} was called")

    def tripwire(*args):
        raise AssertionError("the CUDA runtime was called")

    def attempt(function):
        try:
            return {"result": function()}
        except pyctk.ForkedAfterCudaError as error:
            return {"refused": str(error)}
        except BaseException as error:
            return {"other": "".join(traceback.format_exception_only(type(error), error))}

    def fork(body):
        """Run body() in a forked child; what attempt(body) reported there."""
        read, write = os.pipe()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            os.write(write, json.dumps(attempt(body)).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            reported = json.loads(pipe.read())
        os.waitpid(pid, 0)
        return reported

    def in_child():
        real_library = _library.library
        real_loaded = _library.loaded
        # As if loaded already: a first context would also start the driver through cudart.
        _library.library, _library.loaded, _cudart.runtime = FakeLibrary, lambda: True, tripwire
        seen = {"inherited": list(_contexts._contexts),
                "lock_free": [lock.acquire(timeout=5) for lock in (_contexts._lock, _library._lock)]}
        _contexts._lock.release()
        _library._lock.release()
        seen["context"] = attempt(lambda: _contexts.context(0).value)
        seen["using"] = attempt(lambda: _contexts.using(1).__enter__().value)
        seen["grandchild"] = fork(lambda: _contexts.context(0).value)
        # info() loads the real library, then stops before CUDA
        _library.library, _library.loaded = real_library, real_loaded
        seen["info"] = attempt(lambda: [pyctk.info()[key] for key in ("error", "devices")])
        return seen

    parent = json.loads(sys.argv[1])
    _fork._cuda_started = parent["started"]
    if parent["started"]:
        _contexts._contexts[0] = c_void_p(1234)  # the parent's context
    with _contexts._lock, _library._lock:  # held by a parent thread creating, or loading
        print(json.dumps(fork(in_child)))
''')


def forked(tmp_path, started: bool) -> dict:
    run = subprocess.run(
        [sys.executable, "-c", FORKS, json.dumps({"started": started})],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    reported = json.loads(run.stdout.splitlines()[-1])
    assert "result" in reported, reported
    return reported["result"]


def refusal_is_clear(message: str) -> None:
    assert message.startswith("pyctk cannot use the GPU in this process: it was forked")
    for words in (
        "os.fork",
        "'spawn'",
        "'forkserver'",
        "multiprocessing.get_context('spawn')",
        "do not use the GPU in the parent before forking",
    ):
        assert words in message


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="fork is POSIX")
def test_a_child_forked_after_cuda_started_is_refused_before_any_cuda_call(tmp_path):
    seen = forked(tmp_path, started=True)
    assert seen["inherited"] == [] and seen["lock_free"] == [True, True]
    for what in ("context", "using", "grandchild"):
        assert "refused" in seen[what], (what, seen[what])
        refusal_is_clear(seen[what]["refused"])
    error, devices = seen["info"]["result"]  # info() never raises: it says why
    refusal_is_clear(error)
    assert devices == []


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="fork is POSIX")
def test_a_child_forked_before_cuda_started_creates_its_own_contexts(tmp_path):
    seen = forked(tmp_path, started=False)
    assert seen["inherited"] == [] and seen["lock_free"] == [True, True]
    assert seen["context"] == {"result": 99}
    # The child started CUDA (the fake's creation succeeded): its own children are refused.
    refusal_is_clear(seen["grandchild"]["refused"])


SPAWNED = textwrap.dedent(r"""
    import multiprocessing, sys
    import pyctk
    from pyctk._cuda import contexts as _contexts
    from pyctk._cuda import fork as _fork

    def create():
        try:
            _contexts.context(0)
        except pyctk.PyctkError as error:
            return type(error).__name__
        return "created"

    if __name__ == "__main__":
        _fork._cuda_started = True  # as after GPU use
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            print(pool.apply(create))
""")


def test_a_spawned_child_is_not_refused(tmp_path):
    script = tmp_path / "spawned.py"
    script.write_text(SPAWNED)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    # A fresh interpreter: it creates a context, or fails as this machine fails without a GPU.
    assert run.stdout.split() in (["created"], ["NoDriverError"], ["NoDeviceError"])
