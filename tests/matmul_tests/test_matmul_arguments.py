"""pyctk.matmul's arguments: NumPy's exceptions for what NumPy rejects, clear ones for what only
pyctk rejects, all before any GPU work; and how operands reach the one C call (pointers, leading
dimensions, batch strides, copies), with the C call recorded instead of run. No GPU needed."""

from __future__ import annotations

import ctypes
import re
from typing import NamedTuple

import numpy as np
import pytest

import pyctk
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import library as _library
from support.stages import STAGES, stage_route

F32 = np.float32


def operands(shape_a, shape_b, dtype=F32):
    return np.ones(shape_a, dtype), np.ones(shape_b, dtype)


def numpy_error(*args, **kwargs) -> type[Exception]:
    """The exception type numpy.matmul raises for these arguments."""
    with pytest.raises(Exception) as caught:
        np.matmul(*args, **kwargs)
    return type(caught.value)


@pytest.fixture
def no_gpu_work(monkeypatch):
    """For tests that expect an error: creating the GPU context fails the test."""

    def context():
        raise AssertionError("GPU work started")

    monkeypatch.setattr(_contexts, "context", context)


# The invalid shapes NumPy (and CuPy's tests) reject, from shared/cuda-packaging-facts.md §5.
@pytest.mark.parametrize(
    "shape_a, shape_b",
    [
        ((3, 2), ()),
        ((), (3, 2)),
        ((), ()),
        ((0, 2), (3, 0)),
        ((2, 3), (4, 5)),
        ((1, 4), (3, 1)),
        ((5, 3, 1), (3, 1, 4)),
        ((3, 2, 3), (3, 2, 4)),
        ((3, 2), (1,)),
        ((0, 1, 1), (2, 1, 1)),
    ],
)
def test_shapes_numpy_rejects_raise_value_error(shape_a, shape_b, no_gpu_work):
    a, b = operands(shape_a, shape_b)
    assert numpy_error(a, b) is ValueError
    with pytest.raises(ValueError, match="matmul"):
        pyctk.matmul(a, b)


@pytest.mark.parametrize(
    "dtype_a, dtype_b",
    [
        ("datetime64[s]", "datetime64[s]"),
        ("timedelta64[s]", "timedelta64[s]"),
        ("timedelta64[s]", np.int64),
        ("U3", "U3"),
        ("S3", np.float64),
    ],
)
def test_dtypes_numpy_refuses_raise_numpys_type_error(dtype_a, dtype_b, no_gpu_work):
    a, b = np.ones((2, 2), dtype_a), np.ones((2, 2), dtype_b)
    expected = numpy_error(a, b)
    assert issubclass(expected, TypeError)
    with pytest.raises(expected):
        pyctk.matmul(a, b)


@pytest.mark.parametrize(
    "arguments, keywords",
    [
        (operands((2, 2), (2, 2), object), {}),
        (operands((2, 2), (2, 2)), {"dtype": object}),
        pytest.param(
            operands((2, 2), (2, 2), np.longdouble),
            {},
            marks=pytest.mark.skipif(np.dtype(np.longdouble) == np.float64, reason="long double is double here"),
        ),
    ],
)
def test_dtypes_only_numpy_computes_raise_type_error(arguments, keywords, no_gpu_work):
    np.matmul(*arguments, **keywords)  # NumPy multiplies Python objects (and long doubles) ...
    with pytest.raises(TypeError, match="Use numpy.matmul"):  # ... a GPU cannot
        pyctk.matmul(*arguments, **keywords)


@pytest.mark.parametrize(
    "keywords, error",
    [
        ({"dtype": ">f8"}, TypeError),
        ({"dtype": "datetime64[s]"}, TypeError),
        ({"dtype": "no such dtype"}, TypeError),
        ({"dtype": np.int8, "casting": "safe"}, TypeError),
        ({"dtype": np.float64, "casting": "no"}, TypeError),
        ({"casting": "sometimes"}, ValueError),
    ],
)
def test_dtype_and_casting_keywords_raise_numpys_errors(keywords, error, no_gpu_work):
    a, b = operands((2, 2), (2, 2))
    assert issubclass(numpy_error(a, b, **keywords), error)
    with pytest.raises(error):
        pyctk.matmul(a, b, **keywords)


