"""PyCUDA's contexts, DeviceData and OccupancyRecord on the CPU (the GPU's own answers are in
tests/pycuda_tests/driver_tests/test_contexts_on_gpu.py).

Covered: the enums' names (PyCUDA's) and values (cuda.h's, of the runtime wheel); cuCtxCreate
asked of the driver at the ABI whose signature pyctk calls; the per-thread context stack
(make_context, push, pop, detach, attach, get_current), memory in a made context, and
libgpumatmul's context of its own there, against a fake driver that keeps a driver's context
stack and a fake library that records its contexts;
lowercase Device and Function attributes; autoinit/autoprimaryctx's start and exit; the
errors raised before any GPU work; OccupancyRecord's arithmetic against values worked out by
hand, and DeviceData's alignment helpers.
"""

from __future__ import annotations

import gc
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import pyctk.driver as cuda
from pyctk import tools
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import driver_api as _driver_api
from pyctk._pycuda.compiling import headers as _cuda_headers
from pyctk._pycuda.contexts import default_context as _default_context
from pyctk._pycuda.contexts import devices as _devices
from pyctk._pycuda.contexts import made_contexts as _made_contexts
from pyctk._pycuda.memory import device as _memory


def _header(name: str) -> str:
    return Path(_cuda_headers.header_folders()[0].path, name).read_text()


# enum -> the prefix of its values' names in cuda.h
ENUMS = [
    (cuda.ctx_flags, "CU_CTX_"),
    (cuda.limit, "CU_LIMIT_"),
    (cuda.func_cache, "CU_FUNC_CACHE_"),
    (cuda.shared_config, "CU_SHARED_MEM_CONFIG_"),
    (cuda.compute_mode, "CU_COMPUTEMODE_"),
    (cuda.device_attribute, "CU_DEVICE_ATTRIBUTE_"),
    (cuda.function_attribute, "CU_FUNC_ATTRIBUTE_"),
]


@pytest.mark.parametrize("table, prefix", ENUMS, ids=lambda x: getattr(x, "__name__", x))
def test_enum_values_are_cuda_hs(table, prefix):
    header = _header("cuda.h")
    declared = {name: int(value, 0) for name, value in re.findall(r"\b(CU_\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)", header)}
    for name, member in table.__members__.items():  # aliases too
        if name == "MAX":  # the end of the enumeration, which cuda.h writes without a value
            assert re.search(rf"\b{prefix}MAX\b", header)  # (newer headers add members PyCUDA lacks)
            assert member == 1 + max(value for n, value in declared.items() if n.startswith(prefix))
            continue
        assert declared[prefix + name] == member, name


def test_enum_names_are_pycudas():
    assert list(cuda.ctx_flags.__members__) == [
        "SCHED_AUTO",
        "SCHED_SPIN",
        "SCHED_YIELD",
        "SCHED_BLOCKING_SYNC",
        "BLOCKING_SYNC",
        "SCHED_MASK",
        "MAP_HOST",
        "LMEM_RESIZE_TO_MAX",
        "FLAGS_MASK",
    ]
    assert cuda.ctx_flags.BLOCKING_SYNC is cuda.ctx_flags.SCHED_BLOCKING_SYNC
    assert [m.name for m in cuda.limit][:5] == [
        "STACK_SIZE",
        "PRINTF_FIFO_SIZE",
        "MALLOC_HEAP_SIZE",
        "DEV_RUNTIME_SYNC_DEPTH",
        "DEV_RUNTIME_PENDING_LAUNCH_COUNT",
    ]
    assert [m.name for m in cuda.func_cache] == ["PREFER_NONE", "PREFER_SHARED", "PREFER_L1", "PREFER_EQUAL"]
    assert [m.name for m in cuda.shared_config] == ["DEFAULT_BANK_SIZE", "FOUR_BYTE_BANK_SIZE", "EIGHT_BYTE_BANK_SIZE"]
    assert cuda.device_attribute.SHARED_MEMORY_PER_BLOCK is cuda.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK
    assert cuda.device_attribute.MAXIMUM_TEXTURE2D_LAYERED_LAYERS == 29


