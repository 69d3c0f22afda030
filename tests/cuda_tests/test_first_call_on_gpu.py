"""On a GPU: a fresh process's first product, which loads the libraries while another thread
initialises the driver and the device's primary context (pyctk._contexts.load_library).

Each case runs in a new Python, since only a process's first GPU call takes that path.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from pyctk._cuda import cudart as _cudart

pytestmark = pytest.mark.gpu

FIRST_PRODUCT = textwrap.dedent(r"""
    import json, sys
    import numpy as np
    import pyctk
    from pyctk._cuda import contexts as _contexts
    from pyctk._cuda import cudart as _cudart
    from pyctk._cuda import fork as _fork
    device, backend = int(sys.argv[1]), sys.argv[2]
    rng = np.random.default_rng(device)
    a, b = rng.random((70, 50)), rng.random((50, 30))
    seen = {"unsupported": None}
    if backend == "cublas":  # a first call that fails its last check: no harm to the next
        try:
            pyctk.matmul(a.astype(np.int16), b.astype(np.int16), backend="cublas", device=device)
        except pyctk.UnsupportedError as error:
            seen["unsupported"] = "tiled" in str(error)
    c = pyctk.matmul(a, b, backend=backend, device=device)
    seen.update(error=float(np.abs(c - a @ b).max()), current=_cudart.get_device(),
                started=_fork.cuda_started())
    print(json.dumps(seen))
""")


def first_product(device: int, backend: str) -> dict:
    run = subprocess.run(
        [sys.executable, "-c", FIRST_PRODUCT, str(device), backend], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("backend", ["tiled", "cublas"])
def test_a_fresh_process_first_product_is_right_on_every_gpu(backend):
    for device in range(_cudart.device_count()):
        seen = first_product(device, backend)
        assert seen["error"] < 1e-12, (device, seen)
        # The driver was started on another thread: the caller is still on device 0.
        assert seen["current"] == 0 and seen["started"] is True, (device, seen)
        assert seen["unsupported"] is (True if backend == "cublas" else None), seen
