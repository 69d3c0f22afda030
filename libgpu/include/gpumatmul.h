/*
 * gpumatmul.h - matrix multiplication on NVIDIA GPUs through a plain C ABI.
 *
 * libgpumatmul.so needs libcudart and libcublas of one CUDA major version
 * (12 or 13, fixed when the library is built) and an NVIDIA driver at run
 * time. It does not link the driver library (libcuda.so.1): it loads and
 * reports its status on a machine with no driver or no GPU.
 *
 * Conventions
 *   - Every function that can fail returns a gpumatmul_status. On failure,
 *     gpumatmul_last_error_message() describes what went wrong in the calling
 *     thread (the only global state: one message buffer per thread).
 *   - Matrices are row-major, BLAS style: a matrix with `rows` x `cols`
 *     elements is stored with a leading dimension `ld` >= cols, element (i, j)
 *     at offset i * ld + j. A transpose flag reads the stored matrix as its
 *     transpose, so column-major data needs no copy.
 *   - Sizes and leading dimensions are counted in elements, not bytes.
 *   - A gpumatmul_context belongs to one device. Using one context from
 *     several threads at once is not supported yet; use one per thread.
 *
 * Example (error handling shortened):
 *
 *     gpumatmul_context *ctx;
 *     if (gpumatmul_create(&ctx, 0) != GPUMATMUL_SUCCESS) {
 *         fprintf(stderr, "%s\n", gpumatmul_last_error_message());
 *         return 1;
 *     }
 *     float a[2*3] = {...}, b[3*4] = {...}, c[2*4];
 *     gpumatmul_matmul_host(ctx, GPUMATMUL_BACKEND_AUTO, GPUMATMUL_FLOAT32,
 *                           0, 0, 2, 4, 3, a, 3, b, 4, c, 4);
 *     gpumatmul_destroy(ctx);
 *
 * This header is C99 and C++ safe.
 */
#ifndef GPUMATMUL_H
#define GPUMATMUL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define GPUMATMUL_API __declspec(dllexport)
#else
#  define GPUMATMUL_API __attribute__((visibility("default")))
#endif

/* Library version as MAJOR * 10000 + MINOR * 100 + PATCH. */
#define GPUMATMUL_VERSION 100

/* Status codes. The values are part of the ABI and never change. */
typedef enum gpumatmul_status {
    GPUMATMUL_SUCCESS = 0,
    GPUMATMUL_ERROR_INVALID_ARGUMENT = 1, /* a NULL pointer, a negative size, ld too small */
    GPUMATMUL_ERROR_NOT_SUPPORTED = 2,    /* valid, but not implemented (a dtype, a size) */
    GPUMATMUL_ERROR_NO_DRIVER = 3,        /* no NVIDIA driver, or one older than the runtime */
    GPUMATMUL_ERROR_NO_DEVICE = 4,        /* a driver but no usable GPU, or a bad device index */
    GPUMATMUL_ERROR_OUT_OF_MEMORY = 5,    /* device (or pinned host) memory exhausted */
    GPUMATMUL_ERROR_NO_KERNEL_IMAGE = 6,  /* no embedded kernel runs on this GPU */
    GPUMATMUL_ERROR_CUDA = 7,             /* any other CUDA runtime or driver failure */
    GPUMATMUL_ERROR_CUBLAS = 8            /* a cuBLAS failure */
} gpumatmul_status;

/* Element types. The values are part of the ABI; more will be added. */
typedef enum gpumatmul_dtype {
    GPUMATMUL_FLOAT32 = 0,
    GPUMATMUL_FLOAT64 = 1
} gpumatmul_dtype;

/* Which implementation multiplies. */
typedef enum gpumatmul_backend {
    GPUMATMUL_BACKEND_AUTO = 0,   /* the fastest available: cuBLAS today */
    GPUMATMUL_BACKEND_TILED = 1,  /* pyctk's own shared-memory tiled kernel */
    GPUMATMUL_BACKEND_CUBLAS = 2
} gpumatmul_backend;

/* Kinds of embedded kernel image. */
typedef enum gpumatmul_image_kind {
    GPUMATMUL_IMAGE_SASS = 0,  /* CUBIN: machine code for one architecture family */
    GPUMATMUL_IMAGE_PTX = 1    /* PTX: compiled by the driver for newer GPUs */
} gpumatmul_image_kind;

typedef struct gpumatmul_context gpumatmul_context;  /* opaque */

typedef struct gpumatmul_device_properties {
    char name[256];
    int compute_capability_major;
    int compute_capability_minor;
    int multiprocessor_count;
    size_t total_memory_bytes;
} gpumatmul_device_properties;

