"""pyctk.matmul against numpy.matmul on one generated call (support.strategies): NumPy's
exception type, or NumPy's values, dtype and shape; on host arrays and on GPU arrays."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import event
from hypothesis.control import currently_in_test_context

import pyctk
from pyctk._cuda import contexts as _contexts
from support.gpu_arrays import on_gpu, to_host
from support.gpu_presence import gpu_unavailable_reason
from support.strategies import MatmulCase

# Values are small integers (tests/support/strategies.py), so every product is exact; the
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
