"""NumPy's dtype rules for matmul: the loop dtype a product computes in, and its C code.

The choice is NumPy's own (``numpy.matmul.resolve_dtypes``), so NumPy's result
dtypes and NumPy's exceptions come out, with one documented exception for
bfloat16 (see ``loop_dtype``).
"""

from __future__ import annotations

import functools
from typing import Literal

import numpy as np
from numpy.typing import DTypeLike

from .._arrays.dtypes import DTYPES, PAIRS, PRODUCT_DTYPES, Dtype, is_bfloat16
from .._cuda import library

Casting = Literal["no", "equiv", "safe", "same_kind", "unsafe"]  # NumPy's casting rules


def loop_dtype(a: np.dtype, b: np.dtype, out: np.dtype | None, dtype: DTypeLike | None, casting: Casting) -> np.dtype:
    """The dtype numpy.matmul computes ``a @ b`` in, and so the dtype of its result.

    Parameters
    ----------
    a, b : numpy.dtype
        The operands' dtypes.
    out : numpy.dtype or None
        The dtype of ``out=``, if given: the result must cast to it under ``casting``.
    dtype : dtype_like or None
        ``dtype=`` of the call: the loop's output dtype, as in NumPy.
    casting : {"no", "equiv", "safe", "same_kind", "unsafe"}
        The casting rule for the inputs (to the loop dtype) and the output.

    Returns
    -------
    numpy.dtype
        The loop dtype; inputs are cast to it, and the result has it unless
        ``out`` has another dtype (then the result is cast into ``out``).

    Raises
    ------
    TypeError
        NumPy's ``UFuncTypeError`` subclasses: operands with no matmul loop
        (datetime64, timedelta64, strings), casts that ``casting`` forbids, a
        ``dtype`` that is not a dtype or that names a byte order or unit.
    ValueError
        An unknown ``casting`` rule.

    Notes
    -----
    bfloat16 (ml_dtypes) is the one exception: NumPy has no bfloat16 matmul
    loop and computes in float32 (or float64), returning float32 even for
    bfloat16 @ bfloat16. The GPU has a bfloat16 product, so where NumPy's
    promotion of the operands (``np.result_type``, which ml_dtypes defines)
    exists, the product is computed in and returned as that type:
    bfloat16 @ bfloat16 and bfloat16 @ int8 give bfloat16, bfloat16 @ float32
    float32. This applies when neither ``dtype`` nor an ``out`` of another
    dtype asks for a specific loop; NumPy's checks and errors come first.
    Where ml_dtypes defines no promotion (bfloat16 @ float16, bfloat16 @
    int64, ...), NumPy's loop is used.
    """
    selected = {} if dtype is None else {"signature": (None, None, dtype)}  # None is refused
    # NumPy's stub says signature= takes dtypes or None: NumPy takes any dtype_like there, and
    # refuses None.
    loop = np.matmul.resolve_dtypes((a, b, out), casting=casting, **selected)[2]  # type: ignore[arg-type]
    if dtype is None and (is_bfloat16(a) or is_bfloat16(b)):
        try:
            promoted = np.result_type(a, b)
        except TypeError:  # DTypePromotionError: ml_dtypes promotes bfloat16 with few types
            return loop
        if out is None or out == promoted:
            return promoted
    return loop


def operand_code(
    a: np.dtype, b: np.dtype, loop: np.dtype, backend: int, precision: int
) -> tuple[np.dtype, np.dtype, int]:
    """The dtypes the C call reads A and B in, and its gpumatmul_dtype: the loop dtype, which
    both are cast to, unless libgpumatmul multiplies them as they are into the loop dtype.

    That is two FP8 operands, host or GPU, of one type (``Dtype.writes``) or the two types
    (``PAIRS``), whose float32 product (NumPy's loop) the library computes on FP8 tensor
    cores where the GPU has them, without float32 copies, where ``backend`` computes it at
    ``precision`` (cuBLAS does, through cuBLASLt's FP8 kernels or float16 copies of its own).

    >>> operand_code(np.dtype("int8"), np.dtype("int8"), np.dtype("int8"), 0, 0)
    (dtype('int8'), dtype('int8'), 6)
    """
    as_they_are = _as_they_are(a, b)
    if as_they_are is not None and as_they_are[1] == loop.name and _computes(backend, as_they_are[0], precision):
        return a, b, as_they_are[0]
    return loop, loop, code(loop)


@functools.cache  # dtype.name takes microseconds, and every GPU product asks
def _as_they_are(a: np.dtype, b: np.dtype) -> tuple[int, str] | None:
    """(gpumatmul_dtype, the dtype it writes) of a product of ``a`` and ``b`` read as they
    are, where the library has one whose C is another dtype; None elsewhere."""
    if a == b:
        row: Dtype | None = DTYPES.get(a.name)
        return None if row is None or not row.writes else (row.code, row.writes)
    pair = PAIRS.get((a.name, b.name))
    return None if pair is None else (pair, "float32")


@functools.cache  # the library's answer for a backend, dtype and precision never changes
def _computes(backend: int, code: int, precision: int) -> bool:
    status: int = library.library().gpumatmul_backend_supports(backend, code, precision)
    return status == 0


def check_keyword(dtype: DTypeLike | None) -> None:
    """NumPy's TypeError for a ``dtype=`` that is not a dtype or that names more than the type.

    NumPy checks this while parsing a ufunc's arguments, before it looks at
    ``out``'s flags, so it is checked here apart from ``loop_dtype``: the same
    mistakes then raise the same exception types in the same order as NumPy.
    """
    if dtype is None:
        return
    selected = np.dtype(dtype)  # NumPy's TypeError for what is not a dtype
    if selected != np.dtype(selected.type):  # equivalence: byte order and unit count, as in NumPy
        raise TypeError(
            f"dtype={dtype!r}: the `dtype` and `signature` arguments to ufuncs only select the "
            "general DType and not details such as the byte order or time unit (NumPy's rule); "
            f"use the scalar type, e.g. dtype=np.{selected.type.__name__}"
        )


def code(dtype: np.dtype) -> int:
    """The gpumatmul_dtype value for a loop dtype; TypeError for a dtype the GPU does not compute.

    NumPy multiplies object arrays (Python's ``*`` and ``+`` on each element)
    and long doubles; a GPU cannot, so these are refused, pointing to NumPy.
    """
    number = _code(dtype)
    if number is None:
        raise TypeError(
            f"pyctk.matmul cannot compute in {dtype}, the dtype NumPy's matmul uses for these "
            f"operands: the GPU computes in {', '.join(PRODUCT_DTYPES)}. Use numpy.matmul for these "
            "arrays, or convert them first (e.g. a.astype(np.float64))."
        )
    return number


@functools.cache  # dtype.name takes microseconds, and every call needs a code
def _code(dtype: np.dtype) -> int | None:
    row = DTYPES.get(dtype.name) if dtype.isnative else None
    return None if row is None or not row.product else row.code
