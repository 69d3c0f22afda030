"""pyctk.curandom on a GPU: rand against the NumPy Philox4x32-10 reference bit for bit, its
range, moments and reproducibility; cuRAND's generators: moments of every distribution,
reproducibility with fixed seeds, skip-ahead (every generator's state: PyCUDA's [bug] fixed),
offsets, the Sobol sequences against their definition from cuRAND's direction vectors,
non-contiguous and empty arrays, streams, and the errors. The cuRAND tests skip without
the curand extra."""

from __future__ import annotations

import numpy as np
import pytest

from pyctk import driver, gpuarray
from pyctk._pycuda.gpuarrays import curandom
from support.curand_wheel import CURAND_WHEEL, HAS_CURAND, needs_curand
from support.philox import reference_rand

pytestmark = pytest.mark.gpu

RAND_DTYPES = [np.float32, np.float64, np.int32, np.uint32]


# --- rand ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", RAND_DTYPES)
@pytest.mark.parametrize("shape", [0, (0, 3), 1, 3, 5, 7, (3, 5, 7), 1000, 2**20 + 3])
def test_rand_is_the_reference(shape, dtype):
    np.random.seed(1234)
    seed = np.random.RandomState(1234).randint(2**31 - 1)  # the draw rand makes
    result = curandom.rand(shape, dtype)
    host = result.get()
    assert result.dtype == dtype and host.shape == np.empty(shape).shape
    np.testing.assert_array_equal(host.ravel(), reference_rand(host.size, np.dtype(dtype), seed))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rand_floats_are_uniform_in_0_1(dtype):
    values = curandom.rand((1000, 1001), dtype).get()
    assert values.min() >= 0 and values.max() < 1
    assert abs(values.mean() - 0.5) < 0.002 and abs(values.var() - 1 / 12) < 0.002


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_rand_integers_use_all_32_bits(dtype):
    values = curandom.rand(1_000_001, dtype).get().view(np.uint32).astype(np.float64)
    assert abs(values.mean() / 2**32 - 0.5) < 0.002
    assert values.max() > 2**32 - 2**24 and values.min() < 2**24


def test_rand_repeats_with_np_random_seed_and_moves_on_otherwise():
    np.random.seed(7)
    first, second = curandom.rand(1001).get(), curandom.rand(1001).get()
    np.random.seed(7)
    np.testing.assert_array_equal(curandom.rand(1001).get(), first)
    assert (first != second).mean() > 0.99


def test_rand_draws_one_number_from_numpy_as_pycuda():
    np.random.seed(3)
    curandom.rand(10)
    after = np.random.randint(10**9)
    np.random.seed(3)
    np.random.randint(2**31 - 1)
    assert np.random.randint(10**9) == after


def test_rand_on_a_stream():
    stream = driver.Stream()
    result = curandom.rand((4, 1000), np.float64, stream=stream)
    stream.synchronize()
    assert 0 <= result.get().min() and result.get().max() < 1


@pytest.mark.parametrize("dtype", [np.int64, np.float16, np.complex64])
def test_rand_other_dtypes(dtype):
    with pytest.raises(NotImplementedError):
        curandom.rand(3, dtype)


# --- seeds, direction vectors, scramble constants ----------------------------------------------------


def test_seed_getters():
    uniform = curandom.seed_getter_uniform(1000)
    assert uniform.dtype == np.int32 and uniform.shape == (1000,)
    assert len(np.unique(uniform.get())) == 1 and uniform.get()[0] >= 0
    np.random.seed(11)
    unique = curandom.seed_getter_unique(1000)
    assert unique.dtype == np.int32 and unique.shape == (1000,) and len(np.unique(unique.get())) > 990
    np.random.seed(11)
    np.testing.assert_array_equal(curandom.seed_getter_unique(1000).get(), unique.get())


@needs_curand
def test_direction_vectors_and_scramble_constants():
    sets = curandom.direction_vector_set
    vectors = curandom.generate_direction_vectors(20003)
    assert vectors.dtype == np.uint32 and vectors.shape == (20003, 32)
    host = vectors.get()
    np.testing.assert_array_equal(host[0], 2 ** (31 - np.arange(32)))
    np.testing.assert_array_equal(host[20000:], host[:3])  # the table repeats (PyCUDA's)
    assert curandom.generate_direction_vectors(5, sets.SCRAMBLED_VECTOR_32).shape == (5, 32)
    for direction in (sets.VECTOR_64, sets.SCRAMBLED_VECTOR_64):
        vectors = curandom.generate_direction_vectors(7, direction)
        assert vectors.dtype == np.uint64 and vectors.shape == (7, 64)
    scramble32 = curandom.generate_scramble_constants32(20001)
    assert scramble32.dtype == np.uint32 and scramble32.shape == (20001,)
    assert scramble32.get()[20000] == scramble32.get()[0]
    scramble64 = curandom.generate_scramble_constants64(9)
    assert scramble64.dtype == np.uint64 and scramble64.shape == (9,) and len(np.unique(scramble64.get())) == 9
    assert curandom.generate_direction_vectors(0).shape == (0, 32)


