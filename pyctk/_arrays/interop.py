"""GPU arrays of other libraries, read without importing those libraries.

``device_operand(x)`` says where ``x``'s data is on the GPU (pointer, shape, strides,
dtype, device, and what to keep alive and wait for), or None when ``x`` is host data.
It reads, in order: a type with a reader of its own (a pyctk ``DeviceArray``, a torch
tensor, a CuPy array: one row each in ``_READERS``); ``__cuda_array_interface__`` (CuPy, Numba,
PyTorch and JAX on CUDA; cheap: a dict); DLPack (``__dlpack_device__`` and
``__dlpack__``). Only duck typing: torch, cupy, jax and numba are never imported.

Stream rules. The CUDA Array Interface (v3) names the stream the producer's pending
work is on: the consumer makes its own stream wait for it (``DeviceOperand.stream``).
DLPack works the other way round: the consumer passes its stream to ``__dlpack__`` and
the producer orders its work before it, so a DLPack operand has nothing left to wait
for. In both, 1 is the legacy default stream, 2 the per-thread default stream (which
CUDA accepts as the handles ``cudaStreamLegacy`` and ``cudaStreamPerThread``), and 0 is
disallowed as ambiguous.
"""

from __future__ import annotations

import reprlib
import sys
from typing import Any, Callable, NamedTuple, cast

import numpy as np

from .._cuda import cudart, streams
from . import dlpack
from .arguments import device_index, integer
from .dtypes import DTYPES, named, supported_dtype
from .layout import foreign_layout

# DLPack device types: those whose memory kernels use directly, and host memory.
_DEVICE_TYPES = {dlpack.kDLCUDA, dlpack.kDLCUDAManaged}
_HOST_TYPES = {dlpack.kDLCPU, dlpack.kDLCUDAHost}
# cudaMemoryTypes that kernels use directly.
_GPU_MEMORY = {cudart.MEMORY_DEVICE, cudart.MEMORY_MANAGED}


class DeviceOperand(NamedTuple):
    """Where an array's data is on the GPU, for code that hands it to a kernel. (A named
    tuple: made on every call, and the cheapest immutable record to make.)"""

    pointer: int  # address of element 0
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in bytes
    dtype: np.dtype
    device: int
    readonly: bool
    owner: Any  # keep alive while the pointer is in use
    stream: int | None  # cudaStream_t of the producer's pending work (1: legacy, 2: per
    # thread) to wait for first; None: nothing to wait for


def device_operand(x: Any, stream: int = 0) -> DeviceOperand | None:
    """``x``'s data on the GPU, or None when ``x`` is host data.

    Parameters
    ----------
    x : object
        A pyctk DeviceArray, an object with ``__cuda_array_interface__`` (read first: a
        dict, cheap) or with ``__dlpack_device__`` and ``__dlpack__``; anything else
        (NumPy arrays, lists, CPU tensors) is host data.
    stream : int, optional
        The ``cudaStream_t`` the caller will use the data on, on the data's device (0: the
        legacy default stream). A DLPack producer orders its pending work before it.

    Returns
    -------
    DeviceOperand or None
        For CUDA Array Interface data, ``stream`` is the producer's stream, which the
        caller must make its own stream wait for (``streams.wait``); ``owner`` must be
        kept alive while the pointer is used.

    Raises
    ------
    TypeError
        A dtype pyctk lacks, a masked array, a CUDA Array Interface pointing to host memory.
    ValueError
        A CUDA Array Interface with stream 0, which the interface disallows.

    Examples
    --------
    >>> device_operand([[1.0, 2.0]]) is None
    True
    >>> class Fake:
    ...     __cuda_array_interface__ = {"shape": (0,), "typestr": "<f4", "data": (0, False),
    ...                                 "strides": None, "version": 3, "stream": None}
    >>> device_operand(Fake()).strides
    (4,)
    """
    reader = own_reader(type(x))
    if reader is not None:
        operand = reader(x)
        if operand is not UNREAD:
            return cast("DeviceOperand | None", operand)  # (what a reader returns, but UNREAD)
    try:
        interface = x.__cuda_array_interface__
    except AttributeError:  # CPU tensors, and whatever has none
        interface = None
    except (KeyError, TypeError, ValueError):  # a dtype it cannot name (torch's FP8: KeyError)
        interface = None
    if interface is not None:
        return _interface_operand(x, interface)
    if hasattr(x, "__dlpack_device__") and hasattr(x, "__dlpack__"):
        return dlpack_operand(x, stream)
    return None


