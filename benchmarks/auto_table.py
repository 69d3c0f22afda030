"""Measure where pyctk's own kernels beat cuBLAS, and write the table backend="auto" uses.

    python benchmarks/auto_table.py [--write] [--out FILE]      # on the GPU machine

For every dtype and precision both backends compute, times
gpumatmul_matmul_strided_batched_device with backend "tiled" and backend "cublas" on n x n x n
products of device operands (PyTorch's), two sizes per shape class (libgpu/src/gemm/gemm.h:
shape_class): 16 and 32 (tiny), 48 and 64 (very small), 128 and 512 (small), 1024 and 2048
(medium), 4096 and 8192 (large). int8, float8_e4m3fn and the mixed FP8 pairs, which cuBLAS
multiplies through cuBLASLt, are measured on a @ b.T too, the layout cuBLASLt's kernels read (others it takes
from copies). Each time is a burst of calls between CUDA events divided by the calls, so the host's
cost of a call counts where it dominates (tiny products), then the median of the bursts. The
kernels win a class where they are faster at both of its sizes. TF32 is measured on a @ b.T,
the layout the tiled backend's TF32 kernel takes (others fall back to cuBLAS under AUTO).

--write rewrites libgpu/src/gemm/auto_table.c: one row for this GPU's kernel image architecture per
dtype and precision measured, with the classes the kernels won (the other rows are kept);
--cases measures only the cases named (e.g. --cases "complex64 tf32"). The measurements go to
benchmarks/results/<machine>/auto-table.json (measured.py; --out to choose), with their
"measured" object: tests/benchmarks_tests/test_auto_table.py checks that the table in the
library is what the current measurements give.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import re
import statistics
from pathlib import Path

import measured  # benchmarks/measured.py: this folder is first on sys.path
import pyctk
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import library as _library

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "libgpu" / "src" / "gemm" / "auto_table.c"

CLASSES = {
    "SHAPE_TINY": (16, 32),
    "SHAPE_VERY_SMALL": (48, 64),
    "SHAPE_SMALL": (128, 512),
    "SHAPE_MEDIUM": (1024, 2048),
    "SHAPE_LARGE": (4096, 8192),
}
# (name, gpumatmul_dtype, torch dtype (A's/B's where they differ), gpumatmul_precision, B transposed)
CASES = [
    ("float32", "GPUMATMUL_FLOAT32", "float32", "GPUMATMUL_PRECISION_HIGHEST", 0),
    ("float32 tf32", "GPUMATMUL_FLOAT32", "float32", "GPUMATMUL_PRECISION_TF32", 1),
    ("float64", "GPUMATMUL_FLOAT64", "float64", "GPUMATMUL_PRECISION_HIGHEST", 0),
    ("float16", "GPUMATMUL_FLOAT16", "float16", "GPUMATMUL_PRECISION_HIGHEST", 0),
    ("bfloat16", "GPUMATMUL_BFLOAT16", "bfloat16", "GPUMATMUL_PRECISION_HIGHEST", 0),
    ("complex64", "GPUMATMUL_COMPLEX64", "complex64", "GPUMATMUL_PRECISION_HIGHEST", 0),
    ("complex64 tf32", "GPUMATMUL_COMPLEX64", "complex64", "GPUMATMUL_PRECISION_TF32", 0),
    ("complex128", "GPUMATMUL_COMPLEX128", "complex128", "GPUMATMUL_PRECISION_HIGHEST", 0),
    ("int8", "GPUMATMUL_INT8", "int8", "GPUMATMUL_PRECISION_HIGHEST", 1),
    ("float8_e4m3fn", "GPUMATMUL_FLOAT8_E4M3FN", "float8_e4m3fn", "GPUMATMUL_PRECISION_HIGHEST", 1),
    (
        "float8_e4m3fn_e5m2",
        "GPUMATMUL_FLOAT8_E4M3FN_E5M2",
        "float8_e4m3fn/float8_e5m2",
        "GPUMATMUL_PRECISION_HIGHEST",
        1,
    ),
    (
        "float8_e5m2_e4m3fn",
        "GPUMATMUL_FLOAT8_E5M2_E4M3FN",
        "float8_e5m2/float8_e4m3fn",
        "GPUMATMUL_PRECISION_HIGHEST",
        1,
    ),
]
CODES = {
    "GPUMATMUL_FLOAT32": 0,
    "GPUMATMUL_FLOAT64": 1,
    "GPUMATMUL_FLOAT16": 2,
    "GPUMATMUL_BFLOAT16": 3,
    "GPUMATMUL_COMPLEX64": 4,
    "GPUMATMUL_COMPLEX128": 5,
    "GPUMATMUL_INT8": 6,
    "GPUMATMUL_FLOAT8_E4M3FN": 15,
    "GPUMATMUL_FLOAT8_E4M3FN_E5M2": 17,
    "GPUMATMUL_FLOAT8_E5M2_E4M3FN": 18,
    "GPUMATMUL_PRECISION_HIGHEST": 0,
    "GPUMATMUL_PRECISION_TF32": 1,
}
BACKENDS = {"tiled": 1, "cublas": 2}
BURST_SECONDS, BURSTS = 0.02, 7


def seconds_per_call(run) -> float:
    """Median over bursts of the device time per call, each burst ~BURST_SECONDS long."""
    import torch

    run()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def burst(calls: int) -> float:
        start.record()
        for _ in range(calls):
            run()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / calls

    calls = max(1, min(1000, int(BURST_SECONDS / max(burst(1), 1e-7))))
    return statistics.median(burst(calls) for _ in range(BURSTS))


def operands(torch, n: int, torch_dtype: str) -> tuple:
    """A, B and C of an n x n x n product: standard normal values (int8 over its whole range);
    C float32 for FP8, whose products NumPy gives in float32. ``torch_dtype`` "x/y": A of x,
    B of y (a mixed FP8 pair)."""
    dtype = getattr(torch, torch_dtype.split("/")[0])
    if torch_dtype == "int8":
        a, b = (torch.randint(-128, 128, (n, n), device="cuda", dtype=dtype) for _ in range(2))
        return a, b, torch.empty_like(a)
    if dtype.itemsize == 1:  # FP8: torch makes no random FP8 values itself
        a_dtype, b_dtype = (getattr(torch, name) for name in (torch_dtype.split("/") * 2)[:2])
        a, b = (torch.randn(n, n, device="cuda").to(t) for t in (a_dtype, b_dtype))
        return a, b, torch.empty(n, n, device="cuda")
    a, b = (torch.randn(n, n, device="cuda", dtype=dtype) for _ in range(2))
    return a, b, torch.empty_like(a)


def measure(cases: list[str] | None = None) -> list[dict]:
    """Both backends' times for each of CASES (those named in ``cases``, if given)."""
    import torch  # the operands: PyTorch's device tensors

    context = _contexts.context(0)
    rows = []
    for name, dtype, torch_dtype, precision, trans_b in CASES:
        if cases and name not in cases:
            continue
        for shape_class, sizes in CLASSES.items():
            for n in sizes:
                a, b, c = operands(torch, n, torch_dtype)
                row = {"case": name, "dtype": dtype, "precision": precision, "class": shape_class, "n": n}
                for backend, code in BACKENDS.items():
                    row[backend] = seconds_per_call(
                        functools.partial(
                            _library.call,
                            "gpumatmul_matmul_strided_batched_device",
                            context,
                            code,
                            CODES[dtype],
                            CODES[precision],
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
                    )
                print(
                    f"{name:13} {shape_class:13} n={n:5}  tiled {row['tiled'] * 1e6:10.1f} us  "
                    f"cublas {row['cublas'] * 1e6:10.1f} us  {row['cublas'] / row['tiled']:6.2f}x",
                    flush=True,
                )
                rows.append(row)
    return rows


def winners(rows: list[dict]) -> dict[tuple[str, str], list[str]]:
    """(dtype, precision): the classes where the kernels were faster at every size."""
    won = {}
    for row in rows:
        key = (row["dtype"], row["precision"])
        won.setdefault(key, {}).setdefault(row["class"], True)
        won[key][row["class"]] &= row["tiled"] < row["cublas"]
    return {key: [c for c in CLASSES if classes.get(c)] for key, classes in won.items()}


def write_table(arch: int, gpu: str, won: dict[tuple[str, str], list[str]], table: Path = TABLE) -> None:
    """The table (auto_table.c) with this architecture's rows of the measured dtypes and
    precisions replaced by `won`."""
    kept = []
    if table.exists():
        kept = [
            row
            for row in re.findall(r"^    \{\d+, [^}]*\},$", table.read_text(), re.M | re.S)
            if not any(row.startswith(f"    {{{arch}, {dtype}, {precision},") for dtype, precision in won)
        ]
    rows = [
        f"    {{{arch}, {dtype}, {precision},\n     {' | '.join(f'1u << {c}' for c in classes) or '0'}}},"
        for (dtype, precision), classes in won.items()
    ]
    today = datetime.date.today().isoformat()
    table.write_text(
        f"/* Where backend AUTO takes pyctk's kernels over cuBLAS: written by\n"
        f" * `python benchmarks/auto_table.py --write`, last on {gpu} (sm_{arch}),\n"
        f" * {today}. A row per kernel image architecture, dtype and precision\n"
        f" * measured; `classes` has the shape classes where the kernels were faster\n"
        f" * at both sizes measured (gemm/gemm.h: shape_class). Unmeasured: cuBLAS. */\n"
        f'#include "gemm/gemm.h"\n\n'
        f"const struct auto_choice auto_choices[] = {{\n" + "\n".join(kept + rows) + "\n};\n"
        "const int auto_choice_count = (int)(sizeof auto_choices / sizeof auto_choices[0]);\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite libgpu/src/gemm/auto_table.c")
    parser.add_argument(
        "--out",
        "--json",
        dest="out",
        metavar="FILE",
        help="where the JSON goes (default: benchmarks/results/<machine>/auto-table.json)",
    )
    parser.add_argument(
        "--cases",
        nargs="+",
        choices=[case[0] for case in CASES],
        help="only these cases (the table's other rows are kept)",
    )
    args = parser.parse_args()
    report = pyctk.info()
    device = report["devices"][0]
    arch, gpu = device["kernel_image"]["arch"], device["name"]
    rows = measure(args.cases)
    won = winners(rows)
    for (dtype, precision), classes in won.items():
        print(f"{dtype:22} {precision:28} kernels faster on: {', '.join(classes) or '-'}")
    path = args.out or measured.default_path(gpu, report["cuda_major"], "auto-table")
    measured.write(
        path,
        {
            "measured": measured.measured(report),
            "gpu": gpu,
            "arch": arch,
            "date": datetime.date.today().isoformat(),
            "cases": args.cases,
            "rows": rows,
        },
    )
    print(f"wrote {path}")
    if args.write:
        write_table(arch, gpu, won)
        print(f"wrote {TABLE}")


if __name__ == "__main__":
    main()
