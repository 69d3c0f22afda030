"""GPUArray arithmetic and pyctk.cumath without a GPU.

- Dtypes: every operator and function against NumPy's own result dtype (or its TypeError),
  for arrays of every dtype and for Python and NumPy scalars, in place too.
- Source: every operator row and function, for every dtype, generates kernels that NVRTC's
  front end takes without an error or a warning (the very ``Kernel.source`` the plans
  launch), and one operator's kernels for every dtype compile to sm_90 SASS.
- Layouts: on ``Device``, GPU memory in host memory whose kernels NumPy runs at the offsets
  the launch describes, every result (views with steps, transposes, negative strides,
  broadcasting, 0-d, empty, in place, overlapping ``out``) equals NumPy's, element for
  element: the contiguous/strided choice and the merged layouts are checked by their effect.
- Errors NumPy raises (its types and wording), raised before any GPU work.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pyctk import gpuarray
from pyctk._pycuda.gpuarrays import arithmetic, codegen, copying, cumath, engine, launching, operations
from pyctk._pycuda.kernels import source_modules
from support.gpuarray_cases import DTYPES, IN_PLACE, OPERATORS

BASE = 1 << 24  # the made-up device address of Device's memory
SCALARS = [
    True,
    1,
    1.0,
    1j,
    np.int8(1),
    np.uint16(1),
    np.int64(1),
    np.uint64(1),
    np.float32(1),
    np.float64(1),
    np.complex64(1),
    np.array(1.0),
]
# What NumPy computes for each Operation's name (the emulated kernels' arithmetic).
NUMPY = {
    "where": lambda c, a, b: np.where(c != 0, a, b),
    "if_positive": lambda c, a, b: np.where(c > 0, a, b),
    "mul_add": lambda a, x, b, y: a * x + b * y,
}


def numpy_of(operation: operations.Operation):
    return NUMPY.get(operation.name) or getattr(np, operation.name)


def outcome(function, *args):
    """``function(*args)``'s result dtype, or its exception's (built-in) type: what NumPy and
    pyctk must agree on."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = function(*args)
    except (TypeError, ValueError, OverflowError) as error:
        return type(error).__mro__[[c.__module__ for c in type(error).__mro__].index("builtins")]
    return tuple(r.dtype for r in result) if isinstance(result, tuple) else result.dtype


# --- a GPU in host memory ---------------------------------------------------------------------


