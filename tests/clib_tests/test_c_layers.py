"""libgpumatmul's C sources are in layers, one folder each: api/ -> host/ -> gemm/ -> core/ (README:
Architecture). A file includes its own layer's header (which brings the layers below), never
a higher layer's, and calls no function that a higher layer's files define. The build backs
the second rule (-Werror=implicit-function-declaration, meson.build); this test reads the
sources, needs no build, and shows it catches a planted upward call."""

from __future__ import annotations

import re
from pathlib import Path

from support.paths import ROOT

SOURCES = ROOT / "libgpu" / "src"
LAYERS = ["core", "gemm", "host", "api"]  # bottom to top

# A function definition at the start of a line: its return type, then its name and "(";
# `static` ones are private to their file.
_DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(\w+)\(", re.M)
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_CALL = re.compile(r"\b(\w+)\s*\(")


def layer_of(path: Path, root: Path) -> int:
    return LAYERS.index(path.relative_to(root).parts[0])


def defined_functions(text: str) -> set[str]:
    return {
        name
        for name in _DEFINITION.findall(_COMMENT.sub("", text))
        if name not in ("if", "for", "while", "switch", "return", "sizeof")
    }


def violations(root: Path) -> list[str]:
    """Every breach of the layering rules in the C tree at ``root``, in words."""
    files = sorted(root.rglob("*.[ch]"))
    problems = [
        f"{path.relative_to(root)} is not in a layer folder ({', '.join(LAYERS)})"
        for path in files
        if path.relative_to(root).parts[0] not in LAYERS
    ]
    files = [path for path in files if path.relative_to(root).parts[0] in LAYERS]
    texts = {path: path.read_text() for path in files}
    defined = {path: defined_functions(texts[path]) for path in files if path.suffix == ".c"}
    for path in files:
        layer, code = layer_of(path, root), _COMMENT.sub("", texts[path])
        for include in _INCLUDE.findall(code):
            folder = include.split("/")[0]
            if folder in LAYERS and LAYERS.index(folder) > layer:
                problems.append(f"{path.relative_to(root)} includes {include}, a higher layer's")
        called = set(_CALL.findall(code))
        for other, names in defined.items():
            if layer_of(other, root) > layer:
                problems += [
                    f"{path.relative_to(root)} calls {name}, which {other.relative_to(root)} defines (a higher layer)"
                    for name in sorted(names & called)
                ]
    return problems


def test_the_c_sources_keep_their_layers():
    assert violations(SOURCES) == []
    assert {path.relative_to(SOURCES).parts[0] for path in SOURCES.rglob("*.c")} == set(LAYERS)


def test_an_upward_call_or_include_is_reported(tmp_path):
    for layer in LAYERS:
        (tmp_path / layer).mkdir()
    (tmp_path / "core" / "core.h").write_text("int low(void);\n")
    (tmp_path / "core" / "low.c").write_text(
        '#include "core/core.h"\n#include "host/host.h"\n'
        "int low(void) { return high(); } /* high() in a comment does not count */\n"
    )
    (tmp_path / "host" / "high.c").write_text('#include "core/core.h"\nint high(void) { return low(); }\n')
    (tmp_path / "stray.c").write_text("int stray(void) { return 0; }\n")
    assert violations(tmp_path) == [
        "stray.c is not in a layer folder (core, gemm, host, api)",
        "core/low.c includes host/host.h, a higher layer's",
        "core/low.c calls high, which host/high.c defines (a higher layer)",
    ]
