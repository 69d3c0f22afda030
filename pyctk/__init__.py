"""pyctk: matrix multiplication on NVIDIA GPUs from NumPy, with no CUDA toolkit to install.

>>> import numpy as np, pyctk
>>> c = pyctk.matmul(np.ones((2, 3)), np.ones((3, 4)))   # doctest: +SKIP

Importing pyctk loads no CUDA library; the first call that needs the GPU does
(see pyctk._loader for the search order, PYCTK_DEBUG_LOAD=1 to watch it).
"""

from ._build_config import VERSION as __version__
from ._errors import (CudaError, LibraryNotFoundError, NoDeviceError, NoDriverError,
                      NoKernelImageError, OutOfMemoryError, PyctkError, UnsupportedError)
from ._info import info
from ._matmul import matmul

__all__ = ["matmul", "info", "PyctkError", "LibraryNotFoundError", "CudaError", "NoDriverError",
           "NoDeviceError", "NoKernelImageError", "OutOfMemoryError", "UnsupportedError",
           "__version__"]
