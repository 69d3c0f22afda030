"""pyctk.matmul against numpy.matmul over generated calls (tests/support/strategies.py).

Where NumPy raises, pyctk raises the same exception type, before any GPU work. Where
NumPy succeeds, pyctk gives the same result (value, dtype, shape, scalar or array, ``out``
returned) on a GPU; without one it raises NoDriverError or NoDeviceError, which it can
only do once every check has passed, unless it needed no GPU (an empty result, k == 0).
Two documented differences: object arrays (TypeError: only NumPy can multiply them) and
bfloat16, computed and returned as ``np.result_type`` of the operands.

A second test runs the same comparison with the C call replaced by a NumPy emulation of
what gpumatmul.h specifies, so that pointers, transposes, leading dimensions, batch
strides, copies and writes into ``out`` are checked value by value without a GPU. A third
runs the same cases on GPU arrays (tests/support/gpu_arrays.py: DeviceArrays of the same strides)
on the GPU in host memory (tests/support/fake_cuda.py); test_matmul_properties_on_gpu.py runs them on a
GPU, with PyTorch's and CuPy's arrays too.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import pyctk
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import library as _library
from support import gemm_emulation
from support.matmul_against_numpy import QUIET, SETTINGS, check_against_numpy, check_on_gpu
from support.strategies import MatmulCase, matmul_cases


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
