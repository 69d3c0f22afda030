"""Compile the .cu kernels with NVRTC (the pip wheel's, or a toolkit's) and emit them as a C source.

    python embed_kernels.py MAJOR OUTPUT.c KERNEL.cu [KERNEL.cu ...] [--toolkit DIR]

The kernel files are compiled as one program, to SASS (CUBIN) for every
architecture this NVRTC supports and to PTX for the newest one, so GPUs newer
than the compiler still run (the driver compiles the PTX). Where an
architecture has an arch-specific target (ARCH_SPECIFIC), its CUBIN is built
for that target instead: it runs on exactly the GPUs the plain one would. OUTPUT.c defines
the table declared in libgpu/src/gemm/kernel_images.h. No GPU is needed.

Where FATBIN_OPTIONS says so for the CUDA major, each image is stored as a fatbin
of one entry that nvFatbin compressed (the driver inflates it in cuModuleLoadData);
the build fails if nvFatbin left an entry uncompressed.

The build is hermetic: the only include path NVRTC gets is the kernels' own
folder (for headers shared with the C code, such as gemm_tiled.h), so no
system CUDA header can be picked up. Every *.cu of that folder must be given:
one missing from meson.build's list would silently be left out of the library.
"""

import argparse
import ctypes
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import fatbin
from cuda_library import CudaLibrary

from cuda_wheels import library_path

SASS, PTX = "GPUMATMUL_IMAGE_SASS", "GPUMATMUL_IMAGE_PTX"

# sm_90a: Hopper's wgmma and setmaxnreg (gemm_wgmma.cu) exist only there, and
# every sm_90 GPU is compute capability 9.0, the one that runs sm_90a code.
ARCH_SPECIFIC = {90: "90a"}
# Jetson's integrated GPUs (TX1, TX2, Xavier, Orin, and Thor as CUDA 12 numbers it), whose
# CUDA comes with JetPack, not the nvidia-* wheels. Their SASS is left out (a fifth of the
# wheel): where one does run, the SASS of the same major's lower minor runs on it
# (gpumatmul_kernel_image_select picks it), so every one keeps an image.
JETSON_ONLY = {53, 62, 72, 87, 101}
# CUDA major -> the nvFatbin options each image is wrapped with (None: stored as NVRTC made
# it), and the compression every entry must then have. zstd's "size" mode stores the images
# in two thirds of what the zip's deflate-9 makes of them (docs/kernel-log.md, "The wheel's
# room"). Every CUDA 13 driver (580+) inflates zstd; pyctk-cu12 promises drivers from 525,
# which inflate only LZ4, and LZ4 stores no less than the zip's deflate already does.
FATBIN_OPTIONS = {
    12: None,
    13: (("-64", "-compress-all", "-compress-mode=size"), "zstd"),
}


class Nvrtc(CudaLibrary):
    ERROR_STRING = "nvrtcGetErrorString"

    def version(self) -> tuple[int, int]:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.check(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        return major.value, minor.value

    def supported_archs(self) -> list[int]:
        count = ctypes.c_int()
        self.check(self.lib.nvrtcGetNumSupportedArchs(ctypes.byref(count)), "nvrtcGetNumSupportedArchs")
        archs = (ctypes.c_int * count.value)()
        self.check(self.lib.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs")
        return sorted(archs)

    def compile(self, source: str, name: str, include: Path, arch: int, kind: str) -> bytes:
        program = ctypes.c_void_p()
        self.check(
            self.lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(), 0, None, None),
            "nvrtcCreateProgram",
        )
        try:
            target = (
                f"--gpu-architecture=sm_{ARCH_SPECIFIC.get(arch, arch)}"
                if kind == SASS
                else f"--gpu-architecture=compute_{arch}"
            )
            # --no-source-include: not even the working folder is searched.
            options = [target, "-std=c++17", "--no-source-include", f"--include-path={include}"]
            options = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
            result = self.lib.nvrtcCompileProgram(program, len(options), options)
            if result != 0:
                raise RuntimeError(f"{name} for {target}:\n{self._log(program)}")
            get_size, get = (
                (self.lib.nvrtcGetCUBINSize, self.lib.nvrtcGetCUBIN)
                if kind == SASS
                else (self.lib.nvrtcGetPTXSize, self.lib.nvrtcGetPTX)
            )
            size = ctypes.c_size_t()
            self.check(get_size(program, ctypes.byref(size)), "image size")
            image = ctypes.create_string_buffer(size.value)
            self.check(get(program, image), "image")
            return image.raw  # PTX keeps its terminating NUL, as cuModuleLoadData wants
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(program))

    def _log(self, program) -> str:
        size = ctypes.c_size_t()
        self.lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        self.lib.nvrtcGetProgramLog(program, log)
        return log.value.decode(errors="replace")


