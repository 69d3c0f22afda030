"""Kept plans: a product planned once per layout, and run as it is by later calls.

The first call of a layout runs its product through ``execute``, which makes the run
(``execute.HostRun``, ``execute.DeviceRun``) and calls it; ``keep`` keeps that same run, and
later calls (``run``) call it again: one implementation, cold or kept.

A product whose operands are read in place into new memory is kept under what its plan
depends on besides the data: the operands' layouts (dtype, shape, strides; for GPU data
also the device and the stream of their pending work), the stream (GPU data), the options
as given, and for host data the device memory limit. A later call with the same ones skips
describing, resolving and planning: it costs a lookup, the operands' addresses and one C
call (host data: the host call; GPU data: allocate and multiply in one, and later the
free). That is most of a small product's cost: about 25 us of Python on a 2-core machine
otherwise, more than a 16 x 16 product takes on the GPU.

NumPy arrays, DeviceArrays, and torch and CuPy arrays (read by their own accessors) are
looked up before anything else is read (``run``), torch tensors by a key of torch's own
objects (``interop.key_reader``: no shape or strides converted); other GPU arrays once
described (``run_described``). Kept plans are read-only, so threads share them.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypeVar

import numpy as np

from .._arrays import interop
from .._arrays.device_array import DeviceArray
from .._arrays.interop import DeviceOperand
from .._cuda import streams
from . import execute
from .describe import Operands
from .options import Options, memory_limit
from .plan import Plan
from .resolve import Problem

_KEPT = 1024  # layouts kept per kind: past this they start again (a program that keeps
# making new shapes gains nothing from them)


# Keyed by what a run depends on besides the data (the module's docstring says what).
_host: dict[tuple[Hashable, ...], execute.HostRun] = {}
_device: dict[tuple[Hashable, ...], execute.DeviceRun] = {}
_Run = TypeVar("_Run")


def run(x1: Any, x2: Any, stream: Any, options: tuple[str, str, str]) -> Any:
    """The product of two NumPy arrays (``stream`` None), or of two GPU arrays of one type
    that has a reader of its own (DeviceArray, torch, CuPy: ``interop.own_reader``), by a
    kept plan; None when there is none. ``options``: (casting, backend, precision) as given."""
    kind = type(x1)
    if kind is not type(x2):
        return None
    if kind is np.ndarray:
        if stream is not None:
            return None
        host_run = _host.get(_host_key(x1, x2, options))
        return None if host_run is None else host_run(x1, x2)
    handle = 0 if stream is None else streams.handle(stream)
    if kind is DeviceArray:  # its layout is made: not even an operand to make
        kept = _device.get((x1._layout, x2._layout, handle, options))
        return None if kept is None else kept(x1._pointer, x2._pointer, stream)
    key_reader = interop.key_reader(kind)
    if key_reader is not None:  # torch: a key of its own objects, read at half the cost
        keys = key_reader(x1), key_reader(x2)
        if keys[0] is not None and keys[1] is not None:
            kept = _device.get((keys[0][1], keys[1][1], handle, options))
            if kept is not None:
                return kept(keys[0][0], keys[1][0], stream)
    reader = interop.own_reader(kind)
    if reader is None:
        return None
    a, b = reader(x1), reader(x2)
    if type(a) is not DeviceOperand or type(b) is not DeviceOperand:
        return None  # host data, or left to the protocols: the full route says what it is
    kept = _device.get((_layout(a), _layout(b), handle, options))
    return None if kept is None else kept(a.pointer, b.pointer, stream)


def run_described(operands: Operands, options: Options) -> DeviceArray | None:
    """The product of described GPU operands by a kept plan, or None."""
    a, b = operands.a, operands.b
    kept = _device.get((_layout(a), _layout(b), options.stream_handle, options.key))
    return None if kept is None else kept(a.pointer, b.pointer, options.stream)


def keep(operands: Operands, problem: Problem, plan: Plan, options: Options) -> None:
    """Keep the run ``execute`` made of ``plan`` for later calls of these layouts, if they may
    run it as it is: ``execute.keepable``, and for GPU data nothing to wait for (their pending
    work is on the product's stream). The caller keeps only calls without out=, dtype=,
    device= (but the operands' own) and devices=, which the keys leave out."""
    if not execute.keepable(problem, plan):
        return  # (a product with nothing to compute makes no C call to repeat)
    a, b = operands.a, operands.b
    if operands.device is None:
        _keep(_host, _host_key(a, b, options.key), execute.host_run(problem, plan))
    elif all(x.stream is None or streams.same(options.stream_handle, x.stream) for x in (a, b)):
        key = (_layout(a), _layout(b), options.stream_handle, options.key)
        entry = execute.device_run(problem, plan, operands.device, options.stream_handle)
        _keep(_device, key, entry)
        key_reader = interop.key_reader(type(a.owner))
        if key_reader is not None and type(b.owner) is type(a.owner):
            keys = key_reader(a.owner), key_reader(b.owner)
            if keys[0] is not None and keys[1] is not None:
                _keep(_device, (keys[0][1], keys[1][1], options.stream_handle, options.key), entry)


def _host_key(a: np.ndarray, b: np.ndarray, options: tuple[Hashable, ...]) -> tuple[Hashable, ...]:
    """What a product of host arrays depends on besides their data. Each dtype's char too:
    ``longlong`` and ``int64`` are equal dtypes, but NumPy's results keep each one's type."""
    return (
        a.dtype,
        a.dtype.char,
        a.shape,
        a.strides,
        b.dtype,
        b.dtype.char,
        b.shape,
        b.strides,
        options,
        memory_limit(),
    )


def _layout(x: DeviceOperand) -> tuple[tuple[int, ...], tuple[int, ...], np.dtype, int, int | None]:
    """What a product depends on of a GPU operand besides its data (DeviceArray._layout's)."""
    return (x.shape, x.strides, x.dtype, x.device, x.stream)


def _keep(kept: dict[tuple[Hashable, ...], _Run], key: tuple[Hashable, ...], entry: _Run) -> None:
    if len(kept) >= _KEPT:
        kept.clear()
    kept[key] = entry
