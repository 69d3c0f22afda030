"""What runs on a Dask worker: one block product through pyctk.matmul, and the sum of a
result block's partial products along k.

Top-level functions, so that Dask pickles them by name (a worker imports this module);
NumPy blocks in, NumPy blocks out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._matmul.api import matmul


def block_product(
    a: np.ndarray, b: np.ndarray, *, operands_dtype: np.dtype | None, options: dict[str, Any]
) -> np.ndarray:
    """``a @ b`` of two NumPy blocks by pyctk.matmul with ``options`` (its keywords), as the
    partial product dask's blockwise expects: the contracted k axis kept, of length 1,
    before the last.

    ``operands_dtype``, when given, is the product's own dtype, to which the operands are
    cast before they are multiplied in the wider dtype ``options["dtype"]`` (float16 and
    bfloat16 partials summed in float32, as NumPy's own loop sums).

    >>> block_product(np.ones((2, 3)), np.ones((3, 4)), operands_dtype=None,
    ...               options={}).shape                           # doctest: +GPU
    (2, 1, 4)
    """
    if operands_dtype is not None:
        a, b = a.astype(operands_dtype, copy=False), b.astype(operands_dtype, copy=False)
    return matmul(a, b, **options)[..., np.newaxis, :]


def kept(partial: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """The first step of dask's reduction, on each partial product: nothing to do."""
    return partial


def summed(partials: list[np.ndarray] | np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """The sum of partial products (a list, or one array, as dask's reduction gives them)
    of one result block; each has the k axis ``axis`` at length 1, which is dropped unless
    ``keepdims``.

    np.add in the partials' own dtype: integers wrap as numpy.matmul's do (in any order of
    addition), and for bool it is a logical or, matmul's sum of bools.

    >>> summed([np.ones((2, 1, 2), np.int8) * 100] * 3, (1,), False)
    array([[44, 44],
           [44, 44]], dtype=int8)
    """
    if isinstance(partials, np.ndarray):
        partials = [partials]
    total = partials[0] if len(partials) == 1 else np.add(partials[0], partials[1])
    for partial in partials[2:]:
        np.add(total, partial, out=total)  # total is ours: the inputs stay untouched
    return total if keepdims else total.squeeze(axis)
