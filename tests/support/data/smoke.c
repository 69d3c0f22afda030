/* Uses libgpumatmul from C through its public header only, as another language would.
 * Prints one line per check. Without a GPU it checks what needs none: the tables, NULL
 * outputs, and the argument checks (they come before any GPU work, so a NULL context
 * shows them), and that gpumatmul_create reports NO_DRIVER or NO_DEVICE cleanly. With a
 * GPU it also multiplies small products and checks them, from 8 threads at once on one
 * context too, and checks that no call changes the caller's current device. Exit status
 * 0 = as expected.
 *
 * Build: cc -std=c99 -pthread smoke.c -I... -L... -lgpumatmul -ldl */
#define _POSIX_C_SOURCE 200809L /* pthreads and dlopen under -std=c99 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpumatmul.h"

static int failures = 0;

static void check(int ok, const char *what) {
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    failures += !ok;
}

/* Whether a call returned `expected` with a message that mentions `needle`. */
static int fails_with(gpumatmul_status status, gpumatmul_status expected, const char *needle) {
    if (status != expected || !strstr(gpumatmul_last_error_message(), needle)) {
        printf("  got %s: %s\n", gpumatmul_status_name(status), gpumatmul_last_error_message());
        return 0;
    }
    return 1;
}

/* cudaGetDevice and cudaSetDevice of the libcudart that libgpumatmul loaded, looked up
 * at run time: this program needs no CUDA header and links only libgpumatmul. Both
 * return a cudaError_t, 0 for success. */
static int (*cuda_get_device)(int *device);
static int (*cuda_set_device)(int device);
static int (*cuda_memcpy)(void *dst, const void *src, size_t bytes, int kind);
enum { CUDA_MEMCPY_DEFAULT = 4 }; /* cudaMemcpyDefault: the direction from the pointers */

static int find_cudart(void) {
    /* The program's global scope: it and the libraries loaded at start, libcudart too. */
    void *program = dlopen(NULL, RTLD_LAZY);
    void *get = program ? dlsym(program, "cudaGetDevice") : NULL;
    void *set = program ? dlsym(program, "cudaSetDevice") : NULL;
    void *copy = program ? dlsym(program, "cudaMemcpy") : NULL;
    /* ISO C has no cast from an object pointer to a function pointer; POSIX makes
     * them the same size. */
    memcpy(&cuda_get_device, &get, sizeof cuda_get_device);
    memcpy(&cuda_set_device, &set, sizeof cuda_set_device);
    memcpy(&cuda_memcpy, &copy, sizeof cuda_memcpy);
    return get && set && copy;
}

/* The calling thread's current device; -1 if CUDA cannot say. */
static int current_device(void) {
    int device = -1;
    return cuda_get_device(&device) == 0 ? device : -1;
}

