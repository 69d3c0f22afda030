"""ml_dtypes' FP8 types (float8_e4m3fn, float8_e5m2) on the GPU: DeviceArrays hold them bit for
bit, and products of FP8 operands, host or GPU, alone, mixed with each other or with other
dtypes, come out as ``numpy.matmul``'s with ml_dtypes installed: computed in float32, returned
as float32, every shape and stride rule as for the other dtypes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import pyctk
from support.gpu_arrays import device_array

ml_dtypes = pytest.importorskip("ml_dtypes")  # CPython wheels only; the GPU machine has it

pytestmark = pytest.mark.gpu

FLOAT8 = [np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)]
PARTNERS = (
    FLOAT8 + [np.dtype(d) for d in (np.float32, np.float16, np.int8, np.float64)] + [np.dtype(ml_dtypes.bfloat16)]
)


def small_integers(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Values -4 .. 4, exact in every dtype here: float32 sums of their products are exact, so
    any order of addition gives NumPy's result bit for bit."""
    return rng.integers(-4, 5, shape).astype(dtype)


@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_every_bit_pattern_round_trips(dtype):
    host = np.arange(256, dtype=np.uint8).view(dtype)
    array = pyctk.asarray(host)
    assert array.dtype == dtype and array.shape == (256,)
    assert array.get().view(np.uint8).tobytes() == host.view(np.uint8).tobytes()
    assert array[::-3].get().view(np.uint8).tobytes() == host[::-3].view(np.uint8).tobytes()


@pytest.mark.parametrize("a_dtype, b_dtype", list(itertools.product(FLOAT8, PARTNERS)), ids=str)
@pytest.mark.parametrize("where", ["host", "gpu"])
def test_products_are_numpys_float32_products(a_dtype, b_dtype, where):
    rng = np.random.default_rng(a_dtype.num * 7 + b_dtype.num)
    a, b = small_integers(rng, (3, 70, 90), a_dtype), small_integers(rng, (90, 50), b_dtype)
    expected = np.matmul(a, b)  # float32 (float64 beside float64)
    if b_dtype.name == "bfloat16":  # pyctk's one departure (docs/guide/numpy.md): np.result_type's
        # type, bfloat16, the exact float32 sums rounded once
        expected = expected.astype(np.result_type(a_dtype, b_dtype))
    operands = (a, b) if where == "host" else (device_array(a), device_array(b))
    result = pyctk.matmul(*operands)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(result.get() if where == "gpu" else result), expected)


@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_random_values_within_float32_rounding(dtype):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((257, 1000)) * 8).astype(dtype)
    b = (rng.standard_normal((1000, 129)) * 8).astype(dtype)
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    bound = 1e-5 * (np.abs(wide_a) @ np.abs(wide_b))  # float32's rounding of 1000 terms, amply
    host, gpu = pyctk.matmul(a, b), pyctk.matmul(device_array(a), device_array(b)).get()
    for result in (host, gpu):
        assert result.dtype == np.float32
        assert np.all(np.abs(result - wide_a @ wide_b) <= bound)


@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_layouts_vectors_and_out(dtype):
    rng = np.random.default_rng(4)
    a, b = small_integers(rng, (2, 40, 30), dtype), small_integers(rng, (30, 20), dtype)
    gpu_a, gpu_b = device_array(a), device_array(b)
    # transposed and strided views, a broadcast stack, 1-D operands
    np.testing.assert_array_equal(pyctk.matmul(gpu_b.T, gpu_a[0].T).get(), np.matmul(b.T, a[0].T))
    np.testing.assert_array_equal(pyctk.matmul(gpu_a[:, ::2], gpu_b[:, ::-1]).get(), np.matmul(a[:, ::2], b[:, ::-1]))
    vector = small_integers(rng, (30,), dtype)
    product = pyctk.matmul(device_array(vector), device_array(vector))
    assert product.shape == () and product.dtype == np.float32
    assert float(product.get()) == float(np.matmul(vector, vector))
    out = pyctk.empty((2, 40, 20), np.float32)
    assert pyctk.matmul(gpu_a, gpu_b, out=out) is out
    np.testing.assert_array_equal(out.get(), np.matmul(a, b))


@pytest.mark.parametrize("target", FLOAT8 + [np.dtype(np.float32), np.dtype(np.float16)], ids=str)
def test_astype_to_and_from_float8_is_ml_dtypes_cast(target):
    rng = np.random.default_rng(5)
    source = (rng.standard_normal(4096) * 10.0 ** rng.integers(-6, 6, 4096)).astype(np.float32)
    for host in (source, source.astype(FLOAT8[0]), source.astype(FLOAT8[1])):
        with np.errstate(all="ignore"):
            expected = host.astype(target)
        result = pyctk.asarray(host).astype(target).get()
        same = result.view(np.uint8 if target.itemsize == 1 else f"u{target.itemsize}") == expected.view(
            np.uint8 if target.itemsize == 1 else f"u{target.itemsize}"
        )
        same |= np.isnan(result.astype(np.float64)) & np.isnan(expected.astype(np.float64))
        assert same.all(), (host.dtype, target, host[~same][:5], result[~same][:5], expected[~same][:5])


def test_dlpack_hands_float8_to_torch_and_back():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    host = small_integers(rng, (4, 6), FLOAT8[0])
    tensor = torch.from_dlpack(pyctk.asarray(host))
    assert tensor.dtype == torch.float8_e4m3fn and tensor.is_cuda
    back = pyctk.from_dlpack(tensor)
    assert back.dtype == FLOAT8[0]
    assert back.get().view(np.uint8).tobytes() == host.view(np.uint8).tobytes()
    e5m2 = torch.ones(3, 5, device="cuda", dtype=torch.float8_e5m2)
    assert pyctk.from_dlpack(e5m2).dtype == FLOAT8[1]
