"""C types of NumPy dtypes, for kernel source that Python writes (PyCUDA's registry in
``pycuda.tools``): ``dtype_to_ctype``, ``get_or_register_dtype`` and ``parse_c_arg``.

One table, ``_BUILT_IN``: a dtype and its C names, the first one what ``dtype_to_ctype``
writes. The names are PyCUDA's, so that source written for PyCUDA reads the same: int64 is
``long`` (LP64 Linux), complex types are ``pycuda::complex<...>``. The registry is the
process's, as PyCUDA's is: a dtype registered once (a struct, say) is known everywhere.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .vector_types import VECTOR_DTYPES

_BUILT_IN = [  # (dtype, its C names; the first is the one written)
    (np.bool_, ["bool"]),
    (np.int8, ["signed char", "char"]),
    (np.uint8, ["unsigned char"]),
    (np.int16, ["short", "signed short", "signed short int", "short signed int"]),
    (np.uint16, ["unsigned short", "unsigned short int", "short unsigned int"]),
    (np.int32, ["int", "signed int"]),
    (np.uint32, ["unsigned", "unsigned int"]),
    (np.int64, ["long", "long int", "signed long int", "long signed int"]),
    (np.uint64, ["unsigned long", "unsigned long int", "long unsigned int"]),
    (np.float32, ["float"]),
    (np.float64, ["double"]),
    (np.complex64, ["pycuda::complex<float>"]),
    (np.complex128, ["pycuda::complex<double>"]),
]
# PyCUDA's names for floating-point texture fetches (with_fp_tex_hack=True).
_TEXTURE_NAMES = {
    np.dtype(np.float32): "fp_tex_float",
    np.dtype(np.float64): "fp_tex_double",
    np.dtype(np.complex64): "fp_tex_cfloat",
    np.dtype(np.complex128): "fp_tex_cdouble",
}

_to_names: dict[np.dtype, list[str]] = {}
_to_dtype: dict[str, np.dtype] = {}


def get_or_register_dtype(c_names: str | Sequence[str], dtype: Any = None) -> np.dtype:
    """The dtype of a C type; with ``dtype``, register the C type's names for it first.

    The registry is the process's, as PyCUDA's is: a dtype registered once (a struct, say)
    is known to every kernel Python writes.

    Parameters
    ----------
    c_names : str or sequence of str
        A C type's name, or several names of one type (``["unsigned", "unsigned int"]``).
    dtype : data-type, optional
        The dtype to register them for.

    Returns
    -------
    numpy.dtype

    Raises
    ------
    KeyError
        An unknown name, without ``dtype``.
    RuntimeError
        A name that is already another dtype's.

    Examples
    --------
    >>> import numpy as np
    >>> from pyctk.tools import get_or_register_dtype, dtype_to_ctype
    >>> get_or_register_dtype("unsigned int")
    dtype('uint32')
    >>> entry = np.dtype([("index", np.int32), ("weight", np.float32)])
    >>> get_or_register_dtype("struct entry", entry) == entry
    True
    >>> dtype_to_ctype(entry)
    'struct entry'
    """
    names = [c_names] if isinstance(c_names, str) else list(c_names)
    if dtype is None:
        for name in names:
            if name in _to_dtype:
                return _to_dtype[name]
        raise KeyError(f"no dtype is registered for the C type {c_names!r}: pass dtype= to register one")
    dtype = np.dtype(dtype)
    for name in names:
        if _to_dtype.get(name, dtype) != dtype:
            raise RuntimeError(f"the C type {name!r} is already registered as {_to_dtype[name]}, not {dtype}")
    for name in names:
        _to_dtype[name] = dtype
        if name not in _to_names.setdefault(dtype, []):
            _to_names[dtype].append(name)
    return dtype


def register_dtype(dtype: Any, c_names: str | Sequence[str], alias_ok: bool = False) -> None:
    """Register C names for a dtype (deprecated, as in PyCUDA: a DeprecationWarning).

    Use :func:`~pyctk.tools.get_or_register_dtype`.

    Parameters
    ----------
    dtype : data-type
    c_names : str or sequence of str
    alias_ok : bool, optional
        Allow a dtype that has C names already.

    Raises
    ------
    RuntimeError
        The dtype has C names already, and ``alias_ok`` is False.
    """
    warnings.warn("register_dtype is deprecated: use get_or_register_dtype", DeprecationWarning, stacklevel=2)
    if np.dtype(dtype) in _to_names and not alias_ok:
        raise RuntimeError(
            f"{np.dtype(dtype)} is already registered as "
            f"{_to_names[np.dtype(dtype)][0]!r}: pass alias_ok=True to add names"
        )
    get_or_register_dtype(c_names, dtype)


def dtype_to_ctype(dtype: Any, with_fp_tex_hack: bool = False) -> str:
    """The C type of a dtype, as kernel source writes it (PyCUDA's names).

    Parameters
    ----------
    dtype : data-type
    with_fp_tex_hack : bool, optional
        PyCUDA's names of floating-point texture fetches (``fp_tex_float`` ...).

    Returns
    -------
    str
        int64 is ``long`` (LP64 Linux), complex types ``pycuda::complex<...>``, vector types
        CUDA's (``float3``).

    Raises
    ------
    ValueError
        No C type is registered for the dtype (float16, among others).

    Examples
    --------
    >>> import numpy as np
    >>> from pyctk.tools import dtype_to_ctype
    >>> dtype_to_ctype(np.float32), dtype_to_ctype(np.int64), dtype_to_ctype(np.complex64)
    ('float', 'long', 'pycuda::complex<float>')
    """
    dtype = np.dtype(dtype)
    if with_fp_tex_hack and dtype in _TEXTURE_NAMES:
        return _TEXTURE_NAMES[dtype]
    names = _to_names.get(dtype)
    if not names:
        raise ValueError(
            f"unable to map dtype '{dtype}' to a C type: register it with "
            f"pyctk.tools.get_or_register_dtype(c_name, dtype)"
        )
    return names[0]


class Argument:
    """A kernel parameter, as :func:`~pyctk.tools.parse_c_arg` reads one.

    Parameters
    ----------
    dtype : data-type
    name : str

    Attributes
    ----------
    dtype : numpy.dtype
    name : str
    """

    def __init__(self, dtype: Any, name: str) -> None:
        self.dtype, self.name = np.dtype(dtype), name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dtype!r}, {self.name!r})"

    def declarator(self, restrict: bool = False) -> str:
        """The parameter as C declares it (``VectorArg`` and ``ScalarArg`` say how)."""
        raise NotImplementedError

    @property
    def struct_char(self) -> str:
        """Its ``struct`` letter for :meth:`pyctk.driver.Function.prepare` (``VectorArg`` and
        ``ScalarArg`` say which)."""
        raise NotImplementedError


class VectorArg(Argument):
    """A pointer parameter (``float *x``): passed as a device address.

    Parameters
    ----------
    dtype : data-type
        What it points to.
    name : str
    """

    struct_char = "P"

    def declarator(self, restrict: bool = False) -> str:
        """The parameter's C declaration.

        Parameters
        ----------
        restrict : bool, optional
            Promise that no other parameter reaches its memory (``__restrict__``), which lets
            the compiler load ahead of the kernel's stores.

        Returns
        -------
        str

        Examples
        --------
        >>> import numpy as np
        >>> from pyctk.tools import VectorArg
        >>> VectorArg(np.float32, "x").declarator(restrict=True)
        'float *__restrict__ x'
        """
        return f"{dtype_to_ctype(self.dtype)} *{'__restrict__ ' if restrict else ''}{self.name}"


class ScalarArg(Argument):
    """A parameter passed by value (``int n``).

    Parameters
    ----------
    dtype : data-type
    name : str
    """

    @property
    def struct_char(self) -> str:
        """Its ``struct`` letter for :meth:`pyctk.driver.Function.prepare` (``"12s"`` for a
        struct of 12 bytes)."""
        return f"{self.dtype.itemsize}s" if self.dtype.kind == "V" else self.dtype.char

    def declarator(self, restrict: bool = False) -> str:
        """The parameter's C declaration.

        Parameters
        ----------
        restrict : bool, optional
            Ignored: a value aliases nothing.

        Returns
        -------
        str
        """
        return f"{dtype_to_ctype(self.dtype)} {self.name}"


_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|restrict)\b")
_DECLARATOR = re.compile(
    r"^(?P<type>[\w:<>\s]+?)(?:\s*(?P<pointer>\*)\s*|\s+)(?P<name>\w+)"
    r"\s*(?P<array>\[\s*\w*\s*\])?$"
)


def parse_c_arg(c_arg: str) -> Argument:
    """Read one C parameter declaration (PyCUDA's ``parse_c_arg``).

    Parameters
    ----------
    c_arg : str
        ``"const float *x"``, ``"unsigned int n"`` ...; qualifiers are dropped.

    Returns
    -------
    VectorArg or ScalarArg
        A pointer (or array) parameter, or one passed by value.

    Raises
    ------
    ValueError
        A declaration that cannot be read, or a type not registered.

    Examples
    --------
    >>> from pyctk.tools import parse_c_arg
    >>> parse_c_arg("const float *__restrict__ x")
    VectorArg(dtype('float32'), 'x')
    >>> parse_c_arg("unsigned int n").struct_char
    'I'
    """
    text = " ".join(_QUALIFIERS.sub(" ", c_arg).split())
    match = _DECLARATOR.match(text)
    if match is None:
        raise ValueError(f"couldn't parse C declarator {c_arg!r}")
    try:
        dtype = get_or_register_dtype(" ".join(match["type"].split()))
    except KeyError:
        raise ValueError(f"unknown type in {c_arg!r}: {match['type'].strip()!r}") from None
    vector = bool(match["pointer"] or match["array"])
    return (VectorArg if vector else ScalarArg)(dtype, match["name"])


def get_arg_type(c_arg: str) -> str:
    """The ``struct`` letter :meth:`pyctk.driver.Function.prepare` takes for a C parameter
    declaration.

    Parameters
    ----------
    c_arg : str

    Returns
    -------
    str

    Examples
    --------
    >>> from pyctk.tools import get_arg_type
    >>> get_arg_type("float *a"), get_arg_type("double x")
    ('P', 'd')
    """
    return parse_c_arg(c_arg).struct_char


for _dtype, _names in _BUILT_IN:
    get_or_register_dtype(_names, _dtype)
for _vector_name, _vector_dtype in VECTOR_DTYPES.items():  # CUDA's vector types: float3 ... (pycuda.gpuarray.vec)
    get_or_register_dtype(_vector_name, _vector_dtype)
del _dtype, _names, _vector_name, _vector_dtype
