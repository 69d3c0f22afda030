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
- more device memory: ``mem_alloc_like``, ``mem_alloc_pitch``, ``mem_get_address_range``,
  ``from_device_like``, ``DeviceAllocation.as_buffer``, ``PointerHolderBase`` (a subclass's
  ``get_pointer()`` goes wherever device memory does), ``memcpy_peer``/``_async`` (a context of
  None is the current one, as PyCUDA documents); IPC: ``mem_get_ipc_handle``,
  ``IPCMemoryHandle`` (``ipc_mem_flags``; handles may be bytes too), ``Event.ipc_handle``/
  ``from_ipc_handle``. CUDA shares memory from ``cuMemAlloc`` only, not ``mem_alloc``'s pool
  memory: ``mem_alloc_ipc`` (not in PyCUDA) allocates memory to share;
- CUDA graphs, as PyCUDA's pull request #424 has them: ``Stream.begin_capture``, ``end_capture``,
  ``get_capture_info_v2``, ``update_capture_dependencies``; ``Graph`` (``add_kernel_node``,
  ``instantiate``, ``debug_dot_print``), ``GraphNode``, ``GraphExec`` (``launch``,
  ``kernel_node_set_params``); ``capture_mode``, ``capture_status``,
  ``update_capture_dependencies_flags``;
