"""PyCUDA's kernel getters of pycuda.elementwise (get_fill_kernel and its kin): PyCUDA's
signatures, and sources that compile (NVRTC, no GPU needed) into functions prepared for
PyCUDA's arguments, their bodies the C of GPUArray's rows where those have one.
test_elementwise_getters_on_gpu.py runs them."""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import numpy as np
import pytest

from pyctk import elementwise, gpuarray
from pyctk.driver import TextureReferenceError
from support import elementwise_modules

# PyCUDA's signatures, read from pycuda/elementwise.py (github.com/inducer/pycuda, 19bed90).
PYCUDA_SIGNATURES = {
    "get_take_kernel": "dtype, idx_dtype, vec_count=1",
    "get_take_put_kernel": "dtype, idx_dtype, with_offsets, vec_count=1",
    "get_put_kernel": "dtype, idx_dtype, vec_count=1",
    "get_copy_kernel": "dtype_dest, dtype_src",
    "get_linear_combination_kernel": "summand_descriptors, dtype_z",
    "get_axpbyz_kernel": "dtype_x, dtype_y, dtype_z, x_is_scalar=False, y_is_scalar=False",
    "get_axpbz_kernel": "dtype_x, dtype_z",
    "get_binary_op_kernel": "dtype_x, dtype_y, dtype_z, operator, x_is_scalar=False, y_is_scalar=False",
    "get_rdivide_elwise_kernel": "dtype_x, dtype_z",
    "get_binary_func_kernel": "func, dtype_x, dtype_y, dtype_z",
    "get_binary_func_scalar_kernel": "func, dtype_x, dtype_y, dtype_z",
    "get_binary_minmax_kernel": "func, dtype_x, dtype_y, dtype_z, use_scalar",
    "get_fill_kernel": "dtype",
    "get_reverse_kernel": "dtype",
    "get_real_kernel": "dtype, real_dtype",
    "get_imag_kernel": "dtype, real_dtype",
    "get_conj_kernel": "dtype, conj_dtype",
    "get_arange_kernel": "dtype",
    "get_pow_array_kernel": "dtype_x, dtype_y, dtype_z, is_base_array, is_exp_array",
    "get_fmod_kernel": "",
    "get_modf_kernel": "",
    "get_frexp_kernel": "",
    "get_ldexp_kernel": "",
    "get_unary_func_kernel": "func_name, in_dtype, out_dtype=None",
    "get_if_positive_kernel": "crit_dtype, dtype",
    "get_where_kernel": "crit_dtype, dtype",
    "get_scalar_op_kernel": "dtype_x, dtype_a, dtype_y, operator",
    "get_logical_not_kernel": "dtype_x, dtype_out",
}

F32, F64, C64, C128 = (np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
I32, I64, BOOL = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.bool_)