static void check_tables(void) {
    check(gpumatmul_backend_supports(GPUMATMUL_BACKEND_TILED, GPUMATMUL_INT32,
                                     GPUMATMUL_PRECISION_HIGHEST) == GPUMATMUL_SUCCESS,
          "tiled multiplies int32");
    check(fails_with(gpumatmul_backend_supports(GPUMATMUL_BACKEND_CUBLAS, GPUMATMUL_INT32,
                                                GPUMATMUL_PRECISION_HIGHEST),
                     GPUMATMUL_ERROR_NOT_SUPPORTED, "use backend tiled or auto"),
          "cublas does not multiply int32, and the message names the backends that do");
    check(gpumatmul_backend_supports(GPUMATMUL_BACKEND_CUBLAS, GPUMATMUL_FLOAT16,
                                     GPUMATMUL_PRECISION_FP16_ACCUMULATE) == GPUMATMUL_SUCCESS,
          "cublas multiplies float16 with float16 sums");
    check(fails_with(gpumatmul_backend_supports(GPUMATMUL_BACKEND_TILED, GPUMATMUL_COMPLEX128,
                                                GPUMATMUL_PRECISION_TF32),
                     GPUMATMUL_ERROR_NOT_SUPPORTED,
                     "precision tf32 applies to float32, complex64, float8_e4m3fn and "
                     "float8_e5m2 with the tiled backend; "
                     "float32, complex64, float8_e4m3fn and float8_e5m2 with the cublas backend"),
          "tiled has no complex128 tf32, and the message says where tf32 applies");
    check(gpumatmul_backend_supports(GPUMATMUL_BACKEND_AUTO, GPUMATMUL_FLOAT32,
                                     GPUMATMUL_PRECISION_TF32) == GPUMATMUL_SUCCESS,
          "auto multiplies float32 in tf32 (with cuBLAS)");
    check(gpumatmul_backend_supports((gpumatmul_backend)3, GPUMATMUL_FLOAT32,
                                     GPUMATMUL_PRECISION_HIGHEST) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_backend_supports(GPUMATMUL_BACKEND_AUTO, (gpumatmul_dtype)99,
                                         GPUMATMUL_PRECISION_HIGHEST) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_backend_supports(GPUMATMUL_BACKEND_AUTO, GPUMATMUL_FLOAT32,
                                         (gpumatmul_precision)-1) == GPUMATMUL_ERROR_INVALID_ARGUMENT,
          "values outside the enums are invalid arguments");
    check(gpumatmul_backend_supports(GPUMATMUL_BACKEND_AUTO, GPUMATMUL_FLOAT8_E4M3FN,
                                     GPUMATMUL_PRECISION_HIGHEST) == GPUMATMUL_SUCCESS &&
              gpumatmul_backend_supports(GPUMATMUL_BACKEND_CUBLAS, GPUMATMUL_FLOAT8_E4M3FN,
                                         GPUMATMUL_PRECISION_HIGHEST) == GPUMATMUL_SUCCESS &&
              gpumatmul_backend_supports(GPUMATMUL_BACKEND_TILED, GPUMATMUL_FLOAT8_E5M2_E4M3FN,
                                         GPUMATMUL_PRECISION_HIGHEST) == GPUMATMUL_SUCCESS &&
              gpumatmul_backend_supports(GPUMATMUL_BACKEND_CUBLAS, GPUMATMUL_FLOAT8_E4M3FN_E5M2,
                                         GPUMATMUL_PRECISION_HIGHEST) == GPUMATMUL_SUCCESS &&
              gpumatmul_backend_supports(GPUMATMUL_BACKEND_CUBLAS, GPUMATMUL_INT8,
                                         GPUMATMUL_PRECISION_HIGHEST) == GPUMATMUL_SUCCESS &&
              gpumatmul_backend_supports(GPUMATMUL_BACKEND_CUBLAS, GPUMATMUL_UINT8,
                                         GPUMATMUL_PRECISION_HIGHEST) ==
                  GPUMATMUL_ERROR_NOT_SUPPORTED,
          "FP8, its mixed pairs and int8 multiply with the kernels and with cuBLAS (cuBLASLt), uint8 "
          "not with cuBLAS");
}

static void check_images(void) {
    int index = -1, arch = 0;
    size_t size = 0;
    gpumatmul_image_kind kind;
    check(gpumatmul_kernel_image_count() > 0, "kernel images are embedded");
    check(gpumatmul_kernel_image_select(9, 0, &index) == GPUMATMUL_SUCCESS &&
              gpumatmul_kernel_image_info(index, &arch, &kind, &size) == GPUMATMUL_SUCCESS &&
              arch == 90 && kind == GPUMATMUL_IMAGE_SASS && size > 0,
          "compute capability 9.0 selects the sm_90 SASS");
    check(gpumatmul_kernel_image_select(3, 5, &index) == GPUMATMUL_ERROR_NO_KERNEL_IMAGE &&
              strstr(gpumatmul_last_error_message(), "3.5") != NULL,
          "compute capability 3.5 has no image, and the message says so");
}

