"""CUDA's vector types as NumPy dtypes: PyCUDA's ``pycuda.gpuarray.vec``.

``vec.float3`` is the dtype of CUDA's ``float3`` (fields ``x``, ``y``, ``z``; packed, as
PyCUDA has them: 12 bytes), and ``vec.make_float3(1, 2, 3)`` a 0-d array of one. Such a value
passes to a kernel by value (a ``float3`` parameter), and arrays of them copy to and from
``float3 *`` memory. The C-type registry (``pyctk.tools.dtype_to_ctype``) knows them by
their CUDA names.

>>> v = vec.make_float3(1, 2, 3)
>>> v.shape, v.dtype.itemsize, float(v["y"])
((), 12, 2.0)
>>> np.zeros(4, vec.int2).nbytes
32
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_FIELDS = ("x", "y", "z", "w")
# (CUDA's base name, its NumPy type, how many fields its vector types go up to), as PyCUDA has
# them. long is 64 bits, as on LP64 Linux (pyctk.tools writes int64 as long); longlong1 is then
# the dtype of long1, and the registry writes it "long1".
_BASES = [
    ("char", np.int8, 4),
    ("uchar", np.uint8, 4),
    ("short", np.int16, 4),
    ("ushort", np.uint16, 4),
    ("int", np.int32, 4),
    ("uint", np.uint32, 4),
    ("long", np.int64, 4),
    ("ulong", np.uint64, 4),
    ("longlong", np.int64, 2),
    ("ulonglong", np.uint64, 2),
    ("float", np.float32, 4),
    ("double", np.float64, 2),
]

# CUDA name -> dtype, every vector type, in the order the registry takes them.
VECTOR_DTYPES = {
    f"{base}{count}": np.dtype([(name, kind) for name in _FIELDS[:count]])
    for base, kind, top in _BASES
    for count in range(1, top + 1)
}


def _maker(name: str, dtype: np.dtype) -> Callable[..., np.ndarray]:
    fields = dtype.names
    assert fields is not None  # a vector type is a structured dtype

    def make(*values: Any) -> np.ndarray:
        if len(values) != len(fields):
            raise TypeError(f"make_{name}() takes {len(fields)} values ({', '.join(fields)}), got {len(values)}")
        return np.array(values, dtype)

    make.__name__ = make.__qualname__ = f"make_{name}"
    make.__doc__ = f"A 0-d array of one {name}, from the values of its fields {', '.join(fields)}."
    return make


class vec:  # PyCUDA's name
    """CUDA's vector types as NumPy dtypes (PyCUDA's ``pycuda.gpuarray.vec``).

    ``vec.float3`` is the dtype of CUDA's ``float3`` (fields ``x``, ``y``, ``z``; packed, as
    PyCUDA has them: 12 bytes), and ``vec.make_float3(x, y, z)`` a 0-d array of one, which
    passes to a kernel by value. So for char, uchar, short, ushort, int, uint, long, ulong
    and float (1 to 4 fields), longlong, ulonglong and double (1 or 2).

    Examples
    --------
    >>> import numpy as np
    >>> from pyctk.gpuarray import vec
    >>> vec.float3
    dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4')])
    >>> v = vec.make_float3(1, 2, 3)
    >>> v.shape, float(v["z"])
    ((), 3.0)
    """


for _name, _dtype in VECTOR_DTYPES.items():
    setattr(vec, _name, _dtype)
    setattr(vec, f"make_{_name}", staticmethod(_maker(_name, _dtype)))
del _name, _dtype


def struct_value(size: int, value: Any) -> np.void:
    """``value`` as ``size`` bytes passed by value: a 0-d array or scalar of a vector or struct
    dtype, or bytes (PyCUDA's ``"12s"`` argument type, which ``prepare`` gives vector dtypes)."""
    try:
        data = memoryview(value).tobytes()
    except TypeError:
        raise TypeError(
            f"a {size}-byte struct or vector argument takes a 0-d array or scalar of "
            f"its dtype (vec.make_float3(...)) or bytes, not {type(value).__name__}"
        ) from None
    if len(data) != size:
        raise TypeError(f"a {size}-byte struct or vector argument got {len(data)} bytes")
    return np.void(data)
