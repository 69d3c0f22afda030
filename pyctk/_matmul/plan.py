"""Stage 3 of a product: plan it. Which C entry point, which copies and casts, where the result goes.

Every decision is made here, from the operands' layouts alone, before any data moves:

- each operand is read in place, or from a C-ordered copy (cast to the loop dtype when
  its dtype is another; of the whole broadcast stack when broadcasting leaves strides
  that one stride cannot say: ``_arrays.layout.reading``);
- the result goes into new memory, into ``out`` itself, or into a temporary that is then
  moved (cast) into ``out`` of any dtype and strides;
- host data runs through ``gpumatmul_gemm_host_multi`` on ``devices``, GPU data through
  ``gpumatmul_gemm_device`` (into out or a temporary) or ``gpumatmul_gemm_device_new``
  (into new memory it allocates) on its own GPU.

The last checks need libgpumatmul, not a GPU: whether the backend computes the dtype at
the precision (``gpumatmul_backend_supports``).
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, NamedTuple

from .._arrays import layout
from .._arrays.interop import DeviceOperand
from .._arrays.layout import COPY_STACK, IN_PLACE, Reading, Strided
from .._cuda import contexts, library
from .._cuda.errors import DeviceMismatchError
from . import host_results, shapes
from .describe import Operands
from .options import Options, device_list, memory_limit
from .resolve import Problem

HOST, DEVICE, DEVICE_NEW = "gpumatmul_gemm_host_multi", "gpumatmul_gemm_device", "gpumatmul_gemm_device_new"
NEW, OUT, TEMPORARY = "new", "out", "temporary"  # where the C call writes the result


class Plan(NamedTuple):
    """A product's C call and what must happen around it."""

    entry: str  # HOST, DEVICE or DEVICE_NEW
    desc: library.GemmDesc  # the problem as the C call takes it
    reads: tuple[Reading, Reading]  # how each operand reaches it
    write: str  # NEW, OUT or TEMPORARY
    devices: tuple[int, ...]  # the GPUs it runs on
    host_options: library.HostOptions | None


_host_options: dict[int, library.HostOptions] = {}  # memory limit -> the host call's options


def plan(operands: Operands, problem: Problem, options: Options) -> Plan:
    reads = (_reading(operands.a, problem, 0), _reading(operands.b, problem, 1))
    write, ld, stride = _write(operands, problem, reads)
    if operands.device is None:
        _check_host_memory(operands, problem, reads, write)
        devices, host_options = _host(options)
    else:
        devices, host_options = _device(operands.device, options), None
    _supported(problem, options)
    a, b = reads
    desc = library.GemmDesc(
        options.backend,
        problem.code,
        options.precision,
        a.transposed,
        b.transposed,
        problem.shapes.m,
        problem.shapes.n,
        problem.shapes.k,
        problem.shapes.batch_count,
        a.ld,
        a.stride,
        b.ld,
        b.stride,
        ld,
        stride,
    )
    entry = HOST if operands.device is None else DEVICE_NEW if write == NEW else DEVICE
    return Plan(entry, desc, reads, write, devices, host_options)


def _reading(x: Any, problem: Problem, position: int) -> Reading:
    """How the C call reads operand ``position`` (0 or 1), ``x``, broadcast to the stack."""
    stack = _stack(x.shape, x.strides, x.dtype.itemsize, problem, position)
    return layout.reading(stack, problem.shapes.batch, copied=x.dtype != problem.operands[position])


def _stack(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int, problem: Problem, position: int) -> Strided:
    """An operand (``position`` 0 or 1) or the result (shapes.RESULT) as the (*stack, rows,
    columns) stack the C call reads or writes."""
    return Strided(*shapes.stack_layout(shape, strides, problem.shapes, position), itemsize)


def _out(operands: Operands, problem: Problem) -> tuple[int, int] | None:
    """(ld, stack stride) of ``out`` as the C call's output, or None if it cannot write it."""
    out = operands.out
    return layout.target(_stack(out.shape, out.strides, out.dtype.itemsize, problem, shapes.RESULT))