def sass_archs(supported: list[int]) -> list[int]:
    """The architectures to build SASS for: every one NVRTC supports but the Jetson ones that
    a lower minor of the same major covers."""
    return [
        arch
        for arch in supported
        if arch not in JETSON_ONLY or not any(other // 10 == arch // 10 and other < arch for other in supported)
    ]


def wrap(
    nvfatbin: fatbin.NvFatbin, arch: int, kind: str, image: bytes, options: tuple[str, ...], compression: str
) -> bytes:
    """``image`` in a fatbin made with nvFatbin's ``options``, checked to hold one entry, of
    ``arch`` and ``kind``, compressed with ``compression``."""
    kind_name = "SASS" if kind == SASS else "PTX"
    target = str(ARCH_SPECIFIC.get(arch, arch)) if kind == SASS else str(arch)
    wrapped = nvfatbin.wrap(image, target, kind_name, options)
    found = [(entry.kind, entry.arch, entry.compressed) for entry in fatbin.entries(wrapped)]
    if found != [(kind_name, arch, compression)]:
        raise SystemExit(
            f"embed_kernels: nvFatbin made {found} (kind, arch, compression) of the {kind_name} for "
            f"{target}, not one {compression} entry; fix: an nvFatbin that knows {' '.join(options)}"
        )
    return wrapped


def c_source(images: list[tuple[int, str, bytes]], compiler: str) -> str:
    lines = [
        f"/* Generated by libgpu/tools/embed_kernels.py with {compiler}. Do not edit. */",
        '#include "gemm/kernel_images.h"',
        "",
        "/* The driver reads an image's 8-byte fields (ELF's, a fatbin's) in place. */",
        "#if defined(__GNUC__)",
        "#define IMAGE_ALIGNED __attribute__((aligned(8)))",
        "#else",
        "#define IMAGE_ALIGNED",
        "#endif",
        "",
    ]
    for index, (_arch, _kind, data) in enumerate(images):
        lines.append(f"static const unsigned char image_{index}[{len(data)}] IMAGE_ALIGNED = {{")
        for start in range(0, len(data), 24):
            lines.append(",".join(str(byte) for byte in data[start : start + 24]) + ",")
        lines.append("};")
    lines.append("const struct kernel_image kernel_images[] = {")
    lines += [f"    {{{arch}, {kind}, image_{i}, sizeof image_{i}}}," for i, (arch, kind, _) in enumerate(images)]
    lines += ["};", f"const int kernel_image_count = {len(images)};", ""]
    return "\n".join(lines)


def main(major: int, output: Path, kernels: list[Path], toolkit: str = None) -> None:
    nvrtc = Nvrtc(library_path("nvrtc", major, toolkit))
    version = nvrtc.version()
    if version[0] != major:
        raise SystemExit(f"embed_kernels: NVRTC {version} found for CUDA {major}")
    folders = {k.resolve().parent for k in kernels}
    if len(folders) != 1:
        raise SystemExit(f"embed_kernels: kernels from several folders: {sorted(map(str, folders))}")
    folder = folders.pop()
    unlisted = {p.name for p in folder.glob("*.cu")} - {k.name for k in kernels}
    if unlisted:
        raise SystemExit(f"embed_kernels: {sorted(unlisted)} not listed in meson.build's kernel_images")
    source = "".join(f'#line 1 "{k.name}"\n{k.read_text()}\n' for k in kernels)
    archs = nvrtc.supported_archs()
    jobs = [(arch, SASS) for arch in sass_archs(archs)] + [(archs[-1], PTX)]
    with ThreadPoolExecutor() as pool:  # NVRTC programs compile independently
        blobs = list(pool.map(lambda job: nvrtc.compile(source, "kernels.cu", folder, *job), jobs))
    if FATBIN_OPTIONS[major]:
        nvfatbin = fatbin.NvFatbin(library_path("nvfatbin", major, toolkit))
        blobs = [wrap(nvfatbin, *job, blob, *FATBIN_OPTIONS[major]) for job, blob in zip(jobs, blobs)]
    images = [(arch, kind, blob) for (arch, kind), blob in zip(jobs, blobs)]
    output.write_text(c_source(images, f"NVRTC {version[0]}.{version[1]}"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("major", type=int)
    parser.add_argument("output", type=Path)
    parser.add_argument("kernels", type=Path, nargs="+")
    parser.add_argument("--toolkit", help="root of a CUDA toolkit whose NVRTC to use instead of the wheel's")
    args = parser.parse_args()
    main(args.major, args.output, args.kernels, args.toolkit)
