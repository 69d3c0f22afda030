"""PyCUDA's host memory and memory pools on a GPU: pyctk.driver's pagelocked_*, aligned_*,
register_host_memory, managed_* and pyctk.tools' pools, as a PyCUDA program uses them.

Covered: each kind of host memory round-trips data through the GPU (copies and a
SourceModule kernel); get_device_pointer and get_flags against the driver's own answer;
mapped page-locked memory written by a kernel; managed arrays passed to kernels as they
are (views and prepared calls too) and read after Context.synchronize(), attach to a
stream; registration and its undoing; copies from and to page-locked memory enqueued on a
busy stream return at once; the pools reuse blocks and their allocations are kernel
arguments; pyctk.matmul of page-locked, managed and registered arrays against NumPy.
"""

from __future__ import annotations

import gc
import time
from ctypes import byref

import numpy as np
import pytest

import pyctk
import pyctk.driver as cuda
from pyctk import tools
from pyctk._cuda import cudart as _cudart
from pyctk.compiler import SourceModule

pytestmark = pytest.mark.gpu

KERNELS = """
__global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void spin(long long nanoseconds) {  // keeps its stream busy
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < nanoseconds);
}
"""


@pytest.fixture(scope="module")
def kernels():
    return SourceModule(KERNELS, cache_dir=False)


