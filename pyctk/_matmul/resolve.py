"""Stage 2 of a product: resolve NumPy's dtype and shapes for the operands.

The loop dtype (``dtypes.loop_dtype``, NumPy's own resolution), its C code (TypeError for a
dtype only NumPy computes), ``axes=`` (each operand, and ``out``, then seen with its
matrices in its last two axes, as without it), and the shapes (``shapes.matmul_shapes``:
1-D promotion, stack broadcasting, ``out``'s shape), in NumPy's order, each with NumPy's
exception for what NumPy rejects.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import dtypes, shapes
from .describe import Operands
from .options import NOT_GIVEN, Options


class Problem(NamedTuple):
    """What a product computes, whatever the memory its operands are in."""

    loop: np.dtype  # the dtype it computes in and returns
    code: int  # gpumatmul_dtype of ``operand``
    shapes: shapes.Shapes
    operands: tuple[np.dtype, np.dtype]  # the dtypes the C call reads A and B in (cast to them)


def resolve(operands: Operands, options: Options, axes: Any = NOT_GIVEN) -> tuple[Operands, Problem]:
    """The operands as the product sees them (``axes=`` applied) and what it computes."""
    a, b, out = operands.a, operands.b, operands.out
    loop = dtypes.loop_dtype(a.dtype, b.dtype, None if out is None else out.dtype, options.dtype, options.casting)
    if axes is not NOT_GIVEN:
        operands = _with_axes(operands, axes)
        a, b, out = operands.a, operands.b, operands.out
    problem_shapes = shapes.matmul_shapes(a.shape, b.shape, None if out is None else out.shape)
    a_read, b_read, code = dtypes.operand_code(a.dtype, b.dtype, loop, options.backend, options.precision)
    return operands, Problem(loop, code, problem_shapes, (a_read, b_read))


def _with_axes(operands: Operands, axes: Any) -> Operands:
    """The operands and out seen with their core axes (``axes=``) last, as NumPy's gufunc
    machinery sees them; the output's core axes are kept for wrap to put a new result's
    there."""
    a, b, out = operands.a, operands.b, operands.out
    core = shapes.core_axes(axes, len(a.shape), len(b.shape), None if out is None else len(out.shape))
    a, b = (_transposed(x, shapes.moved_last(len(x.shape), axes_of_x)) for x, axes_of_x in ((a, core[0]), (b, core[1])))
    if out is not None:
        out = _transposed(out, shapes.moved_last(len(out.shape), core[2]))
    return operands._replace(a=a, b=b, out=out, out_axes=core[2])


def _transposed(x: Any, order: list[int]) -> Any:
    """``x`` (a NumPy array or a DeviceOperand) with its axes in ``order``: a view."""
    if isinstance(x, np.ndarray):
        return x.transpose(order)
    return x._replace(shape=tuple(x.shape[i] for i in order), strides=tuple(x.strides[i] for i in order))
