"""NumPy's matmul on the GPU: every dtype and dtype pair, both backends, stacks and broadcasts,
strided and overlapping operands, precision modes, sizes past 2^31 - 1, and the device entry
point of the C library called directly. Compared value by value with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import pyctk
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import library as _library
from support.cuda_runtime import DeviceBuffer, Stream

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("product_route")]  # each test cold and kept

try:
    from ml_dtypes import bfloat16
except ImportError:  # CPython wheels only; the GPU machine has it
    bfloat16 = None

FLOATS = [np.float16, np.float32, np.float64, np.complex64, np.complex128] + ([bfloat16] if bfloat16 else [])
INTEGERS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]
DTYPES = [np.dtype(d) for d in FLOATS + INTEGERS]
# cuBLAS: the floating-point dtypes (int8 through cuBLASLt, for n and k multiples of 4 alone:
# test_cublaslt_on_gpu.py)
BACKENDS = {"tiled": DTYPES, "cublas": [np.dtype(d) for d in FLOATS], "auto": DTYPES}
# Relative Frobenius error against a float64 / complex128 product of the same (cast) inputs.
TOLERANCE = {
    "float16": 2e-3,
    "bfloat16": 1.6e-2,
    "float32": 1e-5,
    "complex64": 1e-5,
    "float64": 1e-12,
    "complex128": 1e-12,
}


def random(rng, shape, dtype):
    """Values that exercise the dtype: full-range integers (so products wrap around), 0/1 for
    bool, standard normal (real and imaginary parts) for floating point."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = rng.standard_normal(shape)
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def expected_dtype(a, b):
    """np.result_type (ml_dtypes' promotion for bfloat16), or where it has none (bfloat16 with
    float16 or wide integers) the dtype of NumPy's own matmul loop."""
    try:
        return np.result_type(a.dtype, b.dtype)
    except TypeError:
        return np.matmul(a[..., :1, :1], b[..., :1, :1]).dtype


def reference(a, b, dtype):
    """NumPy's product: exact for integers and bool (NumPy wraps around too), float64 or
    complex128 for floating point."""
    if dtype.kind in "biu":
        return np.matmul(a.astype(dtype), b.astype(dtype))
    wide = np.complex128 if dtype.kind == "c" else np.float64
    return np.matmul(a.astype(dtype).astype(wide), b.astype(dtype).astype(wide))


def assert_matches_numpy(result, a, b, dtype=None):
    dtype = np.dtype(dtype or expected_dtype(a, b))
    expected = reference(a, b, dtype)
    assert result.dtype == dtype and result.shape == expected.shape
    if dtype.kind in "biu":
        np.testing.assert_array_equal(result, expected)
        return
    wide = result.astype(expected.dtype)
    scale = np.linalg.norm(expected) or 1.0
    assert np.linalg.norm(wide - expected) / scale <= TOLERANCE[dtype.name], dtype


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (7, 1, 5), (65, 129, 63), (130, 300, 70)])
def test_every_dtype(m, k, n, dtype, backend):
    if dtype not in BACKENDS[backend]:
        with pytest.raises(pyctk.UnsupportedError, match="tiled"):  # the message names who can
            # (int8: none of these sizes is cuBLASLt's, whose n and k are multiples of 4)
            pyctk.matmul(np.ones((m, k), dtype), np.ones((k, n), dtype), backend=backend)
        return
    rng = np.random.default_rng([m, k, n, dtype.num])
    a, b = random(rng, (m, k), dtype), random(rng, (k, n), dtype)
    assert_matches_numpy(pyctk.matmul(a, b, backend=backend), a, b)


