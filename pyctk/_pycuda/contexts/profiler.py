"""Profiler control (PyCUDA's ``start_profiler``, ``stop_profiler``, ``initialize_profiler``):
which stretch of a program the profiling tool that runs it (Nsight Systems' ``nsys
--capture-range=cudaProfilerApi``, Nsight Compute's ``ncu --profile-from-start off``)
records. Without such a tool they do nothing.
"""

from __future__ import annotations

import enum

from ..._cuda import cudart, driver_errors

_NOT_SUPPORTED = 801  # CUDA_ERROR_NOT_SUPPORTED


class profiler_output_mode(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """``CUoutput_mode`` (cudaProfiler.h), of ``initialize_profiler``."""

    KEY_VALUE_PAIR = 0
    CSV = 1


def start_profiler() -> None:
    """Start recording (``cudaProfilerStart``), in the current context."""
    cudart.call("cudaProfilerStart")


def stop_profiler() -> None:
    """Stop recording (``cudaProfilerStop``) and flush what was recorded."""
    cudart.call("cudaProfilerStop")


def initialize_profiler(config_file: str, output_file: str, output_mode: int) -> None:
    """Refused as CUDA refuses it since CUDA 12 (``cuProfilerInitialize``: the command-line
    profiler it configured is gone): pyctk.driver.RuntimeError, CUDA_ERROR_NOT_SUPPORTED."""
    raise driver_errors.exception(
        _NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
        "CUDA 12 removed the command-line profiler that cuProfilerInitialize configured; run the "
        "program under Nsight Systems (nsys profile --capture-range=cudaProfilerApi) or Nsight "
        "Compute, and mark what to record with start_profiler() and stop_profiler()",
        "initialize_profiler")
