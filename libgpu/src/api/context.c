/* Creating and destroying a context: the core's context (core/context.c), the
 * kernels of the gemm layer (gemm/images.c), and on destroying, the host path's
 * staging its workers made (host/pipeline.c). */
#include "api/api.h"

/* gpumatmul_create and gpumatmul_create_in_context: see context_open. */
static gpumatmul_status create(gpumatmul_context **context, int device, CUcontext cuda_context) {
    gpumatmul_context *ctx;
    gpumatmul_status status;
    int entered;
    if (!context) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context is NULL");
    *context = NULL;
    if ((status = context_open(device, cuda_context, &ctx))) return status;
    if ((status = enter_context(ctx, &entered)) == GPUMATMUL_SUCCESS) status = kernels_load(ctx);
    status = leave_context(ctx, entered, status);
    if (status) {
        gpumatmul_destroy(ctx);
        return status;
    }
    *context = ctx;
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status gpumatmul_create(gpumatmul_context **context, int device) {
    return create(context, device, NULL);
}

gpumatmul_status gpumatmul_create_in_context(gpumatmul_context **context, void *cuda_context) {
    if (!cuda_context) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "cuda_context is NULL");
    return create(context, -1, (CUcontext)cuda_context);
}

gpumatmul_status gpumatmul_destroy(gpumatmul_context *ctx) {
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    int entered;
    if (!ctx) return GPUMATMUL_SUCCESS;
    /* Even if entering fails, release and free what can be. */
    keep_first(&status, enter_context(ctx, &entered));
    /* No call is in flight (the contract), so every worker is idle. */
    keep_first(&status, host_release(ctx));
    keep_first(&status, kernels_unload(ctx));
    keep_first(&status, leave_context(ctx, entered, GPUMATMUL_SUCCESS));
    keep_first(&status, context_close(ctx));
    return status;
}
