/* Creating and destroying a context: the core's context (core/context.c), the
 * kernels of the gemm layer (gemm/images.c), and on destroying, the host path's
 * staging its workers made (host/pipeline.c). */
#include "api/api.h"

gpumatmul_status gpumatmul_create(gpumatmul_context **context, int device) {
    gpumatmul_context *ctx;
    gpumatmul_status status;
    int previous;
    if (!context) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context is NULL");
    *context = NULL;
    if ((status = context_open(device, &ctx))) return status;
    if ((status = enter_device(device, &previous)) == GPUMATMUL_SUCCESS)
        status = kernels_load(ctx);
    status = leave_device(previous, status);
    if (status) {
        gpumatmul_destroy(ctx);
        return status;
    }
    *context = ctx;
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status gpumatmul_destroy(gpumatmul_context *ctx) {
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    int previous;
    if (!ctx) return GPUMATMUL_SUCCESS;
    /* Even if the switch fails, release and free what can be. */
    keep_first(&status, enter_device(ctx->device, &previous));
    /* No call is in flight (the contract), so every worker is idle. */
    keep_first(&status, host_release(ctx));
    keep_first(&status, kernels_unload(ctx));
    keep_first(&status, leave_device(previous, GPUMATMUL_SUCCESS));
    keep_first(&status, context_close(ctx));
    return status;
}
