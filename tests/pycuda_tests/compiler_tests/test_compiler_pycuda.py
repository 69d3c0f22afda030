"""PyCUDA's pycuda.compiler and JIT linking on the CPU: real NVRTC and real nvJitLink, no GPU.

Covered: SourceModule/compile/DynamicModule/DynamicSourceModule/Linker/module_from_buffer
with PyCUDA's signatures, called positionally; nvcc= ignored; keep= leaving the source,
log, PTX and CUBIN; arch=/code=/target= choosing the SASS (read from the CUBIN's ELF
header) and __CUDA_ARCH__; DEFAULT_NVCC_FLAGS from the environment; nvcc options
translated, dropped with a warning, or refused; Linker linking two relocatable sources
into one CUBIN (its symbols read from the ELF), its options, message handler and errors;
jit_option and jit_input_type against the cuda.h of the runtime wheel; nvJitLink missing
(the loader's real search over an empty layout, in a fresh process); DynamicSourceModule
compiled and linked with the wheel's libcudadevrt.a up to the load, and libcudadevrt.a
missing.
"""

from __future__ import annotations

import ctypes
import inspect
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import pyctk
import pyctk.driver as cuda
from pyctk import compiler
from pyctk._build_config import CUDA_MAJOR
from pyctk._cuda import nvjitlink as _nvjitlink
from pyctk._pycuda.compiling import headers as _headers
from pyctk._pycuda.compiling import nvcc_options as _nvcc_options
from pyctk._pycuda.kernels import linking as _linking
from pyctk._pycuda.kernels import modules as _modules
from support import loader_fakes
from support.linked_sources import HELPERS, KERNELS

ADD = """
__global__ void add(int *x, int *y, int *z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}"""
DYNAMIC = """
__global__ void child(int *x, int n) { if (threadIdx.x < n) x[threadIdx.x] *= 2; }
__global__ void parent(int *x, int n) { child<<<1, n>>>(x, n); }
"""


def cubin_arch(cubin: bytes) -> set[int]:
    """The SM number an ELF CUBIN's e_flags carry: the low byte (CUDA 12) or the second (13)."""
    flags = struct.unpack_from("<I", cubin, 48)[0]
    return {flags & 0xFF, (flags >> 8) & 0xFF}


def elf_symbols(elf: bytes) -> set[str]:
    """The names of the symbols an ELF file defines (its SHT_SYMTAB, st_shndx != 0)."""
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind == 2:  # SHT_SYMTAB
            strtab = sections[link][4]
            for position in range(offset, offset + size, entsize):
                name, _, _, shndx = struct.unpack_from("<IBBH", elf, position)
                if shndx:
                    names.add(elf[strtab + name : elf.index(b"\0", strtab + name)].decode())
    return names


def cuda_h_enum(enum_name: str, type_name: str) -> dict[str, int]:
    """NAME -> value of ``typedef enum <enum_name> {...} <type_name>;`` in the runtime wheel's cuda.h."""
    header = Path(_headers.header_folders()[0].path, "cuda.h").read_text()
    body = header[header.index(f"typedef enum {enum_name}") : header.index(f"}} {type_name};")]
    pattern = r"^\s+CU_JIT_(?:INPUT_)?(\w+) = (\d+)"
    return {name: int(value) for name, value in re.findall(pattern, body, re.MULTILINE)}


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    monkeypatch.setenv("PYCTK_DISABLE_CACHE", "1")


# --- PyCUDA's signatures ------------------------------------------------------------------------

