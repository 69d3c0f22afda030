"""The per-call rows of benchmarks/matmul.py: medians of rounds, and speedups taken round by round."""

from __future__ import annotations

import types

import pytest

from support import benchmark_scripts

benchmark = benchmark_scripts.load("matmul")


def test_speedup_is_taken_within_each_round_so_a_change_of_host_pace_does_not_move_it():
    # torch takes 1.25x pyctk's time at either of the host's two paces (1 and 1.5); in round 3
    # the pace changed between pyctk's turn and torch's. The medians alone (12 us against 10)
    # would make pyctk the slower.
    ours, theirs = [1.0, 1.0, 1.5, 1.5, 1.5], [1.0, 1.0, 1.0, 1.5, 1.5]
    seconds = {("pyctk", 16): [8e-6 * pace for pace in ours], ("torch", 16): [10e-6 * pace for pace in theirs]}
    rows = {r["backend"]: r for r in benchmark.per_call_rows(seconds)}
    assert rows["pyctk"]["speedup"] == pytest.approx(1.25)
    assert rows["pyctk"]["peer"] == "torch"
    assert rows["pyctk"]["seconds"] == pytest.approx(12e-6)  # the median round
    assert rows["pyctk"]["least_seconds"] == pytest.approx(8e-6)
    assert rows["pyctk"]["most_seconds"] == pytest.approx(12e-6)
    assert "speedup" not in rows["torch"] and rows["torch"]["rounds"] == 5


def test_each_pyctk_row_is_set_against_its_own_peer_at_its_own_size():
    seconds = {
        ("pyctk-torch", 16): [1.0, 2.0, 3.0],
        ("torch", 16): [2.0, 2.0, 2.0],
        ("pyctk-cupy", 16): [1.0, 1.0, 1.0],
        ("cupy", 16): [3.0, 1.0, 2.0],
        ("pyctk-cupy", 32): [4.0, 4.0, 4.0],
        ("cupy", 32): [1.0, 1.0, 1.0],
    }
    rows = {(r["backend"], r["n"]): r for r in benchmark.per_call_rows(seconds)}
    assert rows["pyctk-torch", 16]["speedup"] == 1.0  # median of 2, 1, 2/3
    assert rows["pyctk-cupy", 16]["speedup"] == 2.0  # median of 3, 1, 2
    assert rows["pyctk-cupy", 32]["speedup"] == 0.25
    assert rows["pyctk-cupy", 32]["peer"] == "cupy"


def test_a_row_whose_peer_was_not_timed_has_no_speedup():
    # (CuPy not installed: no "cupy" rows, and pyctk's on torch's tensors still have theirs)
    rows = benchmark.per_call_rows({("pyctk", 64): [1.0], ("pyctk-c", 64): [0.5]})
    assert all("speedup" not in r and "peer" not in r for r in rows)


def test_the_table_shows_the_speedup_and_its_peer():
    row = benchmark.per_call_rows({("pyctk", 16): [8e-6], ("torch", 16): [10e-6]})[0]
    assert benchmark.table_line(row).endswith("1.25x torch")
    assert "8.00 us" in benchmark.table_line(row)


def test_rounds_warm_every_case_up_then_time_each_in_turn_between_synchronisations():
    per_call = benchmark_scripts.load("per_call")
    log = []
    cases = {"a": lambda: log.append("a"), "b": lambda: log.append("b")}
    seconds = per_call.rounds(cases, calls=2, synchronize=lambda: log.append("|"), count=3)
    warm_up = 2 * per_call.WARM_UP
    assert log[:warm_up] == ["a"] * per_call.WARM_UP + ["b"] * per_call.WARM_UP
    assert "".join(log[warm_up:]) == "|aa||bb|" * 3
    assert {key: len(rounds) for key, rounds in seconds.items()} == {"a": 3, "b": 3}
    assert all(s >= 0 for rounds in seconds.values() for s in rounds)


def test_builds_are_compared_by_their_speedups_in_their_own_rounds():
    builds = benchmark_scripts.load("builds")
    # "after" ran on a host 1.5x slower throughout: its seconds alone say it got slower,
    # while against torch in the same rounds its cost fell by a quarter.
    seconds = {
        "before": {("pyctk", 16): [10e-6, 10e-6], ("torch", 16): [10e-6, 10e-6]},
        "after": {("pyctk", 16): [11.25e-6, 11.25e-6], ("torch", 16): [15e-6, 15e-6]},
    }
    rows = {(r["build"], r["case"]): r for r in builds.rows_of(seconds)}
    assert rows["before", "pyctk"]["cost"] == pytest.approx(1.0)
    assert rows["after", "pyctk"]["speedup"] == pytest.approx(15 / 11.25)
    assert rows["after", "pyctk"]["cost"] == pytest.approx(0.75)
    assert "cost" not in rows["after", "torch"]
    assert rows["after", "pyctk"]["backend"] == "after pyctk"  # as benchmarks/plot.py labels bars
    lines = builds.table(list(rows.values())).splitlines()
    assert lines[0].split() == ["build", "case", "n", "median", "range", "speedup", "cost"]
    assert lines[3].split()[:4] == ["after", "pyctk", "16", "11.25"]
    assert lines[3].endswith("1.33x torch   0.75")


def test_cases_multiply_each_peers_own_array_by_itself_at_every_size():
    per_call = benchmark_scripts.load("per_call")
    made = []
    torch = types.SimpleNamespace(ones=lambda n, m, device: ("tensor", n, m, device))
    peers = {
        "mine": (lambda t: ("mine", t), lambda x, y: ("product", x, y)),
        "theirs": (lambda t: t, lambda x, y: made.append((x, y))),
    }
    cases = per_call.cases(peers, torch)
    assert set(cases) == {(name, n) for name in peers for n in per_call.SIZES}
    assert cases["mine", 16]() == (
        "product",
        ("mine", ("tensor", 16, 16, "cuda")),
        ("mine", ("tensor", 16, 16, "cuda")),
    )
    cases["theirs", 64]()
    assert made == [(("tensor", 64, 64, "cuda"), ("tensor", 64, 64, "cuda"))]


def test_peers_are_pyctk_on_each_librarys_arrays_beside_that_library():
    per_call = benchmark_scripts.load("per_call")
    pyctk = types.SimpleNamespace(asarray=object(), matmul=object())
    torch = types.SimpleNamespace(matmul=object())
    peers = per_call.peers(pyctk, torch)
    assert peers["pyctk"] == (pyctk.asarray, pyctk.matmul)
    assert peers["pyctk-torch"][1] is pyctk.matmul and peers["torch"][1] is torch.matmul
    assert all(per_call.PEERS[name] in peers for name in peers if name in per_call.PEERS)
