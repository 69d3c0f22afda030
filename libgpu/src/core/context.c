/* Contexts: a device, its driver entry points, its memory pool and a pool of
 * workers (a cuBLAS handle and a stream each) for the calls in flight. The
 * kernels are the gemm layer's (gemm/images.c), loaded into the context by
 * gpumatmul_create. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static gpumatmul_status get_entry_point(const char *symbol, void **function) {
    enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 13000
    /* The unversioned query is deprecated in CUDA 13; these symbols have kept
     * their 13.0 ABI. */
    cudaError_t error = cudaGetDriverEntryPointByVersion(symbol, function, 13000,
                                                         cudaEnableDefault, &found);
#else
    /* ...ByVersion appeared in 12.5; this query works with every 12.x runtime. */
    cudaError_t error = cudaGetDriverEntryPoint(symbol, function, cudaEnableDefault, &found);
#endif
    gpumatmul_status status = check_cuda(error, "cudaGetDriverEntryPoint");
    if (status == GPUMATMUL_SUCCESS && (found != cudaDriverEntryPointSuccess || !*function))
        return set_error(GPUMATMUL_ERROR_NO_DRIVER,
                         "the NVIDIA driver does not provide %s; update the driver", symbol);
    return status;
}

static gpumatmul_status load_driver_api(struct driver_api *driver) {
    gpumatmul_status status;
    if ((status = get_entry_point("cuGetErrorName", (void **)&driver->get_error_name)) ||
        (status = get_entry_point("cuModuleLoadData", (void **)&driver->module_load_data)) ||
        (status = get_entry_point("cuModuleUnload", (void **)&driver->module_unload)) ||
        (status = get_entry_point("cuModuleGetFunction", (void **)&driver->module_get_function)) ||
        (status = get_entry_point("cuFuncSetAttribute", (void **)&driver->func_set_attribute)) ||
        (status = get_entry_point("cuLaunchKernel", (void **)&driver->launch_kernel)) ||
        (status = get_entry_point("cuTensorMapEncodeTiled",
                                  (void **)&driver->tensor_map_encode_tiled)) ||
        (status = get_entry_point("cuPointerGetAttributes",
                                  (void **)&driver->pointer_get_attributes)) ||
        (status = get_entry_point("cuCtxGetCurrent", (void **)&driver->ctx_get_current)) ||
        (status = get_entry_point("cuCtxPushCurrent", (void **)&driver->ctx_push_current)) ||
        (status = get_entry_point("cuCtxPopCurrent", (void **)&driver->ctx_pop_current)) ||
        (status = get_entry_point("cuDeviceGet", (void **)&driver->device_get)) ||
        (status = get_entry_point("cuDevicePrimaryCtxRetain",
                                  (void **)&driver->primary_ctx_retain)) ||
        (status = get_entry_point("cuDevicePrimaryCtxRelease",
                                  (void **)&driver->primary_ctx_release)))
        return status;
    return GPUMATMUL_SUCCESS;
}

/* The context's memory pool on its device, keeping what is freed (see core/core.h). */
static gpumatmul_status create_pool(gpumatmul_context *ctx) {
    struct cudaMemPoolProps props;
    uint64_t keep_everything = UINT64_MAX;
    gpumatmul_status status;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = ctx->device;
    if ((status = check_cuda(cudaMemPoolCreate(&ctx->pool, &props), "cudaMemPoolCreate")))
        return status;
    return check_cuda(cudaMemPoolSetAttribute(ctx->pool, cudaMemPoolAttrReleaseThreshold,
                                              &keep_everything),
                      "cudaMemPoolSetAttribute");
}

static gpumatmul_status destroy_worker(struct worker *w) {
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    if (w->stream)
        keep_first(&status, check_cuda(cudaStreamDestroy(w->stream), "cudaStreamDestroy"));
    if (w->cublas) keep_first(&status, check_cublas(cublasDestroy(w->cublas), "cublasDestroy"));
    if (w->cublaslt)
        keep_first(&status, check_cublas(cublasLtDestroy(w->cublaslt), "cublasLtDestroy"));
    free(w);
    return status;
}

/* A new worker on the current device. Its cuBLAS handle waits for its first
 * cuBLAS product (worker_cublas). */
static gpumatmul_status create_worker(struct worker **worker) {
    struct worker *w;
    gpumatmul_status status;
    if (!(w = calloc(1, sizeof *w)))
        return set_error(GPUMATMUL_ERROR_OUT_OF_MEMORY, "out of host memory for a worker");
    if ((status = check_cuda(cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking),
                             "cudaStreamCreateWithFlags"))) {
        destroy_worker(w);
        return status;
    }
    *worker = w;
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status worker_cublas(struct worker *worker, cublasHandle_t *handle) {
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    if (!worker->cublas) status = check_cublas(cublasCreate(&worker->cublas), "cublasCreate");
    *handle = worker->cublas;
    return status;
}

