"""The element-wise operations as rows: each ``Operation`` is a NumPy ufunc's dtype rule and a
C expression of the operands (``BINARY``, ``UNARY`` and the named ones), and ``HELPERS`` are
the device functions those expressions call.

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

# Device functions the templates call: (name, for real types, for complex ones). A kernel
# gets those its source names; one may call those before it.
HELPERS = [
    (
        "pyctk_eq",
        "template <class T> __device__ bool pyctk_eq(T a, T b) { return a == b; }\n"
        "__device__ bool pyctk_eq(long a, unsigned long b) { return a >= 0 && (unsigned long) a == b; }\n"
        "__device__ bool pyctk_eq(unsigned long a, long b) { return b >= 0 && a == (unsigned long) b; }\n",
        "",
    ),
    (
        "pyctk_lt",  # int64 against uint64 exactly, complex numbers in NumPy's lexicographic order
        "template <class T> __device__ bool pyctk_lt(T a, T b) { return a < b; }\n"
        "__device__ bool pyctk_lt(long a, unsigned long b) { return a < 0 || (unsigned long) a < b; }\n"
        "__device__ bool pyctk_lt(unsigned long a, long b) { return b > 0 && a < (unsigned long) b; }\n",
        "template <class T> __device__ bool pyctk_lt(pycuda::complex<T> a, pycuda::complex<T> b) {\n"
        "  return (a.real() < b.real() && a.imag() == a.imag() && b.imag() == b.imag())\n"
        "         || (a.real() == b.real() && a.imag() < b.imag());\n}\n",
    ),
    (
        "pyctk_le",
        "template <class T> __device__ bool pyctk_le(T a, T b) { return a <= b; }\n"
        "__device__ bool pyctk_le(long a, unsigned long b) { return a < 0 || (unsigned long) a <= b; }\n"
        "__device__ bool pyctk_le(unsigned long a, long b) { return b >= 0 && a <= (unsigned long) b; }\n",
        "template <class T> __device__ bool pyctk_le(pycuda::complex<T> a, pycuda::complex<T> b) {\n"
        "  return (a.real() < b.real() && a.imag() == a.imag() && b.imag() == b.imag())\n"
        "         || (a.real() == b.real() && a.imag() <= b.imag());\n}\n",
    ),
    ("pyctk_nonzero", "template <class T> __device__ bool pyctk_nonzero(T x) { return x != T(0); }\n", ""),
    ("pyctk_positive", "template <class T> __device__ bool pyctk_positive(T x) { return pyctk_lt(T(0), x); }\n", ""),
    (
        "pyctk_ipow",  # by squaring, in 64 bits: wraps around as NumPy's integers do
        "template <class T> __device__ T pyctk_ipow(T base, T exponent) {\n"
        "  unsigned long long result = 1, power = (unsigned long long) base;\n"
        "  for (; exponent != 0; exponent /= 2) {\n"
        "    if (exponent % 2 != 0) result *= power;\n"
        "    power *= power;\n  }\n"
        "  return (T) result;\n}\n",
        "",
    ),
    (
        "pyctk_ipow_signed",  # NumPy refuses negative exponents; here they give 1/base**-e truncated
        "template <class T> __device__ T pyctk_ipow_signed(T base, T exponent) {\n"
        "  if (exponent < 0) return base == 1 ? 1 : base == -1 ? (exponent % 2 != 0 ? -1 : 1) : 0;\n"
        "  return pyctk_ipow(base, exponent);\n}\n",
        "",
    ),
    (
        "pyctk_cpow",
        "",  # NumPy's exact cases: x**0, 0**y, small integral powers by squaring
        "template <class T> __device__ pycuda::complex<T> pyctk_cpow(pycuda::complex<T> a, pycuda::complex<T> b) {\n"
        "  if (b.real() == 0 && b.imag() == 0) return pycuda::complex<T>(1);\n"
        "  if (a.real() == 0 && a.imag() == 0)\n"
        '    return b.real() > 0 ? pycuda::complex<T>(0) : pycuda::complex<T>(T(nan("")), T(nan("")));\n'
        "  if (b.imag() == 0 && b.real() == (int) b.real() && fabs(b.real()) < 100) {\n"
        "    int n = (int) b.real();\n"
        "    unsigned k = n < 0 ? -n : n;\n"
        "    pycuda::complex<T> result(1), power = a;\n"
        "    for (; k; k /= 2) {\n"
        "      if (k % 2) result *= power;\n"
        "      power *= power;\n    }\n"
        "    return n < 0 ? pycuda::complex<T>(1) / result : result;\n  }\n"
        "  return pow(a, b);\n}\n",
    ),
    (
        "pyctk_divmod",  # NumPy's floor division and remainder of floats (the remainder has b's sign)
        "template <class T> __device__ T pyctk_divmod(T a, T b, bool modulus) {\n"
        "  T mod = fmod(a, b);\n"
        "  if (b == 0) return modulus ? mod : a / b;\n"
        "  T quotient = (a - mod) / b;\n"
        "  if (mod != 0) {\n"
        "    if ((b < 0) != (mod < 0)) { mod += b; quotient -= 1; }\n"
        "  } else mod = copysign(T(0), b);\n"
        "  if (modulus) return mod;\n"
        "  if (quotient == 0) return copysign(T(0), a / b);\n"
        "  T floored = floor(quotient);\n"
        "  return quotient - floored > T(0.5) ? floored + 1 : floored;\n}\n",
        "",
    ),
    (
        "pyctk_idivmod",  # the same for signed integers; 0 for b == 0, and MIN // -1 wraps, as NumPy's
        "template <class T> __device__ T pyctk_idivmod(T a, T b, bool modulus) {\n"
        "  if (b == 0) return 0;\n"
        "  if (b == -1) return modulus ? 0 : (T) (0ULL - (unsigned long long) a);\n"
        "  T quotient = a / b, mod = a % b;\n"
        "  if (mod != 0 && (mod < 0) != (b < 0)) { quotient -= 1; mod += b; }\n"
        "  return modulus ? mod : quotient;\n}\n",
        "",
    ),
    (
        "pyctk_exponent",  # an ldexp exponent as int: beyond +-100000 every double over/underflows
        "__device__ int pyctk_exponent(long e) { return e < -100000 ? -100000 : e > 100000 ? 100000 : (int) e; }\n",
        "",
    ),
]
