"""Helpers for tests/packaging_tests/test_loader.py: fake CUDA libraries built with gcc, and a runner that
loads them in a fresh Python process (dlopen state is per process) and reports as JSON.

A fake is a tiny shared object with the real library's SONAME exporting
``int fake_id(void)``, which returns a number the test chose, so that a test can tell
which copy of ``libcudart.so.12`` the loader picked. When it is loaded, its constructor
appends its SONAME to the file named by ``$FAKE_LIBS_LOG``, if set: a test can tell that
a library's code never ran, not only that it is not mapped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pyctk._cuda import loader as _loader

# Variables that steer the search; scrubbed from every child so the host cannot leak in.
_SCRUBBED = ("LD_LIBRARY_PATH", "CUDA_PATH", "CUDA_HOME", "PYCTK_DEBUG_LOAD")


_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
int fake_id(void) { return FAKE_ID; }
__attribute__((constructor)) static void log_load(void) {
    const char *log = getenv("FAKE_LIBS_LOG");
    FILE *file = log ? fopen(log, "a") : NULL;
    if (file) { fputs("SONAME\n", file); fclose(file); }
}
"""


class FakeLibs:
    """Builds fakes once per (file name, id, dependency) into ``cache``, copies them into trees."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache

    def build(self, soname: str, fake_id: int, needs: str | None = None) -> Path:
        out = self.cache / f"{fake_id}-{needs or ''}" / soname
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
            source = out.with_suffix(".c")
            source.write_text(_SOURCE.replace("SONAME", soname).replace("FAKE_ID", str(fake_id)))
            command = ["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(out), str(source)]
            if needs:  # DT_NEEDED on `needs`, found next to this file first (as NVIDIA's wheels do)
                stub = self.build(needs, 0)
                command += [
                    f"-L{stub.parent}",
                    "-Wl,--no-as-needed",
                    f"-l:{needs}",
                    "-Wl,--enable-new-dtags,-rpath,$ORIGIN",
                ]
            subprocess.run(command, check=True, capture_output=True)
        return out

    def place(
        self, folder: Path, file_name: str, fake_id: int, *, real_name: str | None = None, needs: str | None = None
    ) -> Path:
        """Put a fake named ``file_name`` into ``folder``; return the file a process would map.

        With ``real_name``, lay it out as toolkits and distributions do: the real file
        ``real_name`` (libcudart.so.12.9.79) and ``file_name`` a symlink to it.
        """
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (real_name or file_name)
        shutil.copy2(self.build(file_name, fake_id, needs), target)
        if real_name:
            (folder / file_name).symlink_to(real_name)
        return target


def place_wheels(fakes: FakeLibs, site: Path, major: int, ids: Mapping[str, int]) -> dict[str, str]:
    """Lay out the Linux wheels of ``major`` under ``site`` (no nvidia/__init__.py, as in real
    wheels): library name -> fake id. Returns library name -> path of the placed file."""
    placed = {}
    for name, fake_id in ids.items():
        spec = _loader.library_spec(name, major, "linux")
        placed[name] = str(fakes.place(site / spec.wheel_dir, spec.file_name, fake_id))
    return placed


# The child's side: its own reading of /proc/self/maps (not the loader's), and small reporters.
_PRELUDE = r'''
import ctypes, json, os, sys
import pyctk
from pyctk._cuda import loader as _loader
from pyctk._cuda.errors import LibraryNotFoundError

ARGS = json.loads(sys.argv[1])
SP, ENV = ARGS["search_path"], ARGS["environ"]

def cuda_maps():
    """Every libcudart/libcublas/libnvrtc/libgpumatmul file mapped into this process."""
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and os.path.basename(fields[5].strip()).startswith(
                    ("libcudart", "libcublas", "libnvrtc", "libgpumatmul")):
                paths.add(fields[5].strip())
    return sorted(paths)

def report(library, major=12):
    handle = _loader._handles[(library.name, major)]
    return {"name": library.name, "path": library.path, "found_via": library.found_via,
            "id": handle.fake_id() if hasattr(handle, "fake_id") else None}

def load(name, major=12):
    return report(_loader.load_library(_loader.library_spec(name, major), SP, ENV), major)

def load_all(major=12):
    return [report(library, major) for library in _loader.load_cuda_libraries(major, SP, ENV)]

def failure(function, *args):
    try:
        function(*args)
    except LibraryNotFoundError as error:
        return {"oserror": isinstance(error, OSError), "message": str(error)}
    raise AssertionError("expected LibraryNotFoundError")
'''


@dataclass
class Run:
    value: Any  # what the expression evaluated to in the child
    maps: list[str]  # CUDA-like files mapped in the child at the end
    stderr: str


def run_loader(
    expression: str,
    cwd: Path,
    *,
    search_path: Sequence[os.PathLike | str] | None = (),
    environ: Mapping[str, str] | None = MappingProxyType({}),
    before: str = "",
    env: Mapping[str, str] | None = None,
    **args: Any,
) -> Run:
    """Evaluate ``expression`` in a fresh interpreter after the prelude and ``before``.

    The child sees SP (``search_path``, None for sys.path), ENV (``environ`` as given, None
    meaning the child's os.environ) and ARGS (``args``).
    Its process environment is this one's minus the CUDA search variables, plus ``env``.
    """
    payload = {
        "search_path": None if search_path is None else [str(p) for p in search_path],
        "environ": None if environ is None else dict(environ),
        **args,
    }
    script = f'{_PRELUDE}\n{before}\nvalue = {expression}\nprint(json.dumps({{"value": value, "maps": cuda_maps()}}))\n'
    child_env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    child_env.update(env or {})
    cwd.mkdir(parents=True, exist_ok=True)  # -c puts the cwd on sys.path: keep it empty
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(payload)],
        cwd=cwd,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"child failed:\n{done.stderr}"
    out = json.loads(done.stdout.splitlines()[-1])
    return Run(out["value"], out["maps"], done.stderr)


_MISSING = """
import json
import pyctk, pyctk.compiler, pyctk.driver
from pyctk._cuda import loader as _loader
from pyctk._cuda.errors import LibraryNotFoundError
real, dlopen = _loader.load_library, _loader._dlopen
_loader.load_library = lambda spec, search_path=None, environ=None: (
    real(spec, [{empty!r}], {{}}) if spec.name == {name!r} else real(spec, search_path, environ))
def no_system_copy(path):
    if "/" not in path:
        raise OSError(path + ": not found by the dynamic linker (this test's empty system)")
    return dlopen(path)
_loader._dlopen = no_system_copy
try:
    {call}
except LibraryNotFoundError as error:
    print(json.dumps({{"message": str(error), "oserror": isinstance(error, OSError), "after": {after}}}))
"""


def without_library(name: str, empty: Path, call: str, after: str = "None") -> dict[str, Any]:
    """Run ``call`` (one line of Python, pyctk imported) in a fresh process whose loader finds
    the library ``name`` nowhere: pip's layout is the empty folder ``empty`` and the dynamic
    linker's own search (a toolkit in its path) finds nothing, while the other libraries load as
    ever. Returns the LibraryNotFoundError's message, whether it is an OSError, and the value of
    ``after`` (an expression) evaluated once it was raised."""
    script = _MISSING.format(empty=str(empty), name=name, call=call, after=after)
    environment = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=empty.parent,
        env=environment,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and done.stdout, done.stderr
    return json.loads(done.stdout)
