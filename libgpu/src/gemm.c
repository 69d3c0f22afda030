/* Matrix multiplication: argument checks, the two backends, and the host wrapper. */
#include <limits.h>
#include <string.h>

#include "internal.h"

const struct dtype_info dtype_infos[DTYPE_COUNT] = {
    [GPUMATMUL_FLOAT32] = {"float32", sizeof(float), "gemm_tiled_f32"},
    [GPUMATMUL_FLOAT64] = {"float64", sizeof(double), "gemm_tiled_f64"},
};

/* Must match libgpu/kernels/gemm_tiled.cu. */
enum { TILE_M = 64, TILE_N = 64, TILED_THREADS = 256, MAX_GRID_Y = 65535 };

/* The stored shape of an operand: op(X) is rows x cols, stored transposed if `trans`. */
static int64_t stored_cols(int trans, int64_t rows, int64_t cols) { return trans ? rows : cols; }
static int64_t stored_rows(int trans, int64_t rows, int64_t cols) { return trans ? cols : rows; }

static gpumatmul_status check_arguments(const gpumatmul_context *ctx, gpumatmul_backend backend,
                                        gpumatmul_dtype dtype, int trans_a, int trans_b,
                                        int64_t m, int64_t n, int64_t k, const void *a,
                                        int64_t lda, const void *b, int64_t ldb, const void *c,
                                        int64_t ldc) {
    const int64_t min_lda = stored_cols(trans_a, m, k), min_ldb = stored_cols(trans_b, k, n);
    if (!ctx) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context is NULL");
    if ((unsigned)dtype >= DTYPE_COUNT)
        return set_error(GPUMATMUL_ERROR_NOT_SUPPORTED, "dtype %d is not supported", (int)dtype);
    if (backend != GPUMATMUL_BACKEND_AUTO && backend != GPUMATMUL_BACKEND_TILED &&
        backend != GPUMATMUL_BACKEND_CUBLAS)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "backend %d does not exist", (int)backend);
    if (m < 0 || n < 0 || k < 0)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "negative size: m=%lld n=%lld k=%lld", (long long)m, (long long)n,
                         (long long)k);
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
        ldc > INT_MAX)
        return set_error(GPUMATMUL_ERROR_NOT_SUPPORTED,
                         "sizes and leading dimensions above 2^31-1 are not supported");
    if (lda < (min_lda > 1 ? min_lda : 1) || ldb < (min_ldb > 1 ? min_ldb : 1) ||
        ldc < (n > 1 ? n : 1))
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "leading dimension too small: lda=%lld (needs %lld), ldb=%lld (needs "
                         "%lld), ldc=%lld (needs %lld)",
                         (long long)lda, (long long)min_lda, (long long)ldb, (long long)min_ldb,
                         (long long)ldc, (long long)n);
    if ((m * k > 0 && !a) || (k * n > 0 && !b) || (m * n > 0 && !c))
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "a matrix pointer is NULL");
    return GPUMATMUL_SUCCESS;
}

static gpumatmul_status cublas_gemm(gpumatmul_context *ctx, gpumatmul_dtype dtype, int trans_a,
                                    int trans_b, int m, int n, int k, const void *a, int lda,
                                    const void *b, int ldb, void *c, int ldc, cudaStream_t stream) {
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a
     * row-major matrix read as column-major is its transpose: so swap the
     * operands and keep the flags. */
    const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    static const float one_f = 1.0f, zero_f = 0.0f;
    static const double one_d = 1.0, zero_d = 0.0;
    gpumatmul_status status;
    if ((status = check_cublas(cublasSetStream(ctx->cublas, stream), "cublasSetStream")))
        return status;
    if (dtype == GPUMATMUL_FLOAT32)
        return check_cublas(cublasSgemm(ctx->cublas, op_b, op_a, n, m, k, &one_f, b, ldb, a, lda,
                                        &zero_f, c, ldc), "cublasSgemm");
    return check_cublas(cublasDgemm(ctx->cublas, op_b, op_a, n, m, k, &one_d, b, ldb, a, lda,
                                    &zero_d, c, ldc), "cublasDgemm");
}

