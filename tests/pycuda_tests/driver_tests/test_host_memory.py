"""PyCUDA's host memory and memory pools in pyctk.driver / pyctk.tools, on the CPU.

Covered: the flags' values against cuda.h; argument errors raised before any driver call;
aligned arrays (ordinary memory) of every shape, order and dtype; page-locked, registered
and managed memory through a fake driver on host memory (freed once, in its own context,
on free() or when garbage; not in a forked child, once the driver is gone, nor once the
context make_context made it in is destroyed; a second free() is a LogicError); a managed
array as a kernel argument; the pools' size classes (PyCUDA's bins) and their bookkeeping,
reuse and out-of-memory steps with fake allocators.
"""

from __future__ import annotations

import ctypes
import gc
import os
import random
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import pyctk
import pyctk.driver as cuda
from pyctk import tools
from pyctk._cuda import driver_api as _driver_api
from pyctk._pycuda.compiling import headers as _cuda_headers
from pyctk._pycuda.contexts import made_contexts as _made_contexts
from pyctk._pycuda.kernels.kernel_args import Param
from pyctk._pycuda.kernels.modules import Function
from pyctk._pycuda.memory import device as _memory
from pyctk._pycuda.memory import host as _host_memory
from pyctk._pycuda.memory import pools as _pools
from support.garbage import collect

CONTEXT = 0xC0FFEE  # the fake driver's one context
DEVICE_OFFSET = 1 << 40  # its mapped memory's device addresses: host address + this
OK, INVALID_VALUE, INVALID_CONTEXT, ALREADY_REGISTERED, NOT_REGISTERED = 0, 1, 201, 712, 713


