"""The rest of PyCUDA's device memory: allocations shaped like an array or pitched, address
ranges, ``PointerHolderBase``, copies between devices, and memory shared with another process.

``mem_alloc`` takes its memory from pyctk's stream-ordered pool (``pyctk._pycuda.memory.device``; in
a device's primary context, pyctk's default, and not in one ``Device.make_context`` made).
``mem_alloc_pitch`` and ``mem_alloc_ipc`` take it from the driver itself (``cuMemAllocPitch``,
``cuMemAlloc``, as PyCUDA's ``mem_alloc`` did), and it is freed (``cuMemFree``) by ``free()``
or when garbage. CUDA's IPC shares only such memory: memory to share with another process
comes from ``mem_alloc_ipc``.

>>> a_gpu = mem_alloc_ipc(a.nbytes)                   # doctest: +SKIP
>>> handle = mem_get_ipc_handle(a_gpu)               # 64 bytes, sent to the other process  # doctest: +SKIP
>>> b_gpu = IPCMemoryHandle(handle)                  # there: a_gpu's memory  # doctest: +SKIP
"""

from __future__ import annotations

import enum
import operator
import os
from contextlib import suppress
from ctypes import byref, c_int, c_size_t, c_uint64
from typing import Any

import numpy as np

from ..._cuda import driver_api, streams
from ..._cuda.driver_errors import Error, LogicError
from ..contexts.devices import Context, in_context, made_context
from ..contexts.streams import to_ipc_handle
from .device import DeviceAllocation, _contiguous_device, _enqueue, mem_alloc, memcpy_dtoh

_PITCH_ACCESS_SIZES = (4, 8, 16)  # the ElementSizeBytes cuMemAllocPitch takes
_INVALID_VALUE = 1                # CUDA_ERROR_INVALID_VALUE


