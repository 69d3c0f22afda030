"""Values for FP8 product tests whose float32 sums are exact, so that any order of addition,
on FP8 tensor cores or in float32, gives NumPy's result bit for bit."""

from __future__ import annotations

import numpy as np


def small_integers(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """-4 .. 4: exact in both FP8 types (and every other dtype), their sums exact in float32
    and in the tensor cores' 128-term sums."""
    return rng.integers(-4, 5, shape).astype(dtype)
