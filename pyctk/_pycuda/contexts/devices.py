"""Devices and contexts of ``pyctk.driver``, as PyCUDA has them.

pyctk needs no context set up: a call with no context current uses the current device's
primary context, the one the CUDA runtime, PyTorch, CuPy and pyctk's own arrays share.
PyCUDA's contexts are there too, with PyCUDA's stack: each thread has a stack of the
``Context`` objects it pushed, whose top is the driver's current context.

- ``Device.make_context(flags)`` makes a *new* context (``cuCtxCreate``) and pushes it, as
  PyCUDA does. Its memory, streams and kernels are its own: ``pyctk.driver`` works in it
  (``mem_alloc`` takes ``cuMemAlloc`` memory there), and so do ``pyctk.matmul`` and
  ``DeviceArray``, with libgpumatmul state of their own there (``pyctk._cuda.contexts``).
- ``Device.retain_primary_context()`` gives the primary context (not pushed; ``push()`` it),
  which is what ``pyctk.autoinit`` and ``pyctk.autoprimaryctx`` push.
- ``Context.pop()`` takes the top off this thread's stack; ``detach()`` destroys a made
  context (releases a primary one), and a made context is destroyed too when its last
  ``Context`` is garbage.

>>> import pyctk.driver as cuda                # doctest: +GPU
>>> ctx = cuda.Device(0).make_context()
>>> cuda.Context.get_current() == ctx
True
>>> ctx.pop(); ctx.detach()
"""

from __future__ import annotations

import os
import re
import warnings
from _thread import _local
from ctypes import byref, c_size_t, c_uint, c_void_p, create_string_buffer

from ..._arrays.arguments import device_index
from ..._cuda import constants as cu
from ..._cuda import driver_api, driver_errors, waits
from . import made_contexts
from .enums import compute_mode, device_attribute, func_cache, named_attribute, shared_config

# cuDeviceGetByPCIBusId's forms: [domain:]bus:device[.function], in hexadecimal
_PCI_BUS_ID = re.compile(r"(?:[0-9a-fA-F]+:)?[0-9a-fA-F]+:[0-9a-fA-F]+(?:\.[0-9a-fA-F]+)?")


