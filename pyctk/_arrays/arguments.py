"""The arguments every array maker takes, checked once for DeviceArray, GPUArray, page-locked
host arrays and pyctk.matmul: a shape, and a device index; and the integer rule under them,
which the memory functions' byte counts and other libraries' array descriptions share.
Checked before any CUDA call, so a bad one is its Python exception on any machine, with or
without a GPU.
"""

from __future__ import annotations

import operator
import reprlib
from typing import Any

import numpy as np


def integer(value: Any, what: str) -> int:
    """``value`` as an int (``operator.index``: Python's and NumPy's ints), else TypeError
    ``"{what}, not {type} ({value})"``. Bools are refused: True is no count, no index and no
    address. Floats and strings are refused too, which ``int()`` would have turned into ints.

    >>> integer(3, "size must be an int")
    3
    >>> integer(True, "size must be an int")
    Traceback (most recent call last):
    ...
    TypeError: size must be an int, not bool (True)
    """
    if not isinstance(value, (bool, np.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    hint = ": convert it first (int(...))" if isinstance(value, (str, float)) else ""
    # (reprlib: a hostile array description's value may be any object, of any length)
    raise TypeError(f"{what}, not {type(value).__name__} ({reprlib.repr(value)}){hint}")


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
    TypeError: device must be a GPU index (0, 1, ...), not str ('0'): convert it first (int(...))
    """
    index = integer(device, "device must be a GPU index (0, 1, ...)")
    if index < 0:
        raise ValueError(f"device must be a GPU index (0, 1, ...), not {index}: GPUs count from 0")
    return index
