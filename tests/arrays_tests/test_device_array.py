"""DeviceArray, DLPack and interop without a GPU.

Three kinds of test: DLPack capsules made and read on the host (NumPy's and pyctk's own);
DeviceArrays wrapping host memory, for everything that needs no CUDA call (views, the
exchange protocols); and the ``cuda`` fixture (tests/support/fake_cuda.py), a GPU in host memory
standing in for cudart and libgpumatmul's device calls, for what does need CUDA calls
(allocation, copies, frees, the current device).
The same behaviour on a real GPU is in test_device_array_on_gpu.py.
"""

from __future__ import annotations

import ctypes
import gc
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyctk
from pyctk._arrays import device_array as _device_array
from pyctk._arrays import dlpack as _dlpack
from pyctk._arrays import interop as _interop
from pyctk._arrays import memory as _memory
from pyctk._arrays.dlpack import kDLCPU, kDLCUDA
from pyctk._cuda import cudart as _cudart
from pyctk._cuda import streams as _streams
from support.paths import EXPORTS
from support.stages import STAGES, stage_route
from support.strategies import STORED

DTYPES = STORED  # every dtype pyctk stores, ml_dtypes' (bfloat16, FP8) where it is there
ML_DTYPES = {"bfloat16": 4, "float8_e4m3fn": 10, "float8_e5m2": 12}  # with their DLPack codes
NUMPY_VERSIONED = np.lib.NumpyVersion(np.__version__) >= "2.1.0"

needs_pythonapi = pytest.mark.skipif(
    not hasattr(ctypes, "pythonapi"), reason="DLPack capsules need ctypes.pythonapi (not on PyPy)"
)
needs_versioned = pytest.mark.skipif(not NUMPY_VERSIONED, reason="NumPy < 2.1 exports no versioned capsules")


def values(dtype, shape=(3, 4)):
    return (np.arange(int(np.prod(shape))) % 7).reshape(shape).astype(dtype)


def numpy_view(array: np.ndarray, key):
    """``array[key]`` as a view, a 0-d array rather than a scalar when every axis is indexed."""
    key = key if isinstance(key, tuple) else (key,)
    return array[key if any(k is Ellipsis for k in key) else key + (Ellipsis,)]


def host_view(array: np.ndarray, device: int = 0) -> _device_array.DeviceArray:
    """A DeviceArray over a NumPy array's memory: for what needs no CUDA call."""
    return _device_array.DeviceArray(
        array.__array_interface__["data"][0], array.shape, array.strides, array.dtype, device, array
    )