gpumatmul_status worker_cublaslt(struct worker *worker, cublasLtHandle_t *handle) {
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    if (!worker->cublaslt)
        status = check_cublas(cublasLtCreate(&worker->cublaslt), "cublasLtCreate");
    *handle = worker->cublaslt;
    return status;
}

gpumatmul_status take_worker(gpumatmul_context *ctx, struct worker **worker) {
    pthread_mutex_lock(&ctx->lock);
    *worker = ctx->idle;
    if (*worker) ctx->idle = (*worker)->next;
    pthread_mutex_unlock(&ctx->lock);
    /* Creating one takes milliseconds (cuBLAS initialises): not under the lock. */
    return *worker ? GPUMATMUL_SUCCESS : create_worker(worker);
}

void give_back_worker(gpumatmul_context *ctx, struct worker *worker) {
    pthread_mutex_lock(&ctx->lock);
    worker->next = ctx->idle;
    ctx->idle = worker;
    pthread_mutex_unlock(&ctx->lock);
}

/* ctx->cuda_context: the caller's `cuda_context`, or `device`'s primary context,
 * retained (the runtime's own, which cudaSetDevice would make current). */
static gpumatmul_status choose_cuda_context(gpumatmul_context *ctx, int device,
                                            CUcontext cuda_context) {
    CUdevice handle;
    gpumatmul_status status;
    if (cuda_context) {
        ctx->cuda_context = cuda_context;
        return GPUMATMUL_SUCCESS;
    }
    if ((status = check_driver(&ctx->driver, ctx->driver.device_get(&handle, device), "cuDeviceGet")) ||
        (status = check_driver(&ctx->driver, ctx->driver.primary_ctx_retain(&ctx->cuda_context, handle),
                               "cuDevicePrimaryCtxRetain")))
        return status;
    ctx->retained_device = handle;
    return GPUMATMUL_SUCCESS;
}

/* NO_DEVICE unless `device` is one of the process's GPUs. */
static gpumatmul_status check_device_index(int device) {
    gpumatmul_status status;
    int count;
    if ((status = gpumatmul_device_count(&count))) return status;
    if (device < 0 || device >= count)
        return set_error(GPUMATMUL_ERROR_NO_DEVICE, "device %d does not exist: %d GPU(s), 0 to %d",
                         device, count, count - 1);
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status context_open(int device, CUcontext cuda_context, gpumatmul_context **context) {
    gpumatmul_context *ctx;
    gpumatmul_status status;
    size_t free_bytes;
    int entered = 0;
    *context = NULL;
    if (!cuda_context && (status = check_device_index(device))) return status;
    if (!(ctx = calloc(1, sizeof *ctx)))
        return set_error(GPUMATMUL_ERROR_OUT_OF_MEMORY, "out of host memory for a context");
    if (pthread_mutex_init(&ctx->lock, NULL)) {
        free(ctx);
        return set_error(GPUMATMUL_ERROR_OUT_OF_MEMORY, "pthread_mutex_init failed");
    }
    ctx->retained_device = -1;
    /* One worker now, so that a failure to create one shows here. The device is
     * the CUDA context's (the runtime answers for the current one). */
    if ((status = load_driver_api(&ctx->driver)) ||
        (status = choose_cuda_context(ctx, device, cuda_context)) ||
        (status = enter_context(ctx, &entered)) ||
        (status = check_cuda(cudaGetDevice(&ctx->device), "cudaGetDevice")) ||
        (status = check_cuda(cudaFree(NULL), "initialising the device (cudaFree(NULL))")) ||
        (status = check_cuda(cudaMemGetInfo(&free_bytes, &ctx->total_memory), "cudaMemGetInfo")) ||
        (status = check_cuda(cudaDeviceGetAttribute(&ctx->multiprocessors,
                                                    cudaDevAttrMultiProcessorCount, ctx->device),
                             "cudaDeviceGetAttribute")) ||
        (status = create_worker(&ctx->idle)) || (status = create_pool(ctx))) {
        status = leave_context(ctx, entered, status);
        context_close(ctx);
        return status;
    }
    *context = ctx;
    return leave_context(ctx, entered, GPUMATMUL_SUCCESS);
}

gpumatmul_status context_close(gpumatmul_context *ctx) {
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    int entered;
    /* Even if entering fails, release and free what can be. */
    keep_first(&status, enter_context(ctx, &entered));
    /* No call is in flight (gpumatmul_destroy's contract), so every worker is idle. */
    while (ctx->idle) {
        struct worker *next = ctx->idle->next;
        keep_first(&status, destroy_worker(ctx->idle));
        ctx->idle = next;
    }
    if (ctx->pool)
        keep_first(&status, check_cuda(cudaMemPoolDestroy(ctx->pool), "cudaMemPoolDestroy"));
    keep_first(&status, leave_context(ctx, entered, GPUMATMUL_SUCCESS));
    if (ctx->retained_device >= 0)
        keep_first(&status, check_driver(&ctx->driver, ctx->driver.primary_ctx_release(ctx->retained_device),
                                         "cuDevicePrimaryCtxRelease"));
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
    return status;
}
