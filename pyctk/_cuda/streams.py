"""CUDA streams as pyctk takes them: the ``stream=`` argument, and ordering one stream after another.

``handle(stream)`` turns what a caller passes as ``stream=`` (None, an int handle, a
stream object of CuPy, PyTorch or pyctk.driver) into a ``cudaStream_t`` value; ``wait``
makes one stream wait, on the device, for another's pending work.

Numbers as CUDA and the array protocols use them: 0 is the legacy default stream for
pyctk's calls (not built with --default-stream per-thread), 1 is ``cudaStreamLegacy`` (the
same stream), 2 ``cudaStreamPerThread``.
"""

from __future__ import annotations

import numbers
from ctypes import byref, c_void_p
from typing import Any

import numpy as np

from . import cudart

# cudaStreamLegacy (driver_types.h): what the CUDA Array Interface and DLPack call the legacy
# default stream, which handle 0 also is.
LEGACY = 1
_EVENT_DISABLE_TIMING = 0x2  # the cheapest kind of event: pyctk's events only order streams


def handle(stream: Any) -> int:
    """The ``cudaStream_t`` value of a ``stream=`` argument.

    Parameters
    ----------
    stream : None, int or stream object
        None (the legacy default stream, 0); an int handle (1 and 2 are CUDA's
        ``cudaStreamLegacy`` and ``cudaStreamPerThread``); an object with
        ``__cuda_stream__()`` returning ``(0, handle)`` (CUDA Python's protocol, which
        CuPy and PyTorch streams have); an object with an int ``cuda_stream``
        attribute (older ``torch.cuda.Stream``).

    Raises
    ------
    TypeError
        Anything else (bools, floats, strings, an unknown protocol version).
    ValueError
        A negative handle.

    Examples
    --------
    >>> handle(None), handle(7)
    (0, 7)
    """
    if stream is None:
        return 0
    if isinstance(stream, (bool, np.bool_)):
        raise TypeError("stream must be None, a stream handle (int) or a stream object, not a bool")
    if isinstance(stream, numbers.Integral):
        value = int(stream)
    elif hasattr(stream, "__cuda_stream__"):
        version, value = stream.__cuda_stream__()
        if version != 0:
            raise TypeError(f"__cuda_stream__ protocol version {version}; pyctk reads version 0")
    elif isinstance(getattr(stream, "cuda_stream", None), numbers.Integral):
        value = stream.cuda_stream
    else:
        raise TypeError(
            f"stream must be None, a stream handle (int), an object with "
            f"__cuda_stream__ or an int cuda_stream attribute; got {type(stream).__name__}"
        )
    if value < 0:
        raise ValueError(f"stream handle {value} is negative")
    return int(value)


def same(a: int, b: int) -> bool:
    """Whether handles ``a`` and ``b`` name one stream (0 and cudaStreamLegacy do)."""
    return (LEGACY if a == 0 else a) == (LEGACY if b == 0 else b)


def wait(waiting: int, producer: int) -> None:
    """Make stream ``waiting`` wait, on the device, for what is queued on ``producer`` so far.

    Both streams must belong to the current device. The host does not wait.
    """
    if same(waiting, producer):  # a stream is ordered with itself
        return
    event = c_void_p()
    cudart.call("cudaEventCreateWithFlags", byref(event), _EVENT_DISABLE_TIMING)
    try:
        cudart.call("cudaEventRecord", event, producer)
        cudart.call("cudaStreamWaitEvent", waiting, event, 0)
    finally:
        # Destroying an event that a stream waits on is allowed: the wait still happens.
        cudart.call("cudaEventDestroy", event)
