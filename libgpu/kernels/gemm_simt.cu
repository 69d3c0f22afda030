// Warp-tiled float32 GEMM on CUDA cores: C[z] = op(A[z]) @ op(B[z]), row-major
// C, any sizes and strides. The launch contract is in gemm_simt.h (tile sizes,
// threads, shared memory) and gemm_tiled.h (the argument struct, shared by
// every family). GPUs older than GEMM_SIMT_MIN_ARCH get an empty kernel; the
// kernel registry gives them the tiled family instead.
//
// The classic register-blocked design (as in CUTLASS's SIMT GEMM and
// siboehm/SGEMM_CUDA's warp-tiling kernel):
// - Shared memory holds two K-slabs of A and B, both stored k-major
//   (slab[kk][i], i along M for A and along N for B), so that one 16-byte
//   shared load gives a thread 4 consecutive rows or columns of its patch.
//   While the block multiplies one slab, each thread holds its share of the
//   next one in registers (global loads in flight), and stores it into the
//   other slab afterwards: one barrier per slab.
// - A warp covers (16 * SUB_M) x (32 * SUB_N) of C with its lanes as a 4 x 8
//   grid; a thread's patch is SUB_M x SUB_N blocks of 4 x 4, 16 rows and 32
//   columns apart, so that a quarter-warp's shared loads hit one address (A)
//   or 8 consecutive ones (B): no bank conflicts.
// - Global loads are 16 bytes wide where the slab lies inside the matrix and
//   the operand is 16-byte aligned; otherwise (edges, odd pitches) the same
//   elements are loaded one by one with bounds checks, zeros outside.
// - Blocks are numbered in groups of tile rows (block_origin), for L2.

#include "gemm_tiled.h"

#include "gemm_common.cuh"
#include "gemm_simt.h"

// 16-byte aligned, so that the compiler makes one 16-byte access of each copy
// (without it, four 4-byte ones: it cannot know the address is aligned).
struct __align__(16) float4_t {
    float x, y, z, w;
};

// Streams one operand's slabs through shared memory. The operand is
// X(i, kk) = x[i * i_stride + kk * k_stride], i along M (A) or N (B); one of
// the strides is 1, and the 4 elements of each chunk a thread loads lie along
// it, consecutive in memory.
template <int ROWS, int BK, int THREADS>
struct slab_stream {
    static constexpr int CHUNKS = ROWS * BK / 4 / THREADS;  // per thread and slab
    static_assert(CHUNKS * 4 * THREADS == ROWS * BK, "threads must tile the slab evenly");

    const float *next[CHUNKS];  // each chunk's first element in the next slab
    index_t step;               // elements from one slab to the next
    index_t rows, k, i0, k0;    // the operand's extent; the next slab's origin
    bool i_contiguous, vector;  // vector: 16-byte loads are allowed

    // The (i, kk) of chunk c's first element within a slab.
    __device__ __forceinline__ void place(int c, int &i, int &kk) const {
        if (i_contiguous) {
            kk = c / (ROWS / 4);
            i = (c % (ROWS / 4)) * 4;
        } else {
            i = c / (BK / 4);
            kk = (c % (BK / 4)) * 4;
        }
    }

    __device__ __forceinline__ slab_stream(const float *x, index_t i_stride, index_t k_stride,
                                           index_t rows_, index_t k_, index_t i0_)
        : step(BK * k_stride), rows(rows_), k(k_), i0(i0_), k0(0), i_contiguous(i_stride == 1) {
        const index_t pitch = i_contiguous ? k_stride : i_stride;
        vector = ((unsigned long long)x & 15) == 0 && pitch % 4 == 0;
#pragma unroll
        for (int j = 0; j < CHUNKS; ++j) {
            int i, kk;
            place(threadIdx.x + j * THREADS, i, kk);
            next[j] = x + (i0 + i) * i_stride + kk * k_stride;
        }
    }

    // Loads the next slab into registers and moves on to the one after.
    __device__ __forceinline__ void load(float4_t (&chunk)[CHUNKS]) {
        const bool inside = vector && i0 + ROWS <= rows && k0 + BK <= k;
#pragma unroll
        for (int j = 0; j < CHUNKS; ++j) {
            if (inside) {
                chunk[j] = *(const float4_t *)next[j];
            } else {
                int i, kk;
                place(threadIdx.x + j * THREADS, i, kk);
                float v[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const bool in = i_contiguous ? i0 + i + e < rows && k0 + kk < k
                                                 : i0 + i < rows && k0 + kk + e < k;
                    v[e] = in ? next[j][e] : 0.0f;
                }
                chunk[j] = {v[0], v[1], v[2], v[3]};
            }
            next[j] += step;
        }
        k0 += BK;
    }

