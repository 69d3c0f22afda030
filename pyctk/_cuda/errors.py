"""The exceptions pyctk raises. Standard library only: the loader imports it."""

from __future__ import annotations


class PyctkError(Exception):
    """Base class of pyctk's own errors: ``except pyctk.PyctkError`` catches them all.

    Each subclass also derives from the built-in exception of its kind (``OSError``,
    ``RuntimeError``, ``MemoryError``, ``NotImplementedError``, ``ValueError``), and every
    message says what failed and what to do. Arguments NumPy would reject raise NumPy's
    own exceptions instead, before any GPU work.
    """


class LibraryNotFoundError(PyctkError, OSError):
    """A shared library could not be found or loaded; the message lists every place tried.

    Raised by the first call that needs the library: the CUDA runtime or cuBLAS (from
    the ``nvidia-*`` wheels pyctk depends on), pyctk's own ``libgpumatmul.so`` or header
    (an incomplete installation), or an optional library not installed: NVRTC for
    compiling kernels, nvJitLink for linking them, cuRAND for random numbers.

    What to do: run the ``Fix:`` command the message ends with (``pip install`` of the
    missing wheel or of pyctk's extra, e.g. ``pip install "pyctk-cu12[nvrtc]"``, or a
    reinstall of pyctk). ``PYCTK_DEBUG_LOAD=1`` prints every place the loader tries, and
    ``python -m pyctk`` which libraries it found where.
    """


class CudaError(PyctkError, RuntimeError):
    """A CUDA or cuBLAS call failed; the base of pyctk's errors from the GPU.

    The subclasses name the failures a program can act on (no driver, no GPU, no kernel
    image, out of memory, a lost context, a fork); ``CudaError`` itself is any other
    failure. The message carries the CUDA error name (``cudaErrorInvalidValue`` ...) and
    the call that failed.

    Parameters
    ----------
    message : str
        What failed, with the CUDA error and a fix where one is known.
    status : str, optional
        The libgpumatmul status name.

    Attributes
    ----------
    status : str
        The libgpumatmul status name of the failure, e.g. ``"GPUMATMUL_ERROR_CUDA"``,
        ``"GPUMATMUL_ERROR_CUBLAS"``, ``"GPUMATMUL_ERROR_NO_DRIVER"`` (the C API's
        ``gpumatmul_status``, as gpumatmul.h names it).
    """

    def __init__(self, message: str, status: str = "") -> None:
        super().__init__(message)
        self.status = status


class NoDriverError(CudaError):
    """No NVIDIA driver is installed, or it is older than the CUDA runtime.

    Raised by the first call that needs the GPU (``import pyctk`` and ``pyctk.info()``
    never raise it). The message says whether the dynamic linker found the driver's
    ``libcuda.so.1`` at all.

    What to do: install the NVIDIA driver (``nvidia-smi`` must list your GPU): CUDA 12
    (``pyctk-cu12``) needs driver 525 or newer, CUDA 13 (``pyctk-cu13``) 580 or newer.
    A driver of 525 or newer but older than 580 runs ``pyctk-cu12``, not ``pyctk-cu13``. In a
    container, the host's driver must be passed in (``docker run --gpus all``).
    """


class NoDeviceError(CudaError):
    """A driver is present but there is no usable GPU (or the index is out of range).

    What to do: check that ``nvidia-smi`` lists a GPU and that ``CUDA_VISIBLE_DEVICES``
    does not hide it; ``device=`` and ``devices=`` count the GPUs left visible, from 0.
    """


class NoKernelImageError(CudaError):
    """None of the kernel images embedded in libgpumatmul runs on this GPU.

    libgpumatmul carries machine code for every GPU architecture that its CUDA major's
    compiler supports, and PTX for the newest, which the driver compiles for newer GPUs;
    a GPU older than all of them (CUDA 13 starts at compute capability 7.5) has none.

    What to do: ``python -m pyctk`` lists the images and the one each GPU would use. For
    a GPU that CUDA 13 no longer supports, install ``pyctk-cu12``.
    """


class OutOfMemoryError(CudaError, MemoryError):
    """The GPU ran out of memory.

    Raised when a GPU array or a product's workspace cannot be allocated, after pyctk has
    collected garbage once to give memory of dropped arrays back. A product of host
    arrays larger than the GPU does not raise it: it is streamed through the GPU in tiles.

    What to do: free GPU memory that other processes or libraries hold (``nvidia-smi``
    shows who), drop references to GPU arrays you no longer need, or use smaller arrays;
    ``PYCTK_DEVICE_MEMORY_LIMIT`` caps what host products take of each GPU.
    """


