"""pyctk.matmul on data that is already on a GPU: in place, on the caller's stream, no copy.

The operands come from ``_interop.device_operand`` (DeviceArray, CUDA Array Interface or
DLPack: PyTorch, CuPy, JAX, Numba). They are described to the C library's strided-batched
device call by pointer, transpose flag, leading dimension and one stack stride
(``_layout``), exactly as host operands are; the product is enqueued on ``stream`` after
the producers' pending work and the call returns without waiting.

Copies are made only where the layout or dtype leaves no choice, and for now they go
through the host (there is no strided-copy or cast kernel yet): an operand whose strides one
row pitch and one stack stride cannot say, or of another dtype than the product's.

Repeats. A product into a new result with nothing to copy or wait for is kept as a ``Plan``
(the C call's ``GemmDesc`` and the result's shape) under its operands' layouts, the stream
and the options. The next call with the same ones (``repeat``) skips every check and costs
two crossings into C: allocate the result and multiply into it, and later free it. DeviceArrays are
looked up before anything else; other libraries' arrays once read (``placement``).
"""

from __future__ import annotations

from ctypes import byref, c_void_p
from typing import Any, NamedTuple

import numpy as np

from .._arrays import device_array as _device_array, interop as _interop, layout as _layout
from .._arrays import memory as _memory
from .._arrays.device_array import DeviceArray
from .._cuda import contexts as _contexts, cudart as _cudart, library as _library
from .._cuda import streams as _streams
from .._cuda.errors import DeviceMismatchError, UnsupportedError
from . import shapes as _shapes


class Plan(NamedTuple):
    """A product of DeviceArrays of known layouts into a new result; read-only, so shared by
    threads."""

    desc: _library.GemmDesc  # the C call's problem: only the pointers change between calls
    shape: tuple[int, ...]   # the result's, which the C call allocates
    strides: tuple[int, ...]
    dtype: np.dtype


_plans: dict[tuple, Plan] = {}
_PLANS_KEPT = 1024  # layouts seen: past this the cache starts again (a program that keeps
                    # making new shapes gains nothing from it)


def array_layout(x: DeviceArray) -> tuple:
    """What a product depends on of a DeviceArray besides its data (``operand_layout`` of
    its operand, read without making one)."""
    return (x._shape, x._strides, x._dtype, x._device, x._stream)


def operand_layout(x: _interop.DeviceOperand) -> tuple:
    """What a product depends on of a GPU operand besides its data."""
    return (x.shape, x.strides, x.dtype, x.device, x.stream)


def repeat(a_layout: tuple, a_pointer: int, b_layout: tuple, b_pointer: int, stream: int,
           options: tuple, stream_owner: Any = None) -> DeviceArray | None:
    """The product of the operands at ``a_pointer`` and ``b_pointer`` as a new DeviceArray, by
    the plan an earlier call of the same layouts, ``stream`` and options made; None when
    there is none (the caller takes the full path). ``stream_owner``: the ``stream=``
    argument, which the result keeps alive (see ``_device_array._Allocation``)."""
    plan = _plans.get((a_layout, b_layout, stream, options))
    if plan is None:
        return None
    device, c = a_layout[3], c_void_p()
    context = _contexts.context(device)
    status = _memory.allocating(_library.library().gpumatmul_gemm_device_new, context,
                                      plan.desc, a_pointer, b_pointer, stream, byref(c))
    if status:
        raise _library.error(status)
    allocation = _memory.Allocation(c.value or 0, context, device, stream, stream_owner)
    return DeviceArray(allocation.pointer, plan.shape, plan.strides, plan.dtype, device,
                       allocation, stream=stream)


def placement(x1: Any, x2: Any, out: Any) -> tuple[_interop.DeviceOperand, ...] | None:
    """The operands' GPU data, or None when every one of them is host data.

    Raises DeviceMismatchError for host and GPU data together, or data on two GPUs: never
    a silent copy (as in PyTorch and CuPy).
    """
    if all(x is None or type(x) is np.ndarray for x in (x1, x2, out)):  # the common case, at once
        return None
    found = {name: _interop.device_operand(x) if x is not None else None
             for name, x in (("x1", x1), ("x2", x2), ("out", out))}
    on_gpu = {name: op for name, op in found.items() if op is not None}
    if not on_gpu:
        return None
    host = [name for name, x in (("x1", x1), ("x2", x2), ("out", out))
            if x is not None and found[name] is None]
    if host:
        gpu = next(iter(on_gpu.items()))
        raise DeviceMismatchError(
            f"pyctk.matmul: {' and '.join(host)} {'is' if len(host) == 1 else 'are'} host data but "
            f"{gpu[0]} is on GPU {gpu[1].device}; pyctk never copies silently. Move it with "
            f"pyctk.asarray({host[0]}, device={gpu[1].device}), or bring the GPU data to the host "
            f"(np.asarray(...)).")
    devices = {op.device for op in on_gpu.values()}
    if len(devices) > 1:
        where = ", ".join(f"{name} on GPU {op.device}" for name, op in on_gpu.items())
        raise DeviceMismatchError(f"pyctk.matmul: the operands are on different GPUs ({where}); "
                                  f"copy them to one with pyctk.asarray(x, device=...)")
    return found["x1"], found["x2"], found["out"]