class CapsuleOf:
    """A producer that says its data is on CUDA device 0 and hands out one given capsule."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack_device__(self):
        return kDLCUDA, 0

    def __dlpack__(self, **kwargs):
        return self.capsule


class Owner:
    """Something to keep alive, whose release is counted."""

    released = 0

    def __del__(self):
        type(self).released += 1


def new_owner() -> Owner:
    Owner.released = 0
    return Owner()


# ---------------------------------------------------------------------------
# cudart bindings


def test_cudart_uses_only_what_cudart_12_0_exports():
    used = set(_cudart._PROTOTYPES) | {"cudaGetErrorName"}
    for listing in ("cudart-12.0.txt", "cudart-13.0.txt"):
        exported = set((EXPORTS / listing).read_text().splitlines())
        assert used <= exported, (listing, used - exported)


@pytest.mark.parametrize(
    "code, kind, status",
    [
        (2, pyctk.OutOfMemoryError, "GPUMATMUL_ERROR_OUT_OF_MEMORY"),
        (34, pyctk.NoDriverError, "GPUMATMUL_ERROR_NO_DRIVER"),
        (35, pyctk.NoDriverError, "GPUMATMUL_ERROR_NO_DRIVER"),
        (36, pyctk.NoDriverError, "GPUMATMUL_ERROR_NO_DRIVER"),
        (100, pyctk.NoDeviceError, "GPUMATMUL_ERROR_NO_DEVICE"),
        (101, pyctk.NoDeviceError, "GPUMATMUL_ERROR_NO_DEVICE"),
        (700, pyctk.ContextLostError, "GPUMATMUL_ERROR_CONTEXT_LOST"),  # illegal address
        (719, pyctk.ContextLostError, "GPUMATMUL_ERROR_CONTEXT_LOST"),  # launch failure
        (1, pyctk.CudaError, "GPUMATMUL_ERROR_CUDA"),  # invalid value
    ],
)
def test_check_maps_cuda_errors_to_pyctk_exceptions(code, kind, status):
    _cudart.check(0, "cudaFreeAsync")
    with pytest.raises(kind) as raised:
        _cudart.check(code, "cudaMallocAsync")
    assert type(raised.value) is kind and raised.value.status == status
    name = _cudart.runtime().cudaGetErrorName(code).decode()  # cudart names errors with no driver
    assert str(raised.value).startswith(f"cudaMallocAsync failed: {name} (cudaError_t {code})")
    assert name.startswith("cudaError")
    lost = "The GPU context of this process is lost" in str(raised.value)
    assert lost == (kind is pyctk.ContextLostError)


def test_out_of_memory_is_a_memory_error():
    with pytest.raises(MemoryError):
        _cudart.check(2, "cudaMallocAsync")


def test_without_a_driver_zeros_raises_no_driver_error(needs_no_driver):
    with pytest.raises(pyctk.NoDriverError, match=r"cudaGetDeviceCount failed: cudaError\w+.*libcuda.so.1"):
        _device_array.zeros((2, 2))
    with pytest.raises(pyctk.NoDriverError):
        _device_array.asarray(np.ones(3))


# ---------------------------------------------------------------------------
# Dtypes


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dtype_round_trips_through_dldatatype(dtype):
    dl = _dlpack.dl_dtype(dtype)
    assert (dl.bits, dl.lanes) == (8 * dtype.itemsize, 1)
    expected_code = ML_DTYPES.get(dtype.name) or {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}[dtype.kind]
    assert dl.code == expected_code
    assert _dlpack.numpy_dtype(dl) == dtype


@pytest.mark.parametrize("dtype", [np.longdouble, object, ">f4", "<U3", "datetime64[s]", "V2"], ids=str)
def test_other_dtypes_are_refused(dtype):
    if np.dtype(dtype) == np.float64:  # longdouble is float64 on some platforms
        pytest.skip("longdouble is float64 here")
    with pytest.raises(TypeError, match="does not support dtype"):
        _dlpack.dl_dtype(dtype)


@pytest.mark.parametrize("code, bits, lanes", [(2, 8, 1), (3, 64, 1), (2, 32, 4), (0, 128, 1)])
def test_dldatatypes_without_a_numpy_dtype_are_refused(code, bits, lanes):
    with pytest.raises(TypeError, match=rf"'dtype' is code {code}, {bits} bits, {lanes} lanes"):
        _dlpack.numpy_dtype(_dlpack.DLDataType(code, bits, lanes))


def test_importing_the_modules_does_not_import_ml_dtypes():
    code = (
        "import sys, pyctk; before = 'ml_dtypes' in sys.modules; "
        "from pyctk._arrays import device_array, dlpack, dtypes, interop; "
        "dtypes.supported_dtype('float32'); "
        "assert ('ml_dtypes' in sys.modules) == before"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parent)


# ---------------------------------------------------------------------------
# DLPack import, from NumPy's capsules


def numpy_capsule(array, versioned):
    return array.__dlpack__(max_version=(1, 0)) if versioned else array.__dlpack__()


VERSIONS = [pytest.param(False, id="legacy"), pytest.param(True, id="versioned", marks=needs_versioned)]


@needs_pythonapi
@pytest.mark.parametrize("versioned", VERSIONS)
def test_numpy_capsule_is_read_correctly(versioned):
    base = np.arange(60, dtype=np.float32).reshape(5, 12)
    array = base[1:4, 10:1:-3]  # element 0 inside the buffer, negative and non-unit strides
    info = _dlpack.describe(numpy_capsule(array, versioned))
    assert info.pointer == array.__array_interface__["data"][0]
    assert (info.shape, info.strides, info.dtype) == (array.shape, array.strides, array.dtype)
    assert info.device == (kDLCPU, 0) and not info.readonly and not info.copied
    assert info.version == ((1, 0) if versioned else None)


@needs_pythonapi
@needs_versioned
def test_read_only_flag_is_read():
    array = np.ones(3)
    array.flags.writeable = False
    assert _dlpack.describe(array.__dlpack__(max_version=(1, 0))).readonly


@needs_pythonapi
def test_byte_offset_and_null_strides():
    array = np.arange(12, dtype=np.int16).reshape(3, 4)
    capsule = array.__dlpack__()
    tensor = _dlpack._open(capsule)[1].dl_tensor
    tensor.data, tensor.byte_offset = tensor.data - 64, 64  # same element 0, reached by offset
    tensor.strides = None  # NULL: C-contiguous
    info = _dlpack.describe(capsule)
    assert info.pointer == array.ctypes.data and info.strides == array.strides


@needs_pythonapi
@pytest.mark.parametrize("versioned", VERSIONS)
def test_cpu_capsule_is_read_then_refused_unconsumed(cuda, versioned):
    array = np.ones((2, 3))
    alive = weakref.ref(array)
    capsule = numpy_capsule(array, versioned)
    assert _dlpack.describe(capsule).device == (kDLCPU, 0)
    assert _interop.capsule_operand(capsule) is None  # host data: left to its destructor
    assert _dlpack.describe(capsule).shape == (2, 3)  # still unconsumed, still readable
    claims_cuda = CapsuleOf(numpy_capsule(array, versioned))  # says CUDA; its capsule does not
    with pytest.raises(TypeError, match=r"pyctk\.asarray"):
        _device_array.from_dlpack(claims_cuda)
    del array, capsule, claims_cuda
    assert alive() is None  # every capsule's destructor released the array


def test_from_dlpack_of_host_data_says_to_use_asarray():
    with pytest.raises(TypeError, match=r"host data .* use pyctk\.asarray\(x\)"):
        _device_array.from_dlpack(np.ones(3))


@needs_pythonapi
@pytest.mark.parametrize("versioned", VERSIONS)
def test_consuming_runs_the_deleter_exactly_once(versioned):
    array = np.ones(4)
    alive = weakref.ref(array)
    capsule = numpy_capsule(array, versioned)
    del array
    tensor = _dlpack.consume(capsule)
    used = "used_dltensor_versioned" if versioned else "used_dltensor"
    assert f'"{used}"' in repr(capsule)
    with pytest.raises(TypeError, match="unconsumed DLPack capsule"):
        _dlpack.consume(capsule)
    del capsule  # renamed: its destructor leaves the tensor alone
    assert alive() is not None
    tensor.release()
    assert alive() is None
    tensor.release()  # a second release (and the finaliser) do nothing
    del tensor


# ---------------------------------------------------------------------------
# DLPack export


@needs_pythonapi
@pytest.mark.parametrize("versioned", VERSIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_exported_capsule_round_trips(dtype, versioned):
    owner = new_owner()
    host = values(dtype, (4, 6))[::2, ::-1]  # the "device" memory: any layout
    pointer = host.__array_interface__["data"][0]
    capsule = _dlpack.to_capsule(
        pointer, host.shape, host.strides, dtype, (kDLCUDA, 3), owner, versioned=versioned, copied=versioned
    )
    del owner
    tensor = _dlpack.consume(capsule)
    info = tensor.info
    assert (info.pointer, info.shape, info.strides, info.dtype) == (pointer, host.shape, host.strides, dtype)
    assert info.device == (kDLCUDA, 3) and info.copied == versioned and not info.readonly
    del capsule
    assert Owner.released == 0
    del tensor
    assert Owner.released == 1


@needs_pythonapi
def test_unconsumed_exported_capsule_is_freed_by_its_destructor():
    owner = new_owner()
    capsule = _dlpack.to_capsule(0, (0, 5), (20, 4), np.float32, (kDLCUDA, 0), owner, versioned=False)
    del owner
    assert _dlpack.describe(capsule).pointer == 0
    assert Owner.released == 0
    del capsule
    assert Owner.released == 1


@needs_pythonapi
def test_read_only_export_needs_a_versioned_capsule():
    owner = new_owner()
    with pytest.raises(BufferError, match="versioned"):
        _dlpack.to_capsule(0, (1,), (8,), np.float64, (kDLCUDA, 0), owner, versioned=False, readonly=True)
    if NUMPY_VERSIONED:
        capsule = _dlpack.to_capsule(0x1000, (1,), (8,), np.float64, (kDLCUDA, 0), owner, versioned=True, readonly=True)
        assert _dlpack.describe(capsule).readonly


@needs_pythonapi
def test_consumer_rejecting_a_capsule_keeps_its_exception():
    """A consumer that refuses a capsule destroys it while its exception is being raised: the
    capsule's destructor must neither lose that exception nor leak the owner."""

    class CudaProducer:
        def __init__(self, owner):
            self.owner = owner

        def __dlpack_device__(self):
            return kDLCPU, 0  # lets NumPy ask for the capsule, then see CUDA in it

        def __dlpack__(self, max_version=None, **kwargs):
            return _dlpack.to_capsule(
                0x1000, (2,), (4,), np.float32, (kDLCUDA, 0), self.owner, versioned=_dlpack.wants_versioned(max_version)
            )

    owner = new_owner()
    with pytest.raises(Exception) as raised:
        np.from_dlpack(CudaProducer(owner))
    assert not isinstance(raised.value, SystemError), raised.value
    assert "device" in str(raised.value).lower()
    del owner
    assert Owner.released == 1


