"""pyctk.curandom without a GPU: rand's Philox4x32-10 against the published known answers
(a NumPy reference written from the paper), its CUDA source compiled for sm_90 by NVRTC and,
built for the host by a C++ compiler, run against that reference bit for bit; the cuRAND
generators' sources compiled with the cuRAND wheel's headers; cuRAND's host tables; where
cuRAND is found (loader, headers) and what is said when it is not; errors before GPU work."""

from __future__ import annotations

import ctypes
import importlib.metadata
import re
import shutil
import subprocess

import numpy as np
import pytest

from pyctk._build_config import CUDA_MAJOR
from pyctk._cuda import curand, loader
from pyctk._cuda.errors import LibraryNotFoundError
from pyctk._pycuda.compiling import headers
from pyctk._pycuda.gpuarrays import curandom
from pyctk._pycuda.kernels import source_modules
from support import loader_fakes
from support.curand_wheel import CURAND_WHEEL, needs_curand
from support.philox import M, W, philox4x32_10, reference_rand

# --- Philox4x32-10, from Salmon, Moraes, Dror and Shaw, SC11 (Random123's philox.h) -------------


@pytest.mark.parametrize(
    "counter, key, expected",
    [  # Random123's kat_vectors, philox4x32 10 rounds
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
            (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ],
)
def test_philox_reference_known_answers(counter, key, expected):
    assert tuple(philox4x32_10(np.array([counter], np.uint32), key)[0]) == expected


def test_rand_source_has_the_published_constants():
    assert curandom.PHILOX_MULTIPLIERS == M and curandom.PHILOX_KEY_INCREMENTS == W
    assert curandom.PHILOX_ROUNDS == 10
    for dtype in curandom.RAND_DTYPES:
        source = curandom.rand_source(dtype)
        for constant in (*M, *W):
            assert f"{constant:#x}u" in source
        assert "r < 10;" in source


@pytest.mark.parametrize("dtype", list(curandom.RAND_DTYPES))
def test_rand_source_compiles_for_sm90(dtype):
    cubin = source_modules.compile(curandom.rand_source(dtype), no_extern_c=True, arch="sm_90", cache_dir=False)
    assert cubin[:4] == b"\x7fELF"


# The CUDA names the kernel uses, for a host build: one "thread" at a time, in the grid's order.
HOST_SHIMS = r"""
#include <cstddef>
#define __device__
#define __global__
#define __forceinline__ inline
#define __align__(n) alignas(n)
struct uint4 { unsigned int x, y, z, w; };
struct uint2 { unsigned int x, y; };
static uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { return {x, y, z, w}; }
static uint2 make_uint2(unsigned int x, unsigned int y) { return {x, y}; }
static unsigned int __umulhi(unsigned int a, unsigned int b)
{ return (unsigned int) (((unsigned long long) a * b) >> 32); }
struct dim { unsigned int x; };
static dim blockIdx, blockDim, threadIdx, gridDim;
"""
HOST_RUN = r"""
extern "C" void run(void *dest, unsigned long n, unsigned int seed, unsigned int blocks, unsigned int threads)
{
  gridDim.x = blocks; blockDim.x = threads;
  for (blockIdx.x = 0; blockIdx.x < blocks; ++blockIdx.x)
    for (threadIdx.x = 0; threadIdx.x < threads; ++threadIdx.x)
      pyctk_philox_rand((ELEMENT *) dest, n, seed);
}
"""


@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
@pytest.mark.parametrize("dtype", list(curandom.RAND_DTYPES))
def test_rand_kernel_built_for_the_host_matches_the_reference(tmp_path, dtype):
    ctype = curandom.RAND_DTYPES[dtype][0]
    source = tmp_path / "rand.cpp"
    source.write_text(HOST_SHIMS + curandom.rand_source(dtype) + HOST_RUN.replace("ELEMENT", ctype))
    library = tmp_path / "rand.so"
    subprocess.run(
        ["c++", "-std=c++14", "-O1", "-shared", "-fPIC", "-o", str(library), str(source)],
        check=True,
        capture_output=True,
    )
    run = ctypes.CDLL(str(library)).run
    run.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint]
    for n, seed, blocks, threads in [(1, 0, 1, 1), (13, 12345, 2, 3), (64, 2**31 - 2, 3, 5), (1001, 7, 4, 32)]:
        out = np.full(n + 4, 77, dtype)  # past n: must stay untouched
        run(out.ctypes.data, n, seed, blocks, threads)
        np.testing.assert_array_equal(out[:n], reference_rand(n, dtype, seed))
        assert (out[n:] == 77).all()
        if dtype.kind == "f":
            assert out[:n].min() >= 0 and out[:n].max() < 1


