"""GPUArray arithmetic and pyctk.cumath on a real GPU, against NumPy: every operator for
every dtype (arrays, Python and NumPy scalars, both ways round), broadcasting, views with
steps, transposes and negative strides, 0-d and empty arrays, in-place forms (overlapping
too), NaN, infinities and signed zeros where NumPy defines them, every cumath function,
maximum/minimum, where/if_positive, the logical functions, real/imag/conj, reverse,
mul_add, matmul, and PyTorch and CuPy arrays as operands (skipped when missing).

Integers and booleans compare exactly; floating-point results within a few units in the
last place of NumPy's (a few more for transcendental functions, whose CUDA versions differ
from the C library's by up to 2-4 ulp)."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyctk.driver as cuda
from pyctk import gpuarray
from pyctk._pycuda.gpuarrays import arithmetic, cumath, engine, operations
from support.gpuarray_cases import DTYPES, IN_PLACE, OPERATORS

pytestmark = pytest.mark.gpu

SCALARS = [
    True,
    3,
    -2,
    2.5,
    1.5j,
    np.int8(3),
    np.uint16(2),
    np.int64(-3),
    np.float32(0.75),
    np.float64(-1.25),
    np.complex64(1 - 2j),
    np.array(2.0),
]


def sample(dtype: np.dtype, shape, seed: int = 0, nonnegative: bool = False) -> np.ndarray:
    """Values of ``dtype``: small integers, and for floats quarters (exact sums and products)."""
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    low = 0 if dtype.kind == "u" or nonnegative else -6
    values = rng.integers(low, 7, size=shape) / (4 if dtype.kind in "fc" else 1)
    if dtype.kind == "c":
        values = values + 1j * rng.integers(low, 7, size=shape) / 4
    return values.astype(dtype)


def ulps(dtype: np.dtype, transcendental: bool = False) -> float:
    """The relative tolerance for results of ``dtype`` (complex functions are computed
    differently by CUDA's libcu++ and by NumPy: more room)."""
    if dtype.kind not in "fc":
        return 0
    return np.finfo(dtype).eps * (4 if not transcendental else 1024 if dtype.kind == "c" else 64)


def assert_numpys(got: gpuarray.GPUArray, want, transcendental: bool = False) -> None:
    want = np.asarray(want)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    host = got.get()
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(host, want)
    else:
        rtol = ulps(want.dtype, transcendental)
        np.testing.assert_allclose(host, want, rtol=rtol, atol=rtol, equal_nan=True)


def numpy_result(function, *args):
    """NumPy's result, or the built-in type of the exception it raises (NumPy's own classes
    derive from them), with warnings silenced."""
    try:
        with np.errstate(all="ignore"):
            return function(*args)
    except (TypeError, ValueError, OverflowError) as error:
        return next(kind for kind in type(error).__mro__ if kind.__module__ == "builtins")


@st.composite
def layouts(draw, ndim):
    """How a view lies over its base: an axis order, and a step along each axis (negative ones too)."""
    return draw(st.permutations(range(ndim))), [draw(st.sampled_from([1, 1, 2, -1, -3])) for _ in range(ndim)]


def laid_out(layout, shape, dtype, seed, nonnegative=False):
    """(host view, the same view of a GPUArray) of ``shape``, as ``layout`` says: a transposed
    base sliced with steps. Made by the test from drawn layouts (data generation that runs
    pyctk could draw differently on a replay: hypothesis's "inconsistent data generation")."""
    order, steps = layout
    base = sample(dtype, [shape[axis] * abs(steps[axis]) for axis in order], seed, nonnegative)
    inverse = list(np.argsort(order))
    index = tuple(slice(None, None, step) for step in steps) or Ellipsis
    return base.transpose(inverse)[index], gpuarray.to_gpu(base).transpose(inverse)[index]


# --- operators --------------------------------------------------------------------------------


@pytest.mark.parametrize("op", list(OPERATORS))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_operator_of_arrays_and_scalars(op, dtype):
    function = OPERATORS[op]
    a, b = sample(dtype, (3, 5), 1), sample(dtype, (3, 5), 2, nonnegative=op == "**")
    x, y = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    cases = [((x, y), (a, b))]
    for scalar in SCALARS:
        cases += [((x, scalar), (a, scalar)), ((scalar, y), (scalar, b))]
    for gpu_args, host_args in cases:
        want = numpy_result(function, *host_args)
        if isinstance(want, type):
            with pytest.raises(want):
                function(*gpu_args)
        else:
            assert_numpys(function(*gpu_args), want, transcendental=op in ("**", "/"))


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    op=st.sampled_from(list(OPERATORS)),
    dtypes=st.tuples(st.sampled_from(DTYPES), st.sampled_from(DTYPES)),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=5),
)
def test_operators_broadcast_any_layouts_as_numpy(data, op, dtypes, shapes):
    drawn = [data.draw(layouts(len(shape))) for shape in shapes.input_shapes]  # (all first)
    (a, x), (b, y) = [
        laid_out(layout, shape, dtype, k, nonnegative=op == "**")
        for k, (layout, shape, dtype) in enumerate(zip(drawn, shapes.input_shapes, dtypes))
    ]
    want = numpy_result(OPERATORS[op], a, b)
    if isinstance(want, type):
        with pytest.raises(want):
            OPERATORS[op](x, y)
    else:
        assert_numpys(OPERATORS[op](x, y), want, transcendental=op in ("**", "/"))


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    op=st.sampled_from(list(IN_PLACE)),
    dtypes=st.tuples(st.sampled_from(DTYPES), st.sampled_from(DTYPES)),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=5),
)
def test_in_place_operators_as_numpy(data, op, dtypes, shapes):
    drawn = [data.draw(layouts(len(shape))) for shape in shapes.input_shapes]  # (all first)
    (a, x), (b, y) = [
        laid_out(layout, shape, dtype, k, nonnegative=op == "**")
        for k, (layout, shape, dtype) in enumerate(zip(drawn, shapes.input_shapes, dtypes))
    ]
    want = numpy_result(IN_PLACE[op], a.copy(), b)
    if isinstance(want, type):
        with pytest.raises(want):
            IN_PLACE[op](x, y)
        return
    result = IN_PLACE[op](x, y)
    assert result is x
    assert_numpys(x, want, transcendental=op in ("**", "/"))