SIGNATURES = {  # PyCUDA's parameters, in order, with their defaults
    compiler.SourceModule: [
        "source",
        ("nvcc", "nvcc"),
        ("options", None),
        ("keep", False),
        ("no_extern_c", False),
        ("arch", None),
        ("code", None),
        ("cache_dir", None),
        ("include_dirs", None),
    ],
    compiler.compile: [
        "source",
        ("nvcc", "nvcc"),
        ("options", None),
        ("keep", False),
        ("no_extern_c", False),
        ("arch", None),
        ("code", None),
        ("cache_dir", None),
        ("include_dirs", None),
        ("target", "cubin"),
    ],
    compiler.DynamicModule: [
        ("nvcc", "nvcc"),
        ("link_options", None),
        ("keep", False),
        ("no_extern_c", False),
        ("arch", None),
        ("code", None),
        ("cache_dir", None),
        ("include_dirs", None),
        ("message_handler", None),
        ("log_verbose", False),
        ("cuda_libdir", None),
    ],
    compiler.DynamicSourceModule: [
        "source",
        ("nvcc", "nvcc"),
        ("options", None),
        ("keep", False),
        ("no_extern_c", False),
        ("arch", None),
        ("code", None),
        ("cache_dir", None),
        ("include_dirs", None),
        ("cuda_libdir", None),
    ],
    cuda.Linker: [("message_handler", None), ("options", None), ("log_verbose", False)],
    cuda.module_from_buffer: ["buffer", ("options", None), ("message_handler", None)],
}


@pytest.mark.parametrize("function", SIGNATURES, ids=lambda f: f.__name__)
def test_signatures_are_pycudas(function):
    parameters = [p for p in inspect.signature(function).parameters.values() if p.name != "self"]
    positional = [p for p in parameters if p.kind == p.POSITIONAL_OR_KEYWORD]
    assert [p.name if p.default is p.empty else (p.name, p.default) for p in positional] == SIGNATURES[function]
    assert all(p.kind == p.KEYWORD_ONLY for p in parameters[len(positional) :])  # pyctk's own after them


def test_compile_positionally_as_pycuda_and_nvcc_is_ignored():
    ptx = compiler.compile(
        ADD, "/no/such/nvcc", ["-DUNUSED=1"], False, False, "sm_80", None, False, None, "ptx"
    ).decode()
    assert ".target sm_80" in ptx and ".visible .entry add(" in ptx
    cubin = compiler.compile(ADD, "nvcc", None, False, True, "sm_86", None, False, [])
    assert 86 in cubin_arch(cubin) and "_Z3addPiS_S_i" in elf_symbols(cubin)  # no_extern_c: C++ names
    assert compiler.compile(ADD, arch="sm_80", name_expressions=())[:4] == b"\x7fELF"


# --- keep= ----------------------------------------------------------------------------------------


def test_keep_leaves_source_log_ptx_and_cubin(capsys, tmp_path):
    cubin = compiler.compile(ADD, keep=True, arch="sm_80", cache_dir=tmp_path, options=["-DMARK=1"])
    printed = capsys.readouterr().out
    match = re.fullmatch(r"\*\*\* compiler output in (.+)\n", printed)
    assert match, printed
    folder = Path(match[1])
    try:
        assert sorted(os.listdir(folder)) == ["kernel.cu", "kernel.cubin", "kernel.log", "kernel.ptx"]
        assert (
            'extern "C" {' in (folder / "kernel.cu").read_text()
            and "z[i] = x[i] + y[i]" in (folder / "kernel.cu").read_text()
        )
        assert ".visible .entry add(" in (folder / "kernel.ptx").read_text()
        assert (folder / "kernel.cubin").read_bytes() == cubin
        assert (folder / "kernel.log").read_text() == ""
    finally:
        shutil.rmtree(folder)
    assert not (tmp_path / "kernels").exists()  # keep compiles afresh, through no cache
    compiler.compile(ADD, arch="compute_80", keep=True)
    folder = Path(capsys.readouterr().out.split(" in ", 1)[1].strip())
    assert sorted(os.listdir(folder)) == ["kernel.cu", "kernel.log", "kernel.ptx"]  # no CUBIN of PTX
    shutil.rmtree(folder)


# --- arch=, code=, target= -------------------------------------------------------------------------

ARCH_SEEN = "__device__ int arch_seen = __CUDA_ARCH__ * 1000 + 7;\n__global__ void k(int *x) { *x = arch_seen; }"


