"""pyctk.gpuarray's GPUArray without a GPU: layouts, views and indexing against NumPy's own,
the CUDA Array Interface, the copy kernels' axis merging and source (compiled for sm_90 by
NVRTC), ElementwiseKernel's source and argument errors, and errors raised before GPU work.

A GPUArray over a made-up address (``gpudata=``) allocates nothing, so every view rule is
checked here against a NumPy array of the same shape and strides."""

from __future__ import annotations

import ctypes
import threading
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pyctk import elementwise, gpuarray
from pyctk._pycuda.gpuarrays import copying, launching
from pyctk._pycuda.gpuarrays.array import compact_strides
from pyctk._pycuda.gpuarrays.elementwise import apart
from pyctk._pycuda.kernels import source_modules
from support.gpuarray_cases import DTYPES

BASE = 1 << 20  # a made-up device address: views are checked by their offsets from it


def over(host: np.ndarray) -> gpuarray.GPUArray:
    """A GPUArray with ``host``'s shape, dtype and strides at BASE (no memory)."""
    return gpuarray.GPUArray(host.shape, host.dtype, gpudata=BASE, strides=host.strides)


def same_view(view: gpuarray.GPUArray, host_view: np.ndarray, host: np.ndarray) -> None:
    assert view.shape == host_view.shape
    if not host_view.size:  # (NumPy's strides of an empty view say nothing)
        return
    assert view.strides == host_view.strides
    assert view.ptr - BASE == host_view.__array_interface__["data"][0] - host.__array_interface__["data"][0]
    assert view.flags.c_contiguous == host_view.flags.c_contiguous
    assert view.flags.f_contiguous == host_view.flags.f_contiguous


def compile_for_sm90(kernel: launching.Kernel) -> bytes:
    return source_modules.compile(kernel.source, no_extern_c=True, arch="sm_90", cache_dir=False)


# --- construction and attributes -----------------------------------------------------------


@pytest.mark.parametrize(
    "shape, order, strides",
    [
        ((2, 3), "C", (12, 4)),
        ((2, 3), "F", (4, 8)),
        (5, "C", (4,)),
        ((), "C", ()),
        ((0, 3), "C", (12, 4)),
        (np.int64(4), "C", (4,)),
        (np.array(3), "C", (4,)),
        ([2, np.int32(2)], "F", (4, 8)),
    ],
)
def test_shape_order_and_strides(shape, order, strides):
    a = gpuarray.GPUArray(shape, np.float32, gpudata=BASE, order=order)
    assert a.strides == strides
    assert a.size == int(np.prod(a.shape)) and a.mem_size == a.size
    assert a.nbytes == 4 * a.size and a.itemsize == 4 and a.ndim == len(a.shape)
    assert a.ptr == BASE and a.gpudata == BASE


def test_attributes_as_pycuda_has_them():
    a = gpuarray.GPUArray((3, 4), np.complex64, gpudata=BASE, base="owner")
    assert a.base == "owner" and a.flags.forc and a.flags.c_contiguous and not a.flags.f_contiguous
    assert a.__array_priority__ == 100
    assert len(a) == 3
    with pytest.raises(TypeError, match="len"):
        len(gpuarray.GPUArray((), np.float32, gpudata=BASE))
    with pytest.raises(TypeError, match="hashable"):
        hash(a)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a)


def test_cuda_array_interface():
    a = gpuarray.GPUArray((3, 4), np.float64, gpudata=BASE)[:, ::2]
    interface = a.__cuda_array_interface__
    assert interface["shape"] == (3, 2) and interface["strides"] == (32, 16)
    assert interface["typestr"] == "<f8" and interface["data"] == (BASE, False)
    # None, as PyCUDA's: its work is on the legacy default stream, which a blocking stream waits for
    assert interface["version"] == 3 and interface["stream"] is None


@pytest.mark.parametrize(
    "arguments, error",
    [
        (dict(shape=(2, -1), dtype=np.float32), ValueError),
        (dict(shape="ab", dtype=np.float32), TypeError),
        (dict(shape=(2,), dtype=np.float32, order="K"), ValueError),
        (dict(shape=(2, 2), dtype=np.float32, strides=(4,)), ValueError),
        (dict(shape=(2,), dtype=np.float32, base=object()), ValueError),  # base needs gpudata
    ],
)
def test_bad_construction(arguments, error):
    with pytest.raises(error):
        gpuarray.GPUArray(**arguments)


