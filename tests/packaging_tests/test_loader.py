"""pyctk._cuda.loader: which copy of each CUDA library pyctk finds and loads, and what it reports.

CPU only. Fake libraries (tests/support/loader_fakes.py: gcc-built, right SONAME, each returning
its own ``fake_id()``) are laid out as NVIDIA's wheels, toolkits and stray system copies
lay them out; each loading scenario runs in a fresh interpreter (dlopen state is per
process) that reports the loader's answer, the fake ids and its own /proc/self/maps.

Covered: the search order (already loaded, site-packages with the active venv first,
CUDA_PATH, CUDA_HOME, the dynamic linker), exact file names per CUDA major and OS, the
error message (every place tried, dlopen's own error, the pip command), the debug log,
a lazy ``import pyctk``, the real wheels of this venv, and ``wheel_dirs`` for the build;
and libgpumatmul's CUDA major, read from its file (``elf_needed``, checked against readelf)
so that one built for the other major is refused before it is loaded.
Every row of "What users of those peers trip over" in shared/anchors.md has a test:
purelib/platlib apart (pytorch#88869), a system cuBLASLt under the wheel's cuBLAS
(pytorch#91067), LD_LIBRARY_PATH pointing at another copy (pytorch#111469,
jax#28929), PEX/Bazel roots (pytorch#149806), user site before the venv
(cuda-python#1716), ``nvidia`` as a namespace package (TransformerEngine#2331), unversioned
``libcudart.so`` (cuml#5300), and CUDA 12 and 13 wheels side by side.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyctk._build_config import CUDA_MAJOR
from pyctk._cuda import loader as _loader
from pyctk._cuda.errors import LibraryNotFoundError, PyctkError
from support.loader_fakes import FakeLibs, place_wheels, run_loader

ALL = ("cudart", "cublasLt", "cublas")
WHEEL_IDS = {"cudart": 11, "cublasLt": 12, "cublas": 13}  # fake ids of wheel copies
OTHER_IDS = {"cudart": 91, "cublasLt": 92, "cublas": 93}  # of stray / toolkit copies


@pytest.fixture(scope="session")
def fakes(tmp_path_factory) -> FakeLibs:
    return FakeLibs(tmp_path_factory.mktemp("fake-libs").resolve())


@pytest.fixture
def root(tmp_path) -> Path:
    return tmp_path.resolve()  # /proc/self/maps shows resolved paths


@pytest.fixture
def run(root):
    """run_loader in a fresh, empty working directory."""
    return lambda expression, **kwargs: run_loader(expression, root / "cwd", **kwargs)


@pytest.fixture
def nothing_mapped(monkeypatch):
    """For finding in this process, where other tests may have loaded the real libraries."""
    monkeypatch.setattr(_loader, "already_loaded", lambda file_name, maps_file=None: None)


def expected(placed: dict[str, str], ids: dict[str, int]) -> list[dict]:
    """What load_all reports for wheel copies ``placed`` (name -> path), in load order."""
    return [{"name": n, "path": placed[n], "found_via": "site-packages", "id": ids[n]} for n in placed]


# --- library_spec: names, folders and pip commands -------------------------------------------


@pytest.mark.parametrize(
    "name, major, file_name, wheel_dir, pip_install",
    [
        ("cudart", 12, "libcudart.so.12", "nvidia/cuda_runtime/lib", 'pip install "nvidia-cuda-runtime-cu12>=12,<13"'),
        ("cublasLt", 12, "libcublasLt.so.12", "nvidia/cublas/lib", 'pip install "nvidia-cublas-cu12>=12,<13"'),
        ("cublas", 12, "libcublas.so.12", "nvidia/cublas/lib", 'pip install "nvidia-cublas-cu12>=12,<13"'),
        ("nvrtc", 12, "libnvrtc.so.12", "nvidia/cuda_nvrtc/lib", 'pip install "nvidia-cuda-nvrtc-cu12>=12,<13"'),
        ("cudart", 13, "libcudart.so.13", "nvidia/cu13/lib", 'pip install "nvidia-cuda-runtime>=13,<14"'),
        ("cublas", 13, "libcublas.so.13", "nvidia/cu13/lib", 'pip install "nvidia-cublas>=13,<14"'),
    ],
)
def test_library_spec_linux(name, major, file_name, wheel_dir, pip_install):
    spec = _loader.library_spec(name, major, "linux")
    assert (spec.file_name, spec.wheel_dir, spec.toolkit_dirs, spec.pip_install) == (
        file_name,
        wheel_dir,
        ("lib64", "lib"),
        pip_install,
    )


def test_each_library_is_loaded_after_what_it_needs():
    """_LIBRARIES' order is the load order: what a library needs comes before it, and a
    library loaded with libgpumatmul needs only such libraries."""
    names = list(_loader._LIBRARIES)
    for position, library in enumerate(_loader._LIBRARIES.values()):
        assert set(library.needs) <= set(names[:position]), library.name
        if library.required:
            assert all(_loader._LIBRARIES[need].required for need in library.needs), library.name
    assert _loader.CUDA_LIBRARIES == ("cudart", "cublasLt", "cublas")


@pytest.mark.parametrize("name, major", [("cudart", 11), ("cufft", 12), ("libcudart", 13)])
def test_library_spec_rejects_unknown(name, major):
    with pytest.raises(ValueError, match=name):
        _loader.library_spec(name, major, "linux")


# --- site-packages ------------------------------------------------------------------------------


@pytest.mark.parametrize("major", [12, 13])
def test_wheel_layout_loads_from_site_packages(fakes, root, run, major):
    site = root / "site-packages"
    placed = place_wheels(fakes, site, major, WHEEL_IDS)
    # RTLD_GLOBAL, as cuda-pathfinder: the first library's symbols are visible process-wide.
    result = run(f"[load_all({major}), ctypes.CDLL(None).fake_id()]", search_path=[site])
    assert result.value == [expected(placed, WHEEL_IDS), WHEEL_IDS["cudart"]]
    assert result.maps == sorted(placed.values())


# PyTorch#88869: purelib and platlib apart; PyTorch#149806: every wheel its own sys.path root
# (PEX, Bazel). Neither has nvidia/__init__.py: nvidia is a namespace package
# (TransformerEngine#2331), which the loader must neither import nor need.
@pytest.mark.parametrize(
    "entries",
    [
        {"lib/python3.11/site-packages": ["cudart"], "lib64/python3.11/site-packages": ["cublasLt", "cublas"]},
        {
            "empty_root": [],
            "pypi__nvidia_cuda_runtime_cu12/site-packages": ["cudart"],
            "pypi__nvidia_cublas_cu12/site-packages": ["cublasLt", "cublas"],
        },
    ],
    ids=["purelib-platlib", "pex-bazel"],
)
def test_split_layouts_found(fakes, root, run, entries):
    sites = [root / entry for entry in entries]
    placed = {}
    for site, names in zip(sites, entries.values()):
        site.mkdir(parents=True, exist_ok=True)
        placed.update(place_wheels(fakes, site, 12, {n: WHEEL_IDS[n] for n in names}))
    assert not any((site / "nvidia" / "__init__.py").exists() for site in sites)
    result = run(
        "[load_all(), 'nvidia' in sys.modules, __import__('nvidia').__file__, list(sys.modules['nvidia'].__path__)]",
        search_path=sites,
        before="sys.path[:] = SP  # these roots only: no venv nvidia/",
    )
    loaded, imported_by_loader, nvidia_file, nvidia_path = result.value
    assert loaded == expected({n: placed[n] for n in ALL}, WHEEL_IDS)
    assert not imported_by_loader
    assert nvidia_file is None  # nvidia is a namespace package here
    assert sorted(nvidia_path) == sorted(str(site / "nvidia") for site in sites if (site / "nvidia").exists())


@pytest.mark.parametrize("major", [12, 13])
def test_majors_side_by_side_each_gets_its_own(fakes, root, run, major):
    site = root / "site-packages"
    placed = {12: place_wheels(fakes, site, 12, WHEEL_IDS), 13: place_wheels(fakes, site, 13, OTHER_IDS)}
    result = run(f"load_all({major})", search_path=[site])
    assert result.value == expected(placed[major], WHEEL_IDS if major == 12 else OTHER_IDS)
    assert result.maps == sorted(placed[major].values())


def test_majors_loaded_in_one_process_are_kept_apart(fakes, root, run):
    """The cache is keyed by (library, major): asking for CUDA 13's cudart after CUDA 12's
    loads CUDA 13's, never hands out the one already loaded."""
    site = root / "site-packages"
    place_wheels(fakes, site, 12, WHEEL_IDS)
    place_wheels(fakes, site, 13, OTHER_IDS)
    result = run("[load('cudart', 12)['id'], load('cudart', 13)['id'], load('cudart', 12)['id']]", search_path=[site])
    assert result.value == [WHEEL_IDS["cudart"], OTHER_IDS["cudart"], WHEEL_IDS["cudart"]]


