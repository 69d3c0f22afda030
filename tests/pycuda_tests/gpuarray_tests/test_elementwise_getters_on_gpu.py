"""PyCUDA's kernel getters of pycuda.elementwise on a GPU, each kernel launched as PyCUDA's
callers launch it (``prepared_call`` with PyCUDA's arguments) on small arrays, against NumPy;
the texture references' stand-ins bound as PyCUDA binds textures (examples/from-wiki/
gpu_scalar_mult.py's linear combination)."""

from __future__ import annotations

import numpy as np
import pytest

from pyctk import elementwise, gpuarray

pytestmark = pytest.mark.gpu

N = 37  # not a multiple of a block: the loop's bound matters
F32, F64, C64, I32 = (np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.int32))
RNG = np.random.default_rng(44)
# Sums of products compare with an atol: the GPU's fused multiply-adds round once where NumPy
# rounds twice, which a sum near 0 shows as a large relative difference.


def launch(function, *arguments):
    """A prepared call over a grid smaller than the arrays: the kernels' loops stride."""
    function.prepared_call((2, 1), (16, 1, 1), *arguments)


def data(dtype, n=N, low=-4, high=4):
    values = RNG.uniform(low, high, n) + (1j * RNG.uniform(low, high, n) if np.dtype(dtype).kind == "c" else 0)
    return gpuarray.to_gpu(values.astype(dtype))


def test_take_reads_each_source_through_its_bound_stand_in():
    sources = [data(F32, 10), data(F32, 10)]
    indices = gpuarray.to_gpu(RNG.integers(0, 10, N).astype(np.int32))
    function, texrefs = elementwise.get_take_kernel(F32, I32, 2)
    dests = [gpuarray.empty(N, F32) for _ in sources]
    for source, texref in zip(sources, texrefs):
        source.bind_to_texref_ext(texref)
    launch(function, indices.gpudata, *[d.gpudata for d in dests], indices.size)
    for source, dest in zip(sources, dests):
        np.testing.assert_array_equal(dest.get(), source.get()[indices.get()])


@pytest.mark.parametrize("with_offsets", [False, True])
def test_take_put_moves_indexed_elements(with_offsets):
    source = data(F64, 20)
    dest = gpuarray.zeros(N, F64)
    dest_idx = gpuarray.to_gpu(RNG.permutation(N)[:10].astype(np.int32))
    src_idx = gpuarray.to_gpu(RNG.integers(0, 15, 10).astype(np.int32))
    function, (texref,) = elementwise.get_take_put_kernel(F64, I32, with_offsets)
    source.bind_to_texref(texref)
    offsets = [3] if with_offsets else []
    launch(function, dest_idx.gpudata, src_idx.gpudata, dest.gpudata, *offsets, dest_idx.size)
    expected = np.zeros(N)
    expected[dest_idx.get()] = source.get()[src_idx.get() + (3 if with_offsets else 0)]
    np.testing.assert_array_equal(dest.get(), expected)


def test_put_scatters_each_source():
    sources = [data(F32, 10), data(F32, 10)]
    dests = [gpuarray.zeros(N, F32), gpuarray.zeros(N, F32)]
    dest_idx = gpuarray.to_gpu(RNG.permutation(N)[:10].astype(np.int64))
    function = elementwise.get_put_kernel(F32, np.dtype(np.int64), 2)
    launch(function, dest_idx.gpudata, *[d.gpudata for d in dests], *[s.gpudata for s in sources], dest_idx.size)
    for source, dest in zip(sources, dests):
        expected = np.zeros(N, np.float32)
        expected[dest_idx.get()] = source.get()
        np.testing.assert_array_equal(dest.get(), expected)


def test_copy_converts_as_c_converts():
    source = data(F64)
    dest = gpuarray.empty(N, I32)
    launch(elementwise.get_copy_kernel(I32, F64), dest.gpudata, source.gpudata, N)
    np.testing.assert_array_equal(dest.get(), source.get().astype(np.int32))  # truncation, as C's


