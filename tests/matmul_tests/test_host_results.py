"""pyctk._matmul.host_results: a dropped result's memory serves the next result of its size, page-
locked on that second use. Page-locking itself needs a GPU: these tests record the request,
and tests/matmul_tests/test_host_streaming_on_gpu.py checks the memory CUDA sees."""

import numpy as np
import pytest

from pyctk._matmul import host_results as _host_results
from support.garbage import collect

MATRIX = (512, 1024)  # float32: 2 MiB, over MIN_BYTES
F32 = np.dtype(np.float32)


@pytest.fixture(autouse=True)
def page_locks(empty_free_list, monkeypatch):
    """The blocks (and devices) page-locking was asked for, with an empty free list."""
    asked = []
    monkeypatch.setattr(_host_results, "_page_lock", lambda block, device: asked.append((block, device)))
    return asked


def dropped(holder: list) -> int:
    """The address of the one array in ``holder``, after dropping it."""
    address = holder.pop().ctypes.data
    collect()
    return address


def test_small_results_are_numpy_arrays():
    assert _host_results.MIN_BYTES > 16 * 16 * 4
    small = _host_results.empty((16, 16), F32)
    assert small.flags.owndata and small.shape == (16, 16) and small.dtype == F32


def test_a_result_is_a_writable_c_ordered_array_of_its_shape_and_dtype():
    result = _host_results.empty((2,) + MATRIX, np.dtype(np.complex64))
    assert result.shape == (2,) + MATRIX and result.dtype == np.complex64
    assert result.flags.c_contiguous and result.flags.writeable and result.flags.aligned
    result[...] = 1 + 2j
    assert np.all(result == 1 + 2j)


def test_a_dropped_result_serves_the_next_of_its_size_and_is_page_locked_then(page_locks):
    block_address = dropped([_host_results.empty(MATRIX, F32)])
    assert page_locks == []  # a first use is never locked: most results are not reused
    second = _host_results.empty(MATRIX, F32, device=1)
    assert second.ctypes.data == block_address
    assert [device for _, device in page_locks] == [1]


def test_views_keep_a_result_s_memory():
    expected = np.arange(np.prod(MATRIX), dtype=np.float32).reshape(MATRIX)
    held = [_host_results.empty(MATRIX, F32)]
    held[0][...] = expected
    held.append(held[0][::2].T)  # a view
    address = held[0].ctypes.data
    del held[0]
    collect()
    other = _host_results.empty(MATRIX, F32)  # the view holds the block: new memory
    other[...] = -1
    assert other.ctypes.data != address and _host_results._free == []
    assert np.array_equal(held[0], expected[::2].T)
    dropped(held)
    assert [block.address for block in _host_results._free] == [address]


def test_a_result_of_another_size_gets_new_memory():
    address = dropped([_host_results.empty(MATRIX, F32)])
    assert _host_results.empty((512, 1025), F32).ctypes.data != address
    assert _host_results.empty(MATRIX, F32).ctypes.data == address


def test_the_free_list_keeps_at_most_cache_bytes_releasing_the_oldest(monkeypatch):
    monkeypatch.setattr(_host_results, "CACHE_BYTES", 3 << 20)
    results = [_host_results.empty(MATRIX, F32), _host_results.empty(MATRIX, F32)]
    dropped(results)  # the newer
    (kept,) = _host_results._free
    dropped(results)  # the older, given back last
    assert kept.memory.closed  # released: both would pass 3 MiB
    assert [block.memory.closed for block in _host_results._free] == [False]
    assert _host_results._free_bytes == 2 << 20


def test_results_larger_than_the_cache_are_numpy_arrays(monkeypatch):
    monkeypatch.setattr(_host_results, "CACHE_BYTES", 1 << 20)
    assert _host_results.empty(MATRIX, F32).flags.owndata