def test_only_other_major_installed_is_not_found(fakes, root, run):
    site = root / "site-packages"
    place_wheels(fakes, site, 13, WHEEL_IDS)
    result = run("failure(load, 'cudart', 12)", search_path=[site])
    assert result.value["oserror"]
    message = result.value["message"]
    spec = _loader.library_spec("cudart", 12)
    for candidate in _loader.candidates(spec, [site], {}):
        assert candidate.path in message
    assert "$CUDA_PATH: not set" in message and "$CUDA_HOME: not set" in message
    assert 'pip install "nvidia-cuda-runtime-cu12>=12,<13"' in message
    assert result.maps == []  # libcudart.so.13 was not taken instead
    assert issubclass(LibraryNotFoundError, OSError)


def test_active_environment_searched_before_user_site(fakes, root, nothing_mapped):
    """NVIDIA/cuda-python#1716: the user site comes first on sys.path, the venv copy must win."""
    venv = root / "venv"
    user_site = root / "home/.local/lib/python3.11/site-packages"
    venv_site = venv / "lib/python3.11/site-packages"
    spec = _loader.library_spec("cudart", 12, "linux")
    copies = [fakes.place(site / spec.wheel_dir, spec.file_name, i) for i, site in enumerate([user_site, venv_site])]
    search_path = [str(user_site), "", str(venv_site), str(user_site), str(root / "missing")]
    # The cwd ("") and missing folders are never searched; duplicates once.
    assert _loader.site_dirs(search_path, prefix=str(venv)) == [str(venv_site), str(user_site)]
    assert _loader.site_dirs(search_path, prefix=str(root / "elsewhere")) == [str(user_site), str(venv_site)]
    found = _loader.find_library(spec, search_path, {}, prefix=str(venv))
    assert found == [
        _loader.Found(str(copies[1]), "site-packages"),
        _loader.Found(str(copies[0]), "site-packages"),
        _loader.Found(spec.file_name, "system"),
    ]


