"""CUDA's headers and C++ templates in run-time kernels: no toolkit, no include paths to set.

``cuda_fp16.h`` comes from NVIDIA's runtime wheel, ``cuda/std/...`` from the CCCL wheel
that ``pyctk-cuN[nvrtc]`` installs; pyctk hands their folders to NVRTC. A template is
instantiated by naming it (``name_expressions=``) and fetched by that name.
"""

import numpy as np

import pyctk.driver as cuda
from pyctk.compiler import SourceModule

# __half arithmetic; a NumPy float16 scalar passes as a __half by value.
halves = SourceModule("""
#include <cuda_fp16.h>
__global__ void axpy(__half a, const __half *x, __half *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hfma(a, x[i], y[i]);
}""")
x = np.linspace(0, 1, 1000).astype(np.float16)
y = np.ones(1000, np.float16)
expected = (np.float32(2) * x.astype(np.float32) + 1).astype(np.float16)
halves.get_function("axpy")(np.float16(2), cuda.In(x), cuda.InOut(y), np.int32(1000), block=(256, 1, 1), grid=(4, 1))
assert np.array_equal(y, expected), np.abs(y.astype(np.float32) - expected).max()
print("__half axpy: equal to NumPy's float16")

# One template, three instantiations; cuda::std from the CCCL wheel.
templates = SourceModule(
    """
#include <cuda/std/limits>
template <typename T>
__global__ void clamp_max(T *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > T(100)) x[i] = cuda::std::numeric_limits<T>::max();
}""",
    no_extern_c=True,
    name_expressions=["clamp_max<float>", "clamp_max<double>", "clamp_max<int>"],
)
for dtype, name in ((np.float32, "float"), (np.float64, "double"), (np.int32, "int")):
    data = np.array([1, 200, 50, 300], dtype)
    templates.get_function(f"clamp_max<{name}>")(cuda.InOut(data), np.int32(4), block=(4, 1, 1))
    big = np.finfo(dtype).max if dtype != np.int32 else np.iinfo(dtype).max
    assert data.tolist() == [1, big, 50, big], data
    print(f"clamp_max<{name}>: {data.tolist()}")
print("OK")
