"""CUDA arrays: PyCUDA's ``Array``, ``ArrayDescriptor``, ``ArrayDescriptor3D``, the helpers that
fill one from NumPy (``matrix_to_array``, ``np_to_array``, ``make_multichannel_2d_array``) or
from a GPU array (``gpuarray_to_array``) and the 1-D copies into and out of one
(``memcpy_htoa`` ...).

A CUDA array is device memory in the layout textures read fastest; kernels read it through
a ``TextureObject`` and read and write it through a ``SurfaceObject`` (``pyctk.driver``), and
``Memcpy2D`` / ``Memcpy3D`` copy to and from it (``set_dst_array``, ``set_src_array``).

>>> import numpy as np                           # doctest: +GPU
>>> a = np.arange(12, dtype=np.float32).reshape(3, 4)
>>> array = matrix_to_array(a, "C")
>>> d = array.get_descriptor()
>>> d.width, d.height, d.format
(4, 3, <array_format.FLOAT: 32>)

With ``order="C"`` the array's (x, y[, z]) is ``a[z, y, x]``: x runs along ``a``'s last axis;
with ``order="F"`` it is ``a[x, y, z]``.
"""

from __future__ import annotations

import ctypes
import enum
import math
import os
from ctypes import byref, c_int, c_size_t, c_uint, c_void_p
from typing import Any

import numpy as np

from ..._arrays import interop
from ..._arrays.layout import is_c_contiguous
from ..._cuda import constants as cu
from ..._cuda import driver_api
from ..._cuda.driver_errors import LogicError
from ..contexts.streams import _Handle
from .copies_nd import Memcpy2D, Memcpy3D, pycuda_names
from .device import _contiguous_device, host_buffer
from .sizes import byte_count


class array_format(enum.IntEnum):  # PyCUDA's name
    """The type of each channel of a CUDA array's elements: ``CUarray_format`` (cuda.h).

    :func:`dtype_to_array_format` gives the one of a NumPy type.
    """

    UNSIGNED_INT8 = cu.CU_AD_FORMAT_UNSIGNED_INT8  #: numpy.uint8
    UNSIGNED_INT16 = cu.CU_AD_FORMAT_UNSIGNED_INT16  #: numpy.uint16
    UNSIGNED_INT32 = cu.CU_AD_FORMAT_UNSIGNED_INT32  #: numpy.uint32
    SIGNED_INT8 = cu.CU_AD_FORMAT_SIGNED_INT8  #: numpy.int8
    SIGNED_INT16 = cu.CU_AD_FORMAT_SIGNED_INT16  #: numpy.int16
    SIGNED_INT32 = cu.CU_AD_FORMAT_SIGNED_INT32  #: numpy.int32
    HALF = cu.CU_AD_FORMAT_HALF  #: numpy.float16
    FLOAT = cu.CU_AD_FORMAT_FLOAT  #: numpy.float32


class array3d_flags(enum.IntFlag):  # PyCUDA's name
    """Flags of a CUDA array, ``ArrayDescriptor3D.flags``: ``CUDA_ARRAY3D_*`` (cuda.h)."""

    LAYERED = cu.CUDA_ARRAY3D_LAYERED  #: ``depth`` counts 2-D layers (the name PyCUDA documents).
    ARRAY3D_LAYERED = cu.CUDA_ARRAY3D_LAYERED  #: ``LAYERED`` (the name PyCUDA has).
    ARRAY3D_2DARRAY = cu.CUDA_ARRAY3D_2DARRAY  #: ``LAYERED`` (the old name, deprecated).
    SURFACE_LDST = cu.CUDA_ARRAY3D_SURFACE_LDST  #: A :class:`SurfaceObject` may read and write it.
    CUBEMAP = cu.CUDA_ARRAY3D_CUBEMAP  #: Six layers, the faces of a cube (:class:`array_cubemap_face`).
    TEXTURE_GATHER = cu.CUDA_ARRAY3D_TEXTURE_GATHER  #: Textures may gather from it (``tex2Dgather``).


