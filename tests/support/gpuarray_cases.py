"""What the GPUArray arithmetic tests (with and without a GPU) run over: every dtype GPUArray
computes, and Python's operators by their symbol, plain and in place."""

from __future__ import annotations

import operator

import numpy as np

DTYPES = [
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    )
]
OPERATORS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "**": operator.pow,
    "//": operator.floordiv,
    "%": operator.mod,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
IN_PLACE = {
    "+": operator.iadd,
    "-": operator.isub,
    "*": operator.imul,
    "/": operator.itruediv,
    "**": operator.ipow,
    "//": operator.ifloordiv,
    "%": operator.imod,
    "&": operator.iand,
    "|": operator.ior,
    "^": operator.ixor,
}
