"""backend="cublas" for the dtypes cuBLAS multiplies through cuBLASLt (libgpu/src/gemm/cublas_lt.c):
int8, summed in int32 by its IMMA kernels and kept to the low byte as NumPy wraps around, for n
and k multiples of 4 (UnsupportedError, naming the tiled backend, for the others), and
float8_e4m3fn and the mixed FP8 pairs into float32 on its FP8 kernels; every layout, which the library copies k-major
where cuBLASLt cannot read it; the FP8 sizes its kernels do not take (n not a multiple of 4, k
not of 16) and float8_e5m2 as float16 copies on cuBLAS's float16 tensor cores, into float32."""

from __future__ import annotations

import numpy as np
import pytest

import pyctk
from pyctk._matmul import options as _host_options
from support.float8_values import small_integers
from support.gpu_arrays import device_array

ml_dtypes = pytest.importorskip("ml_dtypes")  # CPython wheels only; the GPU machine has it

pytestmark = pytest.mark.gpu

E4M3, E5M2 = np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)
# (m, n, k): odd sizes, sizes off cuBLASLt's FP8 rule, and ones on it
SHAPES = [(1, 1, 1), (3, 5, 7), (17, 16, 16), (16, 17, 16), (64, 64, 24), (130, 260, 300), (257, 512, 1024)]
LAYOUTS = [(False, False), (False, True), (True, False), (True, True)]


def operand(host: np.ndarray, transposed: bool):
    """A GPU copy of `host`, stored transposed (its .T a view) or as it is."""
    return device_array(np.ascontiguousarray(host.T)).T if transposed else device_array(host)


def int8_values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """int8 over its whole range: the int32 sums pass 127 and must wrap as NumPy's do."""
    return rng.integers(-128, 128, shape).astype(np.int8)


@pytest.mark.parametrize("transposed", LAYOUTS, ids=str)
@pytest.mark.parametrize("m, n, k", SHAPES, ids=str)
def test_int8_is_numpys_wrapped_product(m, n, k, transposed):
    rng = np.random.default_rng(m * n * k)
    a, b = int8_values(rng, (m, k)), int8_values(rng, (k, n))
    if n % 4 or k % 4:  # cuBLASLt's IMMA rule
        with pytest.raises(pyctk.UnsupportedError, match="multiple of 4.*use backend tiled"):
            pyctk.matmul(operand(a, transposed[0]), operand(b, transposed[1]), backend="cublas")
        return
    result = pyctk.matmul(operand(a, transposed[0]), operand(b, transposed[1]), backend="cublas")
    assert result.dtype == np.int8
    np.testing.assert_array_equal(result.get(), np.matmul(a, b))


@pytest.mark.parametrize("batch, broadcast_b", [(1, False), (3, False), (3, True)])
def test_int8_batches_offsets_and_pitches(batch, broadcast_b):
    rng = np.random.default_rng(5)
    a = int8_values(rng, (batch, 40, 78))
    b = int8_values(rng, (1 if broadcast_b else batch, 80, 36))
    # k = 76 from an address 1 byte in, B's 32 columns of rows 36 wide, 2 bytes in: A is copied
    # to 16-byte rows, B transposed; C's rows of 33 bytes, 1 byte in
    gpu_a, gpu_b = device_array(a)[:, :, 1:77], device_array(b)[:, 2:78, 2:34]
    out = pyctk.zeros((batch, 40, 33), np.int8)[:, :, 1:]
    pyctk.matmul(gpu_a, gpu_b, out=out, backend="cublas")
    np.testing.assert_array_equal(out.get(), np.matmul(a[:, :, 1:77], b[:, 2:78, 2:34]))


def test_int8_sizes_off_the_rule_are_refused_before_any_work():
    a, b = np.ones((4, 6), np.int8), np.ones((6, 4), np.int8)
    with pytest.raises(pyctk.UnsupportedError, match="n=4 k=6"):
        pyctk.matmul(device_array(a), device_array(b), backend="cublas")
    np.testing.assert_array_equal(pyctk.matmul(device_array(a), device_array(b)).get(), a @ b)  # auto


def test_int8_host_arrays():
    rng = np.random.default_rng(6)
    a, b = int8_values(rng, (300, 500)), int8_values(rng, (500, 200))
    np.testing.assert_array_equal(pyctk.matmul(a, b, backend="cublas"), np.matmul(a, b))


def test_int8_host_tiles_keep_to_the_rule(monkeypatch):
    """A GPU memory limit that cuts C into tiles of columns: halving n = 1028 gives 514, then 257
    columns, which cuBLASLt refuses; the plan rounds tiles of a cuBLASLt product up to the
    multiple it takes (260 here), so every tile is multiplied and the product is NumPy's."""
    monkeypatch.setenv(_host_options.LIMIT_VARIABLE, "900K")
    rng = np.random.default_rng(7)
    a, b = int8_values(rng, (300, 500)), int8_values(rng, (500, 1028))
    np.testing.assert_array_equal(pyctk.matmul(a, b, backend="cublas"), np.matmul(a, b))


PAIRS = [(E4M3, E4M3), (E5M2, E5M2), (E4M3, E5M2), (E5M2, E4M3)]  # (A's, B's)
ON_CUBLASLT = [pair for pair in PAIRS if pair != (E5M2, E5M2)]  # cuBLASLt's FP8 kernels take these


@pytest.mark.parametrize("a_dtype, b_dtype", PAIRS, ids=str)
@pytest.mark.parametrize("transposed", LAYOUTS, ids=str)
@pytest.mark.parametrize("m, n, k", SHAPES, ids=str)
def test_float8_is_numpys_float32_product(a_dtype, b_dtype, m, n, k, transposed):
    rng = np.random.default_rng(m + n * k)
    a, b = small_integers(rng, (m, k), a_dtype), small_integers(rng, (k, n), b_dtype)
    result = pyctk.matmul(operand(a, transposed[0]), operand(b, transposed[1]), backend="cublas")
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result.get(), np.matmul(a, b))


