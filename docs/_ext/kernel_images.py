"""The kernel images of the installed libgpumatmul, as the install page shows them.

The build compiles the kernels to SASS for every architecture its NVRTC supports (but
Jetson-only ones with a lower sibling) and to PTX for the newest one
(libgpu/tools/embed_kernels.py); which ones a library holds is read from that library at
docs build time, so the page cannot drift from the wheel. No GPU is needed: the list and
the selection (``gpumatmul_kernel_image_select``) are plain C calls.

- ```` ```{kernel-images} ```` renders a table: each image, its kind, the compute
  capabilities the library chooses it for (asked of the library itself), and the GPUs
  those are.
- ``{kernel-images}`sass` `` (or ``ptx``, ``all``) renders the list inline, for a table cell;
  ``{kernel-images}`cu12` `` (``cu13``) renders it for that distribution if it is the one
  installed, else says where that one's list is printed.

A library that cannot be loaded is a warning (so ``-W`` fails the build), not a guess.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

# Compute capability -> GPUs of it (NVIDIA's numbering), and its generation: only a reading
# aid in the table, for the capabilities NVIDIA's lists give; others show their generation.
GPUS = {
    50: "GTX 750, Quadro K2200",
    52: "GTX 900, Tesla M40",
    53: "Jetson TX1",
    60: "Tesla P100",
    61: "GTX 10, Tesla P4, P40",
    62: "Jetson TX2",
    70: "Tesla V100",
    72: "Jetson Xavier",
    75: "RTX 20, T4",
    80: "A100, A30",
    86: "RTX 30, A10, A40",
    87: "Jetson Orin",
    89: "RTX 40, L4, L40",
    90: "H100, H200, GH200",
    100: "B200, GB200",
    101: "Jetson Thor",
    103: "B300, GB300",
    110: "Jetson Thor",
    120: "RTX 50, RTX PRO 6000",
    121: "DGX Spark (GB10)",
}


def generation(arch: int) -> str:
    major = arch // 10
    if major == 7:
        return "Turing" if arch >= 75 else "Volta"
    if major == 8:
        return "Ada Lovelace" if arch == 89 else "Ampere" if arch <= 87 else ""
    return {5: "Maxwell", 6: "Pascal", 9: "Hopper", 10: "Blackwell", 11: "Blackwell", 12: "Blackwell"}.get(major, "")


# The compute capabilities asked about: every major.minor from Maxwell's up to this major.
LAST_MAJOR = 15

_cache: dict[str, Any] = {}


def library_path() -> str:
    """The libgpumatmul file the installed pyctk loads (a page using it depends on it)."""
    from pyctk._cuda import loader

    return str(loader.gpumatmul_path())


def images() -> list[dict[str, Any]]:
    """The embedded images, each with "chosen_for": the compute capabilities that get it."""
    if "images" not in _cache:
        from pyctk import _info
        from pyctk._cuda import library

        found = _info.kernel_images()
        for image in found:
            image["chosen_for"] = []
        for major in range(3, LAST_MAJOR + 1):
            for minor in range(10):
                try:
                    index = library.query_int("gpumatmul_kernel_image_select", major, minor)
                except Exception:  # NoKernelImageError: no image runs there
                    continue
                found[index]["chosen_for"].append((major, minor))
        _cache["images"] = found
    return _cache["images"]


def chosen_text(image: dict[str, Any]) -> str:
    """The compute capabilities that get ``image``, said as a range."""
    chosen = image["chosen_for"]
    if not chosen:
        return "none (a higher image of its major is chosen)"
    (low_major, low_minor), (high_major, high_minor) = chosen[0], chosen[-1]
    if image["kind"] == "PTX":
        return f"{low_major}.{low_minor} and newer: GPUs newer than the build (the driver compiles it)"
    if (low_major, low_minor) == (high_major, high_minor):
        return f"{low_major}.{low_minor}"
    if high_minor == 9:
        return f"{low_major}.{low_minor} and later {low_major}.x"
    return f"{low_major}.{low_minor} to {high_major}.{high_minor}"


def gpus_text(image: dict[str, Any]) -> str:
    """The GPUs that get ``image``: its generation and examples, by compute capability."""
    if image["kind"] == "PTX":
        return "later NVIDIA GPUs"
    archs = [10 * major + minor for major, minor in image["chosen_for"]] or [image["arch"]]
    examples = ", ".join(GPUS[arch] for arch in archs if arch in GPUS)
    name = generation(image["arch"])
    return f"{name}: {examples}" if name and examples else name or examples


def _failure(error: Exception, location: Any) -> str:
    message = (
        f"kernel-images: the installed pyctk's libgpumatmul could not be read "
        f"({type(error).__name__}: {error}); install pyctk (pip install '.[docs]') "
        f"before building the docs"
    )
    logger.warning(message, location=location)
    return message


def _table(rows: list[list[str]], header: list[str]) -> nodes.table:
    table = nodes.table(classes=["kernel-images"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)

    def row(cells: list[str]) -> nodes.row:
        line = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            paragraph = nodes.paragraph()
            paragraph += nodes.literal(text=cell) if cell.startswith(("sm_", "compute_")) else nodes.Text(cell)
            entry += paragraph
            line += entry
        return line

    head = nodes.thead()
    head += row(header)
    body = nodes.tbody()
    for cells in rows:
        body += row(cells)
    group += head
    group += body
    return table


class KernelImages(SphinxDirective):
    """```{kernel-images}```: the table of the installed library's kernel images."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        try:
            self.env.note_dependency(library_path())
            found = images()
        except Exception as error:  # noqa: BLE001 - any failure to load is the same warning
            return [nodes.paragraph(text=_failure(error, self.get_location()))]
        from pyctk._build_config import CUDA_MAJOR, VERSION

        rows = [[image["name"], image["kind"], chosen_text(image), gpus_text(image)] for image in found]
        source = nodes.paragraph(
            text=f"The kernel images of pyctk-cu{CUDA_MAJOR} {VERSION}, read "
            f"from its libgpumatmul when these pages were built:"
        )
        return [source, _table(rows, ["image", "kind", "chosen for compute capability", "GPUs"])]


def kernel_images_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """{kernel-images}`sass`, `ptx` or `all`: the images inline, e.g. in a table cell.
    `cu12` or `cu13`: all of them if the installed pyctk is that distribution, else where to
    read that distribution's list (its ``python -m pyctk``)."""
    which = text.strip().lower()
    if which not in ("sass", "ptx", "all", "cu12", "cu13"):
        message = inliner.reporter.error(f"kernel-images: say sass, ptx, all, cu12 or cu13, not {text!r}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    env = inliner.document.settings.env
    if which.startswith("cu"):
        from pyctk._build_config import CUDA_MAJOR

        if which != f"cu{CUDA_MAJOR}":
            return [
                nodes.Text("printed by "),
                nodes.literal(text="python -m pyctk"),
                nodes.Text(f" on a pyctk-{which} install"),
            ], []
        which = "all"
    try:
        env.note_dependency(library_path())
        found = images()
    except Exception as error:  # noqa: BLE001
        return [nodes.Text(_failure(error, (env.docname, lineno)))], []
    sass = ", ".join(image["name"] for image in found if image["kind"] == "SASS")
    ptx = ", ".join(image["name"] for image in found if image["kind"] == "PTX")
    text = {"sass": sass, "ptx": ptx, "all": f"SASS {sass}; PTX {ptx}"}[which]
    return [nodes.Text(text)], []


def setup(app) -> dict[str, Any]:
    app.add_directive("kernel-images", KernelImages)
    app.add_role("kernel-images", kernel_images_role)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
