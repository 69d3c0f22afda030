"""PyCUDA's ``pycuda.scan``: inclusive and exclusive scans (prefix sums) of 1-D GPUArrays.

>>> import numpy as np                              # doctest: +GPU
>>> from pyctk import gpuarray
>>> from pyctk.scan import InclusiveScanKernel      # was: from pycuda.scan import ...
>>> cumsum = InclusiveScanKernel(np.int32, "a+b")
>>> a = gpuarray.to_gpu(np.arange(1, 6, dtype=np.int32))
>>> cumsum(a)                                       # in place, as in PyCUDA
array([ 1,  3,  6, 10, 15], dtype=int32)

``scan_expr`` is a C expression in ``a`` and ``b`` (associative; it need not commute: the
elements' order is kept), ``neutral`` a C expression (needed by the exclusive scan).
"""

from ._pycuda.gpuarrays.scan import ExclusiveScanKernel, InclusiveScanKernel

__all__ = ["ExclusiveScanKernel", "InclusiveScanKernel"]
