"""Strides and layouts: what an array's memory looks like, and how stacks of matrices are
described to libgpumatmul's strided-batched calls.

The C calls read matrix i of a stack at ``pointer + i * stride`` (elements), each
matrix row-major with a leading dimension, or transposed. This module finds that
description for an array's own memory (host or GPU: ``Strided`` says what the rules
read), and says when there is none, so that the caller copies.
"""

from __future__ import annotations

import ctypes
import math
import operator
import platform
import reprlib
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .arguments import integer


def contiguous_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """Byte strides of a C-contiguous array (what NULL strides mean in DLPack).

    >>> contiguous_strides((2, 3), 4)
    (12, 4)
    """
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def is_c_contiguous(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> bool:
    """Whether an array of ``shape`` and byte ``strides`` lies in C order without gaps
    (axes of length 1 may have any stride; an empty array is contiguous)."""
    return 0 in shape or all(
        extent == 1 or stride == expected
        for extent, stride, expected in zip(shape, strides, contiguous_strides(shape, itemsize))
    )


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy's broadcast shape of ``shapes``, or ValueError with the message of NumPy's ufuncs.

    (In Python: ``np.broadcast_shapes`` costs microseconds, which an element-wise operation's
    launch cannot spare.)

    >>> broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    ndim = max(map(len, shapes), default=0)
    result = []
    for axis in range(-ndim, 0):
        lengths = {shape[axis] for shape in shapes if len(shape) >= -axis} - {1}
        if len(lengths) > 1:
            listed = " ".join(shape_text(shape) for shape in shapes)
            raise ValueError(f"operands could not be broadcast together with shapes {listed} ")
        result.append(lengths.pop() if lengths else 1)
    return tuple(result)


def shape_text(shape: Sequence[int]) -> str:
    """A shape as NumPy's messages write it: ``(3,)``, ``(2,3)``."""
    return str(tuple(shape)).replace(" ", "")


def broadcast_strides(shape: Sequence[int], strides: Sequence[int], to: Sequence[int]) -> tuple[int, ...]:
    """Byte strides of an array of ``shape`` viewed broadcast to the shape ``to`` (which the
    caller checked it broadcasts to): 0 along the axes it lacks or repeats, as
    ``np.broadcast_to`` gives them.

    >>> broadcast_strides((3, 1), (8, 8), (2, 3, 4))
    (0, 8, 0)
    """
    lead = len(to) - len(shape)
    return (0,) * lead + tuple(0 if own == 1 else stride for own, stride in zip(shape, strides))


def index_view(
    shape: Sequence[int], strides: Sequence[int], key: Any, refusal: str
) -> tuple[list[int], list[int], int]:
    """(shape, byte strides, byte offset of element 0) of the view NumPy's basic indexing
    ``x[key]`` selects: integers, slices of any step, ``...`` and None.

    ``refusal`` is the IndexError's text for any other index (arrays, lists, booleans),
    saying what the caller's array offers instead.

    >>> index_view((3, 4), (32, 8), (slice(None, None, -1), None, 1), "")
    ([3, 1], [-32, 0], 72)
    """
    key = key if isinstance(key, tuple) else (key,)
    ellipses = sum(k is Ellipsis for k in key)
    indexed = sum(k is not None and k is not Ellipsis for k in key)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if indexed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but {indexed} were indexed")
    rest = [slice(None)] * (len(shape) - indexed)
    expanded = [part for k in key for part in (rest if k is Ellipsis else [k])]
    expanded += [] if ellipses else rest

    new_shape, new_strides, offset, axis = [], [], 0, 0
    for k in expanded:
        if k is None:  # a new axis of length 1
            new_shape.append(1)
            new_strides.append(0)
            continue
        extent, stride = shape[axis], strides[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(extent)
            length = len(range(start, stop, step))
            if not length:  # as NumPy: an empty axis starts at 0 with step 1 (offset 0)
                start, step = 0, 1
            offset += start * stride
            new_shape.append(length)
            new_strides.append(stride * step)
        else:
            index = _integer_index(k, refusal)
            if not -extent <= index < extent:
                raise IndexError(f"index {index} is out of bounds for axis {axis} with size {extent}")
            offset += (index % extent) * stride
        axis += 1
    return new_shape, new_strides, offset


def _integer_index(key: Any, refusal: str) -> int:
    """An integer index, or IndexError(``refusal``) for anything basic indexing does not take
    (a boolean is NumPy's mask, not an integer)."""
    if not isinstance(key, (bool, np.bool_)):
        try:
            return operator.index(key)
        except TypeError:
            pass
    raise IndexError(f"{refusal}; got {key!r}")


def permutation(axes: Sequence[Any], ndim: int) -> list[int]:
    """The axes of a transpose, negative ones counted from the end, or ValueError for what is
    not a permutation of ``ndim`` axes.

    >>> permutation((-1, 0), 2)
    [1, 0]
    """
    order = [operator.index(axis) for axis in axes]
    if not all(-ndim <= axis < ndim for axis in order) or sorted(axis % ndim for axis in order) != list(range(ndim)):
        raise ValueError(f"axes {tuple(order)} are not a permutation of the {ndim} axes of this array")
    return [axis % ndim for axis in order]


def extent(pointer: int, shape: Sequence[int], strides: Sequence[int], itemsize: int) -> tuple[int, int]:
    """The device addresses [low, high) an array's bytes lie in (empty for no elements): two
    arrays share memory only if these overlap.

    >>> extent(1000, (2, 3), (-24, 8), 8)
    (976, 1024)
    """
    if 0 in shape:
        return pointer, pointer
    low, high = span(shape, strides, itemsize)
    return pointer + low, pointer + high


def span(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> tuple[int, int]:
    """Byte offsets, from element 0, of the first and one past the last byte of a non-empty array."""
    low = sum(stride * (extent - 1) for extent, stride in zip(shape, strides) if stride < 0)
    high = sum(stride * (extent - 1) for extent, stride in zip(shape, strides) if stride > 0)
    return low, high + itemsize


# ---------------------------------------------------------------------------
# Other libraries' arrays (the CUDA Array Interface, DLPack): what they declare is checked
# before pyctk computes with it, here for both.

MAX_NDIM = 64  # NumPy's limit on an array's axes (NPY_MAXDIMS since NumPy 2.0)
_INT64_MAX = (1 << 63) - 1  # what the kernels' 64-bit offsets and counts hold
_INT64_MIN = -(1 << 63)
_ADDRESS_END = 1 << 64  # a pointer is 64 bits


class Foreign(NamedTuple):
    """An array another library described, checked: its layout, and the bytes it can touch."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]  # bytes
    low: int  # address of the lowest byte it can touch
    high: int  # one past the highest (low == high: no elements, no bytes)


def checked_ndim(ndim: int, source: str) -> int:
    """``ndim`` if it is 0 to ``MAX_NDIM``, else ValueError naming ``source`` (checked before a
    DLPack tensor's shape is read: its ndim says how many int64s to read)."""
    if not 0 <= ndim <= MAX_NDIM:
        raise ValueError(f"{source} has ndim {ndim}: pyctk takes 0 to {MAX_NDIM} axes, as NumPy")
    return ndim


def foreign_layout(source: str, pointer: int, shape: Any, strides: Any, itemsize: int) -> Foreign:
    """Check what another library says of an array, and the bytes it spans, before any use.

    Parameters
    ----------
    source : str
        Who said it, for the messages ("__cuda_array_interface__", "DLPack tensor").
    pointer : int
        The address of element 0.
    shape : sequence of int
        Non-negative ints (not bools), at most ``MAX_NDIM`` of them, each and their
        product (of the non-zero ones, as NumPy counts) within int64.
    strides : sequence of int or None
        Byte steps, one an axis, each within int64; negative ones are valid, as in NumPy.
        None: C-contiguous.
    itemsize : int
        Bytes an element.

    Returns
    -------
    Foreign
        The shape and byte strides as tuples of ints, and the lowest and one past the
        highest address the array can touch.

    Raises
    ------
    TypeError
        A shape or strides that is not a sequence of ints, or an entry that is not an int.
    ValueError
        Too many axes, a negative extent, strides of another length than the shape, a NULL
        pointer with elements, or a count, stride or byte range that 64 bits cannot hold.

    Examples
    --------
    >>> foreign_layout("x", 1000, (2, 3), (-24, 8), 8)
    Foreign(shape=(2, 3), strides=(-24, 8), low=976, high=1024)
    >>> foreign_layout("x", 1000, (3, 3), (2**62, 8), 8)
    Traceback (most recent call last):
    ...
    ValueError: x's bytes would run from 1000 to 9223372036854776832: addresses must lie within 0 and 2**63 - 1
    """
    dims = _int_tuple(shape, source, "shape")
    for axis, extent in enumerate(dims):
        if not 0 <= extent <= _INT64_MAX:
            raise ValueError(f"{source} 'shape' entry {axis} is {extent}: extents must be from 0 to 2**63 - 1")
    if math.prod(extent for extent in dims if extent) > _INT64_MAX:
        raise ValueError(f"{source} 'shape' {dims} has more than 2**63 - 1 elements")
    if strides is None:  # C order, whose steps can pass 64 bits too ((0, 2**62) of 16 bytes)
        steps = contiguous_strides(dims, itemsize)
    else:
        steps = _int_tuple(strides, source, "strides")
        if len(steps) != len(dims):
            raise ValueError(
                f"{source} 'strides' {reprlib.repr(steps)} has {len(steps)} entries "
                f"for the {len(dims)} axes of its shape"
            )
    for axis, stride in enumerate(steps):
        if not _INT64_MIN <= stride <= _INT64_MAX:
            raise ValueError(f"{source} 'strides' entry {axis} is {stride} bytes: 64 bits cannot hold it")
    if not 0 <= pointer < _ADDRESS_END:
        raise ValueError(f"{source} 'data' is {pointer}: an address is from 0 to 2**64 - 1")
    if 0 in dims:
        return Foreign(dims, steps, pointer, pointer)
    if not pointer:
        raise ValueError(f"{source} 'data' is NULL (0), but its shape {dims} has elements")
    # Python's ints do not overflow, and each sum of span() adds terms of one sign: if any
    # product or partial sum left 64 bits, the total does, so checking the totals is 64-bit
    # arithmetic checked at every step.
    low, high = span(dims, steps, itemsize)
    if not (0 <= pointer + low and pointer + high <= _INT64_MAX):
        raise ValueError(
            f"{source}'s bytes would run from {pointer + low} to {pointer + high}: "
            f"addresses must lie within 0 and 2**63 - 1"
        )
    return Foreign(dims, steps, pointer + low, pointer + high)


def _int_tuple(values: Any, source: str, field: str) -> tuple[int, ...]:
    """``values`` (a tuple or list of at most ``MAX_NDIM``, counted before any is read) as a
    tuple of ints; TypeError or ValueError naming the field otherwise."""
    if not isinstance(values, (tuple, list)):
        raise TypeError(f"{source} '{field}' must be a tuple of ints, not {type(values).__name__}")
    checked_ndim(len(values), source)
    return tuple(integer(value, f"{source} '{field}' entry {axis} must be an int") for axis, value in enumerate(values))


class Strided(NamedTuple):
    """What the layout rules read of an array: enough for GPU data that has no ndarray."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]  # bytes
    itemsize: int


def broadcast(x: Strided, batch: tuple[int, ...]) -> Strided:
    """``x`` (..., rows, cols) broadcast to the stack ``batch``: the axes it lacks or has of
    length 1 get stride 0, as ``np.broadcast_to`` gives them."""
    stack = len(x.shape) - 2
    strides = broadcast_strides(x.shape[:stack], x.strides[:stack], batch) + x.strides[stack:]
    return Strided(tuple(batch) + x.shape[stack:], strides, x.itemsize)


def describe(x: Strided) -> tuple[bool, int, int] | None:
    """(transposed, ld, stack stride) of a stack already broadcast, or None if the C call
    cannot read it in place.

    The matrices (last two axes) are read in place when their column stride is one
    element (row-major, the row stride being the leading dimension) or their row stride
    is (column-major: passed transposed). The stack axes collapse into the one stride
    the C call takes: axes of length 1 do not count (their stride is never used); all
    strides 0 (one matrix broadcast to the whole stack, e.g. ``b`` in (10, 3, 4) @ (4, 5))
    give stride 0; strides that chain C-contiguously (each axis's stride is the next
    one's times the next length, as in any C-ordered stack, whatever the padding between
    matrices) give the innermost stride. Anything else (negative strides, steps in both
    matrix axes, broadcasting that interleaves zero strides with the stack's own) is None.
    """
    layout, stride = _core_layout(x), _stack_stride(x)
    return None if layout is None or stride is None else (*layout, stride)


# How the C call reads a stack of matrices: in place, from a C-ordered copy of the array,
# or from a C-ordered copy of the array broadcast to the whole stack.
IN_PLACE, COPY, COPY_STACK = "in place", "copy", "copy of the stack"


class Reading(NamedTuple):
    """How the C call reads a stack of matrices (counts in elements, not bytes)."""

    copy: str  # IN_PLACE, COPY or COPY_STACK
    transposed: bool  # stored as the transpose of row-major (column-major data)
    ld: int  # leading dimension: elements from one stored row to the next, >= 1
    stride: int  # elements from one matrix of the stack to the next; 0: the same matrix


def reading(x: Strided, batch: tuple[int, ...], copied: bool = False) -> Reading:
    """How the C call reads ``x`` (..., rows, cols) broadcast to the stack ``batch``: in place
    where its strides allow (``describe``), else from a C-ordered copy of ``x`` where that
    broadcasts to a stack the call reads, else from a C-ordered copy of the broadcast stack
    (``a`` in (1, 5, 3, 2) @ (6, 1, 2, 4), whose stack strides (0, s) no one stride says).
    ``copied``: ``x`` is copied anyway (to cast it), so in place is not a choice.

    >>> reading(Strided((5, 3, 2), (24, 8, 4), 4), (6, 5))
    Reading(copy='copy of the stack', transposed=False, ld=2, stride=6)
    """
    if not copied:
        described = describe(broadcast(x, batch))
        if described is not None:
            return Reading(IN_PLACE, *described)
    described = describe(broadcast(c_ordered(x.shape, x.itemsize), batch))
    if described is not None:
        return Reading(COPY, *described)
    stack = describe(c_ordered(batch + x.shape[-2:], x.itemsize))
    assert stack is not None  # (a C-ordered stack is always read in place)
    return Reading(COPY_STACK, *stack)


def c_ordered(shape: tuple[int, ...], itemsize: int) -> Strided:
    """An array of ``shape`` laid out C-contiguously: what a C-ordered copy looks like."""
    return Strided(shape, contiguous_strides(shape, itemsize), itemsize)


def target(c: Strided) -> tuple[int, int] | None:
    """(ld, stack stride) of the stack ``c`` (..., m, n) as the C call's output, or None if it
    cannot be written in place.

    The C call writes row-major matrices that must not overlap one another: a
    column stride of one element and a stack stride of at least m * ld.
    """
    layout, stride = _core_layout(c), _stack_stride(c)
    if layout is None or layout[0] or stride is None:
        return None
    m, ld = c.shape[-2], layout[1]
    if math.prod(c.shape[:-2]) > 1 and stride < m * ld:  # matrices that overlap
        return None
    return ld, stride


def _core_layout(x: Strided) -> tuple[bool, int] | None:
    """(transposed, ld) of the matrices in x's last two axes, or None if a copy is needed."""
    rows, cols = x.shape[-2:]
    steps = [s // x.itemsize if s % x.itemsize == 0 else 0 for s in x.strides[-2:]]
    row_step = steps[0] if rows > 1 else max(cols, 1)  # a length-1 axis's stride is never used
    col_step = steps[1] if cols > 1 else 1
    if col_step == 1 and row_step >= max(cols, 1):
        return False, row_step
    if row_step == 1 and col_step >= max(rows, 1):
        return True, col_step
    return None


def _stack_stride(x: Strided) -> int | None:
    """The one stride (elements) that steps through x's stack axes in C order, or None."""
    axes = [(size, stride) for size, stride in zip(x.shape[:-2], x.strides[:-2]) if size > 1]
    if not axes:  # one matrix (the common case: return at once)
        return 0
    if any(stride < 0 or stride % x.itemsize for _, stride in axes):
        return None
    if all(stride == 0 for _, stride in axes):
        return 0
    if any(outer != inner * size for (_, outer), (size, inner) in zip(axes, axes[1:])):
        return None
    return axes[-1][1] // x.itemsize


# PyPy's ctypes may copy a foreign buffer rather than point into it: there, the plain way.
_BUFFER_ADDRESSES = platform.python_implementation() == "CPython"


def address(array: np.ndarray) -> int:
    """The address of ``array``'s first element, for a C call.

    ``array.ctypes.data`` makes a helper object each time, about 1 us: a third of what
    Python adds to a repeated 16 x 16 product of three arrays. A writable C-contiguous
    array's buffer gives the same address in a quarter of the time; other arrays take
    the plain way.

    >>> a = np.ones((2, 3))
    >>> address(a) == a.ctypes.data and address(a.T) == a.T.ctypes.data
    True
    """
    if _BUFFER_ADDRESSES:
        try:
            return ctypes.addressof(ctypes.c_char.from_buffer(array))  # type: ignore[arg-type]  # (an ndarray is a buffer; NumPy's stubs do not say so)
        except (TypeError, ValueError, BufferError):  # read-only, or not C-contiguous
            pass
    return array.ctypes.data
