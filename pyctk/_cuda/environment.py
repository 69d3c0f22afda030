"""The environment variables pyctk reads, and those the libraries it loads read: one table.

Written once, here: the documentation's table (docs/guide/environment.md, through
docs/_ext/environment_table.py) is made from ``VARIABLES``, ``python -m pyctk`` reports
which of them are set (:func:`set_variables`), and tests/cuda_tests/test_environment.py
checks that every variable pyctk's code reads is a row (and every row of pyctk's is read).
The texts are MyST Markdown, for the documentation page; links are relative to it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple

PYCTK = "pyctk"  # who reads a variable: pyctk itself, or a library it loads


class Variable(NamedTuple):  # not a dataclass: `import pyctk` imports this, and not dataclasses
    """One environment variable: what it changes, when it is read, and what setting it can do."""

    name: str
    changes: str
    read: str
    security: str  # what someone who sets it can do to the process: who must be trusted
    reader: str = PYCTK


_CODE_FROM_THE_CACHE = (
    "**code**: kernels are loaded from the cache and run on the GPU, so the cache must be yours "
    "alone: pyctk refuses a folder or entry of another user's, or that others can write "
    "([The cache trusts only its owner](kernels.md#the-cache-trusts-only-its-owner))"
)
_FLAGS = (
    "**code**: they change what every kernel compiled with `options=None` is compiled to (`-D` "
    "macros, `-include`, `-I` folders, optimisation), as a compiler's flags do"
)
_LIBRARIES_FROM_THERE = (
    "**code**: libraries are loaded from there (after the pip wheels, [below](#how-libraries-are-found)) "
    "and run in the process, and `libcudadevrt.a` is linked into kernels from there: it must name a "
    "toolkit you trust. The loader takes only file names of pyctk's CUDA major, by absolute path, never "
    "an unversioned `libcudart.so`"
)

VARIABLES: tuple[Variable, ...] = (
    Variable(
        "PYCTK_DEBUG_LOAD",
        "set (and not `0`): every step of finding and loading a library is logged on stderr, lines "
        "starting `pyctk.load:`; so is the hand-over from an unbuilt source tree to the installed pyctk",
        "at each step",
        "none: it logs, and the log names files and folders",
    ),
    Variable(
        "PYCTK_DEVICE_MEMORY_LIMIT",
        "the GPU memory a product of host arrays may use on each GPU: bytes, or a number with `K`, "
        "`M`, `G` or `T` (powers of 1024; `512M`, `8G`, `8GiB`). Unset or empty: all that is free. "
        "It caps the size of the tiles only ([Large products](large-products.md))",
        "at every call",
        "none: it sizes tiles",
    ),
    Variable(
        "PYCTK_HOST_MEMORY_CHECK",
        "`0` turns off the check that host memory holds a large product's result before it starts "
        "([Large products](large-products.md#host-memory))",
        "at every call",
        "none: without the check, a product too large for host memory runs out of it",
    ),
    Variable(
        "PYCTK_CACHE_DIR",
        "where compiled kernels are cached: `$PYCTK_CACHE_DIR/kernels`. Default "
        "`$XDG_CACHE_HOME/pyctk/kernels`, or `~/.cache/pyctk/kernels` when `XDG_CACHE_HOME` is unset "
        "([Your own kernels](kernels.md#the-kernel-cache))",
        "at each compile",
        _CODE_FROM_THE_CACHE,
    ),
    Variable(
        "XDG_CACHE_HOME",
        "the default cache's parent folder, as above",
        "at each compile",
        _CODE_FROM_THE_CACHE,
    ),
    Variable(
        "HOME",
        "your home folder, `~`: the default cache is `~/.cache/pyctk`, and `~/.cuda_device` may name "
        "the default device (as below)",
        "at each compile; when the default device is chosen",
        _CODE_FROM_THE_CACHE,
    ),
    Variable(
        "PYCTK_DISABLE_CACHE",
        "set (and not `0`): kernels are compiled every time, and nothing is written; a `cache_dir=` "
        "given to a call still caches",
        "at each compile",
        "none: kernels are compiled each time",
    ),
    Variable(
        "PYCTK_DEFAULT_NVCC_FLAGS",
        "{data}`pyctk.compiler.DEFAULT_NVCC_FLAGS`, the options of every compile given `options=None`, "
        "split at whitespace",
        "when `pyctk.compiler` is imported",
        _FLAGS,
    ),
    Variable(
        "PYCUDA_DEFAULT_NVCC_FLAGS",
        "PyCUDA's name of `PYCTK_DEFAULT_NVCC_FLAGS`, read when that is unset",
        "when `pyctk.compiler` is imported",
        _FLAGS,
    ),
    Variable(
        "CUDA_DEVICE",
        "the default device of {mod}`pyctk.autoinit`, {mod}`pyctk.autoprimaryctx` and "
        "{func}`pyctk.tools.make_default_context`, as in PyCUDA; unset: the number in "
        "`~/.cuda_device`, else the first device that works",
        "when they choose",
        "none: it picks the GPU",
    ),
    Variable(
        "CUDA_PATH",
        "a CUDA toolkit to take libraries from, after the pip wheels ([below](#how-libraries-are-found)); "
        "also where `libcudadevrt.a` is looked for",
        "at each library's first load",
        _LIBRARIES_FROM_THERE,
    ),
    Variable(
        "CUDA_HOME",
        "as `CUDA_PATH`, searched after it",
        "at each library's first load",
        _LIBRARIES_FROM_THERE,
    ),
    Variable(
        "LD_LIBRARY_PATH",
        "folders the dynamic linker searches, the loader's last step ([below](#how-libraries-are-found)), "
        "and for the libraries the CUDA libraries themselves load",
        "at each library's first load",
        "**code**: libraries are loaded from those folders (an empty entry is the working folder); "
        "pyctk's loader reaches this step last, and only by a library's versioned file name",
        reader="the dynamic linker",
    ),
    Variable(
        "CUDA_VISIBLE_DEVICES",
        "the GPUs the process sees (and their numbering)",
        "when CUDA starts",
        "none: it hides GPUs",
        reader="CUDA's driver",
    ),
    Variable(
        "CUDA_LAUNCH_BLOCKING",
        "`1`: each kernel launch waits and reports its own failure, to find a faulty kernel "
        "([A lost context](threads-and-errors.md#a-lost-context))",
        "when CUDA starts",
        "none: launches are slower",
        reader="CUDA's driver",
    ),
)


def set_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of ``VARIABLES`` that are set, in the table's order, with their values."""
    environ = os.environ if environ is None else environ
    return {variable.name: environ[variable.name] for variable in VARIABLES if variable.name in environ}
