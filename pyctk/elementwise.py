"""PyCUDA's ``pycuda.elementwise``: kernels from one line of C, run for each element.

>>> from pyctk.elementwise import ElementwiseKernel   # was: from pycuda.elementwise import ...
>>> lin_comb = ElementwiseKernel("float a, float *x, float b, float *y, float *z",
...                              "z[i] = a*x[i] + b*y[i]", "linear_combination")
>>> lin_comb(5, x_gpu, 6, y_gpu, z_gpu)                  # doctest: +SKIP

The kernel is written as PyCUDA writes it (a loop over ``i`` with a grid-wide stride; ``n``
the element count), compiled by NVRTC on first call and kept in the kernel cache.
"""

from ._pycuda.gpuarrays.elementwise import (ElementwiseKernel, ScalarArg, VectorArg, dtype_to_ctype,
                                            get_elwise_module_source)

__all__ = ["ElementwiseKernel", "ScalarArg", "VectorArg", "dtype_to_ctype", "get_elwise_module_source"]
