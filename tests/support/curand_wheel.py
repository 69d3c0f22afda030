"""Whether the curand extra's wheel is installed, for the tests of cuRAND's generators."""

from __future__ import annotations

import pytest

from pyctk._build_config import CUDA_MAJOR
from pyctk._pycuda.compiling import headers

CURAND_WHEEL = "nvidia-curand-cu12" if CUDA_MAJOR == 12 else "nvidia-curand"
HAS_CURAND = any(folder.pip_name == CURAND_WHEEL for folder in headers.header_folders())
needs_curand = pytest.mark.skipif(not HAS_CURAND, reason=f"needs the curand extra ({CURAND_WHEEL})")
