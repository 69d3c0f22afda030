"""backend="auto"'s table: benchmarks/auto_table.py's rule and writer, and that the table in the
library is the one its measurements give (benchmarks/results/h200-cu13/auto-table.json)."""

from __future__ import annotations

import json

from support import benchmark_scripts
from support.paths import ROOT

auto_table = benchmark_scripts.load("auto_table")


def measured(dtype, shape_class, tiled, cublas, precision="GPUMATMUL_PRECISION_HIGHEST"):
    return {"dtype": dtype, "precision": precision, "class": shape_class, "tiled": tiled, "cublas": cublas}


def test_kernels_win_a_class_only_when_faster_at_every_size():
    rows = [
        measured("GPUMATMUL_FLOAT16", "SHAPE_TINY", 1.0, 2.0),
        measured("GPUMATMUL_FLOAT16", "SHAPE_TINY", 1.0, 3.0),
        measured("GPUMATMUL_FLOAT16", "SHAPE_SMALL", 1.0, 2.0),
        measured("GPUMATMUL_FLOAT16", "SHAPE_SMALL", 2.0, 1.0),
        measured("GPUMATMUL_FLOAT64", "SHAPE_LARGE", 2.0, 1.0),
    ]
    assert auto_table.winners(rows) == {
        ("GPUMATMUL_FLOAT16", "GPUMATMUL_PRECISION_HIGHEST"): ["SHAPE_TINY"],
        ("GPUMATMUL_FLOAT64", "GPUMATMUL_PRECISION_HIGHEST"): [],
    }


def test_writing_replaces_this_architectures_rows_and_keeps_the_others(tmp_path):
    table = tmp_path / "auto_table.c"
    auto_table.write_table(80, "A100", {("GPUMATMUL_FLOAT64", "GPUMATMUL_PRECISION_HIGHEST"): ["SHAPE_TINY"]}, table)
    auto_table.write_table(90, "H100", {("GPUMATMUL_FLOAT16", "GPUMATMUL_PRECISION_HIGHEST"): []}, table)
    auto_table.write_table(
        90, "H100", {("GPUMATMUL_FLOAT16", "GPUMATMUL_PRECISION_HIGHEST"): ["SHAPE_TINY", "SHAPE_SMALL"]}, table
    )
    text = table.read_text()
    assert "{80, GPUMATMUL_FLOAT64, GPUMATMUL_PRECISION_HIGHEST,\n     1u << SHAPE_TINY}," in text
    assert ("{90, GPUMATMUL_FLOAT16, GPUMATMUL_PRECISION_HIGHEST,\n     1u << SHAPE_TINY | 1u << SHAPE_SMALL},") in text
    assert text.count("{90,") == 1 and "H100 (sm_90)" in text
    # a run of some cases (--cases) replaces their rows only
    auto_table.write_table(90, "H200", {("GPUMATMUL_COMPLEX64", "GPUMATMUL_PRECISION_TF32"): ["SHAPE_LARGE"]}, table)
    text = table.read_text()
    assert text.count("{90,") == 2 and "{90, GPUMATMUL_FLOAT16," in text
    assert "{90, GPUMATMUL_COMPLEX64, GPUMATMUL_PRECISION_TF32,\n     1u << SHAPE_LARGE}," in text


# Every measurement the table holds, in the order they were written: the whole table on an
# H200 (sm_90, the H100's kernel image), with the very small class; then int8 and FP8, which
# cuBLAS multiplies through cuBLASLt (--cases int8 float8_e4m3fn).
MEASUREMENTS = ["h200-cu13/auto-table.json", "h200-cu13/auto-table-cublaslt.json"]


def test_the_librarys_table_is_what_the_measurements_give(tmp_path):
    table = tmp_path / "auto_table.c"
    table.write_text((ROOT / "libgpu" / "src" / "gemm" / "auto_table.c").read_text())
    for name in MEASUREMENTS:
        measurements = json.loads((ROOT / "benchmarks" / "results" / name).read_text())
        auto_table.write_table(
            measurements["arch"], measurements["gpu"], auto_table.winners(measurements["rows"]), table
        )
    written, library = table.read_text(), (ROOT / "libgpu" / "src" / "gemm" / "auto_table.c").read_text()

    def rows(text):
        return text[text.index("auto_choices[] = {") :]  # the header has the date

    assert rows(written) == rows(library)
