"""The host floor of benchmarks/matmul.py: its formula, and the GEMM time it is given."""

from __future__ import annotations

import pytest

from support import benchmark_scripts

benchmark = benchmark_scripts.load("matmul")
ENDLESS_BUS = {"h2d": 1e30, "d2h": 1e30}  # copies take no time: the floor is the GEMM's


def test_floor_is_the_copies_each_at_its_own_bandwidth_when_they_outlast_the_gemm():
    # n = 1, one byte per element: 2 bytes in at 2 B/s, 1 byte out at 0.5 B/s.
    bandwidth = {"h2d": 2.0, "d2h": 0.5}
    assert benchmark.floor_seconds(1, 1, bandwidth, gemm_seconds=1.0) == pytest.approx(1.0 + 2.0)


def test_floor_is_the_gemm_when_it_outlasts_the_copies():
    bandwidth = {"h2d": 2.0, "d2h": 0.5}
    assert benchmark.floor_seconds(1, 1, bandwidth, gemm_seconds=10.0) == 10.0


def test_floor_of_8192_float32_at_50_gb_per_second():
    # 2 operands in, 1 result out, 256 MiB each; the GEMM is faster than the copies.
    floor = benchmark.floor_seconds(8192, 4, {"h2d": 50e9, "d2h": 50e9}, gemm_seconds=1e-3)
    assert floor == pytest.approx(3 * 2**28 / 50e9)


def test_host_rows_take_the_cublas_device_time_of_their_dtype_and_n():
    row = benchmark.row
    rows = [
        row("device", "cublas", "float32", 4, 5.0),
        row("device", "tiled", "float32", 4, 100.0),
        row("device", "torch", "float32", 4, 1.0),
        row("device", "cublas", "float64", 4, 7.0),
        row("host", "tiled", "float32", 4, 10.0),
        row("host", "numpy", "float64", 4, 14.0),
        row("host", "cublas", "float32", 8, 1.0),
    ]
    floored = benchmark.with_floors(rows, ENDLESS_BUS)
    assert [r.get("floor_seconds") for r in floored] == [None, None, None, None, 5.0, 7.0, None]
    assert [r.get("fraction_of_floor") for r in floored[4:]] == [0.5, 0.5, None]
    assert [{k: r[k] for k in rows[i]} for i, r in enumerate(floored)] == rows  # nothing else changed
