"""The kernels every GPUArray needs to exist: strided copies, casts and fills.

- ``copy_strided``: any layout to any layout of the same shape and item size (views with
  steps, negative strides, transposes, broadcast sources with zero strides), one kernel per
  item size and number of axes, after axes that both sides step through together are
  merged (``merged_axes``, which the element-wise engine's kernels use too; a contiguous copy is one
  axis: a plain ``cuMemcpy``);
- ``cast``: contiguous ``src`` converted element by element into contiguous ``dst`` of another
  dtype, with NumPy's conversions (complex to real keeps the real part, to bool is ``!= 0``);
- ``fill``: ``value`` into every element of contiguous memory (``cuMemsetD8/16/32`` when
  the value's bytes repeat, else a kernel).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from ..._cuda import driver_api
from ..kernels.c_types import dtype_to_ctype
from .elementwise import COMPLEX_HEADER, needs_complex
from .launching import Kernel, geometry

MAX_AXES = 32  # NumPy's limit is 64; a copy of more axes than this raises ValueError

_ITEM_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


def _item_type(itemsize: int) -> str:
    """A C type of ``itemsize`` bytes with the widest alignment that size allows (up to 8)."""
    if itemsize in _ITEM_TYPES:
        return _ITEM_TYPES[itemsize]
    alignment = min(8, itemsize & -itemsize)
    return f"struct alignas({alignment}) item_t {{ unsigned char bytes[{itemsize}]; }}"


@functools.cache
def _strided_kernel(itemsize: int, axes: int) -> Kernel:
    item = _item_type(itemsize)
    name = f"pyctk_copy_strided_{itemsize}_{axes}"
    source = (
        f"typedef {item} item;\n"
        f"struct layout {{ long shape[{axes}]; long dst[{axes}]; long src[{axes}]; }};\n"
        f'extern "C" __global__ void {name}(char *dst, const char *src, layout l, unsigned long n)\n'
        f"{{\n"
        f"  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;\n"
        f"       i += (size_t) gridDim.x * blockDim.x) {{\n"
        f"    size_t rest = i;\n"
        f"    long d = 0, s = 0;\n"
        f"    for (int axis = {axes} - 1; axis >= 0; --axis) {{\n"
        f"      long k = (long) (rest % (size_t) l.shape[axis]);\n"
        f"      rest /= (size_t) l.shape[axis];\n"
        f"      d += k * l.dst[axis];\n"
        f"      s += k * l.src[axis];\n"
        f"    }}\n"
        f"    *(item *) (dst + d) = *(const item *) (src + s);\n"
        f"  }}\n}}\n"
    )
    return Kernel(source, name, ["P", "P", f"{24 * axes}s", "Q"])


def merged_axes(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
    """The same element-wise walk over several arrays of one ``shape`` (their byte ``strides``)
    over fewer axes: in the memory order of the first array (outermost first), length-1 axes
    dropped, an axis merged into the one before it where every array steps over both as one
    (stride * length == outer stride)."""
    axes = sorted((a for a in range(len(shape)) if shape[a] != 1), key=lambda a: -abs(strides[0][a]))
    lengths: list[int] = []
    merged: list[list[int]] = [[] for _ in strides]
    for axis in axes:
        if lengths and all(m[-1] == s[axis] * shape[axis] for m, s in zip(merged, strides)):
            lengths[-1] *= shape[axis]
            for m, s in zip(merged, strides):
                m[-1] = s[axis]
        else:
            lengths.append(shape[axis])
            for m, s in zip(merged, strides):
                m.append(s[axis])
    return lengths, merged


def copy_strided(
    dst: int,
    dst_strides: Sequence[int],
    src: int,
    src_strides: Sequence[int],
    shape: Sequence[int],
    itemsize: int,
    stream: int,
) -> None:
    """Copy the array at ``src`` into the one at ``dst`` (same shape; byte strides), on ``stream``."""
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if n == 0:
        return
    lengths, (to, frm) = merged_axes(shape, [dst_strides, src_strides])
    if not lengths or (len(lengths) == 1 and to[0] == frm[0] == itemsize):
        driver_api.call("cuMemcpyDtoDAsync", dst, src, n * itemsize, stream)
        return
    if len(lengths) > MAX_AXES:
        raise ValueError(
            f"a copy over {len(lengths)} axes that cannot be merged; pyctk copies up "
            f"to {MAX_AXES}: make the array contiguous in steps"
        )
    layout = np.array([lengths, to, frm], dtype=np.int64).tobytes()
    blocks, threads = geometry(n)
    _strided_kernel(itemsize, len(lengths))(blocks, threads, stream, dst, src, layout, n)


def _conversion(to: np.dtype, frm: np.dtype) -> str:
    """C for ``src[i]`` as a value of ``to``, NumPy's way."""
    value = "src[i].real()" if frm.kind == "c" and to.kind != "c" else "src[i]"
    if to.kind == "b":
        return "(src[i].real() != 0 || src[i].imag() != 0)" if frm.kind == "c" else "(src[i] != 0)"
    ctype = dtype_to_ctype(to)
    if frm.kind in "fc" and to.kind in "iu":
        # C leaves out-of-range conversions undefined (the GPU saturates); NumPy goes through a
        # 64-bit integer and wraps, so -1.0 becomes 255 in uint8, as here.
        if to == np.uint64:
            return f"({value} < 0 ? ({ctype}) (long long) {value} : ({ctype}) {value})"
        return f"({ctype}) (long long) {value}"
    return f"({ctype}) ({value})"


