"""hawkmoth's settings for the C API reference (docs/c-api/reference.md), and the comment
convention of libgpu/include/gpumatmul.h.

The reference is the checkout's header, rendered by hawkmoth through libclang from its wheel:

- ``hawkmoth_root`` is libgpu/include, so ``c:autodoc`` reads the header itself.
- No compiler is run: ``hawkmoth_autoconf`` is off (it would run ``clang`` to find the
  system headers). The header includes two standard headers, stddef.h and stdint.h, which
  belong to the compiler: the wheel's libclang has none. They are written here, in the build's
  doctree folder, from the types clang predefines (``__SIZE_TYPE__``...). The header's
  gpumatmul_version.h, which the build generates from libgpu/VERSION, is the installed
  package's (``pyctk.get_include()``). Nothing of them is rendered.
- The header's documentation comments (``/** ... */`` before a declaration, or, for a group
  of declarations, before another comment) are reStructuredText, with one convention of
  C headers added: text in single backticks is code. `gpumatmul_create()` links to that
  function, `gpumatmul_status` and `GPUMATMUL_SUCCESS` to that type or constant, and any
  other code (`*count`, `desc->dtype`) is shown as code (the ``gpumatmul`` transform below).
"""

from __future__ import annotations

import re
from pathlib import Path

import pyctk

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "libgpu" / "include"
TRANSFORM = "gpumatmul"

STDDEF_H = """\
/* stddef.h for libclang without its compiler's headers (docs/_ext/c_api.py). */
#ifndef _STDDEF_H
#define _STDDEF_H
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
#define NULL ((void *)0)
#define offsetof(type, member) __builtin_offsetof(type, member)
#endif
"""

STDINT_H = (
    """\
/* stdint.h for libclang without its compiler's headers (docs/_ext/c_api.py). */
#ifndef _STDINT_H
#define _STDINT_H
"""
    + "".join(f"typedef __{s}INT{n}_TYPE__ {s.lower()}int{n}_t;\n" for s in ("", "U") for n in (8, 16, 32, 64))
    + """\
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
#endif
"""
)


def write_headers(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("stddef.h", STDDEF_H), ("stdint.h", STDINT_H)):
        path = folder / name
        if not path.is_file() or path.read_text() != text:  # unchanged: the parse stays cached
            path.write_text(text)


def configure(app, config) -> None:
    headers = Path(app.doctreedir) / "c-api-include"
    write_headers(headers)
    config.hawkmoth_root = str(INCLUDE)
    config.hawkmoth_autoconf = None
    config.hawkmoth_clang = ["-nostdinc", f"-isystem{headers}", f"-I{pyctk.get_include()}"]
    config.hawkmoth_transform_default = TRANSFORM


# In a comment's text: a ``literal``, an explicit :role:`target`, or `code` (group 1).
SPAN = re.compile(r"``.+?``|:[\w:+-]+:`[^`]+`|`([^`]+)`", re.S)


def role(code: str) -> str:
    """The reST for `code` in the header's comments."""
    function = re.fullmatch(r"(gpumatmul_\w+)\(\)", code)
    if function:
        return f":c:func:`{function[1]}`"
    if re.fullmatch(r"gpumatmul_\w+", code):
        return f":c:type:`{code}`"
    if re.fullmatch(r"GPUMATMUL_\w+", code):
        return f":c:macro:`{code}`"
    return f"``{code}``"


def transform(app, lines: list[str], transform: str | None, options) -> None:
    if transform != TRANSFORM:
        return
    text = SPAN.sub(lambda m: role(m[1]) if m[1] is not None else m[0], "\n".join(lines))
    lines[:] = text.split("\n")  # as many lines as before: warnings point into the header


def setup(app):
    app.setup_extension("hawkmoth")
    app.connect("config-inited", configure, priority=800)  # before hawkmoth's, at 850
    app.connect("hawkmoth-process-docstring", transform)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
