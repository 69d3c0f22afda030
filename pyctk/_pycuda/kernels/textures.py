"""Texture and surface objects (``cuTexObjectCreate``, ``cuSurfObjectCreate``), and the texture
and surface *references* CUDA 12 removed, which now say so and name texture objects.

PyCUDA had only texture references (``texture<float, 2> tex;`` at file scope in device code,
``mod.get_texref("tex")``); CUDA 12's compilers, NVRTC included, no longer have them. A
texture object is a value passed to the kernel (a ``cudaTextureObject_t``, 64 bits)::

    __global__ void sample(float *out, cudaTextureObject_t tex, int w, int h) {
        int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
        if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
    }

(``TextureObject`` has an example that runs.)

A texture reads a CUDA ``Array`` (``tex1D``/``tex2D``/``tex3D``, with filtering and address
modes), or device memory: linear (``tex1Dfetch``) or pitched 2-D rows (``tex2D``). A surface
(``SurfaceObject``, ``surf2Dwrite``/``surf2Dread``) reads and writes an array made with
``array3d_flags.SURFACE_LDST``. Both keep what they read alive and are destroyed by
``free()`` or when garbage.
"""

from __future__ import annotations

import ctypes
import enum
import re
from collections.abc import Sequence
from ctypes import byref, c_float, c_int, c_size_t, c_uint, c_uint64, c_void_p
from typing import Any

import numpy as np

from ..._cuda import constants as cu
from ..._cuda import driver_api
from ..._cuda.driver_errors import CompileError, LogicError
from ..memory.arrays import Array, Owned, array_format, dtype_to_array_format
from ..memory.copies_nd import device_address


class address_mode(enum.IntEnum):  # PyCUDA's name
    """What a texture read outside the texture gets: ``CUaddress_mode`` (cuda.h)."""

    WRAP = cu.CU_TR_ADDRESS_MODE_WRAP  #: The coordinate modulo the size (normalized coordinates only).
    CLAMP = cu.CU_TR_ADDRESS_MODE_CLAMP  #: The nearest edge element.
    MIRROR = cu.CU_TR_ADDRESS_MODE_MIRROR  #: The texture mirrored (normalized coordinates only).
    BORDER = cu.CU_TR_ADDRESS_MODE_BORDER  #: ``border_color`` (:class:`TextureObject`); PyCUDA lacks it.


class filter_mode(enum.IntEnum):  # PyCUDA's name
    """How a texture read between elements is filtered: ``CUfilter_mode`` (cuda.h)."""

    POINT = cu.CU_TR_FILTER_MODE_POINT  #: The nearest element.
    LINEAR = cu.CU_TR_FILTER_MODE_LINEAR  #: The linear interpolation of the nearest ones (float results only).


class resource_type(enum.IntEnum):  # lower case, as PyCUDA names its enums
    """What a texture or surface reads: ``CUresourcetype`` (cuda.h), of
    :meth:`TextureObject.get_resource_desc` (not in PyCUDA)."""

    ARRAY = cu.CU_RESOURCE_TYPE_ARRAY  #: An :class:`Array`.
    MIPMAPPED_ARRAY = cu.CU_RESOURCE_TYPE_MIPMAPPED_ARRAY  #: A mipmapped array.
    LINEAR = cu.CU_RESOURCE_TYPE_LINEAR  #: Linear device memory (``tex1Dfetch``).
    PITCH2D = cu.CU_RESOURCE_TYPE_PITCH2D  #: Rows of device memory, ``pitch`` bytes apart.


class texture_flags(enum.IntFlag):  # lower case, as PyCUDA names its enums
    """How a texture reads: ``CU_TRSF_*`` (cuda.h), the ``flags`` of :class:`TextureObject`.

    PyCUDA has them as the constants ``TRSF_READ_AS_INTEGER`` ..., which pyctk.driver has
    too; the class is pyctk's.
    """

    READ_AS_INTEGER = cu.CU_TRSF_READ_AS_INTEGER  #: 8- and 16-bit integers as they are, not as floats in [0, 1].
    NORMALIZED_COORDINATES = cu.CU_TRSF_NORMALIZED_COORDINATES  #: Coordinates in [0, 1), not [0, size).
    SRGB = cu.CU_TRSF_SRGB  #: Convert sRGB colours to linear ones.
    DISABLE_TRILINEAR_OPTIMIZATION = (
        cu.CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION
    )  #: Filter exactly, not the faster approximation.
    SEAMLESS_CUBEMAP = cu.CU_TRSF_SEAMLESS_CUBEMAP  #: Filter across the faces of a cube map.


