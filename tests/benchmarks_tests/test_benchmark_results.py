"""benchmarks/results/: one file per machine and suite, each saying where and how it was
measured; the scripts write into that layout; the docs' tables and plots read every file."""

from __future__ import annotations

import json
import sys

import pytest

from support import benchmark_scripts
from support.paths import ROOT

RESULTS = ROOT / "benchmarks" / "results"
measured = benchmark_scripts.load("measured")
FILES = sorted(RESULTS.glob("*/*.json"))
MEASURED = (
    "gpu",
    "gpus",
    "machine",
    "driver",
    "cuda",
    "cublas",
    "pyctk",
    "distribution",
    "build",
    "versions",
    "date",
    "command",
)


def names(paths):
    return [f"{p.parent.name}/{p.stem}" for p in paths]


def test_there_are_results_and_nothing_else_in_the_folders():
    assert FILES, "benchmarks/results/ is empty"
    assert sorted(p for p in RESULTS.rglob("*") if p.is_file()) == FILES
    assert not list((ROOT / "benchmarks").glob("*.json")), "results go into benchmarks/results/"


@pytest.mark.parametrize("path", FILES, ids=names(FILES))
def test_each_file_says_where_when_and_how_it_was_measured(path):
    data = json.loads(path.read_text())
    record = data["measured"]
    assert set(MEASURED) <= set(record), f"missing: {set(MEASURED) - set(record)}"
    assert record["gpu"] and record["date"] and record["command"].startswith("python benchmarks/")
    assert path.stem in measured.SUITES
    # the folder is the machine: the GPU's short name, how many, the CUDA major
    major = int(record["cuda"].split(".")[0])
    assert path.parent.name == measured.machine_folder(record["gpu"], major, record["gpus"])
    assert set(record["machine"]) == {"cpu_cores", "memory_gib", "host"}


def test_a_run_goes_to_its_machines_folder_and_suite():
    assert measured.gpu_slug("NVIDIA H100 80GB HBM3") == "h100"
    assert measured.gpu_slug("NVIDIA H200") == "h200"
    assert measured.default_path("NVIDIA H200", 13, "matmul") == RESULTS / "h200-cu13" / "matmul.json"
    assert measured.default_path("NVIDIA H200", 13, "dask", gpus=2) == RESULTS / "h200x2-cu13" / "dask.json"
    with pytest.raises(ValueError, match="suite"):
        measured.default_path("NVIDIA H200", 13, "results-rerun")


def test_the_measured_object_of_a_run_here(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/somewhere/benchmarks/matmul.py", "--only", "device", "--dtypes", "int8"])
    report = {
        "devices": [{"name": "NVIDIA H200"}],
        "driver_release": "580.159.04",
        "runtime_version": "13.0",
        "cublas_version": "13.1.0",
        "pyctk_version": "0.3.0",
        "distribution": "pyctk-cu13",
    }
    record = measured.measured(report, versions={"numpy": "2.5.2"})
    assert set(MEASURED) <= set(record)
    assert record["gpu"] == "NVIDIA H200" and record["gpus"] == 1 and record["driver"] == "580.159.04"
    assert record["command"] == "python benchmarks/matmul.py --only device --dtypes int8"
    assert record["machine"]["cpu_cores"] >= 1
    assert measured.measured(None, gpu="NVIDIA H100")["driver"] is None


def test_matmul_names_the_suite_after_what_it_ran():
    matmul = benchmark_scripts.load("matmul")

    def suite(only, dtypes=("float32",)):
        return matmul.suite_of({"only": list(only), "dtypes": list(dtypes)})

    assert suite(["device"], ["float32", "float16", "tf32"]) == "matmul"
    assert suite(["device"], ["complex64", "float32"]) == "complex"
    assert suite(["device"], ["c64-tf32"]) == "complex"
    assert suite(["device"], ["int8", "bool", "int64"]) == "integers"
    assert suite(["device-call"]) == "device-call"
    assert suite(["host-devices"]) == "devices"
    assert suite(["device", "host", "host-tiny", "startup"]) == "host"
    assert matmul.suite_of({"only": None, "dtypes": ["float32"]}) == "host"


def test_write_puts_measured_first(tmp_path):
    path = measured.write(tmp_path / "a" / "matmul.json", {"rows": [], "measured": {"gpu": "x"}})
    assert list(json.loads(path.read_text())) == ["measured", "rows"]


@pytest.fixture(scope="module")
def performance():
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        pytest.importorskip("sphinx")
        import performance
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    return performance


@pytest.mark.parametrize("path", FILES, ids=names(FILES))
def test_the_performance_page_makes_tables_of_every_file(path, performance):
    data = json.loads(path.read_text())
    made = performance.tables(data)
    assert made
    for caption, header, body in made:
        assert caption and body and all(len(cells) == len(header) for cells in body)
    assert performance.measured_text(data).startswith("Measured on ")


def test_the_auto_choices_are_read_from_the_librarys_c_source(performance):
    classes = performance.shape_classes(performance.SHAPE_CLASSES.read_text())
    assert [name for name, _ in classes] == [
        "SHAPE_TINY",
        "SHAPE_VERY_SMALL",
        "SHAPE_SMALL",
        "SHAPE_MEDIUM",
        "SHAPE_LARGE",
    ]
    assert classes[-1][1] is None and all(bound for _, bound in classes[:-1])
    said, rows = performance.choices(performance.AUTO_TABLE.read_text())
    assert rows and said

    def text(taken):
        return performance.classes_text(taken, [("A", 32), ("B", 64), ("C", 512), ("D", None)])

    assert text(["A", "B"]) == "up to 64³"
    assert text(["A", "C", "D"]) == "up to 32³, and above 64³"
    assert text(["B"]) == "above 32³ up to 64³"
    assert text([]) == "none: cuBLAS for every size"


@pytest.mark.parametrize("path", FILES, ids=names(FILES))
def test_plot_draws_every_file(path):
    pytest.importorskip("matplotlib")
    plot = benchmark_scripts.load("plot")
    drawn = plot.figures(json.loads(path.read_text()))
    assert drawn, f"no plot for {path}"
    assert set(drawn) <= set(plot.PLOTS)
