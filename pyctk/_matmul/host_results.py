"""Host memory for the results of host products: each freed result's memory is kept for the
next one of its size, and page-locked once it is reused.

A fresh NumPy array costs the host a page fault per page (the kernel zeroes each page on its
first write), and libgpumatmul brings results down through its pinned staging and a host
copy: at n = 8192 float32, the 256 MiB result's faults and copy are a third of the host's
memory traffic. Programs multiply in loops and drop each result for the next, so results of
MIN_BYTES or more live in blocks of memory kept here. When the last array that uses a block
goes away, the block waits in a free list for the next result of its size. The second time a
block is used it is page-locked (cudaHostRegister, about 25 GB/s on an H100 server, paid
once), and from then on the GPU's copy engines write results into it in place
(libgpumatmul copies straight to and from page-locked memory).

The free list holds at most CACHE_BYTES, a sixteenth of the host's memory (memory the
process had in use already): the oldest blocks beyond it are unlocked and unmapped, and a
result larger than all of it comes from NumPy.
Results are ordinary writable C-ordered ndarrays; their base is a uint8 array over the block
(``flags.owndata`` is False, as for a view).

>>> import numpy as np
>>> empty((4, 4), np.dtype(np.float32)).flags.owndata      # under MIN_BYTES: NumPy's own memory
True
"""

from __future__ import annotations

import _thread
import math
import os
from collections.abc import Sequence

import numpy as np

from .._cuda import cudart as _cudart

MIN_BYTES = 1 << 20  # smaller results come from NumPy: few pages, which malloc reuses itself
_PAGE = os.sysconf("SC_PAGE_SIZE")
CACHE_BYTES = _PAGE * os.sysconf("SC_PHYS_PAGES") // 16
_REGISTER_PORTABLE = 1  # cudaHostRegisterPortable: page-locked for every GPU's context


class _Block:
    """Anonymous private memory, page-locked or not, with the process that mapped it."""

    __slots__ = ("memory", "size", "address", "locked", "pid")

    def __init__(self, size: int) -> None:
        import mmap  # here: `import pyctk` does not need it (0.3 ms)

        self.memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if hasattr(mmap, "MADV_HUGEPAGE"):  # as NumPy asks for its large arrays
            self.memory.madvise(mmap.MADV_HUGEPAGE)
        self.size = size
        self.address = np.frombuffer(self.memory, np.uint8, count=1).ctypes.data
        self.locked: bool | None = None  # None: not tried yet; False: CUDA refused or unlocked
        self.pid = os.getpid()

    def __del__(self) -> None:
        # Dropped without _release (a replaced free list, an error): CUDA must not keep a page
        # lock on addresses that the next mapping may reuse, or libgpumatmul would take that
        # memory for locked and the GPU would write to the old pages.
        if self.locked and self.pid == os.getpid():
            try:
                _unlock(self)
            except Exception:  # the interpreter is exiting, and CUDA with it
                pass


# The free list, oldest first, and its size. Finalizers only append to _returned (an atomic
# list.append) and admit it if the lock is free: one waiting for the lock could deadlock
# with a collection run on the thread that holds it. Whoever holds the lock admits it too.
_lock = _thread.allocate_lock()
_free: list[_Block] = []
_free_bytes = 0
_returned: list[_Block] = []