def test_reference_floats_stay_below_one():
    words = np.array([0xFFFFFFFF, 0xFFFFFFFF], np.uint32)
    assert (words >> 8).astype(np.float32)[0] * np.float32(2.0**-24) < 1
    assert float((np.uint64(0xFFFFFFFF) << np.uint64(21)) ^ (np.uint64(0xFFFFFFFF) >> np.uint64(11))) * 2.0**-53 < 1


@pytest.mark.parametrize("dtype", [np.int64, np.float16, np.complex64, np.uint8, np.bool_])
def test_rand_refuses_other_dtypes_before_gpu_work(dtype):
    with pytest.raises(NotImplementedError, match="float32, float64, int32 and uint32"):
        curandom.rand((3,), dtype)


# --- the cuRAND generators' kernels -------------------------------------------------------------------


def test_generator_kernels_per_kind():
    kernels = {kind: set(curandom._kernels(row)) for kind, row in curandom._KINDS.items()}
    pairs = {"normal_float2", "normal_double2", "normal_log_float2", "normal_log_double2"}
    for kind, names in kernels.items():
        assert {
            "prepare",
            "skip_ahead",
            "skip_ahead_array",
            "uniform_int",
            "uniform_float",
            "uniform_double",
            "normal_float",
            "normal_double",
            "normal_log_float",
            "normal_log_double",
            "poisson_int",
            "poisson_inplace_float",
            "poisson_inplace_double",
            "poisson_inplace_int",
        } <= names
        assert (pairs <= names) == (kind in ("XORWOW", "MRG32k3a"))
        assert ("uniform_long" in names) == kind.endswith("64")
        assert ("skip_ahead_sequence" in names) == (kind in ("XORWOW", "MRG32k3a"))
        assert ("skip_ahead_subsequence_array" in names) == (kind == "MRG32k3a")
    assert curandom._kernels(curandom._KINDS["Sobol32"])["skip_ahead"][1] == ["P", "Q", "I"]
    assert curandom._kernels(curandom._KINDS["Sobol64"])["skip_ahead"][1] == ["P", "Q", "Q"]
    assert curandom._kernels(curandom._KINDS["XORWOW"])["normal_log_float"][1] == ["P", "P", "f", "f", "Q"]
    assert curandom._kernels(curandom._KINDS["MRG32k3a"])["poisson_int"][1] == ["P", "P", "d", "Q"]


def test_skip_kernels_cover_every_state():
    """PyCUDA's [bug]: its skip-ahead launches pass generators_per_block as the count."""
    source = curandom._kernels(curandom._KINDS["XORWOW"])["skip_ahead"][0]
    assert "if (id < n)" in source and "blockIdx.x * (size_t) blockDim.x" in source


@needs_curand
@pytest.mark.parametrize("kind", list(curandom._KINDS))
def test_generator_source_compiles_for_sm90_with_the_wheel_headers(kind):
    cubin = source_modules.compile(curandom.generator_source(kind), no_extern_c=True, arch="sm_90", cache_dir=False)
    assert cubin[:4] == b"\x7fELF"


@needs_curand
def test_generator_module_has_every_kernel_and_the_state_size():
    ptx = source_modules.compile(
        curandom.generator_source("Sobol32"), no_extern_c=True, arch="sm_90", cache_dir=False, target="ptx"
    ).decode()
    assert set(re.findall(r"\.entry (\w+)", ptx)) == set(curandom._kernels(curandom._KINDS["Sobol32"]))
    assert ".u64 state_size = 140;" in ptx  # curandStateSobol32: i, x, c and 32 direction vectors


def test_missing_curand_headers_name_the_extra(monkeypatch):
    monkeypatch.setattr(headers, "header_folders", lambda: [])
    with pytest.raises(LibraryNotFoundError, match=rf'pip install "pyctk-cu{CUDA_MAJOR}\[curand\]"'):
        curandom.XORWOWRandomNumberGenerator()
    with pytest.raises(LibraryNotFoundError, match="curand_kernel.h"):
        curandom.Sobol32RandomNumberGenerator()


def test_missing_curand_library_names_the_pip_commands(tmp_path):
    empty = tmp_path / "site-packages"
    empty.mkdir()
    result = loader_fakes.without_library(
        "curand", empty, '__import__("pyctk._pycuda.gpuarrays.curandom", fromlist=["rand"]).get_curand_version()'
    )
    message = result["message"]
    assert result["oserror"]
    assert f'pip install "pyctk-cu{CUDA_MAJOR}[curand]"' in message
    assert "cuRAND, NVIDIA's random number library, which is not installed" in message
    wheel = f"{CURAND_WHEEL}>=10.3,<11" if CUDA_MAJOR == 12 else f"{CURAND_WHEEL}>=10.4,<11"
    assert f'pip install "{wheel}"' in message
    spec_dir = "nvidia/curand/lib" if CUDA_MAJOR == 12 else "nvidia/cu13/lib"
    assert f"{empty}/{spec_dir}/libcurand.so.10 (site-packages): not there" in message


