"""``import pyctk.autoprimaryctx``: PyCUDA's ``import pycuda.autoprimaryctx``.

Importing it starts CUDA at once (a missing driver or GPU is reported here:
``pyctk.NoDriverError``, with the fix), retains and pushes the primary context of the
default device (``$CUDA_DEVICE``, else the number in ``~/.cuda_device``, else the first
device that works), pops it at exit, and gives PyCUDA's two names:

- ``device``: that device, a ``pyctk.driver.Device``;
- ``context``: its primary context, a ``pyctk.driver.Context``: the one the CUDA runtime,
  PyTorch, CuPy, Numba and pyctk's own arrays use.

In pyctk, ``pyctk.autoinit`` does the same (PyCUDA's makes a new context).

>>> import pyctk.autoprimaryctx                    # doctest: +GPU
>>> pyctk.autoprimaryctx.context == pyctk.autoprimaryctx.device.retain_primary_context()
True
"""

from ._pycuda.contexts.default_context import start_primary_context

context = start_primary_context()
device = context.get_device()
