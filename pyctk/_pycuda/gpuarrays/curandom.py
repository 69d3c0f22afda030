"""PyCUDA's ``curandom``: random numbers in GPUArrays.

Two kinds, as in PyCUDA:

- ``rand(shape, dtype)``: quick uniform numbers from a counter-based generator of pyctk's own
  (Philox4x32-10; PyCUDA hashes with MD5), seeded on each call from NumPy's global
  ``RandomState`` as PyCUDA seeds it, so ``np.random.seed`` makes it repeat. No extra needed.
- the generator classes (``XORWOWRandomNumberGenerator``, ``MRG32k3aRandomNumberGenerator``,
  the four Sobol ones): cuRAND's device API (``curand_kernel.h``) compiled into generated
  kernels, one generator state per GPU thread, kept between calls. They need the cuRAND
  wheel: ``pip install "pyctk-cu12[curand]"`` (the headers, and the host library for the
  Sobol direction vectors and scramble constants).

Every generator kind is one row of ``_KINDS``; ``_kernels`` writes its source from the row,
one module per kind and device, loaded once per process. PyCUDA's skip-ahead calls skip only
the first block's generators (its bug); here they skip every generator's state.
"""

from __future__ import annotations

import ctypes
import enum
import functools
import os
import random
from typing import Any, Callable, NamedTuple

import numpy as np

from ..._cuda import curand, driver_api
from ..._cuda.driver_errors import LaunchError
from ..._cuda.errors import LibraryNotFoundError
from ..compiling import headers
from ..kernels.modules import Function, Module
from ..memory.device import mem_alloc
from . import launching
from .array import GPUArray
from .launching import Kernel, geometry, multiprocessor_count, stream_handle

# ---------------------------------------------------------------------------------------------
# rand: Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as
# 1, 2, 3", SC11): ten rounds of two 32x32->64-bit products; the key grows by a Weyl
# sequence (the golden ratio and sqrt(3) - 1) between rounds. Counter = the index of the
# four-word block, key = (seed, 0): every element is a pure function of (seed, index).

PHILOX_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
PHILOX_KEY_INCREMENTS = (0x9E3779B9, 0xBB67AE85)
PHILOX_ROUNDS = 10

_PHILOX = f"""\
__device__ __forceinline__ uint4 pyctk_philox4x32(uint4 c, uint2 k)
{{
#pragma unroll
  for (int r = 0; r < {PHILOX_ROUNDS}; ++r) {{
    if (r) {{ k.x += {PHILOX_KEY_INCREMENTS[0]:#x}u; k.y += {PHILOX_KEY_INCREMENTS[1]:#x}u; }}
    const unsigned int hi0 = __umulhi({PHILOX_MULTIPLIERS[0]:#x}u, c.x), lo0 = {PHILOX_MULTIPLIERS[0]:#x}u * c.x;
    const unsigned int hi1 = __umulhi({PHILOX_MULTIPLIERS[1]:#x}u, c.z), lo1 = {PHILOX_MULTIPLIERS[1]:#x}u * c.z;
    c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }}
  return c;
}}
"""

# dtype -> (C type, numbers per block of four 32-bit words, number k of the words w). The
# floats take the top 24 or 53 bits, so they lie in [0, 1) (PyCUDA's can round up to 1).
RAND_DTYPES = {
    np.dtype(np.float32): ("float", 4, "(w[k] >> 8) * (1.0f / 16777216.0f)"),
    np.dtype(np.float64): (
        "double",
        2,
        "(double) (((unsigned long long) w[2 * k] << 21) ^ (w[2 * k + 1] >> 11)) * (1.0 / 9007199254740992.0)",
    ),
    np.dtype(np.int32): ("int", 4, "(int) w[k]"),
    np.dtype(np.uint32): ("unsigned int", 4, "w[k]"),
}


def rand_source(dtype: np.dtype) -> str:
    """The CUDA source of ``rand``'s kernel ``pyctk_philox_rand`` for ``dtype``."""
    ctype, per, number = RAND_DTYPES[np.dtype(dtype)]
    return (
        _PHILOX + f"struct __align__(16) pyctk_chunk {{ {ctype} v[{per}]; }};  // one block's numbers: 16 bytes\n"
        f'extern "C" __global__ void pyctk_philox_rand({ctype} *dest, unsigned long n, unsigned int seed)\n'
        f"{{\n"
        f"  for (size_t j = blockIdx.x * (size_t) blockDim.x + threadIdx.x; j * {per} < n;\n"
        f"       j += (size_t) gridDim.x * blockDim.x) {{\n"
        f"    const uint4 r = pyctk_philox4x32(make_uint4((unsigned int) j, (unsigned int) (j >> 32), 0u, 0u),\n"
        f"                                     make_uint2(seed, 0u));\n"
        f"    const unsigned int w[4] = {{r.x, r.y, r.z, r.w}};\n"
        f"    pyctk_chunk chunk;\n"
        f"#pragma unroll\n"
        f"    for (int k = 0; k < {per}; ++k)\n"
        f"      chunk.v[k] = {number};\n"
        f"    if ((j + 1) * {per} <= n)\n"
        f"      reinterpret_cast<pyctk_chunk *>(dest)[j] = chunk;  // dest is a new allocation: aligned\n"
        f"    else\n"
        f"      for (int k = 0; j * {per} + k < n; ++k)\n"
        f"        dest[j * {per} + k] = chunk.v[k];\n"
        f"  }}\n}}\n"
    )


@functools.cache
def _rand_kernel(dtype: np.dtype) -> Kernel:
    return Kernel(rand_source(dtype), "pyctk_philox_rand", ["P", "Q", "I"])


