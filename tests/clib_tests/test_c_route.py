"""libgpumatmul's route (libgpu/src/gemm/route.c): which runner computes a product, on which
kernel family, in how many pieces of k. route_of is a pure function of the product and the
device's facts, so a small C program built against the library's own sources asks it about
products on GPUs this machine need not have. The expected routes are read off the tables
(libgpu/src/gemm/tables.c's registry, AUTO's table) and the runners' rules, not off the
function's output."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyctk._build_config import CUDA_MAJOR
from support.paths import ROOT

SOURCES = ROOT / "libgpu" / "src"

# route.c and what it reads: the tables, and the files whose rules it asks (byte split,
# complex as real, repacking, split k, TMA's limits, cuBLASLt's sizes). Those files hold their runners too,
# whose GPU calls the linker drops (--gc-sections): the program calls none of them, so it
# needs neither cudart nor cuBLAS, only their headers.
ROUTE_SOURCES = [
    "gemm/route.c",
    "gemm/tables.c",
    "gemm/byte_split.c",
    "gemm/complex_real.c",
    "gemm/repack.c",
    "gemm/split_k.c",
    "gemm/launch.c",
    "gemm/widened.c",
    "gemm/cublas_lt.c",
    "gemm/auto_table.c",
    "core/status.c",
]

# Reads one product a line, prints its route: runner, family prefix ("-": none), splits.
PROGRAM = r"""
#include <stdio.h>
#include <string.h>

#include "gemm/gemm.h"

static const char *const runner_names[RUNNER_COUNT] = {
    [RUNNER_ZERO_FILL] = "zero_fill", [RUNNER_BYTE_SPLIT] = "byte_split",
    [RUNNER_COMPLEX_AS_REAL] = "complex_as_real", [RUNNER_WIDENED] = "widened",
    [RUNNER_REPACKED] = "repacked",
    [RUNNER_SPLIT_K] = "split_k", [RUNNER_KERNEL] = "kernel", [RUNNER_CUBLAS] = "cublas",
};
static const char *const precision_names[PRECISION_COUNT] = {
    [GPUMATMUL_PRECISION_HIGHEST] = "highest", [GPUMATMUL_PRECISION_TF32] = "tf32",
    [GPUMATMUL_PRECISION_FP16_ACCUMULATE] = "fp16_accumulate",
};

static int index_of(const char *name, const char *const *names, int count) {
    int i;
    for (i = 0; i < count; ++i)
        if (names[i] && strcmp(names[i], name) == 0) return i;
    return -1;
}

/* Contiguous matrices of `rows` x `cols`, one per matrix of the batch. */
static struct layout packed(int64_t rows, int64_t cols) {
    const struct layout l = {rows, cols, cols, rows * cols};
    return l;
}

