/* The entry points for operands in device memory: checked, then one GPU's
 * product on the caller's stream. */
#include "api/api.h"

static int nothing_to_do(const struct gemm *g) { return g->m == 0 || g->n == 0 || g->batch == 0; }

gpumatmul_status gpumatmul_matmul_strided_batched_device(
    gpumatmul_context *ctx, gpumatmul_backend backend, gpumatmul_dtype dtype,
    gpumatmul_precision precision, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    int64_t batch_count, const void *a, int64_t lda, int64_t stride_a, const void *b,
    int64_t ldb, int64_t stride_b, void *c, int64_t ldc, int64_t stride_c, void *stream) {
    const gpumatmul_gemm_desc desc = {backend, dtype, precision, trans_a, trans_b, m, n, k,
                                      batch_count, lda, stride_a, ldb, stride_b, ldc, stride_c};
    return gpumatmul_gemm_device(ctx, &desc, a, b, c, stream);
}

gpumatmul_status gpumatmul_gemm_device(gpumatmul_context *ctx, const gpumatmul_gemm_desc *desc,
                                       const void *a, const void *b, void *c, void *stream) {
    struct gemm g;
    int entered;
    gpumatmul_status status = prepare(&g, ctx, desc, a, b, c, 0);
    if (status || nothing_to_do(&g)) return status;
    if ((status = enter_context(ctx, &entered))) return status;
    status = multiply(ctx, NULL, &g, (cudaStream_t)stream);
    return leave_context(ctx, entered, status);
}

gpumatmul_status gpumatmul_gemm_device_new(gpumatmul_context *ctx, const gpumatmul_gemm_desc *desc,
                                           const void *a, const void *b, void *stream,
                                           void **c) {
    struct gemm g;
    int entered;
    gpumatmul_status status;
    if (!c) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "c is NULL");
    *c = NULL;
    if ((status = prepare(&g, ctx, desc, a, b, NULL, 1)) || g.c_bytes == 0) return status;
    if ((status = enter_context(ctx, &entered))) return status;
    status = check_cuda(pool_alloc(ctx, (size_t)g.c_bytes, (cudaStream_t)stream, c),
                        "cudaMallocFromPoolAsync");
    if (status == GPUMATMUL_SUCCESS) {
        g.c = *c;
        status = multiply(ctx, NULL, &g, (cudaStream_t)stream);
        if (status) cudaFreeAsync(*c, (cudaStream_t)stream); /* the failure to report is status */
    }
    if (status) *c = NULL;
    return leave_context(ctx, entered, status);
}

/* ---- The first ABI: one product at the highest precision ---- */

gpumatmul_status gpumatmul_matmul_device(gpumatmul_context *ctx, gpumatmul_backend backend,
                                         gpumatmul_dtype dtype, int trans_a, int trans_b,
                                         int64_t m, int64_t n, int64_t k, const void *a,
                                         int64_t lda, const void *b, int64_t ldb, void *c,
                                         int64_t ldc, void *stream) {
    return gpumatmul_matmul_strided_batched_device(ctx, backend, dtype,
                                                   GPUMATMUL_PRECISION_HIGHEST, trans_a, trans_b,
                                                   m, n, k, 1, a, lda, 0, b, ldb, 0, c, ldc, 0,
                                                   stream);
}
