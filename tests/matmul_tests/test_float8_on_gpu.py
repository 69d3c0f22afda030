"""ml_dtypes' FP8 types (float8_e4m3fn, float8_e5m2) on the GPU: DeviceArrays hold them bit for
bit, and products of FP8 operands, host or GPU, alone, mixed with each other or with other
dtypes, come out as ``numpy.matmul``'s with ml_dtypes installed: computed in float32, returned
as float32, every shape and stride rule as for the other dtypes. Two FP8 operands, host or GPU,
of one type or the two, multiply as they are, on FP8 tensor cores on Hopper."""

from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest

import pyctk
from support.float8_values import small_integers
from support.gpu_arrays import device_array

ml_dtypes = pytest.importorskip("ml_dtypes")  # CPython wheels only; the GPU machine has it

pytestmark = pytest.mark.gpu

FLOAT8 = [np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)]
FLOAT8_PAIRS = list(itertools.product(FLOAT8, FLOAT8))  # (A's, B's): one type, or the two mixed
PARTNERS = (
    FLOAT8 + [np.dtype(d) for d in (np.float32, np.float16, np.int8, np.float64)] + [np.dtype(ml_dtypes.bfloat16)]
)


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
        # type, bfloat16, the exact float32 sums rounded once, where ml_dtypes promotes the pair
        # (0.5 did; 0.7 promotes no FP8 type with bfloat16, and NumPy's float32 loop stands)
        try:
            expected = expected.astype(np.result_type(a_dtype, b_dtype))
        except TypeError:  # DTypePromotionError
            pass
    operands = (a, b) if where == "host" else (device_array(a), device_array(b))
    result = pyctk.matmul(*operands)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(result.get() if where == "gpu" else result), expected)


@pytest.mark.parametrize("a_dtype, b_dtype", FLOAT8_PAIRS, ids=str)
def test_random_values_within_float32_rounding(a_dtype, b_dtype):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((257, 1000)) * 8).astype(a_dtype)
    b = (rng.standard_normal((1000, 129)) * 8).astype(b_dtype)
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    magnitude = np.abs(wide_a) @ np.abs(wide_b)
    host, gpu = pyctk.matmul(a, b), pyctk.matmul(device_array(a), device_array(b)).get()
    assert host.dtype == gpu.dtype == np.float32
    # Host and GPU operands alike: on FP8 tensor cores each 128 terms are summed keeping about
    # 14 bits: 4e-5 at most was measured on an H200, by pyctk and by cuBLASLt (torch._scaled_mm)
    # alike; float32 copies (precision="tf32", below) err less than 1e-5
    for result in (host, gpu):
        assert np.all(np.abs(result - wide_a @ wide_b) <= 2.0**-12 * magnitude)


@pytest.mark.parametrize("a_dtype, b_dtype", FLOAT8_PAIRS, ids=str)
def test_layouts_vectors_and_out(a_dtype, b_dtype):
    rng = np.random.default_rng(4)
    a, b = small_integers(rng, (2, 40, 30), a_dtype), small_integers(rng, (30, 20), b_dtype)
    gpu_a, gpu_b = device_array(a), device_array(b)
    # transposed and strided views, a broadcast stack, 1-D operands
    np.testing.assert_array_equal(pyctk.matmul(gpu_b.T, gpu_a[0].T).get(), np.matmul(b.T, a[0].T))
    np.testing.assert_array_equal(pyctk.matmul(gpu_a[:, ::2], gpu_b[:, ::-1]).get(), np.matmul(a[:, ::2], b[:, ::-1]))
    vector = small_integers(rng, (30,), a_dtype)
    other = vector.astype(b_dtype)
    product = pyctk.matmul(device_array(vector), device_array(other))
    assert product.shape == () and product.dtype == np.float32
    assert float(product.get()) == float(np.matmul(vector, other))
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


# Products of two FP8 GPU arrays (one type, or the two) read them as they are (FP8 wgmma on Hopper, which
# tiles C by 128 x 256 and k by 128, each slab's sums promoted to float32; elsewhere float32
# copies made by the library): sizes off every tile, each transpose (B along n and A along m
# are transposed for the k-major kernel), offsets off TMA's 16 bytes, odd pitches, batches.
SHAPES = [(1, 1, 1), (5, 3, 1), (129, 257, 17), (128, 256, 128), (255, 130, 300), (2, 600, 7), (257, 513, 129)]


