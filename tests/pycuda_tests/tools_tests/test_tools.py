"""pyctk.tools on the CPU: PyCUDA's C-type registry, declarator parsing, bitlog2, the default
device's choice and the per-context caches (the driver's answers faked where a GPU would give
them; the default context on a GPU is in tests/pycuda_tests/driver_tests/test_driver_on_gpu.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pyctk.driver as cuda
import pyctk.tools as tools
from pyctk._cuda import driver_api as _driver_api
from pyctk._pycuda.contexts import default_context as _default_context
from pyctk._pycuda.kernels import c_types as _c_types


@pytest.mark.parametrize(
    "dtype, ctype",
    [
        (np.bool_, "bool"),
        (np.int8, "signed char"),
        (np.uint8, "unsigned char"),
        (np.int16, "short"),
        (np.uint16, "unsigned short"),
        (np.int32, "int"),
        (np.uint32, "unsigned"),
        (np.int64, "long"),
        (np.uint64, "unsigned long"),
        (np.float32, "float"),
        (np.float64, "double"),
        (np.complex64, "pycuda::complex<float>"),
        (np.complex128, "pycuda::complex<double>"),
    ],
)
def test_dtype_to_ctype_is_pycudas(dtype, ctype):
    assert tools.dtype_to_ctype(dtype) == ctype
    assert tools.get_or_register_dtype(ctype) == np.dtype(dtype)


def test_fp_tex_hack_and_unmapped_dtypes():
    assert tools.dtype_to_ctype(np.float64, with_fp_tex_hack=True) == "fp_tex_double"
    assert tools.dtype_to_ctype(np.int32, with_fp_tex_hack=True) == "int"
    with pytest.raises(ValueError, match="unable to map dtype 'float16'"):
        tools.dtype_to_ctype(np.float16)


@pytest.fixture
def registry(monkeypatch):
    """The process's registry, restored after the test."""
    monkeypatch.setattr(_c_types, "_to_names", {k: list(v) for k, v in _c_types._to_names.items()})
    monkeypatch.setattr(_c_types, "_to_dtype", dict(_c_types._to_dtype))


def test_registering_a_struct(registry):
    point = np.dtype([("x", np.float32), ("n", np.int32)])  # (x, y floats would be vec.float2)
    assert tools.get_or_register_dtype("point", point) == point
    assert tools.dtype_to_ctype(point) == "point" and tools.get_or_register_dtype("point") == point
    argument = tools.parse_c_arg("point p")
    assert isinstance(argument, tools.ScalarArg) and argument.struct_char == "8s"
    with pytest.raises(RuntimeError, match="already registered as"):
        tools.get_or_register_dtype("point", np.float64)
    with pytest.raises(KeyError, match="no dtype is registered for the C type 'half'"):
        tools.get_or_register_dtype("half")
    with pytest.warns(DeprecationWarning), pytest.raises(RuntimeError, match="alias_ok"):
        tools.register_dtype(np.float32, "real")
    with pytest.warns(DeprecationWarning):
        tools.register_dtype(np.float32, "real", alias_ok=True)
    assert tools.get_or_register_dtype("real") == np.float32 and tools.dtype_to_ctype(np.float32) == "float"


@pytest.mark.parametrize(
    "declaration, kind, dtype, name, struct_char, declarator",
    [
        ("float *x", tools.VectorArg, np.float32, "x", "P", "float *x"),
        ("const double *__restrict__ y", tools.VectorArg, np.float64, "y", "P", "double *y"),
        ("unsigned int n", tools.ScalarArg, np.uint32, "n", "I", "unsigned n"),
        ("volatile long int z[]", tools.VectorArg, np.int64, "z", "P", "long *z"),
        ("short signed int s", tools.ScalarArg, np.int16, "s", "h", "short s"),
        ("pycuda::complex<float> c", tools.ScalarArg, np.complex64, "c", "F", "pycuda::complex<float> c"),
    ],
)
def test_parse_c_arg(declaration, kind, dtype, name, struct_char, declarator):
    argument = tools.parse_c_arg(declaration)
    assert type(argument) is kind and argument.dtype == np.dtype(dtype) and argument.name == name
    assert argument.struct_char == tools.get_arg_type(declaration) == struct_char
    assert argument.declarator() == declarator


@pytest.mark.parametrize(
    "declaration, match",
    [
        ("half h", "unknown type in 'half h'"),
        ("float", "couldn't parse"),
        ("int *", "couldn't parse"),
    ],
)
def test_parse_c_arg_errors(declaration, match):
    with pytest.raises(ValueError, match=match):
        tools.parse_c_arg(declaration)


def test_bitlog2():
    assert [tools.bitlog2(n) for n in (1, 2, 3, 16, 17, 2**40 + 1)] == [0, 1, 1, 4, 4, 40]
    assert cuda.bitlog2 is tools.bitlog2  # PyCUDA has it in pycuda.driver too
    with pytest.raises(ValueError, match="positive"):
        tools.bitlog2(0)


