/* The warp-tiled float32 kernel's launch contract (gemm_simt.cu), shared with
 * the host code like gemm_tiled.h: plain C, no includes. */
#ifndef GPUMATMUL_GEMM_SIMT_H
#define GPUMATMUL_GEMM_SIMT_H

/* Each block computes a GEMM_SIMT_M x GEMM_SIMT_N tile of C from
 * GEMM_SIMT_K-deep slabs of A and B, two slabs in shared memory (the next one
 * loads while the current one is multiplied). The block's warps form a
 * GEMM_SIMT_WARPS_M x GEMM_SIMT_WARPS_N grid, each warp 32 x 128 of C; each
 * thread keeps an 8 x 16 patch of C in registers (128 FMAs for every 24
 * values it reads from shared memory), one block per multiprocessor. Of the
 * shapes measured on an H100 (docs/kernel-log.md, step 1) this one is the fastest
 * from n = 2048 up. */
#define GEMM_SIMT_M 128
#define GEMM_SIMT_N 256
#define GEMM_SIMT_K 16
#define GEMM_SIMT_WARPS_M 4
#define GEMM_SIMT_WARPS_N 2
#define GEMM_SIMT_THREADS (32 * GEMM_SIMT_WARPS_M * GEMM_SIMT_WARPS_N)
/* Shared memory per block (dynamic): two slabs each of A and B, k-major,
 * rows padded by 4 floats. 50 KB: more than sm_5x and sm_6x give a block,
 * so the kernel is for sm_70 and newer (GEMM_SIMT_MIN_ARCH). */
#define GEMM_SIMT_SHARED_BYTES (2 * GEMM_SIMT_K * (GEMM_SIMT_M + 4 + GEMM_SIMT_N + 4) * 4)
#define GEMM_SIMT_MIN_ARCH 70

#endif
