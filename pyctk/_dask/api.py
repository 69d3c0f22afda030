"""pyctk.dask.matmul: numpy.matmul of dask arrays, each block product by pyctk.matmul on the
worker that holds the blocks.

In the client, before any task: the keywords, shapes and dtypes are checked by pyctk.matmul's
own rules (pyctk._matmul's options, shapes and dtypes: the same exceptions and messages),
1-D operands are promoted and stacks padded as NumPy does, chunks too small for a GPU are
combined (chunking.planned), and the graph is built (graph.product). Nothing here needs a
GPU; the workers do.
"""

from __future__ import annotations

import math
from typing import Any

import dask.array as da
import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._matmul import dtypes
from .._matmul.api import Backend, Precision
from .._matmul.dtypes import Casting
from .._matmul.options import Devices, parse
from .._matmul.shapes import matmul_shapes
from . import chunking, graph

# Partial products of these dtypes are summed in a wider one, then rounded once: NumPy's
# float16 loop (and pyctk's bfloat16 product) sums in float32, and a sum of partials each
# rounded to 16 bits would not be NumPy's answer. Every other dtype sums in its own: integers
# wrap alike in any order, and float32/64 and complex differ from an unsplit product only in
# the order of the additions.
WIDER_SUM = {"float16": np.dtype(np.float32), "bfloat16": np.dtype(np.float32)}


def matmul(
    x1: ArrayLike,
    x2: ArrayLike,
    /,
    *,
    casting: Casting = "same_kind",
    dtype: DTypeLike | None = None,
    backend: Backend = "auto",
    precision: Precision = "highest",
    devices: Devices = None,
) -> da.Array:
    """Matrix product of two dask arrays, every block product by ``pyctk.matmul`` on a GPU.

    The answer of ``numpy.matmul`` on the whole arrays, as a dask array of NumPy chunks:
    each block product runs on the worker that holds (or receives) its two blocks, and a
    result block's partial products along k are summed there too, in a tree. Nothing is
    computed until you ask (``.compute()``, ``.persist()``, ``.to_zarr()`` ...).

    Parameters
    ----------
    x1, x2 : dask arrays or array_like
        Dask arrays of NumPy chunks (other array_like, a NumPy array say, is wrapped with
        ``dask.array.asarray``). numpy.matmul's shapes: matrices, stacks of them in the
        last two axes (the stack axes broadcast), or vectors (1-D: a row for ``x1``, a
        column for ``x2``, and that axis is not in the result). Any chunks; see Notes.
    casting, dtype, backend, precision
        As ``pyctk.matmul``'s, for every block product.
    devices : "all" or sequence of int, optional
        As ``pyctk.matmul``'s, on each worker: the GPUs of the worker's machine to share
        each of its block products among. Default: the worker's GPU 0 (which is its own
        GPU where each GPU has a worker of its own, as with dask-cuda's LocalCUDACluster,
        which sets ``CUDA_VISIBLE_DEVICES`` for each).

    Returns
    -------
    dask.array.Array
        The product, of numpy.matmul's shape and dtype (pyctk.matmul's for bfloat16), in
        NumPy chunks: the row blocks of ``x1`` by the column blocks of ``x2`` (and the
        stack blocks). 1-D @ 1-D gives a 0-d array.

    Raises
    ------
    ValueError, TypeError, pyctk.UnsupportedError
        At once, in the client, as ``pyctk.matmul`` raises them: 0-d operands, inner
        dimensions that differ, stacks that do not broadcast, dtypes and castings NumPy
        refuses, dtypes the GPU cannot compute (object), unknown ``backend`` or
        ``precision``. Also ``TypeError`` for dask arrays whose chunks are not NumPy
        arrays, and ``ValueError`` for unknown chunk sizes (``compute_chunk_sizes()``).
    pyctk.NoDriverError, pyctk.NoDeviceError, pyctk.OutOfMemoryError, pyctk.CudaError
        When computed: a worker without a driver or GPU, or another CUDA failure, raises
        pyctk's exception there, and Dask raises it in the client, the same class with the
        same message.

    Notes
    -----
    **Chunks.** Chunks along k (and along the stack axes both operands have) must agree:
    where they differ, both take those of the operand with fewer chunks. Chunks too small
    for a GPU to be worth it (along an axis, any but the last below 4096, or below the
    matrix) are combined with their neighbours into blocks of about the size
    ``pyctk.dask.suggest_chunks`` gives for a 16 GiB GPU; chunks that are large enough stay
    as they are, however large (``pyctk.matmul`` streams a block product larger than the
    GPU), so chunks chosen with ``suggest_chunks`` for your GPUs add no rechunking at all.

    **Values.** Integer and bool products equal numpy.matmul's exactly (integers wrap the
    same in any order of addition; bool partials are or-ed). float16 and bfloat16 partial
    products, where k is split, are computed and summed in float32 and rounded once, as
    NumPy's loop sums; with k split, float32, float64 and complex results differ from an
    unsplit product only in the order of additions: within about ``k * eps`` of the
    magnitude of the products, as between two GEMM algorithms. With k in one block (as
    ``suggest_chunks`` keeps it where it can) each result block is one ``pyctk.matmul``.
    A block computed twice (a lost worker's, recomputed elsewhere) is computed alike.

    **Why a function, not** ``x @ y``. Dask's ``@`` and ``np.matmul`` on dask arrays call
    dask.array's own matmul, whose per-block function (NumPy's or CuPy's matmul, chosen by
    the chunks' type) no Dask setting or hook replaces; changing it would mean patching
    Dask's module. So ``pyctk.dask.matmul(x, y)`` builds the same kind of graph with
    pyctk's block product, using Dask's public ``blockwise`` and ``reduction``.

    See Also
    --------
    suggest_chunks : Chunks for the operands, sized for your GPUs.
    pyctk.matmul : The product of one pair of blocks.

    Examples
    --------
    Building the product computes nothing; the result has numpy.matmul's shape and dtype,
    in blocks of ``x1``'s rows by ``x2``'s columns:

    >>> import dask.array as da, numpy as np, pyctk.dask          # doctest: +GPU
    >>> x = da.ones((20000, 30000), dtype=np.float32, chunks=(10000, 30000))
    >>> y = da.ones((30000, 8000), dtype=np.float32, chunks=(30000, 8000))
    >>> z = pyctk.dask.matmul(x, y)
    >>> z.shape, z.dtype, z.chunks
    ((20000, 8000), dtype('float32'), ((10000, 10000), (8000,)))

    Computing it runs each block product on a GPU (here, of small arrays, a 1-D ``x2``):

    >>> small = pyctk.dask.matmul(da.ones((4, 3), chunks=2), da.arange(3.0, chunks=2))
    >>> small.compute()
    array([3., 3., 3., 3.])

    With a distributed cluster, its workers do the products (here one worker, in this
    process; dask-cuda's LocalCUDACluster gives each GPU a worker of its own):

    >>> from distributed import Client, LocalCluster
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
    ...     with Client(cluster):
    ...         small.compute()
    array([3., 3., 3., 3.])

    Errors come at once, in the client, as pyctk.matmul's:

    >>> pyctk.dask.matmul(x, x)
    Traceback (most recent call last):
    ...
    ValueError: matmul: shapes (20000, 30000) and (20000, 30000) are not aligned: ...
    """
    parse(casting, dtype, backend, precision, None, None, devices)  # pyctk.matmul's checks
    x1, x2 = (x if isinstance(x, da.Array) else da.asarray(x) for x in (x1, x2))
    for position, x in enumerate((x1, x2)):
        _check_chunks(position, x)
    shapes = matmul_shapes(x1.shape, x2.shape)  # NumPy's ValueError for shapes it rejects
    loop = dtypes.loop_dtype(x1.dtype, x2.dtype, None, dtype, casting)
    dtypes.code(loop)  # TypeError for a dtype the GPU does not compute (object)
    x1, x2 = _as_stacks(x1, x2)
    chunks1, chunks2 = chunking.planned(x1.chunks, x2.chunks, loop.itemsize)
    # only where they differ: a rechunk to the chunks an array has would still be a layer
    x1, x2 = (x if x.chunks == chunks else x.rechunk(chunks) for x, chunks in ((x1, chunks1), (x2, chunks2)))
    options: dict[str, Any] = {
        "casting": casting,
        "dtype": dtype,
        "backend": backend,
        "precision": precision,
        "devices": devices,
    }
    wider = WIDER_SUM.get(loop.name) if x1.numblocks[-1] > 1 and precision != "fp16_accumulate" else None
    if wider is None:
        result = graph.product(x1, x2, loop, None, options)
    else:  # operands cast to the product's dtype, multiplied in the wider one (exactly)
        result = graph.product(x1, x2, wider, loop, {**options, "dtype": wider, "casting": "safe"})
        result = result.astype(loop)
    absent = tuple(axis for axis, gone in zip((-2, -1), shapes.absent) if gone)
    return result.squeeze(axis=absent) if absent else result