class array_cubemap_face(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """The layer of each face in a ``CUBEMAP`` array: ``CUarray_cubemap_face`` (cuda.h)."""

    POSITIVE_X = cu.CU_CUBEMAP_FACE_POSITIVE_X  #: The face at +x.
    NEGATIVE_X = cu.CU_CUBEMAP_FACE_NEGATIVE_X  #: The face at -x.
    POSITIVE_Y = cu.CU_CUBEMAP_FACE_POSITIVE_Y  #: The face at +y.
    NEGATIVE_Y = cu.CU_CUBEMAP_FACE_NEGATIVE_Y  #: The face at -y.
    POSITIVE_Z = cu.CU_CUBEMAP_FACE_POSITIVE_Z  #: The face at +z.
    NEGATIVE_Z = cu.CU_CUBEMAP_FACE_NEGATIVE_Z  #: The face at -z.


class _Descriptor:
    """A descriptor made empty, or with fields by PyCUDA's names: ``ArrayDescriptor(width=4, ...)``."""

    pycuda_names: tuple[str, ...]  # set by copies_nd.pycuda_names, which each kind is decorated with

    def __init__(self, **fields: Any) -> None:
        super().__init__()
        for name, value in fields.items():
            if name not in self.pycuda_names:
                raise TypeError(f"{type(self).__name__} has no field {name!r}; it has {', '.join(self.pycuda_names)}")
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.pycuda_names) + ")"


# PyCUDA's attribute -> (the cuda.h field, the enum its values are).
_DESCRIPTOR_NAMES = {
    "width": ("Width", None),
    "height": ("Height", None),
    "depth": ("Depth", None),
    "format": ("Format", array_format),
    "num_channels": ("NumChannels", None),
    "flags": ("Flags", array3d_flags),
}
_DESCRIPTOR_DOCS = {
    "width": "Elements of each row",
    "height": "Rows; 0 for a 1-D array",
    "depth": "Slices or layers; 0 for a 1-D or 2-D array",
    "format": "The type of each channel, an :class:`array_format`",
    "num_channels": "Channels of each element: 1, 2 or 4",
    "flags": ":class:`array3d_flags`",
}


@pycuda_names(_DESCRIPTOR_NAMES, _DESCRIPTOR_DOCS)
class ArrayDescriptor(_Descriptor, ctypes.Structure):
    """The shape and element of a 1-D or 2-D CUDA array (``CUDA_ARRAY_DESCRIPTOR``).

    Made empty (every field 0), or with fields by name. No GPU is needed.

    Parameters
    ----------
    **fields
        ``width``, ``height`` (0 for a 1-D array), ``format`` (an :class:`array_format`)
        and ``num_channels`` (1, 2 or 4), also set as attributes.

    Raises
    ------
    TypeError
        A field it does not have.

    See Also
    --------
    Array : Makes the array.

    Examples
    --------
    >>> import pyctk.driver as cuda
    >>> cuda.ArrayDescriptor(width=64, height=32, format=cuda.array_format.FLOAT, num_channels=1)
    ArrayDescriptor(width=64, height=32, format=<array_format.FLOAT: 32>, num_channels=1)
    """

    _fields_ = [("Width", c_size_t), ("Height", c_size_t), ("Format", c_int), ("NumChannels", c_uint)]


