/* The product by cuBLASLt, for the dtypes cuBLAS's GEMM entry points lack (the
 * table's by_cublaslt): int8, whose sums its IMMA kernels keep in int32 (NumPy's
 * int8 product is their low byte), and float8_e4m3fn into float32. Those kernels
 * read "TN" operands alone: column-major A transposed and B not, which for
 * row-major C = A B, computed as column-major C^T = B^T A^T (cublas.c), is A and
 * B both contiguous along k; and at 16-byte addresses with rows of whole 16
 * bytes, as TMA reads them, so repack_operands' PARAMS_TMA_K_MAJOR copies are
 * what they take. */
#include <stdint.h>

#include "gemm/gemm.h"

/* NVIDIA's advice for Hopper: up to 32 MiB lets cuBLASLt choose its fastest kernels. */
#define LT_WORKSPACE_MAX ((size_t)32 << 20)

int cublaslt_takes(const struct gemm *g, gpumatmul_dtype dtype, int arch) {
    const struct by_cublaslt *lt = &dtype_infos[dtype].cublaslt;
    return !lt->used || (arch >= lt->min_arch && g->n % lt->n_multiple == 0 &&
                         g->k % lt->k_multiple == 0);
}

/* Whether cuBLASLt writes C where it is: in C's own dtype, at a 16-byte address,
 * with rows (and matrices) of whole 16 bytes. g->accumulate is never set here:
 * the host path adds into C only where cuBLAS's scale type is the data type
 * (host/tiles.c), which int8's and FP8's are not. */
static int writes_c_in_place(const struct gemm *g) {
    const struct by_cublaslt *lt = &dtype_infos[g->dtype].cublaslt;
    const int64_t size = (int64_t)dtype_infos[lt->c_dtype].size;
    return lt->c_dtype == dtype_infos[g->dtype].c_dtype && (uintptr_t)g->c % 16 == 0 &&
           g->lc.ld * size % 16 == 0 && (g->batch <= 1 || g->lc.stride * size % 16 == 0);
}

/* What one cuBLASLt call is described by; NULL where not made. */
struct lt_call {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t layouts[3]; /* cuBLASLt's A, B and C: our B, A and C */
    cublasLtMatmulPreference_t preference;
};

static void release(struct lt_call *call) {
    int i;
    if (call->preference) cublasLtMatmulPreferenceDestroy(call->preference);
    for (i = 0; i < 3; ++i)
        if (call->layouts[i]) cublasLtMatrixLayoutDestroy(call->layouts[i]);
    if (call->desc) cublasLtMatmulDescDestroy(call->desc);
}

/* A column-major rows x cols matrix of `type`, `batch` of them `stride` elements apart. */
static gpumatmul_status layout(cublasLtMatrixLayout_t *made, cudaDataType type, int64_t rows,
                               int64_t cols, int64_t ld, int32_t batch, int64_t stride) {
    gpumatmul_status status =
        check_cublas(cublasLtMatrixLayoutCreate(made, type, (uint64_t)rows, (uint64_t)cols, ld),
                     "cublasLtMatrixLayoutCreate");
    if (!status && batch > 1)
        status = check_cublas(
            cublasLtMatrixLayoutSetAttribute(*made, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                             sizeof batch),
            "cublasLtMatrixLayoutSetAttribute (batch count)");
    if (!status && batch > 1)
        status = check_cublas(
            cublasLtMatrixLayoutSetAttribute(*made, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof stride),
            "cublasLtMatrixLayoutSetAttribute (batch stride)");
    return status;
}

/* The description of p's product (operands k-major) of `batch` matrices into C laid out as lc. */
static gpumatmul_status describe(struct lt_call *call, const struct gemm *p,
                                 const struct layout *lc, int32_t batch) {
    const struct dtype_info *t = &dtype_infos[p->dtype];
    const struct cublas_compute *compute = &t->cublas[p->precision];
    const int32_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
    const size_t workspace = LT_WORKSPACE_MAX;
    gpumatmul_status status;
    if ((status = check_cublas(cublasLtMatmulDescCreate(&call->desc, compute->type,
                                                        compute->scale_type),
                               "cublasLtMatmulDescCreate")) ||
        (status = check_cublas(cublasLtMatmulDescSetAttribute(call->desc,
                                                              CUBLASLT_MATMUL_DESC_TRANSA,
                                                              &transposed, sizeof transposed),
                               "cublasLtMatmulDescSetAttribute (transa)")) ||
        (status = check_cublas(cublasLtMatmulDescSetAttribute(call->desc,
                                                              CUBLASLT_MATMUL_DESC_TRANSB, &plain,
                                                              sizeof plain),
                               "cublasLtMatmulDescSetAttribute (transb)")) ||
        (status = layout(&call->layouts[0], dtype_infos[operand_dtype(p->dtype, 1)].cuda_type,
                         p->k, p->n, p->lb.ld, batch, p->lb.stride)) ||
        (status = layout(&call->layouts[1], dtype_infos[operand_dtype(p->dtype, 0)].cuda_type,
                         p->k, p->m, p->la.ld, batch, p->la.stride)) ||
        (status = layout(&call->layouts[2], t->cublaslt.c_type, p->n, p->m, lc->ld, batch,
                         lc->stride)) ||
        (status = check_cublas(cublasLtMatmulPreferenceCreate(&call->preference),
                               "cublasLtMatmulPreferenceCreate")))
        return status;
    return check_cublas(
        cublasLtMatmulPreferenceSetAttribute(call->preference,
                                             CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                             sizeof workspace),
        "cublasLtMatmulPreferenceSetAttribute (workspace)");
}

