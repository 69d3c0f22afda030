"""Host buffers and sizes given to pyctk.driver's copies and fills are checked before the driver
is called: buffers taken as PyCUDA takes them (C- or Fortran-contiguous, PyBUF_ANY_CONTIGUOUS),
sizes and offsets as byte counts, and no size larger than memory whose size is known. There
is no driver here: a check that came after a driver call would be a NoDriverError instead."""

from __future__ import annotations

import numpy as np
import pytest

import pyctk
import pyctk.driver as cuda
from pyctk._cuda import cudart as _cudart
from pyctk._pycuda.memory import device as _memory


class GpuBytes:
    """A contiguous GPU array of ``nbytes`` bytes, by the CUDA Array Interface."""

    def __init__(self, nbytes: int, pointer: int = 0x7000) -> None:
        self.__cuda_array_interface__ = {
            "version": 3,
            "typestr": "|u1",
            "data": (pointer, False),
            "shape": (nbytes,),
            "strides": None,
            "stream": None,
        }


@pytest.fixture
def gpu_pointers(monkeypatch):
    """cudaPointerGetAttributes answering 'device memory of device 0' for any pointer."""
    monkeypatch.setattr(_cudart, "pointer_device", lambda pointer: (_cudart.MEMORY_DEVICE, 0))


def test_a_fortran_ordered_buffer_is_taken_as_pycuda_takes_it():
    fortran = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = memoryview(fortran)
    assert view.f_contiguous and not view.c_contiguous
    host = _memory.host_buffer(view, writable=True)
    assert (host.ctypes.data, host.nbytes) == (fortran.ctypes.data, fortran.nbytes)


@pytest.mark.parametrize(
    "buffer",
    [np.arange(12.0)[::2], memoryview(np.arange(12.0))[::2], memoryview(np.zeros((4, 4))[:, :2])],
    ids=["ndarray", "memoryview", "2-D memoryview"],
)
def test_a_strided_buffer_is_refused_by_every_copy(gpu_pointers, buffer):
    for copy in (
        lambda: cuda.memcpy_htod(GpuBytes(1024), buffer),
        lambda: cuda.memcpy_dtoh(buffer, GpuBytes(1024)),
        lambda: cuda.memcpy_htod_async(GpuBytes(1024), buffer),
        lambda: cuda.memcpy_dtoh_async(buffer, GpuBytes(1024)),
        lambda: cuda.memcpy_htoa(None, 0, buffer),
        lambda: cuda.memcpy_atoh(buffer, None, 0),
        lambda: cuda.Out(buffer),
        lambda: cuda.InOut(buffer),
    ):
        with pytest.raises(ValueError, match="C- or Fortran-contiguous"):
            copy()


@pytest.mark.parametrize(
    ("copy", "words"),
    [
        (lambda: cuda.memcpy_htod(GpuBytes(16), np.zeros(4)), "memcpy_htod: 32 bytes do not fit in this GpuBytes's 16"),
        (lambda: cuda.memcpy_htod_async(GpuBytes(16), bytes(17)), "memcpy_htod: 17 bytes do not fit"),
        (lambda: cuda.memcpy_dtoh(np.zeros(4), GpuBytes(16)), "memcpy_dtoh: 32 bytes do not fit"),
        (lambda: cuda.memcpy_dtoh_async(bytearray(17), GpuBytes(16)), "memcpy_dtoh: 17 bytes do not fit"),
        (lambda: cuda.memcpy_dtod(GpuBytes(16), GpuBytes(32), 32), "memcpy_dtod: 32 bytes do not fit"),
        (lambda: cuda.memcpy_dtod_async(GpuBytes(32), GpuBytes(16), 17), "memcpy_dtod: 17 bytes do not fit"),
        (lambda: cuda.memcpy_peer(GpuBytes(32), GpuBytes(16), 32), "memcpy_peer: 32 bytes do not fit"),
        (lambda: cuda.memcpy_peer_async(GpuBytes(8), 0x9000, 9), "memcpy_peer: 9 bytes do not fit"),
        (lambda: cuda.memcpy_dtoa(None, 0, GpuBytes(16), 17), "memcpy_dtoa: 17 bytes do not fit"),
        (lambda: cuda.memcpy_atod(GpuBytes(16), None, 0, 17), "memcpy_atod: 17 bytes do not fit"),
        (lambda: cuda.memset_d32(GpuBytes(16), 7, 5), "memset_d32: 20 bytes do not fit"),
        (lambda: cuda.memset_d16_async(GpuBytes(16), 7, 9), "memset_d16: 18 bytes do not fit"),
        (lambda: cuda.memset_d8(GpuBytes(16), 7, 17), "memset_d8: 17 bytes do not fit"),
    ],
)
def test_a_size_larger_than_the_memory_is_refused(gpu_pointers, copy, words):
    with pytest.raises(ValueError, match="do not fit") as raised:
        copy()
    assert words in str(raised.value)


