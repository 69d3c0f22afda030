"""``import pyctk`` stays cheap: it loads no CUDA library and defers what only later calls need.

Checked by what a fresh interpreter has imported and mapped, never by timing (which is flaky).
"""

from __future__ import annotations

import json
import subprocess
import sys

# Left to the calls that need them: importlib.metadata (which pyctk distributions are installed),
# pyctk._cuda.loader (loading the libraries; it imports dataclasses and pathlib); and threading, whose
# Lock pyctk takes from _thread.
DEFERRED = ["importlib.metadata", "pyctk._cuda.loader", "dataclasses", "pathlib", "threading"]

CHILD = """
import json, sys
import numpy  # already imported in the programs that use pyctk: its imports are not pyctk's
before = set(sys.modules)
import pyctk
with open("/proc/self/maps") as maps:
    mapped = [line.split()[-1] for line in maps if "/" in line]
print(json.dumps({"imported": sorted(set(sys.modules) - before), "mapped": mapped}))
"""


def test_import_defers_heavy_modules_and_loads_no_cuda_library(tmp_path):
    run = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=120, cwd=tmp_path
    )  # not the checkout: its pyctk is unbuilt
    child = json.loads(run.stdout)
    assert "pyctk" in child["imported"]
    assert [name for name in DEFERRED if name in child["imported"]] == []
    cuda = [
        path
        for path in child["mapped"]
        if path.rsplit("/", 1)[-1].startswith(("libcudart", "libcublas", "libgpumatmul"))
    ]
    assert cuda == []
