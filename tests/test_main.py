"""python -m pyctk, the main job, as a user runs it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pyctk import _info


def run_main(tmp_path, *args):
    # From a folder that is not the checkout, whose pyctk is unbuilt.
    return subprocess.run([sys.executable, "-m", "pyctk", *args], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)


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
            assert any(line.split()[:2] == [backend, dtype] and line.rstrip().endswith("ok")
                       for line in run.stdout.splitlines()), (backend, dtype, run.stdout)
    assert "kernel image sm_" in run.stdout


def test_driver_release_is_read_from_the_driver_file(tmp_path):
    version_file = tmp_path / "version"
    version_file.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Sep 30 2025\n"
                            "GCC version:  gcc version 12.2.0\n")
    assert _info.driver_release(str(version_file)) == "580.159.04"
    version_file.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build\n")
    assert _info.driver_release(str(version_file)) == "575.57.08"
    assert _info.driver_release(str(tmp_path / "missing")) is None
