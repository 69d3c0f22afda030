// float64 GEMM on FP64 tensor cores (sm_80 and newer): C[z] = op(A[z]) @ op(B[z]),
// row-major C, any sizes and strides. The launch contract is in gemm_dmma.h
// (tiles, threads, shared memory) and gemm_tiled.h (the argument struct).
// Older GPUs get an empty kernel here; the kernel registry gives them the
// tiled family instead (its min_arch column).
//
// - Shared memory is a ring of GEMM_DMMA_STAGES slabs of A and B, filled with
//   cp.async while the warps multiply an earlier slab (async_operand and
//   multiply_slabs in gemm_common.cuh). Each slab keeps its operand's orientation in memory, so
//   the block's code is compiled once for each of the four pairs of layouts
//   (A and B each contiguous along k or not), with constant pitches.
// - Each warp computes its part of the tile with mma.sync: m16n8k4 on sm_90
//   (which has it), m8n8k4 on sm_80 to sm_89. Each lane holds one value per
//   8 x 4 piece of A and of B, in the layout PTX defines for .f64.
// - Slabs inside the matrix are copied as whole 16-byte pieces; the others
//   are cut at the edges and zero-filled (async_operand::copy_edge).

#include "gemm_tiled.h"

#include "gemm_common.cuh"
#include "gemm_dmma.h"

#if __CUDA_ARCH__ >= 800

// acc += a @ b for one MMA_M x 8 x MMA_K piece; fragment layouts as in PTX.
template <int MMA_M, int MMA_K>
__device__ __forceinline__ void dmma(double (&acc)[MMA_M / 4], const double (&a)[MMA_M * MMA_K / 32],
                                     const double (&b)[MMA_K / 4]);

template <>
__device__ __forceinline__ void dmma<8, 4>(double (&acc)[2], const double (&a)[1],
                                          const double (&b)[1]) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(acc[0]), "+d"(acc[1])
                 : "d"(a[0]), "d"(b[0]));
}

#if __CUDA_ARCH__ >= 900
template <>
__device__ __forceinline__ void dmma<16, 4>(double (&acc)[4], const double (&a)[2],
                                           const double (&b)[1]) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                 "{%0,%1,%2,%3};\n"
                 : "+d"(acc[0]), "+d"(acc[1]), "+d"(acc[2]), "+d"(acc[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]));
}
#endif

// The block's tile for one pair of operand layouts (A_ROWS / B_ROWS: the
// operand is contiguous along M / N, its slabs k-major).
template <int BM, int BN, int BK, int STAGES, int WARPS_M, int WARPS_N, int MMA_M, int MMA_K,
          bool A_ROWS, bool B_ROWS>