def test_unknown_keyword_is_a_type_error(no_gpu_work):
    with pytest.raises(TypeError):
        pyctk.matmul(*operands((2, 2), (2, 2)), transpose=True)


@pytest.mark.parametrize(
    "name, value, choices",
    [
        ("backend", "cutlass", "'auto', 'tiled', 'cublas'"),
        ("backend", None, "'auto', 'tiled', 'cublas'"),
        ("precision", "fastest", "'highest', 'tf32', 'fp16_accumulate'"),
    ],
)
def test_unknown_backend_or_precision_names_the_choices(name, value, choices, no_gpu_work):
    with pytest.raises(ValueError, match=choices):
        pyctk.matmul(*operands((2, 2), (2, 2)), **{name: value})


@pytest.mark.parametrize(
    "dtype, keywords, names",
    [
        (np.int32, {"backend": "cublas"}, "tiled"),  # cuBLAS has no integer products
        (np.bool_, {"backend": "cublas"}, "tiled"),
        (np.float16, {"precision": "fp16_accumulate", "backend": "tiled"}, "cublas"),
        (np.float64, {"precision": "tf32"}, None),  # TF32 is for float32 and complex64 only
        (np.float32, {"precision": "fp16_accumulate"}, None),
    ],
)
def test_backend_that_does_not_compute_the_dtype_is_unsupported(dtype, keywords, names, no_gpu_work):
    """The C library's own table answers (gpumatmul_backend_supports), with no driver needed;
    its message names the backend that computes the case, if one does."""
    with pytest.raises(pyctk.UnsupportedError, match=names):
        pyctk.matmul(*operands((2, 2), (2, 2), dtype), **keywords)
    assert issubclass(pyctk.UnsupportedError, NotImplementedError)


READ_ONLY = np.empty((2, 2), F32)
READ_ONLY.flags.writeable = False


@pytest.mark.parametrize(
    "shapes, out, error",
    [
        (((2, 2), (2, 2)), np.empty((2, 3), F32), ValueError),
        (((2, 2), (2, 2)), np.empty((2,), F32), ValueError),
        (((2, 3, 4), (4, 5)), np.empty((1, 3, 5), F32), ValueError),  # out cannot be broadcast
        (((2, 1, 3, 4), (4, 5)), np.empty((2, 3, 5), F32), ValueError),
        (((2, 2), (2, 2)), np.empty((2, 2), np.int32), TypeError),  # float32 -> int32: not same_kind
        (((2, 2), (2, 2)), [[0.0, 0.0], [0.0, 0.0]], TypeError),
        (((2, 2), (2, 2)), (np.empty((2, 2)), np.empty((2, 2))), ValueError),
        (((2, 2), (2, 2)), READ_ONLY, ValueError),
    ],
)
def test_bad_out_raises_numpys_error(shapes, out, error, no_gpu_work):
    a, b = operands(*shapes)
    assert issubclass(numpy_error(a, b, out=out), error)
    with pytest.raises(error):
        pyctk.matmul(a, b, out=out)


def test_no_driver_is_a_clear_cuda_error(needs_no_driver):
    with pytest.raises(pyctk.NoDriverError) as caught:
        pyctk.matmul(*operands((2, 2), (2, 2)))
    message = str(caught.value)
    assert "GPUMATMUL_ERROR_NO_DRIVER" in message and "libcuda.so.1" in message
    assert "Install the NVIDIA driver" in message
    assert isinstance(caught.value, pyctk.CudaError)
    assert caught.value.status == "GPUMATMUL_ERROR_NO_DRIVER"


