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

>>> import numpy as np
>>> from pyctk import cumath, gpuarray
>>> a = gpuarray.to_gpu(np.array([0.0, 0.5, 1.0], dtype=np.float32))   # doctest: +SKIP
>>> cumath.sin(a).get()                                              # doctest: +SKIP
array([0.       , 0.47942555, 0.84147096], dtype=float32)
>>> [part.get() for part in cumath.frexp(a)]                         # doctest: +SKIP
[array([0. , 0.5, 0.5], dtype=float32), array([0, 0, 1], dtype=int32)]
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from .arithmetic import Operation, apply, ufunc_rule
from .array import GPUArray

# PyCUDA's names, which are C's, and NumPy's ufuncs (their dtypes, their TypeErrors).
FUNCTIONS = {
    "fabs": np.fabs, "ceil": np.ceil, "floor": np.floor, "exp": np.exp, "log": np.log,
    "log10": np.log10, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh,
}


def _operation(name: str) -> Operation:
    # Integer loops are NumPy's only for ceil and floor: an integer is its own ceiling.
    ufunc = FUNCTIONS[name]
    return Operation(ufunc.__name__, ufunc_rule(ufunc), {"fc": name + "{f}({0})", "biu": "{0}"})


def _function(name: str) -> Callable[..., GPUArray]:
    operation = _operation(name)

    def function(array: GPUArray, stream_or_out: Any = None, *, out: GPUArray | None = None,
                 stream: Any = None) -> GPUArray:
        if stream_or_out is not None:
            warnings.warn("please use 'out' or 'stream' keyword arguments", DeprecationWarning, stacklevel=2)
            which = "out" if isinstance(stream_or_out, GPUArray) else "stream"
            if (out if which == "out" else stream) is not None:
                raise TypeError(f"{name}() got {which} both as its second argument and as a keyword")
            out, stream = (stream_or_out, stream) if which == "out" else (out, stream_or_out)
        return apply(operation, (array,), out, stream)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"``{name}`` of each element of ``array`` (NumPy's ``{FUNCTIONS[name].__name__}``), "
                        f"into ``out`` if given, on ``stream``.\n\n"
                        f"    >>> cumath.{name}(gpuarray.to_gpu(np.ones(3)))      # doctest: +SKIP\n")
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

_FMOD = Operation("fmod", ufunc_rule(np.fmod), {"f": "fmod{f}({0}, {1})", "u": "({1} ? {0} % {1} : 0)",
                                                "i": "({1} == 0 || {1} == -1 ? 0 : {0} % {1})"})
_FREXP = Operation("frexp", ufunc_rule(np.frexp), "{o0} = frexp{f}({0}, &{o1})")
_LDEXP = Operation("ldexp", ufunc_rule(np.ldexp), "ldexp{f}({0}, pyctk_exponent({1}))")
_MODF = Operation("modf", ufunc_rule(np.modf), "{o0} = modf{f}({0}, &{o1})")


def fmod(arg: GPUArray, mod: Any, stream: Any = None) -> GPUArray:
    """The remainder of ``arg / mod`` with ``arg``'s sign (C's ``fmod``; ``mod`` may be a scalar).

    >>> cumath.fmod(gpuarray.to_gpu(np.array([-3.5, 3.5])), 2).get()     # doctest: +SKIP
    array([-1.5,  1.5])
    """
    return apply(_FMOD, (arg, mod), stream=stream)


def frexp(arg: GPUArray, stream: Any = None) -> tuple[GPUArray, GPUArray]:
    """``(significands, exponents)`` with ``arg == significand * 2**exponent``, the
    significands in [0.5, 1) and the exponents int32 (NumPy's)."""
    return apply(_FREXP, (arg,), stream=stream)


def ldexp(significand: GPUArray, exponent: Any, stream: Any = None) -> GPUArray:
    """``significand * 2**exponent`` (``exponent`` integers: an array or a scalar)."""
    return apply(_LDEXP, (significand, exponent), stream=stream)


def modf(arg: GPUArray, stream: Any = None) -> tuple[GPUArray, GPUArray]:
    """``(fractional parts, integral parts)`` of ``arg``, both with its sign."""
    return apply(_MODF, (arg,), stream=stream)