def test_without_pythonapi_dlpack_says_why(monkeypatch):
    monkeypatch.delattr(ctypes, "pythonapi", raising=False)
    monkeypatch.setattr(_dlpack, "_api", None)
    with pytest.raises(pyctk.UnsupportedError, match=r"ctypes\.pythonapi.*__cuda_array_interface__"):
        _dlpack.describe(object())


# ---------------------------------------------------------------------------
# DeviceArray over host memory: views and the exchange protocols, no CUDA call


BASIC_KEYS = [
    1,
    -1,
    (2, 3),
    slice(None),
    slice(1, 3),
    slice(None, None, 2),
    slice(None, None, -1),
    (slice(4, 0, -3), slice(None)),
    (Ellipsis, 2),
    (None, 1, Ellipsis, None),
    (Ellipsis,),
    (slice(3, 1), slice(None)),
    (np.int64(2), slice(-2, None)),
    (slice(None), None),
    (),
    None,
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_indexing_views_match_numpy(key):
    host = values(np.float64, (5, 6))
    view, expected = host_view(host)[key], numpy_view(host, key)
    assert (view.shape, view.strides) == (expected.shape, expected.strides)
    if expected.size:
        assert view._pointer == expected.__array_interface__["data"][0]
    assert view._owner is host  # views share the owner, so the memory lives while any view does


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_indexing_views_match_numpy_property(data):
    shape = data.draw(st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple))
    host = np.zeros(shape, np.int32)
    index = st.one_of(st.slices(6), st.none(), st.just(Ellipsis), *([st.integers(-6, 5)] if shape else []))
    key = tuple(data.draw(st.lists(index, max_size=len(shape) + 2)))
    try:
        expected = numpy_view(host, key)
    except (IndexError, ValueError) as error:
        with pytest.raises(type(error)):
            host_view(host)[key]
        return
    view = host_view(host)[key]
    assert (view.shape, view.strides) == (expected.shape, expected.strides)
    if expected.size:
        assert view._pointer == expected.__array_interface__["data"][0]


@pytest.mark.parametrize(
    "key, error",
    [
        ((0, 0, 0), IndexError),
        (7, IndexError),
        (-8, IndexError),
        ((Ellipsis, Ellipsis), IndexError),
        ([0, 1], IndexError),
        (True, IndexError),
        (1.0, IndexError),
        (np.array([0]), IndexError),
        (slice(None, None, 0), ValueError),
    ],
)
def test_invalid_indices(key, error):
    with pytest.raises(error):
        host_view(values(np.float32, (7, 2)))[key]


def test_attributes_and_transpose():
    host = values(np.complex64, (3, 4, 5))
    array = host_view(host, device=2)
    assert (array.shape, array.dtype, array.strides, array.ndim) == (host.shape, host.dtype, host.strides, 3)
    assert (array.size, array.nbytes, array.device, len(array)) == (60, 480, 2, 3)
    assert (array.T.shape, array.T.strides) == (host.T.shape, host.T.strides)
    assert array.T._pointer == array._pointer
    with pytest.raises(TypeError):
        len(array[0, 0, 0])


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.name not in ML_DTYPES], ids=str)
def test_cuda_array_interface(dtype):
    host = values(dtype, (4, 6))
    array = host_view(host)
    interface = array.__cuda_array_interface__
    assert interface == {
        "shape": (4, 6),
        "typestr": dtype.str,
        "descr": [("", dtype.str)],
        "data": (host.ctypes.data, False),
        "strides": None,
        "version": 3,
        "stream": 1,
    }
    view = array[:, 1::2]
    assert view.__cuda_array_interface__["strides"] == host[:, 1::2].strides
    assert view.__cuda_array_interface__["data"][0] == host[:, 1::2].ctypes.data


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.name in ML_DTYPES], ids=str)
def test_ml_dtypes_have_no_cuda_array_interface(dtype):
    """The interface has no type string for them (NumPy's own says '<V2', '<V1', '<f1'): DLPack has."""
    with pytest.raises(AttributeError, match=f"cannot describe {dtype.name}; use DLPack"):
        _ = host_view(values(dtype)).__cuda_array_interface__


