"""pyctk.driver's device memory, IPC, peer copies and graphs on the CPU: what needs no GPU.

Covered: argument errors raised before any GPU call (mem_alloc_pitch, mem_alloc_ipc,
memcpy_peer, the address-taking functions, graphs and stream capture), and valid arguments
getting as far as the driver; IPC handles' types and lengths; PointerHolderBase with and
without get_pointer, as an address, a buffer, a copy's and a kernel's argument; the enums'
and constants' values and the driver structures' fields against cuda.h; the capture
functions asked of the driver for the 12.0 ABI, against cudaTypedefs.h.
"""

from __future__ import annotations

import ctypes
import operator
import re
from pathlib import Path

import numpy as np
import pytest

import pyctk
import pyctk.driver as cuda
from pyctk._cuda import driver_api as _driver_api
from pyctk._pycuda.compiling import headers as _headers
from pyctk._pycuda.contexts import streams as _streams
from pyctk._pycuda.kernels import graphs as _graphs
from pyctk._pycuda.kernels.kernel_args import Param
from pyctk._pycuda.kernels.modules import Function
from pyctk._pycuda.memory import device as _memory


def _header(name: str) -> str:
    return Path(_headers.header_folders()[0].path, name).read_text()


def _cuda_h_value(header: str, name: str) -> int:
    """The value cuda.h gives enumerator or macro ``name`` (``7``, ``0x4``, ``1<<0``)."""
    match = re.search(rf"\b{name}\s*=?\s*(0x[0-9a-fA-F]+|\d+)(?:\s*<<\s*(\d+))?", header)
    assert match, name
    return int(match[1], 0) << int(match[2] or 0)


class Holder(cuda.PointerHolderBase):
    def __init__(self, address: int) -> None:
        super().__init__()
        self.address = address

    def get_pointer(self) -> int:
        return self.address


# ---------------------------------------------------------------------------
# Argument errors, before the GPU is asked anything (here, where there is no driver,
# a GPU call would raise NoDriverError instead).


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: cuda.mem_alloc_pitch(64, 4, 3), ValueError, "4, 8 or 16"),
        (lambda: cuda.mem_alloc_pitch(64, 4, 32), ValueError, "access_size=32"),
        (lambda: cuda.mem_alloc_pitch(-1, 4, 4), ValueError, "width is -1 bytes: it must be 0 or more"),
        (lambda: cuda.mem_alloc_pitch(64, 4, 4.0), TypeError, "float"),
        (lambda: cuda.mem_alloc_ipc(0), ValueError, "nbytes is 0 bytes: it must be 1 or more"),
        (lambda: cuda.memcpy_peer(0, 0, -1), ValueError, "size is -1 bytes: it must be 0 or more"),
        (lambda: cuda.memcpy_peer(0, 0, 8, dest_context="ctx"), TypeError, "dest_context must be a Context"),
        (lambda: cuda.memcpy_peer_async(0, 0, 8, src_context=0), TypeError, "src_context must be a Context"),
        (lambda: cuda.memcpy_peer_async(0, 0, 8, stream="s"), TypeError, "stream must be"),
        (lambda: cuda.mem_get_address_range("not memory"), TypeError, "not device memory"),
        (lambda: cuda.mem_get_ipc_handle([1, 2]), TypeError, "not device memory"),
        (lambda: cuda.mem_get_ipc_handle(-8), ValueError, "negative"),
    ],
)
def test_argument_errors_come_before_the_gpu(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: cuda.mem_alloc_pitch(64, 4, 16),
        lambda: cuda.mem_alloc_ipc(16),
        lambda: cuda.memcpy_peer(0, 0, 0),
        lambda: cuda.mem_get_address_range(Holder(0x1000)),
        lambda: cuda.IPCMemoryHandle(bytes(64)),
        lambda: cuda.Event.from_ipc_handle(bytearray(64)),
        lambda: cuda.Graph(),
    ],
)
def test_valid_arguments_reach_the_driver(needs_no_driver, call):
    with pytest.raises(pyctk.NoDriverError):
        call()


# ---------------------------------------------------------------------------
# IPC handles.


@pytest.mark.parametrize(
    "handle, error, match",
    [
        ("64 characters, but a str", TypeError, "not str"),
        (12, TypeError, "not int"),
        (bytearray(63), ValueError, "64 bytes; this one is 63"),
        (bytes(65), ValueError, "this one is 65"),
    ],
    ids=["str", "int", "63 bytes", "65 bytes"],
)
def test_ipc_handle_type_and_length(handle, error, match):
    for open_handle in (cuda.IPCMemoryHandle, cuda.Event.from_ipc_handle):
        with pytest.raises(error, match=match):
            open_handle(handle)


@pytest.mark.parametrize("kind", [bytearray, bytes, memoryview, lambda b: np.frombuffer(b, np.uint32)])
def test_ipc_handle_from_any_buffer_of_64_bytes(kind):
    data = bytes(range(64))
    handle = _streams.to_ipc_handle(kind(data))
    assert isinstance(handle, _driver_api.IpcHandle) and bytes(handle) == data


