"""Device memory this process holds, for the leak tests: the driver's count per process
(NVML, the driver's own library), which other processes on the GPU (the workers of pytest
-n 8) leave be, unlike the GPU's free memory. pyctk's allocations come from its contexts'
own memory pools, which no CUDA runtime call reads from outside."""

from __future__ import annotations

import ctypes
import os

NOT_AVAILABLE = (1 << 64) - 1  # NVML_VALUE_NOT_AVAILABLE


class _ProcessInfo(ctypes.Structure):  # nvmlProcessInfo_t
    _fields_ = [
        ("pid", ctypes.c_uint),
        ("usedGpuMemory", ctypes.c_ulonglong),
        ("gpuInstanceId", ctypes.c_uint),
        ("computeInstanceId", ctypes.c_uint),
    ]


def process_device_bytes(device: int = 0) -> int:
    """Bytes of ``device`` (a CUDA index) this process holds, after its pending work."""
    from pyctk import driver

    driver.Context.synchronize()
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    assert nvml.nvmlInit_v2() == 0
    try:
        handle = ctypes.c_void_p()
        bus_id = driver.Device(device).pci_bus_id().encode()
        assert nvml.nvmlDeviceGetHandleByPciBusId_v2(bus_id, ctypes.byref(handle)) == 0
        count = ctypes.c_uint(256)
        infos = (_ProcessInfo * count.value)()
        assert nvml.nvmlDeviceGetComputeRunningProcesses_v3(handle, ctypes.byref(count), infos) == 0
        used = [info.usedGpuMemory for info in infos[: count.value] if info.pid == os.getpid()]
    finally:
        nvml.nvmlShutdown()
    assert used, "NVML lists no memory of this process on the device (another PID namespace?)"
    assert used[0] != NOT_AVAILABLE, "NVML cannot say this process's memory here"
    return int(used[0])
