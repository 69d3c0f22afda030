"""How the kernel images are stored in the built library (libgpu/tools/embed_kernels.py's
FATBIN_OPTIONS, read back with libgpu/tools/fatbin.py): CUDA 13's as fatbins of one
zstd-compressed entry each, CUDA 12's as NVRTC made them (its drivers from 525 inflate no
zstd)."""

from __future__ import annotations

import struct
import sys

import pytest

import pyctk
from pyctk._build_config import CUDA_MAJOR
from pyctk._cuda import loader as _loader
from support.paths import ROOT

sys.path.insert(0, str(ROOT / "libgpu" / "tools"))
import fatbin  # noqa: E402  (libgpu/tools is no package)

import embed_kernels  # noqa: E402


def fake_fatbin(entries: list[tuple[int, int, int, bytes]]) -> bytes:
    """A fatbin of (kind, arch, flags, payload) entries, laid out as nvFatbin lays them."""
    body = b"".join(
        fatbin.ENTRY.pack(kind, 0x101, fatbin.ENTRY.size, len(payload), arch, flags) + payload
        for kind, arch, flags, payload in entries
    )
    return fatbin.HEADER.pack(fatbin.MAGIC, 1, fatbin.HEADER.size, len(body)) + body


def test_the_images_are_stored_as_the_major_says():
    found = fatbin.find_all(_loader.gpumatmul_path().read_bytes())
    options = embed_kernels.FATBIN_OPTIONS[CUDA_MAJOR]
    if options is None:
        assert found == []
        return
    images = pyctk.info()["kernel_images"]
    # the linker lays the images out in an order of its own
    assert sorted([(e.kind, e.arch, e.compressed) for e in entries] for entries in found) == sorted(
        [(i["kind"], i["arch"], options[1])] for i in images
    )


def test_cuda_13_compresses_with_zstd_and_cuda_12_not():
    """zstd's size mode is what makes the wheel's room; CUDA 12's promise of driver 525 keeps
    its images uncompressed (that driver inflates only LZ4, no smaller than the zip)."""
    assert embed_kernels.FATBIN_OPTIONS == {
        12: None,
        13: (("-64", "-compress-all", "-compress-mode=size"), "zstd"),
    }


def test_entries_reads_kind_arch_and_compression():
    data = fake_fatbin([(2, 90, 0x8011, b"\x28\xb5\x2f\xfd" * 3), (1, 121, 0x2011, b"x"), (2, 75, 0x11, b"")])
    assert [(e.kind, e.arch, e.compressed) for e in fatbin.entries(data)] == [
        ("SASS", 90, "zstd"),
        ("PTX", 121, "lz4"),
        ("SASS", 75, None),
    ]


def test_entries_refuses_what_is_no_fatbin():
    with pytest.raises(ValueError, match="no fatbin at offset 0"):
        fatbin.entries(b"\x7fELF" + bytes(20))
    overrun = bytearray(fake_fatbin([(2, 90, 0x8011, b"abcd")]))
    struct.pack_into("<Q", overrun, 24, 5)  # the entry's payload size: one byte past the end
    with pytest.raises(ValueError, match="entries past its"):
        fatbin.entries(bytes(overrun))


def test_find_all_finds_each_fatbin_and_passes_a_stray_magic_over():
    first, second = fake_fatbin([(2, 80, 0x8011, b"a" * 8)]), fake_fatbin([(1, 121, 0x8011, b"b")])
    stray = struct.pack("<I", fatbin.MAGIC) + b"\xff" * 4
    found = fatbin.find_all(b"head" + first + stray + bytes(3) + second + b"tail")
    assert [[(e.kind, e.arch) for e in entries] for entries in found] == [[("SASS", 80)], [("PTX", 121)]]


class FakeNvFatbin:
    """Returns the fatbin it was made with, whatever it is asked to wrap."""

    def __init__(self, made: bytes):
        self.made = made
        self.calls: list[tuple[str, str, tuple[str, ...]]] = []

    def wrap(self, image: bytes, arch: str, kind: str, options: tuple[str, ...]) -> bytes:
        self.calls.append((arch, kind, options))
        return self.made


def test_wrap_gives_the_arch_specific_target_and_keeps_a_zstd_fatbin():
    made = fake_fatbin([(2, 90, 0x8011, b"z")])
    nvfatbin = FakeNvFatbin(made)
    options, compression = embed_kernels.FATBIN_OPTIONS[13]
    assert embed_kernels.wrap(nvfatbin, 90, embed_kernels.SASS, b"\x7fELF", options, compression) == made
    assert nvfatbin.calls == [("90a", "SASS", options)]


@pytest.mark.parametrize(
    "entries",
    [
        [(2, 90, 0x11, b"\x7fELF")],  # stored uncompressed: an nvFatbin that ignored the mode
        [(2, 90, 0x2011, b"z")],  # LZ4, not zstd
        [(1, 90, 0x8011, b"z")],  # PTX where the CUBIN was given
        [(2, 90, 0x8011, b"z"), (2, 90, 0x8011, b"z")],  # two entries
    ],
)
def test_wrap_refuses_a_fatbin_not_of_one_compressed_entry(entries):
    options, compression = embed_kernels.FATBIN_OPTIONS[13]
    with pytest.raises(SystemExit, match="not one zstd entry; fix: an nvFatbin that knows"):
        embed_kernels.wrap(FakeNvFatbin(fake_fatbin(entries)), 90, embed_kernels.SASS, b"", options, compression)
