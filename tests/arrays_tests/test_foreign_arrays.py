"""Other libraries' arrays are checked before pyctk computes with them: hostile CUDA Array
Interface dicts and DLPack capsules are refused (ValueError or TypeError naming the field) or
read exactly, and a refused one never reaches CUDA (pyctk/_arrays/layout.py's
foreign_layout, through interop and dlpack). No GPU is needed: every check comes first."""

from __future__ import annotations

import ctypes
import sys

import numpy as np
import pytest
from hypothesis import given, settings

import pyctk
from pyctk import gpuarray
from pyctk._arrays import dlpack as _dlpack
from pyctk._arrays import interop as _interop
from pyctk._arrays import layout as _layout
from pyctk._arrays.arguments import integer
from pyctk._cuda import cudart as _cudart
from support import hostile_arrays as hostile

needs_pythonapi = pytest.mark.skipif(
    not hasattr(ctypes, "pythonapi"), reason="DLPack capsules need ctypes.pythonapi (not on PyPy)"
)


@pytest.fixture
def asked(monkeypatch):
    """The pointers asked of CUDA (cudaPointerGetAttributes), each answered 'device 1's memory'."""
    pointers: list[int] = []

    def pointer_device(pointer):
        pointers.append(pointer)
        return _cudart.MEMORY_DEVICE, 1

    monkeypatch.setattr(_cudart, "pointer_device", pointer_device)
    return pointers


@settings(max_examples=600, deadline=None)
@given(hostile.interfaces())
def test_a_cuda_array_interface_is_read_exactly_or_refused_before_cuda(interface):
    pointers: list[int] = []
    expected = hostile.expected_interface(interface)
    with pytest.MonkeyPatch.context() as patch:  # (a fixture would last for all examples)
        patch.setattr(_cudart, "pointer_device", lambda p: pointers.append(p) or (_cudart.MEMORY_DEVICE, 1))
        if expected is None:
            with pytest.raises((ValueError, TypeError)):
                _interop.device_operand(hostile.Interface(interface))
            assert pointers == []  # refused before CUDA was asked anything
            return
        operand = _interop.device_operand(hostile.Interface(interface))
    assert (operand.shape, operand.strides) == (expected.shape, expected.strides)
    if expected.low == expected.high:  # no elements
        assert pointers == ([operand.pointer] if operand.pointer else [])
    else:
        assert pointers == [operand.pointer] == [interface["data"][0]]
        assert _layout.extent(operand.pointer, operand.shape, operand.strides, operand.dtype.itemsize) == (
            expected.low,
            expected.high,
        )


@needs_pythonapi
@settings(max_examples=600, deadline=None)
@given(hostile.tensor_fields())
def test_a_dlpack_capsule_is_read_exactly_or_refused_unconsumed(fields):
    capsule, keep = hostile.capsule(fields)
    expected = hostile.expected_tensor(fields)
    if expected is None:
        with pytest.raises((ValueError, TypeError)):
            _interop.capsule_operand(capsule)
        assert "used_" not in repr(capsule)  # left to its producer
        return
    operand = _interop.capsule_operand(capsule)
    assert "used_dltensor" in repr(capsule)
    assert (operand.shape, operand.strides, operand.device) == (expected.shape, expected.strides, fields.device_id)
    assert operand.pointer == fields.data + fields.byte_offset
    if expected.low != expected.high:
        extent = _layout.extent(operand.pointer, operand.shape, operand.strides, operand.dtype.itemsize)
        assert extent == (expected.low, expected.high)
    del operand, keep


