"""Making GPUArrays: from host data, filled, like another, ranges, joins and gathers
(PyCUDA's ``to_gpu``, ``empty``, ``zeros``, ``arange``, ``concatenate``, ``take`` ...), and
from other libraries' GPU arrays without a copy (``asarray``, ``from_dlpack``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._arrays import interop
from ..kernels.c_types import dtype_to_ctype
from .array import GPUArray, wrap
from .launching import Kernel, geometry, stream_handle


def to_gpu(ary: Any, allocator: Any = None) -> GPUArray:
    """A new GPUArray with the contents of the host array ``ary``, as PyCUDA's ``to_gpu``.

    The copy is synchronous. The array keeps ``ary``'s layout: C order, or Fortran order for
    a Fortran-ordered ``ary``. Unlike PyCUDA's, ``ary`` may be any array_like (a list too).

    Parameters
    ----------
    ary : array_like
    allocator : callable, optional
        ``allocator(nbytes)`` gives the memory (see :class:`GPUArray`); default
        :func:`pyctk.driver.mem_alloc`.

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> gpuarray.to_gpu(np.arange(3.0))
    array([0., 1., 2.])
    >>> gpuarray.to_gpu(np.asfortranarray(np.ones((2, 2)))).flags.f_contiguous
    True
    """
    ary = np.asarray(ary)
    result = empty(ary.shape, ary.dtype, allocator, order=_order(ary))
    result.set(ary)
    return result


def to_gpu_async(ary: Any, allocator: Any = None, stream: Any = None) -> GPUArray:
    """:func:`to_gpu` queued on ``stream``, as PyCUDA's ``to_gpu_async``: asynchronous when ``ary`` is page-locked.

    Keep ``ary`` unchanged until the stream is done with it.

    Parameters
    ----------
    ary : array_like
        Page-locked (:func:`pyctk.driver.pagelocked_empty`) for the copy to overlap other work.
    allocator : callable, optional
        ``allocator(nbytes)`` gives the memory (see :class:`GPUArray`); default
        :func:`pyctk.driver.mem_alloc`.
    stream : pyctk.driver.Stream, optional
        Default the legacy default stream.

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> from pyctk import gpuarray
    >>> host = cuda.pagelocked_zeros(3, np.float32)
    >>> stream = cuda.Stream()
    >>> a = gpuarray.to_gpu_async(host, stream=stream)
    >>> stream.synchronize()
    >>> a.get()
    array([0., 0., 0.], dtype=float32)
    """
    ary = np.asarray(ary)
    result = empty(ary.shape, ary.dtype, allocator, order=_order(ary))
    result.set_async(ary, stream)
    return result


def _order(ary: np.ndarray) -> str:
    return "F" if ary.ndim > 1 and ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"


def empty(shape: Any, dtype: Any = np.float64, allocator: Any = None, order: str = "C") -> GPUArray:
    """A new array, its elements not set: ``GPUArray(shape, dtype, allocator, order=order)``.

    As PyCUDA's ``empty``, except that ``dtype`` defaults to float64, as NumPy's does.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type, optional
    allocator : callable, optional
        ``allocator(nbytes)`` gives the memory (see :class:`GPUArray`); default
        :func:`pyctk.driver.mem_alloc`.
    order : {"C", "F"}, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.empty((2, 3), np.float32, order="F")
    >>> a.shape, a.strides
    ((2, 3), (4, 8))
    """
    return GPUArray(shape, dtype, allocator, order=order)


def zeros(shape: Any, dtype: Any = np.float64, allocator: Any = None, order: str = "C") -> GPUArray:
    """A new array of zeros, as PyCUDA's ``zeros`` (float64 by default, as in NumPy).

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type, optional
    allocator : callable, optional
        ``allocator(nbytes)`` gives the memory (see :class:`GPUArray`); default
        :func:`pyctk.driver.mem_alloc`.
    order : {"C", "F"}, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> gpuarray.zeros(3).get()
    array([0., 0., 0.])
    >>> gpuarray.ones((2, 2), np.int32).get()
    array([[1, 1],
           [1, 1]], dtype=int32)
    """
    return empty(shape, dtype, allocator, order).fill(0)


def ones(shape: Any, dtype: Any = np.float64, allocator: Any = None, order: str = "C") -> GPUArray:
    """A new array of ones, as PyCUDA's ``ones`` (float64 by default). See :func:`zeros`.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type, optional
    allocator : callable, optional
        ``allocator(nbytes)`` gives the memory (see :class:`GPUArray`); default
        :func:`pyctk.driver.mem_alloc`.
    order : {"C", "F"}, optional

    Returns
    -------
    GPUArray
    """
    return empty(shape, dtype, allocator, order).fill(1)


def full(shape: Any, fill_value: Any, dtype: Any = None, allocator: Any = None, order: str = "C") -> GPUArray:
    """A new array of ``fill_value``, as NumPy's ``full``; pyctk's (PyCUDA has no ``full``).

    Parameters
    ----------
    shape : int or tuple of int
    fill_value : scalar
    dtype : data-type, optional
        Default NumPy's dtype for ``fill_value`` (int64 for a Python int).
    allocator : callable, optional
        ``allocator(nbytes)`` gives the memory (see :class:`GPUArray`); default
        :func:`pyctk.driver.mem_alloc`.
    order : {"C", "F"}, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> gpuarray.full(3, 7).get()
    array([7, 7, 7])
    >>> gpuarray.full((2,), 0.5, np.float32).get()
    array([0.5, 0.5], dtype=float32)
    """
    dtype = np.array(fill_value).dtype if dtype is None else dtype
    return empty(shape, dtype, allocator, order).fill(fill_value)


def empty_like(other_ary: GPUArray, dtype: Any = None, order: str = "K") -> GPUArray:
    """A new array of ``other_ary``'s shape, dtype and allocator, its elements not set, as PyCUDA's ``empty_like``.

    Parameters
    ----------
    other_ary : GPUArray
    dtype : data-type, optional
        Default ``other_ary``'s.
    order : {"K", "A", "C", "F"}, optional
        ``"K"`` keeps ``other_ary``'s axis order (a transposed view gives a Fortran-ordered
        array); ``"A"`` is Fortran order for a Fortran-contiguous ``other_ary``, else C.

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.zeros((2, 3), np.float32).T
    >>> b = gpuarray.empty_like(a)
    >>> b.shape, b.dtype, b.flags.f_contiguous
    ((3, 2), dtype('float32'), True)
    >>> gpuarray.zeros_like(a, dtype=np.int8, order="C").strides
    (2, 1)
    """
    if order == "A":
        order = "F" if other_ary.flags.f_contiguous and not other_ary.flags.c_contiguous else "C"
    if order not in ("K", "C", "F"):
        raise ValueError(f"order must be one of 'K', 'A', 'C', 'F', not {order!r}")
    return other_ary._new_like_me(dtype, order)


def zeros_like(other_ary: GPUArray, dtype: Any = None, order: str = "K") -> GPUArray:
    """:func:`empty_like` filled with zeros, as PyCUDA's ``zeros_like``.

    Parameters
    ----------
    other_ary : GPUArray
    dtype : data-type, optional
    order : {"K", "A", "C", "F"}, optional
        As for :func:`empty_like`.

    Returns
    -------
    GPUArray
    """
    return empty_like(other_ary, dtype, order).fill(0)


def ones_like(other_ary: GPUArray, dtype: Any = None, order: str = "K") -> GPUArray:
    """:func:`empty_like` filled with ones, as PyCUDA's ``ones_like``.

    Parameters
    ----------
    other_ary : GPUArray
    dtype : data-type, optional
    order : {"K", "A", "C", "F"}, optional
        As for :func:`empty_like`.

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> gpuarray.ones_like(gpuarray.zeros(2, np.int32)).get()
    array([1, 1], dtype=int32)
    """
    return empty_like(other_ary, dtype, order).fill(1)


@functools.cache
def _arange_kernel(dtype: np.dtype) -> Kernel:
    ctype, name = dtype_to_ctype(dtype), f"pyctk_arange_{dtype.str[1:]}"
    source = (
        f'extern "C" __global__ void {name}({ctype} *z, {ctype} start, {ctype} step, unsigned long n)\n'
        f"{{\n  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;\n"
        f"       i += (size_t) gridDim.x * blockDim.x)\n"
        f"    z[i] = start + ({ctype}) i * step;\n}}\n"
    )
    return Kernel(source, name, ["P", dtype.char, dtype.char, "Q"])


def arange(*args: Any, **kwargs: Any) -> GPUArray:
    """Evenly spaced values in ``[start, stop)``, as PyCUDA's ``arange``.

    Called as NumPy's ``arange`` is: ``arange(stop)``, ``arange(start, stop[, step][, dtype])``,
    or by keyword. The length is ``ceil((stop - start) / step)``, as in PyCUDA. Unlike
    PyCUDA's, ``allocator=`` is taken too.

    Parameters
    ----------
    start : number, optional
        Default 0.
    stop : number
    step : number, optional
        Default 1; not 0.
    dtype : data-type, optional
        Default NumPy's dtype of ``arange(start, start + step, step)``.
    stream : pyctk.driver.Stream, optional
    allocator : callable, optional

    Returns
    -------
    GPUArray

    Raises
    ------
    ValueError
        No ``stop``, or ``step`` is 0.
    TypeError
        More than three numbers, or an unknown keyword.

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> gpuarray.arange(5).get()
    array([0, 1, 2, 3, 4])
    >>> gpuarray.arange(0, 1, 0.25, dtype=np.float32).get()
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
    """The arrays joined along an existing axis, as PyCUDA's ``concatenate``.

    Unlike PyCUDA's: arrays of different dtypes give NumPy's ``result_type``, and any
    layout works.

    Parameters
    ----------
    arrays : sequence of GPUArray
        Of equal shapes except along ``axis``; other libraries' GPU arrays, and host
        arrays (copied), are taken too.
    axis : int, optional
    allocator : callable, optional
        Default the first array's.

    Returns
    -------
    GPUArray

    Raises
    ------
    ValueError
        No arrays, 0-d arrays, or shapes that differ off ``axis``.

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([[1, 2]], dtype=np.int32))
    >>> b = gpuarray.to_gpu(np.array([[3.5, 4.5]]))
    >>> gpuarray.concatenate([a, b]).get()
    array([[1. , 2. ],
           [3.5, 4.5]])
    """
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    first = arrays[0]
    if not first.ndim:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, first.ndim)
    for a in arrays[1:]:
        if a.ndim != first.ndim or any(s != t for k, (s, t) in enumerate(zip(a.shape, first.shape)) if k != axis):
            raise ValueError(
                f"all the input array dimensions except for the concatenation axis must "
                f"match exactly, but {first.shape} and {a.shape} differ"
            )
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
    """The arrays, all of one shape, joined along a new axis, as PyCUDA's ``stack``.

    Parameters
    ----------
    arrays : sequence of GPUArray
    axis : int, optional
        Where the new axis goes in the result.
    allocator : callable, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([1, 2], dtype=np.int32))
    >>> gpuarray.stack([a, a], axis=1).get()
    array([[1, 1],
           [2, 2]], dtype=int32)
    """
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
        raise (
            np.exceptions.AxisError(axis, ndim)
            if hasattr(np, "exceptions")
            else IndexError(f"axis {axis} is out of bounds for array of dimension {ndim}")
        )
    return axis % ndim