@pytest.mark.parametrize(
    "arch, code, sass, virtual",
    [
        ("sm_86", None, 86, 860),
        (None, "sm_90", 90, 900),  # no GPU: the virtual architecture is code's
        ("sm_80", "sm_80", 80, 800),
        ("compute_80", "sm_90", 90, 800),  # PTX of compute_80, compiled for sm_90 by nvJitLink
        ("sm_75", "sm_86", 86, 750),  # as nvcc: -arch sm_75 -code sm_86
    ],
)
def test_code_is_the_sass_and_arch_the_virtual_architecture(arch, code, sass, virtual):
    cubin = compiler.compile(ARCH_SEEN, arch=arch, code=code)
    assert cubin[:4] == b"\x7fELF" and sass in cubin_arch(cubin)
    assert struct.pack("<i", virtual * 1000 + 7) in cubin  # arch_seen's initial value


@pytest.mark.parametrize(
    "arch, code, target",
    [
        ("sm_90", None, "ptx"),
        ("compute_90", None, "ptx"),
        ("compute_90", None, "cubin"),
        ("sm_75", "sm_90", "ptx"),
        ("compute_90", "compute_90", "cubin"),
    ],
)
def test_ptx_targets(arch, code, target):
    virtual = arch.split("_")[1]
    ptx = compiler.compile(ARCH_SEEN, arch=arch, code=code, target=target).decode()
    assert f".target sm_{virtual}" in ptx and not ptx.endswith("\0")


@pytest.mark.parametrize(
    "arch, code, target, error, match",
    [
        ("sm_90", "sm_80", "cubin", ValueError, "code='sm_80' cannot come from arch='sm_90'"),
        ("compute_80", "compute_90", "cubin", ValueError, "cannot come from"),
        ("sm_80", "sm80", "cubin", ValueError, "code 'sm80' is not an architecture"),
        ("sm_80", None, "fatbin", pyctk.UnsupportedError, "NVRTC makes no fatbinaries"),
        ("sm_80", None, "elf", ValueError, "target must be one of 'cubin', 'ptx', 'fatbin'"),
    ],
)
def test_bad_arch_code_target(arch, code, target, error, match):
    with pytest.raises(error, match=match):
        compiler.compile(ADD, arch=arch, code=code, target=target)


# --- DEFAULT_NVCC_FLAGS ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "environ, flags",
    [
        ({}, []),
        ({"PYCUDA_DEFAULT_NVCC_FLAGS": "  -DA=1\t-use_fast_math \n"}, ["-DA=1", "-use_fast_math"]),
        ({"PYCUDA_DEFAULT_NVCC_FLAGS": "-DA=1", "PYCTK_DEFAULT_NVCC_FLAGS": "-DB=2 -lineinfo"}, ["-DB=2", "-lineinfo"]),
        ({"PYCUDA_DEFAULT_NVCC_FLAGS": "-DA=1", "PYCTK_DEFAULT_NVCC_FLAGS": ""}, []),
    ],
)
def test_default_flags_from_the_environment(environ, flags):
    assert _nvcc_options.default_flags(environ) == flags


