"""Locate the CUDA headers and libraries the build needs, using pyctk's own loader table.

Run by meson.build: ``python cuda_wheels.py MAJOR [--toolkit DIR]`` prints three
lines: the include folders and the library folders of cudart and cuBLAS, each
';'-separated, then the RUNPATH that finds cudart and cuBLAS in the nvidia wheels
next to the installed pyctk package. They come from the nvidia pip wheels of the
build environment, or from the CUDA toolkit rooted at DIR (meson's -Dtoolkit).
Imported by embed_kernels.py for NVRTC and nvFatbin.
"""

import argparse
import importlib.util
import os
import sys
from pathlib import Path


def _load_loader():
    path = Path(__file__).resolve().parents[2] / "pyctk" / "_cuda" / "loader.py"
    spec = importlib.util.spec_from_file_location("pyctk_build_loader", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


loader = _load_loader()


# Headers the runtime and cuBLAS headers include but their wheels lack, by
# major: (folder in site-packages, header, the header-only wheel that has it).
EXTRA_HEADERS = {
    12: [
        ("nvidia/cuda_nvcc/include", "crt/host_defines.h", "nvidia-cuda-nvcc-cu12"),
        ("nvidia/cuda_cccl/include", "nv/target", "nvidia-cuda-cccl-cu12"),
    ],
    13: [
        ("nvidia/cu13/include", "crt/host_defines.h", "nvidia-cuda-crt"),
        ("nvidia/cu13/include", "nv/target", "nvidia-cuda-cccl"),
    ],
}
# The libraries libgpumatmul links.
LINKED = ("cudart", "cublas", "cublasLt")
# A toolkit's header folders: CUDA 13 moved CCCL (nv/target) into include/cccl.
TOOLKIT_INCLUDES = ("include", "include/cccl")


def extra_include(folder: str, header: str, pip_name: str, major: int) -> str:
    for entry in loader.site_dirs():
        if Path(entry, folder, header).is_file():
            return str(Path(entry, folder))
    raise SystemExit(
        f"building pyctk for CUDA {major} needs {header} from {pip_name}; "
        f'fix: pip install "{pip_name}>={major},<{major + 1}"'
    )


def toolkit_dirs(names, major: int, toolkit: str) -> dict:
    """The folder holding each named library in the toolkit rooted at ``toolkit``."""
    result = {}
    for name in names:
        spec = loader.library_spec(name, major)
        found = [
            c.path
            for c in loader.candidates(spec, [], {"CUDA_PATH": toolkit})
            if c.found_via == "CUDA_PATH" and os.path.isfile(c.path)
        ]
        if not found:
            raise SystemExit(
                f"-Dtoolkit={toolkit}: no {spec.file_name} in its "
                f"{' or '.join(spec.toolkit_dirs)} (is it a CUDA {major} toolkit?)"
            )
        result[name] = str(Path(found[0]).parent)
    return result


def library_dirs(names, major: int, toolkit: str = None) -> dict:
    return toolkit_dirs(names, major, toolkit) if toolkit else loader.wheel_dirs(names, major)


def include_folders(major: int, lib_dirs: list, toolkit: str = None) -> list:
    if toolkit:
        folders = [str(Path(toolkit, f)) for f in TOOLKIT_INCLUDES if Path(toolkit, f).is_dir()]
        if not any(Path(f, "cuda_runtime_api.h").is_file() for f in folders):
            raise SystemExit(f"-Dtoolkit={toolkit}: no include/cuda_runtime_api.h there")
        return folders
    folders = [str(Path(d).parent / "include") for d in lib_dirs]
    return folders + [extra_include(*header, major) for header in EXTRA_HEADERS[major]]


def package_rpath(major: int) -> str:
    """RUNPATH of the library installed as site-packages/pyctk/libgpumatmul.so."""
    folders = (loader.library_spec(name, major).wheel_dir for name in LINKED)
    return ":".join(dict.fromkeys(f"$ORIGIN/../{folder}" for folder in folders))


def library_path(name: str, major: int, toolkit: str = None) -> str:
    """The file of library ``name`` ("nvrtc", "nvfatbin"), from the wheels or the toolkit."""
    folder = library_dirs((name,), major, toolkit)[name]
    return str(Path(folder) / loader.library_spec(name, major).file_name)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("major", type=int)
    parser.add_argument("--toolkit", help="root of a CUDA toolkit to use instead of the wheels")
    args = parser.parse_args()
    libs = list(dict.fromkeys(library_dirs(LINKED, args.major, args.toolkit).values()))
    print(";".join(dict.fromkeys(include_folders(args.major, libs, args.toolkit))))
    print(";".join(libs))
    print(package_rpath(args.major))
