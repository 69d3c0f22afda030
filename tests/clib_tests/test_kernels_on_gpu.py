"""The tiled backend's kernels at their edges, through the device entry point: sizes off every
tile (the float32, float64 and float16/bfloat16 kernels tile C by 128 x 256, 128 x 64 and
128 x 256, k by 16 or 32), each transpose pair, pointers off 16-byte alignment, odd row
pitches, strided and broadcast batches. C is poisoned with NaN first: every element must be
written, and nothing past n. Compared with NumPy in float64 (complex128) on the same (rounded)
operands. Tiny float32 products (up to 64^3 multiply-adds, at either precision) take the plain
tiled kernel rather than gemm_simt: SHAPES and the batches have products on both sides of that
line. Float32 products whose grid leaves multiprocessors idle take split k
(libgpu/src/gemm/split_k.c): its cases come after the others. Complex products of more than
512^3 multiply-adds run as one real product (libgpu/src/gemm/complex_real.c), the smaller ones
on the complex kernels: SHAPES are all small, the complex cases at the end are large. int8,
uint8 and bool (on integer tensor cores from sm_80: gemm_imma) are compared exactly, last."""

from __future__ import annotations

import contextlib
import ctypes

import numpy as np
import pytest

import pyctk
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import library as _library
from pyctk._matmul import options as _host_options
from support.cuda_runtime import DeviceBuffer, check, cudart

try:
    from ml_dtypes import bfloat16
except ImportError:  # pragma: no cover - ml_dtypes comes with the test extra
    bfloat16 = None

pytestmark = pytest.mark.gpu

# dtype: (gpumatmul_dtype, relative Frobenius tolerance)
DTYPES = {
    np.float32: (0, 1e-5),
    np.float64: (1, 1e-12),
    np.float16: (2, 2e-3),
    np.complex64: (4, 1e-5),
    np.complex128: (5, 1e-12),
}
if bfloat16 is not None:
    DTYPES[bfloat16] = (3, 1.6e-2)

SHAPES = [  # (m, n, k)
    (1, 1, 1),
    (5, 3, 1),
    (16, 16, 16),
    (32, 32, 32),
    (33, 32, 32),
    (129, 257, 17),
    (128, 256, 32),
    (255, 130, 33),
    (300, 70, 1000),
    (2, 600, 7),
    (257, 513, 64),
]


def stored(flat, offset, rows, cols, ld):
    """The rows x cols matrix at flat[offset:], rows ld elements apart."""
    return np.lib.stride_tricks.as_strided(flat[offset:], (rows, cols), (ld * flat.itemsize, flat.itemsize))


def random_values(rng, count, dtype):
    """`count` standard normal values; complex ones with both parts drawn (neither zero)."""
    values = rng.standard_normal(count)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(count)
    return values.astype(dtype)


def check_product(
    dtype, m, n, k, trans_a, trans_b, *, batch=1, shift=0, pad=0, broadcast_b=False, seed=0, precision=0, tolerance=None
):
    """C[z] = op(A[z]) op(B[z]) on the device, with A, B and C each `shift` elements past an
    aligned allocation and `pad` elements of row padding; asserts it against NumPy and
    returns C as stored."""
    code, dtype_tolerance = DTYPES[dtype]
    tolerance = tolerance or dtype_tolerance
    rng = np.random.default_rng(seed)
    a_rows, a_cols = (k, m) if trans_a else (m, k)
    b_rows, b_cols = (n, k) if trans_b else (k, n)
    lda, ldb, ldc = a_cols + pad, b_cols + pad, n + pad
    stride_a, stride_b, stride_c = a_rows * lda + pad, 0 if broadcast_b else b_rows * ldb, m * ldc
    a = random_values(rng, shift + batch * stride_a, dtype)
    b = random_values(rng, shift + max(batch * stride_b, b_rows * ldb), dtype)
    c = np.full(shift + batch * stride_c, np.nan, dtype)
    size = a.itemsize
    with DeviceBuffer.from_array(a) as da, DeviceBuffer.from_array(b) as db, DeviceBuffer.from_array(c) as dc:

        def at(buffer):
            return ctypes.c_void_p(buffer.pointer.value + shift * size)

        _library.call(
            "gpumatmul_matmul_strided_batched_device",
            _contexts.context(0),
            1,
            code,
            precision,
            int(trans_a),
            int(trans_b),
            m,
            n,
            k,
            batch,
            at(da),
            lda,
            stride_a,
            at(db),
            ldb,
            stride_b,
            at(dc),
            ldc,
            stride_c,
            None,
        )
        c = dc.to_array(c.shape, dtype)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    for z in range(batch):
        op_a = stored(a, shift + z * stride_a, a_rows, a_cols, lda).astype(wide)
        op_b = stored(b, shift + z * stride_b, b_rows, b_cols, ldb).astype(wide)
        expected = (op_a.T if trans_a else op_a) @ (op_b.T if trans_b else op_b)
        result = stored(c, shift + z * stride_c, m, ldc, ldc).astype(wide)
        assert not np.isnan(result[:, :n]).any(), f"matrix {z}: elements left unwritten"
        assert np.isnan(result[:, n:]).all(), f"matrix {z}: the padding past n was written"
        scale = np.linalg.norm(expected) or 1.0
        error = np.linalg.norm(result[:, :n] - expected) / scale
        assert error <= tolerance, f"matrix {z}: relative error {error:.3g}"
    return c


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("dtype", list(DTYPES), ids=lambda d: np.dtype(d).name)
def test_sizes_off_the_tiles_and_every_transpose(dtype, m, n, k, trans_a, trans_b):
    check_product(dtype, m, n, k, trans_a, trans_b, seed=m * n + k)


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (1, 1)])
@pytest.mark.parametrize("shift, pad", [(1, 0), (0, 1), (1, 3), (2, 2)])
@pytest.mark.parametrize("dtype", list(DTYPES), ids=lambda d: np.dtype(d).name)
def test_operands_off_alignment_and_odd_pitches(dtype, shift, pad, trans_a, trans_b):
    check_product(dtype, 200, 300, 100, trans_a, trans_b, shift=shift, pad=pad, seed=shift + pad)


