"""PyCUDA's memory pools (``pycuda.tools``): freed blocks kept for the next allocation of
their size class.

One pool class, ``MemoryPool``, over an allocator (a function of a byte count that returns
a block with ``free()``), as PyCUDA's ``memory_pool`` template is:

- ``DeviceMemoryPool``: device memory from ``mem_alloc`` in the context current when the pool
  was made (made current for each new block, as PyCUDA does); ``allocate(size)`` gives a
  ``PooledDeviceAllocation``, a ``DeviceAllocation`` that goes back to the pool;
- ``PageLockedMemoryPool``: page-locked host memory (``PageLockedAllocator(flags)``);
  ``allocate(shape, dtype, order="C")`` gives an ndarray whose base is a
  ``PooledHostAllocation``.

Size classes (PyCUDA's bins): a size's bin is its power of two and the 4 bits after its
leading one, so a block is at most 1/16 larger than asked for, and each freed block serves
every later request of its bin. ``free()`` (or garbage) returns a block to its pool,
``free_held()`` gives the held blocks back, ``stop_holding()`` too and stops keeping them.

>>> DeviceMemoryPool.bin_number(1000), DeviceMemoryPool.alloc_size(DeviceMemoryPool.bin_number(1000))
(159, 1023)
"""

from __future__ import annotations

import gc
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..._cuda import constants as cu
from ..._cuda.driver_errors import LogicError, MemoryError
from ..._cuda.errors import OutOfMemoryError
from .device import DeviceAllocation, mem_alloc
from .host import ArrayMemory, HomeContext, PagelockedHostAllocation, new_array
from .sizes import byte_count

MANTISSA_BITS = 4  # bits after the leading one that tell a size's bin (PyCUDA's)
_MANTISSA = (1 << MANTISSA_BITS) - 1


def bitlog2(n: int) -> int:
    """The integer part of log2(``n``): the power of two of a size (PyCUDA's ``bitlog2``).

    Parameters
    ----------
    n : int
        1 or more.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        ``n`` is less than 1.

    Examples
    --------
    >>> import pyctk.driver as cuda
    >>> cuda.bitlog2(17), cuda.bitlog2(1024)
    (4, 10)
    """
    if n < 1:
        raise ValueError(f"bitlog2 needs a positive integer, not {n}")
    return int(n).bit_length() - 1


def bin_number(size: int) -> int:
    """The bin of a size in bytes: its power of two, then the 4 bits after its leading one.

    Parameters
    ----------
    size : int

    Returns
    -------
    int

    Examples
    --------
    >>> from pyctk.tools import DeviceMemoryPool
    >>> DeviceMemoryPool.bin_number(1000), DeviceMemoryPool.bin_number(1023)
    (159, 159)
    """
    size = operator.index(size)
    if size < 0:
        raise ValueError(f"cannot allocate a negative number of bytes ({size})")
    exponent = bitlog2(size) if size else 0
    shift = exponent - MANTISSA_BITS
    head = size >> shift if shift >= 0 else size << -shift
    return exponent << MANTISSA_BITS | head & _MANTISSA


def alloc_size(number: int) -> int:
    """The bytes a block of bin ``number`` has: the largest size of the bin.

    Parameters
    ----------
    number : int
        A :meth:`bin_number`.

    Returns
    -------
    int

    Examples
    --------
    >>> from pyctk.tools import DeviceMemoryPool
    >>> DeviceMemoryPool.alloc_size(159)
    1023
    """
    exponent, mantissa = number >> MANTISSA_BITS, number & _MANTISSA
    shift = exponent - MANTISSA_BITS
    head = 1 << MANTISSA_BITS | mantissa
    return head << shift | (1 << shift) - 1 if shift >= 0 else head >> -shift