@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        ({"version": None}, ValueError, "'version' is None: pyctk reads versions 2 and 3"),
        ({"version": 4}, ValueError, "'version' is 4"),
        ({"version": True}, ValueError, "'version' is True"),
        ({"typestr": "<U2"}, TypeError, "'typestr' is '<U2', which pyctk cannot read"),
        ({"typestr": "nonsense"}, TypeError, "'typestr' is 'nonsense'"),
        ({"data": [0x7000, False]}, TypeError, "'data' must be a tuple (pointer: int, read_only: bool), not [28672"),
        ({"data": (0x7000, 0)}, TypeError, "'data' must be a tuple"),
        ({"data": (True, False)}, TypeError, "'data' pointer must be an int, not bool (True)"),
        ({"data": (0, False)}, ValueError, "'data' is NULL (0), but its shape (2, 3) has elements"),
        ({"mask": np.ones(3)}, TypeError, "'mask' is a ndarray, not None"),
        ({"shape": (2, True)}, TypeError, "'shape' entry 1 must be an int, not bool (True)"),
        ({"shape": (2, -3)}, ValueError, "'shape' entry 1 is -3: extents must be from 0 to 2**63 - 1"),
        ({"shape": (2**32, 2**32)}, ValueError, "has more than 2**63 - 1 elements"),
        ({"shape": (1,) * 65, "strides": None}, ValueError, "has ndim 65: pyctk takes 0 to 64 axes"),
        ({"shape": [1] * 10**6}, ValueError, "has ndim 1000000"),  # counted before any entry is read
        ({"shape": [1] * 64, "strides": [8] * 10**6}, ValueError, "has ndim 1000000"),
        ({"strides": (8,)}, ValueError, "'strides' (8,) has 1 entries for the 2 axes"),
        ({"strides": (2**63, 8)}, ValueError, "'strides' entry 0 is 9223372036854775808 bytes"),
        ({"strides": (2**63 - 8, 8)}, ValueError, f"bytes would run from 28672 to {28672 + 2**63 + 16}"),
        ({"data": (16, False), "strides": (-24, 8)}, ValueError, "bytes would run from -8 to 40"),  # below 0
        ({"stream": 0}, ValueError, "stream 0, which the interface disallows"),
        ({"stream": True}, TypeError, "'stream' must be None or an int, not bool"),
    ],
)
def test_each_refusal_names_the_field_and_the_value(asked, change, error, words):
    interface = {"version": 3, "typestr": "<f8", "data": (0x7000, False), "shape": (2, 3), "strides": None, **change}
    with pytest.raises(error) as raised:
        _interop.device_operand(hostile.Interface(interface))
    assert "__cuda_array_interface__" in str(raised.value) and words in str(raised.value)
    assert asked == []


def test_negative_strides_are_read_as_numpy_reads_them(asked):
    host = np.arange(12.0).reshape(3, 4)[::-1, ::-2]
    interface = {"version": 3, "typestr": "<f8", "shape": host.shape, "strides": host.strides, "stream": None}
    interface["data"] = (host.__array_interface__["data"][0], False)
    operand = _interop.device_operand(hostile.Interface(interface))
    base = np.arange(12.0)  # the bytes it spans: all of the 3 x 4 block but its first column
    low, high = _layout.extent(operand.pointer, operand.shape, operand.strides, 8)
    start = host.__array_interface__["data"][0] - 11 * 8  # the block's first element
    assert (low - start, high - start) == (8, base.nbytes)


@pytest.mark.parametrize("make", [pyctk.asarray, gpuarray.asarray], ids=["pyctk.asarray", "gpuarray.asarray"])
def test_the_public_imports_refuse_before_the_driver(make):
    """No CUDA here: a check that came after a CUDA call would be a NoDriverError instead."""
    interface = {"version": 3, "typestr": "<f4", "data": (0x7000, False), "shape": (2**40, 2**40), "strides": (8, 4)}
    with pytest.raises(ValueError, match="has more than 2"):
        make(hostile.Interface(interface))
    with pytest.raises(ValueError, match="'data' is NULL"):
        make(hostile.Interface({**interface, "shape": (2, 2), "data": (0, False)}))


class Producer:
    """A DLPack producer that says its data is on ``device`` and hands out ``capsule``."""

    def __init__(self, device, capsule=None):
        self.device, self.capsule = device, capsule

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        return self.capsule