def test_cuda_h_has_ctx_create_at_the_abi_devices_asks_for():
    """The base name's form at ABI 12000 (and a CUDA 12.5+ runtime's own) takes other arguments
    than (CUcontext *, unsigned int, CUdevice), so devices.py asks for CUDA 3.2's form."""
    forms = {
        int(v): a.count(",") + 1
        for v, a in re.findall(
            r"typedef CUresult \(CUDAAPI \*PFN_cuCtxCreate_v(\d+)\)\(([^;]*?)\);", _header("cudaTypedefs.h")
        )
    }
    assert forms[_made_contexts._CTX_CREATE_ABI] == len(_made_contexts._ContextCreate._argtypes_) == 3
    assert forms[max(v for v in forms if v <= _driver_api.ABI_VERSION)] != 3


# ---------------------------------------------------------------------------
# The context stack, against a fake driver.

PRIMARY = {0: 0x100, 1: 0x200}


class FakeDriver:
    """The driver's side of contexts: one thread's stack of current contexts, the primary
    contexts' retain counts, contexts made and destroyed, and memory by context."""

    def __init__(self) -> None:
        self.stack: list[int] = []
        self.devices = {handle: device for device, handle in PRIMARY.items()}
        self.retained = {device: 0 for device in PRIMARY}
        self.destroyed: list[int] = []
        self.memory: dict[int, int] = {}  # pointer -> context
        self.freed: list[tuple[int, int]] = []  # (pointer, the current context at the free)
        self.next = 0x1000

    def call(self, name: str, *args):
        result = getattr(self, name)(*args)
        assert not result, (name, result)

    def current_context(self) -> int:
        if not self.stack:  # as cudaSetDevice does
            self.stack.append(PRIMARY[0])
        return self.stack[-1]

    def current_device(self) -> int:
        return self.devices[self.current_context()]

    def create(self, flags: int, device: int) -> int:
        self.next += 0x100
        self.devices[self.next] = device
        self.stack.append(self.next)
        return self.next

    def cuDeviceGet(self, device, number):
        device._obj.value = number

    def cuDeviceGetCount(self, count):
        count._obj.value = len(PRIMARY)

    def cuCtxGetCurrent(self, context):
        context._obj.value = self.stack[-1] if self.stack else None

    def cuCtxGetDevice(self, device):
        device._obj.value = self.devices[self.stack[-1]]

    def cuCtxPushCurrent(self, handle):
        self.stack.append(handle)

    def cuCtxPopCurrent(self, context):
        context._obj.value = self.stack.pop()

    def cuCtxSetCurrent(self, handle):
        if self.stack:
            self.stack[-1] = handle.value
        else:
            self.stack.append(handle.value)

    def cuCtxDestroy(self, handle):
        assert handle not in self.destroyed
        self.destroyed.append(handle)
        if self.stack and self.stack[-1] == handle:
            self.stack.pop()
        return 0

    def cuDevicePrimaryCtxRetain(self, context, device):
        self.retained[device] += 1
        context._obj.value = PRIMARY[device]

    def cuDevicePrimaryCtxRelease(self, device):
        self.retained[device] -= 1
        return 0

    def cuMemAlloc(self, pointer, nbytes):
        self.next += 0x100
        self.memory[self.next] = self.stack[-1]
        pointer._obj.value = self.next

    def cuMemFree(self, pointer):
        self.freed.append((pointer, self.stack[-1]))


@pytest.fixture
def driver(monkeypatch):
    fake = FakeDriver()
    monkeypatch.setattr(_driver_api, "call", fake.call)
    monkeypatch.setattr(_driver_api, "current_context", fake.current_context)
    monkeypatch.setattr(_driver_api, "current_device", fake.current_device)
    monkeypatch.setattr(
        _driver_api,
        "_driver",
        SimpleNamespace(cuCtxDestroy=fake.cuCtxDestroy, cuDevicePrimaryCtxRelease=fake.cuDevicePrimaryCtxRelease),
    )
    monkeypatch.setattr(_made_contexts, "create_context", fake.create)
    monkeypatch.setattr(_devices._thread_stack, "contexts", [])
    monkeypatch.setattr(_contexts, "_made", {})
    monkeypatch.setattr(_made_contexts, "_records", {})
    yield fake
    _devices._thread_stack.contexts.clear()
    gc.collect()  # the test's contexts go while the fake driver is still in place


