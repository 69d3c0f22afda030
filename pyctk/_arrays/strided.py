"""The core every pyctk GPU array type shares: layout (basic indexing, transposes,
broadcast views) and export to other libraries (the CUDA Array Interface v3, DLPack).

``pyctk.DeviceArray`` and ``pyctk.gpuarray.GPUArray`` are faces over ``StridedArray``: each
keeps its own constructor, attributes and names (NumPy's and PyCUDA's), and says how to make a
view of its own kind (``_view_at``); the rules of views and exports are written here once.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .._cuda import cudart, streams
from . import dlpack
from .dlpack import kDLCPU, kDLCUDA
from .dtypes import from_ml_dtypes
from .layout import broadcast_shapes, broadcast_strides, index_view, is_c_contiguous, permutation

_Array = TypeVar("_Array", bound="StridedArray")


class StridedArray:
    """An n-dimensional array in GPU memory described by a pointer, shape, byte strides and
    a dtype: the layout and export rules of pyctk's array types.

    A subclass provides ``shape``, ``strides``, ``dtype``, ``device``, ``_address()`` (the
    device address of element 0), ``_view_at(offset, shape, strides)`` (a view of its own
    kind ``offset`` bytes from element 0), ``copy()`` and ``get()``, and sets the class
    attributes below where its face differs.
    """

    __slots__ = ()

    # what __getitem__'s IndexError says of an index basic indexing does not take
    _index_refusal = "only integers, slices, ... and None are basic indices"
    # whether __cuda_array_interface__ names the strides of a C-contiguous array (else None)
    _interface_strides_always = False
    # the cudaStream_t pyctk's work on the array is ordered on (0: the legacy default stream)
    _stream = 0
    # what __cuda_array_interface__'s "stream" says of work on the legacy default stream: 1
    # (its number there), or None (no stream named: a consumer on any blocking stream is
    # ordered after it anyway)
    _interface_legacy_stream: int | None = streams.LEGACY
    _readonly = False

    if TYPE_CHECKING:  # (what a subclass provides: properties, or attributes as GPUArray's)

        @property
        def shape(self) -> tuple[int, ...]: ...

        @property
        def strides(self) -> tuple[int, ...]: ...

        @property
        def dtype(self) -> np.dtype: ...

        @property
        def device(self) -> int: ...

    def _address(self) -> int:
        raise NotImplementedError

    def _view_at(self: _Array, offset: int, shape: Sequence[int], strides: Sequence[int]) -> _Array:
        raise NotImplementedError

    def copy(self: _Array) -> _Array:
        raise NotImplementedError

    def get(self) -> np.ndarray:
        raise NotImplementedError

    # -- layout ----------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        """The number of axes, ``len(shape)``."""
        return len(self.shape)

    def __len__(self) -> int:
        """The extent of the first axis; TypeError for a 0-d array, as NumPy's."""
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self: _Array, key: Any) -> _Array:
        """A view: NumPy's basic indexing (integers, slices with any step, ``...``, None).

        Parameters
        ----------
        key : int, slice, Ellipsis, None, or a tuple of them
            As NumPy takes them; an integer drops its axis, None adds one of length 1.

        Returns
        -------
        The array's own type
            A view of the same memory (0-d for as many integers as axes): no data moves.

        Raises
        ------
        IndexError
            An integer out of bounds, too many indices, more than one ``...``, or advanced
            indexing (arrays, lists, booleans).

        Examples
        --------
        >>> import numpy as np, pyctk                                   # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> x = pyctk.asarray(np.arange(12).reshape(3, 4))
        >>> x[1]
        DeviceArray([4, 5, 6, 7], dtype=int64, device=0)
        >>> x[::2, None, -1].shape, x[:, ::-1].strides
        ((2, 1), (32, -8))
        >>> a = gpuarray.to_gpu(np.arange(12, dtype=np.int32).reshape(3, 4))
        >>> a[::2, ::-1].get()
        array([[ 3,  2,  1,  0],
               [11, 10,  9,  8]], dtype=int32)
        >>> a[1, 2].shape, a[None, ..., 0].shape
        ((), (1, 3))
        """
        shape, strides, offset = index_view(self.shape, self.strides, key, self._index_refusal)
        return self._view_at(offset, shape, strides)

    @property
    def T(self: _Array) -> _Array:
        """The transposed view (axes reversed), sharing memory, as NumPy's and PyCUDA's ``T``."""
        return self._transposed(None)

    def _transposed(self: _Array, axes: Sequence[Any] | None) -> _Array:
        """The view with the axes in the order ``axes`` names (None: reversed)."""
        order = range(self.ndim - 1, -1, -1) if axes is None else permutation(axes, self.ndim)
        return self._view_at(0, [self.shape[a] for a in order], [self.strides[a] for a in order])

    def _broadcast_to(self: _Array, shape: Sequence[int]) -> _Array:
        """A view of this array broadcast to ``shape`` (zero strides repeat it), NumPy's rules."""
        shape = tuple(shape)
        if broadcast_shapes(self.shape, shape) != shape:
            raise ValueError(f"could not broadcast an array of shape {self.shape} into shape {shape}")
        return self._view_at(0, shape, broadcast_strides(self.shape, self.strides, shape))

    def _c_contiguous(self) -> bool:
        return is_c_contiguous(self.shape, self.strides, self.dtype.itemsize)

    # -- exchange with other libraries ---------------------------------------------------

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """The CUDA Array Interface, version 3 (CuPy, Numba, PyTorch and JAX read it).

        A dict of the shape, type string, data pointer and read-only flag, strides, and the
        stream pyctk's pending work is on (1, the legacy default stream, unless the array
        was made on another; a GPUArray's says None there, as PyCUDA's). bfloat16 and the FP8
        types have no type string in the interface, so such arrays have no attribute
        (AttributeError) and consumers fall back to DLPack.

        Examples
        --------
        >>> import numpy as np, pyctk                                   # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> x = pyctk.zeros((2, 3), np.float32)
        >>> interface = x.__cuda_array_interface__
        >>> interface["shape"], interface["strides"], interface["typestr"], interface["stream"]
        ((2, 3), None, '<f4', 1)
        >>> x.T.__cuda_array_interface__["strides"]
        (4, 12)
        >>> gpuarray.zeros((2, 3), np.float32).__cuda_array_interface__["strides"]   # as PyCUDA's
        (12, 4)
        """
        if from_ml_dtypes(self.dtype):
            raise AttributeError(f"the CUDA Array Interface cannot describe {self.dtype.name}; use DLPack (__dlpack__)")
        described = self._interface_strides_always or not self._c_contiguous()
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "descr": [("", self.dtype.str)],
            "data": (self._address(), self._readonly),
            "strides": self.strides if described else None,
            "version": 3,
            # pyctk's pending work is on this stream
            "stream": self._interface_legacy_stream if self._stream == 0 else self._stream,
        }

    def __dlpack_device__(self) -> tuple[int, int]:
        """DLPack's (device type, device id) of the data: ``(2, device)``, 2 being kDLCUDA."""
        return kDLCUDA, self.device

    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """Export as a DLPack capsule (the array API standard's protocol, 2023.12):
        ``torch.from_dlpack(x)``, ``cupy.from_dlpack(x)``, ``jax.dlpack.from_dlpack(x)`` and
        :func:`pyctk.from_dlpack` call it.

        Parameters
        ----------
        stream : int or None
            The consumer's stream, made to wait (with an event) for this array's pending
            work: None or 1 the legacy default stream, 2 the per-thread default stream,
            another int a ``cudaStream_t``, -1 no synchronisation. 0 is disallowed.
        max_version : (int, int) or None
            The newest DLPack the consumer reads: (1, 0) or later gets a versioned capsule
            (if NumPy >= 2.1 is installed), else a legacy one.
        dl_device : (int, int) or None
            This array's ``__dlpack_device__()``, or ``(1, 0)`` (the CPU) for a host copy.
        copy : bool or None
            True exports a new copy; False never copies; None copies only for the CPU.

        Returns
        -------
        PyCapsule
            Keeps this array's memory alive until the consumer calls its deleter.

        Raises
        ------
        BufferError
            ``dl_device`` is another device, or the CPU with ``copy=False``; a read-only
            array asked for a legacy capsule.
        ValueError, TypeError
            An invalid ``stream``.

        Examples
        --------
        >>> import numpy as np, pyctk                                   # doctest: +GPU
        >>> from pyctk import gpuarray
        >>> a = gpuarray.to_gpu(np.arange(3, dtype=np.float32))
        >>> a.__dlpack_device__()[0]                                    # kDLCUDA
        2
        >>> pyctk.from_dlpack(a).shape                                  # a DeviceArray, no copy
        (3,)
        """
        versioned = dlpack.wants_versioned(max_version)
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            if tuple(dl_device) != (kDLCPU, 0):
                raise BufferError(
                    f"a {type(self).__name__} on device {self.device} cannot be exported to DLPack "
                    f"device {tuple(dl_device)}"
                )
            if copy is False:
                raise BufferError(f"exporting a {type(self).__name__} to the CPU needs a copy, but copy=False")
            host = self.get()
            return dlpack.to_capsule(
                host.ctypes.data,
                host.shape,
                host.strides,
                host.dtype,
                (kDLCPU, 0),
                host,
                versioned=versioned,
                copied=True,
            )
        consumer = consumer_stream(stream)
        source = self.copy() if copy else self
        if consumer is not None:
            with cudart.on_device(self.device):
                streams.wait(consumer, source._stream)
        return dlpack.to_capsule(
            source._address(),
            source.shape,
            source.strides,
            source.dtype,
            (kDLCUDA, source.device),
            source,
            versioned=versioned,
            readonly=source._readonly,
            copied=bool(copy),
        )


def consumer_stream(stream: Any) -> int | None:
    """The cudaStream_t that a DLPack consumer's ``stream`` names; None for -1 (no synchronisation)."""
    if stream is None:  # the protocol: the consumer is on the legacy default stream
        return streams.LEGACY
    if isinstance(stream, (bool, np.bool_)) or not isinstance(stream, numbers.Integral):
        raise TypeError(f"stream must be None or an int, not {type(stream).__name__}")
    if stream == 0 or stream < -1:
        raise ValueError(
            f"stream {stream} is not a DLPack stream for CUDA (0 is disallowed: use None "
            f"or 1 for the legacy default stream, -1 for no synchronisation)"
        )
    return None if stream == -1 else int(stream)
