"""Devices and contexts of ``pyctk.driver``, as PyCUDA has them.

pyctk needs no context set up: a call with no context current uses the current device's
primary context, the one the CUDA runtime, PyTorch, CuPy and pyctk's own arrays share.
PyCUDA's contexts are there too, with PyCUDA's stack: each thread has a stack of the
``Context`` objects it pushed, whose top is the driver's current context.

- ``Device.make_context(flags)`` makes a *new* context (``cuCtxCreate``) and pushes it, as
  PyCUDA does. Its memory, streams and kernels are its own: ``pyctk.driver`` works in it
  (``mem_alloc`` takes ``cuMemAlloc`` memory there), ``pyctk.matmul`` and ``DeviceArray``
  refuse to (they work in the primary context).
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

import enum
import os
import warnings
from _thread import _local
from ctypes import CFUNCTYPE, POINTER, byref, c_int, c_size_t, c_uint, c_void_p, create_string_buffer

from ..._cuda import constants as cu
from ..._cuda import contexts, driver_api, driver_errors, library


class device_attribute(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """What a device can do: ``CUdevice_attribute`` (cuda.h), for :meth:`Device.get_attribute`.

    PyCUDA's names; aliases (``SHARED_MEMORY_PER_BLOCK``, ``REGISTERS_PER_BLOCK`` ...) share
    a value. Each one also reads as a lowercase attribute of a :class:`Device`
    (``dev.warp_size``). pyctk adds ``COOPERATIVE_LAUNCH``, which PyCUDA lacks.

    Examples
    --------
    >>> import pyctk.driver as cuda
    >>> cuda.device_attribute.WARP_SIZE
    <device_attribute.WARP_SIZE: 10>
    >>> attribute = cuda.device_attribute
    >>> attribute.SHARED_MEMORY_PER_BLOCK is attribute.MAX_SHARED_MEMORY_PER_BLOCK
    True
    """

    MAX_THREADS_PER_BLOCK = cu.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    MAX_BLOCK_DIM_X = cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X
    MAX_BLOCK_DIM_Y = cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y
    MAX_BLOCK_DIM_Z = cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z
    MAX_GRID_DIM_X = cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X
    MAX_GRID_DIM_Y = cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y
    MAX_GRID_DIM_Z = cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z
    MAX_SHARED_MEMORY_PER_BLOCK = cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
    SHARED_MEMORY_PER_BLOCK = cu.CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK
    TOTAL_CONSTANT_MEMORY = cu.CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY
    WARP_SIZE = cu.CU_DEVICE_ATTRIBUTE_WARP_SIZE
    MAX_PITCH = cu.CU_DEVICE_ATTRIBUTE_MAX_PITCH
    MAX_REGISTERS_PER_BLOCK = cu.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK
    REGISTERS_PER_BLOCK = cu.CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK
    CLOCK_RATE = cu.CU_DEVICE_ATTRIBUTE_CLOCK_RATE
    TEXTURE_ALIGNMENT = cu.CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT
    GPU_OVERLAP = cu.CU_DEVICE_ATTRIBUTE_GPU_OVERLAP
    MULTIPROCESSOR_COUNT = cu.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    KERNEL_EXEC_TIMEOUT = cu.CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT
    INTEGRATED = cu.CU_DEVICE_ATTRIBUTE_INTEGRATED
    CAN_MAP_HOST_MEMORY = cu.CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY
    COMPUTE_MODE = cu.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE
    MAXIMUM_TEXTURE1D_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH
    MAXIMUM_TEXTURE2D_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH
    MAXIMUM_TEXTURE2D_HEIGHT = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT
    MAXIMUM_TEXTURE3D_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH
    MAXIMUM_TEXTURE3D_HEIGHT = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT
    MAXIMUM_TEXTURE3D_DEPTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH
    MAXIMUM_TEXTURE2D_ARRAY_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_WIDTH
    MAXIMUM_TEXTURE2D_ARRAY_HEIGHT = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_HEIGHT
    MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES
    MAXIMUM_TEXTURE2D_LAYERED_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH
    MAXIMUM_TEXTURE2D_LAYERED_HEIGHT = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT
    MAXIMUM_TEXTURE2D_LAYERED_LAYERS = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS
    SURFACE_ALIGNMENT = cu.CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT
    CONCURRENT_KERNELS = cu.CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS
    ECC_ENABLED = cu.CU_DEVICE_ATTRIBUTE_ECC_ENABLED
    PCI_BUS_ID = cu.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID
    PCI_DEVICE_ID = cu.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID
    TCC_DRIVER = cu.CU_DEVICE_ATTRIBUTE_TCC_DRIVER
    MEMORY_CLOCK_RATE = cu.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE
    GLOBAL_MEMORY_BUS_WIDTH = cu.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH
    L2_CACHE_SIZE = cu.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
    MAX_THREADS_PER_MULTIPROCESSOR = cu.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
    ASYNC_ENGINE_COUNT = cu.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT
    UNIFIED_ADDRESSING = cu.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING
    MAXIMUM_TEXTURE1D_LAYERED_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH
    MAXIMUM_TEXTURE1D_LAYERED_LAYERS = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS
    MAXIMUM_TEXTURE2D_GATHER_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH
    MAXIMUM_TEXTURE2D_GATHER_HEIGHT = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT
    MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE
    MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE
    MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE
    PCI_DOMAIN_ID = cu.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID
    TEXTURE_PITCH_ALIGNMENT = cu.CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT
    MAXIMUM_TEXTURECUBEMAP_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH
    MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH
    MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS
    MAXIMUM_SURFACE1D_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH
    MAXIMUM_SURFACE2D_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH
    MAXIMUM_SURFACE2D_HEIGHT = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT
    MAXIMUM_SURFACE3D_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH
    MAXIMUM_SURFACE3D_HEIGHT = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT
    MAXIMUM_SURFACE3D_DEPTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH
    MAXIMUM_SURFACE1D_LAYERED_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH
    MAXIMUM_SURFACE1D_LAYERED_LAYERS = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS
    MAXIMUM_SURFACE2D_LAYERED_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH
    MAXIMUM_SURFACE2D_LAYERED_HEIGHT = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT
    MAXIMUM_SURFACE2D_LAYERED_LAYERS = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS
    MAXIMUM_SURFACECUBEMAP_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH
    MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH
    MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS
    MAXIMUM_TEXTURE1D_LINEAR_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH
    MAXIMUM_TEXTURE2D_LINEAR_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH
    MAXIMUM_TEXTURE2D_LINEAR_HEIGHT = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT
    MAXIMUM_TEXTURE2D_LINEAR_PITCH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH
    MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH
    MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT
    COMPUTE_CAPABILITY_MAJOR = cu.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    COMPUTE_CAPABILITY_MINOR = cu.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH = cu.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH
    STREAM_PRIORITIES_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED
    GLOBAL_L1_CACHE_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED
    LOCAL_L1_CACHE_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED
    MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    MAX_REGISTERS_PER_MULTIPROCESSOR = cu.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR
    MANAGED_MEMORY = cu.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
    MULTI_GPU_BOARD = cu.CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD
    MULTI_GPU_BOARD_GROUP_ID = cu.CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID
    HOST_NATIVE_ATOMIC_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED
    SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = cu.CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO
    PAGEABLE_MEMORY_ACCESS = cu.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS
    CONCURRENT_MANAGED_ACCESS = cu.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
    COMPUTE_PREEMPTION_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED
    CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = cu.CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM
    COOPERATIVE_LAUNCH = cu.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH  #: Not in PyCUDA.
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = cu.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES
    DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = cu.CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST
    HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED
    HANDLE_TYPE_WIN32_HANDLE_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED
    HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED
    MAX_BLOCKS_PER_MULTIPROCESSOR = cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR
    GENERIC_COMPRESSION_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED
    MAX_PERSISTING_L2_CACHE_SIZE = cu.CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE
    RESERVED_SHARED_MEMORY_PER_BLOCK = cu.CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK
    READ_ONLY_HOST_REGISTER_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED
    MEMORY_POOLS_SUPPORTED = cu.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED


class compute_mode(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """Who may use a device: ``CUcomputemode`` (cuda.h), what
    ``Device.get_attribute(device_attribute.COMPUTE_MODE)`` returns."""

    DEFAULT = cu.CU_COMPUTEMODE_DEFAULT  #: Any number of processes and threads.
    PROHIBITED = cu.CU_COMPUTEMODE_PROHIBITED  #: No process may make a context.
    EXCLUSIVE_PROCESS = cu.CU_COMPUTEMODE_EXCLUSIVE_PROCESS  #: One process at a time.


class ctx_flags(enum.IntFlag):  # noqa: N801 - PyCUDA's name
    """Flags of :meth:`Device.make_context`: ``CUctx_flags`` (cuda.h), mostly how a thread
    waits for the GPU.

    Examples
    --------
    >>> import pyctk.driver as cuda
    >>> flags = cuda.ctx_flags.SCHED_BLOCKING_SYNC | cuda.ctx_flags.LMEM_RESIZE_TO_MAX
    >>> int(flags)
    20
    """

    #: Spin while waiting if the GPU has fewer contexts than there are CPUs, else yield.
    SCHED_AUTO = cu.CU_CTX_SCHED_AUTO
    SCHED_SPIN = cu.CU_CTX_SCHED_SPIN  #: Spin while waiting: the lowest latency, one CPU core busy.
    SCHED_YIELD = cu.CU_CTX_SCHED_YIELD  #: Yield the CPU while waiting.
    SCHED_BLOCKING_SYNC = cu.CU_CTX_SCHED_BLOCKING_SYNC  #: Sleep on a synchronisation primitive while waiting.
    BLOCKING_SYNC = cu.CU_CTX_BLOCKING_SYNC  #: The old name of ``SCHED_BLOCKING_SYNC``.
    SCHED_MASK = cu.CU_CTX_SCHED_MASK  #: The scheduling bits.
    MAP_HOST = cu.CU_CTX_MAP_HOST  #: No effect since CUDA 11: every context maps page-locked memory.
    LMEM_RESIZE_TO_MAX = (
        cu.CU_CTX_LMEM_RESIZE_TO_MAX
    )  #: Keep local memory at its largest size after a launch that grew it.
    FLAGS_MASK = cu.CU_CTX_FLAGS_MASK  #: Every flag bit.


class limit(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """A context's limits: ``CUlimit`` (cuda.h), for :meth:`Context.set_limit` and
    :meth:`Context.get_limit`."""

    STACK_SIZE = cu.CU_LIMIT_STACK_SIZE  #: Bytes of stack for each GPU thread.
    PRINTF_FIFO_SIZE = cu.CU_LIMIT_PRINTF_FIFO_SIZE  #: Bytes of the buffer device-side ``printf`` writes to.
    MALLOC_HEAP_SIZE = cu.CU_LIMIT_MALLOC_HEAP_SIZE  #: Bytes of the heap of device-side ``malloc``.
    DEV_RUNTIME_SYNC_DEPTH = (
        cu.CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH
    )  #: Nesting depth of dynamic parallelism's synchronisation.
    DEV_RUNTIME_PENDING_LAUNCH_COUNT = (
        cu.CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT
    )  #: Launches from the GPU that may be pending at once.
    MAX_L2_FETCH_GRANULARITY = cu.CU_LIMIT_MAX_L2_FETCH_GRANULARITY  #: L2 fetch granularity in bytes (not in PyCUDA).
    PERSISTING_L2_CACHE_SIZE = (
        cu.CU_LIMIT_PERSISTING_L2_CACHE_SIZE
    )  #: Bytes of L2 set aside for persisting accesses (not in PyCUDA).


class func_cache(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """Shared memory or L1 cache: ``CUfunc_cache`` (cuda.h), for
    :meth:`Context.set_cache_config` and :meth:`Function.set_cache_config`."""

    PREFER_NONE = cu.CU_FUNC_CACHE_PREFER_NONE  #: No preference.
    PREFER_SHARED = cu.CU_FUNC_CACHE_PREFER_SHARED  #: More shared memory, less L1 cache.
    PREFER_L1 = cu.CU_FUNC_CACHE_PREFER_L1  #: More L1 cache, less shared memory.
    PREFER_EQUAL = cu.CU_FUNC_CACHE_PREFER_EQUAL  #: As much of each.


class shared_config(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """The shared memory bank size: ``CUsharedconfig`` (cuda.h), for
    :meth:`Context.set_shared_config` and :meth:`Function.set_shared_config`.

    Deprecated by CUDA: GPUs since Maxwell have a fixed bank size and ignore it.
    """

    DEFAULT_BANK_SIZE = cu.CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE  #: The device's default.
    FOUR_BYTE_BANK_SIZE = cu.CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE  #: Banks of 4 bytes.
    EIGHT_BYTE_BANK_SIZE = cu.CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE  #: Banks of 8 bytes.


def named_attribute(table: type[enum.IntEnum], owner: str, name: str) -> enum.IntEnum:
    """The member of ``table`` that PyCUDA's lowercase attribute ``name`` reads
    (``multiprocessor_count`` -> ``MULTIPROCESSOR_COUNT``); AttributeError for any other name."""
    member = None if name.startswith("_") else table.__members__.get(name.upper())
    if member is None:
        raise AttributeError(f"{owner!r} object has no attribute {name!r} (nor {table.__name__} {name.upper()})")
    return member


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
            self._device = driver_api.query_int("cuDeviceGetByPCIBusId", number.encode())
        else:
            self._device = driver_api.query_int("cuDeviceGet", int(number))

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
        return Context(handle.value, self._device, primary=True)

    def make_context(self, flags: int = 0) -> Context:
        """Make a new context on the device and push it (``cuCtxCreate``), as PyCUDA does.

        The context is current on this thread until :meth:`Context.pop`. Its memory, streams
        and kernels are its own: :mod:`pyctk.driver` works in it, while :func:`pyctk.matmul`
        and :class:`pyctk.DeviceArray`, which work in primary contexts, refuse to run until it
        is popped. For memory that those share, push :meth:`retain_primary_context` instead.

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
            handle = _create_context(int(flags), self._device)
        except BaseException:
            if below is not None:  # as it was: the failure changed nothing
                driver_api.call("cuCtxPushCurrent", below.handle)
            raise
        context = Context(handle, self._device, made=_Made(handle))
        _stack().append(context)
        return context