class Device:
    """GPU memory in a host buffer and arithmetic's kernels run by NumPy: each launch reads
    its arrays at the byte offsets its layout gives element ``i`` (the kernel's own index
    arithmetic, redone here), computes NumPy's function in the loop's dtypes and writes the
    outputs at theirs. Strided copies and fills are emulated the same way."""

    def __init__(self) -> None:
        self.memory = np.zeros(1 << 22, np.uint8)
        self.used = 0
        self.kernels: dict[launching.Kernel, tuple] = {}  # kernel -> _kernel's arguments
        self.launched: list[str] = []

    def allocate(self, nbytes: int) -> int:
        address = BASE + self.used
        self.used += -(-max(nbytes, 1) // 256) * 256
        assert self.used <= self.memory.size, "Device memory is full: make the test's arrays smaller"
        return address

    def _bytes(self, address: int, offsets: np.ndarray, itemsize: int) -> np.ndarray:
        return (address - BASE + np.asarray(offsets, np.int64))[:, None] + np.arange(itemsize)

    def gather(self, address: int, offsets: np.ndarray, dtype: np.dtype) -> np.ndarray:
        return self.memory[self._bytes(address, offsets, dtype.itemsize)].copy().view(dtype).reshape(-1)

    def scatter(self, address: int, offsets: np.ndarray, values: np.ndarray) -> None:
        values = np.ascontiguousarray(values)
        self.memory[self._bytes(address, offsets, values.dtype.itemsize)] = values.view(np.uint8).reshape(
            len(offsets), values.dtype.itemsize
        )

    @staticmethod
    def offsets(shape, strides) -> np.ndarray:
        """Byte offsets of an array's elements in C order."""
        if not shape:
            return np.zeros(1, np.int64)
        index = np.indices(shape, dtype=np.int64).reshape(len(shape), -1)
        return (index * np.array(strides, np.int64)[:, None]).sum(axis=0)

    def put(self, host: np.ndarray) -> gpuarray.GPUArray:
        array = gpuarray.GPUArray(host.shape, host.dtype, allocator=self.allocate)
        self.write(array, host)
        return array

    def write(self, array: gpuarray.GPUArray, host: np.ndarray) -> None:
        if array.size:
            self.scatter(array.ptr, self.offsets(array.shape, array.strides), host.astype(array.dtype).reshape(-1))

    def read(self, array: gpuarray.GPUArray) -> np.ndarray:
        if not array.size:
            return np.empty(array.shape, array.dtype)
        return self.gather(array.ptr, self.offsets(array.shape, array.strides), array.dtype).reshape(array.shape)

    def launch(self, kernel: launching.Kernel, blocks: int, threads: int, stream: int, *args, shared: int = 0):
        operation, inputs, results, outputs, axes, _ = self.kernels[kernel]
        self.launched.append(kernel.name)
        *values, n = args
        arrays = [out for out in outputs] + [param for param, _, array in inputs if array]
        if axes:
            *values, layout = values
            table = np.frombuffer(layout, np.int64).reshape(-1, axes)
            index = np.unravel_index(np.arange(n), table[0])  # the last axis fastest, as the kernel
            offsets = [sum(i * s for i, s in zip(index, strides)) for strides in table[1:]]
        else:
            offsets = [np.arange(n, dtype=np.int64) * dtype.itemsize for dtype in arrays]
        assert len(offsets) == len(arrays)
        pointers, operands, k = values[: len(outputs)], [], len(outputs)
        for value, (param, loop, array) in zip(values[len(outputs) :], inputs):
            if array:
                operands.append(self.gather(value, offsets[k], param).astype(loop))
                k += 1
            else:
                operands.append(np.frombuffer(value, loop) if isinstance(value, bytes) else np.array([value], loop))
        with np.errstate(all="ignore"):
            result = numpy_of(operation)(*operands)
        for j, (pointer, result_dtype, out) in enumerate(zip(pointers, results, outputs)):
            part = result[j] if len(outputs) > 1 else result
            assert part.dtype == result_dtype
            self.scatter(pointer, offsets[j], np.broadcast_to(part, (n,)).astype(out))

    def copy_strided(self, dst, dst_strides, src, src_strides, shape, itemsize, stream) -> None:
        if 0 not in shape:
            kind = np.dtype(f"V{itemsize}")
            self.scatter(
                dst, self.offsets(shape, dst_strides), self.gather(src, self.offsets(shape, src_strides), kind)
            )

    def fill(self, dst, value: bytes, n: int, stream) -> None:
        self.scatter(dst, np.arange(n) * len(value), np.frombuffer(value * n, f"V{len(value)}"))


@pytest.fixture
def device(monkeypatch):
    """Device, with arithmetic's plans and kept launches started afresh (so that every kernel
    is known to it)."""
    dev = Device()
    install(monkeypatch, dev)
    return dev


def install(patch, device: Device) -> None:
    """Run arithmetic's launches, strided copies and fills on ``device``."""
    original = codegen.kernel

    def registering(*key):
        kernel = original(*key)
        device.kernels[kernel] = key
        return kernel

    patch.setattr(engine, "kernel", registering)
    patch.setattr(engine, "_plans", {})
    patch.setattr(engine, "_kept", {})
    patch.setattr(engine, "geometry", lambda n: (1, 1))
    patch.setattr(launching.Kernel, "__call__", lambda kernel, *args, **kwargs: device.launch(kernel, *args, **kwargs))
    patch.setattr(copying, "copy_strided", device.copy_strided)
    patch.setattr(copying, "fill", device.fill)


def sample(dtype: np.dtype, shape, seed: int = 0) -> np.ndarray:
    """Small exact values of ``dtype`` (nonzero where division would make NumPy warn)."""
    rng = np.random.default_rng(seed)
    low = 0 if dtype.kind in "bu" else -4
    values = rng.integers(low, 2 if dtype.kind == "b" else 5, size=shape)
    if dtype.kind == "c":
        values = values + 1j * rng.integers(-4, 5, size=shape)
    return values.astype(dtype)


# --- dtypes: NumPy's ----------------------------------------------------------------------------


@pytest.mark.parametrize("op", list(OPERATORS))
def test_array_dtypes_are_numpys(device, op):
    function = OPERATORS[op]
    for left in DTYPES:
        for right in DTYPES:
            a, b = np.ones(2, left), np.ones(2, right)
            assert outcome(function, device.put(a), device.put(b)) == outcome(function, a, b), (left, right)


@pytest.mark.parametrize("op", list(OPERATORS))
def test_scalar_dtypes_are_numpys_both_ways(device, op):
    function = OPERATORS[op]
    for dtype in DTYPES:
        a = np.ones(2, dtype)
        x = device.put(a)
        # (NumPy before 2.3 gives array ** scalar a fast path of its own for exponents such as 1
        # and 2, which keeps float32 where the ufunc, np.power, promotes: the ufunc is the rule.)
        host = np.power if op == "**" else function
        for scalar in SCALARS:
            assert outcome(function, x, scalar) == outcome(host, a, scalar), (dtype, scalar)
            assert outcome(function, scalar, x) == outcome(host, scalar, a), (scalar, dtype)


@pytest.mark.parametrize("op", list(IN_PLACE))
def test_in_place_casts_as_numpys_same_kind(device, op):
    function = IN_PLACE[op]
    for left in DTYPES:
        for right in [*DTYPES, 1, 1.0, 1j]:
            a = np.ones(2, left)
            b = np.ones(2, right) if isinstance(right, np.dtype) else right
            expected = outcome(function, a.copy(), b)
            got = outcome(function, device.put(a), device.put(b) if isinstance(b, np.ndarray) else b)
            assert got == expected, (left, right)


def test_in_place_refusal_has_numpys_words(device):
    x = device.put(np.ones(3, np.int64))
    with pytest.raises(TypeError) as numpy_error:
        a = np.ones(3, np.int64)
        a += 1.5
    with pytest.raises(TypeError) as error:
        x += 1.5
    assert str(error.value) == str(numpy_error.value)


def test_unary_and_function_dtypes_are_numpys(device):
    for dtype in DTYPES:
        a = np.ones(2, dtype)
        x = device.put(a)
        for function in (operator.neg, operator.invert, abs):
            assert outcome(function, x) == outcome(function, a), (function, dtype)
        for name in ("maximum", "minimum", "logical_and", "logical_or"):
            ours, numpys = getattr(arithmetic, name), getattr(np, name)
            for other in (2, 2.5):
                assert outcome(ours, x, other) == outcome(numpys, a, other), (name, dtype, other)
                assert outcome(ours, other, x) == outcome(numpys, other, a), (name, other, dtype)
            assert outcome(ours, x, x) == outcome(numpys, a, a), (name, dtype)
        assert outcome(arithmetic.logical_not, x) == np.dtype(bool)
        for then_, else_ in [(2, 3.5), (2.5, np.float32(2)), (1j, 2)]:
            expected = np.where(a != 0, a, else_).dtype, np.where(a != 0, then_, a).dtype
            assert (outcome(arithmetic.where, x, x, else_), outcome(arithmetic.if_positive, x, then_, x)) == expected


@pytest.mark.parametrize("name", list(cumath.FUNCTIONS))
def test_cumath_dtypes_are_numpys(device, name):
    for dtype in DTYPES:
        a = np.ones(2, dtype)
        expected = outcome(cumath.FUNCTIONS[name], a)
        if expected == np.float16:  # NumPy's float16 results: pyctk's kernels have no float16
            with pytest.raises(TypeError, match="float16"):
                getattr(cumath, name)(device.put(a))
        else:
            assert outcome(getattr(cumath, name), device.put(a)) == expected, dtype


def test_cumath_pairs_and_parts_dtypes_are_numpys(device):
    for dtype in DTYPES:
        a = np.ones(2, dtype)
        x = device.put(a)
        exponents = np.ones(2, np.int64)
        for name, other, host_other in [
            ("frexp", (), ()),
            ("modf", (), ()),
            ("fmod", (x,), (a,)),
            ("fmod", (3,), (3,)),
            ("ldexp", (3,), (3,)),
            ("ldexp", (device.put(exponents),), (exponents,)),
        ]:
            expected = outcome(getattr(np, name), a, *host_other)
            if expected in (np.float16, (np.float16, np.float16), (np.float16, np.int32)):
                continue  # refused (float16), as above
            assert outcome(getattr(cumath, name), x, *other) == expected, (name, dtype)


def test_comparisons_with_any_python_int_are_numpys(device):
    for dtype in DTYPES[:9]:
        a = np.arange(3).astype(dtype)
        x = device.put(a)
        for value in (300, -1, -300, 2**63, -(2**63) - 1, 2**64, 2**70):
            for op in ("==", "!=", "<", "<=", ">", ">="):
                expected = outcome(OPERATORS[op], a, value)  # (bool arrays: OverflowError)
                assert outcome(OPERATORS[op], x, value) == expected, (dtype, value, op)
                if expected == np.bool_:
                    assert (device.read(OPERATORS[op](x, value)) == OPERATORS[op](a, value)).all()


# --- source: every row, every dtype, through NVRTC ----------------------------------------------


def compile_all(sources: set[str], to_sass: bool = False) -> None:
    """Compile ``sources`` together (each in a namespace of its own), warnings as errors.

    NVRTC's front end (``-fdevice-syntax-only``) reports every error and warning that the
    source can have, types and template instantiation included, 50 times faster than a
    compile to SASS; what only the back end could refuse is checked with ``to_sass``. The
    header with every device function the sources call is included once, before the
    namespaces (a header is read once per compile: inside the first namespace it would be
    no other's), in place of each source's own.
    """
    bodies = [
        "".join(f"{line}\n" for line in s.splitlines() if not line.startswith("#include")) for s in sorted(sources)
    ]
    text = "#include <pyctk-elementwise-complex.cuh>\n" + "".join(
        f"namespace source{k} {{\n{body}}}\n" for k, body in enumerate(bodies)
    )
    front_end = {} if to_sass else {"options": ["-fdevice-syntax-only"], "target": "ptx"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        source_modules.compile(text, no_extern_c=True, arch="sm_90", cache_dir=False, **front_end)


def plan_sources(operation, key_sets, strided: bool = True) -> set[str]:
    sources = set()
    for keys in key_sets:
        try:
            plan = engine._Plan(operation, tuple(keys), None)
        except TypeError:  # NumPy has no loop (or only float16's)
            continue
        sources.add(plan.contiguous.source)
        if strided:
            sources.update({plan.strided(2, False).source, plan.strided(1, True).source})
    return sources


SCALAR_KEYS = [bool, int, float, complex, np.int64, np.float32]


@pytest.mark.parametrize("op", list(OPERATORS))
def test_every_operator_compiles_for_every_dtype(op):
    operation = operations.BINARY[op]
    same = [(d, d) for d in DTYPES]
    mixed = [(a, b) for a in DTYPES for b in DTYPES if a != b]
    scalar = [(d, s) for d in DTYPES for s in SCALAR_KEYS] + [(s, d) for d in DTYPES for s in SCALAR_KEYS]
    sources = plan_sources(operation, same) | plan_sources(operation, mixed + scalar, strided=False)
    assert len(sources) > 3 * len(DTYPES) // 2
    compile_all(sources)


def test_one_operator_compiles_to_sass_for_every_dtype():
    """The back end too (NVVM and ptxas), for the loop every kernel shares, over every dtype."""
    operation = operations.BINARY["+"]
    compile_all(plan_sources(operation, [(d, d) for d in DTYPES]), to_sass=True)


@pytest.mark.parametrize("op", list(IN_PLACE))
def test_every_in_place_cast_compiles(op):
    sources = set()
    for left in DTYPES:
        for right in [*DTYPES, int, float, complex]:
            try:
                plan = engine._Plan(operations.BINARY[op], (left, right), (left,))
            except TypeError:  # NumPy refuses the cast (or has no loop)
                continue
            sources.add(plan.contiguous.source)
    compile_all(sources)


def test_unary_operators_and_functions_compile_for_every_dtype():
    rows = [
        *operations.UNARY.values(),
        operations.LOGICAL_NOT,
        *[cumath._operation(name) for name in cumath.FUNCTIONS],
        operations.FREXP,
        operations.MODF,
    ]
    sources = set().union(*[plan_sources(o, [(d,) for d in DTYPES]) for o in rows])
    compile_all(sources | plan_sources(operations.CONJ, [(d,) for d in DTYPES if d.kind == "c"]))


def test_binary_functions_compile_for_every_dtype():
    rows = [
        operations.MAXIMUM,
        operations.MINIMUM,
        operations.LOGICAL_AND,
        operations.LOGICAL_OR,
        operations.FMOD,
        operations.LDEXP,
    ]
    keys = [(d, d) for d in DTYPES] + [(d, int) for d in DTYPES] + [(d, np.dtype(np.int64)) for d in DTYPES]
    compile_all(set().union(*[plan_sources(o, keys) for o in rows]))


def test_ternary_functions_compile_for_every_dtype():
    keys = [(c, d, d) for c in DTYPES for d in DTYPES] + [(d, d, float) for d in DTYPES]
    sources = plan_sources(operations.WHERE, keys, strided=False) | plan_sources(operations.IF_POSITIVE, keys)
    sources |= plan_sources(operations.MUL_ADD, [(float, d, int, d) for d in DTYPES] + [(d, d, d, d) for d in DTYPES])
    compile_all(sources)


def test_complex_pow_and_mixed_comparisons_are_in_the_source():
    power = engine._Plan(operations.BINARY["**"], (DTYPES[11], DTYPES[11]), None).contiguous.source
    assert "pyctk_cpow(" in power and "#include <pyctk-elementwise-complex.cuh>" in power
    less = engine._Plan(operations.BINARY["<"], (np.dtype(np.int64), np.dtype(np.uint64)), None)
    assert "long v0[ELEMENTS]" in less.contiguous.source and "unsigned long v1[ELEMENTS]" in less.contiguous.source
    sin = engine._Plan(cumath._operation("sin"), (np.dtype(np.float32),), None).contiguous.source
    assert "sinf(v0[u])" in sin and "complex" not in sin


# --- layouts, by their results ---------------------------------------------------------------


@st.composite
def layouts(draw, ndim):
    """How a view lies over its base: an axis order, and a step along each axis (negative ones too)."""
    return draw(st.permutations(range(ndim))), [draw(st.sampled_from([1, 1, 2, -1, -2])) for _ in range(ndim)]


def laid_out(layout, shape, dtype, device, seed):
    """(host view, the same view of a GPUArray on device) of ``shape``, as ``layout`` says: a
    transposed base, sliced with steps. Made by the test from drawn layouts, not drawn: data
    generation that runs pyctk could draw differently on a replay (hypothesis's "inconsistent
    data generation", seen once on PyPy)."""
    order, steps = layout
    base_shape = [max(shape[axis] * abs(steps[axis]), 0) for axis in order]
    base = sample(dtype, base_shape, seed)
    inverse = list(np.argsort(order))
    index = tuple(slice(None, None, step) for step in steps) or Ellipsis  # (0-d: a 0-d view)
    return base.transpose(inverse)[index], device.put(base).transpose(inverse)[index]


LAYOUT_OPS = ["+", "-", "*", "//", "%", "<", "==", "&"]
LAYOUT_DTYPES = [
    np.dtype(t) for t in (np.int8, np.int32, np.uint16, np.int64, np.float32, np.float64, np.complex64, np.bool_)
]


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    op=st.sampled_from(LAYOUT_OPS),
    dtypes=st.tuples(st.sampled_from(LAYOUT_DTYPES), st.sampled_from(LAYOUT_DTYPES)),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
)
def test_results_are_numpys_for_any_layout(data, op, dtypes, shapes):
    device = Device()
    with pytest.MonkeyPatch.context() as patch:
        install(patch, device)
        drawn = [data.draw(layouts(len(shape))) for shape in shapes.input_shapes]  # (all first)
        (a, x), (b, y) = [
            laid_out(layout, shape, dtype, device, k)
            for k, (layout, shape, dtype) in enumerate(zip(drawn, shapes.input_shapes, dtypes))
        ]
        expected = outcome(lambda: OPERATORS[op](a, b))
        if not isinstance(expected, np.dtype):
            assert outcome(lambda: OPERATORS[op](x, y)) == expected
            return
        with np.errstate(all="ignore"):
            want = OPERATORS[op](a, b)
        got = OPERATORS[op](x, y)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(device.read(got), want)


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    op=st.sampled_from(["+", "-", "*", "//", "%", "|"]),
    dtypes=st.tuples(st.sampled_from(LAYOUT_DTYPES), st.sampled_from(LAYOUT_DTYPES)),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
)
def test_in_place_results_are_numpys_for_any_layout(data, op, dtypes, shapes):
    device = Device()
    with pytest.MonkeyPatch.context() as patch:
        install(patch, device)
        drawn = [data.draw(layouts(len(shape))) for shape in shapes.input_shapes]  # (all first)
        (a, x), (b, y) = [
            laid_out(layout, shape, dtype, device, k)
            for k, (layout, shape, dtype) in enumerate(zip(drawn, shapes.input_shapes, dtypes))
        ]
        expected = outcome(lambda: IN_PLACE[op](a.copy(), b))
        if not isinstance(expected, np.dtype):
            assert outcome(lambda: IN_PLACE[op](x, y)) == expected
            return
        with np.errstate(all="ignore"):
            IN_PLACE[op](a, b)
        result = IN_PLACE[op](x, y)
        assert result is x
        np.testing.assert_array_equal(device.read(x), a)


