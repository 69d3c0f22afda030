"""pyctk's layers are a contract that import-linter checks (pyproject.toml, [tool.importlinter]):
each layer imports only the layers below it, lazy imports inside functions included, and no
package's modules import one another in a circle. .ci/run runs `lint-imports` on the checkout;
these tests run it too, and show that it fails when an upward import or a circle is planted."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

pytest.importorskip("importlinter", reason="import-linter (the test extra) needs Python 3.10 or newer")


def lint(root: Path) -> subprocess.CompletedProcess:
    """`lint-imports` run as CI runs it, on the package in ``root`` with its pyproject.toml."""
    command = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or "lint-imports"
    return subprocess.run([command, "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300)


def planted(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the checkout's package and contract, with ``line`` added to ``module``."""
    shutil.copytree(ROOT / "pyctk", tmp_path / "pyctk", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with open(tmp_path / "pyctk" / module, "a", encoding="utf-8") as file:
        file.write(f"\n\ndef planted():\n    {line}\n")
    return tmp_path


def test_the_checkout_keeps_the_contract():
    run = lint(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 kept, 0 broken" in run.stdout


def test_an_upward_import_inside_a_function_breaks_the_layers(tmp_path):
    run = lint(planted(tmp_path, "_cuda/fork.py", "from .._matmul import api"))
    assert run.returncode != 0
    assert "pyctk._cuda is not allowed to import pyctk._matmul" in run.stdout
    assert "pyctk._cuda.fork -> pyctk._matmul.api" in run.stdout


def test_memory_importing_kernels_breaks_pycudas_rooms(tmp_path):
    run = lint(planted(tmp_path, "_pycuda/memory/pools.py", "from ..kernels import modules"))
    assert run.returncode != 0
    assert "pyctk._pycuda.memory is not allowed to import pyctk._pycuda.kernels" in run.stdout


def test_a_circle_inside_a_layer_breaks_the_contract(tmp_path):
    # library imports status; status importing library back is a circle within pyctk._cuda.
    run = lint(planted(tmp_path, "_cuda/status.py", "from . import library"))
    assert run.returncode != 0
    assert "no circles between the modules of a package BROKEN" in run.stdout
