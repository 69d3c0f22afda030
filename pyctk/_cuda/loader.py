"""Find and load the CUDA libraries pyctk needs, then libgpumatmul itself.

One function per concern: ``library_spec`` says what a library is called and
where its wheel puts it, ``find_library`` finds it, ``load_library`` loads it,
``load_gpumatmul`` loads everything in dependency order, ``declare`` gives a
loaded library's functions their C signatures, and ``loaded_libraries`` reports
what was loaded and how. ``elf_needed`` reads a library's dependencies from its
file, so that a libgpumatmul of the other CUDA major is refused before it is
loaded (loading it would pull in that major's cudart and cuBLAS).

Search order for each library, first match wins (the README repeats it):

1. ``already-loaded``: a library of that exact file name already mapped into
   this process (by PyTorch, say). The dynamic linker binds libgpumatmul to
   that copy whatever else we load, so it is the one to use and report.
2. ``site-packages``: the NVIDIA pip wheels, on every ``sys.path`` entry,
   entries inside ``sys.prefix`` (the active venv) first, the rest (user site,
   PEX/Bazel roots, purelib and platlib apart) in ``sys.path`` order.
3. ``CUDA_PATH``, then ``CUDA_HOME``: a system toolkit's ``lib64``, ``lib``
   (Windows: ``bin``, ``bin/x64``).
4. ``system``: the dynamic linker's own search by file name
   (``LD_LIBRARY_PATH``, the ldconfig cache).

Only file names of the CUDA major pyctk was built for are ever considered
(``libcudart.so.12`` for CUDA 12), so the other major is never picked up.
``PYCTK_DEBUG_LOAD=1`` logs every step to stderr.

Standard library only: the build (libgpu/tools) imports this file by path to
find the same wheels for headers, link libraries and NVRTC.
"""

from __future__ import annotations

import ctypes
import os
import re
import struct
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:  # importable as pyctk._cuda.loader and, by the build, as a plain file
    from .errors import LibraryNotFoundError, PyctkError
except ImportError:  # pragma: no cover - only in the build's by-path import
    LibraryNotFoundError = OSError  # type: ignore[misc,assignment]
    PyctkError = RuntimeError  # type: ignore[misc,assignment]

# ---------------------------------------------------------------------------
# What each library is called and where its wheel puts it, per OS and major.


@dataclass(frozen=True)
class _Library:
    """One CUDA library pyctk loads: what its files are called and where its wheels put them
    (what is the same for every library is in _WHEEL_LAYOUTS and _DISTRIBUTION_SUFFIXES)."""

    name: str  # "cublas": libcublas.so.N, cublas64_N.dll
    wheel_folder: str  # its CUDA 12 wheel's folder under site-packages/nvidia
    distribution: str  # its CUDA 13 wheel; CUDA 12's adds "-cu12"
    required: bool = False  # loaded with libgpumatmul, in _LIBRARIES' order; else on first use
    needs: tuple[str, ...] = ()  # libraries to load before it (earlier rows of _LIBRARIES)
    dll: str = "{name}64_{major}.dll"  # its Windows file name
    # Numbered by its own major, not CUDA's, with its wheels' versions by CUDA major.
    own_major: int | None = None
    own_versions: Mapping[int, str] = field(default_factory=dict)

    def file_name(self, major: int, os_name: str) -> str:
        own = self.own_major or major
        return self.dll.format(name=self.name, major=own) if os_name == "win32" else f"lib{self.name}.so.{own}"

    def wheel_dir(self, major: int, os_name: str) -> str:
        """The folder of its file, relative to a sys.path entry."""
        return _WHEEL_LAYOUTS[(os_name, major)].format(folder=self.wheel_folder)

    def pip_name(self, major: int) -> str:
        return self.distribution + _DISTRIBUTION_SUFFIXES[major]


# (os, CUDA major) -> the folder of a library's file in site-packages: CUDA 12's wheels put each
# library in a folder of its own, CUDA 13's all in one; Windows keeps DLLs in bin.
_WHEEL_LAYOUTS = {
    ("linux", 12): "nvidia/{folder}/lib",
    ("win32", 12): "nvidia/{folder}/bin",
    ("linux", 13): "nvidia/cu13/lib",
    ("win32", 13): "nvidia/cu13/bin/x86_64",
}
_DISTRIBUTION_SUFFIXES = {12: "-cu12", 13: ""}  # CUDA major -> what its wheels' names end in


