/* The entry points for operands in host memory: checked, then streamed through
 * one GPU or shared among several (host/share.c), or for a C of another dtype
 * than A and B (FP8's float32) run whole on the first GPU (host/whole.c). */
#include <stddef.h>

#include "api/api.h"

gpumatmul_status gpumatmul_gemm_host_multi(gpumatmul_context *const *contexts, int count,
                                           const gpumatmul_gemm_desc *desc, const void *a,
                                           const void *b, void *c,
                                           const gpumatmul_host_options *options) {
    struct gemm g;
    size_t limit = 0;
    int d, e;
    gpumatmul_status status;
    if (count < 1 || count > HOST_MAX_DEVICES)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "count is %d: give 1 to %d contexts, one for each GPU", count,
                         HOST_MAX_DEVICES);
    if (!contexts)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "contexts is NULL: pass an array of count contexts");
    if (options && options->struct_size < sizeof options->struct_size)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "options->struct_size is %zu: set it to sizeof(gpumatmul_host_options)",
                         options->struct_size);
    /* A field past what the caller's struct has keeps its default. */
    if (options && options->struct_size >= offsetof(gpumatmul_host_options, device_memory_limit) +
                                                sizeof options->device_memory_limit)
        limit = options->device_memory_limit;
    /* prepare checks the first context last, after the problem. */
    if ((status = prepare(&g, contexts[0], desc, a, b, c, 0))) return status;
    for (d = 1; d < count; ++d) {
        if (!contexts[d])
            return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "contexts[%d] is NULL", d);
        for (e = 0; e < d; ++e)
            if (contexts[e]->device == contexts[d]->device)
                return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                                 "contexts[%d] and contexts[%d] are both on device %d: give each "
                                 "GPU once", e, d, contexts[d]->device);
    }
    /* FP8 into float32: whole on the first GPU, where its FP8 tensor cores are. */
    if (WRITES_OTHER_DTYPE(g.dtype)) return host_gemm_whole(contexts[0], &g);
    return host_gemm(contexts, count, &g, limit);
}

gpumatmul_status gpumatmul_gemm_host(gpumatmul_context *ctx, const gpumatmul_gemm_desc *desc,
                                     const void *a, const void *b, void *c) {
    return gpumatmul_gemm_host_multi(&ctx, 1, desc, a, b, c, NULL);
}

gpumatmul_status gpumatmul_matmul_strided_batched_host(
    gpumatmul_context *ctx, gpumatmul_backend backend, gpumatmul_dtype dtype,
    gpumatmul_precision precision, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    int64_t batch_count, const void *a, int64_t lda, int64_t stride_a, const void *b,
    int64_t ldb, int64_t stride_b, void *c, int64_t ldc, int64_t stride_c) {
    const gpumatmul_gemm_desc desc = {backend, dtype, precision, trans_a, trans_b, m, n, k,
                                      batch_count, lda, stride_a, ldb, stride_b, ldc, stride_c};
    return gpumatmul_gemm_host(ctx, &desc, a, b, c);
}

/* ---- The first ABI: one product at the highest precision ---- */

gpumatmul_status gpumatmul_matmul_host(gpumatmul_context *ctx, gpumatmul_backend backend,
                                       gpumatmul_dtype dtype, int trans_a, int trans_b,
                                       int64_t m, int64_t n, int64_t k, const void *a,
                                       int64_t lda, const void *b, int64_t ldb, void *c,
                                       int64_t ldc) {
    return gpumatmul_matmul_strided_batched_host(ctx, backend, dtype,
                                                 GPUMATMUL_PRECISION_HIGHEST, trans_a, trans_b,
                                                 m, n, k, 1, a, lda, 0, b, ldb, 0, c, ldc, 0);
}
