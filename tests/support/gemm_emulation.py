"""libgpumatmul's product and copy done by NumPy on host memory, reading and writing exactly the
memory gpumatmul.h says: for tests of what reaches the C call, without a GPU."""

from __future__ import annotations

import ctypes
import warnings

import numpy as np

from pyctk._arrays import dtypes as _dtypes
from support.strategies import FLOAT8, SUPPORTED

DTYPES_BY_CODE = {_dtypes.DTYPES[dtype.name].code: dtype for dtype in SUPPORTED + FLOAT8}


def product_dtypes(code: int) -> tuple[np.dtype, np.dtype, np.dtype]:
    """A's, B's and C's dtypes in a product of gpumatmul_dtype ``code``: the dtype's own, but
    float32 C for the FP8 types (Dtype.writes), and the mixed FP8 pairs' two types
    (``PAIRS``)."""
    pairs = {pair_code: names for names, pair_code in _dtypes.PAIRS.items()}
    if code in pairs:
        a, b = (np.dtype(name) for name in pairs[code])
        return a, b, np.dtype(np.float32)
    dtype = DTYPES_BY_CODE[code]
    return dtype, dtype, np.dtype(_dtypes.DTYPES[dtype.name].writes or dtype)


def stored_matrices(
    dtype: np.dtype, pointer: int, ld: int, stride: int, batch: int, rows: int, cols: int
) -> np.ndarray:
    """The (batch, rows, cols) row-major matrices at ``pointer`` as gpumatmul.h lays them out."""
    assert ld >= max(cols, 1) and stride >= 0, (ld, cols, stride)
    extent = (batch - 1) * stride + (rows - 1) * ld + cols
    size = dtype.itemsize
    memory = (ctypes.c_char * (extent * size)).from_address(pointer)
    # np.ndarray over the buffer, not as_strided: as_strided rebuilds the dtype from its typestr,
    # which ml_dtypes' float8_e5m2 ('<f1') has no NumPy meaning for
    return np.ndarray((batch, rows, cols), dtype, buffer=memory, strides=(stride * size, ld * size, size))


def gemm(desc, a: int, b: int, c: int) -> int:
    """gpumatmul_gemm_host/_device for a ``pyctk._cuda.library.GemmDesc`` on host addresses; every
    A and B is read before C is written. Returns GPUMATMUL_SUCCESS (0)."""
    m, n, k, batch = desc.m, desc.n, desc.k, desc.batch_count
    a_dtype, b_dtype, c_dtype = product_dtypes(desc.dtype)
    a = stored_matrices(a_dtype, a, desc.lda, desc.stride_a, batch, *((k, m) if desc.trans_a else (m, k)))
    b = stored_matrices(b_dtype, b, desc.ldb, desc.stride_b, batch, *((n, k) if desc.trans_b else (k, n)))
    product = np.matmul(a.swapaxes(1, 2) if desc.trans_a else a, b.swapaxes(1, 2) if desc.trans_b else b)
    assert batch == 1 or desc.stride_c >= m * desc.ldc  # C matrices must not overlap
    c = stored_matrices(c_dtype, c, desc.ldc, desc.stride_c, batch, m, n)
    c[...] = product.astype(c_dtype)  # bfloat16: NumPy multiplies in float32
    return 0


def array_at(desc, pointer: int) -> np.ndarray:
    """The array a ``pyctk._cuda.library.ArrayDesc`` describes at host address ``pointer``."""
    dtype = DTYPES_BY_CODE[desc.dtype]
    shape, strides = tuple(desc.shape[: desc.ndim]), tuple(desc.strides[: desc.ndim])
    if 0 in shape:
        return np.empty(shape, dtype)
    low = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    high = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0) + dtype.itemsize
    memory = (ctypes.c_char * (high - low)).from_address(pointer + low)
    return np.ndarray(shape, dtype, buffer=memory, offset=-low, strides=strides)


def copy(dst_desc, dst: int, src_desc, src: int) -> int:
    """gpumatmul_copy_device on host addresses: NumPy's unsafe casts, whose results the GPU's
    copy reproduces (quietly: the C library warns of nothing). Returns GPUMATMUL_SUCCESS (0)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        np.copyto(array_at(dst_desc, dst), array_at(src_desc, src), casting="unsafe")
    return 0
