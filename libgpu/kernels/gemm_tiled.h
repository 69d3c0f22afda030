/* The tiled GEMM kernels' launch contract, shared by gemm_tiled.cu (compiled by
 * NVRTC as C++) and the C host code (libgpu/src): plain C, no includes, so it
 * compiles under both and the numbers exist in one place. */
#ifndef GPUMATMUL_GEMM_TILED_H
#define GPUMATMUL_GEMM_TILED_H

/* Each block computes a GEMM_TILED_M x GEMM_TILED_N tile of one C matrix,
 * staging GEMM_TILED_K-deep slabs of A and B in shared memory; each thread
 * accumulates a GEMM_TILED_MICRO x GEMM_TILED_MICRO patch in registers. */
#define GEMM_TILED_M 64
#define GEMM_TILED_N 64
#define GEMM_TILED_K 16
#define GEMM_TILED_MICRO 4
#define GEMM_TILED_THREADS ((GEMM_TILED_M / GEMM_TILED_MICRO) * (GEMM_TILED_N / GEMM_TILED_MICRO))

/* The one parameter of every kernel of every family in the kernel registry
 * (libgpu/src/gemm/tables.c), passed by value. A launch computes
 * C[z] = op(A[z]) @ op(B[z]) for z in [0, gridDim.z) on a grid of
 * (ceil(m / tile_m), ceil(n / tile_n), batches) blocks, with the family's tile
 * sizes (GEMM_TILED_M and GEMM_TILED_N here). The host splits problems larger
 * than CUDA's grid limits into several launches, each a sub-problem with its
 * own arguments (pointers advanced to its first row, column and batch).
 * Strides and leading dimensions count elements. Every field is 8 bytes, so
 * the layout is the same for the host's C compiler and for NVRTC. */
struct gemm_args {
    long long m, n, k;
    /* op(A)(i, kk) is a[i * a_row_stride + kk * a_col_stride]: a transpose is
     * just swapped strides. */
    const void *a;
    long long a_row_stride, a_col_stride, a_batch_stride;
    const void *b;
    long long b_row_stride, b_col_stride, b_batch_stride;
    void *c;
    long long ldc, c_batch_stride;
};

#endif
