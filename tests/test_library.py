"""The built libgpumatmul.so itself: its dynamic section, the CUDA entry points it may use,
its embedded kernel images, and its C API used from a C program built with gcc."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import pyctk
from pyctk import _library, _loader
from pyctk._build_config import CUDA_MAJOR

from conftest import gpu_unavailable_reason

LIBRARY = _loader.gpumatmul_path()
HEADER_DIR = LIBRARY.parent / "include"
EXPORTS = Path(__file__).parent / "data" / "exports"
# The oldest versions pyproject.toml admits (nvidia-cuda-runtime(-cu12)>=N.0, nvidia-cublas(-cu12)>=N.0).
MINIMUM = {"libcudart": f"cudart-{CUDA_MAJOR}.0.txt", "libcublas": f"cublas-{CUDA_MAJOR}.0.txt"}


def tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        pytest.fail(f"{name} is needed (apt-get install binutils gcc)")
    return path


def readelf_dynamic() -> str:
    return subprocess.run([tool("readelf"), "-d", str(LIBRARY)], check=True, capture_output=True,
                          text=True).stdout


def test_needs_runtime_and_cublas_of_its_major_and_not_the_driver():
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", readelf_dynamic())
    assert f"libcudart.so.{CUDA_MAJOR}" in needed and f"libcublas.so.{CUDA_MAJOR}" in needed
    assert not [n for n in needed if n.startswith(("libcuda.so", "libpython", "libstdc++"))], needed


def test_runpath_is_relative_to_the_library():
    runpath = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r\w*path: \[(.+?)\]", readelf_dynamic())
    assert runpath, "no RUNPATH: C programs would not find the nvidia wheels"
    entries = runpath[0].split(":")
    assert all(e.startswith("$ORIGIN/") for e in entries), entries  # no build path leaked
    expected = _loader.library_spec("cudart", CUDA_MAJOR).wheel_dir
    assert f"$ORIGIN/../{expected}" in entries


def undefined_symbols() -> dict[str, set[str]]:
    """Undefined dynamic symbols by the library that provides them (from the symbol version)."""
    out = subprocess.run([tool("nm"), "-D", "--undefined-only", str(LIBRARY)], check=True,
                         capture_output=True, text=True).stdout
    by_library: dict[str, set[str]] = {}
    for line in out.splitlines():
        name, _, version = line.split()[-1].partition("@")
        by_library.setdefault(version.split(".so")[0], set()).add(name)
    return by_library


def exported(list_file: str) -> set[str]:
    lines = (EXPORTS / list_file).read_text().splitlines()
    return {line for line in lines if line and not line.startswith("#")}


@pytest.mark.parametrize("library", sorted(MINIMUM))
def test_uses_only_symbols_the_oldest_admitted_version_exports(library):
    used = undefined_symbols().get(library, set())
    assert used, f"no symbols attributed to {library}: the symbol versions changed?"
    missing = used - exported(MINIMUM[library])
    assert not missing, f"{library} {CUDA_MAJOR}.0 lacks {sorted(missing)}: raise the minimum in pyproject.toml"


def test_no_python_symbols():
    assert not [s for names in undefined_symbols().values() for s in names if s.startswith("Py")]


def test_embedded_images_cover_every_architecture_of_the_major():
    images = pyctk.info()["kernel_images"]
    sass = sorted(i["arch"] for i in images if i["kind"] == "SASS")
    ptx = [i["arch"] for i in images if i["kind"] == "PTX"]
    oldest = {12: 50, 13: 75}[CUDA_MAJOR]
    assert sass[0] == oldest
    # Every architecture family from the oldest supported to Blackwell has SASS.
    for family in (50, 60, 70, 75, 80, 86, 89, 90, 100, 120):
        if family >= oldest:
            assert family in sass, f"no SASS for sm_{family}"
    assert ptx == [sass[-1]], "one PTX image, for the newest architecture"
    assert all(i["size_bytes"] > 1000 for i in images)


@pytest.mark.parametrize("capability, expected", [
    ((9, 0), "sm_90"), ((8, 6), "sm_86"), ((8, 9), "sm_89"), ((12, 0), "sm_120"),
    ((10, 0), "sm_100"), ((7, 5), "sm_75"), ((8, 8), "sm_87"),  # no sm_88 in cu12: same-major SASS
    ((19, 0), "compute_121"),  # a future GPU runs the PTX
])
def test_image_selection(capability, expected):
    images = pyctk.info()["kernel_images"]
    if capability == (8, 8) and any(i["name"] == "sm_88" for i in images):
        expected = "sm_88"
    if capability == (19, 0):
        expected = next(i["name"] for i in images if i["kind"] == "PTX")
    index = _library.query_int("gpumatmul_kernel_image_select", *capability)
    assert images[index]["name"] == expected


def test_too_old_gpu_has_no_image():
    with pytest.raises(pyctk.NoKernelImageError, match="3.5"):
        _library.query_int("gpumatmul_kernel_image_select", 3, 5)


def test_status_names_are_stable():
    lib = _library.library()
    names = [lib.gpumatmul_status_name(code).decode() for code in range(9)]
    assert names == ["GPUMATMUL_SUCCESS", "GPUMATMUL_ERROR_INVALID_ARGUMENT",
                     "GPUMATMUL_ERROR_NOT_SUPPORTED", "GPUMATMUL_ERROR_NO_DRIVER",
                     "GPUMATMUL_ERROR_NO_DEVICE", "GPUMATMUL_ERROR_OUT_OF_MEMORY",
                     "GPUMATMUL_ERROR_NO_KERNEL_IMAGE", "GPUMATMUL_ERROR_CUDA",
                     "GPUMATMUL_ERROR_CUBLAS"]
    assert lib.gpumatmul_cuda_major() == CUDA_MAJOR


def test_c_program_uses_the_header_and_library(tmp_path):
    """gcc, no nvcc: the installed header and library are enough, and the library's RUNPATH
    finds the nvidia wheels without LD_LIBRARY_PATH."""
    program = tmp_path / "smoke"
    subprocess.run([tool("gcc"), "-std=c99", "-Wall", "-Werror", "-o", str(program),
                    str(Path(__file__).parent / "c" / "smoke.c"), f"-I{HEADER_DIR}",
                    f"-L{LIBRARY.parent}", "-lgpumatmul", f"-Wl,-rpath,{LIBRARY.parent}", "-lm"],
                   check=True)
    run = subprocess.run([str(program)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    expected = (["gpu"] if gpu_unavailable_reason() is None
                else ["GPUMATMUL_ERROR_NO_DRIVER", "GPUMATMUL_ERROR_NO_DEVICE"])
    assert any(f"result: {e}" in run.stdout for e in expected), run.stdout


def test_header_is_c_and_cpp_clean(tmp_path):
    source = tmp_path / "include_only.c"
    source.write_text('#include "gpumatmul.h"\nint main(void) { return GPUMATMUL_SUCCESS; }\n')
    for compiler, flags in (("gcc", ["-std=c99", "-pedantic"]), ("g++", ["-x", "c++", "-std=c++11"])):
        subprocess.run([tool(compiler), *flags, "-Wall", "-Wextra", "-Werror", f"-I{HEADER_DIR}",
                        "-c", str(source), "-o", str(tmp_path / "out.o")], check=True)