@pytest.mark.parametrize("dtype_b", DTYPES, ids=str)
@pytest.mark.parametrize("dtype_a", DTYPES, ids=str)
def test_every_dtype_pair_promotes_and_computes_like_numpy(dtype_a, dtype_b):
    rng = np.random.default_rng([dtype_a.num, dtype_b.num])
    a, b = random(rng, (9, 17), dtype_a), random(rng, (17, 5), dtype_b)
    result = pyctk.matmul(a, b)
    if bfloat16 is None or np.dtype(bfloat16) not in (dtype_a, dtype_b):
        assert result.dtype == np.matmul(a, b).dtype  # NumPy's own loop
    assert_matches_numpy(result, a, b)


@pytest.mark.parametrize("backend", ["tiled", "cublas"])
@pytest.mark.parametrize(
    "shape_a, shape_b",
    [
        ((3000, 4, 5), (5, 3)),  # thousands of small matrices, B broadcast (stride 0)
        ((4, 5), (2000, 5, 3)),  # A broadcast
        ((500, 8, 8), (500, 8, 8)),
        ((1, 5, 3, 2), (6, 1, 2, 4)),  # broadcasts a single stride cannot express
        ((1, 3, 3), (10, 1, 3, 1)),
        ((2, 1, 4, 3, 2), (3, 1, 2, 5)),
        ((3,), (7, 3, 2)),
        ((7, 2, 3), (3,)),
        ((5,), (5,)),  # 1-D promotion
        ((0, 3, 4), (4, 2)),
        ((2, 3, 0), (2, 0, 4)),
        ((4, 0, 3), (3, 2)),
    ],
)
def test_stacks_and_broadcasts(shape_a, shape_b, backend):
    rng = np.random.default_rng(len(shape_a) * 10 + len(shape_b))
    a, b = random(rng, shape_a, np.float64), random(rng, shape_b, np.float64)
    result = pyctk.matmul(a, b, backend=backend)
    expected = np.matmul(a, b)
    assert type(result) is type(expected) and np.shape(result) == np.shape(expected)
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", ["tiled", "cublas"])
def test_strided_and_negative_stride_stacks(backend):
    rng = np.random.default_rng(11)
    base_a, base_b = random(rng, (12, 20, 30), np.float32), random(rng, (12, 30, 20), np.float32)
    cases = [
        (base_a[::2, 3:10, ::3], base_b[1::2, :10, 2:9]),  # steps everywhere
        (base_a[::-1, ::-1, :], base_b[:, ::-1, ::-2]),  # negative strides
        (base_a.transpose(0, 2, 1)[:, :7, :11], base_b[:, :11, :5]),  # transposed cores
        (np.broadcast_to(base_a[0], (12, 20, 30)), base_b),  # a zero batch stride
    ]
    for a, b in cases:
        assert_matches_numpy(pyctk.matmul(a, b, backend=backend), a, b)


@pytest.mark.parametrize("backend", ["tiled", "cublas"])
def test_out_overlapping_a_stack_gives_numpys_answer(backend):
    rng = np.random.default_rng(12)
    a = random(rng, (40, 16, 16), np.float64)
    expected = np.matmul(a, a)
    assert pyctk.matmul(a, a, out=a, backend=backend) is a
    np.testing.assert_allclose(a, expected, rtol=1e-12)
    b = random(rng, (40, 16, 16), np.float64)
    expected = np.matmul(b, b[::-1])
    out = b[::-1]  # the same memory, reversed
    pyctk.matmul(b, b[::-1], out=out, backend=backend)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_out_with_a_wider_stack_and_another_dtype():
    rng = np.random.default_rng(13)
    a, b = random(rng, (3, 4), np.float32), random(rng, (4, 5), np.float32)
    out = np.full((2, 3, 5), np.nan, np.float64)  # NumPy broadcasts the result into out
    assert pyctk.matmul(a, b, out=out) is out
    np.testing.assert_allclose(out, np.matmul(a, b, out=np.empty((2, 3, 5))), rtol=1e-6)


def test_dtype_and_casting_keywords():
    rng = np.random.default_rng(14)
    a, b = random(rng, (6, 7), np.int32), random(rng, (7, 3), np.int32)
    for dtype in (np.float64, np.int64, np.int8):
        result = pyctk.matmul(a, b, dtype=dtype, casting="unsafe")
        np.testing.assert_array_equal(result, np.matmul(a, b, dtype=dtype, casting="unsafe"))


