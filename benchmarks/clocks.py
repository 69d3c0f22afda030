"""The clock a product runs at: the SM clock and the board's power, sampled through NVML while
the product runs back to back, beside its rate in a burst and the tensor cores' peak at the
clock measured. A table and JSON.

    python benchmarks/clocks.py [--dtypes e4m3-abt int8-abt float16 ...] [--n 8192]
                                [--seconds 3] [--repeats 10] [--out FILE]

--dtypes are matmul.py's device-row names (its DTYPE_CODES and MODES: "e4m3-abt" is a @ b.T
of float8_e4m3fn). For each, the runs are matmul.py's device rows: pyctk's backends beside the
peers, on the same n x n operands on the GPU. For each run, one after another:

- "burst": the median device time of --repeats calls, as matmul.py's device rows time it
  (the GPU starts each call at the clock it had idle);
- "sustained": calls back to back for --seconds, CUDA events around them all, while a thread
  samples NVML every SAMPLE_S: the SM clock (median and least over the run), the board's
  power (mean, and the limit it is held to), the hottest GPU temperature, and every reason
  NVML gave for holding the clock down (its "clocks event reasons", by name).

"peak_tflops_at_clock" is the dense rate of the units the dtype runs on at the median clock
(Hopper, compute capability 9.0, only: OPS_PER_CLOCK), and "fraction_of_peak_at_clock" the
sustained rate's share of it. A product at its power limit runs where the clock the power allows
puts it: that is the limit then, not the kernel. The JSON goes to
benchmarks/results/<machine>/clocks.json (measured.py; --out to choose).
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import threading
import time

import matmul  # benchmarks/matmul.py and measured.py: this folder is first on sys.path
import measured
import pyctk
from pyctk._cuda import contexts as _contexts

SAMPLE_S = 0.005
# Dense operations a clock per SM of Hopper (sm_90): NVIDIA's H100 SXM figures over its 132
# SMs at 1830 MHz for the tensor cores (FP8 and INT8 1979 TFLOP/s, 16-bit 989, TF32 495) and
# 1980 MHz for FP64 on tensor cores and FP32 on CUDA cores (67 each). By the dtype the
# product's operands are read in; complex products run on their real kernels (8 n^3 flops).
OPS_PER_CLOCK = {
    "float8_e4m3fn": 8192,
    "float8_e5m2": 8192,
    "float8_e4m3fn_e5m2": 8192,
    "float8_e5m2_e4m3fn": 8192,
    "int8": 8192,
    "uint8": 8192,
    "bool": 8192,
    "float16": 4096,
    "bfloat16": 4096,
    "tf32": 2048,
    "float64": 256,
    "complex128": 256,
    "float32": 256,
    "complex64": 256,
}
# NVML's clocks event reasons (nvml.h, nvmlClocksEventReason*), by bit.
REASONS = {
    0x1: "gpu idle",
    0x2: "applications clocks setting",
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x10: "sync boost",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake slowdown",
    0x100: "display clock setting",
}
NVML_CLOCK_SM, NVML_TEMPERATURE_GPU = 1, 0


class Nvml:
    """The few NVML queries used here, on device 0 (libnvidia-ml.so.1, the driver's)."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        self.check(self.lib.nvmlInit_v2(), "nvmlInit_v2")
        self.device = ctypes.c_void_p()
        self.check(self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.device)), "GetHandleByIndex")
        # CurrentClocksEventReasons is the newer name of CurrentClocksThrottleReasons.
        self.reasons_query = getattr(self.lib, "nvmlDeviceGetCurrentClocksEventReasons", None) or (
            self.lib.nvmlDeviceGetCurrentClocksThrottleReasons
        )

    def check(self, result: int, what: str) -> None:
        if result:
            self.lib.nvmlErrorString.restype = ctypes.c_char_p
            raise RuntimeError(f"NVML {what}: {self.lib.nvmlErrorString(result).decode()}")

    def unsigned(self, query, *args) -> int:
        value = ctypes.c_uint()
        self.check(query(self.device, *args, ctypes.byref(value)), query.__name__)
        return value.value

    def sample(self) -> dict:
        reasons = ctypes.c_ulonglong()
        self.check(self.reasons_query(self.device, ctypes.byref(reasons)), "clocks event reasons")
        return {
            "sm_mhz": self.unsigned(self.lib.nvmlDeviceGetClockInfo, NVML_CLOCK_SM),
            "watts": self.unsigned(self.lib.nvmlDeviceGetPowerUsage) / 1e3,
            "celsius": self.unsigned(self.lib.nvmlDeviceGetTemperature, NVML_TEMPERATURE_GPU),
            "reasons": reasons.value,
        }

    def limits(self) -> dict:
        return {
            "max_sm_mhz": self.unsigned(self.lib.nvmlDeviceGetMaxClockInfo, NVML_CLOCK_SM),
            "power_limit_watts": self.unsigned(self.lib.nvmlDeviceGetEnforcedPowerLimit) / 1e3,
        }


