"""Host operands streamed through the GPU in tiles: products tiled because
PYCTK_DEVICE_MEMORY_LIMIT caps the GPU memory (every way a tile can be cut: rows, columns,
stack slices, with transposed, strided and broadcast operands, every backend), products cut
into tiles to overlap copies with computing, C overlapping A or B, too small a limit, and
``devices=`` on one GPU and on all of them. Compared with NumPy."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import pyctk
from pyctk._cuda import library as _library
from pyctk._matmul import options as _host_options
from support.host_operands import CASES, check, lay_out, random

pytestmark = pytest.mark.gpu


@pytest.fixture
def limit(monkeypatch):
    """Sets PYCTK_DEVICE_MEMORY_LIMIT for the test."""

    def set_limit(value: str) -> None:
        monkeypatch.setenv(_host_options.LIMIT_VARIABLE, value)

    return set_limit


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32])
def test_products_larger_than_the_limit_stream_in_tiles(case, dtype, limit):
    a_shape, b_shape, a_how, b_how = CASES[case]
    rng = np.random.default_rng(len(case))
    a, b = lay_out(rng, a_shape, a_how, dtype), lay_out(rng, b_shape, b_how, dtype)
    limit("256K")
    check(pyctk.matmul(a, b), a, b)


@pytest.mark.parametrize("backend", ["tiled", "cublas"])
def test_each_backend_streams(backend, limit):
    rng = np.random.default_rng(1)
    a, b = random(rng, (500, 260), np.float32), random(rng, (260, 700), np.float32)
    limit("300K")
    check(pyctk.matmul(a, b, backend=backend), a, b)


@pytest.mark.parametrize("a_how, b_how", [("c", "c"), ("T", "T"), ("strided", "c")])
@pytest.mark.parametrize("stack", [(), (3,)])
def test_a_wide_b_and_a_short_a(a_how, b_how, stack):
    """B 9000 columns wide and most of what moves, A 100 rows: one tile of rows per matrix."""
    rng = np.random.default_rng(7)
    a = lay_out(rng, (*stack, 100, 64), a_how, np.float32)
    b = lay_out(rng, (64, 9000), b_how, np.float32)
    check(pyctk.matmul(a, b), a, b)


@pytest.mark.parametrize(
    "a_shape, b_shape, transpose",
    [
        ((16, 16), (16, 16), False),
        ((40, 30), (30, 20), True),
        ((5, 7, 8), (8, 3), False),
        ((9,), (9,), False),
        ((6,), (6, 4), False),
    ],
)
def test_repeated_products_of_one_layout_each_compute_their_own_data(a_shape, b_shape, transpose):
    """The second call of a layout runs by the plan the first one left: on its own data."""
    rng = np.random.default_rng(8)
    for _ in range(3):
        a, b = random(rng, a_shape, np.float64), random(rng, b_shape, np.float64)
        if transpose:
            a = np.asfortranarray(a)
        result = pyctk.matmul(a, b)
        assert type(result) is type(np.matmul(a, b)) and np.shape(result) == np.matmul(a, b).shape
        check(np.asarray(result), a, b)


@pytest.mark.parametrize("a_how", ["c", "T"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.float16])
def test_the_first_tile_is_summed_over_slices_of_k_as_b_arrives(a_how, dtype):
    """B (32 MB in float32) outgrows a 16 MiB staging slot: cuBLAS multiplies the first tile
    slice by slice of k while B goes up, adding into C (not for float16, which cuBLAS sums in
    float32: that tile waits for all of B)."""
    rng = np.random.default_rng(9)
    a = lay_out(rng, (600, 2000), a_how, dtype)
    b = random(rng, (2000, 4000), dtype)
    result = pyctk.matmul(a, b, backend="cublas")
    if dtype == np.float16:
        expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
        assert np.linalg.norm(result - expected) / np.linalg.norm(expected) < 2e-3
    else:
        check(result, a, b)


def test_a_limit_too_small_for_one_row_and_column_names_both_sizes(limit):
    a, b = np.ones((4, 100_000), np.float32), np.ones((100_000, 4), np.float32)
    limit("64K")
    with pytest.raises(pyctk.OutOfMemoryError, match=r"one row of A, one column of B .* 65536 bytes may be used"):
        pyctk.matmul(a, b)


def test_a_bad_limit_is_a_value_error_naming_the_variable(limit):
    limit("lots")
    with pytest.raises(ValueError, match="PYCTK_DEVICE_MEMORY_LIMIT='lots' is not a memory size"):
        pyctk.matmul(np.ones((2, 2)), np.ones((2, 2)))


def test_out_overlapping_an_operand_is_read_before_written(limit):
    rng = np.random.default_rng(2)
    a = random(rng, (300, 300), np.float64)
    expected = a @ a
    pyctk.matmul(a, a, out=a)  # fits on the GPU: one tile, every input read first
    check(a, expected, np.eye(300))
    a = random(rng, (300, 300), np.float64)
    limit("256K")  # the whole problem (2.1 MiB) no longer fits: refused, a left as it was
    before = a.copy()
    with pytest.raises(pyctk.OutOfMemoryError, match="C overlaps A or B"):
        pyctk.matmul(a, a, out=a)
    np.testing.assert_array_equal(a, before)


def test_split_k_tiles_with_room_for_their_workspace_and_without(limit):
    """A 1024-cube in float32 is two tiles of 512 rows; on the tiled backend each takes split
    k (libgpu/src/gemm/split_k.c) where the budget leaves room for its 16 MiB workspace. A 13 MiB
    limit leaves 1 MiB beside the tiles' 12 MiB: then they are computed unsplit."""
    rng = np.random.default_rng(4)
    a, b = random(rng, (1024, 1024), np.float32), random(rng, (1024, 1024), np.float32)
    check(pyctk.matmul(a, b, backend="tiled"), a, b)
    limit("13M")
    check(pyctk.matmul(a, b, backend="tiled"), a, b)