@needs_curand
def test_curand_version():
    major, minor, patch = curandom.get_curand_version()
    assert major == 10 and minor >= 3 and patch >= 0


# --- the generators -----------------------------------------------------------------------------------

PSEUDO = [curandom.XORWOWRandomNumberGenerator, curandom.MRG32k3aRandomNumberGenerator]
SOBOL = [
    curandom.Sobol32RandomNumberGenerator,
    curandom.ScrambledSobol32RandomNumberGenerator,
    curandom.Sobol64RandomNumberGenerator,
    curandom.ScrambledSobol64RandomNumberGenerator,
]
ROWS = 64  # numbers per generator in the moment tests: a whole 2**6 points of each Sobol dimension


def fixed_seeds(n: int) -> gpuarray.GPUArray:
    return gpuarray.to_gpu(np.full(n, 20250101, np.int32))


def count(generator) -> int:
    return generator.block_count * generator.generators_per_block


@pytest.fixture(params=PSEUDO + SOBOL, ids=lambda cls: cls.__name__)
def generator(request):
    """A new generator (compiled once per process): a Sobol one at the start of its sequence."""
    if not HAS_CURAND:
        pytest.skip(f"needs the curand extra ({CURAND_WHEEL})")
    return request.param() if request.param in SOBOL else request.param(fixed_seeds)


def sample(generator, make, dtype, *args):
    """``make((ROWS, N), dtype, *args)``'s rows after the first, as float64: row k holds number
    k of every generator; a new Sobol dimension's first point is 0 (unscrambled), its next 63
    are spread evenly over (0, 1), so these moments are close for Sobol too."""
    return make((ROWS, count(generator)), dtype, *args).get()[1:].astype(np.float64)


def tolerance(generator, pseudo: float, sobol: float) -> float:
    return sobol if type(generator) in SOBOL else pseudo


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform(generator, dtype):
    values = sample(generator, generator.gen_uniform, dtype)
    assert values.min() > 0 and values.max() <= 1  # cuRAND's (0, 1]
    assert abs(values.mean() - 0.5) < tolerance(generator, 0.002, 0.005)
    assert abs(values.var() - 1 / 12) < tolerance(generator, 0.002, 0.005)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_uniform_raw_32_bits(generator, dtype):
    result = generator.gen_uniform((ROWS, count(generator)), dtype)
    assert result.dtype == dtype
    values = result.get()[1:].view(np.uint32) / 2**32
    assert abs(values.mean() - 0.5) < tolerance(generator, 0.002, 0.005)


def test_uniform_raw_64_bits_only_for_64_bit_sobol(generator):
    if generator.generator_bits == 64:
        values = sample(generator, generator.gen_uniform, np.uint64) / 2.0**64
        assert abs(values.mean() - 0.5) < 0.005
        assert generator.gen_uniform((10,), np.int64).dtype == np.int64
    else:
        with pytest.raises(NotImplementedError, match="int64"):
            generator.gen_uniform((10,), np.int64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal(generator, dtype):
    values = sample(generator, generator.gen_normal, dtype)
    assert np.isfinite(values).all()
    assert abs(values.mean()) < tolerance(generator, 0.005, 0.02)
    assert abs(values.std() - 1) < tolerance(generator, 0.005, 0.08)


@needs_curand
@pytest.mark.parametrize("cls", PSEUDO, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_pairs_and_single_numbers(cls, dtype):
    """Even sizes take two numbers a call (Box-Muller), odd ones and misaligned ones one."""
    generator = cls(fixed_seeds)
    for size in (1_000_000, 1_000_001):
        values = generator.gen_normal((size,), dtype).get().astype(np.float64)
        assert abs(values.mean()) < 0.005 and abs(values.std() - 1) < 0.005
    shifted = gpuarray.to_gpu(np.zeros(1_000_001, dtype))[1:]  # an even size at an odd element
    generator.fill_log_normal(shifted, 1.0, 0.5)
    logs = np.log(shifted.get().astype(np.float64))
    assert abs(logs.mean() - 1) < 0.005 and abs(logs.std() - 0.5) < 0.005


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_normal(generator, dtype):
    mean, stddev = 0.5, 0.25
    values = sample(generator, generator.gen_log_normal, dtype, mean, stddev)
    assert values.min() > 0
    logs = np.log(values)
    assert abs(logs.mean() - mean) < stddev * tolerance(generator, 0.005, 0.02)
    assert abs(logs.std() / stddev - 1) < tolerance(generator, 0.005, 0.08)


@pytest.mark.parametrize("lambda_value", [4.5, 100.0])
def test_poisson(generator, lambda_value):
    values = sample(generator, generator.gen_poisson, np.uint32, lambda_value)
    assert abs(values.mean() / lambda_value - 1) < tolerance(generator, 0.005, 0.03)
    assert abs(values.var() / lambda_value - 1) < tolerance(generator, 0.03, 0.2)
    assert generator.gen_poisson((5,), np.uint32, lambda_value).dtype == np.uint32


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint32])
def test_poisson_in_place(generator, dtype):
    lambdas = np.array([1, 7, 100], dtype)[np.arange(count(generator)) % 3]  # by generator: all its rows
    data = gpuarray.to_gpu(np.tile(lambdas, (ROWS, 1)))
    generator.fill_poisson(data)
    values = data.get()[1:].astype(np.float64)
    for group, lambda_value in enumerate((1, 7, 100)):
        mean = values[:, group::3].mean()
        assert abs(mean / lambda_value - 1) < tolerance(generator, 0.01, 0.03), (lambda_value, mean)
    assert (values == np.round(values)).all()


