"""The built libgpumatmul.so itself: its dynamic section, the CUDA entry points it may use,
its embedded kernel images, the installed files, and its C API used from a C program built
with gcc. The ABI as a contract is tests/clib_tests/test_abi.py's."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess

import pytest

import pyctk
from pyctk._build_config import CUDA_MAJOR, VERSION
from pyctk._cuda import library as _library
from pyctk._cuda import loader as _loader
from pyctk._cuda import status as _status
from pyctk._cuda.errors import CONTEXT_LOST_ERRORS
from support.gpu_presence import gpu_unavailable_reason
from support.paths import DATA, EXPORTS, ROOT
from support.released_abi import abi, released_constants

LIBRARY = _loader.gpumatmul_path()
HEADER_DIR = LIBRARY.parent / "include"
# The oldest versions pyproject.toml admits (nvidia-cuda-runtime(-cu12)>=N.0, nvidia-cublas(-cu12)>=N.0).
MINIMUM = {
    "libcudart": f"cudart-{CUDA_MAJOR}.0.txt",
    "libcublas": f"cublas-{CUDA_MAJOR}.0.txt",
    "libcublasLt": f"cublasLt-{CUDA_MAJOR}.0.txt",
}


def tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        pytest.fail(f"{name} is needed (apt-get install binutils gcc)")
    return path


def readelf_dynamic() -> str:
    return subprocess.run([tool("readelf"), "-d", str(LIBRARY)], check=True, capture_output=True, text=True).stdout


def test_needs_runtime_and_cublas_of_its_major_and_not_the_driver():
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", readelf_dynamic())
    assert {f"lib{name}.so.{CUDA_MAJOR}" for name in ("cudart", "cublas", "cublasLt")} <= set(needed)
    assert not [n for n in needed if n.startswith(("libcuda.so", "libpython", "libstdc++"))], needed


def test_runpath_is_relative_to_the_library():
    runpath = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r\w*path: \[(.+?)\]", readelf_dynamic())
    assert runpath, "no RUNPATH: C programs would not find the nvidia wheels"
    entries = runpath[0].split(":")
    assert all(e.startswith("$ORIGIN/") for e in entries), entries  # no build path leaked
    expected = _loader.library_spec("cudart", CUDA_MAJOR).wheel_dir
    assert f"$ORIGIN/../{expected}" in entries


def undefined_symbols() -> dict[str, set[str]]:
    """Undefined dynamic symbols by the library that provides them (from the symbol version)."""
    out = subprocess.run(
        [tool("nm"), "-D", "--undefined-only", str(LIBRARY)], check=True, capture_output=True, text=True
    ).stdout
    by_library: dict[str, set[str]] = {}
    for line in out.splitlines():
        name, _, version = line.split()[-1].partition("@")
        by_library.setdefault(version.split(".so")[0], set()).add(name)
    return by_library


def exported(list_file: str) -> set[str]:
    lines = (EXPORTS / list_file).read_text().splitlines()
    return {line for line in lines if line and not line.startswith("#")}


@pytest.mark.parametrize("library", sorted(MINIMUM))
def test_uses_only_symbols_the_oldest_admitted_version_exports(library):
    used = undefined_symbols().get(library, set())
    assert used, f"no symbols attributed to {library}: the symbol versions changed?"
    missing = used - exported(MINIMUM[library])
    assert not missing, f"{library} {CUDA_MAJOR}.0 lacks {sorted(missing)}: raise the minimum in pyproject.toml"


def test_needs_no_glibc_newer_than_manylinux_2_17():
    """The wheels claim manylinux_2_17 (packaging/check-wheel): a symbol versioned later, such
    as pthread_once or pthread_mutex_trylock at GLIBC_2.34 when built on glibc >= 2.34, would
    make auditwheel refuse that tag."""
    versions = {
        tuple(map(int, v.split(".")[1:])): names
        for v, names in undefined_symbols().items()
        if re.fullmatch(r"GLIBC_2\.\d+(\.\d+)?", v)
    }
    assert versions, "no GLIBC symbols: the symbol versions changed?"
    too_new = {v: sorted(names) for v, names in versions.items() if v > (17,)}
    assert not too_new, f"needs newer glibc than 2.17: {too_new}"


def test_no_python_symbols():
    assert not [s for names in undefined_symbols().values() for s in names if s.startswith("Py")]


def test_embedded_images_cover_every_architecture_of_the_major():
    images = pyctk.info()["kernel_images"]
    sass = sorted(i["arch"] for i in images if i["kind"] == "SASS")
    ptx = [i["arch"] for i in images if i["kind"] == "PTX"]
    oldest = {12: 50, 13: 75}[CUDA_MAJOR]
    assert sass[0] == oldest
    # Every architecture family from the oldest supported to Blackwell has SASS.
    for family in (50, 60, 70, 75, 80, 86, 89, 90, 100, 120):
        if family >= oldest:
            assert family in sass, f"no SASS for sm_{family}"
    assert ptx == [sass[-1]], "one PTX image, for the newest architecture"
    assert all(i["size_bytes"] > 1000 for i in images)


@pytest.mark.parametrize(
    "capability, expected",
    [
        ((9, 0), "sm_90"),
        ((8, 6), "sm_86"),
        ((8, 9), "sm_89"),
        ((12, 0), "sm_120"),
        ((10, 0), "sm_100"),
        ((7, 5), "sm_75"),
        ((8, 8), "sm_86"),  # no sm_88 in cu12: same-major SASS
        # Jetson's GPUs have no SASS of their own (embed_kernels.JETSON_ONLY): the lower minor's runs.
        ((8, 7), "sm_86"),
        ((5, 3), "sm_52"),
        ((6, 2), "sm_61"),
        ((7, 2), "sm_70"),
        ((10, 1), "sm_100"),
        ((19, 0), "compute_121"),  # a future GPU runs the PTX
    ],
)
def test_image_selection(capability, expected):
    images = pyctk.info()["kernel_images"]
    if capability == (8, 8) and any(i["name"] == "sm_88" for i in images):
        expected = "sm_88"
    if capability == (19, 0):
        expected = next(i["name"] for i in images if i["kind"] == "PTX")
    if 10 * capability[0] + capability[1] < min(i["arch"] for i in images):  # cu13: from sm_75
        with pytest.raises(pyctk.NoKernelImageError):
            _library.query_int("gpumatmul_kernel_image_select", *capability)
        return
    index = _library.query_int("gpumatmul_kernel_image_select", *capability)
    assert images[index]["name"] == expected


def test_jetson_architectures_have_no_sass_of_their_own():
    names = {i["name"] for i in pyctk.info()["kernel_images"]}
    assert not names & {"sm_53", "sm_62", "sm_72", "sm_87", "sm_101"}


def test_too_old_gpu_has_no_image():
    with pytest.raises(pyctk.NoKernelImageError, match="3.5"):
        _library.query_int("gpumatmul_kernel_image_select", 3, 5)


def test_status_names_are_stable():
    """Each status is named as its constant in the header, released ones first."""
    lib = _library.library()
    header = [
        line.split()[2:]
        for line in abi.constants(abi.header_code(pyctk.get_include()))
        if line.startswith("constant gpumatmul_status ")
    ]
    assert [int(value) for _, value in header] == list(range(len(header)))
    names = [lib.gpumatmul_status_name(code).decode() for code in range(len(header) + 1)]
    assert names == [name for name, _ in header] + ["GPUMATMUL_STATUS_UNKNOWN"]
    released = released_constants("gpumatmul_status")
    assert names[: len(released)] == released
    # pyctk._cuda.status names and numbers them as the header does.
    assert list(_status.NAMES) == names[:-1]
    short = {name.replace("GPUMATMUL_", "").replace("ERROR_", ""): int(value) for name, value in header}
    assert {name: getattr(_status, name) for name in short} == short
    assert lib.gpumatmul_cuda_major() == CUDA_MAJOR


def test_the_library_and_pyctk_agree_on_which_cuda_errors_lose_the_context():
    """status.c's list makes GPUMATMUL_ERROR_CONTEXT_LOST; pyctk's raises ContextLostError
    for the runtime and driver calls pyctk makes itself."""
    source = (ROOT / "libgpu" / "src" / "core" / "status.c").read_text()
    listed = re.search(r"sticky_errors\[\] = \{(.*?)\};", source, re.S).group(1)
    assert {int(code) for code in re.findall(r"^\s*(\d+),", listed, re.M)} == CONTEXT_LOST_ERRORS


def test_version_comes_from_libgpu_version():
    major, minor, patch = map(int, (ROOT / "libgpu" / "VERSION").read_text().split("."))
    assert VERSION == pyctk.__version__ == f"{major}.{minor}.{patch}"
    generated = (HEADER_DIR / "gpumatmul_version.h").read_text()
    macro = int(re.search(r"#define GPUMATMUL_VERSION (\d+)", generated)[1])
    assert macro == major * 10000 + minor * 100 + patch == _library.library().gpumatmul_version()


def test_installed_files_are_the_package_exactly():
    """Every module and stub, the modules the build writes, the C library headers kernels
    include, py.typed, the library and its two headers; no template, no cache."""
    package = LIBRARY.parent
    installed = {
        p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    }
    modules = {
        p.relative_to(ROOT / "pyctk").as_posix()
        for pattern in ("*.py", "*.pyi", "_pycuda/compiling/libc/*")
        for p in (ROOT / "pyctk").rglob(pattern)
    }
    modules |= {"_build_config.py", "_cuda/constants.py"}
    assert installed == modules | {
        "py.typed",
        "libgpumatmul.so",
        "include/gpumatmul.h",
        "include/gpumatmul_version.h",
        "pkgconfig/gpumatmul.pc",
    }


# Who computes what, by precision: (backend, dtype names). AUTO computes the union.
FLOATS = {"float32", "float64", "float16", "bfloat16", "complex64", "complex128"}
HEADER_CONSTANTS = [line.split()[1:] for line in abi.constants(abi.header_code(ROOT / "libgpu" / "include"))]
DTYPE_NAMES = [name[len("GPUMATMUL_") :].lower() for enum, name, _ in HEADER_CONSTANTS if enum == "gpumatmul_dtype"]
FLOAT8 = {"float8_e4m3fn", "float8_e5m2", "float8_e4m3fn_e5m2", "float8_e5m2_e4m3fn"}  # and the pairs
COMPUTES = {
    # cuBLAS: int8, float8_e4m3fn and the FP8 pairs through cuBLASLt, float8_e5m2 as float16
    # copies (widened.c)
    "highest": {"tiled": set(DTYPE_NAMES), "cublas": FLOATS | {"int8"} | FLOAT8},
    # FP8 at TF32: float32 copies at TF32 (widened.c)
    "tf32": {"tiled": {"float32", "complex64"} | FLOAT8, "cublas": {"float32", "complex64"} | FLOAT8},
    "fp16_accumulate": {"tiled": set(), "cublas": {"float16"}},
}


@pytest.mark.parametrize("precision", range(len(COMPUTES)))
@pytest.mark.parametrize("backend", range(3))
def test_backend_supports_table(backend, precision):
    lib = _library.library()
    computes = COMPUTES[list(COMPUTES)[precision]]
    backend_name = ["auto", "tiled", "cublas"][backend]
    for dtype, name in enumerate(DTYPE_NAMES):
        expected = (
            name in computes["tiled"] | computes["cublas"] if backend_name == "auto" else name in computes[backend_name]
        )
        status = lib.gpumatmul_backend_supports(backend, dtype, precision)
        assert status == (0 if expected else 2), (backend_name, name, precision)
        if not expected:  # the message says what would do
            message = lib.gpumatmul_last_error_message().decode()
            says_what_would_do = "use backend" in message or "applies to" in message
            assert name in message and says_what_would_do, message


def test_backend_supports_rejects_values_outside_the_enums():
    lib = _library.library()
    for arguments in ((3, 0, 0), (-1, 0, 0), (0, len(DTYPE_NAMES), 0), (0, 0, 3)):
        assert lib.gpumatmul_backend_supports(*arguments) == 1, arguments


def test_kernel_image_info_rejects_null_outputs():
    lib = _library.library()
    arch, kind, size = ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t()
    outputs = [ctypes.byref(arch), ctypes.byref(kind), ctypes.byref(size)]
    assert lib.gpumatmul_kernel_image_info(0, *outputs) == 0
    for missing in range(3):
        arguments = [None if i == missing else output for i, output in enumerate(outputs)]
        assert lib.gpumatmul_kernel_image_info(0, *arguments) == 1
    assert lib.gpumatmul_kernel_image_info(lib.gpumatmul_kernel_image_count(), *outputs) == 1


def test_c_program_uses_the_header_and_library(tmp_path):
    """gcc, no nvcc: the installed header and library are enough, and the library's RUNPATH
    finds the nvidia wheels without LD_LIBRARY_PATH."""
    program = tmp_path / "smoke"
    subprocess.run(
        [
            tool("gcc"),
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-pedantic",
            "-Werror",
            "-pthread",
            "-o",
            str(program),
            str(DATA / "smoke.c"),
            f"-I{HEADER_DIR}",
            f"-L{LIBRARY.parent}",
            "-lgpumatmul",
            f"-Wl,-rpath,{LIBRARY.parent}",
            "-ldl",
            "-lm",
        ],  # -ldl: dlopen before glibc 2.34
        check=True,
    )
    run = subprocess.run([str(program)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    expected = (
        ["gpu"] if gpu_unavailable_reason() is None else ["GPUMATMUL_ERROR_NO_DRIVER", "GPUMATMUL_ERROR_NO_DEVICE"]
    )
    assert any(f"result: {e}" in run.stdout for e in expected), run.stdout


def test_the_python_dtype_table_is_the_headers_enum():
    """pyctk._arrays.dtypes.DTYPES (one row per dtype: its gpumatmul_dtype and DLPack codes) and
    PAIRS (the FP8 pairs' product types, GPUMATMUL_<A>_<B's format>) say what gpumatmul.h's enum
    says, value for value."""
    from pyctk._arrays import dtypes as _dtypes

    pairs = {f"{a}_{b.removeprefix('float8_')}": code for (a, b), code in _dtypes.PAIRS.items()}
    assert {name: row.code for name, row in _dtypes.DTYPES.items()} | pairs == {
        name: value for value, name in enumerate(DTYPE_NAMES)
    }


def array_desc(dtype: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> _library.ArrayDesc:
    desc = _library.ArrayDesc(dtype, len(shape))
    desc.shape[: len(shape)], desc.strides[: len(strides)] = shape, strides
    return desc


F32, C64, F64 = 0, 4, 1  # gpumatmul_dtype values


@pytest.mark.parametrize(
    "dst, dst_data, src, src_data, message",
    [
        (None, 64, array_desc(F32, (2,), (4,)), 64, "dst is NULL"),
        (array_desc(F32, (2,), (4,)), 64, array_desc(19, (2,), (4,)), 64, "src->dtype 19 is not a"),
        (array_desc(17, (2,), (2,)), 64, array_desc(F32, (2,), (4,)), 64, "dst->dtype 17 is a product's type"),
        (array_desc(F32, (2,), (4,)), 64, array_desc(F32, (2, 3), (12, 4)), 64, "dst has 1 dimensions and src 2"),
        (array_desc(F32, (2, 3), (12, 4)), 64, array_desc(F64, (2, 4), (32, 8)), 64, "the shapes differ"),
        (array_desc(F32, (2, -3), (12, 4)), 64, array_desc(F32, (2, 3), (12, 4)), 64, "shape[1] is -3"),
        (array_desc(F32, (3,), (6,)), 64, array_desc(F32, (3,), (4,)), 64, "not a multiple of the 4-byte"),
        (array_desc(C64, (3,), (4,)), 64, array_desc(C64, (3,), (8,)), 66, "not aligned to the 4 bytes of complex64"),
        (array_desc(F32, (3,), (4,)), None, array_desc(F32, (3,), (4,)), 64, "dst's data is NULL"),
        (array_desc(F64, (2, 2**62), (2**62, 8)), 64, array_desc(F64, (2, 2**62), (8, 8)), 64, "more bytes"),
    ],
)
def test_copy_device_checks_its_arguments_before_anything_else(dst, dst_data, src, src_data, message):
    """gpumatmul_copy_device (no GPU needed: the context is checked last)."""
    lib = _library.library()
    status = lib.gpumatmul_copy_device(None, dst, dst_data, src, src_data, None)
    assert status == _status.INVALID_ARGUMENT
    assert message in lib.gpumatmul_last_error_message().decode()


def test_copy_device_of_nothing_needs_nothing_and_a_context_otherwise():
    lib, empty = _library.library(), array_desc(F32, (2, 0), (0, 4))
    assert lib.gpumatmul_copy_device(None, empty, None, empty, None, None) == _status.INVALID_ARGUMENT
    one = array_desc(F32, (), ())
    assert lib.gpumatmul_copy_device(None, one, 64, one, 64, None) == _status.INVALID_ARGUMENT
    assert lib.gpumatmul_last_error_message() == b"context is NULL"