def rand(shape: Any, dtype: Any = np.float32, stream: Any = None) -> GPUArray:
    """A new GPUArray of uniform random numbers (PyCUDA's ``curandom.rand``).

    Each call takes its seed from ``np.random.randint(2**31 - 1)``, as PyCUDA's does, so
    ``np.random.seed`` makes the numbers repeat. Unlike PyCUDA's: the numbers come from
    Philox4x32-10, a counter-based generator, not an MD5 hash; floats are never 1 (PyCUDA's
    can round up to 1); int32 and uint32 arrays get all 32 bits random. It needs NVRTC only,
    not the ``curand`` extra.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : {float32, float64, int32, uint32}, optional
        float32 and float64 numbers are in [0, 1).
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray

    Raises
    ------
    NotImplementedError
        Another dtype: convert the result instead.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import curandom
    >>> np.random.seed(0)
    >>> a = curandom.rand((2, 3)).get()
    >>> a.shape, a.dtype, bool(((0 <= a) & (a < 1)).all())
    ((2, 3), dtype('float32'), True)
    >>> np.random.seed(0)
    >>> bool((curandom.rand((2, 3)).get() == a).all())              # the same seed: the same numbers
    True
    """
    dtype = np.dtype(dtype)
    if dtype not in RAND_DTYPES:
        raise NotImplementedError(
            f"rand makes float32, float64, int32 and uint32 numbers, not {dtype}; "
            f"convert the result (rand(shape, np.float64).astype({str(dtype)!r}))"
        )
    result = GPUArray(shape, dtype)
    seed = np.random.randint(2**31 - 1)
    if result.size:
        blocks, threads = geometry(-(-result.size // RAND_DTYPES[dtype][1]), result.device)
        _rand_kernel(dtype)(blocks, threads, stream_handle(stream), result.ptr, result.size, seed)
    return result


# ---------------------------------------------------------------------------------------------
# Seeds, direction vectors and scramble constants.


def _to_gpu(host: np.ndarray) -> GPUArray:
    result = GPUArray(host.shape, host.dtype)
    result.set(host)
    return result


def seed_getter_uniform(n: int) -> GPUArray:
    """``n`` equal int32 seeds, one value of Python's ``random.randint(0, 2**31 - 1)``,
    as PyCUDA's ``seed_getter_uniform``.

    A ``seed_getter`` for :class:`XORWOWRandomNumberGenerator` and
    :class:`MRG32k3aRandomNumberGenerator`: every generator gets the same seed (each still
    runs its own subsequence).

    Parameters
    ----------
    n : int

    Returns
    -------
    GPUArray
        int32, of shape ``(n,)``.

    Examples
    --------
    >>> from pyctk import curandom                                  # doctest: +GPU
    >>> seeds = curandom.seed_getter_uniform(4).get()
    >>> seeds.dtype, len(set(seeds.tolist()))
    (dtype('int32'), 1)
    """
    return GPUArray((n,), np.int32).fill(random.randint(0, 2**31 - 1))


def seed_getter_unique(n: int) -> GPUArray:
    """``n`` independent int32 seeds from ``np.random.randint(0, 2**31 - 1, n)``, as PyCUDA's ``seed_getter_unique``.

    A ``seed_getter`` for :class:`XORWOWRandomNumberGenerator` and
    :class:`MRG32k3aRandomNumberGenerator` (what they use when given none).

    Parameters
    ----------
    n : int

    Returns
    -------
    GPUArray
        int32, of shape ``(n,)``.

    Examples
    --------
    >>> from pyctk import curandom                                  # doctest: +GPU
    >>> generator = curandom.XORWOWRandomNumberGenerator(curandom.seed_getter_unique)
    >>> curandom.seed_getter_unique(4).shape
    (4,)
    """
    return _to_gpu(np.random.randint(0, 2**31 - 1, n).astype(np.int32))


def get_curand_version() -> tuple[int, int, int]:
    """cuRAND's version, ``(major, minor, patch)``, as PyCUDA's ``get_curand_version``.

    Unlike PyCUDA's, which decodes ``curandGetVersion`` as if it were CUDA's number
    (``(10, 31, 0)``), it is cuRAND's own: ``(10, 3, 10)`` with CUDA 12.9. No GPU is needed.

    Returns
    -------
    tuple of int

    Raises
    ------
    pyctk.LibraryNotFoundError
        cuRAND is not installed: the message gives the pip command (the ``curand`` extra).

    Examples
    --------
    >>> from pyctk import curandom
    >>> major, minor, patch = curandom.get_curand_version()
    >>> major                                                       # 10.3 is CUDA 12's, 10.4 CUDA 13's
    10
    """
    return curand.version()


class direction_vector_set(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """cuRAND's ``curandDirectionVectorSet_t``, as PyCUDA's ``direction_vector_set``.

    Joe and Kuo's direction vectors for up to 20 000 dimensions, 32 or 64 bits, plain or for
    scrambled Sobol: what :func:`generate_direction_vectors` takes.

    Examples
    --------
    >>> from pyctk.curandom import direction_vector_set
    >>> direction_vector_set.VECTOR_64, int(direction_vector_set.VECTOR_64)
    (<direction_vector_set.VECTOR_64: 103>, 103)
    """

    VECTOR_32 = 101  #: 32-bit vectors, for :class:`Sobol32RandomNumberGenerator`.
    SCRAMBLED_VECTOR_32 = 102  #: 32-bit vectors, for :class:`ScrambledSobol32RandomNumberGenerator`.
    VECTOR_64 = 103  #: 64-bit vectors, for :class:`Sobol64RandomNumberGenerator`.
    SCRAMBLED_VECTOR_64 = 104  #: 64-bit vectors, for :class:`ScrambledSobol64RandomNumberGenerator`.


_DIRECTION_BITS = {
    direction_vector_set.VECTOR_32: 32,
    direction_vector_set.SCRAMBLED_VECTOR_32: 32,
    direction_vector_set.VECTOR_64: 64,
    direction_vector_set.SCRAMBLED_VECTOR_64: 64,
}
# bits -> (C type, dtype, struct code) of a raw number, a skip count, a scramble constant
_WORDS: dict[int, tuple[str, np.dtype, str]] = {
    32: ("unsigned int", np.dtype(np.uint32), "I"),
    64: ("unsigned long long", np.dtype(np.uint64), "Q"),
}


def _host_table(function: str, columns: int, bits: int, *arguments: int) -> np.ndarray:
    """A copy of cuRAND's table: curand.DIMENSIONS rows of ``columns`` numbers of ``bits`` bits."""
    dtype = _WORDS[bits][1]
    size = curand.DIMENSIONS * columns * dtype.itemsize
    table = (ctypes.c_char * size).from_address(curand.table(function, *arguments))
    return np.frombuffer(memoryview(table), dtype).reshape(curand.DIMENSIONS, columns).copy()


def generate_direction_vectors(count: int, direction: direction_vector_set | None = None) -> GPUArray:
    """cuRAND's Sobol direction vectors for ``count`` dimensions, as PyCUDA's ``generate_direction_vectors``.

    Past cuRAND's 20 000 dimensions the table repeats, as in PyCUDA.

    Parameters
    ----------
    count : int
    direction : direction_vector_set, optional
        Default ``VECTOR_32``.

    Returns
    -------
    GPUArray
        ``(count, 32)`` uint32, or ``(count, 64)`` uint64 for the 64-bit sets.

    Raises
    ------
    pyctk.LibraryNotFoundError
        cuRAND is not installed.

    Examples
    --------
    >>> from pyctk import curandom                                  # doctest: +GPU
    >>> vectors = curandom.generate_direction_vectors(2)
    >>> vectors.shape, vectors.dtype
    ((2, 32), dtype('uint32'))
    >>> vectors.get()[:, :2]
    array([[2147483648, 1073741824],
           [2147483648, 3221225472]], dtype=uint32)
    """
    direction = direction_vector_set(direction_vector_set.VECTOR_32 if direction is None else direction)
    bits = _DIRECTION_BITS[direction]
    table = _host_table(f"curandGetDirectionVectors{bits}", bits, bits, direction)
    return _to_gpu(np.resize(table, (int(count), bits)))


def generate_scramble_constants32(count: int) -> GPUArray:
    """cuRAND's scramble constants for ``count`` dimensions of scrambled 32-bit Sobol,
    as PyCUDA's ``generate_scramble_constants32``.

    Parameters
    ----------
    count : int

    Returns
    -------
    GPUArray
        uint32, of shape ``(count,)``.

    Examples
    --------
    >>> from pyctk import curandom                                  # doctest: +GPU
    >>> constants = curandom.generate_scramble_constants32(4)
    >>> constants.shape, constants.dtype
    ((4,), dtype('uint32'))
    """
    return _to_gpu(np.resize(_host_table("curandGetScrambleConstants32", 1, 32), int(count)))


def generate_scramble_constants64(count: int) -> GPUArray:
    """cuRAND's scramble constants for ``count`` dimensions of scrambled 64-bit Sobol,
    as PyCUDA's ``generate_scramble_constants64``.

    Parameters
    ----------
    count : int

    Returns
    -------
    GPUArray
        uint64, of shape ``(count,)``.
    """
    return _to_gpu(np.resize(_host_table("curandGetScrambleConstants64", 1, 64), int(count)))


# ---------------------------------------------------------------------------------------------
# The generator classes: the kernels each kind of generator has, written from one table.


class _Kind(NamedTuple):
    state_type: str  # cuRAND's state, one per thread
    vector_type: str  # what prepare's v[id] is: a seed, or one dimension's direction vectors
    init: str  # curand_init's arguments before the state
    generator_bits: int  # bits of curand()'s raw numbers
    skip_bits: int  # of the count cuRAND's skip-ahead functions take
    skips: tuple[str, ...]  # those functions for this state
    has_box_muller: bool  # curand_normal2: two normal numbers a call


_SEEDED = "v[id], id, offset"  # seed, subsequence (one per generator), offset
_KINDS = {
    "XORWOW": _Kind("curandStateXORWOW", "unsigned int", _SEEDED, 32, 64, ("skipahead", "skipahead_sequence"), True),
    "MRG32k3a": _Kind(
        "curandStateMRG32k3a",
        "unsigned int",
        _SEEDED,
        32,
        64,
        ("skipahead", "skipahead_sequence", "skipahead_subsequence"),
        True,
    ),
    "Sobol32": _Kind(
        "curandStateSobol32", "curandDirectionVectors32_t", "v[id], offset", 32, 32, ("skipahead",), False
    ),
    "ScrambledSobol32": _Kind(
        "curandStateScrambledSobol32",
        "curandDirectionVectors32_t",
        "v[id], scramble[id], offset",
        32,
        32,
        ("skipahead",),
        False,
    ),
    "Sobol64": _Kind(
        "curandStateSobol64", "curandDirectionVectors64_t", "v[id], offset", 64, 64, ("skipahead",), False
    ),
    "ScrambledSobol64": _Kind(
        "curandStateScrambledSobol64",
        "curandDirectionVectors64_t",
        "v[id], scramble[id], offset",
        64,
        64,
        ("skipahead",),
        False,
    ),
}

_MEAN_STDDEV = {
    "float": (("float mean", "f"), ("float stddev", "f")),
    "double": (("double mean", "d"), ("double stddev", "d")),
}
# PyCUDA's fill kernels: name -> (element C type, what an element is, extra parameters
# (declaration, struct code), which kinds have it: "" all, "pairs" Box-Muller, "64" 64-bit).
_FILLS = {
    "uniform_int": ("unsigned int", "pyctk_high32(curand(&state))", (), ""),
    "uniform_long": ("unsigned long long", "curand(&state)", (), "64"),
    "uniform_float": ("float", "curand_uniform(&state)", (), ""),
    "uniform_double": ("double", "curand_uniform_double(&state)", (), ""),
    "normal_float": ("float", "curand_normal(&state)", (), ""),
    "normal_double": ("double", "curand_normal_double(&state)", (), ""),
    "normal_float2": ("float2", "curand_normal2(&state)", (), "pairs"),
    "normal_double2": ("double2", "curand_normal2_double(&state)", (), "pairs"),
    "normal_log_float": ("float", "curand_log_normal(&state, mean, stddev)", _MEAN_STDDEV["float"], ""),
    "normal_log_double": ("double", "curand_log_normal_double(&state, mean, stddev)", _MEAN_STDDEV["double"], ""),
    "normal_log_float2": ("float2", "curand_log_normal2(&state, mean, stddev)", _MEAN_STDDEV["float"], "pairs"),
    "normal_log_double2": (
        "double2",
        "curand_log_normal2_double(&state, mean, stddev)",
        _MEAN_STDDEV["double"],
        "pairs",
    ),
    "poisson_int": ("unsigned int", "curand_poisson(&state, lambda)", (("double lambda", "d"),), ""),
    "poisson_inplace_float": ("float", "(float) curand_poisson(&state, (double) d[i])", (), ""),
    "poisson_inplace_double": ("double", "(double) curand_poisson(&state, d[i])", (), ""),
    "poisson_inplace_int": ("unsigned int", "curand_poisson(&state, (double) d[i])", (), ""),
}
_SKIP_KERNELS = {
    "skipahead": "skip_ahead",
    "skipahead_sequence": "skip_ahead_sequence",
    "skipahead_subsequence": "skip_ahead_subsequence",
}

_THREAD = "const size_t id = blockIdx.x * (size_t) blockDim.x + threadIdx.x;"


def _has(kind: _Kind, needs: str) -> bool:
    return {"": True, "pairs": kind.has_box_muller, "64": kind.generator_bits == 64}[needs]


def _kernels(kind: _Kind) -> dict[str, tuple[str, list[str]]]:
    """Every kernel of a kind of generator: name -> (CUDA source, struct codes of its parameters)."""
    state = kind.state_type
    kernels = {}
    for name, (ctype, number, extra, needs) in _FILLS.items():
        if _has(kind, needs):
            parameters = "".join(f"{declaration}, " for declaration, _ in extra)
            kernels[name] = (
                f'extern "C" __global__ void {name}({state} *s, {ctype} *d, {parameters}unsigned long n)\n'
                f"{{\n  {_THREAD}\n"
                f"  {state} state = s[id];  // a local copy for the loop (cuRAND's advice), stored back after\n"
                f"  for (size_t i = id; i < n; i += (size_t) gridDim.x * blockDim.x)\n"
                f"    d[i] = {number};\n"
                f"  s[id] = state;\n}}\n",
                ["P", "P", *(code for _, code in extra), "Q"],
            )
    skip_type, _, skip_code = _WORDS[kind.skip_bits]
    for function in kind.skips:
        for suffix, declaration, count, code in (
            ("", f"{skip_type} skip", "skip", skip_code),
            ("_array", f"const {skip_type} *skip", "skip[id]", "P"),
        ):
            name = _SKIP_KERNELS[function] + suffix
            kernels[name] = (
                f'extern "C" __global__ void {name}({state} *s, unsigned long n, {declaration})\n'
                f"{{\n  {_THREAD}\n  if (id < n)\n    {function}({count}, &s[id]);\n}}\n",
                ["P", "Q", code],
            )
    scramble = _WORDS[kind.generator_bits][0]  # read only by the scrambled kinds
    kernels["prepare"] = (
        f'extern "C" __global__ void prepare({state} *s, unsigned long n, {kind.vector_type} *v, '
        f"{scramble} *scramble, unsigned long long offset)\n"
        f"{{\n  {_THREAD}\n  if (id < n)\n    curand_init({kind.init}, &s[id]);\n}}\n",
        ["P", "Q", "P", "P", "Q"],
    )
    return kernels


def generator_source(kind: str) -> str:
    """The CUDA C++ of generator kind ``kind`` (a key of ``_KINDS``): its kernels and
    ``state_size``, the size of its state."""
    row = _KINDS[kind]
    return (
        '#include <curand_kernel.h>  // C++ (templates): the kernels are extern "C" one by one\n'
        f'extern "C" __device__ unsigned long long state_size = sizeof({row.state_type});\n'
        # 32 bits of a 64-bit Sobol number: its high half, as curand_uniform takes (PyCUDA
        # keeps the low half, which stays the same over a sequence's first 2**32 points)
        "__device__ unsigned int pyctk_high32(unsigned int x) { return x; }\n"
        "__device__ unsigned int pyctk_high32(unsigned long long x) { return (unsigned int) (x >> 32); }\n"
        + "".join(source for source, _ in _kernels(row).values())
    )


def _require_curand() -> None:
    """LibraryNotFoundError, with the pip command, unless cuRAND's device headers are installed."""
    if not any(os.path.isfile(os.path.join(folder.path, "curand_kernel.h")) for folder in headers.header_folders()):
        raise LibraryNotFoundError(
            f"pyctk {curand.library.purpose}, whose device headers (curand_kernel.h) are not installed. "
            f"It is an optional part of pyctk: {curand.install_command()}"
        )


class _Compiled(NamedTuple):
    module: Module
    functions: dict[str, Function]
    launchers: dict[str, Kernel]
    state_size: int
    generators_per_block: int  # the most threads a block of every kernel can have


@functools.cache  # per process: the module serves every context of the device
def _compiled(kind: str, device: int) -> _Compiled:
    source, kernels = generator_source(kind), _kernels(_KINDS[kind])
    launchers = {name: Kernel(source, name, codes) for name, (_, codes) in kernels.items()}
    module = launching.loaded_module(source)  # (the one the launchers share)
    functions = {name: launcher.function for name, launcher in launchers.items()}
    address, _ = module.get_global("state_size")
    size = np.zeros(1, np.uint64)
    driver_api.call("cuMemcpyDtoH", size.ctypes.data, address, size.nbytes)
    return _Compiled(
        module,
        functions,
        launchers,
        int(size[0]),
        min(function.max_threads_per_block for function in functions.values()),
    )


# fill_* and gen_*: dtype -> kernel (the kernel names are PyCUDA's)
_UNIFORM = {
    np.dtype(np.float32): "uniform_float",
    np.dtype(np.float64): "uniform_double",
    np.dtype(np.int32): "uniform_int",
    np.dtype(np.uint32): "uniform_int",
    np.dtype(np.int64): "uniform_long",
    np.dtype(np.uint64): "uniform_long",
}
_NORMAL = {np.dtype(np.float32): "normal_float", np.dtype(np.float64): "normal_double"}
_LOG_NORMAL = {np.dtype(np.float32): "normal_log_float", np.dtype(np.float64): "normal_log_double"}
_POISSON_IN_PLACE = {
    np.dtype(np.float32): "poisson_inplace_float",
    np.dtype(np.float64): "poisson_inplace_double",
    np.dtype(np.uint32): "poisson_inplace_int",
}
_POISSON = {np.dtype(np.uint32): "poisson_int"}


class _RandomNumberGeneratorBase:
    """What every cuRAND generator has (PyCUDA's ``_RandomNumberGeneratorBase``).

    ``block_count`` (the GPU's multiprocessors) blocks of ``generators_per_block`` threads,
    each with its own ``state_type`` state in ``state``, fill arrays with a grid-wide stride;
    the states move on with every call. All calls are asynchronous, on ``stream``.

    Attributes
    ----------
    block_count : int
        Blocks of generators: the GPU's multiprocessors.
    generators_per_block : int
        Generators (threads) in a block.
    state : pyctk.driver.DeviceAllocation
        The generators' states.
    state_type : str
        cuRAND's C type of a state (``"curandStateXORWOW"`` ...).
    generator_bits : int
        The bits of a raw number (32, or 64 for 64-bit Sobol).
    has_box_muller : bool
        Whether normal numbers come two at a time.
    module : pyctk.driver.Module
        The generators' kernels.
    generators : dict
        Kernel name to :class:`pyctk.driver.Function`, as PyCUDA has them.
    """

    _kind = ""  # the row of _KINDS, set by each class

    def __init__(self) -> None:
        _require_curand()
        row = _KINDS[self._kind]
        device = driver_api.current_device()
        compiled = _compiled(self._kind, device)
        self.module = compiled.module
        self.generators = {name: compiled.functions[name] for name in _FILLS if name in compiled.functions}
        self._launchers = compiled.launchers
        self.state_type, self.generator_bits, self.has_box_muller = (
            row.state_type,
            row.generator_bits,
            row.has_box_muller,
        )
        self._skip_dtype = _WORDS[row.skip_bits][1]
        self.block_count = multiprocessor_count(device)
        self.generators_per_block = compiled.generators_per_block
        self._count = self.block_count * self.generators_per_block
        self.state = mem_alloc(self._count * compiled.state_size)

    def _prepare(self, vectors: GPUArray, scramble: int, offset: int) -> None:
        try:
            self._launch("prepare", 0, self.state, self._count, vectors.ptr, scramble, offset)
        except LaunchError as error:
            raise ValueError("Initialisation failed. Decrease number of threads.") from error

    def _launch(self, name: str, stream: int, *args: Any) -> None:
        self._launchers[name](self.block_count, self.generators_per_block, stream, *args)

    def _fill(
        self, table: dict, what: str, data: GPUArray, extra: tuple = (), stream: Any = None, in_place: bool = False
    ) -> None:
        """Run the kernel ``table`` has for ``data``'s dtype over ``data`` (a contiguous copy
        first when it is not contiguous: PyCUDA would write past a view's gaps)."""
        name = table.get(data.dtype)
        if name not in self._launchers:
            dtypes = ", ".join(str(d) for d, n in table.items() if n in self._launchers)
            raise NotImplementedError(f"{type(self).__name__}.{what} fills {dtypes} arrays, not {data.dtype}")
        if not data.size:
            return
        handle = stream_handle(stream)
        target = data if data.flags.forc else (data.copy() if in_place else data._new_like_me(order="C"))
        n = target.size
        if name + "2" in self._launchers and n % 2 == 0 and target.ptr % (2 * target.itemsize) == 0:
            name, n = name + "2", n // 2  # two numbers a call (Box-Muller), as PyCUDA does
        self._launch(name, handle, self.state, target.ptr, *extra, n)
        if target is not data:
            data._assign(target, handle)

    def fill_uniform(self, data: GPUArray, stream: Any = None) -> None:
        """Fill ``data`` with uniform numbers, as PyCUDA's ``fill_uniform``.

        float32 and float64 numbers are in (0, 1] (cuRAND's ``curand_uniform``); int32 and
        uint32 arrays get raw 32-bit numbers, int64 and uint64 raw 64-bit ones (64-bit Sobol
        only). Unlike PyCUDA's, integer arrays are filled too, 32 bits of a 64-bit Sobol
        number are its high half, and a non-contiguous ``data`` is filled through a copy.

        Parameters
        ----------
        data : GPUArray
        stream : pyctk.driver.Stream, optional

        Raises
        ------
        NotImplementedError
            Another dtype.

        Examples
        --------
        >>> import numpy as np                                      # doctest: +GPU
        >>> from pyctk import curandom, gpuarray
        >>> generator = curandom.XORWOWRandomNumberGenerator()
        >>> a = gpuarray.empty(1000, np.float32)
        >>> generator.fill_uniform(a)
        >>> u = a.get()
        >>> bool(u.min() > 0 and u.max() <= 1)
        True
        """
        self._fill(_UNIFORM, "fill_uniform", data, (), stream)

    def fill_normal(self, data: GPUArray, stream: Any = None) -> None:
        """Fill ``data`` with standard normal numbers, as PyCUDA's ``fill_normal``.

        Generators with Box-Muller (XORWOW, MRG32k3a) make two a call where ``data`` allows.

        Parameters
        ----------
        data : GPUArray
            float32 or float64.
        stream : pyctk.driver.Stream, optional
        """
        self._fill(_NORMAL, "fill_normal", data, (), stream)

    def fill_log_normal(self, data: GPUArray, mean: float, stddev: float, stream: Any = None) -> None:
        """Fill ``data`` with log-normal numbers, ``exp`` of normal numbers of ``mean`` and ``stddev``,
        as PyCUDA's ``fill_log_normal``.

        Parameters
        ----------
        data : GPUArray
            float32 or float64.
        mean, stddev : float
            Of the normal numbers.
        stream : pyctk.driver.Stream, optional
        """
        self._fill(_LOG_NORMAL, "fill_log_normal", data, (float(mean), float(stddev)), stream)

    def fill_poisson(self, data: GPUArray, lambda_value: float | None = None, stream: Any = None) -> None:
        """Fill ``data`` with Poisson numbers, as PyCUDA's ``fill_poisson``.

        Parameters
        ----------
        data : GPUArray
            uint32 with ``lambda_value``; without it, float32, float64 or uint32, each element
            replaced by a Poisson number of that mean (PyCUDA's in-place form).
        lambda_value : float, optional
            The mean of every number.
        stream : pyctk.driver.Stream, optional
        """
        if lambda_value is None:
            self._fill(_POISSON_IN_PLACE, "fill_poisson", data, (), stream, in_place=True)
        else:
            self._fill(_POISSON, "fill_poisson(lambda_value=...)", data, (float(lambda_value),), stream)

    def gen_uniform(self, shape: Any, dtype: Any, stream: Any = None) -> GPUArray:
        """A new GPUArray filled by :meth:`fill_uniform`, as PyCUDA's ``gen_uniform``.

        Parameters
        ----------
        shape : int or tuple of int
        dtype : data-type
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray
        """
        result = GPUArray(shape, dtype)
        self.fill_uniform(result, stream)
        return result

    def gen_normal(self, shape: Any, dtype: Any, stream: Any = None) -> GPUArray:
        """A new GPUArray filled by :meth:`fill_normal`, as PyCUDA's ``gen_normal``.

        Parameters
        ----------
        shape : int or tuple of int
        dtype : {float32, float64}
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray
        """
        result = GPUArray(shape, dtype)
        self.fill_normal(result, stream)
        return result

    def gen_log_normal(self, shape: Any, dtype: Any, mean: float, stddev: float, stream: Any = None) -> GPUArray:
        """A new GPUArray filled by :meth:`fill_log_normal`, as PyCUDA's ``gen_log_normal``.

        Parameters
        ----------
        shape : int or tuple of int
        dtype : {float32, float64}
        mean, stddev : float
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray
        """
        result = GPUArray(shape, dtype)
        self.fill_log_normal(result, mean, stddev, stream)
        return result

    def gen_poisson(self, shape: Any, dtype: Any, lambda_value: float, stream: Any = None) -> GPUArray:
        """A new GPUArray filled by ``fill_poisson(result, lambda_value)``, as PyCUDA's ``gen_poisson``.

        Parameters
        ----------
        shape : int or tuple of int
        dtype : {uint32}
        lambda_value : float
        stream : pyctk.driver.Stream, optional

        Returns
        -------
        GPUArray
        """
        result = GPUArray(shape, dtype)
        self.fill_poisson(result, lambda_value, stream)
        return result

    def _skip(self, kernel: str, i: Any, stream: Any) -> None:
        """Every generator's state skips ``i`` (PyCUDA skips only the first block's)."""
        self._launch(kernel, stream_handle(stream), self.state, self._count, int(i))

    def _skip_array(self, kernel: str, i: GPUArray, stream: Any) -> None:
        """Generator ``k``'s state skips ``i[k]``."""
        if not (isinstance(i, GPUArray) and i.dtype == self._skip_dtype and i.size == self._count):
            raise TypeError(
                f"{kernel}: i must be a GPUArray of {self._count} {self._skip_dtype} counts, "
                f"one per generator (block_count * generators_per_block)"
            )
        self._launch(kernel, stream_handle(stream), self.state, self._count, i._contiguous().ptr)

    def call_skip_ahead(self, i: int, stream: Any = None) -> None:
        """Move every generator ``i`` numbers on: cuRAND's ``skipahead`` (PyCUDA's ``call_skip_ahead``).

        Unlike PyCUDA's, which moves only the first block's generators, every generator
        moves.

        Parameters
        ----------
        i : int
        stream : pyctk.driver.Stream, optional
        """
        self._skip("skip_ahead", i, stream)

    def call_skip_ahead_array(self, i: GPUArray, stream: Any = None) -> None:
        """Move generator ``k`` ``i[k]`` numbers on (PyCUDA's ``call_skip_ahead_array``).

        Unlike PyCUDA's, every generator moves, not only the first block's.

        Parameters
        ----------
        i : GPUArray
            One count per generator (``block_count * generators_per_block``): uint64, or
            uint32 for the 32-bit Sobol generators.
        stream : pyctk.driver.Stream, optional

        Raises
        ------
        TypeError
            ``i`` of another dtype or size.
        """
        self._skip_array("skip_ahead_array", i, stream)


class _PseudoRandomNumberGeneratorBase(_RandomNumberGeneratorBase):
    """XORWOW and MRG32k3a: seeded generators, generator ``k`` on subsequence ``k``."""

    def __init__(self, seed_getter: Callable[[int], GPUArray] | None = None, offset: int = 0) -> None:
        super().__init__()
        if seed_getter is None:
            seed = _to_gpu(np.random.randint(0, 2**31 - 1, self._count).astype(np.int32))
        else:
            seed = seed_getter(self._count)
        if not (isinstance(seed, GPUArray) and seed.dtype == np.int32 and seed.size == self._count):
            raise TypeError(
                f"seed must be GPUArray of integers of right length: seed_getter({self._count}) "
                f"must return an int32 GPUArray of {self._count} seeds (block_count * "
                f"generators_per_block), as seed_getter_unique does"
            )
        self._prepare(seed._contiguous(), 0, offset)

    def call_skip_ahead_sequence(self, i: int, stream: Any = None) -> None:
        """Move every generator ``i`` subsequences on: cuRAND's ``skipahead_sequence``
        (PyCUDA's ``call_skip_ahead_sequence``).

        Unlike PyCUDA's, every generator moves, not only the first block's.

        Parameters
        ----------
        i : int
        stream : pyctk.driver.Stream, optional
        """
        self._skip("skip_ahead_sequence", i, stream)

    def call_skip_ahead_sequence_array(self, i: GPUArray, stream: Any = None) -> None:
        """Move generator ``k`` ``i[k]`` subsequences on (PyCUDA's ``call_skip_ahead_sequence_array``).

        Unlike PyCUDA's, every generator moves, not only the first block's.

        Parameters
        ----------
        i : GPUArray
            uint64, one count per generator.
        stream : pyctk.driver.Stream, optional
        """
        self._skip_array("skip_ahead_sequence_array", i, stream)


class _SobolRandomNumberGeneratorBase(_RandomNumberGeneratorBase):
    """Sobol quasi-random generators: generator ``k`` makes dimension ``k`` of the sequence."""

    _directions = direction_vector_set.VECTOR_32
    _scramble: Callable[[int], GPUArray] | None = None  # scramble constants, for the scrambled kinds

    def __init__(
        self, dir_vector: GPUArray | None = None, scramble_vector: GPUArray | None = None, offset: int = 0
    ) -> None:
        super().__init__()
        bits = _DIRECTION_BITS[self._directions]
        dtype = _WORDS[bits][1]
        if dir_vector is None:
            dir_vector = generate_direction_vectors(self._count, self._directions)
        if not (
            isinstance(dir_vector, GPUArray) and dir_vector.dtype == dtype and dir_vector.shape == (self._count, bits)
        ):
            raise TypeError(
                f"dir_vector must be a {dtype} GPUArray of shape ({self._count}, {bits}): "
                f"generate_direction_vectors({self._count}, {self._directions!s})"
            )
        scramble = 0
        if self._scramble is not None:
            if scramble_vector is None:
                scramble_vector = self._scramble(self._count)
            if not (
                isinstance(scramble_vector, GPUArray)
                and scramble_vector.dtype == dtype
                and scramble_vector.shape == (self._count,)
            ):
                raise TypeError(
                    f"scramble_vector must be a {dtype} GPUArray of shape ({self._count},): "
                    f"{self._scramble.__name__}({self._count})"
                )
            scramble_vector = scramble_vector._contiguous()
            scramble = scramble_vector.ptr
        self._prepare(dir_vector._contiguous(), scramble, offset)


class XORWOWRandomNumberGenerator(_PseudoRandomNumberGeneratorBase):
    """cuRAND's XORWOW pseudorandom generator, one per GPU thread (PyCUDA's ``XORWOWRandomNumberGenerator``).

    Generator ``k`` runs subsequence ``k`` of its seed's sequence; its period is at least
    2**190. The kernels (cuRAND's device API) are compiled on first use, which needs the
    ``curand`` extra. Unlike PyCUDA's, skipping ahead moves every generator, and the methods
    take non-contiguous arrays.

    Parameters
    ----------
    seed_getter : callable, optional
        ``seed_getter(n)``: an int32 GPUArray of ``n`` seeds, such as
        :func:`seed_getter_unique` or :func:`seed_getter_uniform`; default
        ``np.random.randint`` values.
    offset : int, optional
        Numbers to skip at the start.

    Raises
    ------
    pyctk.LibraryNotFoundError
        cuRAND's headers are not installed: the message gives the pip command.
    TypeError
        ``seed_getter`` gave seeds of another dtype or number.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import curandom
    >>> generator = curandom.XORWOWRandomNumberGenerator(curandom.seed_getter_unique)
    >>> x = generator.gen_normal((100000,), np.float32).get()
    >>> x.dtype, bool(abs(x.mean()) < 0.05 and abs(x.std() - 1) < 0.05)
    (dtype('float32'), True)
    """

    _kind = "XORWOW"


class MRG32k3aRandomNumberGenerator(_PseudoRandomNumberGeneratorBase):
    """cuRAND's MRG32k3a pseudorandom generator, one per GPU thread (PyCUDA's ``MRG32k3aRandomNumberGenerator``).

    Arguments as for :class:`XORWOWRandomNumberGenerator`; it can also skip whole
    subsequences. Unlike PyCUDA's, skipping ahead moves every generator.

    Parameters
    ----------
    seed_getter : callable, optional
        ``seed_getter(n)``: an int32 GPUArray of ``n`` seeds.
    offset : int, optional
        Numbers to skip at the start.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import curandom
    >>> generator = curandom.MRG32k3aRandomNumberGenerator()
    >>> u = generator.gen_uniform((1000,), np.float64).get()
    >>> u.dtype, bool(u.min() > 0 and u.max() <= 1)
    (dtype('float64'), True)
    """

    _kind = "MRG32k3a"

    def call_skip_ahead_subsequence(self, i: int, stream: Any = None) -> None:
        """Move every generator ``i`` subsequences on: cuRAND's ``skipahead_subsequence``
        (PyCUDA's ``call_skip_ahead_subsequence``).

        Unlike PyCUDA's, every generator moves, not only the first block's.

        Parameters
        ----------
        i : int
        stream : pyctk.driver.Stream, optional
        """
        self._skip("skip_ahead_subsequence", i, stream)

    def call_skip_ahead_subsequence_array(self, i: GPUArray, stream: Any = None) -> None:
        """Move generator ``k`` ``i[k]`` subsequences on (PyCUDA's ``call_skip_ahead_subsequence_array``).

        Unlike PyCUDA's, every generator moves, not only the first block's.

        Parameters
        ----------
        i : GPUArray
            uint64, one count per generator.
        stream : pyctk.driver.Stream, optional
        """
        self._skip_array("skip_ahead_subsequence_array", i, stream)


class Sobol32RandomNumberGenerator(_SobolRandomNumberGeneratorBase):
    """cuRAND's 32-bit Sobol quasirandom generator (PyCUDA's ``Sobol32RandomNumberGenerator``).

    Generator ``k`` makes dimension ``k`` of the sequence. Unlike PyCUDA's, skipping ahead
    moves every generator.

    Parameters
    ----------
    dir_vector : GPUArray, optional
        uint32, ``(N, 32)`` for ``N = block_count * generators_per_block``; default
        :func:`generate_direction_vectors` of ``N`` dimensions.
    offset : int, optional
        Points to skip at the start.

    Raises
    ------
    TypeError
        ``dir_vector`` of another dtype or shape.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import curandom
    >>> generator = curandom.Sobol32RandomNumberGenerator()
    >>> u = generator.gen_uniform((1000,), np.float32).get()
    >>> u.shape, bool(u.min() > 0 and u.max() <= 1)
    ((1000,), True)
    """

    _kind = "Sobol32"

    def __init__(self, dir_vector: GPUArray | None = None, offset: int = 0) -> None:
        super().__init__(dir_vector, None, offset)


class ScrambledSobol32RandomNumberGenerator(_SobolRandomNumberGeneratorBase):
    """cuRAND's scrambled 32-bit Sobol quasirandom generator (PyCUDA's ``ScrambledSobol32RandomNumberGenerator``).

    Unlike PyCUDA's, skipping ahead moves every generator.

    Parameters
    ----------
    dir_vector : GPUArray, optional
        uint32, ``(N, 32)``; default :func:`generate_direction_vectors` of the
        ``SCRAMBLED_VECTOR_32`` set.
    scramble_vector : GPUArray, optional
        uint32, ``(N,)``; default :func:`generate_scramble_constants32`.
    offset : int, optional
        Points to skip at the start.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import curandom
    >>> generator = curandom.ScrambledSobol32RandomNumberGenerator()
    >>> generator.gen_uniform((1000,), np.float32).shape
    (1000,)
    """

    _kind = "ScrambledSobol32"
    _directions = direction_vector_set.SCRAMBLED_VECTOR_32
    _scramble = staticmethod(generate_scramble_constants32)


class Sobol64RandomNumberGenerator(_SobolRandomNumberGeneratorBase):
    """cuRAND's 64-bit Sobol quasirandom generator (PyCUDA's ``Sobol64RandomNumberGenerator``).

    :meth:`fill_uniform` also fills int64 and uint64 arrays with raw 64-bit numbers. Unlike
    PyCUDA's, skipping ahead moves every generator.

    Parameters
    ----------
    dir_vector : GPUArray, optional
        uint64, ``(N, 64)``; default :func:`generate_direction_vectors` of the
        ``VECTOR_64`` set.
    offset : int, optional
        Points to skip at the start.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import curandom
    >>> generator = curandom.Sobol64RandomNumberGenerator()
    >>> generator.gen_uniform((1000,), np.uint64).dtype
    dtype('uint64')
    """

    _kind = "Sobol64"
    _directions = direction_vector_set.VECTOR_64

    def __init__(self, dir_vector: GPUArray | None = None, offset: int = 0) -> None:
        super().__init__(dir_vector, None, offset)


class ScrambledSobol64RandomNumberGenerator(_SobolRandomNumberGeneratorBase):
    """cuRAND's scrambled 64-bit Sobol quasirandom generator (PyCUDA's ``ScrambledSobol64RandomNumberGenerator``).

    Unlike PyCUDA's, skipping ahead moves every generator.

    Parameters
    ----------
    dir_vector : GPUArray, optional
        uint64, ``(N, 64)``; default :func:`generate_direction_vectors` of the
        ``SCRAMBLED_VECTOR_64`` set.
    scramble_vector : GPUArray, optional
        uint64, ``(N,)``; default :func:`generate_scramble_constants64`.
    offset : int, optional
        Points to skip at the start.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +GPU
    >>> from pyctk import curandom
    >>> generator = curandom.ScrambledSobol64RandomNumberGenerator()
    >>> generator.gen_uniform((1000,), np.float64).dtype
    dtype('float64')
    """

    _kind = "ScrambledSobol64"
    _directions = direction_vector_set.SCRAMBLED_VECTOR_64
    _scramble = staticmethod(generate_scramble_constants64)