def test_large_products_cut_to_overlap_copies_with_compute():
    rng = np.random.default_rng(3)
    a, b = random(rng, (3000, 1024), np.float32), random(rng, (1024, 2500), np.float32)
    check(pyctk.matmul(a, b), a, b)  # C is 30 MB: four tiles of rows
    a3, b3 = random(rng, (64, 300, 200), np.float32), random(rng, (64, 200, 300), np.float32)
    check(pyctk.matmul(a3, b3), a3, b3)  # many stacked matrices per tile


@pytest.mark.whole_gpu
def test_a_product_fits_in_what_other_work_leaves_free():
    """With most of the GPU held elsewhere, the plan for the whole GPU cannot be allocated:
    the call plans again for what is free, in smaller tiles."""
    from support.cuda_runtime import DeviceBuffer

    rng = np.random.default_rng(6)
    a, b = random(rng, (6000, 4000), np.float32), random(rng, (4000, 6000), np.float32)
    # The other work starts after this process's first product: its context and cuBLAS
    # handles (which cublasCreate cannot make in 200 MB on an H200) exist already.
    check(pyctk.matmul(a, b)[::97], a[::97], b)
    free = ctypes.c_size_t()
    _library.call("gpumatmul_device_memory", 0, ctypes.byref(free), ctypes.byref(ctypes.c_size_t()))
    hog = DeviceBuffer(free.value - (200 << 20))  # leaves 200 MB: less than A, B and C (336 MB)
    try:
        result = pyctk.matmul(a, b)
    finally:
        hog.close()
    check(result[::97], a[::97], b)


def test_devices_one_gpu_and_all():
    rng = np.random.default_rng(4)
    a, b = random(rng, (4, 900, 300), np.float64), random(rng, (300, 800), np.float64)
    check(pyctk.matmul(a, b, devices=[0]), a, b)
    check(pyctk.matmul(a, b, devices="all"), a, b)
    check(pyctk.matmul(a[0], b, devices="all"), a[0], b)  # rows shared out


def test_devices_two_gpus_share_rows_and_stacks(limit):
    if len(_host_options.device_list("all", None)) < 2:
        pytest.skip("needs two GPUs")
    rng = np.random.default_rng(5)
    a, b = random(rng, (1001, 300), np.float32), random(rng, (300, 777), np.float32)
    check(pyctk.matmul(a, b, devices=[1, 0]), a, b)
    a3, b3 = random(rng, (9, 200, 100), np.int32), random(rng, (9, 100, 150), np.int32)
    check(pyctk.matmul(a3, b3, devices=[0, 1]), a3, b3)
    limit("256K")
    check(pyctk.matmul(a, b, devices=[0, 1]), a, b)


def test_devices_errors():
    a = np.ones((3, 3), np.float32)
    with pytest.raises(ValueError, match="not both"):
        pyctk.matmul(a, a, device=0, devices=[0])
    with pytest.raises(ValueError, match="more than once"):
        pyctk.matmul(a, a, devices=[0, 0])
    with pytest.raises(pyctk.NoDeviceError):
        pyctk.matmul(a, a, devices=[0, 999])