def transpose(a: GPUArray, axes: Sequence[int] | None = None) -> GPUArray:
    """``a.transpose(axes)``: a view with the axes permuted, as PyCUDA's ``transpose``.

    Parameters
    ----------
    a : GPUArray
    axes : sequence of int, optional
        Default reversed.

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> from pyctk import gpuarray                                      # doctest: +GPU
    >>> gpuarray.transpose(gpuarray.zeros((2, 3))).shape
    (3, 2)
    """
    return a.transpose(axes)


def reshape(a: GPUArray, *shape: Any, **kwargs: Any) -> GPUArray:
    """``a.reshape(*shape, order=...)``, as PyCUDA's ``reshape``; see :meth:`GPUArray.reshape`.

    Parameters
    ----------
    a : GPUArray
    *shape : int or tuple of int
    order : {"C", "F"}, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> from pyctk import gpuarray                                      # doctest: +GPU
    >>> gpuarray.reshape(gpuarray.zeros(6), (2, 3)).shape
    (2, 3)
    """
    return a.reshape(*shape, **kwargs)


@functools.cache
def _gather_kernel(itemsize: int, index: np.dtype) -> Kernel:
    """``out[i] = src[idx[i]]`` for items of ``itemsize`` bytes (scatter: ``dst[idx[i]] = src[i]``)."""
    name = f"pyctk_take_{itemsize}_{index.str[1:]}"
    item = f"struct alignas({min(8, itemsize & -itemsize)}) item {{ unsigned char b[{itemsize}]; }};\n"
    source = (
        item + f'extern "C" __global__ void {name}(item *dst, const item *src, const '
        f"{dtype_to_ctype(index)} *idx, unsigned long n, int scatter)\n{{\n"
        f"  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;\n"
        f"       i += (size_t) gridDim.x * blockDim.x) {{\n"
        f"    if (scatter) dst[idx[i]] = src[i]; else dst[i] = src[idx[i]];\n  }}\n}}\n"
    )
    return Kernel(source, name, ["P", "P", "P", "Q", "i"])


