"""Collecting garbage until what a test dropped is freed."""

from __future__ import annotations

import gc


def collect() -> None:
    """Collect until dropped arrays are freed: PyPy frees a NumPy array's base (the block's
    anchor) a collection after the array."""
    for _ in range(3):
        gc.collect()