int main(void) {
    const char *dtype_names[DTYPE_COUNT];
    char dtype[32], precision[32], backend[32];
    long long m, n, k, batch, workspace_max;
    int automatic, arch, multiprocessors, trans_a, trans_b, misaligned, d;
    for (d = 0; d < DTYPE_COUNT; ++d) dtype_names[d] = dtype_infos[d].name;
    while (scanf("%31s %31s %31s %d %d %d %lld %lld %lld %lld %d %d %d %lld", dtype, precision,
                 backend, &automatic, &arch, &multiprocessors, &m, &n, &k, &batch, &trans_a,
                 &trans_b, &misaligned, &workspace_max) == 14) {
        static char memory[1 << 12];
        const struct device_facts device = {arch, multiprocessors};
        struct gemm g;
        struct route r;
        gpumatmul_backend asked;
        size_t size;
        memset(&g, 0, sizeof g);
        g.dtype = (gpumatmul_dtype)index_of(dtype, dtype_names, DTYPE_COUNT);
        g.precision = (gpumatmul_precision)index_of(precision, precision_names, PRECISION_COUNT);
        asked = strcmp(backend, "auto") == 0     ? GPUMATMUL_BACKEND_AUTO
                : strcmp(backend, "cublas") == 0 ? GPUMATMUL_BACKEND_CUBLAS
                                                 : GPUMATMUL_BACKEND_TILED;
        size = dtype_infos[g.dtype].size;
        g.trans_a = trans_a, g.trans_b = trans_b;
        g.m = m, g.n = n, g.k = k, g.batch = batch, g.workspace_max = workspace_max;
        g.la = trans_a ? packed(k, m) : packed(m, k);
        g.lb = trans_b ? packed(n, k) : packed(k, n);
        g.lc = packed(m, n);
        /* Never read: the route looks at the pointers' alignment alone. */
        g.a = memory + 256 - (uintptr_t)memory % 256 + (misaligned ? size : 0);
        g.b = g.c = memory + 256 - (uintptr_t)memory % 256;
        g.c_dtype = dtype_infos[g.dtype].c_dtype;
        /* As api/prepare.c settles them: the backend and its first row for the image. */
        if (choose_backend(asked, g.dtype, g.precision, &g.backend, &g.family) ||
            settle_backend(&g, arch, asked)) {
            printf("refused - 0\n");
            continue;
        }
        /* A case of AUTO's table measured for the kernels (auto_table.c), given as such. */
        if (automatic) g.automatic = 1;
        r = route_of(&g, &device);
        /* A widened product names the dtype its operands are copied into. */
        printf("%s %s %lld\n", runner_names[r.runner],
               r.runner == RUNNER_WIDENED ? dtype_infos[widened_dtype(&g, arch)].name
               : r.family < 0             ? "-"
                                          : kernel_families[r.family].prefix,
               (long long)r.splits);
    }
    return 0;
}
"""

NO_LIMIT = 2**63 - 1


@dataclass(frozen=True)
class Case:
    why: str
    dtype: str
    arch: int
    m: int
    n: int
    k: int
    expected: tuple[str, str, int]  # runner, the family's prefix ("-": none), pieces of k
    precision: str = "highest"
    backend: str = "tiled"
    automatic: int = 0
    multiprocessors: int = 132
    batch: int = 1
    trans_a: int = 0
    trans_b: int = 0
    misaligned: int = 0  # A one element off the 16 bytes TMA wants
    workspace_max: int = NO_LIMIT

    def line(self) -> str:
        return (
            f"{self.dtype} {self.precision} {self.backend} {self.automatic} {self.arch} "
            f"{self.multiprocessors} {self.m} {self.n} {self.k} {self.batch} {self.trans_a} "
            f"{self.trans_b} {self.misaligned} {self.workspace_max}"
        )


BIG = 4096  # 4096^3: SHAPE_LARGE
MEDIUM = 1024  # 1024^3: SHAPE_MEDIUM

CASES = [
    Case("k == 0 is an empty sum: zeros", "float32", 90, 64, 64, 0, ("zero_fill", "-", 1)),
    Case("k == 0 before cuBLAS too", "complex64", 90, 64, 64, 0, ("zero_fill", "-", 1), backend="cublas"),
    Case("cuBLAS asked: cuBLAS", "float32", 90, BIG, BIG, BIG, ("cublas", "-", 1), backend="cublas"),
    Case("cuBLAS asked: not as a real product", "complex128", 80, BIG, BIG, BIG, ("cublas", "-", 1), backend="cublas"),
    # cuBLASLt's kernels: int8 of n and k multiples of 4 from sm_75 on, float8_e4m3fn of n a
    # multiple of 4 and k of 16 from sm_89 on; float16 copies on cuBLAS's tensor cores for the
    # other FP8 products (float8_e5m2's, which cuBLASLt lacks, too), float32 ones at TF32.
    Case("cuBLAS asked: int8 by cuBLASLt", "int8", 90, 3, 4, 8, ("cublas", "-", 1), backend="cublas"),
    Case("cuBLAS asked: int8, k not of 4", "int8", 90, 4, 4, 6, ("refused", "-", 0), backend="cublas"),
    Case("cuBLAS asked: int8 on sm_70, before IMMA", "int8", 70, 64, 64, 64, ("refused", "-", 0), backend="cublas"),
    Case("AUTO: int8 on sm_70 by the kernels", "int8", 70, 64, 64, 64, ("kernel", "gemm_tiled_", 1), backend="auto"),
    Case("cuBLAS asked: FP8 by cuBLASLt", "float8_e4m3fn", 90, 3, 4, 16, ("cublas", "-", 1), backend="cublas"),
    Case(
        "cuBLAS asked: FP8 by cuBLASLt on sm_89", "float8_e4m3fn", 89, 64, 64, 64, ("cublas", "-", 1), backend="cublas"
    ),
    Case("cuBLAS asked: FP8, k not of 16", "float8_e4m3fn", 90, 4, 4, 24, ("widened", "float16", 1), backend="cublas"),
    Case("cuBLAS asked: FP8, n not of 4", "float8_e4m3fn", 90, 4, 6, 16, ("widened", "float16", 1), backend="cublas"),
    Case("cuBLAS asked: e5m2 as float16", "float8_e5m2", 90, 64, 64, 64, ("widened", "float16", 1), backend="cublas"),
    # The mixed FP8 pairs: cuBLASLt's FP8 kernels take them as they take e4m3, float16 copies
    # (each operand widened from its own type) elsewhere.
    Case(
        "cuBLAS asked: FP8 pair by cuBLASLt", "float8_e4m3fn_e5m2", 90, 3, 4, 16, ("cublas", "-", 1), backend="cublas"
    ),
    Case(
        "cuBLAS asked: FP8 pair, k not of 16",
        "float8_e5m2_e4m3fn",
        90,
        4,
        4,
        24,
        ("widened", "float16", 1),
        backend="cublas",
    ),
    Case(
        "AUTO: FP8 pair on sm_86 as float16 copies",
        "float8_e5m2_e4m3fn",
        86,
        BIG,
        BIG,
        BIG,
        ("widened", "float16", 1),
        backend="auto",
    ),
    Case(
        "cuBLAS asked: FP8 on sm_80, before FP8 tensor cores: float16 copies",
        "float8_e4m3fn",
        80,
        BIG,
        BIG,
        BIG,
        ("widened", "float16", 1),
        backend="cublas",
    ),
    Case(
        "AUTO: FP8 on sm_86 by cuBLAS on float16 copies",
        "float8_e4m3fn",
        86,
        BIG,
        BIG,
        BIG,
        ("widened", "float16", 1),
        backend="auto",
    ),  # fmt: skip
    Case(
        "AUTO: FP8 at TF32 on sm_80, float32 copies",
        "float8_e5m2",
        80,
        BIG,
        BIG,
        BIG,
        ("widened", "float32", 1),
        backend="auto",
        precision="tf32",
    ),  # fmt: skip
    Case(
        "AUTO: FP8 on Hopper by FP8 wgmma",
        "float8_e5m2",
        90,
        BIG,
        BIG,
        BIG,
        ("repacked", "gemm_wgmma_", 1),
        backend="auto",
    ),
    Case(
        "FP8 at fp16_accumulate: refused",
        "float8_e4m3fn",
        90,
        64,
        64,
        64,
        ("refused", "-", 0),
        precision="fp16_accumulate",
        backend="auto",
    ),
    Case(
        "int16 from SHAPE_MEDIUM on Hopper: bytes on 1-byte wgmma",
        "int16",
        90,
        MEDIUM,
        MEDIUM,
        MEDIUM,
        ("byte_split", "gemm_wgmma_", 1),
    ),
    Case("uint64 too", "uint64", 90, BIG, BIG, BIG, ("byte_split", "gemm_wgmma_", 1)),
    Case("int16 below SHAPE_MEDIUM: the generic kernel", "int16", 90, 128, 128, 128, ("kernel", "gemm_tiled_", 1)),
    Case(
        "int32 on sm_80: no 1-byte TMA kernel to split onto", "int32", 80, BIG, BIG, BIG, ("kernel", "gemm_tiled_", 1)
    ),
    Case(
        "int32 split's workspace does not fit",
        "int32",
        90,
        BIG,
        BIG,
        BIG,
        ("kernel", "gemm_tiled_", 1),
        workspace_max=1 << 20,
    ),
    Case(
        "complex64 from SHAPE_MEDIUM: one float32 product",
        "complex64",
        90,
        MEDIUM,
        MEDIUM,
        MEDIUM,
        ("complex_as_real", "-", 1),
    ),
    Case("complex128 likewise, on dmma's GPUs", "complex128", 80, BIG, BIG, BIG, ("complex_as_real", "-", 1)),
    Case(
        "complex64 TF32 on sm_80: gemm_simt computes TF32",
        "complex64",
        80,
        BIG,
        BIG,
        BIG,
        ("complex_as_real", "-", 1),
        precision="tf32",
    ),
    Case(
        "complex64 TF32 on sm_60: no real TF32 kernel, the complex one stays",
        "complex64",
        60,
        BIG,
        BIG,
        BIG,
        ("kernel", "gemm_tiled_", 1),
        precision="tf32",
    ),
    Case(
        "complex64 below SHAPE_MEDIUM: the complex kernel", "complex64", 90, 256, 256, 256, ("kernel", "gemm_tiled_", 1)
    ),
    Case(
        "complex64 whose expanded B does not fit the workspace",
        "complex64",
        90,
        BIG,
        BIG,
        BIG,
        ("kernel", "gemm_tiled_", 1),
        workspace_max=1 << 20,
    ),
    Case(
        "AUTO's measured complex64 TF32 family on Hopper: as real",
        "complex64",
        90,
        MEDIUM,
        MEDIUM,
        MEDIUM,
        ("complex_as_real", "-", 1),
        precision="tf32",
        automatic=1,
    ),
    Case(
        "float16 on Hopper: wgmma through TMA, any transposition",
        "float16",
        90,
        BIG,
        BIG,
        BIG,
        ("kernel", "gemm_wgmma_", 1),
        trans_a=1,
    ),
    Case(
        "float16 on Hopper, A off 16 bytes: copied for TMA",
        "float16",
        90,
        BIG,
        BIG,
        BIG,
        ("repacked", "gemm_wgmma_", 1),
        misaligned=1,
    ),
    Case("bfloat16 on sm_80: hmma", "bfloat16", 80, BIG, BIG, BIG, ("kernel", "gemm_hmma_", 1)),
    Case("float16 on sm_120: hmma's second row", "float16", 120, BIG, BIG, BIG, ("kernel", "gemm_hmma_", 1)),
    Case(
        "float32 TF32 on Hopper, k-major: TF32 wgmma",
        "float32",
        90,
        BIG,
        BIG,
        BIG,
        ("kernel", "gemm_wgmma_", 1),
        precision="tf32",
        trans_b=1,
    ),
    Case(
        "float32 TF32 on Hopper, B along n: transposed for TF32 wgmma",
        "float32",
        90,
        BIG,
        BIG,
        BIG,
        ("repacked", "gemm_wgmma_", 1),
        precision="tf32",
    ),
    Case(
        "float32 TF32 on Hopper, the copy does not fit: gemm_simt",
        "float32",
        90,
        BIG,
        BIG,
        BIG,
        ("kernel", "gemm_simt_", 1),
        precision="tf32",
        workspace_max=1 << 20,
    ),
    Case(
        "AUTO measured TF32 wgmma, the copy does not fit: cuBLAS",
        "float32",
        90,
        16,
        16,
        16,
        ("cublas", "-", 1),
        precision="tf32",
        automatic=1,
        workspace_max=0,
    ),
    Case(
        "AUTO's measured family for these operands: it",
        "float32",
        90,
        16,
        16,
        16,
        ("kernel", "gemm_wgmma_", 1),
        precision="tf32",
        automatic=1,
        trans_b=1,
    ),
    Case("float64 from sm_80: dmma", "float64", 90, BIG, BIG, BIG, ("kernel", "gemm_dmma_", 1)),
    Case("float64 on sm_70: the generic kernel", "float64", 70, BIG, BIG, BIG, ("kernel", "gemm_tiled_", 1)),
    # gemm_simt's 128 x 256 tiles: 8 x 4 = 32 blocks for 132 multiprocessors, so 132 // 32 = 4
    # pieces of k (k / 64 allows 16), and 4 cut k = 1024 evenly.
    Case(
        "a grid of 32 blocks on 132 multiprocessors: 4 pieces of k",
        "float32",
        90,
        MEDIUM,
        MEDIUM,
        MEDIUM,
        ("split_k", "gemm_simt_", 4),
    ),
    Case(
        "a batch as large as the GPU: unsplit",
        "float32",
        90,
        MEDIUM,
        MEDIUM,
        MEDIUM,
        ("kernel", "gemm_simt_", 1),
        batch=200,
    ),
    Case(
        "as many tiles as multiprocessors: unsplit",
        "float32",
        90,
        MEDIUM,
        MEDIUM,
        MEDIUM,
        ("kernel", "gemm_simt_", 1),
        multiprocessors=32,
    ),
    Case("float32 up to 64^3: gemm_tiled's row", "float32", 90, 16, 16, 16, ("kernel", "gemm_tiled_", 1)),
    Case(
        "int8 on Hopper, B along n: transposed for 1-byte wgmma",
        "int8",
        90,
        BIG,
        BIG,
        BIG,
        ("repacked", "gemm_wgmma_", 1),
    ),
    Case("int8 on sm_80, k-major: imma", "int8", 80, BIG, BIG, BIG, ("kernel", "gemm_imma_", 1), trans_b=1),
    Case("int8 on sm_120, B along n: transposed for imma", "uint8", 120, BIG, BIG, BIG, ("repacked", "gemm_imma_", 1)),
    Case("bool tiny: imma leaves it to the generic kernel", "bool", 80, 16, 16, 16, ("kernel", "gemm_tiled_", 1)),
    Case(
        "FP8 on Hopper, k-major: FP8 wgmma", "float8_e4m3fn", 90, BIG, BIG, BIG, ("kernel", "gemm_wgmma_", 1), trans_b=1
    ),
    Case("FP8 on Hopper, tiny: FP8 wgmma all the same", "float8_e5m2", 90, 16, 16, 16, ("repacked", "gemm_wgmma_", 1)),
    Case(
        "FP8 pair on Hopper, k-major: FP8 wgmma",
        "float8_e4m3fn_e5m2",
        90,
        BIG,
        BIG,
        BIG,
        ("kernel", "gemm_wgmma_", 1),
        trans_b=1,
    ),
    Case(
        "FP8 pair on Hopper, B along n: transposed",
        "float8_e5m2_e4m3fn",
        90,
        BIG,
        BIG,
        BIG,
        ("repacked", "gemm_wgmma_", 1),
    ),
    Case("FP8 pair on sm_120: widened to float32", "float8_e4m3fn_e5m2", 120, 16, 16, 16, ("widened", "float32", 1)),
    Case(
        "FP8 on Hopper, B along n: transposed for FP8 wgmma",
        "float8_e5m2",
        90,
        BIG,
        BIG,
        BIG,
        ("repacked", "gemm_wgmma_", 1),
    ),
    Case(
        "FP8 on sm_80, no FP8 tensor cores: widened to float32",
        "float8_e4m3fn",
        80,
        BIG,
        BIG,
        BIG,
        ("widened", "float32", 1),
    ),  # fmt: skip
    Case("FP8 on sm_120: widened to float32", "float8_e5m2", 120, 16, 16, 16, ("widened", "float32", 1), trans_b=1),
    Case(
        "FP8 at TF32 on Hopper: float32 copies at TF32",
        "float8_e4m3fn",
        90,
        BIG,
        BIG,
        BIG,
        ("widened", "float32", 1),
        precision="tf32",
    ),
]


def include_flags() -> list[str]:
    """The CUDA headers' folders, as meson.build finds them (libgpu/tools/cuda_wheels.py)."""
    found = subprocess.run(
        [sys.executable, str(ROOT / "libgpu" / "tools" / "cuda_wheels.py"), str(CUDA_MAJOR)],
        capture_output=True,
        text=True,
        check=True,
    )
    return ["-I" + folder for folder in found.stdout.splitlines()[0].split(";")]


