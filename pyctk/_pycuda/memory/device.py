"""Device memory for ``pyctk.driver``: ``mem_alloc`` and the copies and fills PyCUDA has.

``mem_alloc`` takes memory from the pool pyctk keeps on each device for its arrays
(``pyctk._arrays.memory.allocate``: CUDA's stream-ordered allocator), not from a second
allocator: allocated and freed on the legacy default stream, which every blocking stream
(``pyctk.driver.Stream()``, the default kind) is ordered with. Work on a *non-blocking*
stream must be synchronised before the memory is freed, as with any stream-ordered memory.

Copies take device memory as a ``DeviceAllocation``, an int address, an object with
PyCUDA's ``get_pointer()`` (``PointerHolderBase``), or any GPU array (``pyctk.DeviceArray``,
``__cuda_array_interface__``, DLPack; contiguous), and host memory as any contiguous buffer
(NumPy arrays, bytes, bytearray, memoryview).
"""

from __future__ import annotations

import math
import numbers
import operator
import os
from ctypes import byref, c_char, c_size_t, c_uint64
from typing import Any, Literal, NamedTuple

import numpy as np

from ..._arrays import interop
from ..._arrays.arguments import integer
from ..._arrays.layout import is_c_contiguous
from ..._arrays.memory import Allocation, allocate
from ..._cuda import constants as cu
from ..._cuda import contexts, cudart, driver_api, driver_errors, library, streams
from ..._cuda.driver_errors import MemoryError
from ..._cuda.errors import OutOfMemoryError
from ..contexts.made_contexts import in_context, made_context
from .sizes import byte_count