def scale(kernels, x, a: float, n: int, stream=None) -> None:
    kernels.get_function("scale")(
        x, np.float32(a), np.int32(n), block=(256, 1, 1), grid=((n + 255) // 256, 1), stream=stream
    )


def attributes(address: int) -> _cudart.PointerAttributes:
    """What CUDA says of ``address`` (cudaPointerGetAttributes)."""
    found = _cudart.PointerAttributes()
    _cudart.call("cudaPointerGetAttributes", byref(found), address)
    return found


def registered(shape, dtype, order="C"):
    return cuda.register_host_memory(cuda.aligned_zeros(shape, dtype, order))


def pooled_zeros(shape, dtype, order="C"):
    """A pool's array, zeroed: a pool gives memory as it finds it (PyCUDA's does too), and the
    driver hands freed page-locked memory out again, unzeroed."""
    array = tools.PageLockedMemoryPool().allocate(shape, dtype, order)
    array.fill(0)
    return array


MAKERS = {
    "pagelocked": cuda.pagelocked_zeros,
    "pagelocked mapped": lambda *a, **k: cuda.pagelocked_zeros(*a, mem_flags=cuda.host_alloc_flags.DEVICEMAP, **k),
    "aligned": cuda.aligned_zeros,
    "registered": registered,
    "managed": cuda.managed_zeros,
    "pooled": lambda shape, dtype, order="C": pooled_zeros(shape, dtype, order),
}
BASES = {
    "pagelocked": cuda.PagelockedHostAllocation,
    "pagelocked mapped": cuda.PagelockedHostAllocation,
    "aligned": cuda.AlignedHostAllocation,
    "registered": cuda.RegisteredHostMemory,
    "managed": cuda.ManagedAllocation,
    "pooled": tools.PooledHostAllocation,
}
# cudaPointerGetAttributes' memory type for each (aligned memory is not CUDA's)
MEMORY_TYPES = {"aligned": _cudart.MEMORY_UNREGISTERED, "managed": _cudart.MEMORY_MANAGED}


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("kind", MAKERS)
def test_each_kind_round_trips_through_a_kernel(kernels, kind, order):
    a = MAKERS[kind]((30, 40), np.float32, order=order)
    assert type(a.base) is BASES[kind] and a.shape == (30, 40) and not a.any()
    assert a.flags.f_contiguous if order == "F" else a.flags.c_contiguous
    assert attributes(a.ctypes.data).type == MEMORY_TYPES.get(kind, _cudart.MEMORY_HOST)
    a[...] = np.arange(1200, dtype=np.float32).reshape(30, 40)
    device = cuda.mem_alloc(a.nbytes)
    cuda.memcpy_htod(device, a)
    scale(kernels, device, 3.0, a.size)
    b = MAKERS[kind]((30, 40), np.float32, order=order)
    cuda.memcpy_dtoh(b, device)
    np.testing.assert_array_equal(b, 3 * a)


@pytest.mark.parametrize(
    "make",
    [
        cuda.pagelocked_empty_like,
        cuda.aligned_empty_like,
        cuda.managed_empty_like,
        cuda.pagelocked_zeros_like,
        cuda.aligned_zeros_like,
        cuda.managed_zeros_like,
    ],
)
def test_like_copies_shape_dtype_and_order(make):
    template = np.asfortranarray(np.ones((5, 6), np.float64))
    a = make(template)
    assert (a.shape, a.dtype, a.flags.f_contiguous) == ((5, 6), np.float64, True)
    if "zeros" in make.__name__:
        assert not a.any()


def test_device_pointers_and_flags_are_the_drivers():
    flags = cuda.host_alloc_flags
    a = cuda.pagelocked_empty(1000, np.float32, mem_flags=flags.DEVICEMAP | flags.PORTABLE)
    assert a.base.get_device_pointer() == attributes(a.ctypes.data).device_pointer
    # the driver's own answer: DEVICEMAP always; PORTABLE not always (580 on an H200 leaves it out)
    assert a.base.get_flags() & flags.DEVICEMAP
    plain = cuda.pagelocked_empty(10, np.float32)
    assert not plain.base.get_flags() & flags.WRITECOMBINED
    r = cuda.register_host_memory(cuda.aligned_empty(4096, np.uint8), cuda.mem_host_register_flags.DEVICEMAP)
    assert r.base.get_device_pointer() == attributes(r.ctypes.data).device_pointer
    m = cuda.managed_empty(100, np.int32)
    assert m.base.get_device_pointer() == int(m.base) == m.ctypes.data
    a.base.free()
    with pytest.raises(cuda.LogicError):
        a.base.free()


@pytest.mark.parametrize("kind", ["pagelocked mapped", "registered mapped"])
def test_mapped_host_memory_written_by_a_kernel(kernels, kind):
    if kind == "registered mapped":
        a = cuda.register_host_memory(cuda.aligned_zeros(1000, np.float32), cuda.mem_host_register_flags.DEVICEMAP)
    else:
        a = MAKERS[kind](1000, np.float32)
    a[:] = np.arange(1000)
    scale(kernels, np.uintp(a.base.get_device_pointer()), 2.0, 1000)
    cuda.Context.synchronize()
    np.testing.assert_array_equal(a, 2 * np.arange(1000, dtype=np.float32))


def test_managed_arrays_are_kernel_arguments(kernels):
    # doc/driver.rst's example: managed_empty with mem_flags=GLOBAL, a kernel, the host reads.
    m = cuda.managed_empty(shape=1000, dtype=np.float32, mem_flags=cuda.mem_attach_flags.GLOBAL)
    m[:] = np.arange(1000)
    scale(kernels, m, 2.0, 1000)
    cuda.Context.synchronize()
    expected = 2 * np.arange(1000, dtype=np.float32)
    np.testing.assert_array_equal(m, expected)
    scale(kernels, m[500:], 10.0, 500)  # a view: its own first element
    cuda.Context.synchronize()
    expected[500:] *= 10
    np.testing.assert_array_equal(m, expected)
    prepared = kernels.get_function("scale").prepare("Pfi")
    prepared.prepared_call((4, 1), (256, 1, 1), m, 0.5, 1000)
    cuda.Context.synchronize()
    np.testing.assert_array_equal(m, expected / 2)
    with pytest.raises(TypeError, match="host memory"):  # ordinary arrays are not device memory
        scale(kernels, np.zeros(4, np.float32), 1.0, 4)


def test_managed_memory_attached_to_a_stream(kernels):
    stream = cuda.Stream()
    m = cuda.managed_zeros(4096, np.float32)
    m.base.attach(cuda.mem_attach_flags.SINGLE, stream)
    stream.synchronize()
    m[:] = 1.0
    scale(kernels, m, 5.0, m.size, stream=stream)
    stream.synchronize()
    assert (m == 5.0).all()
    m.base.attach(cuda.mem_attach_flags.GLOBAL)
    cuda.Context.synchronize()
    scale(kernels, m, 2.0, m.size)
    cuda.Context.synchronize()
    assert (m == 10.0).all()
    m.base.free()
    with pytest.raises(cuda.LogicError):
        m.base.attach(cuda.mem_attach_flags.GLOBAL)


def test_register_and_unregister():
    a = cuda.aligned_zeros(1 << 20, np.float64)
    r = cuda.register_host_memory(a)
    assert r.base.base is a and r.ctypes.data == a.ctypes.data
    assert attributes(a.ctypes.data).type == _cudart.MEMORY_HOST
    with pytest.raises(cuda.Error):  # the driver's answer: the pages are registered already
        cuda.register_host_memory(a)
    r.base.unregister()
    assert attributes(a.ctypes.data).type == _cudart.MEMORY_UNREGISTERED
    with pytest.raises(cuda.LogicError):
        r.base.unregister()
    r = cuda.register_host_memory(a)
    del r
    gc.collect()  # unregistered when garbage
    assert attributes(a.ctypes.data).type == _cudart.MEMORY_UNREGISTERED


def test_copies_with_page_locked_memory_on_a_busy_stream_return_at_once(kernels):
    stream = cuda.Stream()
    a = cuda.pagelocked_empty(1 << 22, np.float32)
    a[:] = np.arange(a.size)
    b = cuda.pagelocked_zeros_like(a)
    device = cuda.mem_alloc(a.nbytes)
    kernels.get_function("spin")(np.int64(500_000_000), block=(1, 1, 1), stream=stream)
    start = time.perf_counter()
    cuda.memcpy_htod_async(device, a, stream)
    cuda.memcpy_dtoh_async(b, device, stream)
    returned = time.perf_counter() - start
    assert not stream.is_done() and returned < 0.25, returned
    stream.synchronize()
    np.testing.assert_array_equal(b, a)


def test_device_pool_reuses_blocks_and_its_allocations_are_kernel_arguments(kernels):
    pool = tools.DeviceMemoryPool()
    a = pool.allocate(1000)
    address = int(a)
    assert isinstance(a, cuda.DeviceAllocation) and len(a) == 1000
    assert (pool.held_blocks, pool.active_blocks) == (0, 1)
    a.free()
    assert (pool.held_blocks, pool.active_blocks) == (1, 0)
    with pytest.raises(cuda.LogicError):
        a.free()
    b = pool.allocate(1020)  # the same bin (blocks of 1023 bytes): the same memory
    assert int(b) == address and (pool.held_blocks, pool.active_blocks) == (0, 1)
    c = pool.allocate(4 * 5000)
    assert pool.managed_bytes == 1023 + pool.alloc_size(pool.bin_number(20000))
    assert pool.active_bytes == 1020 + 20000
    host = np.arange(5000, dtype=np.float32)
    cuda.memcpy_htod(c, host)
    scale(kernels, c, 2.0, 5000)
    out = np.empty_like(host)
    cuda.memcpy_dtoh(out, c)
    np.testing.assert_array_equal(out, 2 * host)
    del c
    gc.collect()
    assert (pool.held_blocks, pool.active_blocks) == (1, 1)
    pool.free_held()
    assert pool.held_blocks == 0
    pool.stop_holding()
    b.free()
    assert (pool.held_blocks, pool.active_blocks, pool.managed_bytes) == (0, 0, 0)


def test_page_locked_pool(kernels):
    pool = tools.PageLockedMemoryPool(tools.PageLockedAllocator(cuda.host_alloc_flags.DEVICEMAP))
    a = pool.allocate((256,), np.float32)
    assert type(a.base) is tools.PooledHostAllocation and len(a.base) == 1024
    assert attributes(a.ctypes.data).type == _cudart.MEMORY_HOST
    a[:] = 1.0
    scale(kernels, np.uintp(attributes(a.ctypes.data).device_pointer), 4.0, 256)  # mapped
    cuda.Context.synchronize()
    assert (a == 4.0).all()
    address = a.ctypes.data
    a.base.free()
    b = pool.allocate((16, 16), np.float32, order="F")
    assert b.ctypes.data == address and b.flags.f_contiguous
    assert (pool.held_blocks, pool.active_blocks) == (0, 1)
    device = cuda.mem_alloc(b.nbytes)
    stream = cuda.Stream()
    b[...] = 7.0
    cuda.memcpy_htod_async(device, b, stream)
    c = pool.allocate((256,), np.float32)
    cuda.memcpy_dtoh_async(c, device, stream)
    stream.synchronize()
    assert (c == 7.0).all()
    del b, c
    gc.collect()
    pool.stop_holding()
    assert (pool.held_blocks, pool.active_blocks, pool.managed_bytes) == (0, 0, 0)


@pytest.mark.parametrize("kind", ["pagelocked", "managed", "registered", "pooled"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_matmul_of_host_memory_matches_numpy(kind, order):
    rng = np.random.default_rng(24)
    a = MAKERS[kind]((300, 200), np.float32, order=order)
    b = MAKERS[kind]((200, 100), np.float32, order=order)
    a[...] = rng.standard_normal(a.shape)
    b[...] = rng.standard_normal(b.shape)
    out = MAKERS[kind]((300, 100), np.float32)
    for c in (pyctk.matmul(a, b), pyctk.matmul(a, b, out=out)):
        expected = a.astype(np.float64) @ b.astype(np.float64)
        assert np.linalg.norm(c - expected) / np.linalg.norm(expected) < 1e-4
    assert np.shares_memory(pyctk.matmul(a, b, out=out), out)