def test_linear_combination_as_gpu_scalar_mult_calls_it():
    # examples/from-wiki/gpu_scalar_mult.py's main(): the factors on the GPU, bound as textures
    kernel, texrefs = elementwise.get_linear_combination_kernel(((True, F32, F32), (True, F32, F32)), F32)
    a, b = gpuarray.to_gpu(np.array(5, np.float32)), gpuarray.to_gpu(np.array(7, np.float32))
    x, y = data(F32, 1 << 12), data(F32, 1 << 12)
    z = gpuarray.empty_like(x)
    a.bind_to_texref_ext(texrefs[0], allow_double_hack=True)
    b.bind_to_texref_ext(texrefs[1], allow_double_hack=True)
    kernel.prepared_call(x._grid, x._block, x.gpudata, y.gpudata, z.gpudata, x.mem_size)
    np.testing.assert_allclose(z.get(), 5 * x.get() + 7 * y.get(), rtol=1e-6, atol=1e-5)
    b.fill(-1)  # the kernel reads the bound array at each launch
    kernel.prepared_call(x._grid, x._block, x.gpudata, y.gpudata, z.gpudata, x.mem_size)
    np.testing.assert_allclose(z.get(), 5 * x.get() - y.get(), rtol=1e-6, atol=1e-5)


def test_linear_combination_takes_scalars_by_value_too():
    kernel, texrefs = elementwise.get_linear_combination_kernel(((False, F64, F64), (True, F64, F64)), F64)
    b, x, y = gpuarray.to_gpu(np.array([-2.0])), data(F64), data(F64)
    z = gpuarray.empty_like(x)
    b.bind_to_texref(texrefs[0])
    launch(kernel, 3.0, x.gpudata, y.gpudata, z.gpudata, N)
    np.testing.assert_allclose(z.get(), 3 * x.get() - 2 * y.get(), atol=1e-13)


@pytest.mark.parametrize(("x_is_scalar", "y_is_scalar"), [(False, False), (True, False), (False, True)])
def test_axpbyz(x_is_scalar, y_is_scalar):
    x, y, z = data(F32), data(C64), gpuarray.empty(N, C64)
    launch(
        elementwise.get_axpbyz_kernel(F32, C64, C64, x_is_scalar, y_is_scalar),
        2,
        x.gpudata,
        3j,
        y.gpudata,
        z.gpudata,
        N,
    )
    x_host, y_host = x.get(), y.get()
    x_host = x_host[:1] if x_is_scalar else x_host
    y_host = y_host[:1] if y_is_scalar else y_host
    np.testing.assert_allclose(z.get(), 2 * x_host + 3j * y_host, rtol=1e-6, atol=1e-5)


def test_axpbz():
    x, z = data(I32), gpuarray.empty(N, F64)
    launch(elementwise.get_axpbz_kernel(I32, F64), 0.5, x.gpudata, 1.25, z.gpudata, N)
    np.testing.assert_array_equal(z.get(), 0.5 * x.get() + 1.25)


@pytest.mark.parametrize(
    ("dtype", "operator", "numpy_operator"),
    [
        (F64, "+", np.add),
        (F64, "/", np.divide),
        (I32, "**", np.power),
        (I32, "//", np.floor_divide),
        (I32, "%", np.remainder),
        (I32, "<<", np.left_shift),
    ],
)
def test_binary_op(dtype, operator, numpy_operator):
    x = gpuarray.to_gpu(RNG.integers(-9, 9, N).astype(dtype))
    y = gpuarray.to_gpu(RNG.integers(1, 5, N).astype(dtype))
    z = gpuarray.empty(N, dtype)
    launch(elementwise.get_binary_op_kernel(dtype, dtype, dtype, operator), x.gpudata, y.gpudata, z.gpudata, N)
    np.testing.assert_allclose(z.get(), numpy_operator(x.get(), y.get()))


def test_binary_op_of_a_gpu_scalar():
    x, y, z = data(F32), data(F32, 1), gpuarray.empty(N, F32)
    launch(elementwise.get_binary_op_kernel(F32, F32, F32, "*", False, True), x.gpudata, y.gpudata, z.gpudata, N)
    np.testing.assert_allclose(z.get(), x.get() * y.get()[0])