@pytest.mark.parametrize(
    "target, source",
    [
        (np.s_[1:], np.s_[:-1]),
        (np.s_[:-1], np.s_[1:]),
        (np.s_[::-1], np.s_[:]),
        (np.s_[::2], np.s_[1::2]),
    ],
)
def test_overlapping_in_place_reads_before_it_writes(device, target, source):
    a = np.arange(10, dtype=np.int32)
    x = device.put(a)
    view = x[target]
    view += x[source]
    a[target] += a[source].copy()
    np.testing.assert_array_equal(device.read(x), a)


def test_broadcast_row_into_its_own_matrix(device):
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = device.put(a)
    x -= x[1]
    a -= a[1].copy()
    np.testing.assert_array_equal(device.read(x), a)


def test_zero_d_and_empty_operands(device):
    a, s = np.arange(6, dtype=np.float32).reshape(2, 3), np.array(2.5, np.float32)
    x, z = device.put(a), device.put(s)
    np.testing.assert_array_equal(device.read(x * z), a * s)
    np.testing.assert_array_equal(device.read(z - x), s - a)
    assert (z + z).shape == () and device.read(z + z) == 5
    empty = device.put(np.zeros((0, 3), np.int16))
    launched = len(device.launched)
    result = empty + x[0]
    assert result.shape == (0, 3) and result.dtype == np.float32 and len(device.launched) == launched


