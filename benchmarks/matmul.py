"""Benchmark pyctk side by side with torch, CuPy and NumPy in one process: a table and JSON.

    python benchmarks/matmul.py [--only KIND ...] [--dtypes ...] [--sizes 1024 4096 8192]
                                [--host-sizes 1024 4096 8192] [--suite NAME | --out FILE] [--quick]
    python benchmarks/plot.py                           # the PNG plots (needs matplotlib)

The JSON goes to benchmarks/results/<machine>/<suite>.json (measured.py: e.g.
results/h200-cu13/matmul.json), replacing that suite's last run; --out writes elsewhere. The
suite is named after what was run (--suite to choose): "device-call" (--only device-call),
"devices" (--only host-devices), for --only device "integers" (integer and bool dtypes), "float8",
"complex" (any complex dtype) or "matmul", otherwise "host". Its "measured" object says where
and how it was measured (measured.measured).

Every row has kind, backend, dtype, n, seconds and tflops (2 n^3 flops over seconds, 8 n^3 for
complex dtypes; None where the row times no product of its own); some kinds add fields, named
below.

- "device": operands already on the GPU (allocated through PyTorch), device time (CUDA
  events) around gpumatmul_matmul_device per backend ("tiled", "cublas") and around
  torch.matmul on the same tensors (TF32 off); warm-up call, median of --repeats. Run for
  every --sizes and --host-sizes n: the host floor below needs the cuBLAS time. Every row
  of pyctk is a backend that computes the dtype (gpumatmul_backend_supports). Integers and
  bool (--dtypes int8 uint8 bool int16 int32 int64, and int8-abt for a @ b.T: full-range
  random values, bools half true) have the tiled backend, and for int8 cuBLAS (cuBLASLt's
  IMMA kernels) and auto, beside "cupy" (cupy.matmul on the same memory, NumPy's product,
  where CuPy is installed) and for int8 "torch-int_mm" (torch._int_mm: int32 results, not
  NumPy's product, a peer for speed only); their "tflops" are tera-operations, 2 n^3 per
  product. The FP8 types (--dtypes float8_e4m3fn float8_e5m2, the mixed pairs
  float8_e4m3fn_e5m2 float8_e5m2_e4m3fn (A of the first type), and e4m3-abt e5m2-abt
  e4m3-e5m2-abt e5m2-e4m3-abt for a @ b.T, the layout FP8 wgmma and cuBLASLt read as it is;
  normal values), float32 C, have the tiled backend, cuBLAS (cuBLASLt's FP8 kernels for
  e4m3 and the pairs, float16 copies for e5m2) and
  auto, beside torch._scaled_mm (cuBLASLt, unit scales, float32 out, B handed over
  column-major; "torch-scaled_mm-fast" with use_fast_accum).
- "device-call": pyctk.matmul called from Python on GPU data ("pyctk": DeviceArrays;
  "pyctk-torch": the torch tensors themselves) and torch.matmul, device time per product over
  10 back-to-back calls; "device-call-tiny": 16, 32 and 64 per call from Python, against
  torch.matmul and cupy.matmul, each library on its own arrays, and "pyctk-c", the C call of
  a kept product (gpumatmul_gemm_device) into a given C through ctypes, as pyctk.matmul makes
  it (the part of "pyctk" that is not Python): wall clock over --calls calls, every case
  in turn, per_call.ROUNDS times over, the median of the rounds (with "least_seconds",
  "most_seconds" and "rounds"; per_call.py). pyctk's rows add "speedup" over "peer"
  (per_call.PEERS): the median over rounds of the peer's time / pyctk's in the same round,
  which a host's changes of pace (up to 40% on one H200 host) do not move.
- "host": NumPy in, NumPy out, float32 (--host-dtypes): pyctk.matmul per backend ("tiled",
  "cublas"), "torch" (from_numpy(a).cuda() @ ... then .cpu().numpy()), "cupy"
  (asnumpy(asarray(a) @ asarray(b))) and "numpy" (numpy.matmul on the CPU). New random
  operands per size, a warm-up call, then wall clock, median of up to --repeats calls,
  stopping early once HOST_BUDGET_S is spent (NumPy on the CPU at n = 8192: one call takes
  about a second); "repeats" says how many were timed. Plus "floor_seconds" and
  "fraction_of_floor" (floor / seconds: 1 is at the floor), defined next.
- "host-tiny": 16 x 16 float32, NumPy in, NumPy out, per call (wall clock over --calls
  calls after 100 warm-up calls), the same peers, each in a fresh process of its own that
  imports only NumPy, pyctk (which starts no CUDA unless used) and that peer's library: in
  the benchmark's own process, after the other libraries' large products, every library's
  tiny calls ran up to a quarter slower.
- "host-large": a product larger than the GPU, NumPy in, NumPy out, float32: --large M K N
  (default 150000 4096 150000: a 90 GB result), pyctk alone (no peer multiplies what does not
  fit on the GPU). One timed call after one warm-up call; "m", "k", "n" give the shape,
  "tflops" is 2 m k n over seconds, and
  "fraction_of_cublas" divides it by the TFLOP/s of the largest "device" cuBLAS float32 row
  (cuBLAS on sizes that fit). Skipped, with a note, where the operands and the result take
  more than 90% of host memory. Sampled rows are checked against NumPy.
- "host-devices": --devices-shape M K N (default 32768 8192 32768) float32, NumPy in, NumPy
  out, pyctk with devices=[0] ("pyctk-1-gpu") and devices="all" ("pyctk-N-gpus"), median of
  up to --repeats calls; "m", "k", "n_columns" give the shape, "tflops" is 2 m k n over
  seconds, and the all-GPU row adds "speedup" over one GPU. Only with two GPUs or more.
- "startup": fresh process to first result: a new Python that imports NumPy and its library
  and multiplies two 16 x 16 float32 NumPy arrays back into NumPy; wall clock from just before
  the process is started to the result; median of --startup-runs after one unrecorded run
  (which warms the disk cache). pyctk, and CuPy and torch when installed. "runs" says how many.
- "import": `import pyctk` in a fresh Python that has imported NumPy already (the cost pyctk
  adds), median of --import-runs after one unrecorded run; "import-matmul": the same with
  `pyctk.matmul` after it, which imports the modules a first product needs (pyctk imports
  those on a name's first use). benchmarks/fresh.py holds the fresh processes' code.

The floor of a host product of n x n by n x n (the JSON's "floor" says it too):

    floor_seconds = max(bytes_in / h2d + bytes_out / d2h, gemm_seconds)

bytes_in = 2 n^2 itemsize (both operands), bytes_out = n^2 itemsize; h2d and d2h the pinned
bandwidths measured first ("pinned_bandwidth": 256 MiB cudaMemcpyAsync between cudaMallocHost
memory and device memory, CUDA events, median); gemm_seconds the "device" row's cuBLAS time of
that dtype and n. No copy beats the bus and no product beats cuBLAS; a product whose copies
overlap its GEMM completely takes the larger of the two, hence the max. Host rows with no such
device row (PyTorch missing) get no floor.

Every peer is optional: without torch or CuPy their rows are skipped with a note (printed and
kept in the JSON's "notes"); without PyTorch there are no "device" and "device-call" rows.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import importlib.util
import statistics
import subprocess
import sys
import time
from ctypes import POINTER, byref, c_float, c_int, c_size_t, c_void_p

import numpy as np

import fresh  # benchmarks/fresh.py, measured.py and per_call.py: this folder is first on sys.path
import measured
import per_call
import pyctk
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import library as _library

DTYPE_CODES = {
    "float32": 0,
    "float64": 1,
    "float16": 2,
    "bfloat16": 3,  # gpumatmul_dtype
    "complex64": 4,
    "complex128": 5,
    "int8": 6,
    "int16": 7,
    "int32": 8,
    "int64": 9,
    "uint8": 10,
    "bool": 14,
    "float8_e4m3fn": 15,
    "float8_e5m2": 16,
    "float8_e4m3fn_e5m2": 17,  # the mixed FP8 pairs: A of the first type, B of the second
    "float8_e5m2_e4m3fn": 18,
}
# Integer and bool device rows: the backends that compute them (the tiled one's integer
# tensor-core kernels and byte_split.c for 2-8 bytes; cuBLASLt for int8), beside the peers
# of integer_peers.
INTEGERS = ("int8", "uint8", "bool", "int16", "int32", "int64")
# FP8 device rows, float32 C: the tiled backend's FP8 kernels and cuBLAS's (cuBLASLt's for
# e4m3 and the mixed pairs, float16 copies for e5m2), beside torch._scaled_mm (cuBLASLt).
# A mixed pair's operands are of its two types, A's first.
FLOAT8_PAIRS = {
    "float8_e4m3fn_e5m2": ("float8_e4m3fn", "float8_e5m2"),
    "float8_e5m2_e4m3fn": ("float8_e5m2", "float8_e4m3fn"),
}
FLOAT8 = ("float8_e4m3fn", "float8_e5m2", *FLOAT8_PAIRS)
BATCH = 10  # products per timed stream in the "device-call" rows
BACKEND_CODES = {"auto": 0, "tiled": 1, "cublas": 2}
HOST_BUDGET_S = 5.0  # timed seconds per host row, after which its repeats stop
TINY = 16  # n of the "host-tiny" and "startup" products
FLOOR = (
    "max(bytes_in / h2d + bytes_out / d2h, gemm_seconds); bytes_in = 2 n^2 itemsize, "
    "bytes_out = n^2 itemsize, h2d and d2h from pinned_bandwidth (bytes/s), "
    'gemm_seconds the "device" cublas row of that dtype and n'
)

# The defaults, and --quick: a check, in about a minute, that every row runs.
SETTINGS = {
    "full": {
        "sizes": [1024, 4096, 8192],
        "host_sizes": [1024, 4096, 8192],
        "repeats": 10,
        "calls": 5000,
        "startup_runs": 3,
        "import_runs": 9,
        "large": [150000, 4096, 150000],
        "devices_shape": [32768, 8192, 32768],
    },
    "quick": {
        "sizes": [1024],
        "host_sizes": [1024],
        "repeats": 3,
        "calls": 200,
        "startup_runs": 1,
        "import_runs": 1,
        "large": [6000, 1024, 6000],
        "devices_shape": [4096, 1024, 4096],
    },
}

NOTES: list[str] = []
KINDS = ["device", "host", "host-tiny", "host-large", "host-devices", "device-call", "startup", "import"]


def note(text: str) -> None:
    """Say why rows are missing or fewer than asked, now and in the JSON."""
    print(f"({text})")
    NOTES.append(text)


def row(kind: str, backend: str, dtype: str, n: int, seconds: float, **extra) -> dict:
    """One result of an n x n by n x n product: the fields every row has, then ``extra``."""
    flops = (8 if MODES.get(dtype, (dtype,))[0].startswith("complex") else 2) * n**3
    return {
        "kind": kind,
        "backend": backend,
        "dtype": dtype,
        "n": n,
        "seconds": seconds,
        "tflops": flops / seconds / 1e12,
        **extra,
    }


# ---------------------------------------------------------------------------
# Pinned bandwidth, through the CUDA runtime pyctk loaded (no PyTorch needed).

HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2  # cudaMemcpyKind
COPY_BYTES = 256 << 20
_CUDART = {  # the runtime functions used here: argument types; each returns a cudaError_t
    "cudaMallocHost": [POINTER(c_void_p), c_size_t],
    "cudaFreeHost": [c_void_p],
    "cudaMalloc": [POINTER(c_void_p), c_size_t],
    "cudaFree": [c_void_p],
    "cudaMemcpyAsync": [c_void_p, c_void_p, c_size_t, c_int, c_void_p],
    "cudaEventCreate": [POINTER(c_void_p)],
    "cudaEventRecord": [c_void_p, c_void_p],
    "cudaEventSynchronize": [c_void_p],
    "cudaEventElapsedTime": [POINTER(c_float), c_void_p, c_void_p],
    "cudaEventDestroy": [c_void_p],
}


def cudart(report: dict) -> ctypes.CDLL:
    """The libcudart that pyctk loaded (pyctk.info() lists it), in a handle of our own, so
    that the prototypes set here are not pyctk's."""
    path = next(library["path"] for library in report["libraries"] if library["name"] == "cudart")
    runtime = ctypes.CDLL(path)
    for name, argtypes in _CUDART.items():
        function = getattr(runtime, name)
        function.restype, function.argtypes = c_int, argtypes
    return runtime