# Every library pyctk loads. The required ones are loaded in this order, each after what it
# needs (cuBLAS needs cuBLASLt; loading it first could let the linker pick a stray system copy).
_LIBRARIES = {
    library.name: library
    for library in (
        _Library("cudart", "cuda_runtime", "nvidia-cuda-runtime", required=True),
        _Library("cublasLt", "cublas", "nvidia-cublas", required=True),
        _Library("cublas", "cublas", "nvidia-cublas", required=True, needs=("cublasLt",)),
        # NVRTC's and nvJitLink's DLLs also carry the minor: nvrtc64_120_0.dll.
        _Library("nvrtc", "cuda_nvrtc", "nvidia-cuda-nvrtc", dll="nvrtc64_{major}0_0.dll"),
        _Library("nvJitLink", "nvjitlink", "nvidia-nvjitlink", dll="nvJitLink_{major}0_0.dll"),
        # Only the build loads nvFatbin (libgpu/tools/embed_kernels.py compresses the kernel
        # images with it), and only on Linux.
        _Library("nvfatbin", "nvfatbin", "nvidia-nvfatbin"),
        # cuRAND 10 ships with CUDA 12 and 13 (libcurand.so.10, curand64_10.dll), its wheels
        # versioned 10.3.x (CUDA 12) and 10.4.x (CUDA 13).
        _Library("curand", "curand", "nvidia-curand", own_major=10, own_versions={12: ">=10.3,<11", 13: ">=10.4,<11"}),
    )
}

# os -> folders of a toolkit root (CUDA_PATH, CUDA_HOME) that hold libraries.
_TOOLKIT_DIRS = {"linux": ("lib64", "lib"), "win32": ("bin", "bin/x64")}

# Those loaded with libgpumatmul, in load order.
CUDA_LIBRARIES = tuple(name for name, library in _LIBRARIES.items() if library.required)


@dataclass(frozen=True)
class LibrarySpec:
    name: str  # "cublas"
    major: int  # 12
    file_name: str  # "libcublas.so.12"
    wheel_dir: str  # "nvidia/cublas/lib", relative to a sys.path entry
    toolkit_dirs: tuple[str, ...]
    pip_name: str  # "nvidia-cublas-cu12"

    @property
    def pip_install(self) -> str:
        return f'pip install "{pip_requirement(self.pip_name, self.major)}"'


def pip_requirement(pip_name: str, major: int) -> str:
    """``pip_name`` with the versions of its wheel that belong to CUDA ``major``."""
    own = {
        library.pip_name(cuda): versions
        for library in _LIBRARIES.values()
        for cuda, versions in library.own_versions.items()
    }
    return pip_name + own.get(pip_name, f">={major},<{major + 1}")


def current_os() -> str:
    return "win32" if sys.platform == "win32" else "linux"


def library_spec(name: str, major: int, os_name: str | None = None) -> LibrarySpec:
    """What library ``name`` ("cudart", "cublasLt", "cublas", "nvrtc", "nvJitLink", "curand", "nvfatbin") of CUDA
    ``major`` is called and where it lives."""
    os_name = os_name or current_os()
    library = _LIBRARIES.get(name)
    if library is None or (os_name, major) not in _WHEEL_LAYOUTS:
        raise ValueError(f"pyctk knows no library {name!r} for CUDA {major} on {os_name}")
    return LibrarySpec(
        name,
        major,
        library.file_name(major, os_name),
        library.wheel_dir(major, os_name),
        _TOOLKIT_DIRS[os_name],
        library.pip_name(major),
    )


# ---------------------------------------------------------------------------
# Logging and the record of what was loaded (the module's only state).


