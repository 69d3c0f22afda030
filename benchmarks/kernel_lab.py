"""Build, check and time kernel variants against cuBLAS, outside the library.

    python benchmarks/kernel_lab.py build OUT_DIR [ARCH]     # here: NVRTC, no GPU needed
    python benchmarks/kernel_lab.py run OUT_DIR [--sizes 1024 4096 8192] [--json FILE]
                                       [--splits 2 4 8]

`build` compiles libgpu/kernels/*.cu as one program, exactly as the library's build does
(libgpu/tools/embed_kernels.py), plus the VARIANTS below instantiated under their own names,
to one CUBIN for ARCH (default 90) with NVRTC from the pip wheel, and writes the CUBIN, the
register/spill report and variants.json into OUT_DIR. `run` (on the GPU machine: PyTorch and
the driver) loads the CUBIN through the driver API, and for every variant:
- checks edge cases against a float64 product: sizes off the tiles, every transpose pair,
  operands that are not 16-byte aligned, odd pitches and a strided batch (C poisoned with
  NaN first, so an unwritten element fails);
- times n x n x n products for --sizes with CUDA events (warm-up, median of repeats, fresh
  random operands) beside torch.matmul on the same operands (cuBLAS; TF32 off for float32),
  and prints TFLOP/s and the percentage of cuBLAS measured in the same run.
- with --splits, also times each float32 variant with k cut into that many pieces as the
  library does (libgpu/src/gemm/split_k.c: one launch whose batch index is the piece, into a
  workspace, then gemm_reduce_f32), the whole of both launches timed; rows get "splits".
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "libgpu" / "kernels"

# name: (dtype, kernel symbol or template instantiation, tile_m, tile_n, threads, shared bytes,
#        min blocks per SM for __launch_bounds__). A symbol names a kernel of the library; a
# template instantiation gets an extern "C" wrapper named lab_<name>.
VARIANTS: dict[str, tuple] = {
    "tiled_f32": ("float32", "gemm_tiled_f32", 64, 64, 256, 0, None),
    "simt_f32": ("float32", "gemm_simt_f32", 128, 256, 256, "GEMM_SIMT_SHARED_BYTES", None),
    "simt_128x128x16": ("float32", "gemm_simt<128, 128, 16, 4, 2>", 128, 128, 256, "simt:128:128:16", 2),
    "simt_64x256x16": ("float32", "gemm_simt<64, 256, 16, 2, 2>", 64, 256, 128, "simt:64:256:16", 2),
    "tiled_f64": ("float64", "gemm_tiled_f64", 64, 64, 256, 0, None),
    "dmma_f64": ("float64", "gemm_dmma_f64", 128, 64, 128, "GEMM_DMMA_SHARED_BYTES", None),
    "dmma_64x64x16_m16k4": ("float64", "gemm_dmma<64, 64, 16, 3, 2, 2, 16, 4>", 64, 64, 128, "dmma:64:64:16:3", 1),
    "dmma_128x64x16_m8k4": ("float64", "gemm_dmma<128, 64, 16, 3, 2, 2, 8, 4>", 128, 64, 128, "dmma:128:64:16:3", 1),
    "tiled_f16": ("float16", "gemm_tiled_f16", 64, 64, 256, 0, None),
    "hmma_f16": ("float16", "gemm_hmma_f16", 128, 128, 256, "GEMM_HMMA_SHARED_BYTES", None),
    "tiled_bf16": ("bfloat16", "gemm_tiled_bf16", 64, 64, 256, 0, None),
    "hmma_bf16": ("bfloat16", "gemm_hmma_bf16", 128, 128, 256, "GEMM_HMMA_SHARED_BYTES", None),
    "hmma_f16_128x256x32_3st": (
        "float16",
        "gemm_hmma<f16_bits, 128, 256, 32, 3, 2, 4>",
        128,
        256,
        256,
        "hmma:128:256:32:3:2",
        1,
    ),
    "hmma_f16_128x128x32_4st_2blk": (
        "float16",
        "gemm_hmma<f16_bits, 128, 128, 32, 4, 2, 4>",
        128,
        128,
        256,
        "hmma:128:128:32:4:2",
        2,
    ),
}


def dmma_shared_bytes(bm: int, bn: int, bk: int, stages: int) -> int:
    def slab(rows: int) -> int:
        return max(bk * (rows + 8), rows * (bk + 4)) * 8  # as gemm_dmma.h

    return stages * (slab(bm) + slab(bn))


def simt_shared_bytes(bm: int, bn: int, bk: int) -> int:
    return 2 * bk * (bm + 4 + bn + 4) * 4  # as gemm_simt.h


def hmma_shared_bytes(bm: int, bn: int, bk: int, stages: int, size: int) -> int:
    def slab(rows: int) -> int:
        return max(bk * (rows + 8), rows * (bk + 8)) * size  # as gemm_hmma.h

    return stages * (slab(bm) + slab(bn))


def header_constants() -> dict[str, int]:
    """The kernels' headers' shared-memory sizes, as the host's C compiler computes them."""
    import subprocess
    import tempfile

    names = ["GEMM_SIMT_SHARED_BYTES", "GEMM_DMMA_SHARED_BYTES", "GEMM_HMMA_SHARED_BYTES"]
    source = "#include <stdio.h>\n" + "".join(f'#include "{h.name}"\n' for h in sorted(KERNELS.glob("*.h")))
    source += "int main(void) {\n" + "".join(f'printf("%lld\\n", (long long)({n}));\n' for n in names) + "}\n"
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "c.c").write_text(source)
        subprocess.run(["cc", f"-I{KERNELS}", "-o", f"{tmp}/c", f"{tmp}/c.c"], check=True)
        out = subprocess.run([f"{tmp}/c"], capture_output=True, text=True, check=True).stdout
    return dict(zip(names, map(int, out.split())))


