"""PyCUDA's ``pycuda.characterize``: what the current context's GPU and this platform offer.

PyCUDA's tests and programs ask it before they use doubles or device-side stacks
(``has_double_support``, ``has_stack``) and for the size of a C type as the GPU's compiler
sees it (``sizeof``). Every GPU CUDA 12 and 13 run has both, so the first two answer from
the compute capability as PyCUDA's do, which keeps their meaning for a program that prints
them.
"""

from __future__ import annotations

import struct

import numpy as np

from ..contexts.default_context import context_dependent_memoize
from ..contexts.devices import Context
from ..memory.device import mem_alloc, memcpy_dtoh
from .source_modules import SourceModule

# (major, minor) from which a GPU has each feature: PyCUDA's thresholds.
_DOUBLES = (1, 3)
_STACK = (2, 0)


def platform_bits() -> int:
    """The bits of a pointer of this Python process: 64 on every platform pyctk runs on.

    >>> platform_bits()
    64
    """
    return struct.calcsize("P") * 8


def has_double_support() -> bool:
    """Whether the current context's GPU computes in double precision (compute capability
    1.3 and newer: every GPU CUDA 12 runs); where no context is current, device 0's.

    >>> has_double_support()                                       # doctest: +GPU
    True
    """
    return Context.get_device().compute_capability() >= _DOUBLES


def has_stack() -> bool:
    """Whether the current context's GPU has a call stack for device functions (compute
    capability 2.0 and newer: every GPU CUDA 12 runs); where no context is current, device 0's."""
    return Context.get_device().compute_capability() >= _STACK


def sizeof(type_name: str, preamble: str = "") -> int:
    """``sizeof(type_name)`` in device code, after ``preamble`` (where the type is defined),
    as the GPU's compiler computes it; kept per context.

    >>> sizeof("double2")                                          # doctest: +GPU
    16
    >>> sizeof("struct pair", "struct pair { int a; char b; };")
    8
    """
    if not isinstance(type_name, str) or not isinstance(preamble, str):
        raise TypeError(
            f"sizeof takes a C type's name and a preamble as str, not {type(type_name).__name__} "
            f"and {type(preamble).__name__}"
        )
    return _sizeof(type_name, preamble)


@context_dependent_memoize
def _sizeof(type_name: str, preamble: str) -> int:
    module = SourceModule(
        f'{preamble}\nextern "C" __global__ void pyctk_sizeof(unsigned long long *size)\n'
        f"{{ *size = sizeof({type_name}); }}\n",
        no_extern_c=True,
    )
    output = mem_alloc(8)
    module.get_function("pyctk_sizeof")(output, block=(1, 1, 1), grid=(1, 1))
    size = np.zeros(1, np.uint64)
    memcpy_dtoh(size, output)
    output.free()
    return int(size[0])