@pycuda_names(_DESCRIPTOR_NAMES, _DESCRIPTOR_DOCS)
class ArrayDescriptor3D(_Descriptor, ctypes.Structure):
    """The shape and element of a CUDA array of any kind (``CUDA_ARRAY3D_DESCRIPTOR``): 3-D,
    layered, cube map, or written by surfaces.

    Parameters
    ----------
    **fields
        ``width``, ``height``, ``depth``, ``format`` (an :class:`array_format`),
        ``num_channels`` and ``flags`` (:class:`array3d_flags`), also set as attributes.

    Raises
    ------
    TypeError
        A field it does not have.

    Examples
    --------
    >>> import pyctk.driver as cuda
    >>> d = cuda.ArrayDescriptor3D(width=16, height=16, depth=4, num_channels=1,
    ...                            format=cuda.array_format.SIGNED_INT32,
    ...                            flags=cuda.array3d_flags.SURFACE_LDST)
    >>> d.depth, d.flags
    (4, <array3d_flags.SURFACE_LDST: 2>)
    """

    _fields_ = [
        ("Width", c_size_t),
        ("Height", c_size_t),
        ("Depth", c_size_t),
        ("Format", c_int),
        ("NumChannels", c_uint),
        ("Flags", c_uint),
    ]


class Owned(_Handle):
    """A driver object made in the current context: destroyed by ``free()`` or when garbage."""

    _handle_type: type = c_void_p

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:  # an instance of cls
        self = super().__new__(cls)
        self.handle = 0  # NULL until made: __del__ then destroys nothing
        return self

    def _create(self, create: str, *arguments: Any) -> None:
        driver_api.current_context()
        handle = self._handle_type()
        driver_api.call(create, byref(handle), *arguments)
        self.handle, self._pid = handle.value or 0, os.getpid()

    def free(self) -> None:
        """Destroy it now; a second ``free`` does nothing."""
        handle, self.handle = self.handle, 0
        if handle:
            driver_api.call(self._destroy, handle)

    def live_handle(self) -> int:
        """``handle``, or ValueError once freed."""
        if not self.handle:
            raise ValueError(f"this {type(self).__name__} was freed")
        return self.handle


class Array(Owned):
    """Array(descriptor)

    A CUDA array: device memory in the layout textures read fastest (PyCUDA's ``Array``).

    Kernels read it through a :class:`TextureObject`, and read and write it through a
    :class:`SurfaceObject`; :class:`Memcpy2D` and :class:`Memcpy3D` copy to and from it, and
    :func:`matrix_to_array` and :func:`np_to_array` make one from NumPy data. Destroyed by
    ``free()``, or when garbage (and no texture or surface reads it). ``handle`` is its
    ``CUarray``.

    Parameters
    ----------
    descriptor : ArrayDescriptor or ArrayDescriptor3D
        Its shape and element (``cuArrayCreate`` or ``cuArray3DCreate``).

    Raises
    ------
    TypeError
        ``descriptor`` is neither.

    Examples
    --------
    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> array = cuda.Array(cuda.ArrayDescriptor(width=64, height=32, num_channels=1,
    ...                                         format=cuda.array_format.FLOAT))
    >>> array.get_descriptor()
    ArrayDescriptor(width=64, height=32, format=<array_format.FLOAT: 32>, num_channels=1)
    >>> array.free()
    """

    _destroy = "cuArrayDestroy"

    def __init__(self, descriptor: ArrayDescriptor | ArrayDescriptor3D) -> None:
        if not isinstance(descriptor, (ArrayDescriptor, ArrayDescriptor3D)):
            raise TypeError(f"Array takes an ArrayDescriptor or ArrayDescriptor3D, not {type(descriptor).__name__}")
        three_d = isinstance(descriptor, ArrayDescriptor3D)
        self._create("cuArray3DCreate" if three_d else "cuArrayCreate", byref(descriptor))

    def get_descriptor(self) -> ArrayDescriptor:
        """The shape and element of a 1-D or 2-D array, as the driver has them.

        Returns
        -------
        ArrayDescriptor
        """
        descriptor = ArrayDescriptor()
        driver_api.call("cuArrayGetDescriptor", byref(descriptor), self.live_handle())
        return descriptor

    def get_descriptor_3d(self) -> ArrayDescriptor3D:
        """The shape, element and flags of any array, as the driver has them.

        Returns
        -------
        ArrayDescriptor3D
            ``depth`` is 0 for a 1-D or 2-D array.
        """
        descriptor = ArrayDescriptor3D()
        driver_api.call("cuArray3DGetDescriptor", byref(descriptor), self.live_handle())
        return descriptor


