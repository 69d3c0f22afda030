"""Devices and contexts of ``pyctk.driver``, as PyCUDA has them, on primary contexts only.

pyctk needs no context set up: every call uses the current device's primary context,
the one the CUDA runtime, PyTorch and CuPy share. ``Device(n).make_context()`` makes
device ``n``'s primary context current on this thread (PyCUDA made a new context; a
primary one shares memory and kernels with every other library), and ``Context.pop()``
undoes it.
"""

from __future__ import annotations

import enum
import os
from ctypes import byref, c_size_t, c_void_p, create_string_buffer

from .._cuda import driver_api, library


class device_attribute(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """``CUdevice_attribute`` values (cuda.h), for ``Device.get_attribute``."""

    MAX_THREADS_PER_BLOCK = 1
    MAX_BLOCK_DIM_X = 2
    MAX_BLOCK_DIM_Y = 3
    MAX_BLOCK_DIM_Z = 4
    MAX_GRID_DIM_X = 5
    MAX_GRID_DIM_Y = 6
    MAX_GRID_DIM_Z = 7
    MAX_SHARED_MEMORY_PER_BLOCK = 8
    TOTAL_CONSTANT_MEMORY = 9
    WARP_SIZE = 10
    MAX_REGISTERS_PER_BLOCK = 12
    CLOCK_RATE = 13
    MULTIPROCESSOR_COUNT = 16
    KERNEL_EXEC_TIMEOUT = 17
    INTEGRATED = 18
    CONCURRENT_KERNELS = 31
    ECC_ENABLED = 32
    PCI_BUS_ID = 33
    PCI_DEVICE_ID = 34
    MEMORY_CLOCK_RATE = 36
    GLOBAL_MEMORY_BUS_WIDTH = 37
    L2_CACHE_SIZE = 38
    MAX_THREADS_PER_MULTIPROCESSOR = 39
    ASYNC_ENGINE_COUNT = 40
    UNIFIED_ADDRESSING = 41
    PCI_DOMAIN_ID = 50
    COMPUTE_CAPABILITY_MAJOR = 75
    COMPUTE_CAPABILITY_MINOR = 76
    MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
    MAX_REGISTERS_PER_MULTIPROCESSOR = 82
    MANAGED_MEMORY = 83
    COOPERATIVE_LAUNCH = 95
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
    MAX_BLOCKS_PER_MULTIPROCESSOR = 106
    MEMORY_POOLS_SUPPORTED = 115


class Device:
    """A CUDA device by its index (PyCUDA's ``Device``).

    >>> d = Device(0)                                   # doctest: +SKIP
    >>> d.name(), d.compute_capability()                # doctest: +SKIP
    ('NVIDIA H100 80GB HBM3', (9, 0))
    """

    def __init__(self, number: int) -> None:
        self._device = driver_api.query_int("cuDeviceGet", int(number))

    @staticmethod
    def count() -> int:
        """How many devices CUDA sees."""
        return driver_api.query_int("cuDeviceGetCount")

    def __int__(self) -> int:
        return self._device

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other._device == self._device

    def __hash__(self) -> int:
        return hash(("Device", self._device))

    def __repr__(self) -> str:
        return f"<pyctk.driver.Device {self._device}: {self.name()}>"

    def name(self) -> str:
        buffer = create_string_buffer(256)
        driver_api.call("cuDeviceGetName", buffer, len(buffer), self._device)
        return buffer.value.decode()

    def pci_bus_id(self) -> str:
        buffer = create_string_buffer(64)
        driver_api.call("cuDeviceGetPCIBusId", buffer, len(buffer), self._device)
        return buffer.value.decode()

    def compute_capability(self) -> tuple[int, int]:
        return (self.get_attribute(device_attribute.COMPUTE_CAPABILITY_MAJOR),
                self.get_attribute(device_attribute.COMPUTE_CAPABILITY_MINOR))

    def total_memory(self) -> int:
        """Bytes of memory on the device."""
        total = c_size_t()
        driver_api.call("cuDeviceTotalMem", byref(total), self._device)
        return total.value

    def get_attribute(self, attribute: int) -> int:
        """The value of ``attribute`` (a ``device_attribute``, or any ``CUdevice_attribute`` number)."""
        return driver_api.query_int("cuDeviceGetAttribute", int(attribute), self._device)

    def get_attributes(self) -> dict[device_attribute, int]:
        """Every attribute of ``device_attribute`` and its value."""
        return {attribute: self.get_attribute(attribute) for attribute in device_attribute}

    def retain_primary_context(self) -> Context:
        """The device's primary context, kept alive until ``detach`` (not made current)."""
        handle = c_void_p()
        driver_api.call("cuDevicePrimaryCtxRetain", byref(handle), self._device)
        return Context(handle.value, self._device)

    def make_context(self, flags: int = 0) -> Context:
        """The device's primary context, made current on this thread (undo with ``Context.pop``).

        ``flags`` is accepted for PyCUDA's sake; a primary context's flags are the driver's.
        """
        context = self.retain_primary_context()
        context.push()
        return context


class Context:
    """A device's primary context (made by ``Device.make_context`` or ``retain_primary_context``)."""

    def __init__(self, handle: int, device: int) -> None:
        self.handle, self._device, self._pid = handle, device, os.getpid()

    def push(self) -> None:
        """Make this context current on the calling thread, above the one that was."""
        driver_api.call("cuCtxPushCurrent", self.handle)

    @staticmethod
    def pop() -> None:
        """Make the context below the current one current again on the calling thread."""
        driver_api.call("cuCtxPopCurrent", byref(c_void_p()))

    def detach(self) -> None:
        """Pop this context if it is current, and release it."""
        current = c_void_p()
        driver_api.call("cuCtxGetCurrent", byref(current))
        if current.value == self.handle:
            Context.pop()
        if self.handle:
            self.handle = None
            driver_api.call("cuDevicePrimaryCtxRelease", self._device)

    def __del__(self) -> None:
        if self.handle and os.getpid() == self._pid and driver_api._driver is not None:
            driver_api._driver.cuDevicePrimaryCtxRelease(self._device)

    @staticmethod
    def synchronize() -> None:
        """Wait until all work on the current device is done."""
        driver_api.current_context()
        driver_api.call("cuCtxSynchronize")

    @staticmethod
    def get_device() -> Device:
        """The current device."""
        return Device(driver_api.current_device())


def init(flags: int = 0) -> None:
    """Start the CUDA driver (PyCUDA's ``init``; pyctk also starts it on first use).

    Raises pyctk.NoDriverError, with the fix, when there is no usable driver.
    """
    driver_api.driver()


def get_version() -> tuple[int, int, int]:
    """The CUDA version pyctk runs with: its CUDA runtime's, from the nvidia-* wheel, as
    ``(major, minor, 0)`` (PyCUDA: the toolkit's it was built with). No driver needed."""
    version = library.query_int("gpumatmul_runtime_version")
    return version // 1000, version % 1000 // 10, 0


def get_driver_version() -> int:
    """The CUDA version the driver supports, as 1000 * major + 10 * minor (13000 for 13.0)."""
    return driver_api.driver_version()