def _indexed_copy(dst: GPUArray, src: GPUArray, indices: GPUArray, scatter: bool, stream: Any) -> None:
    if indices.dtype.kind not in "iu":
        raise TypeError(f"indices must be an integer array, not {indices.dtype}")
    n = indices.size
    if n:
        blocks, threads = geometry(n)
        _gather_kernel(src.itemsize, indices.dtype)(
            blocks, threads, stream_handle(stream), dst.ptr, src.ptr, indices._contiguous().ptr, n, int(scatter)
        )


def take(a: GPUArray, indices: GPUArray, out: GPUArray | None = None, stream: Any = None) -> GPUArray:
    """The elements of ``a`` at ``indices``, ``a.ravel()[indices]``, as PyCUDA's ``take``.

    Indices must lie in ``[0, a.size)``: as in PyCUDA, they are not checked. Unlike
    PyCUDA's, which reads through a texture, any dtype works.

    Parameters
    ----------
    a : GPUArray
        Read in C order.
    indices : GPUArray
        Integers.
    out : GPUArray, optional
        Where to put the result: ``indices``' shape and ``a``'s dtype, contiguous.
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray
        Of ``indices``' shape.

    Raises
    ------
    TypeError
        ``indices`` is not of an integer dtype.

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([10, 20, 30, 40], dtype=np.int32))
    >>> indices = gpuarray.to_gpu(np.array([3, 0, 0], dtype=np.int32))
    >>> gpuarray.take(a, indices).get()
    array([40, 10, 10], dtype=int32)
    >>> [x.get() for x in gpuarray.multi_take([a, a * 2], indices)]
    [array([40, 10, 10], dtype=int32), array([80, 20, 20], dtype=int32)]
    """
    a, indices = asarray(a)._contiguous(), asarray(indices)
    if out is None:
        out = a._new(indices.shape, a.dtype)
    _indexed_copy(out, a, indices, False, stream)
    return out


