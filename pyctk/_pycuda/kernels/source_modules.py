"""CUDA C++ source compiled at run time by NVRTC, through the on-disk cache: what
``pyctk.compiler`` (PyCUDA's ``SourceModule``, ``compile``, ``DynamicModule``) is made of,
and what ``pyctk.gpuarray``'s generated kernels are compiled with.
"""

from __future__ import annotations

import os
import re
import tempfile
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Callable, NamedTuple

from ..._build_config import CUDA_MAJOR
from ..._cuda import driver_api, loader, nvrtc
from ..._cuda.driver_errors import CompileError, LogicError
from ..._cuda.errors import UnsupportedError
from ..compiling import headers, include_scan, kernel_cache, nvcc_options
from . import kernel_args, textures
from .linking import Linker, find_stdlib, jit_input_type
from .modules import Module

# PyCUDA's flags for options=None, read when pyctk.compiler is imported (a list programs may change).
DEFAULT_NVCC_FLAGS: list[str] = nvcc_options.default_flags()
_TARGETS = ("cubin", "ptx", "fatbin")

_CACHE_FORMAT = 1  # part of every key: a change to what an entry means starts afresh
_ARCH = re.compile(r"(sm|compute)_(\d+)([af]?)")
_COMPUTE_CAPABILITY_MAJOR, _COMPUTE_CAPABILITY_MINOR = 75, 76  # CUdevice_attribute


class Program(NamedTuple):
    """A compiled source: what a Module is loaded from, and what the cache keeps."""

    image: bytes  # CUBIN, or PTX ending in a NUL
    target: str  # "sm_90", "compute_90", "sm_90a" ...
    kernels: dict[str, list[kernel_args.Param]]  # symbol -> parameters, from the PTX
    lowered: dict[str, str]  # name expression -> symbol
    log: str  # NVRTC's warnings


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
            rest = "" if in_comment else text[end + 2 :].strip()
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
    return (
        "".join(lines[:start])
        + 'extern "C" {\n'
        + f'#line {start + 1} "{nvrtc.PROGRAM_NAME}"\n'
        + "".join(lines[start:])
        + "\n}\n"
    )


def _with_host_types(text: str) -> str:
    """``text`` after the types nvcc's implicit host headers define (``headers.HOST_TYPES``);
    ``#line`` keeps NVRTC's line numbers those of ``text``."""
    return f'#include <{headers.HOST_TYPES}>\n#line 1 "{nvrtc.PROGRAM_NAME}"\n{text}'


# ---------------------------------------------------------------------------
# Architectures.


def _device_arch() -> int:
    """The current GPU's compute capability as one number (90 for 9.0)."""
    device = driver_api.current_device()
    major = driver_api.query_int("cuDeviceGetAttribute", _COMPUTE_CAPABILITY_MAJOR, device)
    minor = driver_api.query_int("cuDeviceGetAttribute", _COMPUTE_CAPABILITY_MINOR, device)
    return major * 10 + minor


def _request(arch: Any, what: str = "arch") -> str:
    """What was asked for: ``"sm_90"``, ``"compute_90"`` ..., or ``"gpu:90"`` for the current GPU."""
    if arch is None:
        return f"gpu:{_device_arch()}"
    if not isinstance(arch, str):
        raise TypeError(
            f"{what} must be None (the current GPU) or a string such as 'sm_90' or "
            f"'compute_90', not {type(arch).__name__}"
        )
    if not _ARCH.fullmatch(arch):
        raise ValueError(
            f"{what} {arch!r} is not an architecture: use 'sm_XY' for SASS (a CUBIN) or "
            f"'compute_XY' for PTX, e.g. 'sm_90', 'sm_90a', 'compute_80'"
        )
    return arch


def _parts(request: str) -> tuple[str, ...]:
    """("sm" or "compute", the number, the suffix) of an architecture ``_request`` checked."""
    match = _ARCH.fullmatch(request)
    assert match is not None  # _request refuses what does not match
    return match.groups()


