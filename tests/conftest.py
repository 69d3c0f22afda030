"""Shared test setup: GPU tests (marked ``gpu``) skip, saying why, when there is no driver or GPU.

Only a missing driver or GPU skips: any other failure to reach the GPU (a library that
does not load, a kernel image that does not fit) makes the GPU tests run and fail, so a
regression cannot hide as skips. On a GPU machine set ``PYCTK_REQUIRE_GPU=1``: then a
missing driver or GPU is an error too, not a skip.

The tests run against the *installed* pyctk; from the checkout root the unbuilt source
tree hands over to it (see pyctk/__init__.py).
"""

from __future__ import annotations

import gc
import os
import sys
import threading

import pytest

from support import fake_cuda, gpu_turns
from support.gpu_presence import gpu_unavailable_reason

REQUIRE_GPU = os.environ.get("PYCTK_REQUIRE_GPU", "") not in ("", "0")


def pytest_collection_finish(session):
    """Freeze what collecting made (every test module, NumPy, hypothesis, dask): it is never
    garbage, and without this each of the tests' many ``gc.collect()`` calls (to see memory
    freed) scans all of it again, a third of the suite's time. PyPy has no ``gc.freeze``."""
    if hasattr(gc, "freeze"):
        gc.collect()
        gc.freeze()


def pytest_collection_modifyitems(config, items):
    # The marker alone, not item.keywords: keywords also hold the names of the item's module,
    # folders and parameters, so a folder or file named "gpu" would make its tests GPU tests.
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    reason = gpu_unavailable_reason() if gpu_items else None
    if not reason:
        return
    if REQUIRE_GPU:
        raise pytest.UsageError(f"PYCTK_REQUIRE_GPU=1, but the GPU tests cannot run: {reason}")
    short_reason = ":".join(reason.split(":")[:2])  # e.g. "cudaGetDeviceCount failed: cudaErrorInsufficientDriver"
    for item in gpu_items:
        item.add_marker(pytest.mark.skip(reason=f"needs a GPU ({short_reason})"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A GPU test (its setup, call and teardown) runs in its turn at the GPU
    (support/gpu_turns.py): a ``whole_gpu`` one alone."""
    if item.get_closest_marker("gpu") is None:
        yield
        return
    with gpu_turns.turn(whole_gpu=item.get_closest_marker("whole_gpu") is not None):
        yield


def _pushed_contexts() -> list:
    """This thread's stack of pushed PyCUDA-face contexts; empty if pyctk.driver never loaded."""
    devices = sys.modules.get("pyctk._pycuda.contexts.devices")
    return list(devices._stack()) if devices is not None else []


@pytest.fixture(autouse=True)
def no_context_left_pushed(request):
    """A GPU test leaves this thread's context stack as it found it. A context left pushed
    moves every later test of the process into it, and surfaced only far away, as errors of
    test_contexts_on_gpu.py's empty-stack check (H200, pytest -n 12): here the test that
    left it fails, named."""
    if request.node.get_closest_marker("gpu") is None:
        yield
        return
    before = _pushed_contexts()
    yield
    left = _pushed_contexts()
    assert left == before, f"the test left contexts pushed on its thread: {left[len(before) :]}"


def pytest_terminal_summary(terminalreporter):
    """The skips in one line, counted by reason, above the result (addopts' -rfE lists only
    failures and errors): without a GPU most of the suite skips for one reason, and a line
    per test location would bury the result. ``pytest -rs`` lists them one by one."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons: dict[str, int] = {}
    for report in skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    counted = "; ".join(f"{count} {reason}" for reason, count in sorted(reasons.items(), key=lambda item: -item[1]))
    terminalreporter.write_line(f"{len(skipped)} skipped: {counted} (pytest -rs lists them)")


@pytest.fixture
def cuda(monkeypatch):
    """A GPU in host memory (tests/support/fake_cuda.py) for the test, checked after it."""
    runtime = fake_cuda.install(monkeypatch)
    yield runtime
    fake_cuda.check_after(runtime)


@pytest.fixture
def needs_no_driver():
    """For tests of the no-driver behaviour: they cannot run where a GPU works."""
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present; this test checks behaviour without a driver")


@pytest.fixture(params=["cold", "kept"])
def product_route(request, monkeypatch):
    """Every product of the test on each of pyctk.matmul's two paths: "cold" plans every call
    afresh (no kept plan is looked up), "kept" runs every call that can be kept by its kept
    plan (a first call with the same arguments, its result dropped, plans and keeps it). The
    product modules use it for all their tests (``pytestmark``)."""
    from pyctk._matmul import api, repeat

    monkeypatch.setattr(repeat, "_host", {})
    monkeypatch.setattr(repeat, "_device", {})
    if request.param == "cold":
        monkeypatch.setattr(repeat, "run", lambda *args: None)
        monkeypatch.setattr(repeat, "run_described", lambda *args: None)
        return request.param
    run, warming = repeat.run, threading.local()

    def kept(x1, x2, stream, options):
        result = run(x1, x2, stream, options)
        if result is not None or getattr(warming, "on", False):
            return result
        casting, backend, precision = options
        warming.on = True
        try:
            api.matmul(x1, x2, stream=stream, casting=casting, backend=backend, precision=precision)
        except Exception:
            return None  # the call itself, cold, raises it again
        finally:
            warming.on = False
        return run(x1, x2, stream, options)

    monkeypatch.setattr(repeat, "run", kept)
    return request.param


@pytest.fixture
def empty_free_list(monkeypatch):
    """No block left for reuse by an earlier test (the GPU tests of kept results use it too)."""
    from pyctk._matmul import host_results as _host_results

    monkeypatch.setattr(_host_results, "_free", [])
    monkeypatch.setattr(_host_results, "_returned", [])
    monkeypatch.setattr(_host_results, "_free_bytes", 0)
