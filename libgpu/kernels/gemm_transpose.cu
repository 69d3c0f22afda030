// Transposes matrices of 1- or 4-byte elements (libgpu/src/gemm/repack.c): how
// operands that are not contiguous along k reach the kernels that read k-major
// operands only (TF32 wgmma for float32, the 1-byte wgmma and gemm_imma for
// int8, uint8, bool and FP8) and cuBLASLt's int8 and FP8 kernels. The launch
// contract is in gemm_transpose.h. Each block reads a square with rows of
// consecutive addresses and writes it transposed with rows of consecutive
// addresses, through shared memory.

#include "gemm_common.cuh"
#include "gemm_transpose.h"

// 4-byte elements: one element a thread a step, through a tile padded by one
// column so that reading it by columns hits 32 distinct banks.
extern "C" __global__ void __launch_bounds__(GEMM_TRANSPOSE_THREADS)
gemm_transpose_b32(transpose_args p) {
    constexpr int TILE = GEMM_TRANSPOSE_TILE_B32, ROWS = GEMM_TRANSPOSE_THREADS / TILE;
    __shared__ unsigned tile[TILE][TILE + 1];
    const index_t z = blockIdx.z, row0 = (index_t)blockIdx.y * TILE, col0 = (index_t)blockIdx.x * TILE;
    const int x = threadIdx.x % TILE, y = threadIdx.x / TILE;
    const unsigned *in = (const unsigned *)p.in + z * p.in_batch_stride;
    unsigned *out = (unsigned *)p.out + z * p.out_batch_stride;
#pragma unroll
    for (int step = 0; step < TILE / ROWS; ++step) {
        const int r = y + step * ROWS;
        if (row0 + r < p.rows && col0 + x < p.cols) tile[r][x] = in[(row0 + r) * p.ld + col0 + x];
    }
    __syncthreads();
#pragma unroll
    for (int step = 0; step < TILE / ROWS; ++step) {
        const int c = y + step * ROWS;
        if (col0 + c < p.cols && row0 + x < p.out_ld)
            out[(col0 + c) * p.out_ld + row0 + x] = row0 + x < p.rows ? tile[x][c] : 0u;
    }
}

// Four bytes of row `row` from column `col` on, as one little-endian word,
// read byte by byte (the source is off 4 bytes, or the row ends within the
// word: the bytes past `cols` may lie past the end of the caller's
// allocation); zero past the matrix.
__device__ __noinline__ unsigned row_word_by_bytes(const unsigned char *in, const transpose_args &p,
                                      index_t row, index_t col) {
    unsigned word = 0u;
    if (row < p.rows)
        for (int i = 0; i < 4 && col + i < p.cols; ++i)
            word |= (unsigned)in[row * p.ld + col + i] << (8 * i);
    return word;
}

// 1-byte elements as 4-byte words: moving single bytes, a warp's access is 32
// bytes, and the copy of a 64 MiB operand took about 0.13 ms on an H200 (a
// tenth of an int8 product at n = 8192; kernel log, step 20). Here a thread
// reads one word from each of four consecutive rows, transposes those 4 x 4
// bytes in registers (prmt), and stores the four words where the transposed
// rows' words go in shared memory; the block then writes whole rows of words.
// A warp reads 8 consecutive words (one 32-byte sector) of 4 rows, so that its
// stores into the padded tile hit 32 distinct banks. Tiles inside an aligned
// matrix load words directly; the others (edges, or a source off 4 bytes) take
// a loop that is not unrolled, which would triple the kernel's code.
constexpr int B8_WORDS = GEMM_TRANSPOSE_TILE_B8 / 4;
// What the block moves a step: groups of 4 rows read, then rows of words written.
constexpr int B8_LINES = GEMM_TRANSPOSE_THREADS / B8_WORDS;

// Stores r, the words of 4 consecutive rows (4g .. 4g + 3) at word column w,
// as the 4 x 4 bytes' transpose: words[c][g] is column c's bytes of those rows.
__device__ __forceinline__ void put_transposed(unsigned (*words)[B8_WORDS + 1], int w, int g,
                                               const unsigned r[4]) {
    // Byte i of r[j] is (row 4g + j, column 4w + i): byte j of column 4w + i's word.
    const unsigned low01 = __byte_perm(r[0], r[1], 0x5140), high01 = __byte_perm(r[0], r[1], 0x7362);
    const unsigned low23 = __byte_perm(r[2], r[3], 0x5140), high23 = __byte_perm(r[2], r[3], 0x7362);
    words[4 * w + 0][g] = __byte_perm(low01, low23, 0x5410);
    words[4 * w + 1][g] = __byte_perm(low01, low23, 0x7632);
    words[4 * w + 2][g] = __byte_perm(high01, high23, 0x5410);
    words[4 * w + 3][g] = __byte_perm(high01, high23, 0x7632);
}

extern "C" __global__ void __launch_bounds__(GEMM_TRANSPOSE_THREADS)
gemm_transpose_b8(transpose_args p) {
    constexpr int TILE = GEMM_TRANSPOSE_TILE_B8;
    __shared__ unsigned words[TILE][B8_WORDS + 1];
    const index_t z = blockIdx.z, row0 = (index_t)blockIdx.y * TILE, col0 = (index_t)blockIdx.x * TILE;
    const unsigned char *in = (const unsigned char *)p.in + z * p.in_batch_stride;
    unsigned char *out = (unsigned char *)p.out + z * p.out_batch_stride;
    const bool whole = ((size_t)in | (size_t)p.ld) % 4 == 0 && row0 + TILE <= p.rows &&
                       col0 + TILE <= p.cols;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int w = lane % 8 + 8 * (warp % 4), g0 = lane / 8 + 4 * (warp / 4);
    unsigned r[4];
    if (whole) {
#pragma unroll
        for (int step = 0; step < B8_WORDS / B8_LINES; ++step) {
            const int g = g0 + step * B8_LINES;
#pragma unroll
            for (int j = 0; j < 4; ++j)
                r[j] = *(const unsigned *)(in + (row0 + 4 * g + j) * p.ld + col0 + 4 * w);
            put_transposed(words, w, g, r);
        }
    } else {
#pragma unroll 1
        for (int step = 0; step < B8_WORDS / B8_LINES; ++step) {
            const int g = g0 + step * B8_LINES;
            const bool words_here = ((size_t)in | (size_t)p.ld) % 4 == 0 && col0 + 4 * w + 4 <= p.cols;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const index_t row = row0 + 4 * g + j, col = col0 + 4 * w;
                r[j] = words_here && row < p.rows ? *(const unsigned *)(in + row * p.ld + col)
                                                  : row_word_by_bytes(in, p, row, col);
            }
            put_transposed(words, w, g, r);
        }
    }
    __syncthreads();
    const int g = threadIdx.x % B8_WORDS, c0 = threadIdx.x / B8_WORDS;
#pragma unroll
    for (int step = 0; step < TILE / B8_LINES; ++step) {
        const int c = c0 + step * B8_LINES;
        // out_ld is whole 16 bytes and row0 a multiple of 128, so a word is inside a row or past it.
        if (col0 + c < p.cols && row0 + 4 * g < p.out_ld)
            *(unsigned *)(out + (col0 + c) * p.out_ld + row0 + 4 * g) = words[c][g];
    }
}
