"""DeviceArray on a real GPU: round trips of every dtype, views, copies, memory use, the current
device, and zero-copy exchange with PyTorch, CuPy, JAX and Numba (each skipped when missing)."""

from __future__ import annotations

import os

# JAX takes 75% of the GPU's memory at its first array unless told not to; the memory test
# below measures free memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np
import pytest

import pyctk
from pyctk._arrays.device_array import asarray, empty, from_dlpack, zeros
from pyctk._cuda import cudart as _cudart
from pyctk._cuda import streams as _streams
from support.gpu_memory import process_device_bytes
from support.strategies import SUPPORTED, bfloat16

pytestmark = pytest.mark.gpu

DTYPES = SUPPORTED  # every dtype pyctk computes, bfloat16 where ml_dtypes is there
MiB = 1 << 20


def values(dtype, shape=(5, 6)):
    return (np.arange(int(np.prod(shape))) % 11).reshape(shape).astype(dtype)


def pointer(array) -> int:
    return array._operand().pointer


@pytest.fixture(autouse=True)
def caller_stays_on_device_0():
    """Every test starts and ends with the calling thread on device 0."""
    assert _cudart.get_device() == 0
    yield
    assert _cudart.get_device() == 0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip_of_every_dtype(dtype):
    host = values(dtype)
    array = asarray(host)
    assert (array.shape, array.dtype, array.strides, array.device) == (host.shape, dtype, host.strides, 0)
    np.testing.assert_array_equal(array.get(), host)
    np.testing.assert_array_equal(np.asarray(array), host)
    np.testing.assert_array_equal(array[1:, ::-2].get(), host[1:, ::-2])
    np.testing.assert_array_equal(array.T.copy().get(), host.T)


def test_zeros_empty_and_zero_size():
    np.testing.assert_array_equal(zeros((3, 4), np.complex128).get(), np.zeros((3, 4), np.complex128))
    assert empty((2, 3), np.float32).get().shape == (2, 3)
    assert zeros((0, 3)).get().shape == (0, 3)


def test_host_data_may_change_right_after_asarray():
    host = np.ones(16 * MiB, np.float32)  # 64 MiB: the copy outlasts the call if it is not staged
    array = asarray(host)
    host[:] = 2
    assert np.all(array.get() == 1)


KEYS = [
    1,
    -1,
    (2, 3),
    slice(1, 4),
    slice(None, None, -2),
    (Ellipsis, 2),
    (None, 1, Ellipsis, None),
    (slice(4, 0, -3), slice(1, None, 2)),
    (slice(3, 1), slice(None)),
]


def numpy_view(array: np.ndarray, key):
    """``array[key]`` as a view, a 0-d array rather than a scalar when every axis is indexed."""
    key = key if isinstance(key, tuple) else (key,)
    return array[key if any(k is Ellipsis for k in key) else key + (Ellipsis,)]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_views_share_memory(key):
    host = values(np.float64)
    array = asarray(host)
    view, expected = array[key], numpy_view(host, key)
    assert (view.shape, view.strides) == (expected.shape, expected.strides)
    if view.size:  # the same element 0, found by the same pointer arithmetic
        assert pointer(view) == pointer(array) + expected.ctypes.data - host.ctypes.data
    np.testing.assert_array_equal(view.get(), expected)
    np.testing.assert_array_equal(array.T[key].get(), numpy_view(host.T, key))


def test_copy_is_new_memory():
    host = values(np.int32, (64, 48))
    array = asarray(host)
    for source, expected in ((array, host), (array[::2, ::-3], host[::2, ::-3]), (array.T, host.T)):
        copy = source.copy()
        assert pointer(copy) != pointer(source) and copy._c_contiguous()
        np.testing.assert_array_equal(copy.get(), expected)


def test_repr():
    small = asarray(np.array([[1.0, 2.0]], np.float32))
    assert repr(small) == "DeviceArray([[1., 2.]], dtype=float32, device=0)"
    assert repr(zeros((1000, 1000), np.uint8)) == "DeviceArray(shape=(1000, 1000), dtype=uint8, device=0)"


