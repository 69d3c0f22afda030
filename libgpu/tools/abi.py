"""The ABI of a built libgpumatmul, one fact a line, in libgpu/abi/released.txt's form:

    function gpumatmul_create GPUMATMUL_0.2           exported function, its version node
    constant gpumatmul_status GPUMATMUL_SUCCESS 0     enum, constant, value
    field gpumatmul_gemm_desc m 24 8                  struct, field, offset, size (bytes)

    python libgpu/tools/abi.py LIBRARY INCLUDE_DIR    # print the library's ABI

Functions from the library's dynamic symbol table (readelf), constants from gpumatmul.h,
field offsets and sizes from a C program that includes it (cc, on this machine's ABI).
released.txt holds the lines of every release, appended at each release with this tool;
tests/clib_tests/test_abi.py fails when one of them is no longer true of the library as built.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

HEADER = "gpumatmul.h"


def header_code(include_dir: str | Path) -> str:
    """gpumatmul.h without its comments."""
    return re.sub(r"/\*.*?\*/", "", Path(include_dir, HEADER).read_text(), flags=re.S)


def declared_functions(code: str) -> set[str]:
    return set(re.findall(r"GPUMATMUL_API\s[\w\s*]*?\b(gpumatmul_\w+)\s*\(", code))


def exported_symbols(library: str | Path) -> dict[str, str]:
    """Every defined dynamic symbol of the library, with its version node ('' if none)."""
    table = subprocess.run(
        ["readelf", "--dyn-syms", "--wide", str(library)], check=True, capture_output=True, text=True
    ).stdout
    symbols = {}
    for line in table.splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name[@@node]; Ndx UND: imported, ABS: a node's name
        if len(fields) == 8 and fields[0][:-1].isdigit() and fields[6] not in ("UND", "ABS"):
            name, _, node = fields[7].partition("@")
            symbols[name] = node.lstrip("@")
    return symbols


def functions(library: str | Path) -> list[str]:
    return [f"function {name} {node}" for name, node in sorted(exported_symbols(library).items())]


def constants(code: str) -> list[str]:
    lines = []
    for body, enum in re.findall(r"typedef enum \w+ \{(.*?)\} (\w+);", code, re.S):
        for enumerator in filter(None, (e.strip() for e in body.split(","))):
            match = re.fullmatch(r"(\w+)\s*=\s*(-?\d+)", enumerator)
            if not match:  # an implicit value would change when another is inserted before it
                raise ValueError(f"{enum}: {enumerator!r} has no explicit value")
            lines.append(f"constant {enum} {match[1]} {match[2]}")
    return lines


def struct_fields(code: str) -> list[tuple[str, str]]:
    """(struct, field) of every field of every struct the header defines, in order."""
    result = []
    for struct, body in re.findall(r"typedef struct (\w+) \{(.*?)\} \1;", code, re.S):
        for declaration in filter(None, (d.strip() for d in body.split(";"))):
            for declarator in declaration.split(","):  # "int64_t m, n" declares two
                result.append((struct, re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", declarator)[1]))
    return result


def fields(include_dir: str | Path, code: str, cc: str = "cc") -> list[str]:
    prints = "".join(
        f'    printf("field {s} {f} %zu %zu\\n", offsetof({s}, {f}), sizeof(((const {s} *)0)->{f}));\n'
        for s, f in struct_fields(code)
    )
    source = (
        f'#include <stddef.h>\n#include <stdio.h>\n#include "{HEADER}"\nint main(void) {{\n{prints}    return 0;\n}}\n'
    )
    with tempfile.TemporaryDirectory() as folder:
        program = Path(folder, "layout")
        Path(folder, "layout.c").write_text(source)
        subprocess.run([cc, "-std=c99", f"-I{include_dir}", "-o", str(program), str(program) + ".c"], check=True)
        return subprocess.run([str(program)], check=True, capture_output=True, text=True).stdout.splitlines()


def current(library: str | Path, include_dir: str | Path, cc: str = "cc") -> list[str]:
    """The whole ABI of ``library`` with the header in ``include_dir``."""
    code = header_code(include_dir)
    return functions(library) + constants(code) + fields(include_dir, code, cc)


def read(path: str | Path) -> list[str]:
    """The lines of an ABI list, comments and blank lines left out."""
    return [line.split("#")[0].strip() for line in Path(path).read_text().splitlines() if line.split("#")[0].strip()]


if __name__ == "__main__":
    print("\n".join(current(sys.argv[1], sys.argv[2])))