__device__ __forceinline__ void dmma_tile(const gemm_args &p, index_t row0, index_t col0,
                                          index_t z) {
    constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    constexpr int TILES_M = BM / WARPS_M / MMA_M, TILES_N = BN / WARPS_N / 8;
    static_assert(TILES_M * MMA_M * WARPS_M == BM && TILES_N * 8 * WARPS_N == BN, "warp tiling");
    static_assert(BK % MMA_K == 0, "slab depth");
    constexpr int A_FRAG = MMA_M * MMA_K / 32, B_FRAG = MMA_K / 4, C_FRAG = MMA_M / 4;
    // Padding (doubles): a warp's fragment loads, 8 rows x 4 k, then touch
    // each bank at most twice, the least 256 bytes take.
    typedef async_operand<double, BM, BK, THREADS, A_ROWS, 8, 4> a_operand;
    typedef async_operand<double, BN, BK, THREADS, B_ROWS, 8, 4> b_operand;
    extern __shared__ __align__(16) double dmma_shared[];
    double *const a_ring = dmma_shared, *const b_ring = dmma_shared + STAGES * a_operand::SLAB;

    a_operand a((const double *)p.a + z * p.a_batch_stride,
                A_ROWS ? p.a_col_stride : p.a_row_stride, p.m, p.k, row0);
    b_operand b((const double *)p.b + z * p.b_batch_stride,
                B_ROWS ? p.b_row_stride : p.b_col_stride, p.n, p.k, col0);
    const index_t slabs = start_slabs<STAGES, BK>(p.k, a, b, a_ring, b_ring);

    // This lane's fragment offsets within a slab: lane = 4 * group + quad,
    // A(row group (+8), k quad (+4 q)) and B(k quad (+4 q), column group).
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
    const int m_base = (warp / WARPS_N) * (BM / WARPS_M) + group;
    const int n_base = (warp % WARPS_N) * (BN / WARPS_N) + group;
    const int a_at = m_base * a_operand::I_PITCH + quad * a_operand::K_PITCH;
    const int b_at = n_base * b_operand::I_PITCH + quad * b_operand::K_PITCH;

    double acc[TILES_M][TILES_N][C_FRAG];
#pragma unroll
    for (int i = 0; i < TILES_M; ++i)
#pragma unroll
        for (int j = 0; j < TILES_N; ++j)
#pragma unroll
            for (int e = 0; e < C_FRAG; ++e) acc[i][j][e] = 0.0;

    multiply_slabs<STAGES, BK>(slabs, a, b, a_ring, b_ring, [&](const double *a_slab,
                                                           const double *b_slab) {
        const double *as = a_slab + a_at, *bs = b_slab + b_at;
#pragma unroll
        for (int kk = 0; kk < BK; kk += MMA_K) {
            double af[TILES_M][A_FRAG], bf[TILES_N][B_FRAG];
#pragma unroll
            for (int t = 0; t < TILES_M; ++t)
#pragma unroll
                for (int e = 0; e < A_FRAG; ++e)  // e = 2 q + h: row +8 h, k +4 q (m16)
                    af[t][e] = as[(t * MMA_M + (MMA_M == 16 ? (e % 2) * 8 : 0)) * a_operand::I_PITCH +
                                  (kk + (MMA_M == 16 ? e / 2 : e) * 4) * a_operand::K_PITCH];
#pragma unroll
            for (int t = 0; t < TILES_N; ++t)
#pragma unroll
                for (int e = 0; e < B_FRAG; ++e)
                    bf[t][e] = bs[t * 8 * b_operand::I_PITCH + (kk + e * 4) * b_operand::K_PITCH];
#pragma unroll
            for (int i = 0; i < TILES_M; ++i)
#pragma unroll
                for (int j = 0; j < TILES_N; ++j) dmma<MMA_M, MMA_K>(acc[i][j], af[i], bf[j]);
        }
    });

    // C goes out through shared memory, which the ring is done with: lane
    // (group, quad) holds C(group (+8), 2 quad + {0, 1}) of each piece.
    constexpr int C_PITCH = BN + 4;  // doubles
    static_assert(BM * C_PITCH <= STAGES * (a_operand::SLAB + b_operand::SLAB), "C fits the ring");
    struct pair { double x, y; };
    double *const tile = a_ring;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILES_M; ++i)
#pragma unroll
        for (int h = 0; h < C_FRAG / 2; ++h)
#pragma unroll
            for (int j = 0; j < TILES_N; ++j)
                *(pair *)&tile[(m_base + i * MMA_M + h * 8) * C_PITCH + n_base - group + j * 8 + quad * 2] =
                    {acc[i][j][2 * h], acc[i][j][2 * h + 1]};
    __syncthreads();
    store_tile<double, BM, BN, C_PITCH, THREADS>(
        threadIdx.x, tile, (double *)p.c + z * p.c_batch_stride + row0 * p.ldc + col0, p.ldc,
        p.m - row0, p.n - col0);
}

template <int BM, int BN, int BK, int STAGES, int WARPS_M, int WARPS_N, int MMA_M, int MMA_K>
__device__ void gemm_dmma(const gemm_args &p) {
    index_t row0, col0;
    block_origin<BM, BN>(row0, col0);
    const index_t z = blockIdx.z;
#define DMMA_TILE(A_ROWS, B_ROWS) \
    dmma_tile<BM, BN, BK, STAGES, WARPS_M, WARPS_N, MMA_M, MMA_K, A_ROWS, B_ROWS>(p, row0, col0, z)
    FOR_OPERAND_LAYOUTS(p, DMMA_TILE);
#undef DMMA_TILE
}

#endif  // __CUDA_ARCH__ >= 800

extern "C" __global__ void __launch_bounds__(GEMM_DMMA_THREADS) gemm_dmma_f64(gemm_args args) {
#if __CUDA_ARCH__ >= 900
    gemm_dmma<GEMM_DMMA_M, GEMM_DMMA_N, GEMM_DMMA_K, GEMM_DMMA_STAGES, GEMM_DMMA_WARPS_M,
              GEMM_DMMA_WARPS_N, 16, 4>(args);
#elif __CUDA_ARCH__ >= 800
    gemm_dmma<GEMM_DMMA_M, GEMM_DMMA_N, GEMM_DMMA_K, GEMM_DMMA_STAGES, GEMM_DMMA_WARPS_M,
              GEMM_DMMA_WARPS_N, 8, 4>(args);
#endif
}