def test_results_keep_the_operands_memory_order(device):
    a = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    x = gpuarray.GPUArray(a.shape, a.dtype, allocator=device.allocate, order="F")
    device.write(x, a)
    result = x + 1
    assert result.flags.f_contiguous and not result.flags.c_contiguous
    assert device.launched[-1].endswith("_to_f4")  # contiguous: indexed by i
    np.testing.assert_array_equal(device.read(result), a + 1)
    t = x.T * 2  # (C-contiguous again)
    assert t.flags.c_contiguous and "strided" not in device.launched[-1]


def test_a_small_operation_is_one_lookup_and_one_launch(device):
    x, y = device.put(np.ones(1000, np.float32)), device.put(np.ones(1000, np.float32))
    x + y, x * 2
    plans, kernels = len(engine._plans), len(device.kernels)
    launched = len(device.launched)
    for _ in range(3):
        x + y, x * 2, 2 * x
    assert len(engine._plans) == plans + 1 and len(device.kernels) == kernels + 1  # (2 * x: reflected)
    assert len(device.launched) == launched + 9
    assert set(device.launched[launched:]) == {
        "pyctk_add_f4_f4_to_f4",
        "pyctk_multiply_f4_sf4_to_f4",
        "pyctk_multiply_sf4_f4_to_f4",
    }