def multi_take(
    arrays: Sequence[GPUArray], indices: GPUArray, out: Sequence[GPUArray] | None = None, stream: Any = None
) -> list[GPUArray]:
    """:func:`take` of each array with the same ``indices``, as PyCUDA's ``multi_take``.

    Parameters
    ----------
    arrays : sequence of GPUArray
    indices : GPUArray
        Integers, not checked.
    out : sequence of GPUArray, optional
        One result array for each of ``arrays``.
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    list of GPUArray
    """
    outs = out if out is not None else [None] * len(arrays)
    return [take(a, indices, o, stream) for a, o in zip(arrays, outs)]


def multi_put(
    arrays: Sequence[GPUArray],
    dest_indices: GPUArray,
    dest_shape: Any = None,
    out: Sequence[GPUArray] | None = None,
    stream: Any = None,
) -> list[GPUArray]:
    """``out[k][dest_indices[i]] = arrays[k][i]`` for every ``k`` and ``i``, as PyCUDA's ``multi_put``.

    Unlike PyCUDA's, new ``out`` arrays are filled with zeros first.

    Parameters
    ----------
    arrays : sequence of GPUArray
    dest_indices : GPUArray
        Integers, flat C-order positions in each ``out`` array (not checked).
    dest_shape : int or tuple of int, optional
        The shape of new ``out`` arrays.
    out : sequence of GPUArray, optional
        Contiguous arrays to write into; else new ones of ``dest_shape``.
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    list of GPUArray

    Raises
    ------
    ValueError
        Neither ``dest_shape`` nor ``out``.
    RuntimeError
        An ``out`` array that is not contiguous.

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> values = gpuarray.to_gpu(np.array([1, 2], dtype=np.int32))
    >>> where_to = gpuarray.to_gpu(np.array([3, 0], dtype=np.int32))
    >>> [x.get() for x in gpuarray.multi_put([values], where_to, dest_shape=(4,))]
    [array([2, 0, 0, 1], dtype=int32)]
    """
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


