"""Loaded kernels and their launches: ``Module``, ``Function``, and ``In``/``Out``/``InOut``.

A module is loaded once for every device (``cuLibraryLoadData``, context-independent
loading), and a ``Function`` launches in the calling thread's current context.

A launch checks its arguments before anything reaches the GPU: their number and, where
the kernel's parameters are known (every kernel pyctk compiled, and any PTX), each one's
size and kind (``pyctk._pycuda.kernels.kernel_args``). Arguments:

- device memory is passed as a pointer: a ``DeviceAllocation``, a ``pyctk.DeviceArray``,
  any object with ``__cuda_array_interface__`` or DLPack (CuPy, PyTorch, JAX ...), whose
  pending work is ordered before the launch; it must be on the launch's device;
- ``In(a)``, ``Out(a)``, ``InOut(a)`` of a NumPy array: copied to fresh device memory
  before the launch and/or back after it, as in PyCUDA (the call then returns once the
  copies back are done);
- NumPy scalars by value, their bytes as they are (``numpy.int32(n)`` for an ``int``).
"""

from __future__ import annotations

import ctypes
import enum
import os
from collections.abc import Sequence
from ctypes import byref, c_char, c_size_t, c_void_p
from pathlib import Path
from typing import Any

import numpy as np

from ..._cuda import constants as cu
from ..._cuda import driver_api, driver_errors, streams
from ..._cuda.errors import DeviceMismatchError
from ..contexts.enums import named_attribute
from ..contexts.streams import Event
from ..memory.device import device_memory, device_pointer, host_buffer
from ..memory.host import is_managed
from . import kernel_args, textures, vector_types

_ELF, _FATBIN = b"\x7fELF", b"\x50\xed\x55\xba"  # CUBIN and fatbinary magic; anything else is PTX
_DIMENSION_LIMIT = 2**32  # what a C unsigned int holds


