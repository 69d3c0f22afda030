/* Products whose C is another dtype than A and B, where g's backend does not
 * multiply their dtype itself: the FP8 types' off Hopper, whose FP8 tensor
 * cores gemm_wgmma uses, and by cuBLAS float8_e5m2's, and float8_e4m3fn's of
 * sizes or on GPUs cuBLASLt's FP8 kernels do not take. A and B are copied into
 * a wider dtype that holds every FP8 value exactly and multiplied there, into
 * C's float32: NumPy's own way, whose matmul loop for FP8 operands is float32. */
#include "gemm/gemm.h"

/* What the operands widen to, in order of preference. float16 holds every
 * value of both FP8 types (e5m2 is float16's top byte; e4m3fn's exponents and
 * subnormals lie inside float16's) and runs on tensor cores from sm_70 on, but
 * only cuBLAS multiplies float16 into float32 C (cublasGemmEx, 16F operands,
 * 32F C, compute 32F: float16's HIGHEST entry), so it is cuBLAS's alone, at
 * HIGHEST; float32, NumPy's loop dtype, on any backend at either precision. */
static const struct widening {
    gpumatmul_dtype to;
    unsigned backends;   /* bit b set: for gpumatmul_backend b */
    unsigned precisions; /* bit p set: at gpumatmul_precision p */
} widenings[] = {
    {GPUMATMUL_FLOAT16, 1u << GPUMATMUL_BACKEND_CUBLAS, 1u << GPUMATMUL_PRECISION_HIGHEST},
    {GPUMATMUL_FLOAT32, ~0u, ~0u},
};
#define WIDENING_COUNT ((int)(sizeof widenings / sizeof widenings[0]))

int backend_multiplies(const struct gemm *g, gpumatmul_dtype dtype, int arch) {
    if (g->backend == GPUMATMUL_BACKEND_CUBLAS)
        return dtype_infos[dtype].cublas[g->precision].type != 0 &&
               cublaslt_takes(g, dtype, arch);
    return kernel_family_for(g->backend, dtype, g->precision, arch, ANY_LAYOUT, shape_bit(g)) >= 0;
}

int widened_dtype(const struct gemm *g, int arch) {
    int i;
    if (!WRITES_OTHER_DTYPE(g->dtype) || backend_multiplies(g, g->dtype, arch)) return -1;
    for (i = 0; i < WIDENING_COUNT; ++i)
        if ((widenings[i].backends >> g->backend & 1u) &&
            (widenings[i].precisions >> g->precision & 1u) &&
            backend_multiplies(g, widenings[i].to, arch))
            return (int)widenings[i].to;
    return -1;
}

int widens(const struct gemm *g, int arch) { return widened_dtype(g, arch) >= 0; }

/* Elements of the copy of an operand stored as l: its stored matrices, each
 * rows x cols with no gap. */
static int64_t copy_elements(const struct layout *l, int64_t batch) {
    return stored_count(l, batch) * l->rows * l->cols;
}

/* Operand `position` (0: A, 1: B), stored as l at `data`, copied into `copy` as
 * dtype `to`; *wide becomes the copy's layout. */
static gpumatmul_status widen(gpumatmul_context *ctx, const struct gemm *g, int position,
                              gpumatmul_dtype to, const void *data, const struct layout *l,
                              void *copy, struct layout *wide, cudaStream_t stream) {
    const gpumatmul_dtype from = operand_dtype(g->dtype, position);
    const int64_t size = (int64_t)dtype_infos[from].size;
    const int64_t wide_size = (int64_t)dtype_infos[to].size;
    const int64_t stored = stored_count(l, g->batch);
    const gpumatmul_array_desc src = {from, 3, {stored, l->rows, l->cols},
                                      {l->stride * size, l->ld * size, size}};
    const gpumatmul_array_desc dst = {to, 3, {stored, l->rows, l->cols},
                                      {l->rows * l->cols * wide_size, l->cols * wide_size,
                                       wide_size}};
    *wide = (struct layout){l->rows, l->cols, l->cols, stored == 1 ? 0 : l->rows * l->cols};
    return convert_array(ctx, &dst, copy, &src, data, stream);
}

gpumatmul_status widened_gemm(gpumatmul_context *ctx, struct worker *worker,
                              const struct gemm *g, const struct device_facts *device,
                              cudaStream_t stream) {
    const gpumatmul_dtype to = (gpumatmul_dtype)widened_dtype(g, device->arch);
    const size_t wide_size = dtype_infos[to].size;
    /* A's copy ends where B's starts: round it up to whole 16 bytes, as B's kernels want. */
    const int64_t a_elements = whole_16_bytes(copy_elements(&g->la, g->batch), wide_size);
    const int64_t bytes = (a_elements + copy_elements(&g->lb, g->batch)) * (int64_t)wide_size;
    struct gemm wide = *g;
    struct route route;
    void *a_copy, *b_copy;
    gpumatmul_status status =
        workspace_alloc(ctx, (size_t)bytes, stream, "widened copies of the operands", &a_copy);
    if (status) return status;
    b_copy = at(a_copy, a_elements, wide_size);
    wide.dtype = to; /* C keeps g's c_dtype */
    wide.a = a_copy, wide.b = b_copy;
    wide.automatic = 0; /* the product was chosen; this is how it runs */
    wide.workspace_max = g->workspace_max - bytes;
    wide.family = kernel_family_for(wide.backend, wide.dtype, wide.precision, device->arch,
                                    ANY_LAYOUT, shape_bit(&wide));
    status = widen(ctx, g, 0, to, g->a, &g->la, a_copy, &wide.la, stream);
    if (!status) status = widen(ctx, g, 1, to, g->b, &g->lb, b_copy, &wide.lb, stream);
    if (!status) {
        route = kernel_route(&wide, device);
        status = run_route(ctx, worker, &wide, &route, device, stream);
    }
    return workspace_free(a_copy, stream, status);
}