@pytest.mark.parametrize("transposed", [(False, False), (False, True), (True, False), (True, True)], ids=str)
@pytest.mark.parametrize("m, n, k", SHAPES, ids=str)
@pytest.mark.parametrize("a_dtype, b_dtype", FLOAT8_PAIRS, ids=str)
def test_sizes_off_the_tiles_and_every_transpose(a_dtype, b_dtype, m, n, k, transposed):
    rng = np.random.default_rng(m * n + k)
    a, b = small_integers(rng, (m, k), a_dtype), small_integers(rng, (k, n), b_dtype)
    gpu_a = device_array(np.ascontiguousarray(a.T)).T if transposed[0] else device_array(a)
    gpu_b = device_array(np.ascontiguousarray(b.T)).T if transposed[1] else device_array(b)
    result = pyctk.matmul(gpu_a, gpu_b)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result.get(), np.matmul(a, b))


@pytest.mark.parametrize("offset", [1, 3, 16])
@pytest.mark.parametrize("a_dtype, b_dtype", FLOAT8_PAIRS, ids=str)
def test_offsets_and_odd_pitches(a_dtype, b_dtype, offset):
    rng = np.random.default_rng(offset)
    a, b = small_integers(rng, (130, 300 + offset), a_dtype), small_integers(rng, (260, 301 + offset), b_dtype)
    # k = 300, pitches 300 + offset and 301 + offset, addresses offset and offset + 1 bytes in
    gpu_a, gpu_b = device_array(a)[:, offset:], device_array(b)[:, offset + 1 :].T
    np.testing.assert_array_equal(pyctk.matmul(gpu_a, gpu_b).get(), np.matmul(a[:, offset:], b[:, offset + 1 :].T))


@pytest.mark.parametrize("broadcast_b", [False, True])
@pytest.mark.parametrize("a_dtype, b_dtype", FLOAT8_PAIRS, ids=str)
def test_strided_and_broadcast_batches(a_dtype, b_dtype, broadcast_b):
    rng = np.random.default_rng(7)
    a = small_integers(rng, (3, 140, 260), a_dtype)
    b = small_integers(rng, (260, 270) if broadcast_b else (3, 260, 270), b_dtype)
    np.testing.assert_array_equal(pyctk.matmul(device_array(a), device_array(b)).get(), np.matmul(a, b))


@pytest.mark.parametrize("a_dtype, b_dtype", FLOAT8_PAIRS, ids=str)
def test_gpu_products_of_fp8_make_no_float32_copies(monkeypatch, a_dtype, b_dtype):
    rng = np.random.default_rng(8)
    a, b = small_integers(rng, (64, 96), a_dtype), small_integers(rng, (96, 32), b_dtype)
    gpu_a, gpu_b = device_array(a), device_array(b)

    def refuse(*args, **kwargs):
        raise AssertionError("the product cast an FP8 operand")

    monkeypatch.setattr(pyctk.DeviceArray, "astype", refuse)
    np.testing.assert_array_equal(pyctk.matmul(gpu_a, gpu_b).get(), np.matmul(a, b))


def test_sums_of_long_k_stay_float32_sums():
    """Each 128 terms of k are summed on the tensor cores, then added in float32: a sum that the
    tensor cores' own running sum (about 14 bits) would lose stays within float32's rounding
    of 128-term partial sums. Every term of row 0 is 1 but 1/64 where k is odd: exact in
    float32, and in each 128-term sum, but not past 2^14 of a running sum."""
    dtype = FLOAT8[0]
    k = 65536
    a = np.ones((1, k), dtype)
    b = np.ones((k, 1), np.float32)
    b[1::2] = 1 / 64
    b = b.astype(dtype)
    result = pyctk.matmul(device_array(a), device_array(b)).get()
    assert float(result[0, 0]) == k / 2 + k / 2 / 64


def test_random_values_long_k():
    rng = np.random.default_rng(9)
    a = (rng.standard_normal((256, 8192)) * 8).astype(FLOAT8[0])
    b = (rng.standard_normal((8192, 512)) * 8).astype(FLOAT8[0])
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    exact, magnitude = wide_a @ wide_b, np.abs(wide_a) @ np.abs(wide_b)
    error = np.abs(pyctk.matmul(device_array(a), device_array(b)).get() - exact) / magnitude
    assert error.max() <= 2.0**-12  # 1.1e-5 measured on an H200, as cuBLASLt's


@pytest.mark.parametrize("a_dtype, b_dtype", FLOAT8_PAIRS, ids=str)
def test_host_products_of_fp8_make_no_float32_copies(monkeypatch, a_dtype, b_dtype):
    """Host FP8 operands reach the library as they are (its host functions run the product
    whole on the GPU): NumPy casts none of them to float32 first."""
    rng = np.random.default_rng(12)
    a, b = small_integers(rng, (64, 96), a_dtype), small_integers(rng, (96, 32), b_dtype)
    expected = np.matmul(a, b)
    cast = np.ascontiguousarray

    def refuse_casts(x, dtype=None, **kwargs):
        assert dtype is None or np.dtype(dtype) == x.dtype, "the product cast an FP8 operand"
        return cast(x, dtype, **kwargs)

    monkeypatch.setattr(np, "ascontiguousarray", refuse_casts)
    np.testing.assert_array_equal(pyctk.matmul(a, b), expected)


