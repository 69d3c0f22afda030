"""libgpu/tools/cuda_wheels.py, which tells meson.build where the CUDA headers and libraries are:
from a CUDA toolkit (-Dtoolkit) here; the wheels' case is every build's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

TOOL = ROOT / "libgpu" / "tools" / "cuda_wheels.py"


def cuda_wheels(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=60)


def fake_toolkit(root: Path, major: int, libraries=("cudart", "cublas", "cublasLt", "nvrtc")) -> Path:
    """A toolkit's layout, with empty files: headers in include/ (CCCL in include/cccl, as
    CUDA 13 has it), libraries in lib64/."""
    (root / "include" / "cccl" / "nv").mkdir(parents=True)
    (root / "include" / "cuda_runtime_api.h").write_text("")
    (root / "lib64").mkdir()
    for name in libraries:
        (root / "lib64" / f"lib{name}.so.{major}").write_bytes(b"")
    return root


@pytest.mark.parametrize("major", [12, 13])
def test_toolkit_gives_its_include_and_library_folders(tmp_path, major):
    root = fake_toolkit(tmp_path / "cuda", major)
    run = cuda_wheels(str(major), "--toolkit", str(root))
    assert run.returncode == 0, run.stderr
    includes, libraries, rpath = run.stdout.splitlines()
    assert includes.split(";") == [str(root / "include"), str(root / "include" / "cccl")]
    assert libraries == str(root / "lib64")
    # The package layout's RUNPATH: the nvidia wheels next to the installed pyctk, whatever
    # the build used.
    assert rpath.startswith("$ORIGIN/../nvidia/")


def test_toolkit_without_a_library_says_which_and_where(tmp_path):
    root = fake_toolkit(tmp_path / "cuda", 12, libraries=("cudart",))
    run = cuda_wheels("12", "--toolkit", str(root))
    assert run.returncode != 0
    assert f"-Dtoolkit={root}: no libcublas.so.12 in its lib64 or lib" in run.stderr


def test_toolkit_without_headers_is_refused(tmp_path):
    root = fake_toolkit(tmp_path / "cuda", 12)
    (root / "include" / "cuda_runtime_api.h").unlink()
    run = cuda_wheels("12", "--toolkit", str(root))
    assert run.returncode != 0 and "no include/cuda_runtime_api.h" in run.stderr