def test_make_context_pushes_a_new_context_and_pop_returns_to_the_one_below(driver):
    a = cuda.Device(0).make_context()
    assert driver.stack == [a.handle] and a.handle not in PRIMARY.values()
    assert cuda.Context.get_current() is a and cuda.Context.get_device() == cuda.Device(0)
    b = cuda.Device(1).make_context(cuda.ctx_flags.SCHED_BLOCKING_SYNC)
    assert driver.stack == [b.handle]  # the driver holds the thread's top context only
    assert cuda.Context.get_current() is b and cuda.Context.get_device() == cuda.Device(1)
    cuda.Context.pop()
    assert driver.stack == [a.handle] and cuda.Context.get_current() is a
    cuda.Context.pop()
    assert driver.stack == [] and cuda.Context.get_current() is None
    with pytest.raises(cuda.LogicError, match="cannot pop non-current context"):
        cuda.Context.pop()
    assert driver.destroyed == []  # popping destroys nothing
    del a, b
    gc.collect()
    assert len(driver.destroyed) == 2  # garbage made contexts are destroyed


def test_detach_destroys_a_made_context_releases_a_primary_one(driver):
    a = cuda.Device(0).make_context()
    primary = cuda.Device(1).retain_primary_context()
    assert driver.retained[1] == 1 and driver.stack == [a.handle]  # retained, not pushed
    primary.push()
    assert driver.stack == [PRIMARY[1]] and cuda.Context.get_current() is primary
    primary.detach()  # the current one: the one below is current again
    assert driver.retained[1] == 0 and driver.stack == [a.handle] and cuda.Context.get_current() is a
    with pytest.raises(cuda.LogicError, match="cannot detach from invalid context"):
        primary.detach()
    with pytest.raises(cuda.LogicError, match="cannot push a detached context"):
        primary.push()
    a.detach()
    assert driver.destroyed == [a.handle] and driver.stack == [] and cuda.Context.get_current() is None
    assert not _contexts.is_made(a.handle)


def test_detach_of_a_context_below_the_top_leaves_the_top_current(driver):
    a = cuda.Device(0).make_context()
    b = cuda.Device(0).make_context()
    a.detach()
    assert driver.destroyed == [a.handle] and driver.stack == [b.handle]
    cuda.Context.pop()  # b; the detached a below it is skipped
    assert cuda.Context.get_current() is None and driver.stack == []


def test_contexts_are_equal_by_handle(driver):
    first, second = cuda.Device(0).retain_primary_context(), cuda.Device(0).retain_primary_context()
    assert first == second and hash(first) == hash(second) and first is not second
    assert first != cuda.Device(1).retain_primary_context()
    assert "primary" in repr(first)


def test_attach_shares_a_made_context_until_both_are_detached(driver):
    made = cuda.Device(0).make_context()
    attached = cuda.Context.attach()
    assert attached == made and attached is not made and driver.stack == [made.handle]
    made.detach()
    assert driver.destroyed == []
    attached.detach()
    assert driver.destroyed == [made.handle]


def test_attach_retains_the_primary_context(driver):
    attached = cuda.Context.attach()  # none current: the primary context, as pyctk makes it
    assert attached.handle == PRIMARY[0] and driver.retained[0] == 1
    assert cuda.Context.get_current() is attached
    attached.detach()
    assert driver.retained[0] == 0


def test_a_failed_make_context_leaves_the_stack_as_it_was(driver, monkeypatch):
    a = cuda.Device(0).make_context()

    def fail(flags, device):
        raise cuda.LogicError("cuCtxCreate failed", "CUDA_ERROR_INVALID_VALUE", 1)

    monkeypatch.setattr(_made_contexts, "create_context", fail)
    with pytest.raises(cuda.LogicError):
        cuda.Device(0).make_context(0x1000)
    assert driver.stack == [a.handle] and cuda.Context.get_current() is a