# --- already loaded, toolkits, the dynamic linker ------------------------------------------------

# A toolkit or distribution ships libcudart.so.12 as a symlink to libcudart.so.12.9.79,
# and /proc/self/maps names the real file.
LAYOUTS = {"file": None, "versioned-symlink": "libcudart.so.12.9.79"}


@pytest.mark.parametrize("real_name", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_already_loaded_copy_is_reused(fakes, root, run, real_name):
    site = root / "site-packages"
    wheel = place_wheels(fakes, site, 12, WHEEL_IDS)["cudart"]
    other = fakes.place(root / "torch/lib", "libcudart.so.12", 91, real_name=real_name)
    result = run(
        "load('cudart')",
        search_path=[site],
        preload=str(root / "torch/lib/libcudart.so.12"),
        # Kept referenced: PyPy unloads a garbage CDLL, and the loader's lazy import may collect.
        before="PRELOADED = ctypes.CDLL(ARGS['preload'], mode=os.RTLD_GLOBAL)",
    )
    assert result.value == {"name": "cudart", "path": str(other), "found_via": "already-loaded", "id": 91}
    assert wheel not in result.maps and result.maps == [str(other)]


@pytest.mark.parametrize(
    "variables, folder, wheels, found_via",
    [
        (["CUDA_HOME"], "lib64", False, "CUDA_HOME"),
        (["CUDA_HOME"], "lib", False, "CUDA_HOME"),
        (["CUDA_PATH", "CUDA_HOME"], "lib64", False, "CUDA_PATH"),
        (["CUDA_PATH", "CUDA_HOME"], "lib64", True, "site-packages"),
    ],
)
def test_toolkit_variables(fakes, root, run, variables, folder, wheels, found_via):
    site = root / "site-packages"
    site.mkdir()
    ids = {"site-packages": 11, "CUDA_PATH": 21, "CUDA_HOME": 22}
    paths = {"site-packages": place_wheels(fakes, site, 12, {"cudart": 11})["cudart"]} if wheels else {}
    environ = {}
    for variable in variables:
        environ[variable] = str(root / variable.lower())
        paths[variable] = str(fakes.place(root / variable.lower() / folder, "libcudart.so.12", ids[variable]))
    result = run("load('cudart')", search_path=[site], environ=environ)
    assert result.value == {"name": "cudart", "path": paths[found_via], "found_via": found_via, "id": ids[found_via]}


@pytest.mark.parametrize("real_name", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_system_search_reports_the_mapped_file(fakes, root, run, real_name):
    mapped = fakes.place(root / "system", "libcudart.so.12", 91, real_name=real_name)
    result = run("load('cudart')", search_path=[root], env={"LD_LIBRARY_PATH": str(root / "system")})
    assert result.value == {"name": "cudart", "path": str(mapped), "found_via": "system", "id": 91}
    assert result.maps == [str(mapped)]


def test_wheels_beat_ld_library_path(fakes, root, run):
    """PyTorch#111469, jax#28929: LD_LIBRARY_PATH names an older toolkit."""
    site = root / "site-packages"
    placed = place_wheels(fakes, site, 12, WHEEL_IDS)
    for name, fake_id in OTHER_IDS.items():
        fakes.place(root / "old-toolkit", f"lib{name}.so.12", fake_id)
    result = run("load_all()", search_path=[site], env={"LD_LIBRARY_PATH": str(root / "old-toolkit")})
    assert result.value == expected(placed, WHEEL_IDS)
    assert result.maps == sorted(placed.values())


def test_wheel_cublas_gets_the_wheel_cublasLt(fakes, root, run):
    """PyTorch#91067: the wheel's libcublas must not bind to a system libcublasLt."""
    site = root / "site-packages"
    placed = place_wheels(fakes, site, 12, {"cudart": WHEEL_IDS["cudart"], "cublasLt": WHEEL_IDS["cublasLt"]})
    cublas_dir = site / _loader.library_spec("cublas", 12).wheel_dir  # RUNPATH $ORIGIN, as in the wheel
    placed["cublas"] = str(fakes.place(cublas_dir, "libcublas.so.12", WHEEL_IDS["cublas"], needs="libcublasLt.so.12"))
    stray = str(fakes.place(root / "system", "libcublasLt.so.12", OTHER_IDS["cublasLt"]))
    env = {"LD_LIBRARY_PATH": str(root / "system")}
    # Control: the wheel's libcublas loaded by itself does bind to the stray copy.
    control = run("ctypes.CDLL(ARGS['cublas']).fake_id()", cublas=placed["cublas"], env=env)
    assert control.value == WHEEL_IDS["cublas"] and stray in control.maps
    assert placed["cublasLt"] not in control.maps
    result = run("load_all()", search_path=[site], env=env)
    assert result.value == expected(placed, WHEEL_IDS)
    assert result.maps == sorted(placed.values())  # the stray libcublasLt is not mapped


# --- what is never loaded, and what happens when loading fails -----------------------------------


def test_unversioned_name_is_never_used(fakes, root, run):
    """rapidsai/cuml#5300: no wheel ships libcudart.so; pyctk never asks for it."""
    site = root / "site-packages"
    spec = _loader.library_spec("cudart", 12)
    fakes.place(site / spec.wheel_dir, "libcudart.so", 91)
    fakes.place(root / "system", "libcudart.so", 92)
    result = run(
        "[[f.found_via for f in _loader.find_library(_loader.library_spec('cudart', 12), SP, ENV)],"
        " failure(load, 'cudart')]",
        search_path=[site],
        env={"LD_LIBRARY_PATH": str(root / "system")},
    )
    found, error = result.value
    assert found == ["system"]
    assert "libcudart.so.12" in error["message"]
    assert result.maps == []


def test_unloadable_candidate_is_skipped(fakes, root, run):
    first, second = root / "first", root / "second"
    spec = _loader.library_spec("cudart", 12)
    (first / spec.wheel_dir).mkdir(parents=True)
    (first / spec.wheel_dir / spec.file_name).write_bytes(b"")
    good = place_wheels(fakes, second, 12, {"cudart": 11})["cudart"]
    result = run("load('cudart')", search_path=[first, second])
    assert result.value == {"name": "cudart", "path": good, "found_via": "site-packages", "id": 11}


def test_unloadable_only_candidate_error_names_dlopen_error(root, run):
    spec = _loader.library_spec("cudart", 12)
    broken = root / "site-packages" / spec.wheel_dir / spec.file_name
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"")
    with pytest.raises(OSError) as dlopen_error:  # the same dlopen, here: what it says
        ctypes.CDLL(str(broken))
    result = run("failure(load, 'cudart')", search_path=[root / "site-packages"])
    message = result.value["message"]
    assert f"{broken} (site-packages): {dlopen_error.value}" in message
    assert f"{broken} (site-packages): not there" not in message  # it is there; it did not load
    assert spec.pip_install in message
    assert result.maps == []


def test_debug_log(fakes, root, run):
    spec = _loader.library_spec("cudart", 12)
    broken = root / "first" / spec.wheel_dir / spec.file_name
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"")
    good = place_wheels(fakes, root / "second", 12, {"cudart": 11})["cudart"]
    search_path = [root / "first", root / "second"]
    quiet = run("load('cudart')", search_path=search_path)
    loud = run("load('cudart')", search_path=search_path, env={"PYCTK_DEBUG_LOAD": "1"})
    assert quiet.stderr == ""
    assert quiet.value == loud.value
    lines = loud.stderr.splitlines()
    assert lines and all(line.startswith("pyctk.load: ") for line in lines)
    tried = [line for line in lines if ": trying " in line]
    assert len(tried) == 2 and str(broken) in tried[0] and good in tried[1]
    assert any("failed" in line for line in lines) and good in lines[-1]


