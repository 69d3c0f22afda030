"""Hostile descriptions of GPU arrays, for the checks of what other libraries declare
(pyctk/_arrays/layout.py's foreign_layout, through interop and dlpack): Hypothesis
strategies of CUDA Array Interface dicts and DLPack capsule fields, DLPack capsules built
with ctypes from any fields, and what pyctk must make of each, computed here on its own.

The expectations do not call pyctk: they restate the rules (docs/guide/gpu-arrays.md, "What
pyctk checks of a foreign array") in Python's ints, and find the bytes an array can touch
from its corners (every element's address is element 0's plus a sum of index * stride, so
the lowest and highest are at corners of the index box), not from pyctk's sums.
"""

from __future__ import annotations

import ctypes
import itertools
import math
from typing import Any, NamedTuple

import numpy as np
from hypothesis import strategies as st

from pyctk._arrays import dlpack as _dlpack

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
MAX_NDIM = 64
MISSING = object()  # a field left out of the dict

# typestr -> item size: those pyctk reads; any other is refused.
READABLE_TYPESTRS = {"<f4": 4, "<f8": 8, "<f2": 2, "|i1": 1, "<u8": 8, "<c16": 16, "|b1": 1}
# DLPack (code, bits) -> item size (one lane); bfloat16 (4, 16) is left out: it needs ml_dtypes.
READABLE_DL_DTYPES = {
    (0, 8): 1, (0, 16): 2, (0, 32): 4, (0, 64): 8,
    (1, 8): 1, (1, 16): 2, (1, 32): 4, (1, 64): 8,
    (2, 16): 2, (2, 32): 4, (2, 64): 8,
    (5, 64): 8, (5, 128): 16,
    (6, 8): 1,
}  # fmt: skip


