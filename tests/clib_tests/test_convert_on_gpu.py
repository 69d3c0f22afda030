"""The copy kernel on a GPU (libgpu/kernels/convert.cu, gpumatmul_copy_device): every pair of
dtypes against NumPy's own casts (ml_dtypes' for bfloat16 and the FP8 types), bit for bit, on the values where
casts differ (roundings at midpoints, signed zeros, infinities, NaN, integer extremes); gathers
of any strides; and an array past 2^31 elements, which takes several launches.

A float out of an integer type's range (NaN and the infinities too) has no defined cast: NumPy
warns "invalid value encountered in cast" and gives what its CPU loop gives, which differs
between CPUs and between NumPy's SIMD and scalar loops (float32 1e10 to uint32: 1410065408 on
one x86-64 machine, 0 on another). Those elements are left out of the comparison."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import pyctk
from support.gpu_arrays import device_array
from support.strategies import FLOAT8, STORED

pytestmark = pytest.mark.gpu

INTEGER_EXTREMES = [np.iinfo(t).min for t in (np.int8, np.int16, np.int32, np.int64)] + [
    np.iinfo(t).max for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
]
FLOATS = [
    0.0,
    -0.0,
    0.5,
    1.5,
    2.5,
    -2.5,
    300.7,
    -300.7,
    65504.0,
    65520.0,
    1e10,
    -1e10,
    3e9,
    -3e9,
    2.0**31,
    -(2.0**31) - 1,
    2.0**63,
    -(2.0**63),
    2.0**64,
    1e300,
    5e-324,
    1e-40,
    np.inf,
    -np.inf,
    np.nan,
]


def special_values(dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """Values of ``dtype`` where casts to other types differ: the extremes, and random ones."""
    if dtype.kind == "b":
        return np.array([True, False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        extremes = [v for v in INTEGER_EXTREMES + [0, 1, -1, 2049, 16777217, 2**53 + 1] if info.min <= v <= info.max]
        return np.concatenate([np.array(extremes, dtype), rng.integers(info.min, info.max, 512, dtype, endpoint=True)])
    if dtype in FLOAT8:  # every value, NaNs and signed zeros included
        return np.arange(256, dtype=np.uint8).view(dtype)
    real = np.concatenate(
        [np.array(FLOATS), rng.standard_normal(256) * 10.0 ** rng.integers(-8, 9, 256), _midpoints(rng)]
    )
    with np.errstate(all="ignore"):  # overflows to infinity, inf * 1j
        return (real + 1j * real[::-1]).astype(dtype) if dtype.kind == "c" else real.astype(dtype)


def _midpoints(rng: np.random.Generator) -> np.ndarray:
    """float64 values at and next to the rounding midpoints of float32, float16, bfloat16 and the
    FP8 types (all of theirs, and past their largest values)."""
    f32 = rng.standard_normal(64).astype(np.float32)
    bits = f32.view(np.uint32)
    halfway = [
        ((bits & ~np.uint32(mask)) | np.uint32((mask + 1) >> 1)).view(np.float32) for mask in (0xFFFF, 0x1FFF)
    ]  # bfloat16's and float16's last bits
    f64_mid = (f32.astype(np.float64) + np.nextafter(f32, np.inf).astype(np.float64)) / 2
    float8_values = [np.sort(np.arange(128, dtype=np.uint8).view(t).astype(np.float64)) for t in FLOAT8]
    float8_values = [v[np.isfinite(v)] for v in float8_values]
    float8_mid = np.concatenate(
        [(v[1:] + v[:-1]) / 2 for v in float8_values] + [v[-1:] * 1.0625 for v in float8_values]
    )
    mids = np.concatenate([f64_mid, float8_mid, -float8_mid])
    return np.concatenate([*halfway, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)])


def same_bits(result: np.ndarray, expected: np.ndarray) -> bool:
    """Equal element by element, bit for bit, any NaN matching any NaN (payloads differ)."""
    parts = {"complex64": np.float32, "complex128": np.float64}.get(result.dtype.name, result.dtype)
    r, e = result.view(parts), expected.view(parts)  # a complex number's two parts side by side
    same = r.view(f"u{r.dtype.itemsize}") == e.view(f"u{e.dtype.itemsize}")
    if r.dtype.kind in "fV":  # NumPy's floats, ml_dtypes' (bfloat16, the FP8 types)
        same |= np.isnan(r.astype(np.float64)) & np.isnan(e.astype(np.float64))
    return bool(np.all(same))


def defined_casts(host: np.ndarray, target: np.dtype) -> np.ndarray:
    """Where NumPy's cast of ``host`` to ``target`` is defined: everywhere but floats whose
    integer part is out of an integer ``target``'s range."""
    if target.kind not in "iu" or host.dtype.kind in "biu":
        return np.ones(host.shape, bool)
    whole = np.trunc((host.real if host.dtype.kind == "c" else host).astype(np.float64))
    info = np.iinfo(target)
    with np.errstate(invalid="ignore"):
        # (below max + 1, not at most max: float(2**63 - 1) rounds to 2**63, which is out of range,
        # where NumPy's cast is undefined: 0 from ml_dtypes' bfloat16 on one machine, INT64_MIN on another)
        return np.isfinite(whole) & (whole >= float(info.min)) & (whole < float(info.max) + 1)