def test_default_nvcc_flags_are_read_at_import_and_used_for_options_none(tmp_path, monkeypatch):
    done = subprocess.run(
        [sys.executable, "-c", "from pyctk import compiler; print(compiler.DEFAULT_NVCC_FLAGS)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
        env={**os.environ, "PYCUDA_DEFAULT_NVCC_FLAGS": "-DN=3 -use_fast_math"},
    )
    assert done.stdout.strip() == "['-DN=3', '-use_fast_math']", done.stderr
    source = "__global__ void k(int *x) { *x = N; }"
    monkeypatch.setattr(compiler, "DEFAULT_NVCC_FLAGS", ["-DN=424242"])
    assert b"424242" in compiler.compile(source, arch="compute_80")
    with pytest.raises(compiler.CompileError, match='identifier "N" is undefined'):
        compiler.compile(source, arch="compute_80", options=[])  # given options replace them


# --- nvcc's options -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, translated",
    [
        (["-Xptxas", "-v,-O2"], ["--ptxas-options=-v", "--ptxas-options=-O2"]),
        (["-Xptxas=-v"], ["--ptxas-options=-v"]),
        (["--ptxas-options", "-O3"], ["--ptxas-options=-O3"]),
        (["-res-usage"], ["--ptxas-options=-v"]),
        (["-std", "c++17", "--std=c++20"], ["--std=c++17", "--std=c++20"]),
        (["-rdc", "true"], ["--relocatable-device-code=true"]),
        (
            ["-lineinfo", "-use_fast_math", "-DX=1", "-I", "/inc", "-maxrregcount=32", "-G", "-w"],
            ["-lineinfo", "-use_fast_math", "-DX=1", "-I", "/inc", "-maxrregcount=32", "-G", "-w"],
        ),
    ],
)
def test_options_nvrtc_has_another_spelling_of(options, translated, recwarn):
    assert _nvcc_options.translate(options) == translated
    assert not recwarn.list


@pytest.mark.parametrize(
    "option, what",
    [
        (["-O3"], "host code"),
        (["-O", "2"], "host code"),
        (["--optimize=1"], "host code"),
        (["-g"], "-G gives device code debug information"),
        (["-m64"], "64-bit"),
        (["--compiler-options", "-fPIC,-Wall"], "host code"),
        (["-Xcompiler=-fPIC"], "host code"),
        (["-ccbin", "/usr/bin/gcc-12"], "host code"),
        (["--default-stream", "per-thread"], "host code"),
        (["-lcudadevrt"], "the host link"),
        (["-L/usr/local/cuda/lib64"], "the host link"),
        (["-Xlinker", "-rpath"], "the host link"),
        (["-Xnvlink", "-v"], "the host link"),
    ],
)
def test_host_and_link_options_are_dropped_with_a_warning(option, what):
    with pytest.warns(UserWarning, match=f"nvcc option '{re.escape(' '.join(option))}' is for .*{re.escape(what)}"):
        assert _nvcc_options.translate(["-DKEPT", *option, "-lineinfo"]) == ["-DKEPT", "-lineinfo"]


@pytest.mark.parametrize(
    "options, match",
    [
        (["--expt-relaxed-constexpr"], "'--expt-relaxed-constexpr' has no NVRTC equivalent: declare"),
        (["--extended-lambda"], "'--extended-lambda' has no NVRTC equivalent"),
        (["-arch=sm_80"], "'-arch=sm_80' has no NVRTC equivalent: pass arch="),
        (["-code", "sm_90"], "'-code sm_90' has no NVRTC equivalent: pass code="),
        (["-gencode", "arch=compute_80,code=sm_80"], "pass arch= and code="),
        (["--cubin"], "pass target="),
        (["-keep"], "pass keep=True"),
        (["-Xptxas"], "'-Xptxas' needs a value"),
    ],
)
def test_options_without_an_nvrtc_equivalent_raise(options, match):
    with pytest.raises(compiler.CompileError, match=match):
        compiler.compile(ADD, arch="sm_80", options=options)


def test_translated_options_reach_nvrtc_and_its_log_is_a_warning():
    with pytest.warns(
        UserWarning,
        match="(?s)The CUDA compiler succeeded, but said the following:.*"
        "ptxas info.*Compiling entry function 'add' for 'sm_80'",
    ):
        compiler.compile(ADD, arch="sm_80", options=["-Xptxas", "-v,-O2"])
    with pytest.raises(compiler.CompileError, match="unrecognized option -no-such-option"):
        compiler.compile(ADD, arch="sm_80", options=["-no-such-option"])  # not in the table: NVRTC says


# --- Linker -----------------------------------------------------------------------------------------


def rdc_ptx(source: str, arch: str = "sm_80") -> bytes:
    return compiler.compile(source, options=["-rdc=true"], arch=arch, target="ptx")


