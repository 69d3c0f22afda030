"""benchmarks/clocks.py's parts that need no GPU: the peak at a clock, and NVML's reasons."""

from __future__ import annotations

import pytest

from support import benchmark_scripts

clocks = benchmark_scripts.load("clocks")


def hopper(multiprocessors: int = 132, capability: str = "9.0") -> dict:
    return {"devices": [{"compute_capability": capability, "multiprocessors": multiprocessors}]}


@pytest.mark.parametrize(
    "dtype, mhz, tflops",
    [
        # NVIDIA's H100 SXM figures: tensor cores at 1830 MHz, FP64 and FP32 at 1980.
        ("float8_e4m3fn", 1830, 1979),
        ("e4m3-abt", 1830, 1979),
        ("int8-abt", 1830, 1979),
        ("float16", 1830, 989),
        ("tf32-abt", 1830, 495),
        ("float64", 1980, 66.9),
        ("float32", 1980, 66.9),
    ],
)
def test_the_peak_at_a_clock_is_nvidias_figure_at_its_clock(dtype, mhz, tflops):
    assert clocks.peak_at(dtype, mhz, hopper()) == pytest.approx(tflops, rel=2e-3)


def test_the_peak_scales_with_the_clock_and_the_multiprocessors():
    assert clocks.peak_at("float16", 915, hopper(66)) == pytest.approx(989.4 / 4, rel=1e-3)


def test_no_peak_is_guessed_off_hopper_or_for_a_dtype_not_in_the_table():
    assert clocks.peak_at("float16", 1410, hopper(capability="8.0")) is None
    assert clocks.peak_at("int64", 1830, hopper()) is None


def test_every_reason_is_one_bit():
    assert all(bit & (bit - 1) == 0 for bit in clocks.REASONS)
    assert clocks.REASONS[0x4] == "software power cap"