def test_ipc_handle_is_cuda_h_size():
    assert ctypes.sizeof(_driver_api.IpcHandle) == _cuda_h_value(_header("cuda.h"), "CU_IPC_HANDLE_SIZE")


# ---------------------------------------------------------------------------
# PointerHolderBase.


def test_pointer_holder_base_without_get_pointer():
    holder = cuda.PointerHolderBase()
    for use in (int, operator.index, lambda h: _memory.device_pointer(h), lambda h: h.as_buffer(4)):
        with pytest.raises(NotImplementedError, match="must define get_pointer"):
            use(holder)


def test_pointer_holder_is_an_address_everywhere():
    holder = Holder(0x7F0000001000)
    assert int(holder) == operator.index(holder) == np.uintp(holder) == 0x7F0000001000
    pointer = _memory.device_pointer(holder)
    assert (pointer.address, pointer.device, pointer.owner) == (0x7F0000001000, None, holder)
    assert _memory._contiguous_device(holder, 0) == 0x7F0000001000
    with pytest.raises(ValueError, match="negative"):
        _memory.device_pointer(Holder(-1))


def test_ipc_memory_handle_is_a_pointer_holder():
    assert issubclass(cuda.IPCMemoryHandle, cuda.PointerHolderBase)


def test_as_buffer_views_the_memory_at_the_address():
    host = np.zeros(16, np.uint8)  # host memory stands in for memory the host can reach
    view = Holder(host.ctypes.data).as_buffer(4, offset=8)
    assert (view.nbytes, view.format, view.readonly) == (4, "B", False)
    view[:] = b"\x01\x02\x03\x04"
    assert host.tolist() == [0] * 8 + [1, 2, 3, 4] + [0] * 4
    with pytest.raises(ValueError, match="negative"):
        Holder(host.ctypes.data).as_buffer(-1)
    assert cuda.DeviceAllocation.as_buffer is cuda.PointerHolderBase.as_buffer


def test_pointer_holder_is_a_kernel_pointer_argument(monkeypatch):
    monkeypatch.setattr(_driver_api, "current_device", lambda: 0)
    kernel = Function(None, 0, "k", [Param("int", 8), Param("int", 4)])
    keep = []
    values = kernel._values((Holder(0x1234), np.int32(7)), 0, keep, [])
    assert values == [(0x1234).to_bytes(8, "little"), np.int32(7).tobytes()]
    assert isinstance(keep[0], Holder)  # alive for the launch
    with pytest.raises(TypeError, match="takes 2 arguments"):
        kernel._values((Holder(1),), 0, [], [])
    with pytest.raises(TypeError, match="32-bit integer"):
        kernel._values((Holder(1), Holder(2)), 0, [], [])


# ---------------------------------------------------------------------------
# Enums, constants and structures against cuda.h.


@pytest.mark.parametrize(
    "enum, prefix",
    [
        (cuda.capture_mode, "CU_STREAM_CAPTURE_MODE_"),
        (cuda.capture_status, "CU_STREAM_CAPTURE_STATUS_"),
        (cuda.update_capture_dependencies_flags, "CU_STREAM_"),
        (cuda.ipc_mem_flags, "CU_IPC_MEM_"),
        (cuda.pointer_attribute, "CU_POINTER_ATTRIBUTE_"),
        (cuda.array_cubemap_face, "CU_CUBEMAP_FACE_"),
    ],
)
def test_enums_are_cuda_h(enum, prefix):
    header = _header("cuda.h")
    assert {member.name: int(member) for member in enum} == {
        member.name: _cuda_h_value(header, prefix + member.name) for member in enum
    }
    assert len(re.findall(rf"\b{prefix}\w+\s*=", header)) >= len(enum)


@pytest.mark.parametrize(
    "value, name",
    [
        (cuda.event_flags.INTERPROCESS, "CU_EVENT_INTERPROCESS"),
        (cuda.event_flags.DISABLE_TIMING, "CU_EVENT_DISABLE_TIMING"),
    ],
)
def test_constants_are_cuda_h(value, name):
    assert value == _cuda_h_value(_header("cuda.h"), name)


def test_texture_reference_constants_are_cuda_h():
    header = _header("cuda.h")
    assert cuda.TRSA_OVERRIDE_FORMAT == _cuda_h_value(header, "CU_TRSA_OVERRIDE_FORMAT")
    assert re.search(r"#define CU_PARAM_TR_DEFAULT -1\b", header) and cuda.TR_DEFAULT == -1


