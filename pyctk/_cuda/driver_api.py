"""The CUDA driver API calls of ``pyctk.driver``, reached through the CUDA runtime.

pyctk never links or opens ``libcuda.so.1`` itself: the runtime pyctk's loader found
(``cudart.runtime()``) hands out the driver's entry points (``cudaGetDriverEntryPoint``,
CUDA 13: ``...ByVersion``), exactly as libgpumatmul gets them (libgpu/src/core/context.c). So
``import pyctk.driver`` works with no driver, and the first call says what is missing.

Contexts. pyctk uses only each device's *primary* context, the one the CUDA runtime
(and with it libgpumatmul, PyTorch, CuPy) uses, so memory, streams and kernels are
shared freely between them. A thread that has not used CUDA yet has no current
context; ``current_context`` then makes the runtime's current device's primary
context current, as any runtime call would.

>>> from pyctk._cuda import driver_api         # doctest: +GPU
>>> driver_api.current_device()                # device 0's primary context made current
0
>>> driver_api.call("cuCtxSynchronize")
>>> driver_api.driver_version() >= 12000
True
"""

from __future__ import annotations

import _thread  # its lock is threading.Lock; importing threading costs ~0.6 ms
import ctypes
import os
from _ctypes import CFuncPtr
from ctypes import POINTER, byref, c_char_p, c_float, c_int, c_size_t, c_ubyte, c_uint, c_uint64, c_ushort, c_void_p
from types import SimpleNamespace
from typing import Any

from .._build_config import CUDA_MAJOR
from . import cudart, driver_errors

# The version of the driver API whose signatures _PROTOTYPES are. CUDA 13 changed some
# (cuCtxSynchronize and cuCtxGetDevice take a context) and, as every driver must for programs
# built for CUDA 12, still hands out the 12.0 ones when asked for them.
ABI_VERSION = 12000
# CUDA major -> (the runtime's entry-point query, the arguments it takes between the symbol's
# address and the flags). CUDA 13 deprecates the unversioned query and takes the version; a
# CUDA 12 runtime's unversioned query gives its own 12.x forms, for these functions the 12.0 ones.
_ENTRY_POINT_QUERY = {
    12: ("cudaGetDriverEntryPoint", [], ()),
    13: ("cudaGetDriverEntryPointByVersion", [c_uint], (ABI_VERSION,)),
}
_ENABLE_DEFAULT, _SYMBOL_FOUND = 0, 0  # cudaEnableDefault, cudaDriverEntryPointSuccess

_DEVICE_POINTER = c_uint64  # CUdeviceptr


class IpcHandle(ctypes.Structure):
    """CUipcMemHandle and CUipcEventHandle: 64 opaque bytes, passed by value."""

    _fields_ = [("reserved", c_ubyte * 64)]