OPERATOR_ROWS = [
    ("add", operator.add, operator.iadd),
    ("sub", operator.sub, operator.isub),
    ("mul", operator.mul, operator.imul),
    ("truediv", operator.truediv, operator.itruediv),
    ("pow", operator.pow, operator.ipow),
    ("floordiv", operator.floordiv, operator.ifloordiv),
    ("mod", operator.mod, operator.imod),
    ("and", operator.and_, operator.iand),
    ("or", operator.or_, operator.ior),
    ("xor", operator.xor, operator.ixor),
]


@pytest.mark.parametrize("name, forward, in_place", OPERATOR_ROWS, ids=[row[0] for row in OPERATOR_ROWS])
def test_each_operator_row_computes_numpys_in_all_three_forms(device, name, forward, in_place):
    """x OP y, y OP x (a scalar on the left) and x OP= y, each named as Python calls it."""
    dtype = np.float64 if name == "truediv" else np.int64  # (x /= y stays in x's dtype)
    a, b = np.arange(1, 7, dtype=dtype), np.array([3, 1, 2, 5, 4, 6], dtype)
    x, y = device.put(a), device.put(b)
    for method in (f"__{name}__", f"__r{name}__", f"__i{name}__"):
        assert getattr(gpuarray.GPUArray, method).__name__ == method
    np.testing.assert_array_equal(device.read(forward(x, y)), forward(a, b))
    np.testing.assert_array_equal(device.read(forward(3, x)), forward(3, a))
    assert in_place(x, y) is x
    np.testing.assert_array_equal(device.read(x), in_place(a.copy(), b))


