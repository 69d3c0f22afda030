/* Declarations shared by libgpumatmul's source files; not installed. */
#ifndef GPUMATMUL_INTERNAL_H
#define GPUMATMUL_INTERNAL_H

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "gpumatmul.h"

/* Per element type: its size and the name of its tiled kernel. */
struct dtype_info {
    const char *name;
    size_t size;
    const char *tiled_kernel;
};
#define DTYPE_COUNT 2
extern const struct dtype_info dtype_infos[DTYPE_COUNT];

/* Driver API entry points, fetched through cudart so that libgpumatmul does
 * not link libcuda.so.1 and loads on machines without a driver. */
struct driver_api {
    CUresult (*module_load_data)(CUmodule *module, const void *image);
    CUresult (*module_unload)(CUmodule module);
    CUresult (*module_get_function)(CUfunction *function, CUmodule module, const char *name);
    CUresult (*launch_kernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                              unsigned block_x, unsigned block_y, unsigned block_z,
                              unsigned shared_bytes, CUstream stream, void **params, void **extra);
    CUresult (*get_error_name)(CUresult error, const char **name);
};

struct gpumatmul_context {
    int device;
    int image_index;
    struct driver_api driver;
    CUmodule module;
    CUfunction tiled_kernels[DTYPE_COUNT];
    cublasHandle_t cublas;
};

/* Record a failure for gpumatmul_last_error_message() and return `status`. */
gpumatmul_status set_error(gpumatmul_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Turn a failed CUDA runtime, driver or cuBLAS call into a status and message.
 * `what` names the call. Each returns GPUMATMUL_SUCCESS when the call succeeded. */
gpumatmul_status check_cuda(cudaError_t error, const char *what);
gpumatmul_status check_driver(const struct driver_api *driver, CUresult error, const char *what);
gpumatmul_status check_cublas(cublasStatus_t error, const char *what);

#endif