@pytest.mark.parametrize("broadcast_b", [False, True])
@pytest.mark.parametrize("dtype", list(DTYPES), ids=lambda d: np.dtype(d).name)
def test_strided_and_broadcast_batches(dtype, broadcast_b):
    check_product(dtype, 150, 170, 190, 0, 1, batch=3, pad=4, broadcast_b=broadcast_b, seed=5)
    check_product(dtype, 33, 300, 65, 1, 0, batch=4, shift=1, broadcast_b=broadcast_b, seed=6)


SIXTEEN_BIT = [d for d in DTYPES if np.dtype(d).itemsize == 2]


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize(
    "m, n, k", [(1, 8, 8), (128, 256, 64), (200, 264, 72), (130, 520, 1000), (64, 8, 2000), (300, 776, 136)]
)
@pytest.mark.parametrize("dtype", SIXTEEN_BIT, ids=lambda d: np.dtype(d).name)
def test_layouts_tma_describes(dtype, m, n, k, trans_a, trans_b):
    """Pitches of whole 16-byte pieces and 16-byte aligned operands: on an H100 the Hopper
    kernels (TMA and wgmma) take these, edge tiles zero-filled by TMA, C cut at n."""
    check_product(dtype, m, n, k, trans_a, trans_b, seed=m + n + k)
    check_product(dtype, m, n, k, trans_a, trans_b, shift=8, pad=8, seed=m + n + k + 1)


@pytest.mark.parametrize("broadcast_b", [False, True])
@pytest.mark.parametrize("dtype", SIXTEEN_BIT, ids=lambda d: np.dtype(d).name)
def test_batches_tma_describes(dtype, broadcast_b):
    check_product(dtype, 136, 264, 200, 0, 0, batch=3, pad=8, broadcast_b=broadcast_b, seed=9)
    check_product(dtype, 64, 512, 64, 1, 1, batch=5, broadcast_b=broadcast_b, seed=10)
    check_product(
        dtype, 16, 16, 16, 1, 0, batch=8, shift=1, pad=3, broadcast_b=broadcast_b, seed=11
    )  # 16^3 * 8 = 32^3: tiny


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize(
    "m, n, k",
    [(1, 4, 4), (32, 32, 32), (128, 256, 32), (200, 260, 36), (130, 516, 1000), (300, 772, 132), (33, 70, 1001)],
)
def test_tf32_layouts(m, n, k, trans_a, trans_b):
    """float32 at precision TF32 (TF32-sized errors allowed: operands keep 10 mantissa bits).
    On an H100 the TF32 kernel takes A not transposed and B transposed as they are, and the
    other layouts after transposing them into a workspace (repack.c), and operands TMA cannot
    describe as they are (unaligned, odd pitches) after copying them there."""
    for shift, pad, seed in ((0, 0, m), (4, 4, n), (1, 3, k)):
        check_product(
            np.float32, m, n, k, trans_a, trans_b, shift=shift, pad=pad, seed=seed, precision=1, tolerance=1e-2
        )


