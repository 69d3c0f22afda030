"""MatmulCases (tests/support/strategies.py) on GPU arrays: each host array becomes a GPU array of one
library with the same shape, dtype, strides (negative ones included where the library has
them) and contents, and the same identity (``out`` that is ``a`` stays ``a``), so that the
same strategies test host and GPU operands against NumPy.

    from support.gpu_arrays import LIBRARIES, on_gpu
    gpu_case = on_gpu(case, "torch")   # None where the library cannot hold the case
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable

import numpy as np

import pyctk
from support.strategies import SUPPORTED, MatmulCase


def _spanned_bytes(x: np.ndarray) -> tuple[np.ndarray, int]:
    """The bytes from x's first to its last element, and element 0's offset among them."""
    low = sum(s * (n - 1) for n, s in zip(x.shape, x.strides) if s < 0)
    high = sum(s * (n - 1) for n, s in zip(x.shape, x.strides) if s > 0) + x.itemsize
    memory = (ctypes.c_char * (high - low)).from_address(x.ctypes.data + low)
    return np.frombuffer(memory, np.uint8).copy(), -low


def device_array(x: np.ndarray) -> pyctk.DeviceArray:
    if x.size == 0:  # no memory: a NULL pointer
        return pyctk.DeviceArray(0, x.shape, x.strides, x.dtype, 0, None, readonly=not x.flags.writeable)
    data, offset = _spanned_bytes(x)
    base = pyctk.asarray(data)
    return pyctk.DeviceArray(
        base._pointer + offset, x.shape, x.strides, x.dtype, base.device, base, readonly=not x.flags.writeable
    )


def torch_tensor(x: np.ndarray) -> Any:
    import torch  # only where the GPU tests run with torch

    if x.size == 0:
        return torch.empty(x.shape, dtype=_torch_dtype(x.dtype), device="cuda")
    if any(s < 0 for s in x.strides):  # torch has no negative strides
        x = x.copy()  # (ascontiguousarray keeps a length-1 axis's stride as it is)
    data, offset = _spanned_bytes(x)
    base = torch.from_numpy(data).cuda().view(_torch_dtype(x.dtype))
    return torch.as_strided(base, x.shape, [s // x.itemsize for s in x.strides], offset // x.itemsize)


def _torch_dtype(dtype: np.dtype) -> Any:
    import torch

    return getattr(torch, "bool" if dtype == np.bool_ else dtype.name)


def cupy_array(x: np.ndarray) -> Any:
    import cupy

    if x.size == 0:
        return cupy.empty(x.shape, x.dtype)
    data, offset = _spanned_bytes(x)
    base = cupy.asarray(data)
    return cupy.ndarray(x.shape, x.dtype, base.data + offset, x.strides)


# Library -> (how it makes a GPU array of a host array, the dtypes it has, whether it can hold a
# read-only array).
LIBRARIES: dict[str, tuple[Callable[[np.ndarray], Any], list[np.dtype], bool]] = {
    "pyctk": (device_array, SUPPORTED, True),
    "torch": (torch_tensor, [d for d in SUPPORTED if d.name not in ("uint16", "uint32", "uint64")], False),
    "cupy": (cupy_array, [d for d in SUPPORTED if d.name != "bfloat16"], False),
}


def on_gpu(case: MatmulCase, library: str) -> MatmulCase | None:
    """``case`` with its arrays on the GPU as ``library``'s, or None where the library cannot
    hold them (a dtype it lacks, a read-only out) or they are not arrays NumPy multiplies."""
    make, dtypes, read_only = LIBRARIES[library]
    converted: dict[int, Any] = {}

    def move(x: Any) -> Any:
        if isinstance(x, tuple):
            return tuple(move(item) for item in x)
        if not isinstance(x, np.ndarray):
            return x  # not an array: NumPy's exception for it is pyctk's too
        if x.dtype not in dtypes or not (x.flags.writeable or read_only):
            raise LookupError
        if id(x) not in converted:
            converted[id(x)] = make(x)
        return converted[id(x)]

    try:
        return MatmulCase(move(case.a), move(case.b), {key: move(value) for key, value in case.kwargs.items()})
    except LookupError:
        return None


def to_host(x: Any) -> Any:
    """A GPU array of any library pyctk reads as a NumPy array; anything else as it is."""
    if isinstance(x, np.ndarray) or np.isscalar(x):
        return x
    return pyctk.asarray(x).get()
