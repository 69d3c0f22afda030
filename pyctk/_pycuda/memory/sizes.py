"""Byte counts as the memory functions take them: checked before any CUDA call.

A size is an integer as ``pyctk._arrays.arguments.integer`` takes one (Python's and NumPy's
ints; never a bool, a float or a string, which ``int()`` would have turned into one); a
negative size is a ValueError, and
one that no size_t holds a MemoryError, as NumPy's for an allocation that large.
"""

from __future__ import annotations

from typing import Any

from ..._arrays.arguments import integer

_SIZE_T_END = 1 << 64


def byte_count(value: Any, what: str, least: int = 0) -> int:
    """``value`` as a number of bytes of at least ``least``; TypeError, ValueError or
    MemoryError naming ``what`` (the function and parameter) otherwise."""
    count = integer(value, f"{what} must be an int number of bytes")
    if count < least:
        raise ValueError(f"{what} is {count} bytes: it must be {least} or more")
    if count >= _SIZE_T_END:
        raise MemoryError(f"{what} is {count} bytes: more than a 64-bit address space holds")
    return count