@pytest.mark.parametrize("broadcast_b", [False, True])
def test_tf32_batches(broadcast_b):
    check_product(
        np.float32, 136, 264, 200, 0, 0, batch=3, pad=4, broadcast_b=broadcast_b, precision=1, tolerance=1e-2, seed=12
    )
    check_product(np.float32, 64, 512, 64, 1, 0, batch=5, broadcast_b=broadcast_b, precision=1, tolerance=1e-2, seed=13)


@pytest.mark.parametrize("dtype", list(DTYPES), ids=lambda d: np.dtype(d).name)
def test_a_product_with_many_whole_tiles(dtype):
    """Interior tiles take the kernels' fast paths (whole 16-byte pieces, C through shared
    memory); the last row and column of tiles do not."""
    check_product(dtype, 1000, 1100, 1200, 0, 0, seed=7)
    check_product(dtype, 1024, 1024, 1024, 1, 0, seed=8)


# ---- Split k: float32 products cut into pieces of k, summed by gemm_reduce_f32 ----


def multiprocessors() -> int:
    value = ctypes.c_int()
    check(
        cudart().cudaDeviceGetAttribute(ctypes.byref(value), 16, 0),  # MultiProcessorCount
        "cudaDeviceGetAttribute",
    )
    return value.value


def split_on_this_gpu(m, n, k, batch):
    """Whether libgpu/src/gemm/split_k.c cuts k of this float32 product on this GPU (gemm_simt's
    128 x 256 tiles, one block per multiprocessor, pieces of at least 64)."""
    sms, tiles = multiprocessors(), -(-m // 128) * -(-n // 256)
    if tiles >= sms or batch >= sms:
        return False
    splits = min(sms // tiles, k // 64)
    return splits >= 2 and 2 * batch <= splits * -(-batch * tiles // sms)


# (m, n, k, batch) on an H100: 4 whole pieces; 15, 33, 9, 2 and 4 pieces and the rest of k
# (40, 7, 24, 2 and 6) as a piece of its own, with less k than there are pieces; n < 4 (the
# workspace's rows padded); batches of 2 and 3, a launch each. Every transpose pair.
SPLIT_CASES = [
    (1024, 1024, 1024, 1),
    (300, 70, 1000, 1),
    (129, 257, 4099, 1),
    (5, 3, 600, 1),
    (64, 64, 130, 1),
    (1000, 1000, 1030, 2),
    (256, 512, 2048, 3),
]


@pytest.fixture
def splits_here():
    """Skips a split-k case on a GPU too small for it to split."""

    def need(m, n, k, batch):
        if not split_on_this_gpu(m, n, k, batch):
            pytest.skip(
                f"{m} x {n} x {k} (batch {batch}) does not split on a GPU of {multiprocessors()} multiprocessors"
            )

    return need


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("m, n, k, batch", SPLIT_CASES, ids=["x".join(map(str, case)) for case in SPLIT_CASES])
def test_split_k_every_transpose(splits_here, m, n, k, batch, trans_a, trans_b):
    splits_here(m, n, k, batch)
    check_product(np.float32, m, n, k, trans_a, trans_b, batch=batch, seed=k + trans_a)


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (1, 1)])
def test_split_k_off_alignment_odd_pitches_and_broadcast(splits_here, trans_a, trans_b):
    splits_here(500, 260, 1030, 2)
    check_product(np.float32, 500, 260, 1030, trans_a, trans_b, batch=2, shift=1, pad=3, broadcast_b=True, seed=9)
    check_product(np.float32, 500, 260, 1030, trans_a, trans_b, batch=2, shift=2, pad=1, seed=10)


def test_split_k_sums_in_a_fixed_order(splits_here):
    """The pieces are added in one order whatever the blocks' schedule: the same bits each time."""
    splits_here(129, 257, 4099, 1)
    first = check_product(np.float32, 129, 257, 4099, 0, 0, seed=11)
    for _ in range(3):
        np.testing.assert_array_equal(check_product(np.float32, 129, 257, 4099, 0, 0, seed=11), first)


@contextlib.contextmanager
def free_memory_taken():
    """Takes what is free on the GPU (cudaMalloc of 256 MiB, then 1 MiB pieces, until it
    fails); yields a function that gives it back, and gives back what is left at the end."""
    runtime, fillers = cudart(), []

    def give_back():
        while fillers:
            check(runtime.cudaFree(fillers.pop()), "cudaFree")

    try:
        for size in (256 << 20, 1 << 20):
            while True:
                pointer = ctypes.c_void_p()
                if runtime.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(size)):
                    break
                fillers.append(pointer)
        runtime.cudaGetLastError()  # the failure that ended the loop
        yield give_back
    finally:
        for pointer in fillers:
            runtime.cudaFree(pointer)