class Device:
    """A CUDA device, by its number or its PCI bus id (PyCUDA's ``Device``).

    Parameters
    ----------
    number : int or str
        The device's number, 0 to ``Device.count() - 1`` (CUDA's order, which
        ``CUDA_VISIBLE_DEVICES`` changes), or its PCI bus id (``"0000:01:00.0"``).

    Raises
    ------
    pyctk.NoDriverError
        There is no usable NVIDIA driver; the message says how to fix it.
    pyctk.driver.LogicError
        There is no such device (``CUDA_ERROR_INVALID_DEVICE``).

    Notes
    -----
    Every :class:`device_attribute` also reads as a lowercase attribute:
    ``dev.multiprocessor_count`` is
    ``dev.get_attribute(device_attribute.MULTIPROCESSOR_COUNT)``. ``int(dev)`` is the device's
    number, and devices of one number are equal. Making a ``Device`` starts CUDA; no
    :func:`init` is needed first.

    Examples
    --------
    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> dev = cuda.Device(0)
    >>> dev
    <pyctk.driver.Device 0: ...>
    >>> dev.warp_size, dev.get_attribute(cuda.device_attribute.WARP_SIZE)
    (32, 32)
    >>> int(dev), dev == cuda.Device(dev.pci_bus_id())
    (0, True)
    """

    def __init__(self, number: int | str) -> None:
        if isinstance(number, str):  # a PCI bus id, "0000:01:00.0"
            if not _PCI_BUS_ID.fullmatch(number):
                raise ValueError(
                    f"Device({number!r}): a device is its number (0, 1, ...) or its PCI bus id "
                    "('0000:01:00.0', as nvidia-smi --query-gpu=pci.bus_id prints it)"
                )
            self._device = driver_api.query_int("cuDeviceGetByPCIBusId", number.encode())
        else:
            self._device = driver_api.query_int("cuDeviceGet", device_index(number))

    @staticmethod
    def count() -> int:
        """How many devices CUDA sees (after ``CUDA_VISIBLE_DEVICES``).

        Returns
        -------
        int
        """
        return driver_api.query_int("cuDeviceGetCount")

    def __int__(self) -> int:
        return self._device

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other._device == self._device

    def __hash__(self) -> int:
        return hash(("Device", self._device))

    def __repr__(self) -> str:
        return f"<pyctk.driver.Device {self._device}: {self.name()}>"

    def __getattr__(self, name: str) -> int:
        return self.get_attribute(named_attribute(device_attribute, "Device", name))

    def name(self) -> str:
        """The device's name, as ``nvidia-smi`` shows it (``"NVIDIA H200"``).

        Returns
        -------
        str
        """
        buffer = create_string_buffer(256)
        driver_api.call("cuDeviceGetName", buffer, len(buffer), self._device)
        return buffer.value.decode()

    def pci_bus_id(self) -> str:
        """The device's PCI bus id, ``"domain:bus:device.function"`` (``"0000:01:00.0"``).

        ``Device(dev.pci_bus_id())`` is the same device.

        Returns
        -------
        str
        """
        buffer = create_string_buffer(64)
        driver_api.call("cuDeviceGetPCIBusId", buffer, len(buffer), self._device)
        return buffer.value.decode()

    def compute_capability(self) -> tuple[int, int]:
        """The device's compute capability, ``(major, minor)``: ``(9, 0)`` for an H100 or H200.

        Returns
        -------
        tuple of int
        """
        return (
            self.get_attribute(device_attribute.COMPUTE_CAPABILITY_MAJOR),
            self.get_attribute(device_attribute.COMPUTE_CAPABILITY_MINOR),
        )

    def total_memory(self) -> int:
        """The device's memory, in bytes (:func:`mem_get_info` says how much is free).

        Returns
        -------
        int
        """
        total = c_size_t()
        driver_api.call("cuDeviceTotalMem", byref(total), self._device)
        return total.value

    def get_attribute(self, attribute: int) -> int:
        """The value of one attribute of the device.

        Parameters
        ----------
        attribute : device_attribute or int
            A :class:`device_attribute`, or any ``CUdevice_attribute`` number of cuda.h.

        Returns
        -------
        int
            The value; a :class:`compute_mode` for ``device_attribute.COMPUTE_MODE``.

        Raises
        ------
        pyctk.driver.LogicError
            The driver does not know the attribute (``CUDA_ERROR_INVALID_VALUE``).
        """
        value = driver_api.query_int("cuDeviceGetAttribute", int(attribute), self._device)
        return compute_mode(value) if attribute == device_attribute.COMPUTE_MODE else value

    def get_attributes(self) -> dict[device_attribute, int]:
        """Every :class:`device_attribute` of the device and its value.

        Returns
        -------
        dict
            :class:`device_attribute` -> int. An attribute the driver refuses (one newer than
            it) is left out, with a UserWarning, as in PyCUDA.
        """
        values = {}
        for attribute in device_attribute:
            try:
                values[attribute] = self.get_attribute(attribute)
            except driver_errors.LogicError as error:
                warnings.warn(
                    f"the driver refused device_attribute.{attribute.name} of device {self._device}: {error}",
                    UserWarning,
                    stacklevel=2,
                )
        return values

    def can_access_peer(self, other: Device) -> bool:
        """Whether this device's kernels can use the memory of device ``other``.

        They can once :meth:`Context.enable_peer_access` allowed it.

        Parameters
        ----------
        other : Device

        Returns
        -------
        bool
        """
        return bool(driver_api.query_int("cuDeviceCanAccessPeer", self._device, int(other)))

    def retain_primary_context(self) -> Context:
        """The device's primary context, retained until :meth:`Context.detach`.

        The primary context is the one the CUDA runtime, PyTorch, CuPy and pyctk's own arrays
        use: memory and streams made in it mix freely with theirs. It is not made current:
        :meth:`Context.push` it (which is what importing :mod:`pyctk.autoprimaryctx` does).

        Returns
        -------
        Context

        Examples
        --------
        >>> import pyctk.driver as cuda                  # doctest: +GPU
        >>> ctx = cuda.Device(0).retain_primary_context()
        >>> ctx.push()
        >>> cuda.Context.get_current() is ctx
        True
        >>> cuda.Context.pop()
        """
        handle = c_void_p()
        driver_api.call("cuDevicePrimaryCtxRetain", byref(handle), self._device)
        return Context(handle.value or 0, self._device, primary=True)

    def make_context(self, flags: int = 0) -> Context:
        """Make a new context on the device and push it (``cuCtxCreate``), as PyCUDA does.

        The context is current on this thread until :meth:`Context.pop`. Its memory, streams
        and kernels are its own: :mod:`pyctk.driver`, :func:`pyctk.matmul` and
        :class:`pyctk.DeviceArray` work in it while it is current (pyctk makes its own kernels,
        streams and memory pool there, destroyed with the context). For memory that PyTorch,
        CuPy and the CUDA runtime share, push :meth:`retain_primary_context` instead.

        Parameters
        ----------
        flags : ctx_flags or int, optional
            How the thread waits for the GPU; default ``SCHED_AUTO``.

        Returns
        -------
        Context
            The new context, current. Destroyed by :meth:`Context.detach`, or when it is
            garbage.

        Examples
        --------
        >>> import pyctk.driver as cuda                  # doctest: +GPU
        >>> ctx = cuda.Device(0).make_context(cuda.ctx_flags.SCHED_BLOCKING_SYNC)
        >>> ctx
        <pyctk.driver.Context 0x... (made) on device 0>
        >>> a_gpu = cuda.mem_alloc(16)                   # memory of this context
        >>> ctx.pop(); ctx.detach()                      # destroyed, with its memory
        """
        below = _leave_current()
        try:
            handle = made_contexts.create_context(int(flags), self._device)
        except BaseException:
            if below is not None:  # as it was: the failure changed nothing
                driver_api.call("cuCtxPushCurrent", below.handle)
            raise
        context = Context(handle, self._device, made=made_contexts.Made(handle, self._device))
        _stack().append(context)
        return context


