"""A GPU in host memory, for tests of pyctk's GPU paths without one: the CUDA runtime calls
pyctk makes (FakeRuntime) and libgpumatmul's device calls (FakeLibrary), carried out at once on
host memory, checking what a GPU would. The ``cuda`` fixture (conftest.py) installs them."""

from __future__ import annotations

import ctypes
import gc

from pyctk._arrays import memory as _memory
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import cudart as _cudart
from pyctk._cuda import library as _library
from pyctk._cuda import status as _status
from support import gemm_emulation


class FakeRuntime:
    """cudart for DeviceArray's logic without a GPU: memory is host memory, streams run at once.

    It checks what a GPU would: each pointer is used on its own device (so on_device was used),
    every free matches an allocation, and the device of the calling thread is tracked.
    """

    def __init__(self, devices: int = 2) -> None:
        self.devices, self.current = devices, 0
        self.blocks: dict[int, tuple[ctypes.Array, int]] = {}
        self.waits: list[tuple[int, int]] = []
        self.recorded: dict[int, int] = {}
        self.capacity = 1 << 40
        self.last_error = 0

    def device_of(self, pointer: int) -> int | None:
        # Loops go over a copy made in one step (dict.copy): a garbage array's finalizer frees
        # its block (a cudaFree here) whenever the interpreter gets to it, on PyPy between two
        # steps of a loop, on CPython in a collection that an allocation starts, such as the
        # tuples list(blocks.items()) makes while it walks the dict.
        for start, (block, device) in self.blocks.copy().items():
            if start <= pointer < start + max(len(block), 1):
                return device
        return None

    def on_current(self, *pointers: int) -> None:
        for pointer in pointers:
            assert self.device_of(pointer) in (None, self.current), "used from another device"

    def fail(self, code: int) -> int:
        self.last_error = code
        return code

    def cudaGetLastError(self):
        code, self.last_error = self.last_error, 0
        return code

    def cudaGetDevice(self, device):
        device._obj.value = self.current
        return 0

    def cudaSetDevice(self, index):
        if not 0 <= index < self.devices:
            return self.fail(101)
        self.current = index
        return 0

    def cudaGetErrorName(self, code):
        names = {2: b"cudaErrorMemoryAllocation", 101: b"cudaErrorInvalidDevice"}
        return names.get(code, b"cudaErrorUnknown")

    def cudaMallocAsync(self, pointer, nbytes, stream):
        if sum(len(block) for block, _ in self.blocks.copy().values()) + nbytes > self.capacity:
            return self.fail(2)  # cudaErrorMemoryAllocation
        block = ctypes.create_string_buffer(nbytes)
        pointer._obj.value = ctypes.addressof(block)
        self.blocks[ctypes.addressof(block)] = (block, self.current)
        return 0

    def cudaFreeAsync(self, pointer, stream):
        assert self.blocks.pop(pointer)[1] == self.current
        return 0

    def cudaMemcpyAsync(self, dst, src, nbytes, kind, stream):
        self.on_current(dst, src)
        ctypes.memmove(dst, src, nbytes)
        return 0

    def cudaMemcpyPeerAsync(self, dst, dst_device, src, src_device, nbytes, stream):
        assert (self.device_of(dst), self.device_of(src)) == (dst_device, src_device)
        ctypes.memmove(dst, src, nbytes)
        return 0

    def cudaMemsetAsync(self, pointer, value, nbytes, stream):
        self.on_current(pointer)
        ctypes.memset(pointer, value, nbytes)
        return 0

    def cudaStreamSynchronize(self, stream):
        return 0

    def cudaEventCreateWithFlags(self, event, flags):
        event._obj.value = 0xE0 + len(self.recorded)
        return 0

    def cudaEventRecord(self, event, stream):
        self.recorded[event.value] = stream
        return 0

    def cudaStreamWaitEvent(self, stream, event, flags):
        self.waits.append((stream, self.recorded[event.value]))
        return 0

    def cudaEventDestroy(self, event):
        return 0

    def cudaPointerGetAttributes(self, attributes, pointer):
        device = self.device_of(pointer)
        attributes._obj.type = _cudart.MEMORY_UNREGISTERED if device is None else _cudart.MEMORY_DEVICE
        attributes._obj.device = device or 0
        return 0


