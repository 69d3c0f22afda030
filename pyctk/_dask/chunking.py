"""The blocks a product of dask arrays is cut into: the sizes suggested for a GPU
(``suggest_chunks``), and the rule by which pyctk.dask.matmul combines chunks too small for a
GPU to be worth it without ever splitting chunks chosen larger (``planned``).

One block product is one pyctk.matmul call on a worker: a (rows x k) block of x1 times a
(k x cols) block of x2, for a block of matrices along the stack axes. Its operands and
result should fit a share of the GPU's memory, so that the product need not stream (it
could: pyctk.matmul streams products larger than the GPU, so nothing here is a hard limit),
and each side should be large: a GPU multiplies matrices smaller than about MIN_BLOCK per
side far below its rate. Pure Python and NumPy: no dask, no GPU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Callable, NamedTuple

import numpy as np
from numpy.typing import DTypeLike

from .._matmul.shapes import matmul_shapes

MIN_BLOCK = 4096  # rows, k or cols of a block worth a GPU, where the matrix has them
DEFAULT_GPU_MEMORY = 16 << 30  # what suggest_chunks assumes without gpu_memory: a small data-centre GPU
# of a GPU's memory (per worker) for one block product; the rest: CUDA, cuBLAS's workspace,
# casts. Not less: on an H100, 65536^2 float32 in 4 blocks of 32768^2 (this share) ran 10%
# faster than in 12 of 16384 x 21846 (half the memory), which send the operands more often.
SHARE = 0.8

Chunks = tuple[tuple[int, ...], ...]  # dask's: the sizes of the blocks along each axis


class Blocks(NamedTuple):
    """Block sizes for a product: ``suggest_chunks``'s answer.

    ``rows``, ``k`` and ``cols`` are the sides of a block product; ``stack`` the block along
    each stack axis of the result (matrices per block); ``x1`` and ``x2`` the same as a
    chunks argument for each operand (``da.from_array(a, chunks=blocks.x1)``, ``.rechunk``).
    A tuple of these six fields, in this order.

    Examples
    --------
    >>> blocks = suggest_chunks((100000, 20000), (20000, 30000), "float32")
    >>> blocks.rows, blocks.k, blocks.cols
    (50000, 20000, 30000)
    >>> blocks.x1, blocks.x2                # chunks= for each operand
    ((50000, 20000), (20000, 30000))
    """

    rows: int
    """Rows of ``x1`` (and of the result) in a block."""
    k: int
    """Columns of ``x1`` and rows of ``x2`` in a block: the length summed over."""
    cols: int
    """Columns of ``x2`` (and of the result) in a block."""
    stack: tuple[int, ...]
    """Matrices per block along each stack axis of the result (``()`` for matrices)."""
    x1: tuple[int, ...]
    """Chunks for ``x1``: its stack axes' blocks (1 along axes it broadcasts), then ``(rows,
    k)``; ``(k,)`` for a 1-D ``x1``."""
    x2: tuple[int, ...]
    """Chunks for ``x2``: its stack axes' blocks (1 along axes it broadcasts), then ``(k,
    cols)``; ``(k,)`` for a 1-D ``x2``."""


def suggest_chunks(
    shape1: Sequence[int],
    shape2: Sequence[int],
    dtype: DTypeLike,
    gpu_memory: int | None = None,
    *,
    workers_per_gpu: int = 1,
    workers: int = 1,
) -> Blocks:
    """Chunk sizes for ``pyctk.dask.matmul`` of arrays of these shapes on a GPU of ``gpu_memory``.

    One block product's operands and result fit 80% of the GPU's memory (shared by
    ``workers_per_gpu`` workers), so that each runs in one pass; blocks split each axis
    evenly and are at least MIN_BLOCK (4096) per side where the matrix and the memory allow
    it (memory first). k stays whole (no sum of partial products on the workers' CPUs)
    where the blocks then are still that large, and at least half as wide as they could be
    with k split. The result's blocks are made a multiple of ``workers`` where that keeps
    them that large, so that no worker idles while the others finish.

    Parameters
    ----------
    shape1, shape2 : sequence of int
        The shapes of ``x1`` and ``x2``, as numpy.matmul takes them (1-D operands, stacks
        that broadcast).
    dtype : dtype_like
        The product's dtype (its item size counts).
    gpu_memory : int, optional
        Bytes of memory of each worker's GPU (default 16 GiB, a small data-centre GPU;
        ``pyctk.info()["devices"][0]`` on a worker says it).
    workers_per_gpu : int, optional
        Workers sharing one GPU (2 for a LocalCluster of 2 processes on one GPU).
    workers : int, optional
        Workers that multiply blocks at once, on all machines.

    Returns
    -------
    Blocks
        ``rows``, ``k``, ``cols``, ``stack`` (per stack axis of the result), and ``x1``,
        ``x2``: chunks arguments for the operands.

    Raises
    ------
    ValueError
        Shapes numpy.matmul rejects; a ``gpu_memory``, ``workers_per_gpu`` or ``workers``
        that is not a positive integer.

    Examples
    --------
    >>> blocks = suggest_chunks((65536, 65536), (65536, 65536), "float32", 80 << 30,
    ...                         workers_per_gpu=2, workers=2)
    >>> blocks.rows, blocks.k, blocks.cols
    (32768, 65536, 32768)
    >>> blocks.x1, blocks.x2
    ((32768, 65536), (65536, 32768))
    >>> suggest_chunks((1000, 64, 64), (64,), "float64").x1   # small matrices: many to a block
    (1000, 64, 64)
    """
    for name, value in (
        ("gpu_memory", 1 if gpu_memory is None else gpu_memory),
        ("workers_per_gpu", workers_per_gpu),
        ("workers", workers),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, not {value!r}")
    shape1, shape2 = tuple(shape1), tuple(shape2)
    shapes = matmul_shapes(shape1, shape2)  # NumPy's ValueError for shapes it rejects
    budget = (gpu_memory or DEFAULT_GPU_MEMORY) * SHARE // workers_per_gpu
    stack, rows, k, cols = block_sizes(
        shapes.batch, shapes.m, shapes.k, shapes.n, np.dtype(dtype).itemsize, budget, workers
    )
    x1 = (k,) if len(shape1) == 1 else _stack_of(shape1[:-2], stack) + (rows, k)
    x2 = (k,) if len(shape2) == 1 else _stack_of(shape2[:-2], stack) + (k, cols)
    return Blocks(rows, k, cols, stack, x1, x2)


def block_sizes(
    batch: tuple[int, ...], m: int, k: int, n: int, itemsize: int, budget: float, workers: int = 1
) -> tuple[tuple[int, ...], int, int, int]:
    """(stack blocks, rows, k, cols) of the block products of (*batch, m, k) @ (*batch, k, n),
    within ``budget`` bytes each (see suggest_chunks for the rules); every size at least 1."""
    lengths = (m, k, n)

    def fits(matrices: int, rows: int, depth: int, cols: int) -> bool:
        return matrices * (rows * depth + depth * cols + rows * cols) * itemsize <= budget

    def counts_for(most: tuple[int, int, int]) -> list[int]:  # blocks per axis, none over ``most``
        return [max(1, math.ceil(length / max(1, side))) for length, side in zip(lengths, most)]

    def sizes(counts: list[int]) -> list[int]:  # even blocks
        return [max(1, math.ceil(length / count)) for length, count in zip(lengths, counts)]

    side = _largest(lambda s: fits(1, min(m, s), min(k, s), min(n, s)), max(lengths))
    wide = _largest(lambda s: fits(1, min(m, s), k, min(n, s)), max(m, n))  # k whole
    cube, whole_k = counts_for((side, side, side)), counts_for((wide, k, wide))
    # k whole where its blocks are as worth a GPU as the cube's (MIN_BLOCK, or the matrix) and
    # at least half as wide (moving at most 4/3 the bytes per flop): no sums on the CPUs
    if wide and all(
        w >= max(c / 2, min(length, MIN_BLOCK, c))
        for w, c, length in zip(sizes(whole_k)[::2], sizes(cube)[::2], (m, n))
    ):
        counts = whole_k
    else:
        counts = cube
    matrices = 1
    if counts == [1, 1, 1]:  # whole matrices: as many in a block as fit
        matrices = max(1, int(budget // max(1, (m * k + k * n + m * n) * itemsize)))
    stack = fill(batch, matrices)
    blocks_of_stack = math.prod(math.ceil(length / block) for length, block in zip(batch, stack))
    _balance(counts, lengths, blocks_of_stack, workers)
    rows, depth, cols = sizes(counts)
    return stack, rows, depth, cols


def _largest(fits: Callable[[int], bool], upper: int) -> int:
    """The largest s in [0, upper] with fits(s), for a fits that holds up to some s and not after."""
    low, high = 0, upper
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def _balance(counts: list[int], lengths: tuple[int, int, int], blocks_of_stack: int, workers: int) -> None:
    """Cut rows or cols (counts[0], counts[2]) into more blocks, the widest first, until the
    result's blocks are a multiple of ``workers``, or no cut keeps a block MIN_BLOCK wide."""
    while (blocks_of_stack * counts[0] * counts[2]) % workers:
        widths = {axis: lengths[axis] / (counts[axis] + 1) for axis in (0, 2)}
        axis = max(widths, key=widths.__getitem__)
        if widths[axis] < MIN_BLOCK:
            return
        counts[axis] += 1


