"""pyctk.compiler on the CPU: NVRTC from the pip wheel, with no GPU and no driver.

Covered: SASS (CUBIN) and PTX for named architectures; compile errors carrying NVRTC's
whole log, with the user's line numbers; the CUDA headers of the wheels (cuda_fp16.h,
cuda_bf16.h, cuda/std); user headers; templates through name expressions; PyCUDA's
extern "C" wrapping; the choice of architecture for a GPU; kernel parameters read from
real PTX; and the error that names the pip command when NVRTC is not installed (the
loader's real search, in a fresh process, over an empty layout).
"""

from __future__ import annotations

import math
import os
import re
import struct

import numpy as np
import pytest

import pyctk
from pyctk._build_config import CUDA_MAJOR
from pyctk._cuda import nvrtc as _nvrtc
from pyctk._pycuda.compiling import headers
from pyctk._pycuda.kernels import kernel_args as _kernel_args
from pyctk._pycuda.kernels import source_modules as compiler
from pyctk._pycuda.kernels.kernel_args import Param
from support import loader_fakes

ADD = """
__global__ void add(int *x, int *y, int *z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}"""


def cubin_arch(cubin: bytes) -> set[int]:
    """The SM number an ELF CUBIN's e_flags carry: the low byte (older NVRTC) or the second."""
    flags = struct.unpack_from("<I", cubin, 48)[0]
    return {flags & 0xFF, (flags >> 8) & 0xFF}


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    monkeypatch.setenv("PYCTK_DISABLE_CACHE", "1")  # these tests compile; test_kernel_cache caches


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90", "sm_120"])
def test_compile_sass_for_a_named_architecture(arch):
    cubin = compiler.compile(ADD, arch=arch)
    assert cubin[:4] == b"\x7fELF"
    assert int(arch[3:]) in cubin_arch(cubin)


def test_every_supported_architecture_compiles():
    archs = compiler.supported_archs()
    assert archs == sorted(archs) and 90 in archs and compiler.nvrtc_version()[0] == CUDA_MAJOR
    for arch in archs:
        assert arch in cubin_arch(compiler.compile(ADD, arch=f"sm_{arch}"))


def test_compile_ptx_for_a_named_architecture():
    ptx = compiler.compile(ADD, arch="compute_80").decode()
    assert ".target sm_80" in ptx and ".visible .entry add(" in ptx and not ptx.endswith("\0")


def test_arch_specific_target():
    assert compiler.compile(ADD, arch="sm_90a")[:4] == b"\x7fELF"


@pytest.mark.parametrize(
    "arch, error", [("sm90", ValueError), ("90", ValueError), (90, TypeError), ("sm_91", ValueError)]
)
def test_bad_arch(arch, error):
    with pytest.raises(error, match="arch|sm_9|compile for"):
        compiler.compile(ADD, arch=arch)


def test_compile_error_carries_the_whole_log_with_the_users_line_numbers():
    source = "// line 1\n#include <cuda_fp16.h>\n__global__ void k(float *x) {\n    x[0] = undefined_name;\n}\n"
    with pytest.raises(compiler.CompileError) as info:
        compiler.compile(source, arch="sm_80")
    error = info.value
    assert 'kernel.cu(4): error: identifier "undefined_name" is undefined' in error.log
    assert error.log in str(error) and "1 error detected" in error.log
    assert "--gpu-architecture=sm_80" in error.options
    # PyCUDA's names for what nvcc said, which its programs print
    assert (error.msg, error.stderr, error.stdout) == (str(error), error.log, "")
    assert error.command_line == list(error.options)


def test_bad_option_is_a_compile_error():
    with pytest.raises(compiler.CompileError, match="--no-such-option"):
        compiler.compile(ADD, arch="sm_80", options=["--no-such-option"])


def test_options_reach_nvrtc():
    ptx = compiler.compile("__global__ void k(int *x) { *x = N; }", arch="compute_80", options=["-DN=12345"]).decode()
    assert "12345" in ptx