class DeviceAllocation(Allocation):
    """Device memory, as :func:`mem_alloc` gives it (PyCUDA's ``DeviceAllocation``).

    ``int(allocation)`` is its address; it goes wherever device memory does: copies, fills,
    kernel arguments. Its memory goes back by :meth:`free`, or when it is garbage.

    Unlike PyCUDA's, :func:`mem_alloc`'s memory comes from the pool pyctk keeps on each
    device for its arrays (CUDA's stream-ordered allocator), not from ``cuMemAlloc`` (which
    :func:`mem_alloc_ipc` gives, and a context :meth:`Device.make_context` made). Subclasses
    hold memory of other kinds: managed (:class:`ManagedAllocation`), pooled
    (:class:`~pyctk.tools.PooledDeviceAllocation`), pitched.

    Attributes
    ----------
    nbytes : int
        Its size in bytes.
    device : int
        The number of the device it is on.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a_gpu = cuda.mem_alloc(16)
    >>> a_gpu
    <DeviceAllocation of 16 bytes at 0x... on device 0>
    >>> cuda.memcpy_htod(a_gpu, np.arange(4, dtype=np.float32))
    >>> cuda.from_device(a_gpu, (4,), np.float32)
    array([0., 1., 2., 3.], dtype=float32)
    >>> a_gpu.free()
    """

    __slots__ = ()

    def __int__(self) -> int:
        pointer = self.pointer
        if not pointer and self.nbytes:
            raise ValueError("this DeviceAllocation was freed")
        return pointer

    __index__ = __int__  # numpy.uintp(allocation) and ctypes take it too

    def as_buffer(self, size: int, offset: int = 0) -> memoryview:
        """A writable view, from the host, of ``size`` bytes at the address plus ``offset``.

        Only for memory the host can read (managed or host-mapped memory): reading device
        memory through it crashes the process. The view does not keep the memory alive.

        Parameters
        ----------
        size : int
        offset : int, optional

        Returns
        -------
        memoryview
            Of unsigned bytes (format ``"B"``).
        """
        if size < 0 or offset < 0:
            raise ValueError(f"as_buffer(size={size}, offset={offset}): neither may be negative")
        return memoryview((c_char * size).from_address(int(self) + offset)).cast("B")

    def free(self) -> None:
        """Give the memory back now.

        It goes back to pyctk's pool ordered after the work queued on blocking streams, so no
        synchronisation is needed first (work on a ``NON_BLOCKING`` stream must be
        synchronised). Freeing twice does nothing; ``int()`` of a freed allocation raises
        ValueError.
        """
        pointer = self.pointer
        if pointer and contexts.alive(self.device, self.context):
            self.pointer = 0
            code = library.library().gpumatmul_device_free(self.context, pointer, self.stream)
            if code:
                raise library.error(code)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.nbytes} bytes at {self.pointer:#x} on device {self.device}>"


class ContextAllocation(DeviceAllocation):
    """``cuMemAlloc`` memory of a context ``make_context`` made (pyctk's pool serves the
    primary contexts only), freed by ``free`` or when garbage, in its context; not at all
    once that context is destroyed, which freed it."""

    __slots__ = ("_made",)

    def __init__(self, made: Any, device: int, nbytes: int) -> None:
        super().__init__(0, context=None, device=device, stream=0, nbytes=nbytes)
        self._made = made
        if nbytes:  # a zero-size allocation is NULL, as pyctk's pool gives it
            pointer = c_uint64()
            driver_api.call("cuMemAlloc", byref(pointer), nbytes)
            self.pointer = pointer.value

    def free(self) -> None:
        """Free the memory now; nothing if it was freed, or its context destroyed."""
        pointer, self.pointer = self.pointer, 0
        if pointer and self._made.alive:
            in_context(self._made.handle, "cuMemFree", pointer)

    def __del__(self) -> None:
        made = self._made
        if self.pointer and made.alive and os.getpid() == made._pid and driver_api._driver:
            try:
                self.free()
            except driver_errors.Error:  # no one is there to tell
                pass


def mem_alloc(nbytes: int) -> DeviceAllocation:
    """Allocate device memory on the current device (PyCUDA's ``mem_alloc``).

    The memory comes from the pool pyctk keeps on each device for its arrays (CUDA's
    stream-ordered allocator), allocated on the legacy default stream, with which every
    blocking :class:`Stream` is ordered; in a context :meth:`Device.make_context` made, from
    ``cuMemAlloc``. It is not zeroed.

    Parameters
    ----------
    nbytes : int
        Bytes; 0 gives an allocation at address 0.

    Returns
    -------
    DeviceAllocation

    Raises
    ------
    pyctk.driver.MemoryError
        Not enough memory, after collecting garbage once; also Python's ``MemoryError``.
    TypeError
        ``nbytes`` is no integer (a float, a str, a bool), before any CUDA call.
    ValueError
        ``nbytes`` is negative.

    See Also
    --------
    mem_alloc_ipc : Memory another process can use.
    mem_alloc_pitch : Rows aligned for coalesced access.
    to_device : Allocate and copy from the host.

    Examples
    --------
    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> a_gpu = cuda.mem_alloc(1024)
    >>> a_gpu.nbytes, int(a_gpu) != 0
    (1024, True)
    """
    nbytes = byte_count(nbytes, "mem_alloc: nbytes")
    return device_memory(nbytes, driver_api.current_device(), 0)


def device_memory(nbytes: int, device: int, stream: int) -> DeviceAllocation:
    """``nbytes`` of memory on ``device`` for work on ``stream``, freed when garbage: from
    pyctk's pool (the primary context's), or ``cuMemAlloc``'s in a context
    ``Device.make_context`` made and the calling thread has current. Raises
    pyctk.driver.MemoryError (also a MemoryError) where the device has too little."""
    made = made_context()  # (no driver call unless pyctk.driver made a context)
    if made is not None:
        return ContextAllocation(made, device, nbytes)
    try:
        return allocate(nbytes, device, stream, kind=DeviceAllocation)
    except OutOfMemoryError as error:
        raise MemoryError(str(error), "CUDA_ERROR_OUT_OF_MEMORY", cu.CUDA_ERROR_OUT_OF_MEMORY) from None


def mem_get_info() -> tuple[int, int]:
    """The free and total memory of the current device, in bytes.

    Returns
    -------
    tuple of int
        ``(free, total)``. Memory in pyctk's pool (freed allocations kept for reuse) counts
        as used.

    Examples
    --------
    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> free, total = cuda.mem_get_info()
    >>> 0 < free <= total == cuda.Context.get_device().total_memory()
    True
    """
    free, total = c_size_t(), c_size_t()
    driver_api.current_context()
    driver_api.call("cuMemGetInfo", byref(free), byref(total))
    return free.value, total.value


# ---------------------------------------------------------------------------
# Addresses.


class DevicePointer(NamedTuple):
    address: int
    device: int | None  # None: an int address, whose device pyctk cannot know
    owner: Any  # keep alive while the address is in use
    contiguous: bool  # whether the bytes from the address on are the array, in order
    nbytes: int | None  # how many bytes from the address on are its own; None: unknown (an address)


def device_pointer(x: Any, stream: int = 0) -> DevicePointer | None:
    """Where device memory ``x`` is; None if ``x`` is not device memory.

    A GPU array's producer's pending work is ordered before ``stream`` (CUDA Array
    Interface: ``stream`` waits for it; DLPack: the producer orders it).
    """
    if isinstance(x, DeviceAllocation):
        return DevicePointer(int(x), x.device, x, True, x.nbytes)
    if isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_)):
        return _at_address(int(x), x)
    get_pointer = getattr(x, "get_pointer", None)
    if get_pointer is not None:  # PyCUDA's PointerHolderBase (pyctk.driver's, or a workalike)
        return _at_address(operator.index(get_pointer()), x)
    operand = interop.device_operand(x, stream)
    if operand is None:
        return None
    if operand.stream is not None:
        with cudart.on_device(operand.device):
            streams.wait(stream, operand.stream)
    contiguous = is_c_contiguous(operand.shape, operand.strides, operand.dtype.itemsize)
    nbytes = math.prod(operand.shape) * operand.dtype.itemsize if contiguous else None
    return DevicePointer(operand.pointer, operand.device, operand.owner, contiguous, nbytes)


