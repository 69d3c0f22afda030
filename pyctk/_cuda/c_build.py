"""Building programs against the installed libgpumatmul: where its header, library and
pkg-config file are, and the compiler flags (``python -m pyctk --cflags --libs``).

Paths come from importlib.resources, as the loader finds the library; nothing here loads
a library, and ``import pyctk`` imports neither the loader nor pathlib for it. A program
linked with ``libs()`` finds libgpumatmul through an rpath, and libgpumatmul finds cudart
and cuBLAS through its own RUNPATH, which reaches the nvidia wheels installed next to
pyctk; ``runpath_misses`` says when they are installed elsewhere.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from .._build_config import CUDA_MAJOR
from .errors import LibraryNotFoundError


def _existing(path: str) -> str:
    if not os.path.exists(path):
        raise LibraryNotFoundError(
            f"pyctk's installation is incomplete: {path} does not exist.\n"
            f"Fix: reinstall pyctk (pip install --force-reinstall pyctk-cu{CUDA_MAJOR})."
        )
    return path


def _package_file(*parts: str) -> str:
    from importlib.resources import files  # editable installs map the files too

    return _existing(str(files("pyctk").joinpath(*parts)))


def get_include() -> str:
    """The folder holding ``gpumatmul.h`` (and ``gpumatmul_version.h``), the C API's header.

    Compile with ``-I`` this folder: ``python -m pyctk --cflags`` prints that flag, and
    ``python -m pyctk --pkgconfig-path`` the folder of ``gpumatmul.pc`` for pkg-config.
    Needs no GPU and loads no library.

    Returns
    -------
    str
        An absolute path, inside the installed pyctk package.

    Raises
    ------
    pyctk.LibraryNotFoundError
        The installation lacks the header (reinstall pyctk).

    See Also
    --------
    get_library : The library to link with.

    Examples
    --------
    >>> import os, pyctk
    >>> folder = pyctk.get_include()   # e.g. .../site-packages/pyctk/include
    >>> os.path.isfile(os.path.join(folder, "gpumatmul.h"))
    True
    """
    return os.path.dirname(_package_file("include", "gpumatmul.h"))


def get_library() -> str:
    """The path of ``libgpumatmul.so``, the C library pyctk calls (any C FFI can load it).

    Link with the flags ``python -m pyctk --libs`` prints: they add an rpath to this
    library's folder, so programs built so need no ``LD_LIBRARY_PATH``. Needs no GPU and
    loads no library.

    Returns
    -------
    str
        An absolute path, inside the installed pyctk package.

    Raises
    ------
    pyctk.LibraryNotFoundError
        The installation lacks the library (reinstall pyctk).

    See Also
    --------
    get_include : The folder of the header to compile with.

    Examples
    --------
    >>> import os, pyctk
    >>> os.path.basename(pyctk.get_library())   # e.g. .../site-packages/pyctk/libgpumatmul.so
    'libgpumatmul.so'
    """
    from . import loader

    return _existing(str(loader.gpumatmul_path()))


def pkgconfig_path() -> str:
    """The folder holding ``gpumatmul.pc``, for PKG_CONFIG_PATH."""
    return os.path.dirname(_package_file("pkgconfig", "gpumatmul.pc"))


def cflags() -> list[str]:
    return [f"-I{get_include()}"]


def libs() -> list[str]:
    """Link flags: the library, and an rpath to its folder."""
    folder = os.path.dirname(get_library())
    return [f"-L{folder}", f"-Wl,-rpath,{folder}", "-lgpumatmul"]


class RunpathMiss(NamedTuple):
    """A CUDA library that libgpumatmul's RUNPATH does not reach."""

    file_name: str  # "libcudart.so.12"
    runpath: list[str]  # the RUNPATH's folders, $ORIGIN expanded
    found_in: str | None  # the folder where pyctk's loader finds it instead, if any
    pip_install: str  # the command that installs it

    def __str__(self) -> str:
        where = (
            f"pyctk finds it in {self.found_in}"
            if self.found_in
            else f"pyctk finds it nowhere either (fix: {self.pip_install})"
        )
        return f"{self.file_name} is not in libgpumatmul.so's RUNPATH ({':'.join(self.runpath)}); {where}"


def runpath_misses() -> list[RunpathMiss]:
    """Why a program linked with ``libs()`` might not start: the CUDA libraries that
    libgpumatmul's RUNPATH does not reach because the nvidia wheels are installed in another
    folder than pyctk (e.g. pyctk in the user site over a system-wide torch's wheels); empty
    when it reaches them all."""
    from . import loader

    library = get_library()
    origin = os.path.dirname(library)
    runpath = [re.sub(r"\$(ORIGIN\b|\{ORIGIN\})", origin, f) for f in loader.elf_runpath(library)]
    needed = loader.elf_needed(library)
    misses = []
    for name in loader.CUDA_LIBRARIES:
        spec = loader.library_spec(name, CUDA_MAJOR)
        if spec.file_name not in needed:
            continue
        if any(os.path.isfile(os.path.join(folder, spec.file_name)) for folder in runpath):
            continue
        elsewhere = [f.path for f in loader.find_library(spec) if f.found_via != "system"]
        misses.append(
            RunpathMiss(spec.file_name, runpath, os.path.dirname(elsewhere[0]) if elsewhere else None, spec.pip_install)
        )
    return misses
