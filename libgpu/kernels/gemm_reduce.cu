// The second step of a GEMM whose k was cut into pieces computed side by side
// (libgpu/src/gemm/split_k.c): sums the pieces' partial products into C, in a fixed
// order. The launch contract is in gemm_reduce.h. Each thread reads 16 bytes
// of each piece (whose rows are padded to a multiple of 16 bytes) and writes
// their sum to C: 8 us for the four 4 MiB pieces of a 1024-cube on an H100,
// beside the GEMM's 59 (docs/kernel-log.md, step 6).

#include "gemm_common.cuh"
#include "gemm_reduce.h"

template <typename T>
struct __align__(GEMM_REDUCE_BYTES) unit_of {
    T x[GEMM_REDUCE_BYTES / sizeof(T)];
};

template <typename T>
__device__ void gemm_reduce(const reduce_args &p) {
    constexpr int VEC = GEMM_REDUCE_BYTES / sizeof(T);
    const index_t col = ((index_t)blockIdx.x * GEMM_REDUCE_THREADS + threadIdx.x) * VEC;
    if (col >= p.n) return;
    const index_t r = blockIdx.y, z = blockIdx.z;
    const index_t piece = p.m * p.ld;
    const T *partial = (const T *)p.partials + z * p.splits * piece + r * p.ld + col;
    // Element by element: C may be unaligned, and its rows need not be padded.
    T *c = (T *)p.c + z * p.c_batch_stride + r * p.ldc + col;
    if (col + VEC > p.n) {
        // The row's last elements, one by one: the pieces' padding past n was never written.
        for (int e = 0; col + e < p.n; ++e) {
            T sum = partial[e];
            for (index_t s = 1; s < p.splits; ++s) sum += partial[s * piece + e];
            c[e] = sum;
        }
        return;
    }
    unit_of<T> sum = *(const unit_of<T> *)partial;
    for (index_t s = 1; s < p.splits; ++s) {
        const unit_of<T> next = *(const unit_of<T> *)(partial + s * piece);
#pragma unroll
        for (int e = 0; e < VEC; ++e) sum.x[e] += next.x[e];
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e) c[e] = sum.x[e];
}

extern "C" __global__ void __launch_bounds__(GEMM_REDUCE_THREADS)
gemm_reduce_f32(reduce_args args) {
    gemm_reduce<float>(args);
}