def test_linker_links_two_relocatable_sources_into_one_cubin():
    calls = []
    linker = cuda.Linker(lambda *report: calls.append(report), arch="sm_80")
    linker.add_data(rdc_ptx(HELPERS), cuda.jit_input_type.PTX, "helpers.ptx")
    linker.add_data(bytearray(rdc_ptx(KERNELS)), cuda.jit_input_type.PTX, "kernels.ptx")  # any buffer
    cubin = linker.link_cubin()
    assert cubin[:4] == b"\x7fELF" and 80 in cubin_arch(cubin)
    assert {"apply", "scale", "calls"} <= elf_symbols(cubin)
    assert calls == [(True, "", "")]


def test_linker_takes_relocatable_cubins_and_files(tmp_path):
    helpers = compiler.compile(HELPERS, options=["-rdc=true"], arch="sm_90")
    assert "scale" in elf_symbols(helpers) and "apply" not in elf_symbols(helpers)
    (tmp_path / "kernels.cubin").write_bytes(compiler.compile(KERNELS, options=["-rdc=true"], arch="sm_90"))
    linker = cuda.Linker(options=[(cuda.jit_option.TARGET, 90)], log_verbose=True)  # no GPU asked
    linker.add_data(helpers, cuda.jit_input_type.CUBIN)
    linker.add_file(tmp_path / "kernels.cubin", cuda.jit_input_type.CUBIN)
    cubin = linker.link_cubin()
    assert 90 in cubin_arch(cubin) and {"apply", "scale", "calls"} <= elf_symbols(cubin)


def test_link_failure_calls_the_handler_then_raises_with_the_log():
    calls = []
    linker = cuda.Linker(lambda *report: calls.append(report), arch="sm_80")
    linker.add_data(rdc_ptx(KERNELS), cuda.jit_input_type.PTX, "kernels.ptx")
    with pytest.raises(
        cuda.LogicError, match="(?s)nvJitLinkComplete: NVJITLINK_ERROR.*Undefined reference to 'scale' in 'kernels.ptx'"
    ) as info:
        linker.link_cubin()
    assert info.value.status.startswith("NVJITLINK_ERROR_")
    ((success, _, error_log),) = calls
    assert not success and "Undefined reference to 'scale'" in error_log


def test_bad_inputs_and_options():
    linker = cuda.Linker(arch="sm_80")
    with pytest.raises(ValueError, match="7 is not a valid jit_input_type"):
        linker.add_data(b"x", 7)
    linker.add_data(b"not PTX at all", cuda.jit_input_type.PTX, "garbage.ptx")
    with pytest.raises(cuda.LogicError, match="garbage.ptx"):
        linker.link_cubin()
    with pytest.raises(cuda.LogicError, match="nvJitLinkCreate.*NVJITLINK_ERROR_UNRECOGNIZED_OPTION"):
        cuda.Linker(options=["-no-such-option"], arch="sm_80").link_cubin()
    with pytest.raises(FileNotFoundError):
        linker.add_file("/no/such/file.ptx", cuda.jit_input_type.PTX)


def test_jit_options_for_nvjitlink():
    jit = cuda.jit_option
    assert _linking.link_options(
        [
            (jit.MAX_REGISTERS, 32),
            (jit.OPTIMIZATION_LEVEL, 3),
            (jit.TARGET, 86),
            (jit.TARGET, 0x10000 | 90),
            (jit.TARGET_FROM_CUCONTEXT, 1),
            (jit.FALLBACK_STRATEGY, 0),
            (jit.GENERATE_LINE_INFO, 1),
            (jit.GENERATE_DEBUG_INFO, 0),
            (jit.LOG_VERBOSE, True),
            (jit.LTO, 1),
            (jit.FTZ, 1),
            [jit.PREC_DIV, 0],
            (jit.FMA, 1),
            (jit.OPTIMIZE_UNUSED_DEVICE_VARIABLES, 1),
            "-Xptxas=-v",
        ]
    ) == [
        "-maxrregcount=32",
        "-Xptxas=-O3",
        "-arch=sm_86",
        "-arch=sm_90a",
        "-lineinfo",
        "-verbose",
        "-lto",
        "-ftz=1",
        "-prec-div=0",
        "-fma=1",
        "-optimize-unused-variables",
        "-Xptxas=-v",
    ]
    with pytest.raises(ValueError, match="THREADS_PER_BLOCK has no nvJitLink equivalent"):
        cuda.Linker(options=[(jit.THREADS_PER_BLOCK, 128)], arch="sm_80")
    with pytest.raises(TypeError, match=r"\(jit_option, int\) pairs"):
        cuda.Linker(options=[(jit.MAX_REGISTERS, 32, 1)], arch="sm_80")
    assert cuda.Linker(options=[(jit.TARGET, 86)], arch="sm_90").options == ["-arch=sm_90"]