@pytest.mark.parametrize(
    "header, use",
    [
        ("cuda_fp16.h", "__half h = __float2half(x[0]); x[0] = __half2float(__hmul(h, h));"),
        ("cuda_bf16.h", "__nv_bfloat16 b = __float2bfloat16(x[0]); x[0] = __bfloat162float(b);"),
        ("cuda/std/complex", "cuda::std::complex<float> c(x[0], 1.0f); x[0] = cuda::std::abs(c);"),
        ("cuda/std/type_traits", 'static_assert(cuda::std::is_same<float, float>::value, "");'),
        ("cuda/std/limits", "x[0] = cuda::std::numeric_limits<float>::max();"),
        ("cuda_fp8.h", "__nv_fp8_e4m3 f(x[0]); x[0] = float(f);"),
        ("cooperative_groups.h", "cooperative_groups::this_thread_block().sync();"),
        (
            "cub/block/block_reduce.cuh",
            "typedef cub::BlockReduce<float, 128> R; __shared__ typename "
            "R::TempStorage t; x[0] = R(t).Sum(x[threadIdx.x]);",
        ),
    ],
)
def test_cuda_headers_from_the_wheels(header, use):
    source = f"#include <{header}>\n__global__ void k(float *x) {{ {use} }}\n"
    assert compiler.compile(source, arch="sm_80")[:4] == b"\x7fELF"  # extern "C" after the include
    ptx = compiler.compile(source, arch="compute_80", no_extern_c=True).decode()
    assert ".entry _Z1kPf(" in ptx  # C++ linkage as asked


def test_user_headers(tmp_path, monkeypatch):
    (tmp_path / "inc" / "sub").mkdir(parents=True)
    (tmp_path / "inc" / "scale.h").write_text(
        '#include "sub/factor.h"\n__device__ float scale(float v) { return v * FACTOR; }\n'
    )
    (tmp_path / "inc" / "sub" / "factor.h").write_text("#define FACTOR 7.0f\n")
    source = '#include "scale.h"\n__global__ void k(float *x) { x[0] = scale(x[0]); }\n'
    assert compiler.compile(source, arch="sm_80", include_dirs=[str(tmp_path / "inc")])[:4] == b"\x7fELF"
    with pytest.raises(compiler.CompileError, match="scale.h"):
        compiler.compile(source, arch="sm_80")  # not searched without include_dirs ...
    monkeypatch.chdir(tmp_path / "inc")
    with pytest.raises(compiler.CompileError, match="scale.h"):
        compiler.compile(source, arch="sm_80")  # ... not even in the working directory


def test_a_header_of_a_wheel_not_installed_names_the_pip_command(monkeypatch):
    # NVRTC says "cannot open source file" (CUDA 12 and 13 alike); the error adds which
    # header wheel is missing and the command that installs it.
    runtime, cccl = headers.HEADER_WHEELS[CUDA_MAJOR][:2]
    monkeypatch.setitem(headers.HEADER_WHEELS, CUDA_MAJOR, [runtime, ("not/installed", *cccl[1:])])
    headers._find.cache_clear()
    try:
        with pytest.raises(compiler.CompileError) as error:
            compiler.compile("#include <cuda/std/complex>\n__global__ void k() {}\n", arch="sm_80", cache_dir=False)
    finally:
        monkeypatch.undo()
        headers._find.cache_clear()
    assert 'open source file "cuda/std/complex"' in error.value.log
    assert f"CUDA headers not installed: cuda/std/type_traits ({cccl[2]}: pip install" in str(error.value)


