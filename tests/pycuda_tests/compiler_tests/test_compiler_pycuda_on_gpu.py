"""PyCUDA's pycuda.compiler and JIT linking on a GPU: what was compiled and linked, launched.

Covered: SourceModule called positionally with keep=, arch= and code= (SASS for this GPU
made from an older architecture's PTX), its __CUDA_ARCH__ and binary version read back;
a kernel calling a __device__ function and variable of another source, linked with
Linker for this GPU and by DynamicModule; a dynamic-parallelism kernel (a kernel that
launches a kernel) through DynamicSourceModule; module_from_buffer's JIT options and
message handler, for PTX that loads and PTX that does not.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import pyctk.driver as cuda
from pyctk import compiler
from pyctk.compiler import DynamicModule, DynamicSourceModule, SourceModule
from support.linked_sources import HELPERS, KERNELS

pytestmark = pytest.mark.gpu

ARCH_SEEN = """
__device__ int arch_seen = __CUDA_ARCH__;
__global__ void twice(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2;
}"""
DYNAMIC = """
__global__ void child(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2 * x[i] + 1;
}
__global__ void parent(int *x, int n) {
    if (threadIdx.x == 0) child<<<(n + 127) / 128, 128>>>(x, n);
}"""


def this_gpu() -> tuple[int, int]:
    return cuda.Context.get_device().compute_capability()


def read_int(module, name: str) -> int:
    address, size = module.get_global(name)
    value = np.zeros(1, np.int32)
    assert size == 4
    cuda.memcpy_dtoh(value, address)
    return int(value[0])


def check_twice(function) -> None:
    x = np.arange(1000, dtype=np.float32)
    function(cuda.InOut(x), np.int32(x.size), block=(256, 1, 1), grid=(4, 1))
    np.testing.assert_array_equal(x, 2 * np.arange(1000, dtype=np.float32))


def test_source_module_keep_arch_and_code_positionally(capsys):
    major, minor = this_gpu()
    # SASS for this GPU, made (by nvJitLink) from the PTX of sm_75, the oldest both majors know.
    module = SourceModule(ARCH_SEEN, "nvcc", None, True, False, "compute_75", f"sm_{major}{minor}", False)
    folder = Path(re.fullmatch(r"\*\*\* compiler output in (.+)\n", capsys.readouterr().out)[1])
    try:
        assert (folder / "kernel.cubin").read_bytes()[:4] == b"\x7fELF"
    finally:
        shutil.rmtree(folder)
    assert module.target == f"sm_{major}{minor}" and module.module is module
    twice = module.get_function("twice")
    check_twice(twice)
    assert read_int(module, "arch_seen") == 750  # __CUDA_ARCH__ of arch=
    assert twice.get_attribute(cuda.function_attribute.BINARY_VERSION) == 10 * major + minor


def test_source_module_for_this_gpus_architecture():
    major, minor = this_gpu()
    module = SourceModule(ARCH_SEEN, arch=f"sm_{major}{minor}", cache_dir=False)
    check_twice(module.get_function("twice"))
    assert read_int(module, "arch_seen") == 100 * major + 10 * minor


def test_linker_links_a_device_function_of_another_source():
    calls = []
    linker = cuda.Linker(lambda *report: calls.append(report))  # for this GPU
    for name, source in (("helpers.ptx", HELPERS), ("kernels.ptx", KERNELS)):
        linker.add_data(
            compiler.compile(source, options=["-rdc=true"], target="ptx", cache_dir=False),
            cuda.jit_input_type.PTX,
            name,
        )
    module = linker.link_module()
    assert [success for success, _, _ in calls] == [True]
    x = np.arange(500, dtype=np.float32)
    module.get_function("apply")(cuda.InOut(x), np.int32(x.size), block=(128, 1, 1), grid=(4, 1))
    np.testing.assert_array_equal(x, 3 * np.arange(500, dtype=np.float32))
    assert read_int(module, "calls") == 500


def test_dynamic_module_links_sources_for_this_gpu():
    module = (
        DynamicModule(cache_dir=False)
        .add_source(HELPERS, nvcc_options=["-rdc=true"])
        .add_source(KERNELS, nvcc_options=["-rdc=true"])
        .link()
    )
    x = np.ones(64, dtype=np.float32)
    module.get_function("apply")(cuda.InOut(x), np.int32(x.size), block=(64, 1, 1))
    np.testing.assert_array_equal(x, np.full(64, 3, np.float32))
    assert read_int(module, "calls") == 64


def test_dynamic_parallelism_through_dynamic_source_module():
    module = DynamicSourceModule(DYNAMIC, cache_dir=False)
    x = np.arange(1000, dtype=np.int32)
    x_gpu = cuda.to_device(x)
    module.get_function("parent")(x_gpu, np.int32(x.size), block=(32, 1, 1))
    cuda.Context.synchronize()  # the parent grid completes when its children have
    np.testing.assert_array_equal(cuda.from_device(x_gpu, x.shape, x.dtype), 2 * x + 1)


def test_module_from_buffer_calls_the_message_handler_with_the_jit_logs():
    calls = []
    ptx = compiler.compile(ARCH_SEEN, arch="compute_75", target="ptx", cache_dir=False)
    module = cuda.module_from_buffer(
        ptx,
        [(cuda.jit_option.MAX_REGISTERS, 32), (cuda.jit_option.LOG_VERBOSE, 1)],
        lambda *report: calls.append(report),
    )
    ((success, info_log, error_log),) = calls
    assert success is True and isinstance(info_log, str) and error_log == ""
    check_twice(module.get_function("twice"))
    assert read_int(module, "arch_seen") == 750


def test_module_from_buffer_takes_a_jit_target_and_fallback():
    """PTX for compute_75 made into code for the device's own architecture, named by jit_target."""
    major, minor = cuda.Device(0).compute_capability()
    ptx = compiler.compile(ARCH_SEEN, arch="compute_75", target="ptx", cache_dir=False)
    module = cuda.module_from_buffer(
        ptx,
        [
            (cuda.jit_option.TARGET, cuda.jit_target[f"COMPUTE_{10 * major + minor}"]),
            (cuda.jit_option.FALLBACK_STRATEGY, cuda.jit_fallback.PREFER_PTX),
        ],
    )
    check_twice(module.get_function("twice"))
    if major * 10 + minor != 75:  # code for another GPU: the load, or at the latest its use, fails
        with pytest.raises(cuda.Error, match="CUDA_ERROR"):
            other = cuda.module_from_buffer(ptx, [(cuda.jit_option.TARGET, cuda.jit_target.COMPUTE_75)])
            check_twice(other.get_function("twice"))


def test_module_from_buffer_reports_ptx_that_does_not_compile():
    """CUDA loads lazily and returns success for PTX its JIT refused (the error would come at
    first use), but writes the error log at once: the load fails there, with the log."""
    calls = []
    bad = b".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry bad() { not.an.instruction; }\n"
    with pytest.raises(cuda.Error, match="CUDA_ERROR_INVALID_PTX") as info:
        cuda.module_from_buffer(bad, message_handler=lambda *report: calls.append(report))
    ((success, _, error_log),) = calls
    assert success is False and "Unknown modifier" in error_log and error_log.strip() in str(info.value)
