"""pyctk-cu12 and pyctk-cu13 both install the ``pyctk`` package: detect when both are installed."""

from __future__ import annotations

from .._build_config import CUDA_MAJOR

DISTRIBUTIONS = ("pyctk-cu12", "pyctk-cu13")


def installed() -> list[str]:
    """The pyctk distributions installed in this environment."""
    from importlib import metadata  # here, not at import: it costs `import pyctk` ~30 ms

    found = []
    for name in DISTRIBUTIONS:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found.append(name)
    return found


def conflict() -> str | None:
    """A message saying which one is active and how to keep one, if both are installed."""
    names = installed()
    if len(names) < 2:
        return None
    active = f"pyctk-cu{CUDA_MAJOR}"
    return (
        f"{' and '.join(names)} are both installed. They share the pyctk package, so the "
        f"files in use are those installed last: {active}'s (CUDA {CUDA_MAJOR}). Keep one: "
        f"pip uninstall -y {' '.join(names)} && pip install {active}"
    )
