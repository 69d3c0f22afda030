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
in an on-disk cache (``pyctk._pycuda.kernel_cache``), so a later process loads them without
NVRTC. ``compile`` makes CUBIN or PTX bytes for a named architecture with no GPU at all.
"""

from __future__ import annotations

import os
import re
from typing import Any, NamedTuple, Sequence

from ._build_config import CUDA_MAJOR
from ._cuda import driver_api, loader, nvrtc
from ._cuda.errors import CompileError, UnsupportedError
from ._pycuda import headers, include_scan, kernel_args, kernel_cache
from ._pycuda.modules import Module

__all__ = ["SourceModule", "compile", "CompileError", "clear_cache", "nvrtc_version",
           "supported_archs"]

_CACHE_FORMAT = 1  # part of every key: a change to what an entry means starts afresh
_ARCH = re.compile(r"(sm|compute)_(\d+)([af]?)")
_COMPUTE_CAPABILITY_MAJOR, _COMPUTE_CAPABILITY_MINOR = 75, 76  # CUdevice_attribute


class Program(NamedTuple):
    """A compiled source: what a Module is loaded from, and what the cache keeps."""

    image: bytes                                   # CUBIN, or PTX ending in a NUL
    target: str                                    # "sm_90", "compute_90", "sm_90a" ...
    kernels: dict[str, list[kernel_args.Param]]   # symbol -> parameters, from the PTX
    lowered: dict[str, str]                        # name expression -> symbol
    log: str                                       # NVRTC's warnings


# ---------------------------------------------------------------------------
# The source NVRTC sees.

def _prelude_length(lines: list[str]) -> int:
    """How many leading lines are preprocessor lines, comments or blank: they stay outside
    ``extern "C"``, so that C++ headers (cuda_fp16.h ...) can be included as usual."""
    in_comment = continued = False
    for number, line in enumerate(lines):
        text = line.strip()
        if in_comment or (text.startswith("/*") and not continued):
            end = text.find("*/", 0 if in_comment else 2)
            in_comment = end < 0
            rest = "" if in_comment else text[end + 2:].strip()
            if rest and not rest.startswith("//"):  # code after the comment: the prelude ends here
                return number
        elif not (continued or not text or text.startswith(("#", "//"))):
            return number
        continued = text.endswith("\\") and (continued or text.startswith("#"))
    return len(lines)


def _with_c_linkage(source: str) -> str:
    """``source`` inside ``extern "C" { }`` (PyCUDA's default), its leading preprocessor lines
    before it; ``#line`` keeps NVRTC's line numbers those of ``source``."""
    lines = source.splitlines(keepends=True)
    start = _prelude_length(lines)
    return ("".join(lines[:start]) + 'extern "C" {\n' + f'#line {start + 1} "{nvrtc.PROGRAM_NAME}"\n'
            + "".join(lines[start:]) + '\n}\n')


# ---------------------------------------------------------------------------
# Architectures.

def _device_arch() -> int:
    """The current GPU's compute capability as one number (90 for 9.0)."""
    device = driver_api.current_device()
    major = driver_api.query_int("cuDeviceGetAttribute", _COMPUTE_CAPABILITY_MAJOR, device)
    minor = driver_api.query_int("cuDeviceGetAttribute", _COMPUTE_CAPABILITY_MINOR, device)
    return major * 10 + minor


def _request(arch: Any) -> str:
    """What was asked for: ``"sm_90"``, ``"compute_90"`` ..., or ``"gpu:90"`` for the current GPU."""
    if arch is None:
        return f"gpu:{_device_arch()}"
    if not isinstance(arch, str):
        raise TypeError(f"arch must be None (the current GPU) or a string such as 'sm_90' or "
                        f"'compute_90', not {type(arch).__name__}")
    if not _ARCH.fullmatch(arch):
        raise ValueError(f"arch {arch!r} is not an architecture: use 'sm_XY' for SASS (a CUBIN) or "
                         f"'compute_XY' for PTX, e.g. 'sm_90', 'sm_90a', 'compute_80'")
    return arch


def _target(request: str) -> str:
    """The architecture NVRTC compiles for: the one asked, or the best for the current GPU.

    For a GPU: SASS for its architecture; else SASS of the newest older one of its
    major (SASS runs on later minors of its major); else, for a GPU newer than NVRTC,
    PTX of NVRTC's newest architecture, which the driver compiles for the GPU.
    """
    archs = nvrtc.supported_archs()
    version = ".".join(map(str, nvrtc.version()))
    if not request.startswith("gpu:"):
        if int(_ARCH.fullmatch(request)[2]) not in archs:
            raise ValueError(f"NVRTC {version} does not compile for {request}; it knows "
                             f"{', '.join(f'sm_{a}' for a in archs)}")
        return request
    gpu = int(request[len("gpu:"):])
    if gpu < archs[0]:
        raise UnsupportedError(
            f"this GPU is sm_{gpu}, and NVRTC {version} compiles for sm_{archs[0]} and newer only"
            + (": pyctk-cu12 supports it (pip install 'pyctk-cu12[nvrtc]')" if CUDA_MAJOR > 12 else ""))
    same_major = [a for a in archs if a // 10 == gpu // 10 and a <= gpu]
    if same_major:
        return f"sm_{same_major[-1]}"
    return f"compute_{max(a for a in archs if a <= gpu)}"


# ---------------------------------------------------------------------------
# Compiling, through the cache.

def _nvrtc_identity() -> str:
    """Which NVRTC would compile, known without loading it: its file, size and time (a new
    NVRTC is a new file). Only one found by the dynamic linker's own search is loaded to ask."""
    first = loader.find_library(loader.library_spec("nvrtc", CUDA_MAJOR))[0]
    if first.found_via == "system":
        return f"system NVRTC {nvrtc.version()}"
    path = os.path.realpath(first.path)
    status = os.stat(path)
    return f"{path} {status.st_size} {status.st_mtime_ns}"


def _strings(value: Any, what: str, example: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not all(isinstance(v, (str, os.PathLike)) for v in value):
        raise TypeError(f"{what} must be a list of strings, e.g. {example}; got {value!r}")
    return [os.fspath(v) for v in value]


def _build(source: str, options: Any, no_extern_c: bool, arch: Any, include_dirs: Any,
           name_expressions: Any, cache_dir: Any) -> Program:
    if not isinstance(source, str):
        raise TypeError(f"source must be a str of CUDA C++, not {type(source).__name__}")
    options = _strings(options, "options", "['-use_fast_math']")
    include_dirs = [os.path.abspath(d) for d in _strings(include_dirs, "include_dirs", "['/path/to/headers']")]
    name_expressions = _strings(name_expressions, "name_expressions", "['add<float>', 'add<int>']")
    if name_expressions and not no_extern_c:
        raise ValueError("name_expressions need the source compiled as C++ (templates cannot have C "
                         "linkage): pass no_extern_c=True as well")
    text = source if no_extern_c else _with_c_linkage(source)
    header_folders = headers.header_folders()
    # Only these folders are searched (never the working directory: see nvrtc._PROGRAM_PATH).
    wheel_dirs = [h.path for h in header_folders]
    common = [*(f"--include-path={d}" for d in (*include_dirs, *wheel_dirs, headers.LIBC_HEADERS)),
              *options]
    request = _request(arch)
    folder = kernel_cache.directory(cache_dir)
    if folder is None:
        return _compile(text, request, common, name_expressions)
    key = kernel_cache.key({
        "format": _CACHE_FORMAT, "source": text, "options": common, "arch": request,
        "name_expressions": name_expressions, "nvrtc": _nvrtc_identity(),
        "includes": include_scan.included_files(text, include_dirs, wheel_dirs, [headers.LIBC_HEADERS]),
        "header_wheels": [h.distribution for h in header_folders]})
    entry = kernel_cache.load(folder, key)
    driver = driver_api.driver_version() if request.startswith("gpu:") else None
    if entry is not None:
        metadata, image = entry
        # PTX made for a GPU is compiled by the driver: a new driver gets it made afresh.
        if not (metadata["target"].startswith("compute_") and metadata["driver"] != driver):
            return Program(image, metadata["target"],
                           {name: [kernel_args.Param(*p) for p in params]
                            for name, params in metadata["kernels"].items()},
                           metadata["lowered"], metadata["log"])
    program = _compile(text, request, common, name_expressions)
    kernel_cache.store(folder, key, {"target": program.target, "kernels": program.kernels,
                                      "lowered": program.lowered, "log": program.log,
                                      "driver": driver}, program.image)
    return program


def _compile(text: str, request: str, common: list[str], name_expressions: list[str]) -> Program:
    target = _target(request)
    options = [f"--gpu-architecture={target}", *common]
    try:
        output = nvrtc.compile_program(text, options, name_expressions, target.startswith("sm_"))
    except CompileError as error:
        missing = headers.missing_headers()
        if "could not open source file" in error.log and missing:
            raise CompileError(f"{error}\nCUDA headers not installed: {'; '.join(missing)}",
                               error.log, error.options) from None
        raise
    return Program(output.image, target, kernel_args.parse_ptx(output.ptx), output.lowered, output.log)


# ---------------------------------------------------------------------------
# The public API.

class SourceModule(Module):
    """CUDA C++ source compiled by NVRTC and loaded on the current GPU (PyCUDA's ``SourceModule``).

    Parameters
    ----------
    source : str
        CUDA C++ with ``__global__`` kernels. Unless ``no_extern_c``, it is compiled inside
        ``extern "C" { }``, so kernels keep their plain names; its leading ``#include``,
        ``#define`` and comment lines stay outside the block, so C++ headers such as
        ``cuda_fp16.h`` can be included.
    options : list of str, optional
        NVRTC options, e.g. ``['-use_fast_math']``, ``['-DN=16']``, ``['-std=c++20']``.
    no_extern_c : bool, optional
        Compile ``source`` as C++ as it is: kernels then need ``extern "C"`` themselves or
        a name expression.
    arch : str, optional
        ``'sm_XY'`` (SASS) or ``'compute_XY'`` (PTX); by default the current GPU's.
    cache_dir : str, path, or False, optional
        Where compiled kernels are kept (default ``$PYCTK_CACHE_DIR`` or
        ``~/.cache/pyctk``); False compiles every time.
    include_dirs : list of str, optional
        Folders searched for ``#include``, before the CUDA headers of the pip wheels.
    name_expressions : list of str, optional
        C++ names of kernels to instantiate and look up, e.g. ``['scale<float>']``
        (templates; needs ``no_extern_c=True``); ``get_function`` takes them as written.

    Attributes
    ----------
    target : str
        The architecture compiled for, e.g. ``'sm_90'``.
    log : str
        NVRTC's warnings, if any.

    Raises
    ------
    pyctk.compiler.CompileError
        The source does not compile; the message is NVRTC's whole log (``.log``).
    pyctk.LibraryNotFoundError
        NVRTC is not installed (and the kernel is not in the cache): the message gives
        the pip command.
    pyctk.driver.Error, pyctk.NoDriverError
        The module cannot be loaded on the GPU.

    Examples
    --------
    >>> mod = SourceModule('''
    ... template <typename T> __global__ void fill(T *x, T value) { x[threadIdx.x] = value; }''',
    ...     no_extern_c=True, name_expressions=["fill<float>"])                 # doctest: +SKIP
    >>> fill = mod.get_function("fill<float>")                                   # doctest: +SKIP
    """

    def __init__(self, source: str, *, options: Sequence[str] | None = None, no_extern_c: bool = False,
                 arch: str | None = None, cache_dir: Any = None, include_dirs: Sequence[str] = (),
                 name_expressions: Sequence[str] = ()) -> None:
        program = _build(source, options, no_extern_c, arch, include_dirs, name_expressions, cache_dir)
        super().__init__(program.image, program.kernels, program.lowered)
        self.target, self.log = program.target, program.log


def compile(source: str, *, options: Sequence[str] | None = None, no_extern_c: bool = False,  # noqa: A001
            arch: str | None = None, cache_dir: Any = None, include_dirs: Sequence[str] = (),
            name_expressions: Sequence[str] = ()) -> bytes:
    """Compile ``source`` to a CUBIN (``arch='sm_XY'``) or PTX (``arch='compute_XY'``); no GPU needed.

    Arguments as for ``SourceModule``; with ``arch=None`` the current GPU's architecture
    (which needs one). The result loads with ``pyctk.driver.module_from_buffer``.

    Returns
    -------
    bytes
        An ELF CUBIN, or the PTX text.

    Examples
    --------
    >>> cubin = compile("__global__ void k(int *x) { *x = 1; }", arch="sm_80")   # doctest: +SKIP
    >>> cubin[:4]                                                                # doctest: +SKIP
    b'\\x7fELF'
    """
    program = _build(source, options, no_extern_c, arch, include_dirs, name_expressions, cache_dir)
    return program.image.rstrip(b"\0") if program.target.startswith("compute_") else program.image


def clear_cache(cache_dir: Any = None) -> int:
    """Remove every compiled kernel from the cache (``cache_dir``, else the default); return how many.

    >>> clear_cache("/tmp/my-kernels")     # doctest: +SKIP
    0
    """
    return kernel_cache.clear(kernel_cache.default_directory() if cache_dir is None
                               else kernel_cache.directory(cache_dir))


def nvrtc_version() -> tuple[int, int]:
    """The (major, minor) version of the NVRTC pyctk compiles with (loading it)."""
    return nvrtc.version()


def supported_archs() -> list[int]:
    """The architectures that NVRTC compiles SASS for (``[75, 80, ..., 121]``)."""
    return nvrtc.supported_archs()
