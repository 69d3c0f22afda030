"""pyctk.driver and pyctk.compiler on a GPU: run-time kernels, launched with every kind of argument.

Covered: SourceModule compiled for the current GPU (SASS), launches with device memory
of every kind (mem_alloc, DeviceArray, CUDA Array Interface, DLPack, np.uintp addresses),
In/Out/InOut, NumPy scalars of every size and kind (__half, float2 and structs by
value); argument errors raised before the launch; streams, events and time_kernel;
templates; __device__ and __constant__ globals; memory copies and fills; devices and
contexts; launch failures naming the CUDA error, and a kernel's illegal address in a
child process (it kills the context) with the message that says so; a kernel loaded
from the cache in a fresh process that never loads NVRTC; pyctk.autoinit; every
program in examples/pycuda; and the same compile-and-launch from C (examples/nvrtc_c).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyctk
import pyctk.driver as cuda
from pyctk.compiler import SourceModule
from support import nvrtc_c_example
from support.paths import ROOT

pytestmark = pytest.mark.gpu
EXAMPLES = ROOT / "examples" / "pycuda"

ADD = """
__global__ void add(const int *x, const int *y, int *z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}"""


@pytest.fixture(scope="module")
def add():
    return SourceModule(ADD, cache_dir=False).get_function("add")


def run_python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env={**os.environ, **env}, timeout=300
    )


def test_compiled_for_this_gpu_as_sass():
    major, minor = cuda.Context.get_device().compute_capability()
    module = SourceModule(ADD, cache_dir=False)
    assert module.target == f"sm_{major}{minor}"


def test_freed_memory_is_refused_and_a_second_free_does_nothing(add):
    # mem_alloc, the copies and a launch on them are examples/pycuda/vector_add.py, run below.
    x = np.arange(1000, dtype=np.int32)
    x_gpu, z_gpu = cuda.mem_alloc(x.nbytes), cuda.mem_alloc(x.nbytes)
    cuda.memcpy_htod(x_gpu, x)
    add(x_gpu, x_gpu, z_gpu, np.int32(x.size), block=(256, 1, 1), grid=(4, 1))
    z = np.empty_like(x)
    cuda.memcpy_dtoh(z, z_gpu)
    assert np.array_equal(z, 2 * x)
    z_gpu.free()
    z_gpu.free()  # twice: nothing
    with pytest.raises(ValueError, match="freed"):
        int(z_gpu)


def test_in_out_inout(add):
    x, y = np.arange(300, dtype=np.int32), np.full(300, 7, np.int32)
    z = np.zeros_like(x)
    add(cuda.In(x), cuda.In(y), cuda.Out(z), np.int32(300), block=(128, 1, 1), grid=(3, 1))
    assert np.array_equal(z, x + 7)
    add(cuda.In(x), cuda.InOut(z), cuda.InOut(z), np.int32(300), block=(128, 1, 1), grid=(3, 1))
    assert np.array_equal(z, x + x + 7)


def test_device_arrays_and_addresses(add):
    x = pyctk.asarray(np.arange(64, dtype=np.int32))
    y = cuda.to_device(np.ones(64, np.int32))
    z = pyctk.empty(64, np.int32)
    add(x, np.uintp(int(y)), z, np.int32(64), block=(64, 1, 1))
    assert np.array_equal(z.get(), np.arange(64) + 1)
    assert np.array_equal(cuda.from_device(y, (64,), np.int32), np.ones(64))


def test_other_libraries_arrays():
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    module = SourceModule(
        "__global__ void twice(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2; }", cache_dir=False
    )
    twice = module.get_function("twice")
    c = cupy.arange(8, dtype=cupy.float32)  # __cuda_array_interface__
    t = torch.arange(8, dtype=torch.float32, device="cuda")

    class DLPackOnly:  # only DLPack: no interface, not a torch tensor
        def __init__(self, tensor):
            self.tensor = tensor

        def __dlpack__(self, **kwargs):
            return self.tensor.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.tensor.__dlpack_device__()

    d = torch.arange(8, dtype=torch.float32, device="cuda")
    for array in (c, t, DLPackOnly(d)):
        twice(array, np.int32(8), block=(32, 1, 1))
    cuda.Context.synchronize()
    expected = np.arange(8, dtype=np.float32) * 2
    assert np.array_equal(cupy.asnumpy(c), expected)
    assert np.array_equal(t.cpu().numpy(), expected) and np.array_equal(d.cpu().numpy(), expected)


SCALARS = r"""
#include <cuda_fp16.h>
struct Pair { int a; double b; };
__global__ void scalars(double *out, signed char i8, short i16, int i32, long long i64,
                        unsigned u32, float f32, double f64, __half h, float2 c, Pair p, bool flag) {
    out[0] = i8; out[1] = i16; out[2] = i32; out[3] = (double)i64; out[4] = u32; out[5] = f32;
    out[6] = f64; out[7] = __half2float(h); out[8] = c.x; out[9] = c.y; out[10] = p.a;
    out[11] = p.b; out[12] = flag;
}"""


def test_numpy_scalars_by_value_with_their_exact_type():
    scalars = SourceModule(SCALARS, cache_dir=False).get_function("scalars")
    pair = np.array((17, 2.25), np.dtype([("a", np.int32), ("b", np.float64)], align=True))[()]
    out = np.zeros(13)
    scalars(
        cuda.Out(out),
        np.int8(-3),
        np.int16(-300),
        np.int32(-70000),
        np.int64(-(2**40)),
        np.uint32(4_000_000_000),
        np.float32(1.5),
        np.float64(1e-300),
        np.float16(0.5),
        np.complex64(3 - 4j),
        pair,
        np.bool_(True),
        block=(1, 1, 1),
    )
    assert list(out) == [-3, -300, -70000, -(2**40), 4e9, 1.5, 1e-300, 0.5, 3, -4, 17, 2.25, 1]


@pytest.mark.parametrize(
    "arguments, match",
    [
        ((np.int32(1),), "takes 4 arguments"),
        ((None, None, None, np.int32(1), np.int32(1)), "takes 4 arguments"),
        ((np.zeros(4, np.int32), np.uintp(0), np.uintp(0), np.int32(4)), "NumPy array in host memory.*cuda.In"),
        ((np.uintp(0), np.uintp(0), np.uintp(0), 4), "Python int.*numpy.int32"),
        ((np.uintp(0), np.uintp(0), np.uintp(0), np.int64(4)), "argument 3 is a 32-bit integer.*numpy.int64"),
        ((np.uintp(0), np.uintp(0), np.uintp(0), np.float32(4)), "argument 3 is a 32-bit integer"),
        ((np.uint32(0), np.uintp(0), np.uintp(0), np.int32(4)), "argument 0 is a pointer or 64-bit.*numpy.uint32"),
        ((np.uintp(0), np.uintp(0), "z", np.int32(4)), "cannot pass str"),
    ],
)
def test_argument_errors_before_the_launch(add, arguments, match):
    with pytest.raises(TypeError, match=match):
        add(*arguments, block=(32, 1, 1))
    cuda.Context.synchronize()  # nothing was launched: nothing failed


def test_block_is_required_and_pointers_need_a_pointer_parameter(add):
    with pytest.raises(TypeError, match="block= is required"):
        add(np.uintp(0), np.uintp(0), np.uintp(0), np.int32(0))
    scalars = SourceModule("__global__ void k(int n) {}", cache_dir=False).get_function("k")
    with pytest.raises(TypeError, match="32-bit integer in the kernel; got DeviceAllocation"):
        scalars(cuda.mem_alloc(4), block=(1, 1, 1))


def test_memory_of_another_device_is_refused(add, monkeypatch):
    from pyctk._cuda import driver_api as _driver_api

    x = cuda.mem_alloc(16)
    monkeypatch.setattr(_driver_api, "current_device", lambda: x.device + 1)
    with pytest.raises(pyctk.DeviceMismatchError, match=f"argument 0 is on device {x.device}"):
        add(x, np.uintp(0), np.uintp(0), np.int32(0), block=(1, 1, 1))


def test_streams_events_and_timing(add):
    n = 1 << 20
    x = np.arange(n, dtype=np.int32)
    stream = cuda.Stream()
    x_gpu, z_gpu = cuda.mem_alloc(x.nbytes), cuda.mem_alloc(x.nbytes)
    start, end = cuda.Event(), cuda.Event()
    cuda.memcpy_htod_async(x_gpu, x, stream)
    start.record(stream)
    add(x_gpu, x_gpu, z_gpu, np.int32(n), block=(256, 1, 1), grid=(n // 256, 1), stream=stream)
    end.record(stream)
    z = np.empty_like(x)
    cuda.memcpy_dtoh_async(z, z_gpu, stream)
    stream.synchronize()
    assert stream.is_done() and end.query()
    assert np.array_equal(z, 2 * x)
    assert end.time_since(start) > 0 and start.time_till(end) == end.time_since(start)
    seconds = add(
        x_gpu, x_gpu, z_gpu, np.int32(n), block=(256, 1, 1), grid=(n // 256, 1), stream=stream, time_kernel=True
    )
    assert 0 < seconds < 1
    other = cuda.Stream(cuda.stream_flags.NON_BLOCKING)
    event = cuda.Event(cuda.event_flags.DISABLE_TIMING).record(stream)
    other.wait_for_event(event)
    add(z_gpu, x_gpu, z_gpu, np.int32(n), block=(256, 1, 1), grid=(n // 256, 1), stream=other)
    other.synchronize()
    cuda.memcpy_dtoh(z, z_gpu)
    assert np.array_equal(z, 3 * x)
    c = pyctk.matmul(pyctk.asarray(np.eye(2)), pyctk.asarray(np.eye(2)), stream=stream)  # a stream= for matmul
    stream.synchronize()
    assert np.array_equal(c.get(), np.eye(2))


def test_prepared_calls(add):
    """PyCUDA's prepare / prepared_call / prepared_async_call / prepared_timed_call, with a
    struct format string and with a list of dtypes; Python numbers converted to the types."""
    n = 1000
    x, y = np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int32) * 3
    x_gpu, y_gpu, z_gpu = cuda.to_device(x), cuda.to_device(y), cuda.mem_alloc(x.nbytes)
    add.prepare("PPPi").prepared_call(((n + 255) // 256, 1), (256, 1, 1), x_gpu, y_gpu, z_gpu, n)
    np.testing.assert_array_equal(cuda.from_device(z_gpu, (n,), np.int32), x + y)
    cuda.memset_d32(z_gpu, 0, n)
    stream = cuda.Stream()
    add.prepare([np.intp, np.intp, np.intp, np.int32]).prepared_async_call(
        ((n + 255) // 256, 1), (256, 1, 1), stream, int(x_gpu), int(y_gpu), z_gpu, n
    )
    stream.synchronize()
    np.testing.assert_array_equal(cuda.from_device(z_gpu, (n,), np.int32), x + y)
    seconds = add.prepare("PPPi").prepared_timed_call((4, 1), (256, 1, 1), x_gpu, y_gpu, z_gpu, n)()
    assert 0 < seconds < 1


def test_versions():
    assert cuda.get_version()[0] == int(pyctk.info()["runtime_version"].split(".")[0])
    assert cuda.get_driver_version() >= 1000 * cuda.get_version()[0]  # a driver runs its runtime


def test_tools_default_context_and_memoize(monkeypatch):
    import pyctk.tools as tools

    monkeypatch.delenv("CUDA_DEVICE", raising=False)
    monkeypatch.setenv("HOME", "/nonexistent")  # no ~/.cuda_device: the first device that works
    context = tools.make_default_context()
    try:
        assert cuda.Context.get_device() == cuda.Device(0)
        compiled = tools.context_dependent_memoize(lambda: SourceModule(ADD, cache_dir=False))
        first = compiled()
        assert compiled() is first
        tools.clear_context_caches()
        assert compiled() is not first
    finally:
        context.pop()


def test_templates_through_name_expressions():
    module = SourceModule(
        """
    template <typename T> __global__ void scale(T *x, T factor, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= factor;
    }""",
        no_extern_c=True,
        name_expressions=["scale<float>", "scale<double>"],
        cache_dir=False,
    )
    for dtype in (np.float32, np.float64):
        name = f"scale<{'float' if dtype is np.float32 else 'double'}>"
        x = np.arange(10, dtype=dtype)
        module.get_function(name)(cuda.InOut(x), dtype(2.5), np.int32(10), block=(32, 1, 1))
        assert np.array_equal(x, np.arange(10, dtype=dtype) * 2.5)
    with pytest.raises(TypeError, match="64-bit float.*numpy.float32"):
        module.get_function("scale<double>")(np.uintp(0), np.float32(1), np.int32(0), block=(1, 1, 1))
    with pytest.raises(cuda.LogicError, match=r"no kernel 'scale<int>'.*_Z5scaleIfEvPT_S0_i.*name_expressions"):
        module.get_function("scale<int>")


def test_globals_attributes_and_headers():
    module = SourceModule(
        """
    #include <cuda_bf16.h>
    #include <cuda/std/complex>
    __constant__ float weights[4];
    __device__ int counter;
    __global__ void use(float *out) {
        cuda::std::complex<float> c(weights[threadIdx.x], 0);
        out[threadIdx.x] = cuda::std::abs(c) + __bfloat162float(__float2bfloat16(1.0f));
        atomicAdd(&counter, 1);
    }""",
        cache_dir=False,
    )
    weights, size = module.get_global("weights")
    assert size == 16
    cuda.memcpy_htod(weights, np.array([1, -2, 3, -4], np.float32))
    counter, _ = module.get_global("counter")
    cuda.memset_d32(counter, 0, 1)
    use = module.get_function("use")
    out = np.zeros(4, np.float32)
    use(cuda.Out(out), block=(4, 1, 1))
    assert np.array_equal(out, [2, 3, 4, 5])
    assert np.array_equal(cuda.from_device(counter, (1,), np.int32), [4])
    assert use.num_regs > 0 and use.max_threads_per_block >= 32
    assert use.get_attribute(cuda.function_attribute.CONST_SIZE_BYTES) >= 16


def test_copies_and_fills():
    a = cuda.mem_alloc(64)
    cuda.memset_d8(a, 0xAB, 64)
    b = cuda.mem_alloc(64)
    cuda.memcpy_dtod(b, a, 64)
    assert cuda.from_device(b, (64,), np.uint8).tolist() == [0xAB] * 64
    cuda.memset_d16(b, -1, 32)
    assert cuda.from_device(b, (32,), np.uint16).tolist() == [0xFFFF] * 32
    stream = cuda.Stream()
    cuda.memset_d32_async(b, int(np.float32(1.5).view(np.uint32)), 16, stream)
    stream.synchronize()
    assert cuda.from_device(b, (16,), np.float32).tolist() == [1.5] * 16
    free, total = cuda.mem_get_info()
    assert 0 < free <= total
    with pytest.raises(ValueError, match="not C-contiguous"):
        cuda.memcpy_htod(pyctk.zeros((4, 4), np.float32)[:, ::2], np.zeros(8, np.float32))


def test_devices_and_contexts():
    assert cuda.Device.count() >= 1
    device = cuda.Device(0)
    assert device.name() and device.compute_capability()[0] >= 5 and device.total_memory() > 1 << 30
    attributes = device.get_attributes()
    assert attributes[cuda.device_attribute.WARP_SIZE] == 32
    assert device.pci_bus_id() and device == cuda.Device(0)
    context = device.make_context()
    assert cuda.Context.get_device() == device
    context.synchronize()
    context.detach()
    with pytest.raises(cuda.LogicError, match="CUDA_ERROR_INVALID_DEVICE"):
        cuda.Device(cuda.Device.count())


@pytest.mark.parametrize(
    "launch, match",
    [
        (dict(block=(2048, 1, 1)), "block=\\(2048, 1, 1\\).*CUDA_ERROR_INVALID_VALUE"),
        (dict(block=(1, 1, 1), grid=(1, 1 << 20)), "CUDA_ERROR_INVALID_VALUE"),
        (dict(block=(1, 1, 1), shared=1 << 30), "shared=1073741824.*CUDA_ERROR_"),
    ],
)
def test_bad_launches_name_the_cuda_error_and_leave_the_gpu_usable(add, launch, match):
    with pytest.raises(cuda.Error, match=match) as info:
        add(np.uintp(0), np.uintp(0), np.uintp(0), np.int32(0), **launch)
    assert not isinstance(info.value, cuda.ContextLostError)
    x = np.zeros(4, np.int32)
    add(cuda.In(x + 1), cuda.In(x + 2), cuda.Out(x), np.int32(4), block=(4, 1, 1))
    assert np.array_equal(x, [3, 3, 3, 3])


ILLEGAL_ADDRESS = r"""
import numpy as np, pyctk, pyctk.driver as cuda
from pyctk.compiler import SourceModule
ones = np.ones((64, 64), np.float32)
pyctk.matmul(ones, ones)  # libgpumatmul's context exists before the fault
bad = SourceModule("__global__ void bad(int *p) { p[threadIdx.x] = 1; }", cache_dir=False).get_function("bad")
bad(np.uintp(0x10), block=(32, 1, 1))
for attempt in range(2):
    try:
        cuda.Context.synchronize()
    except cuda.ContextLostError as error:
        print(type(error).__name__, error.status, isinstance(error, cuda.LaunchError), "|", error)