# Driver function -> argument types (of ABI_VERSION); each returns a CUresult. Base names: the
# query returns the version (cuMemcpyHtoD_v2 ...) of that ABI. Every one is in the CUDA 12.0
# driver (R525), the oldest pyctk-cu12 admits.
_PROTOTYPES: dict[str, list[Any]] = {
    "cuInit": [c_uint],
    "cuDriverGetVersion": [POINTER(c_int)],
    "cuGetErrorName": [c_int, POINTER(c_char_p)],
    "cuGetErrorString": [c_int, POINTER(c_char_p)],
    "cuDeviceGet": [POINTER(c_int), c_int],
    "cuDeviceGetCount": [POINTER(c_int)],
    "cuDeviceGetName": [c_char_p, c_int, c_int],
    "cuDeviceGetAttribute": [POINTER(c_int), c_int, c_int],
    "cuDeviceTotalMem": [POINTER(c_size_t), c_int],
    "cuDeviceGetPCIBusId": [c_char_p, c_int, c_int],
    "cuDevicePrimaryCtxRetain": [POINTER(c_void_p), c_int],
    "cuDevicePrimaryCtxRelease": [c_int],
    "cuCtxGetCurrent": [POINTER(c_void_p)],
    "cuCtxPushCurrent": [c_void_p],
    "cuCtxSetCurrent": [c_void_p],
    "cuCtxPopCurrent": [POINTER(c_void_p)],
    "cuCtxGetDevice": [POINTER(c_int)],
    "cuCtxSynchronize": [],
    "cuMemGetInfo": [POINTER(c_size_t), POINTER(c_size_t)],
    "cuMemcpyHtoD": [_DEVICE_POINTER, c_void_p, c_size_t],
    "cuMemcpyDtoH": [c_void_p, _DEVICE_POINTER, c_size_t],
    "cuMemcpyDtoD": [_DEVICE_POINTER, _DEVICE_POINTER, c_size_t],
    "cuMemcpyHtoDAsync": [_DEVICE_POINTER, c_void_p, c_size_t, c_void_p],
    "cuMemcpyDtoHAsync": [c_void_p, _DEVICE_POINTER, c_size_t, c_void_p],
    "cuMemcpyDtoDAsync": [_DEVICE_POINTER, _DEVICE_POINTER, c_size_t, c_void_p],
    "cuMemsetD8": [_DEVICE_POINTER, c_ubyte, c_size_t],
    "cuMemsetD16": [_DEVICE_POINTER, c_ushort, c_size_t],
    "cuMemsetD32": [_DEVICE_POINTER, c_uint, c_size_t],
    "cuMemsetD8Async": [_DEVICE_POINTER, c_ubyte, c_size_t, c_void_p],
    "cuMemsetD16Async": [_DEVICE_POINTER, c_ushort, c_size_t, c_void_p],
    "cuMemsetD32Async": [_DEVICE_POINTER, c_uint, c_size_t, c_void_p],
    "cuStreamCreate": [POINTER(c_void_p), c_uint],
    "cuStreamDestroy": [c_void_p],
    "cuStreamSynchronize": [c_void_p],
    "cuStreamQuery": [c_void_p],
    "cuStreamWaitEvent": [c_void_p, c_void_p, c_uint],
    "cuEventCreate": [POINTER(c_void_p), c_uint],
    "cuEventDestroy": [c_void_p],
    "cuEventRecord": [c_void_p, c_void_p],
    "cuEventSynchronize": [c_void_p],
    "cuEventQuery": [c_void_p],
    "cuEventElapsedTime": [POINTER(c_float), c_void_p, c_void_p],
    # Host memory (page-locked, registered) and managed memory (pyctk._pycuda.memory.host).
    "cuMemHostAlloc": [POINTER(c_void_p), c_size_t, c_uint],
    "cuMemFreeHost": [c_void_p],
    "cuMemHostGetDevicePointer": [POINTER(_DEVICE_POINTER), c_void_p, c_uint],
    "cuMemHostGetFlags": [POINTER(c_uint), c_void_p],
    "cuMemHostRegister": [c_void_p, c_size_t, c_uint],
    "cuMemHostUnregister": [c_void_p],
    "cuMemAllocManaged": [POINTER(_DEVICE_POINTER), c_size_t, c_uint],
    "cuMemFree": [_DEVICE_POINTER],
    "cuStreamAttachMemAsync": [c_void_p, _DEVICE_POINTER, c_size_t, c_uint],
    # CUDA arrays, 2-D/3-D copies and fills, texture and surface objects (pyctk._pycuda.memory.arrays,
    # copies_nd, textures); the structures' pointers are c_void_p, handed ctypes.byref(...).
    "cuArrayCreate": [POINTER(c_void_p), c_void_p],
    "cuArray3DCreate": [POINTER(c_void_p), c_void_p],
    "cuArrayDestroy": [c_void_p],
    "cuArrayGetDescriptor": [c_void_p, c_void_p],
    "cuArray3DGetDescriptor": [c_void_p, c_void_p],
    "cuMemcpyHtoA": [c_void_p, c_size_t, c_void_p, c_size_t],
    "cuMemcpyAtoH": [c_void_p, c_void_p, c_size_t, c_size_t],
    "cuMemcpyDtoA": [c_void_p, c_size_t, _DEVICE_POINTER, c_size_t],
    "cuMemcpyAtoD": [_DEVICE_POINTER, c_void_p, c_size_t, c_size_t],
    "cuMemcpyAtoA": [c_void_p, c_size_t, c_void_p, c_size_t, c_size_t],
    "cuMemcpy2D": [c_void_p],
    "cuMemcpy2DUnaligned": [c_void_p],
    "cuMemcpy2DAsync": [c_void_p, c_void_p],
    "cuMemcpy3D": [c_void_p],
    "cuMemcpy3DAsync": [c_void_p, c_void_p],
    "cuMemcpy3DPeer": [c_void_p],
    "cuMemcpy3DPeerAsync": [c_void_p, c_void_p],
    "cuMemsetD2D8": [_DEVICE_POINTER, c_size_t, c_ubyte, c_size_t, c_size_t],
    "cuMemsetD2D16": [_DEVICE_POINTER, c_size_t, c_ushort, c_size_t, c_size_t],
    "cuMemsetD2D32": [_DEVICE_POINTER, c_size_t, c_uint, c_size_t, c_size_t],
    "cuMemsetD2D8Async": [_DEVICE_POINTER, c_size_t, c_ubyte, c_size_t, c_size_t, c_void_p],
    "cuMemsetD2D16Async": [_DEVICE_POINTER, c_size_t, c_ushort, c_size_t, c_size_t, c_void_p],
    "cuMemsetD2D32Async": [_DEVICE_POINTER, c_size_t, c_uint, c_size_t, c_size_t, c_void_p],
    "cuTexObjectCreate": [POINTER(c_uint64), c_void_p, c_void_p, c_void_p],
    "cuTexObjectDestroy": [c_uint64],
    "cuTexObjectGetResourceDesc": [c_void_p, c_uint64],
    "cuSurfObjectCreate": [POINTER(c_uint64), c_void_p],
    "cuSurfObjectDestroy": [c_uint64],
    "cuSurfObjectGetResourceDesc": [c_void_p, c_uint64],
    # Device memory, IPC, peer copies, stream capture and graphs (pyctk._pycuda.memory.device_extras,
    # graphs; the events' IPC in streams). IPC handles are 64 bytes passed by value.
    "cuMemAlloc": [POINTER(_DEVICE_POINTER), c_size_t],
    "cuMemAllocPitch": [POINTER(_DEVICE_POINTER), POINTER(c_size_t), c_size_t, c_size_t, c_uint],
    "cuMemGetAddressRange": [POINTER(_DEVICE_POINTER), POINTER(c_size_t), _DEVICE_POINTER],
    "cuPointerGetAttribute": [c_void_p, c_int, _DEVICE_POINTER],
    "cuMemcpyPeer": [_DEVICE_POINTER, c_void_p, _DEVICE_POINTER, c_void_p, c_size_t],
    "cuMemcpyPeerAsync": [_DEVICE_POINTER, c_void_p, _DEVICE_POINTER, c_void_p, c_size_t, c_void_p],
    "cuIpcGetMemHandle": [POINTER(IpcHandle), _DEVICE_POINTER],
    "cuIpcOpenMemHandle": [POINTER(_DEVICE_POINTER), IpcHandle, c_uint],
    "cuIpcCloseMemHandle": [_DEVICE_POINTER],
    "cuIpcGetEventHandle": [POINTER(IpcHandle), c_void_p],
    "cuIpcOpenEventHandle": [POINTER(c_void_p), IpcHandle],
    # For the functions that changed after CUDA 12.0 (cuStreamGetCaptureInfo in 12.3), which a
    # CUDA 12 runtime's query hands out in its own version's form: graphs.py asks the driver.
    "cuGetProcAddress": [c_char_p, POINTER(c_void_p), c_int, c_uint64, POINTER(c_int)],
    "cuStreamBeginCapture": [c_void_p, c_int],
    "cuStreamEndCapture": [c_void_p, POINTER(c_void_p)],
    "cuGraphCreate": [POINTER(c_void_p), c_uint],
    "cuGraphDestroy": [c_void_p],
    "cuGraphAddKernelNode": [POINTER(c_void_p), c_void_p, c_void_p, c_size_t, c_void_p],
    "cuGraphInstantiateWithParams": [POINTER(c_void_p), c_void_p, c_void_p],
    "cuGraphLaunch": [c_void_p, c_void_p],
    "cuGraphExecDestroy": [c_void_p],
    "cuGraphExecKernelNodeSetParams": [c_void_p, c_void_p, c_void_p],
    "cuGraphDebugDotPrint": [c_void_p, c_char_p, c_uint],
    # Contexts beyond the primary ones, their settings, peers; kernels' cache settings
    # (pyctk._pycuda.contexts.made_contexts; cuCtxCreate is asked of cuGetProcAddress there, by its ABI).
    "cuDeviceGetByPCIBusId": [POINTER(c_int), c_char_p],
    "cuDeviceCanAccessPeer": [POINTER(c_int), c_int, c_int],
    "cuCtxDestroy": [c_void_p],
    "cuCtxGetApiVersion": [c_void_p, POINTER(c_uint)],
    "cuCtxSetLimit": [c_int, c_size_t],
    "cuCtxGetLimit": [POINTER(c_size_t), c_int],
    "cuCtxSetCacheConfig": [c_int],
    "cuCtxGetCacheConfig": [POINTER(c_int)],
    "cuCtxSetSharedMemConfig": [c_int],
    "cuCtxGetSharedMemConfig": [POINTER(c_int)],
    "cuCtxEnablePeerAccess": [c_void_p, c_uint],
    "cuCtxDisablePeerAccess": [c_void_p],
    "cuKernelSetCacheConfig": [c_void_p, c_int, c_int],
    "cuKernelGetFunction": [POINTER(c_void_p), c_void_p],
    "cuFuncSetSharedMemConfig": [c_void_p, c_int],
    # Context-independent loading (CUDA 12.0): one library serves every device's context.
    "cuLibraryLoadData": [POINTER(c_void_p), c_void_p, c_void_p, c_void_p, c_uint, c_void_p, c_void_p, c_uint],
    "cuLibraryUnload": [c_void_p],
    "cuLibraryGetKernel": [POINTER(c_void_p), c_void_p, c_char_p],
    "cuLibraryGetGlobal": [POINTER(_DEVICE_POINTER), POINTER(c_size_t), c_void_p, c_char_p],
    "cuKernelGetAttribute": [POINTER(c_int), c_int, c_void_p, c_int],
    "cuKernelSetAttribute": [c_int, c_int, c_void_p, c_int],
    # A CUkernel passed as the CUfunction launches in the current context.
    "cuLaunchKernel": [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_void_p, c_void_p, c_void_p],
    # (config: a CUlaunchConfig, kernel, kernelParams, extra): the generated kernels' launch
    "cuLaunchKernelEx": [c_void_p, c_void_p, c_void_p, c_void_p],
}