# (getter, its arguments, the kernel's name, PyCUDA's prepared types, a line of its source)
CASES = [
    ("get_take_kernel", (F32, I32, 2), "take", "PPPL", "dest1[i] = tex_src1[src_idx]"),
    ("get_take_put_kernel", (F64, I32, False), "take_put", "PPPL", "dest0[dest_idx] = tex_src0[src_idx]"),
    ("get_take_put_kernel", (F32, I32, True, 2), "take_put", "PPPPiiL", "tex_src1[src_idx + offset1]"),
    ("get_put_kernel", (F64, I64, 2), "put", "PPPPPL", "dest1[dest_idx] = src1[i]"),
    ("get_copy_kernel", (F64, I32), "copy", "PPL", "void copy(double *dest, int *src, unsigned long n)"),
    (
        "get_linear_combination_kernel",
        (((True, F32, F32), (False, F64, F32)), F32),
        "linear_combination",
        "PdPPL",
        "z[i] = a0*x0[i] + a1*x1[i]",
    ),
    ("get_axpbyz_kernel", (F32, F32, F32), "axpbyz", "fPfPPL", "(float) a * (float) x[i] + (float) b * (float) y[i]"),
    ("get_axpbyz_kernel", (F32, C64, C64, True), "axpbyz", "fPFPPL", "(float) x[0]"),
    ("get_axpbz_kernel", (F32, F64), "axpb", "dPdPL", "z[i] = a * x[i] + b"),
    ("get_binary_op_kernel", (F32, F32, F32, "+"), "multiply", "PPPL", "z[i] = (float) ((float) x[i] + (float) y[i])"),
    (
        "get_binary_op_kernel",
        (I32, I32, I32, "**", False, True),
        "multiply",
        "PPPL",
        "pyctk_ipow_signed((int) x[i], (int) y[0])",
    ),
    ("get_binary_op_kernel", (I64, I64, I64, "<<"), "multiply", "PPPL", "(long) x[i] << (long) y[i]"),
    (
        "get_binary_op_kernel",
        (F64, C128, C128, "*"),
        "multiply",
        "PPPL",
        "(double) x[i] * (pycuda::complex<double>) y[i]",
    ),
    ("get_rdivide_elwise_kernel", (F32, F64), "divide_r", "PdPL", "z[i] = y / x[i]"),
    ("get_binary_func_kernel", ("atan2", F32, F32, F32), "atan2_kernel", "PPPL", "z[i] = atan2(x[i], y[i])"),
    ("get_binary_func_scalar_kernel", ("fmaxf", F32, F32, F32), "fmaxf_kernel", "PfPL", "z[i] = fmaxf(x[i], y)"),
    (
        "get_binary_minmax_kernel",
        ("max", F32, F32, F32, False),
        "max_kernel",
        "PPPL",
        "pyctk_le((float) y[i], (float) x[i])",
    ),
    ("get_binary_minmax_kernel", ("min", I32, I32, I32, True), "min_kernel", "PiPL", "pyctk_le((int) x[i], (int) y)"),
    ("get_fill_kernel", (C64,), "fill", "FPL", "z[i] = a"),
    ("get_reverse_kernel", (I32,), "reverse", "PPL", "z[i] = y[n-1-i]"),
    ("get_real_kernel", (C64, F32), "real", "PPL", "z[i] = real(y[i])"),
    ("get_imag_kernel", (C128, F64), "imag", "PPL", "z[i] = imag(y[i])"),
    ("get_conj_kernel", (C64, C64), "conj", "PPL", "z[i] = conj(y[i])"),
    ("get_arange_kernel", (F32,), "arange", "PffL", "z[i] = start + i*step"),
    (
        "get_pow_array_kernel",
        (F32, F32, F32, False, True),
        "pow_method",
        "fPPL",
        "z[i] = powf((float) x, (float) y[i])",
    ),
    ("get_pow_array_kernel", (F64, F64, F64, True, True), "pow_method", "PPPL", "pow((double) x[i], (double) y[i])"),
    (
        "get_pow_array_kernel",
        (I64, I64, I64, True, False),
        "pow_method",
        "PlPL",
        "pyctk_ipow_signed((long) x[i], (long) y)",
    ),
    ("get_fmod_kernel", (), "fmod_kernel", "PPPL", "z[i] = fmodf(arg[i], mod[i])"),
    ("get_modf_kernel", (), "modf_kernel", "PPPL", "fracpart[i] = modff(x[i], &intpart[i])"),
    ("get_frexp_kernel", (), "frexp_kernel", "PPPL", "significand[i] = frexpf(x[i], &expt)"),
    ("get_ldexp_kernel", (), "ldexp_kernel", "PPPL", "z[i] = ldexpf(sig[i], pyctk_exponent((long) expt[i]))"),
    ("get_unary_func_kernel", ("sin", F32), "sin_kernel", "PPL", "void sin_kernel(float *y, float *z"),
    ("get_unary_func_kernel", ("floor", F64, I32), "floor_kernel", "PPL", "z[i] = floor(y[i])"),
    ("get_if_positive_kernel", (F32, I32), "if_positive", "PPPPL", "pyctk_positive(crit[i]) ? then_[i] : else_[i]"),
    ("get_where_kernel", (BOOL, C64), "where", "PPPPL", "pyctk_nonzero(crit[i]) ? then_[i] : else_[i]"),
    (
        "get_scalar_op_kernel",
        (I32, F64, F64, "%"),
        "scalarop_kernel",
        "PdPL",
        "pyctk_divmod((double) x[i], (double) a, true)",
    ),
    ("get_logical_not_kernel", (F32, BOOL), "logical_not", "PPL", "out[i] = !pyctk_nonzero(x[i])"),
]


