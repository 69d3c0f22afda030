"""Cache folders only their owner can write: pyctk loads GPU code from them, so it trusts
them as OpenSSH trusts ``~/.ssh`` and pip its cache.

A cache is a root (the folder named by ``cache_dir=`` or ``$PYCTK_CACHE_DIR``, or the default
``~/.cache/pyctk``) and a folder in it (``kernels/``). The root, the folder and every file
read from them must be

- owned by the user pyctk runs as (``os.geteuid()``), and
- writable by no one else (no group or other write bit in its mode);

else pyctk neither reads nor writes there. Another user who can write a cache folder could
plant an entry whose name and checksum are right (both follow from the kernel's source),
and have it loaded as GPU code into this process. A refusal costs one ``RuntimeWarning``
per folder per process, saying why and what fixes it; the caller compiles instead. The
folders above the root are not checked (a home folder in a shared ``/home`` is fine).

What is checked is what was opened, never a path checked and then opened (another user
could swap it in between): the root is opened, following a symbolic link the user named,
and its descriptor ``fstat``-ed; the folder and each file are opened relative to that
descriptor with ``O_NOFOLLOW`` (a symbolic link planted there is refused, never followed)
and ``fstat``-ed in turn. A file is written under a random name, created with ``O_EXCL``
and ``O_NOFOLLOW`` and mode 0600 (tempfile.mkstemp's recipe, made relative to the checked
folder's descriptor, which mkstemp cannot take), then renamed over its name: a symbolic
link there is replaced, not written through. The folders pyctk creates, the root's missing
parents too, get mode 0700 whatever the umask.

POSIX only (descriptors relative to a folder); pyctk runs on Linux.
"""

from __future__ import annotations

import errno
import os
import pwd
import secrets
import stat
import warnings
from pathlib import Path

TEMPORARY_PREFIX = ".tmp-"
_FOLDER_MODE, _FILE_MODE = 0o700, 0o600
# O_NONBLOCK: opening a FIFO or a device put where a file was expected must not wait.
_OPEN = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

# Why a folder or file is refused -> how the warning says it ({uid}: its owner's).
_REASONS = {
    "owner": "it belongs to uid {uid}, not to you (uid {me})",
    "writable": "others can write it (mode {mode:04o})",
    "link": "it is a symbolic link, which pyctk does not follow in a cache",
    "kind": "it is not a {kind}",
}
# (what was refused, why) -> what fixes it. Another user's folder is not made yours by default:
# what they put in it would then be trusted.
_ELSEWHERE = "or choose a folder of your own as PYCTK_CACHE_DIR (or cache_dir=)"
_REPLACED = "pyctk writes its own entry in its place when it compiles the kernel"
_FIXES = {
    ("folder", "owner"): "if it is yours (made with sudo, say), `sudo chown -R {me_name} {path}`; " + _ELSEWHERE,
    ("folder", "writable"): "`chmod go-w {path}` if no one else should write it; " + _ELSEWHERE,
    ("folder", "link"): "`rm {path}` (the link; pyctk makes the folder), " + _ELSEWHERE,
    ("folder", "kind"): "`rm {path}` (pyctk makes the folder), " + _ELSEWHERE,
    ("file", "owner"): "`rm {path}`: " + _REPLACED,
    ("file", "writable"): "`rm {path}`: " + _REPLACED,
    ("file", "link"): "`rm {path}` (the link): " + _REPLACED,
    ("file", "kind"): "`rm {path}`, which pyctk did not make",
}
_IS_KIND = {"folder": stat.S_ISDIR, "file": stat.S_ISREG}

# The folders warned about in this process: one warning each.
_warned: set[str] = set()


class Refused(Exception):
    """A folder or file of a cache that pyctk does not trust: what it is, and why not."""

    def __init__(self, path: Path, kind: str, why: str, status: os.stat_result | None = None) -> None:
        super().__init__(str(path))
        self.path, self.kind, self.why, self.status = path, kind, why, status


def _warn_once(refused: Refused, stacklevel: int) -> None:
    """Say, once per folder and process, that ``refused`` is not used, why and what fixes it."""
    path, kind, status = refused.path, refused.kind, refused.status
    folder = str(path if kind == "folder" else path.parent)
    if folder in _warned:
        return
    _warned.add(folder)
    me = os.geteuid()
    facts = {
        "uid": status.st_uid if status else None,
        "mode": stat.S_IMODE(status.st_mode) if status else 0,
        "me": me,
        "me_name": _user_name(me),
        "kind": kind,
        "path": path,
    }
    warnings.warn(
        f"pyctk does not use {path} in its kernel cache: {_REASONS[refused.why].format(**facts)}. "
        f"Another user who can write there could plant GPU code that pyctk would load; the kernel "
        f"is compiled instead. Fix: {_FIXES[kind, refused.why].format(**facts)}.",
        RuntimeWarning,
        stacklevel=stacklevel + 2,  # past this function and its caller, open_folder or read
    )


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:  # a uid with no name (a container's)
        return str(uid)


