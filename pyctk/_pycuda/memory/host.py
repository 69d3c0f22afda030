"""Host memory of ``pyctk.driver`` as PyCUDA has it: NumPy arrays in page-locked, aligned,
registered and managed memory.

Each function returns an ``ndarray`` whose ``.base`` is the object that owns the memory
(PyCUDA's classes: ``PagelockedHostAllocation``, ``AlignedHostAllocation``,
``RegisteredHostMemory``, ``ManagedAllocation``). The memory is given back by its
``free()`` (``unregister()`` for registered memory), or when the object is garbage, in
the context it was made in; a second ``free()`` raises ``LogicError``, as in PyCUDA, and
arrays over freed memory must not be used.

- page-locked (``pagelocked_empty``): ``cuMemHostAlloc``; copies from and to it are truly
  asynchronous on a stream (``memcpy_htod_async``), and the GPU's copy engines reach it
  directly (``pyctk.matmul`` copies it in place too);
- aligned (``aligned_empty``): ordinary host memory at a power-of-two alignment (no GPU
  needed), e.g. for ``register_host_memory``;
- registered (``register_host_memory``): an existing array page-locked in place;
- managed (``managed_empty``): ``cuMemAllocManaged``, one address for host and GPU: pass the
  array itself to a kernel, and read it on the host after ``Context.synchronize()``.

>>> aligned_empty(1000, np.float64).ctypes.data % 4096
0
"""

from __future__ import annotations

import enum
import math
import operator
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from ctypes import byref, c_uint, c_uint64, c_void_p, memset
from typing import Any

import numpy as np

from ..._arrays.arguments import shape_tuple
from ..._cuda import constants as cu
from ..._cuda import driver_api, streams
from ..._cuda.driver_errors import Error, LogicError
from ..contexts.made_contexts import made_record
from .device import DeviceAllocation

_INVALID_VALUE = ("CUDA_ERROR_INVALID_VALUE", cu.CUDA_ERROR_INVALID_VALUE)
_INVALID_HANDLE = ("CUDA_ERROR_INVALID_HANDLE", cu.CUDA_ERROR_INVALID_HANDLE)


class host_alloc_flags(enum.IntFlag):  # noqa: N801 - PyCUDA's name
    """Flags of page-locked memory: ``CU_MEMHOSTALLOC_*`` (cuda.h), the ``mem_flags`` of
    :func:`pagelocked_empty` and its kin."""

    PORTABLE = cu.CU_MEMHOSTALLOC_PORTABLE  #: Page-locked for every context, not only the one it was made in.
    DEVICEMAP = (
        cu.CU_MEMHOSTALLOC_DEVICEMAP
    )  #: Mapped into the GPU's address space (:meth:`HostPointer.get_device_pointer`).
    WRITECOMBINED = cu.CU_MEMHOSTALLOC_WRITECOMBINED  #: Faster to copy to the GPU, very slow for the host to read.


class mem_host_register_flags(enum.IntFlag):  # noqa: N801 - PyCUDA's name
    """Flags of :func:`register_host_memory`: ``CU_MEMHOSTREGISTER_*`` (cuda.h)."""

    PORTABLE = cu.CU_MEMHOSTREGISTER_PORTABLE  #: Page-locked for every context.
    DEVICEMAP = cu.CU_MEMHOSTREGISTER_DEVICEMAP  #: Mapped into the GPU's address space.
    IOMEMORY = cu.CU_MEMHOSTREGISTER_IOMEMORY  #: The memory is a device's I/O memory (a PCI BAR), mapped by the host.
    READ_ONLY = cu.CU_MEMHOSTREGISTER_READ_ONLY  #: The GPU only reads it.


class mem_attach_flags(enum.IntFlag):  # noqa: N801 - PyCUDA's name
    """Who may use managed memory: ``CUmemAttach_flags`` (cuda.h), for :func:`managed_empty`
    and :meth:`ManagedAllocation.attach`."""

    GLOBAL = cu.CU_MEM_ATTACH_GLOBAL  #: Any stream of any device.
    HOST = cu.CU_MEM_ATTACH_HOST  #: The host only, until attached to a stream.
    SINGLE = cu.CU_MEM_ATTACH_SINGLE  #: One stream only (:meth:`ManagedAllocation.attach`).


# ---------------------------------------------------------------------------
# An array over memory that a Python object owns, with that object as its .base.


