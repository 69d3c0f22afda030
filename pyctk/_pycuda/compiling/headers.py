"""The CUDA headers that run-time kernels may include, from NVIDIA's pip wheels.

``cuda_fp16.h``, ``cuda_bf16.h`` and the rest of the runtime's device headers ship in the
runtime wheel pyctk already requires; ``cuda/std/...``, ``cuda/...``, ``cub`` and ``nv/target``
in the CCCL wheel that ``pyctk-cuN[nvrtc]`` adds; ``curand_kernel.h`` (cuRAND's device API)
in the cuRAND wheel that ``pyctk-cuN[curand]`` adds. Their folders are found on ``sys.path``
in the loader's order (``pyctk._cuda.loader.site_dirs``: the active environment first) and
passed to NVRTC as include paths, so ``#include <cuda_fp16.h>`` works with no toolkit.

NVRTC has no C library headers, though kernels include them all the time: it declares
``printf``, ``malloc``, ``free``, ``memcpy``, ``memset``, ``assert`` and the math functions
itself, and has no ``uint32_t``, ``INT_MAX``, ``FLT_MAX`` or ``M_PI``. pyctk ships small
``stdio.h``, ``stdlib.h``, ``assert.h``, ``string.h``, ``stddef.h``, ``stdbool.h``, ``math.h``,
``stdint.h``, ``limits.h`` and ``float.h``, and C++'s ``<cstdio>`` ... ``<cmath>``, which add
the names to ``std`` (``LIBC_HEADERS``), that let such includes compile and define those,
with glibc's types and values on LP64 Linux; NVRTC searches them last, so
a header of the kernel's own ``include_dirs`` or of NVIDIA's wheels wins. Every source is
compiled after ``HOST_TYPES``, the ``uint``, ``ushort`` and ``ulong`` that nvcc's implicit
host headers define.

Each folder's *distribution* (its wheel's name and version, from its ``.dist-info``)
stands for the contents of every header in it: pip changes those files only with the
version, so the kernel cache keys on it instead of reading hundreds of headers.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import NamedTuple

from ..._build_config import CUDA_MAJOR
from ..._cuda import loader

LIBC_HEADERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libc")
HOST_TYPES = "pyctk-host-types.h"  # in LIBC_HEADERS: nvcc's implicit uint, ushort, ulong (see it)

# major -> the folders NVRTC searches, in order: (folder in site-packages, a header that
# proves it is there, the pip distribution that ships it).
HEADER_WHEELS = {
    12: [
        ("nvidia/cuda_runtime/include", "cuda_fp16.h", "nvidia-cuda-runtime-cu12"),
        ("nvidia/cuda_cccl/include", "cuda/std/type_traits", "nvidia-cuda-cccl-cu12"),
        ("nvidia/curand/include", "curand_kernel.h", "nvidia-curand-cu12"),
    ],
    # cuRAND's headers share the runtime's folder: a row of their own keys the cache on their wheel.
    13: [
        ("nvidia/cu13/include", "cuda_fp16.h", "nvidia-cuda-runtime"),
        ("nvidia/cu13/include/cccl", "cuda/std/type_traits", "nvidia-cuda-cccl"),
        ("nvidia/cu13/include", "curand_kernel.h", "nvidia-curand"),
    ],
}


class HeaderFolder(NamedTuple):
    path: str  # absolute
    pip_name: str  # "nvidia-cuda-cccl"
    distribution: str  # "nvidia_cuda_cccl-13.0.85": the wheel and version that wrote its files


def _distribution(site: str, pip_name: str) -> str:
    """The ``name-version`` of ``pip_name``'s .dist-info in ``site``; the folder's mtime if none."""
    prefix = pip_name.replace("-", "_") + "-"
    for entry in sorted(os.listdir(site)):
        if entry.startswith(prefix) and entry.endswith(".dist-info"):
            return entry[: -len(".dist-info")]
    return f"{pip_name} (no .dist-info in {site})"


@functools.cache
def _find(major: int, search_path: tuple[str, ...] | None) -> tuple[list[HeaderFolder], list[str]]:
    found, missing = [], []
    for folder, probe, pip_name in HEADER_WHEELS[major]:
        for site in loader.site_dirs(search_path):
            path = os.path.join(site, *folder.split("/"))
            if os.path.exists(os.path.join(path, *probe.split("/"))):
                found.append(HeaderFolder(path, pip_name, _distribution(site, pip_name)))
                break
        else:
            missing.append(f'{probe} ({pip_name}: pip install "{loader.pip_requirement(pip_name, major)}")')
    return found, missing


def header_folders(major: int = CUDA_MAJOR, search_path: Sequence[str] | None = None) -> list[HeaderFolder]:
    """The header folders of ``major``'s wheels that are installed, in search order."""
    return list(_find(major, None if search_path is None else tuple(search_path))[0])


def missing_headers(major: int = CUDA_MAJOR, search_path: Sequence[str] | None = None) -> list[str]:
    """For each header wheel not installed: its probe header and the pip command that adds it."""
    return list(_find(major, None if search_path is None else tuple(search_path))[1])
