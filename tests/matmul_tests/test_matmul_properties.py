"""pyctk.matmul against numpy.matmul over generated calls (tests/strategies.py).

Where NumPy raises, pyctk raises the same exception type, before any GPU work. Where
NumPy succeeds, pyctk gives the same result (value, dtype, shape, scalar or array, ``out``
returned) on a GPU; without one it raises NoDriverError or NoDeviceError, which it can
only do once every check has passed, unless it needed no GPU (an empty result, k == 0).
Two documented differences: object arrays (TypeError: only NumPy can multiply them) and
bfloat16, computed and returned as ``np.result_type`` of the operands.

A second test runs the same comparison with the C call replaced by a NumPy emulation of
what gpumatmul.h specifies, so that pointers, transposes, leading dimensions, batch
strides, copies and writes into ``out`` are checked value by value without a GPU. A third
runs the same cases on GPU arrays (tests/gpu_arrays.py: DeviceArrays of the same strides)
on the GPU in host memory (tests/fake_cuda.py); test_gpu_matmul_properties.py runs them on a
GPU, with PyTorch's and CuPy's arrays too.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis.control import currently_in_test_context

import gemm_emulation
import pyctk
from conftest import gpu_unavailable_reason
from gpu_arrays import on_gpu, to_host
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import library as _library
from strategies import MatmulCase, matmul_cases

# Values are small integers (tests/strategies.py), so every product is exact; the
# tolerance covers only a cast of the result into out.
TOLERANCE = {"f": 1e-6, "c": 1e-6}  # by dtype kind; integers and bool compare exactly
# NumPy 1.x casts 0-d arrays by their value (NEP 50 ended that in 2.0): for a 0-d operand with
# a cast that fails by type, it may report the operand's shape (ValueError) first.
VALUE_BASED_CASTING = np.lib.NumpyVersion(np.__version__) < "2.0.0"


def call(function, case: MatmulCase):
    """(result, exception) of ``function(a, b, **kwargs)``, one of them None."""
    try:
        return function(case.a, case.b, **case.kwargs), None
    except Exception as error:  # noqa: BLE001 - comparing exceptions is the point
        return None, error


def is_bfloat16(dtype: np.dtype) -> bool:
    return dtype.name == "bfloat16"


def computes_in_object(case: MatmulCase) -> bool:
    """Whether NumPy multiplies Python objects: dtype=object, or an object operand (object
    promotes every other dtype) unless dtype= selects another loop."""
    if "dtype" in case.kwargs:
        return np.dtype(case.kwargs["dtype"]) == object
    return np.dtype(object) in (case.a.dtype, case.b.dtype)


def out_array(case: MatmulCase) -> np.ndarray | None:
    out = case.kwargs.get("out")
    return out[0] if isinstance(out, tuple) else out


def expected_dtype(case: MatmulCase, numpy_dtype: np.dtype) -> np.dtype:
    """NumPy's result dtype, but np.result_type for bfloat16 operands (pyctk._matmul.dtypes.loop_dtype)."""
    a, b = case.a.dtype, case.b.dtype
    if "dtype" in case.kwargs or not (is_bfloat16(a) or is_bfloat16(b)):
        return numpy_dtype
    try:
        return np.result_type(a, b)
    except TypeError:  # no promotion defined: NumPy's loop
        return numpy_dtype


def assert_same_values(result, expected) -> None:
    assert np.shape(result) == np.shape(expected)
    kind = np.asarray(expected).dtype.kind
    if kind in TOLERANCE:
        np.testing.assert_allclose(
            np.asarray(result, dtype=np.complex128),
            np.asarray(expected, dtype=np.complex128),
            rtol=TOLERANCE[kind],
            atol=TOLERANCE[kind],
        )
    else:
        np.testing.assert_array_equal(result, expected)


def statistic(text: str) -> None:
    """Count ``text`` in Hypothesis's statistics, when a Hypothesis test is running."""
    if currently_in_test_context():
        event(text)


def check_against_numpy(case: MatmulCase) -> None:
    numpy_case = case.copy()  # NumPy writes its own out (and a or b where out is one of them)
    expected, numpy_error = call(np.matmul, numpy_case)
    if numpy_error is not None:
        statistic(f"NumPy raises {type(numpy_error).__name__}")
        expected = type(numpy_error)
        if VALUE_BASED_CASTING and 0 in (case.a.ndim, case.b.ndim):
            expected = (ValueError, TypeError)
        with mock.patch.object(_contexts, "context", side_effect=AssertionError("GPU work started")):
            with pytest.raises(expected):
                pyctk.matmul(case.a, case.b, **case.kwargs)
        return
    result, error = call(pyctk.matmul, case)
    statistic(f"pyctk {'raises ' + type(error).__name__ if error else 'returns'}")
    if computes_in_object(case):  # documented: NumPy multiplies Python objects, a GPU cannot
        assert isinstance(error, TypeError) and "numpy.matmul" in str(error), error
        return
    if isinstance(error, (pyctk.NoDriverError, pyctk.NoDeviceError)):
        assert gpu_unavailable_reason() is not None, error  # no GPU, and every check passed
        return
    if error is not None:
        raise error
    if out_array(case) is not None:
        assert result is out_array(case)
        assert_same_values(result, out_array(numpy_case))
        return
    assert isinstance(result, np.ndarray) == isinstance(expected, np.ndarray)  # 1-D @ 1-D: scalars
    assert result.dtype == expected_dtype(case, expected.dtype)
    assert_same_values(result, expected)