def test_in_place_with_scalars_and_overlaps():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = gpuarray.to_gpu(a)
    x += 2
    x *= np.int32(3)
    x //= 2
    x[1:] -= x[:-1]
    x[:, ::-1] += x
    a += 2
    a *= np.int32(3)
    a //= 2
    a[1:] -= a[:-1].copy()
    a[:, ::-1] += a.copy()
    np.testing.assert_array_equal(x.get(), a)
    f = gpuarray.to_gpu(np.ones(4, np.float32))
    f /= 3
    f **= 2
    np.testing.assert_allclose(f.get(), np.full(4, 1 / 9, np.float32), rtol=1e-6)
    with pytest.raises(TypeError, match="same_kind"):
        x += 1.5


def test_operations_on_layouts_met_before_are_launched_as_kept_and_stay_numpys(monkeypatch):
    """An operation into a new result on operands of layouts it met before runs as it was
    launched then (engine._kept), without planning again: the same results as NumPy; a
    view of the same shape, other dtypes, an F-ordered operand are other layouts; a scalar
    that no longer fits the loop's dtype gets NumPy's answer (OverflowError, or a comparison
    that holds everywhere), not a kept launch's."""
    x, y = sample(np.dtype(np.float32), (6, 8), 1), sample(np.dtype(np.float32), (6, 8), 2)
    small = sample(np.dtype(np.int8), (6, 8), 3)
    a, b, s = gpuarray.to_gpu(x), gpuarray.to_gpu(y), gpuarray.to_gpu(small)
    first = {
        "a + b": (lambda: a + b, x + y),
        "a * 2.0": (lambda: a * 2.0, x * 2.0),
        "2 - a": (lambda: 2 - a, 2 - x),
        "s + 100": (lambda: s + 100, small + 100),
        "s < 100": (lambda: s < 100, small < 100),
    }
    for compute, want in first.values():
        assert_numpys(compute(), want)
    kept = dict(engine._kept)
    assert len(kept) >= len(first), "the operations above were not kept"

    def planned(*args):
        raise AssertionError("planned and launched again: the kept launch did not run")

    monkeypatch.setattr(engine, "_launch", planned)
    for compute, want in first.values():
        assert_numpys(compute(), want)
    monkeypatch.undo()

    f = gpuarray.to_gpu(np.asfortranarray(y))
    others = [
        (lambda: a[:, ::2] + b[:, ::2], x[:, ::2] + y[:, ::2]),
        (lambda: a + f, x + y),
        (lambda: a.astype(np.float64) + b, x.astype(np.float64) + y),
        (lambda: s < 1000, small < 1000),
    ]
    for compute, want in others:
        assert_numpys(compute(), want)
    with pytest.raises(OverflowError):
        s + 1000


