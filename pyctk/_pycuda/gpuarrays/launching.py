"""Generated kernels: compiled once per process, launched at the cost of one driver call.

A ``Kernel`` is one kernel of CUDA source Python wrote (``pyctk.gpuarray``'s arithmetic, ``ElementwiseKernel``,
``ReductionKernel``, scans, random numbers), with its parameters' types fixed. It is compiled
by NVRTC on first use through the on-disk cache (``source_modules.SourceModule``), so a
second process loads it without NVRTC; the loaded module is kept for the process, keyed by
its source and options (a library module serves every context: ``cuLibraryLoadData``), and
shared by the kernels of one source.

A launch packs the launch's geometry (a ``CUlaunchConfig``) and the arguments with one
precompiled ``struct.Struct`` into a buffer of the calling thread (the driver copies them
during the call, and ctypes lets go of the GIL during it, so a buffer per thread) and calls
``cuLaunchKernelEx``: four arguments for ctypes to convert where ``cuLaunchKernel`` takes
eleven, which was a fifth of a small operation's host time. PyCUDA's ``Function.__call__``
checks and converts each argument instead, which costs more than the launch itself for a
small array.

Geometry. Element-wise kernels loop over ``i`` with a grid-wide stride (PyCUDA's form, which
its users' ``operation`` strings assume), launched as ``geometry(n, family=...)``: one row of
``GEOMETRIES`` per kernel family, blocks of its ``threads``, enough to cover ``n`` up to its
``blocks_per_sm`` blocks per multiprocessor (None: a thread per element).
"""

from __future__ import annotations

import ctypes
import functools
import struct
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..._cuda import constants as cu
from ..._cuda import driver_api, streams
from ..kernels import source_modules

MOST_BLOCKS = 2**31 - 1  # the largest grid (x) a launch may ask for; the loop does the rest


class Geometry(NamedTuple):
    """How a family of element-wise kernels covers ``n`` elements: blocks of ``threads``
    threads, at most ``blocks_per_sm`` of them per multiprocessor (None: a thread per element)."""

    threads: int
    blocks_per_sm: int | None


# Measured on an H100, 2^28 float32 (docs/kernel-log.md, gpuarray steps 1-4): the arithmetic's
# kernels ran fastest in 256 blocks of 256 a multiprocessor, a user's ElementwiseKernel (a*b+c)
# at a thread an element in blocks of 128, CuPy's geometry; each 2-10% slower in the other's.
# (Copies and fills take the "own" row unmeasured.) On an H200 no grid helped a kernel whose
# loads wait for the last iteration's store; its __restrict__ build, for arrays apart, ran at
# 99% of copy in 256 blocks of 256 a multiprocessor in a probe (step 5), hence "user_apart".
GEOMETRIES = {"own": Geometry(256, 256), "user": Geometry(128, None), "user_apart": Geometry(256, 256)}
# CUlaunchConfig: grid and block (x, y, z), dynamic shared memory bytes, stream, attributes
# and their count (none); padded to 8 bytes so that the arguments follow as they would alone.
_CONFIG = "7I4xPPI4x"


@functools.cache
def multiprocessor_count(device: int) -> int:
    """How many multiprocessors ``device`` has."""
    return driver_api.query_int("cuDeviceGetAttribute", cu.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device)


