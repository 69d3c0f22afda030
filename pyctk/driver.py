"""The part of PyCUDA's ``pycuda.driver`` that programs use, with no CUDA toolkit.

A PyCUDA program runs with its imports changed::

    import pyctk.driver as cuda               # was: import pycuda.driver as cuda
    from pyctk.compiler import SourceModule   # was: from pycuda.compiler import SourceModule

>>> import numpy as np
>>> a = np.arange(4, dtype=np.float32)
>>> a_gpu = mem_alloc(a.nbytes)                   # doctest: +SKIP
>>> memcpy_htod(a_gpu, a)                         # doctest: +SKIP
>>> b = np.empty_like(a); memcpy_dtoh(b, a_gpu)   # doctest: +SKIP

What is here, and where it departs from PyCUDA:

- memory: ``mem_alloc`` (from pyctk's stream-ordered pool, shared with ``pyctk.DeviceArray``),
  ``DeviceAllocation.free``, ``mem_get_info``, ``to_device``, ``from_device``,
  ``memcpy_htod``/``dtoh``/``dtod`` and their ``_async`` forms, ``memset_d8``/``d16``/``d32``;
  pyctk has no page-locked host memory of its own yet;
- kernels: ``Module``, ``Function``, ``module_from_buffer``, ``module_from_file``,
  ``In``/``Out``/``InOut`` (``pyctk.compiler.SourceModule`` compiles); ``Function.prepare``
  with ``prepared_call``, ``prepared_async_call`` and ``prepared_timed_call`` (argument types
  as ``struct`` letters, ``"PiP"``, or NumPy dtypes), whose arguments are checked against
  the kernel's parameters as every call's are;
- ``get_version`` (the CUDA runtime's, from its wheel), ``get_driver_version``;
- ``Stream``, ``Event``, ``Device``, ``Context`` (primary contexts only: see
  ``Device.make_context``), ``init`` (optional: pyctk starts CUDA on first use);
- errors: ``Error`` (a ``pyctk.CudaError``) and ``LogicError``, ``LaunchError``,
  ``MemoryError``, ``RuntimeError`` as in PyCUDA, plus ``ContextLostError`` (a
  ``LaunchError`` and a ``pyctk.ContextLostError``) for the errors after which this
  process cannot use the GPU again;
  ``CompileError`` is ``pyctk.compiler.CompileError``.

Everything works on the calling thread's current device (0 unless changed, e.g. with
``Device(1).make_context()``), in its primary context, which the CUDA runtime, PyTorch
and CuPy use too: their arrays, streams and pyctk's mix freely.
"""

from ._cuda.driver_errors import (ContextLostError, Error, LaunchError, LogicError, MemoryError,
                                  RuntimeError)
from ._cuda.errors import CompileError
from ._pycuda.devices import Context, Device, device_attribute, get_driver_version, get_version, init
from ._pycuda.memory import (DeviceAllocation, from_device, mem_alloc, mem_get_info, memcpy_dtod,
                             memcpy_dtod_async, memcpy_dtoh, memcpy_dtoh_async, memcpy_htod,
                             memcpy_htod_async, memset_d8, memset_d8_async, memset_d16,
                             memset_d16_async, memset_d32, memset_d32_async, to_device)
from ._pycuda.modules import (ArgumentHandler, Function, In, InOut, Module, Out,
                              function_attribute, module_from_buffer, module_from_file)
from ._pycuda.streams import Event, Stream, event_flags, stream_flags

__all__ = [
    "Context", "Device", "device_attribute", "init", "get_version", "get_driver_version",
    "Error", "LogicError", "LaunchError", "ContextLostError", "MemoryError", "RuntimeError",
    "CompileError",
    "DeviceAllocation", "mem_alloc", "mem_get_info", "to_device", "from_device",
    "memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "memcpy_htod_async", "memcpy_dtoh_async",
    "memcpy_dtod_async", "memset_d8", "memset_d16", "memset_d32", "memset_d8_async",
    "memset_d16_async", "memset_d32_async",
    "Module", "Function", "function_attribute", "module_from_buffer", "module_from_file",
    "ArgumentHandler", "In", "Out", "InOut",
    "Stream", "Event", "stream_flags", "event_flags",
]
