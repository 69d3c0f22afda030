"""PyCUDA's ``pycuda.reduction``: a reduction from a C expression, over GPUArrays.

>>> import numpy as np                               # doctest: +GPU
>>> from pyctk import gpuarray
>>> from pyctk.reduction import ReductionKernel     # was: from pycuda.reduction import ...
>>> dot = ReductionKernel(np.float32, neutral="0", reduce_expr="a+b",
...                       map_expr="x[i]*y[i]", arguments="float *x, float *y")
>>> x = gpuarray.to_gpu(np.arange(4, dtype=np.float32))
>>> dot(x, x).get()
array(14., dtype=float32)

Compiled by NVRTC on first call and kept in the kernel cache. Two stages, as PyCUDA's: a wave
of blocks folds the elements (warp shuffles, no ``volatile`` tricks, so struct results need no
volatile operators), then one block folds their results. The result is a 0-d GPUArray.
"""

from ._pycuda.gpuarrays.reductions import (
    ReductionKernel,
    get_all_kernel,
    get_any_kernel,
    get_dot_kernel,
    get_minmax_kernel,
    get_subset_dot_kernel,
    get_subset_minmax_kernel,
    get_subset_sum_kernel,
    get_sum_kernel,
)

__all__ = [
    "ReductionKernel",
    "get_all_kernel",
    "get_any_kernel",
    "get_dot_kernel",
    "get_minmax_kernel",
    "get_subset_dot_kernel",
    "get_subset_minmax_kernel",
    "get_subset_sum_kernel",
    "get_sum_kernel",
]
