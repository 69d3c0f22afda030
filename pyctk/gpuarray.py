"""The part of PyCUDA's ``pycuda.gpuarray`` that is here so far: ``vec``, CUDA's vector types.

>>> from pyctk.gpuarray import vec            # was: from pycuda.gpuarray import vec
>>> vec.float3.itemsize, vec.make_int2(1, 2)["y"]
(12, array(2, dtype=int32))

``vec.float3`` is the NumPy dtype of CUDA's ``float3`` (fields ``x``, ``y``, ``z``, packed as
in PyCUDA), ``vec.make_float3(x, y, z)`` a 0-d array of one, which a kernel takes by value for
a ``float3`` parameter (``Function.__call__`` and prepared calls, with ``vec.float3`` among
``prepare``'s types); arrays of them copy to and from device memory as any NumPy array.
``pyctk.tools.dtype_to_ctype(vec.float3)`` is ``"float3"``. Every type of PyCUDA's ``vec``:
char, uchar, short, ushort, int, uint, long, ulong and float with 1 to 4 fields; longlong,
ulonglong and double with 1 or 2.

Not here yet (a later issue): ``GPUArray`` itself, with ``to_gpu``, ``empty``, ``zeros``, the
element-wise arithmetic and the rest of the module; ``pyctk.DeviceArray`` (``pyctk.asarray``)
holds arrays on the GPU meanwhile.
"""

from ._pycuda.kernels.vector_types import vec

__all__ = ["vec"]