def test_import_maps_no_cuda_library(run):
    result = run("['pyctk' in sys.modules, [lib.name for lib in _loader.loaded_libraries()]]", search_path=None)
    assert result.value == [True, []]
    assert result.maps == []


# --- the real wheels of this environment ------------------------------------------------------


def test_real_wheels_and_libgpumatmul(run):
    result = run(
        "[[(l.name, l.path, l.found_via) for l in _loader.load_cuda_libraries(ARGS['major'])],"
        " _loader.load_gpumatmul(ARGS['major']).gpumatmul_cuda_major(),"
        " [(l.name, l.path, l.found_via) for l in _loader.loaded_libraries()]]",
        search_path=None,
        environ=None,
        major=CUDA_MAJOR,
    )
    libraries, cuda_major, loaded = result.value
    assert [name for name, _, _ in libraries] == list(ALL)
    for name, path, found_via in libraries:
        spec = _loader.library_spec(name, CUDA_MAJOR)
        assert found_via == "site-packages"
        assert path.endswith(f"/{spec.wheel_dir}/{spec.file_name}") and os.path.isfile(path)
        assert path in result.maps
    assert cuda_major == CUDA_MAJOR
    assert loaded == libraries + [["gpumatmul", str(_loader.gpumatmul_path()), "package"]]


