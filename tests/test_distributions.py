"""pyctk-cu12 and pyctk-cu13 installed together: said plainly, never mixed silently."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pyctk._build_config import CUDA_MAJOR

ACTIVE = f"pyctk-cu{CUDA_MAJOR}"
OTHER = "pyctk-cu13" if CUDA_MAJOR == 12 else "pyctk-cu12"

PROBE = """
import json, warnings
import pyctk
from pyctk import _library
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
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env,
                         timeout=120, check=True, cwd=tmp_path)  # not the checkout: its pyctk is unbuilt
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
    run = subprocess.run([sys.executable, "-m", "pyctk", "--size", "64"], capture_output=True,
                         text=True, env=env, timeout=300, cwd=tmp_path)
    assert f"WARNING: {OTHER}" in run.stdout or f"WARNING: pyctk-cu12 and pyctk-cu13" in run.stdout
    assert "Traceback" not in run.stderr
