"""Stage 2 of a product: resolve NumPy's dtype and shapes for the operands.

The loop dtype (``dtypes.loop_dtype``, NumPy's own resolution), its C code (TypeError for a
dtype only NumPy computes), and the shapes (``shapes.matmul_shapes``: 1-D promotion, stack
broadcasting, ``out``'s shape), each with NumPy's exception for what NumPy rejects.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import dtypes, shapes
from .describe import Operands
from .options import Options


class Problem(NamedTuple):
    """What a product computes, whatever the memory its operands are in."""

    loop: np.dtype        # the dtype it computes in (inputs are cast to it)
    code: int             # gpumatmul_dtype of ``loop``
    shapes: shapes.Shapes


def resolve(operands: Operands, options: Options) -> Problem:
    a, b, out = operands.a, operands.b, operands.out
    loop = dtypes.loop_dtype(a.dtype, b.dtype, None if out is None else out.dtype, options.dtype,
                             options.casting)
    problem_shapes = shapes.matmul_shapes(a.shape, b.shape, None if out is None else out.shape)
    return Problem(loop, dtypes.code(loop), problem_shapes)
