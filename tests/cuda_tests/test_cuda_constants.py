"""pyctk._cuda.constants, which the build writes from its cuda.h (libgpu/tools/cuda_constants.py).

The generated values against the numbers NVIDIA's CUDA Driver API reference gives; the
generator's parser on a cuda.h excerpt (values written as expressions, members without a
value, directives and comments inside a body); and that no module of pyctk keeps its own
copy of a generated value.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from pyctk._build_config import CUDA_MAJOR
from pyctk._cuda import constants
from pyctk._pycuda.compiling import headers
from support.paths import ROOT


def _generator():
    path = ROOT / "libgpu" / "tools" / "cuda_constants.py"
    spec = importlib.util.spec_from_file_location("cuda_constants", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


generator = _generator()

# Values as the CUDA Driver API reference (docs.nvidia.com/cuda/cuda-driver-api) lists them.
DOCUMENTED = {
    "CUDA_SUCCESS": 0,
    "CUDA_ERROR_INVALID_VALUE": 1,
    "CUDA_ERROR_OUT_OF_MEMORY": 2,
    "CUDA_ERROR_INVALID_CONTEXT": 201,
    "CUDA_ERROR_INVALID_PTX": 218,
    "CUDA_ERROR_INVALID_HANDLE": 400,
    "CUDA_ERROR_NOT_FOUND": 500,
    "CUDA_ERROR_NOT_READY": 600,
    "CUDA_ERROR_ILLEGAL_ADDRESS": 700,
    "CUDA_ERROR_NOT_SUPPORTED": 801,
    "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK": 1,
    "CU_DEVICE_ATTRIBUTE_WARP_SIZE": 10,
    "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT": 16,
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR": 75,
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR": 76,
    "CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED": 115,
    "CU_CTX_SCHED_SPIN": 1,
    "CU_CTX_SCHED_BLOCKING_SYNC": 4,
    "CU_CTX_LMEM_RESIZE_TO_MAX": 0x10,
    "CU_LIMIT_PRINTF_FIFO_SIZE": 1,
    "CU_FUNC_CACHE_PREFER_L1": 2,
    "CU_FUNC_ATTRIBUTE_NUM_REGS": 4,
    "CU_JIT_INPUT_PTX": 1,
    "CU_JIT_INPUT_NVVM": 5,
    "CU_JIT_ERROR_LOG_BUFFER": 5,
    "CU_EVENT_DISABLE_TIMING": 2,
    "CU_STREAM_NON_BLOCKING": 1,
    "CU_AD_FORMAT_FLOAT": 0x20,
    "CU_POINTER_ATTRIBUTE_CONTEXT": 1,
    "CU_MEMORYTYPE_UNIFIED": 4,
    "CU_MEMHOSTALLOC_DEVICEMAP": 0x02,
    "CU_TRSF_NORMALIZED_COORDINATES": 0x02,
    "CUDA_ARRAY3D_CUBEMAP": 0x04,
    "CU_PARAM_TR_DEFAULT": -1,
    "CU_COMPUTE_ACCELERATED_TARGET_BASE": 0x10000,
    # CUDA 13's cuda.h; CUDA 12's has no such option (the generator's NEWER_THAN_HEADER).
    "CU_JIT_BINARY_LOADER_THREAD_COUNT": 35,
}


@pytest.mark.parametrize("name, value", DOCUMENTED.items())
def test_generated_values_are_cudas(name, value):
    assert getattr(constants, name) == value


def test_they_come_from_the_cuda_h_of_the_build_major():
    assert constants.CUDA_VERSION // 1000 == CUDA_MAJOR


EXCERPT = """
#define CUDA_VERSION 12090
#define CU_BASE_ONE 0x10000   /**< a macro that a later value names */
#define CU_CAST ((CUstream)0x1)
/** The enum, as cuda.h writes them. */
typedef enum CUexample_enum {
    CU_EXAMPLE_FIRST   = 0,            /**< a value */
    CU_EXAMPLE_NEXT,                   // the previous one plus one
    CU_EXAMPLE_FLAG    = 1 << 4,
    CU_EXAMPLE_BOTH    = CU_EXAMPLE_FLAG
                       | CU_EXAMPLE_NEXT,
    CU_EXAMPLE_BASED   = CU_BASE_ONE + 90,
    CU_EXAMPLE_HEX     = 0x7fffffffU,
#ifdef __CUDA_API_VERSION_INTERNAL
    CU_EXAMPLE_MAX
#endif
} CUexample;
#define CU_AFTER_ENUM (CU_EXAMPLE_HEX - 1)
"""


def test_parser_reads_values_written_as_expressions():
    enums, macros = generator.read(EXCERPT)
    assert enums == {
        "CUexample": {
            "CU_EXAMPLE_FIRST": 0,
            "CU_EXAMPLE_NEXT": 1,
            "CU_EXAMPLE_FLAG": 16,
            "CU_EXAMPLE_BOTH": 17,
            "CU_EXAMPLE_BASED": 0x1005A,
            "CU_EXAMPLE_HEX": 0x7FFFFFFF,
            "CU_EXAMPLE_MAX": 0x80000000,
        }
    }
    # Casts are no integers: left out.
    assert macros == {"CUDA_VERSION": 12090, "CU_BASE_ONE": 0x10000, "CU_AFTER_ENUM": 0x7FFFFFFE}


@pytest.mark.parametrize("expression", ["sizeof(int)", "(void *)0", "CU_UNKNOWN + 1", '"text"', "1.5"])
def test_parser_refuses_what_is_no_integer_expression(expression):
    with pytest.raises(ValueError, match="not an integer expression"):
        generator.evaluate(expression, {})


def test_generator_refuses_a_header_without_an_enum_pyctk_uses():
    with pytest.raises(SystemExit, match="no enum CUresult"):
        list(generator.constants(EXCERPT))


def test_installed_module_is_the_one_the_generator_writes_for_the_wheels_cuda_h():
    header = Path(headers.header_folders()[0].path, "cuda.h")
    text = generator.module(header.read_text(encoding="utf-8", errors="replace"), header.name)
    assert text == Path(constants.__file__).read_text(encoding="utf-8")
    names = re.findall(r"^(\w+) = ", text, re.MULTILINE)
    assert names.index("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK") < names.index("CU_DEVICE_ATTRIBUTE_WARP_SIZE")


# Values written by hand that share a generated name, each from another header than cuda.h.
OTHER_HEADERS = {
    ("pyctk/_cuda/streams.py", "_EVENT_DISABLE_TIMING"),  # cudaEventDisableTiming (driver_types.h)
}


def _integer(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _integer(node.operand)
        return None if value is None else -value
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _hand_copies(root: Path) -> set[tuple[str, str]]:
    """(module, name) of each ``NAME = <integer>`` in pyctk whose NAME (leading underscores
    dropped) is a generated name, or a generated name's end after an underscore (an enum
    member, ``WARP_SIZE`` of ``CU_DEVICE_ATTRIBUTE_WARP_SIZE``), with the same value; and of
    each integer beside a comment naming a generated constant of that value."""
    generated = {name: value for name, value in vars(constants).items() if name.isupper()}
    found = set()
    for path in sorted((root / "pyctk").rglob("*.py")):
        module = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value, name = _integer(node.value), node.targets[0].id
                bare = name.lstrip("_")
                if value is not None and any(
                    generated[g] == value and (g == bare or g.endswith("_" + bare)) for g in generated
                ):
                    found.add((module, name))
        for line in text.splitlines():
            commented = re.search(r"(?<![\w.])(-?(?:0x[0-9a-fA-F]+|\d+))\b[^#]*#.*?\b((?:CU|CUDA)_[A-Z0-9_]+)", line)
            if commented and generated.get(commented[2]) == int(commented[1], 0):
                found.add((module, commented[2]))
    return found


def test_no_module_keeps_a_copy_of_a_generated_value():
    assert _hand_copies(ROOT) == OTHER_HEADERS


def test_a_hand_copy_is_found(tmp_path):
    package = tmp_path / "pyctk"
    package.mkdir()
    (package / "copies.py").write_text(
        "import enum\n"
        "class device_attribute(enum.IntEnum):\n"
        "    WARP_SIZE = 10\n"
        "    NOT_A_COPY = 99999\n"
        "_NOT_FOUND = 500\n"
        "TABLE = {201: 'LogicError'}  # CUDA_ERROR_INVALID_CONTEXT\n"
    )
    assert _hand_copies(tmp_path) == {
        ("pyctk/copies.py", "WARP_SIZE"),
        ("pyctk/copies.py", "_NOT_FOUND"),
        ("pyctk/copies.py", "CUDA_ERROR_INVALID_CONTEXT"),
    }