def test_own_dlpack_round_trip():
    array = asarray(values(np.float32))[::2]
    back = from_dlpack(array)
    assert pointer(back) == pointer(array) and back.strides == array.strides
    del array  # the imported tensor keeps the memory
    np.testing.assert_array_equal(back.get(), values(np.float32)[::2])


def test_casts_and_device_arrays():
    array = asarray(values(np.int16))
    assert asarray(array) is array
    np.testing.assert_array_equal(asarray(array, dtype=np.float32).get(), values(np.float32))


# ---------------------------------------------------------------------------
# Memory


def test_no_device_memory_growth_over_10000_arrays():
    host = np.ones(16384, np.float32)  # 64 KiB each: a leak would be 640 MiB
    for _ in range(100):
        asarray(host)[::2].copy()
    before = process_device_bytes()
    for _ in range(10_000):
        array = asarray(host)
        view = array[::2]
        del array, view
    after = process_device_bytes()
    assert after - before < 4 * MiB, (after - before) / MiB


# ---------------------------------------------------------------------------
# Devices


def test_operations_keep_the_callers_device():
    runtime = _cudart.runtime()
    array = asarray(values(np.float32))
    for operation in (
        lambda: array.get(),
        lambda: array.copy(),
        lambda: zeros(3),
        lambda: repr(array),
        lambda: array.__dlpack__(stream=1),
    ):
        operation()
        assert _cudart.get_device() == 0
    if _cudart.device_count() > 1:  # a caller on device 1 using device 0 stays on device 1
        assert runtime.cudaSetDevice(1) == 0
        try:
            asarray(values(np.float32)).copy().get()
            assert _cudart.get_device() == 1
        finally:
            assert runtime.cudaSetDevice(0) == 0


def test_second_gpu():
    if _cudart.device_count() < 2:
        pytest.skip("needs 2 GPUs")
    host = values(np.float64)
    on_1 = asarray(host, device=1)
    assert on_1.device == 1 and _cudart.get_device() == 0
    assert _cudart.pointer_device(pointer(on_1)) == (_cudart.MEMORY_DEVICE, 1)
    np.testing.assert_array_equal(on_1[::2].get(), host[::2])
    np.testing.assert_array_equal(on_1.copy().get(), host)
    for source, expected in ((on_1, host), (on_1[:, ::2], host[:, ::2])):  # peer copy, host copy
        back = asarray(source, device=0)
        assert back.device == 0 and _cudart.pointer_device(pointer(back))[1] == 0
        np.testing.assert_array_equal(back.get(), expected)
    assert zeros(4, device=1).device == 1 and _cudart.get_device() == 0
    torch = pytest.importorskip("torch")
    tensor = torch.from_dlpack(on_1)
    assert tensor.device == torch.device("cuda", 1) and tensor.data_ptr() == pointer(on_1)
    other = torch.arange(4.0, device="cuda:1")
    assert asarray(other).device == from_dlpack(other).device == 1
    assert _cudart.get_device() == 0


# ---------------------------------------------------------------------------
# Other libraries


