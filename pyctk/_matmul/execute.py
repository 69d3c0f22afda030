"""Stage 4 of a product: execute its plan. Make the copies and casts, then the one C call.

Host data: the copies are NumPy's, and ``gpumatmul_gemm_host_multi`` streams the product
through the GPUs and returns when the result is in host memory. GPU data: everything is
enqueued on the caller's stream after the producers' pending work, and the call returns
without waiting; copies are made on pyctk's (the legacy) stream, which the product waits
for, and their memory is freed there after the product.
"""

from __future__ import annotations

import functools
import math
from ctypes import byref, c_void_p
from typing import Any, Callable, NamedTuple

import numpy as np

from .._arrays import device_array, layout, memory
from .._arrays.device_array import ArrayLayout, DeviceArray
from .._arrays.interop import DeviceOperand
from .._arrays.layout import COPY_STACK, IN_PLACE, Reading
from .._cuda import contexts, library, streams
from . import host_results, shapes
from .describe import Operands
from .options import Options
from .plan import DEVICE_NEW, NEW, OUT, Plan
from .resolve import Problem


def keepable(problem: Problem, plan: Plan) -> bool:
    """Whether the product runs as a later call of the same layouts may run it again: operands
    read in place into new memory, and something to compute (``host_run``, ``device_run``)."""
    shapes = problem.shapes
    return (
        plan.write == NEW
        and all(read.copy == IN_PLACE for read in plan.reads)
        and bool(shapes.m and shapes.n and shapes.k and shapes.batch_count)
    )


def execute(operands: Operands, problem: Problem, plan: Plan, options: Options) -> Any:
    """Run ``plan``; return what the C call wrote: a new host array or DeviceArray, a
    temporary, or ``out``."""
    if operands.device is None:
        return _on_host(operands, problem, plan)
    return _on_gpu(operands, operands.device, problem, plan, options)


# ---------------------------------------------------------------------------
# Host data.