# ---------------------------------------------------------------------------
# Readers of one library's arrays through its own accessors, where the protocols cost the
# per-call path most: a torch tensor's __cuda_array_interface__ is a Python property (about
# 4 us), a CuPy array's builds a dict, and after either the pointer's device must be asked
# of CUDA (another 1.5 us); pyctk's own DeviceArray knows its operand. A reader returns the
# operand, None for host data, or UNREAD for what it leaves to the protocols (which then
# answer exactly as they would have, errors included). Keyed by the type's module and
# name, so the library (and pyctk's DeviceArray, a layer above) is never imported.

UNREAD = object()  # a reader's answer for what it leaves to the protocols
Reader = Callable[[Any], Any]  # an array -> its DeviceOperand, None (host data) or UNREAD
KeyReader = Callable[[Any], "tuple[int, tuple[Any, ...]] | None"]  # an array -> (pointer, layout key)


def own_reader(kind: type) -> Reader | None:
    """The reader of arrays of type ``kind`` through their own accessors, or None where the
    protocols read them. A reader returns a DeviceOperand, None for host data, or UNREAD."""
    try:
        return _readers[kind]
    except KeyError:
        reader = _readers[kind] = _READERS.get((kind.__module__, kind.__qualname__))
        return reader


def _torch_operand(x: Any) -> DeviceOperand | None | object:
    """A torch tensor: strided CUDA tensors without autograd or lazy conj/neg bits."""
    if not x.is_cuda:
        return UNREAD
    try:
        dtype = _library_dtypes[(x.dtype, x.layout)]
    except KeyError:
        dtype = _library_dtypes[(x.dtype, x.layout)] = _torch_dtype(x)
    if dtype is None or x.requires_grad or x.is_conj() or x.is_neg():
        return UNREAD
    itemsize = dtype.itemsize
    return DeviceOperand(
        x.data_ptr(), tuple(x.shape), tuple([s * itemsize for s in x.stride()]), dtype, x.get_device(), False, x, None
    )  # CAI v2: no stream, as torch's


def _torch_key(x: Any) -> tuple[int, tuple[Any, ...]] | None:
    """(pointer, layout) of a tensor that ``_torch_operand`` reads, its layout in
    torch's own objects (dtype, layout, shape, element strides, device), or None where it
    would not read it or its dtype is not known yet. Half the cost of an operand: no
    conversions, and kept plans are looked up by it (``_matmul.repeat``)."""
    device, dtype, layout = x.get_device(), x.dtype, x.layout  # device -1 on the CPU
    known = _library_dtypes.get((dtype, layout))
    if device < 0 or known is None:
        return None
    # (only a complex tensor has a conjugate bit: one accessor less for a real one)
    if x.requires_grad or x.is_neg() or (known.kind == "c" and x.is_conj()):
        return None
    return x.data_ptr(), (dtype, layout, x.shape, x.stride(), device)


def _torch_dtype(x: Any) -> np.dtype | None:
    """The NumPy dtype of a strided tensor's dtype ("torch.float32" -> float32), or None."""
    if str(x.layout) != "torch.strided":
        return None
    name = str(x.dtype).removeprefix("torch.")
    if name in DTYPES:
        try:
            return named(name)  # ml_dtypes' types (torch.float8_e4m3fn) import it
        except TypeError:  # ml_dtypes missing: the protocols answer (DLPack says why)
            return None
    return None


