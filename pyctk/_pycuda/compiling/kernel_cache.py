"""The on-disk cache of compiled kernels: where it is, its entries, and clearing it.

Where: ``cache_dir=`` of the call, else ``$PYCTK_CACHE_DIR``, else
``$XDG_CACHE_HOME/pyctk`` (``~/.cache/pyctk``); entries go in its ``kernels/`` folder.
``PYCTK_DISABLE_CACHE=1`` (or ``cache_dir=False``) turns it off; an explicit
``cache_dir=`` path still caches.

An entry is one file named by its key (a SHA-256 of everything the compiled image
depends on: pyctk.compiler builds it), holding a header line, the SHA-256 of the rest,
the entry's metadata as one JSON line, and the image. Safety, as CuPy's kernel cache and
cuda.core's ``FileStreamProgramCache`` have it, without locks:

- written to a temporary file in the same folder, flushed to disk, then renamed over
  the entry (``os.replace``, atomic): a reader sees the old file or the whole new one,
  never part of one, and concurrent writers of one key each rename a complete file;
- read whole and checked against its checksum: an entry cut short or damaged (a full
  disk, a crash before the rename reached the disk, a stray write) is a miss, and its
  kernel is compiled again and rewritten, never loaded;
- a cache that cannot be written (read-only, full) costs a warning, not the compile.

The checksum guards against accidents only: anyone can compute it. So the cache trusts
only its owner (``cache_folders``): the root and ``kernels/`` are made mode 0700, and a
root, ``kernels/`` or entry that is not the user's own, that others can write, or that is
a symbolic link, is neither read nor written: a warning once per folder, and the kernel
is compiled instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

from . import cache_folders

_HEADER = b"pyctk kernel cache entry, format 1\n"
_SUFFIX = ".kernel"


def default_directory() -> Path:
    """The folder entries go in when no ``cache_dir=`` is given, whether caching is on or off."""
    root = os.environ.get("PYCTK_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "pyctk"
    )
    return Path(root).expanduser() / "kernels"


def directory(cache_dir: Any = None) -> Path | None:
    """The folder entries go in for a call given ``cache_dir``, or None when caching is off."""
    if cache_dir is False:
        return None
    if cache_dir is not None:
        return Path(cache_dir).expanduser() / "kernels"
    if os.environ.get("PYCTK_DISABLE_CACHE", "") not in ("", "0"):
        return None
    return default_directory()


def key(material: dict[str, Any]) -> str:
    """The entry name for ``material`` (JSON-able: source, options, versions ...)."""
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def load(folder: Path, name: str) -> tuple[dict[str, Any], bytes] | None:
    """The metadata and image of entry ``name``; None if absent, cut short, damaged or not trusted."""
    descriptor = cache_folders.open_folder(folder, stacklevel=4)  # the line that compiles
    if descriptor is None:
        return None
    try:
        data = cache_folders.read(descriptor, folder / (name + _SUFFIX), stacklevel=4)
    finally:
        os.close(descriptor)
    if data is None or not data.startswith(_HEADER):
        return None
    checksum, _, body = data[len(_HEADER) :].partition(b"\n")
    if hashlib.sha256(body).hexdigest().encode() != checksum:
        return None
    metadata, _, image = body.partition(b"\n")
    try:
        return json.loads(metadata), image
    except ValueError:  # cannot happen with a matching checksum, unless written by a bug
        return None


def store(folder: Path, name: str, metadata: dict[str, Any], image: bytes) -> None:
    """Write entry ``name`` atomically; warn, and carry on, if the folder cannot be written or is not trusted."""
    body = json.dumps(metadata, sort_keys=True).encode() + b"\n" + image
    data = _HEADER + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
    try:
        descriptor = cache_folders.open_folder(folder, create=True, stacklevel=4)
        if descriptor is None:  # not trusted: warned about
            return
        try:
            cache_folders.write(descriptor, name + _SUFFIX, data)
        finally:
            os.close(descriptor)
    except OSError as error:
        warnings.warn(
            f"pyctk could not write its kernel cache in {folder} ({error}); kernels will "
            f"be compiled again in the next process. Set PYCTK_CACHE_DIR to a writable "
            f"folder, or PYCTK_DISABLE_CACHE=1.",
            RuntimeWarning,
            stacklevel=4,
        )


def clear(folder: Path | None) -> int:
    """Remove every entry (and any temporary file left by a crash) from ``folder``; how many.

    A folder that is not trusted is left alone (warned about), as for reading.
    """
    descriptor = None if folder is None else cache_folders.open_folder(folder, stacklevel=3)
    if descriptor is None:
        return 0
    removed = 0
    try:
        for name in os.listdir(descriptor):
            if name.endswith(_SUFFIX) or name.startswith(cache_folders.TEMPORARY_PREFIX):
                try:
                    os.unlink(name, dir_fd=descriptor)
                    removed += 1
                except FileNotFoundError:  # removed by another process meanwhile
                    pass
    finally:
        os.close(descriptor)
    return removed
