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

from ..._cuda import driver_api, streams


class stream_flags(enum.IntFlag):  # noqa: N801 - PyCUDA's name
    DEFAULT = 0x0
    NON_BLOCKING = 0x1  # not ordered with the legacy default stream


class event_flags(enum.IntFlag):  # noqa: N801 - PyCUDA's name
    DEFAULT = 0x0
    BLOCKING_SYNC = 0x1
    DISABLE_TIMING = 0x2
    INTERPROCESS = 0x4


class _Handle:
    """A driver object destroyed by ``destroy`` when garbage, except in a forked child (it is
    the parent's) or after a failure (nothing to tell)."""

    _destroy = ""
    __slots__ = ("handle", "_pid")

    def __init__(self, create: str, *args: Any) -> None:
        self.handle = None
        driver_api.current_context()
        handle = c_void_p()
        driver_api.call(create, byref(handle), *args)
        self.handle, self._pid = handle.value, os.getpid()

    def __del__(self) -> None:
        if self.handle and os.getpid() == self._pid and driver_api._driver is not None:
            getattr(driver_api._driver, self._destroy)(self.handle)

    def _ready(self, query: str) -> bool:
        result = getattr(driver_api.driver(), query)(self.handle)
        if result == driver_api.NOT_READY:
            return False
        driver_api.check(result, query)
        return True


class Stream(_Handle):
    """A CUDA stream: work on it runs in order, and may overlap other streams' work.

    >>> s = Stream()                                   # doctest: +SKIP
    >>> memcpy_htod_async(a_gpu, a, s); s.synchronize()     # doctest: +SKIP
    """

    _destroy = "cuStreamDestroy"
    __slots__ = ()

    def __init__(self, flags: int = stream_flags.DEFAULT) -> None:
        super().__init__("cuStreamCreate", int(flags))

    def __cuda_stream__(self) -> tuple[int, int]:
        return 0, self.handle

    def synchronize(self) -> None:
        """Wait until everything queued on the stream is done."""
        driver_api.call("cuStreamSynchronize", self.handle)

    def is_done(self) -> bool:
        """Whether everything queued on the stream is done, without waiting."""
        return self._ready("cuStreamQuery")

    def wait_for_event(self, event: Event) -> None:
        """Make work queued on the stream from now on wait for ``event``."""
        driver_api.call("cuStreamWaitEvent", self.handle, event.handle, 0)


class Event(_Handle):
    """A CUDA event: a point in a stream, to wait for or to time between.

    >>> start, end = Event(), Event()                        # doctest: +SKIP
    >>> start.record(); kernel(..., block=(256, 1, 1)); end.record()   # doctest: +SKIP
    >>> end.synchronize().time_since(start)                  # doctest: +SKIP
    0.0123
    """

    _destroy = "cuEventDestroy"
    __slots__ = ()

    def __init__(self, flags: int = event_flags.DEFAULT) -> None:
        super().__init__("cuEventCreate", int(flags))

    def record(self, stream: Any = None) -> Event:
        """Record the event on ``stream`` (default: the legacy default stream); returns self."""
        driver_api.call("cuEventRecord", self.handle, streams.handle(stream))
        return self

    def synchronize(self) -> Event:
        """Wait until the work before the event's record is done; returns self."""
        driver_api.call("cuEventSynchronize", self.handle)
        return self

    def query(self) -> bool:
        """Whether the work before the event's record is done, without waiting."""
        return self._ready("cuEventQuery")

    def time_since(self, start: Event) -> float:
        """Milliseconds from event ``start`` to this one; both must have completed."""
        milliseconds = c_float()
        driver_api.call("cuEventElapsedTime", byref(milliseconds), start.handle, self.handle)
        return milliseconds.value

    def time_till(self, end: Event) -> float:
        """Milliseconds from this event to event ``end``."""
        return end.time_since(self)

    def ipc_handle(self) -> bytearray:
        """The event's handle for another process, which opens it with ``Event.from_ipc_handle``.

        The event must be made with ``event_flags.INTERPROCESS | event_flags.DISABLE_TIMING``.

        >>> event = Event(event_flags.INTERPROCESS | event_flags.DISABLE_TIMING)   # doctest: +SKIP
        >>> send_to_the_other_process(bytes(event.record(stream).ipc_handle()))     # doctest: +SKIP
        """
        handle = driver_api.IpcHandle()
        driver_api.call("cuIpcGetEventHandle", byref(handle), self.handle)
        return bytearray(handle)

    @staticmethod
    def from_ipc_handle(handle: Any) -> Event:
        """The event of another process whose ``ipc_handle()`` ``handle`` is (64 bytes: a
        bytearray as in PyCUDA, or bytes ...), to wait for (``synchronize``, ``query``,
        ``Stream.wait_for_event``) or record. Garbage here, it leaves the other process's be."""
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
        raise TypeError(f"an IPC handle is the 64 bytes (a bytearray) that Event.ipc_handle() or "
                        f"mem_get_ipc_handle() returned, not {type(handle).__name__}") from None
    if len(data) != sizeof(driver_api.IpcHandle):
        raise ValueError(f"an IPC handle is {sizeof(driver_api.IpcHandle)} bytes; this one is "
                         f"{len(data)}: pass the whole of what ipc_handle() returned")
    return driver_api.IpcHandle.from_buffer_copy(data)
