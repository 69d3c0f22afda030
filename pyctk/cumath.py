"""PyCUDA's ``pycuda.cumath``: NumPy's math functions on GPUArrays, element by element.

>>> import numpy as np                              # doctest: +GPU
>>> from pyctk import cumath, gpuarray               # was: import pycuda.cumath as cumath
>>> cumath.sqrt(gpuarray.to_gpu(np.array([1.0, 4.0, 9.0], dtype=np.float32)))
array([1., 2., 3.], dtype=float32)
>>> cumath.sqrt(gpuarray.to_gpu(np.array([4], dtype=np.int32))).dtype    # NumPy's dtype
dtype('float64')

float32 arrays use CUDA's float functions (``sinf`` ...), float64 the double ones, complex
arrays the complex ones where they exist; integer arrays give NumPy's float results. ``out=``
and ``stream=`` as in PyCUDA; ``fmod``, ``frexp``, ``ldexp`` and ``modf`` take float32 and
float64 (PyCUDA's are float32 only).
"""

from ._pycuda.gpuarrays.cumath import (
    acos,
    asin,
    atan,
    ceil,
    cos,
    cosh,
    exp,
    fabs,
    floor,
    fmod,
    frexp,
    ldexp,
    log,
    log10,
    modf,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
)

__all__ = [
    "acos",
    "asin",
    "atan",
    "ceil",
    "cos",
    "cosh",
    "exp",
    "fabs",
    "floor",
    "fmod",
    "frexp",
    "ldexp",
    "log",
    "log10",
    "modf",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
]
