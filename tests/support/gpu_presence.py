"""Whether there is a GPU to test on: the one answer conftest.py's skips and the tests that
behave either way (with a GPU or without) ask."""

from __future__ import annotations

import functools

import pyctk
from pyctk._cuda import contexts


@functools.cache
def gpu_unavailable_reason() -> str | None:
    """Why there is no GPU to test on (no driver, no device), or None when there is one."""
    try:
        contexts.context(0)
    except (pyctk.NoDriverError, pyctk.NoDeviceError) as error:
        return str(error)
    except pyctk.PyctkError:
        return None  # not a missing GPU: let the GPU tests run and show the failure
    return None
