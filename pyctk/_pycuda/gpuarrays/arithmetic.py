"""GPUArray arithmetic: operators, comparisons and PyCUDA's element-wise functions, as NumPy
computes them.

Every operation is one row of a table (``Operation``): its NumPy ufunc, which gives the
dtypes (NumPy's promotion, Python scalars weak as in NumPy 2: ``float32_array * 2.5`` is
float32, ``int32 / int32`` float64, comparisons bool; and NumPy's TypeError where NumPy has
no loop), and a C expression of the operands converted to the loop's types. ``apply`` runs
any row over any operands: GPUArrays, other libraries' GPU arrays (CuPy, PyTorch,
``pyctk.DeviceArray``: read in place), Python and NumPy scalars (passed to the kernel by
value), broadcast as NumPy broadcasts; ``out=`` takes the result cast as NumPy's
``same_kind`` rule allows (``a += b``), also where ``out`` overlaps an operand.

Kernels. A launch is one generated kernel with a grid-wide stride. When every array has
the result's layout (the usual case: contiguous operands of one shape) the kernel indexes
them by ``i``; otherwise (views with steps, transposes, broadcasting, negative strides) it
finds each operand's element from ``i`` through the result's axes, after axes that every
operand steps through together are merged. Decisions are kept per operation and dtypes
(``_plans``), kernels per plan and layout, so a small operation costs one dictionary
look-up, one allocation and one launch.

Examples
--------
>>> import numpy as np                                                   # doctest: +GPU
>>> from pyctk import gpuarray
>>> a = gpuarray.to_gpu(np.arange(6, dtype=np.float32).reshape(2, 3))
>>> (a * 2 + a[0]).get()                                                 # a[0] broadcast
array([[ 0.,  3.,  6.],
       [ 6.,  9., 12.]], dtype=float32)
>>> (a > 2).dtype, (a // 4).get()[1], gpuarray.maximum(a, 4.0).get()[0]
(dtype('bool'), array([0., 1., 1.], dtype=float32), array([4., 4., 4.], dtype=float32))
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from ..._arrays import interop
from ..._arrays.layout import broadcast_shapes, broadcast_strides, extent, shape_text
from ..._cuda import streams
from ..._matmul.api import matmul as _matmul
from ..contexts.streams import Event
from ..kernels.c_types import dtype_to_ctype
from . import copying
from .base import GPUArrayBase
from .elementwise import COMPLEX_HEADER, needs_complex
from .launching import Kernel, geometry, stream_handle

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
_COMPARISONS = {BINARY[op] for op in ("==", "!=", "<", "<=", ">", ">=")}

UNARY = {
    "-": _ufunc(np.negative, "-{0}"),
    "~": _ufunc(np.invert, {"b": "!{0}", "iu": "~{0}"}),
    "abs": _ufunc(np.absolute, {"f": "fabs{f}({0})", "i": "({0} < 0 ? -{0} : {0})", "bu": "{0}", "c": "abs({0})"}),
}

# NumPy's maximum and minimum: NaN wins (unlike fmax), complex numbers in lexicographic order.
_MAXIMUM = _ufunc(np.maximum, "(pyctk_le({1}, {0}) || {0} != {0}) ? {0} : {1}")
_MINIMUM = _ufunc(np.minimum, "(pyctk_le({0}, {1}) || {0} != {0}) ? {0} : {1}")
_LOGICAL_AND = _ufunc(np.logical_and, "pyctk_nonzero({0}) && pyctk_nonzero({1})")
_LOGICAL_OR = _ufunc(np.logical_or, "pyctk_nonzero({0}) || pyctk_nonzero({1})")
_LOGICAL_NOT = _ufunc(np.logical_not, "!pyctk_nonzero({0})")
_CONJ = _ufunc(np.conjugate, "conj({0})")
_WHERE = Operation("where", promoting_rule(1), "pyctk_nonzero({0}) ? {1} : {2}")
_IF_POSITIVE = Operation("if_positive", promoting_rule(1), "pyctk_positive({0}) ? {1} : {2}")
_MUL_ADD = Operation("mul_add", promoting_rule(0), "{0} * {1} + {2} * {3}")  # (a, x, b, y): a*x + b*y

# Device functions the templates call: (name, for real types, for complex ones). A kernel
# gets those its source names; one may call those before it.
_HELPERS = [
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


# -- operands --------------------------------------------------------------------------


def _is_gpuarray(value: Any) -> bool:
    return isinstance(value, GPUArrayBase)


_array_types: set[type] = set()  # GPUArray and the subclasses met so far: one set look-up each
_SCALARS = {int, float, complex, bool}  # Python scalars: keys as they are (int, float, complex weak)
_WEAK = (int, float, complex)


def _operands(values: Sequence[Any], handle: int) -> tuple[list[Any], Sequence[Any], Any]:
    """The operands as the engine reads them: ``(keys, operands, template)``. A key is the
    dtype of an array, a Python scalar's type, or a NumPy scalar's type; an operand is an
    array (GPUArray or another library's ``DeviceOperand``) or a scalar. ``template`` is the
    first GPUArray: results are made like it."""
    keys, operands, template = [], values, None
    for index, value in enumerate(values):
        kind = type(value)
        if kind in _array_types:
            keys.append(value.dtype)
            if template is None:
                template = value
        elif kind in _SCALARS:
            keys.append(kind)
        else:
            key, operand = _operand(value, handle)
            if operand is not value:
                operands = list(operands)
                operands[index] = operand
            elif template is None and type(value) in _array_types:
                template = value
            keys.append(key)
    if template is None:
        raise TypeError(
            "this operation needs a GPUArray operand: make one with "
            "pyctk.gpuarray.to_gpu(x) or pyctk.gpuarray.asarray(gpu_array)"
        )
    return keys, operands, template


def _operand(value: Any, handle: int) -> tuple[Any, Any]:
    """(key, operand) of a value that is not a known GPUArray type or a Python scalar."""
    if isinstance(value, np.generic):
        return type(value), value
    if _is_gpuarray(value):
        _array_types.add(type(value))
        return value.dtype, value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return type(value[()]), value[()]
    operand = _foreign(value, handle)
    return operand.dtype, operand


def _foreign(value: Any, handle: int) -> interop.DeviceOperand:
    """Another library's GPU array, read in place, after its producer's pending work."""
    operand = interop.device_operand(value, handle)
    if operand is None:
        raise TypeError(
            f"{type(value).__name__} is not a GPU array or a scalar: copy host data to "
            f"the GPU first (pyctk.gpuarray.to_gpu(x))"
        )
    if operand.stream is not None:
        streams.wait(handle, operand.stream)
    return operand


_POINTER = operator.attrgetter("ptr")


def _layout(array: Any) -> tuple[int, tuple[int, ...], tuple[int, ...], int]:
    """(address, shape, byte strides, itemsize) of a GPUArray or a DeviceOperand."""
    if isinstance(array, interop.DeviceOperand):
        return array.pointer, array.shape, array.strides, array.dtype.itemsize
    return array.ptr, array.shape, array.strides, array.dtype.itemsize


# -- plans: what one operation on given dtypes compiles to ------------------------------


class _Plan:
    """An operation on given operand dtypes: the loop's types, the result dtypes, how
    scalars are passed, and its kernels (the contiguous one, and strided ones by layout)."""

    __slots__ = ("operation", "inputs", "results", "outputs", "arrays", "slots", "scalars", "contiguous")

    def __init__(self, operation: Operation, keys: tuple, outs: tuple | None) -> None:
        loop_inputs, results = operation.rule(tuple(_rule_dtype(k) for k in keys))
        outputs = results if outs is None else outs
        for result, out in zip(results, outputs):
            if not np.can_cast(result, out, "same_kind"):
                raise TypeError(
                    f"Cannot cast ufunc {operation.name!r} output from {result!r} to {out!r} "
                    f"with casting rule 'same_kind'"
                )
        for dtype in (*loop_inputs, *outputs, *[k for k in keys if isinstance(k, np.dtype)]):
            _ctype(dtype, operation)
        arrays = [isinstance(k, np.dtype) for k in keys]
        # (parameter dtype, loop dtype, is an array): an array is converted in the kernel,
        # a scalar on the host, into the loop's dtype
        self.inputs = tuple((k if array else loop, loop, array) for k, loop, array in zip(keys, loop_inputs, arrays))
        self.operation, self.results, self.outputs = operation, tuple(results), tuple(outputs)
        self.arrays = [index for index, array in enumerate(arrays) if array]
        self.slots = [len(outputs) + index for index in self.arrays]  # their kernel parameters
        self.scalars = [
            (index, _converter(loop, operation, index))
            for index, (loop, array) in enumerate(zip(loop_inputs, arrays))
            if not array
        ]
        self.contiguous = _kernel(operation, self.inputs, self.results, self.outputs, 0, False)

    def strided(self, axes: int, wide: bool) -> Kernel:
        return _kernel(self.operation, self.inputs, self.results, self.outputs, axes, wide)


_plans: dict[tuple, _Plan] = {}  # (operation, out's dtype or None, *operand keys) -> plan


def _rule_dtype(key: Any) -> Any:
    """What NumPy's promotion takes for an operand key: Python int, float, complex stay
    types (weak); Python bool is NumPy's bool."""
    return key if key in _WEAK else np.dtype(key)


def _ctype(dtype: np.dtype, operation: Operation) -> str:
    try:
        return dtype_to_ctype(dtype)
    except ValueError:
        raise TypeError(
            f"{operation.name} here reads or computes {dtype} (by NumPy's dtype rules), which "
            f"pyctk's kernels lack: convert the operands first, e.g. x.astype(numpy.float32)"
        ) from None


def _converter(dtype: np.dtype, operation: Operation, index: int) -> Callable[[Any], Any]:
    """How a scalar operand becomes a kernel argument of ``dtype`` (what ``struct`` packs)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return functools.partial(
            _integer, low=int(info.min), high=int(info.max), dtype=dtype, exponent=index == operation.integer_exponent
        )
    if dtype.kind == "c":
        return lambda value, kind=dtype.type: kind(value).tobytes()
    if dtype == np.float32:
        return np.float32  # NumPy's rounding, and its inf (and RuntimeWarning) beyond float32's range
    return bool if dtype.kind == "b" else float


def _integer(value: Any, low: int, high: int, dtype: np.dtype, exponent: bool) -> int:
    value = int(value)
    if exponent and value < 0 and low < 0:  # (an unsigned loop: out of bounds, as NumPy says)
        raise ValueError("Integers to negative integer powers are not allowed.")
    if not low <= value <= high:
        raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
    return value


def _holding(value: int) -> type:
    """The NumPy scalar type that holds Python int ``value`` (exactly, up to 64 bits): for
    comparisons of integer arrays, which NumPy answers for any int (``uint8_array < 300``)."""
    if -(2**63) <= value < 2**63:
        return np.int64
    return np.uint64 if 0 <= value < 2**64 else np.float64


# -- kernels ---------------------------------------------------------------------------------


@functools.cache
def _kernel(operation: Operation, inputs: tuple, results: tuple, outputs: tuple, axes: int, wide: bool) -> Kernel:
    """The kernel of ``operation`` reading ``inputs`` ((parameter dtype, loop dtype, is an
    array) each) into ``outputs``: every array indexed by ``i`` (``axes == 0``), or through
    ``axes`` axes of a layout (byte strides; ``wide``: index arithmetic in 64 bits)."""
    source, name, codes = _source(operation, inputs, results, outputs, axes, wide)
    return Kernel(source, name, codes)


def _source(
    operation: Operation, inputs: tuple, results: tuple, outputs: tuple, axes: int, wide: bool
) -> tuple[str, str, list[str]]:
    """(CUDA source, kernel name, ``struct`` codes of its parameters) of ``_kernel``."""
    strided = axes > 0
    arrays = len(outputs) + sum(array for _, _, array in inputs)  # the outputs first
    name = "_".join(
        [
            "pyctk",
            operation.name,
            *[("" if array else "s") + param.str[1:] for param, _, array in inputs],
            "to",
            *[out.str[1:] for out in outputs],
        ]
    ) + (f"_strided{axes}{'w' * wide}" if strided else "")
    params, codes, scalars, loads, lvalues = [], [], [], [], []
    for k, out in enumerate(outputs):
        ctype = dtype_to_ctype(out)
        params.append(f"char *o{k}" if strided else f"{ctype} *o{k}")
        lvalues.append(f"*({ctype} *) (o{k} + off[{k}])" if strided else f"o{k}[i]")
        codes.append("P")
    array = len(outputs)
    for j, (param, loop, is_array) in enumerate(inputs):
        ctype, loop_ctype = dtype_to_ctype(param), dtype_to_ctype(loop)
        if is_array:
            params.append(f"const char *a{j}" if strided else f"const {ctype} *a{j}")
            load = f"*(const {ctype} *) (a{j} + off[{array}])" if strided else f"a{j}[i]"
            loads.append((loop_ctype, f"v{j}", _converted(load, param, loop)))
            codes.append("P")
            array += 1
        else:
            params.append(f"{loop_ctype} s{j}")
            scalars.append(f"  const {loop_ctype} v{j} = s{j};\n")
            codes.append(f"{loop.itemsize}s" if loop.kind == "c" else loop.char)
    first = inputs[0][1]
    template = operation.template_for(first.kind)
    names = {f"o{k}": lvalue for k, lvalue in enumerate(lvalues)}
    # contiguous: an array's value is element u of the thread's ELEMENTS, loaded before any store
    values = [f"v{j}" if strided or not is_array else f"v{j}[u]" for j, (_, _, is_array) in enumerate(inputs)]
    expression = template.format(*values, f="f" if first == np.float32 else "", **names)
    statement = expression if len(outputs) > 1 else f"{lvalues[0]} = {_converted(expression, results[0], outputs[0])}"
    layout = ""
    if strided:
        index = "size_t" if wide else "unsigned"
        layout = f"struct {name}_layout {{ long shape[{axes}]; long strides[{arrays}][{axes}]; }};\n"
        params.append(f"{name}_layout l")
        codes.append(f"{8 * axes * (1 + arrays)}s")
        offsets = (
            f"    {index} rest = ({index}) i;\n"
            f"    long off[{arrays}] = {{}};\n"
            f"#pragma unroll\n"
            f"    for (int axis = {axes} - 1; axis >= 0; --axis) {{\n"
            f"      const long k = (long) (rest % ({index}) l.shape[axis]);\n"
            f"      rest /= ({index}) l.shape[axis];\n"
            f"#pragma unroll\n"
            f"      for (int j = 0; j < {arrays}; ++j) off[j] += k * l.strides[j][axis];\n"
            f"    }}\n"
        )
    codes.append("Q")
    dtypes = [d for param, loop, _ in inputs for d in (param, loop)] + [*results, *outputs]
    is_complex = needs_complex(dtypes=dtypes)
    head = f'extern "C" __global__ void {name}({", ".join(params)}, unsigned long n)\n{{\n{"".join(scalars)}'
    if strided:
        body = (
            f"{head}"
            f"  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;\n"
            f"       i += (size_t) gridDim.x * blockDim.x) {{\n"
            f"{offsets}"
            + "".join(f"    const {ctype} {value} = {load};\n" for ctype, value, load in loads)
            + f"    {statement};\n  }}\n}}\n"
        )
    else:
        body = head + _elements_loop(loads, statement)
    header = COMPLEX_HEADER if is_complex else ""
    return header + _helpers(body, is_complex) + layout + body, name, codes


ELEMENTS = 4  # elements a thread takes at a time in a contiguous kernel, all loaded before any store


def _elements_loop(loads: list[tuple[str, str, str]], statement: str) -> str:
    """The contiguous kernel's loop: ELEMENTS elements a thread, blockDim apart, every load
    before any store. Its loads need not wait for the previous element's store (the compiler
    may not move them past it: the output may be an input, element for element), which keeps
    enough bytes in flight for an H200's memory (docs/kernel-log.md, gpuarray steps 5-8). Operands that
    overlap the output otherwise were copied first (``_apart``), so the order changes nothing."""
    declared = "".join(f"    {ctype} {value}[ELEMENTS];\n" for ctype, value, _ in loads)
    assigned = " ".join(f"{value}[u] = {load};" for _, value, load in loads)
    return (
        f"  enum {{ ELEMENTS = {ELEMENTS} }};\n"
        f"  const size_t step = (size_t) gridDim.x * blockDim.x * ELEMENTS;\n"
        f"  for (size_t first = blockIdx.x * (size_t) blockDim.x * ELEMENTS + threadIdx.x; first < n;\n"
        f"       first += step) {{\n" + declared + f"#pragma unroll\n"
        f"    for (int u = 0; u < ELEMENTS; ++u) {{\n"
        f"      const size_t i = first + (size_t) u * blockDim.x;\n"
        f"      if (i < n) {{ {assigned} }}\n"
        f"    }}\n"
        f"#pragma unroll\n"
        f"    for (int u = 0; u < ELEMENTS; ++u) {{\n"
        f"      const size_t i = first + (size_t) u * blockDim.x;\n"
        f"      if (i < n) {{ {statement}; }}\n"
        f"    }}\n  }}\n}}\n"
    )


def _converted(expression: str, source: np.dtype, target: np.dtype) -> str:
    """C for ``expression`` (of dtype ``source``) as a value of ``target``, NumPy's way."""
    if source == target:
        return expression
    if target.kind == "b":
        return f"pyctk_nonzero({expression})"
    return f"({dtype_to_ctype(target)}) ({expression})"