def multi_take_put(
    arrays: Sequence[GPUArray],
    dest_indices: GPUArray,
    src_indices: GPUArray,
    dest_shape: Any = None,
    out: Sequence[GPUArray] | None = None,
    stream: Any = None,
    src_offsets: Any = None,
) -> list[GPUArray]:
    """``out[k][dest_indices[i]] = arrays[k][src_indices[i]]``, as PyCUDA's ``multi_take_put``.

    Unlike PyCUDA's, ``src_offsets`` is not supported, and new ``out`` arrays are filled with
    zeros first.

    Parameters
    ----------
    arrays : sequence of GPUArray
    dest_indices, src_indices : GPUArray
        Integers, of one length; not checked.
    dest_shape : int or tuple of int, optional
        The shape of new ``out`` arrays.
    out : sequence of GPUArray, optional
    stream : pyctk.driver.Stream, optional
    src_offsets : None
        PyCUDA's per-array offsets: NotImplementedError (add them to ``src_indices``).

    Returns
    -------
    list of GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> source = gpuarray.to_gpu(np.array([10, 20, 30], dtype=np.int32))
    >>> src = gpuarray.to_gpu(np.array([2, 0], dtype=np.int32))
    >>> dest = gpuarray.to_gpu(np.array([0, 3], dtype=np.int32))
    >>> [x.get() for x in gpuarray.multi_take_put([source], dest, src, dest_shape=(4,))]
    [array([30,  0,  0, 10], dtype=int32)]
    """
    if src_offsets is not None:
        raise NotImplementedError("multi_take_put's src_offsets is not supported: offset src_indices instead")
    taken = multi_take(arrays, src_indices, stream=stream)
    return multi_put(taken, dest_indices, dest_shape, out, stream)


def asarray(x: Any) -> GPUArray:
    """``x`` as a GPUArray, without a copy when it is on the GPU; pyctk's (PyCUDA has no ``asarray``).

    A GPUArray is returned as it is; another library's GPU array (CuPy, PyTorch, JAX,
    :class:`pyctk.DeviceArray`: the CUDA Array Interface or DLPack) is wrapped, the result
    keeping it alive and ordered after its pending work; host data is copied
    (:func:`to_gpu`).

    Parameters
    ----------
    x : array_like

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> import pyctk
    >>> from pyctk import gpuarray
    >>> d = pyctk.asarray(np.arange(3.0))                               # a pyctk.DeviceArray
    >>> g = gpuarray.asarray(d)                                         # the same memory
    >>> g.ptr == d.__cuda_array_interface__["data"][0]
    True
    >>> gpuarray.asarray([1, 2]).get()                                  # host data: copied
    array([1, 2])
    """
    if isinstance(x, GPUArray):
        return x
    operand = interop.device_operand(x)
    if operand is None:
        return to_gpu(x)
    return wrap(operand)


def from_dlpack(x: Any) -> GPUArray:
    """A GPUArray over ``x``'s GPU memory, through DLPack; pyctk's (PyCUDA has no DLPack).

    The array API's ``from_dlpack``: no copy, and ``x`` is kept alive with the result.

    Parameters
    ----------
    x : object
        An object with ``__dlpack__`` and ``__dlpack_device__`` (a PyTorch tensor, a CuPy
        or JAX array, a :class:`pyctk.DeviceArray` ...) whose data is on a CUDA device.

    Returns
    -------
    GPUArray

    Raises
    ------
    TypeError
        ``x``'s data is in host memory: use :func:`to_gpu`; or its dtype is none of pyctk's.
    ValueError
        A tensor whose fields pyctk refuses, checked as :func:`pyctk.from_dlpack` checks them.

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> import pyctk
    >>> from pyctk import gpuarray
    >>> gpuarray.from_dlpack(pyctk.asarray(np.arange(3.0))).get()
    array([0., 1., 2.])
    >>> gpuarray.from_dlpack(np.arange(3))
    Traceback (most recent call last):
        ...
    TypeError: ndarray is host data: copy it with gpuarray.to_gpu(x)
    """
    operand = interop.dlpack_operand(x)
    if operand is None:
        raise TypeError(f"{type(x).__name__} is host data: copy it with gpuarray.to_gpu(x)")
    return wrap(operand)