static gpumatmul_status tiled_gemm(gpumatmul_context *ctx, gpumatmul_dtype dtype, int trans_a,
                                   int trans_b, long long m, long long n, long long k,
                                   const void *a, long long lda, const void *b, long long ldb,
                                   void *c, long long ldc, cudaStream_t stream) {
    long long a_row_stride = trans_a ? 1 : lda, a_col_stride = trans_a ? lda : 1;
    long long b_row_stride = trans_b ? 1 : ldb, b_col_stride = trans_b ? ldb : 1;
    void *params[] = {&m, &n, &k, (void *)&a, &a_row_stride, &a_col_stride,
                      (void *)&b, &b_row_stride, &b_col_stride, &c, &ldc};
    const long long grid_x = (m + TILE_M - 1) / TILE_M, grid_y = (n + TILE_N - 1) / TILE_N;
    if (grid_y > MAX_GRID_Y)
        return set_error(GPUMATMUL_ERROR_NOT_SUPPORTED,
                         "the tiled backend handles n up to %d; use the cublas backend",
                         MAX_GRID_Y * TILE_N);
    return check_driver(&ctx->driver,
                        ctx->driver.launch_kernel(ctx->tiled_kernels[dtype], (unsigned)grid_x,
                                                  (unsigned)grid_y, 1, TILED_THREADS, 1, 1, 0,
                                                  (CUstream)stream, params, NULL),
                        dtype_infos[dtype].tiled_kernel);
}

gpumatmul_status gpumatmul_matmul_device(gpumatmul_context *ctx, gpumatmul_backend backend,
                                         gpumatmul_dtype dtype, int trans_a, int trans_b,
                                         int64_t m, int64_t n, int64_t k, const void *a,
                                         int64_t lda, const void *b, int64_t ldb, void *c,
                                         int64_t ldc, void *stream) {
    const cudaStream_t s = (cudaStream_t)stream;
    gpumatmul_status status =
        check_arguments(ctx, backend, dtype, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
    if (status || m == 0 || n == 0) return status;
    if ((status = check_cuda(cudaSetDevice(ctx->device), "cudaSetDevice"))) return status;
    if (k == 0) /* an empty sum: numpy gives zeros */
        return check_cuda(cudaMemset2DAsync(c, (size_t)ldc * dtype_infos[dtype].size, 0,
                                            (size_t)n * dtype_infos[dtype].size, (size_t)m, s),
                          "cudaMemset2DAsync");
    if (backend == GPUMATMUL_BACKEND_TILED)
        return tiled_gemm(ctx, dtype, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, s);
    return cublas_gemm(ctx, dtype, trans_a, trans_b, (int)m, (int)n, (int)k, a, (int)lda, b,
                       (int)ldb, c, (int)ldc, s);
}

/* Copies a host matrix of rows x cols (leading dimension ld) into packed device memory. */
static gpumatmul_status upload(void **device, const void *host, int64_t rows, int64_t cols,
                               int64_t ld, size_t element) {
    gpumatmul_status status;
    const size_t width = (size_t)cols * element;
    if ((status = check_cuda(cudaMalloc(device, width * (size_t)rows), "cudaMalloc"))) return status;
    return check_cuda(cudaMemcpy2D(*device, width, host, (size_t)ld * element, width, (size_t)rows,
                                   cudaMemcpyHostToDevice),
                      "cudaMemcpy2D (host to device)");
}

gpumatmul_status gpumatmul_matmul_host(gpumatmul_context *ctx, gpumatmul_backend backend,
                                       gpumatmul_dtype dtype, int trans_a, int trans_b,
                                       int64_t m, int64_t n, int64_t k, const void *a,
                                       int64_t lda, const void *b, int64_t ldb, void *c,
                                       int64_t ldc) {
    void *da = NULL, *db = NULL, *dc = NULL;
    size_t element;
    int64_t i;
    gpumatmul_status status =
        check_arguments(ctx, backend, dtype, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
    if (status || m == 0 || n == 0) return status;
    element = dtype_infos[dtype].size;
    if (k == 0) {
        for (i = 0; i < m; ++i) memset((char *)c + (size_t)(i * ldc) * element, 0, (size_t)n * element);
        return GPUMATMUL_SUCCESS;
    }
    if ((status = check_cuda(cudaSetDevice(ctx->device), "cudaSetDevice")) ||
        (status = upload(&da, a, stored_rows(trans_a, m, k), stored_cols(trans_a, m, k), lda,
                         element)) ||
        (status = upload(&db, b, stored_rows(trans_b, k, n), stored_cols(trans_b, k, n), ldb,
                         element)) ||
        (status = check_cuda(cudaMalloc(&dc, (size_t)(m * n) * element), "cudaMalloc")) ||
        (status = gpumatmul_matmul_device(ctx, backend, dtype, trans_a, trans_b, m, n, k, da,
                                          stored_cols(trans_a, m, k), db,
                                          stored_cols(trans_b, k, n), dc, n, NULL)))
        goto done;
    /* Synchronous on the legacy default stream: waits for the multiplication. */
    status = check_cuda(cudaMemcpy2D(c, (size_t)ldc * element, dc, (size_t)n * element,
                                     (size_t)n * element, (size_t)m, cudaMemcpyDeviceToHost),
                        "cudaMemcpy2D (device to host)");
done:
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return status;
}
