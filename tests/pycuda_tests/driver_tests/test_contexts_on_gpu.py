"""PyCUDA's contexts on a GPU: made contexts, the per-thread stack, and work in a made context.

Covered: make_context gives a new context (not the primary one), with ctx_flags; push, pop,
detach, attach and get_current, and their errors, against the driver's current context;
mem_alloc, In/Out, a SourceModule kernel, copies, a stream and an event inside a made context
(its memory is the context's own, the driver says); memory freed after a pop, and not after
the context is destroyed; limits set and read back; cache and shared memory configs of the
context and of a kernel; Function attributes by name; get_api_version; can_access_peer and
peer access (two GPUs); DeviceData against the device's attributes; each thread's own stack;
pyctk.matmul, DeviceArray and GPUArray in a made context, and in sixteen threads' own made
contexts at once;
pyctk.autoprimaryctx and pyctk.autoinit in a fresh process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from ctypes import byref, c_void_p

import numpy as np
import pytest

import pyctk
import pyctk.driver as cuda
from pyctk import gpuarray, tools
from pyctk._cuda import driver_api as _driver_api
from pyctk.compiler import SourceModule

pytestmark = pytest.mark.gpu

ADD = """
__global__ void add(const int *x, const int *y, int *z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}"""


def driver_current() -> int | None:
    """The driver's current context of this thread (no primary context made for the asking)."""
    current = c_void_p()
    _driver_api.call("cuCtxGetCurrent", byref(current))
    return current.value


@pytest.fixture(autouse=True)
def empty_stack():
    """Each test starts and ends with nothing pushed on this thread: the other GPU tests run in
    the primary context, which a context left pushed would hide."""
    assert cuda.Context.get_current() is None
    yield
    while cuda.Context.get_current() is not None:
        cuda.Context.pop()


@pytest.fixture
def made():
    context = cuda.Device(0).make_context()
    yield context
    while cuda.Context.get_current() is not None:
        cuda.Context.pop()
    context.detach()


def test_make_context_is_a_new_context(made):
    primary = cuda.Device(0).retain_primary_context()
    try:
        assert made != primary and made.handle != primary.handle
        assert driver_current() == made.handle and cuda.Context.get_current() is made
        assert cuda.Context.get_device() == cuda.Device(0)
        assert made.get_api_version() >= 3020 and primary.get_api_version() >= 3020
    finally:
        primary.detach()


def test_the_stack(made):
    other = cuda.Device(0).make_context(cuda.ctx_flags.SCHED_BLOCKING_SYNC)
    assert cuda.Context.get_current() is other and driver_current() == other.handle
    cuda.Context.pop()
    assert cuda.Context.get_current() is made and driver_current() == made.handle
    other.push()
    assert cuda.Context.get_current() is other and driver_current() == other.handle
    other.detach()  # the current one: the one below is current again
    assert cuda.Context.get_current() is made and driver_current() == made.handle
    with pytest.raises(cuda.LogicError, match="cannot detach from invalid context"):
        other.detach()
    with pytest.raises(cuda.LogicError, match="detached"):
        other.push()
    cuda.Context.pop()
    assert cuda.Context.get_current() is None and driver_current() != made.handle
    with pytest.raises(cuda.LogicError, match="cannot pop non-current context"):
        cuda.Context.pop()
    made.push()
    assert driver_current() == made.handle


def test_a_failed_make_context_changes_nothing(made):
    with pytest.raises(cuda.LogicError, match="CUDA_ERROR_INVALID_VALUE"):
        cuda.Device(0).make_context(1 << 20)  # no such flag
    assert cuda.Context.get_current() is made and driver_current() == made.handle


def test_attach_keeps_a_made_context_alive():
    made = cuda.Device(0).make_context()
    attached = cuda.Context.attach()
    assert attached == made and attached is not made and cuda.Context.get_current() is attached
    allocation = cuda.mem_alloc(64)
    cuda.Context.pop()  # the attached one
    assert cuda.Context.get_current() is made and driver_current() == made.handle
    cuda.Context.pop()
    made.detach()  # the attached Context still holds the context
    allocation.free()
    attached.push()
    cuda.Context.synchronize()
    assert cuda.mem_alloc(64) and driver_current() == made.handle
    attached.detach()  # the last one: destroyed, and popped
    assert cuda.Context.get_current() is None and driver_current() != made.handle


