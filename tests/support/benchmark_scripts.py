"""The scripts of benchmarks/ as modules, for the tests of their parts that need no GPU.

They run as scripts, with benchmarks/ first on sys.path, and import each other by that
(matmul.py imports per_call.py); here the folder goes last on sys.path, so that it shadows
nothing the tests import."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from support.paths import ROOT

BENCHMARKS = ROOT / "benchmarks"


def load(name: str) -> ModuleType:
    """benchmarks/<name>.py, executed as a module of its own."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
