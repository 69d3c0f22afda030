"""``DeviceArray``: an n-dimensional array in GPU memory, and the functions that make one.

>>> import numpy as np                                              # doctest: +GPU
>>> from pyctk._arrays import device_array as da
>>> x = da.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
>>> x[:, ::2].get()
array([[0., 2.],
       [3., 5.]], dtype=float32)

Memory. ``empty``, ``zeros``, ``asarray`` of host data and ``copy`` allocate from
pyctk's pool on the device (pyctk._arrays.memory: CUDA's stream-ordered allocator). The
memory belongs to one ``Allocation`` object; every view (slices, ``.T``) holds it, and
every DLPack capsule exported from a view holds the view, so the memory is returned
(``cudaFreeAsync``) when the last view and the last capsule are gone. A zero-copy view of
another library's array (``asarray``, ``from_dlpack``) holds that array, or the DLPack
tensor it came from, instead.

Streams. pyctk orders all its work on each device's legacy default stream (handle 0):
allocation, copies, frees. Since that stream waits for, and is waited for by, every
blocking stream, code on such streams needs no extra synchronisation. Exports say so:
``__cuda_array_interface__`` reports stream 1 (the interface's name for the legacy
stream), and ``__dlpack__(stream=s)`` makes the consumer's stream ``s`` wait for it with
an event. Imports make the legacy stream wait for the producer's stream (CAI) or pass 1
as the consumer's stream (DLPack). A consumer working on a non-blocking stream must keep
the pyctk array alive until that work is done, as with any DLPack or CAI exchange.

Devices. Every call runs on the array's device through ``cudart.on_device``: the
calling thread's current device is never changed. The default device is 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._cuda import cudart, streams
from . import convert, interop
from .arguments import device_index, shape_tuple
from .dtypes import supported_dtype
from .layout import contiguous_strides, span
from .memory import allocate
from .strided import StridedArray

DEFAULT_DEVICE = 0
_STREAM = 0  # the legacy default stream: see the module docstring
_REPR_MAX_SIZE = 100  # repr shows the values of arrays up to this size
# A DeviceArray's _layout: (shape, strides, dtype, device, stream).
ArrayLayout = tuple[tuple[int, ...], tuple[int, ...], np.dtype, int, int]


def _device_index(device: Any) -> int:
    return DEFAULT_DEVICE if device is None else device_index(device)


class DeviceArray(StridedArray):
    """An n-dimensional array in GPU memory, with NumPy's shape, dtype and byte strides.

    What ``pyctk.matmul`` returns for GPU operands, and takes as one. Make one with
    ``pyctk.asarray`` (from host data, or from another library's GPU array without a
    copy), ``pyctk.empty``, ``pyctk.zeros`` or ``pyctk.from_dlpack``; the constructor
    itself describes memory that something else owns. Indexing with integers, slices (any
    step), ``...`` and ``None`` gives views of the same memory; ``get()`` or
    ``numpy.asarray(x)`` copies the data to the host. The dtypes are those
    ``pyctk.matmul`` computes: bool, the integers of 8 to 64 bits, float16, bfloat16,
    float32, float64, complex64 and complex128; and ml_dtypes' float8_e4m3fn and
    float8_e5m2, which products compute in float32, as ``numpy.matmul`` does.

    Parameters
    ----------
    pointer : int
        Device address of element 0 (0 for an array without elements).
    shape, strides : sequence of int
        Extents, and byte steps between elements along each axis (may be negative).
    dtype : dtype_like
        One of pyctk's dtypes.
    device : int
        The CUDA device the memory is on.
    owner : object
        Keeps the memory valid while this array (or a view of it) exists.
    stream : int, optional
        The ``cudaStream_t`` that work on the memory is ordered on (default: the legacy one).
    readonly : bool, optional
        Whether the owner allows writes.

    See Also
    --------
    pyctk.asarray, pyctk.empty, pyctk.zeros, pyctk.from_dlpack

    Notes
    -----
    The memory comes from a pool on the device (CUDA's stream-ordered allocator) and is
    returned to it when the last view of it, and the last DLPack capsule exported from
    one, is gone. A zero-copy view of another library's array keeps that array alive
    instead.

    pyctk orders its work on each device's legacy default stream, which every blocking
    stream waits for and is waited for by: code on such streams (PyTorch's and CuPy's
    defaults) needs no extra synchronisation. ``__cuda_array_interface__`` and
    ``__dlpack__`` say so to other libraries, and an array taken from one is ordered
    after its pending work. A consumer on a non-blocking stream must keep the array alive
    until its work is done, as with any DLPack or CUDA Array Interface exchange.

    Every operation runs on the array's own device; the calling thread's current device
    is never changed.

    Examples
    --------
    >>> import numpy as np, pyctk                                    # doctest: +GPU
    >>> x = pyctk.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    >>> x
    DeviceArray([[1., 2.],
                 [3., 4.]], dtype=float32, device=0)
    >>> x.shape, x.dtype, x.strides, x.device
    ((2, 2), dtype('float32'), (8, 4), 0)

    Indexing gives views of the same memory, of any strides:

    >>> x.T[1]
    DeviceArray([2., 4.], dtype=float32, device=0)
    >>> x[:, ::-1].strides
    (8, -4)

    Copies on the device, and to the host:

    >>> x.T.copy().strides
    (8, 4)
    >>> x.astype(np.int8).get()
    array([[1, 2],
           [3, 4]], dtype=int8)
    >>> np.asarray(x[1])
    array([3., 4.], dtype=float32)
    """

    # _layout: (shape, strides, dtype, device, stream), what work on the array depends on
    # besides its data, made once: the key under which a product of this layout is kept
    # (pyctk._matmul.repeat), whose result gets its own from the plan.
    __slots__ = (
        "_pointer",
        "_shape",
        "_strides",
        "_dtype",
        "_device",
        "_owner",
        "_stream",
        "_readonly",
        "_layout",
        "__weakref__",
    )

    def __init__(
        self,
        pointer: int,
        shape: Sequence[int],
        strides: Sequence[int],
        dtype: Any,
        device: int,
        owner: Any,
        *,
        stream: int = _STREAM,
        readonly: bool = False,
    ) -> None:
        self._pointer = pointer
        self._shape = tuple(shape)
        self._strides = tuple(strides)
        self._dtype = supported_dtype(dtype)
        self._device = device
        self._owner = owner
        self._stream = stream
        self._readonly = readonly
        self._layout = (self._shape, self._strides, self._dtype, device, stream)

    @classmethod
    def _checked_before(cls, pointer: int, layout: ArrayLayout, owner: Any) -> DeviceArray:
        """A writable array of a ``_layout`` checked before (tuples, a dtype ``supported_dtype``
        gave): a kept product's result, made without the constructor's conversions (a third
        of a 16 x 16 product's Python)."""
        array = object.__new__(cls)
        array._shape, array._strides, array._dtype, array._device, array._stream = layout
        array._layout, array._pointer, array._owner, array._readonly = layout, pointer, owner, False
        return array

    # -- attributes ----------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The extent of each axis, a tuple of ints, as ``numpy.ndarray.shape``."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the elements (bfloat16 is ml_dtypes' bfloat16)."""
        return self._dtype

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes between consecutive elements along each axis, as in NumPy (negative for a
        reversed axis, 0 for a repeated one)."""
        return self._strides

    @property
    def ndim(self) -> int:
        """The number of axes, ``len(shape)``."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """The number of elements, the product of ``shape``."""
        return math.prod(self._shape)

    @property
    def nbytes(self) -> int:
        """Bytes the elements take, ``size * dtype.itemsize`` (not counting gaps between
        the elements of a strided view)."""
        return self.size * self._dtype.itemsize

    @property
    def device(self) -> int:
        """The index of the CUDA device the data is on."""
        return self._device

    def transpose(self, *axes: Any) -> DeviceArray:
        """A view with the axes in the order ``axes`` names, as ``numpy.ndarray.transpose``.

        Parameters
        ----------
        *axes : ints, or one tuple of ints
            A permutation of the axes, negative ones counting from the end:
            ``x.transpose(1, 0, 2)`` or ``x.transpose((1, 0, 2))``. None or nothing
            reverses them all (``x.T``).

        Returns
        -------
        DeviceArray
            A view of the same memory.

        Raises
        ------
        ValueError
            Axes that are not a permutation of the array's.

        Examples
        --------
        >>> import pyctk                                       # doctest: +GPU
        >>> x = pyctk.zeros((2, 3, 4))
        >>> x.transpose(1, 0, 2).shape, x.transpose().shape
        ((3, 2, 4), (4, 3, 2))
        """
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)) and axes[0] is not None:
            axes = tuple(axes[0])
        return self._transposed(None if not axes or axes == (None,) else axes)

    _index_refusal = (
        "DeviceArray takes integers, slices, ... and None as indices (advanced "
        "indexing with arrays, lists or booleans is not supported)"
    )

    def _address(self) -> int:
        return self._pointer

    def _view_at(self, offset: int, shape: Sequence[int], strides: Sequence[int]) -> DeviceArray:
        return DeviceArray(
            self._pointer + offset,
            shape,
            strides,
            self._dtype,
            self._device,
            self._owner,
            stream=self._stream,
            readonly=self._readonly,
        )

    def _operand(self) -> interop.DeviceOperand:
        return interop.DeviceOperand(
            self._pointer, self._shape, self._strides, self._dtype, self._device, self._readonly, self, self._stream
        )

    # -- to the host -----------------------------------------------------------------

    def get(self) -> np.ndarray:
        """Copy the data to the host.

        Returns
        -------
        numpy.ndarray
            A new C-contiguous array, complete when ``get`` returns. A non-contiguous view
            copies the bytes that span its elements, then picks its elements on the host.

        Examples
        --------
        >>> import numpy as np, pyctk                               # doctest: +GPU
        >>> pyctk.asarray(np.arange(6.0).reshape(2, 3))[:, ::2].get()
        array([[0., 2.],
               [3., 5.]])
        """
        if self._c_contiguous():
            host = np.empty(self._shape, self._dtype)
            self._download(host, 0, host.nbytes)
            return host
        low, high = span(self._shape, self._strides, self._dtype.itemsize)
        spanned = np.empty(high - low, np.uint8)
        self._download(spanned, low, high - low)
        # An annotated name: mypy reads the stub's ndarray.copy (-> Self) as Any.
        copied: np.ndarray = np.ndarray(
            self._shape, self._dtype, buffer=spanned, offset=-low, strides=self._strides
        ).copy()
        return copied

    def _download(self, host: np.ndarray, offset: int, nbytes: int) -> None:
        """Copy ``nbytes`` from ``offset`` bytes after element 0 into ``host``, and wait."""
        if not nbytes:
            return
        with cudart.on_device(self._device):
            cudart.call(
                "cudaMemcpyAsync", host.ctypes.data, self._pointer + offset, nbytes, cudart.DEVICE_TO_HOST, self._stream
            )
            # Into pageable memory the copy is done on return anyway; this says so for any memory.
            cudart.call("cudaStreamSynchronize", self._stream)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """NumPy's conversion (``numpy.asarray(x)``): a copy on the host, as ``get()``.

        Parameters
        ----------
        dtype : dtype_like, optional
            The host array's dtype, cast on the host.
        copy : bool or None, optional
            None or True; False raises ValueError (NumPy 2's protocol), since the data
            must be copied from the GPU.

        Returns
        -------
        numpy.ndarray
        """
        if copy is False:
            raise ValueError(
                "a DeviceArray's data is on the GPU: a NumPy array of it is always a "
                "copy (use copy=None or True, or .get())"
            )
        host = self.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def __repr__(self) -> str:
        if self.size > _REPR_MAX_SIZE:
            return f"DeviceArray(shape={self._shape}, dtype={self._dtype}, device={self._device})"
        values = np.array2string(self.get(), separator=", ", prefix="DeviceArray(")
        return f"DeviceArray({values}, dtype={self._dtype}, device={self._device})"

    # -- on the device -----------------------------------------------------------------

    def copy(self) -> DeviceArray:
        """A C-contiguous copy in new memory on the same device, made on the device (one
        device-to-device copy, or a kernel for a view of other strides).

        Returns
        -------
        DeviceArray

        Examples
        --------
        >>> import numpy as np, pyctk                   # doctest: +GPU
        >>> x = pyctk.asarray(np.ones((2, 3)))
        >>> x.T.strides, x.T.copy().strides
        ((8, 24), (16, 8))
        """
        return _copy(self, self._device)

    def astype(self, dtype: Any, copy: bool = True) -> DeviceArray:
        """A C-contiguous copy cast to ``dtype`` on the device, as ``numpy.ndarray.astype``
        casts.

        Parameters
        ----------
        dtype : dtype_like
            One of pyctk's dtypes. Every cast is allowed (``casting="unsafe"``): floats
            to integers truncate, and complex to real drops the imaginary part, with
            NumPy's ComplexWarning.
        copy : bool, optional
            False returns the array itself when it has that dtype already.

        Returns
        -------
        DeviceArray

        Raises
        ------
        TypeError
            A dtype pyctk lacks.

        Examples
        --------
        >>> import numpy as np, pyctk                               # doctest: +GPU
        >>> pyctk.asarray(np.array([1.5, -2.5])).astype(np.int32).get()
        array([ 1, -2], dtype=int32)
        """
        dtype = supported_dtype(dtype)
        if dtype == self._dtype and not copy:
            return self
        result = empty(self._shape, dtype, self._device)
        if result.nbytes:
            with cudart.on_device(self._device):
                streams.wait(result._stream, self._stream)
            convert.copy(result._operand(), self._operand(), self._device, result._stream)
        return result


DeviceArray.__module__ = "pyctk"  # where users find it: repr(type(x)) is "<class 'pyctk.DeviceArray'>"


# ---------------------------------------------------------------------------
# Making arrays.


def empty(shape: Any, dtype: Any = np.float64, device: int | None = None, *, stream: Any = _STREAM) -> DeviceArray:
    """A new C-contiguous array on the GPU whose values are undefined, as ``numpy.empty``.

    Parameters
    ----------
    shape : int or sequence of int
        The extent of each axis (0 allowed).
    dtype : dtype_like, optional
        One of pyctk's dtypes; float64 by default.
    device : int, optional
        The CUDA device; 0 by default.
    stream : int or stream object, optional
        The CUDA stream (of that device) the memory is allocated, used and freed on: a
        ``cudaStream_t`` as an int, or a stream object (CuPy, PyTorch, pyctk.driver), which
        the array keeps alive until its memory is freed; the legacy default stream by default.

    Returns
    -------
    DeviceArray

    Raises
    ------
    ValueError
        A negative extent.
    TypeError
        A dtype pyctk lacks.
    pyctk.OutOfMemoryError, pyctk.NoDriverError, pyctk.NoDeviceError
        The memory cannot be had (after collecting garbage once), or the GPU cannot be used.

    See Also
    --------
    zeros : The same, with every element zero.

    Examples
    --------
    >>> import numpy as np, pyctk                             # doctest: +GPU
    >>> x = pyctk.empty((2, 3), np.float32)
    >>> x.shape, x.strides, x.device
    ((2, 3), (12, 4), 0)
    """
    shape, dtype, device = shape_tuple(shape), supported_dtype(dtype), _device_index(device)
    handle = streams.handle(stream)
    allocation = allocate(math.prod(shape) * dtype.itemsize, device, handle, stream)
    return DeviceArray(
        allocation.pointer, shape, contiguous_strides(shape, dtype.itemsize), dtype, device, allocation, stream=handle
    )


def zeros(shape: Any, dtype: Any = np.float64, device: int | None = None) -> DeviceArray:
    """A new C-contiguous array on the GPU of zeros, as ``numpy.zeros``.

    Every byte is zero, which is 0, 0.0 or False in every pyctk dtype.

    Parameters
    ----------
    shape : int or sequence of int
        The extent of each axis (0 allowed).
    dtype : dtype_like, optional
        One of pyctk's dtypes; float64 by default.
    device : int, optional
        The CUDA device; 0 by default.

    Returns
    -------
    DeviceArray

    Raises
    ------
    ValueError, TypeError, pyctk.OutOfMemoryError, pyctk.NoDriverError, pyctk.NoDeviceError
        As ``empty``.

    Examples
    --------
    >>> import numpy as np, pyctk                             # doctest: +GPU
    >>> pyctk.zeros(3, np.int8)
    DeviceArray([0, 0, 0], dtype=int8, device=0)
    >>> pyctk.zeros((2, 0)).size
    0
    """
    array = empty(shape, dtype, device)
    if array.nbytes:
        with cudart.on_device(array.device):
            cudart.call("cudaMemsetAsync", array._pointer, 0, array.nbytes, array._stream)
    return array


def _upload(host: np.ndarray, device: int) -> DeviceArray:
    """A device copy of the C-contiguous ``host``.

    From ordinary (pageable) host memory CUDA has read the data when the call returns,
    so ``host`` may change or go away right after.
    """
    array = empty(host.shape, host.dtype, device)
    if array.nbytes:
        with cudart.on_device(device):
            cudart.call(
                "cudaMemcpyAsync", array._pointer, host.ctypes.data, array.nbytes, cudart.HOST_TO_DEVICE, array._stream
            )
    return array


def _copy(source: DeviceArray, device: int) -> DeviceArray:
    """A C-contiguous copy of ``source`` on ``device``."""
    if not source._c_contiguous() or device == source.device:
        source = source.astype(source.dtype)  # on the source's device: a copy or a gather
        if device == source.device:
            return source
    result = empty(source.shape, source.dtype, device)
    if not result.nbytes:
        return result
    # Between devices: a peer copy (pool memory is not accessible from other devices, so
    # cudaMemcpyAsync refuses it). Each device's legacy stream is handle 0 only while that
    # device is current, so rather than ordering the two with events, the host waits for the
    # source's work and then for the copy, after which either array may be freed at once.
    with cudart.on_device(source.device):
        cudart.call("cudaStreamSynchronize", source._stream)
    with cudart.on_device(device):
        cudart.call(
            "cudaMemcpyPeerAsync",
            result._pointer,
            device,
            source._pointer,
            source.device,
            result.nbytes,
            result._stream,
        )
        cudart.call("cudaStreamSynchronize", result._stream)
    return result


def wrap(operand: interop.DeviceOperand) -> DeviceArray:
    """A zero-copy DeviceArray of another library's GPU data, ordered after its pending work."""
    array = DeviceArray(
        operand.pointer,
        operand.shape,
        operand.strides,
        operand.dtype,
        operand.device,
        operand.owner,
        stream=_STREAM,
        readonly=operand.readonly,
    )
    if operand.stream is not None:
        with cudart.on_device(operand.device):
            streams.wait(array._stream, operand.stream)
    return array


def as_strided(x: DeviceArray, shape: Sequence[int], strides: Sequence[int]) -> DeviceArray:
    """A view of ``x``'s memory with another shape and byte strides (``numpy.lib.stride_tricks.
    as_strided``): zero strides repeat elements. The caller keeps it within ``x``'s memory."""
    return x._view_at(0, shape, strides)


def asarray(x: Any, dtype: Any = None, device: int | None = None) -> DeviceArray:
    """``x`` as a DeviceArray, copying only what must be copied, as ``numpy.asarray``.

    Parameters
    ----------
    x : array_like
        - host data (NumPy arrays, lists, scalars, CPU tensors): copied to the GPU, as
          ``numpy.asarray(x, dtype)`` reads it; ordinary host memory may change as soon
          as ``asarray`` returns;
        - a DeviceArray: returned itself when ``dtype`` and ``device`` match;
        - another library's GPU array (``__cuda_array_interface__``, else DLPack): a
          zero-copy view that keeps ``x`` alive and is ordered after ``x``'s pending work.
    dtype : dtype_like, optional
        The result's dtype; GPU data of another dtype is cast on its device (``astype``).
    device : int, optional
        The result's device: by default 0 for host data and ``x``'s own for GPU data.

    Returns
    -------
    DeviceArray

    Raises
    ------
    TypeError
        A dtype pyctk lacks (object, strings, datetimes ...).
    ValueError, TypeError
        Another library's description of its array that pyctk refuses, before any CUDA call
        (see "What pyctk checks of a foreign array" in the guide).
    pyctk.OutOfMemoryError, pyctk.NoDriverError, pyctk.NoDeviceError
        As ``empty``.

    See Also
    --------
    from_dlpack : A view of another library's GPU array through DLPack alone.

    Examples
    --------
    >>> import numpy as np, pyctk                             # doctest: +GPU
    >>> x = pyctk.asarray(np.ones((2, 2)), dtype=np.float32)  # a copy on GPU 0
    >>> x.dtype, x.device
    (dtype('float32'), 0)
    >>> pyctk.asarray(x) is x                                 # already a DeviceArray
    True
    >>> pyctk.asarray(x, dtype=np.float64).get()              # cast on the GPU
    array([[1., 1.],
           [1., 1.]])

    A CuPy, PyTorch, JAX or Numba array on the GPU is not copied: with
    ``t = torch.ones(3, device="cuda")``, ``pyctk.asarray(t)`` is a view of ``t``'s memory.
    """
    if not isinstance(x, DeviceArray):
        operand = interop.device_operand(x, _STREAM)
        if operand is None:
            host = np.asarray(x, dtype=dtype, order="C")
            return _upload(host, _device_index(device))
        x = wrap(operand)
    dtype = x.dtype if dtype is None else supported_dtype(dtype)
    device = x.device if device is None else _device_index(device)
    if dtype != x.dtype:
        x = x.astype(dtype)
    return x if device == x.device else _copy(x, device)


def from_dlpack(x: Any) -> DeviceArray:
    """A zero-copy DeviceArray of ``x``'s GPU data, through DLPack, as ``numpy.from_dlpack``.

    ``x`` is asked to order its pending work before pyctk's stream; the result keeps the
    imported tensor alive and releases it (its deleter, once) when the last view is gone.
    ``asarray`` does the same for GPU arrays, and copies host data instead of refusing it.

    Parameters
    ----------
    x : object with ``__dlpack__`` and ``__dlpack_device__``
        A GPU array of another library (PyTorch, CuPy, JAX ...) or of pyctk.

    Returns
    -------
    DeviceArray
        A view of ``x``'s memory, on ``x``'s device.

    Raises
    ------
    TypeError
        ``x`` is host data (NumPy arrays, CPU tensors): copy it with ``asarray``; or the
        tensor's dtype is none of pyctk's.
    ValueError
        A tensor whose fields pyctk refuses (its ndim, shape, strides, data, the bytes it
        spans, its device id: see "What pyctk checks of a foreign array" in the guide).
    BufferError
        Data on a device that is neither CUDA nor the host, or of a DLPack major version
        other than 1.
    pyctk.UnsupportedError
        On PyPy, which cannot read capsules through ctypes.

    Examples
    --------
    >>> import numpy as np, pyctk                                # doctest: +GPU
    >>> x = pyctk.zeros(3)
    >>> y = pyctk.from_dlpack(x)        # torch.ones(3, device="cuda") works the same
    >>> y.__cuda_array_interface__["data"] == x.__cuda_array_interface__["data"]
    True
    >>> pyctk.from_dlpack(np.zeros(3))
    Traceback (most recent call last):
    ...
    TypeError: ndarray is host data (its DLPack device is the CPU), ... use pyctk.asarray(x) to copy it ...
    """
    operand = interop.dlpack_operand(x, _STREAM)
    if operand is None:
        raise TypeError(
            f"{type(x).__name__} is host data (its DLPack device is the CPU), and "
            f"from_dlpack only wraps GPU data without a copy: use pyctk.asarray(x) "
            f"to copy it to the GPU"
        )
    return wrap(operand)