def test_sizes_strides_and_leading_dimensions_are_64_bit():
    argtypes = _library._PROTOTYPES["gpumatmul_matmul_strided_batched_host"][1]
    assert argtypes[6:10] == [ctypes.c_int64] * 4  # m, n, k, batch_count
    assert [argtypes[i] for i in (11, 12, 14, 15, 17, 18)] == [ctypes.c_int64] * 6
    fields = dict(_library.GemmDesc._fields_)
    assert {
        fields[name] for name in ("m", "n", "k", "batch_count", "lda", "stride_a", "ldb", "stride_b", "ldc", "stride_c")
    } == {ctypes.c_int64}


# ---- How operands reach the C call: gpumatmul_gemm_host_multi, recorded. ----


class HostCall(NamedTuple):
    context: object
    backend: int
    dtype: int
    precision: int
    trans_a: int
    trans_b: int
    m: int
    n: int
    k: int
    batch_count: int
    a: int
    lda: int
    stride_a: int
    b: int
    ldb: int
    stride_b: int
    c: int
    ldc: int
    stride_c: int


@pytest.fixture
def host_calls(monkeypatch):
    """The gpumatmul_gemm_host_multi calls pyctk.matmul makes, recorded, not run."""
    calls = []

    def call(name, *args):
        if name == "gpumatmul_gemm_host_multi":
            calls.append(host_call(*args))

    monkeypatch.setattr(_library, "call", call)
    monkeypatch.setattr(_contexts, "contexts", lambda devices: devices)
    return calls


def host_call(devices, count, desc, a, b, c, options) -> HostCall:
    """A gpumatmul_gemm_host_multi call as the strided-batched call's arguments, the
    contexts given as their devices."""
    assert count == len(devices) and options.struct_size == ctypes.sizeof(options)
    return HostCall(
        devices,
        desc.backend,
        desc.dtype,
        desc.precision,
        desc.trans_a,
        desc.trans_b,
        desc.m,
        desc.n,
        desc.k,
        desc.batch_count,
        a,
        desc.lda,
        desc.stride_a,
        b,
        desc.ldb,
        desc.stride_b,
        c,
        desc.ldc,
        desc.stride_c,
    )


def pointer(x: np.ndarray) -> int:
    return x.ctypes.data


def test_a_stack_times_one_matrix_is_one_call_with_b_broadcast(host_calls):
    a, b = np.ones((10, 3, 4), F32), np.ones((4, 5), F32)
    result = pyctk.matmul(a, b)
    (call,) = host_calls
    assert call.batch_count == 10 and (call.m, call.n, call.k) == (3, 5, 4)
    assert (call.a, call.lda, call.stride_a, call.trans_a) == (pointer(a), 4, 12, 0)
    assert (call.b, call.ldb, call.stride_b, call.trans_b) == (pointer(b), 5, 0, 0)
    assert (call.c, call.ldc, call.stride_c) == (pointer(result), 5, 15)
    assert result.shape == (10, 3, 5) and result.dtype == F32


def test_one_matrix_times_a_stack_broadcasts_a(host_calls):
    a, b = np.ones((3, 4)), np.ones((2, 7, 4, 5))
    pyctk.matmul(a, b)
    (call,) = host_calls
    assert call.batch_count == 14 and (call.a, call.stride_a) == (pointer(a), 0)
    assert (call.b, call.stride_b) == (pointer(b), 20)


def test_interleaved_broadcasts_materialise_the_operands(host_calls):
    """(6, 1, 3, 4) @ (1, 5, 4, 2): a's stack strides become (s, 0), b's (0, s): no one stride."""
    a, b = np.ones((6, 1, 3, 4)), np.ones((1, 5, 4, 2))
    assert pyctk.matmul(a, b).shape == (6, 5, 3, 2)
    (call,) = host_calls
    assert call.batch_count == 30
    assert call.a != pointer(a) and (call.lda, call.stride_a) == (4, 12)
    assert call.b != pointer(b) and (call.ldb, call.stride_b) == (2, 8)


