// Tiled GEMM for every gpumatmul_dtype: C[z] = op(A[z]) @ op(B[z]), row-major
// C, any sizes and strides. The launch contract (tile sizes, threads, the
// argument struct) is in gemm_tiled.h, shared with the host code.
//
// Compiled at build time by NVRTC with no CUDA headers and no host code; the
// extern "C" entry points at the bottom, gemm_tiled_<suffix>, are looked up by
// name through the kernel registry (libgpu/src/gemm/tables.c).
//
// Each block computes a GEMM_TILED_M x GEMM_TILED_N tile of one C matrix
// (blockIdx.z picks the matrix), staging GEMM_TILED_K-deep slabs of A and B in
// shared memory, already converted to the accumulator type; each thread
// accumulates a GEMM_TILED_MICRO x GEMM_TILED_MICRO patch in registers.
// Out-of-range elements are loaded as zero so any size works. All index
// arithmetic is 64-bit.

#include "gemm_tiled.h"

typedef long long index_t;

// ---- Element types: storage type S, accumulator type A ----
//
// element<S, A> says how a stored value becomes an accumulator (load), how a
// sum is stored (store) and how a product is added (madd). The default is
// C++'s arithmetic, used by float, double and the unsigned integers; the
// specialisations below cover the rest.

template <typename S, typename A>
struct element {
    static __device__ A load(S x) { return A(x); }
    static __device__ S store(A x) { return S(x); }
    static __device__ void madd(A &sum, A a, A b) { sum += a * b; }
};

// float16 and bfloat16: 16-bit patterns, summed in float32 and rounded once.
struct half_t { unsigned short bits; };
struct bfloat16_t { unsigned short bits; };

template <>
struct element<half_t, float> : element<float, float> {
    static __device__ float load(half_t x) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
        return f;
    }
    static __device__ half_t store(float x) {
        half_t h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(x));  // NaN stays NaN
        return h;
    }
};

template <>
struct element<bfloat16_t, float> : element<float, float> {
    // bfloat16 is the top half of a float32 (cvt to bf16 needs sm_80: shifts
    // work everywhere).
    static __device__ float load(bfloat16_t x) { return __uint_as_float((unsigned)x.bits << 16); }
    static __device__ bfloat16_t store(float x) {
        const unsigned u = __float_as_uint(x);
        bfloat16_t h;
        if ((u & 0x7fffffffu) > 0x7f800000u)
            h.bits = (unsigned short)((u >> 16) | 0x40u);  // NaN: keep it NaN (quiet bit set)
        else  // round to nearest, ties to even; overflows to infinity as it should
            h.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        return h;
    }
};

// complex64 and complex128: (real, imaginary) pairs, summed in their own type.
template <typename T>
struct complex { T re, im; };

template <typename T>
struct element<complex<T>, complex<T>> {
    static __device__ complex<T> load(complex<T> x) { return x; }
    static __device__ complex<T> store(complex<T> x) { return x; }
    static __device__ void madd(complex<T> &sum, complex<T> a, complex<T> b) {
        sum.re += a.re * b.re - a.im * b.im;
        sum.im += a.re * b.im + a.im * b.re;
    }
};

// Integers (S is unsigned; the signed dtypes use the unsigned kernel of their
// width, since wraparound arithmetic gives the same bits) accumulate in
// unsigned int or unsigned long long, which wrap modulo 2^32 or 2^64, a
// multiple of 2^bits: truncating on store gives the sum modulo 2^bits, as
// NumPy does. (8- and 16-bit values would otherwise promote to signed int,
// whose overflow is undefined.) These need no specialisation.

// bool: NumPy's product is the OR of ANDs; stored as bytes 0 or 1.
struct bool_t { unsigned char value; };

template <>
struct element<bool_t, unsigned> {
    static __device__ unsigned load(bool_t x) { return x.value; }
    static __device__ bool_t store(unsigned x) {
        bool_t b = {(unsigned char)(x != 0)};
        return b;
    }
    static __device__ void madd(unsigned &sum, unsigned a, unsigned b) { sum |= (a != 0) & (b != 0); }
};