try:
    pyctk.matmul(ones, ones)
except pyctk.ContextLostError as error:
    print("matmul", type(error).__name__, error.status, "|", error)
"""


def test_illegal_address_loses_the_context_and_says_so(tmp_path):
    done = run_python(ILLEGAL_ADDRESS, tmp_path)
    assert done.returncode == 0, done.stderr
    *driver_calls, matmul = done.stdout.splitlines()
    assert len(driver_calls) == 2  # and the same error again: the context is gone
    for line in driver_calls:
        assert line.startswith("ContextLostError CUDA_ERROR_ILLEGAL_ADDRESS True |")
    # libgpumatmul's own calls fail with it too, and say the same.
    assert matmul.startswith("matmul ContextLostError GPUMATMUL_ERROR_CONTEXT_LOST |")
    assert "cudaErrorIllegalAddress" in matmul or "CUDA_ERROR_ILLEGAL_ADDRESS" in matmul
    for line in (*driver_calls, matmul):
        assert "The GPU context of this process is lost" in line
        assert "Restart the process to use the GPU again" in line


CACHED = r"""
import sys, numpy as np, pyctk.driver as cuda
from pyctk._cuda import loader as _loader
from pyctk.compiler import SourceModule
module = SourceModule(sys.argv[1], cache_dir=sys.argv[2])
x = np.arange(8, dtype=np.int32); z = np.empty_like(x)
module.get_function("add")(cuda.In(x), cuda.In(x), cuda.Out(z), np.int32(8), block=(8, 1, 1))
maps = open("/proc/self/maps").read()
print(z.tolist() == (2 * x).tolist(), "libnvrtc" in maps,
      sorted(l.name for l in _loader.loaded_libraries()), module.target)
"""


def test_kernel_from_the_cache_in_a_fresh_process_without_nvrtc(tmp_path):
    compiled = subprocess.run(
        [sys.executable, "-c", CACHED, ADD, str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert compiled.returncode == 0, compiled.stderr
    assert "True True" in compiled.stdout  # the first process compiled: NVRTC was loaded
    loaded = subprocess.run(
        [sys.executable, "-c", CACHED, ADD, str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert loaded.returncode == 0, loaded.stderr
    result = loaded.stdout.split(maxsplit=2)
    assert result[:2] == ["True", "False"]  # right answer; NVRTC never mapped into the process
    assert "nvrtc" not in result[2]


def test_autoinit(tmp_path):
    done = run_python(
        "import pyctk.autoinit as a; a.context.synchronize(); "
        "print(a.device.name(), a.device == a.context.get_device())",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("True")


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_example_runs_and_checks_its_output(example, tmp_path):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / example)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={**os.environ, "PYCTK_CACHE_DIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("OK"), done.stdout


def test_c_example_compiles_and_launches_a_kernel_at_run_time(tmp_path):
    done = nvrtc_c_example.run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("OK")
