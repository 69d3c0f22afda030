"""CUDA libraries that pyctk loads only when first used, from an optional extra (NVRTC, nvJitLink).

Each is one ``OptionalLibrary``: found by pyctk's loader like every other CUDA library (same
search order, ``PYCTK_DEBUG_LOAD=1``), its functions declared from a prototype table, and,
when it is not installed, a ``LibraryNotFoundError`` that says what it is for, gives the pip
command of its extra and lists every place searched.

>>> nvrtc = OptionalLibrary("nvrtc", "compiles kernels with NVRTC, the CUDA run-time compiler",
...                         "nvrtc", {"nvrtcVersion": (ctypes.c_int, [ctypes.c_void_p] * 2)})
>>> nvrtc.install_command()       # pyctk-cu13 for CUDA 13
'pip install "pyctk-cu1...[nvrtc]"'
>>> nvrtc().nvrtcVersion is nvrtc().nvrtcVersion   # loaded once, its functions declared
True
"""

from __future__ import annotations

import _thread
import ctypes
import os
import weakref
from collections.abc import Mapping
from typing import Any

from .._build_config import CUDA_MAJOR
from .errors import LibraryNotFoundError

_ALL: weakref.WeakSet[OptionalLibrary] = weakref.WeakSet()


class OptionalLibrary:
    """``name`` (the loader's name for it), what pyctk does with it, its extra, and its
    functions: name -> (result type, argument types)."""

    def __init__(self, name: str, purpose: str, extra: str, prototypes: Mapping[str, tuple[Any, list[Any]]]) -> None:
        self.name, self.purpose, self.extra, self.prototypes = name, purpose, extra, prototypes
        self._library: ctypes.CDLL | None = None
        self._lock = _thread.allocate_lock()
        _ALL.add(self)

    def install_command(self) -> str:
        """The pip command that adds this library to pyctk."""
        return f'pip install "pyctk-cu{CUDA_MAJOR}[{self.extra}]"'

    def __call__(self) -> ctypes.CDLL:
        """The library, loaded on first use; LibraryNotFoundError saying how to install it."""
        if self._library is not None:
            return self._library
        from . import loader  # imported here: `import pyctk` does not need the loader

        with self._lock:
            if self._library is None:
                try:
                    loaded = loader.load_library(loader.library_spec(self.name, CUDA_MAJOR))
                except LibraryNotFoundError as error:
                    raise LibraryNotFoundError(
                        f"pyctk {self.purpose}, which is not installed. It is an optional part "
                        f"of pyctk: {self.install_command()}\n{error}"
                    ) from None
                self._library = loader.declare(ctypes.CDLL(loaded.path), self.prototypes)
        return self._library


def _new_locks_in_child() -> None:
    for library in _ALL:  # a parent thread loading one at the fork would hold its lock forever
        library._lock = _thread.allocate_lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_locks_in_child)
