"""Host operands of every layout the tiles of a streamed product cut, and the check of a
product of them against NumPy, for the GPU tests of host products."""

from __future__ import annotations

import numpy as np


def random(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = rng.standard_normal(shape)
    return (values + 1j * rng.standard_normal(shape) if dtype.kind == "c" else values).astype(dtype)


def check(result, a, b):
    """result == a @ b: exactly for integers, to float32/float64 rounding for floating point."""
    if result.dtype.kind in "iu":
        np.testing.assert_array_equal(result, np.matmul(a, b))
        return
    wide = np.complex128 if result.dtype.kind == "c" else np.float64
    expected = np.matmul(a.astype(wide), b.astype(wide))
    rtol = 1e-4 if result.dtype.itemsize <= 8 and result.dtype != np.float64 else 1e-11
    error = np.linalg.norm(result - expected) / max(np.linalg.norm(expected), 1e-300)
    assert error < rtol, error


# (a's shape, b's shape, how each is laid out); with a 256 KiB limit every one is many tiles.
CASES = {
    "rows": ((700, 300), (300, 90), "c", "c"),
    "rows and columns": ((600, 200), (200, 900), "c", "c"),
    "transposed": ((700, 300), (300, 900), "T", "T"),
    "strided": ((700, 300), (300, 500), "strided", "strided"),
    "stack slices": ((40, 30, 20), (40, 20, 50), "c", "c"),
    "broadcast b": ((6, 300, 200), (200, 300), "c", "c"),
    "broadcast a": ((300, 200), (6, 200, 300), "c", "T"),
    "one row of tiles per matrix": ((3, 700, 150), (3, 150, 400), "c", "c"),
}


def lay_out(rng, shape, how, dtype):
    if how == "T":
        return random(rng, shape[:-2] + shape[:-3:-1], dtype).swapaxes(-1, -2)
    if how == "strided":
        return random(rng, tuple(2 * s for s in shape), dtype)[..., ::2, ::2]
    return random(rng, shape, dtype)