def test_fill_refuses_other_dtypes(generator):
    for fill, dtype in [
        (generator.fill_uniform, np.float16),
        (generator.fill_uniform, np.complex64),
        (generator.fill_normal, np.int32),
        (generator.fill_normal, np.uint32),
        (lambda data: generator.fill_log_normal(data, 0, 1), np.int32),
        (lambda data: generator.fill_poisson(data, 2.0), np.float32),
        (lambda data: generator.fill_poisson(data), np.int32),
    ]:
        with pytest.raises(NotImplementedError):
            fill(gpuarray.to_gpu(np.zeros(4, dtype)))
    with pytest.raises(NotImplementedError):
        generator.gen_poisson((4,), np.float32, 2.0)


def test_empty_and_non_contiguous(generator):
    assert generator.gen_uniform((0,), np.float32).shape == (0,)
    assert generator.gen_normal((3, 0), np.float64).shape == (3, 0)
    base = gpuarray.to_gpu(np.zeros((300, 64), np.float32))
    generator.fill_uniform(base[:, ::2])
    host = base.get()
    assert (host[:, 1::2] == 0).all() and (host[:, ::2] > 0).all() and (host[:, ::2] <= 1).all()
    lambdas = gpuarray.to_gpu(np.full((300, 64), 5.5))  # not a whole number: every one drawn changes
    generator.fill_poisson(lambdas[::3])
    host = lambdas.get()
    assert (host[1::3] == 5.5).all() and (host[2::3] == 5.5).all()
    assert (host[::3] == np.round(host[::3])).all()
    normal = gpuarray.to_gpu(np.full((100, 30), np.nan))
    generator.fill_normal(normal.T[::2])  # a transposed view with gaps
    host = normal.get()
    assert np.isfinite(host[:, ::2]).all() and np.isnan(host[:, 1::2]).all()


def test_on_a_stream(generator):
    stream = driver.Stream()
    result = generator.gen_uniform((2, 1000), np.float32, stream=stream)
    stream.synchronize()
    assert (result.get() > 0).all()


def test_attributes(generator):
    multiprocessors = driver.Context.get_device().get_attribute(driver.device_attribute.MULTIPROCESSOR_COUNT)
    assert generator.block_count == multiprocessors
    assert 32 <= generator.generators_per_block <= 1024
    assert generator.state_type.startswith("curandState")
    assert generator.has_box_muller == (type(generator) in PSEUDO)
    assert generator.generator_bits == (64 if "64" in type(generator).__name__ else 32)
    assert {"uniform_float", "normal_double", "poisson_int"} <= set(generator.generators)
    assert isinstance(generator.generators["uniform_float"], driver.Function)
    assert generator.module is not None and int(generator.state) != 0


# --- pseudo-random: reproducibility, offsets, skip-ahead ------------------------------------------------


