"""Shared test setup: GPU tests (marked ``gpu``) skip, saying why, when no GPU is usable.

The tests run against the *installed* pyctk (run ``pytest``, not ``python -m
pytest``, so that the source tree does not shadow it).
"""

from __future__ import annotations

import functools

import pytest

import pyctk


@functools.lru_cache(maxsize=None)
def gpu_unavailable_reason() -> str | None:
    report = pyctk.info()
    if report["devices"]:
        return None
    return report["error"] or "no GPU found"


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if "gpu" in item.keywords]
    reason = gpu_unavailable_reason() if gpu_items else None
    short_reason = ":".join((reason or "").split(":")[:2])  # e.g. "cudaGetDeviceCount failed: cudaErrorInsufficientDriver"
    for item in gpu_items:
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"needs a GPU ({short_reason})"))


@pytest.fixture
def needs_no_driver():
    """For tests of the no-driver behaviour: they cannot run where a GPU works."""
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present; this test checks behaviour without a driver")
