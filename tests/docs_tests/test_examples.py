"""examples/: the C, C++, Rust and Node.js programs, built against the installed pyctk as their
comments say, and run with no LD_LIBRARY_PATH (unless the nvidia wheels are installed apart
from pyctk: tests/support/c_programs.py). Without a GPU each must stop cleanly with exit
status 77 and the status's name; on a GPU (the ``gpu`` tests) each must multiply and match
the CPU.

A language whose toolchain is missing is skipped, naming what is missing, unless
PYCTK_REQUIRE_EXAMPLES=1 (set by .ci/run), which makes that a failure. Programs are built in
scratch folders; the Node example's koffi is installed once (npm ci) into
examples/node/node_modules, which later runs reuse.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyctk._build_config import CUDA_MAJOR, VERSION
from support.c_programs import environment
from support.gpu_presence import gpu_unavailable_reason
from support.paths import ROOT

EXAMPLES = ROOT / "examples"
REQUIRE = os.environ.get("PYCTK_REQUIRE_EXAMPLES", "") not in ("", "0")
NO_GPU = 77  # the examples' exit status when there is no driver or GPU
# The two products every example runs, and the largest relative error each may have.
PRODUCTS = {"float32: 1 x (64 x 48) @ (48 x 32)": 1e-5, "float64: 3 x (33 x 17) @ (17 x 9)": 1e-12}


def require(*tools: str) -> None:
    missing = [tool for tool in tools if not shutil.which(tool)]
    if missing:
        message = f"{', '.join(missing)} not found on PATH"
        if REQUIRE:
            pytest.fail(f"PYCTK_REQUIRE_EXAMPLES=1 but {message}")
        pytest.skip(message)


def run(command: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(map(str, command))}:\n{done.stdout}{done.stderr}"


def pyctk_flags() -> list[str]:
    """`python -m pyctk --cflags --libs`, as the C example's comment says to build it."""
    flags = subprocess.run(
        [sys.executable, "-m", "pyctk", "--cflags", "--libs"], check=True, capture_output=True, text=True, cwd=EXAMPLES
    ).stdout
    return flags.split()


def pkg_config_flags(env: dict[str, str]) -> list[str]:
    return subprocess.run(
        ["pkg-config", "--cflags", "--libs", "gpumatmul"], env=env, check=True, capture_output=True, text=True
    ).stdout.split()


# How each example is built, one function per language: given a scratch folder and the
# environment, it returns the command that runs the built program.


def build_c(folder: Path, env: dict[str, str]) -> list[str]:
    require("gcc")
    program = folder / "matmul"
    run(
        [
            "gcc",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-pedantic",
            "-Werror",
            str(EXAMPLES / "c" / "matmul.c"),
            *pyctk_flags(),
            "-o",
            str(program),
        ],
        env,
    )
    return [str(program)]


def build_cpp(folder: Path, env: dict[str, str]) -> list[str]:
    require("g++", "pkg-config")
    program = folder / "matmul"
    run(
        [
            "g++",
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-pedantic",
            "-Werror",
            str(EXAMPLES / "cpp" / "matmul.cpp"),
            *pkg_config_flags(env),
            "-o",
            str(program),
        ],
        env,
    )
    return [str(program)]


def build_rust(folder: Path, env: dict[str, str]) -> list[str]:
    require("cargo", "pkg-config")
    manifest = EXAMPLES / "rust" / "Cargo.toml"
    run(
        [
            "cargo",
            "build",
            "--release",
            "--offline",
            "--quiet",
            "--manifest-path",
            str(manifest),
            "--target-dir",
            str(folder),
        ],
        env,
    )
    return [str(folder / "release" / "matmul")]


def build_node(folder: Path, env: dict[str, str]) -> list[str]:
    require("node", "pkg-config")
    project = EXAMPLES / "node"
    if not (project / "node_modules" / "koffi").is_dir():
        require("npm")
        run(["npm", "ci", "--no-audit", "--no-fund"], env, cwd=project)
    return ["node", str(project / "matmul.js")]


BUILDERS = {"c": build_c, "cpp": build_cpp, "rust": build_rust, "node": build_node}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """language -> (the command running its example, its environment); built on first use."""
    programs: dict[str, tuple[list[str], dict[str, str]]] = {}

    def get(language: str, pkgconfig_path: str | None = None) -> tuple[list[str], dict[str, str]]:
        key = f"{language}:{pkgconfig_path}"
        if key not in programs:
            env = environment(pkgconfig_path)
            programs[key] = BUILDERS[language](tmp_path_factory.mktemp(language), env), env
        return programs[key]

    return get


def run_example(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def check_stops_cleanly(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == NO_GPU, done.stdout + done.stderr
    assert done.stdout == f"libgpumatmul {VERSION} for CUDA {CUDA_MAJOR}\n"
    assert re.fullmatch(r"no GPU: gpumatmul_create: GPUMATMUL_ERROR_NO_(DRIVER|DEVICE): .+\n", done.stderr), done.stderr


def check_multiplies(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"libgpumatmul {VERSION} for CUDA {CUDA_MAJOR}\n")
    for product, tolerance in PRODUCTS.items():
        match = re.search(re.escape(product) + r": ok, max relative error (\S+)\n", done.stdout)
        assert match, f"{product} not checked ok:\n{done.stdout}{done.stderr}"
        assert float(match[1]) <= tolerance


@pytest.mark.parametrize("language", BUILDERS)
def test_example_stops_cleanly_without_a_gpu(built, language, needs_no_driver):
    check_stops_cleanly(run_example(*built(language)))


@pytest.mark.gpu
@pytest.mark.parametrize("language", BUILDERS)
def test_example_multiplies_on_the_gpu(built, language):
    check_multiplies(run_example(*built(language)))


# A standalone install (README: meson setup -Dinstall_layout=standalone ...; meson install),
# made by .ci/run, which names its prefix here.
STANDALONE = os.environ.get("PYCTK_STANDALONE_PREFIX", "")


@pytest.fixture(scope="module")
def standalone() -> Path:
    """The folder of the standalone install's gpumatmul.pc."""
    if not STANDALONE:
        pytest.skip("PYCTK_STANDALONE_PREFIX is not set: .ci/run sets it to the prefix of a standalone install")
    found = list(Path(STANDALONE).rglob("gpumatmul.pc"))
    assert len(found) == 1, found
    return found[0].parent


def test_standalone_install_is_the_c_library_alone(standalone):
    prefix = Path(STANDALONE)
    installed = sorted(p.relative_to(prefix).as_posix() for p in prefix.rglob("*") if p.is_file())
    libdir = standalone.parent.relative_to(prefix).as_posix()
    assert installed == sorted(
        [
            "include/gpumatmul.h",
            "include/gpumatmul_version.h",
            f"{libdir}/libgpumatmul.so",
            f"{libdir}/pkgconfig/gpumatmul.pc",
        ]
    )


@pytest.mark.parametrize("language", [language for language in BUILDERS if language != "c"])
def test_examples_run_against_a_standalone_install(built, standalone, language):
    """Built through pkg-config (the C example asks `python -m pyctk`, which is the wheel's)."""
    command, env = built(language, str(standalone))
    done = run_example(command, env)
    (check_stops_cleanly if gpu_unavailable_reason() else check_multiplies)(done)
