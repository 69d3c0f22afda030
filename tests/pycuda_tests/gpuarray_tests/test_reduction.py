"""ReductionKernel, the gpuarray reductions and the scans without a GPU: every generated
source compiles for sm_90 (NVRTC), the result dtypes are NumPy's, and bad calls raise before
any GPU work (the arrays here are GPUArrays over a made-up address: nothing is allocated)."""

from __future__ import annotations

import numpy as np
import pytest

from pyctk._pycuda.gpuarrays import reductions
from pyctk._pycuda.gpuarrays.array import GPUArray
from pyctk._pycuda.gpuarrays.reductions import ReductionKernel
from pyctk._pycuda.gpuarrays.scan import ExclusiveScanKernel, InclusiveScanKernel
from pyctk._pycuda.kernels import source_modules
from pyctk._pycuda.kernels.c_types import get_or_register_dtype
from support.minmax_reduction import MINMAX_PREAMBLE

BASE = 1 << 20  # a made-up device address
REAL = [np.dtype(d) for d in ("float32", "float64", "int32", "int64", "uint8")]
ALL = [*REAL, np.dtype(bool), np.dtype(np.complex64)]

MINMAX_DTYPE = np.dtype([("cur_min", np.float32), ("cur_max", np.float32)])


def over(shape, dtype, **kwargs) -> GPUArray:
    return GPUArray(shape, dtype, gpudata=BASE, **kwargs)


def compiles(source: str) -> None:
    assert source_modules.compile(source, no_extern_c=True, arch="sm_90", cache_dir=False)


# --- generated sources compile ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_sum_any_all_sources_compile(dtype):
    compiles(reductions._builtin("sum", reductions._sum_dtype(dtype), (dtype,)).source())
    compiles(reductions._builtin("any", np.dtype(bool), (dtype,)).source())
    compiles(reductions._builtin("all", np.dtype(bool), (dtype,)).source())


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_dot_sources_compile(dtype):
    compiles(reductions._builtin("dot", dtype, (dtype, dtype)).source())
    mixed = np.result_type(dtype, np.float32)
    compiles(reductions._builtin("dot", mixed, (dtype, np.dtype(np.float32)), np.dtype(np.int32)).source())


@pytest.mark.parametrize("dtype", REAL, ids=str)
@pytest.mark.parametrize("what", ["max", "min"])
def test_extreme_sources_compile(what, dtype):
    compiles(reductions._builtin(what, dtype, (dtype,)).source())
    compiles(reductions._builtin(what, dtype, (dtype,), np.dtype(np.int64)).source())


def test_sum_of_a_range_compiles_and_names_its_kernels():
    kernel = reductions.get_sum_kernel(np.float64, np.float32)
    source = kernel.source(use_range=True)
    assert "pyctk_sum_stage1(out_type *pyctk_out, float *in, long start, long step, unsigned long n)" in source
    assert "pyctk_sum_stage2(out_type *pyctk_out, const out_type *pycuda_reduction_inp, float *in," in source
    compiles(source)


def test_struct_dtype_out_compiles():
    get_or_register_dtype("minmax_collector", MINMAX_DTYPE)
    kernel = ReductionKernel(
        MINMAX_DTYPE,
        neutral="minmax_collector(10000, -10000)",
        reduce_expr="agg_mmc(a, b)",
        map_expr="minmax_collector(x[i], x[i])",
        arguments="float *x",
        preamble=MINMAX_PREAMBLE,
    )
    assert "typedef minmax_collector out_type;" in kernel.source()
    assert "volatile" not in kernel.source().replace(MINMAX_PREAMBLE, "")  # shuffles, not volatile tricks
    compiles(kernel.source())


def test_pycudas_documented_dot_compiles_and_takes_a_number_as_neutral():
    kernel = ReductionKernel(
        np.float32, neutral=0, reduce_expr="a+b", map_expr="x[i]*y[i]", arguments="float *x, float *y"
    )
    assert kernel.neutral == "0" and kernel.dtype_out == np.float32
    compiles(kernel.source())