class MemoryPool:
    """Blocks from an allocator kept for reuse, by size class (PyCUDA's ``memory_pool``).

    The base of :class:`~pyctk.tools.DeviceMemoryPool` and
    :class:`~pyctk.tools.PageLockedMemoryPool`. A size's bin is its power of two and the 4
    bits after its leading one, so a block is at most 1/16 larger than asked for; each
    block given back serves every later request of its bin.

    When the allocator runs out of memory (a ``pyctk.OutOfMemoryError``), the pool collects
    garbage, in which pooled allocations give their blocks back, and frees held blocks,
    largest first, until the allocation succeeds; if none is left, it raises
    ``pyctk.driver.MemoryError``.

    Parameters
    ----------
    allocator : callable
        ``allocator(nbytes)`` returns a block with ``free()``.
    """

    bin_number = staticmethod(bin_number)
    alloc_size = staticmethod(alloc_size)

    def __init__(self, allocator: Callable[[int], Any]) -> None:
        self._allocator = allocator
        self._bins: dict[int, list[Any]] = {}  # bin -> held blocks
        self._holding = True
        self._held = self._active = self._managed_bytes = self._active_bytes = 0

    @property
    def held_blocks(self) -> int:
        """Blocks freed by the program and kept for reuse."""
        return self._held

    @property
    def active_blocks(self) -> int:
        """Blocks in use by the program."""
        return self._active

    @property
    def managed_bytes(self) -> int:
        """Bytes of the blocks in use and held."""
        return self._managed_bytes

    @property
    def active_bytes(self) -> int:
        """Bytes the program asked for, of the blocks in use."""
        return self._active_bytes

    def take(self, size: int) -> Any:
        """A block of ``size`` bytes or more: a held one of its bin, else a new one.

        The pooled allocations call it; programs call ``allocate``.
        """
        number = bin_number(size)
        block = self._pop(number)
        if block is None:
            block = self._allocate(number)
        self._active += 1
        self._active_bytes += size
        return block

    def give_back(self, block: Any, size: int) -> None:
        """Take back a block ``take(size)`` gave: hold it, or free it after :meth:`stop_holding`.

        The pooled allocations call it when they are freed.
        """
        self._active -= 1
        self._active_bytes -= size
        number = bin_number(size)
        if self._holding:
            self._bins.setdefault(number, []).append(block)
            self._held += 1
        else:
            self._release(block, number)

    def free_held(self) -> None:
        """Free every held block: give the memory back to the allocator's owner."""
        # (over a copy: freeing a block may run a collection in which garbage pooled
        # allocations give theirs back, into bins that held nothing before)
        for number, held in self._bins.copy().items():
            while held:
                self._held -= 1
                self._release(held.pop(), number)

    def stop_holding(self) -> None:
        """Free every held block, and from now on free each block when it is given back."""
        self._holding = False
        self.free_held()

    def _pop(self, number: int) -> Any:
        held = self._bins.get(number)
        if not held:
            return None
        self._held -= 1
        return held.pop()

    def _release(self, block: Any, number: int) -> None:
        self._managed_bytes -= alloc_size(number)
        block.free()

    def _new(self, nbytes: int) -> Any:
        block = self._allocator(nbytes)
        self._managed_bytes += nbytes
        return block

    def _allocate(self, number: int) -> Any:
        nbytes = alloc_size(number)
        try:
            return self._new(nbytes)
        except OutOfMemoryError:
            for _ in range(3):  # garbage pooled allocations give their blocks back: one may be of
                gc.collect()  # this bin (PyPy frees an array's base collections after it)
        block = self._pop(number)
        while block is None:
            try:
                block = self._new(nbytes)
            except OutOfMemoryError:
                if not self._free_largest_held():
                    raise MemoryError(
                        "memory_pool::allocate failed: out of memory - failed to free memory for allocation",
                        "CUDA_ERROR_OUT_OF_MEMORY",
                        2,
                    ) from None
        return block

    def _free_largest_held(self) -> bool:
        """Free the largest held block; False if none is held."""
        for number in sorted(self._bins, reverse=True):
            held = self._bins[number]
            if held:
                self._held -= 1
                self._release(held.pop(), number)
                return True
        return False


class _Pooled:
    """A block taken from ``pool`` for ``size`` bytes, returned by ``free()`` or when garbage."""

    _block: Any = None  # the pool's block (of the pool's kind of memory); None: returned (or never taken)

    def __init__(self, pool: MemoryPool, size: int) -> None:
        self._pool, self.nbytes = pool, size
        self._block = pool.take(size)

    def __len__(self) -> int:
        return self.nbytes

    def free(self) -> None:
        """Return the memory to the pool; it must not be used after. A second ``free`` raises
        ``LogicError``, as in PyCUDA."""
        block = self._block
        if block is None:
            raise LogicError(
                f"this {type(self).__name__} was freed", "CUDA_ERROR_INVALID_HANDLE", cu.CUDA_ERROR_INVALID_HANDLE
            )
        self._block = None
        self._pool.give_back(block, self.nbytes)

    def __del__(self) -> None:
        if self._block is not None:
            self.free()


class PooledDeviceAllocation(_Pooled, DeviceAllocation):
    """Device memory from a :class:`~pyctk.tools.DeviceMemoryPool` (PyCUDA's
    ``PooledDeviceAllocation``).

    A :class:`~pyctk.driver.DeviceAllocation` (``int()`` is its address; a kernel argument,
    a copy's source or destination ...) whose ``free()``, or garbage, returns it to the
    pool. ``len()`` is the size asked for.
    """

    def __init__(self, pool: MemoryPool, size: int) -> None:
        _Pooled.__init__(self, pool, size)
        # the block's memory, which is the pool's to free (context None)
        DeviceAllocation.__init__(
            self, self._block.pointer, context=None, device=self._block.device, stream=0, nbytes=size
        )

    def free(self) -> None:
        """Return the memory to the pool; ``int()`` then raises ValueError.

        Raises
        ------
        pyctk.driver.LogicError
            It was freed before, as in PyCUDA.
        """
        _Pooled.free(self)
        self.pointer = 0  # int() now says it was freed