# --- where cuRAND is found -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "major, os_name, file_name, wheel_dir, pip_install",
    [
        (12, "linux", "libcurand.so.10", "nvidia/curand/lib", 'pip install "nvidia-curand-cu12>=10.3,<11"'),
        (13, "linux", "libcurand.so.10", "nvidia/cu13/lib", 'pip install "nvidia-curand>=10.4,<11"'),
        (12, "win32", "curand64_10.dll", "nvidia/curand/bin", 'pip install "nvidia-curand-cu12>=10.3,<11"'),
        (13, "win32", "curand64_10.dll", "nvidia/cu13/bin/x86_64", 'pip install "nvidia-curand>=10.4,<11"'),
    ],
)
def test_curand_library_spec(major, os_name, file_name, wheel_dir, pip_install):
    spec = loader.library_spec("curand", major, os_name)
    assert (spec.file_name, spec.wheel_dir, spec.pip_install) == (file_name, wheel_dir, pip_install)


def test_other_libraries_keep_cuda_versions():
    assert loader.library_spec("cudart", 13, "linux").file_name == "libcudart.so.13"
    assert loader.pip_requirement("nvidia-cublas-cu12", 12) == "nvidia-cublas-cu12>=12,<13"


@pytest.mark.parametrize(
    "major, folder, wheel",
    [(12, "nvidia/curand/include", "nvidia-curand-cu12"), (13, "nvidia/cu13/include", "nvidia-curand")],
)
def test_curand_headers_are_a_header_wheel(tmp_path, major, folder, wheel):
    assert (folder, "curand_kernel.h", wheel) in headers.HEADER_WHEELS[major]
    missing = headers.missing_headers(major, [str(tmp_path / "empty")])  # (found once per search path)
    requirement = ">=10.3,<11" if major == 12 else ">=10.4,<11"
    assert f'curand_kernel.h ({wheel}: pip install "{wheel}{requirement}")' in missing
    site = tmp_path / "site-packages"
    (site / folder).mkdir(parents=True)
    (site / folder / "curand_kernel.h").touch()
    (site / f"{wheel.replace('-', '_')}-10.9.dist-info").mkdir()
    found = headers.header_folders(major, [str(site)])
    assert [(f.pip_name, f.distribution) for f in found] == [(wheel, f"{wheel.replace('-', '_')}-10.9")]


# --- cuRAND's host library --------------------------------------------------------------------------


@needs_curand
def test_curand_version_is_the_wheels():
    version = importlib.metadata.version(CURAND_WHEEL)
    assert curandom.get_curand_version() == tuple(int(part) for part in version.split(".")[:3])


@needs_curand
def test_host_tables():
    vectors32 = curandom._host_table("curandGetDirectionVectors32", 32, 32, curandom.direction_vector_set.VECTOR_32)
    assert vectors32.shape == (curand.DIMENSIONS, 32) and vectors32.dtype == np.uint32
    np.testing.assert_array_equal(vectors32[0], 2 ** (31 - np.arange(32, dtype=np.uint64)))  # dimension 0: 1/2, 1/4 ...
    vectors64 = curandom._host_table("curandGetDirectionVectors64", 64, 64, curandom.direction_vector_set.VECTOR_64)
    assert vectors64.dtype == np.uint64
    np.testing.assert_array_equal(vectors64[0], np.uint64(1) << (63 - np.arange(64, dtype=np.uint64)))
    np.testing.assert_array_equal(vectors64[1, :2], [1 << 63, 3 << 62])
    scramble = curandom._host_table("curandGetScrambleConstants64", 1, 64)
    assert scramble.shape == (curand.DIMENSIONS, 1) and scramble.dtype == np.uint64 and len(np.unique(scramble)) > 19000


def test_direction_vector_set_is_curands():
    assert {m.name: int(m) for m in curandom.direction_vector_set} == {
        "VECTOR_32": 101,
        "SCRAMBLED_VECTOR_32": 102,
        "VECTOR_64": 103,
        "SCRAMBLED_VECTOR_64": 104,
    }
    with pytest.raises(ValueError):
        curandom.generate_direction_vectors(4, 7)


def test_face_exports_pycudas_names():
    import pyctk.curandom as face

    for name in (
        "rand",
        "seed_getter_uniform",
        "seed_getter_unique",
        "get_curand_version",
        "generate_direction_vectors",
        "generate_scramble_constants32",
        "generate_scramble_constants64",
        "direction_vector_set",
        "XORWOWRandomNumberGenerator",
        "MRG32k3aRandomNumberGenerator",
        "Sobol32RandomNumberGenerator",
        "ScrambledSobol32RandomNumberGenerator",
        "Sobol64RandomNumberGenerator",
        "ScrambledSobol64RandomNumberGenerator",
    ):
        assert getattr(face, name) is getattr(curandom, name)
