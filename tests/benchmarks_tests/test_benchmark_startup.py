"""benchmarks/startup.py's parts that need no GPU: the import rows, and the table's lines for
the products it could not measure."""

from __future__ import annotations

from support import benchmark_scripts

startup = benchmark_scripts.load("startup")
fresh = benchmark_scripts.load("fresh")


def test_the_import_rows_come_from_fresh_processes_that_import_an_installed_pyctk():
    notes: list[str] = []
    rows = startup.import_rows(1, notes)
    assert notes == []  # a child that failed would leave a note and no row
    assert [(r["kind"], r["backend"], r["runs"]) for r in rows] == [
        ("import", "pyctk", 1),
        ("import-matmul", "pyctk", 1),
    ]
    assert all(0 < r["seconds"] < 60 for r in rows)


def test_a_failing_child_leaves_a_note_and_no_row():
    notes: list[str] = []

    def fails() -> float:
        return fresh.child_output("raise SystemExit('no pyctk here')")

    assert startup.process_row("startup", "torch", fails, 1, notes) == []
    assert (
        len(notes) == 1
        and notes[0].startswith("startup torch: the fresh process failed")
        and "no pyctk here" in notes[0]
    )


def test_the_table_says_why_a_library_has_no_first_result(capsys):
    rows = [{"kind": "import", "backend": "pyctk", "seconds": 2.5e-4}]
    startup.print_rows(rows, 3, {"pyctk": "no GPU", "cupy": "not installed"})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "fresh processes, median of 3 (after one unrecorded)"
    assert lines[2].split() == ["pyctk", "import", "pyctk,", "after", "NumPy", "0.25", "ms"]
    assert lines[3].split()[0] == "pyctk" and lines[3].endswith("no GPU")
    assert lines[4].split()[0] == "cupy" and lines[4].endswith("not installed")


def test_every_kind_of_row_has_its_words_for_the_tables():
    assert set(fresh.WHAT) == {"startup", "startup-floor", *fresh.IMPORTS}
