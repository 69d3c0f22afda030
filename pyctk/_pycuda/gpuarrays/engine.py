"""The element-wise engine: ``apply`` runs any ``operations`` row over any operands (GPUArrays,
other libraries' GPU arrays read in place, Python and NumPy scalars), broadcast as NumPy
broadcasts, into new arrays or ``out=`` (cast as NumPy's ``same_kind`` rule allows, also where
``out`` overlaps an operand).

Decisions are kept per operation and dtypes (``_plans``), launches per layout (``_kept``), so
a small operation costs one dictionary look-up, one allocation and one launch. Arrays are
known by ``base.GPUArrayBase``'s interface.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from ..._arrays import interop
from ..._arrays.layout import broadcast_shapes, broadcast_strides, extent, shape_text
from ..._cuda import streams
from ..kernels.c_types import dtype_to_ctype
from . import copying
from .base import GPUArrayBase
from .codegen import ELEMENTS, kernel
from .launching import Kernel, geometry, stream_handle
from .operations import COMPARISONS, Operation

# -- operands --------------------------------------------------------------------------


def is_gpuarray(value: Any) -> bool:
    return isinstance(value, GPUArrayBase)


_array_types: set[type] = set()  # GPUArray and the subclasses met so far: one set look-up each
_SCALARS = {int, float, complex, bool}  # Python scalars: keys as they are (int, float, complex weak)
_WEAK = (int, float, complex)


def _operands(values: Sequence[Any], handle: int) -> tuple[list[Any], Sequence[Any], Any]:
    """The operands as the engine reads them: ``(keys, operands, template)``. A key is the
    dtype of an array, a Python scalar's type, or a NumPy scalar's type; an operand is an
    array (GPUArray or another library's ``DeviceOperand``) or a scalar. ``template`` is the
    first GPUArray: results are made like it."""
    keys, operands, template = [], values, None
    for index, value in enumerate(values):
        kind = type(value)
        if kind in _array_types:
            keys.append(value.dtype)
            if template is None:
                template = value
        elif kind in _SCALARS:
            keys.append(kind)
        else:
            key, operand = _operand(value, handle)
            if operand is not value:
                operands = list(operands)
                operands[index] = operand
            elif template is None and type(value) in _array_types:
                template = value
            keys.append(key)
    if template is None:
        raise TypeError(
            "this operation needs a GPUArray operand: make one with "
            "pyctk.gpuarray.to_gpu(x) or pyctk.gpuarray.asarray(gpu_array)"
        )
    return keys, operands, template


def _operand(value: Any, handle: int) -> tuple[Any, Any]:
    """(key, operand) of a value that is not a known GPUArray type or a Python scalar."""
    if isinstance(value, np.generic):
        return type(value), value
    if is_gpuarray(value):
        _array_types.add(type(value))
        return value.dtype, value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return type(value[()]), value[()]
    operand = _foreign(value, handle)
    return operand.dtype, operand


def _foreign(value: Any, handle: int) -> interop.DeviceOperand:
    """Another library's GPU array, read in place, after its producer's pending work."""
    operand = interop.device_operand(value, handle)
    if operand is None:
        raise TypeError(
            f"{type(value).__name__} is not a GPU array or a scalar: copy host data to "
            f"the GPU first (pyctk.gpuarray.to_gpu(x))"
        )
    if operand.stream is not None:
        streams.wait(handle, operand.stream)
    return operand


_POINTER = operator.attrgetter("ptr")


def _layout(array: Any) -> tuple[int, tuple[int, ...], tuple[int, ...], int]:
    """(address, shape, byte strides, itemsize) of a GPUArray or a DeviceOperand."""
    if isinstance(array, interop.DeviceOperand):
        return array.pointer, array.shape, array.strides, array.dtype.itemsize
    return array.ptr, array.shape, array.strides, array.dtype.itemsize


# -- plans: what one operation on given dtypes compiles to ------------------------------


class _Plan:
    """An operation on given operand dtypes: the loop's types, the result dtypes, how
    scalars are passed, and its kernels (the contiguous one, and strided ones by layout)."""

    __slots__ = ("operation", "inputs", "results", "outputs", "arrays", "slots", "scalars", "contiguous")

    def __init__(self, operation: Operation, keys: tuple, outs: tuple | None) -> None:
        loop_inputs, results = operation.rule(tuple(_rule_dtype(k) for k in keys))
        outputs = results if outs is None else outs
        for result, out in zip(results, outputs):
            if not np.can_cast(result, out, "same_kind"):
                raise TypeError(
                    f"Cannot cast ufunc {operation.name!r} output from {result!r} to {out!r} "
                    f"with casting rule 'same_kind'"
                )
        for dtype in (*loop_inputs, *outputs, *[k for k in keys if isinstance(k, np.dtype)]):
            _ctype(dtype, operation)
        arrays = [isinstance(k, np.dtype) for k in keys]
        # (parameter dtype, loop dtype, is an array): an array is converted in the kernel,
        # a scalar on the host, into the loop's dtype
        self.inputs = tuple((k if array else loop, loop, array) for k, loop, array in zip(keys, loop_inputs, arrays))
        self.operation, self.results, self.outputs = operation, tuple(results), tuple(outputs)
        self.arrays = [index for index, array in enumerate(arrays) if array]
        self.slots = [len(outputs) + index for index in self.arrays]  # their kernel parameters
        self.scalars = [
            (index, _converter(loop, operation, index))
            for index, (loop, array) in enumerate(zip(loop_inputs, arrays))
            if not array
        ]
        self.contiguous = kernel(operation, self.inputs, self.results, self.outputs, 0, False)

    def strided(self, axes: int, wide: bool) -> Kernel:
        return kernel(self.operation, self.inputs, self.results, self.outputs, axes, wide)


_plans: dict[tuple, _Plan] = {}  # (operation, out's dtype or None, *operand keys) -> plan


def _rule_dtype(key: Any) -> Any:
    """What NumPy's promotion takes for an operand key: Python int, float, complex stay
    types (weak); Python bool is NumPy's bool."""
    return key if key in _WEAK else np.dtype(key)


def _ctype(dtype: np.dtype, operation: Operation) -> str:
    try:
        return dtype_to_ctype(dtype)
    except ValueError:
        raise TypeError(
            f"{operation.name} here reads or computes {dtype} (by NumPy's dtype rules), which "
            f"pyctk's kernels lack: convert the operands first, e.g. x.astype(numpy.float32)"
        ) from None


def _converter(dtype: np.dtype, operation: Operation, index: int) -> Callable[[Any], Any]:
    """How a scalar operand becomes a kernel argument of ``dtype`` (what ``struct`` packs)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return functools.partial(
            _integer, low=int(info.min), high=int(info.max), dtype=dtype, exponent=index == operation.integer_exponent
        )
    if dtype.kind == "c":
        return functools.partial(_complex_bytes, dtype.type)
    if dtype == np.float32:
        return np.float32  # NumPy's rounding, and its inf (and RuntimeWarning) beyond float32's range
    return bool if dtype.kind == "b" else float


def _complex_bytes(kind: type[np.complexfloating], value: Any) -> bytes:
    return kind(value).tobytes()


def _integer(value: Any, low: int, high: int, dtype: np.dtype, exponent: bool) -> int:
    value = int(value)
    if exponent and value < 0 and low < 0:  # (an unsigned loop: out of bounds, as NumPy says)
        raise ValueError("Integers to negative integer powers are not allowed.")
    if not low <= value <= high:
        raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
    return value


def _holding(value: int) -> type:
    """The NumPy scalar type that holds Python int ``value`` (exactly, up to 64 bits): for
    comparisons of integer arrays, which NumPy answers for any int (``uint8_array < 300``)."""
    if -(2**63) <= value < 2**63:
        return np.int64
    return np.uint64 if 0 <= value < 2**64 else np.float64


# -- the engine --------------------------------------------------------------------------------


def apply(
    operation: Operation, values: Sequence[Any], out: Any = None, stream: Any = None, allocator: Any = None
) -> Any:
    """Run ``operation`` over ``values`` (GPUArrays, other libraries' GPU arrays, scalars),
    broadcast together; the result is ``out`` or new arrays (one, or a tuple for several
    outputs) made like the first GPUArray operand (``allocator``: from it instead).

    Errors come before any GPU work: NumPy's TypeError for dtypes it has no loop for or an
    ``out`` it cannot cast to, ValueError for shapes that do not broadcast, OverflowError
    for Python ints out of bounds, TypeError for host arrays.
    """
    layouts = _layouts(operation, values) if out is None and stream is None and allocator is None else None
    if layouts is not None:
        kept = _kept.get(layouts)
        result = None if kept is None else kept.run(values)
        if result is not None:
            return result
    handle = 0 if stream is None else stream_handle(stream)
    keys, operands, template = _operands(values, handle)
    if out is not None and not is_gpuarray(out):
        raise TypeError(f"out must be a GPUArray, not {type(out).__name__}")
    key = (operation, None if out is None else out.dtype, *keys)
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = _Plan(operation, tuple(keys), None if out is None else (out.dtype,))
    arguments = operands
    if plan.scalars:
        arguments = list(operands)
        for index, convert in plan.scalars:
            try:
                arguments[index] = convert(operands[index])
            except OverflowError:
                if (
                    operation not in COMPARISONS
                    or keys[index] is not int
                    or not all(k.kind in "iu" for k in keys if isinstance(k, np.dtype))
                ):
                    raise
                held = _holding(operands[index])(operands[index])  # NumPy compares integers with any int
                return apply(operation, [*values[:index], held, *values[index + 1 :]], out, stream, allocator)
    shape = template.shape
    for index in plan.arrays:
        if operands[index].shape != shape:
            shape = broadcast_shapes(*[operands[index].shape for index in plan.arrays])
            break
    if out is None:
        outputs = [_new(template, shape, dtype, allocator) for dtype in plan.outputs]
    else:
        shape = _output_shape(out.shape, shape)
        outputs = [out]
        arguments = list(arguments)
        for index in plan.arrays:
            arguments[index] = _apart(operands[index], out, shape, template, handle)
    n = outputs[0].size
    grid = _launch(plan, outputs, arguments, shape, n, handle) if n else None
    if grid and layouts is not None and operands is values and shape == template.shape and len(outputs) == 1:
        if len(_kept) >= _KEPT:
            _kept.clear()
        _kept[layouts] = _Kept(plan, values, template, *grid, n)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


# -- kept launches -----------------------------------------------------------------------------
#
# An operation on new results whose operands have layouts met before (GPUArrays of the same types,
# dtypes, shapes and strides, scalars of the same types), launched then as one contiguous kernel,
# is launched as it was: what ``apply`` decided is a function of those layouts alone, and deciding
# it again was 8-10% of a small operation's host time (a + b on 1000 float32: 4.1 us against 3.8
# on a 2-core host with the driver's launch stubbed out; docs/kernel-log.md, step 13).

_KEPT = 1024  # layouts kept: past this they start again


class _Kept:
    """A launch kept for ``apply``'s operands of one layout (an operation of one result):
    ``run`` makes the result and launches the contiguous kernel, with what was decided then
    fixed here."""

    __slots__ = ("kernel", "converts", "make", "template", "dtype", "blocks", "threads", "n")

    def __init__(self, plan: _Plan, values: Sequence[Any], template: Any, blocks: int, threads: int, n: int) -> None:
        (self.dtype,) = plan.outputs
        self.kernel, self.blocks, self.threads, self.n = plan.contiguous, blocks, threads, n
        scalars = dict(plan.scalars)
        # each operand's converter, None for an array; None for them all where all are arrays
        self.converts = tuple(scalars.get(index) for index in range(len(values))) if scalars else None
        self.template = _index_of(template, values)  # the operand the result is made like
        # (the function itself: the template's type is in the key)
        kind = type(template)
        self.make = kind._same_layout if template._keeps_layout(self.dtype) else kind._new_like_me

    def run(self, values: Sequence[Any]) -> Any:
        """``apply``'s result for ``values`` of these layouts, or None where a scalar does not
        fit the loop's dtype (``apply`` says what NumPy does then)."""
        # (.ptr without its property: these arrays are not empty, so gpudata is their memory)
        if self.converts is None:  # (a + b: the common case, 0.15 us sooner)
            arguments = [int(value.gpudata) for value in values]
        else:
            try:
                arguments = [
                    int(value.gpudata) if convert is None else convert(value)
                    for convert, value in zip(self.converts, values)
                ]
            except OverflowError:
                return None
        result = self.make(values[self.template], self.dtype)
        self.kernel(self.blocks, self.threads, 0, int(result.gpudata), *arguments, self.n)
        return result


_kept: dict[tuple, _Kept] = {}


def _index_of(array: Any, values: Sequence[Any]) -> int:
    """Where ``array`` itself is in ``values`` (``list.index`` would compare arrays by value)."""
    return next(index for index, value in enumerate(values) if value is array)


def _layouts(operation: Operation, values: Sequence[Any]) -> tuple | None:
    """``_kept``'s key of ``operation`` on ``values``: each GPUArray's type, dtype, shape and
    strides, each scalar's type; None where another operand (another library's array, a 0-d
    host array) leaves it to ``apply``."""
    key: list[Any] = [operation]
    for value in values:
        kind = type(value)
        if kind in _array_types:
            key += kind, value.dtype, value.shape, value.strides
        elif kind in _SCALARS or issubclass(kind, np.generic):
            key.append(kind)
        else:
            return None
    return tuple(key)


def _new(template: Any, shape: tuple[int, ...], dtype: np.dtype, allocator: Any) -> Any:
    """A new result: like ``template`` where it has the result's shape (its memory order)."""
    if allocator is not None:
        return type(template)(shape, dtype, allocator)
    return template._new_like_me(dtype) if shape == template.shape else template._new(shape, dtype)


def _output_shape(out: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """``out``'s shape, which the operands' broadcast ``shape`` must broadcast to (NumPy's rule)."""
    try:
        full = broadcast_shapes(out, shape)
    except ValueError:
        full = shape
    if full != out:
        raise ValueError(
            f"non-broadcastable output operand with shape {shape_text(out)} doesn't match "
            f"the broadcast shape {shape_text(full)}"
        )
    return out


def _apart(operand: Any, out: Any, shape: tuple[int, ...], template: Any, handle: int) -> Any:
    """``operand``, or a copy of it where it overlaps ``out`` other than element for element
    (``x[1:] += x[:-1]``): NumPy reads operands as if copied before it writes."""
    if operand is out:
        return operand
    pointer, own, strides, itemsize = _layout(operand)
    low, high = extent(pointer, own, strides, itemsize)
    out_low, out_high = extent(out.ptr, out.shape, out.strides, out.itemsize)
    if not (low < out_high and out_low < high):
        return operand
    steps = broadcast_strides(own, strides, shape)
    if (
        pointer == out.ptr
        and itemsize == out.itemsize
        and all(a == b for a, b, length in zip(steps, out.strides, shape) if length > 1)
    ):
        return operand  # out's own elements, each read before it is written
    copy = template._new(own, operand.dtype)
    copying.copy_strided(copy.ptr, copy.strides, pointer, strides, own, itemsize, handle)
    return copy


def _same_order(flags: Any, contiguous: Any) -> bool:
    """Whether an array of ``flags`` is contiguous in the memory order of a contiguous array."""
    return flags.c_contiguous if contiguous.c_contiguous else flags.f_contiguous


def _launch(
    plan: _Plan, outputs: list[Any], arguments: Sequence[Any], shape: tuple[int, ...], n: int, handle: int
) -> tuple[int, int] | None:
    """Launch ``plan``'s kernel over ``n`` elements: the contiguous one where every array
    walks its memory in order with the outputs, else a strided one. The grid (blocks,
    threads) where it was the contiguous one for the arrays' layouts as they are (not
    merged), else None."""
    values = [*map(_POINTER, outputs), *arguments]  # the kernel's parameters, in order
    first = outputs[0]
    if first.flags.forc:
        strides = first.strides
        for slot in plan.slots:
            array = values[slot]
            # the output's strides: its layout (the usual case); else the same memory order
            if (
                type(array) not in _array_types
                or array.shape != shape
                or (array.strides != strides or array.itemsize != first.itemsize)
                and not _same_order(array.flags, first.flags)
            ):
                break
            values[slot] = array.ptr
        else:
            grid = geometry(-(-n // ELEMENTS))  # ELEMENTS a thread
            plan.contiguous(*grid, handle, *values, n)
            return grid
    layouts = [*map(_layout, outputs), *[_layout(arguments[index]) for index in plan.arrays]]
    lengths, merged = copying.merged_axes(
        shape, [broadcast_strides(own, strides, shape) for _, own, strides, _ in layouts]
    )
    for slot, layout in zip(range(len(outputs)), layouts):
        values[slot] = layout[0]
    for slot, layout in zip(plan.slots, layouts[len(outputs) :]):
        values[slot] = layout[0]
    if len(lengths) <= 1 and all(not m or m[0] == layout[3] for m, layout in zip(merged, layouts)):
        plan.contiguous(*geometry(-(-n // ELEMENTS)), handle, *values, n)
        return None
    if len(lengths) > copying.MAX_AXES:
        raise ValueError(
            f"an operation over {len(lengths)} axes that cannot be merged; pyctk takes up to "
            f"{copying.MAX_AXES}: make an operand contiguous first (x.copy())"
        )
    table = np.array([lengths, *merged], dtype=np.int64).tobytes()
    blocks, threads = geometry(n)
    plan.strided(len(lengths), n >= 2**32)(blocks, threads, handle, *values, table, n)
    return None
