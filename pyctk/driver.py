"""PyCUDA's ``pycuda.driver`` with no CUDA toolkit: devices, contexts, memory, streams, kernels.

A PyCUDA program runs with its imports changed::

    import pyctk.driver as cuda               # was: pycuda.driver
    from pyctk.compiler import SourceModule   # was: pycuda.compiler

No context needs to be set up, and no :func:`init` called: with no context pushed,
everything works in the primary context of the current device (0 unless changed), which
the CUDA runtime, PyTorch and CuPy use too, so that their arrays, streams and pyctk's mix
freely. :meth:`Device.make_context` makes a context of its own, as in PyCUDA, in which
:mod:`pyctk.driver` works while :func:`pyctk.matmul` and :class:`pyctk.DeviceArray` refuse
to; ``import pyctk.autoinit`` pushes the primary one.

Each name's documentation says where it departs from PyCUDA. The main departures:

- :func:`mem_alloc` takes its memory from the stream-ordered pool that pyctk's own arrays
  use; memory to share with another process comes from :func:`mem_alloc_ipc`.
- CUDA 12 removed texture and surface references: asking for one raises
  :class:`TextureReferenceError`, which says how to use :class:`TextureObject` and
  :class:`SurfaceObject` instead.
- :class:`Linker` links with nvJitLink, with no GPU, not with the driver's ``cuLink*``.
- A launch checks its arguments against the kernel's parameters before anything reaches
  the GPU.
- Graphs (:class:`Graph`) follow PyCUDA's pull request #424; released PyCUDA has none.

Memory, copies and kernels work as in PyCUDA:

>>> import numpy as np                           # doctest: +GPU
>>> import pyctk.driver as cuda
>>> a = np.arange(4, dtype=np.float32)
>>> a_gpu = cuda.mem_alloc(a.nbytes)
>>> cuda.memcpy_htod(a_gpu, a)
>>> b = np.empty_like(a)
>>> cuda.memcpy_dtoh(b, a_gpu)
>>> b
array([0., 1., 2., 3.], dtype=float32)
"""