def test_zero_d_and_empty_operands():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x, s = gpuarray.to_gpu(a), gpuarray.to_gpu(np.array(2.5, np.float32))
    assert_numpys(x * s, a * np.float32(2.5))
    assert_numpys(s - x[1], np.float32(2.5) - a[1])
    assert_numpys(s + s, np.array(5, np.float32))
    empty = gpuarray.to_gpu(np.zeros((0, 3), np.int16))
    assert_numpys(empty + x[0], np.zeros((0, 3), np.int16) + a[0])
    assert_numpys(-empty, np.zeros((0, 3), np.int16))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_floor_division_and_remainder_of_special_floats(dtype):
    values = np.array([-7.5, -0.0, 0.0, 3.0, 5.5, np.inf, -np.inf, np.nan, 1e-30, -2.0], dtype)
    a, b = np.meshgrid(values, values)
    x, y = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    with np.errstate(all="ignore"):
        for op in ("//", "%", "/", "**"):
            want = OPERATORS[op](a, b)
            got = OPERATORS[op](x, y).get()
            np.testing.assert_allclose(got, want, rtol=ulps(np.dtype(dtype), True), equal_nan=True)
            finite = np.isfinite(want) & (want == 0)
            assert (np.signbit(got[finite]) == np.signbit(want[finite])).all(), op  # NumPy's signed zeros


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64], ids=str)
def test_integer_division_remainder_and_powers_are_numpys(dtype):
    info = np.iinfo(dtype)
    values = np.unique(
        np.array(
            [
                v
                for v in (info.min, info.min + 1, -7, -1, 0, 1, 3, 7, info.max - 1, info.max)
                if info.min <= v <= info.max
            ],
            dtype,
        )
    )
    a, b = np.meshgrid(values, values)
    x, y = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    with np.errstate(all="ignore"):
        for op in ("//", "%"):
            np.testing.assert_array_equal(OPERATORS[op](x, y).get(), OPERATORS[op](a, b))
    exponents = np.arange(0, 64, 7).astype(dtype)
    bases = np.array([3, 2, 1, 0] + ([-1, -3] if info.min else []), dtype)
    p, q = np.meshgrid(bases, exponents)
    np.testing.assert_array_equal((gpuarray.to_gpu(p) ** gpuarray.to_gpu(q)).get(), p**q)


def test_int64_powers_are_exact():
    a = np.array([3, -3, 7, 2], np.int64)
    np.testing.assert_array_equal((gpuarray.to_gpu(a) ** 39).get(), a**39)
    np.testing.assert_array_equal((3 ** gpuarray.to_gpu(np.arange(40, dtype=np.int64))).get(), 3 ** np.arange(40))


def test_int64_and_uint64_compare_exactly():
    a = np.array([-1, 0, 2**62, 2**63 - 1, -(2**63)], np.int64)
    b = np.array([2**64 - 1, 0, 2**62, 2**63, 1], np.uint64)
    x, y = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    for op in ("==", "!=", "<", "<=", ">", ">="):
        np.testing.assert_array_equal(OPERATORS[op](x, y).get(), OPERATORS[op](a, b))
        np.testing.assert_array_equal(OPERATORS[op](y, x).get(), OPERATORS[op](b, a))
        for value in (2**64 - 1, -1, 2**70, -(2**70), 300):
            np.testing.assert_array_equal(OPERATORS[op](y, value).get(), OPERATORS[op](b, value))
            np.testing.assert_array_equal(OPERATORS[op](x, value).get(), OPERATORS[op](a, value))


