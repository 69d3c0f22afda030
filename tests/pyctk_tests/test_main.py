"""python -m pyctk, the main job, as a user runs it: from anywhere, and from a fresh clone's root."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyctk import _info
from pyctk._cuda.environment import VARIABLES
from support.gpu_presence import gpu_unavailable_reason
from support.paths import ROOT


def run_main(cwd, *args, command=(sys.executable, "-m", "pyctk"), env=None):
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=600, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory) -> Path:
    """A fresh clone of this checkout, its pyctk/ the unbuilt source tree as it is in the working
    tree (a clone holds only what is committed; the package under test may be newer)."""
    clone = tmp_path_factory.mktemp("clone") / "pyctk"
    if (ROOT / ".git").exists():
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        shutil.rmtree(clone / "pyctk")
    shutil.copytree(ROOT / "pyctk", clone / "pyctk", ignore=shutil.ignore_patterns("__pycache__"))
    assert not (clone / "pyctk" / "_build_config.py").exists()
    return clone


def test_readme_main_command_from_a_fresh_clone_root(fresh_clone):
    """README: `pip install . && python -m pyctk`, run where a user runs it: the clone's root,
    where `python -m` finds the unbuilt pyctk/ first. (The install itself is .ci/run's job.)"""
    run = run_main(fresh_clone, "--size", "256")
    assert "Traceback" not in run.stdout + run.stderr, run.stderr
    assert run.returncode == (0 if gpu_unavailable_reason() is None else 1), run.stdout + run.stderr
    where = subprocess.run(
        [sys.executable, "-c", "import pyctk; print(pyctk.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=fresh_clone,
    ).stdout
    assert not where.startswith(str(fresh_clone)), where  # the installed package, not the clone


def test_the_pyctk_command_does_what_python_m_pyctk_does(tmp_path):
    command = shutil.which("pyctk", path=str(Path(sys.executable).parent))
    assert command, "the pyctk console script is not installed next to the interpreter"
    run = run_main(tmp_path, "--size", "256", command=(command,))
    expected = run_main(tmp_path, "--size", "256")
    assert run.returncode == expected.returncode
    assert "Traceback" not in run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == expected.stdout.splitlines()[0]


def test_unbuilt_source_tree_with_nothing_installed_says_what_to_run(fresh_clone):
    # -S: no site-packages, so no installed pyctk to hand over to.
    for command in ([sys.executable, "-S", "-c", "import pyctk"], [sys.executable, "-S", "-m", "pyctk"]):
        run = subprocess.run(command, capture_output=True, text=True, cwd=fresh_clone, timeout=60)
        assert run.returncode != 0
        assert "ModuleNotFoundError" not in run.stderr, run.stderr
        assert "source tree" in run.stderr and "not built" in run.stderr and "pip install ." in run.stderr


def test_the_hand_over_is_logged(fresh_clone):
    env = dict(os.environ, PYCTK_DEBUG_LOAD="1")
    run = subprocess.run(
        [sys.executable, "-c", "import pyctk"],
        capture_output=True,
        text=True,
        cwd=fresh_clone,
        env=env,
        timeout=60,
        check=True,
    )
    assert "unbuilt source tree; using the installed pyctk at" in run.stderr


def test_without_a_driver_it_says_what_is_missing_and_exits_1(tmp_path, needs_no_driver):
    run = run_main(tmp_path)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr + run.stdout
    assert "NVIDIA driver:   not found" in run.stdout
    assert "libcuda.so.1" in run.stderr and "Install the NVIDIA driver" in run.stderr
    for library in ("cudart", "cublasLt", "cublas", "gpumatmul"):  # the report still comes first
        assert f"\n  {library} " in run.stdout


@pytest.mark.gpu
def test_with_a_gpu_every_backend_passes(tmp_path):
    run = run_main(tmp_path, "--size", "1024")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "All checks passed." in run.stdout
    for backend in ("tiled", "cublas"):
        for dtype in ("float32", "float64"):
            assert any(
                line.split()[:2] == [backend, dtype] and line.rstrip().endswith("ok")
                for line in run.stdout.splitlines()
            ), (backend, dtype, run.stdout)
    assert "kernel image sm_" in run.stdout


def test_driver_release_is_read_from_the_driver_file(tmp_path):
    version_file = tmp_path / "version"
    version_file.write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Sep 30 2025\n"
        "GCC version:  gcc version 12.2.0\n"
    )
    assert _info.driver_release(str(version_file)) == "580.159.04"
    version_file.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build\n")
    assert _info.driver_release(str(version_file)) == "575.57.08"
    assert _info.driver_release(str(tmp_path / "missing")) is None


def test_the_report_shows_which_variables_are_set_and_their_values(tmp_path):
    env = {name: value for name, value in os.environ.items() if name not in {v.name for v in VARIABLES}}
    bare = run_main(tmp_path, "--size", "64", env=env)  # PATH and the rest: none of the table's
    assert "\nEnvironment: none of pyctk's variables is set\n" in bare.stdout, bare.stdout
    env.update(PYCTK_CACHE_DIR=str(tmp_path / "cache"), CUDA_LAUNCH_BLOCKING="1")
    run = run_main(tmp_path, "--size", "64", env=env)
    shown = run.stdout.split("\nEnvironment:\n", 1)[1].split("Libraries:", 1)[0].splitlines()
    assert shown == [f"  PYCTK_CACHE_DIR={tmp_path / 'cache'}", "  CUDA_LAUNCH_BLOCKING=1"]  # the table's order