def _new_write(problem: Problem) -> tuple[int, int]:
    """(ld, stack stride) of a C-ordered result or temporary of the product's shape."""
    result = layout.c_ordered(problem.shapes.result, problem.loop.itemsize)
    written = layout.target(_stack(*result, problem, shapes.RESULT))
    assert written is not None  # C-ordered matrices are row-major and do not overlap
    return written


def _host(options: Options) -> tuple[tuple[int, ...], library.HostOptions]:
    """The GPUs a host product runs on and its options: the device memory it may use."""
    devices = device_list(options.devices, options.device)
    limit = memory_limit()
    host_options = _host_options.get(limit)
    if host_options is None:
        host_options = _host_options[limit] = library.HostOptions(ctypes.sizeof(library.HostOptions), limit)
    # The first call of a process starts the driver here, while libgpumatmul loads.
    contexts.load_library(devices[0])
    return devices, host_options


def _check_host_memory(operands: Operands, problem: Problem, reads: tuple[Reading, Reading], write: str) -> None:
    """MemoryError before any GPU work if the host memory execute will take (a new result
    or temporary, the copies of operands) is more than the machine has."""
    itemsize, shapes_ = problem.loop.itemsize, problem.shapes
    copies = [
        math.prod(shapes_.batch + x.shape[-2:] if read.copy == COPY_STACK else x.shape)
        for x, read in zip((operands.a, operands.b), reads)
        if read.copy != IN_PLACE
    ]
    result = math.prod(shapes_.result) if write != OUT else 0
    host_results.check_available(
        (result + sum(copies)) * itemsize,
        f"{host_results.size_text(result * itemsize)} for the result, of shape {shapes_.result} "
        f"and dtype {problem.loop}, and {host_results.size_text(sum(copies) * itemsize)} for "
        f"copies of the operands",
    )


def _device(device: int, options: Options) -> tuple[int, ...]:
    if options.devices is not None:
        raise ValueError("devices= is for host operands: GPU operands are multiplied on their own GPU")
    if options.device is not None and options.device != device:
        raise DeviceMismatchError(
            f"pyctk.matmul: device={options.device}, but the operands are "
            f"on GPU {device}; GPU operands are multiplied where "
            f"they are"
        )
    return (device,)


def _write(operands: Operands, problem: Problem, reads: tuple[Reading, Reading]) -> tuple[str, int, int]:
    """Into new memory without ``out``; into ``out`` itself where the C call can write it (the
    loop dtype, row-major matrices that do not overlap one another); else into a C-ordered
    temporary that wrap then moves (casts) into ``out``. A host ``out`` may overlap an
    operand (the host call reads all of A and B before it writes C); a GPU ``out`` that
    overlaps an operand read in place takes the temporary (the device calls' inputs and
    output must not overlap)."""
    out = operands.out
    if out is None:
        return (NEW, *_new_write(problem))
    written = _out(operands, problem) if out.dtype == problem.loop else None
    if written is not None and operands.device is not None:
        read_in_place = [x for x, read in zip((operands.a, operands.b), reads) if read.copy == IN_PLACE]
        if any(_overlap(out, x) for x in read_in_place):
            written = None
    return (OUT, *written) if written is not None else (TEMPORARY, *_new_write(problem))


def _overlap(x: DeviceOperand, y: DeviceOperand) -> bool:
    """Whether the device memory of two non-empty operands shares a byte."""
    if not (x.pointer and y.pointer):
        return False
    x_low, x_high = layout.span(x.shape, x.strides, x.dtype.itemsize)
    y_low, y_high = layout.span(y.shape, y.strides, y.dtype.itemsize)
    return x.pointer + x_low < y.pointer + y_high and y.pointer + y_low < x.pointer + x_high


def _supported(problem: Problem, options: Options) -> None:
    """UnsupportedError, naming the backend that computes it, for a backend that does not
    compute the dtype at the precision (libgpumatmul's own table: no GPU needed)."""
    library.call("gpumatmul_backend_supports", options.backend, problem.code, options.precision)
