/* The int8, uint8 and bool tensor-core kernels' launch contract (gemm_imma.cu),
 * shared with the host code like gemm_tiled.h: plain C, no includes. */
#ifndef GPUMATMUL_GEMM_IMMA_H
#define GPUMATMUL_GEMM_IMMA_H

/* Each block computes a GEMM_IMMA_M x GEMM_IMMA_N tile of C from
 * GEMM_IMMA_K-byte deep slabs of A and B, GEMM_IMMA_STAGES slabs in flight in
 * shared memory (cp.async). The warps form a GEMM_IMMA_WARPS_M x
 * GEMM_IMMA_WARPS_N grid, each computing 64 x 32 of C with mma.sync m16n8k32,
 * and GEMM_IMMA_BLOCKS_PER_SM blocks share a multiprocessor (so at most 128
 * registers a thread). gemm_hmma's shape and slabs of the same 64 bytes of
 * k per row (twice its multiply-adds, at twice its rate: a slab takes the
 * tensor cores as long), with a fourth stage in flight (gemm_hmma measured 3
 * as fast as 4; not yet measured here). Operands are both contiguous along
 * k (PARAMS_K_MAJOR): the host repacks the others (libgpu/src/gemm/repack.c). */
#define GEMM_IMMA_M 128
#define GEMM_IMMA_N 128
#define GEMM_IMMA_K 64
#define GEMM_IMMA_STAGES 4
#define GEMM_IMMA_WARPS_M 2
#define GEMM_IMMA_WARPS_N 4
#define GEMM_IMMA_THREADS (32 * GEMM_IMMA_WARPS_M * GEMM_IMMA_WARPS_N)
#define GEMM_IMMA_BLOCKS_PER_SM 2

/* Rows of a slab are padded by this many bytes, so that the 8 rows an
 * ldmatrix reads fall in distinct banks. */
#define GEMM_IMMA_PAD 16

/* Shared memory per block (dynamic), in bytes: each stage holds a slab of A
 * and one of B, row-major (k contiguous) with padded rows: 80 KiB. */
#define GEMM_IMMA_SHARED_BYTES \
    (GEMM_IMMA_STAGES * (GEMM_IMMA_M + GEMM_IMMA_N) * (GEMM_IMMA_K + GEMM_IMMA_PAD))

#endif
