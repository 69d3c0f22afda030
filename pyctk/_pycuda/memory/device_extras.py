"""The rest of PyCUDA's device memory: allocations shaped like an array or pitched, address
ranges, ``PointerHolderBase``, copies between devices, and memory shared with another process.

``mem_alloc`` takes its memory from pyctk's stream-ordered pool (``pyctk._pycuda.memory.device``) in
a device's primary context, pyctk's default, and ``cuMemAlloc`` in one ``Device.make_context`` made.
``mem_alloc_pitch`` and ``mem_alloc_ipc`` take it from the driver itself (``cuMemAllocPitch``,
``cuMemAlloc``, as PyCUDA's ``mem_alloc`` did), and it is freed (``cuMemFree``) by ``free()``
or when garbage. CUDA's IPC shares only such memory: memory to share with another process
comes from ``mem_alloc_ipc``.

>>> import pyctk.driver as cuda                      # doctest: +GPU
>>> a_gpu = cuda.mem_alloc_ipc(1024)
>>> handle = cuda.mem_get_ipc_handle(a_gpu)         # 64 bytes, to send to another process
>>> len(handle)
64
"""

from __future__ import annotations

import enum
import operator
import os
from contextlib import suppress
from ctypes import byref, c_int, c_size_t, c_uint64
from typing import Any

import numpy as np

from ..._cuda import constants as cu
from ..._cuda import driver_api, streams
from ..._cuda.driver_errors import Error, LogicError
from ..contexts.devices import Context
from ..contexts.made_contexts import in_context, made_context
from ..contexts.streams import to_ipc_handle
from .device import DeviceAllocation, _contiguous_device, _enqueue, mem_alloc, memcpy_dtoh
from .sizes import byte_count

_PITCH_ACCESS_SIZES = (4, 8, 16)  # the ElementSizeBytes cuMemAllocPitch takes