def test_memory_of_a_made_context_is_its_own(driver):
    made = cuda.Device(0).make_context()
    allocation = cuda.mem_alloc(256)
    pointer = int(allocation)
    assert driver.memory[pointer] == made.handle and allocation.device == 0
    scratch = _memory.device_memory(16, 0, 0)  # In/Out's memory
    scratch_pointer = scratch.pointer
    assert driver.memory[scratch_pointer] == made.handle
    assert int(cuda.mem_alloc(0)) == 0 and len(driver.memory) == 2  # no memory for no bytes
    cuda.Context.pop()
    allocation.free()  # in its context, pushed for the free
    assert driver.freed == [(pointer, made.handle)] and driver.stack == []
    allocation.free()  # twice: nothing
    del scratch
    gc.collect()  # garbage: freed too
    assert driver.freed == [(pointer, made.handle), (scratch_pointer, made.handle)]


def test_memory_of_a_destroyed_context_is_not_freed_again(driver):
    made = cuda.Device(0).make_context()
    allocation = cuda.mem_alloc(64)
    made.detach()
    allocation.free()
    assert driver.freed == []


class FakeLibrary:
    """libgpumatmul's contexts: each created in the CUDA context it was asked for (the driver's
    current one for gpumatmul_create_in_context), destroyed while that context lives."""

    def __init__(self, driver: FakeDriver) -> None:
        self.driver = driver
        self.made: dict[int, int] = {}  # library context -> the CUDA context it works in
        self.destroyed: list[int] = []
        self.next = 0x50000

    def _new(self, handle, cuda_context: int) -> int:
        self.next += 0x10
        self.made[self.next] = cuda_context
        handle._obj.value = self.next
        return 0

    def gpumatmul_create(self, handle, device):
        return self._new(handle, PRIMARY[device])

    def gpumatmul_create_in_context(self, handle, cuda_context):
        assert cuda_context.value not in self.driver.destroyed
        return self._new(handle, cuda_context.value)

    def gpumatmul_destroy(self, context):
        assert self.made[context.value] not in self.driver.destroyed  # before cuCtxDestroy
        self.destroyed.append(context.value)
        return 0


@pytest.fixture
def library(driver, monkeypatch):
    fake = FakeLibrary(driver)
    monkeypatch.setattr(_contexts.library, "library", lambda: fake)
    monkeypatch.setattr(_contexts.library, "loaded", lambda: True)
    monkeypatch.setattr(_contexts, "_contexts", {})
    monkeypatch.setattr(_contexts, "_arrays", {})
    return fake


def test_the_library_works_in_a_made_context_while_it_is_current(driver, library):
    primary = _contexts.context(0)  # nothing made yet: the primary context's
    assert library.made[primary.value] == PRIMARY[0]
    made = cuda.Device(0).make_context()
    own = _contexts.context(0)
    assert library.made[own.value] == made.handle and own.value != primary.value
    assert _contexts.context(0) is own  # made once, then kept
    assert _contexts.contexts((0, 1))[:] == [own.value, _contexts.context(1).value]
    assert library.made[_contexts.context(1).value] == PRIMARY[1]  # another device: its primary
    assert _contexts.alive(0, own) and _contexts.alive(0, primary)
    cuda.Context.pop()
    assert _contexts.context(0) is primary  # not current: the primary context's again
    made.push()
    assert _contexts.context(0) is own
    cuda.Context.pop()
    made.detach()  # destroyed: the library's context in it first (FakeLibrary checks the order)
    assert library.destroyed == [own.value] and driver.destroyed == [made.handle]
    assert not _contexts.alive(0, own) and not _contexts.is_made(made.handle)


