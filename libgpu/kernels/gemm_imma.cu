// Tensor-core GEMM of int8, uint8 and bool (mma.sync m16n8k32 on the integer
// tensor cores, sm_80 and newer), exactly NumPy's: C[z] = A[z] @ B[z] for
// operands both contiguous along k (A not transposed, B transposed: the
// layouts the instruction's fragments take; the host repacks the others,
// libgpu/src/gemm/repack.c), row-major C, any sizes, strides and alignment.
// The launch contract is in gemm_imma.h and gemm_tiled.h. Older GPUs get
// empty kernels, and so does Hopper (sm_90a), whose products of these types
// gemm_wgmma.cu computes; the registry's arch ranges give neither this family.
//
// - int8 and uint8 share one kernel (the dtype table's suffix "u8"): NumPy's
//   product wraps modulo 256, wrapping commutes with sums and products, and a
//   uint8 is its bits read as int8, modulo 256. So the bytes are multiplied
//   as s8 and summed in s32, which mma without .satfinite wraps modulo 2^32 (a
//   multiple of 256), and C keeps the sum's low byte.
// - bool: the OR of ANDs is whether the sum of the bytes' products is not
//   zero. As u8, the product of two non-zero bytes is positive (any non-zero
//   byte is true, as in gemm_tiled_bool), and .satfinite stops a sum at
//   INT32_MAX instead of wrapping it round to zero.
// - The pipeline is gemm_hmma.cu's (async_operand and multiply_slabs in
//   gemm_common.cuh), both slabs row-major (k contiguous), rows padded by
//   GEMM_IMMA_PAD bytes. ldmatrix, not transposed, of 8 rows of 16 bytes gives
//   lane 4 g + q bytes 4 q .. 4 q + 3 of row g: exactly the 32-bit registers
//   of the m16n8k32 fragments of A (a row of 16) and B (a column of 8), four
//   consecutive k each. C leaves through shared memory, 16 bytes per store.

#include "gemm_tiled.h"

#include "gemm_common.cuh"
#include "gemm_imma.h"

#if __CUDA_ARCH__ >= 800 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define IMMA_CODE 1
#endif

#if IMMA_CODE

// c += a @ b for one 16 x 8 x 32 piece, fragments as PTX lays them out:
// s8 x s8 summed in s32, wrapping (BOOL false), or u8 x u8 summed saturating.
template <bool BOOL>
__device__ __forceinline__ void mma_16x8x32(int (&c)[4], const unsigned (&a)[4],
                                            const unsigned (&b)[2]) {
#define MMA_16X8X32(OPCODE)                                                            \
    asm volatile(OPCODE " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"     \
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])                      \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
    if (BOOL)
        MMA_16X8X32("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32");
    else
        MMA_16X8X32("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32");
#undef MMA_16X8X32
}

// The stored bytes of two sums, first in the low byte: each sum's low byte, or
// for bool whether it is non-zero (min(sum, 1): bool's sums are not negative).
template <bool BOOL>
__device__ __forceinline__ unsigned short stored_pair(int x, int y) {
    if (BOOL) x = min(x, 1), y = min(y, 1);
    return (unsigned short)__byte_perm(x, y, 0x0040);
}

