"""DLPack: the C structures, dtypes, and capsules in both directions, through ctypes.

Importing (``describe``, ``consume``) reads a capsule another library made; consuming
renames it ``used_dltensor(_versioned)`` as the protocol says and hands back an
``ImportedTensor`` that calls the producer's deleter exactly once, when it is garbage.

Exporting (``to_capsule``) makes a capsule for memory pyctk describes (any device) that
keeps an owner object alive until the consumer calls the deleter, or until the capsule
is destroyed unconsumed. The capsule, its destructor and its deleter are NumPy's, made
for a stand-in array of the same shape, strides and item size, whose fields are then
pointed at the real memory, device and dtype. Why not ctypes callbacks: a capsule
destructor written in Python runs inside ``capsule_dealloc``, often while an exception
is being raised (a consumer rejecting the capsule, an unwinding frame); a ctypes callback
cannot run there without replacing that exception by a ``SystemError`` and then losing
it. NumPy's destructor and deleter are C: they run safely there, from any thread, and
after interpreter shutdown (they then leak, as they must).

Everything here works on CPython 3.9 to 3.13. PyPy has no ``ctypes.pythonapi``, so its
capsules cannot be read or made: those calls raise ``UnsupportedError`` saying so (the
CUDA Array Interface still works there). Versioned capsules (DLPack 1.0) need NumPy 2.1
or later to export; with an older NumPy a consumer asking for one gets a legacy capsule,
which the protocol allows.

>>> import numpy as np
>>> from pyctk._arrays import dlpack
>>> dlpack.describe(np.zeros((2, 3), np.float32).__dlpack__()).shape  # doctest: +CPYTHON
(2, 3)
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from ctypes import POINTER, Structure, c_char_p, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
from typing import Any, NamedTuple

import numpy as np

from .._cuda.errors import UnsupportedError
from .dtypes import DTYPES, named, supported_dtype
from .layout import checked_ndim, foreign_layout

# ---------------------------------------------------------------------------
# The ABI (dlpack.h, DLPack 1.0).

kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
READ_ONLY, IS_COPIED = 1 << 0, 1 << 1  # DLManagedTensorVersioned.flags
VERSION = (1, 0)  # what pyctk reads and writes


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", c_void_p),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


# void (*deleter)(DLManagedTensor(Versioned) *self). Called without the GIL held by us:
# a deleter may take it itself (NumPy's does).
_DELETER = ctypes.CFUNCTYPE(None, c_void_p)

# Capsule name -> (structure, name once consumed).
_CAPSULES = {
    b"dltensor_versioned": (DLManagedTensorVersioned, b"used_dltensor_versioned"),
    b"dltensor": (DLManagedTensor, b"used_dltensor"),
}
# A capsule keeps a pointer to its name: these must live as long as the process.
_USED_NAMES = {name: ctypes.create_string_buffer(used) for name, (_, used) in _CAPSULES.items()}

# ---------------------------------------------------------------------------
# Dtypes: pyctk's (one table, pyctk._arrays.dtypes.DTYPES), by DLPack's (code, bits).

_NAMES = {row.dlpack: name for name, row in DTYPES.items()}


def dl_dtype(dtype: Any) -> DLDataType:
    """The DLDataType of a NumPy dtype.

    >>> (lambda d: (d.code, d.bits, d.lanes))(dl_dtype(np.complex64))
    (5, 64, 1)
    """
    return DLDataType(*DTYPES[supported_dtype(dtype).name].dlpack, 1)


def numpy_dtype(dl: DLDataType) -> np.dtype:
    """The NumPy dtype of a DLDataType; ml_dtypes' types import it, which registers them.

    >>> numpy_dtype(DLDataType(2, 16, 1))  # kDLFloat, 16 bits
    dtype('float16')
    """
    name = _NAMES.get((dl.code, dl.bits)) if dl.lanes == 1 else None
    if name is None:
        raise TypeError(
            f"DLPack tensor 'dtype' is code {dl.code}, {dl.bits} bits, {dl.lanes} lanes, for which pyctk "
            f"has no dtype (it reads one lane of {', '.join(DTYPES)})"
        )
    return named(name)


# ---------------------------------------------------------------------------
# The C API for capsules, which PyPy does not offer through ctypes.

_api: Any = None


def _pythonapi() -> Any:
    global _api
    if _api is None:
        api = getattr(ctypes, "pythonapi", None)
        if api is None:
            raise UnsupportedError(
                "DLPack capsules need ctypes.pythonapi, which this Python (PyPy) does not have. "
                "Exchange GPU arrays through __cuda_array_interface__ instead (pyctk.asarray of a "
                "CuPy, Numba or PyTorch CUDA array uses it), or use CPython."
            )
        from .._cuda.loader import declare  # imported here: `import pyctk` does not need the loader

        _api = declare(
            api,
            {
                "PyCapsule_IsValid": (ctypes.c_int, [ctypes.py_object, c_char_p]),
                "PyCapsule_GetPointer": (c_void_p, [ctypes.py_object, c_char_p]),
                "PyCapsule_SetName": (ctypes.c_int, [ctypes.py_object, c_char_p]),
            },
        )
    return _api


def _open(capsule: Any) -> tuple[bytes, Any]:
    """The name and managed tensor of an unconsumed DLPack capsule."""
    api = _pythonapi()
    for name, (structure, _) in _CAPSULES.items():
        if api.PyCapsule_IsValid(capsule, name):
            return name, structure.from_address(api.PyCapsule_GetPointer(capsule, name))
    raise TypeError(
        f"expected an unconsumed DLPack capsule (named 'dltensor' or 'dltensor_versioned'), got {capsule!r}"
    )


# ---------------------------------------------------------------------------
# Import.


class TensorInfo(NamedTuple):
    """What a DLPack tensor describes, in NumPy's terms. (A named tuple, made for every
    imported tensor: half the cost of a frozen dataclass, and no `import dataclasses`,
    which would cost `import pyctk` ~1.5 ms.)"""

    pointer: int  # address of element 0: data + byte_offset
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in bytes, as NumPy counts them
    dtype: np.dtype
    device: tuple[int, int]  # (DLDeviceType, device id)
    readonly: bool
    copied: bool
    version: tuple[int, int] | None  # None for a legacy (unversioned) capsule


_SOURCE = "DLPack tensor"  # what the messages call an imported tensor


def _tensor_info(name: bytes, managed: Any) -> TensorInfo:
    versioned = name == b"dltensor_versioned"
    if versioned and managed.version.major != VERSION[0]:
        # The protocol: refuse a major we do not know, and leave the capsule unconsumed.
        raise BufferError(
            f"DLPack {managed.version.major}.{managed.version.minor} capsule; pyctk reads DLPack {VERSION[0]}.x"
        )
    tensor = managed.dl_tensor
    dtype = numpy_dtype(tensor.dtype)
    # ndim says how many int64s shape and strides point to: checked before they are read.
    ndim = checked_ndim(tensor.ndim, _SOURCE)
    if ndim and not tensor.shape:
        raise ValueError(f"{_SOURCE} 'shape' is NULL, but its ndim is {ndim}")
    shape = tuple(tensor.shape[i] for i in range(ndim))
    strides = tuple(tensor.strides[i] * dtype.itemsize for i in range(ndim)) if tensor.strides else None
    # (data and byte_offset are each 64 bits unsigned: their sum may pass 2**64, which the
    # layout's check refuses rather than wrap)
    pointer = (tensor.data or 0) + tensor.byte_offset
    layout = foreign_layout(_SOURCE, pointer, shape, strides, dtype.itemsize)
    flags = managed.flags if versioned else 0
    return TensorInfo(
        pointer=pointer,
        shape=layout.shape,
        strides=layout.strides,
        dtype=dtype,
        device=(tensor.device.device_type, tensor.device.device_id),
        readonly=bool(flags & READ_ONLY),
        copied=bool(flags & IS_COPIED),
        version=(managed.version.major, managed.version.minor) if versioned else None,
    )


def describe(capsule: Any) -> TensorInfo:
    """Read a DLPack capsule without consuming it (its destructor still frees it)."""
    return _tensor_info(*_open(capsule))


class ImportedTensor:
    """A consumed DLPack tensor: ``info`` describes it, and the producer's deleter runs once,
    when this object is garbage or at ``release()``, whichever comes first."""

    __slots__ = ("info", "_managed", "_deleter")

    def __init__(self, info: TensorInfo, managed: int, deleter: int) -> None:
        self.info, self._managed, self._deleter = info, managed, deleter

    def release(self) -> None:
        managed, self._managed = self._managed, 0
        if managed and self._deleter:  # a NULL deleter means there is nothing to free
            _DELETER(self._deleter)(managed)

    def __del__(self) -> None:
        self.release()


def consume(capsule: Any) -> ImportedTensor:
    """Take ownership of the tensor in ``capsule`` and rename the capsule as used.

    If the tensor cannot be read (unknown dtype or DLPack major), nothing is consumed.

    >>> import numpy as np
    >>> tensor = consume(np.arange(3.0).__dlpack__())  # doctest: +CPYTHON
    >>> tensor.info.shape, tensor.info.device
    ((3,), (1, 0))
    """
    name, managed = _open(capsule)
    info = _tensor_info(name, managed)
    tensor = ImportedTensor(info, ctypes.addressof(managed), managed.deleter or 0)
    _pythonapi().PyCapsule_SetName(capsule, ctypes.cast(_USED_NAMES[name], c_char_p))
    return tensor


# ---------------------------------------------------------------------------
# Export.

# NumPy exports versioned capsules (__dlpack__(max_version=...)) from 2.1 on.
_NUMPY_VERSIONED = np.lib.NumpyVersion(np.__version__) >= "2.1.0"
_STAND_IN_DTYPES = {1: "u1", 2: "u2", 4: "u4", 8: "u8", 16: "c16"}  # item size -> a dtype NumPy exports
_PLACEHOLDER = ctypes.create_string_buffer(16)  # the stand-in's data: never read, then replaced


class _StandIn:
    """The object the stand-in NumPy array is made from and keeps alive (as its base)."""

    def __init__(self, shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int, owner: object) -> None:
        self.owner = owner
        self.__array_interface__ = {
            "shape": shape,
            "strides": strides,
            "typestr": np.dtype(_STAND_IN_DTYPES[itemsize]).str,
            "data": (ctypes.addressof(_PLACEHOLDER), False),
            "version": 3,
        }


def wants_versioned(max_version: tuple[int, int] | None) -> bool:
    """Whether a consumer that passed ``max_version`` reads versioned capsules."""
    return max_version is not None and tuple(max_version) >= VERSION


def to_capsule(
    pointer: int,
    shape: Sequence[int],
    strides: Sequence[int],
    dtype: Any,
    device: tuple[int, int],
    owner: object,
    *,
    versioned: bool,
    readonly: bool = False,
    copied: bool = False,
) -> Any:
    """A DLPack capsule for the array at ``pointer`` that keeps ``owner`` alive.

    Parameters
    ----------
    pointer : int
        Address of element 0 (on any device; it is never read here).
    shape, strides : sequence of int
        Extents, and byte steps (multiples of the item size; may be negative).
    dtype : dtype_like
        One of pyctk's dtypes.
    device : (int, int)
        (DLDeviceType, device id), e.g. ``(kDLCUDA, 0)``.
    owner : object
        Released when the consumer calls the deleter, or when the capsule dies unconsumed.
    versioned : bool
        A ``dltensor_versioned`` capsule (DLPack 1.0), or a legacy one. Versioned ones need
        NumPy >= 2.1: with an older NumPy the capsule is legacy, which the protocol allows.
    readonly, copied : bool
        The flags of a versioned capsule. A legacy capsule cannot say read-only, so a
        read-only array cannot be exported as one.

    Returns
    -------
    PyCapsule

    Examples
    --------
    >>> host = np.arange(6.0).reshape(2, 3)
    >>> capsule = to_capsule(host.ctypes.data, host.shape, host.strides, host.dtype,  # doctest: +CPYTHON
    ...                      (kDLCPU, 0), owner=host, versioned=False)
    >>> describe(capsule).shape
    (2, 3)
    """
    dtype = supported_dtype(dtype)
    versioned = versioned and _NUMPY_VERSIONED
    if readonly and not versioned:
        raise BufferError(
            "a read-only array can only be exported as a versioned DLPack capsule "
            "(the consumer must pass max_version >= (1, 0)), which can mark it read-only"
        )
    stand_in = np.asarray(_StandIn(tuple(shape), tuple(strides), dtype.itemsize, owner))
    capsule = stand_in.__dlpack__(max_version=VERSION) if versioned else stand_in.__dlpack__()
    managed = _open(capsule)[1]
    tensor = managed.dl_tensor  # NumPy wrote ndim, shape and strides (in items), and byte_offset 0
    tensor.data = pointer or None
    tensor.device = DLDevice(*device)
    tensor.dtype = dl_dtype(dtype)
    if versioned:
        managed.flags = (READ_ONLY if readonly else 0) | (IS_COPIED if copied else 0)
    return capsule