def cuda(runtime: ctypes.CDLL, name: str, *args) -> None:
    result = getattr(runtime, name)(*args)
    if result:
        raise RuntimeError(f"{name} failed: cudaError_t {result}")


def copy_seconds(runtime: ctypes.CDLL, destination, source, nbytes: int, kind: int) -> float:
    """Device time of one cudaMemcpyAsync on the legacy stream, between two CUDA events."""
    start, end = c_void_p(), c_void_p()
    cuda(runtime, "cudaEventCreate", byref(start))
    cuda(runtime, "cudaEventCreate", byref(end))
    try:
        cuda(runtime, "cudaEventRecord", start, None)
        cuda(runtime, "cudaMemcpyAsync", destination, source, nbytes, kind, None)
        cuda(runtime, "cudaEventRecord", end, None)
        cuda(runtime, "cudaEventSynchronize", end)
        milliseconds = c_float()
        cuda(runtime, "cudaEventElapsedTime", byref(milliseconds), start, end)
        return milliseconds.value / 1e3
    finally:
        cuda(runtime, "cudaEventDestroy", start)
        cuda(runtime, "cudaEventDestroy", end)


def pinned_bandwidth(runtime: ctypes.CDLL, repeats: int, nbytes: int = COPY_BYTES) -> dict:
    """Bytes per second host to device ("h2d") and back ("d2h") between pinned host memory
    and device memory on the current device: the bus's speed, which no copy of NumPy data beats.
    Median of ``repeats`` copies each way after one warm-up copy each way."""
    host, device = c_void_p(), c_void_p()
    cuda(runtime, "cudaMallocHost", byref(host), nbytes)
    cuda(runtime, "cudaMalloc", byref(device), nbytes)
    directions = {"h2d": (device, host, HOST_TO_DEVICE), "d2h": (host, device, DEVICE_TO_HOST)}
    try:
        bandwidth = {}
        for name, (destination, source, kind) in directions.items():
            times = [copy_seconds(runtime, destination, source, nbytes, kind) for _ in range(repeats + 1)]
            bandwidth[name] = nbytes / statistics.median(times[1:])
        return {**bandwidth, "copy_bytes": nbytes}
    finally:
        cuda(runtime, "cudaFree", device)
        cuda(runtime, "cudaFreeHost", host)


