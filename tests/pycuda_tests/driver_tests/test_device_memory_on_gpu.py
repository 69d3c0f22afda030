"""pyctk.driver's device memory, IPC, peer copies and graphs on a GPU, as a PyCUDA program uses them.

Covered: mem_alloc_pitch's pitch against the driver (its address range and texture pitch
alignment) and a 2-D kernel writing through it; mem_get_address_range of driver and pool
memory; mem_alloc_like and from_device_like (C and Fortran order); PointerHolderBase over a
DeviceArray's, PyTorch's and CuPy's memory in copies, launches and prepared calls;
DeviceAllocation.as_buffer on managed memory; memcpy_peer(_async) on one device and between
two; memory and an event shared with a child process through IPC (and pool memory refused,
saying what to use); a captured graph of two launches and a copy replayed; a graph built node
by node with dependencies; kernel_node_set_params; a kernel node added to a capture
(PyCUDA's pull request #424's own example).
"""

from __future__ import annotations

import ctypes
import gc
import subprocess
import sys
import weakref

import numpy as np
import pytest

import pyctk
import pyctk.driver as cuda
from pyctk._cuda import driver_api as _driver_api
from pyctk.compiler import SourceModule

pytestmark = pytest.mark.gpu

KERNELS = r"""
__global__ void fill_pitched(float *a, size_t pitch, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) ((float *)((char *)a + y * pitch))[x] = y * 1000.0f + x;
}
__global__ void plus(float *a, int n, float value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += value;
}
__global__ void times(float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= b[i];
}"""


@pytest.fixture(scope="module")
def module():
    return SourceModule(KERNELS, cache_dir=False)


@pytest.fixture
def plus(module):
    return module.get_function("plus")


@pytest.fixture
def times(module):
    return module.get_function("times")


def floats(memory, n: int) -> np.ndarray:
    return cuda.from_device(memory, (n,), np.float32)


def capture_stream() -> cuda.Stream:
    """A stream to capture on: non-blocking, so that the legacy default stream's work (where
    pyctk's pool frees memory, garbage collected at any time) does not break the capture."""
    gc.collect()
    cuda.Context.synchronize()  # memory allocated on the legacy stream is ready for this one
    return cuda.Stream(cuda.stream_flags.NON_BLOCKING)


# ---------------------------------------------------------------------------
# Allocations and address ranges.