class Expected(NamedTuple):
    """What pyctk must read of a description it accepts."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]  # bytes
    low: int  # lowest address touched (== high: none)
    high: int  # one past the highest


def is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    return tuple(itemsize * math.prod(max(n, 1) for n in shape[axis + 1 :]) for axis in range(len(shape)))


def touched(pointer: int, shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> tuple[int, int]:
    """[lowest, one past the highest) address an array touches, from the corners of its index box
    (the arrays drawn here have at most 8 axes that are longer than 1: 256 corners)."""
    if 0 in shape:
        return pointer, pointer
    axes = [(n, s) for n, s in zip(shape, strides) if n > 1]
    addresses = [
        pointer + sum(i * s for i, (_, s) in zip(corner, axes))
        for corner in itertools.product(*[(0, n - 1) for n, _ in axes])
    ]
    return min(addresses), max(addresses) + itemsize


def expected_layout(pointer: int, shape: Any, strides: Any, itemsize: int) -> Expected | None:
    """What the layout rules make of a description, or None where they refuse it."""
    if not isinstance(shape, (tuple, list)) or not all(is_int(n) for n in shape):
        return None
    dims = tuple(int(n) for n in shape)
    if len(dims) > MAX_NDIM or any(not 0 <= n <= INT64_MAX for n in dims):
        return None
    if math.prod(n for n in dims if n) > INT64_MAX:
        return None
    if strides is None:
        steps = c_strides(dims, itemsize)
    elif not isinstance(strides, (tuple, list)) or not all(is_int(s) for s in strides) or len(strides) != len(dims):
        return None
    else:
        steps = tuple(int(s) for s in strides)
    if any(not INT64_MIN <= s <= INT64_MAX for s in steps) or not 0 <= pointer < 2**64:
        return None
    if 0 in dims:
        return Expected(dims, steps, pointer, pointer)
    low, high = touched(pointer, dims, steps, itemsize)
    if pointer == 0 or low < 0 or high > INT64_MAX:
        return None
    return Expected(dims, steps, low, high)


# ---------------------------------------------------------------------------
# The CUDA Array Interface.

_numbers = st.one_of(
    st.integers(0, 6),
    st.integers(-3, 3),
    st.integers(-(2**65), 2**65),
    st.sampled_from([2**31, 2**62, INT64_MAX, 2**63, INT64_MIN, 2**64 - 1, 2**64]),
)
_entries = st.one_of(
    _numbers,
    _numbers.filter(lambda n: INT64_MIN <= n <= INT64_MAX).map(np.int64),
    st.booleans(),
    st.sampled_from([1.0, "2", None, np.bool_(True), np.float64(3.0)]),
)


@st.composite
def _shape_and_strides(draw: Any) -> tuple[Any, Any]:
    ndim = draw(st.integers(0, 6))
    small = st.one_of(st.integers(0, 4), _entries)  # (mostly small: arrays that are read)
    shape: Any = draw(st.lists(small, min_size=ndim, max_size=ndim).map(draw(st.sampled_from([tuple, list]))))
    shape = draw(st.one_of(st.just(shape), st.just(shape), st.sampled_from([None, "3", 3, (1,) * 65, (1,) * 64])))
    length = len(shape) if isinstance(shape, tuple) and len(shape) <= 6 else ndim
    strides = draw(
        st.one_of(
            st.none(),
            st.lists(st.one_of(st.integers(-64, 64), _entries), min_size=length, max_size=length).map(tuple),
            st.lists(_entries, max_size=7).map(tuple),
            st.sampled_from(["8", 8]),
        )
    )
    return shape, strides


_pointers = st.one_of(
    st.integers(1, 2**40), st.just(0), st.integers(-(2**65), 2**65), st.sampled_from([2**63 - 8, 2**64 - 1])
)


@st.composite
def interfaces(draw: Any) -> dict[str, Any]:
    """A ``__cuda_array_interface__`` dict, each field valid or hostile."""
    shape, strides = draw(_shape_and_strides())
    readonly = st.one_of(st.booleans(), st.sampled_from([0, 1, None, np.bool_(False)]))
    fields = {
        "version": draw(st.sampled_from([3, 3, 2, 1, 0, 4, 3.0, "3", True, None, MISSING])),
        "typestr": draw(st.sampled_from([*READABLE_TYPESTRS, "<U2", "xyz", ">f8", "<f4,<f4", 4, None, MISSING])),
        "data": draw(
            st.one_of(
                st.tuples(_pointers, readonly),
                st.tuples(_pointers, readonly),
                st.sampled_from([None, [0x7000, False], (0x7000,), (0x7000, False, 0), (None, False), (1.5, False)]),
            )
        ),
        "shape": shape,
        "strides": strides,
        "mask": draw(st.sampled_from([MISSING, MISSING, None, object()])),
        "stream": draw(st.sampled_from([MISSING, None, 1, 2, 0x99, 0, True, "1", 1.0])),
    }
    return {name: value for name, value in fields.items() if value is not MISSING}


def expected_interface(interface: dict[str, Any]) -> Expected | None:
    """What pyctk must read of ``interface``, or None where it must refuse it."""
    version, typestr, data = interface.get("version"), interface.get("typestr"), interface.get("data")
    if type(version) is not int or version not in (2, 3) or interface.get("mask") is not None:
        return None
    if not isinstance(typestr, str) or typestr not in READABLE_TYPESTRS:
        return None
    if not (isinstance(data, tuple) and len(data) == 2 and is_int(data[0]) and isinstance(data[1], (bool, np.bool_))):
        return None
    stream = interface.get("stream")
    if stream is not None and (not is_int(stream) or stream == 0):
        return None
    return expected_layout(int(data[0]), interface.get("shape"), interface.get("strides"), READABLE_TYPESTRS[typestr])


class Interface:
    """An object that describes itself by ``interface``."""

    def __init__(self, interface: dict[str, Any]) -> None:
        self.__cuda_array_interface__ = interface


# ---------------------------------------------------------------------------
# DLPack capsules.

_int64s = st.one_of(st.integers(0, 4), st.integers(-3, 3), st.integers(INT64_MIN, INT64_MAX))
_uint64s = st.one_of(st.just(0), st.integers(1, 2**40), st.integers(0, 2**64 - 1), st.just(2**64 - 1))


class TensorFields(NamedTuple):
    """The fields of a DLPack tensor, as a producer would write them."""

    versioned: bool
    data: int
    byte_offset: int
    device_id: int
    dtype: tuple[int, int, int]  # code, bits, lanes
    ndim: int
    shape: tuple[int, ...] | None  # None: a NULL pointer
    strides: tuple[int, ...] | None  # None: NULL (C order)


@st.composite
def tensor_fields(draw: Any) -> TensorFields:
    """The fields of a DLPack tensor on CUDA device ``device_id``, each valid or hostile."""
    ndim = draw(st.one_of(st.integers(0, 5), st.sampled_from([-1, MAX_NDIM + 1, 2**31 - 1, -(2**31)])))
    length = ndim if 0 <= ndim <= 5 else 0
    shape = draw(st.one_of(st.lists(st.one_of(st.integers(0, 4), _int64s), min_size=length, max_size=length)))
    strides = draw(st.one_of(st.none(), st.lists(_int64s, min_size=length, max_size=length).map(tuple)))
    dl_dtype = st.one_of(
        st.sampled_from([(code, bits, 1) for code, bits in READABLE_DL_DTYPES]),
        st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 2**16 - 1)),
    )
    return TensorFields(
        versioned=draw(st.booleans()),
        data=draw(_uint64s),
        byte_offset=draw(st.one_of(st.just(0), _uint64s)),
        device_id=draw(st.one_of(st.just(0), st.integers(-(2**31), 2**31 - 1))),
        dtype=draw(dl_dtype),
        ndim=ndim,
        shape=draw(st.one_of(st.just(tuple(shape)), st.just(tuple(shape)), st.none())),
        strides=strides,
    )


def expected_tensor(fields: TensorFields) -> Expected | None:
    """What pyctk must read of a tensor of ``fields``, or None where it must refuse it."""
    code, bits, lanes = fields.dtype
    itemsize = READABLE_DL_DTYPES.get((code, bits)) if lanes == 1 else None
    if itemsize is None or not 0 <= fields.ndim <= MAX_NDIM or fields.device_id < 0:
        return None
    if fields.ndim and fields.shape is None:
        return None
    shape = fields.shape or ()
    strides = None if fields.strides is None else tuple(s * itemsize for s in fields.strides)
    return expected_layout(fields.data + fields.byte_offset, shape, strides, itemsize)


def capsule(fields: TensorFields) -> tuple[Any, list[Any]]:
    """A DLPack capsule (kDLCUDA) of ``fields``, with no deleter or destructor, and what must
    outlive it (the structures it points into)."""
    structure = _dlpack.DLManagedTensorVersioned if fields.versioned else _dlpack.DLManagedTensor
    managed = structure()
    if fields.versioned:
        managed.version = _dlpack.DLPackVersion(*_dlpack.VERSION)
    tensor = managed.dl_tensor
    keep: list[Any] = [managed]
    for name, values in (("shape", fields.shape), ("strides", fields.strides)):
        if values is not None:
            array = (ctypes.c_int64 * max(len(values), 1))(*values)
            keep.append(array)
            setattr(tensor, name, ctypes.cast(array, ctypes.POINTER(ctypes.c_int64)))
    tensor.data = fields.data or None
    tensor.byte_offset = fields.byte_offset
    tensor.device = _dlpack.DLDevice(_dlpack.kDLCUDA, fields.device_id)
    tensor.dtype = _dlpack.DLDataType(*fields.dtype)
    tensor.ndim = fields.ndim
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    name = b"dltensor_versioned" if fields.versioned else b"dltensor"
    return new(ctypes.addressof(managed), name, None), keep