def out_of_memory_then_computed(a, b, dtype_code, match):
    """a @ b (C-contiguous host arrays, gpumatmul_dtype `dtype_code`) by the tiled backend in
    a context of its own (an empty pool): with the rest of the GPU's memory taken, the call
    raises OutOfMemoryError matching `match`; with the memory back, its result."""
    (m, k), n = a.shape, b.shape[1]
    context = ctypes.c_void_p()
    _library.call("gpumatmul_create", ctypes.byref(context), 0)
    try:
        with DeviceBuffer.from_array(a) as da, DeviceBuffer.from_array(b) as db, DeviceBuffer(m * n * a.itemsize) as dc:
            arguments = (
                context,
                1,
                dtype_code,
                0,
                0,
                0,
                m,
                n,
                k,
                1,
                da.pointer,
                k,
                0,
                db.pointer,
                n,
                0,
                dc.pointer,
                n,
                0,
                None,
            )
            with free_memory_taken() as give_back:
                with pytest.raises(pyctk.OutOfMemoryError, match=match):
                    _library.call("gpumatmul_matmul_strided_batched_device", *arguments)
                give_back()
                _library.call("gpumatmul_matmul_strided_batched_device", *arguments)
            return dc.to_array((m, n), a.dtype)
    finally:
        _library.call("gpumatmul_destroy", context)


def test_split_k_without_memory_for_its_workspace_is_out_of_memory(splits_here):
    """A context of its own (an empty pool) and the rest of the GPU's memory taken: the product
    fails with OutOfMemoryError naming the workspace; with the memory back, it computes."""
    m = n = k = 1024
    splits_here(m, n, k, 1)
    ones = np.ones((m, k), np.float32)
    result = out_of_memory_then_computed(ones, ones, 0, "split-k workspace")
    np.testing.assert_array_equal(result, np.full((m, n), k))


# ---- Complex products as one real product (libgpu/src/gemm/complex_real.c) ----
#
# From SHAPE_MEDIUM (m * n * k * batch > 512^3) a complex product runs as one real product:
# A's real view (A copied untransposed first when it is stored transposed) times B expanded
# into E^T in a workspace, on gemm_simt, TF32 wgmma or gemm_dmma. The smaller ones keep the
# complex kernel (DTYPES' cases above). Every case here is above the line.

COMPLEX = [np.complex64, np.complex128]
# 520 x 600 x 520: the brief's example; 129 x 1031 x 1031: every size off the tiles, odd k
# (E^T's rows padded to 16 bytes); 1100 x 70 x 2001: a thin C, a long k.
COMPLEX_SHAPES = [(520, 600, 520), (129, 1031, 1031), (1100, 70, 2001)]


def is_large(m, n, k, batch=1):
    return m * n * k * batch > 512**3


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("m, n, k", COMPLEX_SHAPES)
@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_complex_as_one_real_product_every_transpose(dtype, m, n, k, trans_a, trans_b):
    """Aligned operands (the real view's pitches whole 16 bytes where lda is even), then
    pointers off 16 bytes and odd pitches, which the real kernels read element by element."""
    assert is_large(m, n, k)
    for shift, pad, seed in ((0, 0, m), (1, 3, n), (2, 1, k)):
        check_product(dtype, m, n, k, trans_a, trans_b, shift=shift, pad=pad, seed=seed)


@pytest.mark.parametrize("broadcast_b", [False, True])
@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_complex_as_one_real_product_batches(dtype, broadcast_b):
    """Strided batches (odd strides: check_product pads them), and B broadcast (stride 0:
    expanded once for every matrix of the batch)."""
    for m, n, k, trans_a, trans_b, batch, shift, pad, seed in (
        (300, 260, 600, 0, 1, 3, 0, 4, 14),
        (130, 300, 520, 1, 0, 7, 1, 0, 15),
        (200, 210, 330, 1, 1, 11, 2, 3, 16),
    ):
        assert is_large(m, n, k, batch)
        check_product(
            dtype, m, n, k, trans_a, trans_b, batch=batch, shift=shift, pad=pad, broadcast_b=broadcast_b, seed=seed
        )


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("m, n, k", [(1, 4, 4), (32, 32, 32), (200, 260, 36)] + COMPLEX_SHAPES)
def test_complex64_tf32(m, n, k, trans_a, trans_b):
    """complex64 at precision TF32: the small products on the complex kernel (exactly), the
    large ones as one float32 product at TF32 (on an H100 TF32 wgmma for operands TMA
    describes: aligned, even lda; the others in full float32)."""
    for shift, pad, seed in ((0, 0, m), (4, 4, n), (1, 3, k)):
        check_product(
            np.complex64, m, n, k, trans_a, trans_b, shift=shift, pad=pad, seed=seed, precision=1, tolerance=1e-2
        )