def _target(request: str) -> str:
    """The architecture NVRTC compiles for: the one asked, or the best for the current GPU.

    For a GPU: SASS for its architecture; else SASS of the newest older one of its
    major (SASS runs on later minors of its major); else, for a GPU newer than NVRTC,
    PTX of NVRTC's newest architecture, which the driver compiles for the GPU.
    """
    archs = nvrtc.supported_archs()
    version = ".".join(map(str, nvrtc.version()))
    if not request.startswith("gpu:"):
        if int(_parts(request)[1]) not in archs:
            raise ValueError(
                f"NVRTC {version} does not compile for {request}; it knows {', '.join(f'sm_{a}' for a in archs)}"
            )
        return request
    gpu = int(request[len("gpu:") :])
    if gpu < archs[0]:
        raise UnsupportedError(
            f"this GPU is sm_{gpu}, and NVRTC {version} compiles for sm_{archs[0]} and newer only"
            + (": pyctk-cu12 supports it (pip install 'pyctk-cu12[nvrtc]')" if CUDA_MAJOR > 12 else "")
        )
    same_major = [a for a in archs if a // 10 == gpu // 10 and a <= gpu]
    if same_major:
        return f"sm_{same_major[-1]}"
    return f"compute_{max(a for a in archs if a <= gpu)}"


# ---------------------------------------------------------------------------
# Compiling, through the cache.


def _library_identity(name: str, system: Callable[[], str]) -> str:
    """Which library ``name`` would be loaded, known without loading it: its file, size and
    time (a new version is a new file); ``system()`` for one the dynamic linker would find."""
    first = loader.find_library(loader.library_spec(name, CUDA_MAJOR))[0]
    if first.found_via == "system":
        return f"system {system()}"
    path = os.path.realpath(first.path)
    status = os.stat(path)
    return f"{path} {status.st_size} {status.st_mtime_ns}"


def _nvrtc_identity() -> str:
    """Which NVRTC would compile (only one found by the dynamic linker's search is loaded to ask)."""
    return _library_identity("nvrtc", lambda: f"NVRTC {nvrtc.version()}")


class _Plan(NamedTuple):
    """How a compile makes what was asked for."""

    request: str  # what NVRTC compiles for: "sm_90", "compute_80", or "gpu:90" (_request)
    ptx: bool  # the PTX is the result (else the CUBIN, for an sm_ target)
    link_to: str | None  # the SASS architecture nvJitLink makes of that PTX, when code= is above arch=


def _plan(arch: Any, code: Any, target: str) -> _Plan:
    """nvcc's ``-arch``/``-code`` and ``--cubin``/``--ptx`` for NVRTC, which makes one target per
    compile: ``code='sm_YZ'`` is SASS compiled from ``arch``'s PTX (``compute_XY``, XY <= YZ)."""
    if target not in _TARGETS:
        raise ValueError(f"target must be one of {', '.join(map(repr, _TARGETS))}, not {target!r}")
    if target == "fatbin":
        raise UnsupportedError(
            "NVRTC makes no fatbinaries: pass target='cubin' (SASS for one "
            "architecture) or 'ptx' (which the driver compiles for any newer GPU)"
        )
    if code is None:
        return _Plan(_request(arch), target == "ptx", None)
    kind, *real = _parts(_request(code, "code"))  # "sm", "90", "a"
    virtual = real if arch is None else list(_parts(_request(arch))[1:])
    if int(virtual[0]) > int(real[0]) or (kind == "compute" and virtual != real):
        raise ValueError(
            f"code={code!r} cannot come from arch={arch!r}: code is the virtual "
            f"architecture itself (compute_XY) or SASS of one no older (sm_XY)"
        )
    ptx = "compute_" + "".join(virtual)
    if target == "ptx" or kind == "compute":
        return _Plan(ptx, True, None)
    return _Plan(code, False, None) if virtual == real else _Plan(ptx, True, code)


def _strings(value: Any, what: str, example: str) -> list[str]:
    if value is None:
        return []
    if (
        isinstance(value, (str, bytes))
        or not isinstance(value, Iterable)
        or not all(isinstance(v, (str, os.PathLike)) for v in value)
    ):
        raise TypeError(f"{what} must be a list of strings, e.g. {example}; got {value!r}")
    return [os.fspath(v) for v in value]


def _build(
    source: str,
    options: Any,
    no_extern_c: bool,
    arch: Any,
    include_dirs: Any,
    name_expressions: Any,
    cache_dir: Any,
    code: Any = None,
    target: str = "cubin",
    keep: bool = False,
) -> Program:
    if not isinstance(source, str):
        raise TypeError(f"source must be a str of CUDA C++, not {type(source).__name__}")
    options = nvcc_options.translate(
        DEFAULT_NVCC_FLAGS if options is None else _strings(options, "options", "['-use_fast_math']")
    )
    include_dirs = [os.path.abspath(d) for d in _strings(include_dirs, "include_dirs", "['/path/to/headers']")]
    name_expressions = _strings(name_expressions, "name_expressions", "['add<float>', 'add<int>']")
    if name_expressions and not no_extern_c:
        raise ValueError(
            "name_expressions need the source compiled as C++ (templates cannot have C "
            "linkage): pass no_extern_c=True as well"
        )
    text = _with_host_types(source if no_extern_c else _with_c_linkage(source))
    header_folders = headers.header_folders()
    # Only these folders are searched (never the working directory: see nvrtc._PROGRAM_PATH).
    wheel_dirs = [h.path for h in header_folders]
    common = [*(f"--include-path={d}" for d in (*include_dirs, *wheel_dirs, headers.LIBC_HEADERS)), *options]
    plan = _plan(arch, code, target)
    folder = None if keep else kernel_cache.directory(cache_dir)  # keep: the files of a fresh compile
    if folder is None:
        return _compile(text, plan, common, name_expressions, keep)
    key = kernel_cache.key(
        {
            "format": _CACHE_FORMAT,
            "source": text,
            "options": common,
            "arch": list(plan),
            "name_expressions": name_expressions,
            "nvrtc": _nvrtc_identity(),
            "nvjitlink": plan.link_to and _library_identity("nvJitLink", lambda: "nvJitLink"),
            "includes": include_scan.included_files(text, include_dirs, wheel_dirs, [headers.LIBC_HEADERS]),
            "header_wheels": [h.distribution for h in header_folders],
        }
    )
    entry = kernel_cache.load(folder, key)
    driver = driver_api.driver_version() if plan.request.startswith("gpu:") else None
    if entry is not None:
        metadata, image = entry
        # PTX made for a GPU is compiled by the driver: a new driver gets it made afresh.
        if not (metadata["target"].startswith("compute_") and metadata["driver"] != driver):
            return Program(
                image,
                metadata["target"],
                {name: [kernel_args.Param(*p) for p in params] for name, params in metadata["kernels"].items()},
                metadata["lowered"],
                metadata["log"],
            )
    program = _compile(text, plan, common, name_expressions, keep)
    kernel_cache.store(
        folder,
        key,
        {
            "target": program.target,
            "kernels": program.kernels,
            "lowered": program.lowered,
            "log": program.log,
            "driver": driver,
        },
        program.image,
    )
    return program


def _compile(text: str, plan: _Plan, common: list[str], name_expressions: list[str], keep: bool) -> Program:
    target = _target(plan.request)
    if plan.ptx and target.startswith("sm_"):  # PTX for the current GPU's architecture
        target = "compute_" + target[len("sm_") :]
    options = [f"--gpu-architecture={target}", *common]
    try:
        output = nvrtc.compile_program(text, options, name_expressions, target.startswith("sm_"))
    except CompileError as error:
        missing = headers.missing_headers()
        if "open source file" in error.log and missing:  # NVRTC: "cannot open source file"
            raise CompileError(
                f"{error}\nCUDA headers not installed: {'; '.join(missing)}", error.log, error.options
            ) from None
        textures.explain_references(error)  # texture<...> references: CUDA 12 removed them
        raise
    image = output.image
    if plan.link_to:
        linker = Linker(arch=plan.link_to)
        linker.add_data(output.image, jit_input_type.PTX, nvrtc.PROGRAM_NAME)
        try:
            image = linker.link_cubin()
        except LogicError as error:
            raise CompileError(
                f"compiling the PTX for {plan.link_to} failed: {error}", str(error), tuple(options)
            ) from None
        target = plan.link_to
    if keep:
        _keep(text, output, image)
    if output.log.strip():
        warnings.warn(f"The CUDA compiler succeeded, but said the following:\n{output.log}", UserWarning, stacklevel=4)
    return Program(image, target, kernel_args.parse_ptx(output.ptx), output.lowered, output.log)


def _keep(text: str, output: nvrtc.Output, image: bytes) -> None:
    """PyCUDA's ``keep=True``: the source, log, PTX and CUBIN in a new folder, whose path is printed."""
    folder = tempfile.mkdtemp(prefix="pyctk-compiler-")
    files = {"kernel.cu": text.encode(), "kernel.log": output.log.encode(), "kernel.ptx": output.ptx.encode()}
    if image.startswith(b"\x7fELF"):
        files["kernel.cubin"] = image
    for name, data in files.items():
        Path(folder, name).write_bytes(data)
    print(f"*** compiler output in {folder}")


# ---------------------------------------------------------------------------
# The public API.


class SourceModule(Module):
    """CUDA C++ source compiled by NVRTC and loaded on the current GPU (PyCUDA's ``SourceModule``).

    The result is a :class:`pyctk.driver.Module`: :meth:`~pyctk.driver.Module.get_function`
    gives its kernels as :class:`pyctk.driver.Function` objects, launched by calling them, and
    :meth:`~pyctk.driver.Module.get_global` its ``__device__`` variables. The compiled image
    is kept in an on-disk cache, keyed by everything it depends on (source, options, the
    headers it includes, NVRTC's version), so a later process loads it without compiling.

    Unlike PyCUDA's: NVRTC compiles, not nvcc (no CUDA toolkit; ``nvcc`` is ignored), and
    ``name_expressions`` is pyctk's.

    Parameters
    ----------
    source : str
        CUDA C++ with ``__global__`` kernels. Unless ``no_extern_c``, it is compiled inside
        ``extern "C" { }``, so kernels keep their plain names; its leading ``#include``,
        ``#define`` and comment lines stay outside the block, so C++ headers such as
        ``cuda_fp16.h`` can be included.
    nvcc : str, optional
        Ignored: NVRTC compiles, and no CUDA toolkit is needed.
    options : list of str, optional
        nvcc's options, e.g. ``['-use_fast_math']``, ``['-DN=16']``, ``['-std=c++20']``,
        ``['-Xptxas', '-v']``; those for host code only (``-O3``, ``-g``,
        ``--compiler-options ...``) are dropped with a warning, and those NVRTC has no
        equivalent of raise CompileError. None: :data:`~pyctk.compiler.DEFAULT_NVCC_FLAGS`.
    keep : bool, optional
        Keep the source, NVRTC's log, the PTX and the CUBIN in a new temporary folder,
        whose path is printed (``*** compiler output in ...``); compiles afresh.
    no_extern_c : bool, optional
        Compile ``source`` as C++ as it is: kernels then need ``extern "C"`` themselves or
        a name expression.
    arch : str, optional
        nvcc's ``-arch``: ``'sm_XY'`` (SASS) or ``'compute_XY'`` (PTX, which the driver
        compiles); by default the current GPU's.
    code : str, optional
        nvcc's ``-code``: the SASS to make, ``'sm_YZ'``, from ``arch``'s PTX (``YZ`` no
        older than ``arch``'s; when newer, nvJitLink compiles that PTX, so
        ``pyctk-cu12[nvjitlink]`` is needed).
    cache_dir : str, path, or False, optional
        Where compiled kernels are kept (default ``$PYCTK_CACHE_DIR`` or
        ``~/.cache/pyctk``); False compiles every time. ``PYCTK_DISABLE_CACHE=1`` turns the
        default cache off. Only a folder of yours that no one else can write is used
        (else a ``RuntimeWarning`` says why, and the kernel is compiled).
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
        NVRTC's warnings, if any (also issued as a ``UserWarning``, as PyCUDA does).
    module : pyctk.driver.Module
        PyCUDA's loaded module: this object itself.

    Raises
    ------
    pyctk.compiler.CompileError
        The source does not compile; the message is NVRTC's whole log (``.log``).
    pyctk.LibraryNotFoundError
        NVRTC is not installed (and the kernel is not in the cache): the message gives
        the pip command.
    pyctk.driver.Error
        The module cannot be loaded on the GPU.
    pyctk.NoDriverError
        No NVIDIA driver: nothing can be loaded (:func:`~pyctk.compiler.compile` needs none).

    See Also
    --------
    compile : the same compile, giving the CUBIN or PTX instead of loading it.

    Examples
    --------
    A template kernel, instantiated for float by its name expression:

    >>> import numpy as np                                              # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> from pyctk.compiler import SourceModule
    >>> mod = SourceModule(\'\'\'
    ... template <typename T> __global__ void fill(T *x, T value) { x[threadIdx.x] = value; }\'\'\',
    ...     no_extern_c=True, name_expressions=["fill<float>"])
    >>> fill = mod.get_function("fill<float>")
    >>> x = np.zeros(4, dtype=np.float32)
    >>> fill(cuda.Out(x), np.float32(7), block=(4, 1, 1))
    >>> x
    array([7., 7., 7., 7.], dtype=float32)
    >>> mod.target.startswith("sm_")                                    # SASS for this GPU
    True
    """

    def __init__(
        self,
        source: str,
        nvcc: str = "nvcc",
        options: Sequence[str] | None = None,
        keep: bool = False,
        no_extern_c: bool = False,
        arch: str | None = None,
        code: str | None = None,
        cache_dir: Any = None,
        include_dirs: Sequence[str] | None = None,
        *,
        name_expressions: Sequence[str] = (),
    ) -> None:
        program = _build(
            source, options, no_extern_c, arch, include_dirs, name_expressions, cache_dir, code, "cubin", keep
        )
        super().__init__(program.image, program.kernels, program.lowered)
        self.target, self.log = program.target, program.log

    @property
    def module(self) -> Module:
        """PyCUDA's loaded module: this object itself."""
        return self


def compile(
    source: str,
    nvcc: str = "nvcc",
    options: Sequence[str] | None = None,  # noqa: A001
    keep: bool = False,
    no_extern_c: bool = False,
    arch: str | None = None,
    code: str | None = None,
    cache_dir: Any = None,
    include_dirs: Sequence[str] | None = None,
    target: str = "cubin",
    *,
    name_expressions: Sequence[str] = (),
) -> bytes:
    """Compile ``source`` to CUBIN or PTX bytes (PyCUDA's ``compile``), without loading it.

    No GPU is needed when ``arch`` or ``code`` names the architecture: this runs on a build
    machine or in CI. The result loads with :func:`pyctk.driver.module_from_buffer`, and
    links with :class:`pyctk.driver.Linker`.

    Unlike PyCUDA's: NVRTC compiles, ``target="fatbin"`` is refused (NVRTC makes one
    architecture's code per compile), and ``name_expressions`` is pyctk's.

    Parameters
    ----------
    source, nvcc, options, keep, no_extern_c, arch, code, cache_dir, include_dirs, name_expressions
        As for :class:`SourceModule`. With no ``arch`` and ``code``, the current GPU's
        architecture (which needs one).
    target : {"cubin", "ptx"}, optional
        ``"cubin"``: SASS for ``code``, else for ``arch`` when it is ``'sm_XY'``; PTX when it
        is ``'compute_XY'``, where nvcc would refuse. ``"ptx"``: PTX for ``arch``'s virtual
        architecture.

    Returns
    -------
    bytes
        An ELF CUBIN, or the PTX text.

    Raises
    ------
    pyctk.compiler.CompileError
        The source does not compile (the message is NVRTC's log), or an option NVRTC has no
        equivalent of.
    pyctk.UnsupportedError
        ``target="fatbin"``, or a GPU older than NVRTC supports.
    ValueError
        An architecture NVRTC does not know, or ``code`` that cannot come from ``arch``.

    Examples
    --------
    >>> from pyctk.compiler import compile
    >>> source = "__global__ void one(int *x) { *x = 1; }"
    >>> cubin = compile(source, arch="sm_80")                  # SASS for compute capability 8.0
    >>> cubin[:4]
    b'\\x7fELF'
    >>> ptx = compile(source, arch="sm_80", target="ptx").decode()
    >>> [line for line in ptx.splitlines() if line.startswith((".target", ".visible"))]
    ['.target sm_80', '.visible .entry one(']
    """
    program = _build(source, options, no_extern_c, arch, include_dirs, name_expressions, cache_dir, code, target, keep)
    return program.image.rstrip(b"\0") if program.target.startswith("compute_") else program.image


class DynamicModule:
    """Sources, device code and device libraries linked into one module with nvJitLink
    (PyCUDA's ``DynamicModule``); :meth:`~pyctk.compiler.DynamicModule.link` loads it.

    Each ``add_*`` method returns the module, so calls chain; after :meth:`link`, the
    module's kernels come from :meth:`get_function`, as a :class:`pyctk.driver.Module`'s
    do. Sources that use each other's ``__device__`` functions or variables need
    ``nvcc_options=["-rdc=true"]`` (relocatable device code).

    Unlike PyCUDA's: nvJitLink links, on the CPU, not the driver's JIT linker
    (``pip install "pyctk-cu12[nvrtc,nvjitlink]"``); ``nvcc`` is ignored.

    Parameters
    ----------
    nvcc : str, optional
        Ignored.
    link_options : list, optional
        As ``options`` of :class:`pyctk.driver.Linker`: ``(jit_option, int)`` pairs or
        nvJitLink's own option strings.
    keep, no_extern_c, arch, code, cache_dir, include_dirs
        The sources' compile settings, as for :class:`SourceModule`. The code is linked for
        ``code``, else ``arch`` when it is ``'sm_XY'``, else the current GPU.
    message_handler, log_verbose
        As for :class:`pyctk.driver.Linker`.
    cuda_libdir : str or path, optional
        Where :meth:`add_stdlib` looks; default: beside NVIDIA's CUDA runtime wheel.

    Attributes
    ----------
    linker : pyctk.driver.Linker or None
        The link in progress; None once linked.
    module : pyctk.driver.Module or None
        The linked module; None until :meth:`link`.

    Examples
    --------
    A kernel that calls a device function of another source:

    >>> import numpy as np                                              # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> from pyctk.compiler import DynamicModule
    >>> helpers = "__device__ int twice(int x) { return 2 * x; }"
    >>> kernels = \'\'\'
    ... __device__ int twice(int x);
    ... __global__ void apply(int *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\'\'\'
    >>> mod = (DynamicModule().add_source(helpers, nvcc_options=["-rdc=true"])
    ...        .add_source(kernels, nvcc_options=["-rdc=true"]).link())
    >>> x = np.arange(4, dtype=np.int32)
    >>> mod.get_function("apply")(cuda.InOut(x), block=(4, 1, 1))
    >>> x
    array([0, 2, 4, 6], dtype=int32)
    """

    def __init__(
        self,
        nvcc: str = "nvcc",
        link_options: Any = None,
        keep: bool = False,
        no_extern_c: bool = False,
        arch: str | None = None,
        code: str | None = None,
        cache_dir: Any = None,
        include_dirs: Sequence[str] | None = None,
        message_handler: Any = None,
        log_verbose: bool = False,
        cuda_libdir: str | os.PathLike | None = None,
    ) -> None:
        link_arch = next((a for a in (code, arch) if isinstance(a, str) and a.startswith("sm_")), None)
        self.linker: Linker | None = Linker(message_handler, link_options, log_verbose, arch=link_arch)
        self.keep, self.no_extern_c, self.arch, self.code = keep, no_extern_c, arch, code
        self.cache_dir, self.include_dirs, self.cuda_libdir = cache_dir, include_dirs, cuda_libdir
        self.module: Module | None = None

    def _linker(self) -> Linker:
        if self.linker is None:
            raise LogicError("this DynamicModule is linked already: make a new one to link more")
        return self.linker

    def add_source(
        self, source: str, nvcc_options: Sequence[str] | None = None, name: str = "kernel.ptx"
    ) -> DynamicModule:
        """Compile ``source`` to PTX with the module's settings and add it.

        Parameters
        ----------
        source : str
            CUDA C++, as for :class:`SourceModule`.
        nvcc_options : list of str, optional
            nvcc's options (None: :data:`~pyctk.compiler.DEFAULT_NVCC_FLAGS`); add
            ``"-rdc=true"`` for code that other sources call.
        name : str, optional
            The PTX's name in the linker's messages.

        Returns
        -------
        DynamicModule
            This module.
        """
        ptx = compile(
            source,
            options=nvcc_options,
            keep=self.keep,
            no_extern_c=self.no_extern_c,
            arch=self.arch,
            code=self.code,
            cache_dir=self.cache_dir,
            include_dirs=self.include_dirs,
            target="ptx",
        )
        self._linker().add_data(ptx, jit_input_type.PTX, name)
        return self

    def add_data(self, data: Any, input_type: jit_input_type, name: str = "unknown") -> DynamicModule:
        """Add a CUBIN, PTX, fatbinary, object or library image (:meth:`pyctk.driver.Linker.add_data`).

        Parameters
        ----------
        data : bytes
            The image.
        input_type : pyctk.driver.jit_input_type
            What ``data`` is.
        name : str, optional
            Its name in the linker's messages.

        Returns
        -------
        DynamicModule
            This module.
        """
        self._linker().add_data(data, input_type, name)
        return self

    def add_file(self, filename: str | os.PathLike, input_type: jit_input_type) -> DynamicModule:
        """Add the image in a file (:meth:`pyctk.driver.Linker.add_file`).

        Parameters
        ----------
        filename : str or path
        input_type : pyctk.driver.jit_input_type
            What the file holds.

        Returns
        -------
        DynamicModule
            This module.
        """
        self._linker().add_file(filename, input_type)
        return self

    def add_stdlib(self, libname: str) -> DynamicModule:
        """Add the static library ``lib<libname>.a`` of the CUDA toolkit's libraries.

        Parameters
        ----------
        libname : str
            ``"cudadevrt"``, the device runtime that dynamic parallelism needs. It is looked
            for in ``cuda_libdir`` if given, else beside NVIDIA's CUDA runtime wheel, else in
            ``$CUDA_PATH`` or ``$CUDA_HOME``.

        Returns
        -------
        DynamicModule
            This module.

        Raises
        ------
        pyctk.LibraryNotFoundError
            The library is in none of those places; the message lists each.
        """
        self._linker().add_file(find_stdlib(libname, self.cuda_libdir), jit_input_type.LIBRARY)
        return self

    def link(self) -> DynamicModule:
        """Link what was added and load it on the current GPU, as ``module``.

        Returns
        -------
        DynamicModule
            This module, linked: nothing more can be added.

        Raises
        ------
        pyctk.driver.LogicError
            The link failed (the message ends with nvJitLink's log), or the module was
            linked already.
        """
        self.module, self.linker = self._linker().link_module(), None
        return self

    def _linked(self) -> Module:
        if self.module is None:
            raise LogicError("this DynamicModule is not linked yet: call link() first")
        return self.module

    def get_function(self, name: str) -> Any:
        """The kernel ``name`` of the linked module (:meth:`pyctk.driver.Module.get_function`).

        Parameters
        ----------
        name : str

        Returns
        -------
        pyctk.driver.Function
        """
        return self._linked().get_function(name)

    def get_global(self, name: str) -> tuple[int, int]:
        """The address and size in bytes of the linked module's ``__device__`` variable ``name``
        (:meth:`pyctk.driver.Module.get_global`).

        Parameters
        ----------
        name : str

        Returns
        -------
        tuple of int
        """
        return self._linked().get_global(name)


class DynamicSourceModule(DynamicModule):
    """One source compiled as relocatable device code and linked with the device runtime,
    for dynamic parallelism: kernels that launch kernels (PyCUDA's ``DynamicSourceModule``).

    ``-rdc=true`` is added to ``options``, and ``libcudadevrt.a`` comes from NVIDIA's CUDA
    runtime wheel; the module is linked and loaded when made. It needs NVRTC and nvJitLink:
    ``pip install "pyctk-cu12[nvrtc,nvjitlink]"``.

    Unlike PyCUDA's: nvJitLink links instead of nvcc (``-lcudadevrt`` in ``options`` is
    dropped: the library is linked anyway).

    Parameters
    ----------
    source, nvcc, options, keep, no_extern_c, arch, code, cache_dir, include_dirs
        As for :class:`SourceModule`.
    cuda_libdir : str or path, optional
        Where ``libcudadevrt.a`` is, if not beside the CUDA runtime wheel.

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> from pyctk.compiler import DynamicSourceModule
    >>> mod = DynamicSourceModule(\'\'\'
    ... __global__ void child(int *x) { x[threadIdx.x] += 1; }
    ... __global__ void parent(int *x) { child<<<1, 4>>>(x); }\'\'\')
    >>> x = np.arange(4, dtype=np.int32)
    >>> mod.get_function("parent")(cuda.InOut(x), block=(1, 1, 1))
    >>> x
    array([1, 2, 3, 4], dtype=int32)
    """

    def __init__(
        self,
        source: str,
        nvcc: str = "nvcc",
        options: Sequence[str] | None = None,
        keep: bool = False,
        no_extern_c: bool = False,
        arch: str | None = None,
        code: str | None = None,
        cache_dir: Any = None,
        include_dirs: Sequence[str] | None = None,
        cuda_libdir: str | os.PathLike | None = None,
    ) -> None:
        super().__init__(nvcc, None, keep, no_extern_c, arch, code, cache_dir, include_dirs, cuda_libdir=cuda_libdir)
        # PyCUDA adds -lcudadevrt for nvcc; here the library is linked by add_stdlib.
        options = [o for o in (DEFAULT_NVCC_FLAGS if options is None else options) if o != "-lcudadevrt"]
        if "-rdc=true" not in options:
            options.append("-rdc=true")
        self.add_source(source, nvcc_options=options).add_stdlib("cudadevrt").link()


def clear_cache(cache_dir: Any = None) -> int:
    """Remove every compiled kernel from the kernel cache; pyctk's (PyCUDA has no such function).

    Parameters
    ----------
    cache_dir : str or path, optional
        The ``cache_dir`` the kernels were compiled with; default the default cache,
        ``$PYCTK_CACHE_DIR`` or ``~/.cache/pyctk``.

    Returns
    -------
    int
        How many entries were removed.

    Examples
    --------
    >>> from pyctk.compiler import clear_cache, compile
    >>> cubin = compile("__global__ void k() {}", arch="sm_80", cache_dir="my-kernels")
    >>> clear_cache("my-kernels")
    1
    >>> clear_cache("my-kernels")
    0
    """
    return kernel_cache.clear(
        kernel_cache.default_directory() if cache_dir is None else kernel_cache.directory(cache_dir)
    )


def nvrtc_version() -> tuple[int, int]:
    """The version of the NVRTC that pyctk compiles with; pyctk's (PyCUDA has nvcc's instead).

    NVRTC is loaded to ask it; no GPU is needed.

    Returns
    -------
    tuple of int
        ``(major, minor)``, e.g. ``(12, 9)``.

    Raises
    ------
    pyctk.LibraryNotFoundError
        NVRTC is not installed: the message gives the pip command.

    Examples
    --------
    >>> from pyctk.compiler import nvrtc_version
    >>> major, minor = nvrtc_version()
    >>> major >= 12
    True
    """
    return nvrtc.version()


def supported_archs() -> list[int]:
    """The architectures that NVRTC compiles SASS for; pyctk's (PyCUDA has no such function).

    ``arch="sm_XY"`` takes those; a GPU newer than all of them gets PTX, which its driver
    compiles.

    Returns
    -------
    list of int
        Compute capabilities as numbers, oldest first: ``[75, 80, 86, ..., 121]`` (90 is
        compute capability 9.0).

    Raises
    ------
    pyctk.LibraryNotFoundError
        NVRTC is not installed: the message gives the pip command.

    Examples
    --------
    >>> from pyctk.compiler import supported_archs
    >>> archs = supported_archs()
    >>> 80 in archs and 90 in archs, archs == sorted(archs)
    (True, True)
    """
    return nvrtc.supported_archs()
