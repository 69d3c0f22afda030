"""nvcc's options as NVRTC takes them, for PyCUDA programs (and ``PYCUDA_DEFAULT_NVCC_FLAGS``)
written for nvcc.

NVRTC shares most of nvcc's options for device code (``-use_fast_math``, ``-D``, ``-I``,
``-G``, ``-lineinfo``, ``-maxrregcount``, ``-rdc=true``, ``-std=c++17`` ...): those, and
any option not in the table below, go to NVRTC as they are, and NVRTC refuses what it
does not know (``CompileError`` naming it). The table says what happens to the rest:

- ``nvrtc``: another spelling in NVRTC (``-Xptxas -v,-O3`` becomes ``--ptxas-options=-v
  --ptxas-options=-O3``, ``-std c++17`` becomes ``--std=c++17``);
- ``host``: for host code, which NVRTC does not compile (``-O3``, ``-g``,
  ``--compiler-options``, ``-ccbin`` ...): dropped with a ``UserWarning``;
- ``link``: for the host link (``-lcudadevrt``, ``-L``, ``-Xlinker`` ...): dropped with a
  ``UserWarning``; device code is linked with ``pyctk.driver.Linker`` or
  ``pyctk.compiler.DynamicModule``;
- ``none``: no NVRTC equivalent: ``CompileError`` saying what to do instead.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     translate(["-O3", "-Xptxas", "-v,-O2", "-use_fast_math"])
['--ptxas-options=-v', '--ptxas-options=-O2', '-use_fast_math']
>>> print(caught[0].message)
nvcc option '-O3' is for host code, which NVRTC does not compile: ignored (device code is optimized unless -G is given)
>>> translate(["-arch=sm_90"])
Traceback (most recent call last):
    ...
pyctk.compiler.CompileError: nvcc option '-arch=sm_90' has no NVRTC equivalent: pass arch='sm_XY' (or 'compute_XY')
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..._cuda.driver_errors import CompileError


class _Row(NamedTuple):
    use: str  # "nvrtc", "host", "link" or "none"
    value: str  # "" (a flag), "one" (one value) or "list" (comma-separated values, each a row)
    text: str  # nvrtc: NVRTC's spelling, {} the value; else what to do instead, or ""


_LINKED = "device code is linked with pyctk.driver.Linker or pyctk.compiler.DynamicModule"
_TABLE: dict[tuple[str, ...], _Row] = {
    ("-Xptxas", "--ptxas-options"): _Row("nvrtc", "list", "--ptxas-options={}"),
    ("-res-usage", "--resource-usage"): _Row("nvrtc", "", "--ptxas-options=-v"),
    ("-std", "--std"): _Row("nvrtc", "one", "--std={}"),
    ("-rdc", "--relocatable-device-code"): _Row("nvrtc", "one", "--relocatable-device-code={}"),
    ("-O", "--optimize"): _Row("host", "one", "device code is optimized unless -G is given"),
    ("-g", "--debug"): _Row("host", "", "-G gives device code debug information"),
    ("-m", "--machine"): _Row("host", "one", "NVRTC makes 64-bit code"),
    ("-Xcompiler", "--compiler-options"): _Row("host", "list", ""),
    ("-ccbin", "--compiler-bindir"): _Row("host", "one", ""),
    ("-default-stream", "--default-stream"): _Row("host", "one", ""),
    ("-l", "--library"): _Row("link", "list", _LINKED),
    ("-L", "--library-path"): _Row("link", "list", _LINKED),
    ("-Xlinker", "--linker-options"): _Row("link", "list", _LINKED),
    ("-Xnvlink", "--nvlink-options"): _Row("link", "list", _LINKED),
    ("-shared", "--shared"): _Row("link", "", _LINKED),
    ("-arch", "--gpu-architecture"): _Row("none", "one", "pass arch='sm_XY' (or 'compute_XY')"),
    ("-code", "--gpu-code"): _Row("none", "one", "pass code='sm_XY'"),
    ("-gencode", "--generate-code"): _Row(
        "none", "one", "pass arch= and code=: NVRTC makes code for one architecture per compile"
    ),
    ("-cubin", "--cubin", "-ptx", "--ptx", "-fatbin", "--fatbin"): _Row(
        "none", "", "pass target='cubin', 'ptx' or 'fatbin'"
    ),
    ("-keep", "--keep", "-keep-dir", "--keep-dir"): _Row("none", "", "pass keep=True"),
    ("-expt-relaxed-constexpr", "--expt-relaxed-constexpr"): _Row(
        "none",
        "",
        "declare the constexpr functions __host__ __device__, or pass -default-device "
        "(NVRTC compiles every unannotated function for the device)",
    ),
    ("-extended-lambda", "--extended-lambda", "-expt-extended-lambda", "--expt-extended-lambda"): _Row(
        "none",
        "",
        "NVRTC compiles no host code, so no lambda crosses from host to device; plain "
        "lambdas in device code need no option",
    ),
}
_ROWS = {spelling: row for spellings, row in _TABLE.items() for spelling in spellings}
# nvcc's one-letter options with the value attached (-O3, -m64, -lcudadevrt, -L/path);
# -lineinfo is NVRTC's own option, not -l ineinfo.
_ATTACHED = re.compile(r"(-O)(\d*)|(-m)(32|64)|(-L)(.+)|(-l)(?!ineinfo$)(.+)")


def _lookup(option: str) -> tuple[_Row | None, str | None]:
    """The row of ``option`` and the value written into it (``-O3``, ``-std=c++17``), if any."""
    if option in _ROWS:
        return _ROWS[option], None
    name, equals, value = option.partition("=")
    if equals and name in _ROWS:
        return _ROWS[name], value
    attached = _ATTACHED.fullmatch(option)
    if attached:
        name, value = (group for group in attached.groups() if group is not None)
        return _ROWS[name], value
    return None, None


def translate(options: Sequence[str], stacklevel: int = 4) -> list[str]:
    """``options`` written for nvcc as NVRTC options; warns about those dropped (pointing
    ``stacklevel`` frames up), and raises CompileError for those NVRTC cannot honour."""
    translated: list[str] = []
    items = iter(options)
    for option in items:
        row, value = _lookup(option)
        if row is None:
            translated.append(option)
            continue
        if row.value and value is None:
            value = next(items, None)
            if value is None:
                raise CompileError(f"nvcc option {option!r} needs a value", "", tuple(options))
            option = f"{option} {value}"
        if row.use == "nvrtc":
            if row.value == "list":
                assert value is not None  # read above, or CompileError
                translated += [row.text.format(item) for item in value.split(",")]
            else:
                translated.append(row.text.format(value))
        elif row.use == "none":
            raise CompileError(f"nvcc option {option!r} has no NVRTC equivalent: {row.text}", "", tuple(options))
        else:
            what = (
                "host code, which NVRTC does not compile"
                if row.use == "host"
                else "the host link, which NVRTC does not do"
            )
            warnings.warn(
                f"nvcc option {option!r} is for {what}: ignored" + (f" ({row.text})" if row.text else ""),
                UserWarning,
                stacklevel=stacklevel,
            )
    return translated


def default_flags(environ: Mapping[str, str] = os.environ) -> list[str]:
    """PyCUDA's ``DEFAULT_NVCC_FLAGS``: ``$PYCTK_DEFAULT_NVCC_FLAGS`` if set, else
    ``$PYCUDA_DEFAULT_NVCC_FLAGS``, split at whitespace."""
    value = environ.get("PYCTK_DEFAULT_NVCC_FLAGS")
    return (environ.get("PYCUDA_DEFAULT_NVCC_FLAGS", "") if value is None else value).split()
