"""PyCUDA's ``pycuda.gpuarray``: NumPy-like arrays on the GPU, with no CUDA toolkit.

>>> import numpy as np                          # doctest: +GPU
>>> from pyctk import gpuarray                  # was: import pycuda.gpuarray as gpuarray
>>> a = gpuarray.to_gpu(np.arange(4, dtype=np.float32))
>>> (2 * a + 1).get()
array([1., 3., 5., 7.], dtype=float32)
>>> gpuarray.sum(a).get(), gpuarray.dot(a, a).get()
(array(6., dtype=float32), array(14., dtype=float32))

A :class:`GPUArray` holds memory, shape, dtype and strides; views (``a[1:, ::2]``,
``reshape``, ``T``) share memory; ``get``/``set`` copy to and from the host. Arithmetic,
comparisons, :mod:`pyctk.cumath`'s functions and the reductions run kernels that pyctk writes
and NVRTC compiles on first use (``pip install "pyctk-cu12[nvrtc]"``), kept in the kernel
cache, so a later process compiles nothing. Kernels run asynchronously on the legacy
default stream (or ``stream=``), as in PyCUDA.

Where pyctk departs from PyCUDA, it is to give NumPy's answer where PyCUDA gives another
or none: mixed-dtype results follow NumPy's promotion (``int32 / int32`` is float64,
comparisons give bool, sums widen small integers as ``numpy.sum`` does), operands
broadcast, non-contiguous arrays work everywhere (copied first where a kernel needs
contiguous memory), and ``GPUArray`` has ``sum``, ``max``, ``min``, ``dot`` methods and
``@`` (:func:`pyctk.matmul`). GPU arrays of other libraries (CuPy, PyTorch, JAX,
:class:`pyctk.DeviceArray`) are operands as they are, and :func:`asarray`/:func:`from_dlpack`
wrap them without a copy; a GPUArray exports ``__cuda_array_interface__`` and ``__dlpack__``.
"""

from ._pycuda.gpuarrays.arithmetic import if_positive, logical_and, logical_not, logical_or, maximum, minimum, where
from ._pycuda.gpuarrays.array import GPUArray
from ._pycuda.gpuarrays.creation import (
    arange,
    asarray,
    concatenate,
    empty,
    empty_like,
    from_dlpack,
    full,
    multi_put,
    multi_take,
    multi_take_put,
    ones,
    ones_like,
    reshape,
    stack,
    take,
    to_gpu,
    to_gpu_async,
    transpose,
    zeros,
    zeros_like,
)
from ._pycuda.gpuarrays.launching import splay
from ._pycuda.gpuarrays.reductions import all_ as all  # noqa: A004 - PyCUDA's names
from ._pycuda.gpuarrays.reductions import any_ as any  # noqa: A004
from ._pycuda.gpuarrays.reductions import dot, subset_dot, subset_max, subset_min, subset_sum
from ._pycuda.gpuarrays.reductions import max_ as max  # noqa: A004
from ._pycuda.gpuarrays.reductions import min_ as min  # noqa: A004
from ._pycuda.gpuarrays.reductions import sum_ as sum  # noqa: A004
from ._pycuda.kernels.vector_types import vec

__all__ = [
    "GPUArray",
    "if_positive",
    "logical_and",
    "logical_not",
    "logical_or",
    "maximum",
    "minimum",
    "where",
    "all",
    "any",
    "dot",
    "max",
    "min",
    "subset_dot",
    "subset_max",
    "subset_min",
    "subset_sum",
    "sum",
    "arange",
    "asarray",
    "concatenate",
    "empty",
    "empty_like",
    "from_dlpack",
    "full",
    "multi_put",
    "multi_take",
    "multi_take_put",
    "ones",
    "ones_like",
    "reshape",
    "splay",
    "stack",
    "take",
    "to_gpu",
    "to_gpu_async",
    "transpose",
    "vec",
    "zeros",
    "zeros_like",
]