# --- views, against NumPy --------------------------------------------------------------------


def basic_index(shape):
    """A NumPy basic index (ints, slices with steps, None, one Ellipsis) for ``shape``."""

    def item(length):
        return st.one_of(
            st.integers(-length, length - 1) if length else st.nothing(),
            st.builds(
                slice,
                st.none() | st.integers(-length - 2, length + 2),
                st.none() | st.integers(-length - 2, length + 2),
                st.none() | st.integers(-3, 3).filter(bool),
            ),
        )

    return (
        st.tuples(*(item(n) for n in shape))
        .flatmap(
            lambda items: st.tuples(
                st.just(items), st.integers(0, len(items)), st.booleans(), st.integers(0, len(items))
            )
        )
        .map(
            lambda t: tuple(
                list(t[0][: t[1]])
                + ([None] if t[2] else [])
                + list(t[0][t[1] : t[3]])
                + ([Ellipsis] if t[3] < len(t[0]) else [])
            )
        )
    )


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_getitem_is_numpys_view(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    host = np.zeros(shape, np.float32)
    index = data.draw(basic_index(shape))
    host_view = host[index]
    if not isinstance(host_view, np.ndarray):  # NumPy's scalar for all-int indices: its 0-d view
        host_view = host[(*index, Ellipsis)]
    same_view(over(host)[index], host_view, host)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_transpose_squeeze_and_reshape_are_numpys(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    host = np.zeros(shape, np.int16)
    axes = data.draw(st.permutations(range(len(shape))))
    same_view(over(host).transpose(axes), host.transpose(axes), host)
    same_view(over(host).T, host.T, host)
    same_view(over(host).squeeze(), host.squeeze(), host)
    new_shape = data.draw(st.permutations(shape))
    same_view(over(host).reshape(new_shape), host.reshape(new_shape), host)
    fortran = np.asfortranarray(host)
    same_view(over(fortran).reshape(*new_shape, order="F"), fortran.reshape(new_shape, order="F"), fortran)
    same_view(over(host).ravel(), host.ravel(), host)


def test_reshape_with_minus_one_and_errors():
    a = gpuarray.GPUArray((4, 6), np.float32, gpudata=BASE)
    assert a.reshape(-1, 3).shape == (8, 3) and a.reshape((2, -1)).shape == (2, 12)
    assert a.reshape(4, 6) is a
    with pytest.raises(ValueError, match="cannot reshape"):
        a.reshape(5, -1)
    with pytest.raises(ValueError, match="one unknown"):
        a.reshape(-1, -1)
    with pytest.raises(ValueError, match="order"):
        a.reshape(24, order="K")


def test_view_changes_the_dtype_as_numpy():
    host = np.zeros((3, 4), np.float32)
    same_view(over(host).view(np.uint8), host.view(np.uint8), host)
    same_view(over(host).view(np.complex64), host.view(np.complex64), host)
    assert over(host).view(np.int32).dtype == np.int32
    with pytest.raises(ValueError, match="multiple"):
        over(np.zeros((3, 3), np.float32)).view(np.float64)
    with pytest.raises(ValueError, match="C-contiguous"):
        over(host).T.view(np.float64)


@pytest.mark.parametrize(
    "index, error",
    [
        ((0, 0, 0), IndexError),
        (5, IndexError),
        (-6, IndexError),
        ((..., ...), IndexError),
        ([0, 1], IndexError),
        (1.5, IndexError),
    ],
)
def test_bad_indices(index, error):
    with pytest.raises(error):
        gpuarray.GPUArray((5, 2), np.float32, gpudata=BASE)[index]


def test_squeeze_of_a_long_axis_is_refused():
    with pytest.raises(ValueError, match="size not equal to one"):
        gpuarray.GPUArray((2, 1), np.float32, gpudata=BASE).squeeze(0)


def test_broadcast_view_repeats_with_zero_strides():
    a = gpuarray.GPUArray((3, 1), np.float32, gpudata=BASE)
    b = a._broadcast_to((2, 3, 4))
    assert b.shape == (2, 3, 4) and b.strides == (0, 4, 0)
    with pytest.raises(ValueError, match="broadcast"):
        a._broadcast_to((2, 4))


@pytest.mark.parametrize(
    "shape, strides, expected",
    [
        ((2, 3), (12, 4), (12, 4)),
        ((2, 3), (4, 8), (4, 8)),
        ((2, 3), (-24, 8), (12, 4)),
        ((3, 4, 5), (4, 60, 12), (4, 60, 12)),
        ((3, 4), (0, 4), (16, 4)),
    ],
)
def test_compact_strides_keep_the_axis_order(shape, strides, expected):
    assert compact_strides(shape, strides, 4) == expected


# --- the copy kernels ------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_merged_axes_describe_the_same_copy(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=5, min_side=1, max_side=4))
    host = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    source = host.transpose(data.draw(st.permutations(range(len(shape))))) if shape else host
    destination = np.zeros(source.shape, np.int64)
    lengths, (to, frm) = copying.merged_axes(source.shape, [destination.strides, source.strides])
    # Walk the merged axes as the kernel does: every element lands where NumPy puts it.
    flat_src, flat_dst = source.ravel(order="K"), destination.reshape(-1)
    base_src = source.__array_interface__["data"][0] - host.__array_interface__["data"][0]
    for i in range(int(np.prod(lengths)) if lengths else 1):
        rest, d, s = i, 0, base_src
        for axis in reversed(range(len(lengths))):
            k = rest % lengths[axis]
            rest //= lengths[axis]
            d, s = d + k * to[axis], s + k * frm[axis]
        flat_dst[d // 8] = host.reshape(-1)[s // 8]
    assert np.array_equal(destination, source)
    assert len(lengths) <= len(shape) and flat_src.size == source.size


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8, 12, 16])
def test_copy_and_fill_kernels_compile(itemsize):
    for axes in (1, 3):
        assert compile_for_sm90(copying._strided_kernel(itemsize, axes))[:4] == b"\x7fELF"
    assert compile_for_sm90(copying._fill_kernel(itemsize))[:4] == b"\x7fELF"


def test_every_cast_compiles():
    source = "\n".join(
        copying._cast_kernel(np.dtype(to), np.dtype(frm)).source.replace("#include <pycuda-complex.hpp>\n", "")
        for to in DTYPES
        for frm in DTYPES
        if to != frm
    )
    image = source_modules.compile(
        "#include <pycuda-complex.hpp>\n" + source, no_extern_c=True, arch="sm_90", cache_dir=False
    )
    assert image[:4] == b"\x7fELF"


def test_astype_to_a_dtype_without_a_c_type_says_so():
    with pytest.raises(ValueError, match="float16"):
        gpuarray.GPUArray((2,), np.float32, gpudata=BASE).astype(np.float16)


# --- ElementwiseKernel without a GPU ----------------------------------------------------------


def test_elementwise_source_is_pycudas_loop():
    kernel = elementwise.ElementwiseKernel(
        "float a, float *x, double *y",
        "y[i] = a * x[i] + b",
        "axpy",
        preamble="#define TWO 2",
        loop_prep="float b = TWO",
        after_loop="b = 0",
    )
    source = kernel.kernel().source
    assert 'extern "C" __global__ void axpy(float a, float *x, double *y, unsigned long n)' in source
    assert "for (i = cta_start + tid; i < n; i += total_threads)" in source
    assert (
        source.index("#define TWO")
        < source.index("float b = TWO")
        < source.index("y[i] = a * x[i] + b")
        < source.index("b = 0")
    )
    assert compile_for_sm90(kernel.kernel())[:4] == b"\x7fELF"
    ranged = kernel.kernel(use_range=True)
    assert "long start, long stop, long step" in ranged.source and "unsigned long n" not in ranged.source
    assert compile_for_sm90(ranged)[:4] == b"\x7fELF"


def test_elementwise_complex_and_vector_types_compile():
    kernel = elementwise.ElementwiseKernel(
        "pycuda::complex<double> a, pycuda::complex<double> *z, float3 *v, float *r",
        "z[i] = a * exp(z[i]); r[i] = abs(z[i]) + v[i].x",
        "complex_and_vectors",
    )
    assert kernel.kernel().source.startswith("#include <pycuda-complex.hpp>")
    assert compile_for_sm90(kernel.kernel())[:4] == b"\x7fELF"


@pytest.mark.parametrize(
    "arguments, operation, kwargs, error, match",
    [
        ("float a", "a", {}, ValueError, "at least one array"),
        ("float *x, quaternion q", "x[i] = 0", {}, ValueError, "unknown type"),
        ("float *x", "x[i] = 0", {"prelude": ""}, TypeError, "prelude"),
        ([object()], "x[i] = 0", {}, TypeError, "VectorArg"),
    ],
)
def test_elementwise_bad_definitions(arguments, operation, kwargs, error, match):
    with pytest.raises(error, match=match):
        elementwise.ElementwiseKernel(arguments, operation, **kwargs)


def test_elementwise_bad_calls_fail_before_the_gpu():
    kernel = elementwise.ElementwiseKernel("float a, float *x", "x[i] = a")
    with pytest.raises(TypeError, match="takes 2 arguments"):
        kernel(1.0)
    with pytest.raises(TypeError, match="not an array in GPU memory"):  # host data: to_gpu first
        kernel(1.0, np.zeros(3, np.float32))
    with pytest.raises(RuntimeError, match="contiguous"):
        kernel(1.0, gpuarray.GPUArray((4, 4), np.float32, gpudata=BASE)[:, ::2])
    with pytest.raises(TypeError, match="range= or slice="):
        kernel(1.0, gpuarray.GPUArray(4, np.float32, gpudata=BASE), range=slice(0, 4, 1), slice=slice(4))
    with pytest.raises(TypeError, match="unexpected"):
        kernel(1.0, gpuarray.GPUArray(4, np.float32, gpudata=BASE), block=(1, 1, 1))


class LaunchConfig(ctypes.Structure):
    """cuda.h's CUlaunchConfig, which cuLaunchKernelEx reads."""

    _fields_ = [
        ("grid", ctypes.c_uint * 3),
        ("block", ctypes.c_uint * 3),
        ("shared", ctypes.c_uint),
        ("stream", ctypes.c_void_p),
        ("attributes", ctypes.c_void_p),
        ("attribute_count", ctypes.c_uint),
    ]


def test_a_launch_gives_the_driver_the_geometry_and_each_argument_where_it_reads_them(monkeypatch):
    # A parameter list with every alignment: the driver copies parameter k from params[k].
    codes = ["B", "P", "f", "Q", "d", "8s", "i", "Q"]
    readers = [
        ctypes.c_ubyte,
        ctypes.c_void_p,
        ctypes.c_float,
        ctypes.c_uint64,
        ctypes.c_double,
        ctypes.c_char * 8,
        ctypes.c_int,
        ctypes.c_uint64,
    ]
    values = [7, 0xDEADBEEF000, 1.5, 2**40 + 3, -2.25, b"\x01\x02\x03\x04\x05\x06\x07\x08", -9, 5]
    launches = []

    def launch(config, kernel, params, extra):
        seen = LaunchConfig.from_address(config)
        table = (ctypes.c_void_p * len(readers)).from_address(params)  # void **kernelParams
        arguments = [reader.from_address(table[k]) for k, reader in enumerate(readers)]
        launches.append(
            (
                tuple(seen.grid),
                tuple(seen.block),
                seen.shared,
                seen.stream,
                seen.attribute_count,
                kernel,
                extra,
                [a.raw if isinstance(a, ctypes.Array) else a.value for a in arguments],
            )
        )
        return 0

    monkeypatch.setattr(launching.driver_api, "_driver", SimpleNamespace(cuLaunchKernelEx=launch))
    kernel = launching.Kernel("(source)", "every_alignment", codes)
    kernel._handle = 0x1234
    kernel(40, 256, 0x5678, *values, shared=96)
    worker = threading.Thread(target=kernel, args=(3, 64, 0, *values))  # a buffer of its own
    worker.start()
    worker.join()
    assert launches == [
        ((40, 1, 1), (256, 1, 1), 96, 0x5678, 0, 0x1234, None, values),
        ((3, 1, 1), (64, 1, 1), 0, None, 0, 0x1234, None, values),
    ]


@pytest.mark.parametrize(
    "n, expected",
    [
        (0, ((1, 1), (32, 1, 1))),
        (1, ((1, 1), (32, 1, 1))),
        (33, ((2, 1), (32, 1, 1))),
        (32 * 32 * 132, ((32 * 132, 1), (32, 1, 1))),
        (32 * 32 * 132 + 1, ((32 * 132, 1), (64, 1, 1))),
        (10**9, ((32 * 132, 1), (128, 1, 1))),
    ],
)
def test_splay_is_pycudas(n, expected, monkeypatch):
    monkeypatch.setattr(launching, "multiprocessor_count", lambda device: 132)
    assert gpuarray.splay(n, dev=0) == expected


@pytest.mark.parametrize(
    "n, family, expected",
    [
        (1, "own", (1, 256)),
        (257, "own", (2, 256)),
        (256 * 256 * 132, "own", (256 * 132, 256)),
        (10**12, "own", (256 * 132, 256)),  # then the loop does the rest
        (1, "user", (1, 128)),
        (2**28, "user", (2**21, 128)),  # a thread an element
        (2**40, "user", (2**31 - 1, 128)),  # up to the largest grid
    ],
)
def test_each_kernel_family_launches_in_its_geometry(n, family, expected, monkeypatch):
    monkeypatch.setattr(launching, "multiprocessor_count", lambda device: 132)
    launching.geometry.cache_clear()
    try:
        assert launching.geometry(n, family=family) == expected
    finally:
        launching.geometry.cache_clear()


def test_an_elementwise_kernel_launches_its_restrict_build_where_the_arrays_are_apart(monkeypatch):
    launches = []
    monkeypatch.setattr(
        launching.Kernel,
        "__call__",
        lambda kernel, *args, **kwargs: launches.append(("__restrict__" in kernel.source, *args[:2])),
    )
    monkeypatch.setattr(launching, "multiprocessor_count", lambda device: 132)
    launching.geometry.cache_clear()
    kernel = elementwise.ElementwiseKernel("float *x, float *y", "y[i] = x[i]")
    x = gpuarray.GPUArray(1000, np.float32, gpudata=BASE)
    y = gpuarray.GPUArray(1000, np.float32, gpudata=BASE + 4000)  # just past x
    try:
        kernel(x, y)
        kernel(x, y, range=slice(0, 1000, 2))
        kernel(x, x)  # in place: the source as written
        kernel(x, gpuarray.GPUArray(1000, np.float32, gpudata=BASE + 3996), range=slice(0, 1000, 2))
    finally:
        launching.geometry.cache_clear()
    assert launches == [(True, 4, 256), (True, 2, 256), (False, 8, 128), (False, 4, 128)]


@pytest.mark.parametrize(
    "spans, expected",
    [
        ([(100, 40)], True),
        ([(100, 40), (140, 8)], True),
        ([(140, 8), (100, 40)], True),
        ([(100, 40), (139, 8)], False),
        ([(100, 40), (100, 40)], False),
        ([(100, 40), (120, 4)], False),
        ([(100, 40), (120, 0)], True),  # an empty array reaches nothing
        ([(0, 8), (200, 8), (8, 192)], True),
        ([(0, 8), (200, 8), (8, 193)], False),
    ],
)
def test_apart_is_pairwise_disjoint_byte_ranges(spans, expected):
    assert apart(spans) is expected


def test_the_restrict_build_declares_every_pointer_restrict_and_compiles():
    kernel = elementwise.ElementwiseKernel("float a, float *x, double *y", "y[i] = a * x[i]", "axpy")
    source = kernel.kernel(restrict=True).source
    assert "axpy(float a, float *__restrict__ x, double *__restrict__ y, unsigned long n)" in source
    assert "__restrict__" not in kernel.kernel().source
    assert compile_for_sm90(kernel.kernel(restrict=True))[:4] == b"\x7fELF"