_driver: SimpleNamespace | None = None
_lock = _thread.allocate_lock()


def _entry_point(runtime: ctypes.CDLL, name: str, argtypes: list[Any]) -> CFuncPtr:
    query_name, extra_types, extra_args = _ENTRY_POINT_QUERY[CUDA_MAJOR]
    query = getattr(runtime, query_name)
    query.restype = c_int
    query.argtypes = [c_char_p, POINTER(c_void_p), *extra_types, ctypes.c_ulonglong, POINTER(c_int)]
    address, found = c_void_p(), c_int(-1)
    cudart.check(
        query(name.encode(), byref(address), *extra_args, _ENABLE_DEFAULT, byref(found)), f"{query_name}({name})"
    )
    if found.value != _SYMBOL_FOUND or not address.value:
        from .errors import NoDriverError  # imported here: only this failure needs it

        raise NoDriverError(
            f"the NVIDIA driver does not provide {name}; update the driver "
            f"(CUDA {CUDA_MAJOR} needs {'525' if CUDA_MAJOR == 12 else '580'} or newer)"
        )
    return ctypes.CFUNCTYPE(c_int, *argtypes)(address.value)


def driver() -> SimpleNamespace:
    """The driver functions of ``_PROTOTYPES`` as attributes, fetched on first use.

    Raises pyctk.NoDriverError (no driver, or one too old), and ForkedAfterCudaError in
    a child forked after its parent started CUDA (``cudart.runtime()`` checks).
    """
    global _driver
    if _driver is not None:  # the per-call path takes no lock
        return _driver
    with _lock:
        if _driver is None:
            runtime = cudart.runtime()
            functions = SimpleNamespace(
                **{name: _entry_point(runtime, name, argtypes) for name, argtypes in _PROTOTYPES.items()}
            )
            check(functions.cuInit(0), "cuInit", functions)
            _driver = functions
    return _driver


