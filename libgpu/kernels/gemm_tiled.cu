// Tiled GEMM: C = op(A) @ op(B), row-major C, any sizes and strides.
//
// Compiled at build time by NVRTC (no CUDA headers, no host code); the
// extern "C" entry points at the bottom are looked up by name from
// libgpu/src/gemm.c. Launch with TILED_THREADS threads per block and a grid
// of (ceil(m / TILE_M), ceil(n / TILE_N)) blocks.
//
// Each block computes a TILE_M x TILE_N tile of C, staging TILE_K-deep slabs
// of A and B in shared memory; each thread accumulates a MICRO x MICRO patch
// in registers. Out-of-range elements are loaded as zero so any size works.

#define TILE_M 64
#define TILE_N 64
#define TILE_K 16
#define MICRO 4
#define TILED_THREADS ((TILE_M / MICRO) * (TILE_N / MICRO))

typedef long long index_t;

// Copies a rows x cols slab of a strided matrix into shared memory as
// tile[col][row]. The walk order follows the unit-stride axis, so that
// neighbouring threads read neighbouring addresses whatever the layout.
template <typename T, int ROWS, int COLS>
__device__ __forceinline__ void load_slab(T (*tile)[ROWS + 1], const T *src,
                                          index_t row_stride, index_t col_stride,
                                          index_t row0, index_t col0,
                                          index_t rows, index_t cols) {
    const bool rows_contiguous = row_stride == 1;
    for (int i = threadIdx.x; i < ROWS * COLS; i += TILED_THREADS) {
        const int r = rows_contiguous ? i % ROWS : i / COLS;
        const int c = rows_contiguous ? i / ROWS : i % COLS;
        const index_t gr = row0 + r, gc = col0 + c;
        tile[c][r] = (gr < rows && gc < cols) ? src[gr * row_stride + gc * col_stride] : T(0);
    }
}

template <typename T>
__device__ void gemm_tiled(index_t m, index_t n, index_t k,
                           const T *a, index_t a_row_stride, index_t a_col_stride,
                           const T *b, index_t b_row_stride, index_t b_col_stride,
                           T *c, index_t ldc) {
    // a_tile[kk][i] = A(i, kk) and b_tile[j][kk] = B(kk, j): the inner loop
    // reads both along the tile's M and N axes, spread across banks.
    __shared__ T a_tile[TILE_K][TILE_M + 1];
    __shared__ T b_tile[TILE_N][TILE_K + 1];

    const index_t row0 = (index_t)blockIdx.x * TILE_M;
    const index_t col0 = (index_t)blockIdx.y * TILE_N;
    const int tx = threadIdx.x % (TILE_N / MICRO);
    const int ty = threadIdx.x / (TILE_N / MICRO);

    T acc[MICRO][MICRO];
#pragma unroll
    for (int i = 0; i < MICRO; ++i)
#pragma unroll
        for (int j = 0; j < MICRO; ++j) acc[i][j] = T(0);

    for (index_t k0 = 0; k0 < k; k0 += TILE_K) {
        // A slab: TILE_M rows x TILE_K cols, stored transposed as a_tile[col][row].
        load_slab<T, TILE_M, TILE_K>(a_tile, a, a_row_stride, a_col_stride, row0, k0, m, k);
        // B slab: TILE_K rows x TILE_N cols, stored transposed as b_tile[col][row].
        load_slab<T, TILE_K, TILE_N>(b_tile, b, b_row_stride, b_col_stride, k0, col0, k, n);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE_K; ++kk) {
            T a_frag[MICRO], b_frag[MICRO];
#pragma unroll
            for (int i = 0; i < MICRO; ++i) a_frag[i] = a_tile[kk][ty + i * (TILE_M / MICRO)];
#pragma unroll
            for (int j = 0; j < MICRO; ++j) b_frag[j] = b_tile[tx + j * (TILE_N / MICRO)][kk];
#pragma unroll
            for (int i = 0; i < MICRO; ++i)
#pragma unroll
                for (int j = 0; j < MICRO; ++j) acc[i][j] += a_frag[i] * b_frag[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < MICRO; ++i) {
        const index_t r = row0 + ty + i * (TILE_M / MICRO);
#pragma unroll
        for (int j = 0; j < MICRO; ++j) {
            const index_t col = col0 + tx + j * (TILE_N / MICRO);
            if (r < m && col < n) c[r * ldc + col] = acc[i][j];
        }
    }
}

#define DEFINE_GEMM_TILED(NAME, T)                                                     \
    extern "C" __global__ void __launch_bounds__(TILED_THREADS)                      \
    NAME(index_t m, index_t n, index_t k, const T *a, index_t a_row_stride,           \
         index_t a_col_stride, const T *b, index_t b_row_stride, index_t b_col_stride, \
         T *c, index_t ldc) {                                                          \
        gemm_tiled<T>(m, n, k, a, a_row_stride, a_col_stride, b, b_row_stride,        \
                      b_col_stride, c, ldc);                                           \
    }

DEFINE_GEMM_TILED(gemm_tiled_f32, float)
DEFINE_GEMM_TILED(gemm_tiled_f64, double)
