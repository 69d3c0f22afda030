"""Wrap a kernel image in a compressed fatbin with nvFatbin, and read a fatbin's entries back.

embed_kernels.py wraps each image NVRTC made (a CUBIN or the PTX) in a fatbin of one entry
whose payload nvFatbin compressed; cuModuleLoadData inflates it when the library loads the
image. packaging/check-wheel reads the entries back to prove a wheel's images are compressed.
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass

from cuda_library import CudaLibrary

MAGIC = 0xBA55ED50
# A fatbin: its header (magic, version, header size, size of the entries that follow), then
# each entry's header and payload. Of an entry's header only these fields are read.
HEADER = struct.Struct("<IHHQ")
ENTRY = struct.Struct("<HHIQ12xI8xQ")  # kind, version, header size, payload size, arch, flags
ENTRY_KINDS = {1: "PTX", 2: "SASS"}
# Flags of an entry's payload: how it is compressed. The CUDA 12.0 driver inflates LZ4;
# zstd (nvFatbin's "balance" and "size" modes, also "default" in CUDA 13) needs driver
# 550.54.14 or newer, which every CUDA 13 driver is.
LZ4, ZSTD = 0x2000, 0x8000


@dataclass(frozen=True)
class Entry:
    """One entry of a fatbin: an image of one kind for one architecture."""

    kind: str  # "SASS" or "PTX"
    arch: int  # 10 * major + minor
    flags: int

    @property
    def compressed(self) -> str | None:
        """The payload's compression: "zstd", "lz4", or None where it is stored as it is."""
        return "zstd" if self.flags & ZSTD else "lz4" if self.flags & LZ4 else None


def entries(data: bytes, offset: int = 0) -> list[Entry]:
    """The entries of the fatbin at ``offset`` of ``data``.

    Raises
    ------
    ValueError
        If no fatbin starts there, or its entries overrun it.
    """
    magic, _version, header_size, size = HEADER.unpack_from(data, offset)
    if magic != MAGIC:
        raise ValueError(f"no fatbin at offset {offset}: magic {magic:#x}, not {MAGIC:#x}")
    found, position, end = [], offset + header_size, offset + header_size + size
    while position < end:
        kind, _version, entry_header, payload, arch, flags = ENTRY.unpack_from(data, position)
        found.append(Entry(ENTRY_KINDS.get(kind, f"kind {kind}"), arch, flags))
        position += entry_header + payload
    if position != end:
        raise ValueError(f"the fatbin at offset {offset} has entries past its {size} bytes")
    return found


def find_all(data: bytes) -> list[list[Entry]]:
    """The entries of every fatbin in ``data`` (a shared library), in the order they lie. A
    match of the magic that starts no well-formed fatbin is passed over."""
    marker, found, start = struct.pack("<I", MAGIC), [], 0
    while (start := data.find(marker, start)) >= 0:
        try:
            found.append(entries(data, start))
        except (ValueError, struct.error):
            start += len(marker)
            continue
        _magic, _version, header_size, size = HEADER.unpack_from(data, start)
        start += header_size + size
    return found


class NvFatbin(CudaLibrary):
    """nvFatbin (libnvfatbin.so.N) through ctypes."""

    ERROR_STRING = "nvFatbinGetErrorString"

    def wrap(self, image: bytes, arch: str, kind: str, options: tuple[str, ...]) -> bytes:
        """A fatbin holding ``image``, a CUBIN (kind "SASS") or NUL-terminated PTX for ``arch``
        ("90a", "121"), made with nvFatbin's ``options``."""
        handle = ctypes.c_void_p()
        option_array = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
        self.check(self.lib.nvFatbinCreate(ctypes.byref(handle), option_array, len(options)), "nvFatbinCreate")
        try:
            if kind == "SASS":
                added = self.lib.nvFatbinAddCubin(handle, image, len(image), arch.encode(), b"kernels")
            else:
                added = self.lib.nvFatbinAddPTX(handle, image, len(image), arch.encode(), b"kernels", None)
            self.check(added, f"adding the {kind} of {arch}")
            size = ctypes.c_size_t()
            self.check(self.lib.nvFatbinSize(handle, ctypes.byref(size)), "nvFatbinSize")
            fatbin = ctypes.create_string_buffer(size.value)
            self.check(self.lib.nvFatbinGet(handle, fatbin), "nvFatbinGet")
            return fatbin.raw
        finally:
            self.lib.nvFatbinDestroy(ctypes.byref(handle))