# --- Windows rules (finding only) and the build's wheel_dirs ------------------------------------

WINDOWS = {
    12: {
        "cudart": "nvidia/cuda_runtime/bin/cudart64_12.dll",
        "cublas": "nvidia/cublas/bin/cublas64_12.dll",
        "cublasLt": "nvidia/cublas/bin/cublasLt64_12.dll",
        "nvrtc": "nvidia/cuda_nvrtc/bin/nvrtc64_120_0.dll",
    },
    13: {
        "cudart": "nvidia/cu13/bin/x86_64/cudart64_13.dll",
        "cublas": "nvidia/cu13/bin/x86_64/cublas64_13.dll",
        "cublasLt": "nvidia/cu13/bin/x86_64/cublasLt64_13.dll",
        "nvrtc": "nvidia/cu13/bin/x86_64/nvrtc64_130_0.dll",
    },
}


@pytest.mark.parametrize("major", WINDOWS)
def test_windows_rules(root, nothing_mapped, major):
    site, toolkit = root / "Lib/site-packages", root / "CUDA/v12"
    for relative in WINDOWS[major].values():
        name = relative.rsplit("/", 1)[1]
        for path in (site / relative, toolkit / "bin" / name, toolkit / "bin/x64" / name):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
    for name, relative in WINDOWS[major].items():
        spec = _loader.library_spec(name, major, "win32")
        file_name = relative.rsplit("/", 1)[1]
        assert _loader.find_library(spec, [str(site)], {"CUDA_PATH": str(toolkit)}) == [
            _loader.Found(str(site / relative), "site-packages"),
            _loader.Found(str(toolkit / "bin" / file_name), "CUDA_PATH"),
            _loader.Found(str(toolkit / "bin/x64" / file_name), "CUDA_PATH"),
            _loader.Found(file_name, "system"),
        ]