def test_work_on_another_device_gives_the_made_context_back(driver, monkeypatch):
    def set_device(index):  # as cudaSetDevice: the device's primary context becomes current
        driver.stack[-1:] = [PRIMARY[index]]
        return 0

    runtime = SimpleNamespace(cudaSetDevice=set_device)
    monkeypatch.setattr(_contexts.cudart, "runtime", lambda: runtime)
    monkeypatch.setattr(_contexts.cudart, "get_device", driver.current_device)
    monkeypatch.setattr(_contexts.cudart, "context_keeper", None)
    with _contexts.cudart.on_device(1):  # nothing made yet: the runtime's switch alone
        assert driver.stack == [PRIMARY[1]]
    assert driver.stack == [PRIMARY[0]]
    made = cuda.Device(0).make_context()
    with _contexts.cudart.on_device(1):
        assert driver.stack[-1] == PRIMARY[1]
    assert driver.stack[-1] == made.handle and cuda.Context.get_current() is made
    with _contexts.cudart.on_device(0):  # its own device: no switch at all
        assert driver.stack[-1] == made.handle
    cuda.Context.pop()
    made.detach()


def test_a_made_context_the_library_never_worked_in_is_destroyed_alone(driver, library):
    made = cuda.Device(1).make_context()
    made.pop()
    made.detach()
    assert library.destroyed == [] and driver.destroyed == [made.handle]


def test_start_primary_context_pushes_it_and_pops_it_at_exit(driver, monkeypatch):
    registered = []
    monkeypatch.setattr(_default_context, "init", lambda: None)
    monkeypatch.setattr(_default_context.atexit, "register", lambda *call: registered.append(call))
    monkeypatch.setenv("CUDA_DEVICE", "1")
    context = _default_context.start_primary_context()
    assert context.handle == PRIMARY[1] and driver.stack == [PRIMARY[1]] and driver.retained[1] == 1
    assert cuda.Context.get_current() is context and context.get_device() == cuda.Device(1)
    finish, *arguments = registered[0]
    finish(*arguments)
    assert driver.stack == [] and cuda.Context.get_current() is None
    finish(*arguments)  # popped already (by the program): nothing to do


# ---------------------------------------------------------------------------
# Errors and attributes before any GPU work.


def test_pop_with_nothing_pushed_needs_no_gpu():
    with pytest.raises(cuda.LogicError, match="cannot pop non-current context"):
        cuda.Context.pop()
    assert cuda.Context.get_current() is None


def test_lowercase_attributes_read_their_table(monkeypatch):
    read = []
    monkeypatch.setattr(cuda.Device, "get_attribute", lambda self, attribute: read.append(attribute) or 7)
    monkeypatch.setattr(cuda.Function, "get_attribute", lambda self, attribute: read.append(attribute) or 3)
    device = object.__new__(cuda.Device)
    function = cuda.Function(None, 0, "k", None)
    assert device.multiprocessor_count == 7 and device.warp_size == 7
    assert function.num_regs == 3 and function.ptx_version == 3
    assert function.max_dynamic_shared_size_bytes == 3 and function.local_size_bytes == 3
    assert read == [
        cuda.device_attribute.MULTIPROCESSOR_COUNT,
        cuda.device_attribute.WARP_SIZE,
        cuda.function_attribute.NUM_REGS,
        cuda.function_attribute.PTX_VERSION,
        cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES,
        cuda.function_attribute.LOCAL_SIZE_BYTES,
    ]
    for thing, name in ((device, "no_such_attribute"), (function, "registers"), (function, "_private")):
        with pytest.raises(AttributeError, match=repr(name)):
            getattr(thing, name)
    assert not hasattr(function, "__cuda_array_interface__")


