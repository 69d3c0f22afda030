"""Blocking waits for the GPU that Ctrl-C ends: Context, Stream and Event ``synchronize``.

A driver call that blocks (``cuCtxSynchronize`` ...) holds the calling thread inside the
driver until the GPU's work ends, and Python runs signal handlers only in the main thread,
between bytecodes: a KeyboardInterrupt would wait for an 8 s kernel to finish. So a wait of
the main thread that is not over at once runs on a thread of its own, with the caller's
context current there, while the caller waits for it in steps of 50 ms, between which Python
runs the signal handlers. On Ctrl-C the caller gets its KeyboardInterrupt within those 50
ms; the GPU's work, and the waiting thread, go on to their end (nothing can stop a kernel
but the end of the process).

Other threads, and waits already over (``query``: the stream's or event's ``...Query``),
call the driver directly: no thread is started for them.
"""

from __future__ import annotations

import _thread  # its lock is threading.Lock; importing threading costs ~0.6 ms
from ctypes import c_void_p
from typing import Any

from . import constants as cu
from . import driver_api

_SIGNAL_CHECK_SECONDS = 0.05  # how often a waiting main thread runs the signal handlers
_MAIN_THREAD = _thread.get_ident()  # the thread that imports pyctk: CPython's main, where signals go


def wait(name: str, *args: Any, query: str | None = None) -> None:
    """``driver_api.call(name, *args)``, interruptible by signals in the main thread.
    ``query``: the driver function that says, without blocking, whether ``args[0]``'s work
    is done (CUDA_SUCCESS) or not (CUDA_ERROR_NOT_READY)."""
    if query is not None:
        result = getattr(driver_api.driver(), query)(*args)
        if result != cu.CUDA_ERROR_NOT_READY:
            driver_api.check(result, query)
            return
    context = driver_api.current_context()  # (made first where the thread has none)
    if _thread.get_ident() != _MAIN_THREAD:
        driver_api.call(name, *args)
        return
    done = _thread.allocate_lock()
    done.acquire()
    outcome: list[BaseException | None] = []

    def waiting() -> None:
        try:
            driver_api.call("cuCtxPushCurrent", c_void_p(context))
            driver_api.call(name, *args)
            outcome.append(None)
        except BaseException as error:  # handed to the caller, which raises it
            outcome.append(error)
        finally:
            done.release()

    _thread.start_new_thread(waiting, ())
    # Waits of a bounded length: the process's signal may reach another thread (the waiting
    # one, the driver's), which only marks it for the main thread's next bytecode.
    while not done.acquire(timeout=_SIGNAL_CHECK_SECONDS):
        pass
    if outcome[0] is not None:
        raise outcome[0]