@pytest.mark.parametrize(
    "enum, c_enum",
    [
        (cuda.jit_option, ("CUjit_option_enum", "CUjit_option")),
        (cuda.jit_input_type, ("CUjitInputType_enum", "CUjitInputType")),
    ],
)
def test_enums_are_cuda_h_s(enum, c_enum):
    header = cuda_h_enum(*c_enum)
    header.pop("NUM_INPUT_TYPES", None)
    ours = {name: member.value for name, member in enum.__members__.items()}
    assert header and {name: ours[name] for name in header if name in ours} == {
        name: value for name, value in header.items() if name in ours
    }
    # Names one side lacks are those of a newer cuda.h than the other's, at the end of the enum.
    assert all(value > max(ours.values()) for name, value in header.items() if name not in ours)
    newer = [member for member in enum if member.name not in header and member.name != "LTO_IR"]
    assert all(member > max(header.values()) for member in newer)
    assert cuda.jit_input_type.LTO_IR is cuda.jit_input_type.NVVM


def test_jit_targets_and_fallbacks_are_cuda_h_s():
    """The CUjit_target values of the installed runtime's cuda.h, its "a" and "f" forms computed
    from CUDA's bases as the header writes them (a newer minor may name architectures
    jit_target lacks: the driver takes any number), and CUjit_fallback."""
    header = Path(_headers.header_folders()[0].path, "cuda.h").read_text()
    body = header[header.index("typedef enum CUjit_target_enum") : header.index("} CUjit_target;")]
    values = {
        name: int(value, 16)
        for name, value in re.findall(r"#define (CU_COMPUTE_\w+_TARGET_BASE)\s+0x([0-9a-fA-F]+)", header)
    }
    for name, expression in re.findall(r"^\s+(CU_TARGET_COMPUTE_\w+)\s*=\s*([\w +]+?)\s*,", body, re.MULTILINE):
        values[name] = sum(
            values[term] if term in values else int(term) for term in map(str.strip, expression.split("+"))
        )
    targets = {
        name.removeprefix("CU_TARGET_"): value for name, value in values.items() if name.startswith("CU_TARGET_")
    }
    ours = {member.name: member.value for member in cuda.jit_target}
    common = targets.keys() & ours.keys()
    assert {name: ours[name] for name in common} == {name: targets[name] for name in common}
    cuda_12_0 = {
        f"COMPUTE_{arch}" for arch in (30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90)
    } | {"COMPUTE_90A"}
    assert cuda_12_0 <= common and cuda.jit_target.COMPUTE_90A == 0x10000 + 90
    fallback = header[header.index("typedef enum CUjit_fallback_enum") : header.index("} CUjit_fallback;")]
    assert re.findall(r"CU_(PREFER_\w+)", fallback) == [member.name for member in cuda.jit_fallback]
    assert (cuda.jit_fallback.PREFER_PTX, cuda.jit_fallback.PREFER_BINARY) == (0, 1)  # 0, then the next


def test_code_above_arch_without_nvjitlink_needs_it(monkeypatch):
    def missing():
        raise pyctk.LibraryNotFoundError("nvJitLink is not installed")

    monkeypatch.setattr(_nvjitlink, "library", missing)
    assert compiler.compile(ADD, arch="sm_80", code="sm_80")[:4] == b"\x7fELF"  # NVRTC alone
    with pytest.raises(pyctk.LibraryNotFoundError, match="nvJitLink"):
        compiler.compile(ADD, arch="compute_80", code="sm_90")