    // Stores a loaded slab k-major: slab[kk][i].
    template <int PITCH>
    __device__ __forceinline__ void store(const float4_t (&chunk)[CHUNKS],
                                          float (*slab)[PITCH]) const {
#pragma unroll
        for (int j = 0; j < CHUNKS; ++j) {
            int i, kk;
            place(threadIdx.x + j * THREADS, i, kk);
            if (i_contiguous) {
                *(float4_t *)&slab[kk][i] = chunk[j];
            } else {  // transposed on the way
                slab[kk + 0][i] = chunk[j].x;
                slab[kk + 1][i] = chunk[j].y;
                slab[kk + 2][i] = chunk[j].z;
                slab[kk + 3][i] = chunk[j].w;
            }
        }
    }
};

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N>
__device__ void gemm_simt(const gemm_args &p) {
    constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    constexpr int SUB_M = BM / WARPS_M / 16, SUB_N = BN / WARPS_N / 32;
    static_assert(SUB_M * 16 * WARPS_M == BM && SUB_N * 32 * WARPS_N == BN, "warp tiling");
    // 4 floats of padding: k-major rows stay 16-byte aligned, and the
    // transposing stores of a warp land in distinct banks.
    extern __shared__ __align__(16) float simt_shared[];
    float(*const a_slab)[BK][BM + 4] = (float(*)[BK][BM + 4])simt_shared;
    float(*const b_slab)[BK][BN + 4] = (float(*)[BK][BN + 4])(simt_shared + 2 * BK * (BM + 4));

    index_t row0, col0;
    block_origin<BM, BN>(row0, col0);

    const index_t z = blockIdx.z;
    slab_stream<BM, BK, THREADS> a((const float *)p.a + z * p.a_batch_stride, p.a_row_stride,
                                   p.a_col_stride, p.m, p.k, row0);
    slab_stream<BN, BK, THREADS> b((const float *)p.b + z * p.b_batch_stride, p.b_col_stride,
                                   p.b_row_stride, p.n, p.k, col0);
    float4_t a_next[a.CHUNKS], b_next[b.CHUNKS];

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int m_base = (warp / WARPS_N) * (BM / WARPS_M) + (lane / 8) * 4;
    const int n_base = (warp % WARPS_N) * (BN / WARPS_N) + (lane % 8) * 4;

    float acc[SUB_M * 4][SUB_N * 4];
#pragma unroll
    for (int i = 0; i < SUB_M * 4; ++i)
#pragma unroll
        for (int j = 0; j < SUB_N * 4; ++j) acc[i][j] = 0.0f;

    const index_t slabs = (p.k + BK - 1) / BK;
    a.load(a_next);
    b.load(b_next);
    a.store(a_next, a_slab[0]);
    b.store(b_next, b_slab[0]);
    __syncthreads();

    for (index_t s = 0; s < slabs; ++s) {
        const int cur = (int)(s & 1);
        if (s + 1 < slabs) {
            a.load(a_next);
            b.load(b_next);
        }
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            __align__(16) float af[SUB_M * 4], bf[SUB_N * 4];
#pragma unroll
            for (int i = 0; i < SUB_M; ++i)
                *(float4_t *)&af[i * 4] = *(const float4_t *)&a_slab[cur][kk][m_base + i * 16];
#pragma unroll
            for (int j = 0; j < SUB_N; ++j)
                *(float4_t *)&bf[j * 4] = *(const float4_t *)&b_slab[cur][kk][n_base + j * 32];
#pragma unroll
            for (int i = 0; i < SUB_M * 4; ++i)
#pragma unroll
                for (int j = 0; j < SUB_N * 4; ++j) acc[i][j] += af[i] * bf[j];
        }
        if (s + 1 < slabs) {
            a.store(a_next, a_slab[cur ^ 1]);
            b.store(b_next, b_slab[cur ^ 1]);
        }
        __syncthreads();
    }

    float *c = (float *)p.c + z * p.c_batch_stride;
    const bool c_vector = ((unsigned long long)c & 15) == 0 && p.ldc % 4 == 0;
#pragma unroll
    for (int i = 0; i < SUB_M * 4; ++i) {
        const index_t r = row0 + m_base + (i / 4) * 16 + i % 4;
        if (r >= p.m) continue;
#pragma unroll
        for (int j = 0; j < SUB_N; ++j) {
            const index_t col = col0 + n_base + j * 32;
            float *out = c + r * p.ldc + col;
            if (c_vector && col + 4 <= p.n) {
                *(float4_t *)out = {acc[i][j * 4], acc[i][j * 4 + 1], acc[i][j * 4 + 2],
                                    acc[i][j * 4 + 3]};
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (col + e < p.n) out[e] = acc[i][j * 4 + e];
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(GEMM_SIMT_THREADS, 1) gemm_simt_f32(gemm_args args) {
#if __CUDA_ARCH__ >= GEMM_SIMT_MIN_ARCH * 10
    gemm_simt<GEMM_SIMT_M, GEMM_SIMT_N, GEMM_SIMT_K, GEMM_SIMT_WARPS_M, GEMM_SIMT_WARPS_N>(args);
#endif
}