TRSF_READ_AS_INTEGER = texture_flags.READ_AS_INTEGER
TRSF_NORMALIZED_COORDINATES = texture_flags.NORMALIZED_COORDINATES
TRSF_SRGB = texture_flags.SRGB
TRSF_DISABLE_TRILINEAR_OPTIMIZATION = texture_flags.DISABLE_TRILINEAR_OPTIMIZATION
TRSF_SEAMLESS_CUBEMAP = texture_flags.SEAMLESS_CUBEMAP
# Texture references' (PyCUDA's TextureReference.set_array's flag, a module's default texture
# reference): kept for programs that name them; the references themselves left CUDA in 12.
TRSA_OVERRIDE_FORMAT = cu.CU_TRSA_OVERRIDE_FORMAT
TR_DEFAULT = cu.CU_PARAM_TR_DEFAULT


# ---------------------------------------------------------------------------
# cuda.h's descriptors.


class _ArrayResource(ctypes.Structure):
    _fields_ = [("hArray", c_void_p)]


class _MipmapResource(ctypes.Structure):
    _fields_ = [("hMipmappedArray", c_void_p)]


class _LinearResource(ctypes.Structure):
    _fields_ = [("devPtr", c_uint64), ("format", c_int), ("numChannels", c_uint), ("sizeInBytes", c_size_t)]


class _Pitch2DResource(ctypes.Structure):
    _fields_ = [
        ("devPtr", c_uint64),
        ("format", c_int),
        ("numChannels", c_uint),
        ("width", c_size_t),
        ("height", c_size_t),
        ("pitchInBytes", c_size_t),
    ]


class _Resources(ctypes.Union):
    _fields_ = [
        ("array", _ArrayResource),
        ("mipmap", _MipmapResource),
        ("linear", _LinearResource),
        ("pitch2D", _Pitch2DResource),
        ("reserved", c_int * 32),
    ]


class ResourceDesc(ctypes.Structure):
    """``CUDA_RESOURCE_DESC``: what a texture or surface reads."""

    _fields_ = [("resType", c_int), ("res", _Resources), ("flags", c_uint)]


class TextureDesc(ctypes.Structure):
    """``CUDA_TEXTURE_DESC``: how a texture reads."""

    _fields_ = [
        ("addressMode", c_int * 3),
        ("filterMode", c_int),
        ("flags", c_uint),
        ("maxAnisotropy", c_uint),
        ("mipmapFilterMode", c_int),
        ("mipmapLevelBias", c_float),
        ("minMipmapLevelClamp", c_float),
        ("maxMipmapLevelClamp", c_float),
        ("borderColor", c_float * 4),
        ("reserved", c_int * 12),
    ]


_MEMBERS = {
    resource_type.ARRAY: "array",
    resource_type.MIPMAPPED_ARRAY: "mipmap",
    resource_type.LINEAR: "linear",
    resource_type.PITCH2D: "pitch2D",
}


def element_format(dtype: Any) -> tuple[array_format, int]:
    """(format, channels) of a texture element: a scalar type, or a vector type of 1, 2 or 4
    (``pyctk.gpuarray.vec.float4``: FLOAT, 4).

    >>> element_format(np.uint8)
    (<array_format.UNSIGNED_INT8: 1>, 1)
    >>> from pyctk.gpuarray import vec
    >>> element_format(vec.float4)
    (<array_format.FLOAT: 32>, 4)
    """
    dtype = np.dtype(dtype)
    fields = [dtype.fields[name][0] for name in dtype.names] if dtype.names else [dtype]
    if len(set(fields)) != 1 or len(fields) not in (1, 2, 4) or dtype.itemsize != len(fields) * fields[0].itemsize:
        raise TypeError(
            f"a texture element is a scalar or a vector of 1, 2 or 4 equal scalars (vec.float4 ...), not {dtype}"
        )
    return dtype_to_array_format(fields[0]), len(fields)


