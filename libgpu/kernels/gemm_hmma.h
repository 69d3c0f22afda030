/* The float16 and bfloat16 tensor-core kernels' launch contract (gemm_hmma.cu),
 * shared with the host code like gemm_tiled.h: plain C, no includes. */
#ifndef GPUMATMUL_GEMM_HMMA_H
#define GPUMATMUL_GEMM_HMMA_H

/* Each block computes a GEMM_HMMA_M x GEMM_HMMA_N tile of C from
 * GEMM_HMMA_K-deep slabs of A and B, GEMM_HMMA_STAGES slabs in flight in
 * shared memory (cp.async). The warps form a GEMM_HMMA_WARPS_M x
 * GEMM_HMMA_WARPS_N grid, each computing 64 x 32 of C with mma.sync, and
 * GEMM_HMMA_BLOCKS_PER_SM blocks share a multiprocessor (so at most 128
 * registers a thread): more warps to hide latency with. Of the shapes measured
 * on an H100 (docs/kernel-log.md, step 3) this is the fastest, and its 60 KB of
 * shared memory every sm_80 and newer GPU gives a block. */
#define GEMM_HMMA_M 128
#define GEMM_HMMA_N 128
#define GEMM_HMMA_K 32
#define GEMM_HMMA_STAGES 3
#define GEMM_HMMA_WARPS_M 2
#define GEMM_HMMA_WARPS_N 4
#define GEMM_HMMA_THREADS (32 * GEMM_HMMA_WARPS_M * GEMM_HMMA_WARPS_N)
#define GEMM_HMMA_BLOCKS_PER_SM 2

/* Shared memory per block (dynamic), in bytes: each stage holds a slab of A
 * and one of B, k-major rows padded by 8 elements or row-major ones by 16
 * bytes, whichever layout is larger. */
#define GEMM_HMMA_SLAB(rows)                                                            \
    ((GEMM_HMMA_K * ((rows) + 8) > (rows) * (GEMM_HMMA_K + 8) ? GEMM_HMMA_K * ((rows) + 8) \
                                                             : (rows) * (GEMM_HMMA_K + 8)) * 2)
#define GEMM_HMMA_SHARED_BYTES \
    (GEMM_HMMA_STAGES * (GEMM_HMMA_SLAB(GEMM_HMMA_M) + GEMM_HMMA_SLAB(GEMM_HMMA_N)))

#endif