def shared_bytes(spec, constants) -> int:
    if isinstance(spec, int):
        return spec
    if spec.startswith("dmma:"):
        return dmma_shared_bytes(*map(int, spec.split(":")[1:]))
    if spec.startswith("simt:"):
        return simt_shared_bytes(*map(int, spec.split(":")[1:]))
    if spec.startswith("hmma:"):
        return hmma_shared_bytes(*map(int, spec.split(":")[1:]))
    return constants[spec]


def build(out: Path, arch: int) -> None:
    sys.path.insert(0, str(ROOT / "libgpu" / "tools"))
    from cuda_wheels import library_path
    from embed_kernels import Nvrtc

    nvrtc = Nvrtc(library_path("nvrtc", 13))
    kernels = sorted(KERNELS.glob("*.cu"))
    source = "".join(f'#line 1 "{k.name}"\n{k.read_text()}\n' for k in kernels)
    source += '#line 1 "lab_variants.cu"\n'
    for name, (_, symbol, _, _, threads, _, blocks) in VARIANTS.items():
        if "<" in symbol:
            arch_guard = "#if __CUDA_ARCH__ >= 800\n" if "mma" in symbol else "#if 1\n"
            source += (
                f'extern "C" __global__ void __launch_bounds__({threads}, {blocks}) '
                f"lab_{name}(gemm_args args) {{\n{arch_guard}    {symbol}(args);\n#endif\n}}\n"
            )
    lib = nvrtc.lib
    program = ctypes.c_void_p()
    nvrtc.check(
        lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"lab.cu", 0, None, None), "nvrtcCreateProgram"
    )
    options = [
        f"--gpu-architecture=sm_{arch}",
        "-std=c++17",
        "--no-source-include",
        f"--include-path={KERNELS}",
        "--ptxas-options=-v",
    ]
    result = lib.nvrtcCompileProgram(
        program, len(options), (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
    )
    log = nvrtc._log(program)
    if result != 0:
        raise SystemExit(log)
    size = ctypes.c_size_t()
    nvrtc.check(lib.nvrtcGetCUBINSize(program, ctypes.byref(size)), "size")
    image = ctypes.create_string_buffer(size.value)
    nvrtc.check(lib.nvrtcGetCUBIN(program, image), "cubin")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"lab_sm{arch}.cubin").write_bytes(image.raw)
    (out / f"lab_sm{arch}.log").write_text(log)
    constants = header_constants()
    table = {
        name: {
            "dtype": v[0],
            "symbol": v[1] if "<" not in v[1] else f"lab_{name}",
            "tile_m": v[2],
            "tile_n": v[3],
            "threads": v[4],
            "shared_bytes": shared_bytes(v[5], constants),
        }
        for name, v in VARIANTS.items()
    }
    (out / "variants.json").write_text(json.dumps({"arch": arch, "variants": table}, indent=1))
    print(log)