def test_layouts_met_before_are_launched_as_kept_with_numpys_results(device, monkeypatch):
    """The second a + b on operands of the same layouts skips planning (its launch was kept);
    other layouts, a scalar past the loop's dtype and another library's array do not."""
    a, b = np.arange(12, dtype=np.float32).reshape(3, 4), np.ones((3, 4), np.float32)
    small = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    x, y, s = device.put(a), device.put(b), device.put(small)
    x + y, 2 - x, s < 100, s + 100
    assert len(engine._kept) == 4

    def planned(*args):
        raise AssertionError("planned again")

    with monkeypatch.context() as patch:
        patch.setattr(engine, "_operands", planned)
        np.testing.assert_array_equal(device.read(x + y), a + b)
        np.testing.assert_array_equal(device.read(2 - x), 2 - a)
        np.testing.assert_array_equal(device.read(s + 100), small + 100)
    np.testing.assert_array_equal(device.read(x[:, ::2] + y[:, ::2]), a[:, ::2] + b[:, ::2])
    np.testing.assert_array_equal(device.read(s < 1000), small < 1000)  # NumPy: every one
    with pytest.raises(OverflowError):
        s + 1000


# --- the functions, on Device ------------------------------------------------------------------


def test_where_if_positive_maximum_minimum(device):
    c = np.array([-1.0, 0.0, 2.0, np.nan], np.float32)
    a, b = np.array([1, 2, 3, 4], np.int16), np.array([np.nan, 5.0, -1.0, 0.0])
    gc, ga, gb = device.put(c), device.put(a), device.put(b)
    np.testing.assert_array_equal(device.read(arithmetic.where(gc, ga, gb)), np.where(c != 0, a, b))
    np.testing.assert_array_equal(device.read(arithmetic.if_positive(gc, ga, 7)), np.where(c > 0, a, 7))
    np.testing.assert_array_equal(device.read(arithmetic.maximum(gc, gb)), np.maximum(c, b))
    np.testing.assert_array_equal(device.read(arithmetic.minimum(2, gc)), np.minimum(2, c))
    out = device.put(np.zeros(4))
    assert arithmetic.maximum(ga, gb, out=out) is out
    np.testing.assert_array_equal(device.read(out), np.maximum(a, b))


