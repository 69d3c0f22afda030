/* The core layer of libgpumatmul: contexts (with their workers and memory pool),
 * device memory, the caller's current device, statuses and errors. The layers
 * above (gemm/, host/, api/) build on it; it calls none of them.
 *
 * Layers, each header including the one below: core/core.h <- gemm/gemm.h <-
 * host/host.h <- api/api.h. A source file includes its own layer's header. */
#ifndef GPUMATMUL_CORE_H
#define GPUMATMUL_CORE_H

#include <pthread.h>

/* glibc 2.34 moved pthread_create and pthread_join into libc under a new
 * version. Binding the old one, in every file that may call them, keeps the
 * library loadable on glibc 2.17 (where libpthread.so.0, in DT_NEEDED through
 * meson.build, defines them). */
#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 34)
#if defined(__x86_64__)
__asm__(".symver pthread_create, pthread_create@GLIBC_2.2.5");
__asm__(".symver pthread_join, pthread_join@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver pthread_create, pthread_create@GLIBC_2.17");
__asm__(".symver pthread_join, pthread_join@GLIBC_2.17");
#endif
#endif
#endif

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "gpumatmul.h"

/* ---- Contexts (context.c) ---- */

/* Driver API entry points, fetched through cudart so that libgpumatmul does
 * not link libcuda.so.1 and loads on machines without a driver. */
struct driver_api {
    CUresult (*module_load_data)(CUmodule *module, const void *image);
    CUresult (*module_unload)(CUmodule module);
    CUresult (*module_get_function)(CUfunction *function, CUmodule module, const char *name);
    CUresult (*func_set_attribute)(CUfunction function, CUfunction_attribute attribute, int value);
    CUresult (*launch_kernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                              unsigned block_x, unsigned block_y, unsigned block_z,
                              unsigned shared_bytes, CUstream stream, void **params, void **extra);
    CUresult (*get_error_name)(CUresult error, const char **name);
    CUresult (*tensor_map_encode_tiled)(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                        void *address, const cuuint64_t *dims,
                                        const cuuint64_t *strides, const cuuint32_t *box,
                                        const cuuint32_t *element_strides,
                                        CUtensorMapInterleave interleave,
                                        CUtensorMapSwizzle swizzle,
                                        CUtensorMapL2promotion l2_promotion,
                                        CUtensorMapFloatOOBfill oob_fill);
    CUresult (*pointer_get_attributes)(unsigned count, CUpointer_attribute *attributes,
                                       void **values, CUdeviceptr pointer);
    CUresult (*ctx_get_current)(CUcontext *context);
    CUresult (*ctx_push_current)(CUcontext context);
    CUresult (*ctx_pop_current)(CUcontext *context);
    CUresult (*device_get)(CUdevice *device, int ordinal);
    CUresult (*primary_ctx_retain)(CUcontext *context, CUdevice device);
    CUresult (*primary_ctx_release)(CUdevice device);
};

/* What one call in flight uses alone: a cuBLAS handle (each call binds it to its
 * stream with cublasSetStream, and cuBLAS forbids two threads using one handle at
 * once) and the host calls' stream (each host call synchronises its stream, so two
 * calls sharing one would wait for each other's work). */
struct worker {
    /* Made by the worker's first cuBLAS product (worker_cublas): creating one takes
     * tens of milliseconds, which a process whose products are all pyctk's own
     * kernels (its first tiny product, say) never needs to pay. */
    cublasHandle_t cublas;
    cudaStream_t cublas_stream; /* the one cublas is on (cublasSetStream costs 1 us a call) */
    cublasLtHandle_t cublaslt;  /* made by its first cuBLASLt product (worker_cublaslt) */
    cudaStream_t stream;  /* non-blocking: a host call's copies, allocations, product */
    /* The host path's own streams and buffers (host/pipeline.c), made by the
     * worker's first host product and freed by host_release before the context
     * goes: the core only keeps the pointer. */
    struct host_staging *host;
    struct worker *next;  /* in the context's idle list */
};

struct gpumatmul_context {
    int device;
    /* The CUDA context every call works in (enter_context): the device's primary
     * context, retained by context_open and released by context_close
     * (retained_device >= 0), or the caller's own (gpumatmul_create_in_context),
     * which the caller keeps alive. Everything below belongs to it. */
    CUcontext cuda_context;
    CUdevice retained_device; /* -1 unless cuda_context is the retained primary one */
    size_t total_memory; /* the device's, in bytes */
    int multiprocessors; /* the device's, asked once: split k sizes grids by it */
    struct driver_api driver;
    /* The kernel image loaded for the device and its kernels (gemm/images.c),
     * only read after gpumatmul_create: shared by every thread. */
    struct kernels *kernels;
    /* Workers no call is using. The lock guards only this list, held for one pop
     * or push, never across GPU work: threads multiply at once, each with a worker
     * of its own. */
    pthread_mutex_t lock;
    struct worker *idle;
    /* The host calls' device memory, shared by their workers' streams (a pool is
     * thread-safe). Its own pool, not the device's default one, so that keeping
     * freed memory for the next call (a release threshold of "never") changes no
     * other library's pool: returning memory to the driver at every
     * synchronisation, as a pool does by default, costs hundreds of microseconds
     * per call. */
    cudaMemPool_t pool;
};