C_LIBRARY_USES = {  # header: a use of what kernels take from it
    "stdio.h": 'printf("%d\\n", threadIdx.x);',
    "stdlib.h": "int *p = (int *)malloc(4); free(p);",
    "assert.h": "assert(x[0] == 0.0f);",
    "string.h": "memset(x, 0, 4);",
    "stddef.h": "size_t n = sizeof(float); x[0] = n;",
    "stdbool.h": "bool b = true; x[0] = b;",
    "math.h": "x[0] = sinf(M_PI_2) + INFINITY;",
    "stdint.h": "uint32_t u = UINT32_MAX; int64_t i = INT64_MIN; x[0] = u + i;",
    "limits.h": "x[0] = INT_MAX + CHAR_BIT;",
    "float.h": "x[0] = FLT_MAX * FLT_EPSILON;",
}
CXX_LIBRARY_USES = {  # C++'s spelling of each: the same names, and in std
    "cstdio": 'std::printf("%d\\n", threadIdx.x);',
    "cstdlib": "int *p = (int *)std::malloc(4); std::free(p); x[0] = std::abs(-1);",
    "cassert": "assert(x[0] == 0.0f);",
    "cstring": "std::memset(x, 0, 4);",
    "cstddef": "std::size_t n = sizeof(float); x[0] = n;",
    "cmath": "x[0] = std::sqrt(x[1]) + std::fabs(M_PI) + std::isnan(x[2]) + sinf(1.0f);",
    "cstdint": "std::uint32_t u = UINT32_MAX; std::int64_t i = INT64_MIN; x[0] = u + i;",
    "climits": "x[0] = INT_MAX + CHAR_BIT;",
    "cfloat": "x[0] = FLT_MAX * FLT_EPSILON;",
}


@pytest.mark.parametrize("header, use", sorted({**C_LIBRARY_USES, **CXX_LIBRARY_USES}.items()))
def test_c_library_headers_kernels_include_compile(header, use):
    """NVRTC has none of them: pyctk ships small ones (pyctk/_pycuda/compiling/libc), searched last."""
    source = f"#include <{header}>\n__global__ void k(float *x) {{ {use} }}\n"
    assert compiler.compile(source, arch="sm_80")[:4] == b"\x7fELF"


def test_nvccs_implicit_host_types_need_no_include():
    """nvcc's host headers define uint, ushort and ulong for every kernel (PyCUDA's
    matrixmul_tiled.py uses uint); NVRTC's compile gets them too, at glibc's widths, and the
    error lines stay the source's own."""
    source = "__global__ void k(uint *a, ushort *b, ulong *c) { a[0] = sizeof(uint); b[0] = 2; c[0] = 3; }\n"
    assert compiler.compile(source, arch="sm_80")[:4] == b"\x7fELF"
    sizes = 'static_assert(sizeof(uint) == 4 && sizeof(ushort) == 2 && sizeof(ulong) == 8, "widths");\n'
    assert compiler.compile(sizes + "__global__ void k() {}\n", arch="sm_80")[:4] == b"\x7fELF"
    with pytest.raises(compiler.CompileError, match=r"kernel.cu\(2\): error"):
        compiler.compile("__global__ void k(uint *a)\n{ a[0] = missing; }\n", arch="sm_80")
    with pytest.raises(compiler.CompileError, match=r"kernel.cu\(2\): error"):
        compiler.compile("__global__ void k(uint *a)\n{ a[0] = missing; }\n", arch="sm_80", no_extern_c=True)


def test_c_library_values_are_glibcs_on_lp64_linux():
    defined = {}
    for name in os.listdir(headers.LIBC_HEADERS):
        with open(os.path.join(headers.LIBC_HEADERS, name)) as file:
            for line in file:
                parts = line.split(None, 2)
                if len(parts) == 3 and parts[0] == "#define":
                    defined[parts[1]] = parts[2].strip()

    def value(macro):  # a macro's value, its macros expanded and C's suffixes (U, L, F) dropped
        text = re.sub(
            r"\b[A-Z_][A-Z0-9_]*\b", lambda m: f"({value(m[0])})" if m[0] in defined else m[0], defined[macro]
        )
        return eval(re.sub(r"(\d)[FfUuLl]+\b", r"\1", text))  # noqa: S307 (our own headers)

    for bits in (8, 16, 32, 64):
        signed, unsigned = np.iinfo(f"int{bits}"), np.iinfo(f"uint{bits}")
        assert (value(f"INT{bits}_MIN"), value(f"INT{bits}_MAX"), value(f"UINT{bits}_MAX")) == (
            signed.min,
            signed.max,
            unsigned.max,
        )
    assert (value("INT_MIN"), value("INT_MAX"), value("UINT_MAX")) == (-(2**31), 2**31 - 1, 2**32 - 1)
    assert (value("LONG_MIN"), value("ULONG_MAX"), value("LLONG_MAX")) == (-(2**63), 2**64 - 1, 2**63 - 1)
    assert np.float32(value("FLT_MAX")) == np.finfo(np.float32).max
    assert np.float32(value("FLT_EPSILON")) == np.finfo(np.float32).eps
    assert value("DBL_MAX") == np.finfo(np.float64).max and value("DBL_EPSILON") == np.finfo(np.float64).eps
    assert value("M_PI") == math.pi and value("M_E") == math.e and value("M_SQRT2") == math.sqrt(2)