def rounds_float64_to_float8_through_float32() -> bool:
    """Whether this ml_dtypes casts float64 to the FP8 types through a float32 made first,
    rounding twice (0.6 did; 0.7 rounds once): just above a midpoint of float8_e4m3fn
    (2^-10, between 0 and its least subnormal 2^-9), float32 rounds to the midpoint itself,
    which then rounds to even, 0."""
    just_above = np.array([2.0**-10 * (1 + 2.0**-50)])
    return float(just_above.astype(FLOAT8[0]).astype(np.float64)[0]) == 0.0


def float8_rounded_once(host: np.ndarray, target: np.dtype) -> np.ndarray:
    """float64 (or complex128's real part) to an FP8 type, rounded once to nearest even: through
    float32 rounded to odd, which keeps 20 more bits than FP8 and so the second rounding exact
    (the sticky bit says whether anything was dropped)."""
    x = (host.real if host.dtype.kind == "c" else host).astype(np.float64)
    near = x.astype(np.float32)
    toward_zero = np.where(np.abs(near.astype(np.float64)) > np.abs(x), np.nextafter(near, np.float32(0)), near)
    inexact = np.isfinite(x) & (toward_zero.astype(np.float64) != x)
    odd = np.where(inexact, (toward_zero.view(np.uint32) | np.uint32(1)).view(np.float32), toward_zero)
    return np.where(np.isnan(x), near, odd).astype(target)


@pytest.mark.parametrize("source, target", list(itertools.product(STORED, STORED)), ids=lambda d: d.name)
def test_every_cast_is_numpys_bit_for_bit(source, target):
    """float64 and complex128 to an FP8 type: rounded once, as ml_dtypes 0.7 does, also where
    an older ml_dtypes rounds through float32."""
    host = special_values(source, np.random.default_rng(source.num * 31 + target.num))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's ComplexWarning, and pyctk's
        expected = host.astype(target)
        if target in FLOAT8 and source in (np.dtype(np.float64), np.dtype(np.complex128)):
            if rounds_float64_to_float8_through_float32():
                expected = float8_rounded_once(host, target)
        result = pyctk.asarray(host).astype(target).get()
    mismatched = [
        (x, r, e)
        for x, r, e, defined in zip(host, result, expected, defined_casts(host, target))
        if defined and not same_bits(np.array([r], target), np.array([e], target))
    ]
    assert not mismatched, f"{source} -> {target}: {mismatched[:5]}"


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x[::-1, :, ::2],
        lambda x: x.transpose(2, 0, 1),
        lambda x: x[:, ::-3, 1:],
        lambda x: np.broadcast_to(x[:1, :1], (6, 5, 7)),
        lambda x: x[2:3, 1:2, 3:4],
    ],
)
def test_gathers_of_any_strides(view):
    host = np.arange(6 * 5 * 7, dtype=np.int32).reshape(6, 5, 7)
    expected = view(host)
    for dtype in (np.int32, np.float64, np.int8):
        result = device_array(expected).astype(dtype).get()
        np.testing.assert_array_equal(result, expected.astype(dtype))


def test_an_array_past_two_to_the_31_elements_takes_several_launches():
    count = 2**31 + 5
    host = np.resize(np.arange(251, dtype=np.uint8), count)
    copied = pyctk.asarray(host)[::-1].astype(np.int8).get()  # a gather: the kernel, not a memcpy
    assert copied.shape == (count,)
    for i in (0, 1, count // 2, count - 2**31, count - 1):
        assert copied[i] == np.int8(host[count - 1 - i].astype(np.int8))
