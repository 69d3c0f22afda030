/* The split-k reduction's launch contract (gemm_reduce.cu), shared with the
 * host code (libgpu/src/gemm/split_k.c) like gemm_tiled.h: plain C, no includes. */
#ifndef GPUMATMUL_GEMM_REDUCE_H
#define GPUMATMUL_GEMM_REDUCE_H

/* Each thread sums GEMM_REDUCE_BYTES of consecutive elements of a row (one
 * 16-byte load from each piece; a row's last elements, short of 16 bytes, one by
 * one, so that the pieces' padding, which the GEMM never writes, is never read). A launch is a grid of
 * (ceil(n * element size / GEMM_REDUCE_BYTES / GEMM_REDUCE_THREADS), m,
 * batches) blocks of GEMM_REDUCE_THREADS: a block row per row of C, so m is
 * at most 65535 (CUDA's grid limit). */
#define GEMM_REDUCE_BYTES 16
#define GEMM_REDUCE_THREADS 128

/* The one parameter of gemm_reduce_<suffix>, passed by value; every field is
 * 8 bytes, as in struct gemm_args. A GEMM whose k was cut into `splits` pieces
 * left its partial products in `partials`: piece s of matrix z of the batch
 * is the m x n matrix at partials + (z * splits + s) * m * ld, rows ld apart,
 * 16-byte aligned, ld a multiple of 16 bytes. The kernel writes C[z] = their
 * sum, added in the order s = 0, 1, ..., so that the result does not depend
 * on how the blocks were scheduled. */
struct reduce_args {
    long long m, n, splits;
    const void *partials;
    long long ld;
    void *c;
    long long ldc, c_batch_stride;
};

#endif
