"""pyctk.dask without a GPU: the graph (block products, the sum over k), the chunking rules
(hypothesis), the errors, and numpy.matmul's semantics, computed by Dask's synchronous
scheduler with the block product's pyctk.matmul swapped for NumPy (here only); then one
real distributed.LocalCluster of processes, whose workers reach pyctk's no-driver error.
"""

from __future__ import annotations

import importlib
import math
import pickle
import platform
import subprocess
import sys

import numpy as np
import pytest

if platform.python_implementation() != "CPython":  # the test extra leaves Dask out there
    pytest.importorskip(
        "distributed",
        reason="pyproject.toml's test extra installs Dask on CPython only (distributed's psutil has no PyPy wheel)",
    )

import dask
import dask.array as da
from hypothesis import given, settings
from hypothesis import strategies as st

import pyctk
import pyctk.dask
from pyctk._cuda import driver_errors, errors
from pyctk._dask import blocks, chunking
from pyctk._matmul import dtypes

try:
    from ml_dtypes import bfloat16
except ImportError:  # CPython wheels only
    bfloat16 = None


def layer_sizes(array: da.Array) -> dict[str, int]:
    """Tasks per layer of ``array``'s graph, by the layer's name without its token."""
    sizes: dict[str, int] = {}
    for name, layer in array.dask.layers.items():
        prefix = name.rsplit("-", 1)[0]
        sizes[prefix] = sizes.get(prefix, 0) + len(layer)
    return sizes


def lazy(shape: tuple[int, ...], chunks) -> da.Array:
    return da.ones(shape, dtype=np.float32, chunks=chunks)


B = chunking.MIN_BLOCK  # chunks of this size are worth a GPU: they are never combined


# ---------------------------------------------------------------------------
# The graph, built with the real block product (built only: no GPU is touched).


@pytest.mark.parametrize(
    "k_blocks, sum_layers",
    [
        (1, {}),  # nothing to sum
        (3, {"pyctk-k-sum": 3 * 2 * 3, "pyctk-k-sum-aggregate": 3 * 2}),  # one level
        (
            16,
            {"pyctk-k-sum": 3 * 2 * 16, "pyctk-k-sum-partial": 3 * 2 * 4, "pyctk-k-sum-aggregate": 3 * 2},
        ),  # a tree: 16 -> 4 -> 1
    ],
)
def test_one_block_product_per_row_k_col_block_and_a_tree_sum_over_k(k_blocks, sum_layers):
    with dask.config.set(split_every=4):
        z = pyctk.dask.matmul(lazy((3 * B, k_blocks * B), B), lazy((k_blocks * B, 2 * B), B))
    sizes = layer_sizes(z)
    assert sizes["pyctk-block-product"] == 3 * k_blocks * 2
    assert {name: count for name, count in sizes.items() if name.startswith("pyctk-k-sum")} == sum_layers
    assert z.chunks == ((B,) * 3, (B,) * 2) and z.dtype == np.float32
    assert not [name for name in sizes if name.startswith("rechunk")]


def test_building_the_graph_multiplies_nothing(monkeypatch):
    # Dask finds a result's meta by calling the block function on empty blocks unless it is
    # given one: that would start CUDA in the client, which may have no GPU.
    calls = []
    monkeypatch.setattr(blocks, "matmul", lambda *args, **kwargs: calls.append(args))
    pyctk.dask.matmul(lazy((2 * B, 3 * B), B), lazy((3 * B, 2), (B, 1)))
    pyctk.dask.matmul(lazy((5, 2, B), (1, 1, B)), lazy((B,), B))
    assert calls == []


def test_chunks_worth_a_gpu_add_no_rechunk_and_small_ones_are_combined():
    right = pyctk.dask.matmul(lazy((2 * B, 3 * B), (B, (B, 2 * B))), lazy((3 * B, 5), ((B, 2 * B), 5)))
    assert not [name for name in layer_sizes(right) if "rechunk" in name]
    small = pyctk.dask.matmul(lazy((3000, 5000), 1000), lazy((5000, 64), (1000, 32)))
    assert [name for name in layer_sizes(small) if "rechunk" in name]
    assert small.chunks == ((3000,), (64,))  # whole: smaller than MIN_BLOCK
    assert layer_sizes(small)["pyctk-block-product"] == 1  # k in one block: no sum either


def test_k_chunks_that_differ_take_the_coarser_operands():
    z = pyctk.dask.matmul(lazy((B, 6 * B), (B, 2 * B)), lazy((6 * B, B), (B, B)))
    assert layer_sizes(z)["pyctk-block-product"] == 3  # x1's three k blocks, x2 rechunked


