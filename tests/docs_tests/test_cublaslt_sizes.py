"""The table of the sizes cuBLASLt takes (docs/guide/numpy.md) is read from the library's source.

docs/_ext/cublaslt_sizes.py reads the CUBLASLT rows of libgpu/src/gemm/tables.c's
dtype_infos. Here: the rows it reads are exactly the ones the docs describe, so a change of
the dtype table or a parser that stops reading it fails; a row it cannot read, or a table
with none, is an error the directive turns into a Sphinx warning (which ``-W`` fails on).
The reading needs no Sphinx; the build tests do (the docs extra), as .ci/run runs them.
"""

from __future__ import annotations

import io
import re
import sys

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import cublaslt_sizes  # noqa: E402

SOURCE = cublaslt_sizes.TABLES.read_text()
WIDENED = cublaslt_sizes.WIDENED.read_text()
INT8_ROW = "CUBLASLT(CUDA_R_8I, I32, 75, GPUMATMUL_INT32, CUDA_R_32I, 4, 4)"
E4M3_ROW = "CUBLASLT(CUDA_R_8F_E4M3, F32, 89, GPUMATMUL_FLOAT32, CUDA_R_32F, 4, 16)"
# float8_e4m3fn's and the FP8 pairs' rows (these span lines), as they are and with a change
FP8_ROWS = re.compile(r"CUBLASLT\((CUDA_R_8F_E\dM\d), F32, 89, GPUMATMUL_FLOAT32,\s*CUDA_R_32F, 4, 16\)")
FLOAT16_ROW = "{GPUMATMUL_FLOAT16, 1u << GPUMATMUL_BACKEND_CUBLAS, 1u << GPUMATMUL_PRECISION_HIGHEST}"


def test_the_rows_are_int8s_float8_e4m3fns_and_the_mixed_fp8_pairs():
    rows = cublaslt_sizes.lt_rows(SOURCE)
    assert [(r.dtype, r.min_arch, r.n_multiple, r.k_multiple, r.c_type) for r in rows] == [
        ("int8", 75, 4, 4, "int32"),
        ("float8_e4m3fn", 89, 4, 16, "float32"),
        ("float8_e4m3fn @ float8_e5m2", 89, 4, 16, "float32"),  # a pair shown as A @ B
        ("float8_e5m2 @ float8_e4m3fn", 89, 4, 16, "float32"),
    ]
    # int8's C is its own: other sizes are refused; the FP8 rows' is float32: copies, in
    # widened.c's first dtype for cuBLAS at HIGHEST
    assert [r.widened_to for r in rows] == [None, "float16", "float16", "float16"]
    assert [cublaslt_sizes.other_sizes(r) for r in rows] == [cublaslt_sizes.REFUSED] + 3 * [
        "multiplied as float16 copies by cuBLAS"
    ]


def test_the_copies_are_widened_cs_first_row_for_cublas_at_highest():
    without_float16 = WIDENED.replace(FLOAT16_ROW, "")
    assert without_float16 != WIDENED
    assert [r.widened_to for r in cublaslt_sizes.lt_rows(SOURCE, without_float16)] == [None] + 3 * ["float32"]
    with pytest.raises(ValueError, match="widenings table not found"):
        cublaslt_sizes.lt_rows(SOURCE, WIDENED.replace("widenings[] =", "wider[] ="))


def test_every_dtype_row_is_read():
    header = (ROOT / "libgpu" / "include" / "gpumatmul.h").read_text()
    dtypes = re.search(r"typedef enum gpumatmul_dtype \{(.*?)\} gpumatmul_dtype;", header, re.S).group(1)
    table = cublaslt_sizes.entries(SOURCE)
    assert list(table) == re.findall(r"GPUMATMUL_(\w+) = \d+", dtypes)
    assert table["FLOAT8_E4M3FN"].c_dtype == "FLOAT32" and table["INT8"].c_dtype == "INT8"
    assert {e.column for e in table.values()} == set(cublaslt_sizes.COLUMNS)


def test_the_arguments_are_read_by_the_macros_parameter_names():
    """Reordering CUBLASLT's parameters (and every row's arguments with them) reads the same."""
    swapped = SOURCE.replace(
        "#define CUBLASLT(type, highest, min_arch, c_dtype, c_type, n_multiple, k_multiple)",
        "#define CUBLASLT(type, highest, min_arch, c_dtype, c_type, k_multiple, n_multiple)",
    )
    swapped, swaps = FP8_ROWS.subn(r"CUBLASLT(\1, F32, 89, GPUMATMUL_FLOAT32, CUDA_R_32F, 16, 4)", swapped)
    assert swaps == 3  # int8's are equal
    assert cublaslt_sizes.lt_rows(swapped) == cublaslt_sizes.lt_rows(SOURCE)