class UnsupportedError(PyctkError, NotImplementedError):
    """A valid request that this version of pyctk does not implement yet.

    For example a ``backend`` asked for a dtype it does not compute, a ``precision``
    where it does not apply, or DLPack on PyPy. The message says what does work instead:
    the backend or precision that computes the dtype, or the other way to do it.

    Examples
    --------
    >>> import numpy as np, pyctk
    >>> a = np.ones((2, 2), np.int32)
    >>> pyctk.matmul(a, a, backend="cublas")
    Traceback (most recent call last):
    ...
    pyctk.UnsupportedError: the cublas backend does not multiply int32 ...; use backend tiled or auto ...
    """


class ContextLostError(CudaError):
    """A kernel faulted (an illegal or misaligned address, a device-side assert ...) and CUDA
    gave up on this process's GPU context.

    Every later CUDA call on that device in this process fails with the same error: device
    memory, modules, streams and events made before are gone, and only a new process can use
    the GPU again. The faulty kernel may have been launched before the call that reports it,
    by pyctk or by another library. ``pyctk.driver.ContextLostError`` is a subclass.

    What to do: restart the process. To find the faulty access, run the program under
    ``compute-sanitizer`` (from a CUDA toolkit), or set ``CUDA_LAUNCH_BLOCKING=1`` so that
    each launch reports its own failure.
    """


# The CUDA errors that raise ContextLostError: cuda.h says they leave "the process in an
# inconsistent state". The runtime (cudaError_t) and the driver (CUresult) number them alike;
# libgpu/src/core/status.c keeps the same list for libgpumatmul's status and messages.
CONTEXT_LOST_ERRORS = frozenset(
    {
        226,  # CONTAINED
        700,  # ILLEGAL_ADDRESS
        702,  # LAUNCH_TIMEOUT
        710,  # ASSERT (a device-side assert)
        714,  # HARDWARE_STACK_ERROR
        715,  # ILLEGAL_INSTRUCTION
        716,  # MISALIGNED_ADDRESS
        717,  # INVALID_ADDRESS_SPACE
        718,  # INVALID_PC
        719,  # LAUNCH_FAILED
        721,  # TENSOR_MEMORY_LEAK
        911,  # EXTERNAL_DEVICE
    }
)

# What a ContextLostError's message adds to CUDA's own words.
CONTEXT_LOST_HELP = (
    "The GPU context of this process is lost: a kernel faulted, and CUDA now fails every "
    "call on this device in this process with this same error (device memory, modules, "
    "streams and events made before are gone). Restart the process to use the GPU again. "
    "Kernels run asynchronously, so the faulty kernel may be an earlier launch than this "
    "call; to find the faulty access run the program under compute-sanitizer (from a CUDA "
    "toolkit), or set CUDA_LAUNCH_BLOCKING=1 to make each launch report its own failure."
)


class ForkedAfterCudaError(CudaError):
    """This process was forked after its parent started using the GPU, and CUDA does not
    survive a fork.

    Raised by the child's first call that needs the GPU, instead of the hang or the
    obscure CUDA error the call would otherwise end in. A child forked before the
    parent's first GPU call works.

    What to do: start worker processes with multiprocessing's "spawn" or "forkserver"
    method (``multiprocessing.get_context("spawn")``, or ``mp_context=`` of
    ``concurrent.futures.ProcessPoolExecutor``), or fork before the parent's first GPU call.
    """


class DeviceMismatchError(PyctkError, ValueError):
    """Operands in host memory and on a GPU together, or on two GPUs: pyctk never copies silently.

    Raised by ``pyctk.matmul`` (and by kernel launches with GPU arrays of another
    device) before any GPU work. What to do: move the data where the other operand is,
    as the message says: ``pyctk.asarray(x, device=...)`` to a GPU, ``numpy.asarray(x)``
    (or ``x.get()``) to the host.
    """


# Tracebacks and reprs name them where users find them: pyctk.NoDriverError.
for _error in (
    PyctkError,
    LibraryNotFoundError,
    CudaError,
    NoDriverError,
    NoDeviceError,
    NoKernelImageError,
    OutOfMemoryError,
    UnsupportedError,
    ContextLostError,
    ForkedAfterCudaError,
    DeviceMismatchError,
):
    _error.__module__ = "pyctk"
del _error