class ArrayMemory:
    """Memory that one NumPy array is made over; the array's ``.base``.

    NumPy makes an array's base the object whose ``__array_interface__`` it read, so the
    interface is there only while ``array_over`` makes the array (``numpy.asarray`` of the
    object otherwise gives no view of memory that ``free()`` may take away).
    """

    _interface: dict | None = None

    @property
    def __array_interface__(self) -> dict:
        if self._interface is None:
            raise AttributeError("__array_interface__")
        return self._interface

    def _address(self) -> int:
        """Where the memory starts; 0 once freed."""
        raise NotImplementedError

    def _live_address(self) -> int:
        address = self._address()
        if not address:
            raise LogicError(f"this {type(self).__name__} was freed", *_INVALID_HANDLE)
        return address


def array_over(
    memory: ArrayMemory, shape: tuple[int, ...], dtype: np.dtype, order: str, readonly: bool = False
) -> np.ndarray:
    """An array of ``shape``, ``dtype`` and ``order`` ("C" or "F") over ``memory``, its base."""
    strides, step = [], dtype.itemsize
    for extent in shape if order == "F" else shape[::-1]:
        strides.append(step)
        step *= extent
    # "descr" as the dtype itself: NumPy reads it as numpy.dtype(descr) (a list of fields
    # would lose an aligned struct's padding).
    memory._interface = {
        "shape": shape,
        "typestr": dtype.str,
        "descr": dtype,
        "strides": tuple(strides if order == "F" else strides[::-1]),
        "data": (memory._live_address(), readonly),
        "version": 3,
    }
    try:
        return np.asarray(memory)
    finally:
        memory._interface = None


def _order(order: str) -> str:
    if order not in ("C", "F"):
        raise LogicError(f"order={order!r}: these arrays are 'C' (row-major) or 'F' (column-major)", *_INVALID_VALUE)
    return order


def _order_of(array: np.ndarray) -> str:
    """The order an ``*_like`` function copies from ``array``, as PyCUDA's do."""
    if array.flags.c_contiguous:
        return "C"
    if array.flags.f_contiguous:
        return "F"
    raise ValueError(
        "could not detect array order: the array is neither C- nor Fortran-contiguous "
        "(pass numpy.ascontiguousarray(array))"
    )


def new_array(make: Callable[[int], ArrayMemory], shape: int | Sequence[int], dtype: Any, order: str) -> np.ndarray:
    """An array over ``make(nbytes)``; the arguments are checked before anything is allocated."""
    dims, dtype, order = shape_tuple(shape), np.dtype(dtype), _order(order)
    if dtype.subdtype is not None:  # ("f4", 3): its shape goes last, as numpy.empty does
        dtype, inner = dtype.subdtype
        dims += inner
    if dtype.hasobject:
        raise TypeError(
            f"dtype {dtype} holds Python objects, which have no place in memory "
            f"for the GPU: use a numeric or structured dtype"
        )
    # An empty array gets a byte: cuMemAllocManaged refuses 0 bytes, and the array has an address.
    memory = make(max(math.prod(dims) * dtype.itemsize, 1))
    return array_over(memory, dims, dtype, order)


def _zeroed(array: np.ndarray) -> np.ndarray:
    """``array`` with every byte 0, as ``numpy.zeros`` makes it (``fill(0)`` would write "0"
    into a bytes dtype)."""
    memset(array.ctypes.data, 0, array.nbytes)
    return array


class HomeContext:
    """The calling thread's current context, where memory is made and later given back, as
    PyCUDA does: pushed around each call, whatever is current in the thread that frees the
    memory (a finalizer's included); not at all once it is a destroyed context that
    ``Device.make_context`` made, which took its memory with it."""

    __slots__ = ("_made", "handle")

    def __init__(self) -> None:
        self.handle = driver_api.current_context()
        self._made = made_record(self.handle)  # None: a primary (or another library's) context

    @contextmanager
    def active(self) -> Iterator[None]:
        """This context current for the ``with`` block."""
        driver_api.call("cuCtxPushCurrent", self.handle)
        try:
            yield
        finally:
            driver_api.call("cuCtxPopCurrent", byref(c_void_p()))

    def call(self, name: str, *args: Any) -> int:
        """The CUresult of driver function ``name`` called in this context; 0, doing nothing,
        once the context is destroyed."""
        if self._made is not None and not self._made.alive:
            return 0
        with self.active():
            return getattr(driver_api.driver(), name)(*args)


# ---------------------------------------------------------------------------
# Host memory.