def _at_address(address: int, owner: Any) -> DevicePointer:
    """Device memory given as an address, on whichever device has it."""
    if address < 0:
        raise ValueError(f"device address {address} is negative")
    return DevicePointer(address, None, owner, True, None)


def _contiguous_device(x: Any, stream: int, needed: int = 0, what: str = "") -> int:
    """The address of contiguous device memory ``x``, which must hold ``needed`` bytes where
    its size is known (an allocation's, a GPU array's; not a bare address's): ValueError
    naming ``what`` (the function) otherwise, before the driver reads or writes past it."""
    pointer = device_pointer(x, stream)
    caller = f"{what}: " if what else ""
    if pointer is None:
        raise TypeError(
            f"{caller}{type(x).__name__} is not device memory: pass a DeviceAllocation, an int "
            f"address, or a GPU array (DeviceArray, CuPy, PyTorch ...)"
        )
    if not pointer.contiguous:
        raise ValueError(f"{caller}this {type(x).__name__} is not C-contiguous: copies need contiguous memory")
    if pointer.nbytes is not None and needed > pointer.nbytes:
        raise ValueError(
            f"{caller}{needed} bytes do not fit in this {type(x).__name__}'s {pointer.nbytes} bytes: "
            f"copy or set as many as the smaller side holds"
        )
    return pointer.address


def host_buffer(x: Any, writable: bool) -> np.ndarray:
    """``x`` as a contiguous NumPy array sharing its memory (to take the address of).

    As PyCUDA's copies (which ask for ``PyBUF_ANY_CONTIGUOUS``): any buffer whose bytes are
    one block, in C or Fortran order; a strided one is refused, never copied partly.
    """
    if isinstance(x, np.ndarray):
        array = x
    else:
        view = memoryview(x)  # TypeError for what is not a buffer
        if not view.contiguous:
            raise ValueError(f"host memory must be C- or Fortran-contiguous; this {type(x).__name__} is not")
        # (a cast to bytes needs C order: a Fortran-ordered view is its transpose's bytes)
        array = np.frombuffer(view.cast("B") if view.c_contiguous else np.asarray(view).T, np.uint8)
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        raise ValueError("host arrays must be C- or Fortran-contiguous for a copy (numpy.ascontiguousarray makes one)")
    if writable and not array.flags.writeable:
        raise ValueError("the host destination is read-only")
    return array


# ---------------------------------------------------------------------------
# Copies and fills. Without a stream they are synchronous, as in PyCUDA; with one,
# asynchronous on it (truly so from page-locked host memory only).