def check_on_gpu(case: MatmulCase, library: str) -> None:
    """``case`` on ``library``'s GPU arrays gives NumPy's exception type, or NumPy's values,
    dtype and shape (in ``out`` where it is given: the very array)."""
    gpu_case = on_gpu(case, library)
    if gpu_case is None:
        statistic(f"{library} cannot hold the case")
        return
    numpy_case = case.copy()
    expected, numpy_error = call(np.matmul, numpy_case)
    result, error = call(pyctk.matmul, gpu_case)
    statistic(f"NumPy {'raises ' + type(numpy_error).__name__ if numpy_error else 'returns'}")
    if numpy_error is not None or computes_in_object(case):
        expected_error = TypeError if numpy_error is None else type(numpy_error)
        assert isinstance(error, expected_error), (error, numpy_error)
        return
    if error is not None:
        raise error
    out = out_array(gpu_case)
    if out is not None:
        assert result is out
        assert_same_values(to_host(out), out_array(numpy_case))
        return
    assert result.dtype == expected_dtype(case, np.asarray(expected).dtype)
    assert_same_values(to_host(result), expected)


# NumPy warns as it does when a cast drops imaginary parts (casting="unsafe"): so does pyctk.
SETTINGS = dict(max_examples=200, deadline=None)
QUIET = pytest.mark.filterwarnings("ignore:Casting complex values to real")


@QUIET
@settings(**SETTINGS)
@given(matmul_cases())
def test_same_exception_or_result_as_numpy(case: MatmulCase):
    check_against_numpy(case)


REAL_CALL = _library.call


def emulated_call(name: str, *args) -> None:
    """gpumatmul_gemm_host_multi done by NumPy (gemm_emulation); other calls are real."""
    if name != "gpumatmul_gemm_host_multi":
        return REAL_CALL(name, *args)
    _, _, desc, a, b, c, _ = args
    return gemm_emulation.gemm(desc, a, b, c)


@QUIET
@settings(**SETTINGS)
@given(matmul_cases(others=False))
def test_same_result_as_numpy_through_an_emulated_c_call(case: MatmulCase):
    with (
        mock.patch.object(_library, "call", emulated_call),
        mock.patch.object(_contexts, "contexts", lambda devices: None),
    ):
        check_against_numpy(case)


AXES_CASES = [  # (a's shape, b's shape, axes, out's shape or None)
    ((3, 4, 2), (4, 5), [(0, 1), (0, 1), (1, 2)], None),
    ((2, 3, 4), (4, 5), [(-2, -1), (0, 1), (-1, -2)], None),
    ((2, 3, 4), (4, 5), [(1, 2), (0, 1), (0, 2)], (3, 2, 5)),  # out with its matrices moved
    ((2, 3, 4), (4, 5), [(1, 2), (0, 1), (0, 2)], (2, 3, 5)),  # ... of the wrong shape
    ((3,), (2, 3, 4), [(0,), (1, 2), (1,)], None),
    ((3,), (2, 3, 4), [0, (2, 1), 0], None),  # k does not match
    ((3,), (3,), [0, 0, ()], None),
    ((3,), (3,), [0, 0], None),  # the output's entry is required
    ((3, 4), (4,), [(0, 1), 0, 0], None),
    ((2, 3, 4), (4, 5), [(1, 2), (0, 1), (1, 2, 0)], None),
    ((2, 3, 4), (4, 5), [(5, 2), (0, 1), (1, 2)], None),
    ((2, 3, 4), (4, 5), [(1, 1), (0, 1), (1, 2)], None),
    ((2, 3, 4), (4, 5), [[1, 2], (0, 1), (1, 2)], None),
    ((2, 3, 4), (4, 5), [0, (0, 1), (1, 2)], None),
    ((2, 3, 4), (4, 5), ((1, 2), (0, 1), (1, 2)), None),
    ((3,), (3,), [0, 0, 0], None),
    ((3,), (3,), [0, 0, [0]], None),
    ((), (3,), "x", None),  # 0-d first, as NumPy checks
]


@QUIET
@pytest.mark.parametrize("shape_a, shape_b, axes, out_shape", AXES_CASES)
def test_axes_give_numpys_result_or_exception(shape_a, shape_b, axes, out_shape):
    rng = np.random.default_rng(7)
    a, b = rng.integers(-2, 3, shape_a).astype(np.float32), rng.integers(-2, 3, shape_b).astype(np.float32)
    kwargs = {"axes": axes} | ({} if out_shape is None else {"out": np.zeros(out_shape, np.float32)})
    with (
        mock.patch.object(_library, "call", emulated_call),
        mock.patch.object(_contexts, "contexts", lambda devices: None),
    ):
        check_against_numpy(MatmulCase(a, b, kwargs))


@pytest.mark.parametrize(
    "keywords", [{"axis": 0}, {"axis": None}, {"keepdims": True}, {"keepdims": False}, {"axes": None}]
)
def test_axis_keepdims_and_axes_none_are_refused_as_numpy_refuses_them(keywords):
    a, b = np.ones((2, 3)), np.ones((3, 2))
    with pytest.raises(TypeError) as numpy_error:
        np.matmul(a, b, **keywords)
    with mock.patch.object(_contexts, "context", side_effect=AssertionError("GPU work started")):
        with pytest.raises(type(numpy_error.value)):
            pyctk.matmul(a, b, **keywords)


@QUIET
@settings(**SETTINGS, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=matmul_cases(others=False))
def test_gpu_arrays_give_numpys_result_or_exception(cuda, case: MatmulCase):
    check_on_gpu(case, "pyctk")