def _helpers(body: str, is_complex: bool) -> str:
    """The device functions ``body`` calls, and those they call, in ``_HELPERS``' order."""
    chosen: list[str] = []
    for name, real, complex_part in reversed(_HELPERS):
        if f"{name}(" in body or any(f"{name}(" in text for text in chosen):
            chosen.insert(0, real + (complex_part if is_complex else ""))
    return "".join(chosen)


# -- the engine --------------------------------------------------------------------------------


def apply(
    operation: Operation, values: Sequence[Any], out: Any = None, stream: Any = None, allocator: Any = None
) -> Any:
    """Run ``operation`` over ``values`` (GPUArrays, other libraries' GPU arrays, scalars),
    broadcast together; the result is ``out`` or new arrays (one, or a tuple for several
    outputs) made like the first GPUArray operand (``allocator``: from it instead).

    Errors come before any GPU work: NumPy's TypeError for dtypes it has no loop for or an
    ``out`` it cannot cast to, ValueError for shapes that do not broadcast, OverflowError
    for Python ints out of bounds, TypeError for host arrays.
    """
    layouts = _layouts(operation, values) if out is None and stream is None and allocator is None else None
    if layouts is not None:
        kept = _kept.get(layouts)
        result = None if kept is None else kept.run(values)
        if result is not None:
            return result
    handle = 0 if stream is None else stream_handle(stream)
    keys, operands, template = _operands(values, handle)
    if out is not None and not _is_gpuarray(out):
        raise TypeError(f"out must be a GPUArray, not {type(out).__name__}")
    key = (operation, None if out is None else out.dtype, *keys)
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = _Plan(operation, tuple(keys), None if out is None else (out.dtype,))
    arguments = operands
    if plan.scalars:
        arguments = list(operands)
        for index, convert in plan.scalars:
            try:
                arguments[index] = convert(operands[index])
            except OverflowError:
                if (
                    operation not in _COMPARISONS
                    or keys[index] is not int
                    or not all(k.kind in "iu" for k in keys if isinstance(k, np.dtype))
                ):
                    raise
                held = _holding(operands[index])(operands[index])  # NumPy compares integers with any int
                return apply(operation, [*values[:index], held, *values[index + 1 :]], out, stream, allocator)
    shape = template.shape
    for index in plan.arrays:
        if operands[index].shape != shape:
            shape = broadcast_shapes(*[operands[index].shape for index in plan.arrays])
            break
    if out is None:
        outputs = [_new(template, shape, dtype, allocator) for dtype in plan.outputs]
    else:
        shape = _output_shape(out.shape, shape)
        outputs = [out]
        arguments = list(arguments)
        for index in plan.arrays:
            arguments[index] = _apart(operands[index], out, shape, template, handle)
    n = outputs[0].size
    grid = _launch(plan, outputs, arguments, shape, n, handle) if n else None
    if grid and layouts is not None and operands is values and shape == template.shape and len(outputs) == 1:
        if len(_kept) >= _KEPT:
            _kept.clear()
        _kept[layouts] = _Kept(plan, values, template, *grid, n)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