@pytest.mark.parametrize("broadcast_b", [False, True])
def test_float8_batches_and_c_off_16_bytes(broadcast_b):
    rng = np.random.default_rng(7)
    a = small_integers(rng, (2, 48, 64), E4M3)
    b = small_integers(rng, (1 if broadcast_b else 2, 64, 32), E4M3)
    out = pyctk.zeros((2, 48, 33), np.float32)[:, :, 1:]  # C 4 bytes in, rows of 132 bytes
    pyctk.matmul(device_array(a), device_array(b), out=out, backend="cublas")
    np.testing.assert_array_equal(out.get(), np.matmul(a, b))


def float8_sum_tensor_cores_round(
    k: int, a_dtype: np.dtype = E4M3, b_dtype: np.dtype = E4M3
) -> tuple[np.ndarray, np.ndarray, float]:
    """A 1 x k by k x 4 product whose float32 sum is exact, 1024 + 31/64, but needs 17 bits:
    FP8 tensor cores, whose sums keep about 14, round it; copies summed in float32 do not.
    Its values (256, 4, 1/8) are exact in both FP8 types."""
    a = np.zeros((1, k), np.float32)
    b = np.zeros((k, 4), np.float32)
    a[0, 0], b[0] = 256, 4
    a[0, 1:32], b[1:32] = 1 / 8, 1 / 8
    return a.astype(a_dtype), b.astype(b_dtype), 1024 + 31 / 64


@pytest.mark.parametrize("a_dtype, b_dtype", ON_CUBLASLT, ids=str)
def test_float8_on_cublaslts_kernels_where_they_take_the_sizes(a_dtype, b_dtype):
    """k = 128, n = 4: cuBLASLt's FP8 kernels, which round the sum as the tensor cores do (on an
    H200 they gave 1024: the 31/64 lost); k = 136 (not a multiple of 16): float16 copies,
    whose products float16 tensor cores sum in float32, exact. The answer tells the routes
    apart."""
    a, b, exact = float8_sum_tensor_cores_round(128, a_dtype, b_dtype)
    on_tensor_cores = pyctk.matmul(device_array(a), device_array(b), backend="cublas").get()
    assert np.all(on_tensor_cores != exact) and np.all(np.abs(on_tensor_cores - exact) <= 2.0**-10 * exact)
    a, b, exact = float8_sum_tensor_cores_round(136, a_dtype, b_dtype)
    np.testing.assert_array_equal(pyctk.matmul(device_array(a), device_array(b), backend="cublas").get(), exact)


def test_float8_random_values_within_the_tensor_cores_rounding():
    rng = np.random.default_rng(9)
    a = (rng.standard_normal((256, 1024)) * 8).astype(E4M3)
    b = (rng.standard_normal((1024, 128)) * 8).astype(E4M3)
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    result = pyctk.matmul(device_array(a), device_array(b), backend="cublas").get()
    assert np.all(np.abs(result - wide_a @ wide_b) <= 2.0**-12 * (np.abs(wide_a) @ np.abs(wide_b)))


@pytest.mark.parametrize("dtype", [E4M3, E5M2], ids=str)
def test_float8_copies_on_float16_tensor_cores_keep_float32_sums(dtype):
    """float8_e5m2, and float8_e4m3fn of a k cuBLASLt does not take (1000), by cuBLAS: float16
    copies, their sums float32's: within float32's rounding of 1000 terms (the k = 136 case
    above tells these copies from FP8 tensor cores)."""
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((192, 1000)) * 8).astype(dtype)
    b = (rng.standard_normal((1000, 96)) * 8).astype(dtype)
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    result = pyctk.matmul(device_array(a), device_array(b), backend="cublas").get()
    assert result.dtype == np.float32
    assert np.all(np.abs(result - wide_a @ wide_b) <= 2.0**-16 * (np.abs(wide_a) @ np.abs(wide_b)))


@pytest.mark.parametrize("k", [24, 128])
def test_auto_takes_the_fp8_kernels_where_cublas_would_copy(k):
    """AUTO: pyctk's FP8 kernels where cuBLASLt's do not take the sizes (k = 24), else the
    faster of the two by the measured table; NumPy's answer either way."""
    rng = np.random.default_rng(k)
    a, b = small_integers(rng, (64, k), E4M3), small_integers(rng, (k, 64), E4M3)
    np.testing.assert_array_equal(pyctk.matmul(device_array(a), device_array(b)).get(), np.matmul(a, b))


@pytest.mark.parametrize("a_dtype, b_dtype", PAIRS, ids=str)
def test_the_kernels_multiply_every_fp8_pair_on_fp8_tensor_cores_on_hopper(a_dtype, b_dtype):
    """backend="tiled": on compute capability 9.0 pyctk's FP8 wgmma kernels, whose 128-term
    sums round as cuBLASLt's do (float8_sum_tensor_cores_round), for one FP8 type and for the
    mixed pairs alike; elsewhere float32 copies, exact."""
    a, b, exact = float8_sum_tensor_cores_round(128, a_dtype, b_dtype)
    result = pyctk.matmul(device_array(a), device_array(b), backend="tiled").get()
    if pyctk.info()["devices"][0]["compute_capability"] == "9.0":
        assert np.all(result != exact) and np.all(np.abs(result - exact) <= 2.0**-10 * exact)
    else:
        np.testing.assert_array_equal(result, exact)
