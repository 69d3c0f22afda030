"""Stage 1 of a product: describe the operands, where they are and what they look like.

Host data becomes NumPy arrays; GPU data (DeviceArray, the CUDA Array Interface, DLPack)
becomes ``interop.DeviceOperand``s, read once. Either kind has the ``shape``, ``strides``
and ``dtype`` the later stages read. Host and GPU data together, or data on two GPUs, is
refused here: pyctk never copies silently.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._arrays import interop
from .._cuda.errors import DeviceMismatchError


class Operands(NamedTuple):
    """The arrays of one product: NumPy arrays, or DeviceOperands all on ``device``."""

    a: Any
    b: Any
    out: Any  # None when no out= was given
    out_given: Any  # the out= argument itself, which matmul returns
    device: int | None  # the GPU the data is on; None for host data
    out_axes: tuple[int, ...] | None = None  # where axes= puts a new result's core axes
    # x1 and x2 as given where one is an ndarray subclass (np.matrix, a MaskedArray), whose
    # __array_wrap__ makes the result what NumPy's would be; None for plain host data
    subclassed: tuple[Any, Any] | None = None


def describe(x1: Any, x2: Any, out: Any) -> Operands:
    """The operands and ``out=`` of a product, or NumPy's exception for an ``out`` NumPy
    refuses.

    Raises DeviceMismatchError for host and GPU data together, or data on two GPUs.
    """
    out = _unwrap(out)
    on_gpu = _on_gpu(x1, x2, out)
    if on_gpu is not None:
        a, b, out_operand = on_gpu
        if out_operand is not None and out_operand.readonly:
            raise ValueError("out is read-only: matmul cannot write its result into it")
        return Operands(a, b, out_operand, out, a.device)
    if out is not None and not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray, not {type(out).__name__}")
    if out is not None and not out.flags.writeable:
        raise ValueError("out is read-only: matmul cannot write its result into it")
    subclassed = (x1, x2) if _subclass(x1) or _subclass(x2) else None
    return Operands(np.asarray(x1), np.asarray(x2), out, out, None, subclassed=subclassed)


def _subclass(x: Any) -> bool:
    return isinstance(x, np.ndarray) and type(x) is not np.ndarray


def _unwrap(out: Any) -> Any:
    """``out=`` as NumPy's ufuncs take it: an array, a 1-tuple of one, or None."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"out must be an ndarray or a tuple of one, not a tuple of {len(out)}")
        out = out[0]
    return out


def _on_gpu(
    x1: Any, x2: Any, out: Any
) -> tuple[interop.DeviceOperand, interop.DeviceOperand, interop.DeviceOperand | None] | None:
    """The GPU data of x1, x2 and out (None for an absent out), or None when all are host data."""
    if all(x is None or type(x) is np.ndarray for x in (x1, x2, out)):  # the common case, at once
        return None
    named = (("x1", x1), ("x2", x2), ("out", out))
    found = {name: interop.device_operand(x) if x is not None else None for name, x in named}
    on_gpu = {name: operand for name, operand in found.items() if operand is not None}
    if not on_gpu:
        return None
    if out is not None and found["out"] is None and not isinstance(out, np.ndarray):
        raise TypeError(f"out must be an array (a GPU array for GPU operands), not {type(out).__name__}")
    # host data: what no GPU array came from, but an absent out (None as an operand is host data)
    host = [name for name, x in named if found[name] is None and (name != "out" or x is not None)]
    if host:
        gpu, operand = next(iter(on_gpu.items()))
        raise DeviceMismatchError(
            f"pyctk.matmul: {' and '.join(host)} {'is' if len(host) == 1 else 'are'} host data but "
            f"{gpu} is on GPU {operand.device}; pyctk never copies silently. Move it with "
            f"pyctk.asarray({host[0]}, device={operand.device}), or bring the GPU data to the host "
            f"(np.asarray(...))."
        )
    if len({operand.device for operand in on_gpu.values()}) > 1:
        where = ", ".join(f"{name} on GPU {operand.device}" for name, operand in on_gpu.items())
        raise DeviceMismatchError(
            f"pyctk.matmul: the operands are on different GPUs ({where}); "
            f"copy them to one with pyctk.asarray(x, device=...)"
        )
    a, b = found["x1"], found["x2"]
    assert a is not None and b is not None  # neither is host data
    return a, b, found["out"]