@pytest.mark.parametrize(
    "dtype, precision, worse_by, high",
    [
        (np.float32, "tf32", 10, 1e-2),  # TF32: operands keep 10 mantissa bits
        (np.complex64, "tf32", 10, 1e-2),
        (np.float16, "fp16_accumulate", 1.5, 5e-2),
    ],
)
def test_faster_precision_modes_cost_what_the_readme_says(dtype, precision, worse_by, high):
    rng = np.random.default_rng(15)
    a, b = random(rng, (512, 2048), dtype), random(rng, (2048, 256), dtype)
    expected = reference(a, b, np.dtype(dtype))
    scale = np.linalg.norm(expected)
    error = {
        mode: np.linalg.norm(pyctk.matmul(a, b, precision=mode, backend="cublas") - expected) / scale
        for mode in ("highest", precision)
    }
    assert error["highest"] <= TOLERANCE[np.dtype(dtype).name]
    assert worse_by * error["highest"] < error[precision] < high, error  # the mode really ran


def test_tf32_on_the_tiled_backend():
    """On an H100 the tiled backend's TF32 requests run on TF32 tensor cores: a @ b.T (both
    operands contiguous along k, the one layout TF32 wgmma reads) as it is, a @ b after B is
    transposed into a workspace. On other GPUs it computes in full float32, which TF32
    allows."""
    rng = np.random.default_rng(16)
    a, b_t = random(rng, (512, 2048), np.float32), random(rng, (256, 2048), np.float32)
    expected = reference(a, b_t.T, np.dtype(np.float32))
    scale = np.linalg.norm(expected)

    def error(b, **keywords):
        return np.linalg.norm(pyctk.matmul(a, b, backend="tiled", **keywords) - expected) / scale

    full = error(b_t.T)
    tf32 = {"a @ b.T": error(b_t.T, precision="tf32"), "a @ b": error(np.ascontiguousarray(b_t.T), precision="tf32")}
    assert full <= TOLERANCE["float32"]
    if pyctk.info()["devices"][0]["compute_capability"] == "9.0":
        for layout, value in tf32.items():  # the TF32 kernel really ran
            assert 10 * full < value < 1e-2, (layout, full, value)
    else:
        assert max(tf32.values()) <= TOLERANCE["float32"], tf32


@pytest.mark.parametrize("backend", ["tiled", "cublas"])
def test_a_dimension_above_2_to_the_31(backend):
    """m = 2^31 + 3 rows of float16 (4 GiB in, 8 GiB out): 64-bit sizes in cuBLAS and in
    the tiled kernel's indexing."""
    m = 2**31 + 3
    a = np.resize(np.arange(7, dtype=np.float16), m).reshape(m, 1)
    b = np.array([[1.0, -2.0]], np.float16)
    result = pyctk.matmul(a, b, backend=backend)
    assert result.shape == (m, 2)
    column = a[:, 0]
    assert np.array_equal(result[:, 0], column) and np.array_equal(result[:, 1], -2 * column)


def device_matmul(backend, dtype, m, n, k, a, lda, b, ldb, c, ldc, *, batch=1, strides=(0, 0, 0), stream=None):
    codes = {"tiled": 1, "cublas": 2}
    _library.call(
        "gpumatmul_matmul_strided_batched_device",
        _contexts.context(0),
        codes[backend],
        {np.float32: 0, np.float64: 1}[dtype],
        0,
        0,
        0,
        m,
        n,
        k,
        batch,
        a.pointer,
        lda,
        strides[0],
        b.pointer,
        ldb,
        strides[1],
        c.pointer,
        ldc,
        strides[2],
        stream.handle if stream else None,
    )


