"""On a GPU: a second process runs pyctk.gpuarray's kernels from the on-disk cache, without NVRTC.

The first fresh Python, with an empty cache (PYCTK_CACHE_DIR), compiles an ElementwiseKernel and
the kernels of a few GPUArray operations; a second one, with the same cache, runs the same code
and must load every kernel from the cache: NVRTC is neither among pyctk's loaded libraries nor
mapped into the process, no entry is added, and the results are right in both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

# The work of both processes; it prints its results and what it loaded as JSON.
WORK = textwrap.dedent(r"""
    import json
    import numpy as np
    from pyctk import gpuarray
    from pyctk.elementwise import ElementwiseKernel
    from pyctk._cuda import loader
    a = gpuarray.to_gpu(np.arange(1000, dtype=np.float32))
    b = gpuarray.to_gpu(np.linspace(-1, 1, 1000, dtype=np.float32))
    z = gpuarray.empty(a.shape, a.dtype)
    ElementwiseKernel("float *a, float *b, float *z", "z[i] = a[i] * b[i] + 1", "cache_check")(a, b, z)
    w = gpuarray.to_gpu((np.arange(4) + 1j * np.arange(4)).astype(np.complex64))
    results = {"kernel": z.get(), "add": (a + b).get(), "twice": (a * 2).get(),
               "sum": gpuarray.sum(a).get(), "complex": (w + w).get()}
    maps = [line.split() for line in open("/proc/self/maps")]
    print(json.dumps({"results": {name: [repr(x) for x in value.ravel().tolist()] for name, value in results.items()},
                      "libraries": [library.name for library in loader.loaded_libraries()],
                      "mapped_nvrtc": sorted({f[5] for f in maps
                                              if len(f) > 5 and "nvrtc" in f[5].rsplit("/", 1)[-1]})}))
""")


def expected() -> dict[str, np.ndarray]:
    a = np.arange(1000, dtype=np.float32)
    b = np.linspace(-1, 1, 1000, dtype=np.float32)
    w = (np.arange(4) + 1j * np.arange(4)).astype(np.complex64)
    return {"kernel": a * b + 1, "add": a + b, "twice": a * 2, "sum": np.array([a.sum()]), "complex": w + w}


def run_work(cache, cwd) -> dict:
    """WORK in a fresh Python (in ``cwd``: not a checkout's unbuilt pyctk/) with its kernel cache in ``cache``."""
    environment = {**os.environ, "PYCTK_CACHE_DIR": str(cache)}
    environment.pop("PYCTK_DISABLE_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", WORK], cwd=cwd, env=environment, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    for name, want in expected().items():
        got = np.array([complex(x) for x in seen["results"][name]])
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=name)
    return seen


def test_a_second_process_loads_every_kernel_from_the_cache_without_nvrtc(tmp_path):
    cache = tmp_path / "cache"
    first = run_work(cache, tmp_path)
    assert "nvrtc" in first["libraries"] and first["mapped_nvrtc"], first  # it compiled
    entries = sorted(p.name for p in (cache / "kernels").glob("*.kernel"))
    assert entries, "the first process wrote no cache entries"

    second = run_work(cache, tmp_path)
    assert "nvrtc" not in second["libraries"], second["libraries"]
    assert second["mapped_nvrtc"] == [], second["mapped_nvrtc"]
    assert sorted(p.name for p in (cache / "kernels").glob("*.kernel")) == entries  # nothing new
