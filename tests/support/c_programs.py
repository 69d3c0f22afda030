"""The environment a program built against the installed pyctk runs in, as the README says."""

from __future__ import annotations

import os

from pyctk._cuda import c_build as _c_build


def environment(pkgconfig_path: str | None = None) -> dict[str, str]:
    """No LD_LIBRARY_PATH, unless the nvidia wheels are installed in another folder than pyctk,
    where `python -m pyctk --libs` warns and says to name their folder in it (for the linker
    too: it looks for libgpumatmul's libraries there); PKG_CONFIG_PATH
    naming the folder of gpumatmul.pc (the installed package's unless given)."""
    env = {key: value for key, value in os.environ.items() if key != "LD_LIBRARY_PATH"}
    folders = [miss.found_in for miss in _c_build.runpath_misses() if miss.found_in]
    if folders:
        env["LD_LIBRARY_PATH"] = ":".join(dict.fromkeys(folders))
    return {**env, "PKG_CONFIG_PATH": pkgconfig_path or _c_build.pkgconfig_path()}
