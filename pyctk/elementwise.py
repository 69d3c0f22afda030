"""PyCUDA's ``pycuda.elementwise``: kernels from one line of C, run for each element.

>>> import numpy as np                                   # doctest: +GPU
>>> from pyctk import gpuarray
>>> from pyctk.elementwise import ElementwiseKernel   # was: from pycuda.elementwise import ...
>>> lin_comb = ElementwiseKernel("float a, float *x, float b, float *y, float *z",
...                              "z[i] = a*x[i] + b*y[i]", "linear_combination")
>>> x = gpuarray.to_gpu(np.arange(3, dtype=np.float32))
>>> z = gpuarray.empty_like(x)
>>> lin_comb(5, x, 6, x, z)
>>> z
array([ 0., 11., 22.], dtype=float32)

The kernel is written as PyCUDA writes it (a loop over ``i`` with a grid-wide stride; ``n``
the element count), compiled by NVRTC on first call and kept in the kernel cache.
"""

from ._pycuda.gpuarrays.elementwise import (
    ElementwiseKernel,
    ScalarArg,
    VectorArg,
    dtype_to_ctype,
    get_elwise_kernel,
    get_elwise_kernel_and_types,
    get_elwise_module,
    get_elwise_module_source,
    get_elwise_range_module,
)

__all__ = [
    "ElementwiseKernel",
    "ScalarArg",
    "VectorArg",
    "dtype_to_ctype",
    "get_elwise_kernel",
    "get_elwise_kernel_and_types",
    "get_elwise_module",
    "get_elwise_module_source",
    "get_elwise_range_module",
]
