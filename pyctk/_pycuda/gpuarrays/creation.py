"""Making GPUArrays: from host data, filled, like another, ranges, joins and gathers
(PyCUDA's ``to_gpu``, ``empty``, ``zeros``, ``arange``, ``concatenate``, ``take`` ...), and
from other libraries' GPU arrays without a copy (``asarray``, ``from_dlpack``).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

from ..._arrays import interop
from ..kernels.c_types import dtype_to_ctype
from .array import GPUArray, wrap
from .launching import Kernel, geometry, stream_handle


def to_gpu(ary: Any, allocator: Any = None) -> GPUArray:
    """A new GPUArray with the contents of host array ``ary`` (synchronous).

    >>> a = to_gpu(np.arange(3.0))      # doctest: +SKIP
    """
    ary = np.asarray(ary)
    result = empty(ary.shape, ary.dtype, allocator, order=_order(ary))
    result.set(ary)
    return result


def to_gpu_async(ary: Any, allocator: Any = None, stream: Any = None) -> GPUArray:
    """``to_gpu`` queued on ``stream``: asynchronous when ``ary`` is page-locked."""
    ary = np.asarray(ary)
    result = empty(ary.shape, ary.dtype, allocator, order=_order(ary))
    result.set_async(ary, stream)
    return result


def _order(ary: np.ndarray) -> str:
    return "F" if ary.ndim > 1 and ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"


def empty(shape: Any, dtype: Any = np.float64, allocator: Any = None, order: str = "C") -> GPUArray:
    """A new uninitialised array (``GPUArray(shape, dtype, allocator, order=order)``)."""
    return GPUArray(shape, dtype, allocator, order=order)


def zeros(shape: Any, dtype: Any = np.float64, allocator: Any = None, order: str = "C") -> GPUArray:
    """A new array of zeros (float64 by default, as PyCUDA and NumPy)."""
    return empty(shape, dtype, allocator, order).fill(0)


def ones(shape: Any, dtype: Any = np.float64, allocator: Any = None, order: str = "C") -> GPUArray:
    """A new array of ones."""
    return empty(shape, dtype, allocator, order).fill(1)


def full(shape: Any, fill_value: Any, dtype: Any = None, allocator: Any = None, order: str = "C") -> GPUArray:
    """A new array of ``fill_value`` (dtype: NumPy's for the value, unless given)."""
    dtype = np.array(fill_value).dtype if dtype is None else dtype
    return empty(shape, dtype, allocator, order).fill(fill_value)


def empty_like(other_ary: GPUArray, dtype: Any = None, order: str = "K") -> GPUArray:
    """A new array of ``other_ary``'s shape (and dtype, allocator), laid out as ``order`` says:
    "K" keeps its axis order, "A" is F for a Fortran array else C, "C", "F"."""
    if order == "A":
        order = "F" if other_ary.flags.f_contiguous and not other_ary.flags.c_contiguous else "C"
    if order not in ("K", "C", "F"):
        raise ValueError(f"order must be one of 'K', 'A', 'C', 'F', not {order!r}")
    return other_ary._new_like_me(dtype, order)


def zeros_like(other_ary: GPUArray, dtype: Any = None, order: str = "K") -> GPUArray:
    """``empty_like`` filled with zeros."""
    return empty_like(other_ary, dtype, order).fill(0)


def ones_like(other_ary: GPUArray, dtype: Any = None, order: str = "K") -> GPUArray:
    """``empty_like`` filled with ones."""
    return empty_like(other_ary, dtype, order).fill(1)


@functools.lru_cache(maxsize=None)
def _arange_kernel(dtype: np.dtype) -> Kernel:
    ctype, name = dtype_to_ctype(dtype), f"pyctk_arange_{dtype.str[1:]}"
    source = (f'extern "C" __global__ void {name}({ctype} *z, {ctype} start, {ctype} step, unsigned long n)\n'
              f"{{\n  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;\n"
              f"       i += (size_t) gridDim.x * blockDim.x)\n"
              f"    z[i] = start + ({ctype}) i * step;\n}}\n")
    return Kernel(source, name, ["P", dtype.char, dtype.char, "Q"])


def arange(*args: Any, **kwargs: Any) -> GPUArray:
    """Evenly spaced values in ``[start, stop)`` (NumPy's ``arange``): ``arange(stop)``,
    ``arange(start, stop[, step][, dtype])``, or by keyword; ``stream=`` too.

    >>> arange(0, 1, 0.25, dtype=np.float32).get()      # doctest: +SKIP
    array([0.  , 0.25, 0.5 , 0.75], dtype=float32)
    """
    stream = kwargs.pop("stream", None)
    allocator = kwargs.pop("allocator", None)
    if args and isinstance(args[-1], (np.dtype, type)) and not isinstance(args[-1], (int, float)):
        kwargs.setdefault("dtype", args[-1])
        args = args[:-1]
    names = ("start", "stop", "step")
    if len(args) > 3:
        raise TypeError(f"arange takes at most start, stop, step and dtype; got {len(args)} positional arguments")
    values = dict(zip(names if len(args) > 1 else ("stop",), args))
    for name in [*names, "dtype"]:
        if name in kwargs:
            if name in values:
                raise TypeError(f"arange got {name} twice")
            values[name] = kwargs.pop(name)
    if kwargs:
        raise TypeError(f"arange got unexpected keyword arguments: {', '.join(sorted(kwargs))}")
    if values.get("stop") is None:
        if values.get("start") is None:
            raise ValueError("arange needs stop (arange(stop) or arange(start, stop, step))")
        values["start"], values["stop"] = 0, values["start"]
    start, stop, step = values.get("start", 0) or 0, values["stop"], values.get("step", 1)
    if step is None:
        step = 1
    if step == 0:
        raise ValueError("arange: step must not be zero")
    dtype = values.get("dtype")
    dtype = np.arange(start, start + step, step).dtype if dtype is None else np.dtype(dtype)
    size = max(0, math.ceil((stop - start) / step))
    result = empty((size,), dtype, allocator)
    if size:
        blocks, threads = geometry(size)
        _arange_kernel(dtype)(blocks, threads, stream_handle(stream), result.ptr, start, step, size)
    return result


def concatenate(arrays: Sequence[GPUArray], axis: int = 0, allocator: Any = None) -> GPUArray:
    """The arrays joined along ``axis`` (NumPy's rules: equal shapes elsewhere; NumPy's dtype)."""
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    first = arrays[0]
    if not first.ndim:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, first.ndim)
    for a in arrays[1:]:
        if a.ndim != first.ndim or any(s != t for k, (s, t) in enumerate(zip(a.shape, first.shape)) if k != axis):
            raise ValueError(f"all the input array dimensions except for the concatenation axis must "
                             f"match exactly, but {first.shape} and {a.shape} differ")
    dtype = np.result_type(*(a.dtype for a in arrays))
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    result = GPUArray(shape, dtype, allocator or first.allocator)
    start = 0
    for a in arrays:
        part = result[(slice(None),) * axis + (slice(start, start + a.shape[axis]),)]
        part._assign(a if a.dtype == dtype else a.astype(dtype), 0)
        start += a.shape[axis]
    return result