def test_rdivide():
    x, z = data(F32, low=1), gpuarray.empty(N, F32)
    launch(elementwise.get_rdivide_elwise_kernel(F32, F32), x.gpudata, 3, z.gpudata, N)
    np.testing.assert_allclose(z.get(), 3 / x.get(), rtol=1e-6)


def test_binary_func_and_its_scalar_twin():
    x, y, z = data(F64), data(F64), gpuarray.empty(N, F64)
    launch(elementwise.get_binary_func_kernel("atan2", F64, F64, F64), x.gpudata, y.gpudata, z.gpudata, N)
    np.testing.assert_allclose(z.get(), np.arctan2(x.get(), y.get()), atol=1e-14)
    launch(elementwise.get_binary_func_scalar_kernel("fmax", F64, F64, F64), x.gpudata, 0.5, z.gpudata, N)
    np.testing.assert_array_equal(z.get(), np.fmax(x.get(), 0.5))


@pytest.mark.parametrize(("func", "numpy_func"), [("max", np.maximum), ("min", np.minimum)])
def test_binary_minmax_as_numpys_nan_included(func, numpy_func):
    x_host = RNG.uniform(-1, 1, N)
    x_host[[3, 7]] = np.nan
    x, y, z = gpuarray.to_gpu(x_host), data(F64), gpuarray.empty(N, F64)
    launch(elementwise.get_binary_minmax_kernel(func, F64, F64, F64, False), x.gpudata, y.gpudata, z.gpudata, N)
    np.testing.assert_array_equal(z.get(), numpy_func(x_host, y.get()))
    launch(elementwise.get_binary_minmax_kernel(func, F64, F64, F64, True), x.gpudata, 0.25, z.gpudata, N)
    np.testing.assert_array_equal(z.get(), numpy_func(x_host, 0.25))


def test_fill_reverse_and_arange():
    z = gpuarray.empty(N, C64)
    launch(elementwise.get_fill_kernel(C64), 1 - 2j, z.gpudata, N)
    np.testing.assert_array_equal(z.get(), np.full(N, 1 - 2j, np.complex64))
    y, r = data(I32), gpuarray.empty(N, I32)
    launch(elementwise.get_reverse_kernel(I32), y.gpudata, r.gpudata, N)
    np.testing.assert_array_equal(r.get(), y.get()[::-1])
    a = gpuarray.empty(N, F32)
    launch(elementwise.get_arange_kernel(F32), a.gpudata, 1.5, 0.25, N)
    np.testing.assert_array_equal(a.get(), 1.5 + np.arange(N, dtype=np.float32) * np.float32(0.25))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_real_imag_and_conj(dtype):
    y = data(dtype)
    part = np.finfo(dtype).dtype
    for getter, expected, out in [
        (elementwise.get_real_kernel, y.get().real, part),
        (elementwise.get_imag_kernel, y.get().imag, part),
        (elementwise.get_conj_kernel, y.get().conj(), np.dtype(dtype)),
    ]:
        z = gpuarray.empty(N, out)
        launch(getter(np.dtype(dtype), out), y.gpudata, z.gpudata, N)
        np.testing.assert_array_equal(z.get(), expected)


@pytest.mark.parametrize(("is_base_array", "is_exp_array"), [(True, True), (True, False), (False, True)])
def test_pow_array(is_base_array, is_exp_array):
    x, y, z = data(F64, low=0.5), data(F64), gpuarray.empty(N, F64)
    base = x.gpudata if is_base_array else 1.5
    exponent = y.gpudata if is_exp_array else 2.5
    launch(elementwise.get_pow_array_kernel(F64, F64, F64, is_base_array, is_exp_array), base, exponent, z.gpudata, N)
    expected = (x.get() if is_base_array else 1.5) ** (y.get() if is_exp_array else 2.5)
    np.testing.assert_allclose(z.get(), expected, rtol=1e-14)


