"""libgpumatmul's messages for bad calls and a missing driver, through the C API itself (as a
C caller sees them: status and gpumatmul_last_error_message), with no GPU needed."""

from __future__ import annotations

import ctypes

import pytest

from pyctk._cuda import library as _library
from pyctk._cuda import status as _status


def called(name: str, *args) -> tuple[int, str]:
    """(status, message) of one C call."""
    lib = _library.library()
    code = getattr(lib, name)(*args)
    return code, lib.gpumatmul_last_error_message().decode()


@pytest.mark.parametrize("capability", [(-3, -3), (0, 0), (9, -1), (9, 10), (-1, 5)])
def test_a_compute_capability_that_is_none_is_an_invalid_argument(capability):
    index = ctypes.c_int(-7)
    code, message = called("gpumatmul_kernel_image_select", *capability, ctypes.byref(index))
    assert code == _status.INVALID_ARGUMENT
    assert f"{capability[0]}.{capability[1]} is no compute capability" in message
    assert index.value == -7  # left alone


def test_host_multi_names_a_null_array_of_contexts():
    code, message = called("gpumatmul_gemm_host_multi", None, 1, None, None, None, None, None)
    assert code == _status.INVALID_ARGUMENT
    assert message.startswith("contexts is NULL")


@pytest.mark.parametrize("count", [0, -1, 65])
def test_host_multi_names_a_count_out_of_range(count):
    code, message = called("gpumatmul_gemm_host_multi", None, count, None, None, None, None, None)
    assert code == _status.INVALID_ARGUMENT
    assert message == f"count is {count}: give 1 to 64 contexts, one for each GPU"


def test_create_without_a_driver_names_libcuda_and_the_fix(needs_no_driver):
    context = ctypes.c_void_p()
    code, message = called("gpumatmul_create", ctypes.byref(context), 0)
    assert code == _status.NO_DRIVER
    assert "the dynamic linker found no libcuda.so.1" in message
    assert "Install the NVIDIA driver" in message and "nvidia-smi" in message
    assert context.value is None