def floor_seconds(n: int, itemsize: int, bandwidth: dict, gemm_seconds: float) -> float:
    """The fastest a host product of n x n by n x n could be: FLOOR (see the module docstring)."""
    bytes_in, bytes_out = 2 * n * n * itemsize, n * n * itemsize
    return max(bytes_in / bandwidth["h2d"] + bytes_out / bandwidth["d2h"], gemm_seconds)


def with_floors(rows: list[dict], bandwidth: dict) -> list[dict]:
    """``rows`` with floor_seconds and fraction_of_floor added to each "host" row whose dtype
    and n have a "device" cuBLAS row (the GEMM time of the floor)."""
    gemm = {(r["dtype"], r["n"]): r["seconds"] for r in rows if r["kind"] == "device" and r["backend"] == "cublas"}

    def floored(r: dict) -> dict:
        if r["kind"] != "host" or (r["dtype"], r["n"]) not in gemm:
            return r
        floor = floor_seconds(r["n"], np.dtype(r["dtype"]).itemsize, bandwidth, gemm[r["dtype"], r["n"]])
        return {**r, "floor_seconds": floor, "fraction_of_floor": floor / r["seconds"]}

    return [floored(r) for r in rows]


# ---------------------------------------------------------------------------
# Operands on the GPU (PyTorch's): device time.

