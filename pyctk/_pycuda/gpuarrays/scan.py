"""PyCUDA's scans (``pycuda.scan``): prefix folds of a 1-D GPUArray with any associative operator.

``InclusiveScanKernel(np.int32, "a+b")`` is ``numpy.cumsum``; ``ExclusiveScanKernel(np.int32,
"a+b", "0")`` the same shifted by one, ``neutral`` first. ``scan_expr`` is a C expression in
``a`` and ``b`` (``a`` the earlier elements); it must be associative, and need not be
commutative: the order of the elements is kept.

How it runs (reduce, then scan): the array is cut into tiles of ``TILE`` elements, one block
each. The first pass writes each tile's fold; those are scanned the same way (recursively:
a level per factor of ``TILE``), giving each tile what comes before it; the second pass scans
each tile from that value. A tile is ``ROUNDS`` rounds of one element a thread, all loaded
first: each round is a shuffle scan within each warp, then the warps' folds through shared
memory. An array of at most ``TILE`` elements is one launch. Sizes are 64-bit.

Unlike PyCUDA: complex dtypes work (``pycuda-complex.hpp`` is included when needed), the
input's dtype is checked, and non-contiguous arrays are scanned through a contiguous copy.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..kernels.c_types import dtype_to_ctype
from .base import GPUArrayBase
from .elementwise import COMPLEX_HEADER, needs_complex, warp_shuffle
from .launching import Kernel, stream_handle
from .reductions import temporary

THREADS = 256  # threads per block
ROUNDS = 8  # elements per thread in a tile
TILE = THREADS * ROUNDS


# One kernel, three uses: with tile_sums, each tile's fold (output not written); with
# output, each tile's scan, from offsets (what precedes each tile) when given.
_SOURCE = string.Template(r"""${header}#define SCAN(a, b) (${scan_expr})
#define PYCTK_EXCLUSIVE ${exclusive}
${neutral}${preamble}
typedef ${scan_type} scan_type;