def _debug(message: str) -> None:
    if os.environ.get("PYCTK_DEBUG_LOAD", "") not in ("", "0"):
        print(f"pyctk.load: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class LoadedLibrary:
    name: str  # "cublas", or "gpumatmul"
    path: str  # absolute path of the file the process mapped
    found_via: str  # "already-loaded", "site-packages", "CUDA_PATH", "CUDA_HOME", "system", "package"


# Keyed by (library name, CUDA major): one major's library is never handed out for the other's.
_loaded: dict[tuple[str, int], LoadedLibrary] = {}
_handles: dict[tuple[str, int], ctypes.CDLL] = {}


def loaded_libraries() -> list[LoadedLibrary]:
    """The libraries this process loaded through pyctk, in load order."""
    return list(_loaded.values())


# ---------------------------------------------------------------------------
# Finding.


@dataclass(frozen=True)
class Found:
    path: str  # absolute path, or the bare file name for the "system" step
    found_via: str


def _mapped_paths(maps_file: str = "/proc/self/maps") -> Iterator[str]:
    try:
        with open(maps_file, encoding="utf-8", errors="replace") as maps:
            for line in maps:
                fields = line.split(maxsplit=5)
                if len(fields) == 6 and fields[5].startswith("/"):
                    yield fields[5].rstrip("\n")
    except OSError:  # not Linux: nothing is reported as already loaded
        return


def already_loaded(file_name: str, maps_file: str = "/proc/self/maps") -> str | None:
    """Path of a library ``file_name`` mapped into this process, if any: maps name the file a
    symlink points to, so a toolkit's libcudart.so.12 shows as libcudart.so.12.9.79."""
    for path in _mapped_paths(maps_file):
        base = os.path.basename(path)
        if base == file_name or base.startswith(file_name + "."):
            return path
    return None


def site_dirs(search_path: Sequence[str] | None = None, prefix: str | None = None) -> list[str]:
    """The sys.path entries to search, active environment first (NVIDIA/cuda-python#1716)."""
    entries = [os.path.abspath(p) for p in (sys.path if search_path is None else search_path) if p]
    prefix = os.path.abspath(sys.prefix if prefix is None else prefix)
    inside = [p for p in entries if p == prefix or p.startswith(prefix + os.sep)]
    unique: list[str] = []
    for entry in inside + [p for p in entries if p not in inside]:
        if entry not in unique and os.path.isdir(entry):
            unique.append(entry)
    return unique


def candidates(
    spec: LibrarySpec,
    search_path: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    prefix: str | None = None,
) -> Iterator[Found]:
    """Every file to try for ``spec``, in search order, existing or not, "system" last."""
    environ = os.environ if environ is None else environ
    for entry in site_dirs(search_path, prefix):
        yield Found(os.path.join(entry, *spec.wheel_dir.split("/"), spec.file_name), "site-packages")
    for variable in ("CUDA_PATH", "CUDA_HOME"):
        root = environ.get(variable)
        if root:
            for folder in spec.toolkit_dirs:
                yield Found(os.path.join(root, *folder.split("/"), spec.file_name), variable)
    yield Found(spec.file_name, "system")


def find_library(
    spec: LibrarySpec,
    search_path: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    prefix: str | None = None,
) -> list[Found]:
    """The places ``spec`` is, in search order: an already-loaded copy, then existing files, then "system".

    Finding touches no library; ``load_library`` walks this list.
    """
    loaded = already_loaded(spec.file_name)
    found = [Found(loaded, "already-loaded")] if loaded else []
    for candidate in candidates(spec, search_path, environ, prefix):
        if candidate.found_via == "system" or os.path.isfile(candidate.path):
            found.append(candidate)
    return found


# ---------------------------------------------------------------------------
# Loading.


def _dlopen(path: str) -> ctypes.CDLL:
    mode = getattr(os, "RTLD_NOW", 0) | getattr(os, "RTLD_GLOBAL", 0)
    return ctypes.CDLL(path, mode=mode)


def load_library(
    spec: LibrarySpec, search_path: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> LoadedLibrary:
    """Load ``spec`` from the first place that works; raise LibraryNotFoundError listing every try."""
    key = (spec.name, spec.major)
    if key in _loaded:
        return _loaded[key]
    tried: list[str] = []
    for place in find_library(spec, search_path, environ):
        _debug(f"{spec.file_name}: trying {place.path} ({place.found_via})")
        try:
            handle = _dlopen(place.path)
        except OSError as error:
            _debug(f"{spec.file_name}: failed: {error}")
            tried.append(f"{place.path} ({place.found_via}): {error}")
            continue
        path = already_loaded(spec.file_name) or os.path.abspath(place.path)
        library = LoadedLibrary(spec.name, path, place.found_via)
        _debug(f"{spec.file_name}: loaded {path} ({place.found_via})")
        _loaded[key], _handles[key] = library, handle
        return library
    raise LibraryNotFoundError(_not_found_message(spec, tried, search_path, environ))


def _not_found_message(
    spec: LibrarySpec, tried: list[str], search_path: Sequence[str] | None, environ: Mapping[str, str] | None
) -> str:
    environ = os.environ if environ is None else environ
    looked = [
        f"  {c.path} ({c.found_via}): not there"
        for c in candidates(spec, search_path, environ)
        if c.found_via != "system" and not os.path.isfile(c.path)
    ]  # the rest are in `tried`
    unset = [f"  ${v}: not set" for v in ("CUDA_PATH", "CUDA_HOME") if not environ.get(v)]
    lines = [
        f"pyctk could not load {spec.file_name} (CUDA {spec.major} {spec.name}).",
        "Searched, in order:",
        "  already loaded in this process: no",
        *looked,
        *unset,
        *(f"  {t}" for t in tried),
        f"Fix: {spec.pip_install}",
        "Set PYCTK_DEBUG_LOAD=1 to log every step.",
    ]
    return "\n".join(lines)


def load_cuda_libraries(
    major: int, search_path: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> list[LoadedLibrary]:
    """Load cudart, cuBLASLt and cuBLAS of ``major``, in dependency order."""
    return [load_library(library_spec(name, major), search_path, environ) for name in CUDA_LIBRARIES]


def driver_status() -> str:
    """Where the dynamic linker finds the NVIDIA driver's library, or why it does not."""
    name = "nvcuda.dll" if current_os() == "win32" else "libcuda.so.1"
    try:
        _dlopen(name)
    except OSError as error:
        return f"the dynamic linker found no {name} (the NVIDIA driver's library): {error}"
    return f"the driver's library is {already_loaded(name) or name}"


def gpumatmul_path() -> Path:
    """Where libgpumatmul lives inside the installed pyctk package."""
    from importlib.resources import files  # editable installs map the file too

    return Path(str(files("pyctk") / ("gpumatmul.dll" if current_os() == "win32" else "libgpumatmul.so")))


def load_gpumatmul(major: int) -> ctypes.CDLL:
    """Load the CUDA libraries of ``major`` and then libgpumatmul; return libgpumatmul's handle.

    A libgpumatmul built for the other major (the files of pyctk-cu12 and pyctk-cu13 mixed
    in one environment) is refused with PyctkError before anything is loaded.
    """
    key = ("gpumatmul", major)
    if key not in _handles:
        path = gpumatmul_path()
        _debug(f"libgpumatmul: checking {path}")
        if not path.is_file():
            raise LibraryNotFoundError(
                f"pyctk's own library is missing: {path} does not exist.\n"
                f"Fix: reinstall pyctk (pip install --force-reinstall pyctk-cu{major})."
            )
        try:
            built_for = cudart_major(path)
        except (OSError, ValueError) as error:
            raise LibraryNotFoundError(
                f"pyctk could not load {path}: {error}.\n"
                f"Fix: reinstall pyctk (pip install --force-reinstall pyctk-cu{major})."
            ) from error
        if built_for != major:
            raise PyctkError(
                f"pyctk's files are mixed: its Python code is for CUDA {major} but "
                f"libgpumatmul.so is for CUDA {built_for}. Reinstall one: "
                f"pip uninstall -y pyctk-cu12 pyctk-cu13 && pip install pyctk-cu{major}"
            )
        load_cuda_libraries(major)
        _debug(f"libgpumatmul: loading {path}")
        try:
            handle = _dlopen(str(path))
        except OSError as error:
            raise LibraryNotFoundError(f"pyctk could not load {path}: {error}") from error
        _loaded[key] = LoadedLibrary("gpumatmul", str(path), "package")
        _handles[key] = handle
    return _handles[key]


def declare(library: ctypes.CDLL, prototypes: Mapping[str, tuple[Any, list[Any]]]) -> ctypes.CDLL:
    """Give each function of ``library`` named in ``prototypes`` (name: (restype, argtypes))
    its C signature, so that ctypes converts its arguments and result as C does; return
    ``library``. Each pyctk module that calls a C library keeps its table."""
    for name, (restype, argtypes) in prototypes.items():
        function = getattr(library, name)
        function.restype, function.argtypes = restype, argtypes
    return library


# ---------------------------------------------------------------------------
# A library's dependencies, read from its file: nothing is loaded or run.

_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_RPATH, _DT_RUNPATH = 0, 1, 5, 15, 29


def _elf_dynamic_strings(path: str | os.PathLike[str], tags: tuple[int, ...]) -> list[str]:
    """The strings of the dynamic entries of ``tags`` in the 64-bit ELF file ``path``, in order.

    Read as the dynamic linker reads them: the dynamic segment from the program headers,
    its string table located through the loadable segments (section headers may be
    stripped). Raises ValueError for a file that is not such an ELF file.
    """
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4:5] != b"\x02":  # ELFCLASS64
        raise ValueError("not a 64-bit ELF file")
    order = {b"\x01": "<", b"\x02": ">"}.get(data[5:6])  # EI_DATA: little- or big-endian
    if order is None:
        raise ValueError("not a 64-bit ELF file")
    try:
        (phoff,) = struct.unpack_from(order + "Q", data, 32)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 54)
        # (p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz) of each program header
        segments = [struct.unpack_from(order + "IIQQQQ", data, phoff + i * phentsize) for i in range(phnum)]
        dynamic = next(offset for kind, _, offset, _, _, _ in segments if kind == _PT_DYNAMIC)
        entries = []  # (d_tag, d_val) up to DT_NULL
        for position in range(dynamic, len(data), 16):
            tag, value = struct.unpack_from(order + "qQ", data, position)
            if tag == _DT_NULL:
                break
            entries.append((tag, value))
        strtab = next(value for tag, value in entries if tag == _DT_STRTAB)  # an address
        strings = next(
            offset + strtab - vaddr
            for kind, _, offset, vaddr, _, size in segments
            if kind == _PT_LOAD and vaddr <= strtab < vaddr + size
        )
        return [
            data[strings + value : data.index(b"\0", strings + value)].decode() for tag, value in entries if tag in tags
        ]
    except (struct.error, StopIteration, ValueError) as error:  # ValueError: no NUL, not UTF-8
        raise ValueError(f"not a well-formed ELF shared library ({error!r})") from None


def elf_needed(path: str | os.PathLike[str]) -> list[str]:
    """The DT_NEEDED entries (the libraries it links to) of the 64-bit ELF file ``path``."""
    return _elf_dynamic_strings(path, (_DT_NEEDED,))


def elf_runpath(path: str | os.PathLike[str]) -> list[str]:
    """The folders of the RUNPATH (or old-style RPATH) of the 64-bit ELF file ``path``, as
    written (``$ORIGIN`` unexpanded): where the dynamic linker looks for its libraries."""
    return [
        folder
        for value in _elf_dynamic_strings(path, (_DT_RUNPATH, _DT_RPATH))
        for folder in value.split(":")
        if folder
    ]


def cudart_major(path: str | os.PathLike[str]) -> int:
    """The CUDA major of the ``libcudart.so.N`` that ELF file ``path`` links to, from the file.

    Raises ValueError when it links to none, or to more than one.
    """
    majors = {int(match[1]) for name in elf_needed(path) if (match := re.fullmatch(r"libcudart\.so\.(\d+)", name))}
    if len(majors) != 1:
        raise ValueError(f"it links to {'no' if not majors else 'more than one'} libcudart.so.N")
    return majors.pop()


def wheel_dirs(names: Iterable[str], major: int, search_path: Sequence[str] | None = None) -> dict[str, str]:
    """For the build: the folder holding each named library in the first wheel that has it."""
    result = {}
    for name in names:
        spec = library_spec(name, major)
        for candidate in candidates(spec, search_path, environ={}):
            if candidate.found_via == "site-packages" and os.path.isfile(candidate.path):
                result[name] = os.path.dirname(candidate.path)
                break
        else:
            raise LibraryNotFoundError(
                f"building pyctk for CUDA {major} needs {spec.file_name} from the "
                f"{spec.pip_name} wheel; none on {site_dirs(search_path)}.\nFix: {spec.pip_install}"
            )
    return result
