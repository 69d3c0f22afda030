"""pyctk.matmul's keywords beside the operands, checked (``parse``): the casting rule and
dtype, the backend and precision (their C enum values), the stream; and how a product of
host arrays uses the GPUs: which ones (``devices=``), and how much of their memory
(``PYCTK_DEVICE_MEMORY_LIMIT``).

libgpumatmul streams any host product through the GPU in tiles sized to the memory it may
use, so a product larger than the GPU needs nothing from the caller; the limit exists to
leave memory to other work (and lets the tests reach the tiled path with small matrices).
"""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Sequence
from typing import Any, NamedTuple, Union

from numpy.typing import DTypeLike

from .._arrays.arguments import device_index
from .._cuda import contexts, streams
from . import dtypes

Devices = Union[None, str, Sequence[int]]


class _NotGiven:
    """The default of keywords that NumPy refuses even as None (``axes=``, ``axis=``,
    ``keepdims=`` of matmul): absent is not the same as any value."""

    def __repr__(self) -> str:
        return "<not given>"


NOT_GIVEN: Any = _NotGiven()

BACKENDS = {"auto": 0, "tiled": 1, "cublas": 2}  # gpumatmul_backend
PRECISIONS = {"highest": 0, "tf32": 1, "fp16_accumulate": 2}  # gpumatmul_precision


class Options(NamedTuple):
    """pyctk.matmul's keywords, checked; ``key`` is what a kept plan depends on of them."""

    casting: dtypes.Casting
    dtype: DTypeLike | None
    backend: int  # gpumatmul_backend
    precision: int  # gpumatmul_precision
    stream: Any  # as given: a new GPU result keeps it alive (see _arrays.memory)
    stream_handle: int  # its cudaStream_t
    device: int | None
    devices: Devices
    key: tuple[str, str, str]  # (casting, backend, precision) as given


def parse(
    casting: dtypes.Casting,
    dtype: DTypeLike | None,
    backend: str,
    precision: str,
    stream: Any,
    device: Any,
    devices: Devices,
    axis: Any = NOT_GIVEN,
    keepdims: Any = NOT_GIVEN,
) -> Options:
    """The keywords checked, before any operand is read: ValueError names the choices, and
    ``dtype=``, ``axis=`` and ``keepdims=`` raise NumPy's TypeError where NumPy's would (its
    argument parsing does: matmul takes neither of the last two, whatever their value)."""
    if axis is not NOT_GIVEN:
        raise TypeError(
            "matmul: axis= can only be used with a single shared core dimension, not "
            "with the 3 distinct ones of matmul's signature (n?,k),(k,m?)->(n?,m?); "
            "use axes=[(i, j), (i, j), (i, j)] to say where the matrices are"
        )
    if keepdims is not NOT_GIVEN:
        raise TypeError(
            "matmul does not take keepdims=: its signature (n?,k),(k,m?)->(n?,m?) "
            "gives its output 2 core dimensions, and keepdims= is only for gufuncs "
            "whose inputs share their core dimensions and whose outputs have none"
        )
    backend_code = _choice("backend", backend, BACKENDS)
    precision_code = _choice("precision", precision, PRECISIONS)
    device = _device_index(device)
    handle = streams.handle(stream)  # checked for host operands too
    dtypes.check_keyword(dtype)
    return Options(
        casting, dtype, backend_code, precision_code, stream, handle, device, devices, (casting, backend, precision)
    )


def _choice(name: str, value: str, table: dict[str, int]) -> int:
    """The C enum value of a string option; ValueError naming the choices."""
    if not isinstance(value, str) or value not in table:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, table))}, not {value!r}")
    return table[value]


def _device_index(device: Any) -> int | None:
    return None if device is None else device_index(device)


LIMIT_VARIABLE = "PYCTK_DEVICE_MEMORY_LIMIT"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_LIMIT = re.compile(r"\s*(\d+)\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE)
# the variable's value as read (None: unset) -> bytes: parsed once per value
_parsed: dict[bytes | str | None, int] = {}
# os.environ's own dict of encoded names and values, which it keeps in step with the process's
# environment: a lookup there takes 0.05 us where os.environ.get takes 1 us, a twentieth of a
# repeated 16 x 16 product (the plain way where an interpreter's os.environ lacks it).
_ENVIRON = getattr(os.environ, "_data", None)
_LIMIT_KEY = os.fsencode(LIMIT_VARIABLE)


def memory_limit() -> int:
    """Device bytes a host product may use on each GPU, from ``PYCTK_DEVICE_MEMORY_LIMIT``:
    0 (no limit: what the GPU has free) when unset or empty.

    The value is bytes, or a number with K, M, G or T (powers of 1024, "KiB" and "KB" too).
    It is read at each call, so a change takes effect at once.

    >>> import os; os.environ["PYCTK_DEVICE_MEMORY_LIMIT"] = "512M"; memory_limit()
    536870912
    >>> del os.environ["PYCTK_DEVICE_MEMORY_LIMIT"]; memory_limit()
    0
    """
    raw = _ENVIRON.get(_LIMIT_KEY) if _ENVIRON is not None else os.environ.get(LIMIT_VARIABLE)
    limit = _parsed.get(raw)
    if limit is None:
        text = os.fsdecode(raw) if raw is not None else ""
        match = _LIMIT.fullmatch(text) if text.strip() else None
        if text.strip() and (match is None or int(match[1]) == 0):
            raise ValueError(
                f"{LIMIT_VARIABLE}={text!r} is not a memory size: give a positive "
                f"number of bytes, or one with K, M, G or T (e.g. 512M), or unset it"
            )
        limit = int(match[1]) * _UNITS[match[2].upper()] if match else 0
        _parsed[raw] = limit
    return limit


def device_list(devices: Devices, device: int | None) -> tuple[int, ...]:
    """The GPUs a host product runs on: ``devices`` ("all", or distinct indices), else
    ``device`` (default 0). ValueError for a malformed choice, before any GPU work but
    counting the GPUs for "all"."""
    if devices is None:
        return (device or 0,)
    if device is not None:
        raise ValueError("give device= or devices=, not both")
    if isinstance(devices, str):
        if devices != "all":
            raise ValueError(f"devices must be 'all' or a sequence of GPU indices, not {devices!r}")
        count = ctypes.c_int()
        contexts.call_starting_cuda("gpumatmul_device_count", ctypes.byref(count))
        return tuple(range(count.value))
    try:
        chosen = tuple(devices)
    except TypeError:
        raise ValueError(f"devices must be 'all' or a sequence of GPU indices, not {type(devices).__name__}") from None
    if not chosen or any(isinstance(d, bool) or not hasattr(d, "__index__") or d < 0 for d in chosen):
        raise ValueError(f"devices must be 'all' or a non-empty sequence of GPU indices (0, 1, ...), not {devices!r}")
    chosen = tuple(int(d) for d in chosen)
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"devices lists a GPU more than once: {list(chosen)}")
    return chosen