def test_memory_kernels_and_copies_in_a_made_context(made):
    add = SourceModule(ADD, cache_dir=False).get_function("add")
    x = np.arange(1000, dtype=np.int32)
    x_gpu, z_gpu = cuda.mem_alloc(x.nbytes), cuda.mem_alloc(x.nbytes)
    owner = c_void_p()
    _driver_api.call("cuPointerGetAttribute", byref(owner), cuda.pointer_attribute.CONTEXT, int(x_gpu))
    assert owner.value == made.handle  # the made context's memory, not the primary pool's
    cuda.memcpy_htod(x_gpu, x)
    add(x_gpu, x_gpu, z_gpu, np.int32(x.size), block=(256, 1, 1), grid=(4, 1))
    z = np.empty_like(x)
    cuda.memcpy_dtoh(z, z_gpu)
    assert np.array_equal(z, 2 * x)
    z[:] = 0
    add(cuda.In(x), cuda.In(x + 1), cuda.Out(z), np.int32(x.size), block=(256, 1, 1), grid=(4, 1))
    assert np.array_equal(z, 2 * x + 1)
    stream, start, end = cuda.Stream(), cuda.Event(), cuda.Event()
    start.record(stream)
    cuda.memcpy_htod_async(x_gpu, x[::-1].copy(), stream)
    add(x_gpu, x_gpu, z_gpu, np.int32(x.size), block=(256, 1, 1), grid=(4, 1), stream=stream)
    end.record(stream).synchronize()
    assert end.time_since(start) >= 0
    cuda.memcpy_dtoh(z, z_gpu)
    assert np.array_equal(z, 2 * x[::-1])
    x_gpu.free()
    cuda.Context.synchronize()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")  # "cuda", PyCUDA's mark
def test_mark_cuda_test_runs_a_test_in_a_context_of_its_own_and_pops_it():
    seen = []

    @tools.mark_cuda_test
    def test_in_context(n):
        current = cuda.Context.get_current()
        x = cuda.to_device(np.arange(n, dtype=np.int32))
        owner = c_void_p()
        _driver_api.call("cuPointerGetAttribute", byref(owner), cuda.pointer_attribute.CONTEXT, int(x))
        seen.append((current is not None and owner.value == current.handle, cuda.from_device(x, (n,), np.int32).sum()))

    test_in_context(10)
    assert seen == [(True, 45)]  # its memory was the made context's
    assert cuda.Context.get_current() is None  # popped


def test_profiler_marks_start_and_stop_without_a_profiler_attached():
    cuda.start_profiler()
    cuda.to_device(np.ones(4, np.float32))
    cuda.stop_profiler()


def test_memory_of_a_made_context_after_pop_and_detach():
    made = cuda.Device(0).make_context()
    kept, lost = cuda.mem_alloc(1 << 20), cuda.mem_alloc(1 << 20)
    cuda.Context.pop()
    kept.free()  # pushed for the free
    assert cuda.Context.get_current() is None
    made.detach()  # its memory goes with it
    lost.free()  # nothing to do


def test_limits(made):
    for which, value in (
        (cuda.limit.STACK_SIZE, 4096),
        (cuda.limit.PRINTF_FIFO_SIZE, 1 << 20),
        (cuda.limit.MALLOC_HEAP_SIZE, 16 << 20),
    ):
        cuda.Context.set_limit(which, value)
        assert cuda.Context.get_limit(which) >= value  # the driver may round up


def test_cache_and_shared_memory_configs(made):
    cuda.Context.set_cache_config(cuda.func_cache.PREFER_L1)
    assert cuda.Context.get_cache_config() == cuda.func_cache.PREFER_L1
    cuda.Context.set_cache_config(cuda.func_cache.PREFER_NONE)
    cuda.Context.set_shared_config(cuda.shared_config.FOUR_BYTE_BANK_SIZE)  # ignored by the GPU
    assert isinstance(cuda.Context.get_shared_config(), cuda.shared_config)
    add = SourceModule(ADD, cache_dir=False).get_function("add")
    add.set_cache_config(cuda.func_cache.PREFER_SHARED)
    add.set_shared_config(cuda.shared_config.DEFAULT_BANK_SIZE)
    z = np.zeros(8, np.int32)
    add(cuda.In(z + 1), cuda.In(z + 2), cuda.Out(z), np.int32(8), block=(8, 1, 1))
    assert np.array_equal(z, np.full(8, 3))


def test_function_attributes_by_name():
    add = SourceModule(ADD, cache_dir=False).get_function("add")
    major, minor = cuda.Context.get_device().compute_capability()
    assert add.num_regs > 0 and 0 < add.max_threads_per_block <= 1024
    assert add.binary_version == 10 * major + minor and add.ptx_version >= 50
    assert add.shared_size_bytes == 0 and add.local_size_bytes >= 0 and add.const_size_bytes >= 0
    assert add.max_dynamic_shared_size_bytes > 0
    assert add.num_regs == add.get_attribute(cuda.function_attribute.NUM_REGS)
    with pytest.raises(AttributeError, match="registers"):
        add.registers  # noqa: B018 - the attribute access is the test


def test_device_attributes_by_name_and_data():
    device = cuda.Device(0)
    assert device.warp_size == 32 and device.multiprocessor_count > 0
    assert device.compute_mode in tuple(cuda.compute_mode)
    data = tools.DeviceData(device)
    assert (data.max_threads, data.warp_size, data.registers, data.shared_memory) == (
        device.max_threads_per_block,
        device.warp_size,
        device.max_registers_per_block,
        device.max_shared_memory_per_block,
    )
    record = tools.OccupancyRecord(data, 256, registers=32)
    assert 0 < record.occupancy <= 1
    made = device.make_context()
    try:
        assert vars(tools.DeviceData()) == vars(data)  # the current context's device
    finally:
        cuda.Context.pop()
        made.detach()


