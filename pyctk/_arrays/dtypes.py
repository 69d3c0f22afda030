"""The element types pyctk computes in and stores: one table, a row per dtype.

A new dtype is one row here (and its gpumatmul_dtype value in libgpu's tables); DLPack,
the CUDA Array Interface, DeviceArray and the product all read this table.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

# DLPack's type codes (DLDataTypeCode in dlpack.h, 1.1), for the table below.
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 4, 5, 6
kDLFloat8_e4m3fn, kDLFloat8_e5m2 = 10, 12


class Dtype(NamedTuple):
    """What pyctk knows of one of its dtypes."""

    code: int  # gpumatmul_dtype (libgpu/include/gpumatmul.h)
    dlpack: tuple[int, int]  # DLPack's (type code, bits); lanes are always 1
    ml_dtypes: bool = False  # ml_dtypes' type, which NumPy knows only once ml_dtypes is imported
    product: bool = True  # NumPy's matmul computes in it (a loop dtype); False for the FP8 types,
    # which NumPy with ml_dtypes multiplies in float32
    writes: str = ""  # the dtype libgpumatmul writes its products of it in, where another
    # than itself (float32 for the FP8 types, read as they are on the GPU)


# Every dtype pyctk computes in and stores, one row each, by NumPy name. Names rather than
# dtype objects because bfloat16 and the FP8 types are ml_dtypes', not NumPy's, and ml_dtypes
# is not a dependency: it is never imported here, only recognised on arrays that have it.
DTYPES = {
    "float32": Dtype(0, (kDLFloat, 32)),
    "float64": Dtype(1, (kDLFloat, 64)),
    "float16": Dtype(2, (kDLFloat, 16)),
    "bfloat16": Dtype(3, (kDLBfloat, 16), ml_dtypes=True),
    "complex64": Dtype(4, (kDLComplex, 64)),
    "complex128": Dtype(5, (kDLComplex, 128)),
    "int8": Dtype(6, (kDLInt, 8)),
    "int16": Dtype(7, (kDLInt, 16)),
    "int32": Dtype(8, (kDLInt, 32)),
    "int64": Dtype(9, (kDLInt, 64)),
    "uint8": Dtype(10, (kDLUInt, 8)),
    "uint16": Dtype(11, (kDLUInt, 16)),
    "uint32": Dtype(12, (kDLUInt, 32)),
    "uint64": Dtype(13, (kDLUInt, 64)),
    "bool": Dtype(14, (kDLBool, 8)),
    "float8_e4m3fn": Dtype(15, (kDLFloat8_e4m3fn, 8), ml_dtypes=True, product=False, writes="float32"),
    "float8_e5m2": Dtype(16, (kDLFloat8_e5m2, 8), ml_dtypes=True, product=False, writes="float32"),
}
PRODUCT_DTYPES = [name for name, row in DTYPES.items() if row.product]  # what products compute in

# Products of two dtypes the library multiplies as they are, by (A's name, B's name): their
# gpumatmul_dtype, a product's type rather than an element type, which writes float32.
PAIRS = {("float8_e4m3fn", "float8_e5m2"): 17, ("float8_e5m2", "float8_e4m3fn"): 18}


def supported_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as a NumPy dtype, or TypeError for a dtype pyctk has no use for.

    ml_dtypes' dtypes (bfloat16, the FP8 types) are recognised by name, so ml_dtypes is not
    imported.

    >>> supported_dtype("float32")
    dtype('float32')
    """
    try:
        known: np.dtype = _supported[dtype]  # every array pyctk makes asks: answered once per dtype
        return known
    except (KeyError, TypeError):  # TypeError: an unhashable dtype-like (a structured spec)
        pass
    checked: np.dtype = np.dtype(dtype)
    if checked.name not in DTYPES or not checked.isnative:
        raise TypeError(
            f"pyctk does not support dtype {checked.str!r} ({checked}); it supports "
            f"{', '.join(DTYPES)}, in native byte order"
        )
    _supported[dtype] = checked
    return checked


_supported: dict[Any, np.dtype] = {}  # dtype-like -> its checked dtype


def named(name: str) -> np.dtype:
    """The dtype of a row's name; ml_dtypes' types import ml_dtypes, which registers them with
    NumPy (TypeError, saying how to install it, where it is missing).

    >>> named("float16")
    dtype('float16')
    """
    if DTYPES[name].ml_dtypes:
        try:
            import ml_dtypes  # noqa: F401  (registers "bfloat16", "float8_e4m3fn", ... with NumPy)
        except ImportError:
            raise TypeError(f"{name} data needs the ml_dtypes package: pip install ml_dtypes") from None
    return np.dtype(name)


def from_ml_dtypes(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is one of ml_dtypes' in the table (known by name: it is not imported)."""
    row = DTYPES.get(dtype.name)  # by name alone: float8_e5m2's kind is "f", as float32's
    return row is not None and row.ml_dtypes


def is_bfloat16(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is ml_dtypes' bfloat16 (known by name: ml_dtypes is not imported)."""
    return dtype.kind == "V" and dtype.name == "bfloat16" and dtype.itemsize == 2  # kind: fast
