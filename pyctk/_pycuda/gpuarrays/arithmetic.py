"""GPUArray arithmetic: Python's operators on GPUArrays and PyCUDA's element-wise functions
(``maximum``, ``where``, ``if_positive``, ``mul_add``, ``conj``, ``real``, ...), as NumPy
computes them.

Each is a row of ``operations`` run by ``engine.apply`` over any operands: GPUArrays, other
libraries' GPU arrays (CuPy, PyTorch, ``pyctk.DeviceArray``: read in place), Python and NumPy
scalars, broadcast as NumPy broadcasts, NumPy's dtypes (Python scalars weak, as in NumPy 2:
``float32_array * 2.5`` is float32), and ``out=`` cast by NumPy's ``same_kind`` rule
(``a += b``).

Examples
--------
>>> import numpy as np                                                   # doctest: +GPU
>>> from pyctk import gpuarray
>>> a = gpuarray.to_gpu(np.arange(6, dtype=np.float32).reshape(2, 3))
>>> (a * 2 + a[0]).get()                                                 # a[0] broadcast
array([[ 0.,  3.,  6.],
       [ 6.,  9., 12.]], dtype=float32)
>>> (a > 2).dtype, (a // 4).get()[1], gpuarray.maximum(a, 4.0).get()[0]
(dtype('bool'), array([0., 1., 1.], dtype=float32), array([4., 4., 4.], dtype=float32))
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..._arrays import interop
from ..._matmul.api import matmul as _matmul
from ..contexts.streams import Event
from .engine import apply, is_gpuarray
from .launching import stream_handle
from .operations import (
    BINARY,
    COMPARISONS,
    CONJ,
    IF_POSITIVE,
    LOGICAL_AND,
    LOGICAL_NOT,
    LOGICAL_OR,
    MAXIMUM,
    MINIMUM,
    MUL_ADD,
    UNARY,
    WHERE,
)


def operator_methods(op: str, name: str) -> tuple[Callable[[Any, Any], Any], ...]:
    """GPUArray's methods of Python's operator ``op`` (one of ``BINARY``'s) whose special
    method is ``__{name}__``: ``x OP y``, ``y OP x`` (``__r{name}__``) and ``x OP= y``
    (``__i{name}__``), each calling ``apply`` itself (a small operation's host time is a few
    dozen Python steps: each one between the operator and ``apply`` counts)."""
    operation = BINARY[op]

    def method(self: Any, other: Any) -> Any:
        return apply(operation, (self, other))

    def reflected(self: Any, other: Any) -> Any:
        return apply(operation, (other, self))

    def in_place(self: Any, other: Any) -> Any:
        return apply(operation, (self, other), self)

    what = (
        "element by element: a bool array, as NumPy's (PyCUDA's has the operands' dtype)"
        if operation in COMPARISONS
        else "element by element, with NumPy's dtypes and broadcasting (PyCUDA's broadcasts only "
        "scalars and 0-d arrays)"
    )
    for function, prefix, text, note in (
        (method, "", f"x {op} y", what),
        (reflected, "r", f"y {op} x", "for ``y`` a scalar, a host scalar array or another library's GPU array"),
        (in_place, "i", f"x {op}= y", "in place: the result cast into ``x`` as NumPy's ``same_kind`` rule allows"),
    ):
        function.__name__ = function.__qualname__ = f"__{prefix}{name}__"
        function.__doc__ = f"``{text}``, {note}."
    return method, reflected, in_place


def unary(op: str, x: Any, out: Any = None, stream: Any = None) -> Any:
    """``-x`` (``op="-"``), ``~x`` (``"~"``: bitwise, logical for bool) or ``abs(x)``
    (``"abs"``: real for complex ``x``), as NumPy's."""
    return apply(UNARY[op], (x,), out, stream)


def matmul(a: Any, b: Any, out: Any = None, stream: Any = None) -> Any:
    """``a @ b`` through ``pyctk.matmul`` (NumPy's matmul: stacks, vectors, dtypes): a new
    GPUArray over the product's memory (no copy), or ``out``.

    >>> from pyctk import gpuarray                                     # doctest: +GPU
    >>> m = gpuarray.to_gpu(np.ones((2, 3), dtype=np.float32))
    >>> matmul(m, m.T).get()
    array([[3., 3.],
           [3., 3.]], dtype=float32)
    """
    for value in (a, b):
        if not is_gpuarray(value) and interop.device_operand(value) is None:
            raise TypeError(
                f"{type(value).__name__} is not a GPU array: matmul takes arrays on the GPU; "
                f"copy host data first (pyctk.gpuarray.to_gpu(x))"
            )
    template = a if is_gpuarray(a) else b
    product = _matmul(a, b, out=out, stream=stream)
    if out is not None:
        return out
    operand = interop.device_operand(product)
    assert operand is not None  # (matmul's result is a DeviceArray)
    result = type(template)(
        operand.shape, operand.dtype, template.allocator, base=product, gpudata=operand.pointer, strides=operand.strides
    )
    result._device_index = operand.device
    return result


def mul_add(
    x: Any, selffac: Any, other: Any, otherfac: Any, add_timer: Any = None, stream: Any = None, out: Any = None
) -> Any:
    """``selffac * x + otherfac * other`` in one kernel (PyCUDA's ``mul_add``); with
    ``add_timer``, ``add_timer(3 * x.size, seconds)`` where ``seconds()`` is the kernel's time."""
    if add_timer is None:
        return apply(MUL_ADD, (selffac, x, otherfac, other), out, stream)
    start = Event().record(stream)
    result = apply(MUL_ADD, (selffac, x, otherfac, other), out, stream)
    end = Event().record(stream)
    add_timer(3 * x.size, lambda: end.synchronize().time_since(start) * 1e-3)
    return result


def real(x: Any) -> Any:
    """The real parts of complex ``x`` as a new array; ``x`` itself if it is real."""
    if x.dtype.kind != "c":
        return x
    return x._view(x.shape, x.strides, dtype=np.finfo(x.dtype).dtype).copy()


def imag(x: Any) -> Any:
    """The imaginary parts of complex ``x`` as a new array; zeros like ``x`` if it is real."""
    if x.dtype.kind != "c":
        return x._new_like_me().fill(0)
    part = np.finfo(x.dtype).dtype
    return x._view(x.shape, x.strides, part.itemsize, dtype=part).copy()


def conj(x: Any, out: Any = None) -> Any:
    """The complex conjugate of ``x`` (into ``out``); ``x`` itself if it is real."""
    if x.dtype.kind != "c":
        return x
    return apply(CONJ, (x,), out)


def reverse(x: Any, stream: Any = None) -> Any:
    """A new array of ``x``'s shape with its elements in reverse order, as a 1-D array in
    memory order (PyCUDA's ``reverse``).

    >>> from pyctk import gpuarray                          # doctest: +GPU
    >>> reverse(gpuarray.to_gpu(np.arange(4))).get()
    array([3, 2, 1, 0])
    """
    result = x._new_like_me()
    if x.size:  # every axis reversed: the memory order reversed, whatever the layout
        offset = sum((length - 1) * stride for length, stride in zip(x.shape, x.strides))
        backwards = x._view(x.shape, [-stride for stride in x.strides], offset)
        result._assign(backwards, stream_handle(stream))
    return result


def maximum(a: Any, b: Any, out: Any = None, stream: Any = None) -> Any:
    """The element-wise maximum of ``a`` and ``b``, as NumPy's ``maximum`` (PyCUDA's ``maximum``).

    Unlike PyCUDA's: either operand may be a scalar, they broadcast, the dtype is NumPy's, and
    NaN wins, as in NumPy (``fmax`` would drop it).

    Parameters
    ----------
    a, b : GPUArray or scalar
        At least one a GPUArray (or another library's GPU array).
    out : GPUArray, optional
        Where to put the result.
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([1.0, np.nan, 3.0]))
    >>> gpuarray.maximum(a, 2).get(), gpuarray.minimum(a, 2).get()
    (array([ 2., nan,  3.]), array([ 1., nan,  2.]))
    """
    return apply(MAXIMUM, (a, b), out, stream)


def minimum(a: Any, b: Any, out: Any = None, stream: Any = None) -> Any:
    """The element-wise minimum of ``a`` and ``b``, as NumPy's ``minimum`` (PyCUDA's ``minimum``).

    Unlike PyCUDA's: either operand may be a scalar, they broadcast, the dtype is NumPy's, and
    NaN wins. See :func:`maximum`.

    Parameters
    ----------
    a, b : GPUArray or scalar
        At least one a GPUArray (or another library's GPU array).
    out : GPUArray, optional
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray
    """
    return apply(MINIMUM, (a, b), out, stream)


def if_positive(criterion: Any, then_: Any, else_: Any, out: Any = None, stream: Any = None) -> Any:
    """``then_`` where ``criterion > 0``, else ``else_``, element by element (PyCUDA's ``if_positive``).

    Unlike PyCUDA's: ``then_`` and ``else_`` may be scalars, the operands broadcast, and the
    dtype is NumPy's ``result_type(then_, else_)``.

    Parameters
    ----------
    criterion : GPUArray
    then_, else_ : GPUArray or scalar
    out : GPUArray, optional
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([1, 2, 3], dtype=np.float32))
    >>> gpuarray.if_positive(a - 2, a, 0).get()
    array([0., 0., 3.], dtype=float32)
    """
    return apply(IF_POSITIVE, (criterion, then_, else_), out, stream)


def where(criterion: Any, then_: Any, else_: Any, out: Any = None, stream: Any = None) -> Any:
    """``then_`` where ``criterion`` is nonzero, else ``else_``: NumPy's three-argument ``where``.

    PyCUDA has it too, undocumented; unlike PyCUDA's, ``then_`` and ``else_`` may be scalars,
    the operands broadcast, and the dtype is NumPy's ``result_type(then_, else_)``.

    Parameters
    ----------
    criterion : GPUArray
    then_, else_ : GPUArray or scalar
    out : GPUArray, optional
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([1, 2, 3], dtype=np.float32))
    >>> gpuarray.where(a > 1, a, -a).get()
    array([-1.,  2.,  3.], dtype=float32)
    """
    return apply(WHERE, (criterion, then_, else_), out, stream)


def logical_and(x1: Any, x2: Any, out: Any = None, allocator: Any = None) -> Any:
    """``x1 and x2``, element by element, as a bool array (PyCUDA's ``logical_and``).

    As in PyCUDA, either may be a scalar; unlike PyCUDA's, the operands broadcast.

    Parameters
    ----------
    x1, x2 : GPUArray or scalar
    out : GPUArray, optional
    allocator : callable, optional
        Where a new result's memory comes from.

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([0, 1, 2], dtype=np.int32))
    >>> gpuarray.logical_and(a, a > 1).get()
    array([False, False,  True])
    >>> gpuarray.logical_or(a, 0).get()
    array([False,  True,  True])
    >>> gpuarray.logical_not(a).get()
    array([ True, False, False])
    """
    return apply(LOGICAL_AND, (x1, x2), out, allocator=allocator)


def logical_or(x1: Any, x2: Any, out: Any = None, allocator: Any = None) -> Any:
    """``x1 or x2``, element by element, as a bool array (PyCUDA's ``logical_or``).

    As in PyCUDA, either may be a scalar; unlike PyCUDA's, the operands broadcast. See
    :func:`logical_and`.

    Parameters
    ----------
    x1, x2 : GPUArray or scalar
    out : GPUArray, optional
    allocator : callable, optional

    Returns
    -------
    GPUArray
    """
    return apply(LOGICAL_OR, (x1, x2), out, allocator=allocator)


def logical_not(x: Any, out: Any = None, allocator: Any = None) -> Any:
    """``not x``, element by element, as a bool array (PyCUDA's ``logical_not``, the same).

    See :func:`logical_and`.

    Parameters
    ----------
    x : GPUArray
    out : GPUArray, optional
    allocator : callable, optional

    Returns
    -------
    GPUArray
    """
    return apply(LOGICAL_NOT, (x,), out, allocator=allocator)