# cuCtxCreate's ABI from CUDA 3.2 on: (CUcontext *, unsigned int flags, CUdevice). The runtime's
# entry-point query would give the name's newest form up to its version instead: _v3 (CUDA
# 11.4, execution affinity arguments) for ABI 12000, _v4 (12.5, a parameters struct) for a
# CUDA 12.5+ runtime's own version; so this one is asked of the driver by version.
_CTX_CREATE_ABI = 3020
_ContextCreate = CFUNCTYPE(c_int, POINTER(c_void_p), c_uint, c_int)


def _create_context(flags: int, device: int) -> int:
    """A new context on ``device``, pushed on the driver's stack: ``cuCtxCreate_v2``."""
    address, found = c_void_p(), c_int(-1)
    driver_api.call("cuGetProcAddress", b"cuCtxCreate", byref(address), _CTX_CREATE_ABI, 0, byref(found))
    if found.value != cu.CU_GET_PROC_ADDRESS_SUCCESS or not address.value:
        raise driver_errors.RuntimeError(
            "the driver does not provide cuCtxCreate (CUDA 3.2's)", "CUDA_ERROR_NOT_FOUND", cu.CUDA_ERROR_NOT_FOUND
        )
    handle = c_void_p()
    driver_api.check(_ContextCreate(address.value)(byref(handle), flags, device), "cuCtxCreate")
    return handle.value