@needs_pythonapi
@pytest.mark.parametrize("versioned", VERSIONS)
def test_dlpack_export_of_a_device_array_round_trips(versioned):
    host = values(np.float32, (4, 6))
    array = host_view(host, device=1)[1:, ::2]
    assert array.__dlpack_device__() == (kDLCUDA, 1)
    capsule = array.__dlpack__(stream=-1, max_version=(1, 0) if versioned else None)
    alive = weakref.ref(array)
    del array
    operand = _interop.capsule_operand(capsule)
    expected = host[1:, ::2]
    assert (operand.pointer, operand.shape, operand.strides) == (expected.ctypes.data, expected.shape, expected.strides)
    assert (operand.device, operand.stream) == (1, None)
    assert alive() is not None  # the consumer's tensor keeps the exported array alive
    del capsule, operand
    assert alive() is None


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"stream": 0}, ValueError),
        ({"stream": -2}, ValueError),
        ({"stream": "1"}, TypeError),
        ({"stream": True}, TypeError),
        ({"dl_device": (kDLCUDA, 1)}, BufferError),
        ({"dl_device": (_dlpack.kDLCUDAManaged, 0)}, BufferError),
        ({"dl_device": (kDLCPU, 0), "copy": False}, BufferError),
    ],
)
def test_dlpack_export_argument_errors(kwargs, error):
    with pytest.raises(error):
        host_view(np.ones(3)).__dlpack__(**kwargs)


def test_array_with_copy_false_is_refused():
    with pytest.raises(ValueError, match="always a copy"):
        host_view(np.ones(3)).__array__(copy=False)


# ---------------------------------------------------------------------------
# Interop: streams and operands


class CudaStreamProtocol:
    def __init__(self, handle, version=0):
        self.handle, self.version = handle, version

    def __cuda_stream__(self):
        return self.version, self.handle


class TorchLikeStream:
    cuda_stream = 0x5000


@pytest.mark.parametrize(
    "stream, handle",
    [
        (None, 0),
        (0, 0),
        (1, 1),
        (2, 2),
        (0x7F00, 0x7F00),
        (np.uint64(9), 9),
        (CudaStreamProtocol(0x1234), 0x1234),
        (TorchLikeStream(), 0x5000),
    ],
)
def test_stream_handle(stream, handle):
    assert _streams.handle(stream) == handle


@pytest.mark.parametrize(
    "stream, error",
    [
        ("0", TypeError),
        (1.0, TypeError),
        (True, TypeError),
        (object(), TypeError),
        (CudaStreamProtocol(5, version=1), TypeError),
        (-1, ValueError),
    ],
)
def test_stream_handle_refuses(stream, error):
    with pytest.raises(error):
        _streams.handle(stream)


class CpuTensorLike:
    """A CPU tensor as PyTorch presents one: DLPack on the CPU, no CUDA Array Interface."""

    def __dlpack_device__(self):
        return kDLCPU, 0

    def __dlpack__(self, **kwargs):
        raise AssertionError("host data needs no capsule")

    @property
    def __cuda_array_interface__(self):
        raise AttributeError("not a CUDA tensor")


@pytest.mark.parametrize("x", [np.ones((2, 2)), [[1.0, 2.0]], 3.5, CpuTensorLike()], ids=type)
def test_host_data_is_no_device_operand(x):
    assert _interop.device_operand(x) is None


class CaiArray:
    def __init__(self, **interface):
        self.__cuda_array_interface__ = {"version": 3, "strides": None, "stream": None, **interface}


@pytest.fixture
def gpu_pointers(monkeypatch):
    """cudaPointerGetAttributes answering 'device memory of device 1' for any pointer."""
    monkeypatch.setattr(_cudart, "pointer_device", lambda pointer: (_cudart.MEMORY_DEVICE, 1))


@pytest.mark.parametrize("typestr", ["<f4", "<f8", "<f2", "|b1", "|i1", "<u8", "<c8", "<c16"])
def test_cuda_array_interface_operand(gpu_pointers, typestr):
    x = CaiArray(shape=(2, 3), typestr=typestr, data=(0x7000, False), stream=0x99)
    operand = _interop.device_operand(x)
    itemsize = np.dtype(typestr).itemsize
    assert (operand.pointer, operand.shape, operand.strides) == (0x7000, (2, 3), (3 * itemsize, itemsize))
    assert (operand.dtype, operand.device, operand.readonly) == (np.dtype(typestr), 1, False)
    assert operand.owner is x and operand.stream == 0x99


def test_cuda_array_interface_operand_with_strides(gpu_pointers):
    x = CaiArray(shape=(4, 2), typestr="<f4", data=(0x7000, True), strides=(4, 16), version=2)
    del x.__cuda_array_interface__["stream"]
    operand = _interop.device_operand(x)
    assert (operand.strides, operand.readonly, operand.stream) == ((4, 16), True, None)


class TorchTensorLike:
    """A tensor as pyctk's torch reader sees one (its accessors; dtype and layout print as
    torch's do), with the CUDA Array Interface torch would give it, to compare the two paths."""

    def __init__(
        self, shape, stride, dtype="torch.float32", device=1, is_cuda=True, requires_grad=False, layout="torch.strided"
    ) -> None:
        self.shape, self._stride, self.dtype, self._device = shape, stride, dtype, device
        self.is_cuda, self.requires_grad, self.layout = is_cuda, requires_grad, layout

    def data_ptr(self):
        return 0x7000

    def stride(self):
        return self._stride

    def get_device(self):
        return self._device

    def is_conj(self):
        return False

    def is_neg(self):
        return False

    @property
    def __cuda_array_interface__(self):
        if not self.is_cuda:
            raise AttributeError("not a CUDA tensor")
        if self.requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad")
        itemsize = np.dtype(self.dtype.removeprefix("torch.")).itemsize
        return {
            "version": 2,
            "shape": self.shape,
            "typestr": np.dtype(self.dtype.removeprefix("torch.")).str,
            "data": (0x7000, False),
            "strides": tuple(s * itemsize for s in self._stride),
        }


TorchTensorLike.__module__, TorchTensorLike.__qualname__ = "torch", "Tensor"


@pytest.mark.parametrize("dtype", ["torch.float32", "torch.float64", "torch.int8", "torch.complex64"])
def test_torch_reader_reads_what_the_interface_says(gpu_pointers, dtype):
    x = TorchTensorLike((3, 4), (1, 3), dtype)  # a transposed view
    read = _interop.device_operand(x)
    through_interface = _interop._interface_operand(x, x.__cuda_array_interface__)
    assert read == through_interface
    assert read.strides == (np.dtype(dtype.removeprefix("torch.")).itemsize, 3 * read.dtype.itemsize)