def stack(arrays: Sequence[GPUArray], axis: int = 0, allocator: Any = None) -> GPUArray:
    """The arrays (all of one shape) joined along a new ``axis``."""
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    if any(a.shape != arrays[0].shape for a in arrays):
        raise ValueError("all input arrays must have the same shape")
    axis = _axis(axis, arrays[0].ndim + 1)
    expanded = [a[(slice(None),) * axis + (None,)] for a in arrays]
    return concatenate(expanded, axis, allocator)


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim) if hasattr(np, "exceptions") else \
            IndexError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def transpose(a: GPUArray, axes: Sequence[int] | None = None) -> GPUArray:
    """``a.transpose(axes)``."""
    return a.transpose(axes)


def reshape(a: GPUArray, *shape: Any, **kwargs: Any) -> GPUArray:
    """``a.reshape(*shape, order=...)``."""
    return a.reshape(*shape, **kwargs)


@functools.lru_cache(maxsize=None)
def _gather_kernel(itemsize: int, index: np.dtype) -> Kernel:
    """``out[i] = src[idx[i]]`` for items of ``itemsize`` bytes (scatter: ``dst[idx[i]] = src[i]``)."""
    name = f"pyctk_take_{itemsize}_{index.str[1:]}"
    item = f"struct alignas({min(8, itemsize & -itemsize)}) item {{ unsigned char b[{itemsize}]; }};\n"
    source = (item + f'extern "C" __global__ void {name}(item *dst, const item *src, const '
              f"{dtype_to_ctype(index)} *idx, unsigned long n, int scatter)\n{{\n"
              f"  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;\n"
              f"       i += (size_t) gridDim.x * blockDim.x) {{\n"
              f"    if (scatter) dst[idx[i]] = src[i]; else dst[i] = src[idx[i]];\n  }}\n}}\n")
    return Kernel(source, name, ["P", "P", "P", "Q", "i"])