def test_wheel_dirs(fakes, root, monkeypatch):
    first, second = root / "purelib", root / "platlib"
    place_wheels(fakes, first, 12, {"cudart": 1})
    place_wheels(fakes, second, 12, {"cudart": 2, "cublas": 3, "nvrtc": 4})
    assert _loader.wheel_dirs(["cudart", "cublas", "nvrtc"], 12, [str(first), str(second)]) == {
        "cudart": str(first / "nvidia/cuda_runtime/lib"),
        "cublas": str(second / "nvidia/cublas/lib"),
        "nvrtc": str(second / "nvidia/cuda_nvrtc/lib"),
    }
    # Only wheels count for the build: a toolkit on CUDA_PATH does not.
    fakes.place(root / "toolkit/lib64", "libcublasLt.so.12", 5)
    monkeypatch.setenv("CUDA_PATH", str(root / "toolkit"))
    with pytest.raises(LibraryNotFoundError, match=re.escape('pip install "nvidia-cublas-cu12>=12,<13"')):
        _loader.wheel_dirs(["cudart", "cublasLt"], 12, [str(first), str(second)])


# --- libgpumatmul's CUDA major, read from its file before it is loaded -------------------------

OTHER_MAJOR = 13 if CUDA_MAJOR == 12 else 12


