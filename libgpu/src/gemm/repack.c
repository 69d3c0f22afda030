/* Operands repacked for the kernels that cannot read them as they are
 * (takes_repacked): the ones that read k-major operands only, TF32 and 1-byte
 * wgmma (PARAMS_TMA_K_MAJOR), which cannot transpose, and gemm_imma
 * (PARAMS_K_MAJOR), whose byte fragments ldmatrix cannot transpose; and the
 * TMA ones (PARAMS_TMA, PARAMS_TMA_K_MAJOR), which read only operands TMA
 * describes. For a k-major family an operand contiguous along M or N is
 * transposed into a workspace from the context's pool, so that a @ b runs on
 * tensor cores as a @ b.T does, instead of on a kernel for every layout; for
 * a TMA family one TMA cannot read (a pointer off 16 bytes, rows not of whole
 * 16 bytes) is copied there as it is stored, its rows whole 16 bytes. So
 * Hopper runs every float16, bfloat16, TF32 and 1-byte product on wgmma. A
 * copy costs a read and a write of the operand: a few percent of the product
 * from n = 4096 up (docs/kernel-log.md, step 7). */
#include "gemm/gemm.h"
#include "gemm_transpose.h"

const struct transpose_kernel transpose_kernels[TRANSPOSE_KERNEL_COUNT] = {
    {1, GEMM_TRANSPOSE_TILE_B8},
    {4, GEMM_TRANSPOSE_TILE_B32},
};

/* The index in transpose_kernels of `size`; -1 if no transpose moves it. */
static int transpose_index(size_t size) {
    int i;
    for (i = 0; i < TRANSPOSE_KERNEL_COUNT; ++i)
        if (transpose_kernels[i].size == size) return i;
    return -1;
}

/* One operand: X(i, kk) for i < rows (M for A, N for B), stored as `l` at
 * `data`, contiguous along k or not. */
struct operand {
    gpumatmul_dtype dtype; /* its element type (operand_dtype) */
    const void *data;
    const struct layout *l;
    int64_t rows;
    int k_major;
};

static void operands_of(const struct gemm *g, struct operand x[2]) {
    x[0] = (struct operand){operand_dtype(g->dtype, 0), g->a, &g->la, g->m, !g->trans_a};
    x[1] = (struct operand){operand_dtype(g->dtype, 1), g->b, &g->lb, g->n, g->trans_b};
}

/* Whether operands for kernels of these params are copied, and whether the copy is x
 * transposed: k-major params take x only contiguous along k, TMA ones only as TMA
 * describes it. */
static int needs_copy(const struct gemm *g, enum kernel_params params, const struct operand *x) {
    return (params_k_major_only(params) && !x->k_major) ||
           (params_read_tma(params) && !tma_describes(g, x->data, x->l));
}
static int transposes(enum kernel_params params, const struct operand *x) {
    return params_k_major_only(params) && !x->k_major;
}

/* The layout of x's copy for these params: `rows` rows of k (transposed), else as
 * x is stored; rows of whole 16 bytes. */
static struct layout copy_layout(const struct gemm *g, enum kernel_params params,
                                 const struct operand *x) {
    const size_t size = dtype_infos[g->dtype].size;
    const int64_t rows = transposes(params, x) ? x->rows : x->l->rows;
    const int64_t cols = transposes(params, x) ? g->k : x->l->cols, ld = whole_16_bytes(cols, size);
    return (struct layout){rows, cols, ld, stored_count(x->l, g->batch) == 1 ? 0 : rows * ld};
}

/* Elements of x's copy for these params (0 if it needs none). */
static int64_t copy_elements(const struct gemm *g, enum kernel_params params,
                             const struct operand *x) {
    const struct layout l = copy_layout(g, params, x);
    return needs_copy(g, params, x) ? stored_count(x->l, g->batch) * l.rows * l.ld : 0;
}

int takes_repacked(int f) {
    return params_k_major_only(kernel_families[f].params) || params_read_tma(kernel_families[f].params);
}

int repackable(const struct gemm *g, int f) {
    const size_t size = dtype_infos[g->dtype].size;
    const enum kernel_params params = kernel_families[f].params;
    struct operand x[2];
    int64_t elements = 0;
    int i;
    /* The copies' sizes must fit TMA's coordinates too. */
    if (params_read_tma(params) && (g->m > TMA_EXTENT_MAX || g->n > TMA_EXTENT_MAX || g->k > TMA_EXTENT_MAX))
        return 0;
    operands_of(g, x);
    for (i = 0; i < 2; ++i) {
        /* The transpose's grid has a block row per tile of stored rows (k of them). */
        if (transposes(params, &x[i]) &&
            (transpose_index(size) < 0 ||
             g->k > MAX_GRID_Y * transpose_kernels[transpose_index(size)].tile))
            return 0;
        elements += copy_elements(g, params, &x[i]);
    }
    return elements > 0 && elements <= g->workspace_max / (int64_t)size;
}

