"""pyctk.matmul: numpy.matmul, computed on the GPU in one call of libgpumatmul.

Everything NumPy would reject is rejected here, with NumPy's exception type, before
any GPU work: dtypes (pyctk._dtypes), shapes (pyctk._shapes), then whether the
backend computes the dtype. Then the operands are described to the C library's
strided-batched call (pyctk._layout), copying only what it cannot read in place.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

import ctypes

from .._arrays import layout as _layout
from .._arrays.device_array import DeviceArray
from .._cuda import contexts as _contexts, library as _library, streams as _streams
from .._cuda.errors import DeviceMismatchError
from . import device as _device_matmul, dtypes as _dtypes, host_results as _host_results
from . import options as _host_options, shapes as _shapes

Backend = Literal["auto", "tiled", "cublas"]
Precision = Literal["highest", "tf32", "fp16_accumulate"]
Casting = Literal["no", "equiv", "safe", "same_kind", "unsafe"]
_options: dict[int, _library.HostOptions] = {}  # device memory limit -> the host call's options


def matmul(x1: ArrayLike, x2: ArrayLike, /, out: Any = None, *,
           casting: Casting = "same_kind", dtype: DTypeLike = None,
           backend: Backend = "auto", precision: Precision = "highest",
           stream: Any = None, device: int | None = None,
           devices: _host_options.Devices = None) -> Any:
    """Matrix product of two arrays on the GPU, with the semantics of ``numpy.matmul``.

    Parameters
    ----------
    x1, x2 : array_like or GPU arrays
        Matrices, stacks of matrices in the last two axes, or vectors, any
        strides or memory order: host data (NumPy arrays, lists), or both on
        one GPU (pyctk.DeviceArray, or any array with
        ``__cuda_array_interface__`` or DLPack: PyTorch, CuPy, JAX, Numba),
        which is used in place. A 1-D ``x1`` is a row vector and a 1-D ``x2``
        a column vector, and that axis is not in the result. The stack axes
        broadcast. Sizes may be 0 (``k == 0`` gives zeros).
    out : ndarray or 1-tuple of an ndarray, optional
        Where to write the result: its shape is the result's, or has more
        leading (stack) axes to broadcast the result into, as in NumPy. Any
        strides, and any dtype the result casts to under ``casting``; it may
        overlap ``x1`` or ``x2``.
    casting : {"no", "equiv", "safe", "same_kind", "unsafe"}, optional
        The casting rule for the inputs and ``out``, as in NumPy.
    dtype : dtype_like, optional
        The dtype to compute in and return, as in NumPy (the inputs are cast
        to it under ``casting``).
    backend : {"auto", "tiled", "cublas"}, optional
        ``"cublas"`` uses NVIDIA cuBLAS (floating-point and complex dtypes),
        ``"tiled"`` pyctk's own kernels (every dtype), ``"auto"`` whichever
        of the two measured faster for the GPU, dtype, precision and size
        (the table ``benchmarks/auto_table.py`` writes: on an H100, the
        kernels for tiny products and for float16/bfloat16 up to 512^3),
        else cuBLAS where it computes the dtype, else the tiled kernels.
    stream : None, int or stream object, optional
        For GPU operands, the CUDA stream to enqueue the product on (after
        the operands' pending work): None for the legacy default stream, a
        ``cudaStream_t`` as an int, or an object with ``__cuda_stream__``
        or ``cuda_stream`` (CuPy and PyTorch streams). The call then returns
        without waiting. Host operands are multiplied synchronously.
    device : int, optional
        For host operands, the GPU to multiply on (default 0). GPU operands
        are multiplied on their own GPU.
    devices : "all" or sequence of int, optional
        For host operands, the GPUs to share the product among (instead of
        ``device``): the stack, or else the rows of the result, is split
        evenly and every GPU streams its share at once.
    precision : {"highest", "tf32", "fp16_accumulate"}, optional
        ``"highest"`` computes as NumPy does (float16 and bfloat16 sum in
        float32). ``"tf32"`` (float32 and complex64) multiplies on TF32
        tensor cores: relative error about 1e-3, several times faster (the
        tiled backend: float32, on an H100; elsewhere in full float32).
        ``"fp16_accumulate"`` (float16, cuBLAS) also sums in float16.

    Returns
    -------
    ndarray, scalar or DeviceArray
        For host operands the product in host memory, of NumPy's result
        dtype (1-D @ 1-D gives a NumPy scalar, as in NumPy); for GPU
        operands a ``pyctk.DeviceArray`` on their GPU (0-d for 1-D @ 1-D).
        ``out`` if given: for GPU operands any writable GPU array of the
        product's dtype whose matrices are row-major.

    Raises
    ------
    ValueError
        0-d operands, mismatched inner dimensions, stacks that do not
        broadcast, an ``out`` of the wrong shape or read-only, an unknown
        ``casting``, ``backend`` or ``precision``.
    TypeError
        NumPy's errors for dtypes without a matmul loop (datetime64,
        timedelta64, strings) or casts that ``casting`` forbids; an ``out``
        that is not an ndarray; and, unlike NumPy, object (and long double)
        arrays, which only NumPy can multiply.
    pyctk.UnsupportedError
        A ``backend`` that does not compute the dtype at this ``precision``;
        the message names the backend that does.
    pyctk.DeviceMismatchError
        Host and GPU operands together, or operands on different GPUs (a
        ``ValueError``): pyctk never copies silently.
    pyctk.NoDriverError, pyctk.NoDeviceError, pyctk.OutOfMemoryError, pyctk.CudaError
        No driver or GPU, not enough GPU memory, or another CUDA failure.

    Notes
    -----
    One exception to NumPy's dtypes: NumPy multiplies ml_dtypes' bfloat16 in
    float32 (bfloat16 @ bfloat16 gives float32); pyctk computes in and returns
    ``np.result_type`` of the operands where ml_dtypes defines it (bfloat16 @
    bfloat16 and bfloat16 @ int8 give bfloat16, bfloat16 @ float32 float32),
    unless ``dtype`` or an ``out`` of another dtype is given; elsewhere
    (bfloat16 @ float16) it uses NumPy's loop too.

    All of the checks run before any GPU work, and the whole stack is one call
    into libgpumatmul. Operands are copied only when their strides cannot be
    described to it (see ``pyctk._layout.operand``).

    Examples
    --------
    >>> import numpy as np, pyctk
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> b = np.ones((3, 2), dtype=np.float32)
    >>> pyctk.matmul(a, b)                                   # doctest: +SKIP
    array([[ 3.,  3.],
           [12., 12.]], dtype=float32)
    >>> pyctk.matmul(np.ones((10, 2, 3)), np.ones(3)).shape  # doctest: +SKIP
    (10, 2)
    >>> pyctk.matmul(np.arange(3), np.arange(3))             # doctest: +SKIP
    np.int64(5)
    >>> pyctk.matmul(a, b, backend="tiled", dtype=np.float64).dtype  # doctest: +SKIP
    dtype('float64')

    Errors come before any GPU work (these need no GPU), of NumPy's types:

    >>> pyctk.matmul(a, a)                                   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: matmul: shapes (2, 3) and (2, 3) are not aligned: 3 (last dim of operand 0) != 2 ...
    >>> pyctk.matmul(a, b, backend="cutlass")
    Traceback (most recent call last):
    ...
    ValueError: backend must be one of 'auto', 'tiled', 'cublas', not 'cutlass'
    """
    options = (casting, backend, precision)
    if (out is None and dtype is None and device is None and devices is None and stream is None
            and type(x1) is np.ndarray and type(x2) is np.ndarray):  # NumPy arrays of a layout
        plan = _host_plans.get((x1.dtype, x1.shape, x1.strides, x2.dtype, x2.shape, x2.strides,
                                options, _host_options.memory_limit()))   # multiplied before
        if plan is not None:
            return plan.run(x1, x2)
    if (out is None and dtype is None and device is None and devices is None
            and type(x1) is DeviceArray
            and type(x2) is DeviceArray):  # a product of these layouts may have run before
        result = _device_matmul.repeat(
            _device_matmul.array_layout(x1), x1._pointer, _device_matmul.array_layout(x2),
            x2._pointer, 0 if stream is None else _streams.handle(stream), options,
            stream)
        if result is not None:
            return result
    backend_code = _choice("backend", backend, _host_options.BACKENDS)
    precision_code = _choice("precision", precision, _host_options.PRECISIONS)
    device = _device_index(device)
    stream_handle = _streams.handle(stream)  # checked for host operands too
    out = _unwrap_out(out)
    on_gpu = _device_matmul.placement(x1, x2, out)
    if on_gpu is not None:
        a, b, out_operand = on_gpu
        plan_as = options if out is None and dtype is None else None
        if plan_as is not None and (device is None or device == a.device):
            result = _device_matmul.repeat(_device_matmul.operand_layout(a), a.pointer,
                                           _device_matmul.operand_layout(b), b.pointer,
                                           stream_handle, options, stream)
            if result is not None:
                return result
        if devices is not None:
            raise ValueError("devices= is for host operands: GPU operands are multiplied on "
                             "their own GPU")
        if device is not None and device != a.device:
            raise DeviceMismatchError(f"pyctk.matmul: device={device}, but the operands are on GPU "
                                      f"{a.device}; GPU operands are multiplied where they are")
        _dtypes.check_keyword(dtype)
        loop = _dtypes.loop_dtype(a.dtype, b.dtype, out_operand and out_operand.dtype, dtype, casting)
        shapes = _shapes.matmul_shapes(a.shape, b.shape, out_operand and out_operand.shape)
        codes = (backend_code, _dtypes.code(loop), precision_code)
        _library.call("gpumatmul_backend_supports", *codes)
        return _device_matmul.matmul(a, b, out_operand, out, loop, shapes, codes, stream,
                                     plan_as)
    out = _out_array(out)
    gpus = _host_options.device_list(devices, device)
    limit = _host_options.memory_limit()
    plan_as = None
    if (out is None and dtype is None and device is None and devices is None and stream is None
            and type(x1) is np.ndarray and type(x2) is np.ndarray):  # as the fast path above
        plan_as = (x1.dtype, x1.shape, x1.strides, x2.dtype, x2.shape, x2.strides, options, limit)
    _dtypes.check_keyword(dtype)
    if out is not None and not out.flags.writeable:  # after dtype=, as NumPy checks them
        raise ValueError("out is read-only: matmul cannot write its result into it")
    a, b = np.asarray(x1), np.asarray(x2)
    loop = _dtypes.loop_dtype(a.dtype, b.dtype, None if out is None else out.dtype, dtype, casting)
    shapes = _shapes.matmul_shapes(a.shape, b.shape, None if out is None else out.shape)
    dtype_code = _dtypes.code(loop)
    # Cast as NumPy does, whatever the sizes: an object operand's elements may not fit the loop.
    a, b = a.astype(loop, copy=False), b.astype(loop, copy=False)
    _contexts.load_library(gpus[0])
    _library.call("gpumatmul_backend_supports", backend_code, dtype_code, precision_code)
    result = _host_results.empty(shapes.result, loop, gpus[0]) if out is None else out
    if result.size and shapes.k:
        desc = _multiply(_shapes.as_matrices(a, 0, shapes), _shapes.as_matrices(b, 1, shapes),
                         _shapes.as_matrices(result, _shapes.RESULT, shapes), shapes, casting,
                         (backend_code, dtype_code, precision_code), gpus, limit)
        if plan_as is not None and desc is not None and a is x1 and b is x2:
            _host_plans[plan_as] = _HostPlan(desc, shapes.result, loop, result.ndim == 0,
                                             gpus, _options[limit],
                                             _host_results.kept(shapes.result, loop))
    else:  # nothing to compute, or k == 0: zeros of the loop dtype (cast into out), without the GPU
        np.copyto(result, np.zeros((), loop), casting=casting)
    return result[()] if out is None and result.ndim == 0 else result  # 1-D @ 1-D: a scalar


def _multiply(a: np.ndarray, b: np.ndarray, c: np.ndarray, shapes: _shapes.Shapes,
              casting: str, codes: tuple[int, int, int], devices: tuple[int, ...],
              limit: int) -> _library.GemmDesc | None:
    """c = a @ b for stacks of matrices a and b (of the loop dtype) and c (..., m, n), in one call.

    C is written in place when the C call can describe it and it has the
    loop dtype; else into a temporary that is then cast into ``c``. Writing
    in place is safe even where ``c`` overlaps ``a`` or ``b``: the host call
    then reads all of A and B before it writes C.

    Returns the call's description if a, b and c were all used in place (the same
    call then serves any arrays of their layouts), else None.
    """
    a_stack, b_stack = _layout.operand(a, shapes.batch), _layout.operand(b, shapes.batch)
    c_stack = _layout.target(c) if c.dtype == a.dtype else None
    if c_stack is None:
        c_stack = _layout.target(np.empty(c.shape, a.dtype))
    desc = _library.GemmDesc(*codes, a_stack.transposed, b_stack.transposed, shapes.m, shapes.n,
                             shapes.k, shapes.batch_count, a_stack.ld, a_stack.stride,
                             b_stack.ld, b_stack.stride, c_stack.ld, c_stack.stride)
    options = _options.get(limit)
    if options is None:
        options = _options[limit] = _library.HostOptions(ctypes.sizeof(_library.HostOptions), limit)
    _library.call("gpumatmul_gemm_host_multi", _contexts.contexts(devices), len(devices), desc,
                  a_stack.array.ctypes.data, b_stack.array.ctypes.data, c_stack.array.ctypes.data,
                  options)
    if c_stack.array is not c:
        np.copyto(c, c_stack.array, casting=casting)
        return None
    in_place = (a_stack.array.ctypes.data == a.ctypes.data
                and b_stack.array.ctypes.data == b.ctypes.data)
    return desc if in_place else None


class _HostPlan(NamedTuple):
    """A product of NumPy arrays of one layout (dtypes, shapes, strides), options and GPUs,
    checked and described once: later calls of that layout skip straight to the C call.
    Each takes about 25 us of Python on a 2-core machine otherwise, more than a 16 x 16
    product takes on the GPU."""

    desc: _library.GemmDesc
    shape: tuple[int, ...]  # the result's
    dtype: np.dtype
    scalar: bool            # 1-D @ 1-D: a NumPy scalar
    devices: tuple[int, ...]
    options: _library.HostOptions
    kept: bool              # the result's memory is _host_results' (else NumPy's own)

    def run(self, a: np.ndarray, b: np.ndarray) -> Any:
        result = (_host_results.empty(self.shape, self.dtype, self.devices[0]) if self.kept
                  else np.empty(self.shape, self.dtype))  # known once: 0.5 us of a 16 x 16 call
        _library.call("gpumatmul_gemm_host_multi", _contexts.contexts(self.devices),
                      len(self.devices), self.desc, _layout.address(a), _layout.address(b),
                      _layout.address(result), self.options)
        return result[()] if self.scalar else result


_host_plans: dict[tuple, _HostPlan] = {}  # (layouts, options, memory limit) -> plan, on GPU 0


def _choice(name: str, value: str, table: dict[str, int]) -> int:
    """The C enum value of a string option; ValueError naming the choices."""
    if not isinstance(value, str) or value not in table:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, table))}, not {value!r}")
    return table[value]


def _unwrap_out(out: object) -> object:
    """``out=`` as NumPy's ufuncs take it: an array, a 1-tuple of one, or None."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"out must be an ndarray or a tuple of one, not a tuple of {len(out)}")
        out = out[0]
    return out


def _device_index(device: object) -> int | None:
    if device is None:
        return None
    if isinstance(device, bool) or not isinstance(device, (int, np.integer)) or device < 0:
        raise ValueError(f"device must be None or a GPU index (0, 1, ...), not {device!r}")
    return int(device)


def _out_array(out: object) -> np.ndarray | None:
    """A host ``out=``: an ndarray or None, with NumPy's TypeError otherwise."""
    if out is not None and not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray, not {type(out).__name__}")
    return out
