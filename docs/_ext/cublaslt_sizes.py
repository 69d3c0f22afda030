"""The sizes cuBLASLt's kernels take, read from the library's dtype table when the docs are built.

``backend="cublas"`` multiplies some dtypes through cuBLASLt alone, whose kernels take only
some n and k. The rule is written once, in libgpu/src/gemm/tables.c: the rows of
``dtype_infos`` whose cuBLAS column is ``CUBLASLT(cuda_type, highest, c_dtype, c_type,
n_multiple, k_multiple)``. ```` ```{cublaslt-sizes} ```` renders them as a table, so that the
pages and gpumatmul.h point to it instead of restating the numbers.

What cuBLAS does with the other sizes follows from the row's own C dtype (its third field),
as libgpu/src/api/prepare.c decides: a dtype whose C is another (float8_e4m3fn's float32) is
multiplied as copies in that dtype (libgpu/src/gemm/widened.c), which cuBLAS's GEMM takes at
every size; a dtype whose C is its own is refused (NOT_SUPPORTED, pyctk.UnsupportedError).

A row that uses CUBLASLT but cannot be read, a cuBLAS column of a kind not known here, or a
table with no CUBLASLT row at all is a warning (``-W`` fails the build), never a guess. The
reading needs no Sphinx, so that the tests run it without the docs extra; Sphinx is
imported in setup(), as pycuda_table.py does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "libgpu" / "src" / "gemm" / "tables.c"

# The macros of tables.c that fill a row's cuBLAS column, and whether cuBLAS's GEMM takes
# the dtype at every size: a column of another kind stops the build until it is added here.
COLUMNS = {"CUBLAS": True, "CUBLASLT": False, "NOT_CUBLAS": False}
REFUSED = 'refused (`pyctk.UnsupportedError`); backend `"auto"` or `"tiled"` takes them'
HEADER = ["dtype", "cuBLASLt's C type", "n a multiple of", "k a multiple of", "other sizes"]
CAPTION = (
    "The dtypes cuBLAS multiplies through cuBLASLt (backend cublas), whose kernels take only n "
    "(C's columns) and k of these multiples; read from libgpu/src/gemm/tables.c"
)


@dataclass(frozen=True)
class Entry:
    """One row of ``dtype_infos``, as far as the table needs it."""

    name: str  # NumPy's name, the row's first field
    c_dtype: str  # the enum name of the dtype of C in its products, e.g. FLOAT32
    column: str  # the macro that fills its cuBLAS column, e.g. CUBLASLT
    arguments: list[str]  # that macro's arguments


@dataclass(frozen=True)
class LtRow:
    """A dtype cuBLAS multiplies through cuBLASLt, and the sizes its kernels take."""

    dtype: str  # NumPy's name
    c_type: str  # the dtype cuBLASLt writes C in, e.g. int32
    n_multiple: int
    k_multiple: int
    widened_to: str | None  # the dtype of the copies cuBLAS multiplies at other sizes; None: refused


def _without_comments(source: str) -> str:
    return re.sub(r"/\*.*?\*/", " ", source, flags=re.S)


def macro_parameters(source: str, macro: str) -> list[str]:
    """The parameter names of ``#define macro(...)`` in source."""
    found = re.search(rf"#define {macro}\(([^)]*)\)", source)
    if not found:
        raise ValueError(f"tables.c: no #define {macro}(...)")
    return [name.strip() for name in found.group(1).split(",")]


def entries(source: str) -> dict[str, Entry]:
    """Every row of tables.c's ``dtype_infos``, by its enum name (e.g. FLOAT8_E4M3FN)."""
    text = _without_comments(source)
    block = re.search(r"dtype_infos\[DTYPE_COUNT\]\s*=\s*\{(.*?)\n\};", text, re.S)
    if not block:
        raise ValueError("tables.c: the dtype_infos table not found")
    parts = re.split(r"\[GPUMATMUL_(\w+)\]\s*=\s*", block.group(1))
    if parts[0].strip() or len(parts) < 3:
        raise ValueError("tables.c: dtype_infos' rows are not [GPUMATMUL_<dtype>] = {...}")
    found = {}
    for enum, body in zip(parts[1::2], parts[2::2]):
        row = re.fullmatch(r'\{\s*"(\w+)",\s*\d+,\s*GPUMATMUL_(\w+),\s*(\w+)\(([^()]*)\),\s*"\w*"\s*\},?\s*', body)
        if not row:
            raise ValueError(f"tables.c: dtype_infos' row [GPUMATMUL_{enum}] is not read: {' '.join(body.split())}")
        name, c_dtype, column, arguments = row.groups()
        found[enum] = Entry(name, c_dtype, column, [a.strip() for a in arguments.split(",")])
    return found