# ---------------------------------------------------------------------------
# From NumPy.

_FORMATS = {
    np.dtype(np.uint8): array_format.UNSIGNED_INT8,
    np.dtype(np.uint16): array_format.UNSIGNED_INT16,
    np.dtype(np.uint32): array_format.UNSIGNED_INT32,
    np.dtype(np.int8): array_format.SIGNED_INT8,
    np.dtype(np.int16): array_format.SIGNED_INT16,
    np.dtype(np.int32): array_format.SIGNED_INT32,
    np.dtype(np.float16): array_format.HALF,
    np.dtype(np.float32): array_format.FLOAT,
}
# Types no array format has, held as 2 or 4 int32 channels: a kernel reads them as int2 / int4
# and rebuilds the value (__hiloint2double, __int_as_float): PyCUDA's "double hack".
_AS_INT32 = {np.dtype(np.float64): 2, np.dtype(np.complex64): 2, np.dtype(np.complex128): 4}


def dtype_to_array_format(dtype: Any) -> array_format:
    """The :class:`array_format` of a NumPy scalar type.

    Parameters
    ----------
    dtype : data-type
        (u)int8, (u)int16, (u)int32, float16 or float32.

    Returns
    -------
    array_format

    Raises
    ------
    TypeError
        A type no CUDA array holds (float64 and complex: see :func:`np_to_array`).

    Examples
    --------
    >>> import numpy as np
    >>> import pyctk.driver as cuda
    >>> cuda.dtype_to_array_format(np.float32)
    <array_format.FLOAT: 32>
    >>> cuda.dtype_to_array_format(np.float64)
    Traceback (most recent call last):
        ...
    TypeError: cannot convert dtype 'float64' to an array format: CUDA arrays hold (u)int8, (u)int16, (u)int32, float16 and float32
    """  # noqa: E501 - a doctest's expected exception, compared as written
    try:
        return _FORMATS[np.dtype(dtype)]
    except KeyError:
        raise TypeError(
            f"cannot convert dtype '{np.dtype(dtype)}' to an array format: CUDA arrays "
            f"hold (u)int8, (u)int16, (u)int32, float16 and float32"
        ) from None


def _format(dtype: np.dtype, as_int32: bool) -> tuple[array_format, int]:
    """(format, channels) of a dtype, float64 and complex as int32 channels when ``as_int32``."""
    if as_int32 and dtype in _AS_INT32:
        return array_format.SIGNED_INT32, _AS_INT32[dtype]
    return dtype_to_array_format(dtype), 1


def _c_order(order: str, what: str) -> bool:
    """Whether ``order`` is "C" (x along the last axis) rather than "F" (along the first)."""
    if not isinstance(order, str) or order.upper() not in ("C", "F"):
        raise LogicError(f"{what}: order must be either F or C, not {order!r}")
    return order.upper() == "C"


def _check_dims(shape: tuple[int, ...], dims: tuple[int, ...], what: str) -> None:
    if len(shape) not in dims:
        raise ValueError(
            f"{what} takes a {' or '.join(f'{d}-D' for d in dims)} array, not {len(shape)}-D (shape {shape})"
        )


def _rows(array: Any, order: str, dims: tuple[int, ...], what: str) -> np.ndarray:
    """``array`` as C-contiguous rows, x along the last axis: itself for ``order="C"``, its
    transpose for ``"F"`` (so that (x, y) is ``array[x, y]``)."""
    c_order = _c_order(order, what)
    array = np.asarray(array)
    _check_dims(array.shape, dims, what)
    return np.ascontiguousarray(array if c_order else array.T)


