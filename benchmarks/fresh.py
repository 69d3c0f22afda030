"""Fresh processes: what a new Python takes to import pyctk, and to its first product.

Shared by matmul.py (its "startup" and "import" rows) and startup.py. Each measurement is a
new interpreter started in an empty folder (so that an installed pyctk is imported, not a
checkout's unbuilt pyctk/), and a row is the median of several after one unrecorded run that
warms the disk cache. This module imports no pyctk: startup.py measures the imports on a
machine with no GPU, before anything starts CUDA.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable

N = 16  # the first product: N x N float32 NumPy arrays, NumPy in, NumPy out

# library -> code that imports it and multiplies NumPy's a and b into a NumPy array
FIRST_RESULT = {
    "pyctk": "import pyctk\nc = pyctk.matmul(a, b)",
    "cupy": "import cupy\nc = cupy.asnumpy(cupy.asarray(a) @ cupy.asarray(b))",
    "torch": "import torch\nc = (torch.from_numpy(a).cuda() @ torch.from_numpy(b).cuda()).cpu().numpy()",
}
_BEFORE = f"import numpy as np\na = b = np.ones(({N}, {N}), np.float32)\n"
# The floor under every library's first result: the same Python and NumPy, then only what any
# CUDA program waits for, the driver's start and device 0's primary context (what cudaFree(0)
# does in cudart), through libcuda and ctypes alone, with no library of anyone's loaded.
DRIVER_FLOOR = (
    "import ctypes\ncuda = ctypes.CDLL('libcuda.so.1')\ncontext = ctypes.c_void_p()\n"
    "assert cuda.cuInit(0) == 0 and cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), 0) == 0"
)
_AFTER = "\nimport time\nprint(time.time())"

# kind of row -> what is timed in a Python that has imported NumPy already (what pyctk adds
# to a program that uses NumPy). `import pyctk` imports the modules behind its names on their
# first use: "import-matmul" adds the ones that pyctk.matmul needs, which a first product pays.
IMPORTS = {
    "import": "import pyctk",
    "import-matmul": "import pyctk\npyctk.matmul",
}
_TIMED = "import time\nimport numpy\nstart = time.perf_counter()\n{code}\nprint(time.perf_counter() - start)"

# kind of row -> what the performance page and the tables call it
WHAT = {
    "startup": f"fresh process to first result ({N} x {N} float32)",
    "startup-floor": "fresh process to the driver's context, no library (the floor)",
    "import": "import pyctk, after NumPy",
    "import-matmul": "import pyctk and pyctk.matmul's modules, after NumPy",
}


def child_output(code: str) -> float:
    """The number a fresh Python running ``code`` prints last (CalledProcessError if it fails)."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def first_result_seconds(library: str) -> float:
    """Wall clock from just before a fresh Python starts to its first product in NumPy."""
    start = time.time()
    return child_output(_BEFORE + FIRST_RESULT[library] + _AFTER) - start


def floor_seconds() -> float:
    """Wall clock from just before a fresh Python starts to DRIVER_FLOOR's end."""
    start = time.time()
    return child_output(_BEFORE + DRIVER_FLOOR + _AFTER) - start


def import_seconds(kind: str) -> float:
    """The time of ``IMPORTS[kind]`` in a fresh Python that has imported NumPy."""
    return child_output(_TIMED.format(code=IMPORTS[kind]))


def median_of_runs(measure: Callable[[], float], runs: int) -> float:
    """Median of ``runs`` measurements after one unrecorded (disk cache warm-up)."""
    measure()
    return statistics.median([measure() for _ in range(runs)])