def _forget_in_child() -> None:
    global _driver, _lock
    _driver, _lock = None, _thread.allocate_lock()  # the next driver() goes through the fork check


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_in_child)


def check(result: int, what: str, functions: SimpleNamespace | None = None) -> None:
    """Raise the ``pyctk.driver`` exception for ``result`` unless it is CUDA_SUCCESS (0)."""
    if not result:
        return
    functions = functions or driver()
    name, description = c_char_p(), c_char_p()
    functions.cuGetErrorName(result, byref(name))
    functions.cuGetErrorString(result, byref(description))
    raise driver_errors.exception(
        result, (name.value or b"CUDA_ERROR_UNKNOWN").decode(), (description.value or b"unknown error").decode(), what
    )


def call(name: str, *args: Any) -> None:
    """Call the driver's ``name`` and check its result."""
    check(getattr(driver(), name)(*args), name)


def current_context() -> int:
    """The calling thread's current context, made first if the thread has none (see above)."""
    context = c_void_p()
    call("cuCtxGetCurrent", byref(context))
    if not context.value:
        # cudaSetDevice makes the device's primary context current (CUDA 12 and later).
        cudart.call("cudaSetDevice", cudart.get_device())
        call("cuCtxGetCurrent", byref(context))
    return context.value or 0  # (0: NULL, which ctypes reads as None)


def current_device() -> int:
    """The device of the calling thread's current context (made as ``current_context`` does)."""
    current_context()
    device = c_int()
    call("cuCtxGetDevice", byref(device))
    return device.value


def driver_version() -> int:
    """The CUDA version the driver supports, as 1000 * major + 10 * minor (13000 for 13.0)."""
    return query_int("cuDriverGetVersion")


def query_int(name: str, *args: Any) -> int:
    """Call ``name``, whose first argument is an ``int *`` out, and return that int."""
    value = c_int()
    call(name, byref(value), *args)
    return value.value