@needs_curand
@pytest.mark.parametrize("cls", PSEUDO, ids=lambda cls: cls.__name__)
def test_pseudo_reproducible_and_skips(cls):
    a, b = cls(fixed_seeds), cls(fixed_seeds)
    n = count(a)
    first = a.gen_uniform((8, n), np.uint32).get()
    np.testing.assert_array_equal(b.gen_uniform((2, n), np.uint32).get(), first[:2])
    b.call_skip_ahead(3)  # every generator: PyCUDA moves only the first block's
    np.testing.assert_array_equal(b.gen_uniform((3, n), np.uint32).get(), first[5:8])

    c = cls(fixed_seeds)
    c.call_skip_ahead_array(gpuarray.to_gpu((np.arange(n) % 5).astype(np.uint64)))
    np.testing.assert_array_equal(c.gen_uniform((1, n), np.uint32).get()[0], first[np.arange(n) % 5, np.arange(n)])

    d = cls(fixed_seeds, offset=4)
    np.testing.assert_array_equal(d.gen_uniform((4, n), np.uint32).get(), first[4:8])

    for make in (
        lambda g: g.gen_normal((3, n), np.float32),
        lambda g: g.gen_normal((3, n), np.float64),
        lambda g: g.gen_log_normal((3, n), np.float64, 1.0, 2.0),
        lambda g: g.gen_poisson((3, n), np.uint32, 30.0),
    ):
        np.testing.assert_array_equal(make(cls(fixed_seeds)).get(), make(cls(fixed_seeds)).get())


@needs_curand
@pytest.mark.parametrize(
    "cls, skip",
    [
        (curandom.XORWOWRandomNumberGenerator, "call_skip_ahead_sequence"),
        (curandom.MRG32k3aRandomNumberGenerator, "call_skip_ahead_subsequence"),
    ],
)
def test_skipping_a_subsequence_is_the_next_generator(cls, skip):
    """Generator k starts on subsequence k of the seed: with one seed for all, skipping one
    subsequence makes generator k what generator k + 1 was."""
    a, b, c = cls(fixed_seeds), cls(fixed_seeds), cls(fixed_seeds)
    n = count(a)
    first = a.gen_uniform((4, n), np.uint32).get()
    getattr(b, skip)(1)
    np.testing.assert_array_equal(b.gen_uniform((4, n), np.uint32).get()[:, :-1], first[:, 1:])
    getattr(c, skip + "_array")(gpuarray.to_gpu((np.arange(n) % 2).astype(np.uint64)))
    moved = c.gen_uniform((4, n), np.uint32).get()
    np.testing.assert_array_equal(moved[:, 0:-1:2], first[:, 0:-1:2])
    np.testing.assert_array_equal(moved[:, 1:-1:2], first[:, 2::2])


@needs_curand
def test_mrg32k3a_sequence_skip_moves_every_generator():
    a, b = curandom.MRG32k3aRandomNumberGenerator(fixed_seeds), curandom.MRG32k3aRandomNumberGenerator(fixed_seeds)
    n = count(a)
    b.call_skip_ahead_sequence(1)
    assert (b.gen_uniform((2, n), np.uint32).get() != a.gen_uniform((2, n), np.uint32).get()).all(axis=0).mean() > 0.99
    b.call_skip_ahead_sequence_array(gpuarray.to_gpu(np.ones(n, np.uint64)))


@needs_curand
def test_default_seeds_follow_np_random_seed():
    np.random.seed(21)
    first = curandom.XORWOWRandomNumberGenerator().gen_uniform((1000,), np.uint32).get()
    np.random.seed(21)
    np.testing.assert_array_equal(curandom.XORWOWRandomNumberGenerator().gen_uniform((1000,), np.uint32).get(), first)
    with_uniform = curandom.XORWOWRandomNumberGenerator(curandom.seed_getter_uniform)
    with_unique = curandom.MRG32k3aRandomNumberGenerator(curandom.seed_getter_unique)
    assert with_uniform.gen_uniform((10,), np.float32).shape == with_unique.gen_uniform((10,), np.float32).shape


@needs_curand
@pytest.mark.parametrize("cls", PSEUDO, ids=lambda cls: cls.__name__)
def test_bad_seeds(cls):
    for seeds in (
        lambda n: gpuarray.to_gpu(np.zeros(n + 1, np.int32)),
        lambda n: gpuarray.to_gpu(np.zeros(n, np.int64)),
        lambda n: np.zeros(n, np.int32),
    ):
        with pytest.raises(TypeError, match="seed"):
            cls(seeds)