def _upload(
    rows: Any, nbytes: int, extent: tuple[int, int, int], element: tuple[array_format, int], flags: int, three_d: bool
) -> Array:
    """A new array of ``extent`` (depth, height, width) holding C-ordered ``rows`` of ``nbytes``:
    a NumPy array, or GPU memory (what ``Memcpy2D.set_src_device`` takes)."""
    depth, height, width = extent
    format, channels = element
    if three_d:
        array = Array(
            ArrayDescriptor3D(
                width=width, height=height, depth=depth, format=format, num_channels=channels, flags=flags
            )
        )
        copy: Memcpy2D | Memcpy3D = Memcpy3D()
        copy.src_height, copy.depth = height, depth
    else:
        array = Array(ArrayDescriptor(width=width, height=height, format=format, num_channels=channels))
        copy = Memcpy2D()
    (copy.set_src_host if isinstance(rows, np.ndarray) else copy.set_src_device)(rows)
    copy.set_dst_array(array)
    copy.width_in_bytes = copy.src_pitch = nbytes // (depth * height)
    copy.height = height
    copy()
    return array


def matrix_to_array(matrix: Any, order: str, allow_double_hack: bool = False) -> Array:
    """A new 2-D :class:`Array` holding a matrix (PyCUDA's ``matrix_to_array``).

    Parameters
    ----------
    matrix : array_like
        2-D, of a type :func:`dtype_to_array_format` knows.
    order : {"C", "F"}
        ``"C"``: x runs along the last axis, ``tex2D(x, y)`` reads ``matrix[y, x]``;
        ``"F"``: along the first, ``tex2D(x, y)`` reads ``matrix[x, y]``.
    allow_double_hack : bool, optional
        Hold float64 (and complex) values as int32 pairs, as :func:`np_to_array` does;
        without it they are a TypeError.

    Returns
    -------
    Array

    Raises
    ------
    ValueError
        ``matrix`` is not 2-D.
    pyctk.driver.LogicError
        ``order`` is neither "C" nor "F".

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a = np.arange(12, dtype=np.float32).reshape(3, 4)
    >>> desc = cuda.matrix_to_array(a, "C").get_descriptor()
    >>> desc.width, desc.height
    (4, 3)
    >>> desc = cuda.matrix_to_array(a, "F").get_descriptor()
    >>> desc.width, desc.height
    (3, 4)
    """
    rows = _rows(matrix, order, (2,), "matrix_to_array")
    return _upload(rows, rows.nbytes, (1, *rows.shape), _format(rows.dtype, allow_double_hack), 0, False)


def np_to_array(nparray: Any, order: str, allowSurfaceBind: bool = False) -> Array:  # allowSurfaceBind: PyCUDA's name
    """A new 2-D or 3-D :class:`Array` holding a NumPy array (PyCUDA's ``np_to_array``).

    float64 is held as 2 int32 channels, complex64 as 2 and complex128 as 4 (PyCUDA's
    "double hack"): a kernel reads an ``int2`` and rebuilds the double with
    ``__hiloint2double(v.y, v.x)``.

    Parameters
    ----------
    nparray : array_like
        2-D or 3-D.
    order : {"C", "F"}
        ``"C"``: x runs along the last axis (``a[z, y, x]``); ``"F"``: along the first
        (``a[x, y, z]``).
    allowSurfaceBind : bool, optional
        Make an array surfaces may write (``array3d_flags.SURFACE_LDST``); a 2-D one is then
        a layered array of one layer, as in PyCUDA (``surf2DLayeredwrite``).

    Returns
    -------
    Array

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> desc = cuda.np_to_array(np.zeros((2, 3, 4)), "C").get_descriptor_3d()
    >>> desc.width, desc.height, desc.depth, desc.format, desc.num_channels
    (4, 3, 2, <array_format.SIGNED_INT32: 10>, 2)
    """
    rows = _rows(nparray, order, (2, 3), "np_to_array")
    return _holding(rows, rows.shape, rows.dtype, allowSurfaceBind)