def test_complex_comparisons_are_lexicographic_as_numpys():
    values = np.array([1 + 2j, 1 + 3j, 0 + 5j, 2 - 1j, complex(np.nan, 1), complex(1, np.nan)], np.complex128)
    a, b = np.meshgrid(values, values)
    x, y = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    for op in ("==", "!=", "<", "<=", ">", ">="):
        np.testing.assert_array_equal(OPERATORS[op](x, y).get(), OPERATORS[op](a, b))
    np.testing.assert_array_equal(arithmetic.maximum(x, y).get(), np.maximum(a, b))
    np.testing.assert_array_equal(arithmetic.minimum(x, y).get(), np.minimum(a, b))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_powers(dtype):
    a = np.array([1 + 1j, -2 + 0.5j, 0, 0, 3j, 0.5], dtype)
    b = np.array([2, 0.5 - 1j, 0, 2, -3, 1j], dtype)
    assert_numpys(gpuarray.to_gpu(a) ** gpuarray.to_gpu(b), a**b, transcendental=True)
    assert_numpys(gpuarray.to_gpu(a) ** 3, a**3, transcendental=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_unary_operators(dtype):
    a = sample(dtype, (4, 5), 3)
    x = gpuarray.to_gpu(a)
    for function in (operator.neg, operator.invert, abs):
        want = numpy_result(function, a)
        if isinstance(want, type):
            with pytest.raises(want):
                function(x)
        else:
            assert_numpys(function(x), want)
            assert_numpys(function(x[:, ::-2]), function(a[:, ::-2]))
    if dtype.kind in "iu":
        edge = np.array([np.iinfo(dtype).min, np.iinfo(dtype).max], dtype)
        with np.errstate(all="ignore"):
            assert_numpys(abs(gpuarray.to_gpu(edge)), abs(edge))
            assert_numpys(-gpuarray.to_gpu(edge), -edge)


def test_large_contiguous_and_on_a_stream():
    n = 1 << 24
    a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    x, y = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    stream = cuda.Stream()
    z = engine.apply(operations.BINARY["*"], (x, y), stream=stream)
    z = engine.apply(operations.BINARY["+"], (z, 2.0), stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(z.get(), a * b + 2)


def test_more_than_2_to_the_32_elements_index_in_64_bits():
    rows = gpuarray.to_gpu((np.arange(65537) % 100).astype(np.int8).reshape(-1, 1))
    columns = gpuarray.to_gpu((np.arange(65536) % 7).astype(np.int8).reshape(1, -1))
    total = rows + columns  # 65537 * 65536 > 2**32 elements, broadcast: the strided kernel
    assert total.shape == (65537, 65536)
    for row in (0, 1, 40000, 65536):
        expected = (row % 100 + np.arange(65536) % 7).astype(np.int8)
        np.testing.assert_array_equal(total[row].get(), expected)


def test_host_arrays_are_refused_naming_to_gpu():
    x = gpuarray.to_gpu(np.ones(3))
    for call in (lambda: x + np.ones(3), lambda: np.ones(3) * x, lambda: x @ np.ones((3, 3))):
        with pytest.raises(TypeError, match="to_gpu"):
            call()


# --- the functions ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int32, np.uint8, np.complex64], ids=str)
def test_maximum_and_minimum_propagate_nan(dtype):
    dtype = np.dtype(dtype)
    a = sample(dtype, (3, 4), 4)
    b = sample(dtype, (3, 4), 5)
    if dtype.kind in "fc":
        a[0, 0], b[1, 1], a[2, 2] = np.nan, np.nan, -np.inf
    x, y = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    for ours, numpys in [(arithmetic.maximum, np.maximum), (arithmetic.minimum, np.minimum)]:
        assert_numpys(ours(x, y), numpys(a, b))
        assert_numpys(ours(x, 2), numpys(a, 2))
        assert_numpys(ours(1.5, y[:, ::-1]), numpys(1.5, b[:, ::-1]))
        out = gpuarray.to_gpu(np.zeros((3, 4), np.complex128))
        assert ours(x, y, out=out) is out
        assert_numpys(out, numpys(a, b).astype(np.complex128))


def test_where_and_if_positive():
    c = np.array([[-1.5, 0.0, 2.0, np.nan], [0.0, 3.0, -0.0, 1.0]], np.float32)
    a = np.arange(8, dtype=np.int16).reshape(2, 4)
    b = np.linspace(-1, 1, 4)
    gc, ga, gb = gpuarray.to_gpu(c), gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    assert_numpys(arithmetic.where(gc, ga, gb), np.where(c != 0, a, b))
    assert_numpys(arithmetic.where(gc, ga, 7), np.where(c != 0, a, 7))
    assert_numpys(arithmetic.where(gc, 2.5, ga), np.where(c != 0, 2.5, a))
    assert_numpys(arithmetic.if_positive(gc, ga, gb), np.where(c > 0, a, b))
    assert_numpys(arithmetic.if_positive(gc.T, ga.T, -1), np.where(c.T > 0, a.T, -1))
    z = np.array([1 + 1j, -1j, 0, 2], np.complex64)
    assert_numpys(arithmetic.where(gpuarray.to_gpu(z), 1, 0), np.where(z != 0, 1, 0))


def test_logical_functions():
    a = np.array([0, 1, 2, 0, -3], np.int32)
    b = np.array([0.0, 0.0, np.nan, 1.5, -0.0])
    z = np.array([0, 1j, 0, 1, 0], np.complex64)
    ga, gb, gz = gpuarray.to_gpu(a), gpuarray.to_gpu(b), gpuarray.to_gpu(z)
    for ours, numpys in [(arithmetic.logical_and, np.logical_and), (arithmetic.logical_or, np.logical_or)]:
        assert_numpys(ours(ga, gb), numpys(a, b))
        assert_numpys(ours(gz, 1), numpys(z, 1))
        assert_numpys(ours(0, gb), numpys(0, b))
    assert_numpys(arithmetic.logical_not(gz), np.logical_not(z))
    assert_numpys(arithmetic.logical_not(gb[::-1]), np.logical_not(b[::-1]))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_real_imag_conj(dtype):
    c = sample(np.dtype(dtype), (3, 4), 6)
    x = gpuarray.to_gpu(c)
    for view, host in [(x, c), (x.T, c.T), (x[::-1, 1::2], c[::-1, 1::2])]:
        assert_numpys(view.real, host.real)
        assert_numpys(view.imag, host.imag)
        assert_numpys(view.conj(), host.conj())
    out = gpuarray.to_gpu(np.zeros((3, 4), dtype))
    assert x.conj(out=out) is out
    assert_numpys(out, c.conj())
    r = gpuarray.to_gpu(np.arange(3.0))
    assert r.real is r and r.conj() is r
    assert_numpys(r.imag, np.zeros(3))


@pytest.mark.parametrize("shape, order", [((9,), "C"), ((3, 4), "C"), ((3, 4), "F"), ((0,), "C"), ((), "C")])
def test_reverse(shape, order):
    a = np.asarray(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape), order=order)
    x = gpuarray.to_gpu(a)
    result = x.reverse()
    assert result.shape == a.shape and result.strides == x.strides
    np.testing.assert_array_equal(result.get().ravel(order=order), a.ravel(order=order)[::-1])
    np.testing.assert_array_equal(gpuarray.to_gpu(np.arange(10))[::3].reverse().get(), np.arange(10)[::3][::-1])


def test_mul_add():
    a, b = sample(np.dtype(np.float32), (50,), 7), sample(np.dtype(np.float32), (50,), 8)
    x, y = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    assert_numpys(x.mul_add(2, y, -0.5), 2 * a - 0.5 * b)
    assert_numpys(x[::-1].mul_add(np.float64(2), y, 3), np.float64(2) * a[::-1] + 3 * b)
    out = gpuarray.empty((50,), np.float64)
    assert x.mul_add(1.5, y, 2, out=out) is out
    assert_numpys(out, (1.5 * a + 2 * b).astype(np.float64))
    times = []
    x.mul_add(1, y, 1, add_timer=lambda n, seconds: times.append((n, seconds())))
    assert times[0][0] == 150 and times[0][1] >= 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32], ids=str)
