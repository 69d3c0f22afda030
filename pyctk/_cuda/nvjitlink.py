"""nvJitLink, the CUDA device-code linker, through ctypes: loading it and linking one program.

nvJitLink comes from NVIDIA's pip wheel (``nvidia-nvjitlink-cu12`` / ``nvidia-nvjitlink``),
which ``pip install "pyctk-cu12[nvjitlink]"`` adds; pyctk's loader finds it like every other
CUDA library (``pyctk._cuda.loader``: the same search order, ``PYCTK_DEBUG_LOAD=1`` logs it).
It links PTX, CUBIN, fatbinaries, LTO-IR and static libraries of device code (such as the
device runtime, ``libcudadevrt.a``) into one CUBIN, on the CPU: no GPU and no driver.

Each function exists under a versioned name per release (``__nvJitLinkCreate_12_0`` ...
``_12_9``); pyctk calls the ``<major>_0`` ones, which every release of the major keeps, as
it asks the driver for its 12.0 functions.

>>> from pyctk._cuda import nvjitlink, nvrtc
>>> ptx = nvrtc.compile_program('extern "C" __global__ void k(float *x) { *x = 1; }',
...                             ["--gpu-architecture=compute_90"], [], cubin=False).image
>>> linked = nvjitlink.link(["-arch=sm_90"], [(nvjitlink.InputType.PTX, ptx, "k.ptx")])
>>> linked.failure, linked.cubin[:4]
('', b'\\x7fELF')
"""

from __future__ import annotations

import ctypes
import enum
from _ctypes import CFuncPtr
from collections.abc import Sequence
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_uint32, c_void_p
from typing import Any, NamedTuple

from .._build_config import CUDA_MAJOR
from .optional_library import OptionalLibrary

_ABI = f"_{CUDA_MAJOR}_0"  # the versioned names every release of the major exports


class InputType(enum.IntEnum):
    """``nvJitLinkInputType`` (nvJitLink.h)."""

    # Written here, not generated (constants.py): nvJitLink, optional, is no build requirement.
    CUBIN = 1
    PTX = 2
    LTOIR = 3
    FATBIN = 4
    OBJECT = 5  # a host object file with device code in it
    LIBRARY = 6  # a host static library (.a) of such objects


# nvJitLinkResult, by value (nvJitLink.h; the 12.x header maps the later ones onto earlier values).
RESULTS = (
    "NVJITLINK_SUCCESS",
    "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
    "NVJITLINK_ERROR_MISSING_ARCH",
    "NVJITLINK_ERROR_INVALID_INPUT",
    "NVJITLINK_ERROR_PTX_COMPILE",
    "NVJITLINK_ERROR_NVVM_COMPILE",
    "NVJITLINK_ERROR_INTERNAL",
    "NVJITLINK_ERROR_THREADPOOL",
    "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
    "NVJITLINK_ERROR_FINALIZE",
    "NVJITLINK_ERROR_NULL_INPUT",
    "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
    "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
    "NVJITLINK_ERROR_ARCH_MISMATCH",
    "NVJITLINK_ERROR_OUTDATED_LIBRARY",
    "NVJITLINK_ERROR_MISSING_FATBIN",
    "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
    "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
    "NVJITLINK_ERROR_LTO_NOT_ENABLED",
)

_HANDLE = c_void_p  # nvJitLinkHandle
_PROTOTYPES: dict[str, list[Any]] = {  # name (without the version) -> argument types; each returns an nvJitLinkResult
    "Create": [POINTER(_HANDLE), c_uint32, POINTER(c_char_p)],
    "Destroy": [POINTER(_HANDLE)],
    "AddData": [_HANDLE, c_int, c_void_p, c_size_t, c_char_p],
    "Complete": [_HANDLE],
    "GetLinkedCubinSize": [_HANDLE, POINTER(c_size_t)],
    "GetLinkedCubin": [_HANDLE, c_void_p],
    "GetErrorLogSize": [_HANDLE, POINTER(c_size_t)],
    "GetErrorLog": [_HANDLE, c_char_p],
    "GetInfoLogSize": [_HANDLE, POINTER(c_size_t)],
    "GetInfoLog": [_HANDLE, c_char_p],
}

# Loaded on first use: library() (LibraryNotFoundError with the pip command when absent).
library = OptionalLibrary(
    "nvJitLink",
    "links device code with nvJitLink, NVIDIA's device-code linker",
    "nvjitlink",
    {f"__nvJitLink{name}{_ABI}": (c_int, argtypes) for name, argtypes in _PROTOTYPES.items()},
)
install_command = library.install_command


def _function(name: str) -> CFuncPtr:
    function: CFuncPtr = getattr(library(), f"__nvJitLink{name}{_ABI}")
    return function


class Result(NamedTuple):
    cubin: bytes | None  # the linked CUBIN; None when the link failed
    info_log: str
    error_log: str
    failure: str  # "" on success, else what failed: "nvJitLinkComplete: NVJITLINK_ERROR_PTX_COMPILE"


def _log(handle: c_void_p, what: str) -> str:
    size = c_size_t()
    if _function(f"Get{what}LogSize")(handle, byref(size)) or size.value <= 1:
        return ""
    text = ctypes.create_string_buffer(size.value)
    _function(f"Get{what}Log")(handle, text)
    return text.value.decode(errors="replace")


def link(options: Sequence[str], inputs: Sequence[tuple[InputType, bytes, str]]) -> Result:
    """Link ``inputs`` (type, contents, name for the logs) with nvJitLink ``options``
    (``-arch=sm_90`` is required); the logs come back whether or not it worked.

    Raises LibraryNotFoundError when nvJitLink is not installed; a failed link is a
    Result whose ``failure`` says which step failed and how.
    """
    handle = _HANDLE()
    encoded = (c_char_p * len(options))(*(option.encode() for option in options))
    result = _function("Create")(byref(handle), len(options), encoded)
    if result:  # no handle, so no logs: the options were wrong
        return Result(None, "", "", f"nvJitLinkCreate({list(options)}): {_name(result)}")
    try:
        for kind, data, name in inputs:
            result = _function("AddData")(handle, int(kind), data, len(data), name.encode())
            if result:
                return Result(
                    None, _log(handle, "Info"), _log(handle, "Error"), f"nvJitLinkAddData({name!r}): {_name(result)}"
                )
        result = _function("Complete")(handle)
        if result:
            return Result(None, _log(handle, "Info"), _log(handle, "Error"), f"nvJitLinkComplete: {_name(result)}")
        size = c_size_t()
        _function("GetLinkedCubinSize")(handle, byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        _function("GetLinkedCubin")(handle, cubin)
        return Result(cubin.raw, _log(handle, "Info"), _log(handle, "Error"), "")
    finally:
        _function("Destroy")(byref(handle))


def _name(result: int) -> str:
    return RESULTS[result] if 0 <= result < len(RESULTS) else f"nvJitLinkResult {result}"
