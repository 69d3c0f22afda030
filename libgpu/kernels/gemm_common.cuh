// Device helpers shared by the GEMM kernel families (every .cu file here is
// compiled as one program, so each helper exists once).
#ifndef GPUMATMUL_GEMM_COMMON_CUH
#define GPUMATMUL_GEMM_COMMON_CUH

typedef long long index_t;

// Tile rows per group of the block numbering: see block_origin.
#define GEMM_GROUP_M 8

// The first row and column of C for this block of a grid of
// ceil(m / TILE_M) x ceil(n / TILE_N) blocks. Blocks are numbered in groups of
// GEMM_GROUP_M tile rows, column by column within a group, so that the blocks
// in flight at once read a few panels of A and B many times, from L2, rather
// than every panel of A once.
template <int TILE_M, int TILE_N>
__device__ __forceinline__ void block_origin(index_t &row0, index_t &col0) {
    const unsigned long long grid_m = gridDim.x, grid_n = gridDim.y;
    const unsigned long long id = blockIdx.y * grid_m + blockIdx.x;
    const unsigned long long first_m = id / (GEMM_GROUP_M * grid_n) * GEMM_GROUP_M;
    const unsigned long long rows = min(grid_m - first_m, (unsigned long long)GEMM_GROUP_M);
    const unsigned long long in_group = id % (GEMM_GROUP_M * grid_n);
    row0 = (index_t)(first_m + in_group % rows) * TILE_M;
    col0 = (index_t)(in_group / rows) * TILE_N;
}

#if __CUDA_ARCH__ >= 800
// The 16-bit element types of the tensor-core families, as their bits (the
// kernels only move them and hand them to the MMA instructions), and how a
// float32 sum is rounded to each: to nearest even, NaN staying NaN.
struct f16_bits { unsigned short bits; };
struct bf16_bits { unsigned short bits; };

template <typename S>
__device__ __forceinline__ S rounded(float x);
template <>
__device__ __forceinline__ f16_bits rounded<f16_bits>(float x) {
    f16_bits h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(x));
    return h;
}
template <>
__device__ __forceinline__ bf16_bits rounded<bf16_bits>(float x) {
    bf16_bits h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.bits) : "f"(x));
    return h;
}
template <>
__device__ __forceinline__ float rounded<float>(float x) {
    return x;
}
#endif

// Asynchronous copies from global to shared memory (sm_80 and newer):
// `bytes` of the 16 at src are copied, the rest of dst is zero-filled.
#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ void copy_async_16(void *dst, const void *src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(dst)),
                 "l"(src), "r"(bytes));
}
__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;\n"); }
// Waits until at most `PENDING` committed groups are still in flight.
template <int PENDING>
__device__ __forceinline__ void copy_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}

// Loads the four 8x8 16-bit matrices whose rows start at the addresses the
// lanes give (lane 8 j + r: row r of matrix j), transposed or not.
template <bool TRANSPOSE>
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void *row) {
    const unsigned at = (unsigned)__cvta_generic_to_shared(row);
    if (TRANSPOSE)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(at));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(at));
}

// One operand of a tensor-core kernel, streamed slab by slab into a ring in
// shared memory: X(i, kk) = x[i * i_stride + kk * k_stride], i along M (A) or
// N (B), each slab ROWS x BK. I_CONTIGUOUS (i_stride == 1) slabs are stored
// k-major, slab[kk][i] (pitch ROWS + K_PAD); the others (k_stride == 1)
// row-major, slab[i][kk] (pitch BK + I_PAD): each is the operand's own
// orientation, so every copy is a 16-byte piece as it lies in memory.
template <typename S, int ROWS, int BK, int THREADS, bool I_CONTIGUOUS, int K_PAD, int I_PAD>
struct async_operand {
    static constexpr int VEC = 16 / sizeof(S);                 // elements per piece
    static constexpr int I_PITCH = I_CONTIGUOUS ? 1 : BK + I_PAD;  // (i, kk) is at
    static constexpr int K_PITCH = I_CONTIGUOUS ? ROWS + K_PAD : 1;  // i I_PITCH + kk K_PITCH
    static constexpr int SLAB = I_CONTIGUOUS ? BK * K_PITCH : ROWS * I_PITCH;  // elements
    static constexpr int CHUNKS = ROWS * BK / VEC / THREADS;  // pieces per thread and slab
    static_assert(CHUNKS * VEC * THREADS == ROWS * BK, "threads must tile the slab evenly");