def test_autoprimaryctx_without_a_driver(needs_no_driver, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", "import pyctk.autoprimaryctx"], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 1 and "pyctk.NoDriverError: " in done.stderr
    assert "Install the NVIDIA driver" in done.stderr


# ---------------------------------------------------------------------------
# DeviceData and OccupancyRecord.


def data(**changes):
    """What OccupancyRecord reads of a DeviceData: an H100's, PyCUDA's rules."""
    values = {
        "max_threads": 1024,
        "warp_size": 32,
        "warps_per_mp": 64,
        "thread_blocks_per_mp": 8,
        "registers": 65536,
        "shared_memory": 49152,
        "smem_alloc_granularity": 128,
        "register_allocation_unit": "warp",
    }
    return SimpleNamespace(**{**values, **changes})


@pytest.mark.parametrize(
    "devdata, threads, shared_mem, registers, expected",
    [
        # 8 warps; 8 blocks by the device's limit and by warps (64 // 8): the tie goes to "device"
        (data(), 256, 0, 0, (8, "device", 64, 1.0, [(8, "device"), (8, "warps")])),
        # 16 warps; registers 16 * 32 * 64 = 32768 of 65536: 2 blocks
        (data(), 512, 0, 64, (2, "regs", 32, 0.5, [(8, "device"), (4, "warps"), (2, "regs")])),
        # 4 warps (100 threads); 20000 bytes take 157 * 128 = 20096: 49152 // 20096 = 2 blocks
        (data(), 100, 20000, 0, (2, "smem", 8, 0.125, [(8, "device"), (16, "warps"), (2, "smem")])),
        # 2 warps (33 threads): 32 blocks by warps, 8 by the device; 1 register: 2 * 32 = 64 -> 1024
        (data(), 33, 0, 1, (8, "device", 16, 0.25, [(8, "device"), (32, "warps"), (1024, "regs")])),
        # per block: 3 warps -> ceil(6 / 4) * 4 * 16 = 128 threads' registers, 128 * 20 = 2560 of 8192: 3
        (
            data(register_allocation_unit="block", registers=8192, warps_per_mp=24),
            96,
            0,
            20,
            (3, "regs", 9, 0.375, [(8, "device"), (8, "warps"), (3, "regs")]),
        ),
    ],
)
def test_occupancy_record(devdata, threads, shared_mem, registers, expected):
    record = tools.OccupancyRecord(devdata, threads, shared_mem, registers)
    assert (
        record.tb_per_mp,
        record.limited_by,
        record.warps_per_mp,
        record.occupancy,
        record.tb_per_mp_limits,
    ) == expected


@pytest.mark.parametrize(
    "devdata, threads, shared_mem, registers, match",
    [
        (data(), 1025, 0, 0, "too many threads"),
        (data(), 0, 0, 0, "needs threads"),
        (data(), 1024, 0, 65, "too many registers"),  # 32 warps * 32 * 65 = 66560 > 65536
        (data(), 32, 49153, 0, "too much smem"),  # rounds up to 49280 > 49152
        (data(register_allocation_unit="thread"), 32, 0, 0, "register allocation unit"),
    ],
)
def test_occupancy_record_errors(devdata, threads, shared_mem, registers, match):
    with pytest.raises(ValueError, match=match):
        tools.OccupancyRecord(devdata, threads, shared_mem, registers)


class FakeH100:
    def get_attribute(self, attribute):
        return {
            cuda.device_attribute.MAX_THREADS_PER_BLOCK: 1024,
            cuda.device_attribute.WARP_SIZE: 32,
            cuda.device_attribute.MAX_REGISTERS_PER_BLOCK: 65536,
            cuda.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK: 49152,
        }[attribute]


def test_device_data():
    devdata = tools.DeviceData(FakeH100())
    assert vars(devdata) == vars(data(smem_granularity=32))
    assert [devdata.align_bytes(size) for size in (4, 8, 16)] == [64, 128, 128]
    assert devdata.align_bytes() == 64
    with pytest.raises(ValueError, match="fetches of size 2"):
        devdata.align_bytes(2)
    assert [devdata.align(100), devdata.align(128), devdata.align(129, 8), devdata.align(0)] == [128, 128, 256, 0]
    assert devdata.align_words(8) == 16 and devdata.align_words(4) == 16
    assert devdata.align_dtype(10, 8) == 16 and devdata.align_dtype(17, 4) == 32
    assert devdata.coalesce(17) == 32 and devdata.coalesce(16) == 16
    assert [tools.DeviceData.make_valid_tex_channel_count(n) for n in (1, 2, 3, 4)] == [1, 2, 4, 4]
    with pytest.raises(ValueError, match="channel count"):
        tools.DeviceData.make_valid_tex_channel_count(5)
    assert tools.OccupancyRecord(devdata, 256).occupancy == 1.0
