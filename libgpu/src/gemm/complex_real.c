/* Complex products as one real product. A row-major complex A (m x k) is, as
 * it lies in memory, a real m x 2k matrix (re, im interleaved, rows 2 * lda
 * reals apart), and C a real m x 2n one; with op(B) expanded into a real
 * 2k x 2n matrix E (complex_expand.h), A_real @ E is C_real: Re c =
 * sum(ar br - ai bi), Im c = sum(ar bi + ai br). The same 8mnk flops as the
 * complex product, at the rate of the real kernels (gemm_simt, TF32 wgmma,
 * gemm_dmma) instead of the generic tiled kernel's, which reached 54% and 22%
 * of cuBLAS's cgemm and zgemm on an H100 (docs/kernel-log.md, step 9).
 *
 * E is written transposed, contiguous along k (the layout every real kernel
 * reads, TF32 wgmma's too), into a workspace from the context's pool: once for
 * a broadcast B. An A stored transposed pairs its parts along m, not k, so its
 * real view is no operand: it is first copied untransposed beside E
 * (convert_array). The real product then runs by its own route among the
 * kernels (route.c: kernel_route; split k, repacking), which never takes a
 * complex product. Only from SHAPE_MEDIUM up: smaller products keep the
 * complex kernel, one launch, where launches rather than flops take the
 * time. */
#include "gemm/gemm.h"
#include "complex_expand.h"

/* Each complex case that runs as a real product, and the real case it runs
 * as: the dtype of its parts, at the precision that computes as the one asked
 * (TF32's rounding of the parts is TF32's rounding of the complex operands). */
const struct complex_plan complex_plans[COMPLEX_PLAN_COUNT] = {
    {GPUMATMUL_COMPLEX64, GPUMATMUL_PRECISION_HIGHEST, GPUMATMUL_FLOAT32,
     GPUMATMUL_PRECISION_HIGHEST},
    {GPUMATMUL_COMPLEX64, GPUMATMUL_PRECISION_TF32, GPUMATMUL_FLOAT32, GPUMATMUL_PRECISION_TF32},
    {GPUMATMUL_COMPLEX128, GPUMATMUL_PRECISION_HIGHEST, GPUMATMUL_FLOAT64,
     GPUMATMUL_PRECISION_HIGHEST},
};


static const struct complex_plan *plan_of(const struct gemm *g) {
    int i;
    for (i = 0; i < COMPLEX_PLAN_COUNT; ++i)
        if (complex_plans[i].dtype == g->dtype && complex_plans[i].precision == g->precision)
            return &complex_plans[i];
    return NULL;
}

/* The workspace: E^T for each stored B (2n rows of k complex elements), then
 * A's untransposed copy (m rows of k) for each stored A if A is transposed.
 * Rows of whole 16 bytes, as TMA wants; counts in complex elements. */
struct workspace {
    int64_t ld;       /* of E^T and of A's copy */
    int64_t e_matrix; /* elements from one E^T to the next */
    int64_t e, a;     /* elements of all E^T, of all A's copies (0: none) */
};

static int64_t packed_ld(const struct gemm *g) {
    return whole_16_bytes(g->k, dtype_infos[g->dtype].size);
}

/* The workspace's bytes, in double as the sizes' products are: E^T is twice
 * B, and may pass INT64_MAX where B does not. */
static double workspace_bytes(const struct gemm *g) {
    const double ld = (double)packed_ld(g);
    return (double)dtype_infos[g->dtype].size *
           ((double)stored_count(&g->lb, g->batch) * 2 * (double)g->n * ld +
            (g->trans_a ? (double)stored_count(&g->la, g->batch) * (double)g->m * ld : 0));
}

/* Only for a g that complex_as_real takes: its workspace fits in int64_t. */
static struct workspace workspace_of(const struct gemm *g) {
    struct workspace w;
    w.ld = packed_ld(g);
    w.e_matrix = 2 * g->n * w.ld;
    w.e = stored_count(&g->lb, g->batch) * w.e_matrix;
    w.a = g->trans_a ? stored_count(&g->la, g->batch) * g->m * w.ld : 0;
    return w;
}

/* Whether some family computes plan's real product of g on an image of
 * architecture `arch`, whatever its operands' alignment: one for k-major
 * operands by gemm_args (A's real view may be one TMA cannot read). */
static int real_family_runs(const struct gemm *g, const struct complex_plan *plan, int arch) {
    return kernel_family_for(g->backend, plan->real_dtype, plan->real_precision, arch,
                             1u << PARAMS_GEMM_ARGS | 1u << PARAMS_K_MAJOR,
                             1u << shape_class(g->m, 2 * g->n, 2 * g->k, g->batch)) >= 0;
}

int complex_as_real(const struct gemm *g, int arch) {
    const int64_t tile = COMPLEX_EXPAND_TILE;
    const struct complex_plan *plan = plan_of(g);
    return plan && real_family_runs(g, plan, arch) &&
           shape_class(g->m, g->n, g->k, g->batch) >= SHAPE_MEDIUM &&
           g->lb.rows <= MAX_GRID_Y * tile && ceil_div(g->lb.cols, tile) <= MAX_GRID_X &&
           workspace_bytes(g) <= (double)g->workspace_max;
}

