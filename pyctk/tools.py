"""The part of PyCUDA's ``pycuda.tools`` that programs use, with no CUDA toolkit.

A PyCUDA program runs with its import changed::

    import pyctk.tools as tools               # was: import pycuda.tools as tools

- C types of dtypes for source Python writes: :func:`dtype_to_ctype`,
  :func:`get_or_register_dtype`, :func:`register_dtype` (deprecated), :func:`parse_c_arg`,
  :func:`get_arg_type`, :class:`Argument`, :class:`VectorArg`, :class:`ScalarArg`;
- the default device and context: :func:`make_default_context`, :func:`get_default_device`
  (deprecated); caches per context: :func:`context_dependent_memoize`,
  :func:`clear_context_caches`; :func:`mark_cuda_test`, the decorator of a pytest test that
  needs a context;
- :func:`bitlog2`;
- memory pools: :class:`DeviceMemoryPool` (``allocate(size)`` gives a
  :class:`PooledDeviceAllocation`), :class:`PageLockedMemoryPool` with
  :class:`PageLockedAllocator` (``allocate(shape, dtype)`` gives an array whose base is a
  :class:`PooledHostAllocation`), in PyCUDA's size classes;
- a device's launch limits and a launch's occupancy, by PyCUDA's pre-Volta rules:
  :class:`DeviceData`, :class:`OccupancyRecord`.

The rest of PyCUDA's ``pycuda.tools``, and what to use instead, is listed on the
documentation's "Coming from PyCUDA" page.

>>> dtype_to_ctype("float32")
'float'
>>> bitlog2(17)
4
"""

from ._pycuda.contexts.default_context import (
    clear_context_caches,
    context_dependent_memoize,
    get_default_device,
    init_cuda_context_fixture,
    make_default_context,
    mark_cuda_test,
)
from ._pycuda.contexts.occupancy import DeviceData, OccupancyRecord
from ._pycuda.kernels.c_types import (
    Argument,
    ScalarArg,
    VectorArg,
    dtype_to_ctype,
    get_arg_type,
    get_or_register_dtype,
    parse_c_arg,
    register_dtype,
)
from ._pycuda.memory.pools import (
    DeviceMemoryPool,
    PageLockedAllocator,
    PageLockedMemoryPool,
    PooledDeviceAllocation,
    PooledHostAllocation,
    bitlog2,
)

__all__ = [
    "dtype_to_ctype",
    "get_or_register_dtype",
    "register_dtype",
    "parse_c_arg",
    "get_arg_type",
    "Argument",
    "VectorArg",
    "ScalarArg",
    "make_default_context",
    "get_default_device",
    "context_dependent_memoize",
    "clear_context_caches",
    "mark_cuda_test",
    "init_cuda_context_fixture",
    "bitlog2",
    "DeviceData",
    "OccupancyRecord",
    "DeviceMemoryPool",
    "PageLockedMemoryPool",
    "PageLockedAllocator",
    "PooledDeviceAllocation",
    "PooledHostAllocation",
]
