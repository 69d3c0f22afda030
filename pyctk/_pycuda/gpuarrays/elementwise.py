"""PyCUDA's ``ElementwiseKernel``: a C expression run for each element ``i`` of arrays.

``ElementwiseKernel("float a, float *x, float *y, float *z", "z[i] = a*x[i] + y[i]")``
writes a kernel that loops ``i`` over the elements of its first array argument with a
grid-wide stride, compiles it with NVRTC on first call (through the kernel cache: a later
process compiles nothing) and launches it. ``operation`` sees the parameters, ``i``
(``size_t``) and ``n`` (the element count; with ``range=``/``slice=``, ``start``, ``stop``,
``step`` and a ``long i`` instead), as in PyCUDA; ``preamble``, ``loop_prep`` and
``after_loop`` go where PyCUDA puts them.

Array arguments are PyCUDA ``GPUArray``s or any contiguous GPU array (CuPy, PyTorch, JAX,
``pyctk.DeviceArray``: the CUDA Array Interface or DLPack); scalars are converted to their
parameter's C type. Calls are asynchronous, on ``stream`` (None: the legacy default stream).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._arrays import interop
from ..._arrays.layout import is_c_contiguous
from ..kernels import textures
from ..kernels.c_types import Argument, ScalarArg, VectorArg, dtype_to_ctype, parse_c_arg
from ..kernels.source_modules import SourceModule
from ..kernels.vector_types import struct_value
from .launching import Kernel, geometry, stream_handle

COMPLEX_HEADER = "#include <pycuda-complex.hpp>\n"  # pyctk's, over cuda::std::complex (CCCL)


def parse_arguments(arguments: str | Sequence[Argument]) -> list[Argument]:
    """The parameters of a C parameter list (``"float a, float *x"``), or a list of
    ``VectorArg``/``ScalarArg`` as it is."""
    if isinstance(arguments, str):
        return [parse_c_arg(a) for a in arguments.split(",") if a.strip()]
    arguments = list(arguments)
    if not all(isinstance(a, Argument) for a in arguments):
        raise TypeError(
            "arguments must be a C parameter list ('float *x, float a') or a list of pyctk.tools.VectorArg / ScalarArg"
        )
    return arguments


def needs_complex(*texts: str, dtypes: Sequence[np.dtype] = ()) -> bool:
    """Whether generated source needs the complex header: a complex dtype, or source that names it."""
    return any(d.kind == "c" for d in dtypes) or any("complex" in t for t in texts)


def source(
    arguments: Sequence[Argument],
    operation: str,
    name: str,
    preamble: str = "",
    loop_prep: str = "",
    after_loop: str = "",
    use_range: bool = False,
    restrict: bool = False,
    loop_arguments: bool = True,
) -> str:
    """The CUDA source of an element-wise kernel (PyCUDA's, grid-stride); ``restrict``: its
    pointers declared ``__restrict__``, for calls whose arrays do not overlap (``apart``);
    ``loop_arguments``: the loop's parameters (``n``, or ``start``, ``stop``, ``step``)
    added after ``arguments``, else among them (PyCUDA's ``get_elwise_module``)."""
    header = COMPLEX_HEADER if needs_complex(operation, preamble, dtypes=[a.dtype for a in arguments]) else ""
    loop_params = ["long start", "long stop", "long step"] if use_range else ["unsigned long n"]
    params = ", ".join([*(a.declarator(restrict) for a in arguments), *(loop_params if loop_arguments else [])])
    if use_range:
        loop = (
            "long i;\n  for (i = start + (long) (cta_start + tid) * step; step < 0 ? i > stop : i < stop; "
            "i += (long) total_threads * step)"
        )
    else:
        loop = "size_t i;\n  for (i = cta_start + tid; i < n; i += total_threads)"
    return (
        f"{header}{preamble}\n"
        f'extern "C" __global__ void {name}({params})\n{{\n'
        f"  unsigned tid = threadIdx.x;\n"
        f"  unsigned total_threads = gridDim.x * blockDim.x;\n"
        f"  unsigned cta_start = blockDim.x * blockIdx.x;\n"
        f"  {loop_prep};\n"
        f"  {loop}\n  {{\n    {operation};\n  }}\n"
        f"  {after_loop};\n}}\n"
    )


def warp_shuffle(direction: str) -> str:
    """C++ of ``pyctk_shfl_<direction>(value, delta)`` (``"down"`` or ``"up"``): a warp shuffle
    of any type (structs, complex numbers, bool), its bytes moved as 32-bit words."""
    return (
        "template <typename T>\n"
        f"__device__ __forceinline__ T pyctk_shfl_{direction}(const T &value, unsigned delta)\n{{\n"
        "  unsigned words[(sizeof(T) + 3) / 4] = {};\n"
        "  memcpy(words, &value, sizeof(T));\n"
        "#pragma unroll\n"
        "  for (unsigned k = 0; k < (sizeof(T) + 3) / 4; ++k)\n"
        f"    words[k] = __shfl_{direction}_sync(0xffffffffu, words[k], delta);\n"
        "  T result(value);\n"
        "  memcpy(&result, words, sizeof(T));\n"
        "  return result;\n}\n"
    )


def vector_pointer(argument: Any, what: str) -> tuple[int, int, int]:
    """(address, element count, bytes) of an array argument, which must be contiguous: a
    GPUArray (``ptr``, ``size``, ``nbytes``, ``flags.forc``) or another library's GPU array."""
    try:
        address, size, nbytes = argument.ptr, argument.size, argument.nbytes
        contiguous = argument.flags.forc
    except AttributeError:
        operand = interop.device_operand(argument)
        if operand is None:
            raise TypeError(
                f"{what} is {type(argument).__name__}, not an array in GPU memory: "
                f"copy it there first (pyctk.gpuarray.to_gpu(x))"
            ) from None
        size = int(np.prod(operand.shape))
        address = operand.pointer
        itemsize, shape, strides = operand.dtype.itemsize, operand.shape, operand.strides
        contiguous = is_c_contiguous(shape, strides, itemsize) or is_c_contiguous(shape[::-1], strides[::-1], itemsize)
        nbytes = size * itemsize
    if not contiguous:
        raise RuntimeError(
            f"only contiguous arrays may be used as arguments to this operation ({what}): make a copy first (x.copy())"
        )
    return int(address or 0), size, nbytes


def apart(spans: Sequence[tuple[int, int]]) -> bool:
    """Whether the byte ranges ``(address, bytes)`` of a call's arrays are pairwise disjoint
    (empty ones overlap nothing): then no array's stores reach another's loads, and the
    kernel's pointers may be ``__restrict__``. The same array twice is not apart."""
    ordered = sorted((address, address + nbytes) for address, nbytes in spans if nbytes)
    return all(end <= start for (_, end), (start, _) in zip(ordered, ordered[1:]))


def scalar_packer(argument: Argument) -> Any:
    """How a value of ``argument`` is given to ``struct``: complex numbers and structs as bytes."""
    dtype = argument.dtype
    if isinstance(argument, VectorArg):
        return None
    if dtype.kind == "c":
        return lambda value, t=dtype.type: t(value).tobytes()
    if dtype.kind == "V":
        return lambda value, size=dtype.itemsize: struct_value(size, value).tobytes()
    return None


def struct_code(argument: Argument) -> str:
    """The ``struct`` code a launch packs ``argument`` with."""
    if isinstance(argument, VectorArg):
        return "P"
    if argument.dtype.kind in "cV":
        return f"{argument.dtype.itemsize}s"
    return argument.dtype.char


_python_range = range  # (ElementwiseKernel.__call__'s range= hides it)


class ElementwiseKernel:
    """A kernel that runs a line of C for each element ``i`` (PyCUDA's ``ElementwiseKernel``).

    The kernel loops ``i`` over the elements of its first array argument with a grid-wide
    stride, as PyCUDA's does: ``operation`` sees the parameters, ``i`` (``size_t``) and
    ``n`` (the element count); with ``range=``/``slice=``, ``start``, ``stop``, ``step``
    and a ``long i`` instead. It is compiled by NVRTC on first call and kept in the kernel
    cache, so a later process compiles nothing.

    Unlike PyCUDA's: other libraries' GPU arrays are arguments too; a call whose arrays do
    not overlap runs a build whose pointers are ``__restrict__`` (its loads need not wait for
    another element's stores); ``get_texref`` raises (CUDA 12 has no texture references).

    Parameters
    ----------
    arguments : str or list of VectorArg and ScalarArg
        The kernel's parameters, e.g. ``"float a, float *x, float *y"``; at least one array.
    operation : str
        C code for element ``i``, e.g. ``"y[i] = a * x[i]"``.
    name : str, optional
        The kernel's name.
    keep : bool, optional
        Accepted for PyCUDA's sake.
    options : list of str, optional
        nvcc's options (None: :data:`pyctk.compiler.DEFAULT_NVCC_FLAGS`).
    preamble : str, optional
        Code before the kernel: helper functions, ``#include`` lines.
    loop_prep, after_loop : str, optional
        Code before the loop and after it, in the kernel.

    Notes
    -----
    Calling it, ``kernel(*args, range=None, slice=None, stream=None)``, launches over the
    first array argument's elements, or ``range`` (a ``slice`` or ``range`` with its stop
    and step) or ``slice`` (Python's slice of the first array's indices); it returns at once,
    the kernel queued on ``stream`` (None: the legacy default stream). Array arguments are
    contiguous GPUArrays or other libraries' contiguous GPU arrays (CuPy, PyTorch, JAX,
    :class:`pyctk.DeviceArray`); scalars are converted to their parameter's C type.

    Examples
    --------
    >>> import numpy as np                                         # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> from pyctk.elementwise import ElementwiseKernel
    >>> lin_comb = ElementwiseKernel("float a, float *x, float b, float *y, float *z",
    ...                              "z[i] = a*x[i] + b*y[i]", "linear_combination")
    >>> x = gpuarray.to_gpu(np.ones(5, np.float32))
    >>> y = gpuarray.to_gpu(np.arange(5, dtype=np.float32))
    >>> z = gpuarray.empty_like(x)
    >>> lin_comb(2, x, 3, y, z)
    >>> z.get()
    array([ 2.,  5.,  8., 11., 14.], dtype=float32)
    >>> lin_comb(0, x, 0, y, z, slice=slice(1, None, 2))          # z[1::2] = 0
    >>> z.get()
    array([ 2.,  0.,  8.,  0., 14.], dtype=float32)
    """

    def __init__(
        self,
        arguments: str | Sequence[Argument],
        operation: str,
        name: str = "kernel",
        keep: bool = False,
        options: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        unknown = set(kwargs) - {"preamble", "loop_prep", "after_loop"}
        if unknown:
            raise TypeError(f"ElementwiseKernel got unexpected keyword arguments: {', '.join(sorted(unknown))}")
        self.arguments = parse_arguments(arguments)
        if not any(isinstance(a, VectorArg) for a in self.arguments):
            raise ValueError(
                "ElementwiseKernel needs at least one array (pointer) argument, whose size sets the number of elements"
            )
        self.operation, self.name, self.keep, self.options = operation, name, keep, options
        self.preamble = kwargs.get("preamble", "")
        self.loop_prep, self.after_loop = kwargs.get("loop_prep", ""), kwargs.get("after_loop", "")
        self._kernels: dict[tuple[bool, bool], Kernel] = {}
        self._packers = [scalar_packer(a) for a in self.arguments]
        self._first_vector = next(k for k, a in enumerate(self.arguments) if isinstance(a, VectorArg))

    def kernel(self, use_range: bool = False, restrict: bool = False) -> Kernel:
        """The kernel a call launches; pyctk's (PyCUDA's ``ElementwiseKernel`` has no such method).

        Each is compiled (or read from the cache) when a call first needs it.

        Parameters
        ----------
        use_range : bool, optional
            The kernel over ``range=``/``slice=`` (else over ``n``).
        restrict : bool, optional
            The build whose pointers are ``__restrict__``, for calls whose arrays do not
            overlap.

        Returns
        -------
        object
            The launcher; its ``function`` is the loaded :class:`pyctk.driver.Function`
            (``function.num_regs`` and the other attributes).
        """
        kernel = self._kernels.get((use_range, restrict))
        if kernel is None:
            text = source(
                self.arguments,
                self.operation,
                self.name,
                self.preamble,
                self.loop_prep,
                self.after_loop,
                use_range,
                restrict,
            )
            codes = [struct_code(a) for a in self.arguments] + (["l", "l", "l"] if use_range else ["Q"])
            kernel = self._kernels[(use_range, restrict)] = Kernel(text, self.name, codes, self.options)
        return kernel

    def __call__(
        self,
        *args: Any,
        range: Any = None,
        slice: Any = None,
        stream: Any = None,  # noqa: A002
        **kwargs: Any,
    ) -> None:
        if kwargs:
            raise TypeError(f"ElementwiseKernel call got unexpected keyword arguments: {', '.join(sorted(kwargs))}")
        if range is not None and slice is not None:
            raise TypeError("pass range= or slice=, not both")
        if len(args) < len(self.arguments):
            raise TypeError(f"{self.name}() takes {len(self.arguments)} arguments, got {len(args)}")
        values, spans = [], []
        for index, (argument, packer) in enumerate(zip(self.arguments, self._packers)):
            value = args[index]
            if isinstance(argument, VectorArg):
                address, size, nbytes = vector_pointer(value, f"{self.name}() argument {index} ({argument.name})")
                if index == self._first_vector:
                    n = size
                values.append(address)
                spans.append((address, nbytes))
            else:
                values.append(value if packer is None else packer(value))
        handle = stream_handle(stream)
        # Arrays apart take the __restrict__ build in its own grid (GEOMETRIES); others, such
        # as x passed as input and output, the plain one, whose stores may reach its loads.
        restrict = apart(spans)
        family = "user_apart" if restrict else "user"
        if slice is not None:
            range = _indices(slice, n)
        if range is None:
            if n:
                blocks, threads = geometry(n, family=family)
                self.kernel(False, restrict)(blocks, threads, handle, *values, n)
            return
        start, stop, step = range.start or 0, range.stop, range.step
        if step is None or stop is None:
            raise ValueError("range= needs its stop and step, e.g. range=slice(0, n, 1)")
        count = len(_python_range(start, stop, step))
        if count:
            blocks, threads = geometry(count, family=family)
            self.kernel(True, restrict)(blocks, threads, handle, *values, start, stop, step)

    def get_texref(self, name: str, use_range: bool = False) -> Any:
        """PyCUDA's ``get_texref``: raises :class:`pyctk.driver.TextureReferenceError`, which names texture objects.

        CUDA 12 removed texture references; pass a :class:`pyctk.driver.TextureObject` as a
        ``cudaTextureObject_t`` argument instead.

        Parameters
        ----------
        name : str
            The texture reference PyCUDA would look up.
        use_range : bool, optional
            PyCUDA's: which of the kernel's builds.

        Raises
        ------
        pyctk.driver.TextureReferenceError
            Always.
        """
        raise textures.references_removed(f"get_texref({name!r})")


def _indices(python_slice: Any, n: int) -> Any:
    """``slice=`` as the range of the first array's indices it selects (negative ones count from the end)."""
    if not isinstance(python_slice, slice):
        raise TypeError(f"slice= takes a slice, not {type(python_slice).__name__}")
    return slice(*python_slice.indices(n))


def get_elwise_module_source(
    arguments: str | Sequence[Argument],
    operation: str,
    name: str = "kernel",
    preamble: str = "",
    loop_prep: str = "",
    after_loop: str = "",
    use_range: bool = False,
) -> str:
    """The CUDA source that :class:`ElementwiseKernel` compiles; pyctk's.

    :func:`get_elwise_module` compiles the like of it (with ``n`` among ``arguments``) into
    a module, as PyCUDA's; this is the source to read, or to pass to
    ``SourceModule(source, no_extern_c=True)`` (the kernel declares ``extern "C"`` itself).

    Parameters
    ----------
    arguments, operation, name, preamble, loop_prep, after_loop
        As for :class:`ElementwiseKernel`.
    use_range : bool, optional
        The kernel over ``start``, ``stop`` and ``step`` (``range=``) instead of ``n``.

    Returns
    -------
    str

    Examples
    --------
    >>> from pyctk.elementwise import get_elwise_module_source
    >>> source = get_elwise_module_source("float a, float *x", "x[i] *= a", "scale")
    >>> print(source.strip())
    extern "C" __global__ void scale(float a, float *x, unsigned long n)
    {
      unsigned tid = threadIdx.x;
      unsigned total_threads = gridDim.x * blockDim.x;
      unsigned cta_start = blockDim.x * blockIdx.x;
      ;
      size_t i;
      for (i = cta_start + tid; i < n; i += total_threads)
      {
        x[i] *= a;
      }
      ;
    }
    >>> from pyctk.compiler import compile                        # compiles with no GPU
    >>> b".entry scale" in compile(source, no_extern_c=True, arch="sm_80", target="ptx")
    True
    """
    return source(parse_arguments(arguments), operation, name, preamble, loop_prep, after_loop, use_range)


def get_elwise_module(
    arguments: str | Sequence[Argument],
    operation: str,
    name: str = "kernel",
    keep: bool = False,
    options: Sequence[str] | None = None,
    preamble: str = "",
    loop_prep: str = "",
    after_loop: str = "",
    use_range: bool = False,
) -> SourceModule:
    """PyCUDA's ``get_elwise_module``: the module of one element-wise kernel, ``name``, over
    ``i`` from 0 to ``n``, which ``arguments`` must declare (``ScalarArg(np.uintp, "n")``).

    Parameters
    ----------
    arguments, operation, name, keep, options, preamble, loop_prep, after_loop
        As for :class:`ElementwiseKernel`.
    use_range : bool, optional
        pyctk's: the loop over ``i`` from ``start`` to ``stop`` by ``step`` (any sign), which
        ``arguments`` must declare (``intp``), as :func:`get_elwise_range_module`'s.

    Returns
    -------
    pyctk.compiler.SourceModule

    Examples
    --------
    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> from pyctk.elementwise import ScalarArg, VectorArg, get_elwise_module
    >>> arguments = [VectorArg(np.float32, "x"), ScalarArg(np.uintp, "n")]
    >>> scale = get_elwise_module(arguments, "x[i] *= 2", "scale").get_function("scale")
    >>> x = gpuarray.to_gpu(np.arange(4, dtype=np.float32))
    >>> scale(x.gpudata, np.uintp(x.size), block=(128, 1, 1), grid=(1, 1))
    >>> x.get()
    array([0., 2., 4., 6.], dtype=float32)
    """
    code = source(
        parse_arguments(arguments), operation, name, preamble, loop_prep, after_loop, use_range, loop_arguments=False
    )
    return SourceModule(code, options=None if options is None else list(options), keep=keep, no_extern_c=True)


def get_elwise_range_module(
    arguments: str | Sequence[Argument],
    operation: str,
    name: str = "kernel",
    keep: bool = False,
    options: Sequence[str] | None = None,
    preamble: str = "",
    loop_prep: str = "",
    after_loop: str = "",
) -> SourceModule:
    """PyCUDA's ``get_elwise_range_module``: :func:`get_elwise_module` with ``use_range=True``,
    over ``i`` from ``start`` to ``stop`` by ``step`` (any sign), which ``arguments`` must
    declare (``intp``)."""
    return get_elwise_module(arguments, operation, name, keep, options, preamble, loop_prep, after_loop, True)


def get_elwise_kernel_and_types(
    arguments: str | Sequence[Argument],
    operation: str,
    name: str = "kernel",
    keep: bool = False,
    options: Sequence[str] | None = None,
    use_range: bool = False,
    **kwargs: str,
) -> tuple[SourceModule, Any, list[Argument]]:
    """PyCUDA's ``get_elwise_kernel_and_types``: ``(module, function, arguments)``, the
    loop's arguments (``n``, or ``start``, ``stop``, ``step``) added to ``arguments`` and the
    function prepared for them all (``function.prepared_call(grid, block, *values)``).
    ``kwargs``: ``preamble``, ``loop_prep``, ``after_loop``."""
    declared = parse_arguments(arguments)
    if use_range:
        declared += [ScalarArg(np.intp, "start"), ScalarArg(np.intp, "stop"), ScalarArg(np.intp, "step")]
    else:
        declared.append(ScalarArg(np.uintp, "n"))
    module = get_elwise_module(declared, operation, name, keep, options, use_range=use_range, **kwargs)
    function = module.get_function(name)
    function.prepare("".join(argument.struct_char for argument in declared))
    return module, function, declared


def get_elwise_kernel(
    arguments: str | Sequence[Argument],
    operation: str,
    name: str = "kernel",
    keep: bool = False,
    options: Sequence[str] | None = None,
    **kwargs: Any,
) -> Any:
    """PyCUDA's ``get_elwise_kernel``: the prepared function of
    :func:`get_elwise_kernel_and_types`.

    >>> import numpy as np                                              # doctest: +GPU
    >>> from pyctk import gpuarray
    >>> from pyctk.elementwise import get_elwise_kernel
    >>> add = get_elwise_kernel("float *x, float *y, float *z", "z[i] = x[i] + y[i]", "add")
    >>> x = gpuarray.to_gpu(np.arange(4, dtype=np.float32)); z = gpuarray.empty_like(x)
    >>> add.prepared_call((1, 1), (128, 1, 1), x.gpudata, x.gpudata, z.gpudata, x.size)
    >>> z.get()
    array([0., 2., 4., 6.], dtype=float32)
    """
    return get_elwise_kernel_and_types(arguments, operation, name, keep, options, **kwargs)[1]


__all__ = [
    "ElementwiseKernel",
    "ScalarArg",
    "VectorArg",
    "dtype_to_ctype",
    "get_elwise_kernel",
    "get_elwise_kernel_and_types",
    "get_elwise_module",
    "get_elwise_module_source",
    "get_elwise_range_module",
]