def _check(descriptor: int, path: Path, kind: str) -> None:
    """Refuse what ``descriptor`` opened unless it is a ``kind`` of this user's that only they write."""
    status = os.fstat(descriptor)
    if not _IS_KIND[kind](status.st_mode):
        raise Refused(path, kind, "kind", status)
    if status.st_uid != os.geteuid():
        raise Refused(path, kind, "owner", status)
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise Refused(path, kind, "writable", status)


def _open_checked(name: str, folder: int, path: Path, kind: str) -> int:
    """``name`` in the checked ``folder`` (a descriptor), opened without following a link, then checked."""
    try:
        descriptor = os.open(name, _OPEN | os.O_NOFOLLOW, dir_fd=folder)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Refused(path, kind, "link") from None
        raise
    try:
        _check(descriptor, path, kind)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _make_private(path: Path) -> None:
    """Make ``path`` and its missing parents, each mode 0700 (the umask would loosen or tighten it)."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, _FOLDER_MODE)
        except FileExistsError:  # made by another process meanwhile: checked like any other
            continue
        os.chmod(folder, _FOLDER_MODE)


def open_folder(folder: Path, create: bool = False, stacklevel: int = 1) -> int | None:
    """A descriptor of the cache folder ``folder``, once it and its root, ``folder.parent``, are checked.

    The one way into a cache: every read, write and removal of a cache's files goes through
    a descriptor this returns (:func:`read`, :func:`write`, ``os.listdir``, ``os.unlink``
    with ``dir_fd=``). The caller closes it.

    Parameters
    ----------
    folder : Path
        The folder in a cache root, e.g. ``<root>/kernels``.
    create : bool
        Make the root (and its missing parents) and the folder, mode 0700, where they are
        missing.
    stacklevel : int
        Whose line a warning names, as ``warnings.warn``'s, counted from the caller.

    Returns
    -------
    int or None
        The folder's descriptor; None where the folder or its root is missing (and not
        created) or refused (with a ``RuntimeWarning`` the first time).

    Raises
    ------
    OSError
        Only with ``create``: a folder could not be made or opened (read-only, full, a file
        in the way).
    """
    try:
        return _open_folder(folder, create)
    except Refused as refused:
        _warn_once(refused, stacklevel)
    except OSError:
        if create:
            raise
    return None


def _open_folder(folder: Path, create: bool) -> int:
    root = folder.parent
    if create:
        _make_private(root)
    # The root the user named: a link to it is followed; a file there is an OSError (ENOTDIR).
    root_descriptor = os.open(root, _OPEN | os.O_DIRECTORY)
    try:
        _check(root_descriptor, root, "folder")
        if create:
            try:
                os.mkdir(folder.name, _FOLDER_MODE, dir_fd=root_descriptor)
                os.chmod(folder.name, _FOLDER_MODE, dir_fd=root_descriptor)
            except FileExistsError:
                pass
        return _open_checked(folder.name, root_descriptor, folder, "folder")
    finally:
        os.close(root_descriptor)


def read(folder: int, path: Path, stacklevel: int = 1) -> bytes | None:
    """The contents of file ``path`` in the checked ``folder`` (its descriptor); None if absent or refused.

    A refused file (another user's, writable by others, a link, not a file) costs a
    ``RuntimeWarning``, once per folder; ``stacklevel`` as :func:`open_folder`'s.
    """
    try:
        descriptor = _open_checked(path.name, folder, path, "file")
    except Refused as refused:
        _warn_once(refused, stacklevel)
        return None
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as file:
        return file.read()


def write(folder: int, name: str, data: bytes) -> None:
    """Make file ``name`` in the checked ``folder`` (its descriptor) hold ``data``, atomically.

    Written to a new file of a random name, flushed to disk, then renamed over ``name``
    (``os.replace``): a reader sees the old file or the whole new one.
    """
    temporary = TEMPORARY_PREFIX + secrets.token_hex(8)
    descriptor = os.open(temporary, _CREATE, _FILE_MODE, dir_fd=folder)
    try:
        try:
            os.fchmod(descriptor, _FILE_MODE)  # the umask may have taken the owner's bits
            with os.fdopen(descriptor, "wb", closefd=False) as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
        finally:
            os.close(descriptor)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        raise