@pytest.mark.parametrize("dtype", [*ALL, np.dtype(np.complex128)], ids=str)
def test_scan_sources_compile(dtype):
    operator = "a || b" if dtype == np.dtype(bool) else "a+b"
    compiles(InclusiveScanKernel(dtype, operator).source())
    compiles(ExclusiveScanKernel(dtype, operator, "0").source())


@pytest.mark.parametrize(
    "dtype, expr, neutral",
    [  # (the GPU tests' scans)
        (np.float32, "fmaxf(a, b)", "__int_as_float(0xff800000)"),
        (np.uint8, "min(a, b)", "255"),
        (np.int32, "b != 0 ? b : a", "0"),
        (np.int32, "max(a, b)", "-2147483647 - 1"),
    ],
)
def test_other_scans_compile(dtype, expr, neutral):
    source = InclusiveScanKernel(dtype, expr, name_prefix="running").source()
    assert "running_scan_tiles(" in source
    compiles(source)
    compiles(ExclusiveScanKernel(dtype, expr, neutral).source())


# --- dtypes: NumPy's ----------------------------------------------------------------------------


@pytest.fixture
def chosen(monkeypatch):
    """What each reduction would launch, instead of launching: (kernel, its arguments)."""
    calls = []
    monkeypatch.setattr(ReductionKernel, "__call__", lambda self, *args, **kwargs: calls.append((self, args)))
    return calls


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.int8,
        np.uint8,
        np.int16,
        np.uint16,
        np.int32,
        np.uint32,
        np.int64,
        np.uint64,
        np.float32,
        np.float64,
        np.complex64,
    ],
)
def test_sum_widens_as_numpy(chosen, dtype):
    reductions.sum_(over((3,), dtype))
    assert chosen[-1][0].dtype_out == np.add.reduce(np.zeros(3, dtype)).dtype
    widened = {
        np.bool_: np.int64,
        np.int8: np.int64,
        np.int16: np.int64,
        np.int32: np.int64,
        np.uint8: np.uint64,
        np.uint16: np.uint64,
        np.uint32: np.uint64,
    }
    expected = widened.get(dtype, dtype)
    assert chosen[-1][0].dtype_out == expected  # (unlike PyCUDA, which sums int8 in int8)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    reductions.sum_(over((3,), dtype), dtype=wide)
    assert chosen[-1][0].dtype_out == wide


@pytest.mark.parametrize(
    "a, b",
    [
        (np.float32, np.float32),
        (np.float32, np.float64),
        (np.int8, np.int8),
        (np.int32, np.float32),
        (np.complex64, np.float64),
        (np.bool_, np.bool_),
    ],
)
def test_dot_dtype_is_numpys(chosen, a, b):
    x, y = over((4,), a), over((4,), b)
    reductions.dot(x, y)
    kernel, arguments = chosen[-1]
    assert kernel.dtype_out == np.dot(np.ones(4, a), np.ones(4, b)).dtype
    assert arguments == (x, y)
    subset = over((2,), np.int32)
    reductions.subset_dot(subset, x, y)
    assert chosen[-1][0].dtype_out == kernel.dtype_out and chosen[-1][1] == (subset, x, y)


def test_extremes_any_all_and_subsets_choose_their_kernels(chosen):
    x, subset = over((5,), np.int16), over((2,), np.uint32)
    reductions.max_(x)
    reductions.min_(x)
    assert [k.dtype_out for k, _ in chosen] == [np.int16, np.int16]
    assert [k.name for k, _ in chosen] == ["pyctk_max", "pyctk_min"]
    reductions.subset_max(subset, x)
    reductions.subset_sum(subset, x)
    assert chosen[-2][1] == (subset, x) and chosen[-1][0].dtype_out == np.int64
    reductions.any_(x)
    reductions.all_(x)
    assert [k.dtype_out for k, _ in chosen[-2:]] == [np.bool_, np.bool_]
    assert reductions.get_sum_kernel(None, np.int8).dtype_out == np.int8  # PyCUDA's factory: no widening
    assert reductions.get_sum_kernel(None, np.int8) is reductions.get_sum_kernel(np.int8, np.int8)  # made once


