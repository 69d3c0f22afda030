// Transposes matrices of 4-byte elements (libgpu/src/gemm/repack.c): how float32
// operands that are not contiguous along k reach the TF32 kernel, which reads
// k-major operands only. The launch contract is in gemm_transpose.h. Each block
// reads a square with rows of consecutive addresses and writes it transposed
// with rows of consecutive addresses, through shared memory padded by one
// column so that reading it by columns hits 32 distinct banks.

#include "gemm_common.cuh"
#include "gemm_transpose.h"

extern "C" __global__ void __launch_bounds__(GEMM_TRANSPOSE_TILE * GEMM_TRANSPOSE_ROWS)
gemm_transpose_b32(transpose_args p) {
    constexpr int TILE = GEMM_TRANSPOSE_TILE;
    __shared__ unsigned tile[TILE][TILE + 1];
    const index_t z = blockIdx.z, row0 = (index_t)blockIdx.y * TILE, col0 = (index_t)blockIdx.x * TILE;
    const unsigned *in = (const unsigned *)p.in + z * p.in_batch_stride;
    unsigned *out = (unsigned *)p.out + z * p.out_batch_stride;
    for (int r = threadIdx.y; r < TILE; r += GEMM_TRANSPOSE_ROWS)
        if (row0 + r < p.rows && col0 + threadIdx.x < p.cols)
            tile[r][threadIdx.x] = in[(row0 + r) * p.ld + col0 + threadIdx.x];
    __syncthreads();
    for (int c = threadIdx.y; c < TILE; c += GEMM_TRANSPOSE_ROWS)
        if (col0 + c < p.cols && row0 + threadIdx.x < p.rows)
            out[(col0 + c) * p.out_ld + row0 + threadIdx.x] = tile[threadIdx.x][c];
}
