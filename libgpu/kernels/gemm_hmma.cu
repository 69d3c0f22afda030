// Tensor-core GEMM of float16 and bfloat16 with float32 sums (mma.sync
// m16n8k16, sm_80 and newer; each product is exact in float32, so this is the
// dtype's own precision): C[z] = op(A[z]) @ op(B[z]), row-major C, any sizes
// and strides. The launch contract is in gemm_hmma.h and gemm_tiled.h. Older
// GPUs get empty kernels, and so does Hopper (sm_90a), whose products of these
// types gemm_wgmma.cu computes; the registry's arch ranges give neither this family.
//
// The pipeline is gemm_dmma.cu's: a ring of slabs filled with cp.async
// (async_operand and multiply_slabs in gemm_common.cuh), each slab in its operand's own
// orientation, the block's code compiled for each of the four pairs of
// layouts. Fragments come from shared memory with ldmatrix (its .trans form
// where the slab is k-major). Row-major slabs are padded by 16 bytes a row and
// k-major ones by 8 elements, so that the 8 rows an ldmatrix reads fall in
// distinct banks; C leaves through shared memory, 16 bytes per store.

#include "gemm_tiled.h"

#include "gemm_common.cuh"
#include "gemm_hmma.h"

#if __CUDA_ARCH__ >= 800 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HMMA_CODE 1
#endif

#if HMMA_CODE

// c += a @ b for one 16 x 8 x 16 piece of S (f16_bits or bf16_bits) with
// float32 sums, fragments as PTX lays them out. An element type is one row:
// its PTX name.
template <typename S>
__device__ __forceinline__ void mma_16x8x16(float (&c)[4], const unsigned (&a)[4],
                                            const unsigned (&b)[2]);