class pointer_attribute(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """What the driver tells of an address: ``CUpointer_attribute`` (cuda.h).

    PyCUDA's four, and the one :func:`mem_get_ipc_handle` asks.
    """

    CONTEXT = cu.CU_POINTER_ATTRIBUTE_CONTEXT  #: The context the memory belongs to.
    MEMORY_TYPE = cu.CU_POINTER_ATTRIBUTE_MEMORY_TYPE  #: A :class:`memory_type`: host or device memory.
    DEVICE_POINTER = cu.CU_POINTER_ATTRIBUTE_DEVICE_POINTER  #: The address for the GPU.
    HOST_POINTER = cu.CU_POINTER_ATTRIBUTE_HOST_POINTER  #: The address for the host.
    IS_LEGACY_CUDA_IPC_CAPABLE = (
        cu.CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE
    )  #: Whether ``cuIpcGetMemHandle`` can share it (not in PyCUDA).


class ipc_mem_flags(enum.IntFlag):  # noqa: N801 - PyCUDA's name
    """Flags of :class:`IPCMemoryHandle`: ``CUipcMem_flags`` (cuda.h)."""

    #: For memory on another device, the driver enables peer access to it.
    LAZY_ENABLE_PEER_ACCESS = cu.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS


class PointerHolderBase:
    """The base of objects that stand for device memory (PyCUDA's ``PointerHolderBase``).

    A subclass defines :meth:`get_pointer`, returning the device address, and goes wherever
    device memory does: copies, fills, kernel arguments, prepared calls, ``int()``,
    ``numpy.uintp()``.

    Examples
    --------
    Device memory that another library allocated, kept alive by the object that stands for
    it:

    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> class Memory(cuda.PointerHolderBase):
    ...     def __init__(self, owner):
    ...         super().__init__()
    ...         self.owner = owner                   # alive as long as this object
    ...     def get_pointer(self):
    ...         return int(self.owner)
    >>> memory = Memory(cuda.mem_alloc(16))
    >>> cuda.memcpy_htod(memory, np.arange(4, dtype=np.int32))
    >>> cuda.from_device(memory, (4,), np.int32)
    array([0, 1, 2, 3], dtype=int32)
    """

    def get_pointer(self) -> int:
        """The device address this object stands for; a subclass defines it.

        Returns
        -------
        int

        Raises
        ------
        NotImplementedError
            Here in the base class.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define get_pointer(), returning the "
            f"device address it stands for (PointerHolderBase has none)"
        )

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
        """Free the memory now (``cuMemFree``, which waits for the GPU). Freeing twice does nothing."""
        self.pointer = 0
        self._memory.free()


def mem_alloc_like(ary: Any) -> DeviceAllocation:
    """Allocate device memory for a copy of an array: ``mem_alloc(ary.nbytes)``.

    Parameters
    ----------
    ary : numpy.ndarray
        Or anything with ``nbytes``.

    Returns
    -------
    DeviceAllocation
    """
    return mem_alloc(ary.nbytes)


def mem_alloc_pitch(width: int, height: int, access_size: int) -> tuple[DeviceAllocation, int]:
    """Allocate rows of device memory, each aligned for coalesced access (``cuMemAllocPitch``).

    The memory comes from the driver, not from pyctk's pool, and is freed by ``free()`` or
    when garbage.

    Parameters
    ----------
    width : int
        Bytes of each row.
    height : int
        Rows.
    access_size : {4, 8, 16}
        The bytes each thread reads or writes at once (4 for float32).

    Returns
    -------
    allocation : DeviceAllocation
        Of ``pitch * height`` bytes.
    pitch : int
        Bytes from one row to the next, ``width`` or more: element ``(row, column)`` of a
        2-D array of ``T`` is at ``int(allocation) + row * pitch + column * sizeof(T)``.

    Raises
    ------
    ValueError
        A negative size, or an ``access_size`` of neither 4, 8 nor 16.

    See Also
    --------
    Memcpy2D : Copies to and from pitched memory.
    memset_d2d8 : Fills of pitched rows.

    Examples
    --------
    A float32 matrix of 20 rows of 100:

    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> a_gpu, pitch = cuda.mem_alloc_pitch(100 * 4, 20, 4)
    >>> pitch >= 400, pitch % 128
    (True, 0)
    """
    width = byte_count(width, "mem_alloc_pitch: width")
    height = byte_count(height, "mem_alloc_pitch: height")
    access_size = operator.index(access_size)
    if access_size not in _PITCH_ACCESS_SIZES:
        raise ValueError(
            f"mem_alloc_pitch: access_size={access_size}, but cuMemAllocPitch takes 4, 8 "
            f"or 16: the bytes each thread reads or writes at once (4 for float32)"
        )
    device = driver_api.current_device()
    pointer, pitch = c_uint64(), c_size_t()
    driver_api.call("cuMemAllocPitch", byref(pointer), byref(pitch), width, height, access_size)
    memory = _DriverMemory(pointer.value, device, "cuMemFree")
    return _DriverAllocation(memory, pitch.value * height), pitch.value


def mem_alloc_ipc(nbytes: int) -> DeviceAllocation:
    """Allocate device memory that another process can use (not in PyCUDA).

    The memory comes straight from the driver (``cuMemAlloc``, as PyCUDA's ``mem_alloc``
    gave it), which :func:`mem_get_ipc_handle` can share: :func:`mem_alloc` takes its memory
    from a stream-ordered pool, which CUDA cannot share. Freed by ``free()`` or when garbage
    (``cuMemFree``, which waits for the GPU).

    Parameters
    ----------
    nbytes : int
        1 or more.

    Returns
    -------
    DeviceAllocation

    See Also
    --------
    mem_get_ipc_handle : The handle to send to the other process, with an example.
    """
    nbytes = byte_count(nbytes, "mem_alloc_ipc: nbytes", least=1)  # (the driver allocates 1 or more)
    device = driver_api.current_device()
    pointer = c_uint64()
    driver_api.call("cuMemAlloc", byref(pointer), nbytes)
    return _DriverAllocation(_DriverMemory(pointer.value, device, "cuMemFree"), nbytes)


def mem_get_address_range(ptr: Any) -> tuple[int, int]:
    """Where the allocation that a device address lies in starts, and its size.

    Parameters
    ----------
    ptr
        Device memory: a :class:`DeviceAllocation`, an int address, a GPU array.

    Returns
    -------
    tuple of int
        ``(base, size)`` (``cuMemGetAddressRange``). For :func:`mem_alloc`'s memory, from a
        stream-ordered pool, it is what the driver knows: the allocation itself, or a range
        the pool took that holds it.
    """
    address = _contiguous_device(ptr, 0)
    driver_api.current_context()
    base, size = c_uint64(), c_size_t()
    driver_api.call("cuMemGetAddressRange", byref(base), byref(size), address)
    return base.value, size.value


def from_device_like(devptr: Any, other_ary: Any) -> np.ndarray:
    """Copy device memory into a new NumPy array shaped like another; return when it is done.

    Parameters
    ----------
    devptr
        The device memory: a :class:`DeviceAllocation`, an int address, a GPU array ...
    other_ary : numpy.ndarray
        Whose shape, dtype and order the new array has.

    Returns
    -------
    numpy.ndarray
    """
    result = np.empty_like(other_ary)
    memcpy_dtoh(result, devptr)
    return result


# ---------------------------------------------------------------------------
# Copies between devices. PyCUDA tests its contexts' None inversely (its defaults crash);
# here None is the current context, as it documents.


def memcpy_peer(
    dest: Any, src: Any, size: int, dest_context: Context | None = None, src_context: Context | None = None
) -> None:
    """Copy bytes between the memory of two contexts, on one device or two (``cuMemcpyPeer``).

    The call returns when the copy is done. Unlike PyCUDA's, whose defaults crash, a context
    of None is the current one, as PyCUDA documents.

    Parameters
    ----------
    dest, src
        Device memory: a :class:`DeviceAllocation`, an int address, a GPU array ...
    size : int
        Bytes to copy.
    dest_context, src_context : Context, optional
        The contexts ``dest`` and ``src`` belong to (``Device(1).retain_primary_context()``
        for device 1's primary context); default None, the current context.

    Raises
    ------
    TypeError
        A context that is neither a :class:`Context` nor None.

    Examples
    --------
    Within one device, both contexts are the current one:

    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a_gpu = cuda.to_device(np.arange(4, dtype=np.int32))
    >>> b_gpu = cuda.mem_alloc(a_gpu.nbytes)
    >>> cuda.memcpy_peer(b_gpu, a_gpu, a_gpu.nbytes)
    >>> cuda.from_device(b_gpu, (4,), np.int32)
    array([0, 1, 2, 3], dtype=int32)
    """
    _copy_peer(dest, src, size, dest_context, src_context, None, synchronous=True)


def memcpy_peer_async(
    dest: Any,
    src: Any,
    size: int,
    dest_context: Context | None = None,
    src_context: Context | None = None,
    stream: Any = None,
) -> None:
    """:func:`memcpy_peer`, enqueued on a stream; return at once.

    Parameters
    ----------
    dest, src, size, dest_context, src_context
        As for :func:`memcpy_peer`.
    stream : Stream, optional
        Default None, the legacy default stream.
    """
    _copy_peer(dest, src, size, dest_context, src_context, stream, synchronous=False)


def _copy_peer(
    dest: Any,
    src: Any,
    size: int,
    dest_context: Context | None,
    src_context: Context | None,
    stream: Any,
    synchronous: bool,
) -> None:
    size = byte_count(size, "memcpy_peer: size")
    for context, name in ((dest_context, "dest_context"), (src_context, "src_context")):
        if context is not None and not isinstance(context, Context):
            raise TypeError(
                f"memcpy_peer: {name} must be a Context "
                f"(Device(n).retain_primary_context()) or None for the current "
                f"context, not {type(context).__name__}"
            )
    handle = streams.handle(stream)
    dest_address = _contiguous_device(dest, handle, size, "memcpy_peer")
    src_address = _contiguous_device(src, handle, size, "memcpy_peer")
    current = driver_api.current_context()
    _enqueue(
        "cuMemcpyPeer",
        synchronous,
        handle,
        dest_address,
        current if dest_context is None else dest_context.handle,
        src_address,
        current if src_context is None else src_context.handle,
        size,
    )


# ---------------------------------------------------------------------------
# IPC: device memory shared with another process.


def mem_get_ipc_handle(devptr: Any) -> bytearray:
    """A handle to device memory for another process, which opens it with :class:`IPCMemoryHandle`.

    CUDA shares memory from ``cuMemAlloc`` only: allocate what to share with
    :func:`mem_alloc_ipc`. (:func:`mem_alloc`'s memory comes from a stream-ordered pool,
    which it cannot share.)

    Parameters
    ----------
    devptr
        The memory: :func:`mem_alloc_ipc`'s, or its address.

    Returns
    -------
    bytearray
        64 bytes (``cuIpcGetMemHandle``), as in PyCUDA.

    Raises
    ------
    pyctk.driver.LogicError
        CUDA cannot share this memory (:func:`mem_alloc`'s, say); the message says what to
        use.

    Examples
    --------
    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> handle = cuda.mem_get_ipc_handle(cuda.mem_alloc_ipc(1024))
    >>> len(handle)
    64
    >>> cuda.mem_get_ipc_handle(cuda.mem_alloc(1024))
    Traceback (most recent call last):
        ...
    pyctk.driver.LogicError: mem_get_ipc_handle: CUDA cannot share the memory at 0x... with another process: ...
    """
    address = _contiguous_device(devptr, 0)
    driver_api.current_context()
    capable = c_int()
    result = driver_api.driver().cuPointerGetAttribute(
        byref(capable), pointer_attribute.IS_LEGACY_CUDA_IPC_CAPABLE, address
    )
    if result == cu.CUDA_ERROR_INVALID_VALUE or not (result or capable.value):  # not CUDA's, or not cuMemAlloc's
        raise LogicError(
            f"mem_get_ipc_handle: CUDA cannot share the memory at {address:#x} with "
            f"another process: its IPC shares memory from cuMemAlloc only, and "
            f"mem_alloc's comes from pyctk's stream-ordered pool in a device's primary "
            f"context. Allocate the memory to share with pyctk.driver.mem_alloc_ipc(nbytes)",
            "CUDA_ERROR_INVALID_VALUE",
            cu.CUDA_ERROR_INVALID_VALUE,
        )
    driver_api.check(result, "cuPointerGetAttribute")
    handle = driver_api.IpcHandle()
    driver_api.call("cuIpcGetMemHandle", byref(handle), address)
    return bytearray(handle)


class IPCMemoryHandle(PointerHolderBase):
    """Device memory of another process, opened here (PyCUDA's ``IPCMemoryHandle``).

    Opened on the current device from the handle the other process's
    :func:`mem_get_ipc_handle` gave (``cuIpcOpenMemHandle``). ``int(memory)`` is its address
    in this process, and it goes wherever device memory does. :meth:`close`, or garbage,
    unmaps it; the other process must keep its memory until then.

    Parameters
    ----------
    ipc_handle : bytes-like
        The 64 bytes: a bytearray, as PyCUDA has them, or bytes that came through a pipe.
    flags : ipc_mem_flags, optional
        Default ``LAZY_ENABLE_PEER_ACCESS``.

    Raises
    ------
    pyctk.driver.Error
        The handle is not another live process's (CUDA does not open a handle in the process
        that made it: ``CUDA_ERROR_INVALID_CONTEXT``).

    Examples
    --------
    In the process that got ``handle`` (bytes) from the one that allocated the memory::

        b_gpu = cuda.IPCMemoryHandle(handle)
        b = cuda.from_device(b_gpu, (256,), np.float32)
        b_gpu.close()
    """

    def __init__(self, ipc_handle: Any, flags: int = ipc_mem_flags.LAZY_ENABLE_PEER_ACCESS) -> None:
        handle = to_ipc_handle(ipc_handle)
        device = driver_api.current_device()
        pointer = c_uint64()
        driver_api.call("cuIpcOpenMemHandle", byref(pointer), handle, int(flags))
        self._memory = _DriverMemory(pointer.value, device, "cuIpcCloseMemHandle")

    def get_pointer(self) -> int:
        """The memory's address in this process.

        Returns
        -------
        int

        Raises
        ------
        ValueError
            It was closed.
        """
        if not self._memory.pointer:
            raise ValueError("this IPCMemoryHandle was closed")
        return self._memory.pointer

    def close(self) -> None:
        """Unmap the memory now; closing twice does nothing."""
        self._memory.free()
