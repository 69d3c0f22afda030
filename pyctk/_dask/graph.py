"""The graph of a product of dask arrays: a block product per (stack block, row block, k
block, col block), then each result block's partial products summed on the workers.

The same shape of graph as dask.array's own matmul (dask/array/routines.py): blockwise
with the k index kept in the output at one per k block and ``concatenate=False``, so that no
task ever holds all of k's blocks at once, then a tree reduction over that axis. The block
function is pyctk's (blocks.block_product), and the sum is in a dtype chosen for NumPy's
answer (api.matmul chooses it).
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np

from . import blocks


def product(
    x1: da.Array, x2: da.Array, partial: np.dtype, operands_dtype: np.dtype | None, options: dict[str, Any]
) -> da.Array:
    """``x1 @ x2`` for (*stack, m, k) and (*stack, k, n) arrays of equal rank whose stacks
    broadcast and whose chunks along k (and along the stack axes they share) agree: the
    result, (*stack, m, n), in the dtype ``partial`` its partial products are summed in.
    ``operands_dtype`` and ``options`` go to each block product (blocks.block_product)."""
    ndim = x1.ndim
    stack = tuple(range(ndim - 2))
    rows, k, cols = ndim - 2, ndim - 1, ndim  # blockwise's index names: any distinct ints
    partials = da.blockwise(
        blocks.block_product,
        stack + (rows, k, cols),
        x1,
        stack + (rows, k),
        x2,
        stack + (k, cols),
        adjust_chunks={k: 1},
        concatenate=False,
        dtype=partial,
        # the meta given, not found by calling the block function on empty blocks: that
        # would call pyctk.matmul here, in the client, which may have no GPU
        meta=np.empty((0,) * (ndim + 1), partial),
        token="pyctk-block-product",
        operands_dtype=operands_dtype,
        options=options,
    )
    if partials.numblocks[k] == 1:  # nothing to sum: the k axis goes, with no task
        return partials.squeeze(axis=k)
    return da.reduction(
        partials,
        blocks.kept,
        blocks.summed,
        combine=blocks.summed,
        axis=k,
        dtype=partial,
        concatenate=False,
        name="pyctk-k-sum",
        meta=np.empty((0,) * ndim, partial),
    )
