"""Copies between GPU arrays of any strides, casting each element as NumPy casts it.

One call of libgpumatmul's ``gpumatmul_copy_device`` (one kernel, or the copy engines for
plain copies), enqueued on a stream: the host does not wait, and no byte goes through host
memory. What to allow is the caller's to decide (NumPy's casting rules); the copy itself
casts as ``numpy.copyto(..., casting="unsafe")`` does.

>>> import numpy as np, pyctk                                # doctest: +GPU
>>> from pyctk._arrays import convert
>>> source, destination = pyctk.asarray(np.arange(3.5)), pyctk.empty(4, np.int32)
>>> convert.copy(destination._operand(), source._operand(), device=0, stream=0)
>>> destination.get()
array([0, 1, 2, 3], dtype=int32)
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._cuda import contexts, library
from .dtypes import DTYPES

ComplexWarning = getattr(np, "exceptions", np).ComplexWarning  # numpy.exceptions: NumPy 1.25


def describe(x: Any) -> library.ArrayDesc:
    """The C description of ``x`` (anything with ``shape``, byte ``strides`` and ``dtype``)."""
    desc = library.ArrayDesc(DTYPES[x.dtype.name].code, len(x.shape))
    desc.shape[: len(x.shape)] = x.shape
    desc.strides[: len(x.strides)] = x.strides
    return desc


def copy(destination: Any, source: Any, device: int, stream: int) -> None:
    """``destination[...] = source`` on GPU ``device``, enqueued on ``stream``: both have a
    ``pointer`` to element 0, ``shape`` (the same), byte ``strides`` and ``dtype``; a zero
    stride in ``source`` repeats its element. ``destination`` must not overlap ``source``
    (unless the two are the same elements of one dtype) nor itself. Complex to real warns
    as NumPy does (ComplexWarning)."""
    if source.dtype.kind == "c" and destination.dtype.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", ComplexWarning, stacklevel=2)
    library.call(
        "gpumatmul_copy_device",
        contexts.context(device),
        describe(destination),
        destination.pointer,
        describe(source),
        source.pointer,
        stream,
    )