def test_mem_alloc_pitch_against_the_driver_and_a_2d_kernel(module):
    width, height = 100, 37  # float32 columns, rows
    a_gpu, pitch = cuda.mem_alloc_pitch(width * 4, height, 4)
    device = cuda.Context.get_device()
    texture_pitch_alignment = _driver_api.query_int("cuDeviceGetAttribute", 51, int(device))
    assert pitch >= width * 4 and pitch % texture_pitch_alignment == 0  # as cuMemAllocPitch promises
    assert a_gpu.nbytes == pitch * height and a_gpu.device == int(device)
    base, size = cuda.mem_get_address_range(a_gpu)
    assert base == int(a_gpu) and size >= pitch * height

    cuda.memset_d8(a_gpu, 0, pitch * height)
    module.get_function("fill_pitched")(
        a_gpu,
        np.uint64(pitch),
        np.int32(width),
        np.int32(height),
        block=(32, 8, 1),
        grid=((width + 31) // 32, (height + 7) // 8),
    )
    rows = np.empty((height, pitch // 4), np.float32)
    cuda.memcpy_dtoh(rows, a_gpu)
    assert np.array_equal(rows[:, :width], np.arange(height)[:, None] * 1000.0 + np.arange(width))
    assert not rows[:, width:].any()  # the padding is the kernel's to skip

    a_gpu.free()
    a_gpu.free()  # twice: nothing
    with pytest.raises(ValueError, match="freed"):
        int(a_gpu)


@pytest.mark.parametrize("access_size", [4, 8, 16])
def test_mem_alloc_pitch_access_sizes(access_size):
    a_gpu, pitch = cuda.mem_alloc_pitch(1000, 3, access_size)
    assert pitch >= 1000 and pitch % access_size == 0
    assert cuda.mem_get_address_range(int(a_gpu) + pitch)[0] == int(a_gpu)


def test_an_allocations_size_bounds_every_copy_into_and_out_of_it():
    """mem_alloc's memory and a DeviceArray know their sizes: a copy or fill past them is
    refused before the driver (which would write past them), and a fitting one runs."""
    small, large = cuda.mem_alloc(16), cuda.mem_alloc(32)
    array = pyctk.zeros(4, np.float32)
    for copy in (
        lambda: cuda.memcpy_htod(small, np.zeros(4)),
        lambda: cuda.memcpy_dtoh(np.zeros(4), small),
        lambda: cuda.memcpy_dtod(small, large, 32),
        lambda: cuda.memcpy_dtod(large, array, 32),
        lambda: cuda.memcpy_peer(large, small, 17),
        lambda: cuda.memset_d32(array, 1, 5),
    ):
        with pytest.raises(ValueError, match="do not fit"):
            copy()
    cuda.memcpy_htod(large, np.arange(4.0))
    cuda.memcpy_dtod(small, large, 16)
    back = np.zeros(2)
    cuda.memcpy_dtoh(back, small)
    assert back.tolist() == [0.0, 1.0]


def test_mem_get_address_range():
    a_gpu = cuda.mem_alloc_ipc(1000)  # cuMemAlloc's: the range is the allocation
    base, size = cuda.mem_get_address_range(int(a_gpu) + 100)
    assert base == int(a_gpu) and size >= 1000
    assert cuda.mem_get_address_range(a_gpu) == (base, size)
    pooled = cuda.mem_alloc(4096)  # the pool's: a range holding the allocation
    base, size = cuda.mem_get_address_range(pooled)
    assert base <= int(pooled) and int(pooled) + 4096 <= base + size


def test_mem_alloc_like_and_from_device_like():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    a_gpu = cuda.mem_alloc_like(a)
    assert a_gpu.nbytes == a.nbytes
    cuda.memcpy_htod(a_gpu, a)
    b = cuda.from_device_like(a_gpu, a)
    assert (b.shape, b.dtype) == (a.shape, a.dtype) and np.array_equal(a, b)
    fortran = np.asfortranarray(a)
    f = cuda.from_device_like(cuda.to_device(fortran), fortran)  # its bytes, in Fortran order
    assert f.flags.f_contiguous and np.array_equal(f, a)


def test_as_buffer_reads_and_writes_managed_memory():
    memory = cuda.ManagedAllocation(64)
    cuda.memset_d8(memory, 7, 64)
    cuda.Context.synchronize()
    view = memory.as_buffer(8, offset=4)
    assert bytes(view) == b"\x07" * 8
    view[:] = bytes(range(8))
    out = np.empty(64, np.uint8)
    cuda.memcpy_dtoh(out, memory)
    assert out[4:12].tolist() == list(range(8)) and (out[:4] == 7).all() and (out[12:] == 7).all()


# ---------------------------------------------------------------------------
# PointerHolderBase: other libraries' memory as PyCUDA programs wrap it.


class Held(cuda.PointerHolderBase):
    def __init__(self, owner, address: int) -> None:
        super().__init__()
        self.owner, self.address = owner, address

    def get_pointer(self) -> int:
        return self.address


def _device_array():
    x = pyctk.asarray(np.arange(64, dtype=np.float32))
    return Held(x, x.__cuda_array_interface__["data"][0])


def _torch():
    torch = pytest.importorskip("torch")
    t = torch.arange(64, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    return Held(t, t.data_ptr())


def _cupy():
    cupy = pytest.importorskip("cupy")
    c = cupy.arange(64, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    return Held(c, c.data.ptr)


@pytest.mark.parametrize("make", [_device_array, _torch, _cupy], ids=["DeviceArray", "torch", "cupy"])
def test_pointer_holder_in_copies_and_kernels(make, module):
    plus = module.get_function("plus")  # its own: prepare changes the Function
    held = make()
    plus(held, np.int32(64), np.float32(1), block=(64, 1, 1))
    out = np.empty(64, np.float32)
    cuda.memcpy_dtoh(out, held)
    assert np.array_equal(out, np.arange(64) + 1)
    cuda.memcpy_htod(held, np.zeros(64, np.float32))
    plus.prepare("Pif").prepared_call((1, 1), (64, 1, 1), held, 64, 2.5)
    cuda.memcpy_dtoh(out, held)
    assert np.array_equal(out, np.full(64, 2.5, np.float32))
    copy = cuda.mem_alloc(256)
    cuda.memcpy_dtod(copy, held, 256)
    assert np.array_equal(floats(copy, 64), out)


# ---------------------------------------------------------------------------
# Copies between devices.


def test_memcpy_peer_on_one_device():
    a = np.arange(256, dtype=np.int32)
    src, dest = cuda.to_device(a), cuda.mem_alloc(a.nbytes)
    cuda.memcpy_peer(dest, src, a.nbytes)  # both contexts: the current one (PyCUDA crashes here)
    assert np.array_equal(cuda.from_device_like(dest, a), a)
    context = cuda.Context.get_device().retain_primary_context()
    cuda.memset_d32(dest, 0, a.size)
    stream = cuda.Stream()
    cuda.memcpy_peer_async(dest, src, a.nbytes, context, context, stream=stream)
    stream.synchronize()
    assert np.array_equal(cuda.from_device_like(dest, a), a)


def test_memcpy_peer_between_two_devices():
    if cuda.Device.count() < 2:
        pytest.skip("needs two GPUs")
    a = np.arange(1000, dtype=np.float32)
    src, back = cuda.to_device(a), cuda.mem_alloc(a.nbytes)  # on device 0, current
    here = cuda.Device(0).retain_primary_context()
    there = cuda.Device(1).make_context()
    try:
        far = cuda.mem_alloc(a.nbytes)
        assert far.device == 1
    finally:
        cuda.Context.pop()
    cuda.memcpy_peer(far, src, a.nbytes, dest_context=there, src_context=here)
    stream = cuda.Stream()
    cuda.memcpy_peer_async(back, far, a.nbytes, here, there, stream)
    stream.synchronize()
    assert np.array_equal(cuda.from_device_like(back, a), a)


# ---------------------------------------------------------------------------
# IPC: a child process opens the memory and the event.

CHILD = """
import sys
import numpy as np
import pyctk.driver as cuda
memory_handle, event_handle, n = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), int(sys.argv[3])
cuda.Event.from_ipc_handle(event_handle).synchronize()  # the parent's copy is done
memory = cuda.IPCMemoryHandle(memory_handle)
x = np.empty(n, np.int32)
cuda.memcpy_dtoh(x, memory)
cuda.memcpy_htod(memory, 2 * x)
memory.close()
memory.close()
try:
    int(memory)
except ValueError as error:
    print("closed:", error)
print("sum", int(x.sum()))
"""


def test_ipc_memory_and_event_across_processes(tmp_path):
    a = np.arange(1000, dtype=np.int32)
    shared = cuda.mem_alloc_ipc(a.nbytes)
    stream = cuda.Stream()
    cuda.memcpy_htod_async(shared, a, stream)
    done = cuda.Event(cuda.event_flags.INTERPROCESS | cuda.event_flags.DISABLE_TIMING).record(stream)
    memory_handle, event_handle = cuda.mem_get_ipc_handle(shared), done.ipc_handle()
    for handle in (memory_handle, event_handle):
        assert type(handle) is bytearray and len(handle) == 64
    child = subprocess.run(
        [sys.executable, "-c", CHILD, bytes(memory_handle).hex(), bytes(event_handle).hex(), str(a.size)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    assert f"sum {a.sum()}" in child.stdout
    assert "closed: this IPCMemoryHandle was closed" in child.stdout
    assert np.array_equal(cuda.from_device_like(shared, a), 2 * a)


def test_pool_memory_cannot_be_shared_and_the_error_says_what_can():
    pooled = cuda.mem_alloc(1024)
    handle = _driver_api.IpcHandle()
    # What the driver itself says for memory of a stream-ordered pool: it refuses it.
    assert _driver_api.driver().cuIpcGetMemHandle(ctypes.byref(handle), int(pooled)) != 0
    with pytest.raises(cuda.LogicError, match=r"stream-ordered pool.*mem_alloc_ipc\(nbytes\)"):
        cuda.mem_get_ipc_handle(pooled)
    with pytest.raises(cuda.LogicError, match="mem_alloc_ipc"):
        cuda.mem_get_ipc_handle(np.zeros(4).ctypes.data)  # not CUDA's memory at all


# ---------------------------------------------------------------------------
# Graphs.


def test_captured_graph_of_two_launches_and_a_copy_replays(plus, times, tmp_path):
    n = 256
    a, b = cuda.to_device(np.zeros(n, np.float32)), cuda.to_device(np.full(n, 3, np.float32))
    c = cuda.mem_alloc(n * 4)
    stream = capture_stream()
    status, _, capturing, dependencies = stream.get_capture_info_v2()
    assert (status, capturing, dependencies) == (cuda.capture_status.NONE, None, [])
    stream.begin_capture()
    status, _, capturing, _ = stream.get_capture_info_v2()
    assert status == cuda.capture_status.ACTIVE and capturing is not None
    plus(a, np.int32(n), np.float32(1), block=(128, 1, 1), grid=(2, 1), stream=stream)
    times(a, b, np.int32(n), block=(128, 1, 1), grid=(2, 1), stream=stream)
    cuda.memcpy_dtod_async(c, a, n * 4, stream)
    graph = stream.end_capture()
    assert graph == capturing
    assert stream.get_capture_info_v2()[0] == cuda.capture_status.NONE
    assert not floats(a, n).any()  # captured, not run

    instance = graph.instantiate()
    for _ in range(3):
        instance.launch(stream)
    stream.synchronize()
    assert np.array_equal(floats(c, n), np.full(n, ((1 * 3 + 1) * 3 + 1) * 3))  # 39
    graph.debug_dot_print(str(tmp_path / "graph.dot"))
    assert "digraph" in (tmp_path / "graph.dot").read_text()


def test_graph_built_with_dependencies(plus, times):
    n = 64
    a, b = cuda.to_device(np.zeros(n, np.float32)), cuda.to_device(np.full(n, 2, np.float32))
    graph = cuda.Graph()
    first = graph.add_kernel_node(a, np.int32(n), np.float32(1), func=plus, block=(64, 1, 1))
    second = graph.add_kernel_node(a, b, np.int32(n), func=times, block=(64, 1, 1), dependencies=[first])
    third = graph.add_kernel_node(
        a, np.int32(n), np.float32(3), func=plus, block=(32, 1, 1), grid=(2,), dependencies=[second]
    )
    assert len({first, second, third}) == 3
    instance = graph.instantiate()
    instance.launch()
    cuda.Context.synchronize()
    assert np.array_equal(floats(a, n), np.full(n, (0 + 1) * 2 + 3))  # in the dependencies' order
    instance.launch()
    cuda.Context.synchronize()
    assert np.array_equal(floats(a, n), np.full(n, (5 + 1) * 2 + 3))


def test_graph_keeps_its_kernels_memory_alive_until_it_is_destroyed(plus):
    n = 64
    memory = cuda.to_device(np.zeros(n, np.float32))
    held = Held(memory, int(memory))
    alive = weakref.ref(held)
    graph = cuda.Graph()
    graph.add_kernel_node(held, np.int32(n), np.float32(1), func=plus, block=(64, 1, 1))
    instance = graph.instantiate()
    del held
    gc.collect()
    assert alive() is not None  # the graph holds it
    instance.launch()
    cuda.Context.synchronize()
    assert np.array_equal(floats(memory, n), np.ones(n))
    del graph
    gc.collect()
    assert alive() is not None  # and so does an instance of it
    del instance
    gc.collect()
    assert alive() is None


def test_kernel_node_set_params(plus):
    n = 64
    a, other = cuda.to_device(np.zeros(n, np.float32)), cuda.to_device(np.zeros(n, np.float32))
    graph = cuda.Graph()
    node = graph.add_kernel_node(a, np.int32(n), np.float32(1), func=plus, block=(64, 1, 1))
    instance = graph.instantiate()
    for value in (1, 2, 3):
        instance.kernel_node_set_params(
            a, np.int32(n), np.float32(value), kernel_node=node, func=plus, block=(64, 1, 1)
        )
        instance.launch()
    cuda.Context.synchronize()
    assert np.array_equal(floats(a, n), np.full(n, 6))
    instance.kernel_node_set_params(
        other, np.int32(n), np.float32(5), kernel_node=node, func=plus, block=(32, 1, 1), grid=(2, 1)
    )
    instance.launch()
    cuda.Context.synchronize()
    assert np.array_equal(floats(a, n), np.full(n, 6)) and np.array_equal(floats(other, n), np.full(n, 5))
    graph.instantiate().launch()  # the graph itself kept its first parameters
    cuda.Context.synchronize()
    assert np.array_equal(floats(a, n), np.full(n, 7))


def test_kernel_node_added_to_a_capture(plus):
    """PyCUDA's pull request #424's example: a node whose parameters change at each launch,
    joined to work captured after it."""
    n = 16
    a, b = cuda.to_device(np.zeros(n, np.float32)), cuda.mem_alloc(n * 4)
    stream = capture_stream()
    stream.begin_capture()
    status, _, capturing, dependencies = stream.get_capture_info_v2()
    assert status == cuda.capture_status.ACTIVE and dependencies == []
    node = capturing.add_kernel_node(
        a, np.int32(n), np.float32(3), func=plus, block=(16, 1, 1), dependencies=dependencies
    )
    stream.update_capture_dependencies([node], cuda.update_capture_dependencies_flags.SET_CAPTURE_DEPENDENCIES)
    assert stream.get_capture_info_v2()[3] == [node]
    cuda.memcpy_dtod_async(b, a, n * 4, stream)  # captured after the node
    graph = stream.end_capture()
    assert graph == capturing
    instance = graph.instantiate()
    total = 0
    for value in range(4):
        instance.kernel_node_set_params(
            a, np.int32(n), np.float32(value), kernel_node=node, func=plus, block=(16, 1, 1)
        )
        instance.launch(stream)
        total += value
        stream.synchronize()
        assert np.array_equal(floats(b, n), np.full(n, total))