def test_peers():
    device = cuda.Device(0)
    assert isinstance(device.can_access_peer(device), bool)
    if cuda.Device.count() < 2:
        pytest.skip("needs two GPUs")
    other = cuda.Device(1)
    if not device.can_access_peer(other):
        pytest.skip("GPUs 0 and 1 cannot use each other's memory")
    first = device.make_context()
    second = other.make_context()
    try:
        cuda.Context.pop()  # second: first is current
        cuda.Context.enable_peer_access(second)
        with pytest.raises(cuda.Error, match="PEER_ACCESS_ALREADY_ENABLED"):
            cuda.Context.enable_peer_access(second)
        cuda.Context.disable_peer_access(second)
    finally:
        cuda.Context.pop()
        first.detach()
        second.detach()


def test_each_thread_has_its_own_stack(made):
    seen = []
    thread = threading.Thread(target=lambda: seen.append((cuda.Context.get_current(), driver_current())))
    thread.start()
    thread.join()
    assert seen[0][0] is None and seen[0][1] != made.handle


def _products_in_the_current_context(seed: int) -> None:
    """A SourceModule kernel, pyctk.matmul of host arrays, DeviceArrays and GPUArrays, and a
    GPUArray operation, each checked against NumPy, in whichever context is current; the
    current context is the same after each as before."""
    current = driver_current()
    rng = np.random.default_rng(seed)
    x, y = rng.integers(-9, 9, 300, dtype=np.int32), rng.integers(-9, 9, 300, dtype=np.int32)
    z = np.empty_like(x)
    SourceModule(ADD).get_function("add")(
        cuda.In(x), cuda.In(y), cuda.Out(z), np.int32(300), block=(128, 1, 1), grid=(3, 1)
    )
    assert (z == x + y).all()
    a = rng.standard_normal((64, 48)).astype(np.float32)
    b = rng.standard_normal((48, 40)).astype(np.float32)
    expected = a @ b
    assert np.allclose(pyctk.matmul(a, b), expected, atol=1e-4)
    assert np.allclose(pyctk.matmul(pyctk.asarray(a), pyctk.asarray(b)).get(), expected, atol=1e-4)
    a_gpu, b_gpu = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    assert np.allclose(pyctk.matmul(a_gpu, b_gpu).get(), expected, atol=1e-4)
    assert np.allclose((a_gpu + a_gpu).get(), 2 * a)
    assert driver_current() == current


def test_matmul_device_arrays_and_gpuarrays_work_in_a_made_context():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    a_gpu = pyctk.asarray(a)  # in the primary context
    made = cuda.Device(0).make_context()
    try:
        _products_in_the_current_context(0)
        assert driver_current() == made.handle
        kept = pyctk.asarray(a)  # memory of the made context's own pool, outliving it
    finally:
        cuda.Context.pop()
        made.detach()  # destroys pyctk's state in it, then the context
    del kept  # garbage after its context went: not freed again (it went with the context)
    assert np.allclose(pyctk.matmul(a_gpu, a_gpu).get(), a @ a)  # the primary context's still work
    assert np.allclose(pyctk.matmul(a, a), a @ a)


def test_sixteen_threads_each_in_a_context_of_its_own():
    start = threading.Barrier(16)
    failures = []

    def work(seed: int) -> None:
        try:
            context = cuda.Device(0).make_context()
            try:
                start.wait(timeout=60)
                for round_ in range(3):
                    _products_in_the_current_context(100 * seed + round_)
            finally:
                cuda.Context.pop()
                context.detach()
        except BaseException as error:  # reported by the main thread
            failures.append((seed, repr(error)))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    _products_in_the_current_context(7)  # and the primary context's, afterwards


def test_matmul_works_in_the_pushed_primary_context():
    primary = cuda.Device(0).retain_primary_context()
    primary.push()
    try:
        a = np.ones((8, 8), np.float32)
        assert np.allclose(pyctk.matmul(pyctk.asarray(a), pyctk.asarray(a)).get(), a @ a)
        assert np.allclose(cuda.from_device(cuda.to_device(a), a.shape, a.dtype), a)
    finally:
        cuda.Context.pop()
        primary.detach()


@pytest.mark.parametrize("module", ["pyctk.autoprimaryctx", "pyctk.autoinit"])
def test_auto_modules_push_the_primary_context(module, tmp_path):
    code = (
        f"import {module} as auto, numpy as np, pyctk, pyctk.driver as cuda\n"
        "primary = auto.device.retain_primary_context()\n"
        "print(auto.context == primary, cuda.Context.get_current() is auto.context,\n"
        "      auto.device == cuda.Device(0))\n"
        "a = np.ones((4, 4), np.float32)\n"
        "print(float(pyctk.matmul(pyctk.asarray(a), pyctk.asarray(a)).get().sum()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "CUDA_DEVICE": "0"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True", "64.0"]
