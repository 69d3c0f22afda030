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

import numbers
import operator
import os
from ctypes import byref, c_char, c_size_t, c_uint64
from typing import Any, NamedTuple

import numpy as np

from ..._arrays import interop
from ..._arrays.layout import is_c_contiguous
from ..._arrays.memory import Allocation, allocate
from ..._cuda import contexts, cudart, driver_api, driver_errors, library, streams
from ..._cuda.driver_errors import MemoryError
from ..._cuda.errors import OutOfMemoryError
from ..contexts.devices import in_context, made_context


class DeviceAllocation(Allocation):
    """Device memory from ``mem_alloc``: ``int(allocation)`` is its address.

    It is returned to pyctk's pool by ``free()`` or when garbage (in a context
    ``Device.make_context`` made: ``cuMemAlloc``'s memory, freed with ``cuMemFree``). It is
    the pool's ``Allocation`` itself, with PyCUDA's face: one object per block. Subclasses hold
    memory of other kinds (``context`` None), which they free themselves.

    >>> import numpy as np
    >>> a = mem_alloc(16)                   # doctest: +SKIP
    >>> memcpy_htod(a, np.zeros(4, np.float32))   # doctest: +SKIP
    >>> a.free()                            # doctest: +SKIP
    """

    __slots__ = ()

    def __int__(self) -> int:
        pointer = self.pointer
        if not pointer and self.nbytes:
            raise ValueError("this DeviceAllocation was freed")
        return pointer

    __index__ = __int__  # numpy.uintp(allocation) and ctypes take it too

    def as_buffer(self, size: int, offset: int = 0) -> memoryview:
        """A writable view of the ``size`` bytes at the address plus ``offset`` (PyCUDA's).

        Only for memory the host can read (managed or host-mapped memory): reading device
        memory through it crashes the process. The view does not keep the memory alive.
        """
        if size < 0 or offset < 0:
            raise ValueError(f"as_buffer(size={size}, offset={offset}): neither may be negative")
        return memoryview((c_char * size).from_address(int(self) + offset)).cast("B")

    def free(self) -> None:
        """Return the memory to the pool now (ordered after work queued on blocking streams).

        Freeing twice does nothing. Using the memory after ``free`` is an error.
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
    """``nbytes`` of memory on the current device (PyCUDA's ``mem_alloc``).

    Raises
    ------
    pyctk.driver.MemoryError
        Not enough memory (after collecting garbage once); it is also a MemoryError.
    """
    nbytes = int(nbytes)
    if nbytes < 0:
        raise ValueError(f"cannot allocate a negative number of bytes ({nbytes})")
    return device_memory(nbytes, driver_api.current_device(), 0)


def device_memory(nbytes: int, device: int, stream: int) -> DeviceAllocation:
    """``nbytes`` of memory on ``device`` for work on ``stream``, freed when garbage: from
    pyctk's pool (the primary context's), or ``cuMemAlloc``'s in a context
    ``Device.make_context`` made and the calling thread has current. Raises
    pyctk.driver.MemoryError (also a MemoryError) where the device has too little."""
    if contexts.made:  # (empty unless pyctk.driver made a context: then ask which is current)
        made = made_context()
        if made is not None:
            return ContextAllocation(made, device, nbytes)
    try:
        return allocate(nbytes, device, stream, kind=DeviceAllocation)
    except OutOfMemoryError as error:
        raise MemoryError(str(error), "CUDA_ERROR_OUT_OF_MEMORY", 2) from None


def mem_get_info() -> tuple[int, int]:
    """(free, total) bytes of the current device."""
    free, total = c_size_t(), c_size_t()
    driver_api.current_context()
    driver_api.call("cuMemGetInfo", byref(free), byref(total))
    return free.value, total.value


# ---------------------------------------------------------------------------
# Addresses.

class DevicePointer(NamedTuple):
    address: int
    device: int | None  # None: an int address, whose device pyctk cannot know
    owner: Any          # keep alive while the address is in use
    contiguous: bool    # whether the bytes from the address on are the array, in order


def device_pointer(x: Any, stream: int = 0) -> DevicePointer | None:
    """Where device memory ``x`` is; None if ``x`` is not device memory.

    A GPU array's producer's pending work is ordered before ``stream`` (CUDA Array
    Interface: ``stream`` waits for it; DLPack: the producer orders it).
    """
    if isinstance(x, DeviceAllocation):
        return DevicePointer(int(x), x.device, x, True)
    if isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_)):
        if x < 0:
            raise ValueError(f"device address {x} is negative")
        return DevicePointer(int(x), None, x, True)
    get_pointer = getattr(x, "get_pointer", None)
    if get_pointer is not None:  # PyCUDA's PointerHolderBase (pyctk.driver's, or a workalike)
        return device_pointer(operator.index(get_pointer()))._replace(owner=x)
    operand = interop.device_operand(x, stream)
    if operand is None:
        return None
    if operand.stream is not None:
        with cudart.on_device(operand.device):
            streams.wait(stream, operand.stream)
    contiguous = is_c_contiguous(operand.shape, operand.strides, operand.dtype.itemsize)
    return DevicePointer(operand.pointer, operand.device, operand.owner, contiguous)


def _contiguous_device(x: Any, stream: int) -> int:
    pointer = device_pointer(x, stream)
    if pointer is None:
        raise TypeError(f"{type(x).__name__} is not device memory: pass a DeviceAllocation, an int "
                        f"address, or a GPU array (DeviceArray, CuPy, PyTorch ...)")
    if not pointer.contiguous:
        raise ValueError(f"this {type(x).__name__} is not C-contiguous: copies need contiguous memory")
    return pointer.address


def host_buffer(x: Any, writable: bool) -> np.ndarray:
    """``x`` as a contiguous NumPy array sharing its memory (to take the address of)."""
    if isinstance(x, np.ndarray):
        array = x
    else:
        view = memoryview(x)  # TypeError for what is not a buffer
        if not view.c_contiguous:
            raise ValueError(f"host memory must be contiguous; this {type(x).__name__} is not")
        array = np.frombuffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view,
                              np.uint8)
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        raise ValueError("host arrays must be C- or Fortran-contiguous for a copy "
                         "(numpy.ascontiguousarray makes one)")
    if writable and not array.flags.writeable:
        raise ValueError("the host destination is read-only")
    return array


# ---------------------------------------------------------------------------
# Copies and fills. Without a stream they are synchronous, as in PyCUDA; with one,
# asynchronous on it (truly so from page-locked host memory only).

def memcpy_htod(dest: Any, src: Any) -> None:
    """Copy host buffer ``src`` to device memory ``dest`` (``src.nbytes`` bytes)."""
    _htod(dest, src, None, synchronous=True)


def memcpy_dtoh(dest: Any, src: Any) -> None:
    """Copy device memory ``src`` into host buffer ``dest`` (``dest.nbytes`` bytes)."""
    _dtoh(dest, src, None, synchronous=True)


def memcpy_dtod(dest: Any, src: Any, size: int) -> None:
    """Copy ``size`` bytes from device memory ``src`` to device memory ``dest``."""
    _dtod(dest, src, size, None, synchronous=True)


def memcpy_htod_async(dest: Any, src: Any, stream: Any = None) -> None:
    """Enqueue a copy of host buffer ``src`` to device memory ``dest`` on ``stream``."""
    _htod(dest, src, stream, synchronous=False)


def memcpy_dtoh_async(dest: Any, src: Any, stream: Any = None) -> None:
    """Enqueue a copy of device memory ``src`` into host buffer ``dest`` on ``stream``.

    ``dest`` must stay alive, and unread, until the stream has done the copy.
    """
    _dtoh(dest, src, stream, synchronous=False)


def memcpy_dtod_async(dest: Any, src: Any, size: int, stream: Any = None) -> None:
    """Enqueue a copy of ``size`` bytes from device memory ``src`` to ``dest`` on ``stream``."""
    _dtod(dest, src, size, stream, synchronous=False)


def _htod(dest: Any, src: Any, stream: Any, synchronous: bool) -> None:
    handle = streams.handle(stream)
    host = host_buffer(src, writable=False)
    _enqueue("cuMemcpyHtoD", synchronous, handle, _contiguous_device(dest, handle), host.ctypes.data,
             host.nbytes)


def _dtoh(dest: Any, src: Any, stream: Any, synchronous: bool) -> None:
    handle = streams.handle(stream)
    host = host_buffer(dest, writable=True)
    _enqueue("cuMemcpyDtoH", synchronous, handle, host.ctypes.data, _contiguous_device(src, handle),
             host.nbytes)


def _dtod(dest: Any, src: Any, size: int, stream: Any, synchronous: bool) -> None:
    handle = streams.handle(stream)
    _enqueue("cuMemcpyDtoD", synchronous, handle, _contiguous_device(dest, handle),
             _contiguous_device(src, handle), int(size))


def _enqueue(name: str, synchronous: bool, stream: int, *args: Any) -> None:
    """Call ``name`` (synchronous) or ``name + "Async"`` on ``stream``."""
    driver_api.current_context()
    if synchronous:
        driver_api.call(name, *args)
    else:
        driver_api.call(name + "Async", *args, stream)


def _memset(bits: int, dest: Any, data: Any, count: int, stream: Any, asynchronous: bool) -> None:
    handle = streams.handle(stream)
    pointer = _contiguous_device(dest, handle)
    value = operator.index(data) & ((1 << bits) - 1)  # -1 is all ones, as in C
    _enqueue(f"cuMemsetD{bits}", not asynchronous, handle, pointer, value, int(count))


def memset_d8(dest: Any, data: int, count: int) -> None:
    """Set ``count`` bytes at ``dest`` to ``data``."""
    _memset(8, dest, data, count, None, False)


def memset_d16(dest: Any, data: int, count: int) -> None:
    """Set ``count`` 16-bit words at ``dest`` to ``data``."""
    _memset(16, dest, data, count, None, False)


def memset_d32(dest: Any, data: int, count: int) -> None:
    """Set ``count`` 32-bit words at ``dest`` to ``data`` (``numpy.float32(1).view(numpy.uint32)`` for a float)."""
    _memset(32, dest, data, count, None, False)


def memset_d8_async(dest: Any, data: int, count: int, stream: Any = None) -> None:
    """``memset_d8`` enqueued on ``stream``."""
    _memset(8, dest, data, count, stream, True)


def memset_d16_async(dest: Any, data: int, count: int, stream: Any = None) -> None:
    """``memset_d16`` enqueued on ``stream``."""
    _memset(16, dest, data, count, stream, True)


def memset_d32_async(dest: Any, data: int, count: int, stream: Any = None) -> None:
    """``memset_d32`` enqueued on ``stream``."""
    _memset(32, dest, data, count, stream, True)


def to_device(array: Any) -> DeviceAllocation:
    """A new allocation holding a copy of host buffer ``array`` (PyCUDA's ``to_device``)."""
    host = host_buffer(array, writable=False)
    allocation = mem_alloc(host.nbytes)
    memcpy_htod(allocation, host)
    return allocation


def from_device(source: Any, shape: Any, dtype: Any, order: str = "C") -> np.ndarray:
    """A new NumPy array of ``shape`` and ``dtype`` copied from device memory ``source``."""
    host = np.empty(shape, dtype, order=order)
    memcpy_dtoh(host, source)
    return host

