"""PyCUDA's first program, on pyctk: add two vectors with your own kernel.

Only the imports differ from PyCUDA (``pycuda.autoinit`` may stay as ``pyctk.autoinit``
but is not needed). Run: ``python vector_add.py`` (needs ``pip install "pyctk-cu13[nvrtc]"``
or ``pyctk-cu12[nvrtc]`` and a GPU).
"""

import numpy as np

import pyctk.driver as cuda  # was: import pycuda.driver as cuda
from pyctk.compiler import SourceModule  # was: from pycuda.compiler import SourceModule

mod = SourceModule("""
__global__ void add(int *x, int *y, int *z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}""")
add = mod.get_function("add")

n = 1_000_000
x = np.random.randint(0, 1000, n).astype(np.int32)
y = np.random.randint(0, 1000, n).astype(np.int32)

# 1. Explicit device memory and copies.
x_gpu, y_gpu, z_gpu = cuda.mem_alloc(x.nbytes), cuda.mem_alloc(y.nbytes), cuda.mem_alloc(x.nbytes)
cuda.memcpy_htod(x_gpu, x)
cuda.memcpy_htod(y_gpu, y)
add(x_gpu, y_gpu, z_gpu, np.int32(n), block=(256, 1, 1), grid=((n + 255) // 256, 1))
z = np.empty_like(x)
cuda.memcpy_dtoh(z, z_gpu)
assert np.array_equal(z, x + y)
print(f"mem_alloc + memcpy: {n} sums, all equal to NumPy's")

# 2. The same with In/Out: the copies around the launch are pyctk's.
z2 = np.zeros_like(x)
seconds = add(
    cuda.In(x), cuda.In(y), cuda.Out(z2), np.int32(n), block=(256, 1, 1), grid=((n + 255) // 256, 1), time_kernel=True
)
assert np.array_equal(z2, x + y)
print(f"In/Out: all equal to NumPy's; the kernel took {seconds * 1e6:.1f} us")
print("OK")
