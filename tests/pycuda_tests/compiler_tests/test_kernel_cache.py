"""The on-disk kernel cache, on the CPU with the real NVRTC.

Covered: where it is (cache_dir=, PYCTK_CACHE_DIR, XDG_CACHE_HOME, ~/.cache) and turning
it off; hits that do not call NVRTC; a miss for a change of each part of the key
(source, options, name expressions, architecture, a header's contents, NVRTC, the
header wheels, and the driver for PTX made for a GPU); damaged entries, which are
compiled again and rewritten, never loaded; writers and readers in several processes at
once; clearing; a cache that cannot be written. And the cache trusting only its owner, with
tests that play the other user: a valid entry planted in a root or kernels/ folder that
others can write, an entry or folder of another uid (chown, and a process run as another
uid: as root only), symbolic links planted as an entry or as kernels/, never followed on
read nor on write; the folders made 0700 whatever the umask.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pyctk._cuda import driver_api as _driver_api
from pyctk._cuda import loader as _loader
from pyctk._cuda import nvrtc as _nvrtc
from pyctk._pycuda.compiling import cache_folders as _cache_folders
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


@pytest.mark.parametrize("inside", [True, False], ids=["a-file-above", "a-file-as-the-root"])
def test_unwritable_cache_warns_and_compiles(tmp_path, inside):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.warns(RuntimeWarning, match="could not write its kernel cache"):
        cubin = compiler.compile(SOURCE, arch="sm_80", cache_dir=blocker / "cache" if inside else blocker)
    assert cubin[:4] == b"\x7fELF" and blocker.read_text() == ""


# --- the cache trusts only its owner: tests that play the other user -------------------------------

PLANTED = b"\x7fELF planted by another user"
OTHER_UID = 54321  # no user of this machine's: any uid but ours plays the other user
needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="giving a file to another uid (os.chown, or a process run as that uid) needs root"
)


def give_to_the_other_user(path: Path) -> None:
    try:
        os.chown(path, OTHER_UID, -1)
    except OSError as error:  # a user namespace with no such uid mapped, say
        pytest.skip(f"this machine does not let root give a file to uid {OTHER_UID}: {error}")


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """Each test sees the warnings of its own folders: one per folder per process otherwise."""
    monkeypatch.setattr(_cache_folders, "_warned", set())


def plant(root: Path) -> Path:
    """A valid entry of SOURCE for sm_80 in ``root``, written by the cache's own writer, holding
    PLANTED: what another user would put there. Loaded by a trusting cache (checked here)."""
    compiler.compile(SOURCE, arch="sm_80", cache_dir=root, options=[])  # the key's file
    (entry,) = entries(root)
    metadata, _ = _kernel_cache.load(entry.parent, entry.stem)
    _kernel_cache.store(entry.parent, entry.stem, metadata, PLANTED)
    assert _kernel_cache.load(entry.parent, entry.stem)[1] == PLANTED
    assert compiler.compile(SOURCE, arch="sm_80", cache_dir=root, options=[]) == PLANTED
    return entry


def compiled_for_real() -> bytes:
    return compiler.compile(SOURCE, arch="sm_80", cache_dir=False, options=[])


@pytest.mark.parametrize("mode", [0o770, 0o775, 0o777, 0o1777], ids=["group", "group-read", "world", "sticky-world"])
@pytest.mark.parametrize("where", ["root", "kernels"])
def test_a_planted_entry_in_a_folder_others_can_write_is_never_loaded(tmp_path, compiles, where, mode):
    root = tmp_path / "shared"
    entry = plant(root)
    folder = root if where == "root" else entry.parent
    os.chmod(folder, mode)
    before = len(compiles)
    with pytest.warns(
        RuntimeWarning, match=rf"others can write it \(mode {mode:04o}\).*chmod go-w {re.escape(str(folder))}`"
    ):
        assert _kernel_cache.load(entry.parent, entry.stem) is None
    assert compiler.compile(SOURCE, arch="sm_80", cache_dir=root, options=[]) == compiled_for_real()
    assert len(compiles) == before + 2  # NVRTC ran for both compiles: nothing was read from the folder
    assert entry.read_bytes().endswith(PLANTED) and entries(root) == [entry]  # nor written to it
    assert _kernel_cache.clear(entry.parent) == 0 and entry.exists()  # nor removed from it


def test_one_warning_per_folder_per_process(tmp_path, recwarn):
    first, second = plant(tmp_path / "first"), plant(tmp_path / "second")
    for entry in (first, second):
        os.chmod(entry.parent, 0o777)
    for _ in range(3):
        for entry in (first, second):
            assert _kernel_cache.load(entry.parent, entry.stem) is None
            _kernel_cache.store(entry.parent, entry.stem, {}, b"")
    messages = [str(w.message) for w in recwarn if "kernel cache" in str(w.message)]
    assert len(messages) == 2
    assert str(first.parent) in messages[0] and str(second.parent) in messages[1]


@needs_root
def test_an_entry_of_another_uid_is_never_loaded_and_is_replaced(tmp_path, compiles):
    entry = plant(tmp_path)
    give_to_the_other_user(entry)
    with pytest.warns(
        RuntimeWarning, match=rf"belongs to uid {OTHER_UID}, not to you.*rm {re.escape(str(entry))}`"
    ) as record:
        assert compiler.compile(SOURCE, arch="sm_80", cache_dir=tmp_path, options=[]) == compiled_for_real()
    assert [w.filename for w in record] == [__file__]
    # The other user's file is renamed over, never opened for writing: the entry is ours now.
    assert entry.stat().st_uid == os.geteuid()
    assert _kernel_cache.load(entry.parent, entry.stem)[1] == compiled_for_real()


@needs_root
@pytest.mark.parametrize("where", ["root", "kernels"])
def test_a_folder_of_another_uid_is_never_read_nor_written(tmp_path, compiles, where):
    root = tmp_path / "theirs"
    entry = plant(root)
    folder = root if where == "root" else entry.parent
    give_to_the_other_user(folder)
    before = len(compiles)
    with pytest.warns(
        RuntimeWarning, match=rf"belongs to uid {OTHER_UID}.*chown -R \S+ {re.escape(str(folder))}`.*PYCTK_CACHE_DIR"
    ):
        assert compiler.compile(SOURCE, arch="sm_80", cache_dir=root, options=[]) == compiled_for_real()
    assert len(compiles) == before + 2
    assert entries(root) == [entry] and entry.read_bytes().endswith(PLANTED)


@needs_root
def test_a_cache_another_user_made_is_never_loaded(compiles):
    """A second user makes a cache folder in a place both can reach and puts a valid entry
    in it (a process run as that uid, with its own umask): this user's pyctk refuses it."""
    staging = Path(tempfile.mkdtemp())  # under the system's temporary folder, which both can reach
    try:
        os.chmod(staging, 0o1777)  # a shared folder as /tmp is: anyone makes folders of their own there
        source = plant(staging / "mine")
        os.chmod(source, 0o644)
        for folder in (staging / "mine", source.parent):
            os.chmod(folder, 0o755)  # so the other user can read the entry to copy it
        theirs = staging / "theirs"
        try:
            subprocess.run(
                ["/bin/sh", "-c", 'umask 022 && mkdir -p "$1/kernels" && cp "$2" "$1/kernels/"', "sh", theirs, source],
                user=OTHER_UID,
                check=True,
            )
        except OSError as error:  # switching to the uid failed: a user namespace without it, say
            pytest.skip(f"this machine does not let root run a process as uid {OTHER_UID}: {error}")
        planted = theirs / "kernels" / source.name
        assert planted.stat().st_uid == OTHER_UID and planted.read_bytes().endswith(PLANTED)
        before = len(compiles)
        with pytest.warns(RuntimeWarning, match=rf"{re.escape(str(theirs))}.*belongs to uid {OTHER_UID}"):
            assert compiler.compile(SOURCE, arch="sm_80", cache_dir=theirs, options=[]) == compiled_for_real()
        assert len(compiles) == before + 2
        assert sorted(p.name for p in (theirs / "kernels").iterdir()) == [source.name]
    finally:
        shutil.rmtree(staging)