@pytest.fixture(scope="module")
def route_program(tmp_path_factory) -> Path:
    gcc = shutil.which("gcc")
    if not gcc:
        pytest.fail("gcc is needed (apt-get install gcc)")
    folder = tmp_path_factory.mktemp("route")
    # gpumatmul.h includes the version header meson writes; any version will do here.
    template = (ROOT / "libgpu" / "include" / "gpumatmul_version.h.in").read_text()
    (folder / "gpumatmul_version.h").write_text(re.sub(r"@\w+@", "0", template))
    (folder / "program.c").write_text(PROGRAM)
    program = folder / "program"
    subprocess.run(
        [gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-ffunction-sections", "-fdata-sections",
         "-Wl,--gc-sections", f"-I{folder}", f"-I{ROOT / 'libgpu' / 'include'}", f"-I{SOURCES}",
         f"-I{ROOT / 'libgpu' / 'kernels'}", *include_flags(), str(folder / "program.c"),
         *(str(SOURCES / source) for source in ROUTE_SOURCES), "-o", str(program)],
        check=True,
    )  # fmt: skip
    return program


def routes(program: Path, cases: list[Case]) -> list[tuple[str, str, int]]:
    out = subprocess.run(
        [str(program)], input="\n".join(case.line() for case in cases) + "\n", capture_output=True, text=True,
        check=True,
    ).stdout.split("\n")  # fmt: skip
    return [(runner, prefix, int(splits)) for runner, prefix, splits in (line.split() for line in out if line)]


