/* One GPU's product: cuBLAS or a kernel family (maybe with split k, with
 * operands repacked for a k-major kernel, or for a complex product as a real
 * one), as the registry, AUTO's table and the operands' layouts say; and
 * k == 0, which writes zeros. */
#include "gemm/gemm.h"

/* Whether the stored matrices' rows follow one another at the same pitch, so
 * that one 2-D copy (or memset) covers the batch. */
static int contiguous(const struct layout *l, int64_t batch) {
    return stored_count(l, batch) == 1 || l->stride == l->rows * l->ld;
}

/* The kernel_params whose families take g's operands, as bits: every family
 * takes gemm_args; the k-major ones only operands that are contiguous along k
 * (A not transposed, B transposed); TMA families only operands TMA describes. */
static unsigned operand_layouts(const struct gemm *g) {
    const unsigned k_major = !g->trans_a && g->trans_b;
    const unsigned plain = 1u << PARAMS_GEMM_ARGS | k_major << PARAMS_K_MAJOR;
    if (!tma_describes(g, g->a, &g->la) || !tma_describes(g, g->b, &g->lb)) return plain;
    return plain | 1u << PARAMS_TMA | k_major << PARAMS_TMA_K_MAJOR;
}

/* k == 0 on the device: C is zeros (an empty sum, as in NumPy). */
static gpumatmul_status zero_device_c(const struct gemm *g, cudaStream_t stream) {
    const size_t size = dtype_infos[g->dtype].size;
    const int one_call = contiguous(&g->lc, g->batch);
    const int64_t calls = one_call ? 1 : g->batch, rows = one_call ? g->batch * g->m : g->m;
    int64_t z;
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    for (z = 0; z < calls && !status; ++z)
        status = check_cuda(cudaMemset2DAsync(at(g->c, z * g->lc.stride, size),
                                              (size_t)g->lc.ld * size, 0, (size_t)g->n * size,
                                              (size_t)rows, stream),
                            "cudaMemset2DAsync");
    return status;
}

/* `worker` is the host call's; the device call passes NULL and a worker is taken
 * here only for cuBLAS: the kernels need nothing of their own, so their calls
 * never touch the lock. */
gpumatmul_status multiply(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                          cudaStream_t stream) {
    gpumatmul_status status;
    if (g->k == 0) return zero_device_c(g, stream);
    /* Integers of 2, 4 or 8 bytes: products of their bytes (byte_split.c). */
    if (byte_split_runs(ctx, g)) return byte_split_gemm(ctx, g, stream);
    if (g->backend != GPUMATMUL_BACKEND_CUBLAS) {
        /* The first row whose params suit the operands; for AUTO, cuBLAS if that
         * is not the row measured (benchmarks/auto_table.py), one for other layouts. */
        const int arch = kernels_arch(ctx);
        const unsigned layouts = operand_layouts(g), shapes = shape_bit(g);
        const int f = kernel_family_for(g->backend, g->dtype, g->precision, arch, layouts, shapes);
        /* The first family that would take these operands repacked (repack.c;
         * the next, where the copies would not fit the workspace). */
        const unsigned repacked_layouts = layouts | 1u << PARAMS_TMA |
                                          1u << PARAMS_TMA_K_MAJOR | 1u << PARAMS_K_MAJOR;
        int repacked = kernel_family_for(g->backend, g->dtype, g->precision, arch,
                                         repacked_layouts, shapes);
        int64_t splits;
        while (repacked >= 0 && repacked != f && takes_repacked(repacked) &&
               !repackable(g, repacked))
            repacked = kernel_family_after(repacked, g->backend, g->dtype, g->precision, arch,
                                           repacked_layouts, shapes);
        /* A complex product large enough: one real product (complex_real.c). */
        if (complex_as_real(g) && (!g->automatic || f == g->family))
            return complex_real_gemm(ctx, worker, g, stream);
        if (repacked != f && takes_repacked(repacked) && repackable(g, repacked) &&
            (!g->automatic || repacked == g->family))
            return repacked_gemm(ctx, g, repacked, stream);
        if (!g->automatic || f == g->family)
            return (splits = k_splits(ctx, g, f)) > 1 ? split_k_gemm(ctx, g, f, splits, stream)
                                                      : kernel_gemm(ctx, g, f, stream);
    }
    if (worker) return cublas_gemm(worker, g, stream);
    if ((status = take_worker(ctx, &worker))) return status;
    status = cublas_gemm(worker, g, stream);
    give_back_worker(ctx, worker);
    return status;
}