class FakeDriver:
    """The driver calls of host memory, on host memory. Each call's name is recorded; memory
    is freed (or unregistered) only in the context it was made in, pushed, and only once."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.blocks: dict[int, tuple[ctypes.Array, str, int]] = {}  # address -> (memory, kind, flags)
        self.registered: dict[int, tuple[int, int]] = {}  # address -> (bytes, flags)
        self.pushed: list[int] = []
        self.attached: list[tuple[int, int, int, int]] = []
        self.launched: list[list[bytes]] = []  # each launch's parameters, param_sizes bytes each
        self.param_sizes: list[int] = []

    def functions(self) -> SimpleNamespace:
        def recorded(name):
            def call(*args):
                self.calls.append(name)
                return getattr(self, name)(*args)

            return call

        return SimpleNamespace(**{name: recorded(name) for name in dir(self) if name.startswith("cu")})

    def _in_context(self) -> bool:
        return bool(self.pushed) and self.pushed[-1] == CONTEXT

    def cuCtxGetCurrent(self, out):
        out._obj.value = CONTEXT
        return OK

    def cuCtxGetDevice(self, out):
        out._obj.value = 0
        return OK

    def cuCtxPushCurrent(self, context):
        self.pushed.append(context)
        return OK

    def cuCtxPopCurrent(self, out):
        self.pushed.pop()
        return OK

    def cuGetErrorName(self, code, out):
        out._obj.value = f"CUDA_ERROR_{code}".encode()
        return OK

    def cuGetErrorString(self, code, out):
        out._obj.value = b"fake driver error"
        return OK

    def _allocate(self, out, nbytes, kind, flags):
        memory = (ctypes.c_char * nbytes)()
        out._obj.value = ctypes.addressof(memory)
        self.blocks[ctypes.addressof(memory)] = (memory, kind, flags)
        return OK

    def _free(self, address, kind):
        if not self._in_context():
            return INVALID_CONTEXT
        if self.blocks.get(address, (None, None))[1] != kind:
            return INVALID_VALUE
        del self.blocks[address]
        return OK

    def cuMemHostAlloc(self, out, nbytes, flags):
        return self._allocate(out, nbytes, "host", flags)

    def cuMemAllocManaged(self, out, nbytes, flags):
        return self._allocate(out, nbytes, "managed", flags)

    def cuMemFreeHost(self, address):
        return self._free(address, "host")

    def cuMemFree(self, address):
        return self._free(address, "managed")

    def cuMemHostGetFlags(self, out, address):
        out._obj.value = self.blocks[address][2]
        return OK

    def cuMemHostGetDevicePointer(self, out, address, flags):
        out._obj.value = address + DEVICE_OFFSET
        return OK

    def cuMemHostRegister(self, address, nbytes, flags):
        if address in self.registered:
            return ALREADY_REGISTERED
        self.registered[address] = (nbytes, flags)
        return OK

    def cuMemHostUnregister(self, address):
        if not self._in_context():
            return INVALID_CONTEXT
        return OK if self.registered.pop(address, None) else NOT_REGISTERED

    def cuStreamAttachMemAsync(self, stream, address, length, flags):
        self.attached.append((stream, address, length, flags))
        return OK

    def cuLaunchKernel(self, kernel, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.launched.append([ctypes.string_at(params[i], size) for i, size in enumerate(self.param_sizes)])
        return OK


@pytest.fixture
def driver(monkeypatch):
    """The fake driver in place of the real one for the test; everything it allocated must be
    freed by the end."""
    collect()  # the real driver's garbage goes to the real driver
    fake = FakeDriver()
    monkeypatch.setattr(_driver_api, "_driver", fake.functions())
    yield fake
    collect()
    if fake.blocks or fake.registered:  # a failed test's memory: never to be freed by a real driver
        for leftover in gc.get_objects():
            if isinstance(leftover, (_host_memory.HostPointer, _host_memory.ManagedAllocation)):
                leftover._pid = None
    assert not fake.blocks and not fake.registered, "memory left that free() or garbage should free"


def frees(fake: FakeDriver) -> list[str]:
    return [name for name in fake.calls if name in ("cuMemFreeHost", "cuMemFree", "cuMemHostUnregister")]


# ---------------------------------------------------------------------------
# Names and values.


def _cuda_h() -> str:
    return Path(_cuda_headers.header_folders()[0].path, "cuda.h").read_text()


@pytest.mark.parametrize(
    "flags, pattern",
    [
        (cuda.host_alloc_flags, r"#define CU_MEMHOSTALLOC_(\w+)\s+(0x[0-9a-fA-F]+)"),
        (cuda.mem_host_register_flags, r"#define CU_MEMHOSTREGISTER_(\w+)\s+(0x[0-9a-fA-F]+)"),
        (cuda.mem_attach_flags, r"\bCU_MEM_ATTACH_(\w+)\s*=\s*(0x[0-9a-fA-F]+)"),
    ],
)
def test_flags_are_cuda_hs(flags, pattern):
    declared = {name: int(value, 16) for name, value in re.findall(pattern, _cuda_h())}
    assert {member.name: int(member) for member in flags} == declared


def test_pycudas_names():
    assert cuda.HostAllocation is cuda.PagelockedHostAllocation
    assert issubclass(cuda.PagelockedHostAllocation, cuda.HostPointer)
    assert issubclass(cuda.RegisteredHostMemory, cuda.HostPointer)
    assert issubclass(cuda.ManagedAllocation, cuda.DeviceAllocation)
    assert issubclass(cuda.PooledDeviceAllocation, cuda.DeviceAllocation)
    for name in (
        "DeviceMemoryPool",
        "PageLockedMemoryPool",
        "PageLockedAllocator",
        "PooledDeviceAllocation",
        "PooledHostAllocation",
    ):
        assert getattr(cuda, name) is getattr(tools, name), name
        assert name in cuda.__all__ and name in tools.__all__
    for name in cuda.__all__:
        assert hasattr(cuda, name), name


# ---------------------------------------------------------------------------
# Arguments: refused before any driver call.

NOT_CONTIGUOUS = np.zeros((4, 4), np.float32)[::2, ::2]


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: cuda.pagelocked_empty(4, np.float32, order="K"), cuda.LogicError, "'C'.*'F'"),
        (lambda: cuda.managed_zeros(4, np.float32, order="A"), cuda.LogicError, "'C'.*'F'"),
        (lambda: cuda.aligned_empty(4, np.float32, "X"), cuda.LogicError, "'C'.*'F'"),
        (lambda: cuda.pagelocked_empty((2, -1), np.float32), ValueError, "negative"),
        (lambda: cuda.pagelocked_zeros(2.5, np.float32), TypeError, "int or a sequence of ints"),
        (lambda: cuda.managed_empty((2, "3"), np.float32), TypeError, "int or a sequence of ints"),
        (lambda: cuda.pagelocked_empty(3, object), TypeError, "Python objects"),
        (lambda: cuda.pagelocked_empty(3, "no such dtype"), TypeError, "not understood"),
        (lambda: cuda.pagelocked_empty_like(NOT_CONTIGUOUS), ValueError, "neither C- nor Fortran"),
        (lambda: cuda.aligned_zeros_like(NOT_CONTIGUOUS), ValueError, "neither C- nor Fortran"),
        (lambda: cuda.managed_empty_like(NOT_CONTIGUOUS), ValueError, "neither C- nor Fortran"),
        (lambda: cuda.managed_empty(4, np.float32, mem_flags=0), ValueError, "GLOBAL or mem_attach_flags.HOST"),
        (
            lambda: cuda.managed_zeros(4, np.float32, mem_flags=cuda.mem_attach_flags.SINGLE),
            ValueError,
            "GLOBAL or mem_attach_flags.HOST",
        ),
        (lambda: cuda.aligned_empty(4, np.float32, alignment=3), cuda.LogicError, "power of two"),
        (lambda: cuda.aligned_empty(4, np.float32, alignment=0), cuda.LogicError, "power of two"),
        (lambda: cuda.aligned_empty(4, np.float32, alignment=-4), cuda.LogicError, "power of two"),
        (lambda: cuda.register_host_memory([1.0, 2.0]), TypeError, "NumPy array"),
        (
            lambda: cuda.register_host_memory(cuda.aligned_zeros((8, 1024), np.float32)[:, ::2]),
            ValueError,
            "neither C- nor Fortran",
        ),
        (lambda: cuda.register_host_memory(cuda.aligned_zeros(4096, np.uint8)[1:]), ValueError, "starts on a page"),
        (lambda: cuda.register_host_memory(cuda.aligned_empty(0, np.float32)), ValueError, "not empty"),
        (lambda: tools.PageLockedMemoryPool().allocate((4,), np.float32, order="K"), cuda.LogicError, "'C'.*'F'"),
    ],
)
def test_argument_errors_come_before_the_driver(driver, call, error, match):
    with pytest.raises(error, match=match):
        call()
    assert driver.calls == []


# ---------------------------------------------------------------------------
# Aligned memory: ordinary host memory, no GPU.

DTYPES = [
    np.float32,
    np.complex128,
    np.bool_,
    "S5",
    "M8[s]",
    ("<f4", 3),
    np.dtype({"names": ["a", "b"], "formats": ["u1", "f8"]}, align=True),
]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), 7, (0, 5), (3, 4), [2, np.int64(3), 4]], ids=str)
def test_aligned_arrays_are_numpys_arrays_at_the_alignment(shape, dtype, order):
    expected = np.zeros(shape, dtype, order=order)
    for alignment in (1, 64, 4096, 1 << 16):
        a = cuda.aligned_zeros(shape, dtype, order, alignment)
        assert (a.shape, a.dtype) == (expected.shape, expected.dtype)
        assert a.strides == expected.strides or not a.size  # (NumPy's empty arrays: any strides)
        assert a.ctypes.data % alignment == 0
        assert type(a.base) is cuda.AlignedHostAllocation and a.flags.writeable
        assert ctypes.string_at(a.ctypes.data, a.nbytes) == bytes(a.nbytes)


def test_aligned_like_keeps_order_and_free_twice_is_a_logic_error():
    template = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    a = cuda.aligned_empty_like(template, alignment=256)
    assert a.flags.f_contiguous and a.shape == (3, 4) and a.ctypes.data % 256 == 0
    a[...] = template
    assert np.array_equal(cuda.aligned_zeros_like(template), np.zeros((3, 4)))
    assert np.asarray(a.base).dtype == object  # the allocation itself is no view of the memory
    a.base.free()
    with pytest.raises(cuda.LogicError, match="freed"):
        a.base.free()


# ---------------------------------------------------------------------------
# Page-locked, registered and managed memory, through the fake driver.


def test_pagelocked_memory_is_freed_once_in_its_context(driver):
    a = cuda.pagelocked_zeros(
        (3, 4), np.float32, order="F", mem_flags=cuda.host_alloc_flags.DEVICEMAP | cuda.host_alloc_flags.PORTABLE
    )
    assert type(a.base) is cuda.PagelockedHostAllocation and a.flags.f_contiguous and not a.any()
    assert driver.blocks[a.ctypes.data][1:] == ("host", 3)
    assert a.base.get_flags() == 3
    assert a.base.get_device_pointer() == a.ctypes.data + DEVICE_OFFSET
    b = cuda.pagelocked_empty_like(a)
    assert b.flags.f_contiguous and type(b.base) is cuda.HostAllocation
    driver.calls.clear()
    a.base.free()
    assert driver.calls == ["cuCtxPushCurrent", "cuMemFreeHost", "cuCtxPopCurrent"]
    with pytest.raises(cuda.LogicError, match="freed"):
        a.base.free()
    with pytest.raises(cuda.LogicError, match="freed"):
        a.base.get_flags()
    del a, b
    collect()
    assert frees(driver) == ["cuMemFreeHost", "cuMemFreeHost"]  # b's, when garbage


def test_empty_arrays_get_a_byte(driver):
    a = cuda.pagelocked_empty((0, 3), np.float64)
    assert a.shape == (0, 3) and len(driver.blocks[a.ctypes.data][0]) == 1


def test_garbage_is_not_freed_in_a_forked_child_nor_once_the_driver_is_gone(driver, monkeypatch):
    a = cuda.pagelocked_empty(4, np.float32)
    a.base._pid = os.getpid() + 1  # as if this process were a child forked after the allocation
    del a
    collect()
    m = cuda.managed_empty(4, np.float32)
    monkeypatch.setattr(_driver_api, "_driver", None)
    del m
    collect()
    assert frees(driver) == []
    driver.blocks.clear()


def test_memory_of_a_destroyed_made_context_went_with_it(driver, monkeypatch):
    made = SimpleNamespace(alive=True)  # Device.make_context's record of the context
    monkeypatch.setattr(_made_contexts, "_records", {CONTEXT: made})
    a, m = cuda.pagelocked_empty(4, np.float32), cuda.managed_empty(4, np.float32)
    made.alive = False  # destroyed, and its memory with it
    driver.blocks.clear()
    a.base.free()
    del m
    collect()
    assert frees(driver) == []
    with pytest.raises(cuda.LogicError, match="freed"):
        a.base.free()


def test_register_host_memory(driver):
    a = cuda.aligned_zeros(1024, np.float32)
    r = cuda.register_host_memory(a, cuda.mem_host_register_flags.DEVICEMAP)
    assert type(r.base) is cuda.RegisteredHostMemory and r.base.base is a
    assert r.ctypes.data == a.ctypes.data and r.shape == a.shape and r.dtype == a.dtype
    assert driver.registered == {a.ctypes.data: (4096, 2)}
    r[3] = 7.0
    assert a[3] == 7.0
    assert r.base.get_device_pointer() == a.ctypes.data + DEVICE_OFFSET
    with pytest.raises(cuda.Error, match="CUDA_ERROR_712"):  # the driver's answer for a second lock
        cuda.register_host_memory(a)
    r.base.unregister()
    assert driver.registered == {}
    with pytest.raises(cuda.LogicError, match="freed"):
        r.base.unregister()
    readonly = cuda.aligned_zeros((4, 1024), np.float32, order="F")
    readonly.flags.writeable = False
    r = cuda.register_host_memory(readonly)
    assert not r.flags.writeable and r.flags.f_contiguous and r.base.base is readonly
    del r
    collect()
    assert driver.registered == {}


def test_managed_memory(driver):
    m = cuda.managed_zeros((4, 5), np.int32)
    allocation = m.base
    assert type(allocation) is cuda.ManagedAllocation and isinstance(allocation, cuda.DeviceAllocation)
    assert driver.blocks[m.ctypes.data][1:] == ("managed", int(cuda.mem_attach_flags.GLOBAL))
    assert int(allocation) == allocation.get_device_pointer() == m.ctypes.data
    assert _memory.device_pointer(allocation).address == m.ctypes.data  # device memory everywhere
    host = cuda.managed_empty(3, np.float32, mem_flags=cuda.mem_attach_flags.HOST)
    assert driver.blocks[host.ctypes.data][2] == cuda.mem_attach_flags.HOST
    allocation.attach(cuda.mem_attach_flags.SINGLE, stream=7)
    assert driver.attached == [(7, m.ctypes.data, 0, 4)]
    assert _host_memory.is_managed(m) and _host_memory.is_managed(m[1:, ::2].T)
    assert _host_memory.is_managed(host) and not _host_memory.is_managed(np.zeros(3))
    allocation.free()
    with pytest.raises(ValueError, match="freed"):
        int(allocation)
    with pytest.raises(cuda.LogicError, match="freed"):
        allocation.free()
    del host
    collect()
    assert frees(driver) == ["cuMemFree", "cuMemFree"]


def test_a_managed_array_is_a_kernel_argument_as_it_is(driver):
    m = cuda.managed_zeros(16, np.float32)
    kernel = Function(None, 0x1234, "k", [Param("int", 8), Param("int", 4)])
    driver.param_sizes = [8, 4]
    kernel(m[4:], np.int32(12), block=(16, 1, 1))
    assert driver.launched == [[np.uint64(m.ctypes.data + 16).tobytes(), np.int32(12).tobytes()]]
    with pytest.raises(TypeError, match="NumPy array in host memory"):
        kernel(np.zeros(16, np.float32), np.int32(16), block=(16, 1, 1))
    m.base.free()  # (PyPy keeps this frame, and m, alive past the fixture's collections)


# ---------------------------------------------------------------------------
# Pools: PyCUDA's size classes.


@pytest.mark.parametrize(
    "size, number, nbytes",
    [
        (0, 0, 1),
        (1, 0, 1),
        (5, 36, 5),
        (17, 65, 17),
        (33, 80, 33),
        (34, 81, 35),
        (1000, 159, 1023),
        (1500, 167, 1535),
        (1 << 20, 320, (1 << 20) + (1 << 16) - 1),
    ],
)
def test_bins(size, number, nbytes):
    assert cuda.DeviceMemoryPool.bin_number(size) == number
    assert tools.PageLockedMemoryPool.alloc_size(number) == nbytes


def test_each_size_fits_its_bins_blocks_within_a_sixteenth():
    rng = random.Random(24)
    sizes = [*range(70), *(rng.randrange(1 << 40) >> rng.randrange(40) for _ in range(3000))]
    for size in sizes:
        number = _pools.bin_number(size)
        nbytes = _pools.alloc_size(number)
        assert size <= nbytes and _pools.bin_number(nbytes) == number, size
        assert _pools.bin_number(nbytes + 1) != number, size  # a bin's block is its largest size
        assert nbytes - max(size, 1) <= size // 16, size
        assert nbytes == max(size, 1) or size >= 32, size  # below 32 bytes, each size is a bin
    bins = [_pools.bin_number(size) for size in sorted(sizes)]
    assert bins == sorted(bins)  # bins in the order of sizes
    with pytest.raises(ValueError, match="negative"):
        _pools.bin_number(-1)


# ---------------------------------------------------------------------------
# Pools: bookkeeping, with fake allocators.


class Allocator:
    """Host blocks from NumPy (AlignedHostAllocation), with room for ``capacity`` bytes; what
    it allocated and freed is kept."""

    def __init__(self, capacity: int = 1 << 30) -> None:
        self.capacity, self.allocated, self.freed = capacity, [], []

    def __call__(self, nbytes: int):
        if sum(len(block) for block in self.allocated) - sum(self.freed) + nbytes > self.capacity:
            raise pyctk.OutOfMemoryError(f"fake: no room for {nbytes} bytes")
        block = Block(self, nbytes)
        self.allocated.append(block)
        return block


class Block(cuda.AlignedHostAllocation):
    def __init__(self, allocator: Allocator, nbytes: int) -> None:
        super().__init__(nbytes, 64)
        self.allocator = allocator

    def __len__(self) -> int:
        return self.nbytes

    def free(self) -> None:
        super().free()
        self.allocator.freed.append(self.nbytes)


def counts(pool) -> tuple[int, int, int, int]:
    return pool.held_blocks, pool.active_blocks, pool.managed_bytes, pool.active_bytes


def test_a_pool_keeps_freed_blocks_for_their_bin():
    allocator = Allocator()
    pool = tools.PageLockedMemoryPool(allocator)
    a = pool.allocate((250,), np.float32)  # 1000 bytes: bin 159, blocks of 1023
    assert type(a.base) is tools.PooledHostAllocation and len(a.base) == 1000 and a.shape == (250,)
    assert counts(pool) == (0, 1, 1023, 1000)
    address = a.ctypes.data
    a.base.free()
    assert counts(pool) == (1, 0, 1023, 0)
    with pytest.raises(cuda.LogicError, match="freed"):
        a.base.free()
    b = pool.allocate((4, 5, 50), np.uint8, order="F")  # 1000 bytes again: the same block
    assert b.ctypes.data == address and b.flags.f_contiguous and len(allocator.allocated) == 1
    c = pool.allocate(5000, np.uint8)
    assert counts(pool) == (0, 2, 1023 + pool.alloc_size(pool.bin_number(5000)), 6000)
    del b
    collect()  # garbage gives its block back
    assert counts(pool)[:2] == (1, 1)
    pool.free_held()
    assert counts(pool) == (0, 1, pool.alloc_size(pool.bin_number(5000)), 5000) and allocator.freed == [1023]
    pool.stop_holding()
    c.base.free()
    assert counts(pool) == (0, 0, 0, 0) and len(allocator.freed) == 2


def test_freeing_held_blocks_takes_back_a_block_given_back_meanwhile():
    # Freeing a block may run a collection (a driver call, any allocation) in which a garbage
    # pooled allocation gives its block back, into a bin that held nothing before.
    allocator = Allocator()
    pool = tools.PageLockedMemoryPool(allocator)
    later = [pool.allocate((5000,), np.uint8)]
    held = pool.allocate((1000,), np.uint8)
    block = held.base._block
    del held
    collect()
    free = block.free

    def free_while_garbage_gives_back():
        later.clear()
        collect()
        free()

    block.free = free_while_garbage_gives_back
    pool.free_held()
    assert allocator.freed == [1023]
    assert counts(pool) == (1, 0, pool.alloc_size(pool.bin_number(5000)), 0)  # held, not lost


def test_out_of_memory_collects_garbage_then_frees_held_blocks_largest_first():
    allocator = Allocator(capacity=3000)
    pool = _pools.MemoryPool(allocator)
    small, large = pool.take(100), pool.take(1500)  # 103 and 1535 bytes
    pool.give_back(small, 100)
    pool.give_back(large, 1500)
    block = pool.take(2000)  # 2047 bytes: room only once the largest held block is freed
    assert allocator.freed == [1535] and counts(pool) == (1, 1, 103 + 2047, 2000)
    with pytest.raises(cuda.MemoryError, match="memory_pool::allocate failed: out of memory"):
        pool.take(3000)
    assert allocator.freed == [1535, 103] and counts(pool) == (0, 1, 2047, 2000)
    pool.give_back(block, 2000)

    hosts = tools.PageLockedMemoryPool(Allocator(capacity=1100))
    cycle = [hosts.allocate((1000,), np.uint8)]
    cycle.append(cycle)  # garbage only a collection finds
    address = cycle[0].ctypes.data
    gc.disable()
    try:
        del cycle
        again = hosts.allocate((1000,), np.uint8)  # no room: the collection gives the block back
    finally:
        gc.enable()
    assert again.ctypes.data == address


def test_pooled_device_allocations_are_device_allocations():
    addresses = iter(range(0x10000, 1 << 30, 0x10000))
    freed = []

    class DeviceBlock(cuda.DeviceAllocation):
        def free(self):
            freed.append(int(self))

    pool = _pools.MemoryPool(
        lambda nbytes: DeviceBlock(next(addresses), context=None, device=0, stream=0, nbytes=nbytes)
    )
    a = cuda.PooledDeviceAllocation(pool, 100)
    assert int(a) == 0x10000 and np.uintp(a) == 0x10000 and len(a) == 100 and a.device == 0
    assert _memory.device_pointer(a).address == 0x10000
    a.free()
    with pytest.raises(ValueError, match="freed"):
        int(a)
    with pytest.raises(cuda.LogicError, match="freed"):
        a.free()
    b = cuda.PooledDeviceAllocation(pool, 101)  # the same bin
    c = cuda.PooledDeviceAllocation(pool, 90)  # another
    assert (int(b), int(c)) == (0x10000, 0x20000)
    del b, c
    collect()
    assert pool.held_blocks == 2 and freed == []
    pool.stop_holding()
    assert sorted(freed) == [0x10000, 0x20000]