def test_a_link_planted_as_an_entry_is_not_followed_on_read_nor_on_write(tmp_path, compiles):
    elsewhere = plant(tmp_path / "elsewhere")  # a valid entry the link points at
    mine = tmp_path / "mine" / "kernels"
    _kernel_cache.store(mine, "unrelated", {}, b"")  # the folders, trusted
    link = mine / elsewhere.name
    link.symlink_to(elsewhere)
    with pytest.warns(RuntimeWarning, match=rf"{re.escape(str(link))} in its kernel cache: it is a symbolic link"):
        assert _kernel_cache.load(mine, elsewhere.stem) is None
    assert compiler.compile(SOURCE, arch="sm_80", cache_dir=mine.parent, options=[]) == compiled_for_real()
    assert not link.is_symlink() and _kernel_cache.load(mine, elsewhere.stem)[1] == compiled_for_real()
    assert _kernel_cache.load(elsewhere.parent, elsewhere.stem)[1] == PLANTED  # not written through


def test_a_link_planted_as_the_kernels_folder_is_not_followed_on_read_nor_on_write(tmp_path, compiles):
    elsewhere = plant(tmp_path / "elsewhere")
    root = tmp_path / "mine"
    root.mkdir(mode=0o700)
    (root / "kernels").symlink_to(elsewhere.parent)
    with pytest.warns(RuntimeWarning, match=r"kernels in its kernel cache: it is a symbolic link.*rm ") as record:
        assert compiler.compile(SOURCE, arch="sm_80", cache_dir=root, options=[]) == compiled_for_real()
    assert [w.filename for w in record] == [__file__]  # the line that compiled, once
    assert entries(tmp_path / "elsewhere") == [elsewhere] and elsewhere.read_bytes().endswith(PLANTED)
    assert _kernel_cache.clear(root / "kernels") == 0 and elsewhere.exists()