def _resource(resource: Any, dtype: Any, shape: Any, pitch: int | None) -> ResourceDesc:
    """The resource description of an ``Array``, or of device memory of ``dtype`` and ``shape``:
    (n,) is linear memory, (height, width) rows ``pitch`` bytes apart."""
    description = ResourceDesc()
    if isinstance(resource, Array):
        if (dtype, shape, pitch) != (None, None, None):
            raise TypeError("an Array has its own format and shape: give no dtype=, shape= or pitch=")
        description.resType = resource_type.ARRAY
        description.res.array.hArray = resource.live_handle()
        return description
    address = device_address(resource, "TextureObject").address
    if dtype is None or shape is None:
        raise TypeError(
            "a texture over device memory needs its element type and shape: dtype= "
            "and shape=(n,) (linear memory) or shape=(height, width) (rows, pitch=)"
        )
    format, channels = element_format(dtype)
    itemsize = np.dtype(dtype).itemsize
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if len(shape) == 1 and pitch is None:
        description.resType = resource_type.LINEAR
        description.res.linear = _LinearResource(address, format, channels, shape[0] * itemsize)
    elif len(shape) == 2:
        height, width = shape
        description.resType = resource_type.PITCH2D
        description.res.pitch2D = _Pitch2DResource(
            address, format, channels, width, height, width * itemsize if pitch is None else pitch
        )
    else:
        raise ValueError(
            f"shape={shape!r}, pitch={pitch!r}: a texture over device memory is "
            f"linear, shape=(n,), or 2-D, shape=(height, width) with rows pitch bytes apart"
        )
    return description


class ResourceObject(Owned):
    """A texture or surface object: a 64-bit value a kernel takes (as PyCUDA's calls pass
    device memory, ``Function.__call__`` passes ``handle``)."""

    _handle_type = c_uint64
    _get_resource: str  # the driver function that describes it: each kind names its own

    def get_resource_desc(self) -> dict[str, Any]:
        """What it reads, as the driver says.

        Returns
        -------
        dict
            ``{"type": resource_type.ARRAY, "hArray": handle}`` for an array; for device
            memory the type and the fields of cuda.h's description (``devPtr``, ``format``,
            ``numChannels`` ...).
        """
        description = ResourceDesc()
        driver_api.call(self._get_resource, byref(description), self.live_handle())
        kind = resource_type(description.resType)
        member = getattr(description.res, _MEMBERS[kind])
        return {"type": kind, **{name: getattr(member, name) for name, _ in member._fields_}}


