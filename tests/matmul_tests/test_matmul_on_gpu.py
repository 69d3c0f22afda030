"""pyctk.matmul on a GPU, every backend and dtype, against a float64 NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

import pyctk
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import library as _library
from support.gpu_memory import process_device_bytes

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("product_route")]  # each test cold and kept

BACKENDS = ("auto", "tiled", "cublas")
DTYPES = (np.float32, np.float64)
TOLERANCE = {np.float32: 1e-5, np.float64: 1e-12}  # relative Frobenius error


def random(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def relative_error(result, a, b):
    reference = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.linalg.norm(reference)
    return np.linalg.norm(result.astype(np.float64) - reference) / (scale or 1.0)


def assert_close(result, a, b, dtype):
    assert result.shape == (a.shape[0], b.shape[1]) and result.dtype == dtype
    assert relative_error(result, a, b) <= TOLERANCE[dtype]


SHAPES = [  # (m, k, n): 1 x 1, K = 1, sizes off the 64 x 64 tile, tall, wide, deep
    (1, 1, 1),
    (1, 7, 1),
    (7, 1, 5),
    (2, 3, 4),
    (63, 65, 64),
    (64, 64, 64),
    (65, 129, 63),
    (100, 1, 100),
    (1, 300, 513),
    (513, 300, 1),
    (257, 1000, 31),
    (1000, 17, 1000),
    (4, 4096, 4),
    (333, 4096, 222),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_matches_numpy(m, k, n, dtype, backend):
    rng = np.random.default_rng([m, k, n])
    a, b = random(rng, (m, k), dtype), random(rng, (k, n), dtype)
    assert_close(pyctk.matmul(a, b, backend=backend), a, b, dtype)


@pytest.mark.parametrize("backend", ("tiled", "cublas"))
@pytest.mark.parametrize("dtype", DTYPES)
def test_large_square(dtype, backend):
    rng = np.random.default_rng(7)
    a, b = random(rng, (2048, 2048), dtype), random(rng, (2048, 2048), dtype)
    assert_close(pyctk.matmul(a, b, backend=backend), a, b, dtype)


def layouts(rng, dtype):
    """Operands with every memory layout pyctk must accept: name -> (a, b), (37 x 45) @ (45 x 29)."""
    base_a, base_b = random(rng, (80, 90), dtype), random(rng, (90, 80), dtype)
    return {
        "C order": (np.ascontiguousarray(base_a[:37, :45]), np.ascontiguousarray(base_b[:45, :29])),
        "Fortran order": (np.asfortranarray(base_a[:37, :45]), np.asfortranarray(base_b[:45, :29])),
        "row slices (pitch)": (base_a[:37, 3:48], base_b[5:50, :29]),
        "transposed views": (base_b[:45, :37].T, base_a[:29, :45].T),
        "step 2": (base_a[::2, ::2][:37, :45], base_b[::2, ::2][:45, :29]),
        "negative strides": (base_a[::-1, ::-1][:37, :45], base_b[::-1][:45, :29]),
        "zero stride (broadcast)": (np.broadcast_to(base_a[:1, :45], (37, 45)), base_b[:45, :29]),
    }


@pytest.mark.parametrize("backend", ("tiled", "cublas"))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", list(layouts(np.random.default_rng(0), np.float32)))
def test_any_layout(layout, dtype, backend):
    a, b = layouts(np.random.default_rng(1), dtype)[layout]
    assert_close(pyctk.matmul(a, b, backend=backend), a, b, dtype)


@pytest.mark.parametrize("backend", ("tiled", "cublas"))
def test_mixed_dtypes_promote_like_numpy(backend):
    rng = np.random.default_rng(2)
    a, b = random(rng, (30, 40), np.float32), random(rng, (40, 20), np.float64)
    result = pyctk.matmul(a, b, backend=backend)
    assert result.dtype == np.result_type(a, b) == np.float64
    assert_close(result, a, b, np.float64)
    ints = np.arange(12).reshape(4, 3)
    assert pyctk.matmul(ints, b[:3], backend=backend).dtype == np.float64


@pytest.mark.parametrize("backend", ("tiled", "cublas"))
@pytest.mark.parametrize("shape_a, shape_b", [((0, 3), (3, 4)), ((3, 0), (0, 4)), ((3, 4), (4, 0)), ((0, 0), (0, 0))])
def test_zero_size(shape_a, shape_b, backend):
    a, b = np.ones(shape_a, np.float32), np.ones(shape_b, np.float32)
    result = pyctk.matmul(a, b, backend=backend)
    np.testing.assert_array_equal(result, np.matmul(a, b))
    assert result.shape == np.matmul(a, b).shape


@pytest.mark.parametrize("backend", ("tiled", "cublas"))
@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_and_inf_propagate_like_numpy(dtype, backend):
    rng = np.random.default_rng(3)
    a, b = random(rng, (70, 50), dtype), random(rng, (50, 66), dtype)
    a[3, 7], a[10, 0], b[4, 9], b[0, 65] = np.nan, np.inf, -np.inf, np.inf
    result, expected = pyctk.matmul(a, b, backend=backend), np.matmul(a, b)
    np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))
    np.testing.assert_array_equal(np.isposinf(result), np.isposinf(expected))
    np.testing.assert_array_equal(np.isneginf(result), np.isneginf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(result[finite], expected[finite], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("backend", ("tiled", "cublas"))
def test_out_any_layout_and_dtype(backend):
    rng = np.random.default_rng(4)
    a, b = random(rng, (40, 30), np.float64), random(rng, (30, 20), np.float64)
    expected = a @ b
    for out in (
        np.full((40, 20), np.nan),
        np.full((20, 40), np.nan).T,
        np.full((40, 60), np.nan)[:, ::3],
        np.full((40, 20), np.nan, np.float32),
    ):
        returned = pyctk.matmul(a, b, out=out, backend=backend)
        assert returned is out
        np.testing.assert_allclose(out, expected, rtol=1e-5 if out.dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("backend", ("tiled", "cublas"))
def test_out_may_overlap_inputs(backend):
    rng = np.random.default_rng(5)
    a = random(rng, (50, 50), np.float64)
    expected = a @ a
    assert pyctk.matmul(a, a, out=a, backend=backend) is a
    np.testing.assert_allclose(a, expected, rtol=1e-12)


def test_no_device_memory_growth_over_1000_calls():
    rng = np.random.default_rng(6)
    a, b = random(rng, (300, 200), np.float32), random(rng, (200, 100), np.float32)
    for backend in ("tiled", "cublas"):  # warm up: cuBLAS keeps a workspace
        pyctk.matmul(a, b, backend=backend)
    before = process_device_bytes()
    for i in range(1000):
        pyctk.matmul(a, b, backend=("tiled", "cublas")[i % 2])
    assert process_device_bytes() == before


def test_out_of_device_memory_is_a_memory_error_and_frees_everything():
    """A 2^20 x 2^20 float32 product (4 TiB each of A, B and C) with C on A and B must be
    on the GPU whole, which no GPU holds; the call fails before the host buffers are read,
    so small stand-ins are safe here."""
    size = 1 << 20
    small = np.zeros(4, np.float32)
    pointer = small.ctypes.data
    before = process_device_bytes()
    with pytest.raises(pyctk.OutOfMemoryError) as caught:
        _library.call(
            "gpumatmul_matmul_host",
            _contexts.context(0),
            2,
            0,
            0,
            0,
            size,
            size,
            size,
            pointer,
            size,
            pointer,
            size,
            pointer,
            size,
        )
    assert isinstance(caught.value, MemoryError)
    assert "C overlaps A or B" in str(caught.value)
    assert process_device_bytes() == before
    # The context still works afterwards.
    a = np.eye(3, dtype=np.float32)
    np.testing.assert_array_equal(pyctk.matmul(a, a), a)


def test_info_reports_the_gpu_and_its_image():
    report = pyctk.info()
    assert report["error"] is None and report["driver_version"]
    device = report["devices"][0]
    major, minor = map(int, device["compute_capability"].split("."))
    image = device["kernel_image"]
    assert image["kind"] == "SASS" and image["arch"] // 10 == major and image["arch"] <= 10 * major + minor
    assert {lib["name"] for lib in report["libraries"]} >= {"cudart", "cublasLt", "cublas", "gpumatmul"}