# ---- On the GPU machine ----


class GemmArgs(ctypes.Structure):  # struct gemm_args (gemm_tiled.h): every field 8 bytes
    _fields_ = [
        ("m", ctypes.c_longlong),
        ("n", ctypes.c_longlong),
        ("k", ctypes.c_longlong),
        ("a", ctypes.c_void_p),
        ("a_row_stride", ctypes.c_longlong),
        ("a_col_stride", ctypes.c_longlong),
        ("a_batch_stride", ctypes.c_longlong),
        ("b", ctypes.c_void_p),
        ("b_row_stride", ctypes.c_longlong),
        ("b_col_stride", ctypes.c_longlong),
        ("b_batch_stride", ctypes.c_longlong),
        ("c", ctypes.c_void_p),
        ("ldc", ctypes.c_longlong),
        ("c_batch_stride", ctypes.c_longlong),
    ]


class ReduceArgs(ctypes.Structure):  # struct reduce_args (gemm_reduce.h)
    _fields_ = [
        ("m", ctypes.c_longlong),
        ("n", ctypes.c_longlong),
        ("splits", ctypes.c_longlong),
        ("partials", ctypes.c_void_p),
        ("ld", ctypes.c_longlong),
        ("c", ctypes.c_void_p),
        ("ldc", ctypes.c_longlong),
        ("c_batch_stride", ctypes.c_longlong),
    ]


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")

    def check(self, result: int, what: str) -> None:
        if result != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(result, ctypes.byref(name))
            raise RuntimeError(f"{what}: {name.value.decode()}")

    def load(self, image: bytes):
        module = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
        return module

    def function(self, module, name: str, shared: int):
        f = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(f), module, name.encode()), name)
        if shared > 48 * 1024:  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.check(self.lib.cuFuncSetAttribute(f, 8, shared), f"cuFuncSetAttribute {name}")
        regs = ctypes.c_int()
        self.lib.cuFuncGetAttribute(ctypes.byref(regs), 4, f)  # CU_FUNC_ATTRIBUTE_NUM_REGS
        return f, regs.value

    def launch(self, f, grid, threads, shared, stream, args) -> None:
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(args), ctypes.c_void_p))
        self.check(
            self.lib.cuLaunchKernel(f, *grid, threads, 1, 1, shared, ctypes.c_void_p(stream), params, None),
            "cuLaunchKernel",
        )