def test_suggested_chunks_are_kept():
    shape1, shape2 = (3, 40000, 30000), (30000, 50000)
    suggested = pyctk.dask.suggest_chunks(shape1, shape2, np.float32, 40 << 30, workers=4)
    x, y = (
        da.ones(shape, np.float32, chunks=chunks) for shape, chunks in ((shape1, suggested.x1), (shape2, suggested.x2))
    )
    assert not [name for name in layer_sizes(pyctk.dask.matmul(x, y)) if "rechunk" in name]


def test_numpy_arrays_are_wrapped():
    z = pyctk.dask.matmul(np.ones((3, 4)), np.ones(4))
    assert isinstance(z, da.Array) and z.shape == (3,) and z.dtype == np.float64


# ---------------------------------------------------------------------------
# Errors: at once, in the client, as pyctk.matmul's (which are NumPy's types).


@pytest.mark.parametrize(
    "shape1, shape2", [((3, 4), (5, 6)), ((), (3,)), ((3,), ()), ((2, 3, 4), (5, 4, 2)), ((4,), (5,))]
)
def test_shapes_numpy_rejects_raise_its_exception_before_any_task(shape1, shape2):
    with pytest.raises(ValueError) as from_numpy:
        np.matmul(np.ones(shape1), np.ones(shape2))
    with pytest.raises(type(from_numpy.value)) as from_pyctk:
        pyctk.matmul(np.ones(shape1), np.ones(shape2))
    with pytest.raises(type(from_numpy.value)) as from_dask:
        pyctk.dask.matmul(da.ones(shape1), da.ones(shape2))
    assert str(from_dask.value) == str(from_pyctk.value)  # pyctk.matmul's message, word for word


@pytest.mark.parametrize(
    "a, b, keywords",
    [
        (np.ones((2, 2), np.int8), np.ones((2, 2), np.int16), {"casting": "no"}),
        (np.ones((2, 2)), np.ones((2, 2)), {"dtype": np.int32}),
        (np.ones((2, 2), "M8[s]"), np.ones((2, 2)), {}),
    ],
)
def test_dtypes_and_castings_numpy_refuses_raise_its_type_error(a, b, keywords):
    with pytest.raises(TypeError) as from_numpy:
        np.matmul(a, b, **keywords)
    with pytest.raises(type(from_numpy.value)):
        pyctk.dask.matmul(da.from_array(a), da.from_array(b), **keywords)


@pytest.mark.parametrize(
    "keywords, error, words",
    [
        ({"backend": "cutlass"}, ValueError, "backend must be one of"),
        ({"precision": "low"}, ValueError, "precision must be one of"),
        ({"casting": "sometimes"}, ValueError, "casting"),
        ({"dtype": ">f8"}, TypeError, "byte order"),
    ],
)
def test_keywords_are_checked_as_pyctk_matmul_checks_them(keywords, error, words):
    with pytest.raises(error, match=words):
        pyctk.dask.matmul(da.ones((2, 2)), da.ones((2, 2)), **keywords)


def test_object_arrays_and_other_chunk_types_are_refused():
    with pytest.raises(TypeError, match="pyctk.matmul cannot compute in object"):
        pyctk.dask.matmul(da.from_array(np.ones((2, 2), object), chunks=2), da.ones((2, 2)))
    masked = da.ones((2, 2)).map_blocks(np.ma.masked_array)
    with pytest.raises(TypeError, match=r"operand 1 has chunks of type numpy\.ma\..*MaskedArray"):
        pyctk.dask.matmul(da.ones((2, 2)), masked)


def test_unknown_chunk_sizes_are_refused():
    x = da.ones(6, chunks=3)
    with pytest.raises(ValueError, match="operand 0 has unknown chunk sizes.*compute_chunk_sizes"):
        pyctk.dask.matmul(x[x > 0], x)


@pytest.mark.parametrize(
    "error",
    [
        errors.NoDriverError("no driver [GPUMATMUL_ERROR_NO_DRIVER]", "GPUMATMUL_ERROR_NO_DRIVER"),
        errors.OutOfMemoryError("out of memory", "GPUMATMUL_ERROR_OUT_OF_MEMORY"),
        errors.LibraryNotFoundError("libcublas.so.12: tried ..."),
        errors.UnsupportedError("cuBLAS does not compute int8"),
        errors.DeviceMismatchError("host and GPU"),
        driver_errors.CompileError("error: x", log="error: x", options=("-arch=sm_90",)),
    ],
    ids=lambda e: type(e).__name__,
)
def test_pyctks_exceptions_reach_a_client_whole(error):
    # Dask sends a worker's exception to the client pickled: same class, message and fields.
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and copy.args == error.args and vars(copy) == vars(error)


