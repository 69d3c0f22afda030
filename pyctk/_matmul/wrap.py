"""Stage 5 of a product: wrap the result as the caller gets it.

A temporary is moved into ``out`` (cast as ``casting=`` allowed: NumPy's copyto on the
host, a copy kernel on the GPU, on the product's stream), and ``out=`` itself is returned;
a new result has its core axes where ``axes=`` puts them (a view),
and is a NumPy scalar for host 1-D @ 1-D, as in NumPy; a new GPU result is the DeviceArray
the C call allocated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._arrays import convert
from . import shapes
from .describe import Operands
from .options import Options
from .plan import NEW, TEMPORARY, Plan
from .resolve import Problem


def wrap(operands: Operands, problem: Problem, plan: Plan, options: Options, written: Any) -> Any:
    if plan.write == TEMPORARY:
        _into_out(operands, problem, options, written)
    if plan.write != NEW:
        return operands.out_given
    if operands.out_axes is not None:
        written = written.transpose(shapes.moved_back(written.ndim, operands.out_axes))
    if operands.subclassed is not None:
        return _as_numpy_wraps(operands.subclassed, written)
    if operands.device is None and written.ndim == 0:
        return written[()]
    return written


_WRAP_TAKES_RETURN_SCALAR = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def _as_numpy_wraps(inputs: tuple[Any, Any], result: np.ndarray) -> Any:
    """A new host result as NumPy's ufuncs return it where an operand is an ndarray subclass:
    made by the ``__array_wrap__`` of the subclass operand of the highest
    ``__array_priority__`` (the first of equals), given the call as its context (a
    MaskedArray reads its operands' masks there, np.matrix keeps two axes)."""
    wrapper = max(
        (x for x in inputs if isinstance(x, np.ndarray) and type(x) is not np.ndarray),
        key=lambda x: x.__array_priority__,
    )
    context = (np.matmul, inputs, 0)
    if _WRAP_TAKES_RETURN_SCALAR:
        return wrapper.__array_wrap__(result, context, result.ndim == 0)
    return wrapper.__array_wrap__(result, context)


def _into_out(operands: Operands, problem: Problem, options: Options, temporary: Any) -> None:
    if operands.device is None:
        np.copyto(operands.out, temporary, casting=options.casting)
    else:
        convert.copy(
            _as_stack(operands.out, problem), _as_stack(temporary, problem), operands.device, options.stream_handle
        )


def _as_stack(x: Any, problem: Problem) -> Any:
    """A GPU ``out`` or temporary as the (*batch, m, n) stack the product writes: the same
    memory, the absent axes put back."""
    shape, strides = shapes.stack_layout(x.shape, x.strides, problem.shapes, shapes.RESULT)
    return x._replace(shape=shape, strides=strides)
