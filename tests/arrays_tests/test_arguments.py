"""Bad shapes and device indices are Python's exceptions before any CUDA call, with or without
a GPU, for every maker of arrays and for pyctk.matmul alike (pyctk/_arrays/arguments.py)."""

import numpy as np
import pytest

import pyctk
from pyctk import gpuarray
from pyctk._arrays.arguments import device_index, shape_tuple

MAKERS = {
    "asarray": lambda device: pyctk.asarray(np.ones(2), device=device),
    "zeros": lambda device: pyctk.zeros(3, device=device),
    "empty": lambda device: pyctk.empty((2, 2), device=device),
    "matmul": lambda device: pyctk.matmul(np.ones((2, 2)), np.ones((2, 2)), device=device),
}


@pytest.mark.parametrize("maker", MAKERS)
@pytest.mark.parametrize(
    ("device", "error", "words"),
    [
        (-1, ValueError, "not -1: GPUs count from 0"),
        ("x", TypeError, "not str ('x')"),
        (2.7, TypeError, "not float (2.7)"),
        (True, TypeError, "not bool (True)"),
        (np.float64(1.0), TypeError, "not float64"),
    ],
)
def test_a_device_that_is_no_index_is_refused_before_any_cuda_call(maker, device, error, words):
    with pytest.raises(error, match=r"device must be a GPU index \(0, 1, \.\.\.\)") as raised:
        MAKERS[maker](device)
    assert words in str(raised.value)


def test_device_indices_take_numpys_integers():
    assert device_index(np.int64(3)) == 3 and type(device_index(np.int64(3))) is int


@pytest.mark.parametrize(("shape", "dims"), [(3, (3,)), ([2, 3], (2, 3)), ((), ()), (np.int32(4), (4,))])
def test_shapes_as_numpy_takes_them(shape, dims):
    assert shape_tuple(shape) == dims


@pytest.mark.parametrize(
    ("shape", "error"), [("3", TypeError), (2.5, TypeError), ([2, -1], ValueError), (None, TypeError)]
)
def test_bad_shapes_for_both_array_types(shape, error):
    for make in (pyctk.empty, gpuarray.empty):
        with pytest.raises(error):
            make(shape, np.float32)


@pytest.mark.parametrize(
    ("array", "words"),
    [
        (np.array([object()]), "references to Python objects"),
        (np.array(["text"]), "NumPy's str"),
        (np.array(["2026-12-02"], "datetime64[D]"), "datetime64 has no arithmetic"),
        (np.array([5], "timedelta64[s]"), "timedelta64 has no arithmetic"),
    ],
    ids=["object", "str", "datetime64", "timedelta64"],
)
def test_gpuarrays_refuse_elements_no_kernel_can_use(array, words):
    for make in (lambda: gpuarray.to_gpu(array), lambda: gpuarray.empty(3, array.dtype)):
        with pytest.raises(TypeError) as raised:
            make()
        assert str(raised.value).startswith(f"a GPUArray cannot hold {array.dtype} elements: ")
        assert words in str(raised.value)
