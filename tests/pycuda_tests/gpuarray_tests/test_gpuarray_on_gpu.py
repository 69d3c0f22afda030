"""pyctk.gpuarray's GPUArray on a real GPU, against NumPy: transfers of every dtype and
layout, views read and written, fills, casts, creation functions, gathers, and zero-copy
exchange with PyTorch, CuPy and DeviceArray (each skipped when missing); ElementwiseKernel
as PyCUDA's documentation uses it."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyctk
import pyctk.driver as cuda
from pyctk import gpuarray
from pyctk.elementwise import ElementwiseKernel
from pyctk.tools import DeviceMemoryPool
from support.gpuarray_cases import DTYPES

pytestmark = pytest.mark.gpu


def values(dtype, shape=(5, 6)):
    return (np.arange(int(np.prod(shape))) % 7 - 2).reshape(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trips_and_views_of_every_dtype(dtype):
    host = values(dtype)
    a = gpuarray.to_gpu(host)
    assert (a.shape, a.dtype, a.strides) == (host.shape, dtype, host.strides)
    np.testing.assert_array_equal(a.get(), host)
    np.testing.assert_array_equal(a[1:, ::-2].get(), host[1:, ::-2])
    np.testing.assert_array_equal(a.T.get(), host.T)
    np.testing.assert_array_equal(a[2].get(), host[2])
    np.testing.assert_array_equal(a[2, 3].get(), host[2, 3])
    np.testing.assert_array_equal(a.copy().get(), host)
    np.testing.assert_array_equal(a[:, 1::2].copy().get(), host[:, 1::2])


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_strided_views_read_and_write_as_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=6))
    host = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    a = gpuarray.to_gpu(host)
    index = tuple(
        data.draw(
            st.builds(
                slice,
                st.none() | st.integers(-7, 7),
                st.none() | st.integers(-7, 7),
                st.none() | st.integers(-3, 3).filter(bool),
            )
        )
        for _ in shape
    )
    np.testing.assert_array_equal(a[index].get(), host[index])
    axes = data.draw(st.permutations(range(len(shape))))
    np.testing.assert_array_equal(a[index].transpose(axes).get(), host[index].transpose(axes))
    np.testing.assert_array_equal(a.transpose(axes).reshape(-1).get(), host.transpose(axes).reshape(-1))
    replacement = -np.arange(host[index].size, dtype=np.float64).reshape(host[index].shape)
    a[index] = replacement
    host[index] = replacement
    np.testing.assert_array_equal(a.get(), host)
    a[index] = 7.5
    host[index] = 7.5
    np.testing.assert_array_equal(a.get(), host)


def test_fortran_arrays_stay_fortran():
    host = np.asfortranarray(values(np.float32))
    a = gpuarray.to_gpu(host)
    assert a.flags.f_contiguous and not a.flags.c_contiguous
    result = a.get()
    assert result.flags.f_contiguous
    np.testing.assert_array_equal(result, host)
    np.testing.assert_array_equal(a.get(np.empty(host.shape, np.float32)), host)  # C host from F device


def test_set_get_checks_and_into_given_arrays():
    a = gpuarray.to_gpu(values(np.int32))
    with pytest.raises(ValueError, match="same size"):
        a.set(np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="same dtype"):
        a.set(np.zeros((5, 6), np.int64))
    with pytest.raises(TypeError, match="same dtype"):
        a.get(np.zeros((5, 6), np.int64))
    into = np.empty((5, 6), np.int32)
    assert a.get(into) is into
    np.testing.assert_array_equal(into, values(np.int32))
    strided_host = np.zeros((5, 12), np.int32)[:, ::2]
    a.get(strided_host)
    np.testing.assert_array_equal(strided_host, values(np.int32))
    a.set(values(np.int32)[::-1])
    np.testing.assert_array_equal(a.get(), values(np.int32)[::-1])


def test_pagelocked_and_asynchronous_transfers():
    host = cuda.pagelocked_empty((1000,), np.float32)
    host[:] = np.arange(1000)
    stream = cuda.Stream()
    a = gpuarray.to_gpu_async(host, stream=stream)
    back = a.get_async(stream=stream, ary=cuda.pagelocked_empty((1000,), np.float32))
    stream.synchronize()
    np.testing.assert_array_equal(back, host)
    locked = a.get(pagelocked=True)
    assert locked.base is not None
    np.testing.assert_array_equal(locked, host)


@pytest.mark.parametrize("to", DTYPES, ids=str)
def test_astype_converts_as_numpy(to):
    for frm in DTYPES:
        host = values(frm, (3, 4))
        if frm.kind == "c" and to.kind not in "cb":
            with pytest.warns(np.exceptions.ComplexWarning if hasattr(np, "exceptions") else Warning):
                expected = host.astype(to)
        else:
            expected = host.astype(to)
        result = gpuarray.to_gpu(host)[:, ::-1].astype(to)
        assert result.dtype == to
        np.testing.assert_array_equal(result.get(), expected[:, ::-1], err_msg=f"{frm} -> {to}")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fill_zeros_ones_full(dtype):
    assert gpuarray.zeros((3, 2)).dtype == np.float64
    np.testing.assert_array_equal(gpuarray.zeros((3, 2), dtype).get(), np.zeros((3, 2), dtype))
    np.testing.assert_array_equal(gpuarray.ones(7, dtype).get(), np.ones(7, dtype))
    value = np.array(3, dtype)[()]
    np.testing.assert_array_equal(gpuarray.full((2, 2), value, dtype).get(), np.full((2, 2), value, dtype))
    a = gpuarray.to_gpu(values(dtype))
    a[:, ::2].fill(value)
    expected = values(dtype)
    expected[:, ::2] = value
    np.testing.assert_array_equal(a.get(), expected)


def test_fill_with_a_pattern_memset_cannot_make():
    np.testing.assert_array_equal(gpuarray.empty(5, np.float64).fill(1.5).get(), np.full(5, 1.5))
    np.testing.assert_array_equal(gpuarray.empty(3, np.complex128).fill(1 + 2j).get(), np.full(3, 1 + 2j))


def test_like_functions_keep_shape_dtype_and_order():
    a = gpuarray.to_gpu(np.asfortranarray(values(np.float32)))
    for like, fill in ((gpuarray.empty_like, None), (gpuarray.zeros_like, 0), (gpuarray.ones_like, 1)):
        b = like(a)
        assert (b.shape, b.dtype, b.strides) == (a.shape, a.dtype, a.strides)
        if fill is not None:
            np.testing.assert_array_equal(b.get(), np.full(a.shape, fill, np.float32))
    assert gpuarray.empty_like(a, np.float64, order="C").strides == (48, 8)


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((5,), {}),
        ((2, 9), {}),
        ((2, 9, 3), {}),
        ((0, 1, 0.1), {}),
        ((1, -3, -0.5), {}),
        ((10,), {"dtype": np.float32}),
        ((3, 11, 2, np.dtype(np.int16)), {}),
        ((), {"start": 1, "stop": 4}),
    ],
)
def test_arange_is_numpys(args, kwargs):
    expected = np.arange(*args, **kwargs)
    result = gpuarray.arange(*args, **kwargs)
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(result.get(), expected)


def test_concatenate_stack_and_gathers():
    x, y = values(np.float32, (2, 3)), values(np.int32, (4, 3))
    for axis, pair in ((0, (x, y)), (1, (x.T.copy(), y.T.copy())), (-1, (x.T.copy(), y.T.copy()))):
        result = gpuarray.concatenate([gpuarray.to_gpu(p) for p in pair], axis=axis)
        np.testing.assert_array_equal(result.get(), np.concatenate(pair, axis=axis))
    for axis in (0, 1, 2, -1):
        result = gpuarray.stack([gpuarray.to_gpu(x), gpuarray.to_gpu(x * 2)], axis=axis)
        np.testing.assert_array_equal(result.get(), np.stack([x, x * 2], axis=axis))
    with pytest.raises(ValueError, match="must match"):
        gpuarray.concatenate([gpuarray.to_gpu(x), gpuarray.to_gpu(y)], axis=1)
    source = np.arange(10.0)
    indices = np.array([3, 0, 9, 3], np.int32)
    np.testing.assert_array_equal(
        gpuarray.take(gpuarray.to_gpu(source), gpuarray.to_gpu(indices)).get(), source[indices]
    )
    put = gpuarray.multi_put(
        [gpuarray.to_gpu(np.array([1.0, 2.0]))], gpuarray.to_gpu(np.array([4, 1])), dest_shape=(6,)
    )[0]
    np.testing.assert_array_equal(put.get(), [0, 2, 0, 0, 1, 0])


def test_allocator_and_pickling():
    pool = DeviceMemoryPool()
    a = gpuarray.to_gpu(values(np.float64), allocator=pool.allocate)
    assert pool.active_blocks == 1 and a.allocator == pool.allocate
    b = a.copy()  # from the same allocator
    assert pool.active_blocks == 2
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(b)).get(), values(np.float64))


def test_repr_bool_and_empty_arrays():
    assert repr(gpuarray.to_gpu(np.array([1.5, 2.0]))) == repr(np.array([1.5, 2.0]))
    assert bool(gpuarray.to_gpu(np.array([3])))
    assert not bool(gpuarray.to_gpu(np.array([0.0])))
    empty = gpuarray.to_gpu(np.zeros((0, 3), np.float32))
    assert empty.get().shape == (0, 3) and empty.ptr == 0
    np.testing.assert_array_equal(empty.copy().astype(np.int8).get(), np.zeros((0, 3), np.int8))


# --- other libraries ---------------------------------------------------------------------------


def test_device_array_both_ways():
    a = gpuarray.to_gpu(values(np.float32))
    device = pyctk.asarray(a)  # through the CUDA Array Interface, no copy
    assert device._operand().pointer == a.ptr
    back = gpuarray.asarray(device)
    assert back.ptr == a.ptr
    np.testing.assert_array_equal(back.get(), values(np.float32))
    through_dlpack = gpuarray.from_dlpack(pyctk.from_dlpack(a))
    assert through_dlpack.ptr == a.ptr


def test_torch_both_ways():
    torch = pytest.importorskip("torch")
    a = gpuarray.to_gpu(values(np.float32))[:, ::2]
    t = torch.from_dlpack(a)
    assert t.data_ptr() == a.ptr and t.stride() == (6, 2)
    t.mul_(2)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(a.get(), values(np.float32)[:, ::2] * 2)
    t2 = torch.arange(12, dtype=torch.float64, device="cuda").reshape(3, 4)
    g = gpuarray.asarray(t2)
    assert g.ptr == t2.data_ptr()
    np.testing.assert_array_equal(g.get(), np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(gpuarray.from_dlpack(t2.T).get(), np.arange(12.0).reshape(3, 4).T)
    k = ElementwiseKernel("double *x", "x[i] += 1")
    k(t2)  # another library's contiguous array as an argument
    torch.cuda.synchronize()
    assert t2[0, 0].item() == 1.0


def test_cupy_both_ways():
    cupy = pytest.importorskip("cupy")
    a = gpuarray.to_gpu(values(np.int64))
    c = cupy.asarray(a)
    assert c.data.ptr == a.ptr
    np.testing.assert_array_equal(cupy.asnumpy(c), values(np.int64))
    g = gpuarray.asarray(cupy.arange(6, dtype=cupy.float32)[::-1])
    np.testing.assert_array_equal(g.get(), np.arange(6, dtype=np.float32)[::-1])
    np.testing.assert_array_equal(cupy.asnumpy(cupy.from_dlpack(a)), values(np.int64))


# --- ElementwiseKernel -------------------------------------------------------------------------


def test_elementwise_kernel_as_pycudas_documentation():
    x, y = np.random.rand(1000).astype(np.float32), np.random.rand(1000).astype(np.float32)
    x_gpu, y_gpu = gpuarray.to_gpu(x), gpuarray.to_gpu(y)
    z_gpu = gpuarray.empty_like(x_gpu)
    lin_comb = ElementwiseKernel(
        "float a, float *x, float b, float *y, float *z",
        "z[i] = my_f(a*x[i], b*y[i])",
        "linear_combination",
        preamble="__device__ float my_f(float x, float y) { return sin(x*y); }",
    )
    lin_comb(5, x_gpu, 6, y_gpu, z_gpu)
    np.testing.assert_allclose(z_gpu.get(), np.sin(5 * x * 6 * y), rtol=1e-4, atol=1e-5)


def test_elementwise_kernel_range_slice_and_stream():
    a = gpuarray.zeros(20, np.int32)
    mark = ElementwiseKernel("int *a, int v", "a[i] = v")
    mark(a, 1, range=slice(2, 17, 3))
    mark(a, 2, slice=slice(-3, None))
    stream = cuda.Stream()
    mark(a, 3, slice=slice(0, 1), stream=stream)
    stream.synchronize()
    expected = np.zeros(20, np.int32)
    expected[2:17:3] = 1
    expected[-3:] = 2
    expected[0] = 3
    np.testing.assert_array_equal(a.get(), expected)
    sizes = gpuarray.zeros(1, np.int64)
    # n is the first array argument's size, as in PyCUDA
    ElementwiseKernel("float *x, long *n_out", "if (i == 0) n_out[0] = n")(gpuarray.zeros(37, np.float32), sizes)
    assert sizes.get()[0] == 37


def test_elementwise_kernel_on_arrays_apart_in_place_and_overlapping_views():
    # Arrays apart run the __restrict__ build, in its own grid; an array passed twice and
    # overlapping views run the source as written: each gives NumPy's answer.
    n = 3 * 2**20 + 5  # past one wave of either grid, and not a multiple of a block
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    x_gpu, y_gpu, z_gpu = gpuarray.to_gpu(x), gpuarray.to_gpu(y), gpuarray.empty(n, np.float32)
    multiply_add = ElementwiseKernel("float *x, float *y, float *z", "z[i] = x[i] * y[i] + z[i]", "multiply_add")
    z_gpu.fill(1)
    multiply_add(x_gpu, y_gpu, z_gpu)
    np.testing.assert_allclose(z_gpu.get(), x * y + 1, rtol=1e-6)
    multiply_add(x_gpu, y_gpu, x_gpu)  # x is also the output
    np.testing.assert_allclose(x_gpu.get(), x * y + x, rtol=1e-6)
    both = gpuarray.to_gpu(np.arange(2 * n, dtype=np.float32))
    # overlapping views, of which only the halves apart are read and written
    multiply_add(both[:n], y_gpu, both[n // 2 : n // 2 + n], range=slice(0, n // 2, 1))
    expected = np.arange(2 * n, dtype=np.float32)
    expected[n // 2 : 2 * (n // 2)] += expected[: n // 2] * y[: n // 2]
    np.testing.assert_allclose(both.get(), expected, rtol=1e-6)
    assert set(multiply_add._kernels) == {(False, True), (False, False), (True, False)}


def test_elementwise_complex_arguments():
    z = gpuarray.to_gpu(np.array([1 + 1j, 2 - 1j], np.complex64))
    ElementwiseKernel("pycuda::complex<float> a, pycuda::complex<float> *z", "z[i] = a * z[i]")(2j, z)
    np.testing.assert_allclose(z.get(), np.array([1 + 1j, 2 - 1j]) * 2j)


def test_elementwise_more_than_four_billion_elements_in_range_form():
    # A range past 2^32 exercises the 64-bit loop without allocating that much.
    a = gpuarray.zeros(4, np.int64)
    ElementwiseKernel("long *a", "if (i >= 4294967296L) atomicAdd((unsigned long long *) a, 1ULL)")(
        a, range=slice(4294967296 - 2, 4294967296 + 3, 1)
    )
    assert a.get()[0] == 3


@pytest.mark.whole_gpu  # it reads the whole GPU's free memory
def test_too_large_an_array_raises_pycudas_memory_error_and_holds_no_memory():
    free, total = cuda.mem_get_info()
    with pytest.raises(cuda.MemoryError, match="out of memory"):  # more than the whole GPU
        gpuarray.empty((total // 4 + (1 << 30),), np.float32)
    # the pool gave back what it mapped while trying (it had kept the whole GPU, so that
    # other processes could not even start CUDA)
    assert cuda.mem_get_info()[0] >= free - (256 << 20)
    a = gpuarray.to_gpu(np.ones(3))  # the GPU is still usable
    assert a.get().sum() == 3
