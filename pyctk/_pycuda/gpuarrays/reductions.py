"""PyCUDA's ``ReductionKernel`` and the reductions of ``pyctk.gpuarray``: ``sum``, ``dot``,
``max``, ``min``, ``any``, ``all`` and their ``subset_`` forms.

``ReductionKernel(np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]",
arguments="float *x, float *y")`` writes a kernel that maps each index ``i`` of its first
array argument through ``map_expr`` and folds the results with ``reduce_expr``; calling it
returns a 0-d GPUArray. It is compiled by NVRTC on first call, through the kernel cache.

How it runs. Stage 1 launches ``WAVES`` waves of blocks (``_wave``: as many blocks as the GPU
holds at once; the same work for every block). Each thread folds its
elements, a grid-wide stride apart, into a register, ``UNROLL`` loads in flight;
the block folds its threads' values with warp shuffles (any type: structs and complex
numbers are shuffled as 32-bit words, so no ``volatile`` operators are needed) and writes
one partial value; stage 2, one block, folds the partials into the result. A small input is
one block of stage 1, writing the result itself. The folding order interleaves elements, so
``reduce_expr`` must be associative and commutative (as PyCUDA's, which folds likewise).

Unlike PyCUDA: an empty input gives ``neutral`` (NumPy's sum of nothing is 0); ``sum``
widens small integers and bool as ``numpy.sum`` does; ``max``/``min`` propagate NaN as
NumPy's do; non-contiguous arrays are reduced through a contiguous copy.

This module takes arrays as arguments and makes its results with ``x._new``, knowing them by
``base.GPUArrayBase``'s interface: it does not import ``array`` (which imports it).
"""

from __future__ import annotations

import builtins
import functools
import string
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from ..._cuda import constants as cu
from ..._cuda import driver_api
from ..kernels.c_types import Argument, VectorArg, dtype_to_ctype
from .base import GPUArrayBase
from .elementwise import (
    COMPLEX_HEADER,
    needs_complex,
    parse_arguments,
    scalar_packer,
    struct_code,
    vector_pointer,
    warp_shuffle,
)
from .launching import Kernel, multiprocessor_count, stream_handle

THREADS = 256  # threads per block, both stages
MIN_BLOCKS = 4  # blocks per multiprocessor __launch_bounds__ asks room for (at most 64 registers)
# Measured (docs/kernel-log.md, gpuarray steps 1-8):
UNROLL = 8  # elements each thread loads before folding them: loads in flight (on an
# H200, 2^28 float32: 8 with __restrict__ inputs 89% of copy, 4 81%)
WAVES = 2  # stage-1 grid: this many waves of blocks (measured on an H100: 4 and 2 waves
# read 2^28 float32 at 92% of the copy's bandwidth, 8 and 1 at 88%)
SMALL = 2 * UNROLL * THREADS  # most elements one block takes on alone (then stage 1 is the result)


# What both stages share: the types, the user's preamble, a shuffle of any type, a block's fold.
_COMMON = string.Template(r"""${header}${preamble}
typedef ${out_type} out_type;

// reduce_expr as a function: each of a and b evaluated once, whatever the expression repeats
// (a warp shuffle in b that ran on only some lanes, as "a > b ? a : b" would, hangs the warp).
__device__ __forceinline__ out_type REDUCE(const out_type &a, const out_type &b) { return (${reduce_expr}); }

${shuffle}
// The fold of the block's threads' values (in thread 0): shuffles within each warp, then
// the warps' values through shared memory kept as raw bytes (no constructors run there).
__device__ __forceinline__ out_type pyctk_block_reduce(out_type acc)
{
  __shared__ unsigned long long partials[(${warps} * sizeof(out_type) + 7) / 8];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (unsigned delta = 16; delta > 0; delta /= 2)
    acc = REDUCE(acc, pyctk_shfl_down(acc, delta));
  if (lane == 0)
    memcpy((char *) partials + warp * sizeof(out_type), &acc, sizeof(out_type));
  __syncthreads();
  if (warp == 0) {
    out_type value(${neutral});
    if (lane < ${warps})
      memcpy(&value, (const char *) partials + lane * sizeof(out_type), sizeof(out_type));
#pragma unroll
    for (unsigned delta = ${warps} / 2; delta > 0; delta /= 2)
      value = REDUCE(value, pyctk_shfl_down(value, delta));
    acc = value;
  }
  return acc;
}
""")

