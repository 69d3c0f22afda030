/* Versions and devices: the calls that need no context; and the caller's
 * current context and device, which every call keeps. */
#include <string.h>

#include "core/core.h"

int gpumatmul_version(void) { return GPUMATMUL_VERSION; }

int gpumatmul_cuda_major(void) { return CUDART_VERSION / 1000; }

gpumatmul_status gpumatmul_driver_version(int *version) {
    if (!version) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "version is NULL");
    return check_cuda(cudaDriverGetVersion(version), "cudaDriverGetVersion");
}

gpumatmul_status gpumatmul_runtime_version(int *version) {
    if (!version) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "version is NULL");
    return check_cuda(cudaRuntimeGetVersion(version), "cudaRuntimeGetVersion");
}

gpumatmul_status gpumatmul_cublas_version(int *version) {
    int major, minor, patch;
    gpumatmul_status status;
    if (!version) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "version is NULL");
    if ((status = check_cublas(cublasGetProperty(MAJOR_VERSION, &major), "cublasGetProperty")) ||
        (status = check_cublas(cublasGetProperty(MINOR_VERSION, &minor), "cublasGetProperty")) ||
        (status = check_cublas(cublasGetProperty(PATCH_LEVEL, &patch), "cublasGetProperty")))
        return status;
    *version = major * 10000 + minor * 100 + patch;
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status gpumatmul_device_count(int *count) {
    gpumatmul_status status;
    if (!count) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "count is NULL");
    *count = 0;
    status = check_cuda(cudaGetDeviceCount(count), "cudaGetDeviceCount");
    if (status == GPUMATMUL_SUCCESS && *count == 0)
        return set_error(GPUMATMUL_ERROR_NO_DEVICE, "the driver reports no CUDA GPU");
    return status;
}

gpumatmul_status gpumatmul_device_properties_get(int device,
                                                 gpumatmul_device_properties *properties) {
    struct cudaDeviceProp prop;
    gpumatmul_status status;
    if (!properties) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "properties is NULL");
    if ((status = check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties")))
        return status;
    memset(properties, 0, sizeof *properties);
    memcpy(properties->name, prop.name, sizeof properties->name - 1); /* both 256 bytes */
    properties->compute_capability_major = prop.major;
    properties->compute_capability_minor = prop.minor;
    properties->multiprocessor_count = prop.multiProcessorCount;
    properties->total_memory_bytes = prop.totalGlobalMem;
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status enter_context(const gpumatmul_context *ctx, int *entered) {
    CUcontext current = NULL;
    gpumatmul_status status;
    *entered = 0;
    if (!ctx->cuda_context) return GPUMATMUL_SUCCESS; /* (a context_open that failed early) */
    /* Already current (the usual case): one driver call, no push. */
    if ((status = check_driver(&ctx->driver, ctx->driver.ctx_get_current(&current),
                               "cuCtxGetCurrent")) ||
        current == ctx->cuda_context)
        return status;
    if ((status = check_driver(&ctx->driver, ctx->driver.ctx_push_current(ctx->cuda_context),
                               "cuCtxPushCurrent")))
        return status;
    *entered = 1;
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status leave_context(const gpumatmul_context *ctx, int entered,
                               gpumatmul_status status) {
    CUcontext popped;
    CUresult error;
    if (!entered) return status;
    error = ctx->driver.ctx_pop_current(&popped);
    /* An earlier failure is the one to report. */
    return status ? status : check_driver(&ctx->driver, error, "cuCtxPopCurrent");
}

gpumatmul_status enter_device(int device, int *previous) {
    int current;
    gpumatmul_status status;
    *previous = -1;
    /* A thread that never chose a device is on device 0, as cudaGetDevice says. */
    if ((status = check_cuda(cudaGetDevice(&current), "cudaGetDevice"))) return status;
    /* Already there (the usual case): no switch, so a call costs one cudaGetDevice. */
    if (current == device) return GPUMATMUL_SUCCESS;
    if ((status = check_cuda(cudaSetDevice(device), "cudaSetDevice"))) return status;
    *previous = current;
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status leave_device(int previous, gpumatmul_status status) {
    cudaError_t error;
    if (previous < 0) return status;
    error = cudaSetDevice(previous);
    /* An earlier failure is the one to report; still clear this one, so that the
     * caller's next cudaGetLastError does not see it. */
    if (status != GPUMATMUL_SUCCESS) {
        if (error != cudaSuccess) cudaGetLastError();
        return status;
    }
    return check_cuda(error, "cudaSetDevice (back to the caller's device)");
}

gpumatmul_status gpumatmul_device_memory(int device, size_t *free_bytes, size_t *total_bytes) {
    int previous;
    gpumatmul_status status;
    if (!free_bytes || !total_bytes)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "free_bytes or total_bytes is NULL");
    /* cudaMemGetInfo answers for the current device only. */
    if ((status = enter_device(device, &previous))) return status;
    status = check_cuda(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
    return leave_device(previous, status);
}