@pytest.mark.parametrize("broadcast_b", [False, True])
def test_complex64_tf32_batches(broadcast_b):
    assert is_large(136, 264, 1300, 3) and is_large(64, 512, 1100, 5)
    check_product(
        np.complex64,
        136,
        264,
        1300,
        0,
        0,
        batch=3,
        pad=4,
        broadcast_b=broadcast_b,
        precision=1,
        tolerance=1e-2,
        seed=17,
    )
    check_product(
        np.complex64, 64, 512, 1100, 1, 1, batch=5, broadcast_b=broadcast_b, precision=1, tolerance=1e-2, seed=18
    )


def compute_capability() -> str:
    return pyctk.info()["devices"][0]["compute_capability"]


def relative_error(result, a, b):
    expected = a.astype(np.complex128) @ b.astype(np.complex128)
    return np.linalg.norm(result - expected) / np.linalg.norm(expected)


def test_complex64_tf32_runs_on_tf32_tensor_cores_from_shape_medium():
    """On an H100 a large complex64 product at TF32 has TF32's errors (the float32 product ran
    on TF32 wgmma); a small one is exact (the complex kernel). Elsewhere both are exact."""
    rng = np.random.default_rng(19)
    errors = {}
    for m, n, k in ((64, 64, 64), (520, 600, 520)):
        a = random_values(rng, m * k, np.complex64).reshape(m, k)
        b_t = random_values(rng, n * k, np.complex64).reshape(n, k)
        result = pyctk.matmul(a, b_t.T, backend="tiled", precision="tf32")
        errors[is_large(m, n, k)] = relative_error(result, a, b_t.T)
    assert errors[False] <= 1e-5, errors
    if compute_capability() == "9.0":
        assert 10 * errors[False] < errors[True] < 1e-2, errors
    else:
        assert errors[True] <= 1e-5, errors


def test_complex_workspace_beyond_the_limit_takes_the_complex_kernel(monkeypatch):
    """Host operands under PYCTK_DEVICE_MEMORY_LIMIT: 1024^3 complex64 streams in 4 tiles of
    256 rows (16 MiB of tiles); B's expansion, 16 MiB, fits a 40 MiB limit beside them but not
    a 24 MiB one (workspace_max: what the tiles leave), where the complex kernel computes the
    tiles instead, exactly although TF32 was asked for. On an H100 the TF32 errors show which
    ran; elsewhere both are exact."""
    rng = np.random.default_rng(20)
    a = random_values(rng, 1024 * 1024, np.complex64).reshape(1024, 1024)
    b = random_values(rng, 1024 * 1024, np.complex64).reshape(1024, 1024)
    errors = {}
    for limit in ("24M", "40M"):
        monkeypatch.setenv(_host_options.LIMIT_VARIABLE, limit)
        errors[limit] = relative_error(pyctk.matmul(a, b, backend="tiled", precision="tf32"), a, b)
    assert errors["24M"] <= 1e-5, errors
    if compute_capability() == "9.0":
        assert 10 * errors["24M"] < errors["40M"] < 1e-2, errors
    else:
        assert errors["40M"] <= 1e-5, errors


def test_complex_without_memory_for_its_workspace_is_out_of_memory():
    """As split k's: a context of its own (an empty pool) and the rest of the GPU's memory
    taken: the product fails with OutOfMemoryError naming the workspace; with the memory back,
    it computes."""
    m = n = k = 1024
    a, b = np.full((m, k), 1 + 1j, np.complex64), np.full((k, n), 1 + 2j, np.complex64)
    result = out_of_memory_then_computed(a, b, 4, "complex product's real operands")
    # (1 + i)(1 + 2i) = -1 + 3i, k times: exact in float32.
    np.testing.assert_array_equal(result, np.full((m, n), k * (-1 + 3j), np.complex64))


