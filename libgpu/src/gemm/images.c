/* The kernel images embedded at build time (kernel_images.c, made by
 * libgpu/tools/embed_kernels.py): which one runs on a GPU, and a context's
 * kernels loaded from it. */
#include <stdio.h>
#include <stdlib.h>

#include "gemm/gemm.h"

int gpumatmul_kernel_image_count(void) { return kernel_image_count; }

gpumatmul_status gpumatmul_kernel_image_info(int index, int *arch, gpumatmul_image_kind *kind,
                                             size_t *size_bytes) {
    if (!arch || !kind || !size_bytes)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "arch, kind or size_bytes is NULL");
    if (index < 0 || index >= kernel_image_count)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "image index %d is not in [0, %d)",
                         index, kernel_image_count);
    *arch = kernel_images[index].arch;
    *kind = kernel_images[index].kind;
    *size_bytes = kernel_images[index].size;
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status gpumatmul_kernel_image_select(int cc_major, int cc_minor, int *index) {
    const int device_arch = 10 * cc_major + cc_minor;
    int best_sass = -1, best_ptx = -1, i;
    if (!index) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "index is NULL");
    if (cc_major < 1 || cc_minor < 0 || cc_minor > 9)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "%d.%d is no compute capability: the major is 1 or more, the minor 0 "
                         "to 9 (cudaDevAttrComputeCapabilityMajor and Minor give a GPU's)",
                         cc_major, cc_minor);
    for (i = 0; i < kernel_image_count; ++i) {
        const struct kernel_image *image = &kernel_images[i];
        if (image->arch > device_arch) continue;
        /* SASS runs only within its major, on the same or a higher minor. */
        if (image->kind == GPUMATMUL_IMAGE_SASS && image->arch / 10 == cc_major &&
            (best_sass < 0 || image->arch > kernel_images[best_sass].arch))
            best_sass = i;
        if (image->kind == GPUMATMUL_IMAGE_PTX &&
            (best_ptx < 0 || image->arch > kernel_images[best_ptx].arch))
            best_ptx = i;
    }
    if (best_sass < 0 && best_ptx < 0)
        return set_error(GPUMATMUL_ERROR_NO_KERNEL_IMAGE,
                         "no embedded kernel image runs on compute capability %d.%d: this "
                         "build has SASS from sm_%d and PTX for compute_%d; a GPU this old "
                         "needs an older CUDA major",
                         cc_major, cc_minor, kernel_images[0].arch,
                         kernel_images[kernel_image_count - 1].arch);
    *index = best_sass >= 0 ? best_sass : best_ptx;
    return GPUMATMUL_SUCCESS;
}

/* The kernel `symbol` of ctx's module into *function. */
static gpumatmul_status load_kernel(gpumatmul_context *ctx, struct kernels *k, CUfunction *function,
                                    const char *symbol) {
    return check_driver(&ctx->driver, ctx->driver.module_get_function(function, k->module, symbol),
                        symbol);
}

/* prefix + the dtype's kernel_suffix into functions[d], for each dtype d whose
 * bit `dtypes` sets. */
static gpumatmul_status load_per_dtype(gpumatmul_context *ctx, struct kernels *k,
                                       CUfunction functions[DTYPE_COUNT], const char *prefix,
                                       unsigned dtypes) {
    int d;
    gpumatmul_status status;
    for (d = 0; d < DTYPE_COUNT; ++d) {
        char symbol[64];
        if (!((dtypes >> d) & 1u)) continue;
        snprintf(symbol, sizeof symbol, "%s%s", prefix, dtype_infos[d].kernel_suffix);
        if ((status = load_kernel(ctx, k, &functions[d], symbol))) return status;
    }
    return GPUMATMUL_SUCCESS;
}

/* The split-k reductions of the dtypes some family may split, the expansions
 * of the complex dtypes complex_real.c runs as real ones, the transpose
 * repack.c launches, byte_split.c's split and convert.c's copy. */