class FakeDevice:
    """Device numbers, and which of them can have a context."""

    def __init__(self, number):
        self.number = number

    count_value, failing = 3, set()

    @classmethod
    def count(cls):
        return cls.count_value


@pytest.fixture
def devices(monkeypatch, tmp_path):
    monkeypatch.setattr(_default_context, "Device", FakeDevice)
    monkeypatch.delenv("CUDA_DEVICE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    FakeDevice.count_value, FakeDevice.failing = 3, set()

    def make(device):
        if device.number in FakeDevice.failing:
            raise cuda.Error("cannot", "CUDA_ERROR_INVALID_DEVICE", 101)
        return f"context on {device.number}"

    return make, tmp_path


def test_make_default_context_takes_the_chosen_or_the_first_device_that_works(devices, monkeypatch):
    make, home = devices
    assert tools.make_default_context(make) == "context on 0"
    FakeDevice.failing = {0, 1}
    assert tools.make_default_context(make) == "context on 2"
    (home / ".cuda_device").write_text("1\n")
    FakeDevice.failing = set()
    assert tools.make_default_context(make) == "context on 1"
    monkeypatch.setenv("CUDA_DEVICE", "2")  # before the file
    assert tools.make_default_context(make) == "context on 2"
    with pytest.warns(DeprecationWarning):
        assert tools.get_default_device().number == 2


def test_make_default_context_errors(devices, monkeypatch):
    make, _ = devices
    FakeDevice.failing = {0, 1, 2}
    with pytest.raises(RuntimeError, match="no context could be made on any of the 3 devices") as raised:
        tools.make_default_context(make)
    assert str(raised.value).count(": cannot") == 3  # each device's own error
    assert "device 2: " in str(raised.value) and "$CUDA_DEVICE" in str(raised.value)
    FakeDevice.count_value = 0
    with pytest.raises(RuntimeError, match="sees no device"):
        tools.make_default_context(make)
    monkeypatch.setenv("CUDA_DEVICE", "first")
    with pytest.raises(ValueError, match="must be a number, not 'first'"):
        tools.make_default_context(make)


@pytest.fixture
def default_context_events(monkeypatch):
    """What making, popping and forgetting a default context did, in order (no CUDA)."""
    events = []

    class Context:
        def pop(self):
            events.append("popped")

    monkeypatch.setattr(_default_context, "make_default_context", lambda: events.append("made") or Context())
    monkeypatch.setattr(_default_context, "clear_context_caches", lambda: events.append("cleared"))
    return events


@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")  # "cuda", PyCUDA's mark
def test_mark_cuda_test_runs_the_test_in_a_default_context_popped_after(default_context_events):
    events = default_context_events

    @tools.mark_cuda_test
    def test_kernel(x, y=1):
        """What it tests."""
        events.append(("ran", x, y))
        return x + y

    assert [mark.name for mark in test_kernel.pytestmark] == ["cuda"]
    assert test_kernel.__name__ == "test_kernel" and test_kernel.__doc__ == "What it tests."
    assert test_kernel(2, y=3) == 5
    assert events == ["made", ("ran", 2, 3), "popped", "cleared"]

    @tools.mark_cuda_test
    def test_failing():
        raise AssertionError("the test's own failure")

    events.clear()
    with pytest.raises(AssertionError, match="own failure"):
        test_failing()
    assert events == ["made", "popped", "cleared"]  # popped all the same


def test_init_cuda_context_fixture_yields_in_a_default_context_popped_after(default_context_events):
    events = default_context_events
    fixture = tools.init_cuda_context_fixture()  # as PyCUDA's test files use it: yield from it
    assert events == []
    next(fixture)
    assert events == ["made"]
    with pytest.raises(StopIteration):
        next(fixture)
    assert events == ["made", "popped", "cleared"]
    fixture = tools.init_cuda_context_fixture()
    next(fixture)
    with pytest.raises(AssertionError, match="failed"):  # the test failed: popped all the same
        fixture.throw(AssertionError("failed"))
    assert events[-2:] == ["popped", "cleared"]


def test_context_dependent_memoize(monkeypatch):
    current = {"context": 0x10}
    monkeypatch.setattr(_driver_api, "current_context", lambda: current["context"])
    calls = []

    @tools.context_dependent_memoize
    def compiled(name, option=None):
        calls.append((name, option))
        return object()

    first = compiled("k", option=1)
    assert compiled("k", option=1) is first and len(calls) == 1
    current["context"] = 0x20  # another context: made again there
    assert compiled("k", option=1) is not first and len(calls) == 2
    current["context"] = 0x10
    assert compiled("k", option=1) is first
    tools.clear_context_caches()
    assert compiled("k", option=1) is not first and len(calls) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compiled.__name__ == "compiled"