@pytest.mark.parametrize(
    ("copy", "words"),
    [
        (lambda size: cuda.memcpy_dtod(0x7000, 0x9000, size), "memcpy_dtod: size"),
        (lambda size: cuda.memcpy_dtod_async(0x7000, 0x9000, size), "memcpy_dtod: size"),
        (lambda size: cuda.memcpy_peer(0x7000, 0x9000, size), "memcpy_peer: size"),
        (lambda size: cuda.memcpy_dtoa(None, 0, 0x7000, size), "memcpy_dtoa: size"),
        (lambda size: cuda.memcpy_dtoa(None, size, 0x7000, 4), "memcpy_dtoa: index"),
        (lambda size: cuda.memcpy_atod(0x7000, None, size, 4), "memcpy_atod: index"),
        (lambda size: cuda.memcpy_atoa(None, size, None, 0, 4), "memcpy_atoa: dest_index"),
        (lambda size: cuda.memcpy_atoa(None, 0, None, 0, size), "memcpy_atoa: size"),
        (lambda size: cuda.memcpy_htoa(None, size, b"1234"), "memcpy_htoa: index"),
        (lambda size: cuda.memcpy_atoh(bytearray(4), None, size), "memcpy_atoh: index"),
    ],
)
@pytest.mark.parametrize(
    ("size", "kind", "message"),
    [
        (1.5, TypeError, "must be an int number of bytes, not float (1.5): convert it first"),
        (True, TypeError, "must be an int number of bytes, not bool (True)"),
        ("8", TypeError, "not str ('8')"),
        (-1, ValueError, "is -1 bytes: it must be 0 or more"),
        (2**64, MemoryError, "more than a 64-bit address space holds"),
    ],
)
def test_sizes_and_offsets_are_byte_counts(copy, words, size, kind, message):
    with pytest.raises(kind) as raised:
        copy(size)
    assert str(raised.value).startswith(words) and message in str(raised.value)


@pytest.mark.parametrize("count", [1.5, True, -1])
def test_a_fills_count_is_checked(count):
    with pytest.raises((TypeError, ValueError), match="memset_d8: count"):
        cuda.memset_d8(0x7000, 0, count)


def test_sizes_that_fit_go_on_to_the_driver(gpu_pointers, needs_no_driver):
    """The checks pass what fits: these calls get as far as the driver, absent here."""
    for copy in (
        lambda: cuda.memcpy_htod(GpuBytes(32), np.zeros(4)),
        lambda: cuda.memcpy_dtoh(bytearray(16), GpuBytes(16)),
        lambda: cuda.memcpy_dtod(GpuBytes(32), GpuBytes(32), 32),
        lambda: cuda.memcpy_dtod(0x7000, GpuBytes(32), 8),  # a bare address: its size is unknown
        lambda: cuda.memset_d32(GpuBytes(16), 7, 4),
        lambda: cuda.memcpy_htod(GpuBytes(32), memoryview(np.asfortranarray(np.zeros((2, 2))))),
    ):
        with pytest.raises(pyctk.NoDriverError):
            copy()


# ---------------------------------------------------------------------------
# 2-D and 3-D copies and fills: the bytes they reach, from each side's origin.


def two_d_copy(src, dst, width, rows, src_pitch, dst_pitch, src_x=0, src_y=0):
    copy = cuda.Memcpy2D()
    src(copy)
    dst(copy)
    copy.width_in_bytes, copy.height, copy.src_pitch, copy.dst_pitch = width, rows, src_pitch, dst_pitch
    copy.src_x_in_bytes, copy.src_y = src_x, src_y
    return copy