def test_torch_reader_leaves_the_rest_to_the_protocols(gpu_pointers):
    assert _interop.device_operand(TorchTensorLike((2,), (1,), is_cuda=False)) is None
    with pytest.raises(RuntimeError, match="requires grad"):  # torch's own refusal, as before
        _interop.device_operand(TorchTensorLike((2,), (1,), requires_grad=True))
    sparse = TorchTensorLike((2,), (1,), layout="torch.sparse_coo")
    assert _interop.device_operand(sparse).strides == (4,)  # read through its interface


def test_torch_key_stands_for_what_the_reader_reads_and_only_that(gpu_pointers):
    x = TorchTensorLike((3, 4), (1, 3), "torch.float16", device=1)
    _interop.device_operand(x)  # the reader learns the dtype; the key reader only asks
    assert _interop.key_reader(type(x)) is _interop._torch_key
    assert _interop._torch_key(x) == (0x7000, ("torch.float16", "torch.strided", (3, 4), (1, 3), 1))
    for other in (
        TorchTensorLike((3, 4), (1, 3), "torch.float16", is_cuda=False, device=-1),
        TorchTensorLike((3, 4), (1, 3), "torch.float16", requires_grad=True),
        TorchTensorLike((3, 4), (1, 3), "torch.bfloat16"),  # not learnt yet
        TorchTensorLike((2,), (1,), layout="torch.sparse_coo"),
    ):
        assert _interop._torch_key(other) is None
    negated = TorchTensorLike((3, 4), (1, 3), "torch.float16")  # (x.conj().imag has the bit)
    negated.is_neg = lambda: True
    assert _interop._torch_key(negated) is None
    conjugated = TorchTensorLike((3, 4), (1, 3), "torch.complex64")
    _interop.device_operand(conjugated)
    assert _interop._torch_key(conjugated) is not None
    conjugated.is_conj = lambda: True  # only complex tensors have the bit: only theirs is asked
    assert _interop._torch_key(conjugated) is None
    assert _interop.key_reader(np.ndarray) is None


def test_a_repeat_of_torch_tensors_runs_the_plan_kept_by_their_key(gpu_pointers, monkeypatch):
    from pyctk._matmul import repeat

    def kept(*args):  # a kept plan: called with the operands' addresses and the stream
        return args

    x, y = TorchTensorLike((3, 4), (4, 1)), TorchTensorLike((4, 2), (2, 1))
    _interop.device_operand(x)

    def layout(t):
        return (t.dtype, t.layout, t.shape, t.stride(), 1)

    monkeypatch.setattr(repeat, "_device", {(layout(x), layout(y), 0, ("same_kind",)): kept})
    assert repeat.run(x, y, None, ("same_kind",)) == (0x7000, 0x7000, None)
    assert repeat.run(x, y, None, ("unsafe",)) is None  # other options: the full path


class CupyArrayLike:
    """A CuPy array as pyctk's CuPy reader sees one (its accessors, on device 1), with the CUDA
    Array Interface CuPy gives it: the current stream, the legacy default one for CuPy's default."""

    class Memory:
        ptr, device_id = 0x7000, 1

    def __init__(self, shape, strides, dtype, current_stream):
        self.shape, self.strides, self.dtype, self.data = shape, strides, np.dtype(dtype), self.Memory()
        self.current_stream = current_stream

    @property
    def __cuda_array_interface__(self):
        return {
            "version": 3,
            "shape": self.shape,
            "typestr": self.dtype.str,
            "strides": self.strides,
            "data": (self.data.ptr, False),
            "stream": self.current_stream or 1,
        }


CupyArrayLike.__module__, CupyArrayLike.__qualname__ = "cupy", "ndarray"


@pytest.mark.parametrize("dtype, current_stream", [("<f4", 0), ("<c16", 0x55), ("|b1", 0), ("<M8[s]", 0)])
def test_cupy_reader_reads_what_the_interface_says(gpu_pointers, monkeypatch, dtype, current_stream):
    x = CupyArrayLike((3, 4), (8 * 1, 8 * 3), dtype, current_stream)
    stream = type("Stream", (), {"ptr": current_stream})()
    cuda = type("cuda", (), {"get_current_stream": staticmethod(lambda: stream)})
    monkeypatch.setitem(sys.modules, "cupy", type("cupy", (), {"cuda": cuda}))
    if np.dtype(dtype).kind == "M":  # a dtype pyctk lacks: the interface's TypeError, as before
        with pytest.raises(TypeError):
            _interop.device_operand(x)
        return
    read = _interop.device_operand(x)
    assert read == _interop._interface_operand(x, x.__cuda_array_interface__)
    assert read.stream == (current_stream or _streams.LEGACY)


def test_zero_size_cuda_array_interface_needs_no_cuda_call():
    operand = _interop.device_operand(CaiArray(shape=(0, 3), typestr="<f4", data=(0, False), stream=1))
    assert (operand.pointer, operand.shape, operand.stream) == (0, (0, 3), None)


@pytest.mark.parametrize(
    "interface, error",
    [
        ({"typestr": "<U2"}, TypeError),
        ({"mask": object()}, TypeError),
        ({"stream": 0}, ValueError),
    ],
)
def test_cuda_array_interface_refusals(gpu_pointers, interface, error):
    with pytest.raises(error):
        _interop.device_operand(CaiArray(**{"shape": (2,), "typestr": "<f4", "data": (0x7000, False), **interface}))


def test_host_memory_behind_a_cuda_array_interface_is_refused(monkeypatch):
    monkeypatch.setattr(_cudart, "pointer_device", lambda pointer: (_cudart.MEMORY_HOST, 0))
    with pytest.raises(TypeError, match="host memory"):
        _interop.device_operand(CaiArray(shape=(2,), typestr="<f4", data=(0x7000, False)))


def test_device_array_is_its_own_operand():
    host = values(np.float32)
    array = host_view(host)[:, 1:]
    operand = _interop.device_operand(array)
    assert (operand.pointer, operand.strides, operand.owner) == (host[:, 1:].ctypes.data, host.strides, array)
    assert operand.stream == 0


