"""README.md's table of headline figures is benchmarks/headline.py's, made from benchmarks/results/."""

from __future__ import annotations

import pytest

from support import benchmark_scripts
from support.paths import ROOT

headline = benchmark_scripts.load("headline")


def test_readme_has_the_table_headline_py_makes_from_the_results():
    # Fails where README.md has no markers too: the table must be there.
    readme = (ROOT / "README.md").read_text()
    assert headline.START in readme and headline.END in readme, (
        f"README.md needs the lines {headline.START} and {headline.END}"
    )
    assert headline.block(readme) == headline.table(), (
        "README.md's headline table is not what benchmarks/results/ gives: run `python benchmarks/headline.py --write`"
    )


def test_every_row_has_its_figure_the_gpu_and_the_day():
    rows = headline.rows()
    assert len(rows) == len(headline.HEADLINE)
    for cells in rows:
        assert len(cells) == len(headline.COLUMNS) + 2
        assert cells[1], f"no pyctk figure in {cells}"
        gpu, date = cells[-1].rsplit(", ", 1)
        assert gpu and len(date) == 10 and date[4] == date[7] == "-", cells[-1]


def test_write_replaces_only_what_is_between_the_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n{headline.START}\nold table\n{headline.END}\nafter\n")
    written = headline.written(readme.read_text(), "| new |")
    assert written == f"# title\n\nbefore\n{headline.START}\n| new |\n{headline.END}\nafter\n"
    assert headline.block(written) == "| new |"
    assert headline.written(written, "| new |") == written  # writing again changes nothing


@pytest.mark.parametrize(
    "text", ["no markers at all", f"{headline.START} only the start", f"{headline.END} reversed {headline.START}"]
)
def test_a_readme_without_both_markers_in_order_is_refused(text):
    with pytest.raises(ValueError, match="headline"):
        headline.written(text, "| table |")


def test_numbers_have_three_significant_digits_and_no_exponent():
    assert [headline.number(x) for x in (1359.04, 51.06, 4.7801, 0.5566, 0.01234)] == [
        "1359",
        "51.1",
        "4.78",
        "0.557",
        "0.0123",
    ]


def test_a_figure_is_read_from_the_first_machine_and_suite_that_has_it(tmp_path):
    def results(machine, suite, backend, tflops, date):
        path = tmp_path / machine / f"{suite}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(
            f'{{"measured": {{"gpu": "NVIDIA G{machine[:3]}", "gpus": 1, "date": "{date}"}}, "rows": '
            f'[{{"kind": "device", "backend": "{backend}", "dtype": "float32", "n": 8192, '
            f'"tflops": {tflops}}}]}}'
        )

    figure = headline.HEADLINE[0]
    results("h200-cu13", "complex", "tiled", 48.0, "2026-11-28")
    results("h100-cu13", "matmul", "tiled", 47.9, "2026-11-24")
    data, rows = headline.find(figure, headline.results(tmp_path))
    assert data["measured"]["date"] == "2026-11-28" and rows["tiled"]["tflops"] == 48.0
    results("h200-cu13", "matmul", "cublas", 51.1, "2026-11-29")  # no pyctk row: not this one
    data, rows = headline.find(figure, headline.results(tmp_path))
    assert data["measured"]["date"] == "2026-11-28"
    with pytest.raises(SystemExit, match="no results"):
        headline.find(headline.HEADLINE[2], headline.results(tmp_path))
