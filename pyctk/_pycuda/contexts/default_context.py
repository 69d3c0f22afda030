"""Which device a PyCUDA program gets by default, and caches kept per context
(``pycuda.tools``' ``make_default_context``, ``get_default_device``,
``context_dependent_memoize``, ``clear_context_caches`` and ``mark_cuda_test``), and what importing
``pyctk.autoinit`` or ``pyctk.autoprimaryctx`` does (``start_primary_context``).

The default device, in order: ``$CUDA_DEVICE``, the number in ``~/.cuda_device``, then the
first device whose context can be made.
"""

from __future__ import annotations

import atexit
import functools
import gc
import os
import warnings
from typing import Any, Callable

from ..._cuda import driver_api
from ..._cuda.driver_errors import Error
from .devices import Context, Device, init


def _chosen_device() -> int | None:
    """The device ``$CUDA_DEVICE`` or ``~/.cuda_device`` names, or None."""
    chosen = os.environ.get("CUDA_DEVICE")
    if chosen is None:
        try:
            with open(os.path.expanduser("~/.cuda_device")) as file:
                chosen = file.read().strip()
        except OSError:
            return None
    try:
        return int(chosen)
    except ValueError:
        raise ValueError(f"the default CUDA device must be a number, not {chosen!r} "
                         f"($CUDA_DEVICE or ~/.cuda_device)") from None


def make_default_context(ctx_maker: Callable[[Device], Context] | None = None) -> Context:
    """A context on the default device, made current: ``ctx_maker(device)``, by default
    ``device.make_context()`` (a new context, as in PyCUDA; ``pyctk.matmul`` and ``DeviceArray``
    refuse to work in one). Without a chosen device, the first device whose context can be made.

    Raises RuntimeError when no device can have a context.
    """
    make = ctx_maker or (lambda device: device.make_context())
    chosen = _chosen_device()
    if chosen is not None:
        return make(Device(chosen))
    count = Device.count()
    if count == 0:
        raise RuntimeError("make_default_context: CUDA sees no device")
    for number in range(count):
        try:
            return make(Device(number))
        except Error:
            continue
    raise RuntimeError(f"make_default_context: no context could be made on any of the {count} devices")


def get_default_device(default: int = 0) -> Device:
    """Deprecated as in PyCUDA: the chosen device (``$CUDA_DEVICE``, ``~/.cuda_device``) or
    ``default``."""
    warnings.warn("get_default_device is deprecated: use make_default_context", DeprecationWarning,
                  stacklevel=2)
    chosen = _chosen_device()
    return Device(default if chosen is None else chosen)


_caches: list[dict] = []


def context_dependent_memoize(func: Callable) -> Callable:
    """``func`` remembering its results per current context and arguments (compiled kernels,
    say, which belong to a context); ``clear_context_caches`` forgets them."""
    cache: dict = {}
    _caches.append(cache)

    @functools.wraps(func)
    def memoized(*args: Any, **kwargs: Any) -> Any:
        key = (driver_api.current_context(), args, frozenset(kwargs.items()))
        if key not in cache:
            cache[key] = func(*args, **kwargs)
        return cache[key]

    return memoized


def clear_context_caches() -> None:
    """Forget every result ``context_dependent_memoize`` kept."""
    for cache in _caches:
        cache.clear()


def mark_cuda_test(test: Callable) -> Callable:
    """PyCUDA's decorator of a pytest test that needs a CUDA context: the test runs in one
    ``make_default_context`` made, popped after it, with the context's caches cleared and
    garbage collected (so that its memory goes before the next test's context); and, where
    pytest is installed, it is marked ``cuda``.

    >>> @mark_cuda_test
    ... def test_something():
    ...     pass
    """
    @functools.wraps(test)
    def in_context(*args: Any, **kwargs: Any) -> Any:
        context = make_default_context()
        try:
            return test(*args, **kwargs)
        finally:
            context.pop()
            clear_context_caches()
            gc.collect()

    try:
        import pytest
    except ImportError:
        return in_context
    return pytest.mark.cuda(in_context)


def _retain_and_push(device: Device) -> Context:
    context = device.retain_primary_context()
    context.push()
    return context


def start_primary_context() -> Context:
    """What importing ``pyctk.autoinit`` or ``pyctk.autoprimaryctx`` does: start CUDA, push the
    default device's primary context (``make_default_context``'s choice of device), and pop it
    and forget the per-context caches at exit (PyCUDA's ``autoprimaryctx``). Returns it.

    Raises pyctk.NoDriverError, with the fix, when there is no usable driver.
    """
    init()
    context = make_default_context(_retain_and_push)
    atexit.register(_finish, context)
    return context


def _finish(context: Context) -> None:
    if Context.get_current() == context:  # (unless the program popped it itself)
        Context.pop()
    clear_context_caches()