@needs_pythonapi
@pytest.mark.parametrize("takes_max_version", [True, False])
def test_dlpack_operand(cuda, takes_max_version):
    host = values(np.int16, (3, 5))
    calls = []

    class Producer:  # a CUDA producer without __cuda_array_interface__
        def __init__(self, owner):
            self.owner = owner

        def __dlpack_device__(self):
            return kDLCUDA, 1

        def __dlpack__(self, stream=None, **kwargs):
            calls.append(dict(stream=stream, current_device=cuda.current, **kwargs))
            if "max_version" in kwargs and not takes_max_version:
                raise TypeError("unexpected keyword argument 'max_version'")
            return _dlpack.to_capsule(
                host.ctypes.data,
                host.shape,
                host.strides,
                host.dtype,
                (kDLCUDA, 1),
                self.owner,
                versioned=takes_max_version,
            )

    owner = new_owner()
    operand = _interop.device_operand(Producer(owner))
    # The consumer's stream, the legacy one, on the producer's device.
    assert calls[0] == {"stream": 1, "current_device": 1, "max_version": (1, 0)}
    assert (operand.pointer, operand.shape, operand.strides, operand.device) == (
        host.ctypes.data,
        host.shape,
        host.strides,
        1,
    )
    assert operand.stream is None  # DLPack: the producer already ordered its work
    del owner
    assert Owner.released == 0
    del operand
    assert Owner.released == 1


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_asarray_get_round_trip(cuda, dtype):
    host = values(dtype)
    array = _device_array.asarray(host)
    assert (array.shape, array.dtype, array.strides, array.device) == (host.shape, dtype, host.strides, 0)
    assert cuda.device_of(array._pointer) == 0
    result = array.get()
    assert result.dtype == dtype and result.flags.c_contiguous and result.flags.owndata
    np.testing.assert_array_equal(result, host)
    np.testing.assert_array_equal(np.asarray(array), host)


def test_asarray_of_lists_scalars_and_dtypes(cuda):
    assert _device_array.asarray([[1, 2]], dtype=np.float32).get().tolist() == [[1.0, 2.0]]
    scalar = _device_array.asarray(3.5)
    assert scalar.shape == () and scalar.get() == 3.5
    assert _device_array.asarray(np.ones((2, 3), order="F")).strides == (24, 8)
    with pytest.raises(TypeError, match="does not support dtype"):
        _device_array.asarray(["a", "b"])


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_get_of_views_matches_numpy(cuda, key):
    host = values(np.int32, (5, 6))
    np.testing.assert_array_equal(_device_array.asarray(host)[key].get(), host[key])
    np.testing.assert_array_equal(_device_array.asarray(host).T[key].get(), host.T[key])


def test_empty_zeros_and_zero_sizes(cuda):
    zeros = _device_array.zeros((3, 2), np.complex64, device=1)
    assert zeros.device == 1 and cuda.device_of(zeros._pointer) == 1
    np.testing.assert_array_equal(zeros.get(), np.zeros((3, 2), np.complex64))
    assert _device_array.empty(4).dtype == np.float64 and _device_array.empty(4).shape == (4,)
    empty = _device_array.zeros((0, 5), np.float32)
    assert empty._pointer == 0 and empty.get().shape == (0, 5)
    with pytest.raises(ValueError, match="negative"):
        _device_array.empty((2, -1))


def test_copy(cuda):
    host = values(np.float64, (4, 6))
    array = _device_array.asarray(host)
    contiguous, strided = array.copy(), array[::-1, 1::2].copy()
    assert contiguous._pointer != array._pointer and contiguous.strides == array.strides
    np.testing.assert_array_equal(contiguous.get(), host)
    assert strided.strides == (24, 8)
    np.testing.assert_array_equal(strided.get(), host[::-1, 1::2])


def test_asarray_of_device_arrays(cuda):
    array = _device_array.asarray(values(np.float32))
    assert _device_array.asarray(array) is array
    assert _device_array.asarray(array, dtype=np.float32, device=0) is array
    cast = _device_array.asarray(array, dtype=np.float64)
    assert cast.dtype == np.float64 and cast.get().tolist() == values(np.float64).tolist()
    moved = _device_array.asarray(array[:, ::2], device=1)
    assert moved.device == 1 and cuda.device_of(moved._pointer) == 1
    np.testing.assert_array_equal(moved.get(), values(np.float32)[:, ::2])
    contiguous = _device_array.asarray(array, device=1)
    assert cuda.device_of(contiguous._pointer) == 1
    np.testing.assert_array_equal(contiguous.get(), values(np.float32))


def test_bad_device_index_raises_and_keeps_the_current_device(cuda):
    with pytest.raises(pyctk.NoDeviceError, match=r"device 5 does not exist"):
        _device_array.zeros(3, device=5)


def test_on_device_restores_the_callers_device_after_errors(cuda):
    cuda.current = 1
    with pytest.raises(RuntimeError):
        with _cudart.on_device(0):
            assert cuda.current == 0
            raise RuntimeError
    assert cuda.current == 1
    with _cudart.on_device(1):
        assert cuda.current == 1
    cuda.current = 0


def test_memory_is_freed_after_the_last_view(cuda):
    array = _device_array.asarray(values(np.float32))
    view, transposed = array[1:], array.T
    del array, view
    gc.collect()  # PyPy frees at collections only
    assert len(cuda.blocks) == 1
    del transposed
    gc.collect()
    _memory.release_recycled()  # a small block freed on the legacy stream waits there for reuse
    assert not cuda.blocks


def test_out_of_memory_collects_garbage_and_retries(cuda):
    cuda.capacity = 8192
    cycle: list = [_device_array.empty(4096, np.uint8)]
    cycle.append(cycle)  # garbage that only the cycle collector frees (and, on PyPy, all garbage)
    gc.disable()
    try:
        del cycle
        assert _device_array.empty(8192, np.uint8).nbytes == 8192  # after a collection
    finally:
        gc.enable()
    with pytest.raises(pyctk.OutOfMemoryError, match="cudaErrorMemoryAllocation"):
        _device_array.empty(8193, np.uint8)