${shuffle}
extern "C" __global__ void __launch_bounds__(${threads})
${name}(const scan_type *input, scan_type *output, scan_type *tile_sums, const scan_type *offsets,
        unsigned long n)
{
  // the warps' folds, as raw bytes (no constructors run in shared memory); two sets, so
  // that a round writes one while slower threads still read the last round's
  __shared__ unsigned long long warp_sums[2][(${warps} * sizeof(scan_type) + 7) / 8];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const size_t tile = (size_t) blockIdx.x * ${tile};
  scan_type items[${rounds}];
#pragma unroll
  for (unsigned r = 0; r < ${rounds}; ++r) {  // all loads first: many in flight
    const size_t k = tile + r * ${threads} + threadIdx.x;
    items[r] = input[k < n ? k : n - 1];  // (past the end: a copy, folded only into the unused last tile fold)
  }
  // carry: the fold of everything before this round (none before the first tile)
  bool has_carry = offsets != 0 && blockIdx.x > 0;
  scan_type carry(items[0]);
  if (has_carry)
    carry = offsets[blockIdx.x - 1 + PYCTK_EXCLUSIVE];
#pragma unroll
  for (unsigned r = 0; r < ${rounds}; ++r) {
    if (tile + r * ${threads} < n) {  // the same for the whole block
      const size_t k = tile + r * ${threads} + threadIdx.x;
      scan_type x(items[r]);
#pragma unroll
      for (unsigned delta = 1; delta < 32; delta *= 2) {
        const scan_type y(pyctk_shfl_up(x, delta));
        if (lane >= delta)
          x = SCAN(y, x);
      }
      char *sums = (char *) warp_sums[r % 2];
      if (lane == 31)
        memcpy(sums + warp * sizeof(scan_type), &x, sizeof(scan_type));
      __syncthreads();
      // before: the fold of what precedes this warp's elements; total: of the round's end
      scan_type before(carry), total(carry);
      bool has_before = has_carry, has_total = has_carry;
#pragma unroll
      for (unsigned w = 0; w < ${warps}; ++w) {
        if (w == warp) {
          before = total;
          has_before = has_total;
        }
        scan_type folded(x);
        memcpy(&folded, sums + w * sizeof(scan_type), sizeof(scan_type));
        if (has_total)
          total = SCAN(total, folded);
        else
          total = folded;
        has_total = true;
      }
#if PYCTK_EXCLUSIVE
      const scan_type x_before(pyctk_shfl_up(x, 1));
      scan_type value(x_before);
      if (lane == 0)
        value = has_before ? before : scan_type(PYCTK_NEUTRAL);
      else if (has_before)
        value = SCAN(before, x_before);
#else
      scan_type value(x);
      if (has_before)
        value = SCAN(before, x);
#endif
      if (output != 0 && k < n)
        output[k] = value;
      carry = total;
      has_carry = true;
    }
  }
  if (tile_sums != 0 && threadIdx.x == 0)
    tile_sums[blockIdx.x] = carry;
}
""")


class _ScanKernelBase:
    """What both scans share; ``exclusive`` says which one."""

    exclusive = False

    def __init__(
        self,
        dtype: Any,
        scan_expr: str,
        neutral: Any = None,
        name_prefix: str = "scan",
        options: Sequence[str] | None = None,
        preamble: str = "",
        devices: Any = None,
    ) -> None:
        if self.exclusive and neutral is None:
            raise ValueError(
                "ExclusiveScanKernel needs neutral, the C expression of the value "
                'before the first element ("0" for a sum)'
            )
        self.dtype = np.dtype(dtype)
        self.scan_expr, self.neutral = scan_expr, None if neutral is None else str(neutral)
        self.name_prefix, self.options, self.preamble = name_prefix, options, preamble
        self.devices = devices  # PyCUDA ignores it too
        self._kernel = Kernel(self.source(), f"{name_prefix}_scan_tiles", ["P", "P", "P", "P", "Q"], options)

    def source(self) -> str:
        """The CUDA source of the scan's kernel, ``<name_prefix>_scan_tiles``; pyctk's.

        Compiled with ``no_extern_c=True``, it checks ``scan_expr`` and ``preamble`` without
        a GPU.

        Returns
        -------
        str

        Examples
        --------
        >>> import numpy as np
        >>> from pyctk.compiler import compile
        >>> from pyctk.scan import InclusiveScanKernel
        >>> cumsum = InclusiveScanKernel(np.int32, "a+b", name_prefix="cumsum")
        >>> ptx = compile(cumsum.source(), no_extern_c=True, arch="sm_80", target="ptx")
        >>> b".entry cumsum_scan_tiles" in ptx
        True
        """
        complex_ = needs_complex(self.scan_expr, self.neutral or "", self.preamble, dtypes=[self.dtype])
        neutral = f"#define PYCTK_NEUTRAL ({self.neutral})\n" if self.exclusive else ""
        return _SOURCE.substitute(
            header=COMPLEX_HEADER if complex_ else "",
            shuffle=warp_shuffle("up"),
            scan_expr=self.scan_expr,
            exclusive=int(self.exclusive),
            neutral=neutral,
            preamble=self.preamble,
            scan_type=dtype_to_ctype(self.dtype),
            name=f"{self.name_prefix}_scan_tiles",
            threads=THREADS,
            warps=THREADS // 32,
            rounds=ROUNDS,
            tile=TILE,
        )

    def __call__(self, input_ary: Any, output_ary: Any = None, allocator: Any = None, stream: Any = None) -> Any:
        """Scan ``input_ary`` into ``output_ary``, and return it.

        As PyCUDA's, the scan is in place by default and asynchronous on ``stream``.

        Parameters
        ----------
        input_ary : GPUArray
            1-D, of the scan's dtype; any layout (a view with gaps is copied first).
        output_ary : GPUArray or "new", optional
            Where the result goes: by default ``input_ary`` itself; ``"new"`` for a new
            array.
        allocator : callable, optional
            Where temporaries come from; default the input's allocator.
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray
            ``output_ary``.

        Raises
        ------
        TypeError
            An array of another dtype, or not a GPUArray.
        ValueError
            An array that is not 1-D, or shapes that differ.
        """
        if not isinstance(input_ary, GPUArrayBase):
            raise TypeError(
                f"a scan takes a GPUArray, not {type(input_ary).__name__}: make one first "
                f"(gpuarray.to_gpu(x), or gpuarray.asarray(x) for another library's GPU array)"
            )
        if len(input_ary.shape) != 1:
            raise ValueError(
                f"a scan takes a 1-D array, not one of shape {input_ary.shape}: scan x.ravel() for the flat order"
            )
        if isinstance(output_ary, str) and output_ary == "new":
            output_ary = input_ary._new_like_me()
        elif output_ary is None:
            output_ary = input_ary
        for what, array in (("input_ary", input_ary), ("output_ary", output_ary)):
            if array.dtype != self.dtype:
                raise TypeError(
                    f"{what} has dtype {array.dtype}, not the scan's {self.dtype}: "
                    f"convert it first (x.astype({str(self.dtype)!r}))"
                )
        if output_ary.shape != input_ary.shape:
            raise ValueError(
                f"output_ary has shape {output_ary.shape}, input_ary {input_ary.shape}: they must be the same"
            )
        n = input_ary.size
        if n == 0:
            return output_ary
        handle = stream_handle(stream)
        source = input_ary._contiguous()
        if output_ary.flags.forc:
            result = output_ary
        else:  # into contiguous memory first: the copy of the input, if in place
            result = source if output_ary is input_ary else source._new_like_me()
        self._scan(source.ptr, result.ptr, n, source, allocator, handle)
        if result is not output_ary:
            output_ary._assign(result, handle)
        return output_ary

    def _scan(self, source: int, result: int, n: int, like: Any, allocator: Any, handle: int) -> None:
        """Scan ``n`` elements at ``source`` into ``result``: one tile, or fold the tiles, scan
        their folds (the same way), then scan each tile from what precedes it."""
        tiles = -(-n // TILE)
        if tiles == 1:
            self._kernel(1, THREADS, handle, source, result, 0, 0, n)
            return
        folds = temporary(like, (tiles,), self.dtype, allocator)
        self._kernel(tiles, THREADS, handle, source, 0, folds.ptr, 0, n)
        self._scan(folds.ptr, folds.ptr, tiles, like, allocator, handle)
        self._kernel(tiles, THREADS, handle, source, result, 0, folds.ptr, n)


class InclusiveScanKernel(_ScanKernelBase):
    """An inclusive scan (PyCUDA's ``InclusiveScanKernel``): element ``k`` of the result folds elements ``0..k``.

    ``InclusiveScanKernel(np.int32, "a+b")`` is ``numpy.cumsum`` on the GPU. The kernel is
    compiled by NVRTC on first call and kept in the kernel cache.

    Unlike PyCUDA's: complex dtypes work, the arrays' dtype is checked, and non-contiguous
    arrays are scanned through a contiguous copy.

    Parameters
    ----------
    dtype : data-type
        Of the arrays and the fold; a struct registered with
        :func:`pyctk.tools.get_or_register_dtype` works too.
    scan_expr : str
        A C expression in ``a`` (the earlier elements' fold) and ``b``; associative. It need
        not commute: the elements' order is kept.
    neutral : str, optional
        Not needed by an inclusive scan.
    name_prefix : str, optional
        The kernel is ``<name_prefix>_scan_tiles``.
    options : list of str, optional
        nvcc's options (None: :data:`pyctk.compiler.DEFAULT_NVCC_FLAGS`).
    preamble : str, optional
        Code before the kernel: helper functions, structs.
    devices : optional
        Ignored, as in PyCUDA.

    Examples
    --------
    >>> import numpy as np                                       # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> from pyctk.scan import InclusiveScanKernel
    >>> cumsum = InclusiveScanKernel(np.int32, "a+b")
    >>> x = gpuarray.to_gpu(np.arange(1, 6, dtype=np.int32))
    >>> cumsum(x, "new").get()
    array([ 1,  3,  6, 10, 15], dtype=int32)
    >>> running_max = InclusiveScanKernel(np.int32, "max(a, b)")
    >>> running_max(gpuarray.to_gpu(np.array([2, 1, 5, 3], dtype=np.int32))).get()
    array([2, 2, 5, 5], dtype=int32)
    """


class ExclusiveScanKernel(_ScanKernelBase):
    """An exclusive scan (PyCUDA's ``ExclusiveScanKernel``): element ``k`` of the result folds elements ``0..k-1``.

    Element 0 is ``neutral``. Unlike PyCUDA's: complex dtypes work, the arrays' dtype is
    checked, and non-contiguous arrays are scanned through a contiguous copy.

    Parameters
    ----------
    dtype : data-type
        Of the arrays and the fold.
    scan_expr : str
        A C expression in ``a`` and ``b``, associative (it need not commute).
    neutral : str
        A C expression: the value before the first element (``"0"`` for a sum). Required.
    name_prefix, options, preamble, devices
        As for :class:`InclusiveScanKernel`.

    Raises
    ------
    ValueError
        No ``neutral``.

    Examples
    --------
    >>> import numpy as np                                       # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> from pyctk.scan import ExclusiveScanKernel
    >>> scan = ExclusiveScanKernel(np.int32, "a+b", "0")
    >>> x = gpuarray.to_gpu(np.arange(1, 6, dtype=np.int32))
    >>> scan(x, "new").get()
    array([ 0,  1,  3,  6, 10], dtype=int32)
    >>> scan(x).get(), x.get()                                   # in place, as in PyCUDA
    (array([ 0,  1,  3,  6, 10], dtype=int32), array([ 0,  1,  3,  6, 10], dtype=int32))
    """

    exclusive = True