class TextureObject(ResourceObject):
    """TextureObject(resource, *, dtype=None, shape=None, pitch=None, address_mode=address_mode.CLAMP, filter_mode=filter_mode.POINT, flags=0, border_color=(0.0, 0.0, 0.0, 0.0))

    A texture object, for ``cudaTextureObject_t`` kernel parameters (not in PyCUDA).

    CUDA 12 removed the texture references PyCUDA had (``TextureReference``): a texture
    object is a value passed to the kernel, which reads it with ``tex1D<T>``,
    ``tex2D<T>``, ``tex3D<T>`` or ``tex1Dfetch<T>``. It keeps what it reads alive, and is
    destroyed by ``free()`` or when garbage.

    Parameters
    ----------
    resource : Array or device memory
        An :class:`Array` (``tex1D``, ``tex2D``, ``tex3D``), or device memory (a
        :class:`DeviceAllocation`, an int address, a GPU array) with ``dtype`` and ``shape``.
    dtype : data-type, optional
        For device memory: (u)int8/16/32, float16, float32, or a vector type of 1, 2 or 4 of
        them (``pyctk.gpuarray.vec.float4``).
    shape : int or tuple of int, optional
        For device memory: ``(n,)`` for linear memory (``tex1Dfetch``, integer indices, no
        filtering), ``(height, width)`` for rows ``pitch`` bytes apart (``tex2D``).
    pitch : int, optional
        For rows: bytes from one to the next; default ``width * itemsize``. CUDA needs it a
        multiple of ``device_attribute.TEXTURE_PITCH_ALIGNMENT``, and the address a multiple
        of ``TEXTURE_ALIGNMENT`` (:func:`mem_alloc_pitch` gives both).
    address_mode : address_mode, or one for each dimension, optional
        Default ``CLAMP``.
    filter_mode : filter_mode, optional
        ``POINT`` (default) or ``LINEAR`` (float results only).
    flags : texture_flags, optional
        ``TRSF_NORMALIZED_COORDINATES``; ``TRSF_READ_AS_INTEGER`` to read 8- and 16-bit
        integers as they are (the driver's default reads them as floats in [0, 1]).
    border_color : sequence of four floats, optional
        What ``address_mode.BORDER`` reads outside.

    Raises
    ------
    TypeError
        Device memory without ``dtype`` and ``shape``, or an ``Array`` with them.

    Examples
    --------
    A 2 x 2 texture, read between its elements with linear filtering:

    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> from pyctk.compiler import SourceModule
    >>> module = SourceModule('''
    ... __global__ void sample(float *out, cudaTextureObject_t tex, float x, float y) {
    ...     *out = tex2D<float>(tex, x, y);
    ... }''')
    >>> image = np.array([[0, 1], [2, 3]], np.float32)
    >>> tex = cuda.TextureObject(cuda.matrix_to_array(image, "C"),
    ...                          filter_mode=cuda.filter_mode.LINEAR)
    >>> out = np.zeros(1, np.float32)
    >>> module.get_function("sample")(cuda.Out(out), tex, np.float32(1), np.float32(1),
    ...                               block=(1, 1, 1))
    >>> out                                          # the mean of the four
    array([1.5], dtype=float32)
    """  # noqa: E501 - its first line is the signature Sphinx shows, and must be one line

    _destroy, _get_resource = "cuTexObjectDestroy", "cuTexObjectGetResourceDesc"

    def __init__(
        self,
        resource: Any,
        *,
        dtype: Any = None,
        shape: Any = None,
        pitch: int | None = None,
        address_mode: Any = address_mode.CLAMP,
        filter_mode: Any = filter_mode.POINT,
        flags: int = 0,
        border_color: Sequence[float] = (0.0, 0.0, 0.0, 0.0),
    ) -> None:
        description = _resource(resource, dtype, shape, pitch)
        modes = [address_mode] if isinstance(address_mode, (int, np.integer)) else list(address_mode)
        if not 1 <= len(modes) <= 3:
            raise ValueError(f"address_mode: one mode, or one for each of up to 3 dimensions; got {modes!r}")
        texture = TextureDesc()
        texture.addressMode[:] = [int(m) for m in modes] + [int(modes[-1])] * (3 - len(modes))
        texture.filterMode, texture.flags = int(filter_mode), int(flags)
        texture.borderColor[:] = [float(c) for c in border_color]
        self._create("cuTexObjectCreate", byref(description), byref(texture), None)
        self.resource = resource  # kept alive while the texture reads it


class SurfaceObject(ResourceObject):
    """SurfaceObject(array)

    A surface object, for ``cudaSurfaceObject_t`` kernel parameters (not in PyCUDA).

    A kernel reads and writes the array through it: ``surf2Dwrite(v, surf, x * sizeof(v),
    y)`` (x in bytes), ``surf2Dread``. It replaces PyCUDA's surface references, which CUDA
    12 removed; it keeps the array alive, and is destroyed by ``free()`` or when garbage.

    Parameters
    ----------
    array : Array
        Made with ``array3d_flags.SURFACE_LDST`` (``np_to_array(a, order,
        allowSurfaceBind=True)``).

    Raises
    ------
    TypeError
        ``array`` is not an :class:`Array`.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> from pyctk.compiler import SourceModule
    >>> module = SourceModule('''
    ... __global__ void fill(cudaSurfaceObject_t surf) {
    ...     surf2Dwrite(float(threadIdx.x), surf, threadIdx.x * sizeof(float), threadIdx.y);
    ... }''')
    >>> array = cuda.Array(cuda.ArrayDescriptor3D(width=3, height=2, depth=0, num_channels=1,
    ...                                           format=cuda.array_format.FLOAT,
    ...                                           flags=cuda.array3d_flags.SURFACE_LDST))
    >>> module.get_function("fill")(cuda.SurfaceObject(array), block=(3, 2, 1))
    >>> out = np.zeros((2, 3), np.float32)
    >>> copy = cuda.Memcpy2D()
    >>> copy.set_src_array(array)
    >>> copy.set_dst_host(out)
    >>> copy.width_in_bytes = copy.dst_pitch = out.strides[0]
    >>> copy.height = 2
    >>> copy()
    >>> out
    array([[0., 1., 2.],
           [0., 1., 2.]], dtype=float32)
    """

    _destroy, _get_resource = "cuSurfObjectDestroy", "cuSurfObjectGetResourceDesc"

    def __init__(self, array: Array) -> None:
        if not isinstance(array, Array):
            raise TypeError(f"a SurfaceObject reads and writes an Array, not {type(array).__name__}")
        self._create("cuSurfObjectCreate", byref(_resource(array, None, None, None)))
        self.resource = array