/* cuBLASLt's best kernel for the call; NOT_SUPPORTED if it has none. */
static gpumatmul_status choose(cublasLtHandle_t handle, const struct lt_call *call,
                               const struct gemm *g, cublasLtMatmulHeuristicResult_t *chosen) {
    int found = 0;
    const cublasStatus_t error = cublasLtMatmulAlgoGetHeuristic(
        handle, call->desc, call->layouts[0], call->layouts[1], call->layouts[2],
        call->layouts[2], call->preference, 1, chosen, &found);
    if (error == CUBLAS_STATUS_NOT_SUPPORTED || (error == CUBLAS_STATUS_SUCCESS && found == 0))
        return set_error(GPUMATMUL_ERROR_NOT_SUPPORTED,
                         "cuBLASLt has no kernel for this %s product (m=%lld n=%lld k=%lld); use "
                         "backend tiled or auto",
                         dtype_infos[g->dtype].name, (long long)g->m, (long long)g->n,
                         (long long)g->k);
    return check_cublas(error, "cublasLtMatmulAlgoGetHeuristic");
}

/* `batch` matrices of p (operands k-major) from matrix z on, into c laid out as lc. */
static gpumatmul_status matmul(gpumatmul_context *ctx, cublasLtHandle_t handle,
                               const struct gemm *p, int64_t z, int32_t batch, void *c,
                               const struct layout *lc, cudaStream_t stream) {
    const struct dtype_info *t = &dtype_infos[p->dtype];
    const size_t size = t->size, c_size = dtype_infos[t->cublaslt.c_dtype].size;
    static const double zero[2] = {0.0, 0.0};
    struct lt_call call = {NULL, {NULL, NULL, NULL}, NULL};
    cublasLtMatmulHeuristicResult_t chosen;
    void *workspace = NULL;
    gpumatmul_status status = describe(&call, p, lc, batch);
    if (!status) status = choose(handle, &call, p, &chosen);
    if (!status && chosen.workspaceSize > 0)
        status = workspace_alloc(ctx, chosen.workspaceSize, stream, "cuBLASLt's workspace",
                                 &workspace);
    if (!status)
        status = check_cublas(
            cublasLtMatmul(handle, call.desc, t->cublas[p->precision].one,
                           at(p->b, z * p->lb.stride, size), call.layouts[0],
                           at(p->a, z * p->la.stride, size), call.layouts[1], zero,
                           at(c, z * lc->stride, c_size), call.layouts[2],
                           at(c, z * lc->stride, c_size), call.layouts[2], &chosen.algo,
                           workspace, chosen.workspaceSize, stream),
            "cublasLtMatmul");
    release(&call);
    return workspace_free(workspace, stream, status);
}

/* Converts the product, written into `written` laid out as `from` in cuBLASLt's
 * C dtype, into C. */
static gpumatmul_status convert_into_c(gpumatmul_context *ctx, const struct gemm *g,
                                       const void *written, const struct layout *from,
                                       cudaStream_t stream) {
    const gpumatmul_dtype lt = dtype_infos[g->dtype].cublaslt.c_dtype;
    const gpumatmul_dtype to = dtype_infos[g->dtype].c_dtype;
    const int64_t lt_size = (int64_t)dtype_infos[lt].size, size = (int64_t)dtype_infos[to].size;
    const gpumatmul_array_desc src = {lt, 3, {g->batch, g->m, g->n},
                                      {from->stride * lt_size, from->ld * lt_size, lt_size}};
    const gpumatmul_array_desc dst = {to, 3, {g->batch, g->m, g->n},
                                      {g->lc.stride * size, g->lc.ld * size, size}};
    return convert_array(ctx, &dst, g->c, &src, written, stream);
}

gpumatmul_status cublaslt_gemm(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                               cudaStream_t stream) {
    const size_t c_size = dtype_infos[dtype_infos[g->dtype].cublaslt.c_dtype].size;
    const int in_place = writes_c_in_place(g);
    const int64_t ld = whole_16_bytes(g->n, c_size);
    struct layout lc = in_place ? g->lc : (struct layout){g->m, g->n, ld, g->m * ld};
    struct gemm packed;
    cublasLtHandle_t handle;
    void *copies = NULL, *c = in_place ? g->c : NULL;
    int64_t z;
    gpumatmul_status status = worker_cublaslt(worker, &handle);
    if (!status) status = repack_operands(ctx, g, PARAMS_TMA_K_MAJOR, &packed, &copies, stream);
    if (!status && !in_place &&
        (status = workspace_alloc(ctx, (size_t)(g->batch * g->m * ld) * c_size, stream,
                                  "cuBLASLt's C", &c)))
        c = NULL;
    /* The batch count is a 32-bit attribute. */
    for (z = 0; z < g->batch && !status; z += INT32_MAX)
        status = matmul(ctx, handle, &packed, z, (int32_t)min64(g->batch - z, INT32_MAX), c, &lc,
                        stream);
    if (!in_place) {
        if (!status) status = convert_into_c(ctx, g, c, &lc, stream);
        status = workspace_free(c, stream, status);
    }
    return workspace_free(copies, stream, status);
}
