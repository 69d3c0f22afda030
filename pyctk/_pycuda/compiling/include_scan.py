"""The files a kernel's source includes, found without NVRTC, for the kernel cache's key.

A cached kernel must be recompiled when a header it includes changes, and a cache hit
must not need NVRTC (which has no "list the dependencies" mode anyway). So pyctk
resolves ``#include`` lines itself, as NVRTC's preprocessor does with the include paths
pyctk gives it (quoted names first beside the including header; the main source has no
folder, see ``pyctk._cuda.nvrtc._PROGRAM_PATH``), and reads each file found:

- a file in a CUDA header wheel's folder stands for the whole wheel, whose version is in
  the key (``pyctk._pycuda.compiling.headers``): it is not read;
- any other file (``include_dirs=``) is hashed and scanned for its own includes;
- a name found nowhere is recorded as missing (NVRTC will say so, unless the line is
  in a branch the preprocessor skips).

Every ``#include`` line counts, even in ``#if`` branches the compiler skips: the key may
change when it need not, never the reverse.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\r\n]+)[>"]', re.MULTILINE)


def _resolve(name: str, quoted: bool, including_dir: str | None, search: Sequence[str]) -> str | None:
    folders = ([including_dir] if quoted and including_dir else []) + list(search)
    for folder in folders:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return os.path.abspath(path)
    return None


def included_files(
    source: str, include_dirs: Sequence[str], wheel_dirs: Sequence[str], last_dirs: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """``(what, digest)`` for every header ``source`` may include, directly or not, sorted.

    ``what`` is a header's absolute path (``digest`` its SHA-256), ``wheel:NAME`` for one
    in a CUDA wheel folder, or ``missing:NAME``. ``include_dirs`` are searched before
    ``wheel_dirs``, then ``last_dirs`` (hashed as ``include_dirs`` are), all in order, as
    NVRTC is given them.
    """
    search = [os.path.abspath(folder) for folder in (*include_dirs, *wheel_dirs, *last_dirs)]
    wheels = tuple(os.path.join(os.path.abspath(folder), "") for folder in wheel_dirs)
    found: dict[str, str] = {}
    pending: list[tuple[bytes, str | None]] = [(source.encode(), None)]
    while pending:
        text, path = pending.pop()
        including_dir = os.path.dirname(path) if path else None
        for delimiter, raw_name in _INCLUDE.findall(text):
            name = raw_name.decode(errors="replace").strip()
            resolved = _resolve(name, delimiter == b'"', including_dir, search)
            if resolved is None:
                found.setdefault(f"missing:{name}", "")
            elif resolved.startswith(wheels):
                found.setdefault(f"wheel:{name}", "")
            elif resolved not in found:
                with open(resolved, "rb") as file:
                    content = file.read()
                found[resolved] = hashlib.sha256(content).hexdigest()
                pending.append((content, resolved))
    return sorted(found.items())
