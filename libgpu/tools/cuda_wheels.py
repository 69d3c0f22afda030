"""Locate the NVIDIA wheels the build needs, using pyctk's own loader table.

Run by meson.build: ``python cuda_wheels.py MAJOR`` prints two lines, the
include folders and the library folders of cudart and cuBLAS, each
';'-separated. Imported by embed_kernels.py for NVRTC.
"""

import importlib.util
import sys
from pathlib import Path


def _load_loader():
    path = Path(__file__).resolve().parents[2] / "pyctk" / "_loader.py"
    spec = importlib.util.spec_from_file_location("pyctk_build_loader", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


loader = _load_loader()


# Headers the runtime and cuBLAS headers include but their wheels lack, by
# major: (folder in site-packages, header, the header-only wheel that has it).
EXTRA_HEADERS = {
    12: [("nvidia/cuda_nvcc/include", "crt/host_defines.h", "nvidia-cuda-nvcc-cu12"),
         ("nvidia/cuda_cccl/include", "nv/target", "nvidia-cuda-cccl-cu12")],
    13: [("nvidia/cu13/include", "crt/host_defines.h", "nvidia-cuda-crt"),
         ("nvidia/cu13/include", "nv/target", "nvidia-cuda-cccl")],
}


def extra_include(folder: str, header: str, pip_name: str, major: int) -> str:
    for entry in loader.site_dirs():
        if Path(entry, folder, header).is_file():
            return str(Path(entry, folder))
    raise SystemExit(f"building pyctk for CUDA {major} needs {header} from {pip_name}; "
                     f"fix: pip install \"{pip_name}>={major},<{major + 1}\"")


def link_folders(major: int) -> tuple[list[str], list[str]]:
    lib_dirs = list(dict.fromkeys(loader.wheel_dirs(("cudart", "cublas"), major).values()))
    include_dirs = [str(Path(d).parent / "include") for d in lib_dirs]
    include_dirs += [extra_include(*header, major) for header in EXTRA_HEADERS[major]]
    return list(dict.fromkeys(include_dirs)), lib_dirs


def nvrtc_path(major: int) -> str:
    folder = loader.wheel_dirs(("nvrtc",), major)["nvrtc"]
    return str(Path(folder) / loader.library_spec("nvrtc", major).file_name)


if __name__ == "__main__":
    includes, libs = link_folders(int(sys.argv[1]))
    print(";".join(includes))
    print(";".join(libs))
