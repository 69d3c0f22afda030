"""Where the benchmarks' results live, and what each results file says about its run.

The current figures are in ``benchmarks/results/<machine>/<suite>.json``: one file per GPU
and suite, each one run of one script on one machine. ``<machine>`` is the GPU's short name,
``x<N>`` where the run used N GPUs, and the CUDA major of the pyctk build:
``h200-cu13``, ``h200x2-cu13``, ``h100-cu13``. ``<suite>`` names what was run:

============ =========================================================================
matmul       matmul.py --only device, floating-point dtypes: pyctk's kernels beside cuBLAS
complex      the same for complex64 and complex128
integers     the same for integers and bool, beside CuPy (and torch._int_mm)
float8       the same for the FP8 types, beside torch._scaled_mm (cuBLASLt)
host         matmul.py's NumPy-in, NumPy-out rows (host, host-tiny, host-large, startup)
device-call  matmul.py --only device-call: products of GPU arrays called from Python
devices      matmul.py --only host-devices: one GPU against all of them
builds       builds.py: builds of pyctk side by side, per call
gpuarray     gpuarray.py: pyctk.gpuarray beside CuPy and PyTorch
dask         dask_matmul.py: pyctk.dask against one process
startup      startup.py: where a fresh process's time to its first product goes
auto-table   auto_table.py: the measurements backend="auto"'s table is written from
clocks       clocks.py: the SM clock and power each product runs at, and its share of the peak there
============ =========================================================================

A new run replaces its suite's file (git keeps the old ones). Every file has a "measured"
object beside the script's own fields (see :func:`measured`): the GPU, the machine, the
driver and CUDA, the versions, the date and the command, so that the docs' performance page
and ``headline.py`` can say where each figure comes from. This module imports no pyctk:
builds.py and plot.py use it without one.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SUITES = (
    "matmul",
    "complex",
    "integers",
    "float8",
    "host",
    "device-call",
    "devices",
    "builds",
    "gpuarray",
    "dask",
    "startup",
    "auto-table",
    "clocks",
    # auto_table.py --cases int8 float8_e4m3fn: the dtypes cuBLAS multiplies through cuBLASLt
    "auto-table-cublaslt",
)


def gpu_slug(name: str) -> str:
    """A short name for a GPU, for folder names: "NVIDIA H100 80GB HBM3" -> "h100"."""
    words = [w for w in re.split(r"[\s\-_]+", name.lower()) if w and w != "nvidia"]
    return next((w for w in words if re.search(r"\d", w)), "-".join(words) or "gpu")


def machine_folder(gpu: str, cuda_major: int, gpus: int = 1) -> str:
    """The results folder's name for a run on ``gpus`` GPUs named ``gpu``: "h200x2-cu13"."""
    return f"{gpu_slug(gpu)}{f'x{gpus}' if gpus > 1 else ''}-cu{cuda_major}"


def default_path(gpu: str, cuda_major: int, suite: str, gpus: int = 1) -> Path:
    """benchmarks/results/<machine>/<suite>.json."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}: one of {', '.join(SUITES)}")
    return RESULTS / machine_folder(gpu, cuda_major, gpus) / f"{suite}.json"


def _checkout() -> str | None:
    """The short commit of the checkout these scripts are in, "-dirty" if it has changes;
    None outside a git checkout. (pyctk itself may be installed from elsewhere: its
    library's path is in the run's "info".)"""
    try:

        def run(*args: str) -> str:
            return subprocess.run(
                ["git", "-C", str(HERE), *args], capture_output=True, text=True, check=True, timeout=10
            ).stdout.strip()

        commit = run("rev-parse", "--short", "HEAD")
        return commit + ("-dirty" if run("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _memory_gib() -> int | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
    except (ValueError, OSError, AttributeError):
        return None


def command_line(argv: list[str] | None = None) -> str:
    """The command as run from the checkout's root: "python benchmarks/matmul.py --only device"."""
    argv = sys.argv if argv is None else argv
    return shlex.join(["python", f"benchmarks/{Path(argv[0]).name}", *argv[1:]])


def measured(
    report: dict | None, gpus: int = 1, gpu: str | None = None, versions: dict[str, str] | None = None
) -> dict[str, Any]:
    """The "measured" object of a run on this machine, now.

    ``report`` is ``pyctk.info()`` (None where the script has none: its fields are then
    None); ``gpus`` how many GPUs the run used; ``gpu`` the GPU's name where ``report`` does
    not give it; ``versions`` the libraries' versions, by default those of numpy, torch,
    cupy, dask and distributed where this process imported them.

    Fields: gpu, gpus, machine (cpu_cores, memory_gib, host), driver (the driver's release),
    cuda (the runtime's version), cublas, pyctk, distribution, build (what pyctk build ran
    where known; here the checkout's commit), versions, date, command.
    """
    report = report or {}
    devices = report.get("devices") or [{}]
    if versions is None:
        versions = {
            name: sys.modules[name].__version__
            for name in ("numpy", "torch", "cupy", "dask", "distributed")
            if name in sys.modules and hasattr(sys.modules[name], "__version__")
        }
    return {
        "gpu": gpu or devices[0].get("name"),
        "gpus": gpus,
        "machine": {"cpu_cores": os.cpu_count(), "memory_gib": _memory_gib(), "host": platform.node()},
        "driver": report.get("driver_release"),
        "cuda": report.get("runtime_version"),
        "cublas": report.get("cublas_version"),
        "pyctk": report.get("pyctk_version"),
        "distribution": report.get("distribution"),
        "build": _checkout(),
        "versions": versions,
        "date": datetime.date.today().isoformat(),
        "command": command_line(),
    }


def write(path: Path | str, data: dict) -> Path:
    """``data`` as JSON at ``path`` (its folder made), "measured" first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = {"measured": data["measured"], **data} if "measured" in data else data
    path.write_text(json.dumps(ordered, indent=1) + "\n")
    return path


def results(folder: Path | str = RESULTS) -> dict[str, Path]:
    """Every results file under ``folder``: "<machine>/<suite>" -> its path, sorted."""
    folder = Path(folder)
    return {f"{p.parent.name}/{p.stem}": p for p in sorted(folder.glob("*/*.json"))}


def load(name: str, folder: Path | str = RESULTS) -> dict:
    """The results file "<machine>/<suite>" (e.g. "h200-cu13/matmul")."""
    path = Path(folder) / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"no results file {name!r} ({path}); there are: {', '.join(results(folder)) or 'none'}")
    return json.loads(path.read_text())