# Device-row "dtypes" that are a precision mode: (operand dtype, gpumatmul_precision, B
# transposed). TF32 twice: a @ b, and a @ b.T, the layout the tiled backend's TF32 kernel
# reads as it is (a @ b it reads after transposing B); complex64 at TF32 (the tiled backend:
# one float32 product at TF32, B expanded into the layout that kernel reads).
# FP8 and int8 twice too: a @ b.T is the layout wgmma's 1-byte kernels and cuBLASLt read as
# it is.
MODES = {
    "tf32": ("float32", 1, 0),
    "tf32-abt": ("float32", 1, 1),
    "c64-tf32": ("complex64", 1, 0),
    "int8-abt": ("int8", 0, 1),
    "e4m3-abt": ("float8_e4m3fn", 0, 1),
    "e5m2-abt": ("float8_e5m2", 0, 1),
    "e4m3-e5m2-abt": ("float8_e4m3fn_e5m2", 0, 1),
    "e5m2-e4m3-abt": ("float8_e5m2_e4m3fn", 0, 1),
}


def device_operand(torch, n: int, dtype: str):
    """An n x n operand on the GPU: standard normal values, or integers over the dtype's whole
    range, or bools half true."""
    if dtype == "bool":
        return torch.rand(n, n, device="cuda") < 0.5
    if dtype in FLOAT8:
        return torch.randn(n, n, device="cuda").to(getattr(torch, dtype))
    if dtype in INTEGERS:
        info = torch.iinfo(getattr(torch, dtype))
        high = min(info.max + 1, 2**63 - 1)  # randint's bounds are int64 (exclusive high)
        return torch.randint(info.min, high, (n, n), device="cuda", dtype=getattr(torch, dtype))
    return torch.randn(n, n, device="cuda", dtype=getattr(torch, dtype))


def integer_peers(torch, dtype: str, a, b, c, trans_b: int) -> dict:
    """The peers of an integer or bool device row (a @ b, or a @ b.T): torch.matmul has no
    integer product on the GPU, torch._int_mm has int8 x int8 -> int32; cupy.matmul computes
    NumPy's product."""
    peers = {}
    b = b.t() if trans_b else b
    if dtype == "int8" and hasattr(torch, "_int_mm"):
        peers["torch-int_mm"] = lambda: torch._int_mm(a, b)
    try:
        import cupy
    except ImportError:
        note(f"CuPy not installed: no cupy {dtype} device rows")
        return peers
    ca, cb, cc = (cupy.asarray(t) for t in (a, b, c))
    peers["cupy"] = lambda: cupy.matmul(ca, cb, out=cc)
    return peers


def float8_peers(torch, dtype: str, a, b, c, trans_b: int) -> dict:
    """The peers of an FP8 device row: torch.matmul has no FP8 product; torch._scaled_mm
    (cuBLASLt) multiplies e4m3 (and e4m3 by e5m2) into float32 with unit scales, B
    column-major (a @ b.T of row-major b: the "-abt" rows' product), with cuBLASLt's
    promotion of the sums ("torch-scaled_mm") and without ("torch-scaled_mm-fast", fast
    accumulation: the tensor cores' own running sums)."""
    if not hasattr(torch, "_scaled_mm"):
        return {}
    one = torch.ones((), device="cuda")
    b_columns = b.t() if trans_b else b.t().contiguous().t()
    return {
        name: functools.partial(
            torch._scaled_mm, a, b_columns, one, one, out_dtype=torch.float32, use_fast_accum=fast, out=c
        )
        for name, fast in (("torch-scaled_mm", False), ("torch-scaled_mm-fast", True))
    }