static void check_null_outputs(void) {
    int value;
    size_t bytes;
    gpumatmul_image_kind kind;
    check(gpumatmul_create(NULL, 0) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_driver_version(NULL) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_runtime_version(NULL) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_cublas_version(NULL) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_device_count(NULL) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_device_properties_get(0, NULL) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_device_memory(0, NULL, &bytes) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_kernel_image_info(0, &value, &kind, NULL) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_kernel_image_select(9, 0, NULL) == GPUMATMUL_ERROR_INVALID_ARGUMENT &&
              gpumatmul_context_kernel_image(NULL, &value) == GPUMATMUL_ERROR_INVALID_ARGUMENT,
          "NULL outputs (and a NULL context to read) are invalid arguments");
}

/* The argument checks of the batched call, with real buffers so that only the argument
 * under test is wrong. They come before any GPU work: `ctx` is NULL without a GPU. */
static void check_arguments(gpumatmul_context *ctx) {
    float a[8] = {0}, b[8] = {0}, c[8] = {0};
#define MATMUL(backend, dtype, precision, m, n, k, batch, lda, sa, ldb, sb, ldc, sc)        \
    gpumatmul_matmul_strided_batched_host(ctx, backend, dtype, precision, 0, 0, m, n, k,   \
                                          batch, a, lda, sa, b, ldb, sb, c, ldc, sc)
    const gpumatmul_backend tiled = GPUMATMUL_BACKEND_TILED, cublas = GPUMATMUL_BACKEND_CUBLAS;
    const gpumatmul_backend any = GPUMATMUL_BACKEND_AUTO;
    const gpumatmul_dtype f32 = GPUMATMUL_FLOAT32;
    const gpumatmul_precision highest = GPUMATMUL_PRECISION_HIGHEST;

    check(fails_with(MATMUL(any, f32, highest, 2, 2, 2, 1, 1, 0, 2, 0, 2, 0),
                     GPUMATMUL_ERROR_INVALID_ARGUMENT, "lda=1 is too small"),
          "lda smaller than k is rejected");
    check(fails_with(gpumatmul_matmul_host(ctx, any, f32, 0, 1, 2, 2, 3, a, 3, b, 2, c, 2),
                     GPUMATMUL_ERROR_INVALID_ARGUMENT, "ldb=2 is too small"),
          "ldb smaller than k is rejected when B is transposed (the first ABI)");
    check(fails_with(MATMUL(any, f32, highest, -1, 2, 2, 1, 2, 0, 2, 0, 2, 0),
                     GPUMATMUL_ERROR_INVALID_ARGUMENT, "negative size"),
          "a negative size is rejected");
    check(fails_with(MATMUL(any, f32, highest, 1, 2, 2, 2, 2, 0, 2, -2, 2, 2),
                     GPUMATMUL_ERROR_INVALID_ARGUMENT, "stride_b=-2 is negative"),
          "a negative stride is rejected");
    check(fails_with(MATMUL(any, f32, highest, 2, 2, 2, 2, 2, 0, 2, 4, 2, 3),
                     GPUMATMUL_ERROR_INVALID_ARGUMENT, "overlap"),
          "overlapping C matrices (stride_c < m * ldc) are rejected");
    check(fails_with(MATMUL(any, f32, highest, 1, 2, 2, 3, 2, INT64_MAX / 2, 2, 0, 2, 2),
                     GPUMATMUL_ERROR_INVALID_ARGUMENT, "A spans more bytes"),
          "a batch larger than the address space is rejected");
    check(fails_with(MATMUL(cublas, GPUMATMUL_INT32, highest, 2, 2, 2, 1, 2, 0, 2, 0, 2, 0),
                     GPUMATMUL_ERROR_NOT_SUPPORTED, "cublas backend does not multiply int32"),
          "cublas refuses int32");
    check(fails_with(MATMUL(tiled, GPUMATMUL_COMPLEX128, GPUMATMUL_PRECISION_TF32, 2, 2, 2, 1, 2,
                            0, 2, 0, 2, 0),
                     GPUMATMUL_ERROR_NOT_SUPPORTED, "tf32"),
          "tiled refuses complex128 in tf32");
    check(fails_with(MATMUL(any, (gpumatmul_dtype)99, highest, 2, 2, 2, 1, 2, 0, 2, 0, 2, 0),
                     GPUMATMUL_ERROR_INVALID_ARGUMENT, "dtype 99"),
          "a dtype outside the enum is rejected");
    check(fails_with(gpumatmul_matmul_strided_batched_host(ctx, any, f32, highest, 0, 0, 2, 2, 2,
                                                           1, NULL, 2, 0, b, 2, 0, c, 2, 0),
                     GPUMATMUL_ERROR_INVALID_ARGUMENT, "a is NULL"),
          "a NULL A is rejected when A is not empty");
    {
        void *pointer = NULL;
        check(fails_with(gpumatmul_gemm_host(ctx, NULL, a, b, c), GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "desc is NULL") &&
                  fails_with(gpumatmul_gemm_device(ctx, NULL, a, b, c, NULL),
                             GPUMATMUL_ERROR_INVALID_ARGUMENT, "desc is NULL") &&
                  fails_with(gpumatmul_gemm_device_new(ctx, NULL, a, b, NULL, &pointer),
                             GPUMATMUL_ERROR_INVALID_ARGUMENT, "desc is NULL") &&
                  pointer == NULL &&
                  fails_with(gpumatmul_gemm_device_new(ctx, NULL, a, b, NULL, NULL),
                             GPUMATMUL_ERROR_INVALID_ARGUMENT, "c is NULL") &&
                  gpumatmul_device_alloc(NULL, 8, NULL, &pointer) ==
                      GPUMATMUL_ERROR_INVALID_ARGUMENT &&
                  gpumatmul_device_free(NULL, a, NULL) == GPUMATMUL_ERROR_INVALID_ARGUMENT,
              "a NULL description or context is rejected");
    }
    if (!ctx) {
        check(fails_with(MATMUL(any, f32, highest, 2, 2, 2, 2, 2, 0, 2, 4, 2, 4),
                         GPUMATMUL_ERROR_INVALID_ARGUMENT, "context is NULL"),
              "a NULL context is rejected once every other argument is valid");
    } else {
        c[0] = 1;
        check(MATMUL(any, f32, highest, 2, 2, 0, 2, 1, 0, 2, 4, 2, 4) == GPUMATMUL_SUCCESS &&
                  c[0] == 0 && c[7] == 0,
              "k == 0 writes zeros");
        check(gpumatmul_matmul_strided_batched_host(ctx, any, f32, highest, 0, 0, 0, 2, 2, 5,
                                                    NULL, 2, 0, b, 2, 0, NULL, 2, 0) ==
                  GPUMATMUL_SUCCESS,
              "m == 0 does nothing, and needs no pointer to the empty A and C");
    }
#undef MATMUL
}