def test_small_blocks_freed_on_the_legacy_stream_are_reused_without_cuda(cuda, monkeypatch):
    calls = []
    monkeypatch.setattr(cuda, "cudaMallocAsync", _counted(cuda.cudaMallocAsync, calls, "alloc"))
    monkeypatch.setattr(cuda, "cudaFreeAsync", _counted(cuda.cudaFreeAsync, calls, "free"))
    first = _device_array.empty(1000, np.uint8)
    pointer = first._pointer
    del first
    gc.collect()
    again = _device_array.empty(1000, np.uint8)  # the same size, on the same (legacy) stream
    assert again._pointer == pointer and calls == ["alloc"]
    on_a_stream = _device_array.empty(1000, np.uint8, stream=0x5000)  # another stream: the pool's
    large = _device_array.empty(_memory.RECYCLED_MAX_BYTES + 1, np.uint8)  # too large to keep
    del on_a_stream, large
    gc.collect()
    assert calls == ["alloc", "alloc", "alloc", "free", "free"]


def test_out_of_memory_returns_the_kept_blocks_to_the_pool(cuda):
    kept = _device_array.empty(4096, np.uint8)
    del kept
    gc.collect()
    assert len(cuda.blocks) == 1  # kept for reuse
    cuda.capacity = 8192
    _device_array.empty(8192, np.uint8)  # needs the kept block's memory back
    assert len(cuda.blocks) == 1


def _counted(call, calls, name):
    def counted(*args):
        calls.append(name)
        return call(*args)

    return counted


@needs_pythonapi
def test_memory_is_freed_after_the_last_capsule(cuda):
    array = _device_array.asarray(values(np.float32))
    unconsumed, consumed = array.__dlpack__(stream=-1), array.T.__dlpack__(stream=-1)
    tensor = _dlpack.consume(consumed)
    del array, consumed
    assert len(cuda.blocks) == 1
    del unconsumed
    assert len(cuda.blocks) == 1
    del tensor
    _memory.release_recycled()
    assert not cuda.blocks


@needs_pythonapi
def test_dlpack_export_makes_the_consumer_stream_wait(cuda):
    array = _device_array.asarray(values(np.float32))
    array.__dlpack__()  # None: the legacy stream, which is pyctk's own: no event
    array.__dlpack__(stream=1)
    assert cuda.waits == []
    array.__dlpack__(stream=0x5000)
    array.__dlpack__(stream=2)
    assert cuda.waits == [(0x5000, 0), (2, 0)]
    copied = _device_array.from_dlpack(CapsuleOf(array.__dlpack__(max_version=(1, 0), copy=True)))
    assert copied._pointer != array._pointer
    np.testing.assert_array_equal(copied.get(), values(np.float32))


@needs_pythonapi
def test_dlpack_export_to_the_cpu_copies(cuda):
    array = _device_array.asarray(values(np.int8))[:, ::-1]
    info = _dlpack.describe(array.__dlpack__(dl_device=(kDLCPU, 0), max_version=(1, 0)))
    assert info.device == (kDLCPU, 0) and info.copied == NUMPY_VERSIONED
    np.testing.assert_array_equal(np.from_dlpack(_CpuExport(array)), values(np.int8)[:, ::-1])


class _CpuExport:
    """Asks a DeviceArray for a CPU capsule, as numpy.from_dlpack(x, device="cpu") does."""

    def __init__(self, array):
        self.array = array

    def __dlpack_device__(self):
        return kDLCPU, 0

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**{**kwargs, "dl_device": (kDLCPU, 0)})


def test_zero_copy_views_of_cuda_array_interface_arrays(cuda):
    source = _device_array.asarray(values(np.uint16))
    foreign = CaiArray(**{**source.__cuda_array_interface__, "stream": 0x77})
    view = _device_array.asarray(foreign)
    assert view._pointer == source._pointer and view._owner is foreign
    assert cuda.waits == [(0, 0x77)]  # pyctk's stream waits for the producer's
    np.testing.assert_array_equal(view.get(), values(np.uint16))
    moved = _device_array.asarray(foreign, device=1)
    assert moved.device == 1 and moved._pointer != source._pointer


def test_repr(cuda):
    small = _device_array.asarray(np.array([[1.0, 2.0]], np.float32))
    assert repr(small) == "DeviceArray([[1., 2.]], dtype=float32, device=0)"
    assert repr(_device_array.zeros((2, 2), np.int64)) == (
        "DeviceArray([[0, 0],\n             [0, 0]], dtype=int64, device=0)"
    )
    assert repr(_device_array.empty((100, 100), np.float16, device=1)) == (
        "DeviceArray(shape=(100, 100), dtype=float16, device=1)"
    )


def test_repeated_products_run_by_their_plan_on_their_own_data(cuda, monkeypatch):
    """The first product of a layout takes the full path and keeps a plan; later ones of the
    same layouts run by it (no full path), each on its own operands."""
    from pyctk._matmul import api, repeat

    full_paths = []
    plan = api.plan
    monkeypatch.setattr(api, "plan", lambda *args: (full_paths.append(1), plan(*args))[1])
    monkeypatch.setattr(repeat, "_device", {})
    rng = np.random.default_rng(4)
    for round_ in range(3):
        a, b = rng.standard_normal((3, 5, 4)), rng.standard_normal((4, 6))
        da, db = _device_array.asarray(a), _device_array.asarray(b)
        for x, y, expected in (
            (da, db, a @ b),
            (da[1].T, da[2], a[1].T @ a[2]),
            (db.T[1:3], db[:, 0], b.T[1:3] @ b[:, 0]),
        ):
            result = pyctk.matmul(x, y)
            assert result.shape == expected.shape and result.dtype == expected.dtype
            np.testing.assert_allclose(result.get(), expected, rtol=1e-13)
        assert len(full_paths) == 3, f"round {round_}: {len(full_paths)} full paths"
    assert len(repeat._device) == 3


# Stacks whose broadcast leaves strides one stack stride cannot say: a copy of the broadcast
# stack (these raised a TypeError from pyctk's internals before the pipeline had a plan stage).
BROADCASTS = [
    ((1, 5, 3, 2), (6, 1, 2, 4)),
    ((6, 1, 3, 2), (1, 5, 2, 4)),
    ((4, 1, 2, 2), (3, 2, 2)),
    ((2, 3, 4, 2, 3), (4, 3, 2)),
]


