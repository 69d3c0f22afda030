"""The contexts ``Device.make_context`` made, as pyctk keeps them.

Each has one record (``Made``) for all the ``Context`` objects that hold it, and its memory
keeps the record too: the last holder's release destroys the context, and memory then knows
it went with it. ``pyctk._cuda.contexts`` is told of each one (``register_made``), so that
pyctk.matmul and DeviceArrays work in it while it is current, and before it is destroyed
(``forget_made``), to destroy what the library made in it.
"""

from __future__ import annotations

import os
from ctypes import CFUNCTYPE, POINTER, byref, c_int, c_uint, c_void_p

from ..._cuda import constants as cu
from ..._cuda import contexts, driver_api, driver_errors

# cuCtxCreate's ABI from CUDA 3.2 on: (CUcontext *, unsigned int flags, CUdevice). The runtime's
# entry-point query would give the name's newest form up to its version instead: _v3 (CUDA
# 11.4, execution affinity arguments) for ABI 12000, _v4 (12.5, a parameters struct) for a
# CUDA 12.5+ runtime's own version; so this one is asked of the driver by version.
_CTX_CREATE_ABI = 3020
_ContextCreate = CFUNCTYPE(c_int, POINTER(c_void_p), c_uint, c_int)


def create_context(flags: int, device: int) -> int:
    """A new context on ``device``, pushed on the driver's stack: ``cuCtxCreate_v2``."""
    address, found = c_void_p(), c_int(-1)
    driver_api.call("cuGetProcAddress", b"cuCtxCreate", byref(address), _CTX_CREATE_ABI, 0, byref(found))
    if found.value != cu.CU_GET_PROC_ADDRESS_SUCCESS or not address.value:
        raise driver_errors.RuntimeError(
            "the driver does not provide cuCtxCreate (CUDA 3.2's)", "CUDA_ERROR_NOT_FOUND", cu.CUDA_ERROR_NOT_FOUND
        )
    handle = c_void_p()
    driver_api.check(_ContextCreate(address.value)(byref(handle), flags, device), "cuCtxCreate")
    return handle.value or 0


_records: dict[int, Made] = {}  # handle -> the record of each made context not yet destroyed


class Made:
    """A context ``make_context`` made: destroyed when its last ``Context`` is detached or
    garbage (``Context.attach`` gives it another). Its memory (``memory.device.ContextAllocation``) keeps
    this record, to know whether the context still lives."""

    __slots__ = ("_pid", "alive", "handle", "users")

    def __init__(self, handle: int, device: int) -> None:
        self.handle, self.users, self.alive, self._pid = handle, 1, True, os.getpid()
        _records[handle] = self
        contexts.register_made(handle, device)

    def release(self, quiet: bool) -> None:
        """One user less; the last one destroys the context (``quiet``: from ``__del__``,
        where no one is there to tell of a failure)."""
        self.users -= 1
        if not self.users:
            self.alive = False
            _records.pop(self.handle, None)
            try:
                contexts.forget_made(self.handle, quiet)
            finally:
                quietly_or_checked(quiet, self._pid, "cuCtxDestroy", self.handle)


def made_record(handle: int) -> Made | None:
    """The record of context ``handle`` if ``Device.make_context`` made it, else None."""
    return _records.get(handle)


def quietly_or_checked(quiet: bool, pid: int, name: str, *args: int) -> None:
    """Call ``name``; unchecked if ``quiet``. Not at all in a forked child (the context is
    the parent's), nor once the driver is gone."""
    if os.getpid() != pid or driver_api._driver is None:
        return
    result = getattr(driver_api._driver, name)(*args)
    if not quiet:
        driver_api.check(result, name)


def made_context() -> Made | None:
    """The calling thread's current context if ``Device.make_context`` made it, else None (no
    driver call while pyctk made none)."""
    if not _records:
        return None
    current = c_void_p()
    driver_api.call("cuCtxGetCurrent", byref(current))
    return _records.get(current.value or 0)


def in_context(handle: int, name: str, *args: int) -> None:
    """Call ``name`` with context ``handle`` current (pushed for the call if it is not)."""
    current = c_void_p()
    driver_api.call("cuCtxGetCurrent", byref(current))
    if current.value == handle:
        driver_api.call(name, *args)
        return
    driver_api.call("cuCtxPushCurrent", handle)
    try:
        driver_api.call(name, *args)
    finally:
        driver_api.call("cuCtxPopCurrent", byref(c_void_p()))
