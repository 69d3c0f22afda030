/* A kernel family's product: its launches over the whole problem, with the TMA
 * descriptors of the families that read operands through the tensor memory
 * accelerator. */
#include <stdint.h>
#include <stdio.h>

#include "gemm/gemm.h"
#include "gemm_tiled.h"
#include "gemm_wgmma.h"


/* TMA's limits (cuTensorMapEncodeTiled): global strides are multiples of 16
 * bytes below 2^40, addresses 16-byte aligned (and extents: TMA_EXTENT_MAX). */
static const int64_t tma_alignment = 16, tma_stride_limit = (int64_t)1 << 40;

/* gemm_wgmma.h's stand-in for CUtensorMap, which the kernels cannot include. */
typedef char tensor_map_is_cutensormap[sizeof(struct tensor_map) == sizeof(CUtensorMap) ? 1 : -1];

static int tma_stride(int64_t elements, size_t size) {
    const int64_t bytes = elements * (int64_t)size;
    return bytes % tma_alignment == 0 && bytes < tma_stride_limit;
}

int tma_describes(const struct gemm *g, const void *data, const struct layout *l) {
    const size_t size = dtype_infos[g->dtype].size;
    return g->m <= TMA_EXTENT_MAX && g->n <= TMA_EXTENT_MAX && g->k <= TMA_EXTENT_MAX &&
           (uintptr_t)data % tma_alignment == 0 && tma_stride(l->ld, size) &&
           (stored_count(l, g->batch) == 1 || tma_stride(l->stride, size));
}

/* The TMA descriptor of one operand of a launch, as gemm_wgmma.cu reads it:
 * X(i, kk) = x[i * i_stride + kk * k_stride] for i < rows (M for A, N for B),
 * a 3-D tensor (contiguous axis, other axis, batch) cut into boxes 128 bytes
 * wide: GEMM_WGMMA_K_BYTES of k by `rows_per_box` (k contiguous), or 128 bytes
 * of i by GEMM_WGMMA_K_BYTES of k (i contiguous), 128-byte swizzled. The kernel
 * tells the two apart by the same test, k_stride == 1. */
static gpumatmul_status tma_operand(const gpumatmul_context *ctx, struct tensor_map *map,
                                    const void *x, int64_t rows, int64_t k, int64_t i_stride,
                                    int64_t k_stride, int64_t batch_stride, int64_t batches,
                                    int rows_per_box, size_t size) {
    const int k_major = k_stride == 1;
    const int64_t pitch = k_major ? i_stride : k_stride;
    const cuuint64_t stored = batch_stride == 0 ? 1 : (cuuint64_t)batches;
    const size_t unit = GEMM_WGMMA_TMA_UNIT(size);
    const cuuint64_t words = size / unit; /* TMA elements per element */
    const cuuint64_t dims[3] = {(cuuint64_t)(k_major ? k : rows) * words,
                                (cuuint64_t)(k_major ? rows : k), stored};
    /* One stored matrix: any valid stride will do for the batch axis. */
    const cuuint64_t strides[2] = {(cuuint64_t)pitch * size,
                                   (cuuint64_t)(stored > 1 ? batch_stride : pitch * (int64_t)dims[1]) *
                                       size};
    const cuuint32_t box[3] = {(cuuint32_t)(GEMM_WGMMA_K_BYTES / unit),
                               k_major ? (cuuint32_t)rows_per_box
                                       : (cuuint32_t)(GEMM_WGMMA_K_BYTES / size),
                               1};
    const cuuint32_t element_strides[3] = {1, 1, 1};
    return check_driver(&ctx->driver,
                        ctx->driver.tensor_map_encode_tiled(
                            (CUtensorMap *)map,
                            unit == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_UINT16,
                            3, (void *)x, dims,
                            strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                        "cuTensorMapEncodeTiled");
}

/* Runs registry family f's kernel over the whole problem, one launch per
 * sub-problem that fits the grid limits. */
gpumatmul_status kernel_gemm(gpumatmul_context *ctx, const struct gemm *g, int f,
                             cudaStream_t stream) {
    const struct kernel_family *family = &kernel_families[f];
    const int tensor_maps = params_read_tma(family->params); /* struct gemm_tma_args */
    const size_t size = dtype_infos[g->dtype].size;
    const size_t c_size = g->c_update.size ? (size_t)g->c_update.size : C_SIZE(g->dtype);
    const int64_t rows_per_launch = MAX_GRID_X * family->tile_m;
    const int64_t cols_per_launch = MAX_GRID_Y * family->tile_n;
    /* op(X)(i, j) = X[i * row_stride + j * col_stride]: a transpose swaps them. */
    const int64_t a_row = g->trans_a ? 1 : g->la.ld, a_col = g->trans_a ? g->la.ld : 1;
    const int64_t b_row = g->trans_b ? 1 : g->lb.ld, b_col = g->trans_b ? g->lb.ld : 1;
    struct gemm_tma_args tma;
    int64_t z, i, j;
    gpumatmul_status status;
    for (z = 0; z < g->batch; z += MAX_GRID_Z)
        for (i = 0; i < g->m; i += rows_per_launch)
            for (j = 0; j < g->n; j += cols_per_launch) {
                /* The sub-problem: rows i.., columns j.., batches z.. */
                const struct gemm_args args = {
                    .m = min64(g->m - i, rows_per_launch),
                    .n = min64(g->n - j, cols_per_launch),
                    .k = g->k,
                    .a = at(g->a, z * g->la.stride + i * a_row, size),
                    .a_row_stride = a_row, .a_col_stride = a_col, .a_batch_stride = g->la.stride,
                    .b = at(g->b, z * g->lb.stride + j * b_col, size),
                    .b_row_stride = b_row, .b_col_stride = b_col, .b_batch_stride = g->lb.stride,
                    .c = at(g->c, z * g->lc.stride + i * g->lc.ld + j, c_size),
                    .ldc = g->lc.ld, .c_batch_stride = g->lc.stride};
                const int64_t batches = min64(g->batch - z, MAX_GRID_Z);
                void *params[] = {tensor_maps ? (void *)&tma : (void *)&args};
                CUresult result;
                if (tensor_maps) {
                    tma.gemm = args;
                    tma.c_update = g->c_update.size ? g->c_update
                                                    : (struct gemm_c_update){(int)size, 0, 0, 0};
                    if ((status = tma_operand(ctx, &tma.a_map, args.a, args.m, args.k, a_row, a_col,
                                              g->la.stride, batches, family->tile_m, size)) ||
                        (status = tma_operand(ctx, &tma.b_map, args.b, args.n, args.k, b_col, b_row,
                                              g->lb.stride, batches, family->tile_n, size)))
                        return status;
                }
                result = ctx->driver.launch_kernel(
                    ctx->kernels->family[f][g->dtype],
                    (unsigned)((args.m + family->tile_m - 1) / family->tile_m),
                    (unsigned)((args.n + family->tile_n - 1) / family->tile_n), (unsigned)batches,
                    (unsigned)family->threads, 1, 1, family->shared_bytes, (CUstream)stream,
                    params, NULL);
                if (result != CUDA_SUCCESS) {
                    char what[64];
                    snprintf(what, sizeof what, "cuLaunchKernel (%s%s)", family->prefix,
                             dtype_infos[g->dtype].kernel_suffix);
                    return check_driver(&ctx->driver, result, what);
                }
            }
    return GPUMATMUL_SUCCESS;
}
