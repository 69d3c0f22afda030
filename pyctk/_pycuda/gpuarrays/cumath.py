"""PyCUDA's ``pycuda.cumath``: C's math functions over GPUArrays, element by element.

``sin(a)`` and the others (one table, ``FUNCTIONS``) call the C function of the array's
dtype: ``sinf`` for float32, ``sin`` for float64, and the complex one for complex64 and
complex128 (``exp``, ``log``, ``sqrt``, ``sin`` ...; ``fabs``, ``ceil`` and ``floor`` have
none, a TypeError as in NumPy). Result dtypes are NumPy's, not PyCUDA's "integers stay
integers": ``sin`` of int32 is float64, of int16 float32 (NumPy's float16, for int8 and
uint8, is refused: convert first); ``ceil``/``floor`` keep integers. Operands may be
non-contiguous views; ``out=`` takes the result cast as NumPy's ``same_kind`` allows.
``fmod``, ``frexp``, ``ldexp`` and ``modf`` work for float32 and float64 alike (PyCUDA's
kernels are float32 only) and give NumPy's dtypes (``frexp``'s exponents are int32).

>>> import numpy as np                                               # doctest: +GPU
>>> from pyctk import cumath, gpuarray
>>> a = gpuarray.to_gpu(np.array([0.0, 0.5, 1.0], dtype=np.float32))
>>> cumath.sqrt(a * a).get()
array([0. , 0.5, 1. ], dtype=float32)
>>> [part.get() for part in cumath.frexp(a)]
[array([0. , 0.5, 0.5], dtype=float32), array([0, 0, 1], dtype=int32)]
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from .array import GPUArray
from .engine import apply
from .operations import FMOD, FREXP, LDEXP, MODF, Operation, ufunc_rule

# PyCUDA's names, which are C's, and NumPy's ufuncs (their dtypes, their TypeErrors).
FUNCTIONS = {
    "fabs": np.fabs,
    "ceil": np.ceil,
    "floor": np.floor,
    "exp": np.exp,
    "log": np.log,
    "log10": np.log10,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
}


def _operation(name: str) -> Operation:
    # Integer loops are NumPy's only for ceil and floor: an integer is its own ceiling.
    ufunc = FUNCTIONS[name]
    return Operation(ufunc.__name__, ufunc_rule(ufunc), {"fc": name + "{f}({0})", "biu": "{0}"})


# Each function's docstring example: (its input, its output .get(), rounded to 4 decimals
# where the last digits of a libm result may differ between the GPU and the host).
_EXAMPLES = {
    "fabs": ("np.array([-1.5, 2.0], dtype=np.float32)", "array([1.5, 2. ], dtype=float32)"),
    "ceil": ("np.array([-1.5, 1.2])", "array([-1.,  2.])"),
    "floor": ("np.array([-1.5, 1.2])", "array([-2.,  1.])"),
    "exp": ("np.array([0.0, 1.0])", "array([1.    , 2.7183])"),
    "log": ("np.array([1.0, np.e])", "array([0., 1.])"),
    "log10": ("np.array([1.0, 100.0])", "array([0., 2.])"),
    "sqrt": ("np.array([0, 1, 4, 9], dtype=np.float32)", "array([0., 1., 2., 3.], dtype=float32)"),
    "sin": ("np.array([0.0, np.pi / 2])", "array([0., 1.])"),
    "cos": ("np.array([0.0, np.pi])", "array([ 1., -1.])"),
    "tan": ("np.array([0.0, np.pi / 4])", "array([0., 1.])"),
    "asin": ("np.array([0.0, 1.0])", "array([0.    , 1.5708])"),
    "acos": ("np.array([1.0, 0.0])", "array([0.    , 1.5708])"),
    "atan": ("np.array([0.0, 1.0])", "array([0.    , 0.7854])"),
    "sinh": ("np.array([0.0, 1.0])", "array([0.    , 1.1752])"),
    "cosh": ("np.array([0.0, 1.0])", "array([1.    , 1.5431])"),
    "tanh": ("np.array([0.0, 1.0])", "array([0.    , 0.7616])"),
}
_EXACT = {"fabs", "ceil", "floor", "sqrt"}  # IEEE results: no rounding in the example


def _function(name: str) -> Callable[..., GPUArray]:
    operation = _operation(name)

    def function(
        array: GPUArray, stream_or_out: Any = None, *, out: GPUArray | None = None, stream: Any = None
    ) -> GPUArray:
        if stream_or_out is not None:
            warnings.warn("please use 'out' or 'stream' keyword arguments", DeprecationWarning, stacklevel=2)
            which = "out" if isinstance(stream_or_out, GPUArray) else "stream"
            if (out if which == "out" else stream) is not None:
                raise TypeError(f"{name}() got {which} both as its second argument and as a keyword")
            out, stream = (stream_or_out, stream) if which == "out" else (out, stream_or_out)
        return apply(operation, (array,), out, stream)

    function.__name__ = function.__qualname__ = name
    given, shown = _EXAMPLES[name]
    result = f"cumath.{name}(a).get()" + ("" if name in _EXACT else ".round(4)")
    integer_note = (
        f"integer arrays keep their dtype (an integer is its own ``{name}``)"
        if name in ("ceil", "floor")
        else "integer arrays give NumPy's float dtype (float64 for int32; float16, for int8 "
        "and uint8, is refused: convert first)"
    )
    complex_note = "" if name in ("fabs", "ceil", "floor") else ", complex arrays the complex one"
    function.__doc__ = f"""C's ``{name}`` of each element, as NumPy's ``{FUNCTIONS[name].__name__}``
    (PyCUDA's ``cumath.{name}``).

    float32 arrays use CUDA's float function (``{name}f``), float64 the double one{complex_note}.
    Unlike PyCUDA's: {integer_note}, any layout works, and ``out`` takes the result cast as
    NumPy's ``same_kind`` rule allows.

    Parameters
    ----------
    array : GPUArray
    stream_or_out : GPUArray or pyctk.driver.Stream, optional
        PyCUDA's old second argument, ``out`` or ``stream``: deprecated, as in PyCUDA
        (a DeprecationWarning).
    out : GPUArray, optional
        Where to put the result.
    stream : pyctk.driver.Stream, optional
        Where the kernel is queued; default the legacy default stream.

    Returns
    -------
    GPUArray

    Raises
    ------
    TypeError
        A dtype NumPy's ``{FUNCTIONS[name].__name__}`` has no loop for.

    Examples
    --------
    >>> import numpy as np                                      # doctest: +GPU
    >>> from pyctk import cumath, gpuarray
    >>> a = gpuarray.to_gpu({given})
    >>> {result}
    {shown}
    """
    return function


fabs = _function("fabs")
ceil = _function("ceil")
floor = _function("floor")
exp = _function("exp")
log = _function("log")
log10 = _function("log10")
sqrt = _function("sqrt")
sin = _function("sin")
cos = _function("cos")
tan = _function("tan")
asin = _function("asin")
acos = _function("acos")
atan = _function("atan")
sinh = _function("sinh")
cosh = _function("cosh")
tanh = _function("tanh")


def fmod(arg: GPUArray, mod: Any, stream: Any = None) -> GPUArray:
    """The remainder of ``arg / mod`` with ``arg``'s sign: C's ``fmod``, NumPy's ``fmod`` (PyCUDA's ``cumath.fmod``).

    Unlike PyCUDA's: float64 (and integer) arrays work, not only float32; ``mod`` may be a
    scalar; the operands broadcast.

    Parameters
    ----------
    arg : GPUArray
    mod : GPUArray or scalar
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                      # doctest: +GPU
    >>> from pyctk import cumath, gpuarray
    >>> cumath.fmod(gpuarray.to_gpu(np.array([-3.5, 3.5])), 2).get()
    array([-1.5,  1.5])
    """
    return apply(FMOD, (arg, mod), stream=stream)


def frexp(arg: GPUArray, stream: Any = None) -> tuple[GPUArray, GPUArray]:
    """``(significands, exponents)`` with ``arg == significand * 2**exponent`` (PyCUDA's ``cumath.frexp``).

    The significands are in [0.5, 1) (0 for 0), the exponents int32, as NumPy's ``frexp``.
    Unlike PyCUDA's, float64 arrays work, not only float32, and the exponents are integers
    (PyCUDA's are floats).

    Parameters
    ----------
    arg : GPUArray
        float32 or float64.
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    tuple of GPUArray

    Examples
    --------
    >>> import numpy as np                                      # doctest: +GPU
    >>> from pyctk import cumath, gpuarray
    >>> significands, exponents = cumath.frexp(gpuarray.to_gpu(np.array([0.0, 0.5, 1.0])))
    >>> significands.get(), exponents.get()
    (array([0. , 0.5, 0.5]), array([0, 0, 1], dtype=int32))
    >>> cumath.ldexp(significands, exponents).get()
    array([0. , 0.5, 1. ])
    """
    return apply(FREXP, (arg,), stream=stream)


def ldexp(significand: GPUArray, exponent: Any, stream: Any = None) -> GPUArray:
    """``significand * 2**exponent``, element by element (PyCUDA's ``cumath.ldexp``).

    NumPy's ``ldexp``. Unlike PyCUDA's, float64 arrays work, not only float32, and
    ``exponent`` may be a scalar. An array of float exponents is taken as PyCUDA's and C's
    ``ldexp`` take them, each truncated to an integer (NumPy's ``ldexp`` refuses them).

    Parameters
    ----------
    significand : GPUArray
        float32 or float64.
    exponent : GPUArray or int
        Integers, or an array of floats (truncated).
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                      # doctest: +GPU
    >>> from pyctk import cumath, gpuarray
    >>> cumath.ldexp(gpuarray.to_gpu(np.array([0.5, 0.75])), 2).get()
    array([2., 3.])
    """
    return apply(LDEXP, (significand, exponent), stream=stream)


def modf(arg: GPUArray, stream: Any = None) -> tuple[GPUArray, GPUArray]:
    """``(fractional parts, integral parts)`` of ``arg``, both with its sign (PyCUDA's ``cumath.modf``).

    NumPy's ``modf``. Unlike PyCUDA's, float64 arrays work, not only float32.

    Parameters
    ----------
    arg : GPUArray
        float32 or float64.
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    tuple of GPUArray

    Examples
    --------
    >>> import numpy as np                                      # doctest: +GPU
    >>> from pyctk import cumath, gpuarray
    >>> fractions, integers = cumath.modf(gpuarray.to_gpu(np.array([-1.5, 2.25])))
    >>> fractions.get(), integers.get()
    (array([-0.5 ,  0.25]), array([-1.,  2.]))
    """
    return apply(MODF, (arg,), stream=stream)