# --- nvJitLink not installed ------------------------------------------------------------------------


def test_missing_nvjitlink_names_the_pip_commands(tmp_path):
    """The loader's real search for nvJitLink over an empty layout, in a fresh process (not
    loaded there), the dynamic linker's own search made to find nothing too."""
    empty = tmp_path / "site-packages"
    empty.mkdir()
    result = loader_fakes.without_library("nvJitLink", empty, 'pyctk.driver.Linker(arch="sm_80")')
    message = result["message"]
    assert result["oserror"]
    assert f'pip install "pyctk-cu{CUDA_MAJOR}[nvjitlink]"' in message
    wheel = "nvidia-nvjitlink-cu12" if CUDA_MAJOR == 12 else "nvidia-nvjitlink"
    assert f'pip install "{wheel}>={CUDA_MAJOR},<{CUDA_MAJOR + 1}"' in message
    spec_dir = "nvidia/nvjitlink/lib" if CUDA_MAJOR == 12 else "nvidia/cu13/lib"
    assert f"{empty}/{spec_dir}/libnvJitLink.so.{CUDA_MAJOR} (site-packages): not there" in message
    assert "nvJitLink, NVIDIA's device-code linker, which is not installed" in message


# --- DynamicModule, DynamicSourceModule -------------------------------------------------------------


@pytest.fixture
def loaded(monkeypatch):
    """The images Linker.link_module would load on a GPU."""
    images = []

    class Loaded:
        def __init__(self, image):
            images.append(image)

        def get_function(self, name):
            return name

    monkeypatch.setattr(_linking, "Module", Loaded)
    return images


def test_dynamic_source_module_links_the_device_runtime(loaded, recwarn):
    module = compiler.DynamicSourceModule(DYNAMIC, arch="sm_80", options=["-lcudadevrt", "-DUNUSED"])
    (cubin,) = loaded
    assert 80 in cubin_arch(cubin) and module.linker is None
    symbols = elf_symbols(cubin)
    assert {"parent", "child"} <= symbols
    assert any("LaunchDevice" in symbol for symbol in symbols)  # the device runtime, from libcudadevrt.a
    assert module.get_function("parent") == "parent"
    assert not recwarn.list  # -lcudadevrt is what it links: no warning that it is dropped


def test_a_kernel_launch_in_a_kernel_needs_rdc():
    with pytest.raises(compiler.CompileError, match="device-side kernel launch could not be processed"):
        compiler.compile(DYNAMIC, arch="sm_80")


def test_dynamic_module_chains_and_links_once(loaded, tmp_path):
    handled = []
    module = compiler.DynamicModule(arch="sm_86", message_handler=lambda *r: handled.append(r))
    with pytest.raises(cuda.LogicError, match="not linked yet: call link"):
        module.get_function("apply")
    (tmp_path / "helpers.ptx").write_bytes(rdc_ptx(HELPERS, "sm_86"))
    assert module.add_file(tmp_path / "helpers.ptx", cuda.jit_input_type.PTX) is module
    assert module.add_source(KERNELS, nvcc_options=["-rdc=true"], name="kernels.ptx").link() is module
    assert 86 in cubin_arch(loaded[0]) and {"apply", "scale"} <= elf_symbols(loaded[0])
    assert [success for success, _, _ in handled] == [True]
    with pytest.raises(cuda.LogicError, match="linked already"):
        module.add_data(b"", cuda.jit_input_type.PTX)


