/* Device memory for callers, from the context's stream-ordered pool. */
#include "internal.h"

gpumatmul_status gpumatmul_device_alloc(gpumatmul_context *ctx, size_t bytes, void *stream,
                                        void **pointer) {
    int previous;
    gpumatmul_status status;
    if (!ctx || !pointer)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context or pointer is NULL");
    *pointer = NULL;
    if (bytes == 0) return GPUMATMUL_SUCCESS;
    /* The legacy stream (NULL) is the current device's: so switch first. */
    if ((status = enter_device(ctx->device, &previous))) return status;
    status = check_cuda(cudaMallocFromPoolAsync(pointer, bytes, ctx->pool, (cudaStream_t)stream),
                        "cudaMallocFromPoolAsync");
    if (status) *pointer = NULL;
    return leave_device(previous, status);
}

gpumatmul_status gpumatmul_device_free(gpumatmul_context *ctx, void *pointer, void *stream) {
    int previous;
    gpumatmul_status status;
    if (!ctx) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context is NULL");
    if (!pointer) return GPUMATMUL_SUCCESS;
    if ((status = enter_device(ctx->device, &previous))) return status;
    status = check_cuda(cudaFreeAsync(pointer, (cudaStream_t)stream), "cudaFreeAsync");
    return leave_device(previous, status);
}
