"""Building programs against the installed library: pyctk.get_include(), pyctk.get_library(),
``python -m pyctk --cflags --libs --pkgconfig-path``, and the relocatable gpumatmul.pc."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pyctk
from pyctk import __main__ as main_module
from pyctk._build_config import CUDA_MAJOR
from pyctk._cuda import c_build as _c_build
from pyctk._cuda import loader as _loader


def pyctk_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pyctk", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=os.path.dirname(os.path.dirname(pyctk.__file__)),
    )


def pkg_config(*args: str, path: str) -> str:
    if not shutil.which("pkg-config"):
        pytest.skip("pkg-config not found (apt-get install pkg-config)")
    return subprocess.run(
        ["pkg-config", *args, "gpumatmul"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PKG_CONFIG_PATH": path},
    ).stdout.split()


def test_paths_are_the_installed_package_files():
    include = Path(pyctk.get_include())
    assert (include / "gpumatmul.h").is_file() and (include / "gpumatmul_version.h").is_file()
    assert pyctk.get_library() == str(_loader.gpumatmul_path())
    assert Path(_c_build.pkgconfig_path(), "gpumatmul.pc").is_file()
    assert include.parent == Path(pyctk.get_library()).parent == Path(_c_build.pkgconfig_path()).parent


def test_command_prints_the_flags_on_one_line_in_pkg_config_order():
    folder = os.path.dirname(pyctk.get_library())
    expected = f"-I{pyctk.get_include()} -L{folder} -Wl,-rpath,{folder} -lgpumatmul"
    for args in (["--cflags", "--libs"], ["--libs", "--cflags"]):
        run = pyctk_command(*args)
        assert (run.returncode, run.stdout) == (0, expected + "\n"), args
        # On stderr only a warning for each CUDA library the RUNPATH misses: none when the
        # nvidia wheels are installed next to pyctk (test_libs_warns_... covers the others).
        warnings = run.stderr.splitlines()
        assert len(warnings) == len(_c_build.runpath_misses()), run.stderr
        assert all(w.startswith("python -m pyctk: warning: ") for w in warnings), run.stderr
    run = pyctk_command("--pkgconfig-path")
    assert (run.returncode, run.stdout) == (0, _c_build.pkgconfig_path() + "\n")


def test_pkg_config_reads_the_same_files_and_version():
    path = _c_build.pkgconfig_path()
    flags = pkg_config("--cflags", "--libs", path=path)
    include = [os.path.realpath(f[2:]) for f in flags if f.startswith("-I")]
    libdir = [os.path.realpath(f[2:]) for f in flags if f.startswith("-L")]
    assert include == [os.path.realpath(pyctk.get_include())]
    assert libdir == [os.path.realpath(os.path.dirname(pyctk.get_library()))]
    assert "-lgpumatmul" in flags and f"-Wl,-rpath,{flags[1][2:]}" in flags
    assert pkg_config("--modversion", path=path) == [pyctk.__version__]


def test_pkg_config_file_is_relocatable(tmp_path):
    """Every path in gpumatmul.pc is relative to its folder: a moved tree is found where it is."""
    moved = tmp_path / "moved" / "pyctk"
    package = Path(pyctk.get_library()).parent
    for name in ("include", "pkgconfig"):
        shutil.copytree(package / name, moved / name)
    flags = pkg_config("--cflags", "--libs", path=str(moved / "pkgconfig"))
    assert [os.path.realpath(f[2:]) for f in flags if f[:2] in ("-I", "-L")] == [str(moved / "include"), str(moved)]


# What libgpumatmul.so links (its DT_NEEDED), in the loader's order.
LINKED = ("cudart", "cublasLt", "cublas")


def split_layout(tmp_path: Path, with_cuda_libraries: bool) -> Path:
    """A copy of libgpumatmul.so in tmp/site/pyctk, with the nvidia wheels' cudart, cuBLASLt
    and cuBLAS in tmp/site (stand-ins: as pip installs them together) or not (installed
    elsewhere)."""
    library = tmp_path / "site" / "pyctk" / "libgpumatmul.so"
    library.parent.mkdir(parents=True)
    shutil.copy(pyctk.get_library(), library)
    for name in LINKED if with_cuda_libraries else ():
        spec = _loader.library_spec(name, CUDA_MAJOR)
        target = tmp_path / "site" / spec.wheel_dir / spec.file_name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"")
    return library


def test_runpath_reaches_the_cuda_libraries_installed_next_to_pyctk(tmp_path, monkeypatch):
    monkeypatch.setattr(_c_build, "get_library", lambda: str(split_layout(tmp_path, True)))
    assert _c_build.runpath_misses() == []


def test_runpath_misses_name_the_library_and_where_pyctk_finds_it(tmp_path, monkeypatch):
    monkeypatch.setattr(_c_build, "get_library", lambda: str(split_layout(tmp_path, False)))
    misses = _c_build.runpath_misses()
    names = [_loader.library_spec(name, CUDA_MAJOR).file_name for name in LINKED]
    assert [miss.file_name for miss in misses] == names
    for miss, name in zip(misses, LINKED):
        found = [
            f.path for f in _loader.find_library(_loader.library_spec(name, CUDA_MAJOR)) if f.found_via != "system"
        ]
        assert miss.found_in == (os.path.dirname(found[0]) if found else None)
        assert str(tmp_path / "site") in str(miss) and "$ORIGIN" not in str(miss)
        assert (f"pyctk finds it in {miss.found_in}" if found else "fix: pip install") in str(miss)


def test_libs_warns_on_stderr_and_still_prints_the_flags(monkeypatch, capsys):
    miss = _c_build.RunpathMiss("libcudart.so.12", ["/x"], "/y", 'pip install "z"')
    monkeypatch.setattr(_c_build, "runpath_misses", lambda: [miss])
    assert main_module.main(["--libs"]) == 0
    out, err = capsys.readouterr()
    assert out == " ".join(_c_build.libs()) + "\n"
    assert "warning: libcudart.so.12 is not in libgpumatmul.so's RUNPATH (/x); pyctk finds it in /y" in err
    assert "LD_LIBRARY_PATH" in err and f"pip install pyctk-cu{CUDA_MAJOR}" in err


def test_a_missing_file_says_to_reinstall(monkeypatch, capsys):
    monkeypatch.setattr(_loader, "gpumatmul_path", lambda: Path("/nonexistent/libgpumatmul.so"))
    with pytest.raises(pyctk.LibraryNotFoundError, match="reinstall pyctk"):
        pyctk.get_library()
    assert main_module.main(["--libs"]) == 1
    assert "/nonexistent/libgpumatmul.so does not exist" in capsys.readouterr().err
