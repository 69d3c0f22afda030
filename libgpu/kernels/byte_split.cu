// Splits integer operands into planes of their bytes (libgpu/src/gemm/byte_split.c):
// how products of 2-, 4- and 8-byte integers run on the 1-byte tensor-core
// kernel. The launch contract, and the planes' layout, are in byte_split.h.
//
// Each block reads a square of the operand as stored, rows of consecutive
// addresses, into shared memory (padded by one element: the transposed reads
// then hit distinct banks), and writes each element's bytes into its row's
// planes along k, consecutive addresses for consecutive threads. Only the
// sm_90a image has the code (the 1-byte wgmma kernel is the only one that
// takes the planes); every other image gets empty kernels, which byte_split.c
// never launches there.

#include "gemm_common.cuh"
#include "byte_split.h"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

namespace {

__device__ __forceinline__ void split(const byte_split_args &p) {
    constexpr int TILE = BYTE_SPLIT_TILE;
    __shared__ unsigned long long tile[TILE][TILE + 1];
    const index_t z = blockIdx.z, row0 = (index_t)blockIdx.y * TILE,
                  col0 = (index_t)blockIdx.x * TILE;
    const unsigned char *in = (const unsigned char *)p.in + z * p.in_batch_stride * p.bytes;
    unsigned char *out = (unsigned char *)p.out + z * p.out_batch_stride;
#pragma unroll 1
    for (int r = threadIdx.y; r < TILE; r += BYTE_SPLIT_ROWS)
        if (row0 + r < p.rows && col0 + threadIdx.x < p.cols) {
            const unsigned char *x = in + ((row0 + r) * p.ld + col0 + threadIdx.x) * p.bytes;
            tile[r][threadIdx.x] = p.bytes == 2   ? *(const unsigned short *)x
                                   : p.bytes == 4 ? *(const unsigned *)x
                                                  : *(const unsigned long long *)x;
        }
    __syncthreads();
    const index_t q0 = p.k_rows ? col0 : row0, k0 = p.k_rows ? row0 : col0;
    const index_t q_count = p.k_rows ? p.cols : p.rows, k = p.k_rows ? p.rows : p.cols;
    const index_t padded = (k + 15) / 16 * 16;  // the tile grid covers it: TILE >= 16
#pragma unroll 1
    for (int c = threadIdx.y; c < TILE; c += BYTE_SPLIT_ROWS) {
        const index_t q = q0 + c, kk = k0 + threadIdx.x;
        if (q >= q_count || kk >= padded) continue;
        const unsigned long long x =
            kk >= k ? 0 : p.k_rows ? tile[threadIdx.x][c] : tile[c][threadIdx.x];
        const index_t first = kk >> p.chunk_shift << p.chunk_shift;
        const index_t width = min((index_t)1 << p.chunk_shift, padded - first);
        unsigned char *at = out + q * p.out_ld + first * p.bytes + (kk - first);
#pragma unroll 1
        for (int i = 0; i < p.bytes; ++i)
            at[(p.reversed ? p.bytes - 1 - i : i) * width] = (unsigned char)(x >> (8 * i));
    }
}

}  // namespace

#define BYTE_SPLIT_BODY split(args)
#else
#define BYTE_SPLIT_BODY
#endif

extern "C" __global__ void __launch_bounds__(BYTE_SPLIT_TILE * BYTE_SPLIT_ROWS)
byte_split(byte_split_args args) {
    BYTE_SPLIT_BODY;
}