def _cupy_operand(x: Any) -> DeviceOperand | object:
    """A CuPy array. The stream is the one its __cuda_array_interface__ names: CuPy's current
    stream, for whose default (0) the legacy default stream stands (1; CuPy's per-thread
    default stream, where it is on, is ordered with the legacy one, so waiting for the
    legacy stream waits for it too)."""
    try:
        dtype = _library_dtypes[x.dtype]
    except KeyError:
        dtype = _library_dtypes[x.dtype] = _supported_or_none(x.dtype)
    if dtype is None:
        return UNREAD
    memory = x.data
    stream = sys.modules["cupy"].cuda.get_current_stream().ptr or streams.LEGACY
    return DeviceOperand(memory.ptr, x.shape, x.strides, dtype, memory.device_id, False, x, stream)


def _supported_or_none(dtype: Any) -> np.dtype | None:
    try:
        return supported_dtype(dtype)
    except TypeError:  # a dtype pyctk lacks, or bfloat16 without ml_dtypes: the protocols
        return None  # raise it, with the library's own description


_library_dtypes: dict[Any, np.dtype | None] = {}  # a library's dtype (torch: and layout) -> dtype
_READERS = {
    ("pyctk", "DeviceArray"): lambda x: x._operand(),
    ("torch", "Tensor"): _torch_operand,
    ("torch.nn.parameter", "Parameter"): _torch_operand,
    ("cupy", "ndarray"): _cupy_operand,  # CuPy >= 13
    ("cupy._core.core", "ndarray"): _cupy_operand,
}  # CuPy 12
_readers: dict[type, Reader | None] = {}  # type -> its reader or None, found once per type
# Readers of a layout key, where a library's own objects make one cheaper than an operand
# (torch: converting shape and strides is most of reading a tensor).
_KEY_READERS = {("torch", "Tensor"): _torch_key, ("torch.nn.parameter", "Parameter"): _torch_key}
_key_readers: dict[type, KeyReader | None] = {}


def key_reader(kind: type) -> KeyReader | None:
    """The reader of (pointer, layout key) of arrays of type ``kind``, or None where
    there is none: a key that stands for everything a product depends on besides the data,
    None for arrays its operand reader would not read."""
    try:
        return _key_readers[kind]
    except KeyError:
        reader = _key_readers[kind] = _KEY_READERS.get((kind.__module__, kind.__qualname__))
        return reader


def _interface_operand(x: Any, interface: Any) -> DeviceOperand:
    """Read a ``__cuda_array_interface__`` (versions 2 and 3), every field checked before the
    pointer is asked of CUDA (``layout.foreign_layout`` checks the shape, strides and bytes)."""
    if not isinstance(interface, dict):
        raise TypeError(f"{_CAI} must be a dict, not {type(interface).__name__}")
    version = interface.get("version")
    if type(version) is not int or version not in _CAI_VERSIONS:
        raise ValueError(f"{_CAI} 'version' is {reprlib.repr(version)}: pyctk reads versions 2 and 3")
    mask = interface.get("mask")
    if mask is not None:
        raise TypeError(f"pyctk does not take masked arrays: {_CAI} 'mask' is a {type(mask).__name__}, not None")
    dtype = _interface_dtype(interface.get("typestr"))
    pointer, readonly = _interface_data(interface.get("data"))
    layout = foreign_layout(_CAI, pointer, interface.get("shape"), interface.get("strides"), dtype.itemsize)
    stream = interface.get("stream")  # version 3; absent in 2
    if stream is not None and integer(stream, f"{_CAI} 'stream' must be None or an int") == 0:
        raise ValueError(
            f"{_CAI} has stream 0, which the interface disallows (1 is the legacy default stream, 2 the per-thread one)"
        )
    if not pointer:  # zero elements: no memory to find or to wait for
        return DeviceOperand(0, layout.shape, layout.strides, dtype, 0, readonly, x, None)
    memory, device = cudart.pointer_device(pointer)
    if memory not in _GPU_MEMORY:
        raise TypeError(f"{type(x).__name__}.{_CAI} points to host memory, not GPU memory")
    return DeviceOperand(pointer, layout.shape, layout.strides, dtype, device, readonly, x, stream)