template <bool BOOL, int BM, int BN, int BK, int STAGES, int WARPS_M, int WARPS_N>
__device__ void gemm_imma(const gemm_args &p) {
    typedef unsigned char S;
    constexpr int THREADS = 32 * WARPS_M * WARPS_N, MMA_K = 32;
    constexpr int TILES_M = BM / WARPS_M / 16, TILES_N = BN / WARPS_N / 8;
    static_assert(TILES_M * 16 * WARPS_M == BM && TILES_N * 8 * WARPS_N == BN, "warp tiling");
    static_assert(TILES_N % 2 == 0 && BK % MMA_K == 0, "B fragments load in pairs of tiles");
    // Both slabs row-major: A(i, kk) = a[i * a_row_stride + kk] and
    // B(kk, j) = b[j * b_col_stride + kk].
    typedef async_operand<S, BM, BK, THREADS, false, 0, GEMM_IMMA_PAD> a_operand;
    typedef async_operand<S, BN, BK, THREADS, false, 0, GEMM_IMMA_PAD> b_operand;
    extern __shared__ __align__(16) unsigned char imma_shared[];
    S *const a_ring = imma_shared, *const b_ring = a_ring + STAGES * a_operand::SLAB;

    index_t row0, col0;
    block_origin<BM, BN>(row0, col0);
    const index_t z = blockIdx.z;
    a_operand a((const S *)p.a + z * p.a_batch_stride, p.a_row_stride, p.m, p.k, row0);
    b_operand b((const S *)p.b + z * p.b_batch_stride, p.b_col_stride, p.n, p.k, col0);
    const index_t slabs = start_slabs<STAGES, BK>(p.k, a, b, a_ring, b_ring);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
    const int m_warp = (warp / WARPS_N) * (BM / WARPS_M), n_warp = (warp % WARPS_N) * (BN / WARPS_N);
    // The row this lane gives ldmatrix, at kk = 0: lane 8 j + r gives row r of
    // 8 x 16-byte matrix j, the matrices being A(i 0-7, k 0-15), A(i 8-15, k 0-15),
    // A(i 0-7, k 16-31), A(i 8-15, k 16-31) (the fragment's registers a0-a3) and
    // B(n 0-7, k 0-15), B(n 0-7, k 16-31), B(n 8-15, k 0-15), B(n 8-15, k 16-31)
    // (b0-b1 of two 8-column pieces).
    const int r = lane % 8, j = lane / 8;
    const int a_at = (m_warp + (j % 2) * 8 + r) * a_operand::I_PITCH + (j / 2) * 16;
    const int b_at = (n_warp + (j / 2) * 8 + r) * b_operand::I_PITCH + (j % 2) * 16;

    int acc[TILES_M][TILES_N][4];
#pragma unroll
    for (int i = 0; i < TILES_M; ++i)
#pragma unroll
        for (int j = 0; j < TILES_N; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0;

    multiply_slabs<STAGES, BK>(slabs, a, b, a_ring, b_ring, [&](const S *a_slab,
                                                           const S *b_slab) {
        const S *as = a_slab + a_at, *bs = b_slab + b_at;
#pragma unroll
        for (int kk = 0; kk < BK; kk += MMA_K) {
            unsigned af[TILES_M][4], bf[TILES_N][2];
#pragma unroll
            for (int t = 0; t < TILES_M; ++t)
                ldmatrix_x4<false>(af[t], as + t * 16 * a_operand::I_PITCH + kk);
#pragma unroll
            for (int t = 0; t < TILES_N / 2; ++t) {
                unsigned q[4];
                ldmatrix_x4<false>(q, bs + t * 16 * b_operand::I_PITCH + kk);
                bf[2 * t][0] = q[0], bf[2 * t][1] = q[1];
                bf[2 * t + 1][0] = q[2], bf[2 * t + 1][1] = q[3];
            }
#pragma unroll
            for (int i = 0; i < TILES_M; ++i)
#pragma unroll
                for (int j = 0; j < TILES_N; ++j) mma_16x8x32<BOOL>(acc[i][j], af[i], bf[j]);
        }
    });

    // C goes out through shared memory, which the ring is done with: lane
    // (group, quad) holds C(group (+8), 2 quad + {0, 1}) of each 16 x 8 piece,
    // stored as one 16-bit pair (little-endian: the first column in the low byte).
    constexpr int C_PITCH = BN + 16;  // bytes: the pairs of a warp hit distinct banks
    static_assert(BM * C_PITCH <= STAGES * (a_operand::SLAB + b_operand::SLAB), "C fits the ring");
    S *const tile = a_ring;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILES_M; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int j = 0; j < TILES_N; ++j)
                *(unsigned short *)&tile[(m_warp + i * 16 + h * 8 + group) * C_PITCH + n_warp +
                                         j * 8 + quad * 2] =
                    stored_pair<BOOL>(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
    __syncthreads();
    store_tile<S, BM, BN, C_PITCH, THREADS>(threadIdx.x, tile,
                                            (S *)p.c + z * p.c_batch_stride + row0 * p.ldc + col0,
                                            p.ldc, p.m - row0, p.n - col0);
}

#endif  // IMMA_CODE

#if IMMA_CODE
#define IMMA_BODY(BOOL)                                                                    \
    gemm_imma<BOOL, GEMM_IMMA_M, GEMM_IMMA_N, GEMM_IMMA_K, GEMM_IMMA_STAGES, GEMM_IMMA_WARPS_M, \
              GEMM_IMMA_WARPS_N>(args)
#else
#define IMMA_BODY(BOOL)
#endif

extern "C" __global__ void __launch_bounds__(GEMM_IMMA_THREADS, GEMM_IMMA_BLOCKS_PER_SM)
gemm_imma_u8(gemm_args args) {
    IMMA_BODY(false);
}
extern "C" __global__ void __launch_bounds__(GEMM_IMMA_THREADS, GEMM_IMMA_BLOCKS_PER_SM)
gemm_imma_bool(gemm_args args) {
    IMMA_BODY(true);
}