class _ThreadStack(_local):
    """Each thread's stack of pushed ``Context`` objects (PyCUDA's); the driver has only the
    top one of them current."""

    def __init__(self) -> None:
        self.contexts: list[Context] = []


_thread_stack = _ThreadStack()


def _stack() -> list[Context]:
    return _thread_stack.contexts


def _top() -> Context | None:
    """This thread's top context, dropping detached ones (PyCUDA drops them lazily too)."""
    stack = _stack()
    while stack and not stack[-1]._valid:
        stack.pop()
    return stack[-1] if stack else None


def _leave_current() -> Context | None:
    """Take this thread's top context off the driver's stack, before another goes on (the
    driver holds one of the thread's contexts at a time); return it."""
    top = _top()
    if top is not None:
        driver_api.call("cuCtxPopCurrent", byref(c_void_p()))
    return top


class Context:
    """A CUDA context: where memory, streams and kernels live (PyCUDA's ``Context``).

    Not made by calling ``Context``: :meth:`Device.make_context` makes a new one,
    :meth:`Device.retain_primary_context` gives a device's primary one, :meth:`attach` the
    current one. Each thread has a stack of the contexts it pushed, whose top is current;
    with none pushed, pyctk works in the current device's primary context, so most programs
    need no context at all. Contexts are equal when their ``handle`` (the ``CUcontext``) is.

    The static methods act on the calling thread's current context.

    Examples
    --------
    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> ctx = cuda.Device(0).make_context()
    >>> cuda.Context.set_limit(cuda.limit.PRINTF_FIFO_SIZE, 1 << 20)
    >>> cuda.Context.get_limit(cuda.limit.PRINTF_FIFO_SIZE) >= 1 << 20
    True
    >>> ctx.pop(); ctx.detach()
    """

    def __init__(self, handle: int, device: int, made: made_contexts.Made | None = None, primary: bool = False) -> None:
        self.handle, self._device, self._made, self._primary = handle, device, made, primary
        self._valid, self._pid = True, os.getpid()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Context) and other.handle == self.handle

    def __hash__(self) -> int:
        return hash(("Context", self.handle))

    def __repr__(self) -> str:
        kind = "made" if self._made else "primary" if self._primary else "attached"
        state = "" if self._valid else ", detached"
        return f"<pyctk.driver.Context {self.handle:#x} ({kind}) on device {self._device}{state}>"

    def _check_valid(self, what: str) -> None:
        if not self._valid:
            raise driver_errors.LogicError(
                f"Context.{what} failed: cannot {what} a detached context",
                "CUDA_ERROR_INVALID_CONTEXT",
                cu.CUDA_ERROR_INVALID_CONTEXT,
            )

    def push(self) -> None:
        """Make this context current on the calling thread, above the one that was.

        :meth:`pop` makes the one below current again.

        Raises
        ------
        pyctk.driver.LogicError
            The context was detached.
        """
        self._check_valid("push")
        below = _leave_current()
        try:
            driver_api.call("cuCtxPushCurrent", self.handle)
        except BaseException:
            if below is not None:
                driver_api.call("cuCtxPushCurrent", below.handle)
            raise
        _stack().append(self)

    @staticmethod
    def pop() -> None:
        """Take the top context off this thread's stack; the one below, if any, is current again.

        Nothing is destroyed: that is :meth:`detach`'s work, or the garbage collector's.

        Raises
        ------
        pyctk.driver.LogicError
            This thread pushed no context (PyCUDA's "cannot pop non-current context").
        """
        if _top() is None:
            raise driver_errors.LogicError(
                "Context.pop failed: cannot pop non-current context: this thread pushed none "
                "(Device.make_context, Context.push)",
                "CUDA_ERROR_INVALID_CONTEXT",
                cu.CUDA_ERROR_INVALID_CONTEXT,
            )
        driver_api.call("cuCtxPopCurrent", byref(c_void_p()))
        _stack().pop()
        below = _top()
        if below is not None:
            driver_api.call("cuCtxPushCurrent", below.handle)

    def detach(self) -> None:
        """Give this context up.

        A context :meth:`Device.make_context` made is destroyed, with its memory, streams and
        modules, once no other :class:`Context` :meth:`attach` gave holds it; a primary one is
        released. If it was current, the one below it on this thread's stack is current again.

        Raises
        ------
        pyctk.driver.LogicError
            It was detached before ("cannot detach from invalid context").
        """
        if not self._valid:
            raise driver_errors.LogicError(
                "Context.detach failed: cannot detach from invalid context (it was detached before)",
                "CUDA_ERROR_INVALID_CONTEXT",
                cu.CUDA_ERROR_INVALID_CONTEXT,
            )
        current = _top() is self
        if current:
            driver_api.call("cuCtxPopCurrent", byref(c_void_p()))
        self._release(quiet=False)
        if current:
            below = _top()
            if below is not None:
                driver_api.call("cuCtxPushCurrent", below.handle)

    def _release(self, quiet: bool) -> None:
        self._valid = False
        if self._made is not None:
            self._made.release(quiet)
        elif self._primary:
            made_contexts.quietly_or_checked(quiet, self._pid, "cuDevicePrimaryCtxRelease", self._device)

    def __del__(self) -> None:
        if getattr(self, "_valid", False):  # (not if __init__ failed)
            self._release(quiet=True)

    @staticmethod
    def attach(flags: int = 0) -> Context:
        """The calling thread's current context, as a new :class:`Context` pushed on this
        thread's stack (deprecated in PyCUDA, as in CUDA).

        A context :meth:`Device.make_context` made then lives until this one is detached too;
        a primary one is retained once more; another library's is not owned.

        Parameters
        ----------
        flags : int, optional
            PyCUDA's; unused (CUDA's ``cuCtxAttach`` took it).

        Returns
        -------
        Context
        """
        handle = driver_api.current_context()
        device = driver_api.current_device()
        made = made_contexts.made_record(handle)
        if made is not None:
            made.users += 1
            context = Context(handle, device, made=made)
        else:
            context = Device(device).retain_primary_context()
            if context.handle != handle:  # not the primary context: someone else's
                context.detach()
                context = Context(handle, device)
        _stack().append(context)  # already current in the driver
        return context

    @staticmethod
    def get_current() -> Context | None:
        """The context this thread pushed last and has not popped.

        Returns
        -------
        Context or None
            None if the thread pushed none (pyctk then works in the current device's primary
            context), as in PyCUDA.
        """
        return _top()

    @staticmethod
    def synchronize() -> None:
        """Wait until all work of the current context, on every stream, is done; Ctrl-C ends
        the wait (KeyboardInterrupt) at once, the GPU's work goes on."""
        waits.wait("cuCtxSynchronize")

    @staticmethod
    def get_device() -> Device:
        """The current context's device.

        Returns
        -------
        Device
        """
        return Device(driver_api.current_device())

    def get_api_version(self) -> int:
        """The driver API version the context was made with (``cuCtxGetApiVersion``).

        Returns
        -------
        int
            1000 * major + 10 * minor, e.g. 3020 for every context of a current driver.
        """
        self._check_valid("get_api_version")
        version = c_uint()
        driver_api.call("cuCtxGetApiVersion", self.handle, byref(version))
        return version.value

    @staticmethod
    def set_limit(which: int, value: int) -> None:
        """Set one of the current context's limits.

        Parameters
        ----------
        which : limit
            Which one, e.g. ``limit.MALLOC_HEAP_SIZE``.
        value : int
            Its new value (bytes, or a count); the driver may round it up.
        """
        driver_api.current_context()
        driver_api.call("cuCtxSetLimit", int(which), int(value))

    @staticmethod
    def get_limit(which: int) -> int:
        """One of the current context's limits.

        Parameters
        ----------
        which : limit

        Returns
        -------
        int
        """
        value = c_size_t()
        driver_api.current_context()
        driver_api.call("cuCtxGetLimit", byref(value), int(which))
        return value.value

    @staticmethod
    def set_cache_config(config: int) -> None:
        """Prefer more shared memory or more L1 cache for the current context's kernels.

        :meth:`Function.set_cache_config` overrides it for one kernel.

        Parameters
        ----------
        config : func_cache
        """
        driver_api.current_context()
        driver_api.call("cuCtxSetCacheConfig", int(config))

    @staticmethod
    def get_cache_config() -> func_cache:
        """The current context's preference of shared memory or L1 cache.

        Returns
        -------
        func_cache
        """
        driver_api.current_context()
        return func_cache(driver_api.query_int("cuCtxGetCacheConfig"))

    @staticmethod
    def set_shared_config(config: int) -> None:
        """Set the current context's shared memory bank size (no effect on current GPUs).

        Parameters
        ----------
        config : shared_config
        """
        driver_api.current_context()
        driver_api.call("cuCtxSetSharedMemConfig", int(config))

    @staticmethod
    def get_shared_config() -> shared_config:
        """The current context's shared memory bank size.

        Returns
        -------
        shared_config
        """
        driver_api.current_context()
        return shared_config(driver_api.query_int("cuCtxGetSharedMemConfig"))

    @staticmethod
    def enable_peer_access(peer: Context, flags: int = 0) -> None:
        """Let the current context's kernels use the memory of context ``peer``.

        Parameters
        ----------
        peer : Context
            Another device's context; :meth:`Device.can_access_peer` says whether it can be.
        flags : int, optional
            0, the only value CUDA takes.

        Raises
        ------
        pyctk.driver.Error
            The devices cannot reach each other (``CUDA_ERROR_PEER_ACCESS_UNSUPPORTED``), or
            access is enabled already (``CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED``).
        """
        driver_api.current_context()
        driver_api.call("cuCtxEnablePeerAccess", peer.handle, int(flags))

    @staticmethod
    def disable_peer_access(peer: Context, flags: int = 0) -> None:
        """Undo :meth:`enable_peer_access` of ``peer``.

        Parameters
        ----------
        peer : Context
        flags : int, optional
            PyCUDA's; it must be 0 (CUDA's call takes none): ValueError otherwise.
        """
        if flags != 0:
            raise ValueError(f"flags must be 0 (cuCtxDisablePeerAccess takes none), not {flags!r}")
        driver_api.current_context()
        driver_api.call("cuCtxDisablePeerAccess", peer.handle)