@pytest.mark.parametrize(
    ("device", "error", "words"),
    [
        ((_dlpack.kDLCUDA, -1), ValueError, "not -1: GPUs count from 0"),
        ((_dlpack.kDLCUDA, True), TypeError, "not bool (True)"),
        ((True, 0), TypeError, "__dlpack_device__(): the device type must be an int"),
        ([_dlpack.kDLCUDA, 0], TypeError, "must be a tuple (device type, device id)"),
    ],
)
def test_a_dlpack_device_is_checked_before_it_is_made_current(device, error, words):
    for make in (pyctk.from_dlpack, gpuarray.from_dlpack):
        with pytest.raises(error) as raised:
            make(Producer(device))
        assert words in str(raised.value)


@needs_pythonapi
@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        ({"ndim": 65, "shape": (1,), "strides": None}, ValueError, "DLPack tensor has ndim 65"),
        ({"ndim": -1, "shape": (1,), "strides": None}, ValueError, "has ndim -1"),
        ({"shape": None}, ValueError, "'shape' is NULL, but its ndim is 2"),
        ({"dtype": (2, 32, 4)}, TypeError, "'dtype' is code 2, 32 bits, 4 lanes"),
        ({"data": 0}, ValueError, "'data' is NULL (0), but its shape (2, 3) has elements"),
        ({"byte_offset": 2**64 - 8}, ValueError, "an address is from 0 to 2**64 - 1"),
        ({"shape": (-1, 3)}, ValueError, "'shape' entry 0 is -1"),
        ({"strides": (2**62, 1)}, ValueError, "'strides' entry 0 is 36893488147419103232 bytes"),
        ({"device_id": -2}, ValueError, "not -2: GPUs count from 0"),
    ],
)
def test_each_dlpack_refusal_names_the_field(change, error, words):
    fields = hostile.TensorFields(True, 0x7000, 0, 0, (2, 64, 1), 2, (2, 3), None)._replace(**change)
    capsule, keep = hostile.capsule(fields)
    with pytest.raises(error) as raised:
        _interop.capsule_operand(capsule)
    assert words in str(raised.value)
    assert "used_" not in repr(capsule)


@needs_pythonapi
def test_a_hostile_capsule_is_refused_through_from_dlpack_too(cuda):
    """GPUArray's and DeviceArray's from_dlpack read the capsule by the same checks (the fake
    GPU makes the producer's device current)."""
    for make in (pyctk.from_dlpack, gpuarray.from_dlpack):
        fields = hostile.TensorFields(False, 0x7000, 0, 0, (2, 32, 1), 2, (2**40, 2**40), (1, 1))
        capsule, keep = hostile.capsule(fields)
        with pytest.raises(ValueError, match="has more than 2"):
            make(Producer((_dlpack.kDLCUDA, 0), capsule))


def test_one_integer_rule_for_device_indices_sizes_and_descriptions():
    for value in (True, np.bool_(False), 1.0, "1", None):
        with pytest.raises(TypeError, match="must be an int, not"):
            integer(value, "x must be an int")
    assert integer(np.uint8(7), "x") == 7 and type(integer(np.uint8(7), "x")) is int


def test_an_interface_that_cannot_name_its_dtype_is_passed_over():
    """torch's FP8 tensors raise KeyError from __cuda_array_interface__ (it has no type string
    for them): the array is then read by DLPack where it has it, and is not a GPU array
    otherwise, rather than the KeyError reaching the caller."""

    class NoTypeString:
        @property
        def __cuda_array_interface__(self):
            raise KeyError("float8_e4m3fn")

    assert _interop.device_operand(NoTypeString()) is None


def test_ml_dtypes_names_say_how_to_install_it(monkeypatch):
    from pyctk._arrays import dtypes as _dtypes

    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # import ml_dtypes raises ImportError
    with pytest.raises(TypeError, match="pip install ml_dtypes"):
        _dtypes.named("float8_e5m2")
    assert _dtypes.named("float16") == np.float16