class HostPointer(ArrayMemory):
    """Host memory that CUDA knows: the base of the classes of host memory (PyCUDA's ``HostPointer``).

    An object of a subclass is the ``.base`` of the NumPy array over the memory. The memory is
    given back by :meth:`free`, or when the object is garbage (once no array uses it), in the
    context it was made in.

    Attributes
    ----------
    nbytes : int
        Its size in bytes.
    """

    _pointer, _pid, nbytes = 0, None, 0  # _pid None: never made (the driver call failed)
    _RELEASE = ""  # the driver call that gives the memory back

    def __init__(self, pointer: int, nbytes: int, home: HomeContext | None) -> None:
        self._pointer, self.nbytes, self._home, self._pid = pointer, nbytes, home, os.getpid()

    def _address(self) -> int:
        return self._pointer

    def _release(self, pointer: int) -> int:
        assert self._home is not None  # memory without a home (NumPy's) releases itself
        return self._home.call(self._RELEASE, pointer)

    def free(self) -> None:
        """Give the memory back now; arrays over it must not be used after.

        Raises
        ------
        pyctk.driver.LogicError
            It was freed before, as in PyCUDA.
        """
        pointer = self._live_address()
        self._pointer = 0
        driver_api.check(self._release(pointer), self._RELEASE)

    def __del__(self) -> None:
        # Not in a forked child (the memory is the parent's), nor once the driver is gone.
        if self._pointer and self._pid == os.getpid() and driver_api._driver is not None:
            with suppress(Error):  # no one is there to tell
                self._release(self._pointer)

    def get_device_pointer(self) -> int:
        """The address a kernel uses for this memory, which the GPU then reads and writes over
        the bus.

        Only for memory page-locked with the ``DEVICEMAP`` flag: the driver refuses others.

        Returns
        -------
        int

        Examples
        --------
        >>> import numpy as np                           # doctest: +GPU
        >>> import pyctk.driver as cuda
        >>> a = cuda.pagelocked_zeros(4, np.int32, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
        >>> cuda.memset_d32(a.base.get_device_pointer(), 7, 4)   # the GPU writes host memory
        >>> a
        array([7, 7, 7, 7], dtype=int32)
        """
        address = c_uint64()
        home = self._home or HomeContext()
        driver_api.check(
            home.call("cuMemHostGetDevicePointer", byref(address), self._live_address(), 0), "cuMemHostGetDevicePointer"
        )
        return address.value


class PagelockedHostAllocation(HostPointer):
    """Page-locked host memory (``cuMemHostAlloc``), the ``.base`` of :func:`pagelocked_empty`'s arrays.

    Parameters
    ----------
    nbytes : int
    flags : host_alloc_flags, optional
    """

    _RELEASE = "cuMemFreeHost"

    def __init__(self, nbytes: int, flags: int = 0) -> None:
        home = HomeContext()
        pointer = c_void_p()
        driver_api.call("cuMemHostAlloc", byref(pointer), nbytes, int(flags))
        super().__init__(pointer.value or 0, nbytes, home)

    def get_flags(self) -> int:
        """The flags the memory was allocated with.

        Returns
        -------
        int
            :class:`host_alloc_flags` bits.
        """
        flags = c_uint()
        assert self._home is not None  # page-locked memory has the context it was made in
        driver_api.check(self._home.call("cuMemHostGetFlags", byref(flags), self._live_address()), "cuMemHostGetFlags")
        return flags.value


HostAllocation = PagelockedHostAllocation  # PyCUDA's old name


