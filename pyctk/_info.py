"""pyctk.info(): what pyctk found, as a dict. Never raises for a missing driver or GPU."""

from __future__ import annotations

import ctypes
import re
from typing import Any

from ._build_config import CUDA_MAJOR, VERSION
from ._cuda import contexts, distributions, environment, library
from ._cuda.errors import LibraryNotFoundError, PyctkError


def driver_release(version_file: str = "/proc/driver/nvidia/version") -> str | None:
    """The kernel driver's release, e.g. "580.159.04", from the file the driver writes."""
    try:
        with open(version_file, encoding="utf-8", errors="replace") as lines:
            match = re.search(r"Kernel Module\s+(?:for \S+\s+)?([0-9][0-9.]+)", lines.read())
    except OSError:
        return None
    return match[1] if match else None


def _cuda_version(encoded: int) -> str | None:
    return f"{encoded // 1000}.{encoded % 1000 // 10}" if encoded else None


def nvrtc_version() -> str | None:
    """NVRTC's version, e.g. "13.0", loading it (it needs no driver); None when it is not
    installed (it is optional: the ``nvrtc`` extra). info() asks only once libgpumatmul
    has loaded: a broken install loads nothing more."""
    from ._cuda import nvrtc  # imported here: `import pyctk` does not need it

    try:
        major, minor = nvrtc.version()
    except LibraryNotFoundError:
        return None
    return f"{major}.{minor}"


def kernel_images() -> list[dict[str, Any]]:
    """The kernel images embedded in libgpumatmul: architecture, kind and size."""
    lib = library.library()
    images = []
    for index in range(lib.gpumatmul_kernel_image_count()):
        arch, kind, size = ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t()
        library.call("gpumatmul_kernel_image_info", index, ctypes.byref(arch), ctypes.byref(kind), ctypes.byref(size))
        images.append(
            {
                "index": index,
                "arch": arch.value,
                "kind": ("SASS", "PTX")[kind.value],
                "name": f"{'sm' if kind.value == 0 else 'compute'}_{arch.value}",
                "size_bytes": size.value,
            }
        )
    return images


def _devices(images: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every GPU the driver reports, with the kernel image pyctk would run on it."""
    count = ctypes.c_int()
    # The first query that starts CUDA: refused in a process forked after its parent started it.
    contexts.call_starting_cuda("gpumatmul_device_count", ctypes.byref(count))
    devices = []
    for index in range(count.value):
        props = library.DeviceProperties()
        library.call("gpumatmul_device_properties_get", index, ctypes.byref(props))
        cc = (props.compute_capability_major, props.compute_capability_minor)
        try:
            image = images[library.query_int("gpumatmul_kernel_image_select", *cc)]
        except PyctkError:
            image = None
        devices.append(
            {
                "index": index,
                "name": props.name.decode(errors="replace"),
                "compute_capability": f"{cc[0]}.{cc[1]}",
                "multiprocessors": props.multiprocessor_count,
                "total_memory_bytes": props.total_memory_bytes,
                "kernel_image": image,
            }
        )
    return devices


def info() -> dict[str, Any]:
    """Report pyctk's environment: versions, libraries, GPUs and kernel images.

    Never raises for a missing library, driver or GPU: what could not be
    determined is None or empty, and ``"error"`` says why. ``python -m pyctk``
    prints this report, then checks a product on every GPU.

    Returns
    -------
    dict
        With these keys:

        - ``pyctk_version``, ``distribution`` (``"pyctk-cu12"`` or ``"pyctk-cu13"``)
          and ``cuda_major`` (12 or 13): what is installed;
        - ``driver_release``: the NVIDIA driver's release, e.g. ``"580.159.04"``;
          ``driver_version``: the CUDA version that driver supports, e.g. ``"13.0"``;
        - ``runtime_version``, ``cublas_version``: the CUDA runtime's and cuBLAS's;
          ``nvrtc_version``: NVRTC's, None unless the ``nvrtc`` extra is installed;
        - ``libraries``: a dict (``name``, ``path``, ``found_via``) for each library
          loaded, saying where it was found;
        - ``kernel_images``: a dict (``index``, ``arch``, ``kind``, ``name``,
          ``size_bytes``) for each kernel image in libgpumatmul, e.g. ``sm_90`` SASS;
        - ``devices``: a dict (``index``, ``name``, ``compute_capability``,
          ``multiprocessors``, ``total_memory_bytes``, ``kernel_image``) for each GPU,
          with the kernel image it runs (None when none fits);
        - ``distributions``: the pyctk distributions installed, and ``warning``: None,
          or what is wrong when more than one is;
        - ``environment``: those of the variables :doc:`/guide/environment` lists that are
          set, name: value, in that table's order;
        - ``error``: None, or the message of what stopped the report (no driver ...).

    Examples
    --------
    >>> import pyctk
    >>> report = pyctk.info()
    >>> report["cuda_major"] in (12, 13)
    True
    >>> report["distribution"] == f"pyctk-cu{report['cuda_major']}"
    True
    >>> sorted(report)[:3]
    ['cublas_version', 'cuda_major', 'devices']
    """
    from ._cuda import loader  # imported here: `import pyctk` does not need the loader

    report: dict[str, Any] = {
        "pyctk_version": VERSION,
        "distribution": f"pyctk-cu{CUDA_MAJOR}",
        "cuda_major": CUDA_MAJOR,
        "driver_release": driver_release(),
        "driver_version": None,
        "runtime_version": None,
        "cublas_version": None,
        "nvrtc_version": None,
        "libraries": [],
        "kernel_images": [],
        "devices": [],
        "error": None,
        "distributions": distributions.installed(),
        "warning": distributions.conflict(),
        "environment": environment.set_variables(),
    }
    try:
        library.library()
        report["nvrtc_version"] = nvrtc_version()
        report["kernel_images"] = kernel_images()
        report["runtime_version"] = _cuda_version(library.query_int("gpumatmul_runtime_version"))
        cublas = library.query_int("gpumatmul_cublas_version")
        report["cublas_version"] = f"{cublas // 10000}.{cublas // 100 % 100}.{cublas % 100}"
        report["driver_version"] = _cuda_version(library.query_int("gpumatmul_driver_version"))
        report["devices"] = _devices(report["kernel_images"])
    except PyctkError as error:
        report["error"] = str(error)
    report["libraries"] = [vars(library).copy() for library in loader.loaded_libraries()]
    return report