BROKEN = {
    "a multiple not a number": (SOURCE.replace(INT8_ROW, INT8_ROW.replace("4, 4)", "4, FOUR)")), "int8's CUBLASLT"),
    "a multiple of zero": (SOURCE.replace(E4M3_ROW, E4M3_ROW.replace("4, 16)", "4, 0)")), "float8_e4m3fn's"),
    "an argument missing": (SOURCE.replace(INT8_ROW, INT8_ROW.replace(", 4, 4)", ", 4)")), "6 arguments"),
    "no CUBLASLT row": (FP8_ROWS.sub('NOT_CUBLAS("")', SOURCE.replace(INT8_ROW, 'NOT_CUBLAS("")')), "no row"),
    "a C dtype with no row": (
        SOURCE.replace(INT8_ROW, INT8_ROW.replace("GPUMATMUL_INT32", "GPUMATMUL_INT24")),
        "INT24",
    ),
    "a column of a new kind": (SOURCE.replace(E4M3_ROW, E4M3_ROW.replace("CUBLASLT(", "CUBLASLT_SCALED(")), "COLUMNS"),
    "copies cuBLAS does not multiply": (
        SOURCE.replace('"float16", 2, GPUMATMUL_FLOAT16, CUBLAS(', '"float16", 2, GPUMATMUL_FLOAT16, NOT_CUBLAS(', 1),
        "copies",
    ),
    "a row not read": (SOURCE.replace('[GPUMATMUL_INT8] = {"int8", 1,', '[GPUMATMUL_INT8] = {"int8", one,'), "INT8"),
    "a pair of no array": (SOURCE.replace('"e4m3_e5m2", e4m3_e5m2}', '"e4m3_e5m2", e4m3_by_e5m2}'), "E4M3FN_E5M2"),
    "no macro": (SOURCE.replace("#define CUBLASLT(", "#define CUBLAS_LT("), "#define CUBLASLT"),
    "no table": (SOURCE.replace("dtype_infos[DTYPE_COUNT]", "dtype_table[DTYPE_COUNT]"), "dtype_infos"),
}


@pytest.mark.parametrize("source, message", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_table_is_an_error_that_names_it(source, message):
    assert source != SOURCE  # the break applied: the real source still has what it replaces
    with pytest.raises(ValueError, match=message):
        cublaslt_sizes.lt_rows(source)


@pytest.fixture
def build(tmp_path, monkeypatch):
    """A Sphinx build of one page with the directive, over tables.c's text `source`: (the
    cells of the page's table rows, the header's first, the warnings)."""
    pytest.importorskip("sphinx")
    from docutils import nodes
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    def run(source: str) -> tuple[list[list[str]], str]:
        tables = tmp_path / "tables.c"
        tables.write_text(source)
        monkeypatch.setattr(cublaslt_sizes, "TABLES", tables)
        pages = tmp_path / "pages"
        pages.mkdir(exist_ok=True)
        (pages / "conf.py").write_text('extensions = ["cublaslt_sizes"]\nsmartquotes = False\n')
        (pages / "index.rst").write_text("Sizes\n=====\n\n.. cublaslt-sizes::\n")
        warnings = io.StringIO()
        with docutils_namespace():
            app = Sphinx(pages, pages, tmp_path / "out", tmp_path / "doctrees", "dummy", status=None, warning=warnings)
            app.build()
            page = app.env.get_doctree("index")
        rows = [[entry.astext() for entry in row.findall(nodes.entry)] for row in page.findall(nodes.row)]
        return rows, warnings.getvalue()

    return run


def test_the_directive_renders_the_rows(build):
    rows, warnings = build(SOURCE)
    assert not warnings
    assert rows == [
        cublaslt_sizes.HEADER,
        ["int8", "7.5 and newer", "int32", "4", "4", cublaslt_sizes.REFUSED.replace("`", "")],
        ["float8_e4m3fn", "8.9 and newer", "float32", "4", "16", "multiplied as float16 copies by cuBLAS"],
        [
            "float8_e4m3fn @ float8_e5m2",
            "8.9 and newer",
            "float32",
            "4",
            "16",
            "multiplied as float16 copies by cuBLAS",
        ],
        [
            "float8_e5m2 @ float8_e4m3fn",
            "8.9 and newer",
            "float32",
            "4",
            "16",
            "multiplied as float16 copies by cuBLAS",
        ],
    ]


@pytest.mark.parametrize("broken", ["a multiple not a number", "no CUBLASLT row"])
def test_a_broken_row_is_a_warning(build, broken):
    source, message = BROKEN[broken]
    rows, warnings = build(source)
    assert "cublaslt-sizes: tables.c:" in warnings and message in warnings
    assert rows == []  # no table rather than a guess
