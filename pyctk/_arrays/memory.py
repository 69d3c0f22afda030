"""Device memory from pyctk's pool on each device: one ``Allocation`` per block, freed when garbage.

``allocate`` takes memory with CUDA's stream-ordered allocator, from the memory pool of
pyctk's context on the device (``gpumatmul_device_alloc``: ``cudaMallocFromPoolAsync``).
pyctk's own pool, not the device's default one, because it keeps freed memory for the
next allocation, where the default pool returns it to the driver at every
synchronisation and the next allocation maps it again (tens of microseconds); and
because setting that on the default pool would change it for every other library in
the process. DeviceArray holds an ``Allocation``; pyctk.driver's ``DeviceAllocation`` is one
(``allocate(..., kind=DeviceAllocation)``: one object per block, a small result's host time).

Small blocks freed on the legacy default stream are kept, a few of each size, for the next
allocation of that size there (``take``): the pool's allocation and free of one block cost
5 us of host time together (an H100 with driver 580), a third of a 16 x 16 product's call.
Handing a block freed on a stream to the next allocation on that stream is what the pool
does itself (its blocks are ordered on their stream), so no event is needed. Only the legacy
stream: it never dies, and it is one stream for every thread (a per-thread default stream
is not, and a stream of the caller's may be destroyed while a block waits).
"""

from __future__ import annotations

import gc
from ctypes import byref, c_void_p
from typing import Any, TypeVar, overload

from .._cuda import contexts, library, status, streams

RECYCLED_MAX_BYTES = 1 << 20  # blocks up to this size are kept for reuse ...
RECYCLED_PER_SIZE = 4  # ... this many of each size and device (16 MiB at most in all
# for sizes that are powers of two, more for a program of many sizes)
_recycled: dict[tuple[int, int], list[tuple[int, Any]]] = {}  # (device, bytes) -> [(pointer, context)]
_LEGACY = (0, streams.LEGACY)


class Allocation:
    """Device memory from pyctk's pool on ``device`` (made by ``allocate``, or by a C call that
    allocates, such as gpumatmul_gemm_device_new), returned to the pool when garbage.

    It is freed on ``stream``, so that the pool reuses it only after the work queued there:
    ``stream_owner``, the Python object that ``stream`` came from (a CuPy or pyctk.driver
    stream, which destroys its CUDA stream when collected), is kept alive until then, since
    freeing on a destroyed stream crashes the process. A bare int handle has no owner: its
    stream must outlive the memory, as in CUDA.

    A subclass may hold memory of its own (``context`` None: not the pool's), which it frees."""

    __slots__ = ("pointer", "context", "device", "stream", "stream_owner", "nbytes")

    def __init__(
        self, pointer: int, context: Any, device: int, stream: int, stream_owner: Any = None, nbytes: int = 0
    ) -> None:
        self.pointer, self.context, self.device, self.stream = pointer, context, device, stream
        self.stream_owner, self.nbytes = stream_owner, nbytes  # nbytes 0: not known, not kept

    def __del__(self) -> None:
        if not self.pointer or self.context is None:  # (None: memory a subclass frees)
            return
        if self.stream in _LEGACY and 0 < self.nbytes <= RECYCLED_MAX_BYTES:
            # A small block freed on the legacy stream: kept for take, while its size has room.
            # Its context is checked there and in release_recycled, not here (a small
            # product's result comes back here on every call).
            blocks = _recycled.setdefault((self.device, self.nbytes), [])
            if len(blocks) < RECYCLED_PER_SIZE:
                blocks.append((self.pointer, self.context))
                return
        # Not in a child forked after the memory was allocated: the memory and the context
        # are the parent's (pyctk._cuda.contexts forgets its contexts in the child).
        if contexts.alive(self.device, self.context):
            # The status is not checked: no one is there to tell. A sticky device error
            # resurfaces at the next call; at exit the runtime may already be unloading.
            library.library().gpumatmul_device_free(self.context, self.pointer, self.stream)


def take(context: Any, device: int, nbytes: int, stream: int) -> int:
    """A kept block of ``nbytes`` of ``context`` for use on ``stream``, or 0 where there is
    none (another stream than the legacy one, a size not kept, none left)."""
    if stream in _LEGACY:
        blocks = _recycled.get((device, nbytes))
        while blocks:
            try:
                pointer, owner = blocks.pop()
            except IndexError:  # taken by another thread meanwhile
                break
            if owner is context:
                return pointer
            if contexts.alive(device, owner):  # another context's (pyctk.driver made one): its own
                library.library().gpumatmul_device_free(owner, pointer, 0)
            # (else one a forked child inherited, or one destroyed with its made context)
    return 0


def release_recycled() -> None:
    """Return every kept block to the pool, for an allocation that found it empty."""
    while _recycled:
        (device, _), blocks = _recycled.popitem()
        for pointer, context in blocks:
            if contexts.alive(device, context):
                library.library().gpumatmul_device_free(context, pointer, 0)


def allocating(call: Any, *args: Any) -> int:
    """``call(*args)``, a libgpumatmul call that allocates, again after collecting garbage if
    it ran out of device memory; its status. Garbage arrays may hold the memory: in reference
    cycles, or anywhere on PyPy, whose collector runs by host memory use and knows nothing of
    the GPU's."""
    code: int = call(*args)
    if code == status.OUT_OF_MEMORY:
        gc.collect()
        release_recycled()  # (after the collection, which may keep more)
        code = call(*args)
    return code


_Kind = TypeVar("_Kind", bound="Allocation")


@overload
def allocate(nbytes: int, device: int, stream: int, stream_owner: Any = None) -> Allocation: ...
@overload
def allocate(nbytes: int, device: int, stream: int, stream_owner: Any = None, *, kind: type[_Kind]) -> _Kind: ...
def allocate(
    nbytes: int, device: int, stream: int, stream_owner: Any = None, kind: type[Allocation] = Allocation
) -> Allocation:
    """``nbytes`` from pyctk's pool on ``device``, ordered on ``stream`` (0 bytes: NULL), as a
    ``kind`` (``Allocation`` or a subclass that adds methods); ``stream_owner`` as for
    ``Allocation``."""
    if not nbytes:  # a zero-size array needs no memory: its pointer is NULL
        return kind(0, None, device, stream)
    context = contexts.context(device)
    kept = take(context, device, nbytes, stream)
    if kept:
        return kind(kept, context, device, stream, stream_owner, nbytes)
    pointer = c_void_p()
    code = allocating(library.library().gpumatmul_device_alloc, context, nbytes, stream, byref(pointer))
    if code:
        raise library.error(code)
    return kind(pointer.value or 0, context, device, stream, stream_owner, nbytes)
