"""Linking device code: PyCUDA's ``Linker`` and ``jit_input_type``, through nvJitLink.

PyCUDA links with the driver's JIT linker (``cuLink*``); pyctk links with nvJitLink from
NVIDIA's pip wheel (``pip install "pyctk-cu12[nvjitlink]"``), which needs no GPU: the
CUBIN it makes (``Linker.link_cubin``) is loaded like any other (``Linker.link_module``).
That is what relocatable device code (``-rdc=true``) needs: ``__device__`` functions and
variables of one source used by another, and dynamic parallelism, whose kernels launch
kernels through the device runtime ``libcudadevrt.a`` (``find_stdlib``), which the CUDA
runtime's wheel ships.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..._build_config import CUDA_MAJOR
from ..._cuda import constants as cu
from ..._cuda import loader, nvjitlink
from ..._cuda.driver_errors import LogicError
from ..._cuda.errors import LibraryNotFoundError
from ..contexts.devices import Context
from .modules import Module, jit_option


class jit_input_type(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """What :meth:`Linker.add_data` and :meth:`Linker.add_file` are given: ``CUjitInputType``
    (cuda.h)."""

    CUBIN = cu.CU_JIT_INPUT_CUBIN  #: Machine code for one architecture.
    PTX = cu.CU_JIT_INPUT_PTX  #: PTX (``pyctk.compiler.compile(..., target="ptx")``).
    FATBINARY = cu.CU_JIT_INPUT_FATBINARY  #: Code for several architectures.
    OBJECT = cu.CU_JIT_INPUT_OBJECT  #: A host object file with device code in it (``nvcc -dc``).
    LIBRARY = cu.CU_JIT_INPUT_LIBRARY  #: A static library of such objects (``libcudadevrt.a``).
    NVVM = cu.CU_JIT_INPUT_NVVM  #: LTO-IR (NVRTC's ``-dlto``), linked with ``-lto``.
    LTO_IR = cu.CU_JIT_INPUT_NVVM  #: ``NVVM``'s other name.


_NVJITLINK_INPUT = {
    jit_input_type.CUBIN: nvjitlink.InputType.CUBIN,
    jit_input_type.PTX: nvjitlink.InputType.PTX,
    jit_input_type.FATBINARY: nvjitlink.InputType.FATBIN,
    jit_input_type.OBJECT: nvjitlink.InputType.OBJECT,
    jit_input_type.LIBRARY: nvjitlink.InputType.LIBRARY,
    jit_input_type.NVVM: nvjitlink.InputType.LTOIR,
}


def _flag(text: str) -> Callable[[int], list[str]]:
    return lambda value: [text] if value else []


def _valued(text: str) -> Callable[[int], list[str]]:
    return lambda value: [text.format(value)]


def _target(value: int) -> list[str]:
    """``CUjit_target``: the SM number, plus 0x10000 for an arch-specific target (sm_90a)
    or 0x20000 for a family one (sm_100f)."""
    suffix = {0: "", 0x10000: "a", 0x20000: "f"}.get(value & ~0xFFFF, "?")
    return [f"-arch=sm_{value & 0xFFFF}{suffix}"]


# jit_option -> nvJitLink's options for its value. Options absent here have no nvJitLink
# equivalent; those mapped to nothing ask for what nvJitLink does anyway.
_NVJITLINK_OPTIONS: dict[jit_option, Callable[[int], list[str]]] = {
    jit_option.MAX_REGISTERS: _valued("-maxrregcount={}"),
    jit_option.OPTIMIZATION_LEVEL: _valued("-Xptxas=-O{}"),
    jit_option.TARGET: _target,
    jit_option.TARGET_FROM_CUCONTEXT: lambda value: [],  # the default (see Linker)
    jit_option.FALLBACK_STRATEGY: lambda value: [],  # chooses from a fatbinary at load time
    jit_option.WALL_TIME: lambda value: [],  # an output
    jit_option.GENERATE_DEBUG_INFO: _flag("-g"),
    jit_option.LOG_VERBOSE: _flag("-verbose"),
    jit_option.GENERATE_LINE_INFO: _flag("-lineinfo"),
    jit_option.LTO: _flag("-lto"),
    jit_option.FTZ: _valued("-ftz={}"),
    jit_option.PREC_DIV: _valued("-prec-div={}"),
    jit_option.PREC_SQRT: _valued("-prec-sqrt={}"),
    jit_option.FMA: _valued("-fma={}"),
    jit_option.OPTIMIZE_UNUSED_DEVICE_VARIABLES: _flag("-optimize-unused-variables"),
    jit_option.SPLIT_COMPILE: _valued("-split-compile={}"),
}


def link_options(options: Any) -> list[str]:
    """PyCUDA's ``(jit_option, int)`` pairs as nvJitLink options; strings are nvJitLink's own
    (``"-lto"``, ``"-Xptxas=-v"``) and pass as they are."""
    translated: list[str] = []
    for option in options or ():
        if isinstance(option, str):
            translated.append(option)
            continue
        if not (isinstance(option, (tuple, list)) and len(option) == 2):
            raise TypeError(
                f"Linker options are (jit_option, int) pairs or nvJitLink option strings, "
                f"e.g. [(jit_option.MAX_REGISTERS, 32), '-lto']; got {option!r}"
            )
        key = jit_option(option[0])
        if key not in _NVJITLINK_OPTIONS:
            raise ValueError(
                f"jit_option.{key.name} has no nvJitLink equivalent; nvJitLink's own options can be given as strings"
            )
        translated += _NVJITLINK_OPTIONS[key](int(option[1]))
    return translated


def device_sm() -> str:
    """The current GPU's architecture, ``"sm_90"`` for compute capability 9.0."""
    major, minor = Context.get_device().compute_capability()
    return f"sm_{major}{minor}"