class FakeLibrary:
    """libgpumatmul's memory calls (gpumatmul_device_alloc/free) on a FakeRuntime, as the C
    library makes them: on the context's device, then back; other functions are the real
    library's. A context is c_void_p(device + 1)."""

    def __init__(self, runtime: FakeRuntime) -> None:
        self.runtime, self.real, self.message = runtime, _library.library(), b""

    def __getattr__(self, name):
        return getattr(self.real, name)

    def on_context(self, context, call) -> int:
        runtime, previous = self.runtime, self.runtime.current
        runtime.current = context.value - 1
        try:
            code = call()
        finally:
            runtime.current = previous
        if code:
            runtime.cudaGetLastError()  # the C library reports it: no one else must
            self.message = f"cudaMallocFromPoolAsync failed: {runtime.cudaGetErrorName(code).decode()}".encode()
        return {0: 0, 2: _status.OUT_OF_MEMORY}.get(code, _status.CUDA)

    def gpumatmul_device_alloc(self, context, nbytes, stream, pointer):
        return self.on_context(context, lambda: self.runtime.cudaMallocAsync(pointer, nbytes, stream))

    def gpumatmul_device_free(self, context, pointer, stream):
        return self.on_context(context, lambda: self.runtime.cudaFreeAsync(pointer, stream))

    def gpumatmul_create(self, context, device):
        """Contexts exist for every device (the fixture makes them): only bad indices get here."""
        self.message = f"device {device} does not exist".encode()
        return _status.NO_DEVICE

    def gpumatmul_gemm_device(self, context, desc, a, b, c, stream):
        """The product on the fake's host memory, at once (every stream runs at once here); an
        empty C is left alone, as gpumatmul.h says."""
        self.runtime.on_current()  # the fake checks pointers against the current device
        if not (desc.m and desc.n and desc.batch_count):
            return 0
        return gemm_emulation.gemm(desc, a, b, c)

    def gpumatmul_copy_device(self, context, dst_desc, dst, src_desc, src, stream):
        """The copy on the context's device, at once, by NumPy (whose casts the GPU's follow)."""

        def copy():
            self.runtime.on_current(dst, src)
            return gemm_emulation.copy(dst_desc, dst, src_desc, src)

        return self.on_context(context, copy)

    def gpumatmul_gemm_device_new(self, context, desc, a, b, stream, c):
        """Allocates C as gpumatmul.h says (its span: packed here; NULL for an empty C) and
        multiplies into it."""
        if not (desc.m and desc.n and desc.batch_count):
            c._obj.value = None
            return 0
        elements = (desc.batch_count - 1) * desc.stride_c + (desc.m - 1) * desc.ldc + desc.n
        nbytes = elements * gemm_emulation.product_dtypes(desc.dtype)[2].itemsize
        status = self.gpumatmul_device_alloc(context, nbytes, stream, c)
        return status or self.gpumatmul_gemm_device(context, desc, a, b, c._obj.value, stream)

    def gpumatmul_last_error_message(self):
        return self.message


def install(monkeypatch) -> FakeRuntime:
    """Installs a FakeRuntime and a FakeLibrary over it, with a context on each device."""
    runtime = FakeRuntime()
    monkeypatch.setattr(_cudart, "_runtime", runtime)
    monkeypatch.setattr(_library, "_library", FakeLibrary(runtime))
    monkeypatch.setattr(
        _contexts, "_contexts", {device: ctypes.c_void_p(device + 1) for device in range(runtime.devices)}
    )
    monkeypatch.setattr(_memory, "_recycled", {})
    return runtime


def check_after(runtime: FakeRuntime) -> None:
    """What a test must leave: the caller's device, no error pending, no memory in use."""
    assert runtime.current == 0, "the calling thread was left on another device"
    assert runtime.last_error == 0, "a failure left for the next cudaGetLastError to report"
    gc.collect()  # PyPy: free the test's garbage arrays while their runtime is installed
    _memory.release_recycled()  # blocks kept for reuse are in use by pyctk, not garbage
    assert not runtime.blocks, "device memory outlived every array"
