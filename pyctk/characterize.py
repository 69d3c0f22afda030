"""PyCUDA's ``pycuda.characterize``: the GPU's and the platform's features, as PyCUDA's
tests and programs ask for them.

A PyCUDA program runs with its import changed::

    from pyctk.characterize import has_double_support   # was: from pycuda.characterize ...

:func:`has_double_support`, :func:`has_stack` and :func:`sizeof` ask the current context's
GPU (device 0's primary context where none is current); :func:`platform_bits` asks no GPU.

>>> platform_bits()
64
"""

from ._pycuda.kernels.characterize import has_double_support, has_stack, platform_bits, sizeof

__all__ = ["has_double_support", "has_stack", "platform_bits", "sizeof"]
