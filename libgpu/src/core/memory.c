/* Device memory from the context's stream-ordered pool: for callers, and the
 * workspaces of the library's own products. */
#include <stdio.h>

#include "core/core.h"

cudaError_t pool_alloc(gpumatmul_context *ctx, size_t bytes, cudaStream_t stream, void **pointer) {
    const cudaError_t error = cudaMallocFromPoolAsync(pointer, bytes, ctx->pool, stream);
    if (error == cudaSuccess) return error;
    /* The error is returned here; left as the thread's last error, it would be
     * reported again by the next launch check, as that launch's. (A sticky error
     * stays whatever is done: cudaGetLastError cannot clear it.) */
    cudaGetLastError();
    if (error == cudaErrorMemoryAllocation)
        /* The pool keeps what it mapped while trying (it keeps everything: core.h),
         * so a request for more than the GPU has would go on holding the whole GPU,
         * from other processes too: give back what no allocation uses. */
        cudaMemPoolTrimTo(ctx->pool, 0);
    return error;
}

gpumatmul_status gpumatmul_device_alloc(gpumatmul_context *ctx, size_t bytes, void *stream,
                                        void **pointer) {
    int entered;
    gpumatmul_status status;
    if (!ctx || !pointer)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context or pointer is NULL");
    *pointer = NULL;
    if (bytes == 0) return GPUMATMUL_SUCCESS;
    /* The legacy stream (NULL) is the current device's: so switch first. */
    if ((status = enter_context(ctx, &entered))) return status;
    status = check_cuda(pool_alloc(ctx, bytes, (cudaStream_t)stream, pointer),
                        "cudaMallocFromPoolAsync");
    if (status) *pointer = NULL;
    return leave_context(ctx, entered, status);
}

gpumatmul_status gpumatmul_device_free(gpumatmul_context *ctx, void *pointer, void *stream) {
    int entered;
    gpumatmul_status status;
    if (!ctx) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context is NULL");
    if (!pointer) return GPUMATMUL_SUCCESS;
    if ((status = enter_context(ctx, &entered))) return status;
    status = check_cuda(cudaFreeAsync(pointer, (cudaStream_t)stream), "cudaFreeAsync");
    return leave_context(ctx, entered, status);
}

gpumatmul_status workspace_alloc(gpumatmul_context *ctx, size_t bytes, cudaStream_t stream,
                                 const char *purpose, void **workspace) {
    char what[96];
    const cudaError_t error = pool_alloc(ctx, bytes, stream, workspace);
    if (error == cudaSuccess) return GPUMATMUL_SUCCESS;
    snprintf(what, sizeof what, "cudaMallocFromPoolAsync (%s)", purpose);
    return check_cuda(error, what);
}

gpumatmul_status workspace_free(void *workspace, cudaStream_t stream, gpumatmul_status status) {
    /* Also after a failure: the free waits, in the stream, for what was queued. */
    const gpumatmul_status freed =
        workspace ? check_cuda(cudaFreeAsync(workspace, stream), "cudaFreeAsync (workspace)")
                  : GPUMATMUL_SUCCESS;
    return status ? status : freed;
}