    const S *src[CHUNKS];  // this thread's pieces of the next slab
    int dst[CHUNKS];       // and where they go in a slab
    const S *x;
    index_t pitch, rows, k, i0;  // pitch: the stride that is not 1
    bool whole;                  // 16-byte aligned, and the block's rows all inside

    // (i, kk) of piece j of this thread within a slab.
    static __device__ __forceinline__ void place(int j, int &i, int &kk) {
        const int c = threadIdx.x + j * THREADS;
        i = I_CONTIGUOUS ? (c % (ROWS / VEC)) * VEC : c / (BK / VEC);
        kk = I_CONTIGUOUS ? c / (ROWS / VEC) : (c % (BK / VEC)) * VEC;
    }

    __device__ __forceinline__ async_operand(const S *x_, index_t pitch_, index_t rows_,
                                             index_t k_, index_t i0_)
        : x(x_), pitch(pitch_), rows(rows_), k(k_), i0(i0_) {
        whole = ((unsigned long long)x & 15) == 0 && pitch % VEC == 0 && i0 + ROWS <= rows;
#pragma unroll
        for (int j = 0; j < CHUNKS; ++j) {
            int i, kk;
            place(j, i, kk);
            src[j] = x + (I_CONTIGUOUS ? (i0 + i) + kk * pitch : (i0 + i) * pitch + kk);
            dst[j] = i * I_PITCH + kk * K_PITCH;
        }
    }

    // Starts copying the slab at k0 (the one after the last copied) into `slab`.
    __device__ __forceinline__ void copy(S *slab, index_t k0) {
        if (whole && k0 + BK <= k) {
#pragma unroll
            for (int j = 0; j < CHUNKS; ++j) copy_async_16(slab + dst[j], src[j], 16);
        } else {
            copy_edge(slab, x, pitch, rows, k, i0, k0);
        }
#pragma unroll
        for (int j = 0; j < CHUNKS; ++j) src[j] += I_CONTIGUOUS ? BK * pitch : BK;
    }

    // A slab that runs past the matrix, or an operand that is not 16-byte
    // aligned: pieces are cut at the edges and zero-filled; unaligned ones are
    // copied element by element, synchronously (cp.async has no 2-byte copy).
    // Out of line, and given its values (not the object, which would then
    // have to live in memory): it is rare, and inlined it would double the code.
    static __device__ __noinline__ void copy_edge(S *slab, const S *x, index_t pitch, index_t rows,
                                                  index_t k, index_t i0, index_t k0) {
        const bool vector = ((unsigned long long)x & 15) == 0 && pitch % VEC == 0;
        for (int j = 0; j < CHUNKS; ++j) {
            int i, kk;
            place(j, i, kk);
            const index_t gi = i0 + i, gk = k0 + kk;
            const index_t along = I_CONTIGUOUS ? rows - gi : k - gk;  // elements left in the piece
            const bool across = I_CONTIGUOUS ? gk < k : gi < rows;
            const int valid = across ? (int)max(min(along, (index_t)VEC), (index_t)0) : 0;
            const S *from = valid > 0 ? x + (I_CONTIGUOUS ? gi + gk * pitch : gi * pitch + gk) : x;
            S *to = slab + i * I_PITCH + kk * K_PITCH;
            if (vector) {
                copy_async_16(to, from, valid * (int)sizeof(S));
            } else {
                for (int e = 0; e < VEC; ++e) to[e] = e < valid ? from[e] : S();
            }
        }
    }
};