# ---- int8, uint8 and bool: exact, on integer tensor cores (gemm_wgmma on sm_90, gemm_imma
# from sm_80) ----
#
# NumPy's integer product wraps modulo 2^8 and its boolean one is an OR of ANDs: the result
# must be NumPy's to the bit. Both kernels read operands contiguous along k (A as stored,
# B transposed); repack.c transposes the others into a workspace first, so every transpose
# pair takes a different path. On an H100 or H200 gemm_wgmma reads them through TMA, and
# repack.c also copies the operands TMA cannot read (off 16 bytes, or rows not of whole 16
# bytes: k = 65 or 1031 here, the shifted and padded operands below) as they are, into rows
# of whole 16 bytes; elsewhere gemm_imma reads those as they are. Products of at most 32^3
# multiply-adds (SHAPE_TINY) stay on gemm_tiled: (1, 1, 1) is the one here.

INTEGER = {np.int8: 6, np.uint8: 10, np.bool_: 14}
WIDE_INTEGER = {np.int16: 7, np.int32: 8, np.int64: 9, np.uint16: 11, np.uint32: 12, np.uint64: 13}
CODES = {**INTEGER, **WIDE_INTEGER}
POISON = 0x5A  # C's bytes before the product: not a bool, and must stay so past n


def integer_values(rng, count, dtype, k):
    """`count` values over the dtype's whole range, a tenth of them its extremes; bools true
    with a probability that leaves about half of C's elements true for this k."""
    if dtype is np.bool_:
        return rng.random(count) < min(0.5, np.sqrt(0.7 / k))
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
    extremes = rng.random(count) < 0.1
    values[extremes] = rng.choice([info.min, info.max, info.min + 1, info.max - 1], int(extremes.sum()))
    return values.astype(dtype)


def check_exact(dtype, m, n, k, trans_a, trans_b, *, batch=1, shift=0, pad=0, broadcast_b=False, seed=0, values=None):
    """check_product for integers and bool, asserting C equal to numpy.matmul's product to the
    bit (which wraps integer sums modulo 2^bits, and reads any non-zero bool byte as true).
    `values(rng, count)`, if given, makes the elements; `shift` counts elements."""
    code, size = CODES[dtype], np.dtype(dtype).itemsize
    bits = np.uint8 if size == 1 else dtype  # how C's elements are compared
    rng = np.random.default_rng(seed)
    values = values or (lambda rng, count: integer_values(rng, count, dtype, k))
    a_rows, a_cols = (k, m) if trans_a else (m, k)
    b_rows, b_cols = (n, k) if trans_b else (k, n)
    lda, ldb, ldc = a_cols + pad, b_cols + pad, n + pad
    stride_a, stride_b, stride_c = a_rows * lda + pad, 0 if broadcast_b else b_rows * ldb, m * ldc
    a = values(rng, shift + batch * stride_a)
    b = values(rng, shift + max(batch * stride_b, b_rows * ldb))
    c = np.full((shift + batch * stride_c) * size, POISON, np.uint8)
    poison = np.full(size, POISON, np.uint8).view(bits)[0]
    with DeviceBuffer.from_array(a) as da, DeviceBuffer.from_array(b) as db, DeviceBuffer.from_array(c) as dc:

        def at(buffer):
            return ctypes.c_void_p(buffer.pointer.value + shift * size)

        _library.call(
            "gpumatmul_matmul_strided_batched_device",
            _contexts.context(0),
            1,
            code,
            0,
            int(trans_a),
            int(trans_b),
            m,
            n,
            k,
            batch,
            at(da),
            lda,
            stride_a,
            at(db),
            ldb,
            stride_b,
            at(dc),
            ldc,
            stride_c,
            None,
        )
        c = dc.to_array(c.shape, np.uint8).view(bits)
    for z in range(batch):
        op_a = stored(a, shift + z * stride_a, a_rows, a_cols, lda)
        op_b = stored(b, shift + z * stride_b, b_rows, b_cols, ldb)
        expected = np.matmul(op_a.T if trans_a else op_a, op_b.T if trans_b else op_b)
        result = stored(c, shift + z * stride_c, m, ldc, ldc)
        np.testing.assert_array_equal(result[:, :n], expected.view(bits), err_msg=f"matrix {z}")
        assert (result[:, n:] == poison).all(), f"matrix {z}: the padding past n was written"


INTEGER_SHAPES = [
    (1, 1, 1),
    (5, 3, 3000),
    (17, 33, 65),
    (64, 8, 97),
    (200, 264, 72),
    (128, 128, 64),
    (129, 1031, 1031),
    (256, 256, 4096),
    (130, 300, 1040),
]


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("m, n, k", INTEGER_SHAPES)
@pytest.mark.parametrize("dtype", list(INTEGER), ids=lambda d: np.dtype(d).name)
def test_integers_exact_every_transpose(dtype, m, n, k, trans_a, trans_b):
    check_exact(dtype, m, n, k, trans_a, trans_b, seed=m + n + k)


