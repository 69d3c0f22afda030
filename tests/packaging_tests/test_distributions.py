"""pyctk-cu12 and pyctk-cu13 installed together: said plainly, never mixed silently; and their
files mixed (one's Python code, the other's libgpumatmul.so) refused before loading the library."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pyctk._build_config import CUDA_MAJOR
from support.loader_fakes import FakeLibs

ACTIVE = f"pyctk-cu{CUDA_MAJOR}"
OTHER = "pyctk-cu13" if CUDA_MAJOR == 12 else "pyctk-cu12"

PROBE = """
import json, warnings
import pyctk
from pyctk._cuda import library as _library
report = pyctk.info()  # loads the library: the first load warns
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    _library._library = None
    _library.library()
print(json.dumps({"distributions": report["distributions"], "warning": report["warning"],
                  "warned": [str(w.message) for w in caught if w.category is RuntimeWarning]}))
"""


def probe(tmp_path, extra_site=None) -> dict:
    env = dict(os.environ)
    if extra_site:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(extra_site), env.get("PYTHONPATH")]))
    run = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120, check=True, cwd=tmp_path
    )  # not the checkout: its pyctk is unbuilt
    return json.loads(run.stdout)


@pytest.fixture
def other_installed(tmp_path):
    """A site folder where the other distribution's metadata is installed."""
    info = tmp_path / "site" / f"{OTHER.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {OTHER}\nVersion: 0.1.0\n")
    return info.parent


def test_one_distribution_no_warning(tmp_path):
    result = probe(tmp_path)
    assert result == {"distributions": [ACTIVE], "warning": None, "warned": []}


def test_both_installed_names_the_active_one_and_the_fix(tmp_path, other_installed):
    result = probe(tmp_path, other_installed)
    assert result["distributions"] == sorted([ACTIVE, OTHER])
    warning = result["warning"]
    assert f"{ACTIVE}'s (CUDA {CUDA_MAJOR})" in warning
    assert "pip uninstall -y pyctk-cu12 pyctk-cu13" in warning and f"pip install {ACTIVE}" in warning
    assert result["warned"] == [warning]


def test_main_prints_the_warning(tmp_path, other_installed):
    env = dict(os.environ, PYTHONPATH=str(other_installed))
    run = subprocess.run(
        [sys.executable, "-m", "pyctk", "--size", "64"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert f"WARNING: {OTHER}" in run.stdout or "WARNING: pyctk-cu12 and pyctk-cu13" in run.stdout
    assert "Traceback" not in run.stderr


MIXED = """
import json, sys
from pathlib import Path
import pyctk
from pyctk._cuda import library as _library
from pyctk._cuda import loader as _loader
_loader.gpumatmul_path = lambda: Path(sys.argv[1])  # the other distribution's library
report = pyctk.info()  # never raises: says why
try:
    _library.library()
    raised = None
except pyctk.PyctkError as error:
    raised = [type(error).__name__, str(error)]
print(json.dumps({"error": report["error"], "raised": raised, "libraries": report["libraries"]}))
"""


def test_mixed_files_are_refused_before_the_library_is_loaded(tmp_path):
    other_major = 13 if CUDA_MAJOR == 12 else 12
    folder = tmp_path / "pyctk"
    fakes = FakeLibs(tmp_path / "fakes")
    fakes.place(folder, f"libcudart.so.{other_major}", 0)  # loading it would work: it is not tried
    library = fakes.place(folder, "libgpumatmul.so", 1, needs=f"libcudart.so.{other_major}")
    log = tmp_path / "loaded.log"
    env = dict(os.environ, FAKE_LIBS_LOG=str(log))
    run = subprocess.run(
        [sys.executable, "-c", MIXED, str(library)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
        cwd=tmp_path,
    )
    result = json.loads(run.stdout)
    message = (
        f"pyctk's files are mixed: its Python code is for CUDA {CUDA_MAJOR} but "
        f"libgpumatmul.so is for CUDA {other_major}. Reinstall one: "
        f"pip uninstall -y pyctk-cu12 pyctk-cu13 && pip install pyctk-cu{CUDA_MAJOR}"
    )
    assert result == {"error": message, "raised": ["PyctkError", message], "libraries": []}
    assert not log.exists()  # neither the library nor its cudart was loaded