class _Made:
    """A context ``make_context`` made: destroyed when its last ``Context`` is detached or
    garbage (``Context.attach`` gives it another). Its memory (``memory.device.ContextAllocation``) keeps
    this record, to know whether the context still lives."""

    __slots__ = ("_pid", "alive", "handle", "users")

    def __init__(self, handle: int) -> None:
        self.handle, self.users, self.alive, self._pid = handle, 1, True, os.getpid()
        contexts.made[handle] = self

    def release(self, quiet: bool) -> None:
        """One user less; the last one destroys the context (``quiet``: from ``__del__``,
        where no one is there to tell of a failure)."""
        self.users -= 1
        if not self.users:
            self.alive = False
            contexts.made.pop(self.handle, None)
            _quietly_or_checked(quiet, self._pid, "cuCtxDestroy", self.handle)


def _quietly_or_checked(quiet: bool, pid: int, name: str, *args: int) -> None:
    """Call ``name``; unchecked if ``quiet``. Not at all in a forked child (the context is
    the parent's), nor once the driver is gone."""
    if os.getpid() != pid or driver_api._driver is None:
        return
    result = getattr(driver_api._driver, name)(*args)
    if not quiet:
        driver_api.check(result, name)


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

    def __init__(self, handle: int, device: int, made: _Made | None = None, primary: bool = False) -> None:
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
            _quietly_or_checked(quiet, self._pid, "cuDevicePrimaryCtxRelease", self._device)

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
        made = contexts.made.get(handle)
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
        """Wait until all work of the current context, on every stream, is done."""
        driver_api.current_context()
        driver_api.call("cuCtxSynchronize")

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


