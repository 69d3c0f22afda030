"""The sizes cuBLASLt's kernels take, read from the library's dtype table when the docs are built.

``backend="cublas"`` multiplies some dtypes through cuBLASLt alone, whose kernels take only
some n and k, and only on GPUs from some compute capability on. The rule is written once, in
libgpu/src/gemm/tables.c: the rows of ``dtype_infos`` whose cuBLAS column is
``CUBLASLT(cuda_type, highest, min_arch, c_dtype, c_type, n_multiple, k_multiple)``.
```` ```{cublaslt-sizes} ```` renders them as a table, so that the pages and gpumatmul.h
point to it instead of restating the numbers.

What cuBLAS does with the other sizes and GPUs follows from the row's own C dtype (its
fourth field), as libgpu/src/gemm/route.c decides: a dtype whose C is another
(float8_e4m3fn's float32) is multiplied as copies in the first dtype of widened.c's
``widenings`` that is for cuBLAS at precision HIGHEST (float16), which cuBLAS's GEMM takes at
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
WIDENED = ROOT / "libgpu" / "src" / "gemm" / "widened.c"

# The macros of tables.c that fill a row's cuBLAS column, and whether cuBLAS's GEMM takes
# the dtype at every size: a column of another kind stops the build until it is added here.
COLUMNS = {"CUBLAS": True, "CUBLASLT": False, "NOT_CUBLAS": False}
REFUSED = 'refused (`pyctk.UnsupportedError`); backend `"auto"` or `"tiled"` takes them'
HEADER = [
    "dtype",
    "compute capability",
    "cuBLASLt's C type",
    "n a multiple of",
    "k a multiple of",
    "other sizes and GPUs",
]
CAPTION = (
    "The dtypes cuBLAS multiplies through cuBLASLt (backend cublas), whose kernels run from "
    "this compute capability on and take only n (C's columns) and k of these multiples; read "
    "from libgpu/src/gemm/tables.c and widened.c"
)


@dataclass(frozen=True)
class Entry:
    """One row of ``dtype_infos``, as far as the table needs it."""

    name: str  # NumPy's name, the row's first field
    c_dtype: str  # the enum name of the dtype of C in its products, e.g. FLOAT32
    column: str  # the macro that fills its cuBLAS column, e.g. CUBLASLT
    arguments: list[str]  # that macro's arguments
    pair: tuple[str, str] | None = None  # a mixed pair's A and B enum names; None: one dtype


@dataclass(frozen=True)
class LtRow:
    """A dtype cuBLAS multiplies through cuBLASLt, and the sizes its kernels take."""

    dtype: str  # NumPy's name
    min_arch: int  # the oldest architecture with cuBLASLt's kernels, 10 * major + minor
    c_type: str  # the dtype cuBLASLt writes C in, e.g. int32
    n_multiple: int
    k_multiple: int
    widened_to: str | None  # the dtype of the copies cuBLAS multiplies elsewhere; None: refused


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
    pairs = dict(re.findall(r"gpumatmul_dtype (\w+)\[2\]\s*=\s*\{\s*(GPUMATMUL_\w+\s*,\s*GPUMATMUL_\w+)\s*\};", text))
    found = {}
    for enum, body in zip(parts[1::2], parts[2::2]):
        row = re.fullmatch(
            r'\{\s*"(\w+)",\s*\d+,\s*GPUMATMUL_(\w+),\s*(\w+)\(([^()]*)\),\s*"\w*"(?:,\s*(\w+))?\s*\},?\s*', body
        )
        if not row or (row.group(5) and row.group(5) not in pairs):
            raise ValueError(f"tables.c: dtype_infos' row [GPUMATMUL_{enum}] is not read: {' '.join(body.split())}")
        name, c_dtype, column, arguments, pair = row.groups()
        operands = None if pair is None else tuple(re.findall(r"GPUMATMUL_(\w+)", pairs[pair]))
        found[enum] = Entry(name, c_dtype, column, [a.strip() for a in arguments.split(",")], operands)  # type: ignore[arg-type]
    return found


def shown_name(entry: Entry, table: dict[str, Entry]) -> str:
    """A row's dtype as the docs show it: NumPy's name, or a mixed pair's as ``A @ B``."""
    return entry.name if entry.pair is None else " @ ".join(table[operand].name for operand in entry.pair)


def cublas_widening(source: str) -> str:
    """The enum name (e.g. FLOAT16) of the first of widened.c's ``widenings`` for cuBLAS at
    precision HIGHEST: what backend="cublas" copies FP8 operands into where cuBLASLt does not
    multiply them."""
    block = re.search(r"widenings\[\]\s*=\s*\{(.*?)\n\};", _without_comments(source), re.S)
    if not block:
        raise ValueError("widened.c: the widenings table not found")
    rows = re.findall(r"\{\s*GPUMATMUL_(\w+),\s*([^,{}]+),\s*([^,{}]+)\}", block.group(1))
    for to, backends, precisions in rows:
        if ("~0u" in backends or "BACKEND_CUBLAS" in backends) and (
            "~0u" in precisions or "PRECISION_HIGHEST" in precisions
        ):
            return to
    raise ValueError(f"widened.c: no row of widenings is for cuBLAS at HIGHEST (rows read: {rows})")


def _multiple(entry: Entry, argument: str, value: str) -> int:
    if not re.fullmatch(r"[1-9]\d*", value):
        raise ValueError(f"tables.c: {entry.name}'s CUBLASLT {argument} is {value!r}, not a positive whole number")
    return int(value)


def lt_rows(source: str, widened: str | None = None) -> list[LtRow]:
    """The ``CUBLASLT(...)`` rows of tables.c's ``dtype_infos`` (``source``), in the table's
    order; ``widened``: widened.c's text (read from WIDENED if not given)."""
    parameters = macro_parameters(source, "CUBLASLT")
    for needed in ("min_arch", "c_dtype", "n_multiple", "k_multiple"):
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
        if entry.c_dtype != enum:  # route.c: copies as widened.c widens them, else refused
            to = cublas_widening(WIDENED.read_text() if widened is None else widened)
            wide = table.get(to)
            if wide is None or not COLUMNS.get(wide.column):
                raise ValueError(
                    f"tables.c: {entry.name}'s other sizes are multiplied as GPUMATMUL_{to} "
                    "copies, whose row is not CUBLAS(...): who multiplies them is not known here"
                )
            widened_to = wide.name
        min_arch = _multiple(entry, "min_arch", given["min_arch"])
        rows.append(
            LtRow(
                shown_name(entry, table),
                min_arch,
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
    """What backend="cublas" does with the sizes and GPUs cuBLASLt's kernels do not take."""
    return REFUSED if row.widened_to is None else f"multiplied as {row.widened_to} copies by cuBLAS"


def cells(row: LtRow) -> list[str]:
    capability = f"{row.min_arch // 10}.{row.min_arch % 10} and newer"
    return [row.dtype, capability, row.c_type, str(row.n_multiple), str(row.k_multiple), other_sizes(row)]


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
            self.env.note_dependency(str(WIDENED))
            try:
                rows = lt_rows(TABLES.read_text())
            except (OSError, ValueError) as error:
                logger.warning(f"cublaslt-sizes: {error}", location=self.get_location())
                return []
            return [table_node(CAPTION, HEADER, [cells(row) for row in rows])]

    app.add_directive("cublaslt-sizes", CublasltSizes)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
