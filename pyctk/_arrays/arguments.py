"""The arguments every array maker takes, checked once for DeviceArray, GPUArray, page-locked
host arrays and pyctk.matmul: a shape, and a device index. Checked before any CUDA call, so a
bad one is its Python exception on any machine, with or without a GPU.
"""

from __future__ import annotations

import operator
from typing import Any


def shape_tuple(shape: Any) -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints, as NumPy takes it) as a tuple: TypeError for
    anything else, ValueError for a negative extent (NumPy's message).

    >>> shape_tuple(3), shape_tuple([2, 3])
    ((3,), (2, 3))
    """
    dims: tuple[int, ...]
    try:
        dims = (operator.index(shape),)
    except TypeError:
        try:
            dims = tuple(operator.index(extent) for extent in shape)
        except TypeError:
            raise TypeError(f"shape={shape!r}: give an int or a sequence of ints") from None
    if any(extent < 0 for extent in dims):
        raise ValueError(f"negative dimensions are not allowed: shape {dims}")
    return dims


def device_index(device: Any) -> int:
    """``device`` as a GPU's index: TypeError for what is no integer (a bool, a float, a
    str), ValueError for a negative one. Whether that GPU exists is the driver's to say.

    >>> device_index(1)
    1
    >>> device_index("0")
    Traceback (most recent call last):
    ...
    TypeError: device must be a GPU index (0, 1, ...), not str ('0')
    """
    if isinstance(device, bool) or not hasattr(type(device), "__index__"):
        raise TypeError(f"device must be a GPU index (0, 1, ...), not {type(device).__name__} ({device!r})")
    index = operator.index(device)
    if index < 0:
        raise ValueError(f"device must be a GPU index (0, 1, ...), not {index}: GPUs count from 0")
    return index
