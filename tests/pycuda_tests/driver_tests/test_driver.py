"""pyctk.driver on the CPU: what works with no GPU, and what the error for each CUDA error is.

Covered: importing pyctk.driver, pyctk.compiler loads no CUDA library; with no driver,
every call says so with the fix; the CUresult -> exception table (sticky errors say the
context is lost); the driver prototypes against cuda.h of the runtime wheel; the runtime
symbols used to reach the driver, against the oldest cudart exports; launch dimensions,
parameter packing and host buffers; and examples/nvrtc_c/vector_add.c, built from the wheels
as its comment says, stopping cleanly with no driver.
"""

from __future__ import annotations

import ctypes
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyctk
import pyctk.driver as cuda
from pyctk import compiler
from pyctk._build_config import CUDA_MAJOR
from pyctk._cuda import driver_api as _driver_api
from pyctk._cuda import driver_errors as _driver_errors
from pyctk._pycuda.compiling import headers as _cuda_headers
from pyctk._pycuda.kernels import modules as _driver_modules
from pyctk._pycuda.kernels.kernel_args import Param
from pyctk._pycuda.memory import device as _driver_memory
from support import nvrtc_c_example
from support.paths import EXPORTS


def test_imports_load_no_cuda_library(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pyctk.driver, pyctk.compiler, pyctk._cuda.loader as l; "
            "maps = open('/proc/self/maps').read(); "
            "print(l.loaded_libraries(), 'libcudart' in maps, 'libnvrtc' in maps, 'libcuda.so' in maps)",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert done.stdout.split() == ["[]", "False", "False", "False"]


@pytest.mark.parametrize(
    "call",
    [
        lambda: cuda.mem_alloc(16),
        lambda: cuda.Device.count(),
        lambda: cuda.Stream(),
        lambda: cuda.Event(),
        lambda: cuda.init(),
        lambda: cuda.get_driver_version(),
        lambda: cuda.Context.synchronize(),
        lambda: cuda.module_from_buffer(b"// no PTX"),
        lambda: compiler.SourceModule("__global__ void k() {}", cache_dir=False),
        lambda: cuda.start_profiler(),
    ],
)
def test_without_a_driver_each_call_says_so(needs_no_driver, call):
    with pytest.raises(pyctk.NoDriverError, match="Install the NVIDIA driver"):
        call()


def test_get_version_is_the_runtime_wheels_with_no_driver_needed():
    major, minor, patch = cuda.get_version()
    assert (major, patch) == (CUDA_MAJOR, 0)
    assert f"{major}.{minor}" == pyctk.info()["runtime_version"]


def test_autoinit_without_a_driver(needs_no_driver, tmp_path):
    done = subprocess.run([sys.executable, "-c", "import pyctk.autoinit"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1 and "pyctk.NoDriverError: " in done.stderr
    assert "Install the NVIDIA driver" in done.stderr


@pytest.mark.parametrize(
    "code, name, kind",
    [
        (1, "CUDA_ERROR_INVALID_VALUE", cuda.LogicError),
        (2, "CUDA_ERROR_OUT_OF_MEMORY", cuda.MemoryError),
        (400, "CUDA_ERROR_INVALID_HANDLE", cuda.LogicError),
        (701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", cuda.LaunchError),
        (700, "CUDA_ERROR_ILLEGAL_ADDRESS", cuda.ContextLostError),
        (710, "CUDA_ERROR_ASSERT", cuda.ContextLostError),
        (716, "CUDA_ERROR_MISALIGNED_ADDRESS", cuda.ContextLostError),
        (719, "CUDA_ERROR_LAUNCH_FAILED", cuda.ContextLostError),
        (209, "CUDA_ERROR_NO_BINARY_FOR_GPU", cuda.RuntimeError),
    ],
)
def test_error_classes(code, name, kind):
    error = _driver_errors.exception(code, name, "what CUDA says", "launching k")
    assert type(error) is kind and isinstance(error, cuda.Error) and isinstance(error, pyctk.CudaError)
    assert (error.code, error.status) == (code, name)
    assert str(error).startswith(f"launching k failed: {name}: what CUDA says")
    lost = "The GPU context of this process is lost" in str(error)
    assert lost == (kind is cuda.ContextLostError)
    if lost:
        assert "Restart the process to use the GPU again" in str(error)
        assert isinstance(error, cuda.LaunchError) and isinstance(error, pyctk.ContextLostError)


def test_memory_error_is_every_kind_of_memory_error():
    error = _driver_errors.exception(2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory", "x")
    assert isinstance(error, MemoryError) and isinstance(error, pyctk.OutOfMemoryError)


def test_initialize_profiler_is_refused_as_cuda_12_refuses_it_saying_what_instead():
    assert [m.name for m in cuda.profiler_output_mode] == ["KEY_VALUE_PAIR", "CSV"]
    with pytest.raises(cuda.RuntimeError, match="CUDA_ERROR_NOT_SUPPORTED.*start_profiler") as info:
        cuda.initialize_profiler("counters.cfg", "out.csv", cuda.profiler_output_mode.CSV)
    assert info.value.code == 801


def test_disable_peer_access_takes_pycudas_flags_which_must_be_0():
    with pytest.raises(ValueError, match="flags must be 0"):
        cuda.Context.disable_peer_access(None, flags=1)


def test_compile_error_is_pycudas_name_too_and_a_driver_error_as_there():
    assert cuda.CompileError is compiler.CompileError
    assert issubclass(cuda.CompileError, cuda.Error)  # `except cuda.Error` catches it, as in PyCUDA


def _declarations(header: str) -> dict[str, int]:
    """cuda.h's first declaration of each driver function -> its number of arguments."""
    found: dict[str, int] = {}
    for name, arguments in re.findall(r"CUresult CUDAAPI (cu\w+)\(([^;]*?)\);", header):
        arguments = arguments.strip()
        found.setdefault(name, 0 if arguments in ("", "void") else arguments.count(",") + 1)
    return found


def test_driver_prototypes_match_cuda_h():
    header = Path(_cuda_headers.header_folders()[0].path, "cuda.h").read_text()
    declared = _declarations(header)
    for name, argtypes in _driver_api._PROTOTYPES.items():
        assert declared.get(name) == len(argtypes), name


@pytest.mark.parametrize("version", [_driver_api.ABI_VERSION, 12999])
def test_driver_prototypes_are_the_abi_the_query_returns(version):
    """cudaTypedefs.h has each entry point's signature by version (CUDA 13's cuCtxSynchronize
    takes a context); CUDA 13 asks for ABI_VERSION, a CUDA 12 runtime gets its own 12.x."""
    header = Path(_cuda_headers.header_folders()[0].path, "cudaTypedefs.h").read_text()
    for name, argtypes in _driver_api._PROTOTYPES.items():
        versions = {
            int(v): 0 if a.strip() in ("", "void") else a.count(",") + 1
            for v, a in re.findall(rf"typedef CUresult \(CUDAAPI \*PFN_{name}_v(\d+)\)\(([^;]*?)\);", header)
        }
        served = max(v for v in versions if v <= version)
        assert versions[served] == len(argtypes), (name, served)


def test_runtime_entry_point_query_is_in_the_oldest_cudart():
    query = _driver_api._ENTRY_POINT_QUERY[CUDA_MAJOR][0]
    exported = (EXPORTS / f"cudart-{CUDA_MAJOR}.0.txt").read_text().splitlines()
    assert query in exported


@pytest.mark.parametrize(
    "value, expected",
    [
        ((256, 1, 1), (256, 1, 1)),
        ((4, 2), (4, 2, 1)),
        (64, (64, 1, 1)),
        ([2, 3, 4], (2, 3, 4)),
        ((np.int64(8),), (8, 1, 1)),
        ((0,), (0, 1, 1)),
        ((2**32 - 1, 1), (2**32 - 1, 1, 1)),
    ],
)
def test_dimensions(value, expected):
    assert _driver_modules._dimensions(value, "grid") == expected


@pytest.mark.parametrize(
    "value, error",
    [
        (None, TypeError),
        ((1, 2, 3, 4), TypeError),
        ((), TypeError),
        ((1.0, 1), TypeError),
        ((True,), TypeError),
        ((-1, 1), ValueError),
        ((2**32,), ValueError),
    ],
)
def test_bad_dimensions(value, error):
    with pytest.raises(error, match="block"):
        _driver_modules._dimensions(value, "block")


@pytest.fixture
def prepared_kernel(monkeypatch):
    """A Function of known parameters (a pointer, an int, a float) whose launch records its call."""
    calls = []
    monkeypatch.setattr(
        _driver_modules.Function, "__call__", lambda self, *args, **kwargs: calls.append((args, kwargs)) or 0.25
    )
    kernel = _driver_modules.Function(None, 0, "k", [Param("int", 8), Param("int", 4), Param("float", 4)])
    return kernel, calls


def test_prepared_calls_convert_their_arguments(prepared_kernel):
    kernel, calls = prepared_kernel
    memory = object()  # device memory passes as it is: the launch takes its address
    kernel.prepare("Pif").prepared_call((2, 1), (32, 1, 1), 0x1000, 5, 2.5)
    kernel.prepare([np.intp, np.int32, np.float32]).prepared_async_call((2,), (32,), "s", memory, 7, 1)
    seconds = kernel.prepare("Pif", block=(64, 1, 1), shared=16).prepared_timed_call((1,), None, memory, 1, 1)
    (first, launch), (second, async_launch), (third, timed) = calls
    assert [type(v) for v in first] == [np.uintp, np.int32, np.float32] and first == (0x1000, 5, 2.5)
    assert launch == dict(block=(32, 1, 1), grid=(2, 1), shared=0, stream=None, time_kernel=False)
    assert second[0] is memory and [type(v) for v in second[1:]] == [np.int32, np.float32]
    assert async_launch["stream"] == "s"
    assert (timed["block"], timed["shared"], timed["time_kernel"]) == ((64, 1, 1), 16, True)
    assert seconds() == 0.25


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda k: k.prepared_call((1,), (1,), 0, 1, 1.0), cuda.LogicError, "prepare"),
        (lambda k: k.prepare("Pi"), TypeError, "3 parameters, but 2 argument types"),
        (lambda k: k.prepare("PiS"), TypeError, "not a type a kernel argument has"),
        (lambda k: k.prepare(["P", "i", object()]), TypeError, "not an argument type"),
        (lambda k: k.prepare("Pif").prepared_call((1,), (1,), 0, 1), TypeError, "prepared for 3 arguments, got 2"),
        (lambda k: k.prepare("Pif", texrefs=[object()]), TypeError, "texture references were removed"),
        (lambda k: k.prepare("Pif").prepared_call((1,), (1,), 0, 2**40, 1.0), OverflowError, "int32"),
    ],
)
def test_prepared_call_errors(prepared_kernel, call, error, match):
    with pytest.raises(error, match=match):
        call(prepared_kernel[0])


def test_pack_points_each_parameter_at_its_bytes():
    values = [b"\x01", (7).to_bytes(8, "little"), np.float32(2.5).tobytes()]
    pointers, keep = _driver_modules._pack(values)
    addresses = [pointers[i] for i in range(3)]
    assert all(address % 16 == 0 for address in addresses)
    assert [ctypes.string_at(a, len(v)) for a, v in zip(addresses, values)] == values
    assert _driver_modules._pack([]) == (None, None)


def test_host_buffers():
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert _driver_memory.host_buffer(array, writable=True) is array
    assert _driver_memory.host_buffer(np.asfortranarray(array), writable=True).flags.f_contiguous
    assert _driver_memory.host_buffer(b"abcd", writable=False).nbytes == 4
    data = bytearray(8)
    assert (
        _driver_memory.host_buffer(memoryview(data).cast("i"), writable=True).ctypes.data
        == np.frombuffer(data, np.uint8).ctypes.data
    )
    with pytest.raises(ValueError, match="contiguous"):
        _driver_memory.host_buffer(array[:, ::2], writable=False)
    with pytest.raises(ValueError, match="read-only"):
        _driver_memory.host_buffer(b"abcd", writable=True)
    with pytest.raises(TypeError):
        _driver_memory.host_buffer([1, 2], writable=False)


def test_in_makes_contiguous_copies_out_refuses():
    strided = np.arange(10.0)[::2]
    assert cuda.In(strided).array.flags.c_contiguous
    assert np.array_equal(cuda.In([1, 2, 3]).array, [1, 2, 3])
    with pytest.raises(ValueError, match="contiguous"):
        cuda.Out(strided)
    with pytest.raises(ValueError, match="read-only"):
        cuda.InOut(np.frombuffer(b"abcdabcd", np.float32))


def test_c_example_builds_from_the_wheels_and_reports_no_driver(needs_no_driver, tmp_path):
    done = nvrtc_c_example.run(tmp_path)
    assert done.returncode == 1 and "no usable CUDA driver" in done.stderr, done.stderr