class function_attribute(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """What a kernel needs and allows: ``CUfunction_attribute`` (cuda.h), for
    :meth:`Function.get_attribute` and :meth:`Function.set_attribute`.

    Each one also reads as a lowercase attribute of a :class:`Function` (``f.num_regs``).
    """

    MAX_THREADS_PER_BLOCK = cu.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK  #: The most threads a block of it can have.
    SHARED_SIZE_BYTES = cu.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES  #: Bytes of static shared memory.
    CONST_SIZE_BYTES = cu.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES  #: Bytes of constant memory.
    LOCAL_SIZE_BYTES = cu.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES  #: Bytes of local memory per thread.
    NUM_REGS = cu.CU_FUNC_ATTRIBUTE_NUM_REGS  #: Registers per thread.
    PTX_VERSION = cu.CU_FUNC_ATTRIBUTE_PTX_VERSION  #: The PTX's architecture, 10 * major + minor.
    BINARY_VERSION = cu.CU_FUNC_ATTRIBUTE_BINARY_VERSION  #: The machine code's architecture, likewise.
    CACHE_MODE_CA = cu.CU_FUNC_ATTRIBUTE_CACHE_MODE_CA  #: Whether it was compiled with ``-Xptxas -dlcm=ca``.
    MAX_DYNAMIC_SHARED_SIZE_BYTES = (
        cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    )  #: Bytes of dynamic shared memory it may launch with.
    PREFERRED_SHARED_MEMORY_CARVEOUT = (
        cu.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
    )  #: The percentage of L1 it prefers as shared memory.
    CLUSTER_SIZE_MUST_BE_SET = (
        cu.CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET
    )  #: Whether a launch must give a cluster size.
    REQUIRED_CLUSTER_WIDTH = cu.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH  #: Its compiled cluster width.
    REQUIRED_CLUSTER_HEIGHT = cu.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT  #: Its compiled cluster height.
    REQUIRED_CLUSTER_DEPTH = cu.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH  #: Its compiled cluster depth.
    NON_PORTABLE_CLUSTER_SIZE_ALLOWED = (
        cu.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
    )  #: Whether it may launch with a non-portable cluster size.
    CLUSTER_SCHEDULING_POLICY_PREFERENCE = (
        cu.CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
    )  #: How its clusters are scheduled.
    MAX = cu.CU_FUNC_ATTRIBUTE_MAX  #: The end of the enumeration, not an attribute.


class jit_option(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """Options of the driver's JIT compiler, which compiles PTX as it loads it:
    ``CUjit_option`` (cuda.h).

    For ``module_from_buffer(image, options=[(jit_option.MAX_REGISTERS, 32)])``, integer
    values only (the log buffers are pyctk's: the logs go to ``message_handler``), and for
    :class:`Linker`, which translates them for nvJitLink. See CUDA's documentation of
    ``CUjit_option`` for each one.
    """

    MAX_REGISTERS = cu.CU_JIT_MAX_REGISTERS
    THREADS_PER_BLOCK = cu.CU_JIT_THREADS_PER_BLOCK
    WALL_TIME = cu.CU_JIT_WALL_TIME
    INFO_LOG_BUFFER = cu.CU_JIT_INFO_LOG_BUFFER
    INFO_LOG_BUFFER_SIZE_BYTES = cu.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
    ERROR_LOG_BUFFER = cu.CU_JIT_ERROR_LOG_BUFFER
    ERROR_LOG_BUFFER_SIZE_BYTES = cu.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
    OPTIMIZATION_LEVEL = cu.CU_JIT_OPTIMIZATION_LEVEL
    TARGET_FROM_CUCONTEXT = cu.CU_JIT_TARGET_FROM_CUCONTEXT
    TARGET = cu.CU_JIT_TARGET
    FALLBACK_STRATEGY = cu.CU_JIT_FALLBACK_STRATEGY
    GENERATE_DEBUG_INFO = cu.CU_JIT_GENERATE_DEBUG_INFO
    LOG_VERBOSE = cu.CU_JIT_LOG_VERBOSE
    GENERATE_LINE_INFO = cu.CU_JIT_GENERATE_LINE_INFO
    CACHE_MODE = cu.CU_JIT_CACHE_MODE
    NEW_SM3X_OPT = cu.CU_JIT_NEW_SM3X_OPT
    FAST_COMPILE = cu.CU_JIT_FAST_COMPILE
    GLOBAL_SYMBOL_NAMES = cu.CU_JIT_GLOBAL_SYMBOL_NAMES
    GLOBAL_SYMBOL_ADDRESSES = cu.CU_JIT_GLOBAL_SYMBOL_ADDRESSES
    GLOBAL_SYMBOL_COUNT = cu.CU_JIT_GLOBAL_SYMBOL_COUNT
    LTO = cu.CU_JIT_LTO
    FTZ = cu.CU_JIT_FTZ
    PREC_DIV = cu.CU_JIT_PREC_DIV
    PREC_SQRT = cu.CU_JIT_PREC_SQRT
    FMA = cu.CU_JIT_FMA
    REFERENCED_KERNEL_NAMES = cu.CU_JIT_REFERENCED_KERNEL_NAMES
    REFERENCED_KERNEL_COUNT = cu.CU_JIT_REFERENCED_KERNEL_COUNT
    REFERENCED_VARIABLE_NAMES = cu.CU_JIT_REFERENCED_VARIABLE_NAMES
    REFERENCED_VARIABLE_COUNT = cu.CU_JIT_REFERENCED_VARIABLE_COUNT
    OPTIMIZE_UNUSED_DEVICE_VARIABLES = cu.CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES
    POSITION_INDEPENDENT_CODE = cu.CU_JIT_POSITION_INDEPENDENT_CODE
    MIN_CTA_PER_SM = cu.CU_JIT_MIN_CTA_PER_SM
    MAX_THREADS_PER_BLOCK = cu.CU_JIT_MAX_THREADS_PER_BLOCK
    OVERRIDE_DIRECTIVE_VALUES = cu.CU_JIT_OVERRIDE_DIRECTIVE_VALUES
    SPLIT_COMPILE = cu.CU_JIT_SPLIT_COMPILE
    BINARY_LOADER_THREAD_COUNT = cu.CU_JIT_BINARY_LOADER_THREAD_COUNT  # (CUDA 13)


# CUjit_target: the architectures whose code the JIT makes for jit_option.TARGET (those CUDA 12
# and 13 name, up to 13.5; PyCUDA's COMPUTE_10 to COMPUTE_21 left CUDA long ago), their "a"
# (architecture-specific) and "f" (family) forms after CUDA's bases for them.
_JIT_ARCHS = (30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 107, 110, 120, 121)
# (mypy reads an enum's members from literal names only; these are made from _JIT_ARCHS.)
jit_target = enum.IntEnum(  # type: ignore[misc]
    "jit_target",
    {
        **{f"COMPUTE_{arch}": arch for arch in _JIT_ARCHS},
        **{f"COMPUTE_{arch}A": cu.CU_COMPUTE_ACCELERATED_TARGET_BASE + arch for arch in _JIT_ARCHS if arch >= 90},
        **{f"COMPUTE_{arch}F": cu.CU_COMPUTE_FAMILY_TARGET_BASE + arch for arch in _JIT_ARCHS if arch >= 100},
    },
    module=__name__,
)
jit_target.__doc__ = """The architecture the JIT compiles for: ``CUjit_target`` (cuda.h).

For ``(jit_option.TARGET, jit_target.COMPUTE_90)`` in the options of
:func:`module_from_buffer` or :class:`Linker`. ``COMPUTE_90A`` and the like are the
architecture-specific targets (sm_90a), ``COMPUTE_100F`` and the like the family ones
(sm_100f): CUDA 12 and 13 have them, PyCUDA does not, and CUDA dropped PyCUDA's
``COMPUTE_10`` to ``COMPUTE_21`` long ago.

Examples
--------
>>> import pyctk.driver as cuda
>>> int(cuda.jit_target.COMPUTE_90), hex(cuda.jit_target.COMPUTE_90A)
(90, '0x1005a')
"""


class jit_fallback(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """What a fatbinary's load prefers: ``CUjit_fallback`` (cuda.h), for
    ``jit_option.FALLBACK_STRATEGY``."""

    PREFER_PTX = cu.CU_PREFER_PTX  #: Compile its PTX, even where it has machine code for the GPU.
    PREFER_BINARY = cu.CU_PREFER_BINARY  #: Its machine code for the GPU, if it has some.


# Options a caller cannot give: the logs pyctk passes itself (they go to message_handler),
# and those whose value is a pointer to an array.
_NOT_GIVEN = {
    jit_option.INFO_LOG_BUFFER,
    jit_option.INFO_LOG_BUFFER_SIZE_BYTES,
    jit_option.ERROR_LOG_BUFFER,
    jit_option.ERROR_LOG_BUFFER_SIZE_BYTES,
    jit_option.GLOBAL_SYMBOL_NAMES,
    jit_option.GLOBAL_SYMBOL_ADDRESSES,
    jit_option.REFERENCED_KERNEL_NAMES,
    jit_option.REFERENCED_VARIABLE_NAMES,
}
_JIT_LOG_BYTES = 32768  # each log's buffer, as PyCUDA gives


class _JitArguments:
    """The JIT options of a load as the driver takes them, PyCUDA's log buffers first; the
    driver writes the logs and, in place of the buffers' sizes, their lengths."""

    def __init__(self, options: Sequence[tuple[int, int]]) -> None:
        pairs = []
        for pair in options:
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise TypeError(
                    f"options must be (jit_option, int) pairs, e.g. [(jit_option.MAX_REGISTERS, 32)]; got {pair!r}"
                )
            option, value = jit_option(pair[0]), int(pair[1])
            if option in _NOT_GIVEN:
                raise ValueError(
                    f"jit_option.{option.name} cannot be given: pyctk passes the JIT "
                    f"logs to message_handler(success, info_log, error_log) itself, "
                    f"and options whose value is a pointer are not supported"
                )
            pairs.append((option, value))
        self.info, self.error = (ctypes.create_string_buffer(_JIT_LOG_BYTES) for _ in range(2))
        pairs[:0] = [
            (jit_option.INFO_LOG_BUFFER, ctypes.addressof(self.info)),
            (jit_option.INFO_LOG_BUFFER_SIZE_BYTES, _JIT_LOG_BYTES),
            (jit_option.ERROR_LOG_BUFFER, ctypes.addressof(self.error)),
            (jit_option.ERROR_LOG_BUFFER_SIZE_BYTES, _JIT_LOG_BYTES),
        ]
        self.count = len(pairs)
        self.keys = (ctypes.c_int * self.count)(*(option for option, _ in pairs))
        self.values = (c_void_p * self.count)(*(value for _, value in pairs))

    def logs(self) -> tuple[str, str]:
        """(info log, error log), as long as the driver says it wrote."""
        info, error = (
            buffer.raw[: min(self.values[index] or 0, _JIT_LOG_BYTES)].rstrip(b"\0").decode(errors="replace")
            for buffer, index in ((self.info, 1), (self.error, 3))
        )
        return info, error


class ArgumentHandler:
    """A host array copied around a launch: the base of :class:`In`, :class:`Out` and
    :class:`InOut` (PyCUDA's ``ArgumentHandler``).

    The kernel is passed the address of new device memory of the array's size.

    Parameters
    ----------
    array : array_like
        A NumPy array (or any buffer). One that is copied back (``Out``, ``InOut``) must be
        writable and C- or Fortran-contiguous; one that is only copied in may be anything
        ``numpy.ascontiguousarray`` takes.

    Attributes
    ----------
    array : numpy.ndarray
        The host memory copied.
    copy_in, copy_out : bool
        Whether it is copied in before the launch, and back after it.
    """

    copy_in = copy_out = False

    def __init__(self, array: Any) -> None:
        if not self.copy_out and not (
            isinstance(array, np.ndarray) and (array.flags.c_contiguous or array.flags.f_contiguous)
        ):
            array = np.ascontiguousarray(array)  # read only: a contiguous copy will do
        self.array = host_buffer(array, writable=self.copy_out)


class In(ArgumentHandler):
    """A kernel argument: copy the host array to new device memory before the launch.

    Parameters
    ----------
    array : array_like
        Copied as it is, or made contiguous first.

    See Also
    --------
    Function : An example.
    """

    copy_in = True


class Out(ArgumentHandler):
    """A kernel argument: new device memory of the array's size, copied back into the array
    after the launch (the launch then returns once the copy is done).

    Parameters
    ----------
    array : numpy.ndarray
        Writable and C- or Fortran-contiguous.

    Raises
    ------
    ValueError
        ``array`` is read-only or not contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> import pyctk.driver as cuda
    >>> out = cuda.Out(np.zeros(8)[::2])
    Traceback (most recent call last):
        ...
    ValueError: host arrays must be C- or Fortran-contiguous for a copy (numpy.ascontiguousarray makes one)
    """

    copy_out = True


class InOut(ArgumentHandler):
    """A kernel argument: :class:`In` and :class:`Out` together.

    Parameters
    ----------
    array : numpy.ndarray
        Writable and C- or Fortran-contiguous.

    See Also
    --------
    Function : An example.
    """

    copy_in = copy_out = True


def _dimensions(value: Any, what: str) -> tuple[int, int, int]:
    """A grid or block as the three unsigned ints the launch takes (missing ones are 1)."""
    if value is None:
        raise TypeError(f"{what}= is required, e.g. {what}=(256, 1, 1)")
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(values) <= 3 or not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values
    ):
        raise TypeError(f"{what}= must be one to three ints, e.g. (256, 1, 1); got {value!r}")
    if not all(0 <= v < _DIMENSION_LIMIT for v in values):
        raise ValueError(f"{what}={value!r}: each size must be from 0 to 2**32 - 1")
    x, y, z = [int(v) for v in values] + [1] * (3 - len(values))
    return x, y, z


class Function:
    """A kernel of a :class:`Module`, launched by calling it (PyCUDA's ``Function``).

    Made by :meth:`Module.get_function`. ``f(*args, block=(x, y, z), grid=(x, y, z),
    shared=0, stream=None, time_kernel=False)`` launches ``grid`` blocks of ``block``
    threads with ``shared`` bytes of dynamic shared memory on ``stream`` in the current
    context, and returns at once; with ``time_kernel=True``, after the kernel, returning the
    seconds it took.

    Unlike PyCUDA's, a launch checks its arguments before anything reaches the GPU: their
    number and, where the kernel's parameters are known (every kernel pyctk compiled, and
    any PTX), each one's size and kind. An argument is

    - device memory, passed as a pointer: a :class:`DeviceAllocation`, a
      :class:`pyctk.DeviceArray`, any object with ``__cuda_array_interface__`` or DLPack
      (CuPy, PyTorch, JAX ...), whose pending work is ordered before the launch, a managed
      array (:func:`managed_empty`), a :class:`TextureObject` or :class:`SurfaceObject`;
    - :class:`In`, :class:`Out`, :class:`InOut` of a NumPy array, copied to fresh device
      memory before the launch and/or back after it;
    - a NumPy scalar, passed by value, its bytes as they are (``numpy.int32(n)`` for an
      ``int`` parameter; Python numbers are refused: their C type is a guess).

    Parameters
    ----------
    *args
        The kernel's arguments, as above.
    block : tuple of int
        Threads per block, one to three numbers (missing ones are 1). Required.
    grid : tuple of int, optional
        Blocks, one to three numbers; default ``(1, 1)``.
    shared : int, optional
        Bytes of dynamic (``extern __shared__``) shared memory.
    stream : Stream, optional
        Or a handle, or any object with ``__cuda_stream__``; default None, the legacy
        default stream.
    time_kernel : bool, optional
        Wait for the kernel and return the seconds it took.
    texrefs : list, optional
        PyCUDA's; texture references no longer exist in CUDA, and a non-empty list raises
        :class:`TextureReferenceError`.

    Returns
    -------
    float or None
        Seconds, with ``time_kernel=True``.

    Raises
    ------
    TypeError
        A wrong number of arguments, or an argument the kernel's parameter cannot take.
    pyctk.DeviceMismatchError
        Device memory of another device than the current one.
    pyctk.driver.LaunchError
        The launch failed (``ContextLostError``, a ``LaunchError``: a kernel faulted, and
        the process cannot use the GPU again; see its message).

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> from pyctk.compiler import SourceModule
    >>> module = SourceModule('''
    ... __global__ void scale(float *a, float factor, int n) {
    ...     int i = blockIdx.x * blockDim.x + threadIdx.x;
    ...     if (i < n) a[i] *= factor;
    ... }''')
    >>> scale = module.get_function("scale")
    >>> a = np.arange(4, dtype=np.float32)
    >>> scale(cuda.InOut(a), np.float32(2), np.int32(4), block=(256, 1, 1), grid=(1, 1))
    >>> a
    array([0., 2., 4., 6.], dtype=float32)
    >>> scale(cuda.InOut(a), 2.0, np.int32(4), block=(256, 1, 1))
    Traceback (most recent call last):
        ...
    TypeError: scale() argument 1 is a Python float, whose C type pyctk cannot know: pass numpy.float32
    >>> scale.num_regs > 0, scale.max_threads_per_block
    (True, 1024)
    """

    def __init__(self, module: Module, kernel: int, name: str, params: list[kernel_args.Param] | None) -> None:
        self.module, self.handle, self.name, self.params = module, kernel, name, params
        self._prepared: tuple[list[str], Any, int] | None = None  # prepare's types, block, shared

    def __repr__(self) -> str:
        return f"<pyctk.driver.Function {self.name}>"

    def get_attribute(self, attribute: int) -> int:
        """One attribute of the kernel on the current device.

        Parameters
        ----------
        attribute : function_attribute

        Returns
        -------
        int
        """
        return driver_api.query_int("cuKernelGetAttribute", int(attribute), self.handle, driver_api.current_device())

    def set_attribute(self, attribute: int, value: int) -> None:
        """Set one attribute of the kernel on the current device.

        Parameters
        ----------
        attribute : function_attribute
            E.g. ``MAX_DYNAMIC_SHARED_SIZE_BYTES``, to launch with more than 48 KiB of dynamic
            shared memory.
        value : int
        """
        driver_api.call("cuKernelSetAttribute", int(attribute), int(value), self.handle, driver_api.current_device())

    def __getattr__(self, name: str) -> int:
        # PyCUDA's lowercase attributes: f.num_regs is f.get_attribute(function_attribute.NUM_REGS).
        return self.get_attribute(named_attribute(function_attribute, "Function", name))

    def set_cache_config(self, config: int) -> None:
        """Prefer more shared memory or more L1 cache for this kernel on the current device.

        It overrides the context's :meth:`Context.set_cache_config`.

        Parameters
        ----------
        config : func_cache
        """
        driver_api.call("cuKernelSetCacheConfig", self.handle, int(config), driver_api.current_device())

    def set_shared_config(self, config: int) -> None:
        """Set this kernel's shared memory bank size in the current context (no effect on
        current GPUs; PyCUDA documents it without having it).

        Parameters
        ----------
        config : shared_config
        """
        function = c_void_p()
        driver_api.current_context()
        driver_api.call("cuKernelGetFunction", byref(function), self.handle)
        driver_api.call("cuFuncSetSharedMemConfig", function, int(config))

    def __call__(
        self,
        *args: Any,
        block: Sequence[int] | None = None,
        grid: Sequence[int] = (1, 1),
        shared: int = 0,
        stream: Any = None,
        time_kernel: bool = False,
        texrefs: Sequence[Any] = (),
    ) -> float | None:
        """Launch the kernel; the class's documentation says how."""
        textures.refuse_texrefs(texrefs)
        blocks, threads = _dimensions(grid, "grid"), _dimensions(block, "block")
        handle = streams.handle(stream)
        keep: list[Any] = []  # what device memory's owners must outlive the launch
        copies_back: list[tuple[np.ndarray, Any]] = []  # (array, its device copy)
        parameters, buffer = _pack(self._values(args, handle, keep, copies_back))

        timing = (Event(), Event()) if time_kernel else None
        if timing:
            timing[0].record(handle)
        driver_api.check(
            driver_api.driver().cuLaunchKernel(self.handle, *blocks, *threads, int(shared), handle, parameters, None),
            f"launching {self.name} with grid={blocks}, block={threads}, shared={shared}",
        )
        if timing:
            timing[1].record(handle)
        for array, allocation in copies_back:
            driver_api.call("cuMemcpyDtoHAsync", array.ctypes.data, allocation.pointer, array.nbytes, handle)
        if copies_back:
            driver_api.call("cuStreamSynchronize", handle)
        del keep, buffer  # device memory of In/Out goes back to the pool, ordered on the stream
        if timing:
            return timing[1].synchronize().time_since(timing[0]) / 1000.0
        return None

    def _values(self, args: tuple, stream: int, keep: list, copies_back: list) -> list[bytes]:
        """Each argument's bytes as the kernel takes them, checked against its parameters (a
        launch's, and a graph's kernel node's). Device memory's owners go to ``keep``; In/Out
        arrays are copied in on ``stream``, and those to copy back go to ``copies_back``."""
        if self.params is not None and len(args) != len(self.params):
            raise TypeError(
                f"{self.name}() takes {len(self.params)} arguments (the kernel's parameters), got {len(args)}"
            )
        device = driver_api.current_device()
        values = []
        for index, argument in enumerate(args):
            param = None if self.params is None else self.params[index]
            if isinstance(argument, textures.ResourceObject):  # a cudaTextureObject_t / cudaSurfaceObject_t
                argument = np.uint64(argument.live_handle())
            elif isinstance(argument, np.ndarray) and argument.ndim == 0 and not is_managed(argument):
                argument = argument[()]  # by value, as PyCUDA passes vec.make_float3(...)
            if isinstance(argument, (np.generic, bool, int, float, complex)):
                values.append(kernel_args.value_bytes(self.name, index, argument, param))
                continue
            if param is not None and not kernel_args.takes_pointer(param):
                raise TypeError(
                    f"{self.name}() argument {index} is {kernel_args.describe(param)} in "
                    f"the kernel; got {type(argument).__name__}, which passes an address: "
                    f"pass {kernel_args.suggest(param)}"
                )
            address = self._address(index, argument, device, stream, keep, copies_back)
            values.append(address.to_bytes(8, "little"))
        return values

    # -- PyCUDA's prepared calls: the argument types given once, then grid and block first --

    def prepare(
        self,
        arg_types: str | Sequence[Any],
        block: Sequence[int] | None = None,
        shared: int | None = None,
        texrefs: Sequence[Any] = (),
    ) -> Function:
        """Fix the arguments' types for :meth:`prepared_call` and its kin.

        The prepared calls then convert Python numbers to their argument's type; device
        memory (a :class:`DeviceAllocation`, a GPU array, an int address for ``"P"``) passes
        its address.

        Parameters
        ----------
        arg_types : str or sequence
            A ``struct`` format string, one letter per argument (``"PiP"``: a pointer, an
            int32, a pointer; ``"f"`` float32, ``"d"`` float64, ``"q"`` int64 ...), or a
            sequence of NumPy dtypes and such letters (``[np.intp, np.int32]``).
        block : tuple of int, optional
            PyCUDA's old default block of the calls.
        shared : int, optional
            PyCUDA's old default bytes of dynamic shared memory.
        texrefs : list, optional
            Must be empty: texture references no longer exist in CUDA.

        Returns
        -------
        Function
            The function itself.

        Raises
        ------
        TypeError
            A type no kernel argument has, or as many types as the kernel has not parameters.

        Examples
        --------
        >>> import numpy as np                           # doctest: +GPU
        >>> import pyctk.driver as cuda
        >>> from pyctk.compiler import SourceModule
        >>> module = SourceModule('''
        ... __global__ void scale(float *a, float factor, int n) {
        ...     int i = blockIdx.x * blockDim.x + threadIdx.x;
        ...     if (i < n) a[i] *= factor;
        ... }''')
        >>> scale = module.get_function("scale").prepare("Pfi")
        >>> a_gpu = cuda.to_device(np.arange(4, dtype=np.float32))
        >>> scale.prepared_call((1, 1), (256, 1, 1), a_gpu, 2, 4)
        >>> cuda.from_device(a_gpu, (4,), np.float32)
        array([0., 2., 4., 6.], dtype=float32)
        """
        textures.refuse_texrefs(texrefs)
        codes = [_type_code(t) for t in ([*arg_types] if isinstance(arg_types, str) else arg_types)]
        if self.params is not None and len(codes) != len(self.params):
            raise TypeError(
                f"{self.name}.prepare: the kernel has {len(self.params)} parameters, "
                f"but {len(codes)} argument types were given ({arg_types!r})"
            )
        self._prepared = (codes, block, shared or 0)
        return self

    def prepared_call(
        self, grid: Sequence[int], block: Sequence[int] | None, *args: Any, shared_size: int | None = None
    ) -> None:
        """Launch with the types :meth:`prepare` fixed, on the legacy default stream; return at once.

        Parameters
        ----------
        grid : tuple of int
            Blocks.
        block : tuple of int or None
            Threads per block; None: :meth:`prepare`'s ``block``.
        *args
            The kernel's arguments, converted to the prepared types.
        shared_size : int, optional
            Bytes of dynamic shared memory; default :meth:`prepare`'s ``shared``.

        Raises
        ------
        pyctk.driver.LogicError
            :meth:`prepare` was not called.
        TypeError
            A wrong number of arguments.
        """
        self._prepared_launch(grid, block, None, args, shared_size, False)

    def prepared_async_call(
        self, grid: Sequence[int], block: Sequence[int] | None, stream: Any, *args: Any, shared_size: int | None = None
    ) -> None:
        """Launch with the types :meth:`prepare` fixed, on a stream; return at once.

        Parameters
        ----------
        grid, block
            As for :meth:`prepared_call`.
        stream : Stream
            Or None, the legacy default stream.
        *args
            The kernel's arguments.
        shared_size : int, optional
        """
        self._prepared_launch(grid, block, stream, args, shared_size, False)

    def prepared_timed_call(
        self, grid: Sequence[int], block: Sequence[int] | None, *args: Any, shared_size: int | None = None
    ) -> Any:
        """Launch with the types :meth:`prepare` fixed, and wait for the kernel.

        Parameters
        ----------
        grid, block, *args, shared_size
            As for :meth:`prepared_call`.

        Returns
        -------
        callable
            Called with no argument, it gives the kernel's time in seconds, as in PyCUDA.
        """
        seconds = self._prepared_launch(grid, block, None, args, shared_size, True)
        return lambda: seconds

    def _prepared_launch(
        self, grid: Any, block: Any, stream: Any, args: tuple, shared: Any, timed: bool
    ) -> float | None:
        prepared = self._prepared
        if prepared is None:
            raise driver_errors.LogicError(f"{self.name}: prepared calls need prepare(arg_types) first")
        codes, default_block, default_shared = prepared
        if len(args) != len(codes):
            raise TypeError(f"{self.name}: prepared for {len(codes)} arguments, got {len(args)}")
        values = [_as_type(code, argument) for code, argument in zip(codes, args)]
        return self(
            *values,
            block=block if block is not None else default_block,
            grid=grid,
            shared=default_shared if shared is None else shared,
            stream=stream,
            time_kernel=timed,
        )

    def _address(self, index: int, argument: Any, device: int, stream: int, keep: list, copies_back: list) -> int:
        """The device address an argument passes, copying In/Out data and checking its device."""
        if isinstance(argument, ArgumentHandler):
            array = argument.array
            allocation = device_memory(array.nbytes, device, stream)
            keep.append(allocation)
            if argument.copy_in and array.nbytes:
                driver_api.call("cuMemcpyHtoDAsync", allocation.pointer, array.ctypes.data, array.nbytes, stream)
            if argument.copy_out:
                copies_back.append((array, allocation))
            return allocation.pointer
        if isinstance(argument, np.ndarray) and is_managed(argument):  # used in place, as in PyCUDA
            keep.append(argument)
            return argument.ctypes.data
        if isinstance(argument, np.ndarray):
            raise TypeError(
                f"{self.name}() argument {index} is a NumPy array in host memory: wrap it "
                f"as cuda.In(a), cuda.Out(a) or cuda.InOut(a) to copy it around the "
                f"launch, or copy it to the GPU first (cuda.to_device(a), pyctk.asarray(a))"
            )
        pointer = device_pointer(argument, stream)
        if pointer is None:
            kernel_args.value_bytes(self.name, index, argument, None)  # raises, naming what to pass
        assert pointer is not None  # (value_bytes raised)
        if pointer.device is not None and pointer.device != device:
            raise DeviceMismatchError(
                f"{self.name}() argument {index} is on device {pointer.device}, but the kernel "
                f"launches on device {device}, the current one: copy it there "
                f"(pyctk.asarray(x, device={device})) or launch on its device "
                f"(pyctk.driver.Device({pointer.device}).make_context())"
            )
        keep.append(pointer.owner)
        return pointer.address


def _type_code(kind: Any) -> str:
    """The ``struct`` letter of one argument type of ``prepare``: a letter, or a dtype."""
    if kind == "P":  # struct's pointer, which NumPy has no dtype letter for
        return "P"
    if isinstance(kind, str) and kind[:-1].isdigit() and kind.endswith("s"):  # PyCUDA's "12s": bytes by value
        return kind
    try:
        dtype = np.dtype(kind)
    except TypeError:
        raise TypeError(
            f"prepare: {kind!r} is not an argument type: give a struct letter "
            f"('P' pointer, 'i' int32, 'f' float32 ...) or a NumPy dtype"
        ) from None
    if dtype.kind == "V" and not dtype.shape:  # a vector or struct type (vec.float3): PyCUDA's "12s"
        return f"{dtype.itemsize}s"
    if dtype.kind not in "biufc" or dtype.shape:
        raise TypeError(f"prepare: {dtype} is not a type a kernel argument has")
    return dtype.char


def _as_type(code: str, argument: Any) -> Any:
    """A prepared call's argument as ``__call__`` takes it: a number as its NumPy type; device
    memory as it is (``__call__`` passes its address); an int address for a pointer."""
    if code.endswith("s"):  # a struct or vector type by value
        return vector_types.struct_value(int(code[:-1]), argument)
    if isinstance(argument, (bool, int, float, complex, np.generic)):
        # A complex address is NumPy's TypeError to raise.
        return np.uintp(argument) if code == "P" else np.dtype(code).type(argument)  # type: ignore[arg-type]
    return argument


def _pack(values: list[bytes]) -> tuple[Any, Any]:
    """The ``void *[]`` of parameter addresses a launch takes, and the buffer they point into
    (each value 16-byte aligned: the widest a parameter needs)."""
    if not values:
        return None, None
    offsets, data = [], bytearray()
    for value in values:
        data += bytes(-len(data) % 16)
        offsets.append(len(data))
        data += value
    buffer = (c_char * len(data)).from_buffer(data)
    base = ctypes.addressof(buffer)
    return (c_void_p * len(values))(*(base + offset for offset in offsets)), (buffer, data)


class Module:
    """Kernels loaded from a CUBIN, PTX or fatbinary image (PyCUDA's ``Module``).

    Made by :func:`module_from_buffer`, :func:`module_from_file`, :meth:`Linker.link_module`,
    or :class:`pyctk.compiler.SourceModule` (a subclass). Unlike PyCUDA's, a module is
    loaded once for every device (``cuLibraryLoadData``, context-independent loading), and
    its kernels launch in the calling thread's current context.

    Parameters
    ----------
    image : bytes
        A CUBIN, PTX or fatbinary.
    kernels : dict, optional
        pyctk's: each kernel's parameters, from the compiler (for PTX they are read from it).
    lowered : dict, optional
        pyctk's: C++ name expressions -> symbols, from the compiler.
    jit_options, message_handler
        As for :func:`module_from_buffer`.
    """

    _library = None  # until loaded: __del__ of a half-made module unloads nothing

    def __init__(
        self,
        image: bytes,
        kernels: dict[str, list[kernel_args.Param]] | None = None,
        lowered: dict[str, str] | None = None,
        jit_options: Sequence[tuple[int, int]] | None = None,
        message_handler: Any = None,
    ) -> None:
        image = bytes(image)
        if not image.startswith((_ELF, _FATBIN)):  # PTX: text the driver reads up to a NUL
            image = image.rstrip(b"\0") + b"\0"
            if kernels is None:
                kernels = kernel_args.parse_ptx(image[:-1].decode(errors="replace"))
        library = c_void_p()
        jit = None if jit_options is None and message_handler is None else _JitArguments(jit_options or ())
        result = driver_api.driver().cuLibraryLoadData(
            byref(library), image, *((jit.keys, jit.values, jit.count) if jit else (None, None, 0)), None, None, 0
        )
        info_log, error_log = jit.logs() if jit else ("", "")
        if result == 0 and error_log.strip():
            # PTX the JIT refused: CUDA loads lazily and reports it only at first use (as
            # CUDA_ERROR_INVALID_PTX), but the log is written now; report it now, as PyCUDA does.
            driver_api.driver().cuLibraryUnload(library)
            result = cu.CUDA_ERROR_INVALID_PTX
        if message_handler is not None:
            message_handler(result == 0, info_log, error_log)
        driver_api.check(
            result, "cuLibraryLoadData" + (f" (JIT error log: {error_log.strip()})" if error_log.strip() else "")
        )
        self._jit = jit  # the buffers the driver writes the logs to live as long as the module
        self._library, self._pid = library.value, os.getpid()
        self._image, self._kernels, self._lowered = image, kernels, dict(lowered or {})

    def __del__(self) -> None:
        if self._library and os.getpid() == self._pid and driver_api._driver is not None:
            driver_api._driver.cuLibraryUnload(self._library)

    def get_function(self, name: str) -> Function:
        """One of the module's kernels.

        Parameters
        ----------
        name : str
            Its plain name (``extern "C"``), its symbol, or a name expression the module was
            compiled with (``"scale<float>"``).

        Returns
        -------
        Function

        Raises
        ------
        pyctk.driver.LogicError
            No such kernel; the message lists the module's kernels.
        """
        symbol = self._lowered.get(name, name)
        kernel = c_void_p()
        result = driver_api.driver().cuLibraryGetKernel(byref(kernel), self._library, symbol.encode())
        if result == cu.CUDA_ERROR_NOT_FOUND:
            raise driver_errors.LogicError(self._not_found(name), "CUDA_ERROR_NOT_FOUND", result)
        driver_api.check(result, f"cuLibraryGetKernel({symbol!r})")
        return Function(self, kernel.value or 0, name, None if self._kernels is None else self._kernels.get(symbol))

    def _not_found(self, name: str) -> str:
        message = f"no kernel {name!r} in this module"
        if self._kernels:
            message += f"; its kernels are: {', '.join(sorted(self._kernels))}"
            if any(symbol.startswith("_Z") for symbol in self._kernels):
                message += (
                    " (names starting with _Z have C++ linkage: declare the kernel "
                    'extern "C", or compile with name_expressions=[...] and get_function '
                    "the name as written there)"
                )
        return message

    def get_global(self, name: str) -> tuple[int, int]:
        """Where a ``__device__`` or ``__constant__`` variable of the module is, on the current
        device.

        Parameters
        ----------
        name : str

        Returns
        -------
        tuple of int
            ``(address, size in bytes)``: the address goes wherever device memory does.

        Raises
        ------
        pyctk.driver.LogicError
            No such variable (``CUDA_ERROR_NOT_FOUND``).

        Examples
        --------
        >>> import numpy as np                           # doctest: +GPU
        >>> import pyctk.driver as cuda
        >>> from pyctk.compiler import SourceModule
        >>> module = SourceModule('''
        ... __constant__ float coefficients[4];
        ... __global__ void apply(float *a) { a[threadIdx.x] *= coefficients[threadIdx.x]; }''')
        >>> address, size = module.get_global("coefficients")
        >>> size
        16
        >>> cuda.memcpy_htod(address, np.array([1, 2, 3, 4], np.float32))
        >>> a = np.ones(4, np.float32)
        >>> module.get_function("apply")(cuda.InOut(a), block=(4, 1, 1))
        >>> a
        array([1., 2., 3., 4.], dtype=float32)
        """
        address, size = ctypes.c_uint64(), c_size_t()
        driver_api.current_context()
        driver_api.call(
            "cuLibraryGetGlobal", byref(address), byref(size), self._library, self._lowered.get(name, name).encode()
        )
        return address.value, size.value

    def get_texref(self, name: str) -> Any:
        """Removed with texture references in CUDA 12: raises :class:`TextureReferenceError`.

        Use a :class:`TextureObject`: the error says how.
        """
        raise textures.references_removed(f"Module.get_texref({name!r})")

    def get_surfref(self, name: str) -> Any:
        """Removed with surface references in CUDA 12: raises :class:`TextureReferenceError`.

        Use a :class:`SurfaceObject`: the error says how.
        """
        raise textures.references_removed(f"Module.get_surfref({name!r})")


def module_from_buffer(
    buffer: Any, options: Sequence[tuple[int, int]] | None = None, message_handler: Any = None
) -> Module:
    """Load a module from a CUBIN, PTX or fatbinary in memory (PyCUDA's ``module_from_buffer``).

    Parameters
    ----------
    buffer : bytes-like
        The image: :func:`pyctk.compiler.compile`'s result, say.
    options : list of tuple, optional
        ``(jit_option, int)`` pairs for the driver's JIT compiler, which compiles PTX as it
        loads it.
    message_handler : callable, optional
        ``message_handler(success, info_log, error_log)``, called after the load, whether it
        worked or not, with the JIT's logs (empty for a CUBIN).

    Returns
    -------
    Module

    Raises
    ------
    pyctk.driver.Error
        The load failed; the message ends with the JIT's error log. PTX the JIT refuses is
        reported here, as in PyCUDA, not at the first launch.
    TypeError
        An option that is not a ``(jit_option, int)`` pair.

    Examples
    --------
    PTX compiled with no GPU, loaded, and run:

    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> from pyctk.compiler import compile
    >>> ptx = compile("__global__ void fill(int *a) { a[threadIdx.x] = 7; }",
    ...               arch="compute_75", target="ptx")
    >>> loads = []
    >>> module = cuda.module_from_buffer(ptx, options=[(cuda.jit_option.MAX_REGISTERS, 32)],
    ...                                  message_handler=lambda ok, info, error: loads.append(ok))
    >>> loads
    [True]
    >>> a = np.zeros(4, np.int32)
    >>> module.get_function("fill")(cuda.Out(a), block=(4, 1, 1))
    >>> a
    array([7, 7, 7, 7], dtype=int32)
    """
    return Module(bytes(buffer), jit_options=options, message_handler=message_handler)


def module_from_file(path: str | os.PathLike) -> Module:
    """Load a module from a CUBIN, PTX or fatbinary file (PyCUDA's ``module_from_file``).

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    Module

    See Also
    --------
    module_from_buffer : An example.
    """
    return Module(Path(path).read_bytes())
