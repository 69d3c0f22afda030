/* Copies with casts on the GPU (convert.cu): the gathers of operands whose
 * strides the products cannot read, the casts to a product's dtype, and the moves
 * of results into outputs of any dtype and strides.
 *
 * The arrays' axes are first reduced as NumPy's iterator reduces them: axes of
 * length 1 dropped, the rest ordered by the destination's strides (its writes
 * then come together), neighbours merged where both arrays step through them
 * contiguously. A launch takes up to CONVERT_DIMS axes and 2^31 - 1 elements
 * (the kernel's 32-bit index arithmetic); larger arrays take several, over their
 * outer axes. */
#include <stdint.h>
#include <stdlib.h>

#include "convert.h"
#include "gemm/gemm.h"

/* The kernel numbers dtypes as gpumatmul.h does. */
#define SAME(dtype) ((int)CONVERT_##dtype == (int)GPUMATMUL_##dtype)
typedef char convert_dtypes_are_gpumatmul_dtypes
    [SAME(FLOAT32) && SAME(FLOAT64) && SAME(FLOAT16) && SAME(BFLOAT16) && SAME(COMPLEX64) &&
             SAME(COMPLEX128) && SAME(INT8) && SAME(INT16) && SAME(INT32) && SAME(INT64) &&
             SAME(UINT8) && SAME(UINT16) && SAME(UINT32) && SAME(UINT64) && SAME(BOOL) &&
             SAME(FLOAT8_E4M3FN) && SAME(FLOAT8_E5M2)
         ? 1
         : -1];
#undef SAME

static const int64_t launch_elements = INT32_MAX; /* below 2^31: the kernel's indices */

/* Both arrays' axes, outermost first. */
struct axes {
    int ndim;
    int64_t shape[GPUMATMUL_MAX_DIMS];
    int64_t src[GPUMATMUL_MAX_DIMS], dst[GPUMATMUL_MAX_DIMS];
};

static int64_t magnitude(int64_t x) { return x < 0 ? -x : x; }

/* The axes of a copy from src to dst (of one shape): see the file's comment. */
static void reduce_axes(const gpumatmul_array_desc *dst, const gpumatmul_array_desc *src,
                        struct axes *a) {
    int d, i;
    a->ndim = 0;
    for (d = 0; d < dst->ndim; ++d) {
        if (dst->shape[d] == 1) continue;
        /* Insertion by the destination's stride, largest first (stable). */
        for (i = a->ndim; i > 0 && magnitude(a->dst[i - 1]) < magnitude(dst->strides[d]); --i) {
            a->shape[i] = a->shape[i - 1], a->src[i] = a->src[i - 1], a->dst[i] = a->dst[i - 1];
        }
        a->shape[i] = dst->shape[d], a->src[i] = src->strides[d], a->dst[i] = dst->strides[d];
        ++a->ndim;
    }
    for (d = a->ndim - 2; d >= 0; --d) {
        if (a->src[d] != a->src[d + 1] * a->shape[d + 1] ||
            a->dst[d] != a->dst[d + 1] * a->shape[d + 1])
            continue;
        a->shape[d] *= a->shape[d + 1], a->src[d] = a->src[d + 1], a->dst[d] = a->dst[d + 1];
        for (i = d + 1; i + 1 < a->ndim; ++i)
            a->shape[i] = a->shape[i + 1], a->src[i] = a->src[i + 1], a->dst[i] = a->dst[i + 1];
        --a->ndim;
    }
}

/* What the kernel multiplies by to divide by d (convert.h: convert_divisor). */
static struct convert_divisor divisor(unsigned d) {
    struct convert_divisor by = {0, 0};
    unsigned log2_up = 0;
    if (d == 1) return by;
    while ((1u << log2_up) < d) ++log2_up;
    by.multiplier = (unsigned)((((uint64_t)1 << (31 + log2_up)) + d - 1) / d);
    by.shift = log2_up - 1;
    return by;
}