def test_logical_functions(device):
    a, b = np.array([0, 1, 2, 0], np.int32), np.array([0.0, 0.0, np.nan, 1.5])
    ga, gb = device.put(a), device.put(b)
    for ours, numpys in [(arithmetic.logical_and, np.logical_and), (arithmetic.logical_or, np.logical_or)]:
        np.testing.assert_array_equal(device.read(ours(ga, gb)), numpys(a, b))
        np.testing.assert_array_equal(device.read(ours(0, gb)), numpys(0, b))
    np.testing.assert_array_equal(device.read(arithmetic.logical_not(gb)), np.logical_not(b))
    other = Device()
    result = arithmetic.logical_not(ga, allocator=other.allocate)
    assert result.allocator == other.allocate and result.dtype == np.bool_


def test_mul_add_is_one_kernel(device):
    a, b = np.arange(5, dtype=np.float32), np.ones(5, np.float32)
    x, y = device.put(a), device.put(b)
    launched = len(device.launched)
    result = x.mul_add(2, y, -0.5)
    assert len(device.launched) == launched + 1 and result.dtype == np.float32
    np.testing.assert_array_equal(device.read(result), 2 * a - 0.5 * b)
    out = device.put(np.zeros(5, np.float64))
    assert x.mul_add(1.5, y, 2, out=out) is out
    np.testing.assert_array_equal(device.read(out), 1.5 * a + 2 * b)


def test_real_imag_conj(device):
    c = (np.arange(6) + 1j * np.arange(6, 12)).astype(np.complex64).reshape(2, 3)
    x = device.put(c)
    for view, host in [(x, c), (x.T, c.T), (x[:, ::-2], c[:, ::-2])]:
        for ours, theirs in [(view.real, host.real), (view.imag, host.imag), (view.conj(), host.conj())]:
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
            np.testing.assert_array_equal(device.read(ours), theirs)
    r = device.put(np.arange(3.0))
    assert r.real is r and r.conj() is r
    np.testing.assert_array_equal(device.read(r.imag), np.zeros(3))
    out = device.put(np.zeros((2, 3), np.complex128))
    assert x.conj(out=out) is out
    np.testing.assert_array_equal(device.read(out), c.conj())


@pytest.mark.parametrize("shape, order", [((7,), "C"), ((2, 3), "C"), ((2, 3), "F"), ((0,), "C"), ((), "C")])
def test_reverse_reverses_the_memory_order(device, shape, order):
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape, order=order)
    x = gpuarray.GPUArray(shape, a.dtype, allocator=device.allocate, order=order)
    device.write(x, a)
    result = x.reverse()
    assert result.shape == x.shape and result.strides == x.strides
    np.testing.assert_array_equal(device.read(result).ravel(order=order), a.ravel(order=order)[::-1])


def test_equal_byte_strides_of_another_item_size_are_another_layout(device):
    """int64 + every other int32: both have strides (8,), but only the int64 array is
    contiguous; the int32 view is read by its strides, not element by element (found by
    test_results_are_numpys_for_any_layout)."""
    a, b = np.array([1, 2], np.int64), np.array([2, 9, 1, 9], np.int32)
    x, y = device.put(a), device.put(b)[::2]
    assert x.strides == y.strides
    np.testing.assert_array_equal(device.read(x + y), a + b[::2])
    np.testing.assert_array_equal(device.read(y + x), b[::2] + a)


def test_reverse_of_a_view(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = device.put(a)[:, ::2]
    np.testing.assert_array_equal(device.read(x.reverse()), a[:, ::2][::-1, ::-1])


def test_cumath_on_device(device):
    a = np.array([-2.5, -0.5, 0.25, 3.0], np.float32)
    x = device.put(a)
    for name in ("fabs", "floor", "ceil", "sin", "exp"):
        np.testing.assert_array_equal(device.read(getattr(cumath, name)(x)), cumath.FUNCTIONS[name](a))
    significand, exponent = cumath.frexp(x)
    assert exponent.dtype == np.int32
    np.testing.assert_array_equal(device.read(significand), np.frexp(a)[0])
    fractional, integral = cumath.modf(x[::-1])
    np.testing.assert_array_equal(device.read(integral), np.modf(a[::-1])[1])
    np.testing.assert_array_equal(device.read(cumath.ldexp(x, 3)), np.ldexp(a, 3))
    np.testing.assert_array_equal(device.read(cumath.fmod(x, 2)), np.fmod(a, 2))


def test_cumath_old_positional_argument_warns_and_is_honoured(device):
    x = device.put(np.ones(3, np.float32))
    out = device.put(np.zeros(3, np.float32))
    with pytest.warns(DeprecationWarning):
        assert cumath.exp(x, out) is out
    np.testing.assert_allclose(device.read(out), np.e)
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="both"):
        cumath.exp(x, out, out=out)


