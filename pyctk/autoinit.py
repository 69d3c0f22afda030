"""``import pyctk.autoinit``: PyCUDA's ``import pycuda.autoinit``, so ported programs keep that line.

pyctk needs no set-up: every call starts CUDA when it first needs it, on the current
device's primary context. Importing this module starts CUDA at once instead, so that a
missing driver or GPU is reported at the import (``pyctk.NoDriverError``, with the fix),
and gives the two names programs use from PyCUDA's module:

- ``device``: the current device (0 unless the thread chose another; choose a GPU with
  ``CUDA_VISIBLE_DEVICES``, PyCUDA's ``CUDA_DEVICE`` is not read);
- ``context``: its primary context, for ``pyctk.autoinit.context.synchronize()``.

Unlike PyCUDA's, it makes no context of its own and pushes none, so there is nothing to
pop at exit, and it changes nothing for PyTorch, CuPy or the rest of pyctk.
"""

from ._cuda import driver_api
from .driver import Device

device = Device(driver_api.current_device())
context = device.retain_primary_context()