def test_a_root_named_through_a_link_is_followed(tmp_path, compiles):
    """The root is what the user named: a link to a folder of theirs is theirs to make."""
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "named").symlink_to(tmp_path / "real")
    compiler.compile(SOURCE, arch="sm_80", cache_dir=tmp_path / "named")
    compiler.compile(SOURCE, arch="sm_80", cache_dir=tmp_path / "named")
    assert len(compiles) == 1 and len(entries(tmp_path / "real")) == 1


@pytest.mark.parametrize("umask", [0o000, 0o002, 0o022, 0o077, 0o277], ids=lambda umask: f"umask-{umask:03o}")
def test_folders_made_are_private_whatever_the_umask(tmp_path, umask):
    root = tmp_path / "a" / "b" / "cache"
    old = os.umask(umask)
    try:
        _kernel_cache.store(root / "kernels", "entry", {}, b"image")
    finally:
        os.umask(old)
    for folder in (tmp_path / "a", tmp_path / "a" / "b", root, root / "kernels"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert stat.S_IMODE((root / "kernels" / "entry.kernel").stat().st_mode) == 0o600
    assert _kernel_cache.load(root / "kernels", "entry") == ({}, b"image")


def test_folders_that_exist_keep_their_mode(tmp_path):
    """Only what pyctk makes is made private: a root of the user's, 0755, is used as it is."""
    root = tmp_path / "cache"
    root.mkdir()
    os.chmod(root, 0o755)
    _kernel_cache.store(root / "kernels", "entry", {}, b"image")
    assert stat.S_IMODE(root.stat().st_mode) == 0o755
    assert _kernel_cache.load(root / "kernels", "entry") == ({}, b"image")
