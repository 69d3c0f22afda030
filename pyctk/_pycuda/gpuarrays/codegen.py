"""The CUDA source of an element-wise operation's kernels: one kernel per plan (operation and
dtypes), contiguous (every array indexed by ``i``) or strided (each operand's element found
through the result's axes), including the header of the device functions its expressions call.
"""

from __future__ import annotations

import functools

import numpy as np

from ..kernels.c_types import dtype_to_ctype
from .elementwise import needs_complex
from .launching import Kernel
from .operations import Operation

# -- kernels ---------------------------------------------------------------------------------


@functools.cache
def kernel(operation: Operation, inputs: tuple, results: tuple, outputs: tuple, axes: int, wide: bool) -> Kernel:
    """The kernel of ``operation`` reading ``inputs`` ((parameter dtype, loop dtype, is an
    array) each) into ``outputs``: every array indexed by ``i`` (``axes == 0``), or through
    ``axes`` axes of a layout (byte strides; ``wide``: index arithmetic in 64 bits)."""
    source, name, codes = _source(operation, inputs, results, outputs, axes, wide)
    return Kernel(source, name, codes)


def _source(
    operation: Operation, inputs: tuple, results: tuple, outputs: tuple, axes: int, wide: bool
) -> tuple[str, str, list[str]]:
    """(CUDA source, kernel name, ``struct`` codes of its parameters) of ``kernel``."""
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
    return HELPERS[is_complex] + layout + body, name, codes


# The device functions the expressions call (NumPy's comparisons, powers, divisions), real
# headers of pyctk's include folder (compiling/libc): for real operands, and for complex ones too.
HELPERS = {False: "#include <pyctk-elementwise.cuh>\n", True: "#include <pyctk-elementwise-complex.cuh>\n"}

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