@functools.cache
def _cast_kernel(to: np.dtype, frm: np.dtype) -> Kernel:
    name = f"pyctk_cast_{to.str[1:]}_{frm.str[1:]}"
    header = COMPLEX_HEADER if needs_complex(dtypes=[to, frm]) else ""
    source = (
        f"{header}"
        f'extern "C" __global__ void {name}({dtype_to_ctype(to)} *dst, const {dtype_to_ctype(frm)} *src, '
        f"unsigned long n)\n{{\n"
        f"  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;\n"
        f"       i += (size_t) gridDim.x * blockDim.x)\n"
        f"    dst[i] = {_conversion(to, frm)};\n}}\n"
    )
    return Kernel(source, name, ["P", "P", "Q"])


def cast(dst: int, to: np.dtype, src: int, frm: np.dtype, n: int, stream: int) -> None:
    """``n`` contiguous elements of dtype ``frm`` at ``src`` converted into ``to`` at ``dst``."""
    if n:
        blocks, threads = geometry(n)
        _cast_kernel(np.dtype(to), np.dtype(frm))(blocks, threads, stream, dst, src, n)


@functools.cache
def _fill_kernel(itemsize: int) -> Kernel:
    name = f"pyctk_fill_{itemsize}"
    source = (
        f"typedef {_item_type(itemsize)} item;\n"
        f'extern "C" __global__ void {name}(item *dst, item value, unsigned long n)\n{{\n'
        f"  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;\n"
        f"       i += (size_t) gridDim.x * blockDim.x)\n"
        f"    dst[i] = value;\n}}\n"
    )
    return Kernel(source, name, ["P", f"{itemsize}s", "Q"])


_MEMSETS = {1: ("cuMemsetD8Async", np.uint8), 2: ("cuMemsetD16Async", np.uint16), 4: ("cuMemsetD32Async", np.uint32)}


def fill(dst: int, value: bytes, n: int, stream: int) -> None:
    """``n`` items of ``value`` (its bytes: one item) from ``dst`` on, on ``stream``."""
    if not n:
        return
    itemsize = len(value)
    word = next((w for w in (1, 2, 4) if value == value[:w] * (itemsize // w) and itemsize % w == 0), None)
    if word is not None:
        name, kind = _MEMSETS[word]
        driver_api.call(name, dst, int(np.frombuffer(value[:word], kind)[0]), n * itemsize // word, stream)
        return
    blocks, threads = geometry(n)
    _fill_kernel(itemsize)(blocks, threads, stream, dst, value, n)