def test_the_max_neutral_elements():
    assert reductions._extreme_neutral("max", np.dtype(np.int64)) == "(-9223372036854775807LL - 1)"
    assert reductions._extreme_neutral("min", np.dtype(np.uint64)) == "18446744073709551615ULL"
    assert reductions._extreme_neutral("max", np.dtype(np.uint8)) == "0ULL"
    assert reductions._extreme_neutral("min", np.dtype(np.float32)).startswith("__longlong_as_double")


# --- errors, before any GPU work --------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments, kwargs, match",
    [
        ("float a", {}, "at least one array"),
        (None, {}, "needs arguments"),
        ("float *x", {}, "name an array argument 'in'"),
        ("float in, float *x", {}, "name an array argument 'in'"),
    ],
)
def test_reduction_kernel_bad_definitions(arguments, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ReductionKernel(np.float32, "0", "a+b", arguments=arguments, **kwargs)


def test_reduction_kernel_unregistered_dtype_out():
    with pytest.raises(ValueError, match="get_or_register_dtype"):
        ReductionKernel(np.dtype([("p", np.int8), ("q", np.float64)]), "0", "a+b", arguments="float *in")


def test_reduction_kernel_bad_calls():
    kernel = ReductionKernel(np.float32, "0", "a+b", arguments="float *in")
    x = over((3,), np.float32)
    with pytest.raises(TypeError, match="takes 1 arguments"):
        kernel()
    with pytest.raises(TypeError, match="not both"):
        kernel(x, range=slice(0, 3, 1), slice=slice(0, 3))
    with pytest.raises(ValueError, match="dtype"):
        kernel(x, out=over((), np.float64))
    with pytest.raises(ValueError, match="empty"):
        kernel(x, out=over((0,), np.float32))
    with pytest.raises(TypeError, match="not an array in GPU memory"):
        kernel(np.ones(3, np.float32))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: reductions.max_(over((0,), np.float32)), ValueError, "zero-size array to reduction operation maximum"),
        (lambda: reductions.min_(over((2, 0), np.int8)), ValueError, "operation minimum which has no identity"),
        (lambda: reductions.subset_min(over((0,), np.int32), over((4,), np.float32)), ValueError, "zero-size"),
        (lambda: reductions.max_(over((3,), np.bool_)), TypeError, "max of bool"),
        (lambda: reductions.min_(over((3,), np.complex64)), TypeError, "min of complex64"),
        (lambda: reductions.extreme("median", over((3,), np.float32)), ValueError, "'max' or 'min'"),
        (lambda: reductions.sum_(over((3,), np.complex64), dtype=np.float32), TypeError, "imaginary"),
        (lambda: reductions.dot(over((3,), np.float32), over((4,), np.float32)), ValueError, "same size"),
        (lambda: reductions.subset_sum(over((2,), np.float32), over((4,), np.float32)), TypeError, "integer indices"),
        (lambda: reductions.sum_(np.ones(3)), TypeError, "not a GPUArray"),
        (lambda: reductions.dot(over((3,), np.float32), [1, 2, 3]), TypeError, "b is a list"),
    ],
)
def test_reduction_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: ExclusiveScanKernel(np.float32, "a+b"), ValueError, "needs neutral"),
        (lambda: InclusiveScanKernel(np.float32, "a+b")(over((2, 3), np.float32)), ValueError, "1-D"),
        (lambda: InclusiveScanKernel(np.float32, "a+b")(over((3,), np.float64)), TypeError, "dtype float64"),
        (
            lambda: InclusiveScanKernel(np.float32, "a+b")(over((3,), np.float32), over((4,), np.float32)),
            ValueError,
            "shape",
        ),
        (lambda: InclusiveScanKernel(np.float32, "a+b")(np.ones(3, np.float32)), TypeError, "GPUArray"),
        (lambda: InclusiveScanKernel(np.float16, "a+b"), ValueError, "float16"),
    ],
)
def test_scan_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_empty_scan_returns_at_once():
    kernel = InclusiveScanKernel(np.int32, "a+b")
    empty = GPUArray((0,), np.int32)
    assert kernel(empty) is empty