// ---- The kernel ----

// Copies a ROWS x COLS slab of a strided matrix into shared memory as
// tile[col][row], converted to the accumulator type. Neighbouring threads take
// neighbouring elements along the unit-stride axis, so that they read
// neighbouring addresses whatever the layout; each thread's elements lie
// GEMM_TILED_THREADS / (that axis's length) apart on the other axis. A thread
// issues all of its loads before it stores any: a store waits for its load,
// and a loop of load-store pairs made one trip to memory per element (on an
// H100: 17 us rather than 13 for a 16 x 16 float32 product over the bus, the
// host path's small products; 1.2 ms rather than 0.9 at n = 2048 on the GPU).
template <typename S, typename A, int ROWS, int COLS>
__device__ __forceinline__ void load_slab(A (*tile)[ROWS + 1], const S *src,
                                          index_t row_stride, index_t col_stride,
                                          index_t row0, index_t col0,
                                          index_t rows, index_t cols) {
    constexpr int PER_THREAD = ROWS * COLS / GEMM_TILED_THREADS;
    static_assert(GEMM_TILED_THREADS % ROWS == 0 && GEMM_TILED_THREADS % COLS == 0 &&
                      PER_THREAD * GEMM_TILED_THREADS == ROWS * COLS,
                  "the threads must tile the slab in whole lines");
    const bool rows_contiguous = row_stride == 1;
    const int r = rows_contiguous ? threadIdx.x % ROWS : threadIdx.x / COLS;
    const int c = rows_contiguous ? threadIdx.x / ROWS : threadIdx.x % COLS;
    const int r_step = rows_contiguous ? 0 : GEMM_TILED_THREADS / COLS;
    const int c_step = rows_contiguous ? GEMM_TILED_THREADS / ROWS : 0;
    const index_t gr = row0 + r, gc = col0 + c;
    const S *first = src + gr * row_stride + gc * col_stride;
    const index_t step = r_step * row_stride + c_step * col_stride;
    // Element e is inside the matrix if its fixed coordinate is and
    // e * apart < room, the lines from the first to the matrix's edge.
    const int apart = r_step + c_step;
    const index_t room = rows_contiguous ? (gr < rows ? cols - gc : 0)
                                         : (gc < cols ? rows - gr : 0);
    A value[PER_THREAD];
#pragma unroll
    for (int e = 0; e < PER_THREAD; ++e)
        value[e] = e * apart < room ? element<S, A>::load(first[e * step]) : A();
#pragma unroll
    for (int e = 0; e < PER_THREAD; ++e) tile[c + e * c_step][r + e * r_step] = value[e];
}

