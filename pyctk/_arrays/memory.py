"""Device memory from pyctk's pool on each device: one ``Allocation`` per block, freed when garbage.

``allocate`` takes memory with CUDA's stream-ordered allocator, from the memory pool of
pyctk's context on the device (``gpumatmul_device_alloc``: ``cudaMallocFromPoolAsync``).
pyctk's own pool, not the device's default one, because it keeps freed memory for the
next allocation, where the default pool returns it to the driver at every
synchronisation and the next allocation maps it again (tens of microseconds); and
because setting that on the default pool would change it for every other library in
the process. DeviceArray and pyctk.driver's ``mem_alloc`` hold an ``Allocation``.
"""

from __future__ import annotations

import gc
from ctypes import byref, c_void_p
from typing import Any

from .._cuda import contexts, library, status


class Allocation:
    """Device memory from pyctk's pool on ``device`` (made by ``allocate``, or by a C call that
    allocates, such as gpumatmul_gemm_device_new), returned to the pool when garbage.

    It is freed on ``stream``, so that the pool reuses it only after the work queued there:
    ``stream_owner``, the Python object that ``stream`` came from (a CuPy or pyctk.driver
    stream, which destroys its CUDA stream when collected), is kept alive until then, since
    freeing on a destroyed stream crashes the process. A bare int handle has no owner: its
    stream must outlive the memory, as in CUDA."""

    __slots__ = ("pointer", "context", "device", "stream", "stream_owner")

    def __init__(self, pointer: int, context: Any, device: int, stream: int,
                 stream_owner: Any = None) -> None:
        self.pointer, self.context, self.device, self.stream = pointer, context, device, stream
        self.stream_owner = stream_owner

    def __del__(self) -> None:
        # Not in a child forked after the memory was allocated: the memory and the context
        # are the parent's (pyctk._cuda.contexts forgets its contexts in the child).
        if self.pointer and contexts.alive(self.device, self.context):
            # The status is not checked: no one is there to tell. A sticky device error
            # resurfaces at the next call; at exit the runtime may already be unloading.
            library.library().gpumatmul_device_free(self.context, self.pointer, self.stream)


def allocating(call: Any, *args: Any) -> int:
    """``call(*args)``, a libgpumatmul call that allocates, again after collecting garbage if
    it ran out of device memory; its status. Garbage arrays may hold the memory: in reference
    cycles, or anywhere on PyPy, whose collector runs by host memory use and knows nothing of
    the GPU's."""
    code = call(*args)
    if code == status.OUT_OF_MEMORY:
        gc.collect()
        code = call(*args)
    return code


def allocate(nbytes: int, device: int, stream: int, stream_owner: Any = None) -> Allocation:
    """``nbytes`` from pyctk's pool on ``device``, ordered on ``stream`` (0 bytes: NULL);
    ``stream_owner`` as for ``Allocation``."""
    if not nbytes:  # a zero-size array needs no memory: its pointer is NULL
        return Allocation(0, None, device, stream)
    context, pointer = contexts.context(device), c_void_p()
    code = allocating(library.library().gpumatmul_device_alloc, context, nbytes, stream,
                      byref(pointer))
    if code:
        raise library.error(code)
    return Allocation(pointer.value, context, device, stream, stream_owner)
