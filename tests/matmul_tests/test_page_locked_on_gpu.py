"""Host operands in page-locked memory, which libgpumatmul copies in place (no staging), and
results in memory kept for the next result (pyctk._matmul.host_results), page-locked on reuse.
Every layout the tiles cut, with one operand locked or all, and operands locked only in
part (copied through the staging). Compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import pyctk
from pyctk._cuda import cudart as _cudart
from pyctk._matmul import host_results as _host_results
from pyctk._matmul import options as _host_options
from support.garbage import collect
from support.host_operands import CASES, check, lay_out

pytestmark = pytest.mark.gpu


@pytest.fixture
def page_locked():
    """lock(array[, nbytes]): page-locks the memory of a C-contiguous array (its first nbytes)
    with cudaHostRegister, as a C caller would; unlocked after the test."""
    locked = []

    def lock(array: np.ndarray, nbytes: int | None = None) -> np.ndarray:
        assert array.flags.c_contiguous
        size = array.nbytes if nbytes is None else nbytes
        _cudart.call("cudaHostRegister", array.ctypes.data, size, 0)
        locked.append(array)
        return array

    yield lock
    for array in locked:
        _cudart.call("cudaHostUnregister", array.ctypes.data)


def is_page_locked(array: np.ndarray) -> bool:
    return _cudart.pointer_device(array.ctypes.data)[0] == _cudart.MEMORY_HOST


def locked_copy(lock, x: np.ndarray) -> np.ndarray:
    """``x``'s values with its strides, in page-locked memory: a view of a locked base."""
    base = lock(np.empty(x.base.shape if x.base is not None else x.shape, x.dtype))
    view = np.lib.stride_tricks.as_strided(base, x.shape, x.strides) if x.base is not None else base
    view[...] = x
    return view


@pytest.mark.parametrize("which", ["a", "b", "c", "abc"])
@pytest.mark.parametrize("tiles", ["many tiles", "one tile"])
@pytest.mark.parametrize("case", CASES)
def test_page_locked_operands_are_copied_in_place(case, tiles, which, page_locked, monkeypatch):
    a_shape, b_shape, a_how, b_how = CASES[case]
    rng = np.random.default_rng(len(case))
    a, b = lay_out(rng, a_shape, a_how, np.float32), lay_out(rng, b_shape, b_how, np.float32)
    if "a" in which:
        a = locked_copy(page_locked, a)
    if "b" in which:
        b = locked_copy(page_locked, b)
    expected_shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    # C strided within its locked memory: every other column of a wider array.
    out = (
        page_locked(np.full(expected_shape[:-1] + (2 * expected_shape[-1],), np.nan, np.float32))[..., ::2]
        if "c" in which
        else None
    )
    if tiles == "many tiles":
        monkeypatch.setenv(_host_options.LIMIT_VARIABLE, "256K")
    assert all(is_page_locked(x) == (name in which) for name, x in (("a", a), ("b", b)))
    result = pyctk.matmul(a, b, out=out)
    check(result, a, b)
    if out is not None:
        assert result is out and np.isnan(out.base[..., 1::2]).all()  # the gaps are untouched


def test_an_operand_locked_only_in_part_goes_through_the_staging(page_locked):
    rng = np.random.default_rng(5)
    a, b = rng.random((1024, 512), np.float32), rng.random((512, 1024), np.float32)
    page_locked(a, a.nbytes // 2)
    out = page_locked(np.empty((1024, 1024), np.float32), (1024 * 1024 * 4) // 2)
    check(pyctk.matmul(a, b, out=out), a, b)


@pytest.mark.usefixtures("empty_free_list")
def test_a_dropped_result_s_memory_serves_the_next_page_locked():
    rng = np.random.default_rng(6)
    operands = [(rng.random((1024, 700), np.float32), rng.random((700, 1024), np.float32)) for _ in range(3)]
    results = [pyctk.matmul(*operands[0])]
    address = results[0].ctypes.data
    assert not is_page_locked(results[0])  # a first use: NumPy-like fresh memory
    check(results.pop(), *operands[0])
    collect()
    for a, b in operands[1:]:  # the second call takes the layout's plan
        result = pyctk.matmul(a, b)
        assert result.ctypes.data == address and is_page_locked(result)
        check(result, a, b)  # every element written: nothing left of the last product
        del result
        collect()


@pytest.mark.usefixtures("empty_free_list")
def test_a_block_dropped_unreleased_leaves_no_page_lock_behind():
    """A locked block dropped without being released (here: with the free list it was in) is
    unlocked: were CUDA to keep its lock, a new mapping at its addresses would be taken for
    page-locked memory, and the GPU would write to the old pages."""
    rng = np.random.default_rng(9)
    a, b = rng.random((1024, 700), np.float32), rng.random((700, 1024), np.float32)
    for _ in range(2):
        result = pyctk.matmul(a, b)
        address, locked = result.ctypes.data, is_page_locked(result)
        del result
        collect()
    assert locked
    _host_results._free.clear()  # (not monkeypatch.setattr: it would keep the list to restore)
    _host_results._free_bytes = 0
    collect()
    assert _cudart.pointer_device(address)[0] != _cudart.MEMORY_HOST
    check(pyctk.matmul(a, b), a, b)


def test_results_kept_alive_each_have_their_own_memory():
    rng = np.random.default_rng(7)
    a, b = rng.random((600, 600), np.float32), rng.random((600, 600), np.float32)
    kept = [pyctk.matmul(a * i, b) for i in range(4)]
    assert len({r.ctypes.data for r in kept}) == 4
    for i, result in enumerate(kept):
        check(result, a * i, b)


@pytest.mark.usefixtures("empty_free_list")
def test_every_gpu_writes_into_a_page_locked_result():
    if _cudart.device_count() < 2:
        pytest.skip("needs two GPUs")
    rng = np.random.default_rng(8)
    for _ in range(3):  # the second and third results are page-locked (portable: every GPU's)
        a, b = rng.random((1500, 600), np.float32), rng.random((600, 1000), np.float32)
        result = pyctk.matmul(a, b, devices="all")
        check(result, a, b)
        del result
        collect()
    assert all(block.locked for block in _host_results._free)