# One stage: each thread folds elements pyctk_j, pyctk_j + stride, ... (element i of
# map_expr is ``index``), UNROLL at a time, then the block folds and writes its value.
_STAGE = string.Template(r"""
extern "C" __global__ void __launch_bounds__(${threads}, ${blocks_per_sm})
${name}(out_type *pyctk_out, ${parameters}unsigned long n)
{
  const size_t pyctk_stride = (size_t) gridDim.x * ${threads};
  size_t pyctk_j = (size_t) blockIdx.x * ${threads} + threadIdx.x;
  out_type pyctk_acc(${neutral});
  for (; pyctk_j + (${unroll} - 1) * pyctk_stride < n; pyctk_j += ${unroll} * pyctk_stride) {
#pragma unroll
    for (unsigned pyctk_u = 0; pyctk_u < ${unroll}; ++pyctk_u) {
      ${index}(pyctk_j + pyctk_u * pyctk_stride);
      const out_type pyctk_value(${map_expr});
      pyctk_acc = REDUCE(pyctk_acc, pyctk_value);
    }
  }
  for (; pyctk_j < n; pyctk_j += pyctk_stride) {
    ${index}(pyctk_j);
    const out_type pyctk_value(${map_expr});
    pyctk_acc = REDUCE(pyctk_acc, pyctk_value);
  }
  pyctk_acc = pyctk_block_reduce(pyctk_acc);
  if (threadIdx.x == 0)
    pyctk_out[blockIdx.x] = pyctk_acc;
}
""")

# How element i is named in map_expr: PyCUDA's size_t, or (range=/slice=) an index of the range.
_INDEX = {False: ("", "const size_t i = "), True: ("long start, long step, ", "const long i = start + step * (long) ")}


