/* The float64 tensor-core kernel's launch contract (gemm_dmma.cu), shared with
 * the host code like gemm_tiled.h: plain C, no includes. */
#ifndef GPUMATMUL_GEMM_DMMA_H
#define GPUMATMUL_GEMM_DMMA_H

/* Each block computes a GEMM_DMMA_M x GEMM_DMMA_N tile of C from
 * GEMM_DMMA_K-deep slabs of A and B, GEMM_DMMA_STAGES slabs in flight in
 * shared memory (copied asynchronously, cp.async). The block's warps form a
 * GEMM_DMMA_WARPS_M x GEMM_DMMA_WARPS_N grid, each multiplying its part with
 * FP64 tensor-core instructions (mma.sync, DMMA), 64 x 32 of C per warp. Of
 * the shapes measured on an H100 (docs/kernel-log.md, step 2) this is the fastest;
 * its 92 KB of shared memory every sm_80 and newer GPU gives a block. */
#define GEMM_DMMA_M 128
#define GEMM_DMMA_N 64
#define GEMM_DMMA_K 16
#define GEMM_DMMA_STAGES 3
#define GEMM_DMMA_WARPS_M 2
#define GEMM_DMMA_WARPS_N 2
#define GEMM_DMMA_THREADS (32 * GEMM_DMMA_WARPS_M * GEMM_DMMA_WARPS_N)

/* Shared memory per block, in bytes (dynamic): each stage holds one slab of A
 * and one of B, each padded as gemm_dmma.cu explains. */
#define GEMM_DMMA_SLAB(rows) \
    ((GEMM_DMMA_K * ((rows) + 8) > (rows) * (GEMM_DMMA_K + 4) ? GEMM_DMMA_K * ((rows) + 8) \
                                                              : (rows) * (GEMM_DMMA_K + 4)) * 8)
#define GEMM_DMMA_SHARED_BYTES \
    (GEMM_DMMA_STAGES * (GEMM_DMMA_SLAB(GEMM_DMMA_M) + GEMM_DMMA_SLAB(GEMM_DMMA_N)))

#endif
