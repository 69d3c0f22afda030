"""numpy.matmul's shape rules: 1-D promotion, stack broadcasting, the shape of ``out``, and
``axes=``, which says where each operand's matrices are.

Every rule raises NumPy's exception type (ValueError, or NumPy's AxisError and TypeError
for ``axes=``) for the shapes NumPy rejects.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .._arrays.layout import broadcast_shapes, shape_text

AxisError = getattr(np, "exceptions", np).AxisError  # numpy.exceptions is NumPy 1.25's


class Shapes(NamedTuple):
    """What a product of two stacks of matrices (and its ``out``) is made of."""

    batch: tuple[int, ...]  # the stack every product runs over: operands' and out's, broadcast
    m: int  # rows of the product (1 where absent)
    k: int
    n: int  # columns of the product (1 where absent)
    result: tuple[int, ...]  # with no out: batch, then the rows and columns that are not absent
    absent: tuple[bool, bool]  # rows, columns absent (a 1-D a, b; a short out): not in the result

    @property
    def batch_count(self) -> int:
        return math.prod(self.batch)


def matmul_shapes(
    a_shape: tuple[int, ...], b_shape: tuple[int, ...], out_shape: tuple[int, ...] | None = None
) -> Shapes:
    """The shapes of ``a @ b`` (into ``out``), or numpy.matmul's ValueError.

    NumPy's rules for a gufunc with flexible dimensions: a 1-D first operand
    is a row (a 1 prepended), a 1-D second operand a column (a 1 appended),
    and the axis added is not in the result. ``out`` takes part: an ``out``
    with fewer than 2 axes makes the rows (then the columns) absent for all
    operands, as in NumPy (``matmul(ones(4), ones((1, 4)), out=empty(()))``
    is a stack of one dot product). The remaining (stack) axes broadcast,
    together with ``out``'s, as in NumPy: ``out``'s stack may be larger than
    the operands' (they broadcast to it) or lack leading axes of length 1,
    but not be broadcast itself.

    Examples
    --------
    >>> matmul_shapes((1, 5, 3, 2), (6, 1, 2, 4))[:5]
    ((6, 5), 3, 2, 4, (6, 5, 3, 4))
    >>> matmul_shapes((3,), (3,)).result
    ()
    >>> matmul_shapes((3, 4), (4, 5), out_shape=(2, 3, 5)).batch
    (2,)
    """
    no_rows, no_cols = absent(len(a_shape), len(b_shape), None if out_shape is None else len(out_shape))
    m, k = (1, a_shape[-1]) if no_rows else a_shape[-2:]
    k_b, n = (b_shape[-1], 1) if no_cols else b_shape[-2:]
    if k != k_b:
        raise ValueError(
            f"matmul: shapes {a_shape} and {b_shape} are not aligned: {k} (last dim "
            f"of operand 0) != {k_b} (the dim of operand 1 that it multiplies)"
        )
    core = tuple(size for size, absent in ((m, no_rows), (n, no_cols)) if not absent)
    stacks = [a_shape[: len(a_shape) + no_rows - 2], b_shape[: len(b_shape) + no_cols - 2]]
    if out_shape is not None:
        if out_shape[len(out_shape) - len(core) :] != core:
            raise ValueError(
                f"matmul: out has shape {out_shape}; the product of {a_shape} and "
                f"{b_shape} needs (..., {', '.join(map(str, core))})"
            )
        stacks.append(out_shape[: len(out_shape) - len(core)])
    batch = stacks[0] if stacks.count(stacks[0]) == len(stacks) else _broadcast(stacks)
    # out's stack need not broadcast: it may lack leading axes of length 1, no more.
    if out_shape is not None and batch != (1,) * (len(batch) - len(stacks[-1])) + stacks[-1]:
        raise ValueError(  # NumPy's words, which code that checks the message matches
            f"non-broadcastable output operand with shape {shape_text(out_shape)} doesn't match "
            f"the broadcast shape {shape_text(batch + core)}"
        )
    return Shapes(batch, m, k, n, batch + core, (no_rows, no_cols))


def absent(a_ndim: int, b_ndim: int, out_ndim: int | None) -> tuple[bool, bool]:
    """Whether the rows and the columns of the product are absent, or ValueError for a 0-d
    operand. The signature is (n?,k),(k,m?)->(n?,m?): where an operand has too few axes,
    NumPy drops a flexible dimension (n: rows, m: columns) from every operand, out
    included, rows first."""
    for position, ndim in enumerate((a_ndim, b_ndim)):
        if not ndim:
            raise ValueError(
                f"matmul: input operand {position} is 0-d (a scalar); matmul needs "
                "arrays with at least 1 dimension (use * to multiply by a scalar)"
            )
    no_rows, no_cols = a_ndim == 1, b_ndim == 1
    if out_ndim is not None:
        short = 2 - no_rows - no_cols - out_ndim
        if short > 0 and not no_rows:
            no_rows, short = True, short - 1
        no_cols = no_cols or short > 0
    return no_rows, no_cols


def _broadcast(stacks: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The stacks broadcast together (called only where they differ)."""
    try:
        return broadcast_shapes(*stacks)
    except ValueError:
        raise ValueError(
            f"matmul: stack dimensions {' and '.join(map(str, stacks))} (the axes before the last two) do not broadcast"
        ) from None