class pointer_attribute(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """``CUpointer_attribute`` values (cuda.h): what ``cuPointerGetAttribute`` tells of an
    address (PyCUDA's four, and the one ``mem_get_ipc_handle`` asks)."""

    CONTEXT = 1
    MEMORY_TYPE = 2
    DEVICE_POINTER = 3
    HOST_POINTER = 4
    IS_LEGACY_CUDA_IPC_CAPABLE = 10  # memory cuIpcGetMemHandle can share


class ipc_mem_flags(enum.IntFlag):  # noqa: N801 - PyCUDA's name
    """``CUipcMem_flags`` values (cuda.h), for ``IPCMemoryHandle``."""

    LAZY_ENABLE_PEER_ACCESS = 0x1  # memory on another device: the driver enables peer access


class PointerHolderBase:
    """The base of objects that stand for device memory (PyCUDA's): a subclass defines
    ``get_pointer()``, returning the device address, and goes wherever device memory does
    (copies, fills, kernel arguments, prepared calls, ``int()``, ``numpy.uintp()``).

    >>> class TorchMemory(PointerHolderBase):
    ...     def __init__(self, tensor):
    ...         super().__init__()
    ...         self.tensor = tensor                    # alive as long as this object
    ...     def get_pointer(self):
    ...         return self.tensor.data_ptr()
    >>> memcpy_htod(TorchMemory(t), a)                  # doctest: +SKIP
    """

    def get_pointer(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define get_pointer(), returning the "
                                  f"device address it stands for (PointerHolderBase has none)")

    def __int__(self) -> int:
        return operator.index(self.get_pointer())

    __index__ = __int__
    as_buffer = DeviceAllocation.as_buffer


class _DriverMemory:
    """Memory the driver mapped for this process, given back by ``release`` (``cuMemAlloc``'s
    and ``cuMemAllocPitch``'s by ``cuMemFree``, ``cuIpcOpenMemHandle``'s by
    ``cuIpcCloseMemHandle``) on ``free()`` or when garbage, in the context it was mapped in
    (the current one when it was made). Not in a child forked after: it is the parent's."""

    __slots__ = ("_context", "_made", "_pid", "_release", "device", "pointer")

    def __init__(self, pointer: int, device: int, release: str) -> None:
        self.pointer, self.device, self._release = pointer, device, release
        self._context, self._pid = driver_api.current_context(), os.getpid()
        self._made = made_context()  # None: a primary context, which lives as long as the process

    def free(self) -> None:
        """Give the memory back now; a second call does nothing."""
        pointer, self.pointer = self.pointer, 0
        # Not in a context make_context made that was destroyed since: it freed its memory.
        if pointer and os.getpid() == self._pid and (self._made is None or self._made.alive):
            in_context(self._context, self._release, pointer)

    def __del__(self) -> None:
        if self.pointer and driver_api._driver is not None:
            with suppress(Error):  # no one is there to tell
                self.free()


class _DriverAllocation(DeviceAllocation):
    """A ``DeviceAllocation`` of memory from the driver, not from the pool: ``_memory`` frees it
    (on ``free()``, or when it is garbage with this allocation)."""

    __slots__ = ("_memory",)

    def __init__(self, memory: _DriverMemory, nbytes: int) -> None:
        super().__init__(memory.pointer, context=None, device=memory.device, stream=0, nbytes=nbytes)
        self._memory = memory

    def free(self) -> None:
        """Free the memory now (``cuMemFree``: it waits for the GPU). Freeing twice does nothing."""
        self.pointer = 0
        self._memory.free()


def mem_alloc_like(ary: Any) -> DeviceAllocation:
    """``mem_alloc(ary.nbytes)``: device memory for a copy of array ``ary``."""
    return mem_alloc(ary.nbytes)


def mem_alloc_pitch(width: int, height: int, access_size: int) -> tuple[DeviceAllocation, int]:
    """``height`` rows of ``width`` bytes on the current device, each row ``pitch`` bytes after
    the one before (PyCUDA's, ``cuMemAllocPitch``): each row aligned for coalesced access by
    threads reading or writing ``access_size`` bytes each (4, 8 or 16). Returns
    ``(allocation, pitch)``; element ``(row, column)`` of a 2-D array of ``T`` is at
    ``int(allocation) + row * pitch + column * sizeof(T)``.

    >>> a_gpu, pitch = mem_alloc_pitch(columns * 4, rows, 4)   # a float32 matrix  # doctest: +SKIP
    """
    width, height, access_size = [operator.index(v) for v in (width, height, access_size)]
    if width < 0 or height < 0:
        raise ValueError(f"mem_alloc_pitch: width={width} and height={height} must not be negative")
    if access_size not in _PITCH_ACCESS_SIZES:
        raise ValueError(f"mem_alloc_pitch: access_size={access_size}, but cuMemAllocPitch takes 4, 8 "
                         f"or 16: the bytes each thread reads or writes at once (4 for float32)")
    device = driver_api.current_device()
    pointer, pitch = c_uint64(), c_size_t()
    driver_api.call("cuMemAllocPitch", byref(pointer), byref(pitch), width, height, access_size)
    memory = _DriverMemory(pointer.value, device, "cuMemFree")
    return _DriverAllocation(memory, pitch.value * height), pitch.value


def mem_alloc_ipc(nbytes: int) -> DeviceAllocation:
    """``nbytes`` of memory on the current device straight from the driver (``cuMemAlloc``, as
    PyCUDA's ``mem_alloc`` gave it), which ``mem_get_ipc_handle`` can share with another
    process: pyctk's ``mem_alloc`` takes its memory from a stream-ordered pool in a primary
    context, which CUDA cannot share. Freed by ``free()`` or when garbage. pyctk's own: PyCUDA
    has no such function.
    """
    nbytes = operator.index(nbytes)
    if nbytes <= 0:
        raise ValueError(f"mem_alloc_ipc: {nbytes} bytes; the driver allocates 1 byte or more")
    device = driver_api.current_device()
    pointer = c_uint64()
    driver_api.call("cuMemAlloc", byref(pointer), nbytes)
    return _DriverAllocation(_DriverMemory(pointer.value, device, "cuMemFree"), nbytes)


def mem_get_address_range(ptr: Any) -> tuple[int, int]:
    """``(base, size)`` of the allocation that device address ``ptr`` lies in
    (``cuMemGetAddressRange``). For memory from a stream-ordered pool (``mem_alloc``'s) it is
    the range the pool took from the driver, which may hold more than the allocation."""
    address = _contiguous_device(ptr, 0)
    driver_api.current_context()
    base, size = c_uint64(), c_size_t()
    driver_api.call("cuMemGetAddressRange", byref(base), byref(size), address)
    return base.value, size.value


def from_device_like(devptr: Any, other_ary: Any) -> np.ndarray:
    """A new NumPy array like ``other_ary`` (shape, dtype, order) copied from device memory
    ``devptr``; returns when the copy is done."""
    result = np.empty_like(other_ary)
    memcpy_dtoh(result, devptr)
    return result


# ---------------------------------------------------------------------------
# Copies between devices. PyCUDA tests its contexts' None inversely (its defaults crash);
# here None is the current context, as it documents.

def memcpy_peer(dest: Any, src: Any, size: int, dest_context: Context | None = None,
                src_context: Context | None = None) -> None:
    """Copy ``size`` bytes from device memory ``src`` of ``src_context`` to ``dest`` of
    ``dest_context`` (``cuMemcpyPeer``), devices apart or not; returns when it is done.

    A context is a ``Context`` (``Device(1).retain_primary_context()``) or None, the current one.

    >>> memcpy_peer(b_gpu, a_gpu, a.nbytes, Device(1).retain_primary_context())  # doctest: +SKIP
    """
    _copy_peer(dest, src, size, dest_context, src_context, None, synchronous=True)


def memcpy_peer_async(dest: Any, src: Any, size: int, dest_context: Context | None = None,
                      src_context: Context | None = None, stream: Any = None) -> None:
    """``memcpy_peer`` enqueued on ``stream`` (None: the legacy default stream)."""
    _copy_peer(dest, src, size, dest_context, src_context, stream, synchronous=False)


def _copy_peer(dest: Any, src: Any, size: int, dest_context: Context | None,
               src_context: Context | None, stream: Any, synchronous: bool) -> None:
    size = operator.index(size)
    if size < 0:
        raise ValueError(f"memcpy_peer: size={size} bytes must not be negative")
    for context, name in ((dest_context, "dest_context"), (src_context, "src_context")):
        if context is not None and not isinstance(context, Context):
            raise TypeError(f"memcpy_peer: {name} must be a Context "
                            f"(Device(n).retain_primary_context()) or None for the current "
                            f"context, not {type(context).__name__}")
    handle = streams.handle(stream)
    current = driver_api.current_context()
    _enqueue("cuMemcpyPeer", synchronous, handle,
             _contiguous_device(dest, handle), current if dest_context is None else dest_context.handle,
             _contiguous_device(src, handle), current if src_context is None else src_context.handle,
             size)


# ---------------------------------------------------------------------------
# IPC: device memory shared with another process.

def mem_get_ipc_handle(devptr: Any) -> bytearray:
    """A handle to device memory for another process, which opens it with ``IPCMemoryHandle``:
    64 bytes (PyCUDA's ``mem_get_ipc_handle``, ``cuIpcGetMemHandle``).

    CUDA shares memory from ``cuMemAlloc`` only: allocate what to share with
    ``mem_alloc_ipc`` (``mem_alloc``'s memory in a primary context comes from a stream-ordered
    pool, which it cannot share: LogicError, saying so).
    """
    address = _contiguous_device(devptr, 0)
    driver_api.current_context()
    capable = c_int()
    result = driver_api.driver().cuPointerGetAttribute(
        byref(capable), pointer_attribute.IS_LEGACY_CUDA_IPC_CAPABLE, address)
    if result == _INVALID_VALUE or not (result or capable.value):  # not CUDA's, or not cuMemAlloc's
        raise LogicError(f"mem_get_ipc_handle: CUDA cannot share the memory at {address:#x} with "
                         f"another process: its IPC shares memory from cuMemAlloc only, and "
                         f"mem_alloc's comes from pyctk's stream-ordered pool in a device's primary "
                         f"context. Allocate the memory to share with pyctk.driver.mem_alloc_ipc(nbytes)",
                         "CUDA_ERROR_INVALID_VALUE", _INVALID_VALUE)
    driver_api.check(result, "cuPointerGetAttribute")
    handle = driver_api.IpcHandle()
    driver_api.call("cuIpcGetMemHandle", byref(handle), address)
    return bytearray(handle)


class IPCMemoryHandle(PointerHolderBase):
    """Device memory of another process, opened here from the handle its ``mem_get_ipc_handle``
    gave (PyCUDA's, ``cuIpcOpenMemHandle``, on the current device): ``int(h)`` is its address
    in this process, and it goes wherever device memory does. ``close()``, or garbage, unmaps
    it; the other process must keep its memory until then.

    ``ipc_handle``: the 64 bytes, a bytearray as PyCUDA has them or bytes from a pipe.

    >>> b_gpu = IPCMemoryHandle(handle)                 # doctest: +SKIP
    >>> memcpy_dtoh(b, b_gpu); b_gpu.close()            # doctest: +SKIP
    """

    def __init__(self, ipc_handle: Any, flags: int = ipc_mem_flags.LAZY_ENABLE_PEER_ACCESS) -> None:
        handle = to_ipc_handle(ipc_handle)
        device = driver_api.current_device()
        pointer = c_uint64()
        driver_api.call("cuIpcOpenMemHandle", byref(pointer), handle, int(flags))
        self._memory = _DriverMemory(pointer.value, device, "cuIpcCloseMemHandle")

    def get_pointer(self) -> int:
        if not self._memory.pointer:
            raise ValueError("this IPCMemoryHandle was closed")
        return self._memory.pointer

    def close(self) -> None:
        """Unmap the memory now; closing twice does nothing."""
        self._memory.free()
