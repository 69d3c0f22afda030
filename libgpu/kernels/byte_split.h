/* The byte split's launch contract (byte_split.cu), shared with the host code
 * (libgpu/src/gemm/byte_split.c) like gemm_tiled.h: plain C, no includes. */
#ifndef GPUMATMUL_BYTE_SPLIT_H
#define GPUMATMUL_BYTE_SPLIT_H

/* A block splits a BYTE_SPLIT_TILE x BYTE_SPLIT_TILE square of an operand as
 * stored, through shared memory, with BYTE_SPLIT_TILE x BYTE_SPLIT_ROWS
 * threads. A launch is a grid of (ceil(cols / TILE), ceil(rows / TILE),
 * batches) blocks, so rows is at most 65535 * TILE (CUDA's grid limit). */
#define BYTE_SPLIT_TILE 32
#define BYTE_SPLIT_ROWS 8

/* The one parameter of byte_split, passed by value; every field is 8 bytes,
 * as in struct gemm_args. Matrix z of the batch, rows x cols elements of
 * `bytes` bytes (2, 4 or 8) at in + z * in_batch_stride with rows ld apart, is
 * X (q x k: k contiguous, the operand A, or B stored transposed) when k_rows
 * is 0, else X transposed (k x q). Each element x = X[q][p] is written as its
 * bytes x_0 (the lowest) .. x_{bytes-1} into row q of `out` (rows out_ld bytes
 * apart, at out + z * out_batch_stride):
 *
 *   k is cut into chunks of 2^chunk_shift (at least 16); the last chunk is the
 *   rest, rounded up to 16: its width w. Chunk c holds `bytes` planes of w
 *   bytes each, from byte c * bytes * 2^chunk_shift of the row, plane i at
 *   i * w if reversed is 0, else at (bytes - 1 - i) * w; x_i is at
 *   p - c * 2^chunk_shift in its plane. The planes' bytes past k (up to the
 *   width) are zero.
 *
 * So row q of the planes of chunk c, [x_0 .. x_{bytes-1}] (or reversed), is an
 * operand of 1-byte elements contiguous along k for the 1-byte kernel. Strides
 * count elements in the input, bytes in the output. */
struct byte_split_args {
    long long rows, cols;
    const void *in;
    long long ld, in_batch_stride;
    void *out;
    long long out_ld, out_batch_stride;
    long long bytes, k_rows, chunk_shift, reversed;
};

#endif