@pytest.mark.parametrize(
    ("rows", "src_x", "src_y", "words"),
    [
        (4, 0, 0, "would reach byte 64 of its src side, which has 48 bytes"),
        (3, 4, 0, "would reach byte 52 of its src side"),
        (2, 0, 2, "would reach byte 64 of its src side"),
    ],
)
def test_a_2d_copy_past_its_host_buffer_is_refused(gpu_pointers, rows, src_x, src_y, words):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)  # 48 bytes, rows of 16
    copy = two_d_copy(
        lambda c: c.set_src_host(a), lambda c: c.set_dst_device(GpuBytes(1024)), 16, rows, 16, 16, src_x, src_y
    )
    with pytest.raises(ValueError, match="Memcpy2D: the copy") as raised:
        copy()
    assert words in str(raised.value)
    with pytest.raises(ValueError, match="would reach"):
        copy(stream=2)  # enqueued (on the per-thread default stream) too


def test_a_2d_copy_past_device_memory_of_known_size_is_refused(gpu_pointers):
    back = np.zeros((4, 4), np.float32)
    copy = two_d_copy(lambda c: c.set_src_device(GpuBytes(48)), lambda c: c.set_dst_host(back), 16, 4, 16, 16)
    with pytest.raises(ValueError, match="would reach byte 64 of its src side, which has 48 bytes"):
        copy()


def test_a_host_buffers_room_counts_from_its_first_element(gpu_pointers):
    """A reversed array's first element is its last in memory: from it, one element is left."""
    reversed_ = np.arange(4.0)[::-1]
    copy = two_d_copy(lambda c: c.set_src_host(reversed_), lambda c: c.set_dst_device(GpuBytes(64)), 16, 1, 16, 16)
    with pytest.raises(ValueError, match="which has 8 bytes from its origin"):
        copy()


def test_a_3d_copy_past_its_host_buffer_is_refused(gpu_pointers):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)  # 96 bytes: 2 slices of 3 rows of 16
    for kind in (cuda.Memcpy3D, cuda.Memcpy3DPeer):
        copy = kind()
        copy.set_src_host(a)
        copy.set_dst_device(GpuBytes(1024))
        copy.width_in_bytes = copy.src_pitch = copy.dst_pitch = 16
        copy.src_height = copy.dst_height = copy.height = 3
        copy.depth = 3
        with pytest.raises(ValueError, match="would reach byte 144 of its src side, which has 96") as raised:
            copy()
        assert "src_z, src_height and depth" in str(raised.value)


def test_copies_that_fit_go_on_to_the_driver(gpu_pointers, needs_no_driver):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    fitting = two_d_copy(lambda c: c.set_src_host(a), lambda c: c.set_dst_device(GpuBytes(48)), 16, 3, 16, 16)
    unknown = two_d_copy(lambda c: c.set_src_host(a), lambda c: c.set_dst_device(0x7000), 16, 3, 16, 64)
    for copy in (fitting, unknown, lambda: cuda.memset_d2d32(GpuBytes(64), 16, 0, 4, 4)):
        with pytest.raises(pyctk.NoDriverError):
            copy()


@pytest.mark.parametrize(
    ("fill", "error", "words"),
    [
        (lambda: cuda.memset_d2d32(GpuBytes(64), 16, 0, 4, 5), ValueError, "end at byte 80 of this GpuBytes's 64"),
        (
            lambda: cuda.memset_d2d8_async(GpuBytes(16), 16, 0, 17, 1),
            ValueError,
            "end at byte 17 of this GpuBytes's 16",
        ),
        (lambda: cuda.memset_d2d16(GpuBytes(64), 16.0, 0, 4, 4), TypeError, "memset_d2d16: pitch must be an int"),
        (lambda: cuda.memset_d2d8(GpuBytes(64), 16, 0, -1, 4), ValueError, "memset_d2d8: width is -1 bytes"),
    ],
)
def test_a_2d_fill_is_checked_against_its_memory(gpu_pointers, fill, error, words):
    with pytest.raises(error) as raised:
        fill()
    assert words in str(raised.value)
