"""Streams and events of ``pyctk.driver``, as PyCUDA has them.

Both are made in the calling thread's current context (the current device's primary
context) and destroyed when garbage. A ``Stream`` has ``__cuda_stream__``, so it is a
``stream=`` for ``pyctk.matmul`` and for other libraries too.
"""

from __future__ import annotations

import enum
import os
from ctypes import byref, c_float, c_void_p, sizeof
from typing import Any

from ..._cuda import constants as cu
from ..._cuda import driver_api, streams, waits


class stream_flags(enum.IntFlag):  # noqa: N801 - PyCUDA's name
    """Flags of :class:`Stream`: ``CUstream_flags`` (cuda.h)."""

    DEFAULT = cu.CU_STREAM_DEFAULT  #: Ordered with the legacy default stream (``stream=None``), both ways.
    NON_BLOCKING = cu.CU_STREAM_NON_BLOCKING  #: Not ordered with the legacy default stream.


class event_flags(enum.IntFlag):  # noqa: N801 - PyCUDA's name
    """Flags of :class:`Event`: ``CUevent_flags`` (cuda.h)."""

    DEFAULT = cu.CU_EVENT_DEFAULT  #: A timing event; waiting for it spins.
    BLOCKING_SYNC = cu.CU_EVENT_BLOCKING_SYNC  #: Waiting for it (:meth:`Event.synchronize`) sleeps instead of spinning.
    DISABLE_TIMING = cu.CU_EVENT_DISABLE_TIMING  #: No timestamps: cheaper to record and wait for.
    INTERPROCESS = cu.CU_EVENT_INTERPROCESS  #: May be shared with another process (with ``DISABLE_TIMING``).


class _Handle:
    """A driver object destroyed by ``destroy`` when garbage, except in a forked child (it is
    the parent's) or after a failure (nothing to tell)."""

    _destroy = ""
    __slots__ = ("handle", "_pid")

    def __init__(self, create: str, *args: Any) -> None:
        self.handle = 0  # (NULL until made: nothing to destroy if making fails)
        driver_api.current_context()
        handle = c_void_p()
        driver_api.call(create, byref(handle), *args)
        self.handle, self._pid = handle.value or 0, os.getpid()

    def __del__(self) -> None:
        if self.handle and os.getpid() == self._pid and driver_api._driver is not None:
            getattr(driver_api._driver, self._destroy)(self.handle)

    def _ready(self, query: str) -> bool:
        result = getattr(driver_api.driver(), query)(self.handle)
        if result == cu.CUDA_ERROR_NOT_READY:
            return False
        driver_api.check(result, query)
        return True


class Stream(_Handle):
    """A CUDA stream: work on it runs in order, and may overlap other streams' work.

    Made in the calling thread's current context, and destroyed when garbage. A stream has
    ``__cuda_stream__``, so it is a ``stream=`` for :func:`pyctk.matmul` and for other
    libraries too; ``handle`` is its ``CUstream``. The capture methods
    (:meth:`begin_capture` ...) make :class:`Graph` objects, as in PyCUDA's pull request
    #424 (released PyCUDA has no graphs).

    Parameters
    ----------
    flags : stream_flags, optional
        ``DEFAULT``: ordered with the legacy default stream; ``NON_BLOCKING``: not.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a = cuda.pagelocked_zeros(4, np.float32)     # page-locked: the copies are asynchronous
    >>> a_gpu = cuda.mem_alloc(a.nbytes)
    >>> stream = cuda.Stream()
    >>> cuda.memset_d32_async(a_gpu, np.float32(1).view(np.uint32), 4, stream)
    >>> cuda.memcpy_dtoh_async(a, a_gpu, stream)
    >>> stream.synchronize()
    >>> a
    array([1., 1., 1., 1.], dtype=float32)
    """

    _destroy = "cuStreamDestroy"
    __slots__ = ()

    def __init__(self, flags: int = stream_flags.DEFAULT) -> None:
        super().__init__("cuStreamCreate", int(flags))

    def __cuda_stream__(self) -> tuple[int, int]:
        """``(0, handle)``: the CUDA stream protocol, by which other libraries take this stream."""
        return 0, self.handle

    def synchronize(self) -> None:
        """Wait until everything queued on the stream is done; Ctrl-C ends the wait
        (KeyboardInterrupt) at once, the GPU's work goes on."""
        waits.wait("cuStreamSynchronize", self.handle, query="cuStreamQuery")

    def is_done(self) -> bool:
        """Whether everything queued on the stream is done, without waiting."""
        return self._ready("cuStreamQuery")

    def wait_for_event(self, event: Event) -> None:
        """Make the work queued on the stream from now on wait until ``event`` has happened.

        Parameters
        ----------
        event : Event
            Recorded (on any stream), or it is no wait at all.
        """
        driver_api.call("cuStreamWaitEvent", self.handle, event.handle, 0)