def _indexed_copy(dst: GPUArray, src: GPUArray, indices: GPUArray, scatter: bool, stream: Any) -> None:
    if indices.dtype.kind not in "iu":
        raise TypeError(f"indices must be an integer array, not {indices.dtype}")
    n = indices.size
    if n:
        blocks, threads = geometry(n)
        _gather_kernel(src.itemsize, indices.dtype)(blocks, threads, stream_handle(stream), dst.ptr,
                                                    src.ptr, indices._contiguous().ptr, n, int(scatter))


def take(a: GPUArray, indices: GPUArray, out: GPUArray | None = None, stream: Any = None) -> GPUArray:
    """``a.ravel()[indices]``: the elements of ``a`` at the (1-D, integer) ``indices``.
    Indices must lie in ``[0, a.size)``: as in PyCUDA, they are not checked."""
    a, indices = asarray(a)._contiguous(), asarray(indices)
    if out is None:
        out = a._new(indices.shape, a.dtype)
    _indexed_copy(out, a, indices, False, stream)
    return out


def multi_take(arrays: Sequence[GPUArray], indices: GPUArray, out: Sequence[GPUArray] | None = None,
               stream: Any = None) -> list[GPUArray]:
    """``take`` of each array with the same ``indices``."""
    outs = out if out is not None else [None] * len(arrays)
    return [take(a, indices, o, stream) for a, o in zip(arrays, outs)]


def multi_put(arrays: Sequence[GPUArray], dest_indices: GPUArray, dest_shape: Any = None,
              out: Sequence[GPUArray] | None = None, stream: Any = None) -> list[GPUArray]:
    """``out[k][dest_indices[i]] = arrays[k][i]`` for every ``k`` and ``i`` (new ``out`` arrays
    of ``dest_shape`` are zero-filled first)."""
    dest_indices = asarray(dest_indices)
    if out is None:
        if dest_shape is None:
            raise ValueError("multi_put needs dest_shape or out")
        out = [zeros(dest_shape, a.dtype, a.allocator) for a in arrays]
    for a, o in zip(arrays, out):
        if not o.flags.forc:
            raise RuntimeError("multi_put writes contiguous arrays only")
        _indexed_copy(o, asarray(a)._contiguous(), dest_indices, True, stream)
    return list(out)


def multi_take_put(arrays: Sequence[GPUArray], dest_indices: GPUArray, src_indices: GPUArray,
                   dest_shape: Any = None, out: Sequence[GPUArray] | None = None, stream: Any = None,
                   src_offsets: Any = None) -> list[GPUArray]:
    """``out[k][dest_indices[i]] = arrays[k][src_indices[i]]`` (PyCUDA's; ``src_offsets`` unsupported)."""
    if src_offsets is not None:
        raise NotImplementedError("multi_take_put's src_offsets is not supported: offset src_indices instead")
    taken = multi_take(arrays, src_indices, stream=stream)
    return multi_put(taken, dest_indices, dest_shape, out, stream)


def asarray(x: Any) -> GPUArray:
    """``x`` as a GPUArray: itself if one, another library's GPU array without a copy (CuPy,
    PyTorch, JAX, ``pyctk.DeviceArray``: the CUDA Array Interface or DLPack), host data copied."""
    if isinstance(x, GPUArray):
        return x
    operand = interop.device_operand(x)
    if operand is None:
        return to_gpu(x)
    return wrap(operand)


def from_dlpack(x: Any) -> GPUArray:
    """A GPUArray over ``x``'s GPU memory, through DLPack (the array API's ``from_dlpack``);
    TypeError for host data (use ``to_gpu``)."""
    operand = interop.dlpack_operand(x)
    if operand is None:
        raise TypeError(f"{type(x).__name__} is host data: copy it with gpuarray.to_gpu(x)")
    return wrap(operand)