@functools.lru_cache(maxsize=4096)  # a small operation's launch asks it once per call
def geometry(n: int, device: int = 0, family: str = "own") -> tuple[int, int]:
    """(blocks, threads per block) of a launch of ``family``'s kernel over ``n`` elements."""
    threads, blocks_per_sm = GEOMETRIES[family]
    blocks = -(-n // threads)
    if blocks_per_sm is not None:
        blocks = min(blocks, blocks_per_sm * multiprocessor_count(device))
    return max(min(blocks, MOST_BLOCKS), 1), threads


def splay(n: int, dev: Any = None) -> tuple[tuple[int, int], tuple[int, int, int]]:
    """The grid and block of a kernel that loops over ``n`` elements with a grid-wide stride
    (PyCUDA's ``gpuarray.splay``).

    A warp per block while there are few elements, then up to 32 blocks a multiprocessor,
    then up to 128 threads a block: PyCUDA's rule, for launching your own
    :class:`pyctk.driver.Function` over an array as PyCUDA's programs do (pyctk's own
    kernels size their grids otherwise).

    Parameters
    ----------
    n : int
        The number of elements.
    dev : pyctk.driver.Device or int, optional
        Default the current context's device.

    Returns
    -------
    tuple
        ``((blocks, 1), (threads, 1, 1))``: the ``grid=`` and ``block=`` of a launch.

    Examples
    --------
    >>> from pyctk import gpuarray                                  # doctest: +GPU
    >>> gpuarray.splay(1000)                                        # 32 blocks of a warp
    ((32, 1), (32, 1, 1))
    """
    device = driver_api.current_device() if dev is None else int(dev)
    warp, most_threads, most_blocks = 32, 128, 4 * 8 * multiprocessor_count(device)
    warps = max(1, -(-n // warp))
    if warps <= most_blocks:
        return (warps, 1), (warp, 1, 1)
    threads = min(most_threads, -(-warps // most_blocks) * warp)
    return (most_blocks, 1), (threads, 1, 1)


class Kernel:
    """One ``__global__`` function ``name`` of ``source`` whose parameters have the ``struct``
    codes ``codes`` (``"P"`` a pointer, ``"Q"`` a size, ``"f"`` a float, ``"8s"`` 8 bytes ...).

    ``kernel(blocks, threads, stream, *args, shared=0)`` launches it; ``args`` are ints for
    pointers and numbers (or bytes) for the rest, as ``struct`` packs them.
    """

    def __init__(self, source: str, name: str, codes: Sequence[str], options: Sequence[str] | None = None) -> None:
        self.source, self.name = source, name
        self.options = None if options is None else tuple(options)
        formats = [_CONFIG + "".join(codes[:k]) for k in range(len(codes) + 1)]
        self._format = struct.Struct("@" + formats[-1])
        # where each argument starts: after the ones before it, aligned as C aligns it
        self._offsets = [
            struct.calcsize("@" + before + code) - struct.calcsize("@" + code) for before, code in zip(formats, codes)
        ]
        self._handle = 0
        self._buffers = threading.local()

    @property
    def handle(self) -> int:
        """The loaded kernel (``CUkernel``), compiled or read from the cache on first use."""
        if not self._handle:
            self._handle = self.function.handle
        return self._handle

    @property
    def function(self) -> Any:
        """The loaded kernel as a ``pyctk.driver.Function`` (its attributes, ``max_threads_per_block`` ...)."""
        return loaded_module(self.source, self.options).get_function(self.name)

    def _buffer(self) -> tuple[Any, Any, int, int, Any, int]:
        """A new buffer for the calling thread, and what a launch passes with it: (the format's
        pack_into, the buffer, its address (the CUlaunchConfig), the address of the table of
        the arguments' addresses at its end, the driver's cuLaunchKernelEx, the kernel)."""
        table = -(-self._format.size // 8) * 8
        data = ctypes.create_string_buffer(table + 8 * len(self._offsets))
        base = ctypes.addressof(data)
        struct.pack_into(f"@{len(self._offsets)}P", data, table, *(base + o for o in self._offsets))
        self._buffers.values = (
            self._format.pack_into,
            data,
            base,
            base + table,
            driver_api.driver().cuLaunchKernelEx,
            self.handle,
        )
        return self._buffers.values

    def __call__(self, blocks: int, threads: int, stream: int, *args: Any, shared: int = 0) -> None:
        try:
            pack, data, config, table, launch, handle = self._buffers.values
        except AttributeError:  # the thread's first launch of this kernel
            pack, data, config, table, launch, handle = self._buffer()
        pack(data, 0, blocks, 1, 1, threads, 1, 1, shared, stream, 0, 0, *args)
        result = launch(config, handle, table, None)
        if result:
            self._failed(result, blocks, threads)

    def _failed(self, result: int, blocks: int, threads: int) -> None:
        """A launch's error; or the launch again where it was a thread's first, without a
        current context (the arguments are still in the thread's buffer)."""
        if result == cu.CUDA_ERROR_INVALID_CONTEXT:  # no context current in this thread yet
            driver_api.current_context()
            _, _, config, table, launch, handle = self._buffers.values
            result = launch(config, handle, table, None)
        if result:  # (check asks driver(): in a child forked after CUDA started, its clear error)
            driver_api.check(
                result, f"launching the generated kernel {self.name} with {blocks} blocks of {threads} threads"
            )


@functools.cache  # loaded for the rest of the process
def loaded_module(source: str, options: tuple[str, ...] | None = None) -> Any:
    """The module of ``source`` (C++ as it is: kernels declare ``extern "C"``), compiled or read
    from the cache once per process; every ``Kernel`` of one source shares it."""
    return source_modules.SourceModule(source, options=None if options is None else list(options), no_extern_c=True)


def stream_handle(stream: Any) -> int:
    """The handle of PyCUDA's ``stream=``: None is the legacy default stream (0)."""
    return 0 if stream is None else streams.handle(stream)