@functools.cache
def _wave(kernel: Kernel, device: int) -> int:
    """How many blocks of ``kernel`` (THREADS threads each) ``device`` runs at once: its
    multiprocessors times what one holds, by threads and by registers (allocated per warp
    in units of 256)."""
    registers = driver_api.query_int("cuKernelGetAttribute", cu.CU_FUNC_ATTRIBUTE_NUM_REGS, kernel.handle, device)
    per_warp = -(-registers * 32 // 256) * 256
    threads = driver_api.query_int(
        "cuDeviceGetAttribute", cu.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, device
    )
    file = driver_api.query_int("cuDeviceGetAttribute", cu.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, device)
    per_sm = min(threads // THREADS, file // (per_warp * (THREADS // 32)))
    return max(per_sm, 1) * multiprocessor_count(device)


def temporary(like: Any, shape: tuple[int, ...], dtype: np.dtype, allocator: Any = None) -> Any:
    """A new array of ``shape`` on ``like``'s device, from ``allocator`` (default: ``like``'s)."""
    if allocator is None:
        return like._new(shape, dtype)
    return type(like)(shape, dtype, allocator)


class ReductionKernel:
    """A kernel that maps each element through a C expression and folds the results (PyCUDA's ``ReductionKernel``).

    The kernel maps each index ``i`` of its first array argument through ``map_expr`` and
    folds the values with ``reduce_expr``, in two stages as PyCUDA's: a wave of blocks, then
    one block. It is compiled by NVRTC on first call and kept in the kernel cache.

    Unlike PyCUDA's: an empty input gives ``neutral``; structs need no ``volatile``
    operators (values move between threads by warp shuffles); ``range=``/``slice=``
    take negative steps; other libraries' GPU arrays are arguments too.

    Parameters
    ----------
    dtype_out : data-type
        The type of the fold and of the result; a struct dtype registered with
        :func:`pyctk.tools.get_or_register_dtype` works too.
    neutral : str
        A C expression of ``dtype_out``, the neutral element of ``reduce_expr`` (``"0"``);
        what an empty input gives.
    reduce_expr : str
        A C expression in ``a`` and ``b`` (``"a+b"``), associative and commutative.
    map_expr : str, optional
        A C expression in ``i`` over ``arguments`` (``"x[i]*y[i]"``), converted to
        ``dtype_out``; default ``"in[i]"``, which needs an argument named ``in``.
    arguments : str or list of VectorArg and ScalarArg
        The kernel's parameters (``"float *x, float *y"``): at least one array; the first
        array's size is the number of elements ``n`` (visible in ``map_expr``).
    name : str, optional
        The kernels are ``<name>_stage1`` and ``<name>_stage2``.
    keep : bool, optional
        Accepted for PyCUDA's sake.
    options : list of str, optional
        nvcc's options (None: :data:`pyctk.compiler.DEFAULT_NVCC_FLAGS`).
    preamble : str, optional
        Code before the kernels: helper functions, structs, ``#include`` lines.
    allocator : callable, optional
        Where results and temporaries come from; a call's ``allocator=`` overrides it, and
        without either, the first array's allocator.

    Notes
    -----
    Calling it, ``kernel(*args, stream=None, out=None, allocator=None, kernel_wrapper=None,
    range=None, slice=None)``, returns a 0-d GPUArray of ``dtype_out`` (or ``out``, a
    one-element array of that dtype: a 0-d view such as ``sums[3]`` too), asynchronously on
    ``stream``. ``range`` (a slice or range with a stop) or ``slice`` (of the first array's
    indices) folds those ``i`` only. ``kernel_wrapper(kernel)`` wraps each launch, called
    as ``launch(blocks, threads, stream_handle, *args)``. Array arguments are GPUArrays
    (non-contiguous ones are copied first) or other libraries' contiguous GPU arrays; when
    the first array is another library's, ``out=`` must be a GPUArray to hold the result.

    Examples
    --------
    >>> import numpy as np                                         # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> from pyctk.reduction import ReductionKernel
    >>> dot = ReductionKernel(np.float32, neutral="0", reduce_expr="a+b",
    ...                       map_expr="x[i]*y[i]", arguments="float *x, float *y")
    >>> x = gpuarray.to_gpu(np.arange(100, dtype=np.float32))
    >>> dot(x, x).get()
    array(328350., dtype=float32)
    >>> dot(x, x, range=slice(0, 4)).get()                          # 0 + 1 + 4 + 9
    array(14., dtype=float32)
    >>> largest = ReductionKernel(np.int32, neutral="-2147483647 - 1",
    ...                           reduce_expr="max(a, b)", arguments="const int *in")
    >>> largest(gpuarray.to_gpu(np.array([3, -7, 5], dtype=np.int32))).get()
    array(5, dtype=int32)
    """

    def __init__(
        self,
        dtype_out: Any,
        neutral: Any,
        reduce_expr: str,
        map_expr: str | None = None,
        arguments: str | Sequence[Argument] | None = None,
        name: str = "reduce_kernel",
        keep: bool = False,
        options: Sequence[str] | None = None,
        preamble: str = "",
        allocator: Any = None,
    ) -> None:
        if arguments is None:
            raise ValueError("ReductionKernel needs arguments=, a C parameter list such as 'float *in'")
        self.dtype_out = np.dtype(dtype_out)
        self.arguments = parse_arguments(arguments)
        vectors = [k for k, a in enumerate(self.arguments) if isinstance(a, VectorArg)]
        if not vectors:
            raise ValueError(
                "ReductionKernel needs at least one array (pointer) argument, whose size sets the number of elements"
            )
        if map_expr is None:
            if not any(a.name == "in" and isinstance(a, VectorArg) for a in self.arguments):
                raise ValueError(
                    "without map_expr, ReductionKernel reduces in[i]: name an array "
                    "argument 'in' ('float *in'), or pass map_expr"
                )
            map_expr = "in[i]"
        self.neutral, self.reduce_expr, self.map_expr = str(neutral), reduce_expr, map_expr
        self.name, self.keep, self.options = name, keep, options
        self.preamble, self.allocator = preamble, allocator
        self._first_vector = vectors[0]
        self._is_vector = [isinstance(a, VectorArg) for a in self.arguments]
        self._packers = [scalar_packer(a) for a in self.arguments]
        codes = [struct_code(a) for a in self.arguments]
        self._codes = {False: ["P", *codes, "Q"], True: ["P", *codes, "l", "l", "Q"]}
        self._stage2 = Kernel(self.source(False), f"{name}_stage2", ["P", "P", *codes, "Q"], options)
        self._stage1 = {False: Kernel(self._stage2.source, f"{name}_stage1", self._codes[False], options)}

    def source(self, use_range: bool = False) -> str:
        """The CUDA source of both stages: what NVRTC compiles (pyctk's; PyCUDA has no such method).

        Compiled with ``no_extern_c=True`` (the kernels declare ``extern "C"``), it checks a
        kernel without a GPU.

        Parameters
        ----------
        use_range : bool, optional
            The source of calls with ``range=`` or ``slice=``.

        Returns
        -------
        str

        Examples
        --------
        >>> import numpy as np
        >>> from pyctk.compiler import compile
        >>> from pyctk.reduction import ReductionKernel
        >>> total = ReductionKernel(np.float32, "0", "a+b", arguments="const float *in", name="total")
        >>> ptx = compile(total.source(), no_extern_c=True, arch="sm_80", target="ptx")
        >>> b".entry total_stage1" in ptx, b".entry total_stage2" in ptx
        (True, True)
        """
        dtypes = [self.dtype_out, *(a.dtype for a in self.arguments)]
        complex_ = needs_complex(self.neutral, self.reduce_expr, self.map_expr, self.preamble, dtypes=dtypes)
        common = _COMMON.substitute(
            header=COMPLEX_HEADER if complex_ else "",
            shuffle=warp_shuffle("down"),
            reduce_expr=self.reduce_expr,
            out_type=dtype_to_ctype(self.dtype_out),
            preamble=self.preamble,
            warps=THREADS // 32,
            neutral=self.neutral,
        )
        declared = "".join(f"{a.declarator()}, " for a in self.arguments)
        range_parameters, index = _INDEX[use_range]
        stage1 = self._stage(f"{self.name}_stage1", declared + range_parameters, index, self.map_expr)
        stage2 = self._stage(
            f"{self.name}_stage2",
            f"const out_type *pycuda_reduction_inp, {declared}",
            _INDEX[False][1],
            "pycuda_reduction_inp[i]",
        )
        return common + stage1 + stage2

    def _stage(self, name: str, parameters: str, index: str, map_expr: str) -> str:
        return _STAGE.substitute(
            name=name,
            parameters=parameters,
            index=index,
            map_expr=map_expr,
            neutral=self.neutral,
            threads=THREADS,
            blocks_per_sm=MIN_BLOCKS,
            unroll=UNROLL,
        )

    def _stage1_kernel(self, use_range: bool) -> Kernel:
        kernel = self._stage1.get(use_range)
        if kernel is None:
            kernel = self._stage1[use_range] = Kernel(
                self.source(use_range), f"{self.name}_stage1", self._codes[use_range], self.options
            )
        return kernel

    def __call__(
        self,
        *args: Any,
        stream: Any = None,
        out: Any = None,
        allocator: Any = None,
        kernel_wrapper: Callable[[Any], Any] | None = None,
        range: Any = None,  # noqa: A002
        slice: Any = None,
    ) -> Any:  # noqa: A002
        if range is not None and slice is not None:
            raise TypeError("pass range= or slice=, not both")
        if len(args) < len(self.arguments):
            raise TypeError(f"{self.name}() takes {len(self.arguments)} arguments, got {len(args)}")
        values, keep = [], []  # keep: contiguous copies, alive until launched
        for index, (is_vector, packer) in enumerate(zip(self._is_vector, self._packers)):
            value = args[index]
            if is_vector:
                if isinstance(value, GPUArrayBase):  # through a copy if it has gaps
                    value = value._contiguous()
                    keep.append(value)
                address, size, _ = vector_pointer(
                    value, f"{self.name}() argument {index} ({self.arguments[index].name})"
                )
                if index == self._first_vector:
                    first, n = value, size
                values.append(address)
            else:
                values.append(value if packer is None else packer(value))
        like = first if isinstance(first, GPUArrayBase) else out
        if not isinstance(like, GPUArrayBase):
            raise TypeError(
                f"{self.name}(): the first array argument is a {type(first).__name__}, "
                f"not a GPUArray: pass out= a GPUArray of dtype {self.dtype_out} to hold "
                f"the result (gpuarray.empty((), dtype))"
            )
        allocator = self.allocator if allocator is None else allocator
        if out is None:
            out = temporary(like, (), self.dtype_out, allocator)
        else:
            if out.dtype != self.dtype_out:
                raise ValueError(f"out has dtype {out.dtype}, not the kernel's dtype_out {self.dtype_out}")
            if out.size == 0:
                raise ValueError("out is empty: it must have one element for the result")
        result = vector_pointer(out, "out")[0]

        use_range = range is not None or slice is not None
        if use_range:
            range = builtins.slice(*slice.indices(n)) if slice is not None else range
            if range.stop is None:
                raise ValueError("range= needs its stop, e.g. range=slice(0, n, 1)")
            start, step = range.start or 0, 1 if range.step is None else range.step
            n = len(builtins.range(start, range.stop, step))
            values += [start, step]
        stage1, stage2 = self._stage1_kernel(use_range), self._stage2
        blocks = min(-(-n // SMALL), WAVES * _wave(stage1, like.device)) if n > SMALL else 1
        if kernel_wrapper is not None:
            stage1, stage2 = kernel_wrapper(stage1), kernel_wrapper(stage2)
        handle = stream_handle(stream)
        arguments = values[: len(self.arguments)]
        if n == 0:  # stage 2 over no partials writes the neutral value
            stage2(1, THREADS, handle, result, 0, *arguments, 0)
            return out
        if blocks == 1:
            stage1(1, THREADS, handle, result, *values, n)
            return out
        partials = temporary(like, (blocks,), self.dtype_out, allocator)
        stage1(blocks, THREADS, handle, partials.ptr, *values, n)
        stage2(1, THREADS, handle, result, partials.ptr, *arguments, blocks)
        return out


# ---------------------------------------------------------------------------
# pyctk.gpuarray's reductions: one row each (neutral, reduce_expr, the element i of the
# inputs, the inputs' names); a subset form reads element lookup_tbl[i] instead.
_OPERATIONS = {
    "sum": ("0", "a+b", "in[{i}]", ("in",)),
    "dot": ("0", "a+b", "(out_type) a[{i}] * (out_type) b[{i}]", ("a", "b")),  # no conjugate, as PyCUDA
    "any": ("false", "a || b", "in[{i}] != ({in_type}) 0", ("in",)),
    "all": ("true", "a && b", "in[{i}] != ({in_type}) 0", ("in",)),
    "max": (None, "(a > b || a != a) ? a : b", "in[{i}]", ("in",)),  # NaN wins, as in NumPy's max
    "min": (None, "(a < b || a != a) ? a : b", "in[{i}]", ("in",)),
}
_EXTREME_NAMES = {"max": "maximum", "min": "minimum"}  # NumPy's, for its empty-array message


@functools.cache
def _builtin(
    operation: str, dtype_out: np.dtype, inputs: tuple[np.dtype, ...], subset: np.dtype | None = None
) -> ReductionKernel:
    """The ReductionKernel of ``operation`` over arrays of ``inputs`` (indexed through an
    array of ``subset`` indices, if given), folding in ``dtype_out``."""
    neutral, reduce_expr, element, names = _OPERATIONS[operation]
    if neutral is None:  # max, min
        if dtype_out.kind not in "iuf":
            raise TypeError(
                f"{operation} of {dtype_out} arrays is not supported (PyCUDA's max and min "
                f"take integer and floating-point arrays)"
            )
        neutral = _extreme_neutral(operation, dtype_out)
    if operation in ("sum", "dot") and dtype_out.kind != "c" and any(d.kind == "c" for d in inputs):
        raise TypeError(
            f"{operation} of complex arrays into {dtype_out} would drop the imaginary "
            f"parts: pass a complex dtype, or take .real first"
        )
    # Inputs only read (the partials go to pyctk_out): __restrict__ holds even for dot(x, x),
    # and lets their loads take the read-only path, all UNROLL in flight.
    parameters = [f"const {dtype_to_ctype(d)} *__restrict__ {name}" for name, d in zip(names, inputs)]
    if subset is not None:
        if subset.kind not in "iu":
            raise TypeError(f"subset must be an array of integer indices, not {subset}")
        parameters.insert(0, f"const {dtype_to_ctype(subset)} *__restrict__ lookup_tbl")  # first: it sets n
    map_expr = element.format(i="i" if subset is None else "lookup_tbl[i]", in_type=dtype_to_ctype(inputs[0]))
    name = f"pyctk_{'subset_' if subset is not None else ''}{operation}"
    return ReductionKernel(dtype_out, neutral, reduce_expr, map_expr, ", ".join(parameters), name=name)


def _extreme_neutral(what: str, dtype: np.dtype) -> str:
    """The C literal that no element beats: -inf for a float max, the dtype's least int ..."""
    if dtype.kind == "f":  # (INFINITY needs a header; this is the bits of a double's +inf)
        return f"{'-' if what == 'max' else ''}__longlong_as_double(0x7ff0000000000000LL)"
    info = np.iinfo(dtype)
    value = int(info.min if what == "max" else info.max)
    return f"{value}ULL" if value >= 0 else f"(-{-value - 1}LL - 1)"  # (no literal is negative in C)


@functools.cache
def _sum_dtype(dtype: np.dtype) -> np.dtype:
    return np.sum(np.zeros(1, dtype)).dtype


@functools.cache
def _result_type(a: np.dtype, b: np.dtype) -> np.dtype:
    return np.result_type(a, b)


def _gpu(x: Any, what: str) -> Any:
    if not isinstance(x, GPUArrayBase):
        raise TypeError(
            f"{what} is a {type(x).__name__}, not a GPUArray: make one first "
            f"(gpuarray.to_gpu(x), or gpuarray.asarray(x) for another library's GPU array)"
        )
    return x


def _c_order(x: Any, what: str) -> Any:
    """``x``, or a copy, with its elements in C order (element ``k`` of the flat array is ``k``)."""
    x = _gpu(x, what)
    return x if x.flags.c_contiguous else x.ravel()


def _paired(a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` with their elements in the same memory order, as ``dot`` pairs them."""
    a, b = _gpu(a, "a"), _gpu(b, "b")
    if a.size != b.size:
        raise ValueError(f"dot needs arrays of the same size, not shapes {a.shape} and {b.shape}")
    if a.shape == b.shape and (
        (a.flags.c_contiguous and b.flags.c_contiguous) or (a.flags.f_contiguous and b.flags.f_contiguous)
    ):
        return a, b
    return _c_order(a, "a"), _c_order(b, "b")


def _check_extreme(what: str, x: Any) -> None:
    if what not in _EXTREME_NAMES:
        raise ValueError(f"what must be 'max' or 'min', not {what!r}")
    if x.size == 0:
        raise ValueError(f"zero-size array to reduction operation {_EXTREME_NAMES[what]} which has no identity")


def sum_(x: Any, dtype: Any = None, stream: Any = None, allocator: Any = None) -> Any:
    """The sum of the elements of ``x``: a 0-d array (PyCUDA's ``gpuarray.sum``).

    Unlike PyCUDA's, the default ``dtype`` is NumPy's, ``numpy.sum``'s result type: bool and
    integers narrower than 64 bits sum in int64 (uint64 for unsigned ones). PyCUDA's sums in
    ``x.dtype`` (an int8 sum wraps at 127); pass ``dtype=x.dtype`` for that.

    Parameters
    ----------
    x : GPUArray
    dtype : data-type, optional
        What to sum in and return.
    stream : pyctk.driver.Stream, optional
    allocator : callable, optional
        Where the result's memory comes from; default ``x``'s allocator.

    Returns
    -------
    GPUArray
        0-d; ``.get()`` waits for it and gives the value.

    Raises
    ------
    TypeError
        ``x`` is not a GPUArray, or a complex ``x`` summed into a real ``dtype``.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> x = gpuarray.to_gpu(np.arange(5, dtype=np.int8))
    >>> gpuarray.sum(x).get(), gpuarray.sum(x, dtype=np.int8).get()
    (array(10), array(10, dtype=int8))
    """
    x = _gpu(x, "x")
    dtype_out = _sum_dtype(x.dtype) if dtype is None else np.dtype(dtype)
    return _builtin("sum", dtype_out, (x.dtype,))(x, stream=stream, allocator=allocator)


def subset_sum(subset: Any, a: Any, dtype: Any = None, stream: Any = None, allocator: Any = None) -> Any:
    """The sum of the elements of ``a`` at ``subset``: a 0-d array (PyCUDA's ``gpuarray.subset_sum``).

    Unlike PyCUDA's, the default ``dtype`` is NumPy's, as for :func:`sum`.

    Parameters
    ----------
    subset : GPUArray
        Integer indices into ``a``'s elements in C order, not checked against its size.
    a : GPUArray
    dtype : data-type, optional
    stream : pyctk.driver.Stream, optional
    allocator : callable, optional

    Returns
    -------
    GPUArray
        0-d.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([1.0, 2.0, 4.0, 8.0]))
    >>> subset = gpuarray.to_gpu(np.array([0, 3], dtype=np.int32))
    >>> gpuarray.subset_sum(subset, a).get()
    array(9.)
    >>> gpuarray.subset_dot(subset, a, a).get()                     # 1 + 64
    array(65.)
    >>> gpuarray.subset_max(subset, a).get(), gpuarray.subset_min(subset, a).get()
    (array(8.), array(1.))
    """
    a = _c_order(a, "a")
    dtype_out = _sum_dtype(a.dtype) if dtype is None else np.dtype(dtype)
    subset = _gpu(subset, "subset")
    return _builtin("sum", dtype_out, (a.dtype,), subset.dtype)(subset, a, stream=stream, allocator=allocator)


def dot(a: Any, b: Any, dtype: Any = None, stream: Any = None, allocator: Any = None) -> Any:
    """The sum of ``a * b`` over their elements: a 0-d array (PyCUDA's ``gpuarray.dot``).

    As PyCUDA's, no complex conjugate is taken. Unlike PyCUDA's, the default ``dtype`` is
    NumPy's ``result_type(a, b)``, and arrays of different layouts pair their elements in C
    order.

    Parameters
    ----------
    a, b : GPUArray
        Of the same size.
    dtype : data-type, optional
        What the products are taken and summed in.
    stream : pyctk.driver.Stream, optional
    allocator : callable, optional

    Returns
    -------
    GPUArray
        0-d.

    Raises
    ------
    ValueError
        ``a`` and ``b`` differ in size.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> x = gpuarray.to_gpu(np.arange(4.0))
    >>> gpuarray.dot(x, x).get()
    array(14.)
    """
    a, b = _paired(a, b)
    dtype_out = _result_type(a.dtype, b.dtype) if dtype is None else np.dtype(dtype)
    return _builtin("dot", dtype_out, (a.dtype, b.dtype))(a, b, stream=stream, allocator=allocator)


def subset_dot(subset: Any, a: Any, b: Any, dtype: Any = None, stream: Any = None, allocator: Any = None) -> Any:
    """:func:`dot` over the elements at ``subset``: a 0-d array (PyCUDA's ``gpuarray.subset_dot``).

    Unlike PyCUDA's, the default ``dtype`` is NumPy's ``result_type(a, b)``. See
    :func:`subset_sum` for an example.

    Parameters
    ----------
    subset : GPUArray
        Integer indices into both arrays' elements in C order, not checked.
    a, b : GPUArray
    dtype : data-type, optional
    stream : pyctk.driver.Stream, optional
    allocator : callable, optional

    Returns
    -------
    GPUArray
        0-d.
    """
    a, b = _c_order(a, "a"), _c_order(b, "b")
    dtype_out = _result_type(a.dtype, b.dtype) if dtype is None else np.dtype(dtype)
    subset = _gpu(subset, "subset")
    kernel = _builtin("dot", dtype_out, (a.dtype, b.dtype), subset.dtype)
    return kernel(subset, a, b, stream=stream, allocator=allocator)


def extreme(what: str, x: Any, stream: Any = None) -> Any:
    """The largest (``what="max"``) or smallest (``"min"``) element of ``x``: a 0-d array of
    its dtype (PyCUDA's ``gpuarray.max``/``min``). NaN if any element is NaN, as NumPy's;
    TypeError for bool and complex arrays, as PyCUDA; ValueError for an empty one, as NumPy.
    """
    x = _gpu(x, "x")
    _check_extreme(what, x)
    return _builtin(what, x.dtype, (x.dtype,))(x, stream=stream)


def subset_extreme(what: str, subset: Any, a: Any, stream: Any = None) -> Any:
    """``extreme`` over ``a.flat[subset]`` (PyCUDA's ``subset_max``/``subset_min``)."""
    subset = _gpu(subset, "subset")
    _check_extreme(what, subset)
    a = _c_order(a, "a")
    return _builtin(what, a.dtype, (a.dtype,), subset.dtype)(subset, a, stream=stream)


def max_(x: Any, stream: Any = None) -> Any:
    """The largest element of ``x``: a 0-d array of its dtype (PyCUDA's ``gpuarray.max``).

    Unlike PyCUDA's: NaN if any element is NaN, as NumPy's ``max``, and ValueError for an
    empty array, as NumPy's.

    Parameters
    ----------
    x : GPUArray
        Of an integer or floating-point dtype.
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray
        0-d.

    Raises
    ------
    TypeError
        A bool or complex ``x``, as PyCUDA's.
    ValueError
        An empty ``x``.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([3.0, -1.0, 2.0]))
    >>> gpuarray.max(a).get(), gpuarray.min(a).get()
    (array(3.), array(-1.))
    >>> gpuarray.max(gpuarray.to_gpu(np.array([1.0, np.nan]))).get()
    array(nan)
    """
    return extreme("max", x, stream)


def min_(x: Any, stream: Any = None) -> Any:
    """The smallest element of ``x``: a 0-d array of its dtype (PyCUDA's ``gpuarray.min``).

    Unlike PyCUDA's: NaN if any element is NaN, and ValueError for an empty array, as in
    NumPy. See :func:`max`.

    Parameters
    ----------
    x : GPUArray
        Of an integer or floating-point dtype.
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray
        0-d.
    """
    return extreme("min", x, stream)


def subset_max(subset: Any, a: Any, stream: Any = None) -> Any:
    """The largest element of ``a`` at ``subset``: a 0-d array (PyCUDA's ``gpuarray.subset_max``).

    Unlike PyCUDA's, NaN wins and an empty ``subset`` raises ValueError, as for :func:`max`.
    See :func:`subset_sum` for an example.

    Parameters
    ----------
    subset : GPUArray
        Integer indices into ``a``'s elements in C order, not checked.
    a : GPUArray
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray
        0-d.
    """
    return subset_extreme("max", subset, a, stream)


def subset_min(subset: Any, a: Any, stream: Any = None) -> Any:
    """The smallest element of ``a`` at ``subset``: a 0-d array (PyCUDA's ``gpuarray.subset_min``).

    Unlike PyCUDA's, NaN wins and an empty ``subset`` raises ValueError, as for :func:`min`.

    Parameters
    ----------
    subset : GPUArray
        Integer indices into ``a``'s elements in C order, not checked.
    a : GPUArray
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray
        0-d.
    """
    return subset_extreme("min", subset, a, stream)


def any_(x: Any, stream: Any = None, allocator: Any = None) -> Any:
    """Whether any element of ``x`` is nonzero (NaN counts): a 0-d bool array (PyCUDA's ``gpuarray.any``).

    As PyCUDA's; unlike PyCUDA's, ``x`` may have any layout.

    Parameters
    ----------
    x : GPUArray
    stream : pyctk.driver.Stream, optional
    allocator : callable, optional

    Returns
    -------
    GPUArray
        0-d, bool.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> gpuarray.any(gpuarray.zeros(3)).get(), gpuarray.all(gpuarray.zeros(0)).get()
    (array(False), array(True))
    """
    x = _gpu(x, "x")
    return _builtin("any", np.dtype(bool), (x.dtype,))(x, stream=stream, allocator=allocator)


def all_(x: Any, stream: Any = None, allocator: Any = None) -> Any:
    """Whether every element of ``x`` is nonzero: a 0-d bool array (PyCUDA's ``gpuarray.all``).

    True for an empty array, as NumPy's; unlike PyCUDA's, ``x`` may have any layout. See
    :func:`any`.

    Parameters
    ----------
    x : GPUArray
    stream : pyctk.driver.Stream, optional
    allocator : callable, optional

    Returns
    -------
    GPUArray
        0-d, bool.
    """
    x = _gpu(x, "x")
    return _builtin("all", np.dtype(bool), (x.dtype,))(x, stream=stream, allocator=allocator)


# PyCUDA's factories (pycuda.reduction): the same kernels, each made once.
def get_sum_kernel(dtype_out: Any, dtype_in: Any) -> ReductionKernel:
    """The :class:`ReductionKernel` of :func:`pyctk.gpuarray.sum` (PyCUDA's ``get_sum_kernel``).

    As PyCUDA's: ``dtype_out=None`` sums in ``dtype_in``. Made once per process for each
    pair of dtypes.

    Parameters
    ----------
    dtype_out : data-type or None
    dtype_in : data-type

    Returns
    -------
    ReductionKernel
        Called as ``kernel(x)``: a 0-d GPUArray.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> from pyctk.reduction import get_sum_kernel
    >>> kernel = get_sum_kernel(np.float64, np.float32)
    >>> kernel(gpuarray.to_gpu(np.ones(10, dtype=np.float32))).get()
    array(10.)
    >>> kernel is get_sum_kernel(np.float64, np.float32)
    True
    """
    return _builtin("sum", np.dtype(dtype_in if dtype_out is None else dtype_out), (np.dtype(dtype_in),))


def get_subset_sum_kernel(dtype_out: Any, dtype_subset: Any, dtype_in: Any) -> ReductionKernel:
    """The :class:`ReductionKernel` of :func:`pyctk.gpuarray.subset_sum` (PyCUDA's ``get_subset_sum_kernel``).

    Parameters
    ----------
    dtype_out : data-type or None
        None: ``dtype_in``.
    dtype_subset, dtype_in : data-type

    Returns
    -------
    ReductionKernel
        Called as ``kernel(subset, in)``.
    """
    return _builtin(
        "sum", np.dtype(dtype_in if dtype_out is None else dtype_out), (np.dtype(dtype_in),), np.dtype(dtype_subset)
    )


def get_dot_kernel(dtype_out: Any, dtype_a: Any, dtype_b: Any) -> ReductionKernel:
    """The :class:`ReductionKernel` of :func:`pyctk.gpuarray.dot` (PyCUDA's ``get_dot_kernel``).

    Parameters
    ----------
    dtype_out, dtype_a, dtype_b : data-type

    Returns
    -------
    ReductionKernel
        Called as ``kernel(a, b)``.
    """
    return _builtin("dot", np.dtype(dtype_out), (np.dtype(dtype_a), np.dtype(dtype_b)))


def get_subset_dot_kernel(
    dtype_out: Any, dtype_subset: Any, dtype_a: Any = None, dtype_b: Any = None
) -> ReductionKernel:
    """The :class:`ReductionKernel` of :func:`pyctk.gpuarray.subset_dot` (PyCUDA's ``get_subset_dot_kernel``).

    Missing dtypes are filled in as PyCUDA's are: ``dtype_a`` from ``dtype_out``, ``dtype_b``
    from ``dtype_a``, ``dtype_out`` from ``dtype_a``.

    Parameters
    ----------
    dtype_out : data-type or None
    dtype_subset : data-type
    dtype_a, dtype_b : data-type, optional

    Returns
    -------
    ReductionKernel
        Called as ``kernel(subset, a, b)``.
    """
    dtype_a = dtype_out if dtype_a is None else dtype_a
    dtype_b = dtype_a if dtype_b is None else dtype_b
    dtype_out = dtype_a if dtype_out is None else dtype_out
    return _builtin("dot", np.dtype(dtype_out), (np.dtype(dtype_a), np.dtype(dtype_b)), np.dtype(dtype_subset))


def get_any_kernel(dtype_out: Any, dtype_in: Any) -> ReductionKernel:
    """The :class:`ReductionKernel` of :func:`pyctk.gpuarray.any` (PyCUDA's ``get_any_kernel``).

    Parameters
    ----------
    dtype_out : data-type or None
        bool, as :func:`pyctk.gpuarray.any` asks; None is bool too.
    dtype_in : data-type

    Returns
    -------
    ReductionKernel
        Called as ``kernel(x)``.
    """
    return _builtin("any", np.dtype(bool if dtype_out is None else dtype_out), (np.dtype(dtype_in),))


def get_all_kernel(dtype_out: Any, dtype_in: Any) -> ReductionKernel:
    """The :class:`ReductionKernel` of :func:`pyctk.gpuarray.all` (PyCUDA's ``get_all_kernel``).

    Parameters
    ----------
    dtype_out : data-type or None
        bool, as :func:`pyctk.gpuarray.all` asks; None is bool too.
    dtype_in : data-type

    Returns
    -------
    ReductionKernel
        Called as ``kernel(x)``.
    """
    return _builtin("all", np.dtype(bool if dtype_out is None else dtype_out), (np.dtype(dtype_in),))


def get_minmax_kernel(what: str, dtype: Any) -> ReductionKernel:
    """The :class:`ReductionKernel` of :func:`pyctk.gpuarray.max` or :func:`~pyctk.gpuarray.min`
    (PyCUDA's ``get_minmax_kernel``).

    Unlike PyCUDA's, its fold lets NaN win, as NumPy's ``max`` does.

    Parameters
    ----------
    what : {"max", "min"}
    dtype : data-type
        Of the input and the result: an integer or floating-point dtype.

    Returns
    -------
    ReductionKernel
        Called as ``kernel(x)``.

    Raises
    ------
    TypeError
        A bool or complex ``dtype``.
    """
    return _builtin(what, np.dtype(dtype), (np.dtype(dtype),))


def get_subset_minmax_kernel(what: str, dtype: Any, dtype_subset: Any) -> ReductionKernel:
    """The :class:`ReductionKernel` of :func:`pyctk.gpuarray.subset_max` or :func:`~pyctk.gpuarray.subset_min`
    (PyCUDA's ``get_subset_minmax_kernel``).

    Parameters
    ----------
    what : {"max", "min"}
    dtype, dtype_subset : data-type

    Returns
    -------
    ReductionKernel
        Called as ``kernel(subset, in)``.
    """
    return _builtin(what, np.dtype(dtype), (np.dtype(dtype),), np.dtype(dtype_subset))
