/* Contexts: a device, its loaded kernel image with every registered kernel,
 * and a pool of workers (a cuBLAS handle and a stream each) for the calls in
 * flight. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kernel_images.h"

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
                                  (void **)&driver->pointer_get_attributes)))
        return status;
    return GPUMATMUL_SUCCESS;
}

/* The split-k reductions of the dtypes some family may split, the transpose
 * repack.c launches, and the device's multiprocessor count, by which split_k.c
 * decides. */
static gpumatmul_status load_reductions(gpumatmul_context *ctx) {
    unsigned split = 0;
    int f, d;
    gpumatmul_status status;
    for (f = 0; f < KERNEL_FAMILY_COUNT; ++f) split |= kernel_families[f].split_dtypes;
    for (d = 0; d < DTYPE_COUNT; ++d) {
        char symbol[64];
        if (!((split >> d) & 1u)) continue;
        snprintf(symbol, sizeof symbol, "gemm_reduce_%s", dtype_infos[d].kernel_suffix);
        if ((status = check_driver(&ctx->driver,
                                   ctx->driver.module_get_function(&ctx->reduce[d], ctx->module,
                                                                   symbol),
                                   symbol)))
            return status;
    }
    if ((status = check_driver(&ctx->driver,
                               ctx->driver.module_get_function(&ctx->transpose, ctx->module,
                                                               "gemm_transpose_b32"),
                               "gemm_transpose_b32")))
        return status;
    return check_cuda(cudaDeviceGetAttribute(&ctx->multiprocessors,
                                             cudaDevAttrMultiProcessorCount, ctx->device),
                      "cudaDeviceGetAttribute");
}

/* Loads the image that fits the device and looks up every kernel of the
 * registry: a missing one fails here, not at the first product. */
static gpumatmul_status load_kernels(gpumatmul_context *ctx) {
    int cc_major, cc_minor, f, d;
    gpumatmul_status status;
    if ((status = check_cuda(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor,
                                                    ctx->device), "cudaDeviceGetAttribute")) ||
        (status = check_cuda(cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor,
                                                    ctx->device), "cudaDeviceGetAttribute")) ||
        (status = gpumatmul_kernel_image_select(cc_major, cc_minor, &ctx->image_index)) ||
        (status = check_driver(&ctx->driver,
                               ctx->driver.module_load_data(&ctx->module,
                                                            kernel_images[ctx->image_index].data),
                               "cuModuleLoadData")))
        return status;
    for (f = 0; f < KERNEL_FAMILY_COUNT; ++f)
        for (d = 0; d < DTYPE_COUNT; ++d) {
            char symbol[64];
            if (!((kernel_families[f].dtypes >> d) & 1u)) continue;
            snprintf(symbol, sizeof symbol, "%s%s", kernel_families[f].prefix,
                     dtype_infos[d].kernel_suffix);
            if ((status = check_driver(&ctx->driver,
                                       ctx->driver.module_get_function(&ctx->kernels[f][d],
                                                                       ctx->module, symbol),
                                       symbol)))
                return status;
            /* Beyond 48 KiB a block gets dynamic shared memory only when asked. */
            if (kernel_families[f].shared_bytes > 48 * 1024 &&
                kernel_family_runs_on(f, kernel_images[ctx->image_index].arch) &&
                (status = check_driver(&ctx->driver,
                                       ctx->driver.func_set_attribute(
                                           ctx->kernels[f][d],
                                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           (int)kernel_families[f].shared_bytes),
                                       symbol)))
                return status;
        }
    return load_reductions(ctx);
}

/* The context's memory pool on its device, keeping what is freed (see internal.h). */
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

/* Keeps the first failure of several steps that all run. */
static void keep_first(gpumatmul_status *first, gpumatmul_status status) {
    if (*first == GPUMATMUL_SUCCESS) *first = status;
}

static gpumatmul_status destroy_worker(struct worker *w) {
    gpumatmul_status status = destroy_host_staging(w);
    if (w->stream)
        keep_first(&status, check_cuda(cudaStreamDestroy(w->stream), "cudaStreamDestroy"));
    if (w->cublas) keep_first(&status, check_cublas(cublasDestroy(w->cublas), "cublasDestroy"));
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

gpumatmul_status gpumatmul_create(gpumatmul_context **context, int device) {
    gpumatmul_context *ctx;
    gpumatmul_status status;
    size_t free_bytes;
    int count, previous;
    if (!context) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context is NULL");
    *context = NULL;
    if ((status = gpumatmul_device_count(&count))) return status;
    if (device < 0 || device >= count)
        return set_error(GPUMATMUL_ERROR_NO_DEVICE, "device %d does not exist: %d GPU(s), 0 to %d",
                         device, count, count - 1);
    if (!(ctx = calloc(1, sizeof *ctx)))
        return set_error(GPUMATMUL_ERROR_OUT_OF_MEMORY, "out of host memory for a context");
    if (pthread_mutex_init(&ctx->lock, NULL)) {
        free(ctx);
        return set_error(GPUMATMUL_ERROR_OUT_OF_MEMORY, "pthread_mutex_init failed");
    }
    ctx->device = device;
    /* One worker now, so that a failure to create one shows here. */
    if ((status = enter_device(device, &previous)) ||
        (status = check_cuda(cudaFree(NULL), "initialising the device (cudaFree(NULL))")) ||
        (status = check_cuda(cudaMemGetInfo(&free_bytes, &ctx->total_memory), "cudaMemGetInfo")) ||
        (status = load_driver_api(&ctx->driver)) || (status = load_kernels(ctx)) ||
        (status = create_worker(&ctx->idle)) || (status = create_pool(ctx))) {
        gpumatmul_destroy(ctx);
        return leave_device(previous, status);
    }
    *context = ctx;
    return leave_device(previous, GPUMATMUL_SUCCESS);
}

gpumatmul_status gpumatmul_destroy(gpumatmul_context *ctx) {
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    int previous;
    if (!ctx) return GPUMATMUL_SUCCESS;
    /* Even if the switch fails, release and free what can be. */
    keep_first(&status, enter_device(ctx->device, &previous));
    /* No call is in flight (the contract), so every worker is idle. */
    while (ctx->idle) {
        struct worker *next = ctx->idle->next;
        keep_first(&status, destroy_worker(ctx->idle));
        ctx->idle = next;
    }
    if (ctx->pool)
        keep_first(&status, check_cuda(cudaMemPoolDestroy(ctx->pool), "cudaMemPoolDestroy"));
    if (ctx->module)
        keep_first(&status, check_driver(&ctx->driver, ctx->driver.module_unload(ctx->module),
                                         "cuModuleUnload"));
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
    return leave_device(previous, status);
}

gpumatmul_status gpumatmul_context_kernel_image(const gpumatmul_context *ctx, int *index) {
    if (!ctx || !index) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context or index is NULL");
    *index = ctx->image_index;
    return GPUMATMUL_SUCCESS;
}
