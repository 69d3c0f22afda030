"""Your own CUDA kernels, compiled at run time with NVRTC from NVIDIA's pip wheel: PyCUDA's
``pycuda.compiler``, with no CUDA toolkit.

>>> import numpy as np                                   # doctest: +GPU
>>> import pyctk.driver as cuda
>>> from pyctk.compiler import SourceModule             # was: from pycuda.compiler import ...
>>> mod = SourceModule('''
... __global__ void twice(float *x, int n) {
...     int i = blockIdx.x * blockDim.x + threadIdx.x;
...     if (i < n) x[i] *= 2;
... }''')
>>> x = np.arange(4, dtype=np.float32)
>>> mod.get_function("twice")(cuda.InOut(x), np.int32(4), block=(256, 1, 1))
>>> x
array([0., 2., 4., 6.], dtype=float32)

NVRTC is optional: ``pip install "pyctk-cu12[nvrtc]"`` (or ``pyctk-cu13[nvrtc]``) adds it
and the CUDA headers kernels include (``cuda_fp16.h``, ``cuda_bf16.h``, ``cuda/std/...``),
which NVRTC finds with no setting. Kernels are compiled for the current GPU: SASS
(CUBIN) when NVRTC knows its architecture, else PTX that the driver compiles; and kept
in an on-disk cache (:func:`clear_cache` empties it), so a later process loads them
without NVRTC. :func:`compile` makes CUBIN or PTX bytes for a named architecture with no
GPU at all.

PyCUDA's arguments keep their meaning: ``options`` are nvcc's (translated for NVRTC:
host-only ones such as ``-O3`` are dropped with a warning), :data:`DEFAULT_NVCC_FLAGS`
(``$PYCTK_DEFAULT_NVCC_FLAGS``, else ``$PYCUDA_DEFAULT_NVCC_FLAGS``) stands in for
``options=None``, ``arch``/``code`` are nvcc's ``-arch``/``-code``, ``keep=True`` keeps the
files, and ``nvcc`` is accepted and ignored. :class:`DynamicModule` and
:class:`DynamicSourceModule` link relocatable device code and the device runtime (dynamic
parallelism) with nvJitLink: ``pip install "pyctk-cu12[nvrtc,nvjitlink]"``.
"""

import sys
import types

from ._cuda.driver_errors import CompileError
from ._pycuda.kernels import source_modules
from ._pycuda.kernels.source_modules import (
    DynamicModule,
    DynamicSourceModule,
    SourceModule,
    clear_cache,
    compile,
    nvrtc_version,
    supported_archs,
)

__all__ = [
    "SourceModule",
    "DynamicModule",
    "DynamicSourceModule",
    "compile",
    "CompileError",
    "DEFAULT_NVCC_FLAGS",
    "clear_cache",
    "nvrtc_version",
    "supported_archs",
]

DEFAULT_NVCC_FLAGS: list[str]  # (an annotation only: the module's property below holds the list)
"""The nvcc options of every compile given ``options=None`` (PyCUDA's ``DEFAULT_NVCC_FLAGS``).

The kernels that :mod:`pyctk.gpuarray`, :mod:`pyctk.elementwise`, :mod:`pyctk.reduction`,
:mod:`pyctk.scan` and :mod:`pyctk.curandom` write are compiled with it too, so it is the
place for an option they all need. It starts as ``$PYCTK_DEFAULT_NVCC_FLAGS``, else
``$PYCUDA_DEFAULT_NVCC_FLAGS``, split at whitespace (PyCUDA reads only the latter), else
empty. Change the list in place (``DEFAULT_NVCC_FLAGS.append("-use_fast_math")``) or assign
a new one, as in PyCUDA; it is shared by every package in the process. The options are
nvcc's, translated for NVRTC as ``options`` are (see :class:`SourceModule`). A change takes
effect at the next compile: kernels compiled before it stay as they are.
"""


class _CompilerModule(types.ModuleType):
    """``DEFAULT_NVCC_FLAGS`` is the list every compile with ``options=None`` uses (kernels
    of ``pyctk.gpuarray`` included), changed in place or assigned anew, as in PyCUDA."""

    @property
    def DEFAULT_NVCC_FLAGS(self) -> list[str]:  # noqa: N802 - PyCUDA's name
        """The list ``source_modules`` compiles ``options=None`` with (assigning replaces it there)."""
        return source_modules.DEFAULT_NVCC_FLAGS

    @DEFAULT_NVCC_FLAGS.setter
    def DEFAULT_NVCC_FLAGS(self, flags: list[str]) -> None:  # noqa: N802
        source_modules.DEFAULT_NVCC_FLAGS = flags


sys.modules[__name__].__class__ = _CompilerModule
