"""pyctk.matmul: numpy.matmul's interface, computed on the GPU."""

from __future__ import annotations

import ctypes
from typing import Literal

import numpy as np

from . import _library
from ._errors import UnsupportedError

Backend = Literal["auto", "tiled", "cublas"]
_BACKENDS = {"auto": 0, "tiled": 1, "cublas": 2}      # gpumatmul_backend
_DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1}  # gpumatmul_dtype


def matmul(x1: np.typing.ArrayLike, x2: np.typing.ArrayLike, /, out: np.ndarray | None = None,
           *, backend: Backend = "auto") -> np.ndarray:
    """Matrix product of two arrays, computed on the GPU; same semantics as ``numpy.matmul``.

    Parameters
    ----------
    x1, x2 : array_like
        2-D arrays of shape (m, k) and (k, n), any strides or memory order.
        Their dtypes promote as in NumPy (``np.result_type``); the result
        must be float32 or float64.
    out : ndarray, optional
        Where to write the (m, n) result; its dtype must accept the result
        dtype under ``same_kind`` casting. It may overlap ``x1`` or ``x2``.
    backend : {"auto", "tiled", "cublas"}
        ``"cublas"`` uses NVIDIA cuBLAS, ``"tiled"`` pyctk's own kernel,
        ``"auto"`` the fastest (cuBLAS today).

    Returns
    -------
    ndarray
        The (m, n) product, in host memory (``out`` if given).

    Raises
    ------
    ValueError
        0-d operands, mismatched inner dimensions, a wrong ``out`` shape or an
        unknown backend.
    TypeError
        A result dtype other than float32 or float64, or an ``out`` of the
        wrong type.
    pyctk.UnsupportedError
        1-D or N-D operands (a later release adds them).
    pyctk.NoDriverError, pyctk.NoDeviceError, pyctk.OutOfMemoryError, pyctk.CudaError
        No driver or GPU, not enough GPU memory, or another CUDA failure.

    Examples
    --------
    >>> import numpy as np, pyctk
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> b = np.ones((3, 2), dtype=np.float32)
    >>> pyctk.matmul(a, b)
    array([[ 3.,  3.],
           [12., 12.]], dtype=float32)
    >>> pyctk.matmul(a, b, backend="tiled").dtype
    dtype('float32')
    """
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {sorted(_BACKENDS)}, not {backend!r}")
    a, b = np.asarray(x1), np.asarray(x2)
    m, k, n = _check_shapes(a.shape, b.shape)
    dtype = _result_dtype(a, b)
    result = _output(out, (m, n), dtype)
    a_data, trans_a, lda = _blas_operand(a.astype(dtype, copy=False))
    b_data, trans_b, ldb = _blas_operand(b.astype(dtype, copy=False))
    c_target, trans_c, ldc = _blas_operand(result)
    if c_target is not result or trans_c or result.dtype != dtype:  # write a temporary, then copy
        c_target, ldc = np.empty((m, n), dtype), max(n, 1)
    _library.call("gpumatmul_matmul_host", _library.context(), _BACKENDS[backend], _DTYPES[dtype],
                  trans_a, trans_b, m, n, k, _pointer(a_data), lda, _pointer(b_data), ldb,
                  _pointer(c_target), ldc)
    if c_target is not result:
        np.copyto(result, c_target, casting="same_kind")
    return result


def _check_shapes(a_shape: tuple, b_shape: tuple) -> tuple[int, int, int]:
    """(m, k, n) for 2-D operands; numpy.matmul's ValueError for invalid shapes of any rank."""
    for position, shape in enumerate((a_shape, b_shape)):
        if len(shape) == 0:
            raise ValueError(f"matmul: input operand {position} is 0-d (a scalar); "
                             "matmul needs arrays with at least 1 dimension (use * for scalars)")
    a_core = a_shape if len(a_shape) > 1 else (1, *a_shape)  # 1-D: a row vector ...
    b_core = b_shape if len(b_shape) > 1 else (*b_shape, 1)  # ... or a column vector
    if a_core[-1] != b_core[-2]:
        raise ValueError(f"matmul: shapes {a_shape} and {b_shape} are not aligned: "
                         f"{a_core[-1]} (last dim of operand 0) != {b_core[-2]} "
                         f"({'dim 0' if len(b_shape) == 1 else 'second-to-last dim'} of operand 1)")
    try:
        np.broadcast_shapes(a_core[:-2], b_core[:-2])
    except ValueError:
        raise ValueError(f"matmul: the stack dimensions of {a_shape} and {b_shape} do not "
                         "broadcast") from None
    if len(a_shape) != 2 or len(b_shape) != 2:
        raise UnsupportedError(
            f"pyctk.matmul supports 2-D operands only for now, got shapes {a_shape} and {b_shape}; "
            "reshape 1-D vectors to (1, k) or (k, 1), or loop over the stack")
    return a_shape[0], a_shape[1], b_shape[1]


def _result_dtype(a: np.ndarray, b: np.ndarray) -> np.dtype:
    try:
        dtype = np.result_type(a, b)
    except TypeError as error:
        raise TypeError(f"matmul: operands of dtype {a.dtype} and {b.dtype} do not combine") from error
    if dtype not in _DTYPES:
        raise TypeError(
            f"pyctk.matmul supports float32 and float64 results, not {dtype} (from {a.dtype} and "
            f"{b.dtype}); convert first, e.g. pyctk.matmul(a.astype(np.float64), b.astype(np.float64))")
    return dtype


def _output(out: np.ndarray | None, shape: tuple[int, int], dtype: np.dtype) -> np.ndarray:
    if out is None:
        return np.empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray, not {type(out).__name__}")
    if out.shape != shape:
        raise ValueError(f"out has shape {out.shape}; the result needs exactly {shape}")
    if not np.can_cast(dtype, out.dtype, casting="same_kind"):
        raise TypeError(f"cannot write a {dtype} result into out of dtype {out.dtype} "
                        "(casting='same_kind')")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    return out


def _blas_operand(x: np.ndarray) -> tuple[np.ndarray, bool, int]:
    """(array, transposed, leading dimension) as libgpumatmul reads it; copies only odd strides.

    Row-major data with any row pitch passes as is, column-major as the
    transpose of row-major; negative, zero or non-multiple strides get a copy.
    """
    rows, cols = x.shape
    steps = [s // x.itemsize if s % x.itemsize == 0 else 0 for s in x.strides]
    row_step = steps[0] if rows > 1 else max(cols, 1)  # a length-1 axis's stride is arbitrary
    col_step = steps[1] if cols > 1 else 1
    if col_step == 1 and row_step >= max(cols, 1):
        return x, False, row_step
    if row_step == 1 and col_step >= max(rows, 1):
        return x, True, col_step
    return np.ascontiguousarray(x), False, max(cols, 1)


def _pointer(x: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(x.ctypes.data)