def test_integer_powers_are_exact():
    x = gpuarray.to_gpu(RNG.integers(-5, 5, N).astype(np.int64))
    z = gpuarray.empty(N, np.int64)
    launch(elementwise.get_pow_array_kernel(*[np.dtype(np.int64)] * 3, True, False), x.gpudata, 13, z.gpudata, N)
    np.testing.assert_array_equal(z.get(), x.get() ** 13)


def test_fmod_modf_frexp_and_ldexp_of_float32():
    x, m = data(F32, low=-100, high=100), data(F32, low=1, high=7)
    z, w = gpuarray.empty(N, F32), gpuarray.empty(N, F32)
    launch(elementwise.get_fmod_kernel(), x.gpudata, m.gpudata, z.gpudata, N)
    np.testing.assert_array_equal(z.get(), np.fmod(x.get(), m.get()))
    launch(elementwise.get_modf_kernel(), x.gpudata, z.gpudata, w.gpudata, N)
    fractions, integers = np.modf(x.get())
    np.testing.assert_array_equal(z.get(), integers)
    np.testing.assert_array_equal(w.get(), fractions)
    launch(elementwise.get_frexp_kernel(), x.gpudata, z.gpudata, w.gpudata, N)
    significands, exponents = np.frexp(x.get())
    np.testing.assert_array_equal(z.get(), significands)
    np.testing.assert_array_equal(w.get(), exponents.astype(np.float32))
    e = gpuarray.to_gpu(RNG.uniform(-5, 5, N).astype(np.float32))
    launch(elementwise.get_ldexp_kernel(), x.gpudata, e.gpudata, z.gpudata, N)
    np.testing.assert_array_equal(z.get(), np.ldexp(x.get(), e.get().astype(np.int32)))  # truncated, as C's


def test_unary_func():
    y, z = data(F64, low=0), gpuarray.empty(N, F64)
    launch(elementwise.get_unary_func_kernel("sqrt", F64), y.gpudata, z.gpudata, N)
    np.testing.assert_allclose(z.get(), np.sqrt(y.get()), rtol=1e-15)
    i = gpuarray.empty(N, I32)
    launch(elementwise.get_unary_func_kernel("floor", F64, I32), y.gpudata, i.gpudata, N)
    np.testing.assert_array_equal(i.get(), np.floor(y.get()).astype(np.int32))


@pytest.mark.parametrize(
    ("getter", "chooses"), [("get_if_positive_kernel", np.greater), ("get_where_kernel", np.not_equal)]
)
def test_if_positive_and_where(getter, chooses):
    crit = gpuarray.to_gpu(RNG.integers(-2, 3, N).astype(np.int32))
    then_, else_, result = data(C64), data(C64), gpuarray.empty(N, C64)
    launch(getattr(elementwise, getter)(I32, C64), crit.gpudata, then_.gpudata, else_.gpudata, result.gpudata, N)
    np.testing.assert_array_equal(result.get(), np.where(chooses(crit.get(), 0), then_.get(), else_.get()))


@pytest.mark.parametrize(("operator", "numpy_operator"), [("*", np.multiply), ("%", np.remainder), ("<", np.less)])
def test_scalar_op(operator, numpy_operator):
    x = gpuarray.to_gpu(RNG.integers(-9, 9, N).astype(np.int32))
    y = gpuarray.empty(N, F64)
    launch(elementwise.get_scalar_op_kernel(I32, F64, F64, operator), x.gpudata, 2.5, y.gpudata, N)
    np.testing.assert_array_equal(y.get(), numpy_operator(x.get(), 2.5).astype(np.float64))


def test_logical_not():
    x_host = RNG.integers(-1, 2, N).astype(np.float32)
    x, out = gpuarray.to_gpu(x_host), gpuarray.empty(N, np.bool_)
    launch(elementwise.get_logical_not_kernel(F32, np.dtype(np.bool_)), x.gpudata, out.gpudata, N)
    np.testing.assert_array_equal(out.get(), x_host == 0)