_CAI = "__cuda_array_interface__"
# The versions pyctk reads: 3 (which added "stream") and 2 (what PyTorch gives); another is
# refused rather than guessed at.
_CAI_VERSIONS = (2, 3)


def _interface_dtype(typestr: Any) -> np.dtype:
    """The dtype of an interface's 'typestr' (NumPy's array-interface strings: "<f4")."""
    if not isinstance(typestr, str):
        raise TypeError(f"{_CAI} 'typestr' must be a str such as '<f4', not {type(typestr).__name__}")
    try:
        return supported_dtype(typestr)
    except (TypeError, ValueError) as error:  # NumPy's for what is no dtype, or pyctk's
        raise TypeError(f"{_CAI} 'typestr' is {reprlib.repr(typestr)}, which pyctk cannot read: {error}") from None


def _interface_data(data: Any) -> tuple[int, bool]:
    """(pointer, read-only) of an interface's 'data', a tuple (int, bool)."""
    if not (isinstance(data, tuple) and len(data) == 2 and isinstance(data[1], (bool, np.bool_))):
        raise TypeError(f"{_CAI} 'data' must be a tuple (pointer: int, read_only: bool), not {reprlib.repr(data)}")
    return integer(data[0], f"{_CAI} 'data' pointer must be an int"), bool(data[1])


def dlpack_operand(x: Any, stream: int = 0) -> DeviceOperand | None:
    """``x``'s data through DLPack, or None when DLPack says it is on the host.

    The producer is asked to order its work before ``stream``, a cudaStream_t value of the
    producer's device (0, the legacy default stream, is every device's).
    """
    device_type, device = _dlpack_device(x.__dlpack_device__(), "__dlpack_device__()")
    if device_type in _HOST_TYPES:  # known before any capsule is made
        return None
    # DLPack's stream numbers: 1 is the legacy default stream, which handle 0 also is. A
    # stream belongs to a device, so the producer's device is made current while it orders
    # its work before the stream (PyTorch refuses to export from another device).
    dlpack_stream = streams.LEGACY if stream == 0 else stream
    with cudart.on_device(device):
        try:
            capsule = x.__dlpack__(stream=dlpack_stream, max_version=dlpack.VERSION)
        except TypeError:  # a producer from before DLPack 1.0, without max_version
            capsule = x.__dlpack__(stream=dlpack_stream)
    return capsule_operand(capsule)


def capsule_operand(capsule: Any) -> DeviceOperand | None:
    """The data of a DLPack capsule, consumed; None, leaving it unconsumed, for host data."""
    info = dlpack.describe(capsule)
    device_type, device = _dlpack_device(info.device, "DLPack tensor 'device'")
    if device_type in _HOST_TYPES:
        return None
    if device_type not in _DEVICE_TYPES:
        raise BufferError(f"DLPack device type {device_type} is neither CUDA memory nor host memory")
    tensor = dlpack.consume(capsule)
    return DeviceOperand(info.pointer, info.shape, info.strides, info.dtype, device, info.readonly, tensor, None)


def _dlpack_device(device: Any, source: str) -> tuple[int, int]:
    """(device type, device index) as DLPack names a device, checked before a device is made
    current for it: a pair of ints, the index as any GPU index (``device_index``)."""
    if not (isinstance(device, tuple) and len(device) == 2):
        raise TypeError(f"{source} must be a tuple (device type, device id), not {reprlib.repr(device)}")
    device_type = integer(device[0], f"{source}: the device type must be an int")
    return device_type, device_index(device[1])
