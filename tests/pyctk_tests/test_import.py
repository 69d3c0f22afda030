"""``import pyctk`` stays cheap: it loads no CUDA library and defers what only later calls need.

Checked by what a fresh interpreter has imported and mapped, never by timing (which is flaky);
benchmarks/startup.py measures the time.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import typing

import numpy.typing
import pytest

import pyctk

# Left to the calls that need them: importlib.metadata (which pyctk distributions are installed),
# pyctk._cuda.loader (loading the libraries; it imports dataclasses and pathlib), importlib.resources
# (where the installed files are), and threading, whose Lock pyctk takes from _thread. Nor does
# pyctk.matmul's first use import them, nor the other public modules.
DEFERRED = [
    "importlib.metadata",
    "importlib.resources",
    "pyctk._cuda.loader",
    "dataclasses",
    "pathlib",
    "threading",
    "pyctk._info",
    "pyctk._pycuda",
    "pyctk._dask",
    "pyctk.gpuarray",
    "pyctk.driver",
    "pyctk.dask",
]
CUDA_LIBRARIES = ("libcudart", "libcublas", "libgpumatmul", "libcuda.", "libnvrtc", "libnvJitLink")

CHILD = """
import json, sys
import numpy  # already imported in the programs that use pyctk: its imports are not pyctk's
before = set(sys.modules)
import pyctk
unlisted = sorted(set(pyctk.__all__) - set(dir(pyctk)))  # before any name's first use
{then}
with open("/proc/self/maps") as maps:
    mapped = [line.split()[-1] for line in maps if "/" in line]
print(json.dumps({{"imported": sorted(set(sys.modules) - before), "mapped": mapped, "unlisted": unlisted}}))
"""


def fresh_import(tmp_path, then: str = "") -> dict:
    """What a fresh Python imported and mapped for ``import pyctk`` (after NumPy) and ``then``."""
    run = subprocess.run(
        [sys.executable, "-c", CHILD.format(then=then)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=tmp_path,  # not the checkout: its pyctk is unbuilt
    )
    return json.loads(run.stdout)


def cuda_mapped(child: dict) -> list[str]:
    return [path for path in child["mapped"] if path.rsplit("/", 1)[-1].startswith(CUDA_LIBRARIES)]


def test_import_imports_only_the_package_and_loads_no_cuda_library(tmp_path):
    child = fresh_import(tmp_path)
    assert [name for name in child["imported"] if name.startswith("pyctk")] == ["pyctk", "pyctk._build_config"]
    assert [name for name in DEFERRED if name in child["imported"]] == []
    assert "numpy.typing" not in child["imported"]  # the product's annotations import it, on first use
    assert cuda_mapped(child) == []
    assert child["unlisted"] == []  # dir(pyctk) lists the names not imported yet


def test_the_first_use_of_the_products_names_imports_their_modules_alone(tmp_path):
    child = fresh_import(tmp_path, "pyctk.matmul, pyctk.DeviceArray, pyctk.asarray, pyctk.PyctkError")
    assert {"pyctk._matmul.api", "pyctk._arrays.device_array", "pyctk._cuda.errors"} <= set(child["imported"])
    assert [name for name in DEFERRED if name in child["imported"]] == []
    assert cuda_mapped(child) == []


THREADS_CHILD = """
import threading, pyctk
names, found, barrier = list(pyctk.__all__) * 4, [], threading.Barrier(16)
def first_use(part):
    barrier.wait()  # all at once, while the modules are being imported
    found.extend((name, id(getattr(pyctk, name))) for name in part)
threads = [threading.Thread(target=first_use, args=(names[i::16],)) for i in range(16)]
for thread in threads: thread.start()
for thread in threads: thread.join()
assert len(found) == len(names) and all(id(getattr(pyctk, name)) == at for name, at in found), found
"""


def test_threads_that_use_the_names_first_at_once_all_get_the_modules_objects(tmp_path):
    subprocess.run(
        [sys.executable, "-c", THREADS_CHILD], capture_output=True, text=True, check=True, timeout=120, cwd=tmp_path
    )


def test_every_public_name_is_the_object_its_module_defines():
    assert pyctk.__all__ == [*pyctk._DEFINED_IN, "__version__"]  # one list, written out twice
    for name, module in pyctk._DEFINED_IN.items():
        assert getattr(pyctk, name) is getattr(importlib.import_module(module, "pyctk"), name), name
    assert set(pyctk.__all__) <= set(dir(pyctk))


@pytest.mark.skipif(sys.version_info < (3, 10), reason="the annotations' `X | None` needs Python 3.10 to evaluate")
def test_the_products_annotations_resolve_at_run_time():
    # (for the tools that read them: typeguard, beartype, pydantic's validate_call)
    hints = typing.get_type_hints(pyctk.matmul)
    assert hints["x1"] is numpy.typing.ArrayLike and hints["dtype"] == typing.Optional[numpy.typing.DTypeLike]


def test_a_name_pyctk_does_not_have_raises_attribute_error():
    with pytest.raises(AttributeError, match="module 'pyctk' has no attribute 'matmull'"):
        pyctk.matmull  # noqa: B018
    assert not hasattr(pyctk, "gpuarray") or "pyctk.gpuarray" in sys.modules  # submodules: imported, not looked up
    assert "matmull" not in dir(pyctk)
