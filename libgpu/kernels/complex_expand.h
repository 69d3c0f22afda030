/* The complex expansion's launch contract (complex_expand.cu), shared with the
 * host code (libgpu/src/gemm/complex_real.c) like gemm_tiled.h: plain C, no
 * includes. */
#ifndef GPUMATMUL_COMPLEX_EXPAND_H
#define GPUMATMUL_COMPLEX_EXPAND_H

/* A block expands a COMPLEX_EXPAND_TILE x COMPLEX_EXPAND_TILE square of B as
 * stored, through shared memory, with COMPLEX_EXPAND_TILE x
 * COMPLEX_EXPAND_ROWS threads. A launch is a grid of (ceil(cols / TILE),
 * ceil(rows / TILE), batches) blocks, so rows is at most 65535 * TILE (CUDA's
 * grid limit). */
#define COMPLEX_EXPAND_TILE 32
#define COMPLEX_EXPAND_ROWS 8

/* The one parameter of complex_expand_<suffix> (c64, c128), passed by value;
 * every field is 8 bytes, as in struct gemm_args. Matrix z of the batch,
 * rows x cols complex elements at in + z * in_batch_stride with rows ld
 * apart, is op(B) (k x n) when k_rows is 1, else op(B) transposed (n x k, B
 * stored transposed). For each b = op(B)[p][q] the kernel writes two complex
 * elements of E^T (2n x k complex, rows out_ld apart, at out + z *
 * out_batch_stride):
 *
 *     E^T[2q][p] = (Re b, -Im b),    E^T[2q + 1][p] = (Im b, Re b),
 *
 * so that E^T seen as 2n x 2k reals is the transpose of the real 2k x 2n
 * matrix E with E[2p][2q] = Re b, E[2p][2q+1] = Im b, E[2p+1][2q] = -Im b and
 * E[2p+1][2q+1] = Re b: a complex A (m x k) seen as m x 2k reals (re, im
 * interleaved) times E is C seen as m x 2n reals. Strides count complex
 * elements; out is aligned to a whole complex element. */
struct complex_expand_args {
    long long rows, cols;
    const void *in;
    long long ld, in_batch_stride;
    void *out;
    long long out_ld, out_batch_stride;
    long long k_rows;
};

#endif
