"""Profiler control (PyCUDA's ``start_profiler``, ``stop_profiler``, ``initialize_profiler``):
which stretch of a program the profiling tool that runs it (Nsight Systems' ``nsys
--capture-range=cudaProfilerApi``, Nsight Compute's ``ncu --profile-from-start off``)
records. Without such a tool they do nothing.
"""

from __future__ import annotations

import enum

from ..._cuda import constants as cu
from ..._cuda import cudart, driver_errors


class profiler_output_mode(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """The output format of :func:`initialize_profiler`: ``CUoutput_mode`` (cudaProfiler.h).

    Kept for programs that name it: CUDA 12 removed the profiler it configured.
    """

    # Written here, not generated (pyctk._cuda.constants): no wheel of the build has cudaProfiler.h.
    KEY_VALUE_PAIR = 0  #: ``name value`` lines.
    CSV = 1  #: Comma-separated values.


def start_profiler() -> None:
    """Start the recording of the profiler the program runs under (``cudaProfilerStart``).

    Nsight Systems records from here with ``nsys profile --capture-range=cudaProfilerApi``,
    Nsight Compute with ``ncu --profile-from-start off``. Without a profiler it does nothing.

    Examples
    --------
    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> cuda.start_profiler()
    >>> a_gpu = cuda.mem_alloc(1 << 20); cuda.memset_d8(a_gpu, 0, 1 << 20)   # what is recorded
    >>> cuda.stop_profiler()
    """
    cudart.call("cudaProfilerStart")


def stop_profiler() -> None:
    """Stop the profiler's recording (``cudaProfilerStop``) and flush what was recorded.

    See :func:`start_profiler`. Without a profiler it does nothing.
    """
    cudart.call("cudaProfilerStop")


def initialize_profiler(config_file: str, output_file: str, output_mode: int) -> None:
    """Refused, as CUDA refuses it since CUDA 12: the command-line profiler it configured is gone.

    Run the program under Nsight Systems or Nsight Compute instead, and mark what to record
    with :func:`start_profiler` and :func:`stop_profiler`.

    Parameters
    ----------
    config_file, output_file : str
        PyCUDA's; unused.
    output_mode : profiler_output_mode
        PyCUDA's; unused.

    Raises
    ------
    pyctk.driver.RuntimeError
        Always: ``CUDA_ERROR_NOT_SUPPORTED``, saying what to use instead.

    Examples
    --------
    >>> import pyctk.driver as cuda
    >>> cuda.initialize_profiler("config.txt", "out.csv", cuda.profiler_output_mode.CSV)
    Traceback (most recent call last):
        ...
    pyctk.driver.RuntimeError: initialize_profiler failed: CUDA_ERROR_NOT_SUPPORTED: CUDA 12 removed ...
    """
    raise driver_errors.exception(
        cu.CUDA_ERROR_NOT_SUPPORTED,
        "CUDA_ERROR_NOT_SUPPORTED",
        "CUDA 12 removed the command-line profiler that cuProfilerInitialize configured; run the "
        "program under Nsight Systems (nsys profile --capture-range=cudaProfilerApi) or Nsight "
        "Compute, and mark what to record with start_profiler() and stop_profiler()",
        "initialize_profiler",
    )
