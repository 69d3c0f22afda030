"""PyCUDA's ``DeviceData`` and ``OccupancyRecord`` (``pycuda.tools``): a device's limits for
kernel launches, and the occupancy of a launch as the old CUDA occupancy calculator
computed it (from before Volta: a fixed 8 blocks per multiprocessor, registers allocated per
warp). Kept for the programs that size their launches with them.

>>> class Data:   # what OccupancyRecord reads of a DeviceData, for an H100
...     max_threads, warp_size, warps_per_mp, thread_blocks_per_mp = 1024, 32, 64, 8
...     registers, shared_memory, smem_alloc_granularity = 65536, 49152, 128
...     register_allocation_unit = "warp"
>>> record = OccupancyRecord(Data(), threads=256, registers=32)
>>> record.tb_per_mp, record.limited_by, record.occupancy
(8, 'device', 1.0)
"""

from __future__ import annotations

from typing import Any

from .devices import Context, Device
from .enums import device_attribute


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


# Bytes a fetch of each word size should be aligned to (DeviceData.align_bytes).
_FETCH_ALIGNMENT = {4: 64, 8: 128, 16: 128}
# By DeviceData.register_allocation_unit: for how many threads a block of ``warps`` warps is
# given registers (the calculator's rounding: whole warps, or blocks of 4 half warps).
_REGISTER_THREADS = {
    "warp": lambda warps: warps * 32,
    "block": lambda warps: _round_up(warps * 2, 4) * 16,
}


class DeviceData:
    """A device's limits for sizing kernel launches (PyCUDA's ``pycuda.tools.DeviceData``).

    Every GPU CUDA 12 runs on (compute capability 5.0 and up) has the values PyCUDA gives
    compute capability 3.0 and up.

    Parameters
    ----------
    dev : pyctk.driver.Device, optional
        Default: the current context's device.

    Attributes
    ----------
    max_threads : int
        Threads per block.
    warp_size : int
        Threads per warp (32).
    warps_per_mp : int
        Warps a multiprocessor holds (64, as the old occupancy calculator counted).
    thread_blocks_per_mp : int
        Blocks a multiprocessor runs at once (8, likewise).
    registers : int
        Registers per block.
    shared_memory : int
        Bytes of shared memory per block (without opting in to more).
    smem_alloc_granularity, smem_granularity : int
        Bytes shared memory is allocated in (128), and its bank granularity (32).
    register_allocation_unit : str
        ``"warp"``: registers are allocated per warp.

    Examples
    --------
    >>> from pyctk.tools import DeviceData           # doctest: +GPU
    >>> data = DeviceData()
    >>> data.max_threads, data.warp_size, data.align(100)
    (1024, 32, 128)
    """

    def __init__(self, dev: Device | None = None) -> None:
        dev = Context.get_device() if dev is None else dev
        self.max_threads = dev.get_attribute(device_attribute.MAX_THREADS_PER_BLOCK)
        self.warp_size = dev.get_attribute(device_attribute.WARP_SIZE)
        self.warps_per_mp = 64
        self.thread_blocks_per_mp = 8
        self.registers = dev.get_attribute(device_attribute.MAX_REGISTERS_PER_BLOCK)
        self.shared_memory = dev.get_attribute(device_attribute.MAX_SHARED_MEMORY_PER_BLOCK)
        self.smem_alloc_granularity = 128
        self.smem_granularity = 32
        self.register_allocation_unit = "warp"

    def align_bytes(self, word_size: int = 4) -> int:
        """The alignment in bytes for coalesced fetches of ``word_size``-byte words.

        Parameters
        ----------
        word_size : {4, 8, 16}, optional

        Returns
        -------
        int
            64 for 4-byte words, 128 for 8 and 16.
        """
        try:
            return _FETCH_ALIGNMENT[word_size]
        except KeyError:
            raise ValueError(f"no alignment possible for fetches of size {word_size} (4, 8 or 16 bytes)") from None

    def align(self, bytes: int, word_size: int = 4) -> int:  # noqa: A002 - PyCUDA's name
        """``bytes`` rounded up to a multiple of ``align_bytes(word_size)``.

        Returns
        -------
        int
        """
        return _round_up(bytes, self.align_bytes(word_size))

    def align_words(self, word_size: int) -> int:
        """``align_bytes(word_size)`` in words of ``word_size`` bytes.

        Returns
        -------
        int
        """
        return self.align_bytes(word_size) // word_size

    def align_dtype(self, elements: int, dtype_size: int) -> int:
        """``elements`` of ``dtype_size`` bytes each, rounded up to a whole aligned fetch.

        Returns
        -------
        int
            A number of elements.
        """
        return _round_up(elements, self.align_words(dtype_size))

    def coalesce(self, thread_count: int) -> int:
        """``thread_count`` rounded up to a multiple of 16 (a half warp).

        Returns
        -------
        int
        """
        return _round_up(thread_count, 16)

    @staticmethod
    def make_valid_tex_channel_count(size: int) -> int:
        """The smallest texture channel count, 1, 2 or 4, that holds ``size`` channels.

        Returns
        -------
        int

        Raises
        ------
        ValueError
            ``size`` is more than 4.
        """
        for count in (1, 2, 4):
            if size <= count:
                return count
        raise ValueError(f"could not enlarge argument to valid channel count: {size} > 4")


