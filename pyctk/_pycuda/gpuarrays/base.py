"""What the kernels' engine needs of an array: ``GPUArrayBase``, which ``GPUArray`` implements.

The element-wise operations (``engine``), reductions and scans make their results like
an operand (same allocator, device and memory order) and read operands' memory in place or
through a contiguous copy. They are below ``array`` (which imports them for its operators and
methods), so they know arrays by this interface alone: an operand is one of theirs when it is
an instance of ``GPUArrayBase``, and what they call on it is declared here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..._arrays.strided import StridedArray

_Array = TypeVar("_Array", bound="GPUArrayBase")


class GPUArrayBase(StridedArray):
    """The interface of an array the engine computes with and makes results like.

    Besides ``StridedArray``'s layout (``shape``, ``strides``, ``dtype``, ``device``, views),
    an implementation has ``ptr`` (the address of element 0), ``size``, ``itemsize``,
    ``flags`` (``c_contiguous``, ``f_contiguous``, ``forc``), ``allocator``, ``fill`` and
    the constructors below.
    """

    __slots__ = ()

    size: int
    flags: Any
    allocator: Any

    if TYPE_CHECKING:

        @property
        def ptr(self) -> int: ...

        @property
        def itemsize(self) -> int: ...

    def _new_like_me(self: _Array, dtype: Any = None, order: str = "K") -> _Array:
        """A new array of this shape (and dtype unless given), contiguous in this array's
        axis order (``order="K"``), from this array's allocator and device."""
        raise NotImplementedError

    def _new(self: _Array, shape: tuple[int, ...], dtype: np.dtype, strides: Sequence[int] | None = None) -> _Array:
        """A new array of ``shape`` from this array's allocator, on its device."""
        raise NotImplementedError

    def _keeps_layout(self, dtype: np.dtype) -> bool:
        """Whether ``_new_like_me(dtype)`` has this array's strides (``_same_layout``'s case)."""
        raise NotImplementedError

    def _same_layout(self: _Array, dtype: np.dtype) -> _Array:
        """A new array with this (contiguous) array's shape and strides, and ``dtype`` of the
        same item size, made without checking again what this array was checked for."""
        raise NotImplementedError

    def _view(self: _Array, shape: Sequence[int], strides: Sequence[int], offset: int = 0, dtype: Any = None) -> _Array:
        """A view of this array's memory from ``offset`` bytes on, of ``dtype`` if given."""
        raise NotImplementedError

    def _contiguous(self: _Array) -> _Array:
        """This array if C- or Fortran-contiguous, else a contiguous copy (for kernels)."""
        raise NotImplementedError

    def _assign(self, source: GPUArrayBase, stream: int) -> None:
        """Copy ``source`` (of this shape and dtype, any strides) into this array on ``stream``."""
        raise NotImplementedError

    def fill(self: _Array, value: Any, stream: Any = None) -> _Array:
        """Set every element to ``value`` (converted to the dtype); returns the array."""
        raise NotImplementedError