# -- kept launches -----------------------------------------------------------------------------
#
# An operation on new results whose operands have layouts met before (GPUArrays of the same types,
# dtypes, shapes and strides, scalars of the same types), launched then as one contiguous kernel,
# is launched as it was: what ``apply`` decided is a function of those layouts alone, and deciding
# it again was 8-10% of a small operation's host time (a + b on 1000 float32: 4.1 us against 3.8
# on a 2-core host with the driver's launch stubbed out; docs/kernel-log.md, step 13).

_KEPT = 1024  # layouts kept: past this they start again


class _Kept:
    """A launch kept for ``apply``'s operands of one layout (an operation of one result):
    ``run`` makes the result and launches the contiguous kernel, with what was decided then
    fixed here."""

    __slots__ = ("kernel", "converts", "make", "template", "dtype", "blocks", "threads", "n")

    def __init__(self, plan: _Plan, values: Sequence[Any], template: Any, blocks: int, threads: int, n: int) -> None:
        (self.dtype,) = plan.outputs
        self.kernel, self.blocks, self.threads, self.n = plan.contiguous, blocks, threads, n
        scalars = dict(plan.scalars)
        # each operand's converter, None for an array; None for them all where all are arrays
        self.converts = tuple(scalars.get(index) for index in range(len(values))) if scalars else None
        self.template = _index_of(template, values)  # the operand the result is made like
        # (the function itself: the template's type is in the key)
        kind = type(template)
        self.make = kind._same_layout if template._keeps_layout(self.dtype) else kind._new_like_me

    def run(self, values: Sequence[Any]) -> Any:
        """``apply``'s result for ``values`` of these layouts, or None where a scalar does not
        fit the loop's dtype (``apply`` says what NumPy does then)."""
        # (.ptr without its property: these arrays are not empty, so gpudata is their memory)
        if self.converts is None:  # (a + b: the common case, 0.15 us sooner)
            arguments = [int(value.gpudata) for value in values]
        else:
            try:
                arguments = [
                    int(value.gpudata) if convert is None else convert(value)
                    for convert, value in zip(self.converts, values)
                ]
            except OverflowError:
                return None
        result = self.make(values[self.template], self.dtype)
        self.kernel(self.blocks, self.threads, 0, int(result.gpudata), *arguments, self.n)
        return result