def written(signature: inspect.Signature) -> str:
    return ", ".join(
        name if p.default is inspect.Parameter.empty else f"{name}={p.default!r}"
        for name, p in signature.parameters.items()
    )


@pytest.mark.parametrize("name", sorted(PYCUDA_SIGNATURES))
def test_each_getter_has_pycudas_signature_and_is_exported(name):
    assert written(inspect.signature(getattr(elementwise, name))) == PYCUDA_SIGNATURES[name]
    assert name in elementwise.__all__


def test_every_getter_is_compiled_below():
    assert {case[0] for case in CASES} == set(PYCUDA_SIGNATURES)


@pytest.fixture
def built(monkeypatch):
    return elementwise_modules.install(monkeypatch)


@pytest.mark.parametrize(("getter", "arguments", "name", "codes", "line"), CASES)
def test_each_getter_compiles_a_kernel_prepared_for_pycudas_arguments(built, getter, arguments, name, codes, line):
    # __wrapped__: the getter itself, not its cache per context (which needs a driver)
    result = getattr(elementwise, getter).__wrapped__(*arguments)
    function = result[0] if isinstance(result, tuple) else result
    (source,) = built
    assert function.name == name and function.codes == codes
    assert line in source


@pytest.mark.parametrize(
    ("getter", "arguments", "texrefs"),
    [
        ("get_take_kernel", (F32, I32, 3), ["tex_src0", "tex_src1", "tex_src2"]),
        ("get_take_put_kernel", (F32, I32, True, 2), ["tex_src0", "tex_src1"]),
        (
            "get_linear_combination_kernel",
            (((True, F32, F32), (False, F32, F32), (True, F64, F64)), F64),
            ["tex_a0", "tex_a2"],
        ),
    ],
)
def test_getters_of_texture_references_return_a_pointer_for_each(built, getter, arguments, texrefs):
    function, stand_ins = getattr(elementwise, getter).__wrapped__(*arguments)
    assert [texref.name for texref in stand_ins] == texrefs
    assert all(texref.module is function.module for texref in stand_ins)
    for texref in texrefs:
        assert f"__device__ const {'double' if texref == 'tex_a2' else 'float'} *{texref};" in built[0]


def test_a_linear_combination_reads_its_gpu_scalars_before_the_loop(built):
    elementwise.get_linear_combination_kernel.__wrapped__(((True, F32, F32), (False, F32, F32)), F32)
    (source,) = built
    assert source.index("float a0 = *tex_a0;") < source.index("for (i = ")
    assert "(float *x0, float a1, float *x1, float *z, unsigned long n)" in source


@pytest.mark.parametrize(
    ("getter", "arguments", "message"),
    [
        ("get_pow_array_kernel", (F32, F32, F32, False, False), "is_base_array=True or is_exp_array=True"),
        ("get_binary_minmax_kernel", ("mean", F32, F32, F32, False), "pass 'max' or 'min'"),
    ],
)
def test_getters_refuse_what_has_no_kernel(built, getter, arguments, message):
    with pytest.raises(ValueError, match=message):
        getattr(elementwise, getter).__wrapped__(*arguments)
    assert built == []


def test_binding_an_array_sets_a_stand_in_and_anything_else_raises():
    calls = []
    stand_in = SimpleNamespace(set_address=lambda *args, **kwargs: calls.append((args, kwargs)) or 0)

    class Array:  # GPUArray's methods on an array's address and size alone
        gpudata, nbytes = 4096, 16
        bind_to_texref = gpuarray.GPUArray.bind_to_texref
        bind_to_texref_ext = gpuarray.GPUArray.bind_to_texref_ext

    assert Array().bind_to_texref_ext(stand_in, allow_double_hack=True) == 0
    assert calls == [((4096, 16), {"allow_offset": False})]
    with pytest.raises(TextureReferenceError, match="TextureObject"):
        Array().bind_to_texref(object())
