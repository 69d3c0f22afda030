"""Sphinx configuration of pyctk's documentation.

Build it from the checkout's root, after installing pyctk with its docs extra
(``pip install '.[docs]'``): ``python -m sphinx -W -b html docs docs/_build/html``.
The API reference is generated from the installed package's docstrings, the C API
reference from libgpu/include/gpumatmul.h, the performance page from
benchmarks/results/, and the PyCUDA, environment and cuBLASLt sizes tables from the code:
nothing in them is copied by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

import pyctk  # noqa: E402  (the installed package: its version and docstrings)

project = "pyctk"
author = "the pyctk developers"
copyright = "2026, the pyctk developers"
release = pyctk.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "hawkmoth",
    # docs/_ext: the pages generated from the code and the benchmark results.
    "pycuda_table",
    "c_api",  # hawkmoth's settings for gpumatmul.h
    "performance",  # tables and plots drawn from benchmarks/results/
    "kernel_images",  # the installed library's kernel images
    "environment_table",  # the environment variables, from pyctk._cuda.environment
    "cublaslt_sizes",  # the sizes cuBLASLt takes, from libgpu/src/gemm/tables.c
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "README.md"]
templates_path = ["_templates"]
html_static_path = ["_static"]

# Every reference must resolve. The package index is the only network CI reaches, so
# there are no intersphinx inventories of Python or NumPy to resolve theirs against:
# the names of other projects are listed in _ext/external_names.py, nothing of pyctk's.
nitpicky = True
from external_names import NITPICK_IGNORE_REGEX  # noqa: E402

nitpick_ignore_regex = NITPICK_IGNORE_REGEX

myst_enable_extensions = ["colon_fence", "attrs_block", "deflist"]
myst_heading_anchors = 3

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "none"  # the signature says it; numpydoc's Parameters explain it
autodoc_preserve_defaults = True  # `flags=stream_flags.DEFAULT`, not its repr
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "pydata_sphinx_theme"
html_title = f"pyctk {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_css_files = ["pyctk.css"]
