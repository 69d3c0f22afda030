"""PyCUDA's ``pycuda.curandom``: random numbers in GPUArrays.

>>> import numpy as np                            # doctest: +GPU
>>> from pyctk import curandom                    # was: from pycuda import curandom
>>> x = curandom.rand((1000,))
>>> x.shape, x.dtype
((1000,), dtype('float32'))
>>> gen = curandom.XORWOWRandomNumberGenerator()
>>> y = gen.gen_normal((1000,), np.float64)
>>> y.dtype
dtype('float64')

``rand`` needs nothing more than pyctk (and NVRTC): pyctk's own Philox4x32-10 kernel (PyCUDA's
is an MD5 hash), seeded from ``numpy.random`` at each call, so ``numpy.random.seed`` makes it
repeat. The generator classes (XORWOW, MRG32k3a, Sobol 32/64, plain or scrambled) compile
cuRAND's device API into their kernels and call its host library for Sobol's direction
vectors: ``pip install "pyctk-cu12[curand]"`` (or ``pyctk-cu13[curand]``).
"""

from ._pycuda.gpuarrays.curandom import (
    MRG32k3aRandomNumberGenerator,
    ScrambledSobol32RandomNumberGenerator,
    ScrambledSobol64RandomNumberGenerator,
    Sobol32RandomNumberGenerator,
    Sobol64RandomNumberGenerator,
    XORWOWRandomNumberGenerator,
    direction_vector_set,
    generate_direction_vectors,
    generate_scramble_constants32,
    generate_scramble_constants64,
    get_curand_version,
    rand,
    seed_getter_uniform,
    seed_getter_unique,
)

__all__ = [
    "MRG32k3aRandomNumberGenerator",
    "ScrambledSobol32RandomNumberGenerator",
    "ScrambledSobol64RandomNumberGenerator",
    "Sobol32RandomNumberGenerator",
    "Sobol64RandomNumberGenerator",
    "XORWOWRandomNumberGenerator",
    "direction_vector_set",
    "generate_direction_vectors",
    "generate_scramble_constants32",
    "generate_scramble_constants64",
    "get_curand_version",
    "rand",
    "seed_getter_uniform",
    "seed_getter_unique",
]