def device_runs(torch, context, dtype: str, n: int) -> tuple[dict, set]:
    """An n x n x n product of ``dtype`` (a name of DTYPE_CODES or MODES) on fresh operands on
    the GPU: a call of gpumatmul_matmul_strided_batched_device per backend that computes it
    and each peer's (integer_peers, float8_peers, torch.matmul), by name; and the names that
    are pyctk's backends. Leaves torch's TF32 switch as the mode asks."""
    operand, precision, trans_b = MODES.get(dtype, (dtype, 0, 0))
    torch.backends.cuda.matmul.allow_tf32 = precision == 1
    backends = {
        name: code
        for name, code in BACKEND_CODES.items()
        if _library.library().gpumatmul_backend_supports(code, DTYPE_CODES[operand], precision) == 0
    }
    a, b = (device_operand(torch, n, element) for element in FLOAT8_PAIRS.get(operand, (operand, operand)))
    c = torch.empty(n, n, device="cuda") if operand in FLOAT8 else torch.empty_like(a)
    runs = {
        backend: functools.partial(
            _library.call,
            "gpumatmul_matmul_strided_batched_device",
            context,
            code,
            DTYPE_CODES[operand],
            precision,
            0,
            trans_b,
            n,
            n,
            n,
            1,
            a.data_ptr(),
            n,
            0,
            b.data_ptr(),
            n,
            0,
            c.data_ptr(),
            n,
            0,
            None,
        )
        for backend, code in backends.items()
    }
    if operand in INTEGERS:
        runs.update(integer_peers(torch, operand, a, b, c, trans_b))
    elif operand in FLOAT8:
        runs.update(float8_peers(torch, operand, a, b, c, trans_b))
    else:
        runs["torch"] = functools.partial(torch.matmul, a, b.t() if trans_b else b, out=c)
    return runs, set(backends)


def runnable(runs: dict, backends: set, dtype: str) -> dict:
    """``runs`` less the peers that refuse ``dtype`` (each named in a note), every run called
    once (a warm-up); pyctk's own must run."""
    kept = {}
    for name, run in runs.items():
        try:
            run()
        except Exception as error:
            if name in backends:
                raise
            note(f"{name} does not multiply {dtype}: {error}")
            continue
        kept[name] = run
    return kept


def burst_seconds(torch, run, repeats: int) -> float:
    """Device time of one call (CUDA events around it), the median of ``repeats`` calls."""
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def device_rows(sizes, dtypes, repeats):
    """The GEMM alone: gpumatmul_matmul_strided_batched_device per backend and torch.matmul on
    torch's tensors (integer_peers for int8, uint8 and bool)."""
    try:
        import torch
    except ImportError:
        note("PyTorch not installed: no device rows, and so no host floors")
        return []
    rows = []
    context = _contexts.context(0)
    for dtype in dtypes:
        for n in sizes:
            runs, backends = device_runs(torch, context, dtype, n)
            for name, run in runnable(runs, backends, dtype).items():
                rows.append(row("device", name, dtype, n, burst_seconds(torch, run, repeats)))
    torch.backends.cuda.matmul.allow_tf32 = False
    return rows


def per_call_rows(seconds: dict) -> list[dict]:
    """The "device-call-tiny" rows of ``per_call.rounds``' seconds, keyed by (name, n): each
    the median of its rounds, and for pyctk's, "speedup" over its peer in the same rounds."""
    return [
        row(
            "device-call-tiny",
            name,
            "float32",
            n,
            statistics.median(rounds),
            least_seconds=min(rounds),
            most_seconds=max(rounds),
            rounds=len(rounds),
            **per_call.speedup(seconds, name, n),
        )
        for (name, n), rounds in seconds.items()
    ]