def test_matmul(dtype):
    dtype = np.dtype(dtype)
    a, b = sample(dtype, (2, 3, 4), 9), sample(dtype, (4, 5), 10)
    x, y = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    product = x @ y
    assert isinstance(product, gpuarray.GPUArray)
    assert_numpys(product, a @ b)
    assert_numpys(x[0] @ y[:, 0], a[0] @ b[:, 0])
    assert_numpys(x.transpose((0, 2, 1))[:, ::-1] @ x[0], a.transpose(0, 2, 1)[:, ::-1] @ a[0])
    out = gpuarray.empty((2, 3, 5), dtype)
    assert arithmetic.matmul(x, y, out=out) is out
    assert_numpys(out, a @ b)
    with pytest.raises(ValueError):
        x @ x


# --- cumath -------------------------------------------------------------------------------------

DOMAINS = {
    "log": (0.1, 8),
    "log10": (0.1, 8),
    "sqrt": (0, 8),
    "asin": (-1, 1),
    "acos": (-1, 1),
    "exp": (-8, 8),
    "sinh": (-8, 8),
    "cosh": (-8, 8),
}


@pytest.mark.parametrize("name", list(cumath.FUNCTIONS))
@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.complex64, np.complex128, np.int16, np.int32, np.uint16], ids=str
)
def test_cumath_functions_are_numpys(name, dtype):
    dtype = np.dtype(dtype)
    low, high = DOMAINS.get(name, (-8, 8))
    values = np.linspace(low, high, 37)
    if dtype.kind == "c":
        values = values + 1j * np.linspace(high, low, 37) / 2
    a = values.astype(dtype) if dtype.kind in "fc" else np.round(values).astype(dtype)
    numpys = cumath.FUNCTIONS[name]
    want = numpy_result(numpys, a)
    function = getattr(cumath, name)
    if isinstance(want, type):
        with pytest.raises(want):
            function(gpuarray.to_gpu(a))
        return
    assert_numpys(function(gpuarray.to_gpu(a)), want, transcendental=True)
    assert_numpys(function(gpuarray.to_gpu(a.reshape(37, 1))[::-2]), numpys(a.reshape(37, 1)[::-2]), True)
    out = gpuarray.empty(a.shape, want.dtype)
    assert function(gpuarray.to_gpu(a), out=out) is out
    assert_numpys(out, want, transcendental=True)