from ._cuda.driver_errors import (
    CompileError,
    ContextLostError,
    Error,
    LaunchError,
    LogicError,
    MemoryError,
    RuntimeError,
)
from ._pycuda.contexts.devices import (
    Context,
    Device,
    compute_mode,
    ctx_flags,
    device_attribute,
    func_cache,
    get_driver_version,
    get_version,
    init,
    limit,
    shared_config,
)
from ._pycuda.contexts.profiler import initialize_profiler, profiler_output_mode, start_profiler, stop_profiler
from ._pycuda.contexts.streams import Event, Stream, event_flags, stream_flags
from ._pycuda.kernels.graphs import (
    Graph,
    GraphExec,
    GraphNode,
    capture_mode,
    capture_status,
    update_capture_dependencies_flags,
)
from ._pycuda.kernels.linking import Linker, jit_input_type, jit_option
from ._pycuda.kernels.modules import (
    ArgumentHandler,
    Function,
    In,
    InOut,
    Module,
    Out,
    function_attribute,
    jit_fallback,
    jit_target,
    module_from_buffer,
    module_from_file,
)
from ._pycuda.kernels.textures import (
    TR_DEFAULT,
    TRSA_OVERRIDE_FORMAT,
    TRSF_DISABLE_TRILINEAR_OPTIMIZATION,
    TRSF_NORMALIZED_COORDINATES,
    TRSF_READ_AS_INTEGER,
    TRSF_SEAMLESS_CUBEMAP,
    TRSF_SRGB,
    SurfaceObject,
    SurfaceReference,
    TextureObject,
    TextureReference,
    TextureReferenceError,
    address_mode,
    bind_array_to_texref,
    filter_mode,
    matrix_to_texref,
    resource_type,
    texture_flags,
)
from ._pycuda.memory.arrays import (
    Array,
    ArrayDescriptor,
    ArrayDescriptor3D,
    array3d_flags,
    array_cubemap_face,
    array_format,
    dtype_to_array_format,
    gpuarray_to_array,
    make_multichannel_2d_array,
    matrix_to_array,
    memcpy_atoa,
    memcpy_atod,
    memcpy_atoh,
    memcpy_dtoa,
    memcpy_htoa,
    np_to_array,
    py_memcpy_atoh,
    py_memcpy_htoa,
)
from ._pycuda.memory.copies_nd import (
    Memcpy2D,
    Memcpy3D,
    Memcpy3DPeer,
    memory_type,
    memset_d2d8,
    memset_d2d8_async,
    memset_d2d16,
    memset_d2d16_async,
    memset_d2d32,
    memset_d2d32_async,
)
from ._pycuda.memory.device import (
    DeviceAllocation,
    from_device,
    mem_alloc,
    mem_get_info,
    memcpy_dtod,
    memcpy_dtod_async,
    memcpy_dtoh,
    memcpy_dtoh_async,
    memcpy_htod,
    memcpy_htod_async,
    memset_d8,
    memset_d8_async,
    memset_d16,
    memset_d16_async,
    memset_d32,
    memset_d32_async,
    to_device,
)
from ._pycuda.memory.device_extras import (
    IPCMemoryHandle,
    PointerHolderBase,
    from_device_like,
    ipc_mem_flags,
    mem_alloc_ipc,
    mem_alloc_like,
    mem_alloc_pitch,
    mem_get_address_range,
    mem_get_ipc_handle,
    memcpy_peer,
    memcpy_peer_async,
    pointer_attribute,
)
from ._pycuda.memory.host import (
    AlignedHostAllocation,
    HostAllocation,
    HostPointer,
    ManagedAllocation,
    PagelockedHostAllocation,
    RegisteredHostMemory,
    aligned_empty,
    aligned_empty_like,
    aligned_zeros,
    aligned_zeros_like,
    host_alloc_flags,
    managed_empty,
    managed_empty_like,
    managed_zeros,
    managed_zeros_like,
    mem_attach_flags,
    mem_host_register_flags,
    pagelocked_empty,
    pagelocked_empty_like,
    pagelocked_zeros,
    pagelocked_zeros_like,
    register_host_memory,
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
    "Array", "ArrayDescriptor", "ArrayDescriptor3D", "array_format", "array3d_flags", "dtype_to_array_format",
    "matrix_to_array", "np_to_array", "gpuarray_to_array", "make_multichannel_2d_array", "memcpy_htoa", "memcpy_atoh",
    "py_memcpy_htoa", "py_memcpy_atoh", "memcpy_dtoa", "memcpy_atod", "memcpy_atoa", "Memcpy2D", "Memcpy3D",
    "Memcpy3DPeer", "memory_type", "memset_d2d8", "memset_d2d16", "memset_d2d32", "memset_d2d8_async",
    "memset_d2d16_async", "memset_d2d32_async", "TextureObject", "SurfaceObject", "address_mode", "filter_mode",
    "resource_type", "texture_flags", "TRSF_READ_AS_INTEGER", "TRSF_NORMALIZED_COORDINATES", "TRSF_SRGB",
    "TRSF_DISABLE_TRILINEAR_OPTIMIZATION", "TRSF_SEAMLESS_CUBEMAP", "TextureReference", "SurfaceReference",
    "TextureReferenceError", "matrix_to_texref", "bind_array_to_texref",
    "HostPointer", "PagelockedHostAllocation", "HostAllocation", "AlignedHostAllocation", "RegisteredHostMemory",
    "ManagedAllocation", "host_alloc_flags", "mem_host_register_flags", "mem_attach_flags", "pagelocked_empty",
    "pagelocked_zeros", "pagelocked_empty_like", "pagelocked_zeros_like", "aligned_empty", "aligned_zeros",
    "aligned_empty_like", "aligned_zeros_like", "managed_empty", "managed_zeros", "managed_empty_like",
    "managed_zeros_like", "register_host_memory",
    "DeviceMemoryPool", "PageLockedMemoryPool", "PageLockedAllocator", "PooledDeviceAllocation",
    "PooledHostAllocation", "bitlog2",
    "mem_alloc_like", "mem_alloc_pitch", "mem_alloc_ipc", "mem_get_address_range", "from_device_like",
    "PointerHolderBase", "memcpy_peer", "memcpy_peer_async", "ipc_mem_flags", "mem_get_ipc_handle", "IPCMemoryHandle",
    "Graph", "GraphNode", "GraphExec", "capture_mode", "capture_status", "update_capture_dependencies_flags",
]