def run(
    out: Path, sizes: list[int], json_path: Path | None, only: list[str] | None, no_check: bool, splits: list[int]
) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.zeros(1, device="cuda")  # the primary context, current on this thread
    info = json.loads((out / "variants.json").read_text())
    driver = Driver()
    module = driver.load((out / f"lab_sm{info['arch']}.cubin").read_bytes())
    dtypes = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16}
    tolerance = {"float32": 1e-5, "float64": 1e-13, "float16": 1e-3, "bfloat16": 5e-3}
    stream = torch.cuda.current_stream().cuda_stream
    gpu = torch.cuda.get_device_name()
    rows, failures = [], []

    def launch(v, f, m, n, k, batch, a, a_rs, a_cs, a_bs, b, b_rs, b_cs, b_bs, c, ldc, c_bs):
        args = GemmArgs(
            m, n, k, a.data_ptr(), a_rs, a_cs, a_bs, b.data_ptr(), b_rs, b_cs, b_bs, c.data_ptr(), ldc, c_bs
        )
        grid = ((m + v["tile_m"] - 1) // v["tile_m"], (n + v["tile_n"] - 1) // v["tile_n"], batch)
        driver.launch(f, grid, v["threads"], v["shared_bytes"], stream, args)

    def check(name, v, f):
        """Edge cases: returns a list of failure strings."""
        t = dtypes[v["dtype"]]
        bad = []
        g = torch.Generator(device="cuda").manual_seed(1)
        cases = []
        for m, n, k in [(1000, 1001, 999), (1, 1, 1), (7, 130, 3), (129, 5, 257), (257, 263, 64)]:
            for ta in (0, 1):
                for tb in (0, 1):
                    cases.append((m, n, k, ta, tb, 0, 1, 0))
        cases += [
            (200, 203, 201, 0, 0, 1, 1, 0),
            (200, 203, 201, 1, 1, 1, 1, 0),  # misaligned
            (150, 170, 190, 0, 1, 0, 3, 5),
            (150, 170, 190, 1, 0, 1, 2, 3),
        ]  # batches, pitch pad
        for m, n, k, ta, tb, shift, batch, pad in cases:
            a_rows, a_cols = (k, m) if ta else (m, k)
            b_rows, b_cols = (n, k) if tb else (k, n)
            lda, ldb, ldc = a_cols + pad, b_cols + pad, n + pad
            a_bs, b_bs, c_bs = a_rows * lda + pad, b_rows * ldb, m * ldc + pad
            a_buf = torch.randn(shift + batch * a_bs, device="cuda", dtype=t, generator=g)
            b_buf = torch.randn(shift + batch * b_bs, device="cuda", dtype=t, generator=g)
            c_buf = torch.full((shift + batch * c_bs,), float("nan"), device="cuda", dtype=t)
            a, b, c = a_buf[shift:], b_buf[shift:], c_buf[shift:]
            launch(
                v,
                f,
                m,
                n,
                k,
                batch,
                a,
                1 if ta else lda,
                lda if ta else 1,
                a_bs,
                b,
                1 if tb else ldb,
                ldb if tb else 1,
                b_bs,
                c,
                ldc,
                c_bs,
            )
            torch.cuda.synchronize()
            for z in range(batch):
                A = a[z * a_bs : z * a_bs + a_rows * lda].view(a_rows, lda)[:, :a_cols].double()
                B = b[z * b_bs : z * b_bs + b_rows * ldb].view(b_rows, ldb)[:, :b_cols].double()
                C = c[z * c_bs : z * c_bs + m * ldc].view(m, ldc)[:, :n].double()
                ref = (A.T if ta else A) @ (B.T if tb else B)
                err = ((C - ref).norm() / ref.norm()).item()
                if not err <= tolerance[v["dtype"]]:
                    bad.append(
                        f"{name} m={m} n={n} k={k} ta={ta} tb={tb} shift={shift} pad={pad} z={z}: error {err:.3g}"
                    )
        return bad

    reduce_f32 = driver.function(module, "gemm_reduce_f32", 0)[0] if splits else None

    def launch_split(v, f, n, pieces, a, b, c, partials):
        """c = a @ b (n x n x n) with k in `pieces` pieces of n / pieces, as split_k.c does."""
        chunk = n // pieces
        launch(v, f, n, n, chunk, pieces, a, n, 1, chunk, b, n, 1, chunk * n, partials, n, n * n)
        args = ReduceArgs(n, n, pieces, partials.data_ptr(), n, c.data_ptr(), n, 0)
        driver.launch(reduce_f32, ((n // 4 + 127) // 128, n, 1), 128, 0, stream, args)  # gemm_reduce.h

    def time_size(v, f, n, pieces=1):
        t = dtypes[v["dtype"]]
        partials = torch.empty(pieces, n, n, device="cuda", dtype=t) if pieces > 1 else None
        reps = 20 if n <= 2048 else 10 if n <= 4096 else 5
        sets = [
            (torch.randn(n, n, device="cuda", dtype=t), torch.randn(n, n, device="cuda", dtype=t)) for _ in range(2)
        ]
        c = torch.empty(n, n, device="cuda", dtype=t)
        ours, theirs = [], []
        for r in range(reps + 2):
            a, b = sets[r % 2]
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            if pieces > 1:
                launch_split(v, f, n, pieces, a, b, c, partials)
            else:
                launch(v, f, n, n, n, 1, a, n, 1, 0, b, n, 1, 0, c, n, 0)
            end.record()
            start2, end2 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start2.record()
            ref = torch.matmul(a, b)
            end2.record()
            torch.cuda.synchronize()
            if r >= 2:
                ours.append(start.elapsed_time(end) / 1e3)
                theirs.append(start2.elapsed_time(end2) / 1e3)
        err = ((c.double() - ref.double()).norm() / ref.double().norm()).item()
        flops = 2 * n**3
        return flops / statistics.median(ours) / 1e12, flops / statistics.median(theirs) / 1e12, err

    for name, v in info["variants"].items():
        if only and name not in only:
            continue
        f, regs = driver.function(module, v["symbol"], v["shared_bytes"])
        bad = [] if no_check else check(name, v, f)
        failures += bad
        for n in sizes:
            for pieces in [1] + (splits if v["dtype"] == "float32" else []):
                if n % (4 * pieces):
                    continue
                ours, cublas, err = time_size(v, f, n, pieces)
                row = {
                    "variant": name,
                    "dtype": v["dtype"],
                    "n": n,
                    "splits": pieces,
                    "tflops": ours,
                    "cublas_tflops": cublas,
                    "percent": 100 * ours / cublas,
                    "regs": regs,
                    "error_vs_cublas": err,
                    "edge_failures": len(bad),
                    "gpu": gpu,
                }
                rows.append(row)
                print(
                    f"{name:28s} {v['dtype']:8s} n={n:5d} split {pieces:2d} {ours:7.2f} TF/s  "
                    f"cuBLAS {cublas:7.2f}  {row['percent']:5.1f}%  regs {regs:3d}  "
                    f"error {err:.1e}  edge failures {len(bad)}",
                    flush=True,
                )
    for line in failures[:40]:
        print("FAIL", line)
    print(f"\n{gpu}; torch {torch.__version__}")
    print(f"{'variant':28s} {'dtype':8s} {'n':>5s} {'split':>5s} {'TFLOP/s':>8s} {'cuBLAS':>8s} {'%':>6s} edge")
    for r in rows:
        print(
            f"{r['variant']:28s} {r['dtype']:8s} {r['n']:5d} {r['splits']:5d} {r['tflops']:8.2f} "
            f"{r['cublas_tflops']:8.2f} {r['percent']:6.1f} {'ok' if not r['edge_failures'] else 'FAIL'}"
        )
    if json_path:
        json_path.write_text(json.dumps({"gpu": gpu, "rows": rows, "failures": failures}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("out", type=Path)
    b.add_argument("arch", type=int, nargs="?", default=90)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096, 8192])
    r.add_argument("--json", type=Path)
    r.add_argument("--only", nargs="+")
    r.add_argument("--no-check", action="store_true", help="time only (for a profiler)")
    r.add_argument(
        "--splits", type=int, nargs="+", default=[], help="also time float32 variants with k cut into this many pieces"
    )
    args = parser.parse_args()
    if args.command == "build":
        build(args.out, args.arch)
    else:
        run(args.out, args.sizes, args.json, args.only, args.no_check, args.splits)


if __name__ == "__main__":
    main()