def made_context() -> _Made | None:
    """The calling thread's current context if ``Device.make_context`` made it, else None (no
    driver call while pyctk made none)."""
    if not contexts.made:
        return None
    current = c_void_p()
    driver_api.call("cuCtxGetCurrent", byref(current))
    return contexts.made.get(current.value)


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


def init(flags: int = 0) -> None:
    """Start the CUDA driver (PyCUDA's ``init``).

    Optional, unlike in PyCUDA: pyctk starts the driver on first use. Calling it first
    reports a missing driver at a place of your choosing.

    Parameters
    ----------
    flags : int, optional
        PyCUDA's; unused (CUDA takes 0).

    Raises
    ------
    pyctk.NoDriverError
        There is no usable NVIDIA driver; the message says how to fix it.
    """
    driver_api.driver()


def get_version() -> tuple[int, int, int]:
    """The CUDA version pyctk runs with: its CUDA runtime's, from NVIDIA's wheel.

    PyCUDA's gives the toolkit's it was built with. No driver or GPU is needed.

    Returns
    -------
    tuple of int
        ``(major, minor, 0)``.

    See Also
    --------
    get_driver_version : The version the driver supports.

    Examples
    --------
    >>> import pyctk.driver as cuda
    >>> major, minor, _ = cuda.get_version()
    >>> major >= 12
    True
    """
    version = library.query_int("gpumatmul_runtime_version")
    return version // 1000, version % 1000 // 10, 0


def get_driver_version() -> int:
    """The CUDA version the NVIDIA driver supports.

    Returns
    -------
    int
        1000 * major + 10 * minor: 13000 for CUDA 13.0, as ``nvidia-smi`` shows it.

    Raises
    ------
    pyctk.NoDriverError
        There is no usable NVIDIA driver.
    """
    return driver_api.driver_version()