class DeviceMemoryPool(MemoryPool):
    """A pool of device memory in the current context (PyCUDA's ``DeviceMemoryPool``).

    Its blocks come from :func:`~pyctk.driver.mem_alloc` in the context current when the
    pool was made (made current for each new block, as in PyCUDA). :meth:`allocate` is an
    ``allocator=`` for code that takes one (:func:`pyctk.gpuarray.empty` ...).

    pyctk's :func:`~pyctk.driver.mem_alloc` already takes its memory from a pool (CUDA's
    stream-ordered one), so this one mostly serves programs written for PyCUDA.

    Examples
    --------
    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> pool = cuda.DeviceMemoryPool()
    >>> a_gpu = pool.allocate(1000)
    >>> a_gpu.free()                                 # back to the pool, held
    >>> pool.held_blocks, pool.active_blocks
    (1, 0)
    >>> b_gpu = pool.allocate(1020)                  # the same bin: the held block
    >>> pool.held_blocks, pool.active_blocks, pool.managed_bytes
    (0, 1, 1023)
    >>> b_gpu.free(); pool.free_held()
    """

    def __init__(self) -> None:
        super().__init__(self._new_block)
        self._home = HomeContext()

    def _new_block(self, nbytes: int) -> DeviceAllocation:
        with self._home.active():
            return mem_alloc(nbytes)

    def allocate(self, size: int) -> PooledDeviceAllocation:
        """Allocate device memory: a held block of its bin if there is one, else a new one.

        Parameters
        ----------
        size : int
            Bytes.

        Returns
        -------
        PooledDeviceAllocation

        Raises
        ------
        pyctk.driver.MemoryError
            Not enough memory, with every held block freed.
        TypeError, ValueError
            ``size`` is no integer, or negative (before any CUDA call).
        """
        return PooledDeviceAllocation(self, byte_count(size, "DeviceMemoryPool.allocate: size"))


class PageLockedAllocator:
    """The allocator of a :class:`~pyctk.tools.PageLockedMemoryPool`: page-locked host memory.

    Parameters
    ----------
    flags : int, optional
        :class:`~pyctk.driver.host_alloc_flags` of the memory.

    Examples
    --------
    >>> import pyctk.driver as cuda
    >>> allocator = cuda.PageLockedAllocator(cuda.host_alloc_flags.PORTABLE)
    >>> pool = cuda.PageLockedMemoryPool(allocator)
    >>> pool.active_blocks, pool.held_blocks
    (0, 0)
    """

    def __init__(self, flags: int = 0) -> None:
        self.flags = flags

    def __call__(self, nbytes: int) -> PagelockedHostAllocation:
        """``nbytes`` of page-locked memory, a :class:`~pyctk.driver.PagelockedHostAllocation`."""
        return PagelockedHostAllocation(nbytes, self.flags)


class PooledHostAllocation(_Pooled, ArrayMemory):
    """Page-locked memory from a :class:`~pyctk.tools.PageLockedMemoryPool`, the ``.base`` of
    the array its ``allocate`` made (PyCUDA's ``PooledHostAllocation``).

    ``free()``, or garbage once no array uses it, returns it to the pool; a second
    ``free()`` raises :class:`~pyctk.driver.LogicError`.
    """

    def _address(self) -> int:
        return 0 if self._block is None else self._block._address()


class PageLockedMemoryPool(MemoryPool):
    """A pool of page-locked host memory (PyCUDA's ``PageLockedMemoryPool``).

    Parameters
    ----------
    allocator : PageLockedAllocator, optional
        Default ``PageLockedAllocator()``, no flags.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> pool = cuda.PageLockedMemoryPool()
    >>> a = pool.allocate((256, 256), np.float32)
    >>> a.shape, type(a.base).__name__
    ((256, 256), 'PooledHostAllocation')
    >>> del a                                        # its block goes back to the pool
    >>> pool.held_blocks
    1
    """

    def __init__(self, allocator: PageLockedAllocator | None = None) -> None:
        super().__init__(allocator or PageLockedAllocator())

    def allocate(self, shape: int | Sequence[int], dtype: Any, order: str = "C") -> np.ndarray:
        """A new NumPy array in page-locked memory: a held block of its bin if there is one.

        Parameters
        ----------
        shape : int or tuple of int
        dtype : data-type
        order : {"C", "F"}, optional

        Returns
        -------
        numpy.ndarray
            Uninitialised; its ``.base`` is a :class:`~pyctk.tools.PooledHostAllocation`.
        """
        return new_array(lambda nbytes: PooledHostAllocation(self, nbytes), shape, dtype, order)
