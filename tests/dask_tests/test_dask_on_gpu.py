"""pyctk.dask on a GPU: a distributed.LocalCluster of 2 worker processes sharing one GPU,
every block product by pyctk.matmul, against numpy.matmul.

Operands are small integers, so every product is exact in every dtype and compares
exactly; one test of random floats compares within the rounding of a sum of k terms.
"""

from __future__ import annotations

import platform

import numpy as np
import pytest

if platform.python_implementation() != "CPython":  # the test extra leaves Dask out there
    pytest.importorskip(
        "distributed",
        reason="pyproject.toml's test extra installs Dask on CPython only (distributed's psutil has no PyPy wheel)",
    )

import dask.array as da
from distributed import Client, LocalCluster, wait

import pyctk.dask
from pyctk._cuda import cudart as _cudart
from pyctk._dask import chunking

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def client():
    """Two worker processes on this machine's GPUs (GPU 0 unless devices= says otherwise),
    each allowed half of a GPU's memory (pyctk's default is all of it)."""
    with (
        LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=None,
            worker_dashboard_address=None,
            env={"PYCTK_DEVICE_MEMORY_LIMIT": "8G"},
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


@pytest.fixture
def small_blocks(monkeypatch):
    """Chunks of any size kept (the client plans them), so small arrays have many blocks."""
    monkeypatch.setattr(chunking, "MIN_BLOCK", 1)


def operand(shape, dtype, rng):
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(-3, 4, shape).astype(dtype)


SHAPES = [  # (shape1, chunks1, shape2, chunks2)
    ((300, 500), (128, 200), (500, 260), (200, 100)),  # k in 3 blocks, unequal last chunks
    ((300, 500), (128, 500), (500, 260), (500, 100)),  # k whole: one pyctk.matmul per block
    ((2, 1, 40, 70), (1, 1, 16, 30), (3, 70, 50), (2, 30, 20)),  # stacks that broadcast
    ((70,), 30, (3, 70, 50), (2, 30, 20)),  # 1-D @ a stack
    ((40, 70), (16, 30), (70,), 30),  # 2-D @ 1-D
    ((70,), 30, (70,), 20),  # 1-D @ 1-D
]


@pytest.mark.parametrize("shape1, chunks1, shape2, chunks2", SHAPES)
@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int32, np.float16, np.bool_, np.complex64], ids=lambda d: np.dtype(d).name
)
def test_values_are_numpys(client, small_blocks, shape1, chunks1, shape2, chunks2, dtype):
    rng = np.random.default_rng(sum(shape1) + sum(shape2))
    a, b = operand(shape1, dtype, rng), operand(shape2, dtype, rng)
    z = pyctk.dask.matmul(da.from_array(a, chunks=chunks1), da.from_array(b, chunks=chunks2))
    got, expected = z.compute(), np.matmul(a, b)
    assert (got.shape, got.dtype) == (expected.shape, expected.dtype)
    np.testing.assert_array_equal(got, expected)


def test_random_floats_within_the_rounding_of_k_terms(client, small_blocks):
    rng = np.random.default_rng(1)
    k = 3000
    a, b = rng.standard_normal((500, k), np.float32), rng.standard_normal((k, 400), np.float32)
    got = pyctk.dask.matmul(da.from_array(a, chunks=(256, 1024)), da.from_array(b, chunks=(1024, 256))).compute()
    bound = k * np.finfo(np.float32).eps * (np.abs(a) @ np.abs(b))
    assert np.all(np.abs(got - a @ b) <= bound)


@pytest.mark.parametrize("devices", [[0], "all"])
def test_devices_reach_the_workers_products(client, small_blocks, devices):
    rng = np.random.default_rng(2)
    a, b = operand((600, 300), np.float32, rng), operand((300, 500), np.float32, rng)
    z = pyctk.dask.matmul(da.from_array(a, chunks=(300, 150)), da.from_array(b, chunks=(150, 250)), devices=devices)
    np.testing.assert_array_equal(z.compute(), a @ b)


def test_a_product_computed_again_gives_the_same_bytes(client, small_blocks):
    # What a retried block (a lost worker's, recomputed on another) relies on; the second
    # and third runs are on fresh worker processes (client.restart), as a retry would be.
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((1000, 2000)), rng.standard_normal((2000, 700))
    z = pyctk.dask.matmul(da.from_array(a, chunks=(512, 700)), da.from_array(b, chunks=(700, 350)))
    first = z.compute().tobytes()
    assert z.compute().tobytes() == first
    client.restart()
    assert z.compute().tobytes() == first


def test_blocks_of_the_suggested_size(client):
    n = 2 * chunking.MIN_BLOCK
    blocks = pyctk.dask.suggest_chunks((n, n), (n, n), np.float32, 16 << 30, workers_per_gpu=2, workers=2)
    a = (np.arange(n * n, dtype=np.int64).reshape(n, n) % 7).astype(np.float32)
    z = pyctk.dask.matmul(da.from_array(a, chunks=blocks.x1), da.from_array(a.T.copy(), chunks=blocks.x2))
    np.testing.assert_array_equal(z.compute(), a @ a.T)  # integers below 2^24: exact


def test_each_gpu_its_own_worker_under_dask_cuda():
    # dask-cuda's LocalCUDACluster starts a worker per GPU, each with CUDA_VISIBLE_DEVICES
    # listing its own GPU first: pyctk's GPU 0 there is that GPU.
    gpus = _cudart.device_count()
    if gpus < 2:
        pytest.skip("fewer than two GPUs: the two-GPU test runs on a machine with two")
    dask_cuda = pytest.importorskip("dask_cuda", reason="dask-cuda is optional (pip install dask-cuda)")
    import os

    rng = np.random.default_rng(6)
    a, b = operand((4096, 3000), np.float32, rng), operand((3000, 4096), np.float32, rng)
    with (
        dask_cuda.LocalCUDACluster(threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster) as cuda_client,
    ):
        firsts = cuda_client.run(lambda: os.environ["CUDA_VISIBLE_DEVICES"].split(",")[0])
        assert len(firsts) == gpus and len(set(firsts.values())) == gpus
        z = pyctk.dask.matmul(da.from_array(a, chunks=(1024, 3000)), da.from_array(b, chunks=(3000, 2048)))
        # the row blocks dealt to the workers (Dask alone may keep them on one: they share a source)
        workers = [list(firsts)[i % len(firsts)] for i in range(4)]
        parts = [
            cuda_client.persist(z[1024 * i : 1024 * (i + 1)], workers=[worker]) for i, worker in enumerate(workers)
        ]
        wait(parts)
        for part, worker in zip(parts, workers):
            assert {w for ws in cuda_client.who_has(part).values() for w in ws} == {worker}
        np.testing.assert_array_equal(np.concatenate([part.compute() for part in parts]), a @ b)