def memcpy_htod(dest: Any, src: Any) -> None:
    """Copy host memory to device memory; return when the copy is done.

    Parameters
    ----------
    dest
        The destination, device memory: a :class:`DeviceAllocation`, an int address, an object with
        ``get_pointer()`` (:class:`PointerHolderBase`), or a contiguous GPU array
        (:class:`pyctk.DeviceArray`, CuPy, PyTorch ...).
    src : buffer
        The host memory: a contiguous NumPy array, bytes, bytearray, memoryview ... All of
        it is copied.

    Raises
    ------
    TypeError
        ``dest`` is not device memory.
    ValueError
        ``src`` or ``dest`` is not contiguous.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a = np.arange(4, dtype=np.int32)
    >>> a_gpu = cuda.mem_alloc(a.nbytes)
    >>> cuda.memcpy_htod(a_gpu, a)
    >>> b = np.empty_like(a)
    >>> cuda.memcpy_dtoh(b, a_gpu)
    >>> b
    array([0, 1, 2, 3], dtype=int32)
    """
    _htod(dest, src, None, synchronous=True)


def memcpy_dtoh(dest: Any, src: Any) -> None:
    """Copy device memory to host memory; return when the copy is done.

    Parameters
    ----------
    dest : buffer
        The host memory, writable and contiguous; as many bytes as it has are copied.
    src
        The source, device memory: a :class:`DeviceAllocation`, an int address, an object with
        ``get_pointer()`` (:class:`PointerHolderBase`), or a contiguous GPU array
        (:class:`pyctk.DeviceArray`, CuPy, PyTorch ...).

    See Also
    --------
    memcpy_htod : The other way, with an example.
    from_device : Copy into a new NumPy array.
    """
    _dtoh(dest, src, None, synchronous=True)


def memcpy_dtod(dest: Any, src: Any, size: int) -> None:
    """Copy bytes from device memory to device memory.

    As in PyCUDA, the call returns when the copy is done.

    Parameters
    ----------
    dest, src
        The destination and the source, each device memory: a :class:`DeviceAllocation`,
        an int address, an object with ``get_pointer()`` (:class:`PointerHolderBase`), or a
        contiguous GPU array (:class:`pyctk.DeviceArray`, CuPy, PyTorch ...).
    size : int
        Bytes to copy.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a_gpu = cuda.to_device(np.arange(4, dtype=np.int32))
    >>> b_gpu = cuda.mem_alloc(a_gpu.nbytes)
    >>> cuda.memcpy_dtod(b_gpu, a_gpu, a_gpu.nbytes)
    >>> cuda.from_device(b_gpu, (4,), np.int32)
    array([0, 1, 2, 3], dtype=int32)
    """
    _dtod(dest, src, size, None, synchronous=True)


def memcpy_htod_async(dest: Any, src: Any, stream: Any = None) -> None:
    """Enqueue a copy of host memory to device memory on a stream; return at once.

    The copy is asynchronous only from page-locked memory (:func:`pagelocked_empty`); from
    other host memory the call returns once ``src`` has been read.

    Parameters
    ----------
    dest
        The destination, device memory: a :class:`DeviceAllocation`, an int address, an object with
        ``get_pointer()`` (:class:`PointerHolderBase`), or a contiguous GPU array
        (:class:`pyctk.DeviceArray`, CuPy, PyTorch ...).
    src : buffer
        The host memory, contiguous; it must not change until the stream has copied it.
    stream : Stream, optional
        Or any object with ``__cuda_stream__``, or a handle; default None, the legacy
        default stream.

    See Also
    --------
    Stream : An example.
    """
    _htod(dest, src, stream, synchronous=False)


def memcpy_dtoh_async(dest: Any, src: Any, stream: Any = None) -> None:
    """Enqueue a copy of device memory to host memory on a stream; return at once.

    Parameters
    ----------
    dest : buffer
        The host memory, writable and contiguous (page-locked for a truly asynchronous
        copy). It must stay alive, and unread, until the stream has done the copy.
    src
        The source, device memory: a :class:`DeviceAllocation`, an int address, an object with
        ``get_pointer()`` (:class:`PointerHolderBase`), or a contiguous GPU array
        (:class:`pyctk.DeviceArray`, CuPy, PyTorch ...).
    stream : Stream, optional
        Or any object with ``__cuda_stream__``, or a handle; default None, the legacy
        default stream.

    See Also
    --------
    Stream : An example.
    """
    _dtoh(dest, src, stream, synchronous=False)