@pytest.mark.parametrize("trans_a, trans_b", [(0, 1), (0, 0), (1, 1)])
@pytest.mark.parametrize("shift, pad", [(1, 0), (0, 1), (3, 5), (16, 12)])
@pytest.mark.parametrize("dtype", list(INTEGER), ids=lambda d: np.dtype(d).name)
def test_integers_off_alignment_and_odd_pitches(dtype, shift, pad, trans_a, trans_b):
    """(0, 1): the operands reach gemm_imma as they are, byte by byte where they are not in
    whole 16-byte pieces (all but (16, 12): aligned, rows of 112 bytes for k = 100), and on
    Hopper gemm_wgmma as copies in whole pieces; the other pairs are repacked (one operand or
    both)."""
    check_exact(dtype, 200, 300, 100, trans_a, trans_b, shift=shift, pad=pad, seed=shift + pad)


@pytest.mark.parametrize("broadcast_b", [False, True])
@pytest.mark.parametrize("dtype", list(INTEGER), ids=lambda d: np.dtype(d).name)
def test_integers_strided_and_broadcast_batches(dtype, broadcast_b):
    check_exact(dtype, 150, 170, 190, 0, 1, batch=3, pad=4, broadcast_b=broadcast_b, seed=5)
    check_exact(dtype, 130, 140, 192, 0, 1, batch=3, broadcast_b=broadcast_b, seed=8)  # aligned
    check_exact(dtype, 33, 300, 65, 1, 0, batch=4, shift=1, broadcast_b=broadcast_b, seed=6)
    check_exact(dtype, 16, 16, 16, 0, 0, batch=9, pad=3, broadcast_b=broadcast_b, seed=7)


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("dtype", list(INTEGER), ids=lambda d: np.dtype(d).name)
def test_integers_transposed_from_word_aligned_rows_ending_in_part_of_a_word(dtype, trans_a):
    """The 1-byte transpose moves aligned rows as 4-byte words and the rest byte by byte: here
    B (and A when transposed) has rows of 304 (132) bytes at aligned addresses but 301 (129)
    elements, so each row ends in part of a word; k = 257 leaves the last tile of rows mostly
    empty. A's second matrix starts 3 bytes past a word (stride_a is its size + 3), so with A
    transposed one launch takes both paths."""
    check_exact(dtype, 129, 301, 257, trans_a, 0, batch=2, pad=3, seed=9)


def constant(value, dtype):
    return lambda rng, count: np.full(count, value, dtype)


@pytest.mark.parametrize(
    "dtype, value, k",
    [
        (np.int8, -128, 1 << 18),  # 2^14 k = 2^32: wraps to 0 (saturating would give 0xff)
        (np.int8, 127, (1 << 18) + 3),  # 16129 k past 2^31: low byte 3
        (np.uint8, 255, (1 << 18) + 5),  # (-1)^2 k as s8: low byte 5
        (np.uint8, 128, 1 << 18),  # as s8 -128: 2^32, 0
    ],
)
def test_integer_sums_past_32_bits_wrap_as_numpy(dtype, value, k):
    """The s32 sums pass 2^31 (or reach 2^32): mma and wgmma without .satfinite wrap them, and
    the low byte is NumPy's wrapped int8 / uint8 product."""
    check_exact(dtype, 16, 16, k, 0, 1, values=constant(value, dtype))
    check_exact(dtype, 20, 24, k, 1, 0, values=constant(value, dtype), seed=1)


@pytest.mark.parametrize("byte", [1, 255])
def test_bool_many_true_pairs_stay_true(byte):
    """All of k true: the sum of the bytes' products is k (or 65025 k for bytes of 255, past
    2^31, where .satfinite stops it rather than let it wrap); C is true everywhere. Bytes
    other than 0 and 1 are true, as NumPy and gemm_tiled_bool read them."""

    def ones(rng, count):
        return np.full(count, byte, np.uint8).view(np.bool_)

    check_exact(np.bool_, 16, 24, 1 << 17, 0, 1, values=ones)
    check_exact(np.bool_, 130, 40, 5000, 1, 0, values=ones, seed=1)