#define MMA_16X8X16(S, PTX_TYPE)                                                              \
    template <>                                                                               \
    __device__ __forceinline__ void mma_16x8x16<S>(float (&c)[4], const unsigned (&a)[4],     \
                                                   const unsigned (&b)[2]) {                  \
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." PTX_TYPE "." PTX_TYPE ".f32 "     \
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                 \
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                         \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));       \
    }
MMA_16X8X16(f16_bits, "f16")
MMA_16X8X16(bf16_bits, "bf16")
#undef MMA_16X8X16

// The block's tile for one pair of operand layouts (A_ROWS / B_ROWS: the
// operand is contiguous along M / N, its slabs k-major).
template <typename S, int BM, int BN, int BK, int STAGES, int WARPS_M, int WARPS_N, bool A_ROWS,
          bool B_ROWS>
__device__ __forceinline__ void hmma_tile(const gemm_args &p, index_t row0, index_t col0,
                                          index_t z) {
    constexpr int THREADS = 32 * WARPS_M * WARPS_N, MMA_K = 16;
    constexpr int TILES_M = BM / WARPS_M / 16, TILES_N = BN / WARPS_N / 8;
    static_assert(TILES_M * 16 * WARPS_M == BM && TILES_N * 8 * WARPS_N == BN, "warp tiling");
    static_assert(TILES_N % 2 == 0 && BK % MMA_K == 0, "B fragments load in pairs of tiles");
    // Padding: k-major rows by 8 elements, row-major ones by 16 bytes (see the top).
    typedef async_operand<S, BM, BK, THREADS, A_ROWS, 8, 8> a_operand;
    typedef async_operand<S, BN, BK, THREADS, B_ROWS, 8, 8> b_operand;
    extern __shared__ __align__(16) unsigned char hmma_shared[];
    S *const a_ring = (S *)hmma_shared, *const b_ring = a_ring + STAGES * a_operand::SLAB;

    a_operand a((const S *)p.a + z * p.a_batch_stride, A_ROWS ? p.a_col_stride : p.a_row_stride,
                p.m, p.k, row0);
    b_operand b((const S *)p.b + z * p.b_batch_stride, B_ROWS ? p.b_row_stride : p.b_col_stride,
                p.n, p.k, col0);
    const index_t slabs = start_slabs<STAGES, BK>(p.k, a, b, a_ring, b_ring);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
    const int m_warp = (warp / WARPS_N) * (BM / WARPS_M), n_warp = (warp % WARPS_N) * (BN / WARPS_N);
    // The row this lane gives ldmatrix, at kk = 0: lane 8 j + r gives row r of
    // 8x8 matrix j, the matrices being A(i 0-7, k 0-7), A(i 8-15, k 0-7),
    // A(i 0-7, k 8-15), A(i 8-15, k 8-15) and B(n 0-7, k 0-7), B(n 0-7, k 8-15),
    // B(n 8-15, k 0-7), B(n 8-15, k 8-15); a row is 8 elements along k
    // (row-major slab) or along i (k-major slab, transposed on loading).
    const int r = lane % 8, j = lane / 8;
    const int a_at = (m_warp + (j % 2) * 8 + (A_ROWS ? 0 : r)) * a_operand::I_PITCH +
                     ((j / 2) * 8 + (A_ROWS ? r : 0)) * a_operand::K_PITCH;
    const int b_at = (n_warp + (j / 2) * 8 + (B_ROWS ? 0 : r)) * b_operand::I_PITCH +
                     ((j % 2) * 8 + (B_ROWS ? r : 0)) * b_operand::K_PITCH;

    float acc[TILES_M][TILES_N][4];
#pragma unroll
    for (int i = 0; i < TILES_M; ++i)
#pragma unroll
        for (int j = 0; j < TILES_N; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    multiply_slabs<STAGES, BK>(slabs, a, b, a_ring, b_ring, [&](const S *a_slab,
                                                           const S *b_slab) {
        const S *as = a_slab + a_at, *bs = b_slab + b_at;
#pragma unroll
        for (int kk = 0; kk < BK; kk += MMA_K) {
            unsigned af[TILES_M][4], bf[TILES_N][2];
#pragma unroll
            for (int t = 0; t < TILES_M; ++t)
                ldmatrix_x4<A_ROWS>(af[t], as + t * 16 * a_operand::I_PITCH + kk * a_operand::K_PITCH);
#pragma unroll
            for (int t = 0; t < TILES_N / 2; ++t) {
                unsigned q[4];
                ldmatrix_x4<B_ROWS>(q, bs + t * 16 * b_operand::I_PITCH + kk * b_operand::K_PITCH);
                bf[2 * t][0] = q[0], bf[2 * t][1] = q[1];
                bf[2 * t + 1][0] = q[2], bf[2 * t + 1][1] = q[3];
            }
#pragma unroll
            for (int i = 0; i < TILES_M; ++i)
#pragma unroll
                for (int j = 0; j < TILES_N; ++j) mma_16x8x16<S>(acc[i][j], af[i], bf[j]);
        }
    });

    // C goes out through shared memory, which the ring is done with: lane
    // (group, quad) holds C(group (+8), 2 quad + {0, 1}) of each 16 x 8 piece.
    constexpr int C_PITCH = BN + 8;  // elements: the pairs of a warp hit distinct banks
    static_assert(BM * C_PITCH <= STAGES * (a_operand::SLAB + b_operand::SLAB), "C fits the ring");
    struct pair { S x, y; };
    S *const tile = a_ring;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILES_M; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int j = 0; j < TILES_N; ++j)
                *(pair *)&tile[(m_warp + i * 16 + h * 8 + group) * C_PITCH + n_warp + j * 8 + quad * 2] =
                    {rounded<S>(acc[i][j][2 * h]), rounded<S>(acc[i][j][2 * h + 1])};
    __syncthreads();
    store_tile<S, BM, BN, C_PITCH, THREADS>(threadIdx.x, tile,
                                            (S *)p.c + z * p.c_batch_stride + row0 * p.ldc + col0,
                                            p.ldc, p.m - row0, p.n - col0);
}

template <typename S, int BM, int BN, int BK, int STAGES, int WARPS_M, int WARPS_N>
__device__ void gemm_hmma(const gemm_args &p) {
    index_t row0, col0;
    block_origin<BM, BN>(row0, col0);
    const index_t z = blockIdx.z;
#define HMMA_TILE(A_ROWS, B_ROWS) \
    hmma_tile<S, BM, BN, BK, STAGES, WARPS_M, WARPS_N, A_ROWS, B_ROWS>(p, row0, col0, z)
    FOR_OPERAND_LAYOUTS(p, HMMA_TILE);
#undef HMMA_TILE
}

#endif  // HMMA_CODE

#if HMMA_CODE
#define HMMA_BODY(S)                                                                       \
    gemm_hmma<S, GEMM_HMMA_M, GEMM_HMMA_N, GEMM_HMMA_K, GEMM_HMMA_STAGES, GEMM_HMMA_WARPS_M, \
              GEMM_HMMA_WARPS_N>(args)
#else
#define HMMA_BODY(S)
#endif

extern "C" __global__ void __launch_bounds__(GEMM_HMMA_THREADS, GEMM_HMMA_BLOCKS_PER_SM) gemm_hmma_f16(gemm_args args) {
    HMMA_BODY(f16_bits);
}
extern "C" __global__ void __launch_bounds__(GEMM_HMMA_THREADS, GEMM_HMMA_BLOCKS_PER_SM) gemm_hmma_bf16(gemm_args args) {
    HMMA_BODY(bf16_bits);
}