def test_a_materialised_column_major_operand_is_passed_row_major(host_calls):
    a, b = np.ones((6, 1, 3, 4)), np.ones((1, 5, 2, 4)).swapaxes(-1, -2)  # b: column-major matrices
    pyctk.matmul(a, b)
    (call,) = host_calls
    assert call.b != pointer(b) and (call.trans_b, call.ldb, call.stride_b) == (0, 2, 8)


def test_length_one_stack_axes_do_not_count(host_calls):
    a, b = np.ones((2, 1, 3, 4)), np.ones((1, 4, 5))
    pyctk.matmul(a, b)
    (call,) = host_calls
    assert call.batch_count == 2
    assert (call.a, call.stride_a) == (pointer(a), 12)
    assert (call.b, call.stride_b) == (pointer(b), 0)


def test_column_major_operands_pass_transposed_without_a_copy(host_calls):
    a, b = np.asfortranarray(np.ones((3, 4))), np.ones((5, 4)).T
    pyctk.matmul(a, b)
    (call,) = host_calls
    assert (call.a, call.trans_a, call.lda) == (pointer(a), 1, 3)
    assert (call.b, call.trans_b, call.ldb) == (pointer(b), 1, 4)


def test_padded_rows_and_padded_stacks_pass_without_a_copy(host_calls):
    base = np.ones((4, 6, 10))
    a = base[:, :3, :5]  # rows 10 apart, matrices 60 apart
    b = np.ones((5, 2))
    pyctk.matmul(a, b)
    (call,) = host_calls
    assert (call.a, call.lda, call.stride_a, call.trans_a) == (pointer(a), 10, 60, 0)


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x[::-1],
        lambda x: x[:, ::-1],
        lambda x: x[:, :, ::2][:, ::2],
        lambda x: x[::2, ::2, ::2].transpose(1, 0, 2),
    ],
)
def test_strides_the_call_cannot_describe_are_copied(view, host_calls):
    a = view(np.ones((8, 8, 8)))
    b = np.ones((a.shape[-1], 3))
    pyctk.matmul(a, b)
    (call,) = host_calls
    assert call.a != pointer(a) and call.stride_a == a.shape[-2] * a.shape[-1]


def test_vectors_are_rows_and_columns_of_the_stack(host_calls):
    a, b = np.ones(3), np.ones((7, 3, 2))
    assert pyctk.matmul(a, b).shape == (7, 2)
    assert pyctk.matmul(b.transpose(0, 2, 1), a).shape == (7, 2)
    assert pyctk.matmul(a, a).shape == ()
    row, column, dot = host_calls
    assert (row.m, row.n, row.k, row.batch_count) == (1, 2, 3, 7)
    assert (row.a, row.stride_a) == (pointer(a), 0)
    assert (column.m, column.n, column.k, column.b, column.stride_b) == (2, 1, 3, pointer(a), 0)
    assert (dot.m, dot.n, dot.k, dot.batch_count) == (1, 1, 3, 1)


def test_row_major_out_of_the_loop_dtype_is_written_in_place(host_calls):
    a, b = np.ones((2, 3, 4), F32), np.ones((4, 5), F32)
    out = np.empty((2, 3, 8), F32)[:, :, :5]  # padded rows
    assert pyctk.matmul(a, b, out=out) is out
    (call,) = host_calls
    assert (call.c, call.ldc, call.stride_c) == (pointer(out), 8, 24)


@pytest.mark.parametrize(
    "out",
    [
        np.empty((2, 5, 3), F32).transpose(0, 2, 1),  # column-major
        np.empty((2, 3, 5), np.float64),  # another dtype: cast after
    ],
)
def test_other_outs_get_a_temporary(out, host_calls):
    a, b = np.ones((2, 3, 4), F32), np.ones((4, 5), F32)
    assert pyctk.matmul(a, b, out=out) is out
    (call,) = host_calls
    assert call.c != pointer(out) and (call.ldc, call.stride_c) == (5, 15)