RESULT = 2  # stack_layout's position for the result (or out); 0 and 1 are the operands


def stack_layout(
    shape: tuple[int, ...], strides: tuple[int, ...], shapes: Shapes, position: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The shape and strides of operand ``position`` (0 or 1), or of the result (RESULT), as the
    (*batch, rows, columns) stack the product reads or writes: the absent axes put back (a 1-D
    first operand is a (1, k) row, a 1-D second one a (k, 1) column), and for the result also
    the leading stack axes of length 1 that ``out`` may lack. An axis put back has length 1,
    so its stride is never used: 0."""
    lengths, steps = list(shape), list(strides)
    if shapes.absent[1] and position != 0:  # a column axis, last
        lengths.append(1)
        steps.append(0)
    if shapes.absent[0] and position != 1:  # a row axis, before the last
        lengths.insert(len(lengths) - 1, 1)
        steps.insert(len(steps) - 1, 0)
    if position == RESULT:
        missing = len(shapes.batch) + 2 - len(lengths)
        lengths, steps = [1] * missing + lengths, [0] * missing + steps
    return tuple(lengths), tuple(steps)


def as_matrices(x: np.ndarray, position: int, shapes: Shapes) -> np.ndarray:
    """Operand ``position`` (0 or 1), or the result (RESULT), as its stack_layout: a view, so
    that writing into the result's writes the result (inserting axes of length 1 never copies)."""
    return x.reshape(stack_layout(x.shape, x.strides, shapes, position)[0])


# ---------------------------------------------------------------------------
# axes=: where the core (matrix) axes of each operand and of the output are.


def core_axes(
    axes: Any, a_ndim: int, b_ndim: int, out_ndim: int | None
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The core axes of x1, x2 and the output named by ``axes=``, normalised (non-negative),
    with NumPy's exceptions for what NumPy's gufunc machinery refuses.

    ``axes`` is a list with an entry per operand and the output (the output's too, even
    for 1-D @ 1-D, whose entry is ``()``: matmul's signature gives the output core axes); an
    entry is a tuple of that operand's core axes in signature order, or a single int for an
    operand with one (a 1-D one).

    >>> core_axes([(0, 1), (-2, -1), (2, 1)], 3, 2, None)
    ((0, 1), (0, 1), (2, 1))
    """
    no_rows, no_cols = absent(a_ndim, b_ndim, out_ndim)
    counts = (2 - no_rows, 2 - no_cols, 2 - no_rows - no_cols)
    if out_ndim is None:
        out_ndim = max(a_ndim - counts[0], b_ndim - counts[1]) + counts[2]
    if not isinstance(axes, list):
        raise TypeError("axes should be a list.")
    if len(axes) != 3:  # the signature gives the output core axes, even where they are absent
        raise ValueError(
            "axes should be a list with an entry for all 3 inputs and outputs; entries "
            "for outputs can only be omitted if none of them has core axes."
        )
    # (a list, not a generator: PyPy 3.9 turns an error raised while unpacking one into its own TypeError)
    a, b, result = [
        _item(item, position, count, ndim)
        for position, (item, count, ndim) in enumerate(zip(axes, counts, (a_ndim, b_ndim, out_ndim)))
    ]
    return a, b, result


def _item(item: Any, position: int, count: int, ndim: int) -> tuple[int, ...]:
    """One entry of ``axes=``: operand ``position``'s ``count`` core axes, normalised."""
    if not isinstance(item, tuple):
        if count == 1:  # an operand with one core axis takes it as an int
            item = (item,)
        elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            raise AxisError(
                f"matmul: operand {position} has {count} core dimensions, but the axes item is a single integer."
            )
        else:
            raise TypeError(f"matmul: axes item {position} should be a tuple.")
    if len(item) != count:
        raise AxisError(
            f"matmul: operand {position} has {count} core dimensions, but {len(item)} "
            f"dimensions are specified by axes tuple."
        )
    normalised = tuple(_axis(axis, ndim) for axis in item)
    for axis in normalised:
        if normalised.count(axis) > 1:
            raise ValueError(f"axes item {position} has value {axis} repeated")
    return normalised


def _axis(axis: Any, ndim: int) -> int:
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError("an integer is required")
    index = operator.index(axis)
    if not -ndim <= index < ndim:
        raise AxisError(index, ndim)
    return index % ndim


def moved_last(ndim: int, core: Sequence[int]) -> list[int]:
    """The axis order that puts the ``core`` axes last, in their order: a transpose's axes."""
    return [axis for axis in range(ndim) if axis not in core] + list(core)


def moved_back(ndim: int, core: Sequence[int]) -> list[int]:
    """The axis order that moves the last ``len(core)`` axes to the places ``core`` names (the
    inverse of ``moved_last``): where the output's core axes go."""
    order = moved_last(ndim, core)
    return [order.index(axis) for axis in range(ndim)]