static gpumatmul_status load_helpers(gpumatmul_context *ctx, struct kernels *k) {
    unsigned split = 0, complex_dtypes = 0;
    int f, i;
    gpumatmul_status status;
    for (f = 0; f < KERNEL_FAMILY_COUNT; ++f) split |= kernel_families[f].split_dtypes;
    for (i = 0; i < COMPLEX_PLAN_COUNT; ++i) complex_dtypes |= 1u << complex_plans[i].dtype;
    if ((status = load_per_dtype(ctx, k, k->reduce, "gemm_reduce_", split)) ||
        (status = load_per_dtype(ctx, k, k->expand, "complex_expand_", complex_dtypes)))
        return status;
    for (i = 0; i < TRANSPOSE_KERNEL_COUNT; ++i) {
        char symbol[32];
        snprintf(symbol, sizeof symbol, "gemm_transpose_b%d", 8 * (int)transpose_kernels[i].size);
        if ((status = load_kernel(ctx, k, &k->transpose[i], symbol))) return status;
    }
    if ((status = load_kernel(ctx, k, &k->byte_split, "byte_split"))) return status;
    return load_kernel(ctx, k, &k->convert, "convert");
}

/* Every family's kernels, with the dynamic shared memory beyond 48 KiB that a
 * block gets only when asked. */
static gpumatmul_status load_families(gpumatmul_context *ctx, struct kernels *k) {
    int f, d;
    gpumatmul_status status;
    for (f = 0; f < KERNEL_FAMILY_COUNT; ++f) {
        const struct kernel_family *family = &kernel_families[f];
        if ((status = load_per_dtype(ctx, k, k->family[f], family->prefix, family->dtypes)))
            return status;
        if (family->shared_bytes <= 48 * 1024 ||
            !kernel_family_runs_on(f, kernel_images[k->image_index].arch))
            continue;
        for (d = 0; d < DTYPE_COUNT; ++d)
            if (((family->dtypes >> d) & 1u) &&
                (status = check_driver(&ctx->driver,
                                       ctx->driver.func_set_attribute(
                                           k->family[f][d],
                                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           (int)family->shared_bytes),
                                       "cuFuncSetAttribute")))
                return status;
    }
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status kernels_load(gpumatmul_context *ctx) {
    struct kernels *k;
    int cc_major, cc_minor;
    gpumatmul_status status;
    if (!(k = calloc(1, sizeof *k)))
        return set_error(GPUMATMUL_ERROR_OUT_OF_MEMORY, "out of host memory for the kernels");
    ctx->kernels = k; /* kernels_unload frees what was loaded, also after a failure */
    if ((status = check_cuda(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor,
                                                    ctx->device), "cudaDeviceGetAttribute")) ||
        (status = check_cuda(cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor,
                                                    ctx->device), "cudaDeviceGetAttribute")) ||
        (status = gpumatmul_kernel_image_select(cc_major, cc_minor, &k->image_index)) ||
        (status = check_driver(&ctx->driver,
                               ctx->driver.module_load_data(&k->module,
                                                            kernel_images[k->image_index].data),
                               "cuModuleLoadData")))
        return status;
    if ((status = load_families(ctx, k))) return status;
    return load_helpers(ctx, k);
}

gpumatmul_status kernels_unload(gpumatmul_context *ctx) {
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    if (ctx->kernels && ctx->kernels->module)
        status = check_driver(&ctx->driver, ctx->driver.module_unload(ctx->kernels->module),
                              "cuModuleUnload");
    free(ctx->kernels);
    ctx->kernels = NULL;
    return status;
}

gpumatmul_status gpumatmul_context_kernel_image(const gpumatmul_context *ctx, int *index) {
    if (!ctx || !index) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context or index is NULL");
    *index = ctx->kernels->image_index;
    return GPUMATMUL_SUCCESS;
}
