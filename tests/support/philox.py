"""Philox4x32-10 in NumPy, from Salmon, Moraes, Dror and Shaw, SC11 (Random123's philox.h):
the reference pyctk.curandom's rand is checked against, bit for bit."""

from __future__ import annotations

import numpy as np

M = (0xD2511F53, 0xCD9E8D57)  # round multipliers
W = (0x9E3779B9, 0xBB67AE85)  # key increments: the golden ratio, sqrt(3) - 1
MASK = np.uint64(0xFFFFFFFF)


def philox4x32_10(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32-10 of each row of ``counters`` (uint32, shape (n, 4)) under ``key``."""
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for r in range(10):
        if r:
            k0, k1 = (k0 + np.uint64(W[0])) & MASK, (k1 + np.uint64(W[1])) & MASK
        p0, p1 = np.uint64(M[0]) * c[0], np.uint64(M[1]) * c[2]  # exact: both factors < 2**32
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & MASK, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & MASK]
    return np.stack(c, axis=1).astype(np.uint32)


def reference_rand(n: int, dtype: np.dtype, seed: int) -> np.ndarray:
    """What rand makes: block j = Philox((j, j >> 32, 0, 0), (seed, 0)), four words;
    float32 takes a word's top 24 bits, float64 two words' top 53."""
    per = 2 if np.dtype(dtype) == np.float64 else 4
    j = np.arange(-(-n // per), dtype=np.uint64)
    counters = np.stack([j & MASK, j >> np.uint64(32), 0 * j, 0 * j], axis=1).astype(np.uint32)
    words = philox4x32_10(counters, (seed, 0)).ravel()
    if np.dtype(dtype) == np.float32:
        values = (words >> 8).astype(np.float32) * np.float32(2.0**-24)
    elif np.dtype(dtype) == np.float64:
        pairs = words.reshape(-1, 2).astype(np.uint64)
        values = ((pairs[:, 0] << np.uint64(21)) ^ (pairs[:, 1] >> np.uint64(11))).astype(np.float64) * 2.0**-53
    else:
        values = words.view(dtype)
    return values[:n]
