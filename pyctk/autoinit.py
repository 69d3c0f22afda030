"""``import pyctk.autoinit``: PyCUDA's ``import pycuda.autoinit``, so that ported programs keep that line.

Importing it starts CUDA at once (a missing driver or GPU is reported here:
``pyctk.NoDriverError``, with the fix), pushes a context on the default device (PyCUDA's
choice: ``$CUDA_DEVICE``, else the number in ``~/.cuda_device``, else the first device that
works), pops it at exit, and gives the two names programs use from PyCUDA's module:

- ``device``: that device, a ``pyctk.driver.Device``;
- ``context``: that context, a ``pyctk.driver.Context``, for
  ``pyctk.autoinit.context.synchronize()``.

Unlike PyCUDA's, the context is the device's primary one (as ``pyctk.autoprimaryctx``
pushes), not a new one: the one the CUDA runtime, PyTorch, CuPy and pyctk's own arrays
(``pyctk.matmul``, ``DeviceArray``) use, so their memory and pyctk.driver's mix freely.
pyctk itself needs no such import: with no context pushed, it works in the current device's
primary context. A program that wants a context of its own makes one:
``pyctk.driver.Device(0).make_context()``.

>>> import pyctk.autoinit                          # doctest: +GPU
>>> pyctk.autoinit.device
<pyctk.driver.Device ...>
>>> pyctk.autoinit.context
<pyctk.driver.Context 0x... (primary) on device ...>
>>> pyctk.autoinit.context.synchronize()
"""

from ._pycuda.contexts.default_context import start_primary_context

context = start_primary_context()
device = context.get_device()
