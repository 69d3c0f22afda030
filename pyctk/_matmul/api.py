"""pyctk.matmul: numpy.matmul, computed on the GPU in one call of libgpumatmul.

The product runs through five stages, each a module of this package, in order, once:
describe the operands (host or GPU data) -> resolve NumPy's dtype and shapes -> plan
(which C entry point, which copies and casts) -> execute -> wrap the result. Everything
NumPy would reject is rejected, with NumPy's exception type, before any GPU work. A
product of a layout planned before runs by its kept plan (``repeat``).
"""

from __future__ import annotations

from typing import Any, Literal

from numpy.typing import ArrayLike, DTypeLike

from . import repeat
from .describe import describe
from .dtypes import Casting
from .execute import execute
from .options import NOT_GIVEN, Devices, parse
from .plan import plan
from .resolve import resolve
from .wrap import wrap

Backend = Literal["auto", "tiled", "cublas"]
Precision = Literal["highest", "tf32", "fp16_accumulate"]


def matmul(
    x1: ArrayLike,
    x2: ArrayLike,
    /,
    out: Any = None,
    *,
    casting: Casting = "same_kind",
    dtype: DTypeLike | None = None,
    backend: Backend = "auto",
    precision: Precision = "highest",
    stream: Any = None,
    device: int | None = None,
    devices: Devices = None,
    axes: list[tuple[int, ...] | int] = NOT_GIVEN,
    axis: int = NOT_GIVEN,
    keepdims: bool = NOT_GIVEN,
) -> Any:
    """Matrix product of two arrays on the GPU, with the semantics of ``numpy.matmul``.

    Takes what ``numpy.matmul`` takes and returns what it returns: host arrays give a
    host array, computed on a GPU; GPU arrays give a GPU array, computed in place on
    their GPU. Every argument NumPy would reject is rejected, with NumPy's exception
    type and message, before any GPU work.

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
        overlap ``x1`` or ``x2``. For GPU operands, any writable GPU array on
        their GPU.
    casting : {"no", "equiv", "safe", "same_kind", "unsafe"}, optional
        The casting rule for the inputs and ``out``, as in NumPy.
    dtype : dtype_like, optional
        The dtype to compute in and return, as in NumPy (the inputs are cast
        to it under ``casting``).
    backend : {"auto", "tiled", "cublas"}, optional
        ``"cublas"`` uses NVIDIA cuBLAS (floating-point and complex dtypes;
        int8 and FP8 through cuBLASLt),
        ``"tiled"`` pyctk's own kernels (every dtype), ``"auto"`` whichever
        of the two was measured faster for the GPU, dtype, precision and size
        (pyctk's own kernels for small products on the GPUs measured), else
        cuBLAS where it computes the dtype, else the tiled kernels.
    precision : {"highest", "tf32", "fp16_accumulate"}, optional
        ``"highest"`` computes as NumPy does (float16 and bfloat16 sum in
        float32). ``"tf32"`` (float32 and complex64) multiplies on TF32
        tensor cores: relative error about 1e-3, several times faster (the
        tiled backend: on an H100, float32, and complex64 products of more
        than 512**3 multiply-adds; elsewhere in full float32).
        ``"fp16_accumulate"`` (float16, cuBLAS) also sums in float16.
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
    axes : list, optional
        Where the matrices are, as numpy.matmul's (a gufunc's) ``axes=``: a
        list of three entries, for ``x1``, ``x2`` and the result, each a
        tuple of the two axes that hold the rows and columns (a single int
        or a 1-tuple for a 1-D operand; ``()`` for the result of 1-D @ 1-D).
        The default is ``[(-2, -1), (-2, -1), (-2, -1)]``. A new result has
        its matrices where the third entry says (a view).
    axis, keepdims
        Refused with NumPy's TypeError, whatever their value: matmul's
        signature has no single shared core dimension, and its output has
        core dimensions.

    Returns
    -------
    ndarray, scalar or DeviceArray
        For host operands the product in host memory, of NumPy's result
        dtype (1-D @ 1-D gives a NumPy scalar, as in NumPy); for GPU
        operands a ``pyctk.DeviceArray`` on their GPU (0-d for 1-D @ 1-D).
        ``out`` if given.

    Raises
    ------
    ValueError
        0-d operands, mismatched inner dimensions, stacks that do not
        broadcast, an ``out`` of the wrong shape or read-only, an unknown
        ``casting``, ``backend`` or ``precision``; ``axes=`` entries NumPy
        refuses (numpy.exceptions.AxisError, a ValueError, for axes out of
        bounds or of the wrong count).
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

    See Also
    --------
    pyctk.asarray : Copy host data to the GPU once, to multiply it there many times.
    pyctk.dask.matmul : The product of dask arrays, block by block on Dask's workers.

    Notes
    -----
    The dtypes each backend computes, and the result dtype of each pair of
    operand dtypes, are tabulated in the User guide ("NumPy semantics and
    dtypes"). One exception to NumPy's dtypes: NumPy multiplies ml_dtypes'
    bfloat16 in float32 (bfloat16 @ bfloat16 gives float32); pyctk computes
    in and returns ``np.result_type`` of the operands where ml_dtypes defines
    it (bfloat16 @ bfloat16 and bfloat16 @ int8 give bfloat16, bfloat16 @
    float32 float32), unless ``dtype`` or an ``out`` of another dtype is
    given; elsewhere (bfloat16 @ float16) it uses NumPy's loop too.

    All of the checks run before any GPU work, and the whole stack is one call
    into libgpumatmul. Operands are copied only when their strides cannot be
    described to it. A host product larger than the GPU's memory is streamed
    through it in tiles (``PYCTK_DEVICE_MEMORY_LIMIT`` caps the memory used).

    Examples
    --------
    Host arrays in, a host array out, as ``numpy.matmul`` gives it:

    >>> import numpy as np, pyctk                            # doctest: +GPU
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> b = np.ones((3, 2), dtype=np.float32)
    >>> pyctk.matmul(a, b)
    array([[ 3.,  3.],
           [12., 12.]], dtype=float32)

    Stacks broadcast, a 1-D operand is a vector, and 1-D @ 1-D is a scalar:

    >>> pyctk.matmul(np.ones((10, 2, 3)), np.ones(3)).shape
    (10, 2)
    >>> pyctk.matmul(np.arange(3), np.arange(3))
    np.int64(5)

    The keywords: a dtype to compute in, a backend, matrices along other axes,
    and ``out``:

    >>> pyctk.matmul(a, b, backend="tiled", dtype=np.float64).dtype
    dtype('float64')
    >>> c = pyctk.matmul(np.ones((3, 4, 2)), np.ones((4, 5)),
    ...                  axes=[(0, 1), (0, 1), (1, 2)])
    >>> c.shape
    (2, 3, 5)
    >>> out = np.zeros((2, 2))
    >>> pyctk.matmul(a, b, out=out) is out
    True

    GPU arrays stay on the GPU:

    >>> x, y = pyctk.asarray(a), pyctk.asarray(b)
    >>> pyctk.matmul(x, y)
    DeviceArray([[ 3.,  3.],
                 [12., 12.]], dtype=float32, device=0)

    Errors come before any GPU work: NumPy's for what NumPy rejects, pyctk's own for
    what only pyctk does not do:

    >>> pyctk.matmul(a, a)
    Traceback (most recent call last):
    ...
    ValueError: matmul: shapes (2, 3) and (2, 3) are not aligned: ...
    >>> pyctk.matmul(a, b, backend="cutlass")
    Traceback (most recent call last):
    ...
    ValueError: backend must be one of 'auto', 'tiled', 'cublas', not 'cutlass'
    >>> i = a.astype(np.int32)
    >>> pyctk.matmul(i, i.T, backend="cublas")
    Traceback (most recent call last):
    ...
    pyctk.UnsupportedError: the cublas backend does not multiply int32 ...
    """
    keepable = (
        out is None
        and dtype is None
        and devices is None
        and axes is NOT_GIVEN
        and axis is NOT_GIVEN
        and keepdims is NOT_GIVEN
    )
    if keepable and device is None:  # a product of these layouts may have run before
        result = repeat.run(x1, x2, stream, (casting, backend, precision))
        if result is not None:
            return result
    options = parse(casting, dtype, backend, precision, stream, device, devices, axis, keepdims)
    operands = describe(x1, x2, out)
    keepable = keepable and device in (None, operands.device)
    if keepable and operands.device is not None:  # other libraries' arrays, read once
        result = repeat.run_described(operands, options)
        if result is not None:
            return result
    operands, problem = resolve(operands, options, axes)
    product = plan(operands, problem, options)
    written = execute(operands, problem, product, options)
    if keepable:
        repeat.keep(operands, problem, product, options)
    return wrap(operands, problem, product, options, written)