# ---------------------------------------------------------------------------
# Texture and surface references: removed from CUDA (12.0).


class TextureReferenceError(LogicError, TypeError):
    """A texture or surface reference was asked for: CUDA 12 removed them (not in PyCUDA).

    The message says what to use instead: :class:`TextureObject` or :class:`SurfaceObject`.
    A :class:`LogicError`, as PyCUDA programs catch, and a TypeError, as pyctk's
    ``prepare(texrefs=...)`` raised before.

    Examples
    --------
    >>> import pyctk.driver as cuda
    >>> cuda.TextureReference()
    Traceback (most recent call last):
        ...
    pyctk.driver.TextureReferenceError: TextureReference(): texture references were removed from CUDA in version 12.0, ...
    """  # noqa: E501 - a doctest's expected exception, compared as written


TextureReferenceError.__module__ = "pyctk.driver"

_USE_OBJECTS = (
    "texture references were removed from CUDA in version 12.0, and surface references with them "
    "(texture<...> and surface<...> in device code, Module.get_texref and get_surfref, "
    "TextureReference, SurfaceReference, texrefs=, matrix_to_texref). Use a texture object: a "
    "cudaTextureObject_t kernel parameter read with tex2D<float>(tex, x, y), passed a "
    "pyctk.driver.TextureObject (surfaces: cudaSurfaceObject_t and SurfaceObject), e.g.\n"
    '    tex = cuda.TextureObject(cuda.matrix_to_array(a, "C"), filter_mode=cuda.filter_mode.LINEAR)\n'
    "    kernel(out_gpu, tex, np.int32(w), block=(16, 16, 1), grid=(w // 16, h // 16))"
)


def references_removed(what: str) -> TextureReferenceError:
    """The error for ``what``, a use of a texture or surface reference."""
    return TextureReferenceError(f"{what}: {_USE_OBJECTS}", "", 0)


def refuse_texrefs(texrefs: Any) -> None:
    """Raise for a non-empty ``texrefs=`` of a launch or ``prepare``."""
    if texrefs:
        raise references_removed("texrefs=")


class TextureReference:
    """Removed from CUDA 12: making one raises :class:`TextureReferenceError`, which says how to
    use a :class:`TextureObject` instead."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise references_removed("TextureReference()")


class SurfaceReference:
    """Removed from CUDA 12: making one raises :class:`TextureReferenceError`, which names
    :class:`SurfaceObject`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise references_removed("SurfaceReference()")


def bind_array_to_texref(array: Any, texref: Any) -> None:
    """Removed with texture references: raises :class:`TextureReferenceError`; use
    ``TextureObject(array)``."""
    raise references_removed("bind_array_to_texref")


def matrix_to_texref(matrix: Any, texref: Any, order: str) -> None:
    """Removed with texture references: raises :class:`TextureReferenceError`; use
    ``TextureObject(matrix_to_array(matrix, order))``."""
    raise references_removed("matrix_to_texref")


# NVRTC's words for a file-scope texture<...> or surface<...> declaration.
_REFERENCE_IN_SOURCE = re.compile(r"error: (texture|surface) is not a template")


def explain_references(error: CompileError) -> None:
    """Raise ``error`` again with what to use instead when NVRTC failed on texture or surface
    references in the source; return otherwise."""
    if _REFERENCE_IN_SOURCE.search(error.log):
        raise CompileError(
            f"{error}\nThis source declares texture or surface references: {_USE_OBJECTS}", error.log, error.options
        ) from None