/* A context with its driver entry points, one worker and its memory pool:
 * everything but the kernels (gemm/images.c loads them). It works in
 * `cuda_context`, or, where that is NULL, in `device`'s primary context (made
 * and retained here; NO_DEVICE for an index out of range). The caller's current
 * context is unchanged. */
gpumatmul_status context_open(int device, CUcontext cuda_context, gpumatmul_context **context);

/* Frees what context_open made; the context's workers must have no host
 * staging left (host_release) and its kernels must be unloaded. Keeps the first
 * failure, still freeing the rest. The caller's current device is unchanged. */
gpumatmul_status context_close(gpumatmul_context *ctx);

/* Takes an idle worker, or creates one (outside the lock) when every worker is
 * in a call: the pool grows to the most calls ever in flight at once. The
 * context's device must be current. */
gpumatmul_status take_worker(gpumatmul_context *ctx, struct worker **worker);
/* Returns a worker to the idle list once its call no longer needs it. */
void give_back_worker(gpumatmul_context *ctx, struct worker *worker);
/* The worker's cuBLAS handle, created on the current device (the worker's) if it
 * has none yet. */
gpumatmul_status worker_cublas(struct worker *worker, cublasHandle_t *handle);
/* The worker's cuBLASLt handle, created if it has none yet. */
gpumatmul_status worker_cublaslt(struct worker *worker, cublasLtHandle_t *handle);

/* ---- Workspaces from the context's pool (memory.c) ---- */

/* cudaMallocFromPoolAsync from the context's pool. On failure the error is
 * returned and cleared as the thread's last error; where it ran out of memory,
 * the pool is also trimmed back to the memory in use (what the attempt mapped
 * would otherwise stay with the pool). Every allocation of the library goes
 * through it. */
cudaError_t pool_alloc(gpumatmul_context *ctx, size_t bytes, cudaStream_t stream, void **pointer);

/* `bytes` of device memory from the context's pool, ordered on `stream`, for
 * work enqueued there. OUT_OF_MEMORY, naming `purpose`, if the pool cannot
 * give them. */
gpumatmul_status workspace_alloc(gpumatmul_context *ctx, size_t bytes, cudaStream_t stream,
                                 const char *purpose, void **workspace);

/* Frees `workspace` on `stream`, after what was enqueued there, which may
 * have failed with `status`; returns `status`, or else the free's own. A NULL
 * workspace (none was allocated) is nothing to free, as with free(). */
gpumatmul_status workspace_free(void *workspace, cudaStream_t stream, gpumatmul_status status);

/* ---- The caller's current device (device.c) ---- */

/* Every entry point that works in a context brackets its work with these, so
 * that the calling thread's current CUDA context (and so its current device) is
 * the same after the call as before it, whichever it was (none, the primary
 * context of another device, one of the caller's own). enter_context makes
 * ctx's CUDA context current, pushing it only if it is not already, and sets
 * *entered to whether it pushed (0 also on failure, so leave_context is always
 * safe to call). leave_context pops what was pushed, and returns `status`, or
 * the pop's failure if `status` is SUCCESS. */
gpumatmul_status enter_context(const gpumatmul_context *ctx, int *entered);
gpumatmul_status leave_context(const gpumatmul_context *ctx, int entered, gpumatmul_status status);

/* The same for calls on a device and no context (gpumatmul_device_memory):
 * enter_device makes `device` current through the runtime, switching only if it
 * is not already, and sets *previous to the device to return to, or -1. */
gpumatmul_status enter_device(int device, int *previous);
gpumatmul_status leave_device(int previous, gpumatmul_status status);

/* ---- Errors (status.c) ---- */

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

/* Keeps the first failure of several steps that all run. */
static inline void keep_first(gpumatmul_status *first, gpumatmul_status status) {
    if (*first == GPUMATMUL_SUCCESS) *first = status;
}

/* ---- Arithmetic on sizes ---- */

static inline int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }
static inline int64_t max64(int64_t x, int64_t y) { return x > y ? x : y; }
static inline int64_t ceil_div(int64_t x, int64_t y) { return x / y + (x % y != 0); }

/* Element `offset` of an array of `size`-byte elements. */
static inline void *at(const void *base, int64_t offset, size_t size) {
    return (char *)base + offset * (int64_t)size;
}

#endif