def test_cumath_special_values_and_the_old_positional_argument():
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1.5], np.float32)
    x = gpuarray.to_gpu(a)
    for name in ("fabs", "ceil", "floor", "sqrt", "exp", "tanh"):
        with np.errstate(all="ignore"):
            assert_numpys(getattr(cumath, name)(x), cumath.FUNCTIONS[name](a), transcendental=True)
    out = gpuarray.empty_like(x)
    with pytest.warns(DeprecationWarning):
        assert cumath.fabs(x, out) is out
    assert_numpys(out, np.fabs(a))
    stream = cuda.Stream()
    with pytest.warns(DeprecationWarning):
        result = cumath.floor(x, stream)
    stream.synchronize()
    assert_numpys(result, np.floor(a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_fmod_frexp_ldexp_modf_for_both_precisions(dtype):
    a = np.array([-7.25, -0.5, 0.0, 0.75, 3.0, 1e30, 5e-39, np.inf, np.nan], dtype)
    m = np.array([2.0, -0.3, 1.0, 0.25, -2.0, 7.0, 3.0, 1.0, 2.0], dtype)
    x, y = gpuarray.to_gpu(a), gpuarray.to_gpu(m)
    with np.errstate(all="ignore"):
        assert_numpys(cumath.fmod(x, y), np.fmod(a, m))
        assert_numpys(cumath.fmod(x, 2), np.fmod(a, 2))
        significand, exponent = cumath.frexp(x)
        want_significand, want_exponent = np.frexp(a)
        assert_numpys(significand, want_significand)
        finite = np.isfinite(a)
        np.testing.assert_array_equal(exponent.get()[finite], want_exponent[finite])
        assert exponent.dtype == np.int32
        e = np.array([0, -3, 5, 100, -1000, 2000, -60, 1, 2], np.int32)
        assert_numpys(cumath.ldexp(x, gpuarray.to_gpu(e)), np.ldexp(a, e))
        assert_numpys(
            cumath.ldexp(x, gpuarray.to_gpu(e.astype(np.int64) * 10**8)), np.ldexp(a, e.astype(np.int64) * 10**8)
        )
        assert_numpys(cumath.ldexp(x, 3), np.ldexp(a, 3))
        fractional, integral = cumath.modf(x[::-1])
        want_fractional, want_integral = np.modf(a[::-1])
        assert_numpys(fractional, want_fractional)
        assert_numpys(integral, want_integral)


# --- other libraries' arrays as operands --------------------------------------------------------


def test_torch_tensors_are_operands():
    torch = pytest.importorskip("torch")
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = gpuarray.to_gpu(a)
    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    assert_numpys(x + t, a + a)
    assert_numpys(x * t.T.contiguous().T, a * a)
    assert_numpys(x[:, ::2] * t[:, 1::2], a[:, ::2] * a[:, 1::2])
    assert_numpys(x - t[0], a - a[0])
    assert_numpys(arithmetic.maximum(x, t.flip(1)), np.maximum(a, a[:, ::-1]))
    assert_numpys(cumath.fmod(x, t + 1), np.fmod(a, a + 1))
    x += t
    assert_numpys(x, 2 * a)


def test_cupy_arrays_are_operands():
    cupy = pytest.importorskip("cupy")
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = gpuarray.to_gpu(a)
    c = cupy.asarray(a)
    assert_numpys(x + c, a + a)
    assert_numpys(x < c[:, ::-1], a < a[:, ::-1])
    assert_numpys(arithmetic.where(c, x, 0), np.where(a != 0, a, 0))
    assert_numpys(x @ cupy.asarray(a.T.copy()), a @ a.T)
