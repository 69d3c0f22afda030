"""Which device a PyCUDA program gets by default, and caches kept per context
(``pycuda.tools``' ``make_default_context``, ``get_default_device``,
``context_dependent_memoize``, ``clear_context_caches``, ``mark_cuda_test`` and
``init_cuda_context_fixture``), and what importing ``pyctk.autoinit`` or
``pyctk.autoprimaryctx`` does (``start_primary_context``).

The default device, in order: ``$CUDA_DEVICE``, the number in ``~/.cuda_device``, then the
first device whose context can be made.
"""

from __future__ import annotations

import atexit
import functools
import gc
import os
import warnings
from collections.abc import Iterator
from typing import Any, Callable

from ..._cuda import driver_api
from ..._cuda.driver_errors import Error
from .devices import Context, Device
from .versions import init


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
        raise ValueError(
            f"the default CUDA device must be a number, not {chosen!r} ($CUDA_DEVICE or ~/.cuda_device)"
        ) from None


def make_default_context(ctx_maker: Callable[[Device], Context] | None = None) -> Context:
    """A context on the default device, made current (PyCUDA's ``pycuda.tools`` function).

    The default device is ``$CUDA_DEVICE``, else the number in ``~/.cuda_device``, else the
    first device on which ``ctx_maker`` succeeds.

    Parameters
    ----------
    ctx_maker : callable, optional
        ``ctx_maker(device)`` makes the context and pushes it. Default
        ``device.make_context()``: a new context, as in PyCUDA, in which :func:`pyctk.matmul`
        and :class:`pyctk.DeviceArray` refuse to work; pass
        ``lambda dev: dev.retain_primary_context()`` and push it for the primary context.

    Returns
    -------
    pyctk.driver.Context
        The context, current; :meth:`~pyctk.driver.Context.pop` it when done.

    Raises
    ------
    RuntimeError
        No device can have a context.
    ValueError
        ``$CUDA_DEVICE`` or ``~/.cuda_device`` is not a number.

    Examples
    --------
    >>> from pyctk.tools import make_default_context   # doctest: +GPU
    >>> ctx = make_default_context()
    >>> ctx
    <pyctk.driver.Context 0x... (made) on device ...>
    >>> ctx.pop(); ctx.detach()
    """
    make = ctx_maker or (lambda device: device.make_context())
    chosen = _chosen_device()
    if chosen is not None:
        return make(Device(chosen))
    count = Device.count()
    if count == 0:
        raise RuntimeError("make_default_context: CUDA sees no device")
    failures = []
    for number in range(count):
        try:
            return make(Device(number))
        except Error as error:
            failures.append(f"device {number}: {error}")
    raise RuntimeError(
        f"make_default_context: no context could be made on any of the {count} devices ("
        + "; ".join(failures)
        + "); free the devices' memory or choose one with $CUDA_DEVICE"
    )


def get_default_device(default: int = 0) -> Device:
    """The chosen device, ``$CUDA_DEVICE`` or ``~/.cuda_device``, else ``default``.

    Deprecated, as in PyCUDA (a DeprecationWarning): use :func:`make_default_context`.

    Parameters
    ----------
    default : int, optional
        The device number to use when none is chosen.

    Returns
    -------
    pyctk.driver.Device
    """
    warnings.warn("get_default_device is deprecated: use make_default_context", DeprecationWarning, stacklevel=2)
    chosen = _chosen_device()
    return Device(default if chosen is None else chosen)


_caches: list[dict] = []


def context_dependent_memoize(func: Callable) -> Callable:
    """A decorator: ``func`` remembers its result for each current context and arguments.

    For what belongs to a context, such as compiled kernels. :func:`clear_context_caches`
    forgets every result.

    Parameters
    ----------
    func : callable
        Its arguments must be hashable.

    Returns
    -------
    callable
    """
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
    """Forget every result that :func:`context_dependent_memoize` kept."""
    for cache in _caches:
        cache.clear()


def mark_cuda_test(test: Callable) -> Callable:
    """A decorator of a test that needs a CUDA context (PyCUDA's ``pycuda.tools`` one).

    The test runs in a context :func:`make_default_context` made, popped after it, with the
    per-context caches cleared and garbage collected, so that its memory goes before the
    next test's context. Where pytest is installed, the test is also marked ``cuda``
    (register the mark in your pytest configuration).

    Parameters
    ----------
    test : callable

    Returns
    -------
    callable
        The test, wrapped.

    Examples
    --------
    >>> from pyctk.tools import mark_cuda_test
    >>> @mark_cuda_test
    ... def test_something():
    ...     pass
    >>> test_something.__name__
    'test_something'
    """

    @functools.wraps(test)
    def in_context(*args: Any, **kwargs: Any) -> Any:
        context = make_default_context()
        try:
            return test(*args, **kwargs)
        finally:
            _end_test_context(context)

    try:
        import pytest
    except ImportError:
        return in_context
    return pytest.mark.cuda(in_context)


def init_cuda_context_fixture() -> Iterator[None]:
    """The body of a pytest fixture that runs each test in a CUDA context of its own, as
    PyCUDA's ``pycuda.tools`` one: :func:`mark_cuda_test`'s context, for a fixture.

    Yields once, with a context :func:`make_default_context` made current; then pops it,
    clears the per-context caches and collects garbage.

    Examples
    --------
    >>> import pytest
    >>> from pyctk.tools import init_cuda_context_fixture
    >>> @pytest.fixture(autouse=True)
    ... def init_cuda_context():
    ...     yield from init_cuda_context_fixture()
    """
    context = make_default_context()
    try:
        yield
    finally:
        _end_test_context(context)


def _end_test_context(context: Context) -> None:
    """After a test: its context popped, the caches of its results cleared, and its memory,
    now garbage, freed before the next test's context."""
    context.pop()
    clear_context_caches()
    gc.collect()


def _retain_and_push(device: Device) -> Context:
    context = device.retain_primary_context()
    context.push()
    return context


def start_primary_context() -> Context:
    """What importing :mod:`pyctk.autoinit` or :mod:`pyctk.autoprimaryctx` does.

    Start CUDA, push the default device's primary context (the device
    :func:`make_default_context` chooses), and pop it and forget the per-context caches at
    exit, as PyCUDA's ``autoprimaryctx`` does.

    Returns
    -------
    pyctk.driver.Context
        The primary context, current.

    Raises
    ------
    pyctk.NoDriverError
        There is no usable NVIDIA driver; the message says how to fix it.
    """
    init()
    context = make_default_context(_retain_and_push)
    atexit.register(_finish, context)
    return context


def _finish(context: Context) -> None:
    if Context.get_current() == context:  # (unless the program popped it itself)
        Context.pop()
    clear_context_caches()
