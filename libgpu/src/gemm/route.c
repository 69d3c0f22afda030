/* A product's backend on the context's image (settle_backend), and its route:
 * which runner computes it (multiply.c's table), on which kernel family, in how
 * many pieces of k. Pure functions of the product and the device's facts, so
 * that every choice can be checked without a GPU (tests/test_c_route.py);
 * multiply runs what they say. */
#include "gemm/gemm.h"

/* The kernel_params whose families take g's operands, as bits: every family
 * takes gemm_args; the k-major ones only operands that are contiguous along k
 * (A not transposed, B transposed); TMA families only operands TMA describes. */
static unsigned operand_layouts(const struct gemm *g) {
    const unsigned k_major = !g->trans_a && g->trans_b;
    const unsigned plain = 1u << PARAMS_GEMM_ARGS | k_major << PARAMS_K_MAJOR;
    if (!tma_describes(g, g->a, &g->la) || !tma_describes(g, g->b, &g->lb)) return plain;
    return plain | 1u << PARAMS_TMA | k_major << PARAMS_TMA_K_MAJOR;
}

/* The first family whose params suit g's operands as they are; -1 if none. */
static int operand_family(const struct gemm *g, int arch) {
    return kernel_family_for(g->backend, g->dtype, g->precision, arch, operand_layouts(g),
                             shape_bit(g));
}

/* Whether family f may compute g: any family the backend asked for has, but
 * AUTO measured one family against cuBLAS (auto_table.c) and takes no other. */
static int takes(const struct gemm *g, int f) {
    return f >= 0 && (!g->automatic || f == g->family);
}

/* The first family before f (the one g's operands suit as they are) that
 * takes them as repacked_gemm copies them and whose copies repackable allows;
 * -1 if none. */
static int repacked_family(const struct gemm *g, int arch, int f) {
    const unsigned copied = operand_layouts(g) | 1u << PARAMS_TMA | 1u << PARAMS_TMA_K_MAJOR |
                            1u << PARAMS_K_MAJOR;
    int r;
    for (r = kernel_family_for(g->backend, g->dtype, g->precision, arch, copied, shape_bit(g));
         r >= 0 && r != f && takes_repacked(r);
         r = kernel_family_after(r, g->backend, g->dtype, g->precision, arch, copied,
                                 shape_bit(g)))
        if (repackable(g, r)) return r;
    return -1;
}

gpumatmul_status settle_backend(struct gemm *g, int arch, gpumatmul_backend asked) {
    const unsigned shapes = shape_bit(g);
    if (asked == GPUMATMUL_BACKEND_AUTO && g->backend == GPUMATMUL_BACKEND_CUBLAS) {
        const int f = kernel_family_for(GPUMATMUL_BACKEND_TILED, g->dtype, g->precision, arch,
                                        ANY_LAYOUT, shapes);
        if (f >= 0 && (!backend_multiplies(g, g->dtype, arch) ||
                       auto_prefers_tiled(arch, g->dtype, g->precision, g->m, g->n, g->k,
                                          g->batch)))
            g->backend = GPUMATMUL_BACKEND_TILED, g->family = f, g->automatic = 1;
    }
    if (g->backend == GPUMATMUL_BACKEND_CUBLAS && !cublaslt_takes(g, g->dtype, arch) &&
        !widens(g, arch) && arch < dtype_infos[g->dtype].cublaslt.min_arch)
        return set_error(GPUMATMUL_ERROR_NOT_SUPPORTED,
                         "cuBLASLt multiplies %s on compute capability %d.%d and newer, not on "
                         "this GPU's %d.%d; use backend tiled or auto",
                         dtype_infos[g->dtype].name, dtype_infos[g->dtype].cublaslt.min_arch / 10,
                         dtype_infos[g->dtype].cublaslt.min_arch % 10, arch / 10, arch % 10);
    if (g->backend == GPUMATMUL_BACKEND_CUBLAS && !cublaslt_takes(g, g->dtype, arch) &&
        !widens(g, arch))
        return set_error(GPUMATMUL_ERROR_NOT_SUPPORTED,
                         "cuBLASLt multiplies %s only where n is a multiple of %d and k of %d, not "
                         "n=%lld k=%lld; use backend tiled or auto",
                         dtype_infos[g->dtype].name, dtype_infos[g->dtype].cublaslt.n_multiple,
                         dtype_infos[g->dtype].cublaslt.k_multiple, (long long)g->n,
                         (long long)g->k);
    if (g->family < 0) return GPUMATMUL_SUCCESS;
    g->family = kernel_family_for(g->backend, g->dtype, g->precision, arch, ANY_LAYOUT, shapes);
    if (g->family < 0 && !widens(g, arch))
        return set_error(GPUMATMUL_ERROR_NOT_SUPPORTED,
                         "no kernel computes %s at this precision on compute capability %d.%d",
                         dtype_infos[g->dtype].name, arch / 10, arch % 10);
    return GPUMATMUL_SUCCESS;
}

static struct route route(enum runner runner, int family, int64_t splits) {
    const struct route r = {runner, family, splits};
    return r;
}

struct route kernel_route(const struct gemm *g, const struct device_facts *device) {
    const int f = operand_family(g, device->arch), repacked = repacked_family(g, device->arch, f);
    int64_t splits;
    if (takes(g, repacked)) return route(RUNNER_REPACKED, repacked, 1);
    if (!takes(g, f)) return route(RUNNER_CUBLAS, -1, 1);
    splits = k_splits(g, f, device->multiprocessors);
    return route(splits > 1 ? RUNNER_SPLIT_K : RUNNER_KERNEL, f, splits);
}

struct route route_of(const struct gemm *g, const struct device_facts *device) {
    if (g->k == 0) return route(RUNNER_ZERO_FILL, -1, 1);
    if (byte_split_runs(g, device->arch))
        return route(RUNNER_BYTE_SPLIT, byte_planes_family(g, device->arch), 1);
    if (widens(g, device->arch)) return route(RUNNER_WIDENED, -1, 1);
    if (g->backend == GPUMATMUL_BACKEND_CUBLAS) return route(RUNNER_CUBLAS, -1, 1);
    if (complex_as_real(g, device->arch) && takes(g, operand_family(g, device->arch)))
        return route(RUNNER_COMPLEX_AS_REAL, -1, 1);
    return kernel_route(g, device);
}