def memcpy_dtod_async(dest: Any, src: Any, size: int, stream: Any = None) -> None:
    """Enqueue a copy of bytes from device memory to device memory on a stream.

    Parameters
    ----------
    dest, src
        The destination and the source, each device memory: a :class:`DeviceAllocation`,
        an int address, an object with ``get_pointer()`` (:class:`PointerHolderBase`), or a
        contiguous GPU array (:class:`pyctk.DeviceArray`, CuPy, PyTorch ...).
    size : int
        Bytes to copy.
    stream : Stream, optional
        Or any object with ``__cuda_stream__``, or a handle; default None, the legacy
        default stream.
    """
    _dtod(dest, src, size, stream, synchronous=False)


def _htod(dest: Any, src: Any, stream: Any, synchronous: bool) -> None:
    handle = streams.handle(stream)
    host = host_buffer(src, writable=False)
    address = _contiguous_device(dest, handle, host.nbytes, "memcpy_htod")
    _enqueue("cuMemcpyHtoD", synchronous, handle, address, host.ctypes.data, host.nbytes)


def _dtoh(dest: Any, src: Any, stream: Any, synchronous: bool) -> None:
    handle = streams.handle(stream)
    host = host_buffer(dest, writable=True)
    address = _contiguous_device(src, handle, host.nbytes, "memcpy_dtoh")
    _enqueue("cuMemcpyDtoH", synchronous, handle, host.ctypes.data, address, host.nbytes)


def _dtod(dest: Any, src: Any, size: int, stream: Any, synchronous: bool) -> None:
    size = byte_count(size, "memcpy_dtod: size")
    handle = streams.handle(stream)
    _enqueue(
        "cuMemcpyDtoD",
        synchronous,
        handle,
        _contiguous_device(dest, handle, size, "memcpy_dtod"),
        _contiguous_device(src, handle, size, "memcpy_dtod"),
        size,
    )


def _enqueue(name: str, synchronous: bool, stream: int, *args: Any) -> None:
    """Call ``name`` (synchronous) or ``name + "Async"`` on ``stream``."""
    driver_api.current_context()
    if synchronous:
        driver_api.call(name, *args)
    else:
        driver_api.call(name + "Async", *args, stream)


