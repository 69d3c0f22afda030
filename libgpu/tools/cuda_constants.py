"""Write pyctk/_cuda/constants.py: the values of the cuda.h enums and macros that pyctk uses.

    python cuda_constants.py CUDA_H OUTPUT.py

Run by meson.build on the cuda.h of the build's CUDA (the nvidia-cuda-runtime wheel's,
or -Dtoolkit's), so that no value pyctk hands the driver is a copy typed by hand. Every
member of each enum of ENUMS is written under its cuda.h name, and every integer macro
whose name starts with one of MACRO_PREFIXES. Values may be expressions of numbers and
of names defined before them, as cuda.h writes some (``CU_TARGET_COMPUTE_100F =
CU_COMPUTE_FAMILY_TARGET_BASE + CU_TARGET_COMPUTE_100``).

Standard library only: it runs in the build environment.
"""

from __future__ import annotations

import argparse
import ast
import operator
import re
from collections.abc import Callable, Iterator
from pathlib import Path

# The cuda.h enums pyctk uses, by their typedef names.
ENUMS = (
    "CUresult",
    "CUdevice_attribute",
    "CUcomputemode",
    "CUctx_flags",
    "CUlimit",
    "CUfunc_cache",
    "CUsharedconfig",
    "CUstream_flags",
    "CUevent_flags",
    "CUfunction_attribute",
    "CUjit_option",
    "CUjit_fallback",
    "CUjitInputType",
    "CUdriverProcAddress_flags",
    "CUdriverProcAddressQueryResult",
    "CUstreamCaptureMode",
    "CUstreamCaptureStatus",
    "CUstreamUpdateCaptureDependencies_flags",
    "CUgraphDebugDot_flags",
    "CUarray_format",
    "CUarray_cubemap_face",
    "CUaddress_mode",
    "CUfilter_mode",
    "CUresourcetype",
    "CUmemorytype",
    "CUmemAttach_flags",
    "CUpointer_attribute",
    "CUipcMem_flags",
)

# The cuda.h #define families pyctk uses, by the start of their names.
MACRO_PREFIXES = (
    "CUDA_VERSION",  # the header's: 1000 * major + 10 * minor
    "CU_COMPUTE_",  # CU_COMPUTE_ACCELERATED_TARGET_BASE, CU_COMPUTE_FAMILY_TARGET_BASE
    "CU_MEMHOSTALLOC_",
    "CU_MEMHOSTREGISTER_",
    "CU_TRSA_",
    "CU_TRSF_",
    "CU_PARAM_TR_",  # CU_PARAM_TR_DEFAULT
    "CUDA_ARRAY3D_",
)

# Members pyctk names that an older cuda.h of a supported major lacks, by enum, with CUDA 13's
# cuda.h's values: CUDA 12.9's header has neither of these JIT options. Written where the
# header lacks them; where it has them, they must be these values (the build fails otherwise).
NEWER_THAN_HEADER = {"CUjit_option": {"CU_JIT_SPLIT_COMPILE": 34, "CU_JIT_BINARY_LOADER_THREAD_COUNT": 35}}

_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_ENUM = re.compile(r"\benum\b\s*\w*\s*\{(?P<body>[^{}]*)\}\s*(?P<name>\w+)\s*;")
_MEMBER = re.compile(r"(?P<name>[A-Za-z_]\w*)\s*(?:=\s*(?P<value>.+))?", re.DOTALL)
_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(?P<name>[A-Za-z_]\w*)[ \t]+(?P<value>[^\n]+)$", re.MULTILINE)
_DIRECTIVE = re.compile(r"^[ \t]*#[^\n]*$", re.MULTILINE)
_INTEGER_SUFFIX = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b")

_OPERATORS: dict[type, Callable[..., int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
}


def evaluate(expression: str, known: dict[str, int]) -> int:
    """The value of the C integer constant expression ``expression``, whose names are
    ``known``'s; ValueError for anything else (a cast, a string, an unknown name)."""
    text = _INTEGER_SUFFIX.sub(r"\1", expression.strip())
    try:
        tree = ast.parse(f"({text})", mode="eval").body  # parenthesised: a value may span lines
    except SyntaxError:
        raise ValueError(f"not an integer expression: {expression!r}") from None

    def value(node: ast.expr) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name) and node.id in known:
            return known[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.operand))
        raise ValueError(f"not an integer expression: {expression!r}")

    return value(tree)


def read(header: str) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """The enums and integer macros of ``header`` (C source, comments and all), read in the
    header's order, as a value may name an earlier enum member or macro: every
    ``typedef enum ... { ... } NAME;`` (NAME -> its members' values) and every
    ``#define NAME value`` whose value is an integer expression (casts, function-like macros
    and aliases of functions are left out)."""
    text = _COMMENTS.sub(" ", header)
    enums: dict[str, dict[str, int]] = {}
    macros: dict[str, int] = {}
    known: dict[str, int] = {}
    for found in sorted([*_ENUM.finditer(text), *_MACRO.finditer(text)], key=lambda match: match.start()):
        if found.re is _MACRO:
            try:
                macros[found["name"]] = known[found["name"]] = evaluate(found["value"], known)
            except ValueError:
                pass
            continue
        members = enums[found["name"]] = {}
        following = 0  # an enumerator without a value is the previous one's plus one
        # Directives inside a body guard members of CUDA's own build (CU_LAUNCH_ATTRIBUTE_MAX
        # under __CUDA_API_VERSION_INTERNAL): the members are read, the directives dropped.
        body = _DIRECTIVE.sub(" ", found["body"])
        for entry in filter(None, (part.strip() for part in body.split(","))):
            member = _MEMBER.fullmatch(entry)
            if member is None:
                raise ValueError(f"enum {found['name']}: cannot read {entry!r}")
            if member["value"] is not None:
                following = evaluate(member["value"], known)
            members[member["name"]] = known[member["name"]] = following
            following += 1
    return enums, macros


def constants(header: str) -> Iterator[tuple[str, dict[str, int]]]:
    """(group, its names and values) for pyctk: ENUMS, then MACRO_PREFIXES' macros."""
    tables, defined = read(header)
    missing = [name for name in ENUMS if name not in tables]
    if missing:
        raise SystemExit(f"cuda.h has no enum {', '.join(missing)}: is it CUDA 12 or newer?")
    for enum in ENUMS:
        members, newer = tables[enum], NEWER_THAN_HEADER.get(enum, {})
        for name, value in newer.items():
            if members.get(name, value) != value:
                raise SystemExit(f"cuda.h gives {name} = {members[name]}, not {value} as NEWER_THAN_HEADER says")
        yield enum, {**members, **newer}
    for prefix in MACRO_PREFIXES:
        group = {name: value for name, value in defined.items() if name.startswith(prefix)}
        if not group:
            raise SystemExit(f"cuda.h defines no {prefix}* macro")
        yield f"#define {prefix}*", group


def module(header: str, source: str) -> str:
    """The text of constants.py for ``header``, the text of the cuda.h at ``source``."""
    version = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", header)
    lines = [
        f'"""Values from {source} (CUDA_VERSION {version[1] if version else "unknown"}),',
        "written by libgpu/tools/cuda_constants.py at build time. Do not edit.",
        '"""',
    ]
    for group, values in constants(header):
        lines += ["", f"# {group}"]
        lines += [f"{name} = {value}" for name, value in values.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("header", type=Path, help="cuda.h")
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    text = args.header.read_text(encoding="utf-8", errors="replace")
    args.output.write_text(module(text, args.header.name), encoding="utf-8")