def test_out_with_a_larger_stack_gets_every_product(host_calls):
    a, b, out = np.ones((3, 4)), np.ones((4, 5)), np.empty((2, 3, 5))
    assert pyctk.matmul(a, b, out=out) is out
    (call,) = host_calls
    assert call.batch_count == 2 and call.stride_a == call.stride_b == 0 and call.c == pointer(out)


def test_out_overlapping_an_operand_is_written_in_place(host_calls):
    """The host call reads all of A and B before it writes C (gpumatmul.h), so no copy."""
    a = np.ones((4, 3, 3))
    assert pyctk.matmul(a, a, out=a) is a
    (call,) = host_calls
    assert call.a == call.b == call.c == pointer(a)


@pytest.mark.parametrize(
    "shape_a, shape_b, expected",
    [
        ((0, 3), (3, 2), np.zeros((0, 2))),
        ((2, 0), (0, 3), np.zeros((2, 3))),
        ((0,), (0,), 0.0),
        ((4, 2, 0), (0,), np.zeros((4, 2))),
        ((3, 0, 4, 5), (5, 2), np.zeros((3, 0, 4, 2))),
    ],
)
def test_empty_results_and_k_zero_need_no_gpu(shape_a, shape_b, expected, no_gpu_work):
    a, b = np.ones(shape_a, np.int16), np.ones(shape_b, np.int16)
    result = pyctk.matmul(a, b)
    np.testing.assert_array_equal(result, expected)
    assert type(result) is type(np.matmul(a, b)) and result.dtype == np.int16


def test_a_strided_vector_out_is_written_in_place(host_calls):
    a, b = np.ones((3, 4), F32), np.ones(4, F32)
    out = np.empty(6, F32)[::2]  # the (3, 1) column the product writes, rows 2 apart
    assert pyctk.matmul(a, b, out=out) is out
    (call,) = host_calls
    assert (call.m, call.n, call.c, call.ldc) == (3, 1, pointer(out), 2)


@pytest.mark.parametrize(
    "shape_a, shape_b, out",
    [
        ((3, 4), (4, 5), None),
        ((1, 5, 3, 2), (6, 1, 2, 4), None),  # a copy of a broadcast stack
        ((2, 3, 4), (4,), np.empty((2, 3), np.float64)),  # a temporary cast into out
    ],
)
def test_a_product_of_host_arrays_enters_each_stage_once_in_order(shape_a, shape_b, out, host_calls):
    a, b = np.ones(shape_a, F32)[..., ::-1], np.ones(shape_b, F32)  # a is copied too
    assert stage_route(lambda: pyctk.matmul(a, b, out=out)) == STAGES
    assert len(host_calls) == 1


@pytest.fixture
def little_memory(monkeypatch):
    """A machine with 48 MiB of host memory available, where every allocation is checked."""
    from pyctk._matmul import host_results

    monkeypatch.setattr(host_results, "CHECKED_FROM", 0)
    monkeypatch.setattr(host_results, "_available_bytes", lambda: (48 << 20, "a test's machine"))
    monkeypatch.delenv(host_results.CHECK_VARIABLE, raising=False)
    return host_results


def test_a_result_larger_than_free_host_memory_is_a_memory_error_before_gpu_work(little_memory, no_gpu_work):
    a, b = np.ones((1, 4096), F32), np.ones((4096, 8192), F32)[:, ::2]  # b is copied: 64 MiB
    with pytest.raises(MemoryError) as caught:
        pyctk.matmul(a.T.copy(), a)  # a 4096 x 4096 float32 result: 64 MiB
    message = str(caught.value)
    assert (
        "64.0 MiB of new host memory (64.0 MiB for the result, of shape (4096, 4096) and "
        "dtype float32, and 0 bytes for copies of the operands)" in message
    )
    assert "48.0 MiB available (a test's machine)" in message
    assert "PYCTK_HOST_MEMORY_CHECK=0" in message
    with pytest.raises(MemoryError, match="64.0 MiB for copies of the operands"):
        pyctk.matmul(a, b)


