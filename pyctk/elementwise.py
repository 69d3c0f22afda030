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
the element count), compiled by NVRTC on first call and kept in the kernel cache. PyCUDA's
kernel getters (``get_fill_kernel``, ``get_axpbyz_kernel`` ...) return its prepared functions.
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
from ._pycuda.gpuarrays.getters import (
    get_arange_kernel,
    get_axpbyz_kernel,
    get_axpbz_kernel,
    get_binary_func_kernel,
    get_binary_func_scalar_kernel,
    get_binary_minmax_kernel,
    get_binary_op_kernel,
    get_conj_kernel,
    get_copy_kernel,
    get_fill_kernel,
    get_fmod_kernel,
    get_frexp_kernel,
    get_if_positive_kernel,
    get_imag_kernel,
    get_ldexp_kernel,
    get_linear_combination_kernel,
    get_logical_not_kernel,
    get_modf_kernel,
    get_pow_array_kernel,
    get_put_kernel,
    get_rdivide_elwise_kernel,
    get_real_kernel,
    get_reverse_kernel,
    get_scalar_op_kernel,
    get_take_kernel,
    get_take_put_kernel,
    get_unary_func_kernel,
    get_where_kernel,
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
    "get_arange_kernel",
    "get_axpbyz_kernel",
    "get_axpbz_kernel",
    "get_binary_func_kernel",
    "get_binary_func_scalar_kernel",
    "get_binary_minmax_kernel",
    "get_binary_op_kernel",
    "get_conj_kernel",
    "get_copy_kernel",
    "get_fill_kernel",
    "get_fmod_kernel",
    "get_frexp_kernel",
    "get_if_positive_kernel",
    "get_imag_kernel",
    "get_ldexp_kernel",
    "get_linear_combination_kernel",
    "get_logical_not_kernel",
    "get_modf_kernel",
    "get_pow_array_kernel",
    "get_put_kernel",
    "get_rdivide_elwise_kernel",
    "get_real_kernel",
    "get_reverse_kernel",
    "get_scalar_op_kernel",
    "get_take_kernel",
    "get_take_put_kernel",
    "get_unary_func_kernel",
    "get_where_kernel",
]
