/* Products whose C is another dtype than A and B, where g's backend does not
 * multiply their dtype itself: the FP8 types' off Hopper, whose FP8 tensor
 * cores gemm_wgmma uses, and by cuBLAS float8_e5m2's, and float8_e4m3fn's of
 * sizes cuBLASLt's FP8 kernels do not take. A and B are copied into C's dtype
 * (float32: every FP8 value is one exactly) and multiplied there, which is
 * NumPy's own way: its matmul loop for FP8 operands is float32. */
#include "gemm/gemm.h"

int backend_multiplies(const struct gemm *g, gpumatmul_dtype dtype, int arch) {
    if (g->backend == GPUMATMUL_BACKEND_CUBLAS)
        return dtype_infos[dtype].cublas[g->precision].type != 0 && cublaslt_takes(g, dtype);
    return kernel_family_for(g->backend, dtype, g->precision, arch, ANY_LAYOUT, shape_bit(g)) >= 0;
}

int widens(const struct gemm *g, int arch) {
    return WRITES_OTHER_DTYPE(g->dtype) && !backend_multiplies(g, g->dtype, arch) &&
           backend_multiplies(g, dtype_infos[g->dtype].c_dtype, arch);
}

/* Elements of the copy of an operand stored as l: its stored matrices, each
 * rows x cols with no gap. */
static int64_t copy_elements(const struct layout *l, int64_t batch) {
    return stored_count(l, batch) * l->rows * l->cols;
}

/* The operand stored as l at `data` copied into `copy` in C's dtype; *wide
 * becomes the copy's layout. */
static gpumatmul_status widen(gpumatmul_context *ctx, const struct gemm *g, const void *data,
                              const struct layout *l, void *copy, struct layout *wide,
                              cudaStream_t stream) {
    const gpumatmul_dtype to = dtype_infos[g->dtype].c_dtype;
    const int64_t size = (int64_t)dtype_infos[g->dtype].size, wide_size = (int64_t)C_SIZE(g->dtype);
    const int64_t stored = stored_count(l, g->batch);
    const gpumatmul_array_desc src = {g->dtype, 3, {stored, l->rows, l->cols},
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
    const size_t wide_size = C_SIZE(g->dtype);
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
    wide.dtype = dtype_infos[g->dtype].c_dtype;
    wide.a = a_copy, wide.b = b_copy;
    wide.automatic = 0; /* the product was chosen; this is how it runs */
    wide.workspace_max = g->workspace_max - bytes;
    wide.family = kernel_family_for(wide.backend, wide.dtype, wide.precision, device->arch,
                                    ANY_LAYOUT, shape_bit(&wide));
    status = widen(ctx, g, g->a, &g->la, a_copy, &wide.la, stream);
    if (!status) status = widen(ctx, g, g->b, &g->lb, b_copy, &wide.lb, stream);
    if (!status) {
        route = kernel_route(&wide, device);
        status = run_route(ctx, worker, &wide, &route, device, stream);
    }
    return workspace_free(a_copy, stream, status);
}