# --- errors, before any GPU work ---------------------------------------------------------------


def numpy_error(function, *args) -> BaseException:
    with pytest.raises(Exception) as error:
        function(*args)
    return error.value


def test_host_arrays_are_refused_naming_to_gpu(device):
    x = device.put(np.ones(3, np.float32))
    for call in (
        lambda: x + np.ones(3),
        lambda: np.ones(3) + x,
        lambda: x + [1, 2, 3],
        lambda: arithmetic.maximum(x, np.ones(3)),
        lambda: x @ np.ones((3, 3)),
    ):
        with pytest.raises(TypeError, match="to_gpu"):
            call()
    assert not device.launched


def test_shape_mismatch_has_numpys_words(device):
    a, b = np.ones((2, 3)), np.ones(4)
    x, y = device.put(a), device.put(b)
    with pytest.raises(ValueError) as error:
        x + y
    assert str(error.value) == str(numpy_error(operator.add, a, b))
    z = device.put(np.ones(3))
    with pytest.raises(ValueError) as error:
        z += x
    assert str(error.value) == str(numpy_error(operator.iadd, np.ones(3), a))
    assert not device.launched


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
def test_integer_powers_refuse_negative_exponents(device, dtype):
    a = np.arange(3, dtype=dtype)
    x = device.put(a)
    for exponent in (-1, np.int64(-2)):
        error = numpy_error(operator.pow, a, exponent)
        with pytest.raises(type(error)) as ours:
            x**exponent
        assert str(ours.value) == str(error)
    assert not device.launched


def test_out_of_bounds_python_ints_and_bool_negation_have_numpys_words(device):
    a = np.arange(3, dtype=np.uint8)
    x = device.put(a)
    for call, host_call in [
        (lambda: x + 300, lambda: a + 300),
        (lambda: x - (-1), lambda: a - (-1)),
        (lambda: -device.put(np.ones(2, bool)), lambda: -np.ones(2, bool)),
        (lambda: device.put(a * 1.0) / 10**400, lambda: a * 1.0 / 10**400),
    ]:
        error = numpy_error(host_call)
        with pytest.raises(type(error)) as ours:
            call()
        assert str(ours.value) == str(error)


def test_cumath_refuses_what_numpy_has_no_loop_for(device):
    z = device.put(np.ones(2, np.complex64))
    for name in ("fabs", "floor", "ceil"):
        with pytest.raises(TypeError, match="not supported"):
            getattr(cumath, name)(z)
    with pytest.raises(TypeError):
        device.put(np.ones(2, np.float32)) & 1
    assert not device.launched


def test_operations_need_a_gpuarray_and_out_must_be_one(device):
    x = device.put(np.ones(2))
    with pytest.raises(TypeError, match="GPUArray"):
        arithmetic.maximum(1, 2)
    with pytest.raises(TypeError, match="out must be a GPUArray"):
        arithmetic.maximum(x, 1, out=np.zeros(2))


def test_a_contiguous_kernel_loads_its_elements_before_it_stores_any():
    # Four elements a thread, every load first: the loads need not wait for a store (docs/kernel-log.md,
    # gpuarray steps 5-8).
    source = engine._Plan(operations.BINARY["+"], (np.dtype(np.float32), float), None).contiguous.source
    loads, stores = source.index("v0[u] = a0[i];"), source.index("o0[i] = v0[u] + v1;")
    assert f"ELEMENTS = {codegen.ELEMENTS}" in source and loads < stores
    assert codegen.ELEMENTS > 1


def test_a_contiguous_launch_covers_the_elements_a_thread_takes(device, monkeypatch):
    asked = []
    monkeypatch.setattr(engine, "geometry", lambda n: asked.append(n) or (1, 1))
    x = device.put(np.arange(1001, dtype=np.float32))
    np.testing.assert_array_equal(device.read(x + x), 2 * np.arange(1001, dtype=np.float32))
    np.testing.assert_array_equal(device.read(x[::2] + 1), np.arange(0, 1001, 2, dtype=np.float32) + 1)
    assert asked == [-(-1001 // codegen.ELEMENTS), 501]  # contiguous: ELEMENTS a thread; strided: one
