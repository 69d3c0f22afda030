"""Build examples/nvrtc_c/vector_add.c with the C compiler against this environment's NVIDIA
wheels, as its header comment tells a C user to (no toolkit, no driver needed to build)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pyctk._build_config import CUDA_MAJOR
from pyctk._cuda import loader as _loader
from pyctk._pycuda.compiling import headers as _cuda_headers
from support.paths import ROOT

SOURCE = ROOT / "examples" / "nvrtc_c" / "vector_add.c"


def build(folder: Path) -> list[str]:
    """The command that runs the built program (its argument: the folder of cuda_fp16.h)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:  # a failure where the examples must run (.ci/run), as tests/docs_tests/test_examples.py
        missing = "no C compiler (cc or gcc) on PATH"
        if os.environ.get("PYCTK_REQUIRE_EXAMPLES", "") not in ("", "0"):
            pytest.fail(f"PYCTK_REQUIRE_EXAMPLES=1 but {missing}")
        pytest.skip(missing)
    libraries = _loader.wheel_dirs(("nvrtc", "cudart"), CUDA_MAJOR)
    includes = sorted({str(Path(folder).parent / "include") for folder in libraries.values()})
    program = folder / "vector_add"
    subprocess.run(
        [
            compiler,
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            str(SOURCE),
            *(f"-I{d}" for d in includes),
            *(f"-L{d}" for d in libraries.values()),
            f"-l:libnvrtc.so.{CUDA_MAJOR}",
            f"-l:libcudart.so.{CUDA_MAJOR}",
            *(f"-Wl,-rpath,{d}" for d in libraries.values()),
            "-o",
            str(program),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return [str(program), _cuda_headers.header_folders()[0].path]


def run(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        build(folder),
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"},
    )
