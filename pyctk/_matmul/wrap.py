"""Stage 5 of a product: wrap the result as the caller gets it.

A temporary is moved (cast, on the host, under ``casting=``) into ``out``, and ``out=``
itself is returned; a new result has its core axes where ``axes=`` puts them (a view),
and is a NumPy scalar for host 1-D @ 1-D, as in NumPy; a new GPU result is the DeviceArray
the C call allocated.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._cuda import cudart
from . import shapes
from .describe import Operands
from .options import Options
from .plan import NEW, TEMPORARY, Plan


def wrap(operands: Operands, plan: Plan, options: Options, written: Any) -> Any:
    if plan.write == TEMPORARY:
        _into_out(operands, options, written)
    if plan.write != NEW:
        return operands.out_given
    if operands.out_axes is not None:
        written = written.transpose(shapes.moved_back(written.ndim, operands.out_axes))
    if operands.device is None and written.ndim == 0:
        return written[()]
    return written


def _into_out(operands: Operands, options: Options, temporary: Any) -> None:
    if operands.device is None:
        np.copyto(operands.out, temporary, casting=options.casting)
        return
    out = operands.out  # C-contiguous, of the loop dtype (plan._device_write)
    with cudart.on_device(operands.device):
        cudart.call("cudaMemcpyAsync", out.pointer, temporary.pointer,
                    out.dtype.itemsize * math.prod(out.shape), cudart.DEVICE_TO_DEVICE,
                    options.stream_handle)
