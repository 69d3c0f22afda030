// Expands complex B into the real matrix that turns a complex product into one
// real product (libgpu/src/gemm/complex_real.c): a complex A seen as reals
// (re, im interleaved) times E is C seen as reals, so complex64 and complex128
// products run on the float32 and float64 kernels, at their rates. The launch
// contract, and E, are in complex_expand.h. E is written transposed (E^T,
// contiguous along k): the layout every real kernel reads, TF32 wgmma's too.
//
// Each block reads a square of B as stored, rows of consecutive addresses,
// into shared memory (padded by one element: the transposed reads then hit
// distinct banks), and writes each element's two images into E^T's rows, of
// consecutive addresses: read along a column of the square where B's rows are
// k (a transpose), along a row where B is stored transposed (n x k). One
// instance per complex dtype, its loops not unrolled: the kernel moves memory,
// and its code is in every image of the wheel.

#include "gemm_common.cuh"
#include "complex_expand.h"

namespace {

// A complex element as its parts: B's are aligned to a part only (as the
// library's contract allows); the tile's and the workspace's to the whole
// element, for one access each.
template <typename T>
struct parts {
    T re, im;
};
template <typename T>
struct __align__(2 * sizeof(T)) whole_parts {
    T re, im;
};

template <typename T>
__device__ __forceinline__ void complex_expand(const complex_expand_args &p) {
    constexpr int TILE = COMPLEX_EXPAND_TILE;
    __shared__ whole_parts<T> tile[TILE][TILE + 1];
    const index_t z = blockIdx.z, row0 = (index_t)blockIdx.y * TILE,
                  col0 = (index_t)blockIdx.x * TILE;
    const parts<T> *in = (const parts<T> *)p.in + z * p.in_batch_stride;
    whole_parts<T> *out = (whole_parts<T> *)p.out + z * p.out_batch_stride;
#pragma unroll 1
    for (int r = threadIdx.y; r < TILE; r += COMPLEX_EXPAND_ROWS)
        if (row0 + r < p.rows && col0 + threadIdx.x < p.cols) {
            const parts<T> b = in[(row0 + r) * p.ld + col0 + threadIdx.x];
            tile[r][threadIdx.x] = whole_parts<T>{b.re, b.im};
        }
    __syncthreads();
    // E^T's row pairs q are B's columns where B's rows are k, else B's rows.
    const index_t q0 = p.k_rows ? col0 : row0, k0 = p.k_rows ? row0 : col0;
    const index_t n = p.k_rows ? p.cols : p.rows, k = p.k_rows ? p.rows : p.cols;
#pragma unroll 1
    for (int c = threadIdx.y; c < TILE; c += COMPLEX_EXPAND_ROWS) {
        const index_t q = q0 + c, kk = k0 + threadIdx.x;
        if (q >= n || kk >= k) continue;
        const whole_parts<T> b = p.k_rows ? tile[threadIdx.x][c] : tile[c][threadIdx.x];
        out[2 * q * p.out_ld + kk] = whole_parts<T>{b.re, -b.im};
        out[(2 * q + 1) * p.out_ld + kk] = whole_parts<T>{b.im, b.re};
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(COMPLEX_EXPAND_TILE * COMPLEX_EXPAND_ROWS)
complex_expand_c64(complex_expand_args args) {
    complex_expand<float>(args);
}

extern "C" __global__ void __launch_bounds__(COMPLEX_EXPAND_TILE * COMPLEX_EXPAND_ROWS)
complex_expand_c128(complex_expand_args args) {
    complex_expand<double>(args);
}