_kept: dict[tuple, _Kept] = {}


def _index_of(array: Any, values: Sequence[Any]) -> int:
    """Where ``array`` itself is in ``values`` (``list.index`` would compare arrays by value)."""
    return next(index for index, value in enumerate(values) if value is array)


def _layouts(operation: Operation, values: Sequence[Any]) -> tuple | None:
    """``_kept``'s key of ``operation`` on ``values``: each GPUArray's type, dtype, shape and
    strides, each scalar's type; None where another operand (another library's array, a 0-d
    host array) leaves it to ``apply``."""
    key = [operation]
    for value in values:
        kind = type(value)
        if kind in _array_types:
            key += kind, value.dtype, value.shape, value.strides
        elif kind in _SCALARS or issubclass(kind, np.generic):
            key.append(kind)
        else:
            return None
    return tuple(key)


def _new(template: Any, shape: tuple[int, ...], dtype: np.dtype, allocator: Any) -> Any:
    """A new result: like ``template`` where it has the result's shape (its memory order)."""
    if allocator is not None:
        return type(template)(shape, dtype, allocator)
    return template._new_like_me(dtype) if shape == template.shape else template._new(shape, dtype)


def _output_shape(out: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """``out``'s shape, which the operands' broadcast ``shape`` must broadcast to (NumPy's rule)."""
    try:
        full = broadcast_shapes(out, shape)
    except ValueError:
        full = shape
    if full != out:
        raise ValueError(
            f"non-broadcastable output operand with shape {shape_text(out)} doesn't match "
            f"the broadcast shape {shape_text(full)}"
        )
    return out


def _apart(operand: Any, out: Any, shape: tuple[int, ...], template: Any, handle: int) -> Any:
    """``operand``, or a copy of it where it overlaps ``out`` other than element for element
    (``x[1:] += x[:-1]``): NumPy reads operands as if copied before it writes."""
    if operand is out:
        return operand
    pointer, own, strides, itemsize = _layout(operand)
    low, high = extent(pointer, own, strides, itemsize)
    out_low, out_high = extent(out.ptr, out.shape, out.strides, out.itemsize)
    if not (low < out_high and out_low < high):
        return operand
    steps = broadcast_strides(own, strides, shape)
    if (
        pointer == out.ptr
        and itemsize == out.itemsize
        and all(a == b for a, b, length in zip(steps, out.strides, shape) if length > 1)
    ):
        return operand  # out's own elements, each read before it is written
    copy = template._new(own, operand.dtype)
    copying.copy_strided(copy.ptr, copy.strides, pointer, strides, own, itemsize, handle)
    return copy


def _same_order(flags: Any, contiguous: Any) -> bool:
    """Whether an array of ``flags`` is contiguous in the memory order of a contiguous array."""
    return flags.c_contiguous if contiguous.c_contiguous else flags.f_contiguous


def _launch(
    plan: _Plan, outputs: list[Any], arguments: Sequence[Any], shape: tuple[int, ...], n: int, handle: int
) -> tuple[int, int] | None:
    """Launch ``plan``'s kernel over ``n`` elements: the contiguous one where every array
    walks its memory in order with the outputs, else a strided one. The grid (blocks,
    threads) where it was the contiguous one for the arrays' layouts as they are (not
    merged), else None."""
    values = [*map(_POINTER, outputs), *arguments]  # the kernel's parameters, in order
    first = outputs[0]
    if first.flags.forc:
        strides = first.strides
        for slot in plan.slots:
            array = values[slot]
            # the output's strides: its layout (the usual case); else the same memory order
            if (
                type(array) not in _array_types
                or array.shape != shape
                or (array.strides != strides or array.itemsize != first.itemsize)
                and not _same_order(array.flags, first.flags)
            ):
                break
            values[slot] = array.ptr
        else:
            grid = geometry(-(-n // ELEMENTS))  # ELEMENTS a thread
            plan.contiguous(*grid, handle, *values, n)
            return grid
    layouts = [*map(_layout, outputs), *[_layout(arguments[index]) for index in plan.arrays]]
    lengths, merged = copying.merged_axes(
        shape, [broadcast_strides(own, strides, shape) for _, own, strides, _ in layouts]
    )
    for slot, layout in zip(range(len(outputs)), layouts):
        values[slot] = layout[0]
    for slot, layout in zip(plan.slots, layouts[len(outputs) :]):
        values[slot] = layout[0]
    if len(lengths) <= 1 and all(not m or m[0] == layout[3] for m, layout in zip(merged, layouts)):
        plan.contiguous(*geometry(-(-n // ELEMENTS)), handle, *values, n)
        return None
    if len(lengths) > copying.MAX_AXES:
        raise ValueError(
            f"an operation over {len(lengths)} axes that cannot be merged; pyctk takes up to "
            f"{copying.MAX_AXES}: make an operand contiguous first (x.copy())"
        )
    layout = np.array([lengths, *merged], dtype=np.int64).tobytes()
    blocks, threads = geometry(n)
    plan.strided(len(lengths), n >= 2**32)(blocks, threads, handle, *values, layout, n)
    return None


# -- PyCUDA's functions ----------------------------------------------------------------------


def operator_methods(op: str, name: str) -> tuple[Callable[[Any, Any], Any], ...]:
    """GPUArray's methods of Python's operator ``op`` (one of ``BINARY``'s) whose special
    method is ``__{name}__``: ``x OP y``, ``y OP x`` (``__r{name}__``) and ``x OP= y``
    (``__i{name}__``), each calling ``apply`` itself (a small operation's host time is a few
    dozen Python steps: each one between the operator and ``apply`` counts)."""
    operation = BINARY[op]

    def method(self: Any, other: Any) -> Any:
        return apply(operation, (self, other))

    def reflected(self: Any, other: Any) -> Any:
        return apply(operation, (other, self))

    def in_place(self: Any, other: Any) -> Any:
        return apply(operation, (self, other), self)

    what = (
        "element by element: a bool array, as NumPy's (PyCUDA's has the operands' dtype)"
        if operation in _COMPARISONS
        else "element by element, with NumPy's dtypes and broadcasting (PyCUDA's broadcasts only "
        "scalars and 0-d arrays)"
    )
    for function, prefix, text, note in (
        (method, "", f"x {op} y", what),
        (reflected, "r", f"y {op} x", "for ``y`` a scalar, a host scalar array or another library's GPU array"),
        (in_place, "i", f"x {op}= y", "in place: the result cast into ``x`` as NumPy's ``same_kind`` rule allows"),
    ):
        function.__name__ = function.__qualname__ = f"__{prefix}{name}__"
        function.__doc__ = f"``{text}``, {note}."
    return method, reflected, in_place


def unary(op: str, x: Any, out: Any = None, stream: Any = None) -> Any:
    """``-x`` (``op="-"``), ``~x`` (``"~"``: bitwise, logical for bool) or ``abs(x)``
    (``"abs"``: real for complex ``x``), as NumPy's."""
    return apply(UNARY[op], (x,), out, stream)


def matmul(a: Any, b: Any, out: Any = None, stream: Any = None) -> Any:
    """``a @ b`` through ``pyctk.matmul`` (NumPy's matmul: stacks, vectors, dtypes): a new
    GPUArray over the product's memory (no copy), or ``out``.

    >>> from pyctk import gpuarray                                     # doctest: +GPU
    >>> m = gpuarray.to_gpu(np.ones((2, 3), dtype=np.float32))
    >>> matmul(m, m.T).get()
    array([[3., 3.],
           [3., 3.]], dtype=float32)
    """
    for value in (a, b):
        if not _is_gpuarray(value) and interop.device_operand(value) is None:
            raise TypeError(
                f"{type(value).__name__} is not a GPU array: matmul takes arrays on the GPU; "
                f"copy host data first (pyctk.gpuarray.to_gpu(x))"
            )
    template = a if _is_gpuarray(a) else b
    product = _matmul(a, b, out=out, stream=stream)
    if out is not None:
        return out
    operand = interop.device_operand(product)
    result = type(template)(
        operand.shape, operand.dtype, template.allocator, base=product, gpudata=operand.pointer, strides=operand.strides
    )
    result._device_index = operand.device
    return result


def mul_add(
    x: Any, selffac: Any, other: Any, otherfac: Any, add_timer: Any = None, stream: Any = None, out: Any = None
) -> Any:
    """``selffac * x + otherfac * other`` in one kernel (PyCUDA's ``mul_add``); with
    ``add_timer``, ``add_timer(3 * x.size, seconds)`` where ``seconds()`` is the kernel's time."""
    if add_timer is None:
        return apply(_MUL_ADD, (selffac, x, otherfac, other), out, stream)
    start = Event().record(stream)
    result = apply(_MUL_ADD, (selffac, x, otherfac, other), out, stream)
    end = Event().record(stream)
    add_timer(3 * x.size, lambda: end.synchronize().time_since(start) * 1e-3)
    return result


def real(x: Any) -> Any:
    """The real parts of complex ``x`` as a new array; ``x`` itself if it is real."""
    if x.dtype.kind != "c":
        return x
    return x._view(x.shape, x.strides, dtype=np.finfo(x.dtype).dtype).copy()


def imag(x: Any) -> Any:
    """The imaginary parts of complex ``x`` as a new array; zeros like ``x`` if it is real."""
    if x.dtype.kind != "c":
        return x._new_like_me().fill(0)
    part = np.finfo(x.dtype).dtype
    return x._view(x.shape, x.strides, part.itemsize, dtype=part).copy()


def conj(x: Any, out: Any = None) -> Any:
    """The complex conjugate of ``x`` (into ``out``); ``x`` itself if it is real."""
    if x.dtype.kind != "c":
        return x
    return apply(_CONJ, (x,), out)


def reverse(x: Any, stream: Any = None) -> Any:
    """A new array of ``x``'s shape with its elements in reverse order, as a 1-D array in
    memory order (PyCUDA's ``reverse``).

    >>> from pyctk import gpuarray                          # doctest: +GPU
    >>> reverse(gpuarray.to_gpu(np.arange(4))).get()
    array([3, 2, 1, 0])
    """
    result = x._new_like_me()
    if x.size:  # every axis reversed: the memory order reversed, whatever the layout
        offset = sum((length - 1) * stride for length, stride in zip(x.shape, x.strides))
        backwards = x._view(x.shape, [-stride for stride in x.strides], offset)
        result._assign(backwards, stream_handle(stream))
    return result


def maximum(a: Any, b: Any, out: Any = None, stream: Any = None) -> Any:
    """The element-wise maximum of ``a`` and ``b``, as NumPy's ``maximum`` (PyCUDA's ``maximum``).

    Unlike PyCUDA's: either operand may be a scalar, they broadcast, the dtype is NumPy's, and
    NaN wins, as in NumPy (``fmax`` would drop it).

    Parameters
    ----------
    a, b : GPUArray or scalar
        At least one a GPUArray (or another library's GPU array).
    out : GPUArray, optional
        Where to put the result.
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([1.0, np.nan, 3.0]))
    >>> gpuarray.maximum(a, 2).get(), gpuarray.minimum(a, 2).get()
    (array([ 2., nan,  3.]), array([ 1., nan,  2.]))
    """
    return apply(_MAXIMUM, (a, b), out, stream)


def minimum(a: Any, b: Any, out: Any = None, stream: Any = None) -> Any:
    """The element-wise minimum of ``a`` and ``b``, as NumPy's ``minimum`` (PyCUDA's ``minimum``).

    Unlike PyCUDA's: either operand may be a scalar, they broadcast, the dtype is NumPy's, and
    NaN wins. See :func:`maximum`.

    Parameters
    ----------
    a, b : GPUArray or scalar
        At least one a GPUArray (or another library's GPU array).
    out : GPUArray, optional
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray
    """
    return apply(_MINIMUM, (a, b), out, stream)


def if_positive(criterion: Any, then_: Any, else_: Any, out: Any = None, stream: Any = None) -> Any:
    """``then_`` where ``criterion > 0``, else ``else_``, element by element (PyCUDA's ``if_positive``).

    Unlike PyCUDA's: ``then_`` and ``else_`` may be scalars, the operands broadcast, and the
    dtype is NumPy's ``result_type(then_, else_)``.

    Parameters
    ----------
    criterion : GPUArray
    then_, else_ : GPUArray or scalar
    out : GPUArray, optional
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([1, 2, 3], dtype=np.float32))
    >>> gpuarray.if_positive(a - 2, a, 0).get()
    array([0., 0., 3.], dtype=float32)
    """
    return apply(_IF_POSITIVE, (criterion, then_, else_), out, stream)


def where(criterion: Any, then_: Any, else_: Any, out: Any = None, stream: Any = None) -> Any:
    """``then_`` where ``criterion`` is nonzero, else ``else_``: NumPy's three-argument ``where``.

    PyCUDA has it too, undocumented; unlike PyCUDA's, ``then_`` and ``else_`` may be scalars,
    the operands broadcast, and the dtype is NumPy's ``result_type(then_, else_)``.

    Parameters
    ----------
    criterion : GPUArray
    then_, else_ : GPUArray or scalar
    out : GPUArray, optional
    stream : pyctk.driver.Stream, optional

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([1, 2, 3], dtype=np.float32))
    >>> gpuarray.where(a > 1, a, -a).get()
    array([-1.,  2.,  3.], dtype=float32)
    """
    return apply(_WHERE, (criterion, then_, else_), out, stream)


def logical_and(x1: Any, x2: Any, out: Any = None, allocator: Any = None) -> Any:
    """``x1 and x2``, element by element, as a bool array (PyCUDA's ``logical_and``).

    As in PyCUDA, either may be a scalar; unlike PyCUDA's, the operands broadcast.

    Parameters
    ----------
    x1, x2 : GPUArray or scalar
    out : GPUArray, optional
    allocator : callable, optional
        Where a new result's memory comes from.

    Returns
    -------
    GPUArray

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> a = gpuarray.to_gpu(np.array([0, 1, 2], dtype=np.int32))
    >>> gpuarray.logical_and(a, a > 1).get()
    array([False, False,  True])
    >>> gpuarray.logical_or(a, 0).get()
    array([False,  True,  True])
    >>> gpuarray.logical_not(a).get()
    array([ True, False, False])
    """
    return apply(_LOGICAL_AND, (x1, x2), out, allocator=allocator)


def logical_or(x1: Any, x2: Any, out: Any = None, allocator: Any = None) -> Any:
    """``x1 or x2``, element by element, as a bool array (PyCUDA's ``logical_or``).

    As in PyCUDA, either may be a scalar; unlike PyCUDA's, the operands broadcast. See
    :func:`logical_and`.

    Parameters
    ----------
    x1, x2 : GPUArray or scalar
    out : GPUArray, optional
    allocator : callable, optional

    Returns
    -------
    GPUArray
    """
    return apply(_LOGICAL_OR, (x1, x2), out, allocator=allocator)


def logical_not(x: Any, out: Any = None, allocator: Any = None) -> Any:
    """``not x``, element by element, as a bool array (PyCUDA's ``logical_not``, the same).

    See :func:`logical_and`.

    Parameters
    ----------
    x : GPUArray
    out : GPUArray, optional
    allocator : callable, optional

    Returns
    -------
    GPUArray
    """
    return apply(_LOGICAL_NOT, (x,), out, allocator=allocator)
