"""Kernel parameters, read from the PTX, and the checks that keep a launch from guessing.

NVRTC makes PTX on the way to every CUBIN, and PTX declares each kernel's parameters
with a size and a kind: ``.param .u64 add_param_0`` (a pointer or a 64-bit integer: PTX
does not tell them apart), ``.param .u32`` (a 32-bit integer, signed or not),
``.param .f32``, ``.param .align 2 .b8 p[2]`` (2 bytes of anything: a ``__half``, a
struct). So before a launch pyctk can say "argument 3 is a 32-bit integer in the
kernel; got numpy.float64", where a C launch would read the wrong bytes.

>>> params = parse_ptx(".visible .entry add(\\n.param .u64 add_param_0,\\n.param .u32 add_param_1\\n)")
>>> params["add"]
[Param(kind='int', size=8), Param(kind='int', size=4)]
>>> value_bytes("add", 1, np.int32(7), params["add"][1])
b'\\x07\\x00\\x00\\x00'
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np


class Param(NamedTuple):
    """A kernel parameter as PTX declares it: its kind and size."""

    kind: str  # "int" (a pointer too, when 8 bytes), "float", or "bytes" (an aggregate)
    size: int  # bytes


_ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(([^)]*)\)")
_TYPE = re.compile(r"\.([usbf])(\d+)$")
_KINDS = {"u": "int", "s": "int", "b": "int", "f": "float"}  # PTX type letter -> kind


def _param(declaration: str) -> Param:
    tokens = declaration.split()
    kind, bits = next((_KINDS[m[1]], int(m[2])) for t in tokens if (m := _TYPE.match(t)))
    count = re.search(r"\[(\d+)\]$", tokens[-1])
    if count:  # an array of bytes (or words): an aggregate passed by value
        return Param("bytes", bits // 8 * int(count[1]))
    return Param(kind, bits // 8)


def parse_ptx(ptx: str) -> dict[str, list[Param]]:
    """Every kernel (``.entry``) in ``ptx`` -> its parameters, in order."""
    return {name: [_param(p) for p in params.split(",") if p.strip()] for name, params in _ENTRY.findall(ptx)}


# (kind, size) -> what to pass, for messages.
_SUGGESTIONS = {
    ("int", 1): "numpy.int8, numpy.uint8 or numpy.bool_",
    ("int", 2): "numpy.int16 or numpy.uint16",
    ("int", 4): "numpy.int32 or numpy.uint32",
    ("int", 8): "device memory (mem_alloc, a DeviceArray, a CuPy/PyTorch array ...), "
    "numpy.int64, numpy.uint64 or numpy.uintp",
    ("float", 4): "numpy.float32",
    ("float", 8): "numpy.float64",
}


def describe(param: Param) -> str:
    """``param`` in words: "a 32-bit integer", "a pointer or 64-bit integer", "16 bytes"."""
    if param.kind == "bytes":
        return f"{param.size} bytes passed by value (a struct, vector or __half)"
    if param == ("int", 8):
        return "a pointer or 64-bit integer"
    return f"a {param.size * 8}-bit {'integer' if param.kind == 'int' else 'float'}"


def suggest(param: Param) -> str:
    """What a caller may pass for ``param``."""
    return _SUGGESTIONS.get(
        param,
        f"a NumPy scalar of {param.size} bytes (numpy.float16 "
        f"for a __half, numpy.complex64 for a float2, a "
        f"structured dtype's scalar for a struct)",
    )


def takes_pointer(param: Param | None) -> bool:
    """Whether device memory may be passed for ``param`` (None: the parameters are unknown)."""
    return param is None or param == ("int", 8)


def _fits(dtype: np.dtype, param: Param) -> bool:
    if dtype.itemsize != param.size:
        return False
    if param.kind == "int":
        return dtype.kind in "iub"
    if param.kind == "float":
        return dtype.kind == "f"
    return True  # an aggregate takes any bytes of its size


def value_bytes(kernel: str, index: int, value: Any, param: Param | None) -> bytes:
    """The bytes NumPy scalar ``value`` passes for parameter ``index``; TypeError if they do not fit.

    A NumPy scalar passes exactly its own bytes, as in PyCUDA: its type must be the
    parameter's (any signedness: PTX does not keep it). Python numbers are refused,
    since their C type is a guess.
    """
    if isinstance(value, np.generic):
        if param is None or _fits(value.dtype, param):
            return value.tobytes()
        raise TypeError(
            f"{kernel}() argument {index} is {describe(param)} in the kernel; got "
            f"numpy.{value.dtype} ({value.dtype.itemsize} bytes): pass {suggest(param)}"
        )
    if isinstance(value, (bool, int, float, complex)):
        wanted = suggest(param) if param else "a NumPy scalar of the kernel's type, such as numpy.int32(n)"
        raise TypeError(
            f"{kernel}() argument {index} is a Python {type(value).__name__}, whose C "
            f"type pyctk cannot know: pass {wanted}"
        )
    raise TypeError(
        f"{kernel}() argument {index}: cannot pass {type(value).__name__} to a kernel; "
        f"pass device memory (mem_alloc, a DeviceArray, an array with "
        f"__cuda_array_interface__ or DLPack), cuda.In/Out/InOut of a NumPy array, or "
        f"a NumPy scalar"
    )
