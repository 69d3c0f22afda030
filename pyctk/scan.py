"""PyCUDA's ``pycuda.scan``: inclusive and exclusive scans (prefix sums) of 1-D GPUArrays.

>>> from pyctk.scan import InclusiveScanKernel      # was: from pycuda.scan import ...
>>> cumsum = InclusiveScanKernel(np.int32, "a+b")
>>> cumsum(a_gpu)                                   # doctest: +SKIP  (in place, as in PyCUDA)

``scan_expr`` is a C expression in ``a`` and ``b`` (associative; it need not commute: the
elements' order is kept), ``neutral`` a C expression (needed by the exclusive scan).
"""

from ._pycuda.gpuarrays.scan import ExclusiveScanKernel, InclusiveScanKernel

__all__ = ["ExclusiveScanKernel", "InclusiveScanKernel"]