/* x copied as it is stored into `copy`, laid out as l, by the copy kernel. */
static gpumatmul_status copy_as_stored(gpumatmul_context *ctx, const struct gemm *g,
                                       const struct operand *x, void *copy,
                                       const struct layout *l, cudaStream_t stream) {
    const int64_t size = (int64_t)dtype_infos[g->dtype].size;
    gpumatmul_array_desc src = {x->dtype, 3, {0}, {0}}, dst = {x->dtype, 3, {0}, {0}};
    src.shape[0] = dst.shape[0] = stored_count(x->l, g->batch);
    src.shape[1] = dst.shape[1] = l->rows;
    src.shape[2] = dst.shape[2] = l->cols;
    src.strides[0] = x->l->stride * size, src.strides[1] = x->l->ld * size, src.strides[2] = size;
    dst.strides[0] = l->rows * l->ld * size, dst.strides[1] = l->ld * size, dst.strides[2] = size;
    return convert_array(ctx, &dst, copy, &src, x->data, stream);
}

/* x copied into `copy` for these params (transposed, or as it is), laid out as
 * *layout. */
static gpumatmul_status repack(gpumatmul_context *ctx, const struct gemm *g,
                               enum kernel_params params, const struct operand *x, void *copy,
                               struct layout *layout, cudaStream_t stream) {
    const size_t size = dtype_infos[g->dtype].size;
    const int64_t stored = stored_count(x->l, g->batch);
    const int kernel = transpose_index(size);
    const int64_t tile = transpose_kernels[kernel].tile;
    int64_t z;
    *layout = copy_layout(g, params, x);
    if (!transposes(params, x)) return copy_as_stored(ctx, g, x, copy, layout, stream);
    /* As stored, x is k rows of `rows` elements: the copy is `rows` rows of k. */
    for (z = 0; z < stored; z += MAX_GRID_Z) {
        const struct transpose_args args = {
            .rows = g->k, .cols = x->rows, .in = at(x->data, z * x->l->stride, size),
            .ld = x->l->ld, .in_batch_stride = x->l->stride,
            .out = at(copy, z * x->rows * layout->ld, size), .out_ld = layout->ld,
            .out_batch_stride = x->rows * layout->ld};
        void *params_of_launch[] = {(void *)&args};
        const CUresult result = ctx->driver.launch_kernel(
            ctx->kernels->transpose[kernel], (unsigned)ceil_div(x->rows, tile),
            (unsigned)ceil_div(g->k, tile), (unsigned)min64(stored - z, MAX_GRID_Z),
            GEMM_TRANSPOSE_THREADS, 1, 1, 0, (CUstream)stream, params_of_launch, NULL);
        if (result != CUDA_SUCCESS)
            return check_driver(&ctx->driver, result, "cuLaunchKernel (gemm_transpose)");
    }
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status repack_operands(gpumatmul_context *ctx, const struct gemm *g,
                                 enum kernel_params params, struct gemm *packed,
                                 void **workspace, cudaStream_t stream) {
    const size_t size = dtype_infos[g->dtype].size;
    struct operand x[2];
    void *copy;
    int64_t bytes;
    int i;
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    operands_of(g, x);
    *packed = *g, *workspace = NULL;
    bytes = (int64_t)size * (copy_elements(g, params, &x[0]) + copy_elements(g, params, &x[1]));
    if (bytes == 0) return GPUMATMUL_SUCCESS;
    if ((status = workspace_alloc(ctx, (size_t)bytes, stream, "repacked operands", workspace))) {
        *workspace = NULL;
        return status;
    }
    for (copy = *workspace, i = 0; i < 2 && !status; ++i) {
        if (!needs_copy(g, params, &x[i])) continue;
        status = repack(ctx, g, params, &x[i], copy, i == 0 ? &packed->la : &packed->lb, stream);
        *(i == 0 ? &packed->a : &packed->b) = copy;
        copy = at(copy, copy_elements(g, params, &x[i]), size);
    }
    if (params_k_major_only(params)) packed->trans_a = 0, packed->trans_b = 1; /* along k now */
    return status;
}

gpumatmul_status repacked_gemm(gpumatmul_context *ctx, const struct gemm *g, int f,
                               cudaStream_t stream) {
    struct gemm packed;
    void *workspace;
    gpumatmul_status status =
        repack_operands(ctx, g, kernel_families[f].params, &packed, &workspace, stream);
    if (!status) status = kernel_gemm(ctx, &packed, f, stream);
    return workspace_free(workspace, stream, status);
}