def test_a_kernels_own_c_library_header_wins(tmp_path):
    (tmp_path / "stdint.h").write_text("typedef int my_own_int;\n")
    source = "#include <stdint.h>\n__global__ void k(int *x) { my_own_int i = 1; x[0] = i; }\n"
    assert compiler.compile(source, arch="sm_80", include_dirs=[str(tmp_path)])[:4] == b"\x7fELF"
    with pytest.raises(compiler.CompileError, match="my_own_int"):
        compiler.compile(source, arch="sm_80")  # pyctk's own stdint.h has no such type


def test_name_expressions_instantiate_templates():
    source = "template <typename T> __global__ void fill(T *x, T v) { x[threadIdx.x] = v; }"
    program = compiler._build(source, None, True, "compute_80", (), ["fill<float>", "fill<double>"], False)
    assert program.lowered == {"fill<float>": "_Z4fillIfEvPT_S0_", "fill<double>": "_Z4fillIdEvPT_S0_"}
    assert program.kernels == {
        "_Z4fillIfEvPT_S0_": [Param("int", 8), Param("float", 4)],
        "_Z4fillIdEvPT_S0_": [Param("int", 8), Param("float", 8)],
    }
    with pytest.raises(ValueError, match="no_extern_c=True"):
        compiler.compile(source, arch="sm_80", name_expressions=["fill<float>"])


def test_kernel_parameters_from_the_ptx():
    source = """#include <cuda_fp16.h>
    struct S { float a; double b; };
    __global__ void k(float *p, int i, unsigned u, float f, double d, __half h, S s, unsigned char c,
                      long long q, float4 v, bool b, short sh) {}"""
    program = compiler._build(source, None, False, "sm_80", (), (), False)
    assert program.kernels["k"] == [
        Param("int", 8),
        Param("int", 4),
        Param("int", 4),
        Param("float", 4),
        Param("float", 8),
        Param("bytes", 2),
        Param("bytes", 16),
        Param("int", 1),
        Param("int", 8),
        Param("bytes", 16),
        Param("int", 1),
        Param("int", 2),
    ]


def test_types_are_checked():
    for bad in (None, 42, ["-DX"], b"src"):
        with pytest.raises(TypeError, match="source"):
            compiler.compile(bad, arch="sm_80")
    with pytest.raises(TypeError, match="options must be a list"):
        compiler.compile(ADD, arch="sm_80", options="-DX=1")
    with pytest.raises(TypeError, match="include_dirs"):
        compiler.compile(ADD, arch="sm_80", include_dirs="/usr/include")


# --- PyCUDA's extern "C" wrapping ---------------------------------------------------------------


@pytest.mark.parametrize(
    "source, prelude",
    [
        ("__global__ void k() {}", 0),
        ("#include <cuda_fp16.h>\n\n// comment\n__global__ void k() {}", 3),
        ("/* a\n   block */\n#define A \\\n  1\n__global__ void k() {}", 4),
        ("/* one line */ __global__ void k() {}", 0),
        ("#include <a.h>\n/* c */ int x;\n", 1),
        ("#include <a.h>\n", 1),
    ],
)
def test_prelude_stays_outside_extern_c(source, prelude):
    assert compiler._prelude_length(source.splitlines(keepends=True)) == prelude
    wrapped = compiler._with_c_linkage(source)
    lines = source.splitlines(keepends=True)
    assert wrapped.startswith("".join(lines[:prelude]) + 'extern "C" {\n' + f'#line {prelude + 1} "kernel.cu"\n')