def gpuarray_to_array(gpuarray: Any, order: str, allowSurfaceBind: bool = False) -> Array:  # PyCUDA's names
    """A new 2-D or 3-D :class:`Array` holding a GPU array, copied on the GPU.

    The array is held as :func:`np_to_array` holds a NumPy array.

    Parameters
    ----------
    gpuarray
        A :class:`pyctk.gpuarray.GPUArray`, or any GPU array (:class:`pyctk.DeviceArray`,
        CuPy's, PyTorch's); C-contiguous for ``order="C"``, Fortran-contiguous for ``"F"``.
    order : {"C", "F"}
    allowSurfaceBind : bool, optional
        As for :func:`np_to_array`.

    Returns
    -------
    Array

    Raises
    ------
    TypeError
        ``gpuarray`` is not a GPU array.
    ValueError
        It is not contiguous in ``order``, or not 2-D or 3-D.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> from pyctk import gpuarray
    >>> a_gpu = gpuarray.to_gpu(np.ones((4, 8), np.float32))
    >>> desc = cuda.gpuarray_to_array(a_gpu, "C").get_descriptor()
    >>> desc.width, desc.height, desc.format
    (8, 4, <array_format.FLOAT: 32>)
    """
    operand = interop.device_operand(gpuarray)
    if operand is None:
        raise TypeError(
            f"gpuarray_to_array takes a GPU array, not {type(gpuarray).__name__} (np_to_array takes host data)"
        )
    shape, strides = operand.shape, operand.strides
    c_order = _c_order(order, "gpuarray_to_array")
    if not c_order:
        shape, strides = shape[::-1], strides[::-1]
    _check_dims(shape, (2, 3), "gpuarray_to_array")
    if not is_c_contiguous(shape, strides, operand.dtype.itemsize):
        raise ValueError(
            f"gpuarray_to_array: order={order!r} needs a "
            f"{'C' if c_order else 'Fortran'}-contiguous array, and "
            f"this one's strides are {operand.strides}: copy it first (.copy())"
        )
    return _holding(gpuarray, shape, operand.dtype, allowSurfaceBind)


def _holding(rows: Any, shape: tuple[int, ...], dtype: np.dtype, surfaces: bool) -> Array:
    """np_to_array's array of C-ordered ``rows`` of ``shape`` (host or GPU memory): float64
    and complex as int32 channels; ``surfaces``: a surface may write it."""
    flags = 0
    if surfaces:
        flags = array3d_flags.SURFACE_LDST | (array3d_flags.LAYERED if len(shape) == 2 else 0)
    depth, height, width = (1,) * (3 - len(shape)) + tuple(shape)
    return _upload(
        rows,
        math.prod(shape) * dtype.itemsize,
        (depth, height, width),
        _format(dtype, True),
        flags,
        surfaces or len(shape) == 3,
    )


def make_multichannel_2d_array(ndarray: Any, order: str) -> Array:
    """A new 2-D :class:`Array` whose elements have several channels (PyCUDA's).

    Parameters
    ----------
    ndarray : array_like
        3-D: (height, width, channels) for ``order="C"``, (channels, width, height) for
        ``"F"``; 1, 2 or 4 channels.
    order : {"C", "F"}

    Returns
    -------
    Array

    Examples
    --------
    An RGBA image, read in a kernel as ``tex2D<uchar4>(tex, x, y)``:

    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> rgba = np.zeros((32, 64, 4), np.uint8)
    >>> desc = cuda.make_multichannel_2d_array(rgba, "C").get_descriptor()
    >>> desc.width, desc.height, desc.num_channels
    (64, 32, 4)
    """
    rows = _rows(ndarray, order, (3,), "make_multichannel_2d_array")
    height, width, channels = rows.shape
    return _upload(rows, rows.nbytes, (1, height, width), (dtype_to_array_format(rows.dtype), channels), 0, False)


# ---------------------------------------------------------------------------
# 1-D copies: ``index`` is a byte offset into the array.


