"""pyctk.matmul's argument checking: NumPy's errors for bad shapes, clear errors for what is
not supported yet. All of it happens before any GPU work, so it runs everywhere."""

from __future__ import annotations

import numpy as np
import pytest

import pyctk

F32 = np.float32


def operands(shape_a, shape_b, dtype=F32):
    return np.ones(shape_a, dtype), np.ones(shape_b, dtype)


# The invalid shapes NumPy (and CuPy's tests) reject, from shared/cuda-packaging-facts.md §5.
@pytest.mark.parametrize("shape_a, shape_b", [
    ((3, 2), ()), ((), (3, 2)), ((), ()), ((0, 2), (3, 0)), ((2, 3), (4, 5)), ((1, 4), (3, 1)),
    ((5, 3, 1), (3, 1, 4)), ((3, 2, 3), (3, 2, 4)), ((3, 2), (1,)), ((0, 1, 1), (2, 1, 1)),
])
def test_shapes_numpy_rejects_raise_value_error(shape_a, shape_b):
    a, b = operands(shape_a, shape_b)
    with pytest.raises(ValueError):
        np.matmul(a, b)
    with pytest.raises(ValueError, match="matmul"):
        pyctk.matmul(a, b)


@pytest.mark.parametrize("shape_a, shape_b", [
    ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 2, 3), (3, 4)), ((1, 5, 3, 2), (6, 1, 2, 4)),
    ((1, 3, 3), (10, 1, 3, 1)),
])
def test_one_and_n_dimensional_operands_are_not_supported_yet(shape_a, shape_b):
    a, b = operands(shape_a, shape_b)
    with pytest.raises(pyctk.UnsupportedError, match="2-D"):
        pyctk.matmul(a, b)
    assert issubclass(pyctk.UnsupportedError, NotImplementedError)


@pytest.mark.parametrize("dtype_a, dtype_b", [
    (np.int64, np.int64), (np.float16, np.float16), (np.complex64, np.complex64),
    (np.bool_, np.bool_), (np.float32, np.complex128), (object, object),
])
def test_results_other_than_float32_and_float64_raise_type_error(dtype_a, dtype_b):
    a, b = np.ones((2, 2), dtype_a), np.ones((2, 2), dtype_b)
    with pytest.raises(TypeError, match="float32 and float64|do not combine"):
        pyctk.matmul(a, b)


def test_unknown_backend_names_the_choices():
    with pytest.raises(ValueError, match="'auto', 'cublas', 'tiled'"):
        pyctk.matmul(*operands((2, 2), (2, 2)), backend="cutlass")


@pytest.mark.parametrize("out, error, match", [
    (np.empty((2, 3), F32), ValueError, r"shape \(2, 3\).*\(2, 2\)"),
    (np.empty((2, 2), np.int32), TypeError, "same_kind"),
    ([[0.0, 0.0], [0.0, 0.0]], TypeError, "numpy.ndarray"),
])
def test_bad_out_is_rejected(out, error, match):
    with pytest.raises(error, match=match):
        pyctk.matmul(*operands((2, 2), (2, 2)), out=out)


def test_read_only_out_is_rejected():
    out = np.empty((2, 2), F32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        pyctk.matmul(*operands((2, 2), (2, 2)), out=out)


def test_no_driver_is_a_clear_cuda_error(needs_no_driver):
    with pytest.raises(pyctk.NoDriverError) as caught:
        pyctk.matmul(*operands((2, 2), (2, 2)))
    message = str(caught.value)
    assert "GPUMATMUL_ERROR_NO_DRIVER" in message and "libcuda.so.1" in message
    assert "Install the NVIDIA driver" in message
    assert isinstance(caught.value, pyctk.CudaError) and caught.value.status == "GPUMATMUL_ERROR_NO_DRIVER"
