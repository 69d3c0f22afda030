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
from typing import Any, Sequence

import numpy as np

from ..._arrays import device_array, dlpack, interop
from ..._arrays.layout import contiguous_strides, is_c_contiguous
from ..._cuda import driver_api, streams
from ..kernels.c_types import dtype_to_ctype
from ..memory.device import device_memory, mem_alloc
from ..memory.host import pagelocked_empty, shape_tuple
from . import arithmetic, copying, reductions
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


class GPUArray:
    """An array in GPU memory (PyCUDA's ``GPUArray``; ``gpuarray.empty`` is the same).

    ``GPUArray(shape, dtype, allocator=mem_alloc, base=None, gpudata=None, strides=None,
    order="C")``: new memory from ``allocator(nbytes)`` unless ``gpudata`` is given (then
    the array is a view of it, and ``base`` is kept alive with it).

    Examples
    --------
    >>> import numpy as np
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.arange(6, dtype=np.float32).reshape(2, 3))   # doctest: +SKIP
    >>> (2 * a + 1).get()                                                   # doctest: +SKIP
    array([[ 1.,  3.,  5.],
           [ 7.,  9., 11.]], dtype=float32)
    >>> a[:, 1].get(), a.T.shape                                            # doctest: +SKIP
    (array([1., 4.], dtype=float32), (3, 2))
    """

    __array_priority__ = 100  # NumPy defers to GPUArray's operators: host_array + gpu_array is ours

    def __init__(self, shape: Any, dtype: Any, allocator: Any = None, base: Any = None,
                 gpudata: Any = None, strides: Sequence[int] | None = None, order: str = "C") -> None:
        self.shape = shape_tuple(shape)
        self.dtype = np.dtype(dtype)
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
                raise ValueError("base is for a view of gpudata given with it; without gpudata, "
                                 "the array allocates its own memory")
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
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def mem_size(self) -> int:
        """PyCUDA's name for ``size``."""
        return self.size

    @property
    def ptr(self) -> int:
        """The device address of the first element (0 for an empty array)."""
        gpudata = self.gpudata
        return 0 if gpudata is None else int(gpudata)

    @property
    def device(self) -> int:
        """The index of the device the memory is on."""
        if self._device_index is None:
            self._device_index = driver_api.current_device()
        return self._device_index

    @property
    def _grid(self) -> tuple[int, int]:
        return splay(self.size, self.device)[0]

    @property
    def _block(self) -> tuple[int, int, int]:
        return splay(self.size, self.device)[1]

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __hash__(self) -> int:
        raise TypeError("GPUArrays are not hashable")

    def __bool__(self) -> bool:
        if self.size == 1:
            return bool(self.get())
        raise ValueError("The truth value of an array with more than one element is ambiguous. "
                         "Use a.any() or a.all()")

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

    def _view(self, shape: Sequence[int], strides: Sequence[int], offset: int = 0,
              dtype: Any = None) -> GPUArray:
        """A view of this array's memory from ``offset`` bytes on (PyCUDA's views hold an int)."""
        view = type(self)(shape, self.dtype if dtype is None else dtype, self.allocator, base=self,
                          gpudata=self.ptr + offset, strides=strides)
        view._device_index = self._device_index
        return view

    def _contiguous(self) -> GPUArray:
        """This array if C- or Fortran-contiguous, else a contiguous copy (for kernels)."""
        return self if self.flags.forc else self.copy()

    # -- transfers -------------------------------------------------------------------------

    def set(self, ary: Any, async_: bool = False, stream: Any = None) -> None:
        """Copy host array ``ary`` (same size and dtype) into this array (synchronously unless
        ``async_``, on ``stream``)."""
        ary = np.asarray(ary)
        if ary.size != self.size:
            raise ValueError(f"ary and self must be the same size: {ary.size} != {self.size}")
        if ary.dtype != self.dtype:
            raise ValueError(f"ary and self must have the same dtype: {ary.dtype} != {self.dtype}; "
                             f"convert it first (ary.astype({str(self.dtype)!r}))")
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

    def _order(self) -> str | None:
        """"C" or "F": the host layout whose bytes are this array's in order (None: neither)."""
        return "C" if self.flags.c_contiguous else "F" if self.flags.f_contiguous else None

    def set_async(self, ary: Any, stream: Any = None) -> None:
        """``set(ary, async_=True, stream=stream)``: asynchronous from page-locked memory."""
        self.set(ary, async_=True, stream=stream)

    def get(self, ary: np.ndarray | None = None, pagelocked: bool = False, async_: bool = False,
            stream: Any = None) -> np.ndarray:
        """This array's contents in host memory: a new NumPy array (page-locked if asked),
        or ``ary``, filled in (same size and dtype)."""
        if ary is None:
            order = "F" if self._order() == "F" else "C"
            ary = (pagelocked_empty if pagelocked else np.empty)(self.shape, self.dtype, order=order)
        else:
            if ary.size != self.size:
                raise ValueError(f"ary and self must be the same size: {ary.size} != {self.size}")
            if ary.dtype != self.dtype:
                raise TypeError(f"ary and self must have the same dtype: {ary.dtype} != {self.dtype}")
            if ary.shape != self.shape:
                warnings.warn("get() between arrays of different shape is deprecated",
                              DeprecationWarning, stacklevel=2)
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
        """``get(ary, async_=True, stream=stream)``: synchronise the stream before reading it."""
        return self.get(ary, async_=True, stream=stream)

    def copy(self) -> GPUArray:
        """A new array with this one's contents, contiguous in its axis order."""
        return self._copy_in("K")

    def _assign(self, source: GPUArray, stream: int) -> None:
        """Copy ``source`` (same shape and dtype, any strides) into this array on ``stream``."""
        copying.copy_strided(self.ptr, self.strides, source.ptr, source.strides, self.shape,
                             self.itemsize, stream)

    # -- views -----------------------------------------------------------------------------

    def reshape(self, *shape: Any, order: str = "C") -> GPUArray:
        """A view of another shape (one entry may be -1); a copy first if not contiguous."""
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
        source = self if (self.flags.c_contiguous if order == "C" else self.flags.f_contiguous) \
            else self._copy_in(order)
        strides = (contiguous_strides if order == "C" else f_strides)(shape, self.itemsize)
        return source._view(shape, strides)

    def _copy_in(self, order: str) -> GPUArray:
        """A copy laid out as ``order`` ("K": this array's axis order, "C", "F")."""
        copy = self._new_like_me(order=order)
        copy._assign(self, 0)
        return copy

    def ravel(self, order: str = "C") -> GPUArray:
        """The elements as a 1-D array (a view when contiguous in ``order``)."""
        return self.reshape(self.size, order=order)

    def view(self, dtype: Any = None) -> GPUArray:
        """The same memory read as ``dtype`` (the last axis rescaled, as NumPy does)."""
        if dtype is None:
            return self._view(self.shape, self.strides)
        dtype = np.dtype(dtype)
        old, new = self.itemsize, dtype.itemsize
        if old == new:
            return self._view(self.shape, self.strides, dtype=dtype)
        if not self.shape or not self.flags.c_contiguous:
            raise ValueError("to change to a dtype of a different size, the array must be "
                             "C-contiguous and at least 1-D")
        if (self.shape[-1] * old) % new:
            raise ValueError(f"the last axis ({self.shape[-1]} x {old} bytes) is not a multiple of "
                             f"the new itemsize ({new})")
        shape = (*self.shape[:-1], self.shape[-1] * old // new)
        return self._view(shape, contiguous_strides(shape, new), dtype=dtype)

    def squeeze(self, axis: int | Sequence[int] | None = None) -> GPUArray:
        """Without the axes of length 1 (those named by ``axis``, else all)."""
        axes = ({a % self.ndim for a in ((axis,) if isinstance(axis, numbers.Integral) else axis)}
                if axis is not None else {a for a, s in enumerate(self.shape) if s == 1})
        if any(self.shape[a] != 1 for a in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        keep = [a for a in range(self.ndim) if a not in axes]
        return self._view([self.shape[a] for a in keep], [self.strides[a] for a in keep])

    def transpose(self, axes: Sequence[int] | None = None) -> GPUArray:
        """The axes permuted (reversed by default): a view."""
        order = list(range(self.ndim))[::-1] if axes is None else [operator.index(a) % max(self.ndim, 1)
                                                                   for a in axes]
        if sorted(order) != list(range(self.ndim)):
            raise ValueError(f"axes {axes} are not a permutation of the array's {self.ndim} axes")
        return self._view([self.shape[a] for a in order], [self.strides[a] for a in order])

    @property
    def T(self) -> GPUArray:  # noqa: N802 - NumPy's name
        return self.transpose()

    def __getitem__(self, index: Any) -> GPUArray:
        """Basic indexing (ints, slices, ``...``, ``None``): a view, 0-d for all-int indices."""
        shape, strides, offset = _index_view(self.shape, self.strides, index)
        return self._view(shape, strides, offset)

    def __setitem__(self, index: Any, value: Any) -> None:
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

    def _broadcast_to(self, shape: tuple[int, ...]) -> GPUArray:
        """A view of this array broadcast to ``shape`` (zero strides repeat it), NumPy's rules."""
        try:
            np.broadcast_shapes(self.shape, shape)
        except ValueError:
            raise ValueError(f"operands could not be broadcast together with shapes {self.shape} "
                             f"{shape}") from None
        if np.broadcast_shapes(self.shape, shape) != tuple(shape):
            raise ValueError(f"could not broadcast an array of shape {self.shape} into shape {shape}")
        lead = len(shape) - self.ndim
        strides = [0] * lead + [0 if s == 1 and t != 1 else st
                                for s, t, st in zip(self.shape, shape[lead:], self.strides)]
        return self._view(shape, strides)

    # -- fills and casts -------------------------------------------------------------------

    def fill(self, value: Any, stream: Any = None) -> GPUArray:
        """Set every element to ``value`` (converted to the dtype); returns the array."""
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
        """A new array of ``dtype`` with the values converted as NumPy converts them."""
        dtype = np.dtype(dtype)
        if dtype == self.dtype:
            return self.copy()
        dtype_to_ctype(dtype)  # ValueError naming the dtype if no kernel can take it
        source = self._contiguous()
        result = source._new_like_me(dtype)
        copying.cast(result.ptr, dtype, source.ptr, self.dtype, self.size, stream_handle(stream))
        return result

    # -- other libraries -------------------------------------------------------------------

    @property
    def __cuda_array_interface__(self) -> dict:
        """The CUDA Array Interface (version 3): CuPy, Numba, PyTorch and JAX read it.
        Work queued by pyctk is on the legacy default stream (1 in the interface)."""
        return {"shape": self.shape, "strides": self.strides, "typestr": self.dtype.str,
                "descr": [("", self.dtype.str)], "data": (self.ptr, False), "version": 3,
                "stream": 1}

    def __dlpack_device__(self) -> tuple[int, int]:
        return dlpack.kDLCUDA, self.device

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """Export as a DLPack capsule (the array API's protocol), keeping this array alive."""
        return self._as_device_array().__dlpack__(stream=stream, max_version=max_version,
                                                  dl_device=dl_device, copy=copy)

    def _as_device_array(self) -> Any:
        operand = interop.DeviceOperand(self.ptr, self.shape, self.strides, self.dtype, self.device,
                                        False, self, None)
        return device_array.wrap(operand)

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
        return arithmetic.unary("-", self)

    def __pos__(self) -> GPUArray:
        return self

    def __invert__(self) -> GPUArray:
        return arithmetic.unary("~", self)

    def __abs__(self) -> GPUArray:
        return arithmetic.unary("abs", self)

    def __matmul__(self, other: Any) -> GPUArray:
        return arithmetic.matmul(self, other)

    def __rmatmul__(self, other: Any) -> GPUArray:
        return arithmetic.matmul(other, self)

    def mul_add(self, selffac: Any, other: GPUArray, otherfac: Any, add_timer: Any = None,
                stream: Any = None, out: GPUArray | None = None) -> GPUArray:
        """``selffac * self + otherfac * other`` in one kernel."""
        return arithmetic.mul_add(self, selffac, other, otherfac, add_timer, stream, out)

    @property
    def real(self) -> GPUArray:
        return arithmetic.real(self)

    @property
    def imag(self) -> GPUArray:
        return arithmetic.imag(self)

    def conj(self, out: GPUArray | None = None) -> GPUArray:
        """The complex conjugate (this array itself for a real one)."""
        return arithmetic.conj(self, out)

    conjugate = conj

    def reverse(self, stream: Any = None) -> GPUArray:
        """A new 1-D array with the elements in reverse order (PyCUDA's)."""
        return arithmetic.reverse(self, stream)

    def any(self, stream: Any = None, allocator: Any = None) -> GPUArray:
        """Whether any element is nonzero: a 0-d bool array."""
        return reductions.any_(self, stream, allocator)

    def all(self, stream: Any = None, allocator: Any = None) -> GPUArray:
        """Whether every element is nonzero: a 0-d bool array."""
        return reductions.all_(self, stream, allocator)

    def sum(self, dtype: Any = None, stream: Any = None) -> GPUArray:
        """The sum of the elements: a 0-d array (``gpuarray.sum``)."""
        return reductions.sum_(self, dtype, stream)

    def max(self, stream: Any = None) -> GPUArray:
        """The largest element: a 0-d array (``gpuarray.max``)."""
        return reductions.extreme("max", self, stream)

    def min(self, stream: Any = None) -> GPUArray:
        """The smallest element: a 0-d array (``gpuarray.min``)."""
        return reductions.extreme("min", self, stream)

    def dot(self, other: GPUArray, dtype: Any = None, stream: Any = None) -> GPUArray:
        """The sum of the elementwise product: a 0-d array (``gpuarray.dot``)."""
        return reductions.dot(self, other, dtype, stream)


def _index_view(shape: tuple[int, ...], strides: tuple[int, ...], index: Any
                ) -> tuple[list[int], list[int], int]:
    """Shape, strides and byte offset of the view ``index`` (NumPy's basic indexing) selects."""
    if not isinstance(index, tuple):
        index = (index,)
    if sum(i is Ellipsis for i in index) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{used} were indexed")
    if Ellipsis not in index:
        index = (*index, Ellipsis)
    new_shape, new_strides, offset, axis = [], [], 0, 0
    for item in index:
        if item is Ellipsis:
            for _ in range(len(shape) - used):
                new_shape.append(shape[axis])
                new_strides.append(strides[axis])
                axis += 1
        elif item is None:
            new_shape.append(1)
            new_strides.append(0)
        elif isinstance(item, slice):
            start, stop, step = item.indices(shape[axis])
            new_shape.append(len(range(start, stop, step)))
            new_strides.append(strides[axis] * step)
            offset += start * strides[axis] if new_shape[-1] else 0
            axis += 1
        else:
            try:
                k = operator.index(item)
            except TypeError:
                raise IndexError(f"GPUArray takes ints, slices, ... and None as indices (basic "
                                 f"indexing), not {type(item).__name__}; for a gather use "
                                 f"gpuarray.take") from None
            if not -shape[axis] <= k < shape[axis]:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {shape[axis]}")
            offset += (k % shape[axis]) * strides[axis]
            axis += 1
    return new_shape, new_strides, offset


def wrap(operand: interop.DeviceOperand) -> GPUArray:
    """A zero-copy GPUArray of another library's GPU array (kept alive with it), ordered after
    its producer's pending work."""
    if operand.stream is not None:
        streams.wait(0, operand.stream)
    array = GPUArray(operand.shape, operand.dtype, base=operand.owner, gpudata=operand.pointer,
                     strides=operand.strides)
    array._device_index = operand.device
    return array


def _from_host(host: np.ndarray) -> GPUArray:
    """Unpickling: the host copy back on the current device."""
    array = GPUArray(host.shape, host.dtype)
    array.set(host)
    return array