def device_call_rows(sizes, repeats, calls):
    """pyctk.matmul on GPU data side by side with torch.matmul and cupy.matmul, each on its
    own arrays (pyctk: DeviceArrays; "pyctk-torch" and "pyctk-cupy": pyctk on torch's tensors and
    on CuPy's arrays). Per-call time
    for tiny products (16, 32 and 64, float32: wall clock over ``calls`` calls, then a
    synchronise), and device time for large sizes."""
    try:
        import torch
    except ImportError:
        note("PyTorch not installed: no device-call rows")
        return []
    torch.backends.cuda.matmul.allow_tf32 = False
    peers = per_call.peers(pyctk, torch)
    if "cupy" not in peers:
        note("CuPy not installed: no cupy device-call-tiny rows")
    tiny = per_call.cases(peers, torch)
    c_call = _library.library().gpumatmul_gemm_device  # a kept product's call: six arguments
    for n in per_call.SIZES:
        a = torch.ones(n, n, device="cuda")
        c = torch.empty_like(a)
        desc = _library.GemmDesc(BACKEND_CODES["auto"], DTYPE_CODES["float32"], 0, 0, 0, n, n, n, 1, n, 0, n, 0, n, 0)
        tiny["pyctk-c", n] = functools.partial(
            c_call, _contexts.context(0), desc, a.data_ptr(), a.data_ptr(), c.data_ptr(), 0
        )
        code = tiny["pyctk-c", n]()
        if code:
            raise _library.error(code)
    rows = per_call_rows(per_call.rounds(tiny, calls, torch.cuda.synchronize))
    for n in sizes:
        a, b = (torch.randn(n, n, device="cuda") for _ in range(2))
        for name in ("pyctk", "pyctk-torch", "torch"):
            convert, run = peers[name]
            x, y = convert(a), convert(b)
            run(x, y)
            torch.cuda.synchronize()
            times = []
            for _ in range(repeats):
                # Device time per product of a stream of BATCH products: what the GPU spends,
                # with each library's host time per call hidden behind the products queued
                # before it, as in a program that multiplies in a loop.
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(BATCH):
                    run(x, y)
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3 / BATCH)
            rows.append(row("device-call", name, "float32", n, statistics.median(times)))
    return rows


# ---------------------------------------------------------------------------
# NumPy in, NumPy out: wall clock.


def torch_host():
    """torch: copy both operands to the GPU, multiply (TF32 off), copy the result back."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    return lambda a, b: (torch.from_numpy(a).cuda() @ torch.from_numpy(b).cuda()).cpu().numpy()


def cupy_host():
    """CuPy: the same three steps through its own arrays."""
    import cupy

    return lambda a, b: cupy.asnumpy(cupy.asarray(a) @ cupy.asarray(b))


# backend -> a function making its multiply(a, b) -> NumPy array; ImportError if not installed
HOST_PEERS = {
    "tiled": lambda: functools.partial(pyctk.matmul, backend="tiled"),
    "cublas": lambda: functools.partial(pyctk.matmul, backend="cublas"),
    "torch": torch_host,
    "cupy": cupy_host,
    "numpy": lambda: np.matmul,
}


def host_peers() -> dict:
    """The HOST_PEERS whose library is installed: backend -> multiply."""
    peers = {}
    for name, make in HOST_PEERS.items():
        try:
            peers[name] = make()
        except ImportError:
            note(f"{name} not installed: no {name} host rows")
    return peers


def operands(n: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Two new random n x n arrays (fresh data: nothing cached from an earlier size)."""
    rng = np.random.default_rng(n)
    return tuple(rng.standard_normal((n, n)).astype(dtype) for _ in range(2))


def wall_times(run, repeats: int, budget: float) -> list[float]:
    """Wall-clock seconds of up to ``repeats`` calls of ``run``, stopping once ``budget``
    seconds are spent (one call at least)."""
    times: list[float] = []
    while len(times) < repeats and sum(times) < budget:
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def host_rows(sizes, dtypes, repeats, peers):
    """NumPy in, NumPy out, per peer: wall clock of one call, copies included."""
    rows = []
    for dtype in dtypes:
        for n in sizes:
            a, b = operands(n, dtype)
            for name, multiply in peers.items():
                multiply(a, b)
                times = wall_times(functools.partial(multiply, a, b), repeats, HOST_BUDGET_S)
                if len(times) < repeats:
                    note(
                        f"host {name} {dtype} n={n}: timed {len(times)} times, not {repeats} "
                        f"(one call takes {times[0]:.2f} s)"
                    )
                rows.append(row("host", name, dtype, n, statistics.median(times), repeats=len(times)))
    return rows


