"""pyctk: matrix multiplication on NVIDIA GPUs from NumPy, with no CUDA toolkit to install.

>>> import numpy as np, pyctk                          # doctest: +GPU
>>> pyctk.matmul(np.ones((2, 3)), np.ones((3, 4)))
array([[3., 3., 3., 3.],
       [3., 3., 3., 3.]])

Importing pyctk loads no CUDA library; the first call that needs the GPU does
(see pyctk._cuda.loader for the search order, PYCTK_DEBUG_LOAD=1 to watch it).
"""

import os as _os
import sys as _sys


def _hand_over_to_installed_copy():
    """The installed pyctk, imported in place of this unbuilt source tree, or an ImportError.

    ``python -m pyctk`` (and ``python -m pytest``) put the working directory first on
    sys.path, so from a checkout's root they find the checkout's ``pyctk/``, which has
    no ``libgpumatmul.so`` and no ``_build_config.py`` until it is built. NumPy says so
    and stops; here the installed copy, if any, takes this module's place in
    sys.modules (the import system returns that entry), so the same command works
    from the checkout and from anywhere else. Standard library only, and no pyctk
    submodule is imported before the hand-over: they must all come from the copy.
    """
    import importlib.machinery
    import importlib.util
    from pathlib import Path

    source = Path(__file__).resolve().parent
    others = [entry for entry in _sys.path if Path(entry or ".").resolve() != source.parent]
    spec = importlib.machinery.PathFinder.find_spec(__name__, others)
    installed = Path(spec.origin).parent if spec and spec.origin else None
    if installed is None or not (installed / "_build_config.py").is_file():
        raise ImportError(
            f"pyctk is being imported from its source tree, {source}, which is not built "
            f"(it has no libgpumatmul.so), and no installed pyctk was found elsewhere on "
            f"sys.path. Install it first: `pip install .` in the checkout (or `pip install "
            f"pyctk-cu12`); then `import pyctk` and `python -m pyctk` work from anywhere, "
            f"this folder included.",
            name=__name__,
        )
    if _os.environ.get("PYCTK_DEBUG_LOAD", "") not in ("", "0"):
        print(
            f"pyctk.load: {source} is an unbuilt source tree; using the installed pyctk at {installed}",
            file=_sys.stderr,
            flush=True,
        )
    module = importlib.util.module_from_spec(spec)
    _sys.modules[__name__] = module
    spec.loader.exec_module(module)
    return module


# The import, not a look for the file beside this one: an editable install
# (`pip install --no-build-isolation -e .`) keeps _build_config.py in its build folder.
try:
    from ._build_config import VERSION as __version__
except ImportError:  # handed over below, outside this handler: its error stands alone
    __version__ = None  # type: ignore[assignment]  # (a str wherever the import works)
if __version__ is None:
    _hand_over_to_installed_copy()
else:
    from ._arrays.device_array import DeviceArray, asarray, empty, from_dlpack, zeros
    from ._cuda.c_build import get_include, get_library
    from ._cuda.errors import (
        ContextLostError,
        CudaError,
        DeviceMismatchError,
        ForkedAfterCudaError,
        LibraryNotFoundError,
        NoDeviceError,
        NoDriverError,
        NoKernelImageError,
        OutOfMemoryError,
        PyctkError,
        UnsupportedError,
    )
    from ._info import info
    from ._matmul.api import matmul

    __all__ = [
        "matmul",
        "info",
        "DeviceArray",
        "asarray",
        "empty",
        "zeros",
        "from_dlpack",
        "get_include",
        "get_library",
        "PyctkError",
        "LibraryNotFoundError",
        "CudaError",
        "NoDriverError",
        "NoDeviceError",
        "NoKernelImageError",
        "OutOfMemoryError",
        "ContextLostError",
        "ForkedAfterCudaError",
        "UnsupportedError",
        "DeviceMismatchError",
        "__version__",
    ]
