"""Write a copy of the source tree that builds one CUDA major's distribution.

    python packaging/variant.py cu13 OUTDIR

pyproject.toml in the repository describes pyctk-cu12; Python packaging has no
way to choose a distribution name or requirements at build time, so the cu13
tree is the same files with pyproject.toml rewritten by the table below.
Every entry must match, so the table cannot silently drift from pyproject.toml.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What differs in pyproject.toml between the majors: cu12 text -> cu13 text.
CU13 = {
    'name = "pyctk-cu12"': 'name = "pyctk-cu13"',
    '"nvidia-cuda-runtime-cu12>=12.0,<13"': '"nvidia-cuda-runtime>=13.0,<14"',
    '"nvidia-cublas-cu12>=12.0,<13"': '"nvidia-cublas>=13.0,<14"',
    '"nvidia-cuda-nvcc-cu12>=12.0,<13"': '"nvidia-cuda-crt>=13.0,<14"',
    '"nvidia-cuda-cccl-cu12>=12.0,<13"': '"nvidia-cuda-cccl>=13.0,<14"',
    # The build's NVRTC, and nvFatbin to compress its images (libgpu/tools/embed_kernels.py).
    '"nvidia-cuda-nvrtc-cu12>=12.9,<13"': '"nvidia-cuda-nvrtc>=13.0,<14", "nvidia-nvfatbin>=13.0,<14"',
    '"nvidia-cuda-nvrtc-cu12>=12.0,<13"': '"nvidia-cuda-nvrtc>=13.0,<14"',  # the nvrtc extra
    '"nvidia-cuda-cccl-cu12>=12.3,<13"': '"nvidia-cuda-cccl>=13.0,<14"',  # the nvrtc extra
    '"nvidia-nvjitlink-cu12>=12.0,<13"': '"nvidia-nvjitlink>=13.0,<14"',  # the nvjitlink extra
    '"nvidia-curand-cu12>=10.3,<11"': '"nvidia-curand>=10.4,<11"',  # the curand extra
    '"-Dcuda=cu12"': '"-Dcuda=cu13"',
    '"Environment :: GPU :: NVIDIA CUDA :: 12"': '"Environment :: GPU :: NVIDIA CUDA :: 13"',
}
VARIANTS = {"cu12": {}, "cu13": CU13}


def render_pyproject(text: str, variant: str) -> str:
    for old, new in VARIANTS[variant].items():
        if old not in text:
            raise SystemExit(f"variant.py: {old!r} is no longer in pyproject.toml; update the table")
        text = text.replace(old, new)
    return text


def write_tree(variant: str, destination: Path) -> None:
    """Copy the files git tracks (or would track) to ``destination``, pyproject rewritten."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source, target = ROOT / name, destination / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    pyproject = destination / "pyproject.toml"
    pyproject.write_text(render_pyproject(pyproject.read_text(), variant))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in VARIANTS:
        raise SystemExit(f"usage: python packaging/variant.py {{{','.join(VARIANTS)}}} OUTDIR")
    write_tree(sys.argv[1], Path(sys.argv[2]))