static int multiply_and_check(gpumatmul_context *ctx, gpumatmul_backend backend) {
    /* A is 2x3 row-major; B is given transposed (4x3 storage) to exercise trans_b. */
    const float a[6] = {1, 2, 3, 4, 5, 6};
    const float bt[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
    const float expected[8] = {1, 2, 3, 6, 4, 5, 6, 15};
    float c[8];
    int i;
    if (gpumatmul_matmul_host(ctx, backend, GPUMATMUL_FLOAT32, 0, 1, 2, 4, 3, a, 3, bt, 3, c, 4))
        return 0;
    for (i = 0; i < 8; ++i)
        if (c[i] != expected[i]) return 0;
    return 1;
}

/* C[z] = A @ B[z] for 3 batches with one A for all (stride_a = 0), 2x3 @ 3x2, in float32 or
 * int32. Small integers are exact in float32; int32 adds 2^30 * 4 = 2^32, which wraps
 * around to 0 as in NumPy. Returns the call's status, or -1 for a wrong result. */
static int broadcast_batch(gpumatmul_context *ctx, gpumatmul_backend backend,
                           gpumatmul_dtype dtype) {
    enum { M = 2, K = 3, N = 2, BATCH = 3 };
    int32_t a[M * K] = {1, 2, 3, 4, 5, 6}, b[BATCH * K * N], c[BATCH * M * N];
    float fa[M * K], fb[BATCH * K * N], fc[BATCH * M * N];
    uint32_t expected[BATCH * M * N] = {0};
    const int is_float = dtype == GPUMATMUL_FLOAT32;
    int i, j, kk, z, status;
    for (i = 0; i < BATCH * K * N; ++i) b[i] = i % 5 - 2;
    if (!is_float) {
        a[0] = 1 << 30;
        b[0] = 4;
    }
    for (z = 0; z < BATCH; ++z)
        for (i = 0; i < M; ++i)
            for (j = 0; j < N; ++j)
                for (kk = 0; kk < K; ++kk)
                    expected[(z * M + i) * N + j] +=
                        (uint32_t)a[i * K + kk] * (uint32_t)b[(z * K + kk) * N + j];
    for (i = 0; i < M * K; ++i) fa[i] = (float)a[i];
    for (i = 0; i < BATCH * K * N; ++i) fb[i] = (float)b[i];
    status = gpumatmul_matmul_strided_batched_host(
        ctx, backend, dtype, GPUMATMUL_PRECISION_HIGHEST, 0, 0, M, N, K, BATCH,
        is_float ? (void *)fa : (void *)a, K, 0, is_float ? (void *)fb : (void *)b, N, K * N,
        is_float ? (void *)fc : (void *)c, N, M * N);
    if (status) return status;
    for (i = 0; i < BATCH * M * N; ++i)
        if (is_float ? fc[i] != (float)(int32_t)expected[i] : (uint32_t)c[i] != expected[i])
            return -1;
    return 0;
}

/* One product described once (gpumatmul_gemm_desc) and run on host memory, then on device
 * memory from the context's pool: 2x3 @ 3x2. Pool memory is for its own device only, so the
 * copies run on the context's device 0 (gpumatmul_* calls switch by themselves). */
static void check_described(gpumatmul_context *ctx) {
    const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
    const float expected[4] = {4, 5, 10, 11};
    const gpumatmul_gemm_desc desc = {GPUMATMUL_BACKEND_AUTO, GPUMATMUL_FLOAT32,
                                      GPUMATMUL_PRECISION_HIGHEST, 0, 0, 2, 2, 3, 1,
                                      3, 0, 2, 0, 2, 0};
    float c[4] = {0};
    void *da = NULL, *db = NULL, *dc = NULL, *none = &none;
    int caller;
    check(gpumatmul_gemm_host(ctx, &desc, a, b, c) == GPUMATMUL_SUCCESS &&
              memcmp(c, expected, sizeof c) == 0,
          "a described product on host memory");
    memset(c, 0, sizeof c);
    caller = current_device();
    check(!cuda_set_device(0) && !gpumatmul_device_alloc(ctx, sizeof a, NULL, &da) &&
              !gpumatmul_device_alloc(ctx, sizeof b, NULL, &db) &&
              !gpumatmul_device_alloc(ctx, sizeof c, NULL, &dc) &&
              !cuda_memcpy(da, a, sizeof a, CUDA_MEMCPY_DEFAULT) &&
              !cuda_memcpy(db, b, sizeof b, CUDA_MEMCPY_DEFAULT) &&
              !gpumatmul_gemm_device(ctx, &desc, da, db, dc, NULL) &&
              !cuda_memcpy(c, dc, sizeof c, CUDA_MEMCPY_DEFAULT) &&
              memcmp(c, expected, sizeof c) == 0,
          "a described product on device memory from gpumatmul_device_alloc");
    check(!cuda_set_device(caller), "back on the caller's device");
    memset(c, 0, sizeof c);
    check(!cuda_set_device(0) && !gpumatmul_device_free(ctx, dc, NULL) &&
              !gpumatmul_gemm_device_new(ctx, &desc, da, db, NULL, &dc) && dc &&
              !cuda_memcpy(c, dc, sizeof c, CUDA_MEMCPY_DEFAULT) &&
              memcmp(c, expected, sizeof c) == 0 && !cuda_set_device(caller),
          "a described product into a new C (gpumatmul_gemm_device_new)");
    check(!gpumatmul_device_free(ctx, da, NULL) && !gpumatmul_device_free(ctx, db, NULL) &&
              !gpumatmul_device_free(ctx, dc, NULL) && !gpumatmul_device_free(ctx, NULL, NULL),
          "device memory back to the pool; NULL is a no-op");
    check(gpumatmul_device_alloc(ctx, 0, NULL, &none) == GPUMATMUL_SUCCESS && none == NULL,
          "zero bytes are NULL");
}

/* Host products streamed in tiles (a 64 KiB device memory limit cuts a 96x300 @ 300x80
 * product into many) on one GPU and, with two, on both: small integers, so every product is
 * exact in float32 and compared element by element. Then the options' and contexts' errors. */
static void check_streamed(gpumatmul_context *ctx, int count) {
    enum { M = 96, K = 300, N = 80 };
    static float a[M * K], b[K * N], c[M * N], expected[M * N];
    const gpumatmul_gemm_desc desc = {GPUMATMUL_BACKEND_AUTO, GPUMATMUL_FLOAT32,
                                      GPUMATMUL_PRECISION_HIGHEST, 0, 0, M, N, K, 1,
                                      K, 0, N, 0, N, 0};
    gpumatmul_host_options options = {sizeof(gpumatmul_host_options), 64 << 10};
    gpumatmul_context *both[2] = {ctx, NULL};
    int i, j, kk;
    for (i = 0; i < M * K; ++i) a[i] = (float)(i % 7 - 3);
    for (i = 0; i < K * N; ++i) b[i] = (float)(i % 5 - 2);
    for (i = 0; i < M; ++i)
        for (j = 0; j < N; ++j) {
            float sum = 0;
            for (kk = 0; kk < K; ++kk) sum += a[i * K + kk] * b[kk * N + j];
            expected[i * N + j] = sum;
        }
    check(gpumatmul_gemm_host_multi(&ctx, 1, &desc, a, b, c, &options) == GPUMATMUL_SUCCESS &&
              memcmp(c, expected, sizeof c) == 0,
          "a product streamed in tiles under a 64 KiB device memory limit");
    if (count > 1 && gpumatmul_create(&both[1], 1) == GPUMATMUL_SUCCESS) {
        memset(c, 0, sizeof c);
        check(gpumatmul_gemm_host_multi(both, 2, &desc, a, b, c, &options) == GPUMATMUL_SUCCESS &&
                  memcmp(c, expected, sizeof c) == 0,
              "the same product shared between two GPUs");
        check(gpumatmul_destroy(both[1]) == GPUMATMUL_SUCCESS, "destroy the second context");
    }
    both[1] = ctx;
    check(fails_with(gpumatmul_gemm_host_multi(both, 2, &desc, a, b, c, NULL),
                     GPUMATMUL_ERROR_INVALID_ARGUMENT, "both on device 0"),
          "one GPU given twice is rejected");
    options.struct_size = 0;
    check(fails_with(gpumatmul_gemm_host_multi(&ctx, 1, &desc, a, b, c, &options),
                     GPUMATMUL_ERROR_INVALID_ARGUMENT, "struct_size"),
          "options without their size are rejected");
    options.struct_size = sizeof options;
    options.device_memory_limit = 1024;
    check(fails_with(gpumatmul_gemm_host_multi(&ctx, 1, &desc, a, b, c, &options),
                     GPUMATMUL_ERROR_OUT_OF_MEMORY, "one row of A, one column of B"),
          "a limit below one row and column is out of memory, saying so");
}

static void check_products(gpumatmul_context *ctx) {
    check(multiply_and_check(ctx, GPUMATMUL_BACKEND_TILED), "tiled 2x3 @ (4x3)^T");
    check(multiply_and_check(ctx, GPUMATMUL_BACKEND_CUBLAS), "cublas 2x3 @ (4x3)^T");
    check(broadcast_batch(ctx, GPUMATMUL_BACKEND_TILED, GPUMATMUL_FLOAT32) == 0,
          "tiled float32, 3 batches, A broadcast");
    check(broadcast_batch(ctx, GPUMATMUL_BACKEND_CUBLAS, GPUMATMUL_FLOAT32) == 0,
          "cublas float32, 3 batches, A broadcast");
    check(broadcast_batch(ctx, GPUMATMUL_BACKEND_TILED, GPUMATMUL_INT32) == 0,
          "tiled int32, 3 batches, A broadcast, wrapping around");
    check(broadcast_batch(ctx, GPUMATMUL_BACKEND_AUTO, GPUMATMUL_INT32) == 0,
          "auto int32 (the tiled kernel), 3 batches, A broadcast");
    check(broadcast_batch(ctx, GPUMATMUL_BACKEND_CUBLAS, GPUMATMUL_INT32) ==
              GPUMATMUL_ERROR_NOT_SUPPORTED,
          "cublas int32 is not supported");
}

/* Threads multiplying at once with one context, each its own inputs (they depend on the
 * thread, so a product computed from another thread's data shows), on both backends so
 * that both a worker's stream and its cuBLAS handle are contended. */
enum { THREADS = 8, ROUNDS = 25, TM = 16, TN = 16, TK = 16, TBATCH = 4 };

struct thread_work {
    gpumatmul_context *ctx;
    int index;
    int device;                     /* made current before multiplying; -1: none chosen */
    int failed, wrong, device_moved; /* counts, over the rounds */
    char message[1024];             /* the first failure's */
};

static void *multiply_in_thread(void *argument) {
    struct thread_work *w = argument;
    float a[TBATCH * TM * TK], b[TBATCH * TK * TN], c[TBATCH * TM * TN], expected;
    int before, round, i, j, kk, z;
    if (w->device >= 0) cuda_set_device(w->device);
    before = current_device();
    for (round = 0; round < ROUNDS; ++round) {
        const gpumatmul_backend backend =
            (round + w->index) % 2 ? GPUMATMUL_BACKEND_CUBLAS : GPUMATMUL_BACKEND_TILED;
        gpumatmul_status status;
        /* Small integers: every product is exact in float32. */
        for (i = 0; i < TBATCH * TM * TK; ++i) a[i] = (float)((i + 7 * w->index + round) % 9 - 4);
        for (i = 0; i < TBATCH * TK * TN; ++i) b[i] = (float)((3 * i + w->index + round) % 7 - 3);
        status = gpumatmul_matmul_strided_batched_host(
            w->ctx, backend, GPUMATMUL_FLOAT32, GPUMATMUL_PRECISION_HIGHEST, 0, 0, TM, TN, TK,
            TBATCH, a, TK, TM * TK, b, TN, TK * TN, c, TN, TM * TN);
        if (status) {
            if (!w->failed++)
                snprintf(w->message, sizeof w->message, "%s: %s", gpumatmul_status_name(status),
                         gpumatmul_last_error_message());
            continue;
        }
        for (z = 0; z < TBATCH; ++z)
            for (i = 0; i < TM; ++i)
                for (j = 0; j < TN; ++j) {
                    for (expected = 0, kk = 0; kk < TK; ++kk)
                        expected += a[(z * TM + i) * TK + kk] * b[(z * TK + kk) * TN + j];
                    w->wrong += c[(z * TM + i) * TN + j] != expected;
                }
        w->device_moved += current_device() != before;
    }
    return NULL;
}

/* With two GPUs or more, half the threads choose device 1 first: the context's device 0
 * must be switched to and back in those. */
static void check_threads(gpumatmul_context *ctx, int device_count) {
    pthread_t threads[THREADS];
    struct thread_work work[THREADS];
    int t, started, failed = 0, wrong = 0, moved = 0;
    for (started = 0; started < THREADS; ++started) {
        memset(&work[started], 0, sizeof work[started]);
        work[started].ctx = ctx;
        work[started].index = started;
        work[started].device = device_count > 1 && started % 2 ? 1 : -1;
        if (pthread_create(&threads[started], NULL, multiply_in_thread, &work[started])) break;
    }
    for (t = 0; t < started; ++t) {
        pthread_join(threads[t], NULL);
        failed += work[t].failed;
        wrong += work[t].wrong;
        moved += work[t].device_moved;
        if (work[t].failed) printf("  thread %d: %s\n", t, work[t].message);
    }
    if (wrong) printf("  %d wrong elements\n", wrong);
    check(started == THREADS && failed == 0 && wrong == 0,
          "8 threads multiply at once with one context (25 batched products each, tiled and "
          "cublas), each getting its own product");
    check(started == THREADS && moved == 0,
          device_count > 1 ? "each thread stays on its current device (device 1 in half of them)"
                           : "each thread stays on its current device (one GPU: no switch)");
}

int main(void) {
    gpumatmul_context *ctx = NULL;
    gpumatmul_status status;
    size_t free_bytes, total_bytes;
    int count = 0, caller_device = 0;

    check(gpumatmul_version() == GPUMATMUL_VERSION, "library version matches the header");
    check(gpumatmul_cuda_major() == 12 || gpumatmul_cuda_major() == 13, "CUDA major is 12 or 13");
    check(strcmp(gpumatmul_status_name(GPUMATMUL_ERROR_NO_DRIVER), "GPUMATMUL_ERROR_NO_DRIVER") == 0 &&
              strcmp(gpumatmul_status_name((gpumatmul_status)99), "GPUMATMUL_STATUS_UNKNOWN") == 0,
          "status names");
    check_images();
    check_tables();
    check_null_outputs();
    check(gpumatmul_destroy(NULL) == GPUMATMUL_SUCCESS, "destroying NULL is a no-op");
    check(find_cudart(), "cudaGetDevice, cudaSetDevice and cudaMemcpy are found in the loaded libcudart");

    /* With two GPUs or more the caller works on device 1 and the context on device 0, so
     * each call switches devices, and must switch back. */
    if (gpumatmul_device_count(&count) == GPUMATMUL_SUCCESS && count > 1 &&
        cuda_set_device(1) == 0)
        caller_device = 1;
    status = gpumatmul_create(&ctx, 0);
    printf("gpumatmul_create: %s %s\n", gpumatmul_status_name(status),
           status ? gpumatmul_last_error_message() : "");
    if (status != GPUMATMUL_SUCCESS) {
        check(status == GPUMATMUL_ERROR_NO_DRIVER || status == GPUMATMUL_ERROR_NO_DEVICE,
              "without a GPU, create reports no driver or no device");
        check(ctx == NULL, "no context on failure");
        check(strlen(gpumatmul_last_error_message()) > 0, "the failure has a message");
    }
    check_arguments(ctx);
    if (status == GPUMATMUL_SUCCESS) {
        check(gpumatmul_device_count(&count) == GPUMATMUL_SUCCESS && count > 0, "a GPU is counted");
        printf("caller on device %d, context on device 0 (%d GPU(s))\n", caller_device, count);
        check(current_device() == caller_device, "create leaves the caller's current device");
        check_products(ctx);
        check_described(ctx);
        check_streamed(ctx, count);
        check(current_device() == caller_device, "products leave the caller's current device");
        check(gpumatmul_device_memory(0, &free_bytes, &total_bytes) == GPUMATMUL_SUCCESS &&
                  free_bytes <= total_bytes && total_bytes > 0 && current_device() == caller_device,
              "device 0's memory, leaving the caller's current device");
        check_threads(ctx, count);
        check(gpumatmul_destroy(ctx) == GPUMATMUL_SUCCESS, "destroy");
        check(current_device() == caller_device, "destroy leaves the caller's current device");
    }
    printf("result: %s\n", status == GPUMATMUL_SUCCESS ? "gpu" : gpumatmul_status_name(status));
    return failures != 0;
}