def test_the_device_runtime_comes_from_the_runtime_wheel(tmp_path, monkeypatch):
    found = _linking.find_stdlib("cudadevrt")
    runtime = pyctk._cuda.loader.library_spec("cudart", CUDA_MAJOR)
    assert found.endswith(f"/{runtime.wheel_dir}/libcudadevrt.a") and Path(found).read_bytes()[:8] == b"!<arch>\n"
    assert _linking.find_stdlib("cudadevrt", Path(found).parent) == str(Path(found))
    with pytest.raises(pyctk.LibraryNotFoundError) as info:
        compiler.DynamicSourceModule(DYNAMIC, arch="sm_80", cuda_libdir=tmp_path)
    assert f"{tmp_path}/libcudadevrt.a: not there" in str(info.value)
    assert runtime.pip_install in str(info.value) and isinstance(info.value, OSError)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    for variable in ("CUDA_PATH", "CUDA_HOME"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(
        pyctk.LibraryNotFoundError, match=re.escape(f"{tmp_path}/{runtime.wheel_dir}/libcudadevrt.a: not there")
    ):
        _linking.find_stdlib("cudadevrt")


# --- module_from_buffer's options, before the driver ----------------------------------------------


def test_jit_options_and_logs_as_the_driver_takes_them():
    jit = cuda.jit_option
    arguments = _modules._JitArguments([(jit.MAX_REGISTERS, 32), [jit.LOG_VERBOSE, True]])
    assert list(arguments.keys) == [3, 4, 5, 6, 0, 12] and arguments.count == 6
    assert list(arguments.values) == [
        ctypes.addressof(arguments.info),
        32768,
        ctypes.addressof(arguments.error),
        32768,
        32,
        1,
    ]
    arguments.info.value, arguments.values[1] = b"ptxas info: used 8 registers", 28  # as the driver does
    assert arguments.logs() == ("ptxas info: used 8 registers", "")
    for refused in (jit.INFO_LOG_BUFFER, jit.ERROR_LOG_BUFFER_SIZE_BYTES, jit.GLOBAL_SYMBOL_NAMES):
        with pytest.raises(ValueError, match=f"jit_option.{refused.name} cannot be given"):
            _modules._JitArguments([(refused, 0)])
    with pytest.raises(TypeError, match=r"\(jit_option, int\) pairs"):
        _modules._JitArguments([jit.MAX_REGISTERS])
    with pytest.raises(ValueError, match="99 is not a valid jit_option"):
        _modules._JitArguments([(99, 0)])


def test_names_are_exported():
    assert {"SourceModule", "DynamicModule", "DynamicSourceModule", "compile", "DEFAULT_NVCC_FLAGS"} <= set(
        compiler.__all__
    )
    assert {"Linker", "jit_input_type", "jit_option"} <= set(cuda.__all__)


# --- where nvJitLink is found ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "major, os_name, file_name, wheel_dir, pip_install",
    [
        (12, "linux", "libnvJitLink.so.12", "nvidia/nvjitlink/lib", 'pip install "nvidia-nvjitlink-cu12>=12,<13"'),
        (13, "linux", "libnvJitLink.so.13", "nvidia/cu13/lib", 'pip install "nvidia-nvjitlink>=13,<14"'),
        (12, "win32", "nvJitLink_120_0.dll", "nvidia/nvjitlink/bin", 'pip install "nvidia-nvjitlink-cu12>=12,<13"'),
        (13, "win32", "nvJitLink_130_0.dll", "nvidia/cu13/bin/x86_64", 'pip install "nvidia-nvjitlink>=13,<14"'),
    ],
)
def test_nvjitlink_library_spec(major, os_name, file_name, wheel_dir, pip_install):
    spec = pyctk._cuda.loader.library_spec("nvJitLink", major, os_name)
    assert (spec.file_name, spec.wheel_dir, spec.pip_install) == (file_name, wheel_dir, pip_install)


def test_nvjitlink_is_loaded_from_its_wheel():
    _nvjitlink.library()
    (loaded,) = [library for library in pyctk._cuda.loader.loaded_libraries() if library.name == "nvJitLink"]
    spec = pyctk._cuda.loader.library_spec("nvJitLink", CUDA_MAJOR)
    assert loaded.found_via == "site-packages" and loaded.path.endswith(f"/{spec.wheel_dir}/{spec.file_name}")