/* ---- Status and versions: these work with no driver and no GPU. ---- */

/* A static, human-readable name for a status, e.g. "GPUMATMUL_ERROR_NO_DRIVER". */
GPUMATMUL_API const char *gpumatmul_status_name(gpumatmul_status status);

/* Details of the last failure in the calling thread; "" if none yet. The
 * text stays valid until the thread's next failing call. */
GPUMATMUL_API const char *gpumatmul_last_error_message(void);

/* GPUMATMUL_VERSION of the loaded library. */
GPUMATMUL_API int gpumatmul_version(void);

/* The CUDA major version the library was built for (12 or 13). */
GPUMATMUL_API int gpumatmul_cuda_major(void);

/* Versions as CUDA encodes them (1000 * major + 10 * minor). The driver
 * version is 0 when no driver is installed (the call still succeeds). */
GPUMATMUL_API gpumatmul_status gpumatmul_driver_version(int *version);
GPUMATMUL_API gpumatmul_status gpumatmul_runtime_version(int *version);

/* cuBLAS version as major * 10000 + minor * 100 + patch. */
GPUMATMUL_API gpumatmul_status gpumatmul_cublas_version(int *version);

/* ---- Devices ---- */

GPUMATMUL_API gpumatmul_status gpumatmul_device_count(int *count);
GPUMATMUL_API gpumatmul_status gpumatmul_device_properties_get(
    int device, gpumatmul_device_properties *properties);

/* Free and total memory of `device`, in bytes. */
GPUMATMUL_API gpumatmul_status gpumatmul_device_memory(int device, size_t *free_bytes,
                                                       size_t *total_bytes);

/* ---- Embedded kernel images (no GPU needed) ---- */

GPUMATMUL_API int gpumatmul_kernel_image_count(void);

/* Describes image `index` in [0, gpumatmul_kernel_image_count()). `arch` is
 * 10 * major + minor, e.g. 90 for sm_90 / compute_90. */
GPUMATMUL_API gpumatmul_status gpumatmul_kernel_image_info(int index, int *arch,
                                                           gpumatmul_image_kind *kind,
                                                           size_t *size_bytes);

/* The image that a GPU of compute capability major.minor runs: the SASS of
 * the same major with the highest minor not above the GPU's, else the
 * newest PTX not newer than the GPU. NO_KERNEL_IMAGE if none fits. */
GPUMATMUL_API gpumatmul_status gpumatmul_kernel_image_select(int cc_major, int cc_minor,
                                                             int *index);

/* ---- Contexts ---- */

/* Initialises `device` (its primary CUDA context), loads the kernel image
 * that fits it and creates a cuBLAS handle. */
GPUMATMUL_API gpumatmul_status gpumatmul_create(gpumatmul_context **context, int device);

/* Releases everything the context holds. NULL is accepted. */
GPUMATMUL_API gpumatmul_status gpumatmul_destroy(gpumatmul_context *context);

/* Index of the embedded image the context loaded (see gpumatmul_kernel_image_info). */
GPUMATMUL_API gpumatmul_status gpumatmul_context_kernel_image(const gpumatmul_context *context,
                                                              int *index);

/* ---- Multiplication ----
 *
 * C = op(A) @ op(B), where op(X) is X, or X's transpose when trans_x != 0.
 * op(A) is m x k, op(B) is k x n, C is m x n. The stored A is m x k with
 * lda >= k (or k x m with lda >= m when transposed); likewise B; ldc >= n.
 * Any of m, n, k may be 0 (k == 0 gives a C of zeros). NaN and Inf propagate.
 */

/* A, B and C in host memory. Copies in, multiplies, copies out and frees the
 * device memory on every path; synchronous. C must not overlap A or B unless
 * it is acceptable that C is written only after A and B are read. */
GPUMATMUL_API gpumatmul_status gpumatmul_matmul_host(
    gpumatmul_context *context, gpumatmul_backend backend, gpumatmul_dtype dtype,
    int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    const void *a, int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc);

/* A, B and C in device memory of the context's device, enqueued on `stream`
 * (a cudaStream_t; NULL is the legacy default stream); returns without
 * waiting. C must not overlap A or B. */
GPUMATMUL_API gpumatmul_status gpumatmul_matmul_device(
    gpumatmul_context *context, gpumatmul_backend backend, gpumatmul_dtype dtype,
    int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    const void *a, int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
    void *stream);

#ifdef __cplusplus
}
#endif

#endif /* GPUMATMUL_H */
