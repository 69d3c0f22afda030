"""Matrix products of dask arrays on GPUs: every block product by ``pyctk.matmul``, on the
Dask worker that holds the blocks.

>>> import dask.array as da, pyctk.dask
>>> x = da.random.random((40000, 40000), chunks=(20000, 40000))
>>> y = da.random.random((40000, 40000), chunks=(40000, 20000))
>>> z = pyctk.dask.matmul(x, y)      # a dask array: numpy.matmul's shape, dtype and values
>>> z.chunks
((20000, 20000), (20000, 20000))
>>> pyctk.dask.suggest_chunks(x.shape, y.shape, x.dtype, 80 << 30, workers=4).x1  # 4 workers of 80 GB GPUs
(20000, 40000)

Nothing is computed until you ask: ``z.compute()`` runs the block products on the GPUs
of Dask's workers. ``matmul`` takes numpy.matmul's shapes (stacks, broadcasting, 1-D operands) and
``pyctk.matmul``'s keywords (``devices=`` for workers with several GPUs); ``suggest_chunks``
gives block sizes for a GPU's memory. Needs Dask: ``pip install 'pyctk-cu12[dask]'`` (or
``pyctk-cu13[dask]``), which brings dask[array] and distributed.
"""

try:
    import dask.array  # noqa: F401  (pyctk/_dask needs it; say so here, by name)
except ImportError as _error:
    from ._build_config import CUDA_MAJOR as _CUDA_MAJOR

    raise ImportError(
        f"pyctk.dask needs Dask's arrays, which are not installed ({_error}): "
        f"pip install 'pyctk-cu{_CUDA_MAJOR}[dask]' (dask[array] and distributed)",
        name="dask",
    ) from _error

from ._dask.api import matmul
from ._dask.chunking import Blocks, suggest_chunks

__all__ = ["matmul", "suggest_chunks", "Blocks"]