class OccupancyRecord:
    """The occupancy of a launch, as the old CUDA occupancy calculator computed it (PyCUDA's
    ``pycuda.tools.OccupancyRecord``).

    Parameters
    ----------
    devdata : pyctk.tools.DeviceData
        The device, or anything with :class:`~pyctk.tools.DeviceData`'s attributes.
    threads : int
        Threads per block.
    shared_mem : int, optional
        Bytes of shared memory per block.
    registers : int, optional
        Registers per thread (``Function.num_regs``).

    Attributes
    ----------
    tb_per_mp : int
        Blocks a multiprocessor runs at once.
    limited_by : str
        What limits that: ``"device"``, ``"warps"``, ``"regs"`` or ``"smem"``.
    tb_per_mp_limits : list of tuple
        Each limit, as ``(blocks, name)``.
    warps_per_mp : int
        Warps resident on a multiprocessor.
    occupancy : float
        Those warps over the most a multiprocessor holds, 0 to 1.

    Raises
    ------
    ValueError
        A block the device cannot run: too many threads, registers or bytes of shared memory.

    Examples
    --------
    >>> from pyctk.tools import DeviceData, OccupancyRecord   # doctest: +GPU
    >>> record = OccupancyRecord(DeviceData(), threads=256, registers=64)
    >>> record.tb_per_mp, record.limited_by, record.occupancy
    (4, 'regs', 0.5)
    """

    def __init__(self, devdata: Any, threads: int, shared_mem: int = 0, registers: int = 0) -> None:
        if not 0 < threads <= devdata.max_threads:
            raise ValueError(
                f"too many threads: {threads} (1 to {devdata.max_threads} per block)"
                if threads > 0
                else f"a block needs threads, not {threads}"
            )
        warps = _round_up(threads, devdata.warp_size) // devdata.warp_size
        smem = _round_up(shared_mem, devdata.smem_alloc_granularity)
        try:
            register_threads = _REGISTER_THREADS[devdata.register_allocation_unit](warps)
        except KeyError:
            raise ValueError(
                f'improper register allocation unit: {devdata.register_allocation_unit!r} ("warp" or "block")'
            ) from None
        allocated_registers = register_threads * registers
        if allocated_registers > devdata.registers:
            raise ValueError(
                f"too many registers: {registers} per thread take {allocated_registers} "
                f"of the block's {devdata.registers}"
            )
        if smem > devdata.shared_memory:
            raise ValueError(f"too much smem: {shared_mem} bytes take {smem} of the block's {devdata.shared_memory}")

        self.tb_per_mp_limits = [(devdata.thread_blocks_per_mp, "device"), (devdata.warps_per_mp // warps, "warps")]
        if registers > 0:
            self.tb_per_mp_limits.append((devdata.registers // allocated_registers, "regs"))
        if shared_mem > 0:
            self.tb_per_mp_limits.append((devdata.shared_memory // smem, "smem"))
        self.tb_per_mp, self.limited_by = min(self.tb_per_mp_limits)
        self.warps_per_mp = self.tb_per_mp * warps
        self.occupancy = self.warps_per_mp / devdata.warps_per_mp