class AlignedHostAllocation(HostPointer):
    """Ordinary host memory starting at a multiple of ``alignment`` bytes, the ``.base`` of
    :func:`aligned_empty`'s arrays; page-lock it with :func:`register_host_memory`.

    The memory is NumPy's, over-allocated and rounded up to whole multiples of ``alignment``:
    with a page alignment (the default) the array has its pages to itself, which CUDA locks
    whole. No GPU is needed.

    Parameters
    ----------
    nbytes : int
    alignment : int, optional
        A power of two; default 4096, a page.
    """

    def __init__(self, nbytes: int, alignment: int = 4096) -> None:
        alignment = operator.index(alignment)
        if alignment < 1 or alignment & (alignment - 1):
            raise LogicError(
                f"alignment={alignment} is not a power of two (4096, a page, is the default)", *_INVALID_VALUE
            )
        self._buffer: np.ndarray | None = np.empty(-(-nbytes // alignment) * alignment + alignment - 1, np.uint8)
        start = self._buffer.ctypes.data
        super().__init__(start + -start % alignment, nbytes, None)

    def _release(self, pointer: int) -> int:
        self._buffer = None  # NumPy frees it once no array uses it
        return 0


class RegisteredHostMemory(HostPointer):
    """An array's memory page-locked in place (``cuMemHostRegister``), the ``.base`` of
    :func:`register_host_memory`'s arrays.

    Parameters
    ----------
    array : numpy.ndarray
    flags : mem_host_register_flags, optional

    Attributes
    ----------
    base : numpy.ndarray
        The array whose memory it is.
    """

    _RELEASE = "cuMemHostUnregister"

    def __init__(self, array: np.ndarray, flags: int = 0) -> None:
        home = HomeContext()
        driver_api.call("cuMemHostRegister", array.ctypes.data, array.nbytes, int(flags))
        super().__init__(array.ctypes.data, array.nbytes, home)
        self.base = array

    def unregister(self) -> None:
        """Unlock the memory now; it stays the original array's.

        Raises
        ------
        pyctk.driver.LogicError
            It was unregistered before.
        """
        self.free()


def pagelocked_empty(shape: int | Sequence[int], dtype: Any, order: str = "C", mem_flags: int = 0) -> np.ndarray:
    """A new NumPy array in page-locked host memory, uninitialised.

    Copies from and to page-locked memory are faster, and truly asynchronous on a stream
    (:func:`memcpy_htod_async`); the GPU's copy engines reach it directly, and
    :func:`pyctk.matmul` copies it in place too.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type
    order : {"C", "F"}, optional
    mem_flags : host_alloc_flags, optional

    Returns
    -------
    numpy.ndarray
        Its ``.base`` is the :class:`PagelockedHostAllocation` that owns the memory; it is
        freed when the array is garbage, or by ``a.base.free()``.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a = cuda.pagelocked_empty((2, 3), np.float32)
    >>> a.shape, type(a.base).__name__
    ((2, 3), 'PagelockedHostAllocation')
    """
    return new_array(lambda nbytes: PagelockedHostAllocation(nbytes, mem_flags), shape, dtype, order)


def pagelocked_zeros(shape: int | Sequence[int], dtype: Any, order: str = "C", mem_flags: int = 0) -> np.ndarray:
    """A new NumPy array in page-locked host memory, filled with zeros.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type
    order : {"C", "F"}, optional
    mem_flags : host_alloc_flags, optional

    Returns
    -------
    numpy.ndarray

    See Also
    --------
    pagelocked_empty
    """
    return _zeroed(pagelocked_empty(shape, dtype, order, mem_flags))


def pagelocked_empty_like(array: np.ndarray, mem_flags: int = 0) -> np.ndarray:
    """A new NumPy array in page-locked host memory, of ``array``'s shape, dtype and order.

    Parameters
    ----------
    array : numpy.ndarray
        C- or Fortran-contiguous.
    mem_flags : host_alloc_flags, optional

    Returns
    -------
    numpy.ndarray
        Uninitialised.
    """
    return pagelocked_empty(array.shape, array.dtype, _order_of(array), mem_flags)


def pagelocked_zeros_like(array: np.ndarray, mem_flags: int = 0) -> np.ndarray:
    """A new NumPy array in page-locked host memory of ``array``'s shape, dtype and order,
    filled with zeros.

    Parameters
    ----------
    array : numpy.ndarray
        C- or Fortran-contiguous.
    mem_flags : host_alloc_flags, optional

    Returns
    -------
    numpy.ndarray
    """
    return _zeroed(pagelocked_empty_like(array, mem_flags))


def aligned_empty(shape: int | Sequence[int], dtype: Any, order: str = "C", alignment: int = 4096) -> np.ndarray:
    """A new NumPy array starting at a multiple of ``alignment`` bytes, uninitialised.

    Ordinary host memory (no GPU needed), for :func:`register_host_memory`, which
    page-locks whole pages.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type
    order : {"C", "F"}, optional
    alignment : int, optional
        A power of two; default 4096, a page.

    Returns
    -------
    numpy.ndarray
        Its ``.base`` is an :class:`AlignedHostAllocation`.

    Examples
    --------
    >>> import numpy as np
    >>> import pyctk.driver as cuda
    >>> a = cuda.aligned_empty((3, 5), np.float32, alignment=64)
    >>> a.ctypes.data % 64, type(a.base).__name__
    (0, 'AlignedHostAllocation')
    """
    return new_array(lambda nbytes: AlignedHostAllocation(nbytes, alignment), shape, dtype, order)


def aligned_zeros(shape: int | Sequence[int], dtype: Any, order: str = "C", alignment: int = 4096) -> np.ndarray:
    """A new NumPy array starting at a multiple of ``alignment`` bytes, filled with zeros.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type
    order : {"C", "F"}, optional
    alignment : int, optional
        A power of two; default 4096, a page.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> import numpy as np
    >>> import pyctk.driver as cuda
    >>> cuda.aligned_zeros(3, np.int16)
    array([0, 0, 0], dtype=int16)
    """
    return _zeroed(aligned_empty(shape, dtype, order, alignment))


def aligned_empty_like(array: np.ndarray, alignment: int = 4096) -> np.ndarray:
    """A new aligned NumPy array of ``array``'s shape, dtype and order, uninitialised.

    Parameters
    ----------
    array : numpy.ndarray
        C- or Fortran-contiguous.
    alignment : int, optional
        A power of two; default 4096, a page.

    Returns
    -------
    numpy.ndarray
    """
    return aligned_empty(array.shape, array.dtype, _order_of(array), alignment)


def aligned_zeros_like(array: np.ndarray, alignment: int = 4096) -> np.ndarray:
    """A new aligned NumPy array of ``array``'s shape, dtype and order, filled with zeros.

    Parameters
    ----------
    array : numpy.ndarray
        C- or Fortran-contiguous.
    alignment : int, optional
        A power of two; default 4096, a page.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> import numpy as np
    >>> import pyctk.driver as cuda
    >>> cuda.aligned_zeros_like(np.ones((2, 2), order="F")).flags.f_contiguous
    True
    """
    return _zeroed(aligned_empty_like(array, alignment))


def register_host_memory(ary: np.ndarray, flags: int = 0) -> np.ndarray:
    """Page-lock an array's memory in place (``cuMemHostRegister``).

    Parameters
    ----------
    ary : numpy.ndarray
        C- or Fortran-contiguous, not empty, and starting on a page (:func:`aligned_empty`
        makes one): CUDA locks whole pages, and two registrations may not share one.
    flags : mem_host_register_flags, optional

    Returns
    -------
    numpy.ndarray
        A new array over ``ary``'s memory, whose ``.base`` is a :class:`RegisteredHostMemory`
        (whose ``.base`` is ``ary``). The memory is locked until ``a.base.unregister()``, or
        until the array is garbage.

    Raises
    ------
    ValueError
        ``ary`` does not start on a page, or is empty.
    TypeError
        ``ary`` is not a NumPy array.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a = cuda.register_host_memory(cuda.aligned_zeros(1 << 20, np.float64))
    >>> type(a.base).__name__
    'RegisteredHostMemory'
    >>> a.base.unregister()
    """
    if not isinstance(ary, np.ndarray):
        raise TypeError(f"register_host_memory takes a NumPy array, not {type(ary).__name__}")
    order = _order_of(ary)
    page = os.sysconf("SC_PAGE_SIZE")
    if ary.ctypes.data % page or not ary.nbytes:
        raise ValueError(
            f"register_host_memory needs an array that starts on a page ({page} bytes) "
            f"and is not empty; this one starts at {ary.ctypes.data:#x} with "
            f"{ary.nbytes} bytes: make it with aligned_empty(shape, dtype)"
        )
    return array_over(RegisteredHostMemory(ary, flags), ary.shape, ary.dtype, order, readonly=not ary.flags.writeable)


# ---------------------------------------------------------------------------
# Managed memory.


class ManagedAllocation(DeviceAllocation, ArrayMemory):
    """Managed memory (``cuMemAllocManaged``): one address for the host and every GPU, the
    ``.base`` of :func:`managed_empty`'s arrays.

    A :class:`DeviceAllocation` too: it goes wherever device memory does. The host must not
    touch it while a kernel runs (CUDA gives no protection).

    Parameters
    ----------
    nbytes : int
    mem_flags : mem_attach_flags, optional
        ``GLOBAL`` (the default) or ``HOST``.
    """

    _pid = None  # never made: the driver call failed

    def __init__(self, nbytes: int, mem_flags: int = mem_attach_flags.GLOBAL) -> None:
        if mem_flags not in (mem_attach_flags.GLOBAL, mem_attach_flags.HOST):
            raise ValueError(
                f"mem_flags={mem_flags!r}: managed memory is mem_attach_flags.GLOBAL "
                f"or mem_attach_flags.HOST (the driver takes no other)"
            )
        self._home, device = HomeContext(), driver_api.current_device()
        pointer = c_uint64()
        driver_api.call("cuMemAllocManaged", byref(pointer), nbytes, int(mem_flags))
        super().__init__(pointer.value, context=None, device=device, stream=0, nbytes=nbytes)
        self._pid = os.getpid()

    def _address(self) -> int:
        return self.pointer

    def get_device_pointer(self) -> int:
        """The memory's address, for the GPU as for the host.

        Returns
        -------
        int
        """
        return int(self)

    def attach(self, mem_flags: int, stream: Any = None) -> None:
        """Say who may use the memory from now on (``cuStreamAttachMemAsync``).

        Parameters
        ----------
        mem_flags : mem_attach_flags
            ``SINGLE``: ``stream`` only; ``HOST``: the host; ``GLOBAL``: any stream.
        stream : Stream, optional
            The stream it is ordered on (and ``SINGLE``'s stream); default None, the legacy
            default stream.
        """
        driver_api.current_context()
        driver_api.call("cuStreamAttachMemAsync", streams.handle(stream), self._live_address(), 0, int(mem_flags))

    def free(self) -> None:
        """Free the memory now; arrays over it must not be used after.

        Raises
        ------
        pyctk.driver.LogicError
            It was freed before.
        """
        pointer = self._live_address()
        self.pointer = 0
        driver_api.check(self._home.call("cuMemFree", pointer), "cuMemFree")

    def __del__(self) -> None:
        if self._pid == os.getpid() and self.pointer and driver_api._driver is not None:
            with suppress(Error):  # no one is there to tell
                self._home.call("cuMemFree", self.pointer)


def is_managed(array: np.ndarray) -> bool:
    """Whether ``array`` is over managed memory: a ``managed_empty`` array or a view of one."""
    base: object = array
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, ManagedAllocation)


def managed_empty(
    shape: int | Sequence[int], dtype: Any, order: str = "C", mem_flags: int = mem_attach_flags.GLOBAL
) -> np.ndarray:
    """A new NumPy array in managed memory, uninitialised.

    Managed memory has one address for the host and the GPU: pass the array to a kernel as
    it is, and read it on the host after :meth:`Context.synchronize`.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type
    order : {"C", "F"}, optional
    mem_flags : mem_attach_flags, optional
        Default ``GLOBAL``; unlike PyCUDA's default, 0, which the driver refuses.

    Returns
    -------
    numpy.ndarray
        Its ``.base`` is the :class:`ManagedAllocation` that owns the memory.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a = cuda.managed_zeros(4, np.int32)
    >>> cuda.memset_d32(a.base, 3, 2)                # the GPU writes the first two
    >>> cuda.Context.synchronize()
    >>> a
    array([3, 3, 0, 0], dtype=int32)
    """
    return new_array(lambda nbytes: ManagedAllocation(nbytes, mem_flags), shape, dtype, order)


def managed_zeros(
    shape: int | Sequence[int], dtype: Any, order: str = "C", mem_flags: int = mem_attach_flags.GLOBAL
) -> np.ndarray:
    """A new NumPy array in managed memory, filled with zeros (by the host).

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type
    order : {"C", "F"}, optional
    mem_flags : mem_attach_flags, optional
        Default ``GLOBAL``.

    Returns
    -------
    numpy.ndarray

    See Also
    --------
    managed_empty : An example.
    """
    return _zeroed(managed_empty(shape, dtype, order, mem_flags))


def managed_empty_like(array: np.ndarray, mem_flags: int = mem_attach_flags.GLOBAL) -> np.ndarray:
    """A new NumPy array in managed memory of ``array``'s shape, dtype and order, uninitialised.

    Parameters
    ----------
    array : numpy.ndarray
        C- or Fortran-contiguous.
    mem_flags : mem_attach_flags, optional
        Default ``GLOBAL``.

    Returns
    -------
    numpy.ndarray
    """
    return managed_empty(array.shape, array.dtype, _order_of(array), mem_flags)


def managed_zeros_like(array: np.ndarray, mem_flags: int = mem_attach_flags.GLOBAL) -> np.ndarray:
    """A new NumPy array in managed memory of ``array``'s shape, dtype and order, filled
    with zeros.

    Parameters
    ----------
    array : numpy.ndarray
        C- or Fortran-contiguous.
    mem_flags : mem_attach_flags, optional
        Default ``GLOBAL``.

    Returns
    -------
    numpy.ndarray
    """
    return _zeroed(managed_empty_like(array, mem_flags))
