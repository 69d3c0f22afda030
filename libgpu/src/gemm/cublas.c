/* The product by cuBLAS: one strided-batched call for the whole batch (or
 * cuBLASLt's, cublas_lt.c, for the dtypes the table sends there). */
#include "gemm/gemm.h"

static int fits_int(int64_t x) { return x <= INT32_MAX; }

/* `worker` is the calling call's own: no other call uses its handle meanwhile. */
gpumatmul_status cublas_gemm(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                             cudaStream_t stream) {
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a
     * row-major matrix read as column-major is its transpose: so swap the
     * operands and keep the flags. */
    const cublasOperation_t op_a = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const struct dtype_info *t = &dtype_infos[g->dtype];
    const struct cublas_compute *compute = &t->cublas[g->precision];
    /* C's type is A's and B's but for float16 copies of FP8 operands into float32 C (widened.c). */
    const cudaDataType c_type = dtype_infos[g->c_dtype].cuda_type;
    static const double zero[2] = {0.0, 0.0}; /* beta: 0 in every scale type, else 1 */
    const void *beta = g->accumulate ? compute->one : zero;
    cublasHandle_t cublas;
    gpumatmul_status status;
    if (t->cublaslt.used) return cublaslt_gemm(ctx, worker, g, stream);
    if ((status = worker_cublas(worker, &cublas))) return status;
    if (worker->cublas_stream != stream) {
        if ((status = check_cublas(cublasSetStream(cublas, stream), "cublasSetStream")))
            return status;
        worker->cublas_stream = stream;
    }
    /* One matrix of 32-bit sizes: cublasGemmEx, which costs the host 1.7 us less a call
     * than the strided-batched 64-bit entry point (an H100, cuBLAS 13.1, 16 x 16). */
    if (g->batch == 1 && fits_int(g->m) && fits_int(g->n) && fits_int(g->k) &&
        fits_int(g->la.ld) && fits_int(g->lb.ld) && fits_int(g->lc.ld))
        return check_cublas(
            cublasGemmEx(cublas, op_b, op_a, (int)g->n, (int)g->m, (int)g->k, compute->one,
                         g->b, t->cuda_type, (int)g->lb.ld, g->a, t->cuda_type, (int)g->la.ld,
                         beta, g->c, c_type, (int)g->lc.ld, compute->type,
                         CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
    return check_cublas(
        cublasGemmStridedBatchedEx_64(cublas, op_b, op_a, g->n, g->m, g->k, compute->one,
                                      g->b, t->cuda_type, g->lb.ld, g->lb.stride,
                                      g->a, t->cuda_type, g->la.ld, g->la.stride, beta,
                                      g->c, c_type, g->lc.ld, g->lc.stride, g->batch,
                                      compute->type, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx_64");
}