def sustained(torch, run, seconds: float, nvml: Nvml) -> dict:
    """Calls of ``run`` back to back for about ``seconds``, NVML sampled meanwhile."""
    calls = max(1, round(seconds / matmul.burst_seconds(torch, run, 3)))
    samples: list[dict] = []
    done = threading.Event()

    def sampler() -> None:
        while not done.is_set():
            samples.append(nvml.sample())
            time.sleep(SAMPLE_S)

    thread = threading.Thread(target=sampler)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    thread.start()
    start.record()
    for _ in range(calls):
        run()
    end.record()
    end.synchronize()
    done.set()
    thread.join()
    busy = samples[len(samples) // 10 :] or samples  # the clock's first response left out
    reasons = 0
    for s in busy:
        reasons |= s["reasons"]
    return {
        "seconds": start.elapsed_time(end) / 1e3 / calls,
        "calls": calls,
        "samples": len(busy),
        "sm_mhz": statistics.median(s["sm_mhz"] for s in busy),
        "least_sm_mhz": min(s["sm_mhz"] for s in busy),
        "watts": statistics.fmean(s["watts"] for s in busy),
        "celsius": max(s["celsius"] for s in busy),
        "reasons": [name for bit, name in REASONS.items() if reasons & bit],
    }


def peak_at(dtype: str, mhz: float, report: dict) -> float | None:
    """TFLOP/s of the units ``dtype`` runs on at ``mhz``, on Hopper; None elsewhere."""
    gpu = report["devices"][0]
    operand = "tf32" if dtype.startswith("tf32") else matmul.MODES.get(dtype, (dtype,))[0]
    if gpu["compute_capability"] != "9.0" or operand not in OPS_PER_CLOCK:
        return None
    return gpu["multiprocessors"] * OPS_PER_CLOCK[operand] * mhz * 1e6 / 1e12


def clock_rows(dtypes: list[str], n: int, seconds: float, repeats: int, report: dict) -> list[dict]:
    import torch

    nvml = Nvml()
    limits = nvml.limits()
    context = _contexts.context(0)
    rows = []
    for dtype in dtypes:
        runs, backends = matmul.device_runs(torch, context, dtype, n)
        for name, run in matmul.runnable(runs, backends, dtype).items():
            burst = matmul.row("burst", name, dtype, n, matmul.burst_seconds(torch, run, repeats))
            held = sustained(torch, run, seconds, nvml)
            r = matmul.row("sustained", name, dtype, n, held.pop("seconds"), **held, **limits)
            peak = peak_at(dtype, r["sm_mhz"], report)
            r["burst_tflops"] = burst["tflops"]
            r["peak_tflops_at_clock"] = peak
            r["fraction_of_peak_at_clock"] = None if peak is None else r["tflops"] / peak
            rows.append(r)
            print(table_line(r), flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    return rows


HEADER = (
    f"{'backend':<22} {'dtype':<14} {'n':>5} {'burst':>8} {'held':>8} {'MHz':>5} {'least':>5} "
    f"{'W':>5} {'C':>3} {'peak@MHz':>8} {'share':>6}  reasons"
)


def table_line(r: dict) -> str:
    peak = "" if r["peak_tflops_at_clock"] is None else f"{r['peak_tflops_at_clock']:.0f}"
    share = "" if r["fraction_of_peak_at_clock"] is None else f"{100 * r['fraction_of_peak_at_clock']:.1f}%"
    return (
        f"{r['backend']:<22} {r['dtype']:<14} {r['n']:>5} {r['burst_tflops']:>8.1f} {r['tflops']:>8.1f} "
        f"{r['sm_mhz']:>5.0f} {r['least_sm_mhz']:>5.0f} {r['watts']:>5.0f} {r['celsius']:>3} {peak:>8} "
        f"{share:>6}  {', '.join(r['reasons'])}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", nargs="+", default=["e4m3-abt", "int8-abt", "float16"])
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--seconds", type=float, default=3.0, help="of each sustained run")
    parser.add_argument("--repeats", type=int, default=10, help="calls of each burst")
    parser.add_argument("--out", metavar="FILE", help="default: benchmarks/results/<machine>/clocks.json")
    args = parser.parse_args()
    report = pyctk.info()
    if not report["devices"]:
        raise SystemExit(f"no GPU: {report['error']}")
    print(HEADER + "  (burst and held in TFLOP/s: TOP/s for integers)")
    rows = clock_rows(args.dtypes, args.n, args.seconds, args.repeats, report)
    device = report["devices"][0]["name"]
    path = args.out or measured.default_path(device, report["cuda_major"], "clocks", 1)
    settings = {"dtypes": args.dtypes, "n": args.n, "seconds": args.seconds, "repeats": args.repeats}
    measured.write(
        path,
        {
            "measured": measured.measured(report, 1),
            "settings": settings,
            "ops_per_clock": OPS_PER_CLOCK,
            "notes": matmul.NOTES,
            "rows": rows,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
