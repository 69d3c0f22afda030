"""NVRTC, the CUDA run-time compiler, through ctypes: loading it and compiling one program.

NVRTC comes from NVIDIA's pip wheel (``nvidia-cuda-nvrtc-cu12`` / ``nvidia-cuda-nvrtc``),
which ``pip install "pyctk-cu12[nvrtc]"`` adds; pyctk's loader finds it like every other
CUDA library (``pyctk._cuda.loader``: the same search order, ``PYCTK_DEBUG_LOAD=1`` logs it).
NVRTC runs on the CPU: compiling needs no GPU and no driver.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_void_p
from typing import Any, NamedTuple

from .driver_errors import CompileError
from .optional_library import OptionalLibrary

SUCCESS, COMPILATION_FAILED = 0, 6  # nvrtcResult
PROGRAM_NAME = "kernel.cu"  # how compile logs name the source: "kernel.cu(3): error: ..."
# The name NVRTC is given: a folder that cannot exist (/dev/null is a file), so that quoted
# #includes of the source are searched in the include paths only, never in the working
# directory, while those of headers still are beside the header. `#line` shows PROGRAM_NAME.
_PROGRAM_PATH = "/dev/null/" + PROGRAM_NAME

_RESULT = c_int  # nvrtcResult
_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {  # name -> (result type, argument types), as nvrtc.h declares them
    "nvrtcVersion": (_RESULT, [POINTER(c_int), POINTER(c_int)]),
    "nvrtcGetNumSupportedArchs": (_RESULT, [POINTER(c_int)]),
    "nvrtcGetSupportedArchs": (_RESULT, [POINTER(c_int)]),
    "nvrtcCreateProgram": (_RESULT, [POINTER(c_void_p), c_char_p, c_char_p, c_int, c_void_p, c_void_p]),
    "nvrtcDestroyProgram": (_RESULT, [POINTER(c_void_p)]),
    "nvrtcAddNameExpression": (_RESULT, [c_void_p, c_char_p]),
    "nvrtcCompileProgram": (_RESULT, [c_void_p, c_int, POINTER(c_char_p)]),
    "nvrtcGetProgramLogSize": (_RESULT, [c_void_p, POINTER(c_size_t)]),
    "nvrtcGetProgramLog": (_RESULT, [c_void_p, c_char_p]),
    "nvrtcGetPTXSize": (_RESULT, [c_void_p, POINTER(c_size_t)]),
    "nvrtcGetPTX": (_RESULT, [c_void_p, c_char_p]),
    "nvrtcGetCUBINSize": (_RESULT, [c_void_p, POINTER(c_size_t)]),
    "nvrtcGetCUBIN": (_RESULT, [c_void_p, c_char_p]),
    "nvrtcGetLoweredName": (_RESULT, [c_void_p, c_char_p, POINTER(c_char_p)]),
    "nvrtcGetErrorString": (c_char_p, [_RESULT]),
}

# Loaded on first use: library() (LibraryNotFoundError with the pip command when absent).
library = OptionalLibrary("nvrtc", "compiles kernels with NVRTC, the CUDA run-time compiler", "nvrtc", _PROTOTYPES)
install_command = library.install_command


def _check(result: int, what: str) -> None:
    if result != SUCCESS:
        raise CompileError(f"{what} failed: {library().nvrtcGetErrorString(result).decode()}")


def version() -> tuple[int, int]:
    """NVRTC's (major, minor) version, e.g. (13, 0)."""
    major, minor = c_int(), c_int()
    _check(library().nvrtcVersion(byref(major), byref(minor)), "nvrtcVersion")
    return major.value, minor.value


def supported_archs() -> list[int]:
    """The architectures NVRTC compiles for, ascending (75 for sm_75 ...)."""
    count = c_int()
    _check(library().nvrtcGetNumSupportedArchs(byref(count)), "nvrtcGetNumSupportedArchs")
    archs = (c_int * count.value)()
    _check(library().nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs")
    return sorted(archs)


class Output(NamedTuple):
    image: bytes  # the CUBIN, or the PTX (NUL-terminated, as the driver loads it)
    ptx: str  # the PTX, also made on the way to a CUBIN: it names each kernel's parameters
    lowered: dict[str, str]  # name expression -> the kernel's symbol ("kern<float>" -> "_Z4kernIfEvPT_")
    log: str  # NVRTC's warnings, if any


def _read(program: c_void_p, size_function: str, get_function: str) -> bytes:
    size = c_size_t()
    _check(getattr(library(), size_function)(program, byref(size)), size_function)
    data = ctypes.create_string_buffer(size.value)
    _check(getattr(library(), get_function)(program, data), get_function)
    return data.raw


def compile_program(source: str, options: Sequence[str], name_expressions: Sequence[str], cubin: bool) -> Output:
    """Compile ``source`` with NVRTC ``options``; raise CompileError with the whole log on failure.

    ``cubin`` says whether ``options`` name a real architecture (``sm_XY``), whose CUBIN
    is the image, or a virtual one (``compute_XY``), whose PTX is.
    """
    lib, program = library(), c_void_p()
    text = f'#line 1 "{PROGRAM_NAME}"\n{source}'
    _check(
        lib.nvrtcCreateProgram(byref(program), text.encode(), _PROGRAM_PATH.encode(), 0, None, None),
        "nvrtcCreateProgram",
    )
    try:
        for expression in name_expressions:
            _check(lib.nvrtcAddNameExpression(program, expression.encode()), "nvrtcAddNameExpression")
        encoded = (c_char_p * len(options))(*(option.encode() for option in options))
        result = lib.nvrtcCompileProgram(program, len(options), encoded)
        log = _read(program, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog").rstrip(b"\0").decode(errors="replace")
        if result != SUCCESS:
            raise CompileError(
                f"NVRTC could not compile the kernel source ({lib.nvrtcGetErrorString(result).decode()}):\n{log}",
                log,
                options,
            )
        ptx = _read(program, "nvrtcGetPTXSize", "nvrtcGetPTX")
        image = _read(program, "nvrtcGetCUBINSize", "nvrtcGetCUBIN") if cubin else ptx
        lowered = {}
        for expression in name_expressions:
            name = c_char_p()
            _check(
                lib.nvrtcGetLoweredName(program, expression.encode(), byref(name)),
                f"nvrtcGetLoweredName({expression!r})",
            )
            lowered[expression] = (name.value or b"").decode()
        return Output(image, ptx.rstrip(b"\0").decode(), lowered, log)
    finally:
        lib.nvrtcDestroyProgram(byref(program))