class HostRun(NamedTuple):
    """A ``keepable`` product of host operands: made and run by the first call of its layouts
    (``_on_host``), and kept by ``repeat`` for later ones, which run it as it is."""

    plan: Plan
    shape: tuple[int, ...]  # the result's
    dtype: np.dtype
    scalar: bool  # 1-D @ 1-D: a NumPy scalar
    kept: bool  # the result's memory is host_results' (else NumPy's own)
    checked_bytes: int  # the result's bytes where they are checked against free memory

    def write(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The product of ``a`` and ``b`` (of the layouts planned) in a new array."""
        if self.checked_bytes:
            host_results.check_available(self.checked_bytes, f"the result, of shape {self.shape}")
        result = (
            host_results.empty(self.shape, self.dtype, self.plan.devices[0])
            if self.kept
            else np.empty(self.shape, self.dtype)
        )  # known once: 0.5 us of a 16 x 16 call
        host_call(self.plan, layout.address(a), layout.address(b), layout.address(result))
        return result

    def __call__(self, a: np.ndarray, b: np.ndarray) -> Any:
        """The product as ``pyctk.matmul`` returns it (a NumPy scalar for 1-D @ 1-D)."""
        result = self.write(a, b)
        return result[()] if self.scalar else result


def host_run(problem: Problem, plan: Plan) -> HostRun:
    shape, loop = problem.shapes.result, problem.loop
    nbytes = math.prod(shape) * loop.itemsize
    return HostRun(
        plan,
        shape,
        loop,
        not shape,
        host_results.kept(shape, loop),
        nbytes if nbytes >= host_results.CHECKED_FROM else 0,
    )


def _on_host(operands: Operands, problem: Problem, plan: Plan) -> np.ndarray:
    if keepable(problem, plan):
        matrices = (
            shapes.as_matrices(x, position, problem.shapes) for position, x in enumerate((operands.a, operands.b))
        )
        return host_run(problem, plan).write(*matrices)
    # (a list, not a generator: PyPy 3.9 turns an error raised while unpacking one into its own TypeError)
    a, b = [
        _host_read(x, read, position, problem)
        for position, (x, read) in enumerate(zip((operands.a, operands.b), plan.reads))
    ]
    c = (
        operands.out
        if plan.write == OUT
        else host_results.empty(problem.shapes.result, problem.loop, plan.devices[0])
        if plan.write == NEW
        else np.empty(problem.shapes.result, problem.loop)
    )
    if c.size and problem.shapes.k:
        host_call(plan, layout.address(a), layout.address(b), layout.address(c))
    else:  # nothing to compute, or k == 0: zeros (an empty sum, as in NumPy), without the GPU
        c[...] = 0
    return c


def _host_read(x: np.ndarray, read: Reading, position: int, problem: Problem) -> np.ndarray:
    """What the C call reads of operand ``x``: its matrices (a view), or their copy in
    problem.operands[position], as the plan says. The cast follows NumPy, whatever the sizes: an object operand's
    elements may not fit the loop dtype."""
    matrices = shapes.as_matrices(x, position, problem.shapes)
    if read.copy == IN_PLACE:
        return matrices
    if read.copy == COPY_STACK:
        matrices = np.broadcast_to(matrices, problem.shapes.batch + matrices.shape[-2:])
    return np.ascontiguousarray(matrices, dtype=problem.operands[position])


def host_call(plan: Plan, a: int, b: int, c: int) -> None:
    """The plan's host call on the arrays at addresses ``a``, ``b`` and ``c``."""
    library.call(
        "gpumatmul_gemm_host_multi",
        contexts.contexts(plan.devices),
        len(plan.devices),
        plan.desc,
        a,
        b,
        c,
        plan.host_options,
    )


# ---------------------------------------------------------------------------
# GPU data.


def _on_gpu(operands: Operands, device: int, problem: Problem, plan: Plan, options: Options) -> Any:
    stream = options.stream_handle
    with contexts.using(device) as context:
        for x in (operands.a, operands.b, operands.out):  # the producers' pending work first
            if x is not None and x.stream is not None:
                streams.wait(stream, x.stream)
        copies = [
            _gpu_read(x, read, position, problem)
            for position, (x, read) in enumerate(zip((operands.a, operands.b), plan.reads))
        ]
        for copy in copies:  # made on their own (the legacy) stream
            if copy is not None:
                streams.wait(stream, copy._stream)
        a, b = (x.pointer if copy is None else copy._pointer for x, copy in zip((operands.a, operands.b), copies))
        if plan.entry == DEVICE_NEW:
            written: DeviceArray | DeviceOperand = device_run(problem, plan, device, stream)(a, b, options.stream)
        else:
            written = (
                operands.out
                if plan.write == OUT
                else device_array.empty(problem.shapes.result, problem.loop, device, stream=options.stream)._operand()
            )
            library.call("gpumatmul_gemm_device", context, plan.desc, a, b, written.pointer, stream)
        for copy in copies:  # their memory is freed on their stream: after the product
            if copy is not None:
                streams.wait(copy._stream, stream)
    return written


def _gpu_read(x: Any, read: Reading, position: int, problem: Problem) -> DeviceArray | None:
    """The copy of GPU operand ``x`` the C call reads (C-ordered, in problem.operands[position], made on
    the device), or None where it reads ``x`` in place."""
    if read.copy == IN_PLACE:
        return None
    view = device_array.wrap(x)
    if read.copy == COPY_STACK:
        stack = layout.broadcast(
            layout.Strided(*shapes.stack_layout(x.shape, x.strides, problem.shapes, position), x.dtype.itemsize),
            problem.shapes.batch,
        )
        view = device_array.as_strided(view, stack.shape, stack.strides)
    return view.astype(problem.operands[position])


# A product of GPU data into new memory, called with the operands' addresses and the stream's
# owner: device_new with the plan, the result's layout and its bytes bound (a partial, not a
# method: one Python frame less per call). Made by the first call of its layouts (_on_gpu) and
# kept by repeat for later ones.
DeviceRun = Callable[[int, int, Any], DeviceArray]


def device_run(problem: Problem, plan: Plan, device: int, stream: int) -> DeviceRun:
    shape, loop = problem.shapes.result, problem.loop
    result = shape, layout.contiguous_strides(shape, loop.itemsize), loop, device, stream  # its DeviceArray._layout
    return functools.partial(device_new, plan, result, math.prod(shape) * loop.itemsize)


def device_new(plan: Plan, result: ArrayLayout, nbytes: int, a: int, b: int, stream_owner: Any) -> DeviceArray:
    """The plan's product of the operands at ``a`` and ``b`` into a new DeviceArray of
    ``nbytes`` and layout ``result`` (a ``DeviceArray._layout``), ordered on its stream: into a block
    kept for reuse (``memory.take``), or into one that libgpumatmul allocates from pyctk's
    pool in the same C call. ``stream_owner``: the ``stream=`` argument, which the result
    keeps alive (see ``_arrays.memory.Allocation``)."""
    device, stream = result[3], result[4]
    context = contexts.context(device)
    kept = memory.take(context, device, nbytes, stream)
    if kept:
        allocation = memory.Allocation(kept, context, device, stream, stream_owner, nbytes)
        code = library.library().gpumatmul_gemm_device(context, plan.desc, a, b, kept, stream)
    else:
        c = c_void_p()
        code = memory.allocating(
            library.library().gpumatmul_gemm_device_new, context, plan.desc, a, b, stream, byref(c)
        )
        allocation = memory.Allocation(c.value or 0, context, device, stream, stream_owner, nbytes)
    if code:
        raise library.error(code)
    return DeviceArray._checked_before(allocation.pointer, result, allocation)