def _check_chunks(position: int, x: da.Array) -> None:
    """TypeError for chunks that are not NumPy arrays; ValueError for unknown chunk sizes."""
    if type(x._meta) is not np.ndarray:
        raise TypeError(
            f"pyctk.dask.matmul: operand {position} has chunks of type "
            f"{type(x._meta).__module__}.{type(x._meta).__name__}; it multiplies dask arrays "
            f"of NumPy chunks (convert with x.map_blocks(np.asarray))"
        )
    if any(math.isnan(length) for length in x.shape):
        raise ValueError(
            f"pyctk.dask.matmul: operand {position} has unknown chunk sizes (shape "
            f"{x.shape}); call x.compute_chunk_sizes() first"
        )


def _as_stacks(x1: da.Array, x2: da.Array) -> tuple[da.Array, da.Array]:
    """The operands as (*stack, m, k) and (*stack, k, n) of equal rank, as numpy.matmul sees
    them: a 1-D x1 a row, a 1-D x2 a column, the shorter stack padded with leading axes of
    length 1 (new axes: dask fuses their tasks into the block products')."""
    x1 = x1[np.newaxis, :] if x1.ndim == 1 else x1
    x2 = x2[:, np.newaxis] if x2.ndim == 1 else x2
    padding = (np.newaxis,) * abs(x1.ndim - x2.ndim)
    if x1.ndim < x2.ndim:
        return x1[padding], x2
    return (x1, x2[padding]) if padding else (x1, x2)