@pytest.mark.parametrize("backend", ["tiled", "cublas"])
def test_device_entry_point_with_row_pitch_batch_and_stream(backend):
    """gpumatmul_matmul_strided_batched_device on buffers from cudart: rows padded (ld > cols),
    a broadcast B, and a non-blocking stream the result is read back on."""
    rng = np.random.default_rng(16)
    batch, m, k, n, pad = 5, 33, 20, 17, 3
    a = random(rng, (batch, m, k + pad), np.float32)
    b = random(rng, (k, n + pad), np.float32)
    poison = np.full((batch, m, n + pad), np.nan, np.float32)
    stream = Stream()
    with DeviceBuffer.from_array(a) as da, DeviceBuffer.from_array(b) as db, DeviceBuffer.from_array(poison) as dc:
        device_matmul(
            backend,
            np.float32,
            m,
            n,
            k,
            da,
            k + pad,
            db,
            n + pad,
            dc,
            n + pad,
            batch=batch,
            strides=(m * (k + pad), 0, m * (n + pad)),
            stream=stream,
        )
        c = dc.to_array(poison.shape, np.float32, stream=stream)
    stream.close()
    expected = np.matmul(a[:, :, :k].astype(np.float64), b[:, :n].astype(np.float64))
    np.testing.assert_allclose(c[:, :, :n], expected, rtol=1e-4, atol=1e-4)
    assert np.isnan(c[:, :, n:]).all(), "the padding past n was written"


@pytest.mark.parametrize("backend", ["tiled", "cublas"])
def test_device_entry_point_with_k_zero_writes_zeros(backend):
    m, n, pad = 6, 5, 2
    poison = np.full((m, n + pad), np.nan, np.float64)
    with DeviceBuffer(8) as da, DeviceBuffer(8) as db, DeviceBuffer.from_array(poison) as dc:
        device_matmul(backend, np.float64, m, n, 0, da, 1, db, n, dc, n + pad)
        c = dc.to_array(poison.shape, np.float64)
    assert (c[:, :n] == 0).all() and np.isnan(c[:, n:]).all()


def test_device_entry_point_rejects_an_ld_below_the_row_length():
    with DeviceBuffer(4096) as d:
        with pytest.raises(ValueError, match="lda=7 is too small"):
            device_matmul("cublas", np.float32, 4, 4, 8, d, 7, d, 4, d, 4)


def test_thousands_of_tiny_products_are_one_call(monkeypatch, product_route):
    """A stack is one call into the library, whatever its length (kept: and one more, of the
    first call that planned it)."""
    calls = []
    real_call = _library.call
    monkeypatch.setattr(_library, "call", lambda name, *args: (calls.append(name), real_call(name, *args)))
    rng = np.random.default_rng(17)
    a, b = random(rng, (5000, 3, 2), np.float32), random(rng, (5000, 2, 4), np.float32)
    assert_matches_numpy(pyctk.matmul(a, b), a, b)
    assert calls.count("gpumatmul_gemm_host_multi") == (2 if product_route == "kept" else 1), calls


def test_matrix_and_masked_operands_come_back_as_numpys_do():
    """np.matrix stays a matrix (two axes), a MaskedArray a MaskedArray with NumPy's mask; NumPy
    too multiplies the masked values."""
    rng = np.random.default_rng(7)
    m = np.matrix(rng.standard_normal((3, 4)))
    masked = np.ma.array(rng.standard_normal((4, 4)), mask=rng.random((4, 4)) < 0.3)
    for a, b in ((m, m.T), (m, np.ones(4)), (masked, masked), (np.ones((4, 4)), masked)):
        expected, result = np.matmul(a, b), pyctk.matmul(a, b)
        assert type(result) is type(expected) and result.shape == expected.shape
        np.testing.assert_allclose(np.asarray(result), np.asarray(expected), rtol=1e-12)
        if isinstance(expected, np.ma.MaskedArray):
            assert np.array_equal(np.ma.getmaskarray(result), np.ma.getmaskarray(expected))
