"""Hypothesis strategies for numpy.matmul calls: operands, ``out=``, ``dtype=``, ``casting=``
and ``axes=``.

Shared by the CPU property tests (tests/matmul_tests/test_matmul_properties.py: same exception as NumPy,
or no GPU work before a missing driver) and GPU tests (same values as NumPy):

    from support.strategies import matmul_cases

    @given(matmul_cases())
    def test_something(case):
        result = pyctk.matmul(case.a, case.b, **case.kwargs)

Cases are small (every axis 0 to 4, operands of rank 1 to 5) and mostly valid: shapes that
broadcast by numpy.matmul's gufunc signature, with some that NumPy rejects; dtypes that
pyctk computes, with some that NumPy refuses (datetime64, timedelta64, str, bytes) and
object, which NumPy multiplies and pyctk refuses. Values are small integers, so that every
product is exact in every dtype (float16 and bfloat16 included) and results can be
compared exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

try:
    from ml_dtypes import bfloat16, float8_e4m3fn, float8_e5m2
except ImportError:  # CPython wheels only
    bfloat16 = float8_e4m3fn = float8_e5m2 = None

SUPPORTED = [
    np.dtype(name)
    for name in (
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "bool",
    )
] + ([np.dtype(bfloat16)] if bfloat16 else [])
# ml_dtypes' FP8 types: stored and converted, their products computed in float32 (NumPy's loop).
FLOAT8 = [np.dtype(float8_e4m3fn), np.dtype(float8_e5m2)] if float8_e4m3fn else []
STORED = SUPPORTED + FLOAT8  # every dtype a DeviceArray holds
REJECTED = [np.dtype(name) for name in ("datetime64[s]", "timedelta64[s]", "U3", "S3")]
OBJECT = np.dtype(object)  # NumPy multiplies it; pyctk cannot, and says so (TypeError)
CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]
# dtype= as users write it: dtypes, scalar types, strings; NumPy refuses a byte order or a unit.
DTYPE_KEYWORDS = [*SUPPORTED, np.float32, "f8", "int16", complex, ">f8", "M8[s]", "m8", "U", OBJECT]
MAX_SIDE = 4


@dataclass
class MatmulCase:
    """The arguments of one call: ``matmul(a, b, **kwargs)``.

    ``kwargs`` holds only the keywords the case sets (``out``, ``dtype``, ``casting``, ``axes``).
    ``out`` may be ``a`` or ``b`` itself (an overlap), a 1-tuple, read-only, or not an array.
    """

    a: np.ndarray
    b: np.ndarray
    kwargs: dict[str, Any] = field(default_factory=dict)

    def copy(self) -> MatmulCase:
        """Fresh copies of every array (so two calls can each write their ``out``), keeping
        which arguments are the same array and whether ``out`` is writeable."""
        copies: dict[int, np.ndarray] = {}

        def fresh(x):
            if isinstance(x, tuple):
                return tuple(fresh(item) for item in x)
            if not isinstance(x, np.ndarray):
                return x
            if id(x) not in copies:
                copies[id(x)] = x.copy(order="K")
                copies[id(x)].flags.writeable = x.flags.writeable
            return copies[id(x)]

        return MatmulCase(fresh(self.a), fresh(self.b), {key: fresh(value) for key, value in self.kwargs.items()})

    def __repr__(self) -> str:
        def describe(x):
            if isinstance(x, tuple):
                return f"({', '.join(map(describe, x))},)"
            if x is self.a or x is self.b:
                return "a" if x is self.a else "b"
            if not isinstance(x, np.ndarray):
                return repr(x)
            return (
                f"array(shape={x.shape}, dtype={x.dtype}, strides={x.strides}"
                f"{'' if x.flags.writeable else ', read-only'})"
            )

        operands = [
            f"{name}=array(shape={x.shape}, dtype={x.dtype}, strides={x.strides})"
            for name, x in (("a", self.a), ("b", self.b))
        ]
        keywords = [f"{key}={describe(value)}" for key, value in self.kwargs.items()]
        return f"MatmulCase({', '.join(operands + keywords)})"

    def _repr_pretty_(self, printer, cycle) -> None:  # Hypothesis prints failing cases with this
        printer.text(repr(self))


def dtypes(supported: list[np.dtype] = SUPPORTED, others: bool = True) -> st.SearchStrategy:
    """A dtype: mostly one pyctk computes, sometimes (``others``) one NumPy refuses, or object."""
    return st.sampled_from(supported * 3 + (REJECTED + [OBJECT] if others else []))


def shapes(max_dims: int = 5) -> st.SearchStrategy:
    return hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=MAX_SIDE)


def shape_pairs(others: bool = True) -> st.SearchStrategy:
    """(a_shape, b_shape): what numpy.matmul accepts (1-D promotion, stack axes that broadcast,
    zero sizes, ranks 1 to 5), and sometimes (``others``) any two shapes of rank 0 to 5, most of
    which NumPy rejects."""
    valid = hnp.mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=3, min_side=0, max_side=MAX_SIDE)
    valid = valid.map(lambda broadcast: broadcast.input_shapes)
    return st.one_of(valid, valid, valid, st.tuples(shapes(), shapes())) if others else valid


@st.composite
def arrays(draw, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An array of small integers (0 to 2, or -2 to 2 where the dtype is signed) of ``dtype``,
    in one of the memory layouts pyctk must accept: C order, Fortran order, the last two axes
    swapped, a step of 2 in the last axis, or every axis reversed."""
    layout = draw(st.sampled_from(["C", "F", "swapped", "stepped", "reversed"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    low = -2 if dtype.kind in "fcimMO" else 0  # "O": Python ints
    if layout == "swapped" and len(shape) >= 2:
        return rng.integers(low, 3, size=shape[:-2] + shape[:-3:-1]).astype(dtype).swapaxes(-1, -2)
    if layout == "stepped" and shape:
        return rng.integers(low, 3, size=shape[:-1] + (2 * shape[-1],)).astype(dtype)[..., ::2]
    array = rng.integers(low, 3, size=shape).astype(dtype)
    if layout == "F":
        return np.asfortranarray(array)
    if layout == "reversed" and shape:
        return array[(slice(None, None, -1),) * array.ndim]
    return array


def _result_shape(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return np.matmul(np.empty(a_shape, np.int8), np.empty(b_shape, np.int8)).shape
    except ValueError:
        return None


def _result_dtype(a: np.ndarray, b: np.ndarray) -> np.dtype:
    try:
        return np.matmul.resolve_dtypes((a.dtype, b.dtype, None))[2]
    except TypeError:
        return np.dtype(np.float64)


@st.composite
def outs(draw, a: np.ndarray, b: np.ndarray, supported: list[np.dtype]) -> Any:
    """An ``out=``: of the result's shape, or with a larger stack (which NumPy broadcasts the
    result into), or of another shape; of NumPy's result dtype or another; any layout; now and
    then ``a`` or ``b`` itself (an overlap), a 1-tuple, read-only, or a list (NumPy refuses it)."""
    kind = draw(st.sampled_from(["result", "result", "larger stack", "other shape", "a", "b", "list"]))
    if kind in ("a", "b"):
        return a if kind == "a" else b
    if kind == "list":
        return [[0.0]]
    shape = _result_shape(a.shape, b.shape)
    if shape is None or kind == "other shape":
        shape = draw(shapes())
    elif kind == "larger stack":  # a new leading axis, and every stack axis of length 1 widened
        core = 2 - (a.ndim == 1) - (b.ndim == 1)
        stack = tuple(2 if size == 1 else size for size in shape[: len(shape) - core])
        shape = (2, *stack, *shape[len(shape) - core :])
    dtype = draw(st.one_of(st.just(_result_dtype(a, b)), dtypes(supported)))
    out = draw(arrays(shape, dtype))
    if draw(st.integers(0, 9)) == 0:
        out.flags.writeable = False
    return (out,) if draw(st.integers(0, 4)) == 0 else out


# axes= that NumPy refuses: not a list, too few or too many entries, an int for a matrix's two
# axes, a wrong count, an axis twice, an axis out of range, a bool.
BAD_AXES = [
    "x",
    (-2, -1),
    [],
    [(-2, -1)],
    [(-2, -1)] * 2,
    [(-2, -1)] * 4,
    [0, (-2, -1), (-2, -1)],
    [(-1,), (-2, -1), (-2, -1)],
    [(-1, -1), (-2, -1), (-2, -1)],
    [(-2, 9), (-2, -1), (-2, -1)],
    [(True, -1), (-2, -1), (-2, -1)],
]


@st.composite
def with_axes(draw, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, list]:
    """``a`` and ``b`` with their axes in another order, and the ``axes=`` that names where
    their matrices went and where the result's go; the product is the one of ``a`` and ``b``,
    its matrices moved."""
    entries, moved = [], []
    for x in (a, b):
        core = 1 if x.ndim == 1 else 2
        order = draw(st.permutations(range(x.ndim)))
        moved.append(x.transpose(order))
        where = [
            order.index(axis) - draw(st.sampled_from([0, x.ndim])) for axis in range(x.ndim - core, x.ndim)
        ]  # sometimes negative
        entries.append(where[0] if core == 1 and draw(st.booleans()) else tuple(where))
    result_ndim = len(_result_shape(a.shape, b.shape))
    core = 2 - (a.ndim == 1) - (b.ndim == 1)
    entries.append(tuple(draw(st.permutations(range(result_ndim)))[:core]))
    return moved[0], moved[1], entries


@st.composite
def matmul_cases(draw, supported: list[np.dtype] = SUPPORTED, others: bool = True, keywords: bool = True) -> MatmulCase:
    """A MatmulCase.

    Parameters
    ----------
    supported : list of numpy.dtype
        The dtypes that operands, ``out`` and ``dtype=`` are mostly drawn from.
    others : bool
        Whether to draw, now and then, shapes NumPy rejects and dtypes NumPy
        refuses (datetime64, timedelta64, str, bytes) or pyctk refuses
        (object). With ``others=False`` the operands are valid; ``out``,
        ``dtype=`` and ``casting=`` may still be refused (a wrong shape, a
        cast the casting rule forbids).
    keywords : bool
        Whether to draw ``out=``, ``dtype=``, ``casting=`` and ``axes=`` at all (``axes=``
        without ``out=``: with the operands' axes reordered for valid shapes, else one that
        NumPy refuses).
    """
    a_shape, b_shape = draw(shape_pairs(others))
    a = draw(arrays(a_shape, draw(dtypes(supported, others))))
    b = draw(arrays(b_shape, draw(dtypes(supported, others))))
    kwargs: dict[str, Any] = {}
    if keywords and draw(st.booleans()):
        kwargs["out"] = draw(outs(a, b, supported))
    if keywords and draw(st.integers(0, 3)) == 0:
        kwargs["dtype"] = draw(st.sampled_from(DTYPE_KEYWORDS if others else supported))
    if keywords and draw(st.integers(0, 2)) == 0:
        kwargs["casting"] = draw(st.sampled_from(CASTINGS))
    if keywords and "out" not in kwargs and draw(st.integers(0, 3)) == 0:
        if _result_shape(a.shape, b.shape) is not None:
            a, b, kwargs["axes"] = draw(with_axes(a, b))
        elif others:
            kwargs["axes"] = draw(st.sampled_from(BAD_AXES))
    return MatmulCase(a, b, kwargs)