- host memory as NumPy arrays whose ``.base`` owns it: ``pagelocked_``, ``aligned_`` and
  ``managed_`` ``empty``/``zeros``/``empty_like``/``zeros_like``, ``register_host_memory``
  (``host_alloc_flags``, ``mem_host_register_flags``, ``mem_attach_flags``); managed memory's
  ``mem_flags`` default to ``GLOBAL`` (PyCUDA's 0 is refused by the driver), and a managed
  array is a kernel argument as it is; the pools ``DeviceMemoryPool`` and
  ``PageLockedMemoryPool`` (also in ``pyctk.tools``);
- CUDA arrays and textures: ``Array`` (``ArrayDescriptor``/``3D``, ``matrix_to_array``,
  ``np_to_array``, ``gpuarray_to_array``, ``make_multichannel_2d_array``, ``memcpy_htoa`` ...,
  ``array_cubemap_face``), ``Memcpy2D``/``3D``/
  ``3DPeer``, ``memset_d2d8``/``16``/``32``; ``TextureObject`` and ``SurfaceObject`` (new: CUDA
  12 removed the texture and surface references PyCUDA had, and ``TextureReference``,
  ``get_texref``, ``texrefs=`` ... raise ``TextureReferenceError``, a ``LogicError``, saying so;
  their constants ``TRSA_OVERRIDE_FORMAT`` and ``TR_DEFAULT`` stay for programs that name them);
- kernels: ``Module``, ``Function``, ``module_from_buffer``, ``module_from_file``,
  ``In``/``Out``/``InOut`` (``pyctk.compiler.SourceModule`` compiles); ``Function.prepare``
  with ``prepared_call``, ``prepared_async_call`` and ``prepared_timed_call`` (argument types
  as ``struct`` letters, ``"PiP"``, or NumPy dtypes), whose arguments are checked against
  the kernel's parameters as every call's are;
- linking: ``Linker`` (``add_data``, ``add_file``, ``link_module``, and ``link_cubin``, which
  needs no GPU) with ``jit_input_type``, through nvJitLink (``pip install "pyctk-cu12[nvjitlink]"``),
  not the driver's ``cuLink*``; ``module_from_buffer(buffer, options, message_handler)`` with
  ``jit_option``, ``jit_target``, ``jit_fallback``;
- ``get_version`` (the CUDA runtime's, from its wheel), ``get_driver_version``,
  ``pointer_attribute``; ``start_profiler``, ``stop_profiler`` (``initialize_profiler`` raises
  CUDA 12's CUDA_ERROR_NOT_SUPPORTED, ``profiler_output_mode``);
- ``Stream``, ``Event``, ``Device``, ``Context``, ``init`` (optional: pyctk starts CUDA on
  first use); contexts as PyCUDA has them (``make_context`` makes a new one, a per-thread
  stack with ``push``/``pop``/``detach``/``attach``/``get_current``, limits, cache and shared
  memory configs, peer access), with ``ctx_flags``, ``limit``, ``func_cache``,
  ``shared_config``, ``compute_mode``; ``Function.set_cache_config``;
- errors: ``Error`` (a ``pyctk.CudaError``) and ``LogicError``, ``LaunchError``,
  ``MemoryError``, ``RuntimeError`` as in PyCUDA, plus ``ContextLostError`` (a
  ``LaunchError`` and a ``pyctk.ContextLostError``) for the errors after which this
  process cannot use the GPU again;
  ``CompileError`` is ``pyctk.compiler.CompileError``, an ``Error`` as in PyCUDA.

Everything works in the calling thread's current context; with none pushed, the primary
context of the current device (0 unless changed), which the CUDA runtime, PyTorch and CuPy
use too: their arrays, streams and pyctk's mix freely. ``Device.make_context()`` makes a
context of its own, as in PyCUDA: ``mem_alloc``, kernels, streams work in it, while
``pyctk.matmul`` and ``DeviceArray`` (primary contexts only) refuse to run until it is popped.
``Device(n).retain_primary_context().push()`` (``pyctk.autoinit``) selects device ``n`` and
shares its memory with all of them.
"""

from ._cuda.driver_errors import (CompileError, ContextLostError, Error, LaunchError, LogicError,
                                  MemoryError, RuntimeError)
from ._pycuda.contexts.devices import (Context, Device, compute_mode, ctx_flags, device_attribute,
                                       func_cache, get_driver_version, get_version, init, limit,
                                       shared_config)
from ._pycuda.contexts.profiler import (initialize_profiler, profiler_output_mode, start_profiler,
                                        stop_profiler)
from ._pycuda.contexts.streams import Event, Stream, event_flags, stream_flags
from ._pycuda.kernels.graphs import (Graph, GraphExec, GraphNode, capture_mode, capture_status,
                                     update_capture_dependencies_flags)
from ._pycuda.kernels.linking import Linker, jit_input_type, jit_option
from ._pycuda.kernels.modules import (ArgumentHandler, Function, In, InOut, Module, Out,
                                      function_attribute, jit_fallback, jit_target,
                                      module_from_buffer, module_from_file)
from ._pycuda.kernels.textures import (TR_DEFAULT, TRSA_OVERRIDE_FORMAT,
                                       TRSF_DISABLE_TRILINEAR_OPTIMIZATION,
                                       TRSF_NORMALIZED_COORDINATES, TRSF_READ_AS_INTEGER,
                                       TRSF_SEAMLESS_CUBEMAP, TRSF_SRGB, SurfaceObject,
                                       SurfaceReference, TextureObject, TextureReference,
                                       TextureReferenceError, address_mode, bind_array_to_texref,
                                       filter_mode, matrix_to_texref, resource_type, texture_flags)
from ._pycuda.memory.arrays import (Array, ArrayDescriptor, ArrayDescriptor3D, array3d_flags,
                                    array_cubemap_face, array_format, dtype_to_array_format,
                                    gpuarray_to_array, make_multichannel_2d_array, matrix_to_array, memcpy_atoa,
                                    memcpy_atod, memcpy_atoh, memcpy_dtoa, memcpy_htoa,
                                    np_to_array, py_memcpy_atoh, py_memcpy_htoa)
from ._pycuda.memory.copies_nd import (Memcpy2D, Memcpy3D, Memcpy3DPeer, memory_type, memset_d2d8,
                                       memset_d2d8_async, memset_d2d16, memset_d2d16_async,
                                       memset_d2d32, memset_d2d32_async)
from ._pycuda.memory.device import (DeviceAllocation, from_device, mem_alloc, mem_get_info,
                                    memcpy_dtod, memcpy_dtod_async, memcpy_dtoh, memcpy_dtoh_async,
                                    memcpy_htod, memcpy_htod_async, memset_d8, memset_d8_async,
                                    memset_d16, memset_d16_async, memset_d32, memset_d32_async,
                                    to_device)
from ._pycuda.memory.device_extras import (IPCMemoryHandle, PointerHolderBase, from_device_like,
                                           ipc_mem_flags, mem_alloc_ipc, mem_alloc_like,
                                           mem_alloc_pitch, mem_get_address_range,
                                           mem_get_ipc_handle, memcpy_peer, memcpy_peer_async,
                                           pointer_attribute)
from ._pycuda.memory.host import (AlignedHostAllocation, HostAllocation, HostPointer,
                                  ManagedAllocation, PagelockedHostAllocation,
                                  RegisteredHostMemory, aligned_empty, aligned_empty_like,
                                  aligned_zeros, aligned_zeros_like, host_alloc_flags,
                                  managed_empty, managed_empty_like, managed_zeros,
                                  managed_zeros_like, mem_attach_flags, mem_host_register_flags,
                                  pagelocked_empty, pagelocked_empty_like, pagelocked_zeros,
                                  pagelocked_zeros_like, register_host_memory)
from ._pycuda.memory.pools import (DeviceMemoryPool, PageLockedAllocator, PageLockedMemoryPool,
                                   PooledDeviceAllocation, PooledHostAllocation, bitlog2)

__all__ = [
    "Context", "Device", "device_attribute", "init", "get_version", "get_driver_version",
    "ctx_flags", "limit", "func_cache", "shared_config", "compute_mode",
    "Error", "LogicError", "LaunchError", "ContextLostError", "MemoryError", "RuntimeError",
    "CompileError",
    "DeviceAllocation", "mem_alloc", "mem_get_info", "to_device", "from_device",
    "memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "memcpy_htod_async", "memcpy_dtoh_async",
    "memcpy_dtod_async", "memset_d8", "memset_d16", "memset_d32", "memset_d8_async",
    "memset_d16_async", "memset_d32_async",
    "Module", "Function", "function_attribute", "module_from_buffer", "module_from_file",
    "ArgumentHandler", "In", "Out", "InOut",
    "Stream", "Event", "stream_flags", "event_flags",
    "Linker", "jit_input_type", "jit_option", "jit_target", "jit_fallback",
    "start_profiler", "stop_profiler", "initialize_profiler", "profiler_output_mode",
    "pointer_attribute", "array_cubemap_face", "TRSA_OVERRIDE_FORMAT", "TR_DEFAULT",
    "Array", "ArrayDescriptor", "ArrayDescriptor3D", "array_format", "array3d_flags", "dtype_to_array_format", "matrix_to_array", "np_to_array", "gpuarray_to_array", "make_multichannel_2d_array", "memcpy_htoa", "memcpy_atoh", "py_memcpy_htoa", "py_memcpy_atoh", "memcpy_dtoa", "memcpy_atod", "memcpy_atoa", "Memcpy2D", "Memcpy3D", "Memcpy3DPeer", "memory_type", "memset_d2d8", "memset_d2d16", "memset_d2d32", "memset_d2d8_async", "memset_d2d16_async", "memset_d2d32_async", "TextureObject", "SurfaceObject", "address_mode", "filter_mode", "resource_type", "texture_flags", "TRSF_READ_AS_INTEGER", "TRSF_NORMALIZED_COORDINATES", "TRSF_SRGB", "TRSF_DISABLE_TRILINEAR_OPTIMIZATION", "TRSF_SEAMLESS_CUBEMAP", "TextureReference", "SurfaceReference", "TextureReferenceError", "matrix_to_texref", "bind_array_to_texref",
    "HostPointer", "PagelockedHostAllocation", "HostAllocation", "AlignedHostAllocation", "RegisteredHostMemory", "ManagedAllocation", "host_alloc_flags", "mem_host_register_flags", "mem_attach_flags", "pagelocked_empty", "pagelocked_zeros", "pagelocked_empty_like", "pagelocked_zeros_like", "aligned_empty", "aligned_zeros", "aligned_empty_like", "aligned_zeros_like", "managed_empty", "managed_zeros", "managed_empty_like", "managed_zeros_like", "register_host_memory",
    "DeviceMemoryPool", "PageLockedMemoryPool", "PageLockedAllocator", "PooledDeviceAllocation",
    "PooledHostAllocation", "bitlog2",
    "mem_alloc_like", "mem_alloc_pitch", "mem_alloc_ipc", "mem_get_address_range", "from_device_like", "PointerHolderBase", "memcpy_peer", "memcpy_peer_async", "ipc_mem_flags", "mem_get_ipc_handle", "IPCMemoryHandle", "Graph", "GraphNode", "GraphExec", "capture_mode", "capture_status", "update_capture_dependencies_flags",
]
