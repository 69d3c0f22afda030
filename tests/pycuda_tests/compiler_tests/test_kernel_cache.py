"""The on-disk kernel cache, on the CPU with the real NVRTC.

Covered: where it is (cache_dir=, PYCTK_CACHE_DIR, XDG_CACHE_HOME, ~/.cache) and turning
it off; hits that do not call NVRTC; a miss for a change of each part of the key
(source, options, name expressions, architecture, a header's contents, NVRTC, the
header wheels, and the driver for PTX made for a GPU); damaged entries, which are
compiled again and rewritten, never loaded; writers and readers in several processes at
once; clearing; a cache that cannot be written.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pyctk._cuda import driver_api as _driver_api
from pyctk._cuda import loader as _loader
from pyctk._cuda import nvrtc as _nvrtc
from pyctk._pycuda.compiling import headers as _cuda_headers
from pyctk._pycuda.compiling import kernel_cache as _kernel_cache
from pyctk._pycuda.kernels import source_modules as compiler

SOURCE = "__global__ void k(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] *= 2; }"


@pytest.fixture
def compiles(monkeypatch):
    """How many times NVRTC compiled, from now on."""
    calls = []
    real = _nvrtc.compile_program

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_nvrtc, "compile_program", counting)
    return calls


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for variable in ("PYCTK_CACHE_DIR", "PYCTK_DISABLE_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)


def entries(folder: Path) -> list[Path]:
    return sorted((folder / "kernels").glob("*.kernel"))


def test_hit_does_not_call_nvrtc(tmp_path, compiles):
    first = compiler.compile(SOURCE, arch="sm_80", cache_dir=tmp_path)
    second = compiler.compile(SOURCE, arch="sm_80", cache_dir=tmp_path)
    assert first == second and first[:4] == b"\x7fELF"
    assert len(compiles) == 1 and len(entries(tmp_path)) == 1


def test_hit_keeps_parameters_and_names(tmp_path, compiles):
    source = "template <typename T> __global__ void f(T *x, T v) {}"
    made = compiler._build(source, None, True, "sm_80", (), ["f<float>"], tmp_path)
    loaded = compiler._build(source, None, True, "sm_80", (), ["f<float>"], tmp_path)
    assert loaded == made and len(compiles) == 1
    assert loaded.lowered == {"f<float>": "_Z1fIfEvPT_S0_"} and loaded.target == "sm_80"


def test_ptx_entries(tmp_path, compiles):
    ptx = compiler.compile(SOURCE, arch="compute_80", cache_dir=tmp_path)
    assert compiler.compile(SOURCE, arch="compute_80", cache_dir=tmp_path) == ptx
    assert ptx.startswith(b"//") and len(compiles) == 1


def test_a_miss_for_each_part_of_the_key(tmp_path, compiles, monkeypatch):
    header = tmp_path / "inc" / "nested" / "value.h"
    header.parent.mkdir(parents=True)
    header.write_text("#define VALUE 1\n")
    (tmp_path / "inc" / "top.h").write_text('#include "nested/value.h"\n')
    source = '#include "top.h"\n__global__ void k(int *x) { *x = VALUE; }'

    def build(**changes):
        arguments = dict(
            source=source,
            options=None,
            no_extern_c=False,
            arch="sm_80",
            include_dirs=[str(tmp_path / "inc")],
            name_expressions=(),
            cache_dir=tmp_path,
        )
        arguments.update(changes)
        return compiler._build(*arguments.values())

    def misses(action) -> bool:
        before = len(compiles)
        action()
        return len(compiles) == before + 1

    assert misses(build) and not misses(build)
    assert misses(lambda: build(source=source + "\n"))
    assert misses(lambda: build(options=["-DUNUSED"]))
    assert misses(lambda: build(arch="sm_86"))
    assert misses(lambda: build(arch="compute_80"))
    assert misses(lambda: build(no_extern_c=True, name_expressions=["k"]))
    header.write_text("#define VALUE 2\n")  # a header included by a header
    assert misses(build) and not misses(build)
    identity = compiler._nvrtc_identity()
    monkeypatch.setattr(compiler, "_nvrtc_identity", lambda: identity + " (another NVRTC)")
    assert misses(build) and not misses(build)
    folders = _cuda_headers.header_folders()
    monkeypatch.setattr(
        _cuda_headers,
        "header_folders",
        lambda: [folder._replace(distribution=folder.distribution + ".1") for folder in folders],
    )
    assert misses(build) and not misses(build)


def test_driver_is_part_of_the_key_for_ptx_made_for_a_gpu(tmp_path, compiles, monkeypatch):
    driver = [13000]
    monkeypatch.setattr(_driver_api, "driver_version", lambda: driver[0])
    newest = _nvrtc.supported_archs()[-1]
    for gpu, target in ((newest + 100, f"compute_{newest}"), (80, "sm_80")):
        monkeypatch.setattr(compiler, "_device_arch", lambda gpu=gpu: gpu)
        driver[0] = 13000
        assert compiler._build(SOURCE, None, False, None, (), (), tmp_path).target == target
        before = len(compiles)
        compiler._build(SOURCE, None, False, None, (), (), tmp_path)
        driver[0] = 13010
        compiler._build(SOURCE, None, False, None, (), (), tmp_path)
        assert len(compiles) == before + (target.startswith("compute_"))


def test_nvrtc_identity_needs_no_nvrtc_and_follows_the_file(tmp_path, monkeypatch):
    here = compiler._nvrtc_identity()  # NVRTC is loaded in this process by now
    _nvrtc.version()
    fresh = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pyctk._pycuda.kernels import source_modules as compiler; "
            "from pyctk._cuda import loader; print(compiler._nvrtc_identity()); "
            "print([l.name for l in loader.loaded_libraries()])",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout.splitlines()
    assert fresh == [here, "[]"]  # the same key in a process that never loaded NVRTC
    copy = tmp_path / "libnvrtc.so"
    copy.write_bytes(b"x" * 10)
    monkeypatch.setattr(_loader, "find_library", lambda spec: [_loader.Found(str(copy), "site-packages")])
    before = compiler._nvrtc_identity()
    os.utime(copy, ns=(1, 1))
    assert compiler._nvrtc_identity() != before


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),  # one bit of the image
        lambda data: data.replace(b"sm_80", b"sm_86", 1),  # the metadata
        lambda data: b"",  # empty
        lambda data: b"garbage" + data,  # not an entry
    ],
)
def test_damaged_entry_is_compiled_again_never_loaded(tmp_path, compiles, damage):
    good = compiler.compile(SOURCE, arch="sm_80", cache_dir=tmp_path)
    (entry,) = entries(tmp_path)
    entry.write_bytes(damage(entry.read_bytes()))
    assert _kernel_cache.load(entry.parent, entry.stem) is None
    assert compiler.compile(SOURCE, arch="sm_80", cache_dir=tmp_path) == good
    assert len(compiles) == 2
    assert _kernel_cache.load(entry.parent, entry.stem) is not None  # rewritten whole


def _compile_in_process(arguments):
    cache_dir, source, start = arguments
    start.wait()
    return hashlib.sha256(compiler.compile(source, arch="sm_80", cache_dir=cache_dir)).hexdigest()


def test_concurrent_processes_compile_into_one_cache(tmp_path):
    sources = [SOURCE.replace("2", str(factor)) for factor in range(3, 7)]
    expected = [hashlib.sha256(compiler.compile(s, arch="sm_80", cache_dir=False)).hexdigest() for s in sources]
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        start = manager.Barrier(8)
        with context.Pool(8) as pool:
            results = pool.map(_compile_in_process, [(tmp_path, sources[i % 4], start) for i in range(8)])
    assert results == [expected[i % 4] for i in range(8)]
    assert len(entries(tmp_path)) == 4 and not list((tmp_path / "kernels").glob(".tmp-*"))
    assert all(_kernel_cache.load(e.parent, e.stem) for e in entries(tmp_path))


def _write_or_read(arguments):
    folder, worker, rounds = arguments
    images = {w: bytes([w]) * (1 << 20) * 3 for w in range(4)}
    seen = 0
    for _ in range(rounds):
        if worker < 4:
            _kernel_cache.store(folder, "shared", {"writer": worker}, images[worker])
        else:
            entry = _kernel_cache.load(folder, "shared")
            if entry is not None:
                metadata, image = entry
                assert image == images[metadata["writer"]]  # never a mix, never a part
                seen += 1
    return seen


def test_writers_and_readers_of_one_entry_never_see_a_partial_one(tmp_path):
    folder = tmp_path / "kernels"
    _kernel_cache.store(folder, "shared", {"writer": 0}, bytes([0]) * (1 << 20) * 3)
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        seen = pool.map(_write_or_read, [(folder, worker, 25) for worker in range(8)])
    assert sum(seen[4:]) == 4 * 25  # every read found a whole entry
    assert [p.name for p in folder.iterdir()] == ["shared.kernel"]


# --- where the cache is, turning it off, clearing it -------------------------------------------------


def test_locations(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _kernel_cache.directory() == tmp_path / "home" / ".cache" / "pyctk" / "kernels"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _kernel_cache.directory() == tmp_path / "xdg" / "pyctk" / "kernels"
    monkeypatch.setenv("PYCTK_CACHE_DIR", str(tmp_path / "mine"))
    assert _kernel_cache.directory() == tmp_path / "mine" / "kernels"
    assert _kernel_cache.directory(tmp_path / "arg") == tmp_path / "arg" / "kernels"
    assert _kernel_cache.directory(False) is None
    monkeypatch.setenv("PYCTK_DISABLE_CACHE", "1")
    assert _kernel_cache.directory() is None
    assert _kernel_cache.directory(tmp_path / "arg") == tmp_path / "arg" / "kernels"  # asked for


def test_default_location_is_used_and_cleared(tmp_path, monkeypatch, compiles):
    monkeypatch.setenv("PYCTK_CACHE_DIR", str(tmp_path))
    compiler.compile(SOURCE, arch="sm_80")
    compiler.compile(SOURCE, arch="sm_86")
    assert len(entries(tmp_path)) == 2
    (tmp_path / "kernels" / ".tmp-left-by-a-crash").write_bytes(b"x")
    (tmp_path / "kernels" / "not-ours.txt").write_bytes(b"x")
    assert compiler.clear_cache() == 3
    assert [p.name for p in (tmp_path / "kernels").iterdir()] == ["not-ours.txt"]
    compiler.compile(SOURCE, arch="sm_80")
    assert len(compiles) == 3


def test_disabled_cache_writes_nothing(tmp_path, monkeypatch, compiles):
    monkeypatch.setenv("PYCTK_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYCTK_DISABLE_CACHE", "1")
    compiler.compile(SOURCE, arch="sm_80")
    compiler.compile(SOURCE, arch="sm_80", cache_dir=False)
    assert len(compiles) == 2 and not (tmp_path / "kernels").exists()
    assert compiler.clear_cache() == 0
    assert compiler.clear_cache(tmp_path / "elsewhere") == 0


def test_unwritable_cache_warns_and_compiles(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.warns(RuntimeWarning, match="could not write its kernel cache"):
        cubin = compiler.compile(SOURCE, arch="sm_80", cache_dir=blocker / "cache")
    assert cubin[:4] == b"\x7fELF"