# --- architectures for a GPU ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "archs, gpu, target",
    [
        ([75, 80, 86, 89, 90, 100, 120], 90, "sm_90"),
        ([75, 80, 86, 90, 100, 120], 89, "sm_86"),  # SASS of an older minor runs on a later one
        ([75, 80, 86, 89, 90, 100, 120], 121, "sm_120"),
        ([75, 80, 86, 89, 90], 100, "compute_90"),  # a GPU newer than NVRTC: PTX for the driver
        ([75, 80, 86, 89, 90], 95, "sm_90"),  # any later minor of the major
        ([75, 80, 90, 100], 110, "compute_100"),
    ],
)
def test_target_for_a_gpu(monkeypatch, archs, gpu, target):
    monkeypatch.setattr(_nvrtc, "supported_archs", lambda: archs)
    assert compiler._target(f"gpu:{gpu}") == target


def test_gpu_older_than_nvrtc(monkeypatch):
    monkeypatch.setattr(_nvrtc, "supported_archs", lambda: [75, 80])
    with pytest.raises(compiler.UnsupportedError, match="sm_70.*sm_75 and newer"):
        compiler._target("gpu:70")


# --- NVRTC not installed ----------------------------------------------------------------------------


def test_missing_nvrtc_names_the_pip_command(tmp_path):
    """The loader's real search for NVRTC over an empty layout, in a fresh process (NVRTC not
    loaded); the dynamic linker's own search (a toolkit in its path) is made to find nothing
    too. The other libraries load as ever, so pyctk.info() gets as far as asking for NVRTC."""
    empty = tmp_path / "site-packages"
    empty.mkdir()
    result = loader_fakes.without_library(
        "nvrtc",
        empty,
        'pyctk.compiler.compile("__global__ void k() {}", arch="sm_80", cache_dir=False)',
        after='[pyctk.info()["runtime_version"], pyctk.info()["nvrtc_version"]]',
    )
    message = result["message"]
    assert result["oserror"]
    assert f'pip install "pyctk-cu{CUDA_MAJOR}[nvrtc]"' in message
    assert "NVRTC, the CUDA run-time compiler, which is not installed" in message
    assert f"{empty}/" in message and "libnvrtc.so" in message and "not there" in message
    runtime, nvrtc = result["after"]  # pyctk.info() loaded the runtime, and found no NVRTC
    assert runtime is not None and nvrtc is None


def test_info_gives_nvrtc_s_version():
    assert pyctk.info()["nvrtc_version"] == "{}.{}".format(*_nvrtc.version())


def test_value_bytes_checks_exact_types():
    assert _kernel_args.value_bytes("k", 0, np.float32(1.5), Param("float", 4)) == np.float32(1.5).tobytes()
    assert _kernel_args.value_bytes("k", 0, np.uint32(7), Param("int", 4)) == b"\x07\0\0\0"
    assert _kernel_args.value_bytes("k", 0, np.float16(1), Param("bytes", 2)) == np.float16(1).tobytes()
    assert _kernel_args.value_bytes("k", 0, np.int64(3), None) == np.int64(3).tobytes()
    with pytest.raises(TypeError, match=r"argument 1 is a 32-bit integer in the kernel; got numpy.int64"):
        _kernel_args.value_bytes("k", 1, np.int64(3), Param("int", 4))
    with pytest.raises(TypeError, match="32-bit float.*numpy.float32"):
        _kernel_args.value_bytes("k", 0, np.int32(3), Param("float", 4))
    with pytest.raises(TypeError, match="Python int.*numpy.int32 or numpy.uint32"):
        _kernel_args.value_bytes("k", 2, 5, Param("int", 4))
    with pytest.raises(TypeError, match="cannot pass str"):
        _kernel_args.value_bytes("k", 0, "x", Param("int", 8))