def test_each_product_takes_the_route_the_tables_give(route_program):
    assert len(CASES) >= 20
    got = routes(route_program, CASES)
    wrong = [f"{case.why}: {case.expected}, got {route}" for case, route in zip(CASES, got) if route != case.expected]
    assert len(got) == len(CASES) and wrong == []


def test_every_runner_is_some_case_s_route():
    assert {case.expected[0] for case in CASES} == {
        "zero_fill", "byte_split", "complex_as_real", "widened", "repacked", "split_k", "kernel", "cublas",
        "refused",
    }  # fmt: skip


_CALL = re.compile(r"\bmultiply\s*\(")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def callers_of_multiply(root: Path) -> list[str]:
    """The gemm layer's files that call multiply(), multiply.c aside: its runners run a route
    (run_route), never the whole dispatch again. The layers above call it: it is their way in."""
    return sorted(
        str(path.relative_to(root))
        for path in (root / "gemm").glob("*.c")
        if path.name != "multiply.c" and _CALL.search(_COMMENT.sub("", path.read_text()))
    )


def test_no_runner_calls_multiply_again():
    assert callers_of_multiply(SOURCES) == []


def test_a_runner_calling_multiply_is_reported(tmp_path):
    (tmp_path / "gemm").mkdir()
    (tmp_path / "gemm" / "multiply.c").write_text("int multiply(void) { return 0; }\n")
    (tmp_path / "gemm" / "runner.c").write_text("int run(void) { return multiply(); }\n")
    (tmp_path / "gemm" / "quiet.c").write_text("/* multiply() in a comment */ int z = multiply_all(1);\n")
    assert callers_of_multiply(tmp_path) == ["gemm/runner.c"]
