// Transposes matrices of 1- or 4-byte elements (libgpu/src/gemm/repack.c): how
// operands that are not contiguous along k reach the kernels that read k-major
// operands only (TF32 wgmma for float32, gemm_imma for int8, uint8 and bool).
// The launch contract is in gemm_transpose.h. Each block reads a square with
// rows of consecutive addresses and writes it transposed with rows of
// consecutive addresses, through shared memory padded by one column so that
// reading 4-byte elements by columns hits 32 distinct banks.

#include "gemm_common.cuh"
#include "gemm_transpose.h"

template <typename T>
__device__ __forceinline__ void gemm_transpose(const transpose_args &p) {
    constexpr int TILE = GEMM_TRANSPOSE_TILE;
    __shared__ T tile[TILE][TILE + 1];
    const index_t z = blockIdx.z, row0 = (index_t)blockIdx.y * TILE, col0 = (index_t)blockIdx.x * TILE;
    const T *in = (const T *)p.in + z * p.in_batch_stride;
    T *out = (T *)p.out + z * p.out_batch_stride;
#pragma unroll
    for (int step = 0; step < TILE / GEMM_TRANSPOSE_ROWS; ++step) {
        const int r = threadIdx.y + step * GEMM_TRANSPOSE_ROWS;
        if (row0 + r < p.rows && col0 + threadIdx.x < p.cols)
            tile[r][threadIdx.x] = in[(row0 + r) * p.ld + col0 + threadIdx.x];
    }
    __syncthreads();
#pragma unroll
    for (int step = 0; step < TILE / GEMM_TRANSPOSE_ROWS; ++step) {
        const int c = threadIdx.y + step * GEMM_TRANSPOSE_ROWS;
        if (col0 + c < p.cols && row0 + threadIdx.x < p.out_ld)
            out[(col0 + c) * p.out_ld + row0 + threadIdx.x] =
                row0 + threadIdx.x < p.rows ? tile[threadIdx.x][c] : T();
    }
}

// One entry point per element size, gemm_transpose_b<bits>: the sizes of
// repack.c's transpose_sizes.
extern "C" __global__ void __launch_bounds__(GEMM_TRANSPOSE_TILE * GEMM_TRANSPOSE_ROWS)
gemm_transpose_b8(transpose_args p) {
    gemm_transpose<unsigned char>(p);
}
extern "C" __global__ void __launch_bounds__(GEMM_TRANSPOSE_TILE * GEMM_TRANSPOSE_ROWS)
gemm_transpose_b32(transpose_args p) {
    gemm_transpose<unsigned>(p);
}
