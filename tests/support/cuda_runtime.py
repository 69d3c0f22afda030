"""Device buffers and streams for GPU tests, straight from the CUDA runtime pyctk loaded.

The device entry points of libgpumatmul take device pointers; until pyctk has device
arrays of its own, the tests make them with cudart through ctypes (the same
libcudart.so.N the library is bound to).
"""

from __future__ import annotations

import ctypes

import numpy as np

from pyctk._cuda import library as _library
from pyctk._cuda import loader as _loader

HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2  # cudaMemcpyKind


def cudart() -> ctypes.CDLL:
    _library.library()  # loads cudart first
    path = next(lib.path for lib in _loader.loaded_libraries() if lib.name == "cudart")
    return ctypes.CDLL(path)


def check(result: int, what: str) -> None:
    assert result == 0, f"{what} failed: cudaError_t {result}"


class DeviceBuffer:
    """``nbytes`` of device memory on the current device, freed on close."""

    def __init__(self, nbytes: int) -> None:
        self.runtime = cudart()
        self.pointer = ctypes.c_void_p()
        self.nbytes = nbytes
        check(self.runtime.cudaMalloc(ctypes.byref(self.pointer), ctypes.c_size_t(max(nbytes, 1))), "cudaMalloc")

    @classmethod
    def from_array(cls, array: np.ndarray) -> DeviceBuffer:
        array = np.ascontiguousarray(array)
        buffer = cls(array.nbytes)
        check(
            buffer.runtime.cudaMemcpy(
                buffer.pointer, ctypes.c_void_p(array.ctypes.data), ctypes.c_size_t(array.nbytes), HOST_TO_DEVICE
            ),
            "cudaMemcpy",
        )
        return buffer

    def to_array(self, shape, dtype, stream: Stream | None = None) -> np.ndarray:
        """The buffer's first bytes as an array; copied in order on ``stream`` if given
        (only that stream is waited for), else after the whole device is idle."""
        out = np.empty(shape, dtype)
        assert out.nbytes <= self.nbytes
        if stream is None:
            check(self.runtime.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
        handle = stream.handle if stream else None
        check(
            self.runtime.cudaMemcpyAsync(
                ctypes.c_void_p(out.ctypes.data), self.pointer, ctypes.c_size_t(out.nbytes), DEVICE_TO_HOST, handle
            ),
            "cudaMemcpyAsync",
        )
        check(self.runtime.cudaStreamSynchronize(handle), "cudaStreamSynchronize")
        return out

    def close(self) -> None:
        if self.pointer:
            check(self.runtime.cudaFree(self.pointer), "cudaFree")
            self.pointer = ctypes.c_void_p()

    def __enter__(self) -> DeviceBuffer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Stream:
    """A non-blocking CUDA stream (cudaStreamNonBlocking: no implicit sync with the legacy stream)."""

    def __init__(self) -> None:
        self.runtime = cudart()
        self.handle = ctypes.c_void_p()
        check(self.runtime.cudaStreamCreateWithFlags(ctypes.byref(self.handle), 1), "cudaStreamCreateWithFlags")

    def close(self) -> None:
        check(self.runtime.cudaStreamDestroy(self.handle), "cudaStreamDestroy")