@pytest.mark.parametrize(
    "code, a_dtype, b_dtype",
    [(15, FLOAT8[0], FLOAT8[0]), (17, FLOAT8[0], FLOAT8[1]), (18, FLOAT8[1], FLOAT8[0])],
    ids=str,
)
def test_the_host_entry_point_multiplies_fp8_whole_keeping_c_between_its_rows(code, a_dtype, b_dtype):
    """gpumatmul_gemm_host with an FP8 dtype (float8_e4m3fn, and the two pairs'): A, B and C
    (ldc = 3 > n = 2) up to the GPU, the product, C back; what lies between C's rows comes back
    as it was."""
    from pyctk._cuda import contexts as _contexts
    from pyctk._cuda import library as _library

    lib = _library.library()
    desc = _library.GemmDesc(0, code, 0, 0, 0, 2, 2, 3, 1, 3, 0, 2, 0, 3, 0)
    a = np.arange(6, dtype=np.float32).reshape(2, 3).astype(a_dtype)
    b = np.arange(-3, 3, dtype=np.float32).reshape(3, 2).astype(b_dtype)
    c = np.full((2, 3), 7, np.float32)
    status = lib.gpumatmul_gemm_host(
        _contexts.context(0), ctypes.byref(desc), a.ctypes.data, b.ctypes.data, c.ctypes.data
    )
    assert status == 0, lib.gpumatmul_last_error_message().decode()
    np.testing.assert_array_equal(c[:, :2], np.matmul(a, b))
    np.testing.assert_array_equal(c[:, 2], [7, 7])


@pytest.mark.parametrize("a_dtype, b_dtype", FLOAT8_PAIRS, ids=str)
def test_host_layouts_batches_and_out(a_dtype, b_dtype):
    rng = np.random.default_rng(13)
    a, b = small_integers(rng, (3, 40, 30), a_dtype), small_integers(rng, (30, 20), b_dtype)
    np.testing.assert_array_equal(pyctk.matmul(b.T, a[0].T), np.matmul(b.T, a[0].T))
    np.testing.assert_array_equal(pyctk.matmul(a[:, ::2], b[:, ::-1]), np.matmul(a[:, ::2], b[:, ::-1]))
    out = np.zeros((3, 40, 41), np.float32)[:, :, 1::2]  # out's rows 164 bytes apart, 4 bytes in
    assert pyctk.matmul(a, b, out=out) is out
    np.testing.assert_array_equal(out, np.matmul(a, b))
    np.testing.assert_array_equal(pyctk.matmul(a[:, :, :0], b[:0]), np.zeros((3, 40, 20), np.float32))


def test_torch_fp8_tensors_multiply_as_they_are():
    """torch's FP8 tensors have no CUDA Array Interface (its property raises KeyError): pyctk
    reads them itself, as it reads torch's other tensors."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    a, b = small_integers(rng, (64, 128), FLOAT8[0]), small_integers(rng, (128, 32), FLOAT8[0])
    ta = torch.from_numpy(a.view(np.uint8)).cuda().view(torch.float8_e4m3fn)
    tb = torch.from_numpy(b.view(np.uint8)).cuda().view(torch.float8_e4m3fn)
    result = pyctk.matmul(ta, tb)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result.get(), np.matmul(a, b))


@pytest.mark.parametrize("m, n, k, batch", [(3, 5, 7, 1), (257, 129, 1000, 1), (70, 300, 260, 3)], ids=str)
@pytest.mark.parametrize("a_dtype, b_dtype", FLOAT8_PAIRS, ids=str)
def test_precision_tf32_multiplies_float32_copies(a_dtype, b_dtype, m, n, k, batch):
    """At precision "tf32" the library copies both operands to float32 (exactly: widened.c, the
    route of GPUs without FP8 tensor cores) and multiplies at TF32, which holds every FP8
    value exactly: float32's rounding of the sums alone, tighter than the FP8 tensor cores'."""
    rng = np.random.default_rng(m + n + k)
    a = (rng.standard_normal((batch, m, k)) * 8).astype(a_dtype)
    b = (rng.standard_normal((k, n)) * 8).astype(b_dtype)
    gpu_b = device_array(np.ascontiguousarray(b.T)).T  # B along k, and A along k: both layouts
    result = pyctk.matmul(device_array(a), gpu_b, precision="tf32").get()
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    assert result.dtype == np.float32
    assert np.all(np.abs(result - wide_a @ wide_b) <= 1e-5 * (np.abs(wide_a) @ np.abs(wide_b)))