def test_torch():
    torch = pytest.importorskip("torch")
    host = values(np.float32)
    array = asarray(host)
    tensor = torch.from_dlpack(array)  # DLPack, zero-copy
    assert tensor.data_ptr() == pointer(array) and tensor.device == torch.device("cuda", 0)
    tensor += 1  # shares memory: pyctk sees it (both on the legacy stream)
    np.testing.assert_array_equal(array.get(), host + 1)
    strided = torch.from_dlpack(array[:, 1::2])  # (PyTorch has no negative strides)
    assert strided.data_ptr() == pointer(array[:, 1::2]) and strided.stride() == (6, 2)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):  # the consumer's stream waits for pyctk's
        on_stream = torch.from_dlpack(array) * 2
    stream.synchronize()
    np.testing.assert_array_equal(on_stream.cpu().numpy(), (host + 1) * 2)
    assert _streams.handle(stream) == stream.cuda_stream

    source = torch.arange(12, device="cuda", dtype=torch.float64).reshape(3, 4)[:, 1:]
    by_dlpack, by_interface = from_dlpack(source), asarray(source)
    assert pointer(by_dlpack) == pointer(by_interface) == source.data_ptr()
    assert by_dlpack.strides == by_interface.strides == (32, 8)
    expected = source.cpu().numpy()
    del source  # the views keep its memory alive
    np.testing.assert_array_equal(by_dlpack.get(), expected)
    np.testing.assert_array_equal(by_interface.get(), expected)

    bf16 = torch.ones(4, device="cuda", dtype=torch.bfloat16)
    if bfloat16 is not None:
        assert from_dlpack(bf16).dtype == np.dtype(bfloat16)
        assert torch.from_dlpack(from_dlpack(bf16)).dtype == torch.bfloat16
    with pytest.raises(TypeError, match="pyctk.asarray"):
        from_dlpack(torch.ones(3))


def test_a_failure_is_not_reported_again_by_the_next_library():
    torch = pytest.importorskip("torch")
    with pytest.raises(pyctk.OutOfMemoryError):
        empty(1 << 50, np.uint8)  # a petabyte
    assert (torch.ones(2, device="cuda") + 1).sum().item() == 4  # PyTorch checks cudaGetLastError


def test_torch_exchanges_free_their_memory():
    torch = pytest.importorskip("torch")
    host = np.ones(16384, np.float32)
    torch.from_dlpack(asarray(host))
    before = process_device_bytes()
    for _ in range(1000):
        tensor = torch.from_dlpack(asarray(host))
        del tensor
    assert process_device_bytes() - before < 4 * MiB


def test_cupy():
    cupy = pytest.importorskip("cupy")
    host = values(np.complex64)
    array = asarray(host)
    through_interface = cupy.asarray(array)  # __cuda_array_interface__, zero-copy
    assert through_interface.data.ptr == pointer(array)
    np.testing.assert_array_equal(cupy.asnumpy(through_interface), host)
    assert cupy.from_dlpack(array).data.ptr == pointer(array)

    forward = cupy.arange(20, dtype=cupy.float32)[::3]
    assert pointer(from_dlpack(forward)) == forward.data.ptr and from_dlpack(forward).strides == (12,)
    # A reversed view through the interface (CuPy's DLPack export of one states its stride as
    # 2**62 - 3 items, -3 wrapped through unsigned arithmetic: refused as past 64 bits of bytes)
    source = cupy.arange(20, dtype=cupy.float32)[::-3]
    view = asarray(source)
    assert pointer(view) == source.data.ptr and view.strides == source.strides
    expected = cupy.asnumpy(source)
    del source
    np.testing.assert_array_equal(view.get(), expected)
    stream = cupy.cuda.Stream()
    assert _streams.handle(stream) == stream.ptr


def test_jax():
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX sees no GPU")
    host = values(np.float32)
    array = asarray(host)
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(array)), host)
    source = jax.device_put(jax.numpy.arange(12, dtype=jax.numpy.float32).reshape(3, 4), gpu)
    np.testing.assert_array_equal(from_dlpack(source).get(), np.asarray(source))
    np.testing.assert_array_equal(asarray(source).get(), np.asarray(source))


def test_numba():
    cuda = pytest.importorskip("numba.cuda")
    if not cuda.is_available():
        pytest.skip("Numba sees no GPU")
    host = values(np.int64)
    array = asarray(host)[:, 1::2]
    device_array = cuda.as_cuda_array(array)
    assert device_array.device_ctypes_pointer.value == pointer(array)
    np.testing.assert_array_equal(device_array.copy_to_host(), host[:, 1::2])
    source = cuda.to_device(host)
    assert pointer(asarray(source)) == source.device_ctypes_pointer.value
