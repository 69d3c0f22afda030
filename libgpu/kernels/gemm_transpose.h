/* The transpose's launch contract (gemm_transpose.cu), shared with the host
 * code (libgpu/src/gemm/repack.c) like gemm_tiled.h: plain C, no includes. */
#ifndef GPUMATMUL_GEMM_TRANSPOSE_H
#define GPUMATMUL_GEMM_TRANSPOSE_H

/* A block of GEMM_TRANSPOSE_THREADS threads (a 1-D block) transposes a square
 * of TILE x TILE elements through shared memory, TILE being the kernel's own:
 * GEMM_TRANSPOSE_TILE_B8 for 1-byte elements (128 bytes a side, so that each
 * row's piece is whole 128-byte lines moved as 4-byte words),
 * GEMM_TRANSPOSE_TILE_B32 for 4-byte ones. A launch is a grid of
 * (ceil(cols / TILE), ceil(rows / TILE), batches) blocks, so rows is at most
 * 65535 * TILE (CUDA's grid limit). */
#define GEMM_TRANSPOSE_THREADS 256
#define GEMM_TRANSPOSE_TILE_B8 128
#define GEMM_TRANSPOSE_TILE_B32 32

/* The one parameter of gemm_transpose_b8 and gemm_transpose_b32 (1- and
 * 4-byte elements), passed by value; every field is 8 bytes, as in struct
 * gemm_args. Matrix z of the batch, rows x cols elements at
 * in + z * in_batch_stride with rows ld apart, is written transposed
 * (cols x rows) at out + z * out_batch_stride, rows out_ld apart, each row's
 * elements past `rows` up to out_ld set to zero, so that a kernel reading whole
 * 16-byte pieces of the copy reads no uninitialized memory (out_ld rounds rows
 * up to 16 bytes, within the grid's last tile). Strides count elements; out,
 * out_ld and out_batch_stride are whole 16 bytes. */
struct transpose_args {
    long long rows, cols;
    const void *in;
    long long ld, in_batch_stride;
    void *out;
    long long out_ld, out_batch_stride;
};

#endif