def memcpy_htoa(array: Array, index: int, src: Any) -> None:
    """Copy host memory into a 1-D :class:`Array`, from byte ``index`` on.

    Parameters
    ----------
    array : Array
    index : int
        The offset in bytes into the array.
    src : buffer
        The host memory, contiguous; all of it is copied.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> array = cuda.Array(cuda.ArrayDescriptor(width=4, height=0, num_channels=1,
    ...                                         format=cuda.array_format.SIGNED_INT32))
    >>> cuda.memcpy_htoa(array, 0, np.arange(4, dtype=np.int32))
    >>> b = np.zeros(2, np.int32)
    >>> cuda.memcpy_atoh(b, array, 8)                # the last two elements
    >>> b
    array([2, 3], dtype=int32)
    """
    index = byte_count(index, "memcpy_htoa: index")
    host = host_buffer(src, writable=False)
    driver_api.current_context()
    driver_api.call("cuMemcpyHtoA", array.live_handle(), index, host.ctypes.data, host.nbytes)


def memcpy_atoh(dest: Any, array: Array, index: int) -> None:
    """Copy a 1-D :class:`Array`, from byte ``index`` on, into host memory.

    Parameters
    ----------
    dest : buffer
        The host memory, writable and contiguous; as many bytes as it has are copied.
    array : Array
    index : int
        The offset in bytes into the array.

    See Also
    --------
    memcpy_htoa : An example.
    """
    index = byte_count(index, "memcpy_atoh: index")
    host = host_buffer(dest, writable=True)
    driver_api.current_context()
    driver_api.call("cuMemcpyAtoH", host.ctypes.data, array.live_handle(), index, host.nbytes)


def memcpy_dtoa(array: Array, index: int, src: Any, size: int) -> None:
    """Copy device memory into a 1-D :class:`Array`, from byte ``index`` on.

    Parameters
    ----------
    array : Array
    index : int
        The offset in bytes into the array.
    src
        Device memory: a :class:`DeviceAllocation`, an int address, a GPU array ...
    size : int
        Bytes to copy.
    """
    index, size = byte_count(index, "memcpy_dtoa: index"), byte_count(size, "memcpy_dtoa: size")
    address = _contiguous_device(src, 0, size, "memcpy_dtoa")
    driver_api.current_context()
    driver_api.call("cuMemcpyDtoA", array.live_handle(), index, address, size)


def memcpy_atod(dest: Any, array: Array, index: int, size: int) -> None:
    """Copy bytes of a 1-D :class:`Array`, from byte ``index`` on, into device memory.

    Parameters
    ----------
    dest
        Device memory: a :class:`DeviceAllocation`, an int address, a GPU array ...
    array : Array
    index : int
        The offset in bytes into the array.
    size : int
        Bytes to copy.
    """
    index, size = byte_count(index, "memcpy_atod: index"), byte_count(size, "memcpy_atod: size")
    address = _contiguous_device(dest, 0, size, "memcpy_atod")
    driver_api.current_context()
    driver_api.call("cuMemcpyAtoD", address, array.live_handle(), index, size)


def memcpy_atoa(dest: Array, dest_index: int, src: Array, src_index: int, size: int) -> None:
    """Copy bytes from one 1-D :class:`Array` to another.

    Parameters
    ----------
    dest : Array
    dest_index : int
        The offset in bytes into ``dest``.
    src : Array
    src_index : int
        The offset in bytes into ``src``.
    size : int
        Bytes to copy.
    """
    dest_index, src_index = (
        byte_count(dest_index, "memcpy_atoa: dest_index"),
        byte_count(src_index, "memcpy_atoa: src_index"),
    )
    size = byte_count(size, "memcpy_atoa: size")
    driver_api.current_context()
    driver_api.call("cuMemcpyAtoA", dest.live_handle(), dest_index, src.live_handle(), src_index, size)


# PyCUDA exports the host copies under these names (its documented ones are the above).
py_memcpy_htoa = memcpy_htoa
py_memcpy_atoh = memcpy_atoh