@pytest.mark.parametrize(
    "structure, name, size",
    [
        (_graphs._KernelNodeParams, "CUDA_KERNEL_NODE_PARAMS_v2_st", 72),
        (_graphs._InstantiateParams, "CUDA_GRAPH_INSTANTIATE_PARAMS_st", 32),
    ],
)
def test_structures_are_cuda_h(structure, name, size):
    body = re.search(rf"typedef struct {name}\s*\{{(.*?)\}}", _header("cuda.h"), re.DOTALL)[1]
    fields = re.findall(r"(\w+);", re.sub(r"/\*.*?\*/", "", body, flags=re.DOTALL))
    assert [field for field, _ in structure._fields_] == fields
    assert ctypes.sizeof(structure) == size  # 64-bit Linux: pointers 8, unsigned int 4, padded


def test_capture_functions_are_asked_for_their_12_0_form():
    """They changed in 12.3, so a CUDA 12 runtime's query (the _PROTOTYPES' way) would hand out
    the new forms: graphs.py asks the driver for the 12.0 ABI's, which these must be."""
    typedefs = _header("cudaTypedefs.h")
    for name, argtypes in _graphs._CAPTURE_FUNCTIONS.items():
        versions = {
            int(v): a.count(",") + 1
            for v, a in re.findall(rf"typedef CUresult \(CUDAAPI \*PFN_{name}_v(\d+)\)\(([^;]*?)\);", typedefs)
        }
        served = max(v for v in versions if v <= _driver_api.ABI_VERSION)
        assert versions[served] == len(argtypes), name
        assert any(_driver_api.ABI_VERSION < v < 13000 and versions[v] != len(argtypes) for v in versions), name
        assert name not in _driver_api._PROTOTYPES


# ---------------------------------------------------------------------------
# Graphs and stream capture: argument errors before the driver is asked.


@pytest.fixture
def graph():
    return _graphs.Graph._wrap(0, owned=False)


@pytest.fixture
def kernel():
    return Function(None, 0, "k", [Param("int", 8), Param("int", 4)])


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda g, k: g.add_kernel_node(0, np.int32(1), func="k", block=(1,)), TypeError, "func= must be a Function"),
        (
            lambda g, k: g.add_kernel_node(cuda.In(np.zeros(2)), np.int32(1), func=k, block=(1,)),
            TypeError,
            "cannot be In/Out/InOut",
        ),
        (
            lambda g, k: g.add_kernel_node(0, np.int32(1), func=k, block=(1,), dependencies=[object()]),
            TypeError,
            "dependencies must be GraphNodes",
        ),
        (lambda g, k: g.add_kernel_node(0, np.int32(1), func=k, block=None), TypeError, "block= is required"),
        (lambda g, k: g.add_kernel_node(0, np.int32(1), func=k, block=(1,), grid=(1, 1, 1, 1)), TypeError, "grid="),
        (lambda g, k: g.add_kernel_node(0, np.int32(1), func=k), TypeError, "block"),
        (
            lambda g, k: _graphs.GraphExec(0, []).kernel_node_set_params(
                0, np.int32(1), kernel_node=object(), func=k, block=(1,)
            ),
            TypeError,
            "kernel_node= must be a GraphNode",
        ),
        (
            lambda g, k: _graphs.GraphExec(0, []).kernel_node_set_params(
                cuda.Out(np.zeros(2)), np.int32(1), kernel_node=cuda.GraphNode(1), func=k, block=(1,)
            ),
            TypeError,
            "In/Out/InOut",
        ),
    ],
)
def test_graph_argument_errors(graph, kernel, call, error, match):
    with pytest.raises(error, match=match):
        call(graph, kernel)


@pytest.fixture
def stream():
    stream = cuda.Stream.__new__(cuda.Stream)  # no GPU: the checks come before the handle is used
    stream.handle = None
    return stream


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda s: s.begin_capture(capture_mode=7), ValueError, "capture_mode.GLOBAL"),
        (lambda s: s.begin_capture("GLOBAL"), ValueError, "capture_mode='GLOBAL'"),
        (lambda s: s.update_capture_dependencies([], flags=2), ValueError, "SET_CAPTURE_DEPENDENCIES"),
        (lambda s: s.update_capture_dependencies([object()]), TypeError, "GraphNodes"),
    ],
)
def test_capture_argument_errors(stream, call, error, match):
    with pytest.raises(error, match=match):
        call(stream)


def test_nodes_and_graphs_are_equal_by_handle():
    assert cuda.GraphNode(5) == cuda.GraphNode(5) and cuda.GraphNode(5) != cuda.GraphNode(6)
    assert len({cuda.GraphNode(5), cuda.GraphNode(5), cuda.GraphNode(6)}) == 2
    assert cuda.GraphNode(5) != 5
    assert _graphs.Graph._wrap(7, owned=False) == _graphs.Graph._wrap(7, owned=False)
    assert _graphs.Graph._wrap(7, owned=False) != _graphs.Graph._wrap(8, owned=False)


def test_streams_have_the_capture_methods():
    for name in ("begin_capture", "end_capture", "get_capture_info_v2", "update_capture_dependencies"):
        assert callable(getattr(cuda.Stream, name)), name