def _multiple(entry: Entry, argument: str, value: str) -> int:
    if not re.fullmatch(r"[1-9]\d*", value):
        raise ValueError(f"tables.c: {entry.name}'s CUBLASLT {argument} is {value!r}, not a positive whole number")
    return int(value)


def lt_rows(source: str) -> list[LtRow]:
    """The ``CUBLASLT(...)`` rows of tables.c's ``dtype_infos``, in the table's order."""
    parameters = macro_parameters(source, "CUBLASLT")
    for needed in ("c_dtype", "n_multiple", "k_multiple"):
        if needed not in parameters:
            raise ValueError(f"tables.c: CUBLASLT({', '.join(parameters)}) has no parameter {needed}")
    table = entries(source)
    rows = []
    for enum, entry in table.items():
        if entry.column not in COLUMNS:
            raise ValueError(
                f"tables.c: {entry.name}'s cuBLAS column is {entry.column}(...), which "
                "docs/_ext/cublaslt_sizes.py does not know: add it to COLUMNS"
            )
        if entry.column != "CUBLASLT":
            continue
        if len(entry.arguments) != len(parameters):
            raise ValueError(
                f"tables.c: {entry.name}'s CUBLASLT has {len(entry.arguments)} arguments, "
                f"not the {len(parameters)} of CUBLASLT({', '.join(parameters)})"
            )
        given = dict(zip(parameters, entry.arguments))
        c_type = re.fullmatch(r"GPUMATMUL_(\w+)", given["c_dtype"])
        if not c_type or c_type.group(1) not in table:
            raise ValueError(f"tables.c: {entry.name}'s CUBLASLT c_dtype {given['c_dtype']} is no row of dtype_infos")
        widened_to = None
        if entry.c_dtype != enum:  # prepare.c: copies in C's dtype (widened.c), else refused
            wide = table.get(entry.c_dtype)
            if wide is None or not COLUMNS.get(wide.column):
                raise ValueError(
                    f"tables.c: {entry.name}'s other sizes are multiplied as GPUMATMUL_{entry.c_dtype} "
                    "copies, whose row is not CUBLAS(...): who multiplies them is not known here"
                )
            widened_to = wide.name
        rows.append(
            LtRow(
                entry.name,
                table[c_type.group(1)].name,
                _multiple(entry, "n_multiple", given["n_multiple"]),
                _multiple(entry, "k_multiple", given["k_multiple"]),
                widened_to,
            )
        )
    if not rows:
        raise ValueError("tables.c: no row of dtype_infos uses CUBLASLT(...)")
    return rows


def other_sizes(row: LtRow) -> str:
    """What backend="cublas" does with the sizes cuBLASLt's kernels do not take."""
    return REFUSED if row.widened_to is None else f"multiplied as {row.widened_to} copies by cuBLAS"


def cells(row: LtRow) -> list[str]:
    return [row.dtype, row.c_type, str(row.n_multiple), str(row.k_multiple), other_sizes(row)]


def setup(app: Any) -> dict[str, Any]:
    from docutils import nodes
    from sphinx.util import logging
    from sphinx.util.docutils import SphinxDirective

    from performance import table_node

    logger = logging.getLogger(__name__)

    class CublasltSizes(SphinxDirective):
        """```{cublaslt-sizes}```: the CUBLASLT rows of tables.c as a table."""

        def run(self) -> list[nodes.Node]:
            self.env.note_dependency(str(TABLES))
            try:
                rows = lt_rows(TABLES.read_text())
            except (OSError, ValueError) as error:
                logger.warning(f"cublaslt-sizes: {error}", location=self.get_location())
                return []
            return [table_node(CAPTION, HEADER, [cells(row) for row in rows])]

    app.add_directive("cublaslt-sizes", CublasltSizes)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