// The ring the tensor-core families run: slab s of A and B (BK deep along k)
// goes into ring slot s % STAGES, STAGES - 1 slabs ahead of the one being
// multiplied, so the copies overlap the arithmetic. start_slabs issues the
// first STAGES - 1 slabs and returns how many there are; a kernel calls it as
// early as it can (before setting up its accumulators, which ptxas then spills
// less of). multiply_slabs then runs multiply(a_slab, b_slab) once per slab, in
// order along k; on return every copy has landed and the ring may be reused.
template <int STAGES, int BK, typename AOperand, typename BOperand, typename S>
__device__ __forceinline__ index_t start_slabs(index_t k, AOperand &a, BOperand &b, S *a_ring,
                                               S *b_ring) {
    const index_t slabs = (k + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < slabs) {
            a.copy(a_ring + s * AOperand::SLAB, s * BK);
            b.copy(b_ring + s * BOperand::SLAB, s * BK);
        }
        copy_async_commit();
    }
    return slabs;
}

template <int STAGES, int BK, typename AOperand, typename BOperand, typename S, typename Multiply>
__device__ __forceinline__ void multiply_slabs(index_t slabs, AOperand &a, BOperand &b, S *a_ring,
                                               S *b_ring, const Multiply &multiply) {
    int read = 0, write = STAGES - 1;  // ring slots
    for (index_t s = 0; s < slabs; ++s) {
        copy_async_wait<STAGES - 2>();
        __syncthreads();  // slab s is in; every warp is done with slab s - 1
        if (s + STAGES - 1 < slabs) {
            a.copy(a_ring + write * AOperand::SLAB, (s + STAGES - 1) * BK);
            b.copy(b_ring + write * BOperand::SLAB, (s + STAGES - 1) * BK);
        }
        copy_async_commit();
        multiply(a_ring + read * AOperand::SLAB, b_ring + read * BOperand::SLAB);
        read = read == STAGES - 1 ? 0 : read + 1;
        write = write == STAGES - 1 ? 0 : write + 1;
    }
    copy_async_wait<0>();
}

// Runs TILE(A_ROWS, B_ROWS), a macro of the caller's, with the layouts of p's
// operands as constants (A_ROWS / B_ROWS: the operand is contiguous along M /
// N, its slabs k-major), so that the block's code is compiled once for each of
// the four pairs, with constant pitches. (A macro: NVRTC 12 takes a generic
// lambda in device code for a host function.)
#define FOR_OPERAND_LAYOUTS(p, TILE)                                               \
    do {                                                                           \
        if ((p).a_row_stride == 1) {                                               \
            if ((p).b_col_stride == 1) TILE(true, true); else TILE(true, false);   \
        } else {                                                                   \
            if ((p).b_col_stride == 1) TILE(false, true); else TILE(false, false); \
        }                                                                          \
    } while (0)

// Copies the ROWS x COLS tile of C staged in shared memory (element (r, c) at
// tile[r * PITCH + c]) to c (row-major, ldc apart), the part inside
// rows x cols: whole 16-byte pieces where the tile is inside and aligned,
// element by element otherwise. THREADS threads take part, numbered from 0 by
// `thread`. A loop, not unrolled: the same code serves every fragment layout,
// and the stores of a warp are consecutive.
template <typename S, int ROWS, int COLS, int PITCH, int THREADS>
__device__ __forceinline__ void store_tile(int thread, const S *tile, S *c, index_t ldc,
                                           index_t rows, index_t cols) {
    constexpr int VEC = 16 / sizeof(S);
    struct piece { unsigned w[4]; };
    if (rows >= ROWS && cols >= COLS && ((unsigned long long)c & 15) == 0 && ldc % VEC == 0) {
#pragma unroll 4
        for (int at = thread; at < ROWS * COLS / VEC; at += THREADS) {
            const int r = at / (COLS / VEC), col = (at % (COLS / VEC)) * VEC;
            *(piece *)(c + r * ldc + col) = *(const piece *)(tile + r * PITCH + col);
        }
    } else {
        for (int at = thread; at < ROWS * COLS; at += THREADS) {
            const int r = at / COLS, col = at % COLS;
            if (r < rows && col < cols) c[r * ldc + col] = tile[r * PITCH + col];
        }
    }
}

#endif

#endif
