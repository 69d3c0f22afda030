"""pyctk: matrix multiplication on NVIDIA GPUs from NumPy, with no CUDA toolkit to install.

>>> import numpy as np, pyctk                          # doctest: +GPU
>>> pyctk.matmul(np.ones((2, 3)), np.ones((3, 4)))
array([[3., 3., 3., 3.],
       [3., 3., 3., 3.]])

Importing pyctk loads no CUDA library; the first call that needs the GPU does
(see pyctk._cuda.loader for the search order, PYCTK_DEBUG_LOAD=1 to watch it). Nor does it
import the modules behind the public names: each is imported on the first use of a name it
defines (PEP 562's module ``__getattr__``), so that ``import pyctk`` costs a program that does
not multiply, or not yet, a fraction of a millisecond (benchmarks/startup.py measures it).
"""

import os as _os
import sys as _sys
from typing import TYPE_CHECKING as _TYPE_CHECKING


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

# NumPy, which every public name needs, stays imported here (free after the program's own
# import of it): the names' first uses may come from several threads at once, and NumPy's
# own import, run in two threads at once, fails (circular imports inside NumPy).
import numpy as _numpy  # noqa: E402, F401

# Public name -> the module that defines it, relative to this package, imported on the name's
# first use. matmul's module imports nearly all of pyctk._arrays and pyctk._matmul, about thirty
# modules that were nearly all of `import pyctk`'s time, and that a program which imports pyctk but
# does not multiply (or not yet: a command line tool, a worker process) never needs.
_DEFINED_IN = {
    "matmul": "._matmul.api",
    "info": "._info",
    "DeviceArray": "._arrays.device_array",
    "asarray": "._arrays.device_array",
    "empty": "._arrays.device_array",
    "zeros": "._arrays.device_array",
    "from_dlpack": "._arrays.device_array",
    "get_include": "._cuda.c_build",
    "get_library": "._cuda.c_build",
    "PyctkError": "._cuda.errors",
    "LibraryNotFoundError": "._cuda.errors",
    "CudaError": "._cuda.errors",
    "NoDriverError": "._cuda.errors",
    "NoDeviceError": "._cuda.errors",
    "NoKernelImageError": "._cuda.errors",
    "OutOfMemoryError": "._cuda.errors",
    "ContextLostError": "._cuda.errors",
    "ForkedAfterCudaError": "._cuda.errors",
    "UnsupportedError": "._cuda.errors",
    "DeviceMismatchError": "._cuda.errors",
}

__all__ = [  # _DEFINED_IN's names, written out for the linters (tests/pyctk_tests/test_import.py)
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

if _TYPE_CHECKING:  # what type checkers and import-linter read; at run time, __getattr__ below
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


def _public_name(name: str) -> object:
    """The public name ``name``, from its module, imported now if it was not yet: this
    module's ``__getattr__`` (PEP 562), called only for names it does not have yet. Each is
    kept here once found, so that later uses are plain attribute lookups.
    """
    module = _DEFINED_IN.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


if not _TYPE_CHECKING:  # (so that type checkers still flag a misspelt pyctk.name)
    __getattr__ = _public_name


def __dir__() -> list[str]:
    """The module's names, the public ones not imported yet included (tab completion, help)."""
    return sorted({*globals(), *_DEFINED_IN})
