"""The element-wise operations as rows: each ``Operation`` is a NumPy ufunc's dtype rule and a
C expression of the operands (``BINARY``, ``UNARY`` and the named ones). The ``pyctk_*`` device
functions those expressions call are C++ in pyctk's include folder (``compiling/libc/
pyctk-elementwise.cuh`` and its complex twin), which every kernel ``codegen`` writes includes.

Adding an operator is adding a row here; ``engine`` runs any row, ``codegen`` writes its
kernels.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

Rule = Callable[[tuple], tuple]  # operands' dtypes (Python types: weak scalars) -> (loop inputs, outputs)


class Operation:
    """One element-wise operation: a row of a table.

    Parameters
    ----------
    name : str
        NumPy's name for it (kernel names and error messages).
    rule : callable
        The operands' dtypes (``int``, ``float``, ``complex`` for Python scalars, weak) to
        ``(loop input dtypes, output dtypes)``: ``ufunc_rule(np.add)`` is NumPy's.
    template : str or dict
        C: with one output, an expression; with several, a statement assigning ``{o0}``,
        ``{o1}``... ``{0}``, ``{1}``... are the operands converted to the loop's input types;
        ``{f}`` is ``f`` for a float32 loop (``sin{f}`` calls ``sinf``). A dict maps dtype
        kinds (``"iu"``: signed and unsigned integers) of the first loop input to templates.
    integer_exponent : int, optional
        The operand that is an integer power's exponent: a negative scalar is refused as
        NumPy refuses it.
    """

    __slots__ = ("name", "rule", "template", "integer_exponent")

    def __init__(
        self, name: str, rule: Rule, template: str | dict[str, str], integer_exponent: int | None = None
    ) -> None:
        self.name, self.rule, self.template = name, rule, template
        self.integer_exponent = integer_exponent

    def __repr__(self) -> str:
        return f"Operation({self.name!r})"

    def template_for(self, kind: str) -> str:
        """The template for a loop whose first input is of dtype kind ``kind``."""
        if isinstance(self.template, str):
            return self.template
        return next(text for kinds, text in self.template.items() if kind in kinds)


def ufunc_rule(ufunc: np.ufunc) -> Rule:
    """NumPy's loop of ``ufunc`` for the operands' dtypes (its TypeError where it has none)."""

    def rule(dtypes: tuple) -> tuple:
        loop = ufunc.resolve_dtypes((*dtypes, *[None] * ufunc.nout))
        return loop[: ufunc.nin], loop[ufunc.nin :]

    return rule


def promoting_rule(first: int) -> Rule:
    """Operands from ``first`` on in their ``np.result_type`` (the result's dtype); those
    before it (``where``'s criterion) in their own."""

    def rule(dtypes: tuple) -> tuple:
        common = np.result_type(*[_WEAK_VALUES.get(d, d) for d in dtypes[first:]])
        return (*[np.dtype(d) for d in dtypes[:first]], *[common] * (len(dtypes) - first)), (common,)

    return rule


_WEAK_VALUES = {int: 0, float: 0.0, complex: 0j}  # NumPy 2 promotes Python scalars by kind


def _ufunc(ufunc: np.ufunc, template: str | dict[str, str], **options: Any) -> Operation:
    """The row of NumPy's ``ufunc``."""
    return Operation(ufunc.__name__, ufunc_rule(ufunc), template, **options)


# GPUArray's operators: ``x OP y`` computes the template with {0} = x, {1} = y.
BINARY = {
    "+": _ufunc(np.add, "{0} + {1}"),
    "-": _ufunc(np.subtract, "{0} - {1}"),
    "*": _ufunc(np.multiply, "{0} * {1}"),
    "/": _ufunc(np.true_divide, "{0} / {1}"),
    "**": _ufunc(
        np.power,
        {
            "i": "pyctk_ipow_signed({0}, {1})",
            "u": "pyctk_ipow({0}, {1})",
            "f": "pow{f}({0}, {1})",
            "c": "pyctk_cpow({0}, {1})",
        },
        integer_exponent=1,
    ),
    "//": _ufunc(
        np.floor_divide,
        {"i": "pyctk_idivmod({0}, {1}, false)", "u": "({1} ? {0} / {1} : 0)", "f": "pyctk_divmod({0}, {1}, false)"},
    ),
    "%": _ufunc(
        np.remainder,
        {"i": "pyctk_idivmod({0}, {1}, true)", "u": "({1} ? {0} % {1} : 0)", "f": "pyctk_divmod({0}, {1}, true)"},
    ),
    "&": _ufunc(np.bitwise_and, "{0} & {1}"),
    "|": _ufunc(np.bitwise_or, "{0} | {1}"),
    "^": _ufunc(np.bitwise_xor, "{0} ^ {1}"),
    "==": _ufunc(np.equal, "pyctk_eq({0}, {1})"),
    "!=": _ufunc(np.not_equal, "!pyctk_eq({0}, {1})"),
    "<": _ufunc(np.less, "pyctk_lt({0}, {1})"),
    "<=": _ufunc(np.less_equal, "pyctk_le({0}, {1})"),
    ">": _ufunc(np.greater, "pyctk_lt({1}, {0})"),
    ">=": _ufunc(np.greater_equal, "pyctk_le({1}, {0})"),
}
COMPARISONS = {BINARY[op] for op in ("==", "!=", "<", "<=", ">", ">=")}

UNARY = {
    "-": _ufunc(np.negative, "-{0}"),
    "~": _ufunc(np.invert, {"b": "!{0}", "iu": "~{0}"}),
    "abs": _ufunc(np.absolute, {"f": "fabs{f}({0})", "i": "({0} < 0 ? -{0} : {0})", "bu": "{0}", "c": "abs({0})"}),
}

# NumPy's maximum and minimum: NaN wins (unlike fmax), complex numbers in lexicographic order.
MAXIMUM = _ufunc(np.maximum, "(pyctk_le({1}, {0}) || {0} != {0}) ? {0} : {1}")
MINIMUM = _ufunc(np.minimum, "(pyctk_le({0}, {1}) || {0} != {0}) ? {0} : {1}")
LOGICAL_AND = _ufunc(np.logical_and, "pyctk_nonzero({0}) && pyctk_nonzero({1})")
LOGICAL_OR = _ufunc(np.logical_or, "pyctk_nonzero({0}) || pyctk_nonzero({1})")
LOGICAL_NOT = _ufunc(np.logical_not, "!pyctk_nonzero({0})")
CONJ = _ufunc(np.conjugate, "conj({0})")
WHERE = Operation("where", promoting_rule(1), "pyctk_nonzero({0}) ? {1} : {2}")
IF_POSITIVE = Operation("if_positive", promoting_rule(1), "pyctk_positive({0}) ? {1} : {2}")
MUL_ADD = Operation("mul_add", promoting_rule(0), "{0} * {1} + {2} * {3}")  # (a, x, b, y): a*x + b*y

# C math.h's functions of several results or operands (cumath's, and pycuda.elementwise's getters).
FMOD = Operation(
    "fmod",
    ufunc_rule(np.fmod),
    {"f": "fmod{f}({0}, {1})", "u": "({1} ? {0} % {1} : 0)", "i": "({1} == 0 || {1} == -1 ? 0 : {0} % {1})"},
)
FREXP = Operation("frexp", ufunc_rule(np.frexp), "{o0} = frexp{f}({0}, &{o1})")
_NUMPYS_LDEXP = ufunc_rule(np.ldexp)


def _ldexp_rule(dtypes: tuple) -> tuple:
    """NumPy's loop; for an array of float exponents, C's ``ldexp`` (and PyCUDA's), which
    takes each truncated to an integer, where NumPy's ufunc has no loop."""
    exponent = dtypes[1]
    if isinstance(exponent, np.dtype) and exponent.kind == "f":
        return _NUMPYS_LDEXP((dtypes[0], np.dtype(np.int64)))
    return _NUMPYS_LDEXP(dtypes)


LDEXP = Operation("ldexp", _ldexp_rule, "ldexp{f}({0}, pyctk_exponent({1}))")
MODF = Operation("modf", ufunc_rule(np.modf), "{o0} = modf{f}({0}, &{o1})")
