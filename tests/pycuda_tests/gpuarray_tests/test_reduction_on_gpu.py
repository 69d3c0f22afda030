"""Reductions (gpuarray.sum, dot, max, min, any, all, subset_*; ReductionKernel) and scans
(InclusiveScanKernel, ExclusiveScanKernel) on a real GPU, against NumPy: sizes around every
block and tile edge (0, 1, 2^k +- 1, millions), each dtype, views, streams; PyCUDA's
documented ReductionKernel examples (a dot product, a struct min/max); and the speed of a
2^28-element sum and dot against the GPU's copy bandwidth.

Values are small integers where the comparison is exact (every partial sum is exact in
float32 too); random floats are compared with a tolerance that grows with the size."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyctk.driver as cuda
from pyctk import gpuarray, reduction, scan, tools
from support.minmax_reduction import MINMAX_PREAMBLE

pytestmark = pytest.mark.gpu

SUMMED = [
    np.dtype(d)
    for d in ("float32", "float64", "int8", "int32", "int64", "uint8", "uint32", "bool", "complex64", "complex128")
]
ORDERED = [np.dtype(d) for d in ("float32", "float64", "int8", "uint8", "int16", "int32", "int64", "uint64")]
TILE = 2048  # the scans' tile (scan.py's TILE)
EDGES = [
    0,
    1,
    2,
    3,
    31,
    32,
    33,
    255,
    256,
    257,
    2047,
    2048,
    2049,
    4095,
    4096,
    4097,
    65535,
    65537,
    TILE * TILE - 1,
    TILE * TILE + 1,
    (1 << 20) + 1,
]
SIZES = st.sampled_from(EDGES) | st.integers(0, 20000)


def small_integers(dtype, size, seed):
    """``size`` values in -3..3 (0..3 unsigned, 0/1 bool) as ``dtype``."""
    rng = np.random.default_rng(seed)
    low = 0 if dtype.kind in "ub" else -3
    values = rng.integers(low, 2 if dtype.kind == "b" else 4, size)
    if dtype.kind == "c":
        values = values + 1j * rng.integers(-3, 4, size)
    return values.astype(dtype)


def same(result, expected):
    """``result`` (a 0-d GPUArray) holds ``expected``, in its dtype."""
    host = result.get()
    assert result.shape == () and host.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(host, expected)


# --- sum, dot, max, min, any, all ---------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(SUMMED), SIZES, st.integers(0, 2**32 - 1))
def test_sum_is_numpys(dtype, size, seed):
    host = small_integers(dtype, size, seed)
    same(gpuarray.sum(gpuarray.to_gpu(host)), np.sum(host))  # (NumPy's dtype: int8 sums in int64)
    if dtype.kind != "c":
        same(gpuarray.sum(gpuarray.to_gpu(host), dtype=np.float64), np.sum(host, dtype=np.float64))


@pytest.mark.parametrize("dtype, size", [(np.float32, 10**7 + 3), (np.float64, 10**7 + 3), (np.float32, 5000)])
def test_sum_of_random_floats(dtype, size):
    host = np.random.default_rng(size).random(size).astype(dtype)
    exact = np.sum(host, dtype=np.float64)
    rtol = np.finfo(dtype).eps * (64 + size / 2**16)  # grows with the elements each thread folds
    result = gpuarray.to_gpu(host).sum()
    assert result.dtype == dtype
    np.testing.assert_allclose(float(result.get()), exact, rtol=rtol)


def test_sum_wraps_in_a_given_narrow_dtype_and_empty_sums_are_zero():
    host = np.full(1000, 100, np.int8)
    same(gpuarray.sum(gpuarray.to_gpu(host), dtype=np.int8), np.sum(host, dtype=np.int8))
    same(gpuarray.sum(gpuarray.zeros(0, np.float32)), np.float32(0))
    same(gpuarray.sum(gpuarray.zeros((3, 0), np.int32)), np.int64(0))
    same(gpuarray.to_gpu(np.array(7.5)).sum(), np.float64(7.5))  # 0-d


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(
        [
            (np.float32, np.float32),
            (np.float64, np.float64),
            (np.int32, np.int32),
            (np.int8, np.int8),
            (np.float32, np.float64),
            (np.int32, np.float32),
            (np.complex64, np.complex64),
            (np.complex64, np.float32),
        ]
    ),
    SIZES,
    st.integers(0, 2**32 - 1),
)
def test_dot_is_numpys(dtypes, size, seed):
    a, b = (small_integers(np.dtype(d), size, seed + k) for k, d in enumerate(dtypes))
    result = gpuarray.dot(gpuarray.to_gpu(a), gpuarray.to_gpu(b))
    same(result, np.dot(a, b))  # no conjugate: NumPy's dot, not vdot


def test_dot_of_random_floats_and_in_a_given_dtype():
    rng = np.random.default_rng(5)
    a, b = rng.random(10**7, np.float32), rng.random(10**7, np.float32)
    result = gpuarray.dot(gpuarray.to_gpu(a), gpuarray.to_gpu(b))
    np.testing.assert_allclose(float(result.get()), np.dot(a.astype(np.float64), b), rtol=2e-5)
    wide = gpuarray.dot(gpuarray.to_gpu(a), gpuarray.to_gpu(b), dtype=np.float64)
    assert wide.dtype == np.float64
    np.testing.assert_allclose(float(wide.get()), np.dot(a.astype(np.float64), b), rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(ORDERED), SIZES.filter(bool), st.integers(0, 2**32 - 1), st.booleans())
def test_max_and_min_are_numpys(dtype, size, seed, extreme_values):
    host = small_integers(dtype, size, seed)
    if extreme_values and dtype.kind in "iu":  # the dtype's ends: the neutral elements must lose
        info = np.iinfo(dtype)
        host[:] = info.min
        host[seed % size] = info.max
    x = gpuarray.to_gpu(host)
    same(gpuarray.max(x), np.max(host))
    same(gpuarray.min(x), np.min(host))
    same(x.max(), np.max(host))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size, at", [(1, 0), (5000, 0), (5000, 4999), (10**6 + 1, 123457)])
def test_max_and_min_propagate_nan_as_numpy(dtype, size, at):
    host = np.random.default_rng(size).random(size).astype(dtype)
    host[at] = np.nan
    x = gpuarray.to_gpu(host)
    assert np.isnan(gpuarray.max(x).get()) and np.isnan(gpuarray.min(x).get())
    host[at] = -np.inf
    same(gpuarray.min(gpuarray.to_gpu(host)), np.min(host))
    same(gpuarray.max(gpuarray.to_gpu(-np.full(size, np.inf, dtype))), dtype(-np.inf))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.complex64])
@pytest.mark.parametrize("size", [0, 1, 257, 5000, 10**6 + 3])
def test_any_and_all_are_numpys(dtype, size):
    zeros, ones = np.zeros(size, dtype), np.ones(size, dtype)
    for host in (zeros, ones):
        x = gpuarray.to_gpu(host)
        same(gpuarray.any(x), np.any(host))
        same(x.all(), np.all(host))
    if size:
        one_nonzero, one_zero = zeros.copy(), ones.copy()
        one_nonzero[size // 2] = 1j if dtype == np.complex64 else 1  # (an imaginary part counts)
        one_zero[-1] = 0
        same(gpuarray.to_gpu(one_nonzero).any(), np.bool_(True))
        same(gpuarray.to_gpu(one_zero).all(), np.bool_(False))
    if size and dtype == np.float32:
        nan = np.full(size, np.nan, dtype)
        same(gpuarray.to_gpu(nan).all(), np.bool_(True))  # NaN is nonzero


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from([np.int32, np.int64, np.uint32]),
    st.integers(1, 20000),
    st.integers(0, 20000),
    st.integers(0, 2**32 - 1),
)
def test_subset_reductions_are_numpys(index_dtype, size, count, seed):
    rng = np.random.default_rng(seed)
    a, b = small_integers(np.dtype(np.float32), size, seed), small_integers(np.dtype(np.int32), size, seed + 1)
    subset = rng.integers(0, size, count).astype(index_dtype)  # with repeats, in any order
    a_gpu, b_gpu, subset_gpu = gpuarray.to_gpu(a), gpuarray.to_gpu(b), gpuarray.to_gpu(subset)
    same(gpuarray.subset_sum(subset_gpu, a_gpu), np.sum(a[subset]))
    same(gpuarray.subset_dot(subset_gpu, a_gpu, b_gpu), np.dot(a[subset], b[subset]))
    if count:
        same(gpuarray.subset_max(subset_gpu, b_gpu), np.max(b[subset]))
        same(gpuarray.subset_min(subset_gpu, a_gpu), np.min(a[subset]))


def test_views_and_layouts_reduce_as_numpy():
    host = np.arange(60, dtype=np.float64).reshape(6, 10) % 7 - 3
    x = gpuarray.to_gpu(host)
    for view, host_view in ((x[::2, 1::3], host[::2, 1::3]), (x.T, host.T), (x[:, ::-1], host[:, ::-1])):
        same(gpuarray.sum(view), np.sum(host_view))
        same(gpuarray.max(view), np.max(host_view))
    fortran = gpuarray.to_gpu(np.asfortranarray(host))
    same(gpuarray.dot(x, fortran), np.sum(host * host))  # paired element by element, not by memory
    same(gpuarray.dot(x.T, fortran.T), np.sum(host * host))
    same(gpuarray.dot(x[:, ::2], x[:, 1::2]), np.sum(host[:, ::2] * host[:, 1::2]))
    subset = gpuarray.to_gpu(np.array([0, 11, 59], np.int64))
    same(gpuarray.subset_sum(subset, fortran), np.sum(host.ravel()[[0, 11, 59]]))  # C order, as NumPy's flat


def test_stream_and_allocator():
    stream = cuda.Stream()
    host = np.arange(100000, dtype=np.int64)
    x = gpuarray.to_gpu(host)
    total = gpuarray.sum(x, stream=stream)
    top = gpuarray.max(x, stream=stream)
    stream.synchronize()
    same(total, np.sum(host))
    same(top, np.max(host))
    pool = tools.DeviceMemoryPool()
    result = gpuarray.dot(x, x, allocator=pool.allocate)
    assert result.allocator == pool.allocate
    same(result, np.dot(host, host))


# --- ReductionKernel ------------------------------------------------------------------------------


def test_reduction_kernel_as_pycudas_documentation():
    a = gpuarray.arange(400, dtype=np.float32)
    b = gpuarray.arange(400, dtype=np.float32)
    krnl = reduction.ReductionKernel(
        np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]", arguments="float *x, float *y"
    )
    my_dot_prod = krnl(a, b).get()
    assert my_dot_prod.dtype == np.float32
    np.testing.assert_allclose(my_dot_prod, np.dot(np.arange(400.0), np.arange(400.0)), rtol=1e-6)

    host = np.random.default_rng(0).random((10, 200)).astype(np.float32)
    rows = gpuarray.to_gpu(host)
    red = reduction.ReductionKernel(np.float32, neutral=0, reduce_expr="a+b", arguments="float *in")
    a_sum = gpuarray.empty(10, dtype=np.float32)
    for i in range(10):
        assert red(rows[i], out=a_sum[i]) is not None
    np.testing.assert_allclose(a_sum.get(), host.sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize("size", [0, 1, 20000, 10**6 + 1])
def test_struct_reduction_as_pycudas_minmax_example(size):
    mmc_dtype = np.dtype([("cur_min", np.float32), ("cur_max", np.float32)])
    tools.get_or_register_dtype("minmax_collector", mmc_dtype)
    red = reduction.ReductionKernel(
        mmc_dtype,
        neutral="minmax_collector(10000, -10000)",
        reduce_expr="agg_mmc(a, b)",
        map_expr="minmax_collector(x[i], x[i])",
        arguments="float *x",
        preamble=MINMAX_PREAMBLE,
    )
    host = np.random.default_rng(size).random(size).astype(np.float32)
    minmax = red(gpuarray.to_gpu(host)).get()
    assert minmax.dtype == mmc_dtype and minmax.shape == ()
    assert minmax["cur_min"] == (np.min(host) if size else 10000)  # empty: the neutral value
    assert minmax["cur_max"] == (np.max(host) if size else -10000)


def test_reduction_kernel_scalars_ranges_wrapper_and_empty_input():
    host = np.arange(1000, dtype=np.float64)
    x = gpuarray.to_gpu(host)
    scaled = reduction.ReductionKernel(np.float64, "0", "a+b", "s * x[i]", "double s, double *x")
    same(scaled(2.5, x), np.sum(2.5 * host))
    same(scaled(1, x, range=slice(10, 500, 7)), np.sum(host[10:500:7]))
    same(scaled(1, x, slice=slice(-20, None)), np.sum(host[-20:]))
    same(scaled(1, x, range=slice(900, 100, -3)), np.sum(host[900:100:-3]))
    same(scaled(1, x, range=slice(5, 5, 1)), np.float64(0))
    same(scaled(1, gpuarray.zeros(0, np.float64)), np.float64(0))
    launches = []

    def wrapper(kernel):
        def launch(*args):
            launches.append(args[0])  # blocks
            return kernel(*args)

        return launch

    same(scaled(1, gpuarray.to_gpu(np.ones(10**6)), kernel_wrapper=wrapper), np.float64(10**6))
    assert len(launches) == 2 and launches[1] == 1  # stage 1, then one block of stage 2


def test_reduction_kernel_counts_past_four_billion():
    # A range past 2^32 runs the 64-bit loops without memory to match.
    count = reduction.ReductionKernel(np.int64, "0", "a+b", "1", "char *unused")
    same(count(gpuarray.zeros(1, np.int8), range=slice(0, 5 * 10**9, 1)), np.int64(5 * 10**9))
    above = reduction.ReductionKernel(np.int64, "0", "a+b", "i >= 4294967296L ? 1 : 0", "char *unused")
    same(above(gpuarray.zeros(1, np.int8), range=slice(2**32 - 2, 2**32 + 3, 1)), np.int64(3))


# --- scans ------------------------------------------------------------------------------------------

SCANS = {  # name: (dtype, scan_expr, neutral, NumPy's inclusive scan)
    "sum": (np.int32, "a+b", "0", lambda v: np.cumsum(v, dtype=v.dtype)),
    "sum64": (np.int64, "a+b", "0", lambda v: np.cumsum(v, dtype=v.dtype)),
    "float": (np.float64, "a+b", "0", np.cumsum),  # integer values: exact
    "max": (np.float32, "fmaxf(a, b)", "__int_as_float(0xff800000)", np.maximum.accumulate),  # -inf
    "min8": (np.uint8, "min(a, b)", "255", np.minimum.accumulate),
    "last_nonzero": (np.int32, "b != 0 ? b : a", "0", None),  # associative, not commutative
}


def last_nonzero(values):
    positions = np.where(values != 0, np.arange(values.size), -1)
    latest = np.maximum.accumulate(positions) if values.size else positions
    return np.where(latest >= 0, values[np.maximum(latest, 0)], 0).astype(values.dtype)


def expected_scans(name, host):
    dtype, _, _, inclusive = SCANS[name]
    result = (inclusive or last_nonzero)(host).astype(dtype)
    neutral = {"max": -np.inf, "min8": 255}.get(name, 0)
    return result, np.concatenate([np.array([neutral], dtype), result[:-1]])


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(SCANS)), SIZES, st.integers(0, 2**32 - 1), st.booleans())
def test_scans_are_numpys(name, size, seed, in_place):
    dtype, expr, neutral, _ = SCANS[name]
    host = small_integers(np.dtype(dtype), size, seed)
    inclusive, exclusive = expected_scans(name, host)
    for kernel, expected in (
        (scan.InclusiveScanKernel(dtype, expr), inclusive),
        (scan.ExclusiveScanKernel(dtype, expr, neutral), exclusive),
    ):
        x = gpuarray.to_gpu(host)
        result = kernel(x) if in_place else kernel(x, "new")
        assert (result is x) == in_place and result.shape == x.shape and result.dtype == dtype
        np.testing.assert_array_equal(result.get(), expected[:size])
        if not in_place:
            np.testing.assert_array_equal(x.get(), host)  # the input is left as it was


@pytest.mark.parametrize("size", [10**7 + 3, TILE**2 * 3 + 5])
def test_large_scans(size):
    host = np.random.default_rng(size).integers(-5, 6, size).astype(np.int64)
    x = gpuarray.to_gpu(host)
    scan.ExclusiveScanKernel(np.int64, "a+b", "0")(x)
    expected = np.cumsum(host)
    np.testing.assert_array_equal(x.get(), np.concatenate([[0], expected[:-1]]))
    values = np.random.default_rng(1).random(size).astype(np.float32)
    result = scan.InclusiveScanKernel(np.float32, "fmaxf(a, b)")(gpuarray.to_gpu(values), "new")
    np.testing.assert_array_equal(result.get(), np.maximum.accumulate(values))


def test_scans_of_views_into_outputs_on_a_stream():
    host = np.arange(10000, dtype=np.int32) % 5
    x = gpuarray.to_gpu(host)
    cumsum = scan.InclusiveScanKernel(np.int32, "a+b")
    stream = cuda.Stream()
    out = gpuarray.zeros(5000, np.int32)
    cumsum(x[::2], out, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(out.get(), np.cumsum(host[::2]))
    cumsum(x[::-3])  # in place, into the view
    expected = host.copy()
    expected[::-3] = np.cumsum(host[::-3])
    np.testing.assert_array_equal(x.get(), expected)
    strided_out = gpuarray.zeros(20000, np.int32)
    cumsum(gpuarray.to_gpu(host), strided_out[::2])
    np.testing.assert_array_equal(strided_out.get()[::2], np.cumsum(host))
    assert not strided_out.get()[1::2].any()


def test_complex_scan():
    host = (np.arange(5000) % 3 + 1j * (np.arange(5000) % 5)).astype(np.complex64)
    result = scan.InclusiveScanKernel(np.complex64, "a+b")(gpuarray.to_gpu(host), "new")
    np.testing.assert_array_equal(result.get(), np.cumsum(host))