/* E^T from B, a launch per MAX_GRID_Z stored matrices. */
static gpumatmul_status expand(gpumatmul_context *ctx, const struct gemm *g,
                               const struct workspace *w, void *e, cudaStream_t stream) {
    const size_t size = dtype_infos[g->dtype].size;
    const int64_t tile = COMPLEX_EXPAND_TILE, stored = stored_count(&g->lb, g->batch);
    int64_t z;
    for (z = 0; z < stored; z += MAX_GRID_Z) {
        const struct complex_expand_args args = {
            .rows = g->lb.rows, .cols = g->lb.cols, .in = at(g->b, z * g->lb.stride, size),
            .ld = g->lb.ld, .in_batch_stride = g->lb.stride, .out = at(e, z * w->e_matrix, size),
            .out_ld = w->ld, .out_batch_stride = w->e_matrix, .k_rows = !g->trans_b};
        void *params[] = {(void *)&args};
        const CUresult result = ctx->driver.launch_kernel(
            ctx->kernels->expand[g->dtype], (unsigned)ceil_div(g->lb.cols, tile),
            (unsigned)ceil_div(g->lb.rows, tile), (unsigned)min64(stored - z, MAX_GRID_Z),
            COMPLEX_EXPAND_TILE, COMPLEX_EXPAND_ROWS, 1, 0, (CUstream)stream, params, NULL);
        if (result != CUDA_SUCCESS)
            return check_driver(&ctx->driver, result, "cuLaunchKernel (complex_expand)");
    }
    return GPUMATMUL_SUCCESS;
}

/* A (stored k x m: op(A)[i][p] at p * lda + i) copied into `copy` as m x k,
 * rows w->ld apart, by the copy kernel. */
static gpumatmul_status untranspose_a(gpumatmul_context *ctx, const struct gemm *g,
                                      const struct workspace *w, void *copy,
                                      cudaStream_t stream) {
    const int64_t size = (int64_t)dtype_infos[g->dtype].size;
    gpumatmul_array_desc src = {g->dtype, 3, {0}, {0}}, dst = {g->dtype, 3, {0}, {0}};
    src.shape[0] = dst.shape[0] = stored_count(&g->la, g->batch);
    src.shape[1] = dst.shape[1] = g->m;
    src.shape[2] = dst.shape[2] = g->k;
    src.strides[0] = g->la.stride * size, src.strides[1] = size, src.strides[2] = g->la.ld * size;
    dst.strides[0] = g->m * w->ld * size, dst.strides[1] = w->ld * size, dst.strides[2] = size;
    return convert_array(ctx, &dst, copy, &src, g->a, stream);
}

/* g as the real product of A's real view (or its copy's) and E^T. */
static struct gemm real_product(const struct gemm *g, const struct workspace *w, void *e,
                                void *a_copy, int64_t used, int arch) {
    const struct complex_plan *plan = plan_of(g);
    struct gemm real = *g;
    real.dtype = real.c_dtype = plan->real_dtype, real.precision = plan->real_precision;
    real.automatic = 0; /* the complex product was chosen; this is how it runs */
    real.trans_a = 0, real.trans_b = 1;
    real.n = 2 * g->n, real.k = 2 * g->k;
    if (g->trans_a) {
        real.a = a_copy;
        real.la = (struct layout){g->m, 2 * g->k, 2 * w->ld,
                                  stored_count(&g->la, g->batch) == 1 ? 0 : 2 * g->m * w->ld};
    } else {
        real.la = (struct layout){g->m, 2 * g->k, 2 * g->la.ld, 2 * g->la.stride};
    }
    real.b = e;
    real.lb = (struct layout){2 * g->n, 2 * g->k, 2 * w->ld,
                              stored_count(&g->lb, g->batch) == 1 ? 0 : 2 * w->e_matrix};
    real.lc = (struct layout){g->m, 2 * g->n, 2 * g->lc.ld, 2 * g->lc.stride};
    real.workspace_max = g->workspace_max - used; /* for its split k or repacking */
    real.family = kernel_family_for(real.backend, real.dtype, real.precision, arch, ANY_LAYOUT,
                                    shape_bit(&real));
    return real;
}

gpumatmul_status complex_real_gemm(gpumatmul_context *ctx, struct worker *worker,
                                   const struct gemm *g, const struct device_facts *device,
                                   cudaStream_t stream) {
    const size_t size = dtype_infos[g->dtype].size;
    const struct workspace w = workspace_of(g);
    const int64_t bytes = (w.e + w.a) * (int64_t)size;
    struct gemm real;
    struct route route;
    void *e, *a_copy;
    gpumatmul_status status =
        workspace_alloc(ctx, (size_t)bytes, stream, "complex product's real operands", &e);
    if (status) return status;
    a_copy = at(e, w.e, size); /* E^T's rows are whole 16 bytes: so is its end */
    status = expand(ctx, g, &w, e, stream);
    if (!status && g->trans_a) status = untranspose_a(ctx, g, &w, a_copy, stream);
    if (!status) {
        real = real_product(g, &w, e, a_copy, bytes, device->arch);
        route = kernel_route(&real, device);
        status = run_route(ctx, worker, &real, &route, device, stream);
    }
    return workspace_free(e, stream, status);
}