def empty(shape: Sequence[int], dtype: np.dtype, device: int = 0) -> np.ndarray:
    """A new C-ordered array for a product's result on GPU ``device``, uninitialised as
    ``np.empty``: memory a dropped result left if one of the same size is free
    (page-locked for ``device``'s use on this second use), else new memory."""
    nbytes = math.prod(shape) * dtype.itemsize
    if not _kept_bytes(nbytes):
        return np.empty(shape, dtype)
    import weakref  # here: `import pyctk` does not need it (0.6 ms)

    size = -(-nbytes // _PAGE) * _PAGE
    block = _take(size)
    if block is None:
        block = _Block(size)
    elif block.locked is None:
        _page_lock(block, device)
    anchor = np.frombuffer(block.memory, np.uint8)  # every view of the result has it as base
    weakref.finalize(anchor, _give_back, block).atexit = False
    return anchor[:nbytes].view(dtype).reshape(shape)


# Host memory a product is about to take is checked against what the machine has from this
# size on (reading /proc/meminfo costs tens of microseconds, and a small result cannot take
# a machine down); PYCTK_HOST_MEMORY_CHECK=0 turns the check off.
CHECK_VARIABLE = "PYCTK_HOST_MEMORY_CHECK"
CHECKED_FROM = 1 << 30


def check_available(nbytes: int, what: str) -> None:
    """MemoryError, naming the sizes, if ``nbytes`` of new host memory (``what`` says for
    what) are more than the machine has available: where memory is overcommitted (Linux's
    vm.overcommit_memory=1), NumPy's allocation would succeed and the kernel would kill the
    process part-way through the product. Memory a dropped result left for reuse counts as
    available."""
    if nbytes < CHECKED_FROM or os.environ.get(CHECK_VARIABLE, "") == "0":
        return
    available, source = _available_bytes()
    if available is None or nbytes <= available + _free_bytes:
        return
    raise MemoryError(
        f"pyctk.matmul needs {size_text(nbytes)} of new host memory ({what}), but this "
        f"machine has {size_text(available)} available ({source}): the process would run "
        f"out of memory part-way through the product. Free memory, multiply in parts (slices "
        f"of x1's rows, say), or pass out= an array you have; {CHECK_VARIABLE}=0 turns this "
        f"check off."
    )


def size_text(nbytes: int) -> str:
    """``nbytes`` for a person: "90.0 GiB", "64.0 MiB"."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{nbytes} bytes"


def _available_bytes() -> tuple[int | None, str]:
    """Host memory this process may still take, and where that was read: the kernel's
    estimate (MemAvailable), or less if the process's control group (cgroup v2) caps it."""
    try:
        with open("/proc/meminfo", encoding="ascii") as lines:
            available = next(int(line.split()[1]) * 1024 for line in lines if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):  # not Linux, or a kernel older than 3.14
        return None, ""
    source = "MemAvailable in /proc/meminfo"
    try:
        with (
            open("/sys/fs/cgroup/memory.max", encoding="ascii") as cap,
            open("/sys/fs/cgroup/memory.current", encoding="ascii") as used,
        ):
            room = int(cap.read()) - int(used.read())
        if room < available:
            available, source = room, "the control group's memory.max less memory.current"
    except (OSError, ValueError):  # no cgroup v2 limit ("max"), or not readable
        pass
    return available, source


def kept(shape: Sequence[int], dtype: np.dtype) -> bool:
    """Whether ``empty`` makes a result of this shape and dtype in memory kept here (else
    it is NumPy's own)."""
    return _kept_bytes(math.prod(shape) * dtype.itemsize)


def _kept_bytes(nbytes: int) -> bool:
    return MIN_BYTES <= nbytes <= CACHE_BYTES


def _take(size: int) -> _Block | None:
    """The newest free block of exactly ``size`` bytes, out of the free list, or None."""
    global _free_bytes
    block = None
    with _lock:
        evicted = _admit_returned()
        for i in range(len(_free) - 1, -1, -1):
            if _free[i].size == size:
                block = _free.pop(i)
                _free_bytes -= size
                break
    for old in evicted:
        _release(old)
    return block


def _give_back(block: _Block) -> None:
    """The last array on ``block`` is gone: keep the block for the next result."""
    if block.pid != os.getpid():  # a forked child's copy: unmapped when the last reference
        return  # goes (its page lock is the parent's)
    _returned.append(block)
    if _lock.acquire(False):
        try:
            evicted = _admit_returned()
        finally:
            _lock.release()
        for old in evicted:
            _release(old)


def _admit_returned() -> list[_Block]:
    """Move the blocks given back into the free list (the lock held), and take out the
    oldest beyond CACHE_BYTES, for the caller to release once it lets the lock go. The
    newest stays: it may be the one whose array is being freed."""
    global _free_bytes
    while _returned:
        block = _returned.pop(0)
        _free.append(block)
        _free_bytes += block.size
    evicted = []
    while _free_bytes > CACHE_BYTES and len(_free) > 1:
        evicted.append(_free.pop(0))
        _free_bytes -= evicted[-1].size
    return evicted


def _page_lock(block: _Block, device: int) -> None:
    """Page-lock a block for every GPU, as ``device``'s context does it; if CUDA refuses (too
    much locked memory, say), the block stays pageable and is copied through the staging."""
    runtime = _cudart.runtime()
    with _cudart.on_device(device):
        result = runtime.cudaHostRegister(block.address, block.size, _REGISTER_PORTABLE)
    block.locked = result == 0
    if not block.locked:
        runtime.cudaGetLastError()  # not a sticky error: clear it for the calls after


def _release(block: _Block) -> None:
    """Unlock and unmap a free block (no array uses it: an array's finalizer runs while the
    array still holds the memory, so a block is never released from its own)."""
    if block.locked:
        _unlock(block)
    block.memory.close()


def _unlock(block: _Block) -> None:
    runtime = _cudart.runtime()
    if runtime.cudaHostUnregister(block.address) != 0:
        runtime.cudaGetLastError()
    block.locked = False


def _forget_in_child() -> None:
    """A child forked from a process with free blocks drops them: unmapping its copies is
    all it may do (their page locks are the parent's)."""
    global _free_bytes
    _free.clear()
    _returned.clear()
    _free_bytes = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
