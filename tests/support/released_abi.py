"""libgpu/tools/abi.py, imported by path for the tests, and the released ABI it reads."""

from __future__ import annotations

import importlib.util
import sys

from support.paths import ROOT


def _load_abi_tool():
    spec = importlib.util.spec_from_file_location("gpumatmul_abi", ROOT / "libgpu" / "tools" / "abi.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


abi = _load_abi_tool()
RELEASED = abi.read(ROOT / "libgpu" / "abi" / "released.txt")


def released_constants(enum: str) -> list[str]:
    """The released constants of ``enum``, in value order."""
    constants = [line.split()[2:] for line in RELEASED if line.split()[:2] == ["constant", enum]]
    return [name for name, _ in sorted(constants, key=lambda constant: int(constant[1]))]