def test_import_pyctk_needs_no_dask_and_pyctk_dask_says_how_to_install_it(monkeypatch, tmp_path):
    code = "import sys, pyctk; assert not [m for m in sys.modules if m.split('.')[0] == 'dask']"
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True)
    for name in [name for name in sys.modules if name == "pyctk.dask" or name.startswith("pyctk._dask")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delattr(pyctk, "dask")
    monkeypatch.setitem(sys.modules, "dask", None)  # None: "import dask" raises ImportError
    monkeypatch.setitem(sys.modules, "dask.array", None)
    from pyctk._build_config import CUDA_MAJOR

    with pytest.raises(ImportError, match=rf"pip install 'pyctk-cu{CUDA_MAJOR}\[dask\]'"):
        importlib.import_module("pyctk.dask")


# ---------------------------------------------------------------------------
# Semantics: the graph computed, each block product by NumPy in pyctk.matmul's place.


def numpy_in_pyctks_place(a, b, *, casting, dtype, backend, precision, devices):
    """pyctk.matmul's answer on a CPU: NumPy's values in pyctk's dtype (bfloat16's differs)."""
    loop = dtypes.loop_dtype(a.dtype, b.dtype, None, dtype, casting)
    return np.matmul(a, b, casting=casting, dtype=dtype).astype(loop, copy=False)


@pytest.fixture
def numpy_blocks(monkeypatch):
    """Block products by NumPy, counted; chunks of any size kept (MIN_BLOCK 1), so that small
    arrays have many blocks along k; Dask's synchronous scheduler."""
    calls = []

    def block_matmul(a, b, **options):
        calls.append(options)
        return numpy_in_pyctks_place(a, b, **options)

    monkeypatch.setattr(blocks, "matmul", block_matmul)
    monkeypatch.setattr(chunking, "MIN_BLOCK", 1)
    with dask.config.set(scheduler="synchronous", split_every=3):  # trees on few blocks
        yield calls


def operand(shape: tuple[int, ...], dtype, rng: np.random.Generator) -> np.ndarray:
    """Small integers (products exact in every dtype), or large ones where integers wrap."""
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    low, high = (-100, 100) if np.dtype(dtype).kind in "iu" else (-3, 4)
    return rng.integers(max(low, 0) if np.dtype(dtype).kind == "u" else low, high, shape).astype(dtype)


SHAPES = [  # (shape1, chunks1, shape2, chunks2): non-square and unequal last chunks throughout
    ((7, 10), (3, 4), (10, 5), (4, 2)),  # 2-D, k in 3 blocks
    ((6, 9), (4, 2), (9, 4), (5, 3)),  # k chunks that differ
    ((10,), 3, (10, 4), (4, 3)),  # 1-D @ 2-D
    ((5, 10), (2, 4), (10,), 3),  # 2-D @ 1-D
    ((11,), 4, (11,), 3),  # 1-D @ 1-D: a 0-d result
    ((2, 1, 5, 6), (1, 1, 2, 4), (3, 6, 4), (2, 3, 3)),  # stacks that broadcast, chunked
    ((4, 1, 3, 5), (3, 1, 2, 2), (1, 2, 5, 2), (1, 1, 3, 1)),
    ((6,), 4, (2, 3, 6, 3), (1, 2, 4, 2)),  # 1-D @ a stack
    ((3, 4, 7), (2, 3, 3), (7,), 2),  # a stack @ 1-D
    ((3, 0), (2, 1), (0, 4), (1, 3)),  # k == 0: zeros
    ((0, 5), (1, 2), (5, 3), (2, 2)),  # an empty result
]
DTYPES = [
    (np.float32, np.float32),
    (np.float64, np.float64),
    (np.int8, np.int8),
    (np.int32, np.uint8),
    (np.float16, np.float16),
    (np.bool_, np.bool_),
    (np.complex64, np.float64),
    (np.int8, np.float32),
    (np.uint16, np.int64),
]


@pytest.mark.parametrize("shape1, chunks1, shape2, chunks2", SHAPES)
@pytest.mark.parametrize("dtype1, dtype2", DTYPES, ids=lambda d: np.dtype(d).name)
def test_values_dtype_and_shape_are_numpys(numpy_blocks, shape1, chunks1, shape2, chunks2, dtype1, dtype2):
    rng = np.random.default_rng(sum(shape1) * 7 + sum(shape2))
    a, b = operand(shape1, dtype1, rng), operand(shape2, dtype2, rng)
    expected = np.matmul(a, b)
    z = pyctk.dask.matmul(da.from_array(a, chunks=chunks1), da.from_array(b, chunks=chunks2))
    assert (z.shape, z.dtype) == (expected.shape, expected.dtype)
    got = z.compute()
    assert (got.shape, got.dtype) == (expected.shape, expected.dtype)
    np.testing.assert_array_equal(got, expected)
    assert numpy_blocks or 0 in shape1 + shape2  # the block products ran (where there are any)


def test_integers_wrap_as_numpys(numpy_blocks):
    a = np.full((3, 12), 100, np.int8)
    z = pyctk.dask.matmul(da.from_array(a, chunks=(2, 5)), da.from_array(a.T.copy(), chunks=(5, 2)))
    np.testing.assert_array_equal(z.compute(), a @ a.T)  # 120000 mod 256, in any order
    assert z.dtype == np.int8


def test_float16_partials_are_summed_in_float32_as_numpys_loop_sums(numpy_blocks):
    # 2048 + 1 rounds to 2048 in float16, so a float16 sum of the partials [2049, 1] would give
    # 2048; NumPy sums in float32 and rounds once: 2050.
    a = np.array([[2048, 1, 1]], np.float16)
    b = np.ones((3, 1), np.float16)
    z = pyctk.dask.matmul(da.from_array(a, chunks=(1, 2)), da.from_array(b, chunks=(2, 1)))
    assert z.compute()[0, 0] == np.matmul(a, b)[0, 0] == 2050 and z.dtype == np.float16
    assert all(call["dtype"] == np.float32 for call in numpy_blocks)
    one_block = pyctk.dask.matmul(da.from_array(a, chunks=(1, 3)), da.from_array(b, chunks=(3, 1)))
    assert one_block.compute()[0, 0] == 2050  # one pyctk.matmul in float16
    assert numpy_blocks[-1]["dtype"] is None


@pytest.mark.skipif(bfloat16 is None, reason="ml_dtypes (the test extra's, CPython only)")
def test_bfloat16_gives_pyctk_matmuls_dtype(numpy_blocks):
    a = np.arange(12).reshape(3, 4).astype(bfloat16)
    z = pyctk.dask.matmul(da.from_array(a, chunks=(2, 3)), da.from_array(a.T.copy(), chunks=(3, 2)))
    assert z.dtype == bfloat16
    np.testing.assert_array_equal(z.compute().astype(np.float32), np.matmul(a, a.T).astype(bfloat16).astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_floats_differ_from_numpy_only_in_the_order_of_additions(numpy_blocks, dtype):
    rng = np.random.default_rng(5)
    k = 300
    a = (rng.standard_normal((20, k)) + (1j if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
    b = rng.standard_normal((k, 30)).astype(dtype)
    got = pyctk.dask.matmul(da.from_array(a, chunks=(7, 41)), da.from_array(b, chunks=(41, 9))).compute()
    bound = k * np.finfo(dtype).eps * (np.abs(a) @ np.abs(b))  # summation error, any order
    assert np.all(np.abs(got - a @ b) <= bound) and got.dtype == dtype


def test_keywords_reach_every_block_product(numpy_blocks):
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    z = pyctk.dask.matmul(
        da.from_array(a, chunks=2),
        da.from_array(a.T.copy(), chunks=2),
        dtype=np.float64,
        casting="safe",
        backend="tiled",
        precision="highest",
        devices="all",
    )
    np.testing.assert_array_equal(z.compute(), np.matmul(a, a.T, dtype=np.float64))
    assert z.dtype == np.float64
    assert numpy_blocks and all(
        call == {"casting": "safe", "dtype": np.float64, "backend": "tiled", "precision": "highest", "devices": "all"}
        for call in numpy_blocks
    )


def test_a_block_computed_again_gives_the_same_bytes(numpy_blocks):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((9, 40)), rng.standard_normal((40, 6))
    z = pyctk.dask.matmul(da.from_array(a, chunks=(4, 9)), da.from_array(b, chunks=(9, 4)))
    assert z.compute().tobytes() == z.compute().tobytes()


# ---------------------------------------------------------------------------
# The chunking rules, as properties.

chunk_lists = st.lists(st.integers(0, 50), min_size=1, max_size=30)


@given(chunk_lists, st.integers(1, 60), st.integers(1, 100))
def test_combined_keeps_chunks_worth_it_and_otherwise_only_concatenates(chunks, threshold, target):
    chunks = tuple(chunks)
    result = chunking.combined(chunks, threshold, target)
    assert sum(result) == sum(chunks)
    boundaries = set(np.cumsum(chunks).tolist())
    assert set(np.cumsum(result).tolist()) <= boundaries  # never splits a chunk
    if all(size >= threshold for size in chunks[:-1]):
        assert result == chunks
    else:
        assert all(size >= target for size in result[:-1])


dtypes_of_products = st.sampled_from(["float16", "float32", "float64", "complex128", "int8"])


@settings(max_examples=300)
@given(
    st.lists(st.integers(1, 4), max_size=2),
    st.integers(0, 300000),
    st.integers(0, 300000),
    st.integers(0, 300000),
    dtypes_of_products,
    st.integers(1 << 20, 200 << 30),
    st.integers(1, 8),
    st.integers(1, 16),
)
def test_suggested_blocks_fit_the_memory_share_and_cover_the_shapes(
    stack, m, k, n, dtype, gpu_memory, workers_per_gpu, workers
):
    shape1, shape2 = (*stack, m, k), (k, n)
    blocks_ = pyctk.dask.suggest_chunks(
        shape1, shape2, dtype, gpu_memory, workers_per_gpu=workers_per_gpu, workers=workers
    )
    itemsize = np.dtype(dtype).itemsize
    budget = gpu_memory * chunking.SHARE // workers_per_gpu
    sides = (min(blocks_.rows, m), min(blocks_.k, k), min(blocks_.cols, n))
    matrices = math.prod(blocks_.stack)
    used = matrices * (sides[0] * sides[1] + sides[1] * sides[2] + sides[0] * sides[2]) * itemsize
    assert used <= max(budget, 3 * itemsize)  # fits (a 1x1x1 block at least)
    for chunks, shape in ((blocks_.x1, shape1), (blocks_.x2, shape2)):
        assert len(chunks) == len(shape)
        assert all(1 <= block <= max(length, 1) for block, length in zip(chunks, shape))
    large = chunking.block_sizes((), 4 * B, 4 * B, 4 * B, itemsize, budget) == ((), 4 * B, 4 * B, 4 * B)
    if large:  # memory for large blocks: they are
        assert all(side >= min(length, B) for side, length in zip(sides, (m, k, n)))


@settings(max_examples=200)
@given(
    st.lists(st.integers(1, 3 * B), min_size=1, max_size=6),
    st.lists(st.integers(1, 3 * B), min_size=1, max_size=6),
    st.lists(st.integers(1, 3 * B), min_size=1, max_size=6),
    st.booleans(),
)
def test_planned_chunks_agree_along_k_and_never_split_what_is_worth_a_gpu(rows, depth, cols, same_k):
    k_of_x2 = tuple(depth) if same_k else (sum(depth),)
    chunks1, chunks2 = (tuple(rows), tuple(depth)), (k_of_x2, tuple(cols))
    new1, new2 = chunking.planned(chunks1, chunks2, 4)
    assert new1[1] == new2[0]  # k agrees
    assert tuple(map(sum, new1)) == tuple(map(sum, chunks1)) and tuple(map(sum, new2)) == tuple(map(sum, chunks2))
    for before, after in ((chunks1[0], new1[0]), (chunks2[1], new2[1]), (min(chunks1[1], k_of_x2, key=len), new1[1])):
        assert set(np.cumsum(after).tolist()) <= set(np.cumsum(before).tolist())  # never split
        if all(size >= B for size in before[:-1]):
            assert after == before


def test_suggestions_balance_the_workers():
    for workers in (1, 2, 3, 4, 6, 8):
        blocks_ = pyctk.dask.suggest_chunks(
            (65536, 65536), (65536, 65536), np.float32, 80 << 30, workers_per_gpu=2, workers=workers
        )
        count = math.ceil(65536 / blocks_.rows) * math.ceil(65536 / blocks_.cols)
        assert count % workers == 0 and blocks_.k == 65536, (workers, blocks_)


# ---------------------------------------------------------------------------
# A real cluster of processes: pyctk's no-GPU error, raised by a worker, reaches the client.


def test_a_workers_no_driver_error_reaches_the_client(needs_no_driver):
    from distributed import Client, LocalCluster

    with pytest.raises(pyctk.NoDriverError) as here:
        pyctk.matmul(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32))
    x = da.ones((8, 8), dtype=np.float32, chunks=4)
    with (
        LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None, worker_dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        with pytest.raises(pyctk.NoDriverError) as there:
            client.compute(pyctk.dask.matmul(x, x)).result(timeout=60)
        ran = client.run(lambda: "pyctk._dask.blocks" in sys.modules)
    assert str(there.value) == str(here.value) and there.value.status == here.value.status
    assert len(ran) == 2 and any(ran.values())  # a worker ran the block product