struct copy {
    gpumatmul_context *ctx;
    int src_dtype, dst_dtype;
    cudaStream_t stream;
};

/* One launch for axes [first, ndim) of `a` (at most CONVERT_DIMS of them, fewer
 * than launch_elements elements in all). */
static gpumatmul_status launch(const struct copy *c, const struct axes *a, int first,
                               const char *src, char *dst, int64_t count) {
    struct convert_args args = {.src = src, .dst = dst};
    void *params[] = {&args};
    int d;
    args.ndim = a->ndim - first, args.count = (unsigned)count;
    args.src_dtype = c->src_dtype, args.dst_dtype = c->dst_dtype;
    for (d = 0; d < args.ndim; ++d) {
        args.shape[d] = (unsigned)a->shape[first + d];
        args.divisors[d] = divisor(args.shape[d]);
        args.src_strides[d] = a->src[first + d], args.dst_strides[d] = a->dst[first + d];
    }
    return check_driver(&c->ctx->driver,
                        c->ctx->driver.launch_kernel(
                            c->ctx->kernels->convert,
                            (unsigned)ceil_div(count, CONVERT_THREADS), 1, 1, CONVERT_THREADS, 1,
                            1, 0, (CUstream)c->stream, params, NULL),
                        "cuLaunchKernel (convert)");
}

/* Axes [first, ndim) of `a` from src to dst: one launch if they fit one, else
 * launches over chunks of the outer axis, or over each of its indices. */
static gpumatmul_status copy_axes(const struct copy *c, const struct axes *a, int first,
                                  const char *src, char *dst) {
    int64_t inner = 1, i, step;
    int d;
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    for (d = first + 1; d < a->ndim; ++d) inner *= a->shape[d];
    if (a->ndim - first <= CONVERT_DIMS && inner <= launch_elements / a->shape[first])
        return launch(c, a, first, src, dst, inner * a->shape[first]);
    if (a->ndim - first <= CONVERT_DIMS && inner <= launch_elements) {
        /* Chunks of the outer axis, each a launch of at most launch_elements. */
        struct axes chunk = *a;
        step = launch_elements / inner;
        for (i = 0; i < a->shape[first] && !status; i += step) {
            chunk.shape[first] = min64(step, a->shape[first] - i);
            status = launch(c, &chunk, first, src + i * a->src[first], dst + i * a->dst[first],
                            chunk.shape[first] * inner);
        }
        return status;
    }
    for (i = 0; i < a->shape[first] && !status; ++i)
        status = copy_axes(c, a, first + 1, src + i * a->src[first], dst + i * a->dst[first]);
    return status;
}

gpumatmul_status convert_array(gpumatmul_context *ctx, const gpumatmul_array_desc *dst,
                               void *dst_data, const gpumatmul_array_desc *src,
                               const void *src_data, cudaStream_t stream) {
    const struct copy c = {ctx, src->dtype, dst->dtype, stream};
    const int64_t size = (int64_t)dtype_infos[dst->dtype].size;
    struct axes a;
    reduce_axes(dst, src, &a);
    /* One element, or one run of them with nothing to convert: the copy engines. */
    if (src->dtype == dst->dtype && (a.ndim == 0 || (a.ndim == 1 && a.src[0] == size &&
                                                      a.dst[0] == size)))
        return check_cuda(cudaMemcpyAsync(dst_data, src_data,
                                          (size_t)(size * (a.ndim ? a.shape[0] : 1)),
                                          cudaMemcpyDeviceToDevice, stream),
                          "cudaMemcpyAsync");
    if (a.ndim == 0) { /* one element to convert: a launch of one axis of one */
        a.ndim = 1, a.shape[0] = 1, a.src[0] = a.dst[0] = 0;
    }
    return copy_axes(&c, &a, 0, src_data, dst_data);
}
