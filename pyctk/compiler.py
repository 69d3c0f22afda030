"""Your own CUDA kernels, compiled at run time with NVRTC from NVIDIA's pip wheel: PyCUDA's
``pycuda.compiler``, with no CUDA toolkit.

>>> import numpy as np
>>> import pyctk.driver as cuda
>>> from pyctk.compiler import SourceModule
>>> mod = SourceModule('''
... __global__ void twice(float *x, int n) {
...     int i = blockIdx.x * blockDim.x + threadIdx.x;
...     if (i < n) x[i] *= 2;
... }''')                                                          # doctest: +SKIP
>>> x = np.arange(4, dtype=np.float32)
>>> mod.get_function("twice")(cuda.InOut(x), np.int32(4), block=(256, 1, 1))   # doctest: +SKIP
>>> x                                                              # doctest: +SKIP
array([0., 2., 4., 6.], dtype=float32)

NVRTC is optional: ``pip install "pyctk-cu12[nvrtc]"`` (or ``pyctk-cu13[nvrtc]``) adds it
and the CUDA headers kernels include (``cuda_fp16.h``, ``cuda_bf16.h``, ``cuda/std/...``),
which NVRTC finds with no setting. Kernels are compiled for the current GPU: SASS
(CUBIN) when NVRTC knows its architecture, else PTX that the driver compiles; and kept
in an on-disk cache (``pyctk._pycuda.compiling.kernel_cache``), so a later process loads them without
NVRTC. ``compile`` makes CUBIN or PTX bytes for a named architecture with no GPU at all.

PyCUDA's arguments keep their meaning: ``options`` are nvcc's (translated for NVRTC by
``pyctk._pycuda.compiling.nvcc_options``: host-only ones such as ``-O3`` are dropped with a warning),
``DEFAULT_NVCC_FLAGS`` (``$PYCTK_DEFAULT_NVCC_FLAGS``, else ``$PYCUDA_DEFAULT_NVCC_FLAGS``)
stands in for ``options=None``, ``arch``/``code`` are nvcc's ``-arch``/``-code``, ``keep=True``
keeps the files, and ``nvcc`` is accepted and ignored. ``DynamicModule`` and
``DynamicSourceModule`` link relocatable device code and the device runtime (dynamic
parallelism) with nvJitLink: ``pip install "pyctk-cu12[nvrtc,nvjitlink]"``.
"""

import sys
import types

from ._cuda.driver_errors import CompileError
from ._pycuda.kernels import source_modules
from ._pycuda.kernels.source_modules import (DynamicModule, DynamicSourceModule, SourceModule, clear_cache,
                                             compile, nvrtc_version, supported_archs)

__all__ = ["SourceModule", "DynamicModule", "DynamicSourceModule", "compile", "CompileError",
           "DEFAULT_NVCC_FLAGS", "clear_cache", "nvrtc_version", "supported_archs"]


class _CompilerModule(types.ModuleType):
    """``DEFAULT_NVCC_FLAGS`` is the list every compile with ``options=None`` uses (kernels
    of ``pyctk.gpuarray`` included), changed in place or assigned anew, as in PyCUDA."""

    @property
    def DEFAULT_NVCC_FLAGS(self) -> list[str]:  # noqa: N802 - PyCUDA's name
        return source_modules.DEFAULT_NVCC_FLAGS

    @DEFAULT_NVCC_FLAGS.setter
    def DEFAULT_NVCC_FLAGS(self, flags: list[str]) -> None:  # noqa: N802
        source_modules.DEFAULT_NVCC_FLAGS = flags


sys.modules[__name__].__class__ = _CompilerModule
