"""PyCUDA's kernel getters of ``pycuda.elementwise`` (``get_fill_kernel``, ``get_axpbyz_kernel``
...): each is a row of ``RECIPES`` (the kernel's name, PyCUDA's parameters, a C body) built by
:func:`pyctk.elementwise.get_elwise_kernel_and_types` into a prepared function, once per context.

A body that computes one of ``operations``' rows (``where``, ``conj``, the operators, ``fmod``
...) is that row's C expression, so these kernels compute what GPUArray's do. A recipe's part
that names ``{k}`` is written once per vector (``vec_count``), numbered from 0. PyCUDA's
texture references (CUDA 12 has none) are ``__device__`` pointers of the kernel's module, set
by :meth:`pyctk.gpuarray.GPUArray.bind_to_texref_ext` through their stand-in, ``PointerTexref``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..contexts.default_context import context_dependent_memoize
from ..kernels.c_types import dtype_to_ctype
from ..kernels.source_modules import SourceModule
from ..memory.device import memcpy_htod
from .codegen import HELPERS
from .elementwise import get_elwise_kernel_and_types
from .operations import (
    BINARY,
    CONJ,
    FMOD,
    FREXP,
    IF_POSITIVE,
    LDEXP,
    LOGICAL_NOT,
    MAXIMUM,
    MINIMUM,
    MODF,
    MUL_ADD,
    WHERE,
    Operation,
)


class Recipe(NamedTuple):
    """One of PyCUDA's kernels, its text with ``{fields}``: C types (``{tp_x}``), C expressions.

    Parameters
    ----------
    name : str
        The kernel's name (PyCUDA's).
    arguments : tuple of str
        Its parameters, before the loop's ``n``; a part with ``{k}`` once per vector.
    operation : tuple of str
        The statements for element ``i``; a part with ``{k}`` once per vector.
    textures : tuple of str
        The ``__device__`` pointers that stand in for PyCUDA's texture references, as
        declarators (``"{tp} *tex_src{k}"``).
    loop_prep : tuple of str
        Statements before the loop.
    """

    name: str
    arguments: tuple[str, ...]
    operation: tuple[str, ...]
    textures: tuple[str, ...] = ()
    loop_prep: tuple[str, ...] = ()


_TEXT = ("arguments", "operation", "textures", "loop_prep")  # a recipe's parts after its name
_ELEMENT = {False: "[i]", True: "[0]"}  # an operand of PyCUDA's is_scalar: a 1-element GPU array

RECIPES = {
    "take": Recipe(
        "take",
        ("{idx_tp} *idx", "{tp} *dest{k}"),
        ("{idx_tp} src_idx = idx[i]", "dest{k}[i] = tex_src{k}[src_idx]"),
        ("{tp} *tex_src{k}",),
    ),
    "take_put": Recipe(
        "take_put",
        ("{idx_tp} *gmem_dest_idx, {idx_tp} *gmem_src_idx", "{tp} *dest{k}"),
        (
            "{idx_tp} src_idx = gmem_src_idx[i]",
            "{idx_tp} dest_idx = gmem_dest_idx[i]",
            "dest{k}[dest_idx] = tex_src{k}[src_idx]",
        ),
        ("{tp} *tex_src{k}",),
    ),
    "take_put_with_offsets": Recipe(
        "take_put",
        ("{idx_tp} *gmem_dest_idx, {idx_tp} *gmem_src_idx", "{tp} *dest{k}", "{idx_tp} offset{k}"),
        (
            "{idx_tp} src_idx = gmem_src_idx[i]",
            "{idx_tp} dest_idx = gmem_dest_idx[i]",
            "dest{k}[dest_idx] = tex_src{k}[src_idx + offset{k}]",
        ),
        ("{tp} *tex_src{k}",),
    ),
    "put": Recipe(
        "put",
        ("{idx_tp} *gmem_dest_idx", "{tp} *dest{k}", "{tp} *src{k}"),
        ("{idx_tp} dest_idx = gmem_dest_idx[i]", "dest{k}[dest_idx] = src{k}[i]"),
    ),
    "copy": Recipe("copy", ("{tp_dest} *dest, {tp_src} *src",), ("dest[i] = src[i]",)),
    "axpbyz": Recipe(
        "axpbyz",
        ("{tp_x} a, {tp_x} *x, {tp_y} b, {tp_y} *y, {tp_z} *z",),
        ("z[i] = " + MUL_ADD.template_for("f").format("({x_t}) a", "({x_t}) x{x}", "({y_t}) b", "({y_t}) y{y}"),),
    ),
    "axpbz": Recipe("axpb", ("{tp_z} a, {tp_x} *x, {tp_z} b, {tp_z} *z",), ("z[i] = a * x[i] + b",)),
    "binary_op": Recipe("multiply", ("{tp_x} *x, {tp_y} *y, {tp_z} *z",), ("z[i] = ({tp_z}) ({op})",)),
    "rdivide": Recipe("divide_r", ("{tp_x} *x, {tp_z} y, {tp_z} *z",), ("z[i] = {op}",)),
    "binary_func": Recipe("{func}_kernel", ("{tp_x} *x, {tp_y} *y, {tp_z} *z",), ("z[i] = {func}(x[i], y[i])",)),
    "binary_func_scalar": Recipe("{func}_kernel", ("{tp_x} *x, {tp_y} y, {tp_z} *z",), ("z[i] = {func}(x[i], y)",)),
    "binary_minmax": Recipe("{func}_kernel", ("{tp_x} *x, {tp_y} *y, {tp_z} *z",), ("z[i] = {op}",)),
    "binary_minmax_scalar": Recipe("{func}_kernel", ("{tp_x} *x, {tp_y} y, {tp_z} *z",), ("z[i] = {op}",)),
    "fill": Recipe("fill", ("{tp} a, {tp} *z",), ("z[i] = a",)),
    "reverse": Recipe("reverse", ("{tp} *y, {tp} *z",), ("z[i] = y[n-1-i]",)),
    "real": Recipe("real", ("{tp} *y, {real_tp} *z",), ("z[i] = real(y[i])",)),
    "imag": Recipe("imag", ("{tp} *y, {real_tp} *z",), ("z[i] = imag(y[i])",)),
    "conj": Recipe("conj", ("{tp} *y, {conj_tp} *z",), ("z[i] = " + CONJ.template_for("c").format("y[i]"),)),
    "arange": Recipe("arange", ("{tp} *z, {tp} start, {tp} step",), ("z[i] = start + i*step",)),
    "pow_array": Recipe("pow_method", ("{x_param}, {y_param}, {tp_z} *z",), ("z[i] = {op}",)),
    "fmod": Recipe(
        "fmod_kernel",
        ("float *arg, float *mod, float *z",),
        ("z[i] = " + FMOD.template_for("f").format("arg[i]", "mod[i]", f="f"),),
    ),
    "modf": Recipe(
        "modf_kernel",
        ("float *x, float *intpart, float *fracpart",),
        (MODF.template_for("f").format("x[i]", f="f", o0="fracpart[i]", o1="intpart[i]"),),
    ),
    "frexp": Recipe(
        "frexp_kernel",
        ("float *x, float *significand, float *exponent",),
        (
            "int expt = 0",  # C's frexp writes an int; PyCUDA's exponents are floats
            FREXP.template_for("f").format("x[i]", f="f", o0="significand[i]", o1="expt"),
            "exponent[i] = expt",
        ),
    ),
    "ldexp": Recipe(
        "ldexp_kernel",
        ("float *sig, float *expt, float *z",),
        ("z[i] = " + LDEXP.template_for("f").format("sig[i]", "(long) expt[i]", f="f"),),
    ),
    "unary_func": Recipe("{func}_kernel", ("{tp_in} *y, {tp_out} *z",), ("z[i] = {op}",)),
    "if_positive": Recipe(
        "if_positive",
        ("{crit_tp} *crit, {tp} *then_, {tp} *else_, {tp} *result",),
        ("result[i] = " + IF_POSITIVE.template_for("f").format("crit[i]", "then_[i]", "else_[i]"),),
    ),
    "where": Recipe(
        "where",
        ("{crit_tp} *crit, {tp} *then_, {tp} *else_, {tp} *result",),
        ("result[i] = " + WHERE.template_for("f").format("crit[i]", "then_[i]", "else_[i]"),),
    ),
    "scalar_op": Recipe("scalarop_kernel", ("{tp_x} *x, {tp_a} a, {tp_y} *y",), ("y[i] = ({tp_y}) ({op})",)),
    "logical_not": Recipe(
        "logical_not", ("{tp_x} *x, {tp_out} *out",), ("out[i] = " + LOGICAL_NOT.template_for("f").format("x[i]"),)
    ),
}

# get_linear_combination_kernel's summands, by PyCUDA's is_gpu_scalar: the factor a passed
# by value, or read from a 1-element GPU array (PyCUDA's texture) before the loop.
SUMMANDS = {
    False: Recipe("", ("{tp_a} a{k}, {tp_x} *x{k}",), ()),
    True: Recipe("", ("{tp_x} *x{k}",), (), ("{tp_a} *tex_a{k}",), ("{tp_a} a{k} = *tex_a{k}",)),
}

_MINMAX = {"max": MAXIMUM, "min": MINIMUM}  # NumPy's maximum and minimum: NaN wins
_POW_OPERANDS = {  # (is_base_array, is_exp_array): the parameters, the operands
    (False, True): ("{tp_x} x", "{tp_y} *y", "x", "y[i]"),
    (True, True): ("{tp_x} *x", "{tp_y} *y", "x[i]", "y[i]"),
    (True, False): ("{tp_x} *x", "{tp_y} y", "x[i]", "y"),
}


class PointerTexref:
    """The stand-in of a PyCUDA texture reference that a getter returns: a ``__device__``
    pointer of the kernel's module, which the kernel reads through.

    CUDA 12 removed texture references. Binding an array
    (:meth:`pyctk.gpuarray.GPUArray.bind_to_texref_ext`, or :meth:`set_address`) writes its
    address into the pointer, so PyCUDA's programs bind and launch as they did.

    Parameters
    ----------
    module : pyctk.compiler.SourceModule
        The kernel's module.
    name : str
        The pointer's name in it (PyCUDA's texture's: ``tex_src0``).
    """

    def __init__(self, module: SourceModule, name: str) -> None:
        self.module, self.name = module, name

    def __repr__(self) -> str:
        return f"PointerTexref({self.name!r})"

    def set_address(self, devptr: Any, bytes: int, allow_offset: bool = False) -> int:  # noqa: A002
        """Point the kernel's reads at ``devptr`` (PyCUDA's ``TextureReference.set_address``).

        Parameters
        ----------
        devptr : DeviceAllocation or int
            The array's device memory.
        bytes : int
            Its size (PyCUDA's; a pointer needs none).
        allow_offset : bool, optional
            PyCUDA's; a pointer has no alignment to offset.

        Returns
        -------
        int
            0: the reads start at ``devptr`` itself (a texture's could start before it).
        """
        address, _ = self.module.get_global(self.name)
        memcpy_htod(address, np.array([int(devptr)], dtype=np.uintp))
        return 0


def _parts(parts: Sequence[str], fields: dict[str, str], vectors: Sequence[int]) -> list[str]:
    """``parts`` with ``fields`` filled in, a part that names ``{k}`` once per vector ``k``."""
    return [text.format(k=k, **fields) for text in parts for k in (vectors if "{k}" in text else [0])]


def _pointer_name(declarator: str) -> str:
    return declarator.rsplit("*", 1)[1].strip()


def _build(recipes: Sequence[Recipe], fields: dict[str, str], count: int = 1) -> tuple[Any, list[PointerTexref]]:
    """The prepared function of ``recipes`` (their parts in order, the first's name), and the
    stand-ins of its texture references, in order."""
    arguments, statements, textures, loop_prep = (
        [text for recipe in recipes for text in _parts(getattr(recipe, part), fields, range(count))] for part in _TEXT
    )
    name = recipes[0].name.format(**fields)
    dtypes = [np.dtype(value) for key, value in fields.items() if key.startswith("dtype")]
    preamble = HELPERS[any(d.kind == "c" for d in dtypes)] + "".join(
        f"__device__ const {declarator};\n" for declarator in textures
    )
    module, function, _ = get_elwise_kernel_and_types(
        ", ".join(arguments),
        ";\n    ".join(statements),
        name,
        preamble=preamble,
        loop_prep=";\n  ".join(loop_prep),
    )
    return function, [PointerTexref(module, _pointer_name(d)) for d in textures]


def _types(**dtypes: Any) -> dict[str, str]:
    """The fields of the getter's dtypes: ``tp_x`` (its C type) and ``dtype_tp_x`` (the dtype,
    which says whether the kernel needs the complex headers) for ``tp_x=dtype_x``."""
    fields = {}
    for field, dtype in dtypes.items():
        fields[field] = dtype_to_ctype(np.dtype(dtype))
        fields[f"dtype_{field}"] = np.dtype(dtype).str
    return fields


def _operand_type(dtype: Any, dtype_z: Any) -> str:
    """The C type PyCUDA computes an operand of a ``dtype_z`` result in: ``dtype_z``'s, or its
    real part's where ``dtype_z`` is complex and the operand real."""
    dtype, dtype_z = np.dtype(dtype), np.dtype(dtype_z)
    if dtype_z.kind == "c" and dtype.kind != "c":
        return dtype_to_ctype(np.finfo(dtype_z).dtype)
    return dtype_to_ctype(dtype_z)


def _expression(operation: Operation, dtype: Any, *operands: str) -> str:
    """C of ``operation`` (a row of ``operations``) of ``operands``, in a loop of ``dtype``."""
    dtype = np.dtype(dtype)
    try:
        template = operation.template_for(dtype.kind)
    except StopIteration:
        raise TypeError(f"{operation.name} has no kernel for {dtype} operands: pass another dtype") from None
    return template.format(*operands, f="f" if dtype == np.float32 else "")


def _operator(operator: str) -> Operation:
    """GPUArray's row of C's ``operator`` (NumPy's ``**``, ``//``, ``%``, comparisons), else the
    operator itself, as PyCUDA writes it."""
    return BINARY.get(operator) or Operation(operator, lambda dtypes: dtypes, "{0} " + operator + " {1}")


# -- PyCUDA's getters ------------------------------------------------------------------------


@context_dependent_memoize
def get_take_kernel(dtype: Any, idx_dtype: Any, vec_count: int = 1) -> tuple[Any, list[PointerTexref]]:
    """PyCUDA's ``get_take_kernel``: ``dest_k[i] = src_k[idx[i]]`` for ``vec_count`` arrays.

    Parameters
    ----------
    dtype, idx_dtype : numpy.dtype
        The arrays', the indices'.
    vec_count : int, optional
        How many arrays are taken from, with the same indices.

    Returns
    -------
    tuple
        ``(function, texrefs)``: the function prepared for ``(idx, dest0, ..., n)``, and the
        stand-ins of PyCUDA's texture references (pointers of the module): bind each source
        with ``src_k.bind_to_texref_ext(texrefs[k])`` before the launch.
    """
    return _build([RECIPES["take"]], _types(tp=dtype, idx_tp=idx_dtype), vec_count)


@context_dependent_memoize
def get_take_put_kernel(
    dtype: Any, idx_dtype: Any, with_offsets: bool, vec_count: int = 1
) -> tuple[Any, list[PointerTexref]]:
    """PyCUDA's ``get_take_put_kernel``: ``dest_k[gmem_dest_idx[i]] = src_k[gmem_src_idx[i]
    (+ offset_k)]``.

    Parameters
    ----------
    dtype, idx_dtype : numpy.dtype
        The arrays', the indices'.
    with_offsets : bool
        Whether each source's index has an offset, ``offset_k`` (a parameter).
    vec_count : int, optional
        How many arrays.

    Returns
    -------
    tuple
        ``(function, texrefs)``, as :func:`get_take_kernel`'s: the function prepared for
        ``(gmem_dest_idx, gmem_src_idx, dest0, ..., [offset0, ...,] n)``.
    """
    recipe = RECIPES["take_put_with_offsets" if with_offsets else "take_put"]
    return _build([recipe], _types(tp=dtype, idx_tp=idx_dtype), vec_count)


@context_dependent_memoize
def get_put_kernel(dtype: Any, idx_dtype: Any, vec_count: int = 1) -> Any:
    """PyCUDA's ``get_put_kernel``: ``dest_k[gmem_dest_idx[i]] = src_k[i]``.

    Parameters
    ----------
    dtype, idx_dtype : numpy.dtype
        The arrays', the indices'.
    vec_count : int, optional
        How many arrays.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(gmem_dest_idx, dest0, ..., src0, ..., n)``.
    """
    return _build([RECIPES["put"]], _types(tp=dtype, idx_tp=idx_dtype), vec_count)[0]


@context_dependent_memoize
def get_copy_kernel(dtype_dest: Any, dtype_src: Any) -> Any:
    """PyCUDA's ``get_copy_kernel``: ``dest[i] = src[i]``, converted as C converts.

    Parameters
    ----------
    dtype_dest, dtype_src : numpy.dtype

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(dest, src, n)``.
    """
    return _build([RECIPES["copy"]], _types(tp_dest=dtype_dest, tp_src=dtype_src))[0]


@context_dependent_memoize
def get_linear_combination_kernel(summand_descriptors: Any, dtype_z: Any) -> tuple[Any, list[PointerTexref]]:
    """PyCUDA's ``get_linear_combination_kernel``: ``z[i] = a0*x0[i] + a1*x1[i] + ...``.

    Parameters
    ----------
    summand_descriptors : sequence of tuple
        ``(is_gpu_scalar, scalar_dtype, vector_dtype)`` per summand: its factor ``a_k`` a
        parameter, or (``is_gpu_scalar``) the one element of a GPU array, which PyCUDA reads
        through a texture reference.
    dtype_z : numpy.dtype
        The result's.

    Returns
    -------
    tuple
        ``(function, texrefs)``: the function prepared for the parameters in order (``a_k``
        by value where not ``is_gpu_scalar``, then ``x_k``; then ``z`` and ``n``), and one
        stand-in per GPU scalar (a pointer of the module), as PyCUDA's texture references: CUDA 12 has
        none, and ``a.bind_to_texref_ext(texrefs[0])`` points the kernel at ``a`` instead.

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> from pyctk.elementwise import get_linear_combination_kernel
    >>> f32 = np.dtype(np.float32)
    >>> kernel, texrefs = get_linear_combination_kernel(((True, f32, f32), (False, f32, f32)), f32)
    >>> a, x = gpuarray.to_gpu(np.float32([5])), gpuarray.to_gpu(np.ones(4, np.float32))
    >>> z = gpuarray.empty_like(x)
    >>> a.bind_to_texref_ext(texrefs[0])
    0
    >>> kernel.prepared_call(x._grid, x._block, x.gpudata, 7, x.gpudata, z.gpudata, x.size)
    >>> z.get()
    array([12., 12., 12., 12.], dtype=float32)
    """
    recipes = [Recipe("linear_combination", (), ())]
    dtypes = {"tp_z": dtype_z}
    for k, (is_gpu_scalar, scalar_dtype, vector_dtype) in enumerate(summand_descriptors):
        fields = _types(tp_a=scalar_dtype, tp_x=vector_dtype)
        summand = SUMMANDS[bool(is_gpu_scalar)]
        recipes.append(Recipe("", *(tuple(_parts(getattr(summand, part), fields, [k])) for part in _TEXT)))
        dtypes.update({f"tp_a{k}": scalar_dtype, f"tp_x{k}": vector_dtype})
    summands = " + ".join(f"a{k}*x{k}[i]" for k in range(len(summand_descriptors)))
    recipes.append(Recipe("", ("{tp_z} *z",), (f"z[i] = {summands}",)))
    return _build(recipes, _types(**dtypes))


def _function(recipe: str, fields: dict[str, str]) -> Any:
    """The prepared function of ``RECIPES[recipe]``, which has no texture references."""
    return _build([RECIPES[recipe]], fields)[0]


@context_dependent_memoize
def get_axpbyz_kernel(
    dtype_x: Any, dtype_y: Any, dtype_z: Any, x_is_scalar: bool = False, y_is_scalar: bool = False
) -> Any:
    """PyCUDA's ``get_axpbyz_kernel``: ``z[i] = a*x[i] + b*y[i]``.

    Parameters
    ----------
    dtype_x, dtype_y, dtype_z : numpy.dtype
        The operands' and the result's (also ``a``'s and ``b``'s: ``x``'s and ``y``'s).
    x_is_scalar, y_is_scalar : bool, optional
        ``x`` (``y``) is a 1-element GPU array, read as ``x[0]`` for every ``i``.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(a, x, b, y, z, n)``.
    """
    fields = _types(tp_x=dtype_x, tp_y=dtype_y, tp_z=dtype_z)
    fields.update(x_t=_operand_type(dtype_x, dtype_z), y_t=_operand_type(dtype_y, dtype_z))
    fields.update(x=_ELEMENT[bool(x_is_scalar)], y=_ELEMENT[bool(y_is_scalar)])
    return _function("axpbyz", fields)


@context_dependent_memoize
def get_axpbz_kernel(dtype_x: Any, dtype_z: Any) -> Any:
    """PyCUDA's ``get_axpbz_kernel``: ``z[i] = a*x[i] + b``.

    Parameters
    ----------
    dtype_x, dtype_z : numpy.dtype
        ``x``'s; the result's (also ``a``'s and ``b``'s).

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(a, x, b, z, n)``.
    """
    return _function("axpbz", _types(tp_x=dtype_x, tp_z=dtype_z))


@context_dependent_memoize
def get_binary_op_kernel(
    dtype_x: Any, dtype_y: Any, dtype_z: Any, operator: str, x_is_scalar: bool = False, y_is_scalar: bool = False
) -> Any:
    """PyCUDA's ``get_binary_op_kernel``: ``z[i] = x[i] OP y[i]``, the operands in ``z``'s type.

    ``operator`` is C's; one of GPUArray's (``+``, ``**``, ``//``, ``%``, ``==`` ...) computes
    what GPUArray's computes: ``**`` of integers by squaring, ``//`` and ``%`` with Python's
    signs, comparisons of mixed signs exact.

    Parameters
    ----------
    dtype_x, dtype_y, dtype_z : numpy.dtype
        The operands' and the result's.
    operator : str
        A C binary operator: ``"+"``, ``"*"``, ``"<<"`` ...
    x_is_scalar, y_is_scalar : bool, optional
        ``x`` (``y``) is a 1-element GPU array, read as ``x[0]`` for every ``i``.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(x, y, z, n)``.
    """
    fields = _types(tp_x=dtype_x, tp_y=dtype_y, tp_z=dtype_z)
    x = f"({_operand_type(dtype_x, dtype_z)}) x{_ELEMENT[bool(x_is_scalar)]}"
    y = f"({_operand_type(dtype_y, dtype_z)}) y{_ELEMENT[bool(y_is_scalar)]}"
    return _function("binary_op", {**fields, "op": _expression(_operator(operator), dtype_z, x, y)})


@context_dependent_memoize
def get_rdivide_elwise_kernel(dtype_x: Any, dtype_z: Any) -> Any:
    """PyCUDA's ``get_rdivide_elwise_kernel``: ``z[i] = y / x[i]``, for a scalar ``y``.

    Parameters
    ----------
    dtype_x, dtype_z : numpy.dtype
        ``x``'s; the result's (also ``y``'s).

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(x, y, z, n)``.
    """
    fields = _types(tp_x=dtype_x, tp_z=dtype_z)
    return _function("rdivide", {**fields, "op": _expression(BINARY["/"], dtype_z, "y", "x[i]")})


@context_dependent_memoize
def get_binary_func_kernel(func: str, dtype_x: Any, dtype_y: Any, dtype_z: Any) -> Any:
    """PyCUDA's ``get_binary_func_kernel``: ``z[i] = func(x[i], y[i])``, ``func`` a C function.

    Parameters
    ----------
    func : str
        Its name: ``"fmaxf"``, ``"atan2"`` ...
    dtype_x, dtype_y, dtype_z : numpy.dtype

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(x, y, z, n)``.
    """
    return _function("binary_func", {**_types(tp_x=dtype_x, tp_y=dtype_y, tp_z=dtype_z), "func": func})


@context_dependent_memoize
def get_binary_func_scalar_kernel(func: str, dtype_x: Any, dtype_y: Any, dtype_z: Any) -> Any:
    """PyCUDA's ``get_binary_func_scalar_kernel``: ``z[i] = func(x[i], y)``, for a scalar ``y``.

    Parameters
    ----------
    func : str
        A C function's name.
    dtype_x, dtype_y, dtype_z : numpy.dtype

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(x, y, z, n)``.
    """
    return _function("binary_func_scalar", {**_types(tp_x=dtype_x, tp_y=dtype_y, tp_z=dtype_z), "func": func})


_MINMAX_Y = {False: ("binary_minmax", "y[i]"), True: ("binary_minmax_scalar", "y")}  # by use_scalar


@context_dependent_memoize
def get_binary_minmax_kernel(func: str, dtype_x: Any, dtype_y: Any, dtype_z: Any, use_scalar: bool) -> Any:
    """PyCUDA's ``get_binary_minmax_kernel``: ``z[i] = max(x[i], y[i])`` (or ``min``).

    As NumPy's ``maximum`` and ``minimum`` (and GPUArray's): a NaN operand gives NaN (PyCUDA's
    ``fmax`` gives the other operand).

    Parameters
    ----------
    func : {"max", "min"}
    dtype_x, dtype_y, dtype_z : numpy.dtype
        The operands' and the result's, which they are compared in.
    use_scalar : bool
        ``y`` is a scalar parameter, not an array.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(x, y, z, n)``.
    """
    if func not in _MINMAX:
        raise ValueError(f"func is {func!r}: pass 'max' or 'min'")
    recipe, y = _MINMAX_Y[bool(use_scalar)]
    z = dtype_to_ctype(np.dtype(dtype_z))
    op = _expression(_MINMAX[func], dtype_z, f"({z}) x[i]", f"({z}) {y}")
    return _function(recipe, {**_types(tp_x=dtype_x, tp_y=dtype_y, tp_z=dtype_z), "func": func, "op": op})


@context_dependent_memoize
def get_fill_kernel(dtype: Any) -> Any:
    """PyCUDA's ``get_fill_kernel``: ``z[i] = a``.

    Parameters
    ----------
    dtype : numpy.dtype

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(a, z, n)``.
    """
    return _function("fill", _types(tp=dtype))


@context_dependent_memoize
def get_reverse_kernel(dtype: Any) -> Any:
    """PyCUDA's ``get_reverse_kernel``: ``z[i] = y[n-1-i]``.

    Parameters
    ----------
    dtype : numpy.dtype

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(y, z, n)``.
    """
    return _function("reverse", _types(tp=dtype))


@context_dependent_memoize
def get_real_kernel(dtype: Any, real_dtype: Any) -> Any:
    """PyCUDA's ``get_real_kernel``: ``z[i]`` the real part of complex ``y[i]``.

    Parameters
    ----------
    dtype, real_dtype : numpy.dtype
        ``y``'s, ``z``'s.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(y, z, n)``.
    """
    return _function("real", _types(tp=dtype, real_tp=real_dtype))


@context_dependent_memoize
def get_imag_kernel(dtype: Any, real_dtype: Any) -> Any:
    """PyCUDA's ``get_imag_kernel``: ``z[i]`` the imaginary part of complex ``y[i]``.

    Parameters
    ----------
    dtype, real_dtype : numpy.dtype
        ``y``'s, ``z``'s.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(y, z, n)``.
    """
    return _function("imag", _types(tp=dtype, real_tp=real_dtype))


@context_dependent_memoize
def get_conj_kernel(dtype: Any, conj_dtype: Any) -> Any:
    """PyCUDA's ``get_conj_kernel``: ``z[i]`` the complex conjugate of ``y[i]``.

    Parameters
    ----------
    dtype, conj_dtype : numpy.dtype
        ``y``'s, ``z``'s (complex).

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(y, z, n)``.
    """
    return _function("conj", _types(tp=dtype, conj_tp=conj_dtype))


@context_dependent_memoize
def get_arange_kernel(dtype: Any) -> Any:
    """PyCUDA's ``get_arange_kernel``: ``z[i] = start + i*step``.

    Parameters
    ----------
    dtype : numpy.dtype

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(z, start, step, n)``.
    """
    return _function("arange", _types(tp=dtype))


@context_dependent_memoize
def get_pow_array_kernel(dtype_x: Any, dtype_y: Any, dtype_z: Any, is_base_array: bool, is_exp_array: bool) -> Any:
    """PyCUDA's ``get_pow_array_kernel``: ``z[i] = x[i] ** y[i]``, ``x`` or ``y`` a scalar.

    The power is GPUArray's, in ``z``'s type: integers by squaring (PyCUDA's: C's ``pow`` in
    double), floats by C's ``pow``, complex numbers with NumPy's exact cases.

    Parameters
    ----------
    dtype_x, dtype_y, dtype_z : numpy.dtype
        The base's, the exponent's, the result's.
    is_base_array, is_exp_array : bool
        Which of the two are arrays (at least one); the other is a scalar parameter.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(x, y, z, n)``.
    """
    operands = _POW_OPERANDS.get((bool(is_base_array), bool(is_exp_array)))
    if operands is None:
        raise ValueError("get_pow_array_kernel needs an array: pass is_base_array=True or is_exp_array=True")
    x_param, y_param, x, y = operands
    fields = _types(tp_x=dtype_x, tp_y=dtype_y, tp_z=dtype_z)
    z = fields["tp_z"]
    op = _expression(BINARY["**"], dtype_z, f"({z}) {x}", f"({z}) {y}")
    return _function(
        "pow_array", {**fields, "x_param": x_param.format(**fields), "y_param": y_param.format(**fields), "op": op}
    )


@context_dependent_memoize
def get_fmod_kernel() -> Any:
    """PyCUDA's ``get_fmod_kernel``: ``z[i] = fmod(arg[i], mod[i])``, of float32 arrays.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(arg, mod, z, n)``.
    """
    return _function("fmod", {})


@context_dependent_memoize
def get_modf_kernel() -> Any:
    """PyCUDA's ``get_modf_kernel``: C's ``modf`` of float32 ``x[i]``, its integer and fractional parts.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(x, intpart, fracpart, n)``.
    """
    return _function("modf", {})


@context_dependent_memoize
def get_frexp_kernel() -> Any:
    """PyCUDA's ``get_frexp_kernel``: C's ``frexp`` of float32 ``x[i]``, the exponents as floats.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(x, significand, exponent, n)``.
    """
    return _function("frexp", {})


@context_dependent_memoize
def get_ldexp_kernel() -> Any:
    """PyCUDA's ``get_ldexp_kernel``: ``z[i] = sig[i] * 2**expt[i]``, of float32 arrays.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(sig, expt, z, n)``; each exponent is truncated to an integer.
    """
    return _function("ldexp", {})


@context_dependent_memoize
def get_unary_func_kernel(func_name: str, in_dtype: Any, out_dtype: Any = None) -> Any:
    """PyCUDA's ``get_unary_func_kernel``: ``z[i] = func_name(y[i])``, a C function.

    Parameters
    ----------
    func_name : str
        Its name: ``"sin"``, ``"expf"`` ...
    in_dtype : numpy.dtype
    out_dtype : numpy.dtype, optional
        None: ``in_dtype``.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(y, z, n)``.
    """
    fields = _types(tp_in=in_dtype, tp_out=in_dtype if out_dtype is None else out_dtype)
    return _function("unary_func", {**fields, "func": func_name, "op": f"{func_name}(y[i])"})


@context_dependent_memoize
def get_if_positive_kernel(crit_dtype: Any, dtype: Any) -> Any:
    """PyCUDA's ``get_if_positive_kernel``: ``result[i] = crit[i] > 0 ? then_[i] : else_[i]``.

    Parameters
    ----------
    crit_dtype, dtype : numpy.dtype
        The criterion's; the others'.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(crit, then_, else_, result, n)``.
    """
    return _function("if_positive", _types(crit_tp=crit_dtype, tp=dtype))


@context_dependent_memoize
def get_where_kernel(crit_dtype: Any, dtype: Any) -> Any:
    """PyCUDA's ``get_where_kernel``: ``result[i] = crit[i] != 0 ? then_[i] : else_[i]``.

    Parameters
    ----------
    crit_dtype, dtype : numpy.dtype
        The criterion's; the others'.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(crit, then_, else_, result, n)``.
    """
    return _function("where", _types(crit_tp=crit_dtype, tp=dtype))


@context_dependent_memoize
def get_scalar_op_kernel(dtype_x: Any, dtype_a: Any, dtype_y: Any, operator: str) -> Any:
    """PyCUDA's ``get_scalar_op_kernel``: ``y[i] = x[i] OP a``, for a scalar ``a``.

    The operands meet in their common type (NumPy's ``result_type``); ``operator`` is C's,
    GPUArray's where it has one (as for :func:`get_binary_op_kernel`).

    Parameters
    ----------
    dtype_x, dtype_a, dtype_y : numpy.dtype
        ``x``'s, ``a``'s, the result's.
    operator : str
        A C binary operator.

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(x, a, y, n)``.
    """
    loop = np.result_type(np.dtype(dtype_x), np.dtype(dtype_a))
    common = dtype_to_ctype(loop)
    op = _expression(_operator(operator), loop, f"({common}) x[i]", f"({common}) a")
    return _function("scalar_op", {**_types(tp_x=dtype_x, tp_a=dtype_a, tp_y=dtype_y), "op": op})


@context_dependent_memoize
def get_logical_not_kernel(dtype_x: Any, dtype_out: Any) -> Any:
    """PyCUDA's ``get_logical_not_kernel``: ``out[i] = (x[i] == 0)``.

    Parameters
    ----------
    dtype_x, dtype_out : numpy.dtype

    Returns
    -------
    pyctk.driver.Function
        Prepared for ``(x, out, n)``.
    """
    return _function("logical_not", _types(tp_x=dtype_x, tp_out=dtype_out))
