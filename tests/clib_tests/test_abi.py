"""The C ABI as a contract: what a release exported stays exported with its version node,
enum values and struct layouts never change (libgpu/abi/released.txt), nothing but the
header's functions is exported, and the header compiles cleanly as C and as C++."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import pyctk
from pyctk._cuda import c_build as _c_build
from support.c_programs import environment
from support.paths import ROOT
from support.released_abi import RELEASED, abi

LIBRARY = pyctk.get_library()
INCLUDE = pyctk.get_include()


def tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        pytest.fail(f"{name} is needed (apt-get install binutils gcc g++)")
    return path


@pytest.fixture(scope="module")
def current() -> list[str]:
    tool("readelf")
    return abi.current(LIBRARY, INCLUDE, tool("gcc"))


def test_released_abi_still_holds(current):
    assert len(RELEASED) > 80  # functions, constants and fields were all read
    broken = [line for line in RELEASED if line not in current]
    assert broken == [], (
        "released ABI lines no longer true of the library (a function removed "
        "or moved to another node, a constant renumbered, a field moved): "
        f"{broken}"
    )


def test_a_changed_value_breaks_the_contract(current):
    """The comparison above can fail: a renumbered constant or a moved field is not current."""
    success = "constant gpumatmul_status GPUMATMUL_SUCCESS 0"
    field = next(line for line in current if line.startswith("field gpumatmul_gemm_desc m "))
    assert success in current and field in current
    assert success.replace(" 0", " 1") not in current
    assert field.replace(" 24 ", " 28 ") not in current


def test_only_the_header_functions_are_exported_each_with_a_version_node():
    declared = abi.declared_functions(abi.header_code(INCLUDE))
    exported = abi.exported_symbols(LIBRARY)
    assert "gpumatmul_matmul_strided_batched_host" in declared
    assert set(exported) == declared
    nodes = set(exported.values())
    assert all(node.startswith("GPUMATMUL_") for node in nodes), nodes
    # The version script names every node's functions: the map and the header agree.
    script = (ROOT / "libgpu" / "abi" / "gpumatmul.map").read_text()
    assert all(f"{name};" in script for name in declared)


def test_every_enum_constant_has_an_explicit_value():
    with pytest.raises(ValueError, match="'GPUMATMUL_B' has no explicit value"):
        abi.constants("typedef enum e { GPUMATMUL_A = 0, GPUMATMUL_B } e;")


def test_programs_record_the_version_node_of_what_they_call(tmp_path):
    """The point of the nodes: a program binds to gpumatmul_create@GPUMATMUL_0.2, which a later
    library keeps, whatever it adds under later nodes."""
    source = tmp_path / "uses.c"
    source.write_text('#include "gpumatmul.h"\nint main(void) { return gpumatmul_version() == 0; }\n')
    program = tmp_path / "uses"
    subprocess.run(
        [tool("gcc"), "-std=c99", str(source), "-o", str(program), *_c_build.cflags(), *_c_build.libs()],
        env=environment(),
        check=True,
    )
    table = subprocess.run(
        [tool("readelf"), "--dyn-syms", "--wide", str(program)], check=True, capture_output=True, text=True
    ).stdout
    node = abi.exported_symbols(LIBRARY)["gpumatmul_version"]
    assert f"gpumatmul_version@{node}" in table
    assert subprocess.run([str(program)], env=environment(), timeout=60).returncode == 0


# -std= values the header is written for; -pedantic turns every extension into an error.
STANDARDS = [
    ("gcc", "c99"),
    ("gcc", "c11"),
    ("gcc", "c17"),
    ("g++", "c++11"),
    ("g++", "c++14"),
    ("g++", "c++17"),
    ("g++", "c++20"),
]


@pytest.mark.parametrize("compiler, standard", STANDARDS)
def test_header_compiles_without_warnings(tmp_path, compiler, standard):
    source = tmp_path / "include_only.c"
    source.write_text('#include "gpumatmul.h"\nint main(void) { return gpumatmul_version() != GPUMATMUL_VERSION; }\n')
    language = ["-x", "c++"] if compiler == "g++" else []
    subprocess.run(
        [
            tool(compiler),
            *language,
            f"-std={standard}",
            "-Wall",
            "-Wextra",
            "-pedantic",
            "-Werror",
            f"-I{INCLUDE}",
            "-c",
            str(source),
            "-o",
            str(tmp_path / "out.o"),
        ],
        check=True,
    )
