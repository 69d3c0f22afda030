"""The CUDA driver's start and the versions of CUDA pyctk runs with (PyCUDA's ``init``,
``get_version``, ``get_driver_version``)."""

from __future__ import annotations

from ..._cuda import driver_api, library


def init(flags: int = 0) -> None:
    """Start the CUDA driver (PyCUDA's ``init``).

    Optional, unlike in PyCUDA: pyctk starts the driver on first use. Calling it first
    reports a missing driver at a place of your choosing.

    Parameters
    ----------
    flags : int, optional
        PyCUDA's; unused (CUDA takes 0).

    Raises
    ------
    TypeError, ValueError
        ``flags`` is no int, or not 0 (before any driver call).
    pyctk.NoDriverError
        There is no usable NVIDIA driver; the message says how to fix it.
    """
    if isinstance(flags, bool) or not isinstance(flags, int):
        raise TypeError(f"init: flags must be an int (0), not {type(flags).__name__} ({flags!r})")
    if flags != 0:
        raise ValueError(f"init: flags must be 0, not {flags}: CUDA defines no flags for cuInit")
    driver_api.driver()


def get_version() -> tuple[int, int, int]:
    """The CUDA version pyctk runs with: its CUDA runtime's, from NVIDIA's wheel.

    PyCUDA's gives the toolkit's it was built with. No driver or GPU is needed.

    Returns
    -------
    tuple of int
        ``(major, minor, 0)``.

    See Also
    --------
    get_driver_version : The version the driver supports.

    Examples
    --------
    >>> import pyctk.driver as cuda
    >>> major, minor, _ = cuda.get_version()
    >>> major >= 12
    True
    """
    version = library.query_int("gpumatmul_runtime_version")
    return version // 1000, version % 1000 // 10, 0


def get_driver_version() -> int:
    """The CUDA version the NVIDIA driver supports.

    Returns
    -------
    int
        1000 * major + 10 * minor: 13000 for CUDA 13.0, as ``nvidia-smi`` shows it.

    Raises
    ------
    pyctk.NoDriverError
        There is no usable NVIDIA driver.
    """
    return driver_api.driver_version()