class Event(_Handle):
    """A CUDA event: a point in a stream's work, to wait for or to time from.

    Made in the calling thread's current context, and destroyed when garbage.

    Parameters
    ----------
    flags : event_flags, optional
        Default ``DEFAULT``, a timing event.

    Examples
    --------
    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> start, end = cuda.Event(), cuda.Event()
    >>> start.record() is start
    True
    >>> a_gpu = cuda.mem_alloc(1 << 20)
    >>> cuda.memset_d8(a_gpu, 0, 1 << 20)
    >>> milliseconds = end.record().synchronize().time_since(start)
    >>> milliseconds >= 0, end.query()
    (True, True)
    """

    _destroy = "cuEventDestroy"
    __slots__ = ()

    def __init__(self, flags: int = event_flags.DEFAULT) -> None:
        super().__init__("cuEventCreate", int(flags))

    def record(self, stream: Any = None) -> Event:
        """Record the event on a stream: it happens once the work queued there so far is done.

        Parameters
        ----------
        stream : Stream, optional
            Or any object with ``__cuda_stream__``, or a handle; default None, the legacy
            default stream. (PyCUDA's ``record_in_stream(stream)`` is ``record(stream)``.)

        Returns
        -------
        Event
            The event itself, for ``end.record().synchronize()``.
        """
        driver_api.call("cuEventRecord", self.handle, streams.handle(stream))
        return self

    def synchronize(self) -> Event:
        """Wait until the event has happened: the work queued before its record is done.

        Returns
        -------
        Event
            The event itself.

        Ctrl-C ends the wait (KeyboardInterrupt) at once; the GPU's work goes on.
        """
        waits.wait("cuEventSynchronize", self.handle, query="cuEventQuery")
        return self

    def query(self) -> bool:
        """Whether the event has happened, without waiting.

        Returns
        -------
        bool
        """
        return self._ready("cuEventQuery")

    def time_since(self, start: Event) -> float:
        """The milliseconds from event ``start`` to this one.

        Parameters
        ----------
        start : Event
            Recorded before this one; both must have happened, and have timing.

        Returns
        -------
        float
            Milliseconds, to about half a microsecond.
        """
        milliseconds = c_float()
        driver_api.call("cuEventElapsedTime", byref(milliseconds), start.handle, self.handle)
        return milliseconds.value

    def time_till(self, end: Event) -> float:
        """The milliseconds from this event to event ``end``: ``end.time_since(self)``.

        Parameters
        ----------
        end : Event

        Returns
        -------
        float
        """
        return end.time_since(self)

    def ipc_handle(self) -> bytearray:
        """A handle to the event for another process, which opens it with :meth:`from_ipc_handle`.

        The event must be made with ``event_flags.INTERPROCESS | event_flags.DISABLE_TIMING``.

        Returns
        -------
        bytearray
            64 bytes, to send to the other process (through a pipe, say).

        Examples
        --------
        >>> import pyctk.driver as cuda                  # doctest: +GPU
        >>> flags = cuda.event_flags.INTERPROCESS | cuda.event_flags.DISABLE_TIMING
        >>> handle = cuda.Event(flags).record().ipc_handle()
        >>> len(handle)
        64
        """
        handle = driver_api.IpcHandle()
        driver_api.call("cuIpcGetEventHandle", byref(handle), self.handle)
        return bytearray(handle)

    @staticmethod
    def from_ipc_handle(handle: Any) -> Event:
        """Open the event of another process, from the handle its :meth:`ipc_handle` gave.

        The event can then be waited for (:meth:`synchronize`, :meth:`query`,
        :meth:`Stream.wait_for_event`) or recorded. When it is garbage here, the other
        process's event stays.

        Parameters
        ----------
        handle : bytes-like
            The 64 bytes: a bytearray, as in PyCUDA, or bytes that came through a pipe.

        Returns
        -------
        Event

        Raises
        ------
        TypeError
            ``handle`` is not a buffer.
        ValueError
            It is not 64 bytes long.
        """
        opened = to_ipc_handle(handle)  # (checked before there is an event to destroy)
        event = Event.__new__(Event)
        _Handle.__init__(event, "cuIpcOpenEventHandle", opened)
        return event


def to_ipc_handle(handle: Any) -> driver_api.IpcHandle:
    """An IPC handle (``Event.ipc_handle()``'s, ``mem_get_ipc_handle``'s) as the driver takes it,
    from its 64 bytes in any buffer: PyCUDA's bytearray, or bytes that came through a pipe.

    Raises TypeError for what is not a buffer, ValueError for a buffer of another size.
    """
    try:
        data = memoryview(handle).tobytes()
    except TypeError:
        raise TypeError(
            f"an IPC handle is the 64 bytes (a bytearray) that Event.ipc_handle() or "
            f"mem_get_ipc_handle() returned, not {type(handle).__name__}"
        ) from None
    if len(data) != sizeof(driver_api.IpcHandle):
        raise ValueError(
            f"an IPC handle is {sizeof(driver_api.IpcHandle)} bytes; this one is "
            f"{len(data)}: pass the whole of what ipc_handle() returned"
        )
    return driver_api.IpcHandle.from_buffer_copy(data)
