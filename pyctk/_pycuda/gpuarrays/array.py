"""PyCUDA's ``GPUArray``: an n-dimensional array in device memory, NumPy's face on the GPU.

What it holds: ``gpudata`` (the memory: a ``DeviceAllocation`` from ``allocator``, an int
address, or any object ``int()`` takes), ``shape``, ``dtype`` and byte ``strides``; views
(``a[1:, ::2]``, ``reshape``, ``T``) share the memory and keep their base alive. Copies to
and from the host are synchronous unless asked otherwise (``get_async``/``set_async``);
kernels run asynchronously on the legacy default stream or the ``stream=`` given, as in
PyCUDA. Arithmetic, comparisons and the rest go to ``arithmetic`` (element-wise kernels)
and ``reductions``; this module is the array itself: memory, layout, views, transfers,
casts, fills, and the CUDA Array Interface and DLPack that other libraries read.

Where PyCUDA refuses a non-contiguous array (most operations), pyctk copies it into a
contiguous one first (``copying.copy_strided``), as NumPy would compute.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ..._arrays import interop
from ..._arrays.arguments import shape_tuple
from ..._arrays.layout import contiguous_strides, is_c_contiguous
from ..._cuda import driver_api, streams
from ..kernels import textures
from ..kernels.c_types import dtype_to_ctype
from ..memory.device import device_memory, mem_alloc
from ..memory.host import pagelocked_empty
from . import arithmetic, copying, reductions
from .base import GPUArrayBase
from .launching import splay, stream_handle


class ArrayFlags:
    """``c_contiguous``, ``f_contiguous`` and ``forc`` (either) of a GPUArray, as PyCUDA has them."""

    __slots__ = ("c_contiguous", "f_contiguous", "forc")  # (read-only by convention: arrays share them)

    def __init__(self, shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> None:
        self.c_contiguous = is_c_contiguous(shape, strides, itemsize)
        self.f_contiguous = is_c_contiguous(shape[::-1], strides[::-1], itemsize)
        self.forc = self.c_contiguous or self.f_contiguous

    def __repr__(self) -> str:
        return f"  C_CONTIGUOUS : {self.c_contiguous}\n  F_CONTIGUOUS : {self.f_contiguous}"


@functools.lru_cache(maxsize=1024)  # arrays of one layout share their flags: made once
def array_flags(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> ArrayFlags:
    """The ``ArrayFlags`` of a layout."""
    return ArrayFlags(shape, strides, itemsize)


def f_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """Fortran-order (first axis fastest) byte strides of ``shape``."""
    return tuple(reversed(contiguous_strides(tuple(reversed(shape)), itemsize)))


def compact_strides(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """Contiguous strides that keep the axis order of ``strides`` (NumPy's ``order="K"``;
    C order where a zero stride leaves it open)."""
    if 0 in strides:
        return contiguous_strides(shape, itemsize)
    order = sorted(range(len(shape)), key=lambda axis: -abs(strides[axis]))  # outermost first
    result, step = [0] * len(shape), itemsize
    for axis in reversed(order):
        result[axis] = step
        step *= max(shape[axis], 1)
    return tuple(result)


# dtype kinds whose elements mean nothing to a GPU kernel, refused before any CUDA call (NumPy's
# kinds; PyCUDA would copy their bytes): why, and what to convert them to.
_NOT_FOR_THE_GPU = {
    "O": "they are references to Python objects in host memory; convert to a numeric dtype first "
    "(x.astype(np.float64))",
    "U": "NumPy's str; encode the text to bytes first (np.char.encode(x, 'utf-8'))",
    "M": "datetime64 has no arithmetic on the GPU; move its ticks (x.view(np.int64))",
    "m": "timedelta64 has no arithmetic on the GPU; move its ticks (x.view(np.int64))",
}


class GPUArray(GPUArrayBase):
    """An n-dimensional array in GPU memory (PyCUDA's ``GPUArray``).

    :func:`~pyctk.gpuarray.empty` is the same constructor; :func:`~pyctk.gpuarray.to_gpu`
    and the other functions of :mod:`pyctk.gpuarray` make arrays too. Views (``a[1:, ::2]``,
    :meth:`reshape`, :attr:`T`) share the memory and keep the array they view alive.
    Arithmetic, comparisons, :mod:`pyctk.cumath` and the reductions run kernels that pyctk
    writes, asynchronously on the legacy default stream (or ``stream=``), as in PyCUDA;
    :meth:`get` waits for them.

    Unlike PyCUDA's: results have NumPy's dtypes, operands broadcast, non-contiguous arrays
    work everywhere, and there are ``sum``/``max``/``min``/``dot`` methods, ``@`` and DLPack.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type
    allocator : callable, optional
        ``allocator(nbytes)`` gives the memory: an object whose ``int()`` is its device
        address. Default :func:`pyctk.driver.mem_alloc`;
        :meth:`pyctk.tools.DeviceMemoryPool.allocate` is another.
    base : object, optional
        What ``gpudata`` belongs to, kept alive with this array (a view's array).
    gpudata : optional
        Memory to view instead of allocating: a :class:`pyctk.driver.DeviceAllocation`, an
        int address, or any object ``int()`` takes.
    strides : tuple of int, optional
        Byte strides; default contiguous in ``order``.
    order : {"C", "F"}, optional
        Row-major (default) or column-major, when ``strides`` is not given.

    Attributes
    ----------
    shape : tuple of int
        The length of each axis.
    dtype : numpy.dtype
        The elements' type.
    size : int
        The number of elements.
    strides : tuple of int
        Bytes from one element to the next along each axis (negative or 0 in views).
    gpudata : pyctk.driver.DeviceAllocation, int or None
        The memory: the allocator's, or the ``gpudata`` given (a view's is an int address);
        None for an empty array.
    allocator : callable
        Where the memory came from; arrays made from this one allocate there too.
    base : object or None
        What a view keeps alive.
    flags
        ``c_contiguous``, ``f_contiguous`` and ``forc`` (either), as NumPy's ``flags``.

    Examples
    --------
    >>> import numpy as np                                                  # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> a
    array([[0., 1., 2.],
           [3., 4., 5.]], dtype=float32)
    >>> (2 * a + 1).get()
    array([[ 1.,  3.,  5.],
           [ 7.,  9., 11.]], dtype=float32)
    >>> a[:, 1].get(), a.T.shape                                            # views
    (array([1., 4.], dtype=float32), (3, 2))
    >>> a.shape, a.dtype, a.strides, a.flags.c_contiguous
    ((2, 3), dtype('float32'), (12, 4), True)
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    strides: tuple[int, ...]

    __array_priority__ = 100  # NumPy defers to GPUArray's operators: host_array + gpu_array is ours
    _index_refusal = (
        "GPUArray takes ints, slices, ... and None as indices (basic indexing); for a gather use gpuarray.take"
    )
    _interface_strides_always = True  # as PyCUDA's interface: strides even when C-contiguous
    _interface_legacy_stream = None  # as PyCUDA's: its work is on the legacy default stream

    def __init__(
        self,
        shape: Any,
        dtype: Any,
        allocator: Any = None,
        base: Any = None,
        gpudata: Any = None,
        strides: Sequence[int] | None = None,
        order: str = "C",
    ) -> None:
        self.shape = shape_tuple(shape)
        self.dtype = np.dtype(dtype)
        if self.dtype.kind in _NOT_FOR_THE_GPU:
            raise TypeError(f"a GPUArray cannot hold {self.dtype} elements: {_NOT_FOR_THE_GPU[self.dtype.kind]}")
        self.size = math.prod(self.shape)
        itemsize = self.dtype.itemsize
        if strides is None:
            if order not in ("C", "F"):
                raise ValueError(f"order must be 'C' or 'F', not {order!r}")
            self.strides = (contiguous_strides if order == "C" else f_strides)(self.shape, itemsize)
        else:
            self.strides = tuple(map(operator.index, strides))
            if len(self.strides) != len(self.shape):
                raise ValueError(f"strides {self.strides} do not match shape {self.shape}")
        self.allocator = mem_alloc if allocator is None else allocator
        self.base = base
        if gpudata is None:
            if base is not None:
                raise ValueError(
                    "base is for a view of gpudata given with it; without gpudata, the array allocates its own memory"
                )
            gpudata = self._allocate(self.nbytes) if self.size else None
        self.gpudata = gpudata
        self.flags = array_flags(self.shape, self.strides, itemsize)
        self._device_index: int | None = getattr(gpudata, "device", None)

    def _allocate(self, nbytes: int) -> Any:
        """``nbytes`` from the allocator (mem_alloc's memory, without asking the driver for the
        current device again when this array already knows its device)."""
        if self.allocator is mem_alloc:
            device = getattr(self, "_device_index", None)
            if device is None:
                device = driver_api.current_device()
            return device_memory(nbytes, device, 0)
        return self.allocator(nbytes)

    # -- what it is ------------------------------------------------------------------------

    @property
    def itemsize(self) -> int:
        """The bytes of one element, ``dtype.itemsize``."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """The bytes of all the elements, ``size * itemsize``, as in PyCUDA."""
        return self.size * self.dtype.itemsize

    @property
    def mem_size(self) -> int:
        """PyCUDA's name for ``size`` (PyCUDA's counts pitch padding, which pyctk's arrays never have)."""
        return self.size

    @property
    def ptr(self) -> int:
        """The device address of the first element as an int (0 for an empty array), as in PyCUDA.

        A kernel argument, or a pointer to hand to another library.
        """
        gpudata = self.gpudata
        return 0 if gpudata is None else int(gpudata)

    @property
    def device(self) -> int:
        """The index of the device the memory is on; pyctk's (PyCUDA's arrays have no such attribute)."""
        if self._device_index is None:
            self._device_index = driver_api.current_device()
        return self._device_index

    @property
    def _grid(self) -> tuple[int, int]:
        return splay(self.size, self.device)[0]

    @property
    def _block(self) -> tuple[int, int, int]:
        return splay(self.size, self.device)[1]

    def __hash__(self) -> int:
        raise TypeError("GPUArrays are not hashable")

    def __bool__(self) -> bool:
        if self.size == 1:
            return bool(self.get())
        raise ValueError("The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()")

    def __repr__(self) -> str:
        return repr(self.get())

    def __str__(self) -> str:
        return str(self.get())

    def __reduce__(self) -> tuple:
        return _from_host, (self.get(),)

    # -- making arrays like this one -------------------------------------------------------

    def _new_like_me(self, dtype: Any = None, order: str = "K") -> GPUArray:
        """A new array of this shape (and dtype unless given), contiguous in this array's
        axis order (``order="K"``), from this array's allocator and device."""
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        if order == "K" and self._keeps_layout(dtype):
            return self._same_layout(dtype)  # the common case, at the least cost
        if order == "K" and not self.flags.c_contiguous:
            strides = compact_strides(self.shape, self.strides, dtype.itemsize)
        else:
            strides = (f_strides if order == "F" else contiguous_strides)(self.shape, dtype.itemsize)
        return self._new(self.shape, dtype, strides)

    def _keeps_layout(self, dtype: np.dtype) -> bool:
        """Whether ``_new_like_me(dtype)`` has this array's strides (``_same_layout``'s case)."""
        return self.flags.forc and dtype.itemsize == self.dtype.itemsize

    def _same_layout(self, dtype: np.dtype) -> GPUArray:
        """A new array with this (contiguous) array's shape, strides and flags, and ``dtype`` of
        the same item size: what an element-wise result is, made without checking again what
        this array was checked for."""
        result = object.__new__(type(self))
        result.shape, result.dtype, result.size, result.strides = self.shape, dtype, self.size, self.strides
        result.flags, result.allocator, result.base = self.flags, self.allocator, None
        result._device_index = self._device_index
        result.gpudata = result._allocate(self.size * dtype.itemsize) if self.size else None
        return result

    def _new(self, shape: tuple[int, ...], dtype: np.dtype, strides: Sequence[int] | None = None) -> GPUArray:
        """A new array of ``shape`` from this array's allocator, on its device."""
        result = GPUArray.__new__(type(self))
        result._device_index = self._device_index
        GPUArray.__init__(result, shape, dtype, self.allocator, strides=strides)
        return result

    def _view(self, shape: Sequence[int], strides: Sequence[int], offset: int = 0, dtype: Any = None) -> GPUArray:
        """A view of this array's memory from ``offset`` bytes on (PyCUDA's views hold an int)."""
        view = type(self)(
            shape,
            self.dtype if dtype is None else dtype,
            self.allocator,
            base=self,
            gpudata=self.ptr + offset,
            strides=strides,
        )
        view._device_index = self._device_index
        return view

    def _address(self) -> int:
        return self.ptr

    def _view_at(self, offset: int, shape: Sequence[int], strides: Sequence[int]) -> GPUArray:
        return self._view(shape, strides, offset)

    def _contiguous(self) -> GPUArray:
        """This array if C- or Fortran-contiguous, else a contiguous copy (for kernels)."""
        return self if self.flags.forc else self.copy()

    # -- transfers -------------------------------------------------------------------------

    def set(self, ary: Any, async_: bool = False, stream: Any = None) -> None:
        """Copy the host array ``ary`` into this array, as PyCUDA's ``set`` does.

        Unlike PyCUDA's, a view with gaps (``a[::2]``) can be set: through a contiguous copy
        on the GPU.

        Parameters
        ----------
        ary : array_like
            The same size and dtype as this array (a different shape is reshaped, with a
            warning, as in PyCUDA).
        async_ : bool, optional
            Return without waiting for the copy (which is asynchronous only from
            page-locked memory).
        stream : pyctk.driver.Stream, optional
            Where the copy is queued; default the legacy default stream.

        Raises
        ------
        ValueError
            ``ary`` has another size or dtype.

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> a = gpuarray.zeros(3, np.float32)
        >>> a.set(np.array([1, 2, 3], dtype=np.float32))
        >>> a.get()
        array([1., 2., 3.], dtype=float32)
        >>> a.set(np.arange(3))
        Traceback (most recent call last):
            ...
        ValueError: ary and self must have the same dtype: int64 != float32; convert it first (ary.astype('float32'))
        """
        ary = np.asarray(ary)
        if ary.size != self.size:
            raise ValueError(f"ary and self must be the same size: {ary.size} != {self.size}")
        if ary.dtype != self.dtype:
            raise ValueError(
                f"ary and self must have the same dtype: {ary.dtype} != {self.dtype}; "
                f"convert it first (ary.astype({str(self.dtype)!r}))"
            )
        if ary.shape != self.shape:
            warnings.warn("Setting array from one with different shape.", stacklevel=2)
            ary = ary.reshape(self.shape)
        if not self.size:
            return
        handle = stream_handle(stream)
        order = self._order()
        if order is None:  # a view with gaps: through a contiguous copy on the device
            staging = self._new_like_me(order="C")
            staging.set(ary, async_=async_, stream=stream)
            self._assign(staging, handle)
            return
        host = np.asarray(ary, order=order)  # (a copy only if ary is laid out otherwise)
        driver_api.call("cuMemcpyHtoDAsync", self.ptr, host.ctypes.data, self.nbytes, handle)
        if not async_:
            driver_api.call("cuStreamSynchronize", handle)

    def _order(self) -> Literal["C", "F"] | None:
        """ "C" or "F": the host layout whose bytes are this array's in order (None: neither)."""
        return "C" if self.flags.c_contiguous else "F" if self.flags.f_contiguous else None

    def set_async(self, ary: Any, stream: Any = None) -> None:
        """``set(ary, async_=True, stream=stream)``, as in PyCUDA: asynchronous from page-locked memory.

        Keep ``ary`` unchanged until the stream is done with it.

        Parameters
        ----------
        ary : numpy.ndarray
            The same size and dtype; page-locked (:func:`pyctk.driver.pagelocked_empty`) for
            the copy to overlap other work.
        stream : pyctk.driver.Stream, optional
        """
        self.set(ary, async_=True, stream=stream)

    def get(
        self, ary: np.ndarray | None = None, pagelocked: bool = False, async_: bool = False, stream: Any = None
    ) -> np.ndarray:
        """This array's contents in host memory, as PyCUDA's ``get``.

        It waits for the kernels queued before it on ``stream`` (the legacy default stream
        waits for every blocking stream). Unlike PyCUDA's, any layout works (a view with
        gaps is copied on the GPU first).

        Parameters
        ----------
        ary : numpy.ndarray, optional
            Where to copy to: the same size and dtype. Default a new array of this shape, in
            this array's order (C or Fortran).
        pagelocked : bool, optional
            Make the new array in page-locked memory.
        async_ : bool, optional
            Return without waiting for the copy.
        stream : pyctk.driver.Stream, optional
            Where the copy is queued; default the legacy default stream.

        Returns
        -------
        numpy.ndarray
            ``ary``, or the new array.

        Raises
        ------
        ValueError
            ``ary`` has another size.
        TypeError
            ``ary`` has another dtype.

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> a = gpuarray.to_gpu(np.arange(3, dtype=np.int32))
        >>> a.get()
        array([0, 1, 2], dtype=int32)
        >>> host = np.empty(3, dtype=np.int32)
        >>> a.get(host) is host
        True
        """
        if ary is None:
            order: Literal["C", "F"] = "F" if self._order() == "F" else "C"
            ary = (pagelocked_empty if pagelocked else np.empty)(self.shape, self.dtype, order=order)
        else:
            if ary.size != self.size:
                raise ValueError(f"ary and self must be the same size: {ary.size} != {self.size}")
            if ary.dtype != self.dtype:
                raise TypeError(f"ary and self must have the same dtype: {ary.dtype} != {self.dtype}")
            if ary.shape != self.shape:
                warnings.warn("get() between arrays of different shape is deprecated", DeprecationWarning, stacklevel=2)
                ary = ary.reshape(self.shape)
        if not self.size:
            return ary
        handle = stream_handle(stream)
        host = ary if ary.flags.forc else np.empty(self.shape, self.dtype)
        order = "F" if host.flags.f_contiguous and not host.flags.c_contiguous else "C"
        source = self if self._order() == order or self.size == 1 else self._copy_in(order)
        driver_api.call("cuMemcpyDtoHAsync", host.ctypes.data, source.ptr, self.nbytes, handle)
        if not async_:
            driver_api.call("cuStreamSynchronize", handle)
        if host is not ary:
            ary[...] = host
        return ary

    def get_async(self, stream: Any = None, ary: np.ndarray | None = None) -> np.ndarray:
        """``get(ary, async_=True, stream=stream)``, as in PyCUDA: the copy is queued on ``stream``.

        Synchronise the stream before reading the result. Unlike PyCUDA's, a new result is
        not page-locked unless asked (``get(pagelocked=True, async_=True)``).

        Parameters
        ----------
        stream : pyctk.driver.Stream, optional
        ary : numpy.ndarray, optional
            Where to copy to; page-locked for the copy to be asynchronous.

        Returns
        -------
        numpy.ndarray

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> import pyctk.driver as cuda
        >>> from pyctk import gpuarray
        >>> a = gpuarray.to_gpu(np.arange(3, dtype=np.float32))
        >>> stream = cuda.Stream()
        >>> host = cuda.pagelocked_empty(3, np.float32)
        >>> a.get_async(stream, host) is host
        True
        >>> stream.synchronize()
        >>> host
        array([0., 1., 2.], dtype=float32)
        """
        return self.get(ary, async_=True, stream=stream)

    def copy(self) -> GPUArray:
        """A new array with this array's contents, as PyCUDA's ``copy``.

        The copy is contiguous in this array's axis order (NumPy's ``order="K"``): a
        transposed view gives a Fortran-ordered copy. Unlike PyCUDA's, any view can be copied.

        Returns
        -------
        GPUArray

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> a = gpuarray.to_gpu(np.arange(6, dtype=np.int32).reshape(2, 3))
        >>> b = a.T.copy()
        >>> b.flags.f_contiguous, b.ptr != a.ptr
        (True, True)
        >>> b.get()
        array([[0, 3],
               [1, 4],
               [2, 5]], dtype=int32)
        """
        return self._copy_in("K")

    def _assign(self, source: GPUArrayBase, stream: int) -> None:
        """Copy ``source`` (same shape and dtype, any strides) into this array on ``stream``."""
        copying.copy_strided(self.ptr, self.strides, source.ptr, source.strides, self.shape, self.itemsize, stream)

    # -- views -----------------------------------------------------------------------------

    def reshape(self, *shape: Any, order: str = "C") -> GPUArray:
        """The elements in another shape, as PyCUDA's ``reshape``: a view of the same memory.

        Unlike PyCUDA's, which refuses it, an array that is not contiguous in ``order`` is
        copied first (then the result is a view of the copy).

        Parameters
        ----------
        *shape : int or tuple of int
            The new shape, as ints or one tuple; one length may be -1 (what the others
            leave).
        order : {"C", "F"}, optional
            The order the elements are read and placed in.

        Returns
        -------
        GPUArray

        Raises
        ------
        ValueError
            The sizes differ, or more than one -1.

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> a = gpuarray.to_gpu(np.arange(6, dtype=np.int32))
        >>> a.reshape(2, 3).get()
        array([[0, 1, 2],
               [3, 4, 5]], dtype=int32)
        >>> a.reshape(-1, 2).shape
        (3, 2)
        >>> a.reshape(2, 3).T.reshape(6).get()                          # copied first
        array([0, 3, 1, 4, 2, 5], dtype=int32)
        """
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = tuple(shape[0])
        shape = tuple(operator.index(s) for s in shape)
        if order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', not {order!r}")
        if shape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in shape:
            known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape array of size {self.size} into shape {shape}")
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {shape}")
        if shape == self.shape and (self.flags.c_contiguous if order == "C" else self.flags.f_contiguous):
            return self
        source = (
            self if (self.flags.c_contiguous if order == "C" else self.flags.f_contiguous) else self._copy_in(order)
        )
        strides = (contiguous_strides if order == "C" else f_strides)(shape, self.itemsize)
        return source._view(shape, strides)

    def _copy_in(self, order: str) -> GPUArray:
        """A copy laid out as ``order`` ("K": this array's axis order, "C", "F")."""
        copy = self._new_like_me(order=order)
        copy._assign(self, 0)
        return copy

    def ravel(self, order: str = "C") -> GPUArray:
        """The elements as a 1-D array: ``reshape(size, order=order)``.

        A view when the array is contiguous in ``order``, else a copy. Unlike PyCUDA's,
        ``order`` is taken, and any layout works.

        Parameters
        ----------
        order : {"C", "F"}, optional

        Returns
        -------
        GPUArray
        """
        return self.reshape(self.size, order=order)

    def view(self, dtype: Any = None) -> GPUArray:
        """The same memory read as another dtype, as PyCUDA's ``view``.

        For a dtype of another size the last axis is rescaled, as NumPy does (PyCUDA's
        rescales the axis of the smallest stride).

        Parameters
        ----------
        dtype : data-type, optional
            Default this array's: a view of the same memory.

        Returns
        -------
        GPUArray

        Raises
        ------
        ValueError
            A dtype of another size, and the array is not C-contiguous, or its last axis's
            bytes do not divide into the new items.

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> a = gpuarray.to_gpu(np.array([1.0, -2.0], dtype=np.float32))
        >>> a.view(np.uint32).get()
        array([1065353216, 3221225472], dtype=uint32)
        >>> a.view(np.uint16).shape
        (4,)
        """
        if dtype is None:
            return self._view(self.shape, self.strides)
        dtype = np.dtype(dtype)
        old, new = self.itemsize, dtype.itemsize
        if old == new:
            return self._view(self.shape, self.strides, dtype=dtype)
        if not self.shape or not self.flags.c_contiguous:
            raise ValueError(
                "to change to a dtype of a different size, the array must be C-contiguous and at least 1-D"
            )
        if (self.shape[-1] * old) % new:
            raise ValueError(
                f"the last axis ({self.shape[-1]} x {old} bytes) is not a multiple of the new itemsize ({new})"
            )
        shape = (*self.shape[:-1], self.shape[-1] * old // new)
        return self._view(shape, contiguous_strides(shape, new), dtype=dtype)

    def squeeze(self, axis: int | Sequence[int] | None = None) -> GPUArray:
        """A view without axes of length 1, as PyCUDA's ``squeeze``.

        Unlike PyCUDA's, ``axis`` can name the axes to remove, as in NumPy.

        Parameters
        ----------
        axis : int or tuple of int, optional
            Those axes only (each of length 1); default all of length 1.

        Returns
        -------
        GPUArray

        Raises
        ------
        ValueError
            An axis named is not of length 1.

        Examples
        --------
        >>> from pyctk import gpuarray                                  # doctest: +GPU
        >>> a = gpuarray.zeros((1, 3, 1))
        >>> a.squeeze().shape, a.squeeze(axis=0).shape
        ((3,), (3, 1))
        """
        named = () if axis is None else tuple(axis) if isinstance(axis, Sequence) else (axis,)
        axes = (
            {operator.index(a) % self.ndim for a in named}
            if axis is not None
            else {a for a, s in enumerate(self.shape) if s == 1}
        )
        if any(self.shape[a] != 1 for a in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        keep = [a for a in range(self.ndim) if a not in axes]
        return self._view([self.shape[a] for a in keep], [self.strides[a] for a in keep])

    def transpose(self, axes: Sequence[int] | None = None) -> GPUArray:
        """A view with the axes permuted, as PyCUDA's ``transpose``.

        Parameters
        ----------
        axes : sequence of int, optional
            The new order of the axes; default reversed.

        Returns
        -------
        GPUArray

        Raises
        ------
        ValueError
            ``axes`` is not a permutation of the axes.

        Examples
        --------
        >>> from pyctk import gpuarray                                  # doctest: +GPU
        >>> a = gpuarray.zeros((2, 3, 4))
        >>> a.transpose((1, 0, 2)).shape, a.transpose().shape
        ((3, 2, 4), (4, 3, 2))
        """
        return self._transposed(axes)

    def __setitem__(self, index: Any, value: Any) -> None:
        """``a[index] = value``: the elements ``a[index]`` selects set from ``value``.

        Unlike PyCUDA's, ``value`` (a scalar, a host array, a GPUArray or another library's
        GPU array) is converted to this array's dtype and broadcast, as NumPy does.

        Parameters
        ----------
        index
            As for :meth:`__getitem__`.
        value : scalar or array_like
            Broadcast to the shape of ``a[index]``.

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> a = gpuarray.zeros((2, 3), np.float32)
        >>> a[0] = 1
        >>> a[1, 1:] = np.array([5, 6])
        >>> a[:, 0] = gpuarray.to_gpu(np.array([7.0, 8.0]))            # float64, converted
        >>> a.get()
        array([[7., 1., 1.],
               [8., 5., 6.]], dtype=float32)
        """
        view = self[index]
        operand = None if isinstance(value, GPUArray) else interop.device_operand(value)
        if isinstance(value, GPUArray) or operand is not None:
            source = value if operand is None else wrap(operand)
            if source.dtype != view.dtype:
                source = source.astype(view.dtype)
            if source.shape != view.shape:
                source = source._broadcast_to(view.shape)
            view._assign(source, 0)
        elif isinstance(value, np.ndarray) and value.ndim:
            view.set(np.broadcast_to(np.asarray(value, view.dtype), view.shape))
        else:
            view.fill(value)

    # -- fills and casts -------------------------------------------------------------------

    def fill(self, value: Any, stream: Any = None) -> GPUArray:
        """Set every element to ``value``, as PyCUDA's ``fill``; returns the array.

        Parameters
        ----------
        value : scalar
            Converted to the array's dtype as NumPy converts it.
        stream : pyctk.driver.Stream, optional
            Where the fill is queued; default the legacy default stream.

        Returns
        -------
        GPUArray
            This array.

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> gpuarray.empty(4, np.float32).fill(2.5).get()
        array([2.5, 2.5, 2.5, 2.5], dtype=float32)
        """
        handle = stream_handle(stream)
        item = np.array(value, dtype=self.dtype) if self.dtype.kind != "V" else np.asarray(value)
        data = item.tobytes()
        if self.flags.forc:
            copying.fill(self.ptr, data, self.size, handle)
        else:
            one = self._new((), self.dtype)
            copying.fill(one.ptr, data, 1, handle)
            self._assign(one._broadcast_to(self.shape), handle)
        return self

    def astype(self, dtype: Any, stream: Any = None) -> GPUArray:
        """A new array of ``dtype``, the values converted as NumPy's ``astype`` converts them.

        Unlike PyCUDA's: any layout works, and complex values cast to a real dtype keep their
        real parts, as in NumPy.

        Parameters
        ----------
        dtype : data-type
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray
            A copy, even for the same dtype.

        Raises
        ------
        ValueError
            A dtype that kernels have no C type for (float16, among others).

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> a = gpuarray.to_gpu(np.array([1.7, -1.7, 300.0]))
        >>> a.astype(np.int32).get()
        array([  1,  -1, 300], dtype=int32)
        """
        dtype = np.dtype(dtype)
        if dtype == self.dtype:
            return self.copy()
        dtype_to_ctype(dtype)  # ValueError naming the dtype if no kernel can take it
        source = self._contiguous()
        result = source._new_like_me(dtype)
        copying.cast(result.ptr, dtype, source.ptr, self.dtype, self.size, stream_handle(stream))
        return result

    # -- arithmetic (arithmetic.py) and reductions (reductions.py) -------------------------

    # Python's operators, one row each: x OP y, y OP x and x OP= y (comparisons: the first)
    __add__, __radd__, __iadd__ = arithmetic.operator_methods("+", "add")
    __sub__, __rsub__, __isub__ = arithmetic.operator_methods("-", "sub")
    __mul__, __rmul__, __imul__ = arithmetic.operator_methods("*", "mul")
    __truediv__, __rtruediv__, __itruediv__ = arithmetic.operator_methods("/", "truediv")
    __pow__, __rpow__, __ipow__ = arithmetic.operator_methods("**", "pow")
    __floordiv__, __rfloordiv__, __ifloordiv__ = arithmetic.operator_methods("//", "floordiv")
    __mod__, __rmod__, __imod__ = arithmetic.operator_methods("%", "mod")
    __and__, __rand__, __iand__ = arithmetic.operator_methods("&", "and")
    __or__, __ror__, __ior__ = arithmetic.operator_methods("|", "or")
    __xor__, __rxor__, __ixor__ = arithmetic.operator_methods("^", "xor")
    __eq__ = arithmetic.operator_methods("==", "eq")[0]  # type: ignore[assignment]
    __ne__ = arithmetic.operator_methods("!=", "ne")[0]  # type: ignore[assignment]
    __lt__ = arithmetic.operator_methods("<", "lt")[0]
    __le__ = arithmetic.operator_methods("<=", "le")[0]
    __gt__ = arithmetic.operator_methods(">", "gt")[0]
    __ge__ = arithmetic.operator_methods(">=", "ge")[0]

    def __neg__(self) -> GPUArray:
        """``-x``, as NumPy's ``negative`` computes it (as in PyCUDA)."""
        return arithmetic.unary("-", self)

    def __pos__(self) -> GPUArray:
        """``+x``: the array itself, not a copy (pyctk's; PyCUDA has no ``+x``)."""
        return self

    def __invert__(self) -> GPUArray:
        """``~x``: bitwise NOT of integers, logical NOT of bool, as NumPy's ``invert`` (pyctk's)."""
        return arithmetic.unary("~", self)

    def __abs__(self) -> GPUArray:
        """``abs(x)``, as NumPy's ``absolute``: real for complex ``x`` (PyCUDA's too)."""
        return arithmetic.unary("abs", self)

    def __matmul__(self, other: Any) -> GPUArray:
        """``x @ y`` by :func:`pyctk.matmul`: NumPy's ``matmul`` on the GPU (pyctk's; PyCUDA has no ``@``).

        The result is a new GPUArray over the product's memory, without a copy; stacks of
        matrices and vectors work as in NumPy.

        Parameters
        ----------
        other : GPUArray
            Or another library's GPU array; host arrays are refused (TypeError).

        Returns
        -------
        GPUArray

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> m = gpuarray.to_gpu(np.ones((2, 3), dtype=np.float32))
        >>> (m @ m.T).get()
        array([[3., 3.],
               [3., 3.]], dtype=float32)
        """
        return arithmetic.matmul(self, other)

    def __rmatmul__(self, other: Any) -> GPUArray:
        """``y @ x``, for ``y`` another library's GPU array (see :meth:`__matmul__`)."""
        return arithmetic.matmul(other, self)

    def mul_add(
        self,
        selffac: Any,
        other: GPUArray,
        otherfac: Any,
        add_timer: Any = None,
        stream: Any = None,
        out: GPUArray | None = None,
    ) -> GPUArray:
        """``selffac * self + otherfac * other`` in one kernel, as PyCUDA's ``mul_add``.

        Unlike PyCUDA's: NumPy's result dtype, broadcasting, and ``add_timer`` is called with
        the kernel's time from CUDA events.

        Parameters
        ----------
        selffac, otherfac : scalar or GPUArray
        other : GPUArray
        add_timer : callable, optional
            ``add_timer(3 * size, seconds)``, where ``seconds()`` waits for the kernel and
            gives its time.
        stream : pyctk.driver.Stream, optional
        out : GPUArray, optional
            Where to put the result.

        Returns
        -------
        GPUArray

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> x = gpuarray.to_gpu(np.array([1.0, 2.0]))
        >>> y = gpuarray.to_gpu(np.array([10.0, 20.0]))
        >>> x.mul_add(2, y, 0.5).get()
        array([ 7., 14.])
        """
        return arithmetic.mul_add(self, selffac, other, otherfac, add_timer, stream, out)

    @property
    def real(self) -> GPUArray:
        """The real parts, a new array, for a complex array; the array itself for a real one (as in PyCUDA).

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> z = gpuarray.to_gpu(np.array([1 + 2j, 3 - 4j], dtype=np.complex64))
        >>> z.real.get(), z.imag.get()
        (array([1., 3.], dtype=float32), array([ 2., -4.], dtype=float32))
        """
        return arithmetic.real(self)

    @property
    def imag(self) -> GPUArray:
        """The imaginary parts, a new array; zeros like the array for a real one (as in PyCUDA)."""
        return arithmetic.imag(self)

    def conj(self, out: GPUArray | None = None) -> GPUArray:
        """The complex conjugate, a new array (or ``out``); this array itself for a real one, as in PyCUDA.

        Parameters
        ----------
        out : GPUArray, optional
            Where to put it; ``out=a`` conjugates in place.

        Returns
        -------
        GPUArray

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> z = gpuarray.to_gpu(np.array([1 + 2j, 3 - 4j], dtype=np.complex64))
        >>> z.conj().get()
        array([1.-2.j, 3.+4.j], dtype=complex64)
        """
        return arithmetic.conj(self, out)

    conjugate = conj

    def bind_to_texref(self, texref: Any, allow_offset: bool = False) -> int:
        """Point a kernel getter's stand-in of a texture reference at this array (PyCUDA's ``bind_to_texref``).

        CUDA 12 removed texture references: the texrefs of
        :func:`pyctk.elementwise.get_take_kernel` and
        :func:`pyctk.elementwise.get_linear_combination_kernel` are pointers of their kernel's
        module, which this sets; any other object raises.

        Parameters
        ----------
        texref : object
            A stand-in the getters return (its ``set_address``).
        allow_offset : bool, optional
            PyCUDA's.

        Returns
        -------
        int
            0: the kernel reads from the array's first element.

        Raises
        ------
        pyctk.driver.TextureReferenceError
            ``texref`` is not a getter's stand-in: bind a :class:`pyctk.driver.TextureObject` instead.
        """
        set_address = getattr(texref, "set_address", None)
        if set_address is None:
            raise textures.references_removed("GPUArray.bind_to_texref")
        return int(set_address(self.gpudata, self.nbytes, allow_offset=allow_offset))

    def bind_to_texref_ext(
        self,
        texref: Any,
        channels: int = 1,
        allow_double_hack: bool = False,
        allow_complex_hack: bool = False,
        allow_offset: bool = False,
    ) -> int:
        """:meth:`bind_to_texref`, with PyCUDA's texture format options (a pointer needs none).

        Parameters
        ----------
        texref : object
            A stand-in a kernel getter returns.
        channels, allow_double_hack, allow_complex_hack : optional
            PyCUDA's: how a texture would read doubles and complex numbers (a pointer reads
            them as they are).
        allow_offset : bool, optional
            PyCUDA's.

        Returns
        -------
        int
            0.
        """
        return self.bind_to_texref(texref, allow_offset)

    def reverse(self, stream: Any = None) -> GPUArray:
        """A new array with the elements in reverse memory order, as PyCUDA's ``reverse``.

        The array is treated as 1-D: the result has its shape, its last element first.
        Unlike PyCUDA's, any layout works (PyCUDA's takes contiguous arrays only).

        Parameters
        ----------
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> gpuarray.to_gpu(np.arange(4, dtype=np.int32)).reverse().get()
        array([3, 2, 1, 0], dtype=int32)
        """
        return arithmetic.reverse(self, stream)

    def any(self, stream: Any = None, allocator: Any = None) -> GPUArray:
        """Whether any element is nonzero: :func:`pyctk.gpuarray.any` of this array, a 0-d bool array.

        Parameters
        ----------
        stream : pyctk.driver.Stream, optional
        allocator : callable, optional
            Where the result's memory comes from; default this array's allocator.

        Returns
        -------
        GPUArray

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> a = gpuarray.to_gpu(np.array([0, 1, 2], dtype=np.int32))
        >>> a.any().get(), a.all().get()
        (array(True), array(False))
        """
        return reductions.any_(self, stream, allocator)

    def all(self, stream: Any = None, allocator: Any = None) -> GPUArray:
        """Whether every element is nonzero: :func:`pyctk.gpuarray.all` of this array, a 0-d bool array.

        Parameters
        ----------
        stream : pyctk.driver.Stream, optional
        allocator : callable, optional
            Where the result's memory comes from; default this array's allocator.

        Returns
        -------
        GPUArray
        """
        return reductions.all_(self, stream, allocator)

    def sum(self, dtype: Any = None, stream: Any = None) -> GPUArray:
        """The sum of the elements: :func:`pyctk.gpuarray.sum` of this array, a 0-d array.

        pyctk's method (PyCUDA has the function only). The default ``dtype`` is NumPy's, which
        widens small integers (PyCUDA's sums in the array's dtype).

        Parameters
        ----------
        dtype : data-type, optional
            What to sum in and return.
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray

        Examples
        --------
        >>> import numpy as np                                          # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> a = gpuarray.to_gpu(np.array([3, 1, 2], dtype=np.int32))
        >>> a.sum().get(), a.max().get(), a.min().get(), a.dot(a).get()
        (array(6), array(3, dtype=int32), array(1, dtype=int32), array(14, dtype=int32))
        """
        return reductions.sum_(self, dtype, stream)

    def max(self, stream: Any = None) -> GPUArray:
        """The largest element: :func:`pyctk.gpuarray.max` of this array, a 0-d array (pyctk's method).

        Parameters
        ----------
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray
        """
        return reductions.extreme("max", self, stream)

    def min(self, stream: Any = None) -> GPUArray:
        """The smallest element: :func:`pyctk.gpuarray.min` of this array, a 0-d array (pyctk's method).

        Parameters
        ----------
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray
        """
        return reductions.extreme("min", self, stream)

    def dot(self, other: GPUArray, dtype: Any = None, stream: Any = None) -> GPUArray:
        """The sum of the products of the elements: :func:`pyctk.gpuarray.dot` of this array and ``other``.

        pyctk's method (PyCUDA has the function only); a 0-d array, with no complex conjugate.

        Parameters
        ----------
        other : GPUArray
            As many elements as this array.
        dtype : data-type, optional
            Default NumPy's ``result_type`` of the two.
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray
        """
        return reductions.dot(self, other, dtype, stream)


def wrap(operand: interop.DeviceOperand) -> GPUArray:
    """A zero-copy GPUArray of another library's GPU array (kept alive with it), ordered after
    its producer's pending work."""
    if operand.stream is not None:
        streams.wait(0, operand.stream)
    array = GPUArray(operand.shape, operand.dtype, base=operand.owner, gpudata=operand.pointer, strides=operand.strides)
    array._device_index = operand.device
    return array


def _from_host(host: np.ndarray) -> GPUArray:
    """Unpickling: the host copy back on the current device."""
    array = GPUArray(host.shape, host.dtype)
    array.set(host)
    return array
