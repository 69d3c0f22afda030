"""Which product the C call is asked for when FP8 operands multiply, without a GPU: two FP8
operands, of one type or one of each, go to libgpumatmul as they are (their own
gpumatmul_dtype, or a mixed pair's product type, float32 C); FP8 beside another dtype is cast
to NumPy's loop dtype first. The C call is NumPy's emulation of gpumatmul.h
(tests/support/gemm_emulation.py), on host arrays and on GPU arrays in host memory
(tests/support/fake_cuda.py); test_float8_on_gpu.py runs the products on a GPU."""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pytest

import pyctk
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import library as _library
from pyctk._matmul import dtypes as _dtypes
from support import gemm_emulation
from support.float8_values import small_integers
from support.gpu_arrays import device_array

ml_dtypes = pytest.importorskip("ml_dtypes")  # CPython wheels only

E4M3, E5M2 = np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)
# (A's dtype, B's dtype, the gpumatmul_dtype of the product read as it is: gpumatmul.h)
AS_THEY_ARE = [(E4M3, E4M3, 15), (E5M2, E5M2, 16), (E4M3, E5M2, 17), (E5M2, E4M3, 18)]
HIGHEST, TF32, FP16_ACCUMULATE = 0, 1, 2
AUTO, TILED, CUBLAS = 0, 1, 2


@pytest.mark.parametrize("a_dtype, b_dtype, code", AS_THEY_ARE, ids=str)
@pytest.mark.parametrize("backend", [AUTO, TILED, CUBLAS])
@pytest.mark.parametrize("precision", [HIGHEST, TF32])
def test_fp8_operands_are_read_as_they_are(a_dtype, b_dtype, code, backend, precision):
    loop = np.matmul.resolve_dtypes((a_dtype, b_dtype, None))[2]
    assert loop == np.float32
    assert _dtypes.operand_code(a_dtype, b_dtype, loop, backend, precision) == (a_dtype, b_dtype, code)


@pytest.mark.parametrize("a_dtype, b_dtype", [(E4M3, np.dtype(np.float32)), (np.dtype(np.float16), E5M2)], ids=str)
def test_fp8_beside_another_dtype_is_cast_to_the_loop_dtype(a_dtype, b_dtype):
    float32 = np.dtype(np.float32)
    assert _dtypes.operand_code(a_dtype, b_dtype, float32, AUTO, HIGHEST) == (float32, float32, 0)


def test_a_precision_no_backend_computes_fp8_at_is_left_to_the_loop_dtype():
    """At fp16_accumulate the library computes no FP8 product: the operands are the loop
    dtype's, float32, whose own refusal (pyctk.UnsupportedError) names where the precision
    applies."""
    float32 = np.dtype(np.float32)
    assert _dtypes.operand_code(E4M3, E5M2, float32, AUTO, FP16_ACCUMULATE) == (float32, float32, 0)
    with pytest.raises(pyctk.UnsupportedError, match="precision fp16_accumulate applies to float16"):
        pyctk.matmul(np.ones((2, 2), E4M3), np.ones((2, 2), E5M2), precision="fp16_accumulate")


@pytest.mark.parametrize("a_dtype, b_dtype, code", AS_THEY_ARE, ids=str)
def test_host_products_reach_the_c_call_as_they_are(a_dtype, b_dtype, code):
    rng = np.random.default_rng(code)
    a, b = small_integers(rng, (3, 20, 30), a_dtype), small_integers(rng, (30, 10), b_dtype)
    asked = []
    real_call = _library.call

    def emulated(name, *args):
        if name != "gpumatmul_gemm_host_multi":
            return real_call(name, *args)
        _, _, desc, a_address, b_address, c_address, _ = args
        asked.append(desc.dtype)
        return gemm_emulation.gemm(desc, a_address, b_address, c_address)

    with (
        mock.patch.object(_library, "call", emulated),
        mock.patch.object(_contexts, "contexts", lambda devices: None),
        mock.patch.object(np, "ascontiguousarray", side_effect=AssertionError("an operand was cast")),
    ):
        result = pyctk.matmul(a, b)
    assert asked == [code]
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, np.matmul(a, b))


@pytest.mark.parametrize("a_dtype, b_dtype, code", AS_THEY_ARE, ids=str)
@pytest.mark.parametrize("transposed", list(itertools.product([False, True], repeat=2)), ids=str)
def test_gpu_products_reach_the_c_call_as_they_are(cuda, monkeypatch, a_dtype, b_dtype, code, transposed):
    rng = np.random.default_rng(code)
    a, b = small_integers(rng, (20, 30), a_dtype), small_integers(rng, (30, 10), b_dtype)
    gpu_a = device_array(np.ascontiguousarray(a.T)).T if transposed[0] else device_array(a)
    gpu_b = device_array(np.ascontiguousarray(b.T)).T if transposed[1] else device_array(b)
    asked = []
    emulate = gemm_emulation.gemm

    def recorded(desc, *addresses):
        asked.append(desc.dtype)
        return emulate(desc, *addresses)

    def refuse(*args, **kwargs):
        raise AssertionError("an operand was cast")

    monkeypatch.setattr(gemm_emulation, "gemm", recorded)
    monkeypatch.setattr(pyctk.DeviceArray, "astype", refuse)
    result = pyctk.matmul(gpu_a, gpu_b)
    assert asked == [code]
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result.get(), np.matmul(a, b))