@pytest.mark.parametrize("k", [128, 100])  # gemm_wgmma (aligned rows) and gemm_imma on Hopper
def test_bool_bytes_other_than_one_never_cancel(k):
    """Bytes of 1 and 255, both true: read as s8 their products would be +1 and -1 and many
    sums zero (false); the kernels multiply bool's bytes as u8, so every sum is positive."""

    def ones(rng, count):
        return rng.choice(np.array([1, 255], np.uint8), count).view(np.bool_)

    check_exact(np.bool_, 200, 300, k, 0, 1, values=ones)


# ---- 2-, 4- and 8-byte integers: exact, as products of their bytes (byte_split.c) ----
#
# On an H100 or H200 (the 1-byte wgmma kernel), products from 512^3 multiply-adds up run as
# one 1-byte product per diagonal of byte pairs, shifted into C; 8-byte ones per chunk of 2^13
# of k. The shapes here are past 512^3; elsewhere they run on gemm_tiled, as the smaller ones
# do (SHAPES above).

WIDE_SHAPES = [(600, 520, 530), (530, 270, 1001), (1000, 1000, 200)]


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("m, n, k", WIDE_SHAPES)
@pytest.mark.parametrize("dtype", list(WIDE_INTEGER), ids=lambda d: np.dtype(d).name)
def test_wide_integers_exact_every_transpose(dtype, m, n, k, trans_a, trans_b):
    check_exact(dtype, m, n, k, trans_a, trans_b, seed=m + n + k)


@pytest.mark.parametrize("dtype", list(WIDE_INTEGER), ids=lambda d: np.dtype(d).name)
def test_wide_integers_strided_broadcast_and_offset(dtype):
    check_exact(dtype, 300, 310, 620, 0, 0, batch=3, pad=3, seed=1)
    check_exact(dtype, 300, 310, 620, 1, 1, batch=3, broadcast_b=True, shift=1, seed=2)


@pytest.mark.parametrize(
    "dtype, k", [(np.int64, 2 * 8192 + 5), (np.uint64, 8192 + 16), (np.int32, 9000), (np.uint16, 4096)]
)
def test_wide_integers_every_byte_255(dtype, k):
    """Elements with every byte 255 (-1 or the largest unsigned): each diagonal's sum of
    byte products is as large as it gets, 255^2 (s + 1) k, which for 8-byte elements must
    stay exact below 2^32 in each chunk of k. C is NumPy's wrapped k (or k's negation)."""

    def full(rng, count):
        return np.full(count, np.iinfo(dtype).max if np.iinfo(dtype).min == 0 else -1, dtype)

    check_exact(dtype, 200, 300, k, 0, 1, values=full)
    check_exact(dtype, 160, 264, k, 1, 0, values=full, seed=1)


@pytest.mark.parametrize("dtype", [np.int64, np.uint32], ids=lambda d: np.dtype(d).name)
def test_wide_integers_k_past_2_to_the_17(dtype):
    """k = 2^17 + 3: sixteen chunks of k for 8-byte elements, full-range values."""
    check_exact(dtype, 40, 40, (1 << 17) + 3, 0, 0, seed=3)


@pytest.mark.parametrize("dtype", [np.int16, np.uint32, np.int64], ids=lambda d: np.dtype(d).name)
def test_wide_integers_from_host_arrays(dtype):
    """pyctk.matmul on host arrays large enough to be split into bytes, and int8 @ uint8,
    which NumPy computes as int16."""
    rng = np.random.default_rng(22)
    a = integer_values(rng, 700 * 600, dtype, 600).reshape(700, 600)
    b = integer_values(rng, 600 * 520, dtype, 600).reshape(600, 520)
    np.testing.assert_array_equal(pyctk.matmul(a, b, backend="tiled"), np.matmul(a, b))
    a8 = integer_values(rng, 700 * 600, np.int8, 600).reshape(700, 600)
    b8 = integer_values(rng, 600 * 520, np.uint8, 600).reshape(600, 520)
    np.testing.assert_array_equal(pyctk.matmul(a8, b8), np.matmul(a8, b8))


@pytest.mark.parametrize("dtype", list(INTEGER), ids=lambda d: np.dtype(d).name)
def test_integers_from_host_arrays(dtype):
    """pyctk.matmul on host arrays (the host pipeline's tiles, then multiply) is NumPy's."""
    rng = np.random.default_rng(21)
    a = integer_values(rng, 300 * 500, dtype, 500).reshape(300, 500)
    b = integer_values(rng, 500 * 260, dtype, 500).reshape(500, 260)
    np.testing.assert_array_equal(pyctk.matmul(a, b, backend="tiled"), np.matmul(a, b))
    np.testing.assert_array_equal(pyctk.matmul(a, b.T.copy().T, backend="tiled"), np.matmul(a, b))
