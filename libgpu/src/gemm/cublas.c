/* The product by cuBLAS: one strided-batched call for the whole batch. */
#include "gemm/gemm.h"

/* `worker` is the calling call's own: no other call uses its handle meanwhile. */
gpumatmul_status cublas_gemm(struct worker *worker, const struct gemm *g,
                                    cudaStream_t stream) {
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a
     * row-major matrix read as column-major is its transpose: so swap the
     * operands and keep the flags. */
    const cublasOperation_t op_a = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const struct dtype_info *t = &dtype_infos[g->dtype];
    const struct cublas_compute *compute = &t->cublas[g->precision];
    static const double zero[2] = {0.0, 0.0}; /* beta: 0 in every scale type, else 1 */
    cublasHandle_t cublas;
    gpumatmul_status status;
    if ((status = worker_cublas(worker, &cublas)) ||
        (status = check_cublas(cublasSetStream(cublas, stream), "cublasSetStream")))
        return status;
    return check_cublas(
        cublasGemmStridedBatchedEx_64(cublas, op_b, op_a, g->n, g->m, g->k, compute->one,
                                      g->b, t->cuda_type, g->lb.ld, g->lb.stride,
                                      g->a, t->cuda_type, g->la.ld, g->la.stride,
                                      g->accumulate ? compute->one : zero,
                                      g->c, t->cuda_type, g->lc.ld, g->lc.stride, g->batch,
                                      compute->type, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx_64");
}