template <typename S, typename A>
__device__ void gemm_tiled(const gemm_args &p) {
    // a_tile[kk][i] = A(i, kk) and b_tile[j][kk] = B(kk, j): the inner loop
    // reads both along the tile's M and N axes, spread across banks.
    __shared__ A a_tile[GEMM_TILED_K][GEMM_TILED_M + 1];
    __shared__ A b_tile[GEMM_TILED_N][GEMM_TILED_K + 1];
    static_assert(sizeof a_tile + sizeof b_tile <= 48 * 1024,
                  "static shared memory is limited to 48 KiB per block");

    const index_t z = blockIdx.z;
    const S *a = (const S *)p.a + z * p.a_batch_stride;
    const S *b = (const S *)p.b + z * p.b_batch_stride;
    S *c = (S *)p.c + z * p.c_batch_stride;
    const index_t row0 = (index_t)blockIdx.x * GEMM_TILED_M;
    const index_t col0 = (index_t)blockIdx.y * GEMM_TILED_N;
    const int tx = threadIdx.x % (GEMM_TILED_N / GEMM_TILED_MICRO);
    const int ty = threadIdx.x / (GEMM_TILED_N / GEMM_TILED_MICRO);

    A acc[GEMM_TILED_MICRO][GEMM_TILED_MICRO];
#pragma unroll
    for (int i = 0; i < GEMM_TILED_MICRO; ++i)
#pragma unroll
        for (int j = 0; j < GEMM_TILED_MICRO; ++j) acc[i][j] = A();

    for (index_t k0 = 0; k0 < p.k; k0 += GEMM_TILED_K) {
        // A slab: GEMM_TILED_M rows x GEMM_TILED_K cols; B slab: GEMM_TILED_K x GEMM_TILED_N.
        load_slab<S, A, GEMM_TILED_M, GEMM_TILED_K>(a_tile, a, p.a_row_stride, p.a_col_stride,
                                                    row0, k0, p.m, p.k);
        load_slab<S, A, GEMM_TILED_K, GEMM_TILED_N>(b_tile, b, p.b_row_stride, p.b_col_stride,
                                                    k0, col0, p.k, p.n);
        __syncthreads();
        // Unrolled by 2: by 4 was 3-5% faster at n = 2048 on an H100 (float32,
        // float16, int32; as fast for float64, slower for complex64), and made
        // the cu12 wheel, with 11 kernels for each of 19 architectures, 150 KiB
        // larger, past the 2 MB it must stay under.
#pragma unroll 2
        for (int kk = 0; kk < GEMM_TILED_K; ++kk) {
            A a_frag[GEMM_TILED_MICRO], b_frag[GEMM_TILED_MICRO];
#pragma unroll
            for (int i = 0; i < GEMM_TILED_MICRO; ++i)
                a_frag[i] = a_tile[kk][ty + i * (GEMM_TILED_M / GEMM_TILED_MICRO)];
#pragma unroll
            for (int j = 0; j < GEMM_TILED_MICRO; ++j)
                b_frag[j] = b_tile[tx + j * (GEMM_TILED_N / GEMM_TILED_MICRO)][kk];
#pragma unroll
            for (int i = 0; i < GEMM_TILED_MICRO; ++i)
#pragma unroll
                for (int j = 0; j < GEMM_TILED_MICRO; ++j)
                    element<S, A>::madd(acc[i][j], a_frag[i], b_frag[j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < GEMM_TILED_MICRO; ++i) {
        const index_t r = row0 + ty + i * (GEMM_TILED_M / GEMM_TILED_MICRO);
#pragma unroll
        for (int j = 0; j < GEMM_TILED_MICRO; ++j) {
            const index_t col = col0 + tx + j * (GEMM_TILED_N / GEMM_TILED_MICRO);
            if (r < p.m && col < p.n) c[r * p.ldc + col] = element<S, A>::store(acc[i][j]);
        }
    }
}

// One entry point per storage type; the suffixes are the kernel column of the
// dtype table (libgpu/src/gemm/tables.c).
#define DEFINE_GEMM_TILED(SUFFIX, S, A)                                              \
    extern "C" __global__ void __launch_bounds__(GEMM_TILED_THREADS)               \
    gemm_tiled_##SUFFIX(gemm_args args) { gemm_tiled<S, A>(args); }

DEFINE_GEMM_TILED(f32, float, float)
DEFINE_GEMM_TILED(f64, double, double)
DEFINE_GEMM_TILED(f16, half_t, float)
DEFINE_GEMM_TILED(bf16, bfloat16_t, float)
DEFINE_GEMM_TILED(c64, complex<float>, complex<float>)
DEFINE_GEMM_TILED(c128, complex<double>, complex<double>)
DEFINE_GEMM_TILED(u8, unsigned char, unsigned)
DEFINE_GEMM_TILED(u16, unsigned short, unsigned)
DEFINE_GEMM_TILED(u32, unsigned, unsigned)
DEFINE_GEMM_TILED(u64, unsigned long long, unsigned long long)
DEFINE_GEMM_TILED(bool, bool_t, unsigned)