def fill(batch: tuple[int, ...], matrices: int) -> tuple[int, ...]:
    """Blocks along the stack axes that hold about ``matrices`` matrices: the last axes whole
    first (in C order their matrices are adjacent), every block at least 1."""
    blocks = []
    for length in reversed(batch):
        block = max(1, min(length, matrices))
        blocks.append(block)
        matrices = max(1, matrices // length) if block == length else 1
    return tuple(reversed(blocks))


def _stack_of(stack: tuple[int, ...], blocks: tuple[int, ...]) -> tuple[int, ...]:
    """An operand's chunks along its stack axes: the result's blocks, right-aligned, and 1
    along the axes it broadcasts (length 1)."""
    ours = blocks[len(blocks) - len(stack) :]
    return tuple(1 if length == 1 else block for length, block in zip(stack, ours))


# ---------------------------------------------------------------------------
# What pyctk.dask.matmul does with the user's chunks.


def combined(chunks: tuple[int, ...], threshold: int, target: int) -> tuple[int, ...]:
    """``chunks`` as they are when every chunk but the last is at least ``threshold``; else
    neighbours concatenated into chunks of at least ``target`` (the last may be shorter).
    Chunks are never split: each boundary of the answer is one of ``chunks``'.

    >>> combined((1000,) * 9, 4096, 4096)
    (5000, 4000)
    >>> combined((8192, 8192, 100), 4096, 16384)
    (8192, 8192, 100)
    """
    if all(size >= threshold for size in chunks[:-1]):
        return chunks
    merged, run = [], 0
    for size in chunks:
        run += size
        if run >= target:
            merged.append(run)
            run = 0
    return tuple(merged) + ((run,) if run or not merged else ())


def planned(chunks1: Chunks, chunks2: Chunks, itemsize: int) -> tuple[Chunks, Chunks]:
    """The chunks to multiply operands of ``chunks1`` and ``chunks2`` in: (*stack, m, k) and
    (*stack, k, n), of equal rank (1-D operands promoted, stacks padded with axes of
    length 1), whose stacks broadcast.

    Along each axis of the problem (stack axes, rows, k, cols) the operands that have it
    (not broadcast) take the chunks of the one with fewer (the first on a tie): k and the
    shared stack axes must agree. Then ``combined`` with the threshold and target below, so
    chunks already worth a GPU stay as they are, and if both operands had them, nothing is
    rechunked. Targets are suggest_chunks' sizes for DEFAULT_GPU_MEMORY; thresholds are
    MIN_BLOCK per side (or the target, if smaller), and along the stack as many matrices as
    make a MIN_BLOCK-cubed product.
    """
    ndim = len(chunks1)
    shape1, shape2 = tuple(map(sum, chunks1)), tuple(map(sum, chunks2))
    batch = tuple(np.broadcast_shapes(shape1[:-2], shape2[:-2]))
    m, k, n = shape1[-2], shape1[-1], shape2[-1]
    stack, rows, depth, cols = block_sizes(batch, m, k, n, itemsize, DEFAULT_GPU_MEMORY * SHARE)
    worth = math.ceil(MIN_BLOCK**3 / max(1, m * k * n))  # matrices per block worth a GPU
    targets = (*stack, rows, depth, cols)
    thresholds = (*fill(batch, min(worth, math.prod(stack))), *(min(MIN_BLOCK, side) for side in (rows, depth, cols)))
    # (axis of x1, axis of x2) of each axis of the problem; None where an operand lacks it
    axes = [(a, a) for a in range(ndim - 2)] + [(ndim - 2, None), (ndim - 1, ndim - 2), (None, ndim - 1)]
    new1, new2 = list(chunks1), list(chunks2)
    for (axis1, axis2), threshold, target in zip(axes, thresholds, targets):
        having = [
            (chunks, axis)
            for chunks, axis in ((new1, axis1), (new2, axis2))
            if axis is not None and sum(chunks[axis]) != 1
        ]  # length 1: broadcast
        if having:
            fewest = min((chunks[axis] for chunks, axis in having), key=len)
            for chunks, axis in having:
                chunks[axis] = combined(fewest, threshold, target)
    return tuple(new1), tuple(new2)