class Linker:
    """Device code of several sources linked into one CUBIN (PyCUDA's ``Linker``).

    Unlike PyCUDA's, which uses the driver's JIT linker (``cuLink*``), pyctk links with
    nvJitLink from NVIDIA's wheel (``pip install "pyctk-cu12[nvjitlink]"``), which needs no
    GPU: :meth:`link_cubin` gives the CUBIN, :meth:`link_module` loads it. That is what
    relocatable device code (``-rdc=true``) needs: ``__device__`` functions and variables of
    one source used by another, and dynamic parallelism, which links the device runtime
    (``libcudadevrt.a``, :meth:`add_file`).

    Parameters
    ----------
    message_handler : callable, optional
        ``message_handler(success, info_log, error_log)``, called when the link is done,
        whether it worked or not.
    options : list, optional
        ``(jit_option, int)`` pairs, translated for nvJitLink (``MAX_REGISTERS``,
        ``OPTIMIZATION_LEVEL``, ``TARGET``, ``GENERATE_LINE_INFO``, ``LTO`` ...), or
        nvJitLink's own option strings (``"-lto"``, ``"-Xptxas=-v"``).
    log_verbose : bool, optional
        Ask for a verbose info log.
    arch : str, optional
        The architecture to link for (``"sm_90"``; pyctk's); else ``jit_option.TARGET``'s,
        else the current GPU's.

    Raises
    ------
    pyctk.LibraryNotFoundError
        nvJitLink is not installed: the message gives the pip command.
    pyctk.driver.LogicError
        The link failed; the message ends with nvJitLink's error log.

    Notes
    -----
    Inputs are kept until the link; nvJitLink reports a bad one then, naming it.

    Examples
    --------
    A ``__device__`` function of one source called by a kernel of another, linked for
    sm_90 with no GPU:

    >>> import pyctk.driver as cuda
    >>> from pyctk.compiler import compile
    >>> helpers = "__device__ float twice(float x) { return 2 * x; }"
    >>> kernels = '''__device__ float twice(float x);
    ... __global__ void scale(float *a) { a[threadIdx.x] = twice(a[threadIdx.x]); }'''
    >>> linker = cuda.Linker(arch="sm_90")
    >>> for name, source in [("helpers.ptx", helpers), ("kernels.ptx", kernels)]:
    ...     ptx = compile(source, options=["-rdc=true"], arch="sm_90", target="ptx")
    ...     linker.add_data(ptx, cuda.jit_input_type.PTX, name)
    >>> cubin = linker.link_cubin()
    >>> cubin[:4]
    b'\\x7fELF'

    Without the helpers, the link fails and says why:

    >>> linker = cuda.Linker(arch="sm_90")
    >>> linker.add_data(compile(kernels, options=["-rdc=true"], arch="sm_90", target="ptx"),
    ...                 cuda.jit_input_type.PTX, "kernels.ptx")
    >>> linker.link_cubin()
    Traceback (most recent call last):
        ...
    pyctk.driver.LogicError: linking device code with nvJitLink (options ['-arch=sm_90']) failed: ...
    error   : Undefined reference to 'twice' in 'kernels.ptx'...
    """

    def __init__(
        self, message_handler: Any = None, options: Any = None, log_verbose: bool = False, *, arch: str | None = None
    ) -> None:
        nvjitlink.library()  # missing: the error with the pip command, now rather than at the link
        translated = link_options(options) + (["-verbose"] if log_verbose else [])
        if arch is not None:
            translated = [option for option in translated if not option.startswith("-arch=")]
            translated.insert(0, f"-arch={arch}")
        elif not any(option.startswith("-arch=") for option in translated):
            translated.insert(0, f"-arch={device_sm()}")
        self.message_handler, self.options = message_handler, translated
        self._inputs: list[tuple[nvjitlink.InputType, bytes, str]] = []

    def add_data(self, data: Any, input_type: jit_input_type, name: str = "unknown") -> None:
        """Add device code from memory.

        Parameters
        ----------
        data : bytes-like
        input_type : jit_input_type
        name : str, optional
            Its name in the logs.
        """
        kind = _NVJITLINK_INPUT[jit_input_type(input_type)]
        self._inputs.append((kind, bytes(memoryview(data)), str(name)))

    def add_file(self, filename: str | os.PathLike, input_type: jit_input_type) -> None:
        """Add device code from a file, e.g. ``libcudadevrt.a`` as ``jit_input_type.LIBRARY``.

        Parameters
        ----------
        filename : str or os.PathLike
        input_type : jit_input_type
        """
        self.add_data(Path(filename).read_bytes(), input_type, os.fspath(filename))

    def link_cubin(self) -> bytes:
        """Link what was added, with no GPU; call the message handler.

        Returns
        -------
        bytes
            The CUBIN.

        Raises
        ------
        pyctk.driver.LogicError
            The link failed; the message ends with nvJitLink's error log.
        """
        result = nvjitlink.link(self.options, self._inputs)
        if self.message_handler is not None:
            self.message_handler(result.cubin is not None, result.info_log, result.error_log)
        if result.cubin is None:
            raise LogicError(
                f"linking device code with nvJitLink (options {self.options}) failed: "
                f"{result.failure}\n{result.error_log}".rstrip(),
                result.failure.rpartition(" ")[2],
            )
        return result.cubin

    def link_module(self) -> Module:
        """Link what was added and load the result on the current GPU, as PyCUDA's does.

        Returns
        -------
        Module
        """
        return Module(self.link_cubin())


