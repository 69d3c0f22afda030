"""A CUDA library through ctypes (NVRTC, nvFatbin): its calls return a status, 0 for
success, which one function of the library turns into a message."""

from __future__ import annotations

import ctypes


class CudaLibrary:
    """The library at ``path``; a subclass names its status-to-message function."""

    ERROR_STRING: str  # e.g. "nvrtcGetErrorString"

    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path)
        self._message = getattr(self.lib, self.ERROR_STRING)
        self._message.restype = ctypes.c_char_p

    def check(self, result: int, what: str) -> None:
        """RuntimeError naming ``what`` and the library's message, unless ``result`` is 0."""
        if result != 0:
            raise RuntimeError(f"{what}: {self._message(result).decode()}")
