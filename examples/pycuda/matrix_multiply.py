"""A matrix multiplication by your own kernel: PyCUDA's tiled shared-memory example, on pyctk.

The tile size reaches the kernel as a macro (``options=["-DTILE=16"]``) where PyCUDA's
example pasted it into the source text. The result is checked against NumPy and
against ``pyctk.matmul`` (cuBLAS); the kernel is timed with ``time_kernel=True``.
"""

import numpy as np

import pyctk
from pyctk.compiler import SourceModule

TILE = 16
mod = SourceModule(
    """
// C = A @ B for row-major float matrices: A is m x k, B is k x n.
__global__ void matmul(const float *a, const float *b, float *c, int m, int n, int k) {
    __shared__ float a_tile[TILE][TILE], b_tile[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        a_tile[threadIdx.y][threadIdx.x] = (row < m && t + threadIdx.x < k) ? a[row * k + t + threadIdx.x] : 0.0f;
        b_tile[threadIdx.y][threadIdx.x] = (col < n && t + threadIdx.y < k) ? b[(t + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) sum += a_tile[threadIdx.y][i] * b_tile[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = sum;
}""",
    options=[f"-DTILE={TILE}"],
)
matmul = mod.get_function("matmul")

m, k, n = 1000, 700, 900  # not multiples of the tile: the edges are handled
a = np.random.rand(m, k).astype(np.float32)
b = np.random.rand(k, n).astype(np.float32)
a_gpu, b_gpu = pyctk.asarray(a), pyctk.asarray(b)  # pyctk's GPU arrays pass as pointers
c_gpu = pyctk.empty((m, n), np.float32)
grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)
seconds = matmul(
    a_gpu, b_gpu, c_gpu, np.int32(m), np.int32(n), np.int32(k), block=(TILE, TILE, 1), grid=grid, time_kernel=True
)
c = c_gpu.get()

error = np.abs(c - a @ b).max() / np.abs(a @ b).max()
assert error < 1e-5, error
assert np.allclose(c, pyctk.matmul(a_gpu, b_gpu).get(), rtol=1e-4)
print(
    f"{m}x{k} @ {k}x{n}: relative error {error:.1e} against NumPy, "
    f"{2 * m * n * k / seconds / 1e9:.0f} GFLOP/s ({matmul.num_regs} registers a thread)"
)
print("OK")