def host_tiny_rows(peers, calls):
    """Per-call time of a 16 x 16 float32 product, NumPy in, NumPy out, each peer in a fresh
    process (this script with --tiny-child)."""
    rows = []
    for name in peers:
        done = subprocess.run(
            [sys.executable, __file__, "--tiny-child", name, "--calls", str(calls)],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(row("host-tiny", name, "float32", TINY, float(done.stdout.split()[-1])))
    return rows


def tiny_seconds(name: str, calls: int) -> float:
    """Seconds per call of peer ``name``'s 16 x 16 product, after 100 warm-up calls."""
    multiply = HOST_PEERS[name]()
    a, b = operands(TINY, "float32")
    for _ in range(100):
        multiply(a, b)
    start = time.perf_counter()
    for _ in range(calls):
        multiply(a, b)
    return (time.perf_counter() - start) / calls


def host_memory_bytes() -> int:
    import os

    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def large_rows(shape: list[int], rows: list[dict]) -> list[dict]:
    """The "host-large" row: one product of the given m, k, n (float32, NumPy in and out)."""
    m, k, n = shape
    needed = 4 * (m * k + k * n + m * n)
    if needed > 0.9 * host_memory_bytes():
        note(
            f"host-large {m}x{k}x{n}: needs {needed / 1e9:.0f} GB of host memory, the machine "
            f"has {host_memory_bytes() / 1e9:.0f} GB"
        )
        return []
    rng = np.random.default_rng(m)
    a, b = rng.random((m, k), np.float32), rng.random((k, n), np.float32)
    # Warm-up: the whole product once, as on a machine that has run before (on a fresh
    # virtual machine the first touch of each page of host memory costs 5 times more).
    pyctk.matmul(a, b)
    start = time.perf_counter()
    c = pyctk.matmul(a, b)
    seconds = time.perf_counter() - start
    sample = slice(None, None, max(1, m // 7))
    error = np.abs(c[sample] - a[sample].astype(np.float64) @ b).max()
    del c
    if error > 1e-3 * k:
        raise SystemExit(f"host-large: the sampled rows are wrong by up to {error}")
    tflops = 2 * m * k * n / seconds / 1e12
    cublas = [r for r in rows if r["kind"] == "device" and r["backend"] == "cublas" and r["dtype"] == "float32"]
    extra = {}
    if cublas:
        best = max(cublas, key=lambda r: r["n"])
        extra = {"fraction_of_cublas": tflops / best["tflops"], "cublas_n": best["n"]}
    return [
        {
            "kind": "host-large",
            "backend": "pyctk",
            "dtype": "float32",
            "n": None,
            "seconds": seconds,
            "tflops": tflops,
            "m": m,
            "k": k,
            "n_columns": n,
            **extra,
        }
    ]


def devices_rows(shape: list[int], repeats: int) -> list[dict]:
    """The "host-devices" rows: one GPU against all of them, on the same operands."""
    count = len(pyctk.info()["devices"])
    if count < 2:
        note("one GPU: no host-devices rows")
        return []
    m, k, n = shape
    rng = np.random.default_rng(m)
    a, b = rng.random((m, k), np.float32), rng.random((k, n), np.float32)
    rows = []
    for backend, devices in (("pyctk-1-gpu", [0]), (f"pyctk-{count}-gpus", "all")):
        multiply = functools.partial(pyctk.matmul, a, b, devices=devices)
        multiply()
        seconds = statistics.median(wall_times(multiply, repeats, HOST_BUDGET_S))
        rows.append(
            {
                "kind": "host-devices",
                "backend": backend,
                "dtype": "float32",
                "n": None,
                "seconds": seconds,
                "tflops": 2 * m * k * n / seconds / 1e12,
                "m": m,
                "k": k,
                "n_columns": n,
            }
        )
    rows[1]["speedup"] = rows[0]["seconds"] / rows[1]["seconds"]
    return rows


# ---------------------------------------------------------------------------
# Fresh processes.


def process_row(kind: str, backend: str, measure, runs: int) -> list[dict]:
    """[the row of median_of_runs(measure, runs)], or [] and a note if the child fails."""
    try:
        seconds = fresh.median_of_runs(measure, runs)
    except subprocess.CalledProcessError as error:
        note(f"{kind} {backend}: the fresh process failed: {error.stderr.strip()[-300:]}")
        return []
    return [
        {"kind": kind, "backend": backend, "dtype": None, "n": None, "seconds": seconds, "tflops": None, "runs": runs}
    ]


def process_rows(startup_runs: int, import_runs: int) -> list[dict]:
    """The "startup" row of each installed library of fresh.FIRST_RESULT, and the import rows."""
    rows = []
    for library in fresh.FIRST_RESULT:
        if importlib.util.find_spec(library) is None:
            note(f"{library} not installed: no startup row for it")
            continue
        rows += process_row("startup", library, functools.partial(fresh.first_result_seconds, library), startup_runs)
    for kind in fresh.IMPORTS:
        rows += process_row(kind, "pyctk", functools.partial(fresh.import_seconds, kind), import_runs)
    return rows


# ---------------------------------------------------------------------------
# Report.


def shown_time(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"  # (per-call rows differ by tenths)
    return f"{seconds * 1e3:.3f} ms" if seconds < 1 else f"{seconds:.3f} s"


def table_line(r: dict) -> str:
    tflops = "" if r["tflops"] is None else f"{r['tflops']:.2f}"
    fraction = (
        f"{100 * r['fraction_of_floor']:.1f}%"
        if "fraction_of_floor" in r
        else f"{100 * r['fraction_of_cublas']:.1f}% cuBLAS"
        if "fraction_of_cublas" in r
        else f"{r['speedup']:.2f}x {r.get('peer', '')}".rstrip()
        if "speedup" in r
        else ""
    )
    return (
        f"{r['kind']:<16} {r['backend']:<11} {r['dtype'] or '':<8} {r['n'] or '':>6} "
        f"{shown_time(r['seconds']):>12} {tflops:>9} {shown_time(r.get('floor_seconds')):>12} {fraction:>8}"
    )


def print_report(device: str, report: dict, bandwidth: dict, rows: list[dict]) -> None:
    print(f"GPU: {device}; CUDA runtime {report['runtime_version']}, cuBLAS {report['cublas_version']}")
    print(
        f"pinned bandwidth: host to device {bandwidth['h2d'] / 1e9:.1f} GB/s, "
        f"device to host {bandwidth['d2h'] / 1e9:.1f} GB/s"
    )
    print(f"floor of a host row = {FLOOR}")
    print(
        f"{'kind':<16} {'backend':<11} {'dtype':<8} {'n':>6} {'time':>12} {'TFLOP/s':>9} {'floor':>12} {'% floor':>8}"
    )
    for r in rows:
        print(table_line(r))


def suite_of(config: dict) -> str:
    """The results file's suite for a run of these settings (see the module docstring)."""
    only = set(config.get("only") or KINDS)
    if only == {"device-call"}:
        return "device-call"
    if only == {"host-devices"}:
        return "devices"
    if only == {"device"}:
        operands = {MODES.get(dtype, (dtype,))[0] for dtype in config["dtypes"]}
        if operands <= set(INTEGERS):
            return "integers"
        if operands <= set(FLOAT8):
            return "float8"
        return "complex" if any(o.startswith("complex") for o in operands) else "matmul"
    return "host"


def settings(args: argparse.Namespace) -> dict:
    """SETTINGS for --quick or not, overridden by what the command line gave."""
    given = {key: value for key, value in vars(args).items() if value is not None}
    return {**SETTINGS["quick" if args.quick else "full"], **given}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", help="n of the device rows (default 1024 4096 8192)")
    parser.add_argument("--host-sizes", type=int, nargs="+", help="n of the host rows (default 1024 4096 8192)")
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"], help="of the device rows")
    parser.add_argument("--host-dtypes", nargs="+", default=["float32"])
    parser.add_argument("--repeats", type=int)
    parser.add_argument("--calls", type=int, help="calls timed per tiny row")
    parser.add_argument("--startup-runs", type=int)
    parser.add_argument("--import-runs", type=int)
    parser.add_argument(
        "--large",
        type=int,
        nargs=3,
        metavar=("M", "K", "N"),
        help="shape of the host-large row (default 150000 4096 150000)",
    )
    parser.add_argument(
        "--devices-shape",
        type=int,
        nargs=3,
        metavar=("M", "K", "N"),
        help="shape of the host-devices rows (default 32768 8192 32768)",
    )
    parser.add_argument(
        "--only", nargs="+", help="only these kinds of rows (device rows come along where others need them)"
    )
    parser.add_argument(
        "--suite",
        choices=measured.SUITES,
        help="the results file's name (default: from --only and --dtypes, see above)",
    )
    parser.add_argument(
        "--out",
        "--json",
        dest="out",
        metavar="FILE",
        help="where the JSON goes (default: benchmarks/results/<machine>/<suite>.json)",
    )
    parser.add_argument("--tiny-child", metavar="PEER", help=argparse.SUPPRESS)  # host_tiny_rows' child
    parser.add_argument("--quick", action="store_true", help="one size, few repeats: a check that it all runs")
    args = parser.parse_args()
    if args.tiny_child:
        print(tiny_seconds(args.tiny_child, args.calls))
        return
    config = settings(args)

    report = pyctk.info()
    device = report["devices"][0]["name"] if report["devices"] else None
    if device is None:
        raise SystemExit(f"no GPU: {report['error']}")
    bandwidth = pinned_bandwidth(cudart(report), config["repeats"])
    peers = host_peers()
    wanted = set(config.get("only") or KINDS)
    rows = []
    if wanted & {"device", "host", "host-large"}:
        rows += device_rows(
            sorted(set(config["sizes"]) | set(config["host_sizes"])), config["dtypes"], config["repeats"]
        )
    if "host" in wanted:
        rows += host_rows(config["host_sizes"], config["host_dtypes"], config["repeats"], peers)
    if "host-tiny" in wanted:
        rows += host_tiny_rows(peers, config["calls"])
    if "host-large" in wanted:
        rows += large_rows(config["large"], rows)
    if "host-devices" in wanted:
        rows += devices_rows(config["devices_shape"], config["repeats"])
    if "device-call" in wanted:
        rows += device_call_rows(config["sizes"], config["repeats"], config["calls"])
    if wanted & {"startup", "import"}:
        rows += process_rows(config["startup_runs"], config["import_runs"])
    rows = with_floors(rows, bandwidth)
    print_report(device, report, bandwidth, rows)
    versions = {name: sys.modules[name].__version__ for name in ("numpy", "torch", "cupy") if name in sys.modules}
    suite = config.get("suite") or suite_of(config)
    gpus = len(report["devices"]) if suite == "devices" else 1
    path = config.get("out") or measured.default_path(device, report["cuda_major"], suite, gpus)
    measured.write(
        path,
        {
            "measured": measured.measured(report, gpus, versions=versions),
            "device": device,
            "info": report,
            "versions": versions,
            "settings": config,
            "pinned_bandwidth": bandwidth,
            "floor": FLOOR,
            "notes": NOTES,
            "rows": rows,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