def test_the_host_memory_check_counts_what_out_saves_and_can_be_turned_off(little_memory, host_calls, monkeypatch):
    a = np.ones((4096, 1), F32)
    pyctk.matmul(a, a.T, out=np.empty((4096, 4096), F32))  # written in place: nothing new
    monkeypatch.setenv(little_memory.CHECK_VARIABLE, "0")
    pyctk.matmul(a, a.T)
    assert len(host_calls) == 2


@pytest.mark.parametrize(("first", "then"), [("l", "q"), ("q", "l"), ("L", "Q"), ("Q", "L")])
def test_equal_dtypes_of_other_types_keep_their_own_scalar_type(first, then, host_calls, monkeypatch):
    """int64 and longlong are equal dtypes: a product of one kept for the other (the kept plans'
    keys compare dtypes) would give a scalar of the first one's type, where NumPy's is each one's."""
    from pyctk._matmul import repeat

    monkeypatch.setattr(repeat, "_host", {})
    for char in (first, then, then):  # the last call by the kept plan of the one before
        x = np.arange(3, dtype=char)
        assert type(pyctk.matmul(x, x)) is type(np.matmul(x, x)) is np.dtype(char).type
    assert len(host_calls) == 3


def test_out_that_cannot_hold_the_stack_says_what_numpy_says(no_gpu_work):
    a, b, out = np.ones((2, 3, 4), F32), np.ones((4, 5), F32), np.empty((1, 3, 5), F32)
    with pytest.raises(ValueError) as numpys:
        np.matmul(a, b, out=out)
    with pytest.raises(ValueError) as pyctks:
        pyctk.matmul(a, b, out=out)
    assert (
        str(pyctks.value)
        == "non-broadcastable output operand with shape (1,3,5) doesn't match the broadcast shape (2,3,5)"
    )
    assert str(numpys.value).startswith("non-broadcastable output operand with shape (1,3,5)")


class Priority(np.ndarray):
    __array_priority__ = 30.0


SUBCLASSED = {
    "matrix @ matrix": lambda: (np.matrix(np.ones((2, 3), F32)), np.matrix(np.ones((3, 2), F32))),
    "matrix @ vector": lambda: (np.matrix(np.ones((2, 3), F32)), np.ones(3, F32)),  # np.matrix keeps 2 axes
    "masked @ masked": lambda: (np.ma.array(np.ones((2, 2), F32), mask=[[0, 1], [0, 0]]), np.ma.ones((2, 2), F32)),
    "masked vectors": lambda: (np.ma.array(np.ones(3, F32), mask=[0, 1, 0]), np.ma.ones(3, F32)),
    "plain @ masked": lambda: (np.ones((2, 2), F32), np.ma.array(np.ones((2, 2), F32), mask=[[1, 0], [0, 0]])),
    "priority wins": lambda: (np.matrix(np.ones((2, 2), F32)), np.ones((2, 2), F32).view(Priority)),
    "subclass vectors": lambda: (np.ones(3, F32).view(Priority), np.ones(3, F32)),
}


@pytest.mark.parametrize("case", SUBCLASSED)
def test_ndarray_subclasses_get_numpys_result_type(case, host_calls):
    """As NumPy's ufuncs: the subclass operand of the highest priority's __array_wrap__ makes
    the result (its values are not computed here: the host call is recorded, not run)."""
    a, b = SUBCLASSED[case]()
    try:
        expected = np.matmul(a, b)
    except ValueError as error:  # masked vectors: MaskedArray's wrap refuses a 0-d result's mask
        with pytest.raises(ValueError, match=re.escape(str(error))):
            pyctk.matmul(a, b)
        return
    result = pyctk.matmul(a, b)
    assert type(result) is type(expected) and np.shape(result) == np.shape(expected)
    if isinstance(expected, np.ma.MaskedArray):
        assert np.array_equal(np.ma.getmaskarray(result), np.ma.getmaskarray(expected))
    assert len(host_calls) == 1