@pytest.mark.parametrize("shape_a, shape_b", BROADCASTS)
def test_gpu_operands_whose_broadcast_one_stride_cannot_say_are_copied(cuda, shape_a, shape_b):
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    result = pyctk.matmul(_device_array.asarray(a), _device_array.asarray(b))
    np.testing.assert_allclose(result.get(), a @ b, rtol=1e-13)


@pytest.mark.parametrize(
    "shape_a, shape_b, axes",
    [
        ((3, 4, 2), (4, 5), [(0, 1), (0, 1), (1, 2)]),
        ((2, 3, 4), (5, 4), [(-2, -1), (1, 0), (-1, -2)]),
        ((3,), (2, 3, 4), [0, (1, 2), (0,)]),
    ],
)
def test_axes_for_gpu_operands(cuda, shape_a, shape_b, axes):
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    expected = np.matmul(a, b, axes=axes)
    result = pyctk.matmul(_device_array.asarray(a), _device_array.asarray(b), axes=axes)
    assert result.shape == expected.shape
    np.testing.assert_allclose(result.get(), expected, rtol=1e-13)
    out = _device_array.empty(expected.shape)
    assert pyctk.matmul(_device_array.asarray(a), _device_array.asarray(b), axes=axes, out=out) is out
    np.testing.assert_allclose(out.get(), expected, rtol=1e-13)


OUTS = {  # a GPU out= of another dtype, or strides the C call cannot write, takes a temporary
    "bool, casting unsafe": (lambda shape: _device_array.empty(shape, np.bool_), {"casting": "unsafe"}),
    "int64, casting unsafe": (lambda shape: _device_array.empty(shape, np.int64), {"casting": "unsafe"}),
    "complex128": (lambda shape: _device_array.empty(shape, np.complex128), {}),
    "column-major": (lambda shape: _device_array.empty(shape[::-1]).T, {}),
    "negative strides": (lambda shape: _device_array.empty(shape)[::-1, ::-1], {}),
    "every other column": (lambda shape: _device_array.empty((shape[0], 2 * shape[1]))[:, ::2], {}),
}


@pytest.mark.parametrize("name", OUTS)
def test_gpu_out_of_any_dtype_and_strides_gets_numpys_result(cuda, name):
    make_out, keywords = OUTS[name]
    a = np.arange(12.0).reshape(3, 4) - 5.5
    b = np.arange(20.0).reshape(4, 5) / 7
    out = make_out((3, 5))
    expected = np.matmul(a, b, out=np.empty(out.shape, out.dtype), **keywords)
    assert pyctk.matmul(_device_array.asarray(a), _device_array.asarray(b), out=out, **keywords) is out
    np.testing.assert_allclose(out.get(), expected, rtol=1e-13)


def test_a_gpu_out_that_overlaps_an_operand_gets_numpys_result(cuda):
    x = np.arange(16.0).reshape(4, 4)
    for view in (lambda a: a, lambda a: a.T, lambda a: a[::-1]):
        d = _device_array.asarray(x)
        expected = np.matmul(view(x.copy()), x, out=view(x.copy()))
        pyctk.matmul(view(d), d, out=view(d))
        np.testing.assert_array_equal(view(d).get(), expected)


def test_gpu_operands_of_other_dtypes_are_cast_on_the_device(cuda):
    a, b = np.arange(6, dtype=np.int16).reshape(2, 3), np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for keywords in ({}, {"dtype": np.float64}, {"dtype": np.complex64}):
        result = pyctk.matmul(_device_array.asarray(a), _device_array.asarray(b), **keywords)
        expected = np.matmul(a, b, **keywords)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result.get(), expected)


def test_device_array_astype_casts_as_numpy_on_the_device(cuda):
    x = np.array([[1.5, -2.5, 300.7], [np.nan, np.inf, -0.0]])
    d = _device_array.asarray(x)
    for dtype in (np.int8, np.uint8, np.bool_, np.float16, np.complex64):
        with np.errstate(invalid="ignore", over="ignore"):  # NaN and inf to integers: NumPy warns
            np.testing.assert_array_equal(d.astype(dtype).get(), x.astype(dtype))
            np.testing.assert_array_equal(d.T.astype(dtype).get(), x.T.astype(dtype))
    assert d.astype(np.float64, copy=False) is d and d.astype(np.float64) is not d
    with pytest.warns(np.exceptions.ComplexWarning):
        _device_array.asarray(x + 1j).astype(np.float32)


def test_a_product_of_gpu_operands_enters_each_stage_once_in_order(cuda):
    """Described once, resolved, planned (a copy of a's broadcast stack, a cast of b), run,
    wrapped: pyctk/_matmul's stages, each once, in order."""
    a = _device_array.asarray(np.ones((1, 5, 3, 2)))
    b = _device_array.asarray(np.ones((6, 1, 2, 4), np.float32))
    assert stage_route(lambda: pyctk.matmul(a, b)) == STAGES
    assert stage_route(lambda: pyctk.matmul(a[0, 0], a[0, 0].T)) == STAGES  # read in place


def test_a_result_keeps_its_stream_object_alive_until_its_memory_is_freed(cuda):
    """Memory is freed on its stream, and freeing on a destroyed stream crashes the process:
    a result holds the stream= object it was made on (CuPy's and pyctk.driver's streams
    destroy theirs when collected). (A plan's path, which needs operands on the product's
    stream, is tested on a GPU: test_device_matmul_on_gpu.py.)"""

    class Stream:
        def __cuda_stream__(self):
            return (0, 0x5000)

    a = _device_array.asarray(np.arange(16.0).reshape(4, 4))
    for make in (lambda stream: pyctk.matmul(a, a, stream=stream), lambda stream: pyctk.empty((2, 2), stream=stream)):
        stream = Stream()
        alive = weakref.ref(stream)
        result = make(stream)
        del stream
        gc.collect()
        assert alive() is not None
        del result
        gc.collect()
        assert alive() is None