def readelf_needed(path: str | os.PathLike) -> list[str]:
    readelf = shutil.which("readelf") or pytest.fail("readelf is needed (apt-get install binutils)")
    out = subprocess.run([readelf, "-d", str(path)], check=True, capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", out)


def test_elf_needed_reads_what_readelf_reads(fakes):
    wheels = [found.path for name in ALL for found in _loader.find_library(_loader.library_spec(name, CUDA_MAJOR))[:1]]
    files = [
        _loader.gpumatmul_path(),
        *wheels,
        os.path.realpath(sys.executable),
        fakes.build("libcublas.so.12", 1, needs="libcublasLt.so.12"),
        fakes.build("libz.so.1", 2),
    ]
    for path in files:
        assert _loader.elf_needed(path) == readelf_needed(path), path
    assert _loader.elf_needed(files[-2])[0] == "libcublasLt.so.12"
    assert _loader.cudart_major(_loader.gpumatmul_path()) == CUDA_MAJOR


def test_elf_needed_refuses_what_is_not_a_64_bit_elf_library(fakes, root):
    library = fakes.build("libcudart.so.12", 3).read_bytes()
    cases = {
        "empty": b"",
        "text": b"not a library\n",
        "32-bit": library[:4] + b"\x01" + library[5:],
        "header only": library[:64],
        "truncated": library[:1024],
    }
    for name, data in cases.items():
        (root / name).write_bytes(data)
        with pytest.raises(ValueError, match="not a (64-bit|well-formed) ELF"):
            _loader.elf_needed(root / name)
    with pytest.raises(ValueError, match="links to no libcudart.so.N"):
        _loader.cudart_major(fakes.build("libcublas.so.12", 1, needs="libcublasLt.so.12"))


# In the child: libgpumatmul is the fake at ARGS["gpumatmul"]; what loading it for a major gives.
GPUMATMUL_AT = """
from pathlib import Path
_loader.gpumatmul_path = lambda: Path(ARGS["gpumatmul"])

def gpumatmul(major):
    try:
        return _loader.load_gpumatmul(major).fake_id()
    except pyctk.PyctkError as error:
        return [type(error).__name__, str(error)]
"""


def mixed_message(python_major: int, library_major: int) -> str:
    return (
        f"pyctk's files are mixed: its Python code is for CUDA {python_major} but libgpumatmul.so "
        f"is for CUDA {library_major}. Reinstall one: pip uninstall -y pyctk-cu12 pyctk-cu13 && "
        f"pip install pyctk-cu{python_major}"
    )


def fake_gpumatmul(fakes: FakeLibs, root: Path, cuda_major: int) -> Path:
    """A fake libgpumatmul.so that links to libcudart.so.<cuda_major>, as the real one does,
    with a fake of that cudart next to it (its RUNPATH is $ORIGIN): loading it would work."""
    fakes.place(root / "pyctk", f"libcudart.so.{cuda_major}", 0)
    return fakes.place(root / "pyctk", "libgpumatmul.so", 77, needs=f"libcudart.so.{cuda_major}")


def test_libgpumatmul_of_the_other_major_is_refused_before_it_is_loaded(fakes, root, run):
    """pyctk-cu12 and pyctk-cu13 files mixed: loading that libgpumatmul would pull in the other
    major's cudart and cuBLAS (its DT_NEEDED) before any check could run in it."""
    fake = fake_gpumatmul(fakes, root, OTHER_MAJOR)
    log = root / "loaded.log"
    result = run(
        f"[gpumatmul({CUDA_MAJOR}), _loader.loaded_libraries()]",
        search_path=None,
        before=GPUMATMUL_AT,
        gpumatmul=str(fake),
        env={"FAKE_LIBS_LOG": str(log)},
    )
    assert result.value == [["PyctkError", mixed_message(CUDA_MAJOR, OTHER_MAJOR)], []]
    assert result.maps == []  # nothing loaded: neither it nor any CUDA library
    assert not log.exists()  # its code never ran
    assert issubclass(PyctkError, Exception)


def test_libgpumatmul_is_cached_per_major(fakes, root, run):
    """Loaded for its own major, libgpumatmul is still refused for the other one."""
    fake = fake_gpumatmul(fakes, root, CUDA_MAJOR)
    log = root / "loaded.log"
    result = run(
        f"[gpumatmul({CUDA_MAJOR}), gpumatmul({OTHER_MAJOR}), gpumatmul({CUDA_MAJOR})]",
        search_path=None,
        before=GPUMATMUL_AT,
        gpumatmul=str(fake),
        env={"FAKE_LIBS_LOG": str(log)},
    )
    assert result.value == [77, ["PyctkError", mixed_message(OTHER_MAJOR, CUDA_MAJOR)], 77]
    assert str(fake) in result.maps
    assert log.read_text() == "libgpumatmul.so\n"  # the control: a fake that loads says so


def test_unreadable_libgpumatmul_is_not_loaded(root, run):
    broken = root / "pyctk" / "libgpumatmul.so"
    broken.parent.mkdir()
    broken.write_bytes(b"")
    result = run(
        f"failure(_loader.load_gpumatmul, {CUDA_MAJOR})", search_path=None, before=GPUMATMUL_AT, gpumatmul=str(broken)
    )
    assert result.value["oserror"]
    assert f"pyctk could not load {broken}: not a 64-bit ELF file." in result.value["message"]
    assert f"pip install --force-reinstall pyctk-cu{CUDA_MAJOR}" in result.value["message"]
    assert result.maps == []