def find_stdlib(name: str, cuda_libdir: str | os.PathLike | None = None) -> str:
    """The static library ``lib<name>.a`` (``"cudadevrt"``: the device runtime): in
    ``cuda_libdir`` if given, else beside the CUDA runtime of NVIDIA's wheel (searched as
    the loader searches for it: active environment first), else in ``$CUDA_PATH`` or
    ``$CUDA_HOME``. LibraryNotFoundError lists each place tried."""
    file_name = f"lib{name}.a"
    runtime = loader.library_spec("cudart", CUDA_MAJOR)
    folders = (
        [os.fspath(cuda_libdir)]
        if cuda_libdir is not None
        else [os.path.dirname(place.path) for place in loader.candidates(runtime) if place.found_via != "system"]
    )
    for folder in folders:
        path = os.path.join(folder, file_name)
        if os.path.isfile(path):
            return path
    tried = "".join(f"\n  {os.path.join(folder, file_name)}: not there" for folder in folders)
    raise LibraryNotFoundError(
        f"pyctk could not find {file_name} (CUDA {CUDA_MAJOR}). Searched, in order:{tried}\n"
        f"Fix: {runtime.pip_install} (the CUDA runtime's wheel ships libcudadevrt.a), "
        f"or pass cuda_libdir= the folder that holds {file_name}"
    )