def matmul(a: _interop.DeviceOperand, b: _interop.DeviceOperand,
           out_operand: _interop.DeviceOperand | None, out: Any, loop: np.dtype,
           shapes: _shapes.Shapes, codes: tuple[int, int, int], stream: Any,
           plan_as: tuple | None = None) -> Any:
    """The product of GPU operands into ``out`` (or a new DeviceArray), enqueued on ``stream``
    (the ``stream=`` argument: None, a handle, or a stream object, which a new result keeps
    alive until its memory is freed).

    ``plan_as``: the options to keep this product's plan under (see ``repeat``), if it turns
    out to need no copy, temporary or wait; the caller passes them when there is no ``out``.
    """
    device, handle = a.device, _streams.handle(stream)
    with _contexts.using(device) as context:
        for operand in (a, b, out_operand):  # the producers' pending work comes first
            if operand is not None and operand.stream is not None:
                _streams.wait(handle, operand.stream)
        result = None
        if out_operand is None:
            result = _device_array.empty(shapes.result, loop, device, stream=stream)
            c = result._operand()
        else:
            c = _writable(out_operand, loop)
        c_layout = _layout.target(_result_view(c, shapes))
        if c_layout is None:
            raise UnsupportedError(
                "pyctk.matmul writes a GPU out= in place only when its matrices are row-major "
                "(unit column stride) and do not overlap one another; pass a C-contiguous out, "
                "or none and copy the result")
        if shapes.m and shapes.n and shapes.batch_count:  # k == 0 included: the C call writes zeros
            (a_layout, a_read, a_copy), (b_layout, b_read, b_copy) = (
                _matrices(a, loop, shapes, 0), _matrices(b, loop, shapes, 1))
            copies = [copy for copy in (a_copy, b_copy) if copy is not None]
            for copy in copies:  # made on their own (the legacy) stream
                _streams.wait(handle, copy._stream)
            temporary = _overlap_temporary(c, (a_read, b_read), loop, handle)
            target = c if temporary is None else temporary._operand()
            t_layout = c_layout if temporary is None else _layout.target(_result_view(target, shapes))
            desc = _library.GemmDesc(*codes, a_layout[0], b_layout[0], shapes.m, shapes.n,
                                     shapes.k, shapes.batch_count, a_layout[1], a_layout[2],
                                     b_layout[1], b_layout[2], t_layout.ld, t_layout.stride)
            _library.call("gpumatmul_gemm_device", context, desc, a_read.pointer, b_read.pointer,
                          target.pointer, handle)
            if plan_as is not None and not copies and temporary is None and all(
                    x.stream is None or _streams.same(handle, x.stream) for x in (a, b)):
                if len(_plans) >= _PLANS_KEPT:
                    _plans.clear()
                _plans[(operand_layout(a), operand_layout(b), handle, plan_as)] = Plan(
                    desc, result.shape, result.strides, result.dtype)
            if temporary is not None:
                _cudart.call("cudaMemcpyAsync", c.pointer, target.pointer, temporary.nbytes,
                             _cudart.DEVICE_TO_DEVICE, handle)
            for copy in copies:  # their memory is freed on their stream: after the product
                _streams.wait(copy._stream, handle)
    return result if result is not None else out


def _matrices(x: _interop.DeviceOperand, loop: np.dtype, shapes: _shapes.Shapes, position: int):
    """((transposed, ld, stack stride), the operand the C call reads, the copy made to get it
    or None) for operand ``position``: ``x`` itself where its dtype and strides allow."""
    copy = None
    if x.dtype != loop:  # a cast: through the host for now (no cast kernel yet)
        copy = _device_array.asarray(_device_array._wrap(x), dtype=loop)
        x = copy._operand()
    layout = _describe(x, shapes, position)
    if layout is None:  # strides that one pitch and one stack stride cannot say: a C-order copy
        copy = _device_array._copy(_device_array._wrap(x), x.device)
        x = copy._operand()
        layout = _describe(x, shapes, position)
    return layout, x, copy


def _describe(x: _interop.DeviceOperand, shapes: _shapes.Shapes, position: int):
    shape, strides = _shapes.stack_layout(x.shape, x.strides, shapes, position)
    strided = _layout.Strided(shape, strides, x.dtype.itemsize)
    return _layout.describe(_layout.broadcast(strided, shapes.batch))


def _result_view(c: _interop.DeviceOperand, shapes: _shapes.Shapes) -> _layout.Strided:
    """The result (or out) as the (*batch, m, n) stack the C call writes."""
    return _layout.Strided(*_shapes.stack_layout(c.shape, c.strides, shapes, _shapes.RESULT),
                           c.dtype.itemsize)


def _writable(out: _interop.DeviceOperand, loop: np.dtype) -> _interop.DeviceOperand:
    if out.readonly:
        raise ValueError("out is read-only: matmul cannot write its result into it")
    if out.dtype != loop:
        raise UnsupportedError(
            f"pyctk.matmul computes this product in {loop} and writes a GPU out= only of that "
            f"dtype (no cast kernel yet), not {out.dtype}; pass out of dtype {loop}")
    return out


def _bytes(x: _interop.DeviceOperand) -> tuple[int, int]:
    """The device addresses of the first and one past the last byte of ``x``."""
    low, high = _layout.span(x.shape, x.strides, x.dtype.itemsize)
    return x.pointer + low, x.pointer + high


def _overlap_temporary(c: _interop.DeviceOperand, inputs, loop: np.dtype, stream: int):
    """A C-contiguous temporary for the result when ``c`` overlaps an input the C call reads
    (its inputs and output must not overlap), else None. ``c`` must then be C-contiguous, so
    that one copy moves the temporary into it."""
    if not c.pointer:
        return None
    start, end = _bytes(c)
    for x in inputs:
        low, high = _bytes(x) if x.pointer else (0, 0)
        if low < end and start < high:
            if c.strides != _layout.contiguous_strides(c.shape, c.dtype.itemsize):
                raise UnsupportedError("pyctk.matmul: a GPU out= that overlaps an input must be "
                                       "C-contiguous")
            return _device_array.empty(c.shape, loop, c.device, stream=stream)
    return None