@needs_curand
@pytest.mark.parametrize("cls", PSEUDO + SOBOL, ids=lambda cls: cls.__name__)
def test_bad_skip_arrays(cls):
    generator = cls(fixed_seeds) if cls in PSEUDO else cls()
    n = count(generator)
    wrong = (
        np.uint64
        if cls in (curandom.Sobol32RandomNumberGenerator, curandom.ScrambledSobol32RandomNumberGenerator)
        else np.uint32
    )
    for skips in (
        gpuarray.to_gpu(np.zeros(n, wrong)),
        gpuarray.to_gpu(np.zeros(n + 1, generator._skip_dtype)),
        np.zeros(n, generator._skip_dtype),
    ):
        with pytest.raises(TypeError, match="one per generator"):
            generator.call_skip_ahead_array(skips)


# --- Sobol: the sequence itself ----------------------------------------------------------------------

SCRAMBLED = {
    curandom.ScrambledSobol32RandomNumberGenerator: curandom.generate_scramble_constants32,
    curandom.ScrambledSobol64RandomNumberGenerator: curandom.generate_scramble_constants64,
}


def sobol_points(directions: np.ndarray, scramble: np.ndarray, first: np.ndarray | int, rows: int) -> np.ndarray:
    """Points first .. first + rows - 1 of each dimension (a column each): the scramble
    constant XOR the direction vectors of the bits set in the point's Gray code."""
    bits = directions.shape[1]
    index = (np.asarray(first, np.uint64) + np.arange(rows, dtype=np.uint64)[:, None]) * np.ones(
        (1, directions.shape[0]), np.uint64
    )
    gray = index ^ (index >> np.uint64(1))
    points = np.broadcast_to(scramble, gray.shape).copy()
    for bit in range(bits):
        points ^= np.where((gray >> np.uint64(bit)) & np.uint64(1) == 1, directions[:, bit], 0).astype(points.dtype)
    return points


@needs_curand
@pytest.mark.parametrize("cls", SOBOL, ids=lambda cls: cls.__name__)
def test_sobol_is_the_sequence_and_skips(cls):
    generator = cls()
    n = count(generator)
    raw = np.uint64 if generator.generator_bits == 64 else np.uint32
    directions = curandom.generate_direction_vectors(n, cls._directions).get()
    scramble = SCRAMBLED[cls](n).get() if cls in SCRAMBLED else np.zeros(n, raw)
    np.testing.assert_array_equal(generator.gen_uniform((6, n), raw).get(), sobol_points(directions, scramble, 0, 6))
    generator.call_skip_ahead(3)  # every dimension, not only the first block's
    np.testing.assert_array_equal(generator.gen_uniform((2, n), raw).get(), sobol_points(directions, scramble, 9, 2))
    generator.call_skip_ahead_array(gpuarray.to_gpu((np.arange(n) % 5).astype(generator._skip_dtype)))
    np.testing.assert_array_equal(
        generator.gen_uniform((1, n), raw).get(), sobol_points(directions, scramble, 11 + np.arange(n) % 5, 1)
    )
    np.testing.assert_array_equal(
        cls(offset=5).gen_uniform((2, n), raw).get(), sobol_points(directions, scramble, 5, 2)
    )


@needs_curand
def test_sobol32_first_points_of_dimension_0():
    """cuRAND's uniform floats are x / 2**32 + 2**-33: dimension 0 runs 0, 1/2, 3/4, 1/4, 3/8 ..."""
    generator = curandom.Sobol32RandomNumberGenerator()
    values = generator.gen_uniform((5, count(generator)), np.float32).get()[:, 0]
    np.testing.assert_allclose(values, [2.0**-33, 0.5, 0.75, 0.25, 0.375], rtol=1e-6)


@needs_curand
@pytest.mark.parametrize("cls", SOBOL, ids=lambda cls: cls.__name__)
def test_sobol_bad_vectors(cls):
    probe = cls()
    n, bits = count(probe), probe.generator_bits
    dtype = np.uint64 if bits == 64 else np.uint32
    good = curandom.generate_direction_vectors(n, cls._directions)
    for wrong in (
        gpuarray.to_gpu(np.zeros((n, bits), np.int32)),
        gpuarray.to_gpu(np.zeros((n - 1, bits), dtype)),
        np.zeros((n, bits), dtype),
    ):
        with pytest.raises(TypeError, match="dir_vector"):
            cls(wrong)
    if cls in SCRAMBLED:
        for wrong in (gpuarray.to_gpu(np.zeros(n, np.float32)), gpuarray.to_gpu(np.zeros(n + 1, dtype))):
            with pytest.raises(TypeError, match="scramble_vector"):
                cls(good, wrong)
        np.testing.assert_array_equal(
            cls(good, gpuarray.to_gpu(np.zeros(n, dtype))).gen_uniform((3, n), dtype).get(),
            sobol_points(good.get(), np.zeros(n, dtype), 0, 3),
        )