def _memset(bits: int, dest: Any, data: Any, count: int, stream: Any, asynchronous: bool) -> None:
    count = integer(count, f"memset_d{bits}: count must be an int number of {bits}-bit words")
    if count < 0:
        raise ValueError(f"memset_d{bits}: count is {count}: it must be 0 or more")
    handle = streams.handle(stream)
    pointer = _contiguous_device(dest, handle, count * bits // 8, f"memset_d{bits}")
    value = operator.index(data) & ((1 << bits) - 1)  # -1 is all ones, as in C
    _enqueue(f"cuMemsetD{bits}", not asynchronous, handle, pointer, value, count)


def memset_d8(dest: Any, data: int, count: int) -> None:
    """Set ``count`` bytes of device memory to ``data``; return when it is done.

    Parameters
    ----------
    dest
        The memory, device memory: a :class:`DeviceAllocation`, an int address, an object with
        ``get_pointer()`` (:class:`PointerHolderBase`), or a contiguous GPU array
        (:class:`pyctk.DeviceArray`, CuPy, PyTorch ...).
    data : int
        The value of each byte; negative values are two's complement (-1 sets every
        bit).
    count : int
        How many.
    """
    _memset(8, dest, data, count, None, False)


def memset_d16(dest: Any, data: int, count: int) -> None:
    """Set ``count`` 16-bit words of device memory to ``data``; return when it is done.

    Parameters
    ----------
    dest
        The memory, device memory: a :class:`DeviceAllocation`, an int address, an object with
        ``get_pointer()`` (:class:`PointerHolderBase`), or a contiguous GPU array
        (:class:`pyctk.DeviceArray`, CuPy, PyTorch ...).
    data : int
        The value of each 16-bit word; negative values are two's complement (-1 sets
        every bit).
    count : int
        How many.
    """
    _memset(16, dest, data, count, None, False)


def memset_d32(dest: Any, data: int, count: int) -> None:
    """Set ``count`` 32-bit words of device memory to ``data``; return when it is done.

    Parameters
    ----------
    dest
        The memory, device memory: a :class:`DeviceAllocation`, an int address, an object with
        ``get_pointer()`` (:class:`PointerHolderBase`), or a contiguous GPU array
        (:class:`pyctk.DeviceArray`, CuPy, PyTorch ...).
    data : int
        The value of each 32-bit word; negative values are two's complement (-1 sets
        every bit). For a float32, pass its bits: ``numpy.float32(x).view(numpy.uint32)``.
    count : int
        How many.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a_gpu = cuda.mem_alloc(16)
    >>> cuda.memset_d32(a_gpu, np.float32(1.5).view(np.uint32), 4)
    >>> cuda.from_device(a_gpu, (4,), np.float32)
    array([1.5, 1.5, 1.5, 1.5], dtype=float32)
    """
    _memset(32, dest, data, count, None, False)


def memset_d8_async(dest: Any, data: int, count: int, stream: Any = None) -> None:
    """:func:`memset_d8`, enqueued on a stream; return at once.

    Parameters
    ----------
    dest, data, count
        As for :func:`memset_d8`.
    stream : Stream, optional
        Or any object with ``__cuda_stream__``, or a handle; default None, the legacy
        default stream.
    """
    _memset(8, dest, data, count, stream, True)


def memset_d16_async(dest: Any, data: int, count: int, stream: Any = None) -> None:
    """:func:`memset_d16`, enqueued on a stream; return at once.

    Parameters
    ----------
    dest, data, count
        As for :func:`memset_d16`.
    stream : Stream, optional
        Or any object with ``__cuda_stream__``, or a handle; default None, the legacy
        default stream.
    """
    _memset(16, dest, data, count, stream, True)


def memset_d32_async(dest: Any, data: int, count: int, stream: Any = None) -> None:
    """:func:`memset_d32`, enqueued on a stream; return at once.

    Parameters
    ----------
    dest, data, count
        As for :func:`memset_d32`.
    stream : Stream, optional
        Or any object with ``__cuda_stream__``, or a handle; default None, the legacy
        default stream.
    """
    _memset(32, dest, data, count, stream, True)


def to_device(array: Any) -> DeviceAllocation:
    """Allocate device memory and copy host memory into it (PyCUDA's ``to_device``).

    Parameters
    ----------
    array : buffer
        The host memory: a contiguous NumPy array, bytes ...

    Returns
    -------
    DeviceAllocation
        Of ``array``'s size in bytes; its shape and dtype are not kept.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a_gpu = cuda.to_device(np.ones((2, 3), np.float64))
    >>> a_gpu.nbytes
    48
    >>> cuda.from_device(a_gpu, (2, 3), np.float64)
    array([[1., 1., 1.],
           [1., 1., 1.]])
    """
    host = host_buffer(array, writable=False)
    allocation = mem_alloc(host.nbytes)
    memcpy_htod(allocation, host)
    return allocation


def from_device(source: Any, shape: Any, dtype: Any, order: Literal["C", "F"] = "C") -> np.ndarray:
    """Copy device memory into a new NumPy array; return when the copy is done.

    Parameters
    ----------
    source
        The memory, device memory: a :class:`DeviceAllocation`, an int address, an object with
        ``get_pointer()`` (:class:`PointerHolderBase`), or a contiguous GPU array
        (:class:`pyctk.DeviceArray`, CuPy, PyTorch ...).
    shape : int or tuple of int
    dtype : data-type
    order : {"C", "F"}, optional

    Returns
    -------
    numpy.ndarray

    See Also
    --------
    from_device_like : Shape and dtype taken from an array.
    to_device : An example.
    """
    host = np.empty(shape, dtype, order=order)
    memcpy_dtoh(host, source)
    return host
