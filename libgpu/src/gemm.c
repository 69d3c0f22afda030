/* Matrix multiplication: argument checks, the two backends, the device path. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gemm_tiled.h"
#include "gemm_wgmma.h"
#include "internal.h"
#include "kernel_images.h"

/* CUDA's grid limits (every GPU since compute capability 3.0): larger
 * problems take several launches. */
static const int64_t max_grid_x = 2147483647, max_grid_y = 65535, max_grid_z = 65535;

/* x * y and x + y for x, y >= 0: 0 if the result exceeds INT64_MAX. */
static int mul_fits(int64_t x, int64_t y, int64_t *result) {
    if (y != 0 && x > INT64_MAX / y) return 0;
    *result = x * y;
    return 1;
}
static int add_fits(int64_t x, int64_t y, int64_t *result) {
    if (x > INT64_MAX - y) return 0;
    *result = x + y;
    return 1;
}

int64_t stored_count(const struct layout *l, int64_t batch) {
    return l->stride == 0 ? 1 : batch;
}

/* Whether the stored matrices' rows follow one another at the same pitch, so
 * that one 2-D copy (or memset) covers the batch. */
static int contiguous(const struct layout *l, int64_t batch) {
    return stored_count(l, batch) == 1 || l->stride == l->rows * l->ld;
}

/* Sets *bytes to the bytes from the first to past the last element of a
 * batch (0 if it is empty); returns 0 if that exceeds what a pointer spans. */
static int span_fits(const struct layout *l, int64_t batch, size_t size, int64_t *bytes) {
    int64_t batch_part, row_part, elements;
    *bytes = 0;
    if (batch == 0 || l->rows == 0 || l->cols == 0) return 1;
    return mul_fits(batch - 1, l->stride, &batch_part) &&
           mul_fits(l->rows - 1, l->ld, &row_part) && add_fits(batch_part, row_part, &elements) &&
           add_fits(elements, l->cols, &elements) && mul_fits(elements, (int64_t)size, bytes) &&
           (uint64_t)*bytes <= (uint64_t)PTRDIFF_MAX;
}

/* The registry's shapes bit for g's product. */
static unsigned shape_bit(const struct gemm *g) {
    return 1u << shape_class(g->m, g->n, g->k, g->batch);
}

/* Moves g from the registry's first family for its case to the first one
 * with code in the context's image (the plain tiled family has it for every
 * architecture, unless a registry row offers what no row for every
 * architecture does), and for AUTO from cuBLAS to that family where it
 * measured faster (auto_prefers_tiled). The launch may still pass on to a
 * later row whose params suit the operands (multiply). */
static gpumatmul_status family_for_image(struct gemm *g, const gpumatmul_context *ctx,
                                         gpumatmul_backend asked) {
    const int arch = kernel_images[ctx->image_index].arch;
    const unsigned shapes = shape_bit(g);
    if (asked == GPUMATMUL_BACKEND_AUTO && g->backend == GPUMATMUL_BACKEND_CUBLAS) {
        const int f = kernel_family_for(GPUMATMUL_BACKEND_TILED, g->dtype, g->precision, arch,
                                        ANY_LAYOUT, shapes);
        if (f >= 0 && auto_prefers_tiled(arch, g->dtype, g->precision, g->m, g->n, g->k, g->batch))
            g->backend = GPUMATMUL_BACKEND_TILED, g->family = f, g->automatic = 1;
    }
    if (g->family < 0) return GPUMATMUL_SUCCESS;
    g->family = kernel_family_for(g->backend, g->dtype, g->precision, arch, ANY_LAYOUT, shapes);
    if (g->family < 0)
        return set_error(GPUMATMUL_ERROR_NOT_SUPPORTED,
                         "no kernel computes %s at this precision on compute capability %d.%d",
                         dtype_infos[g->dtype].name, arch / 10, arch % 10);
    return GPUMATMUL_SUCCESS;
}

/* The context is checked last, so that a program without a GPU (and so without
 * a context) still sees every other check. */
gpumatmul_status prepare(struct gemm *g, const gpumatmul_context *ctx,
                         const gpumatmul_gemm_desc *p, const void *a, const void *b, void *c,
                         int c_to_allocate) {
    const struct {
        const char *name, *matrix; /* "a" for lda and stride_a, "A" for the matrix */
        const struct layout *layout;
        const void *data;
    } operands[] = {{"a", "A", &g->la, a}, {"b", "B", &g->lb, b}, {"c", "C", &g->lc, c}};
    int64_t span, c_matrix, m, n, k, batch, ldc, stride_c;
    gpumatmul_status status;
    int i, trans_a, trans_b;
    if (!p) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "desc is NULL");
    m = p->m, n = p->n, k = p->k, batch = p->batch_count, ldc = p->ldc, stride_c = p->stride_c;
    trans_a = p->trans_a, trans_b = p->trans_b;
    *g = (struct gemm){.precision = (gpumatmul_precision)p->precision, .trans_a = trans_a,
                       .trans_b = trans_b, .m = m, .n = n, .k = k, .batch = batch,
                       .a = a, .b = b, .c = c,
                       .la = {trans_a ? k : m, trans_a ? m : k, p->lda, p->stride_a},
                       .lb = {trans_b ? n : k, trans_b ? k : n, p->ldb, p->stride_b},
                       .lc = {m, n, ldc, stride_c}, .workspace_max = INT64_MAX};
    if ((status = choose_backend((gpumatmul_backend)p->backend, (gpumatmul_dtype)p->dtype,
                                 (gpumatmul_precision)p->precision, &g->backend, &g->family)))
        return status;
    g->dtype = (gpumatmul_dtype)p->dtype; /* a valid one: choose_backend checked it */
    if (m < 0 || n < 0 || k < 0 || batch < 0)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "negative size: m=%lld n=%lld k=%lld batch_count=%lld", (long long)m,
                         (long long)n, (long long)k, (long long)batch);
    for (i = 0; i < 3; ++i) {
        const struct layout *l = operands[i].layout;
        const char *name = operands[i].name, *matrix = operands[i].matrix;
        if (l->stride < 0)
            return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "stride_%s=%lld is negative", name,
                             (long long)l->stride);
        if (l->ld < max64(l->cols, 1))
            return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                             "ld%s=%lld is too small: %s is stored with %lld columns, and ld%s "
                             "must be at least max(1, columns)",
                             name, (long long)l->ld, matrix, (long long)l->cols, name);
        if (!span_fits(l, batch, dtype_infos[g->dtype].size, &span))
            return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                             "%s spans more bytes than a pointer can address (batch_count=%lld, "
                             "stride_%s=%lld, ld%s=%lld)",
                             matrix, (long long)batch, name, (long long)l->stride, name,
                             (long long)l->ld);
        *(i == 0 ? &g->a_bytes : i == 1 ? &g->b_bytes : &g->c_bytes) = span;
        if (span > 0 && !operands[i].data && !(i == 2 && c_to_allocate))
            return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "%s is NULL", name);
    }
    /* One C matrix spans (m - 1) * ldc + n elements; the contract asks for m * ldc. */
    if (batch > 1 && (!mul_fits(m, ldc, &c_matrix) || stride_c < c_matrix))
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "the C matrices overlap: stride_c=%lld is less than m * ldc = %lld * %lld",
                         (long long)stride_c, (long long)m, (long long)ldc);
    if (!ctx) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context is NULL");
    return family_for_image(g, ctx, (gpumatmul_backend)p->backend);
}

static int nothing_to_do(const struct gemm *g) { return g->m == 0 || g->n == 0 || g->batch == 0; }

/* `worker` is the calling call's own: no other call uses its handle meanwhile. */
static gpumatmul_status cublas_gemm(struct worker *worker, const struct gemm *g,
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

/* TMA's limits (cuTensorMapEncodeTiled): global strides are multiples of 16
 * bytes below 2^40, addresses 16-byte aligned; and the kernels' coordinates
 * are 32-bit, with a tile's worth of room past the end. */
static const int64_t tma_alignment = 16, tma_stride_limit = (int64_t)1 << 40,
                     tma_extent_limit = INT32_MAX - 1024;

/* gemm_wgmma.h's stand-in for CUtensorMap, which the kernels cannot include. */
typedef char tensor_map_is_cutensormap[sizeof(struct tensor_map) == sizeof(CUtensorMap) ? 1 : -1];

static int tma_stride(int64_t elements, size_t size) {
    const int64_t bytes = elements * (int64_t)size;
    return bytes % tma_alignment == 0 && bytes < tma_stride_limit;
}

int tma_describes(const struct gemm *g, const void *data, const struct layout *l) {
    const size_t size = dtype_infos[g->dtype].size;
    return g->m <= tma_extent_limit && g->n <= tma_extent_limit && g->k <= tma_extent_limit &&
           (uintptr_t)data % tma_alignment == 0 && tma_stride(l->ld, size) &&
           (stored_count(l, g->batch) == 1 || tma_stride(l->stride, size));
}

/* The kernel_params whose families take g's operands, as bits: every family
 * takes gemm_args; TMA families take operands TMA describes, the k-major ones
 * only those that are contiguous along k (A not transposed, B transposed). */
static unsigned tma_layouts(const struct gemm *g) {
    const unsigned any = 1u << PARAMS_GEMM_ARGS;
    if (!tma_describes(g, g->a, &g->la) || !tma_describes(g, g->b, &g->lb)) return any;
    return any | 1u << PARAMS_TMA | (!g->trans_a && g->trans_b) << PARAMS_TMA_K_MAJOR;
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
    /* TMA moves 16-bit words whatever the dtype: the kernels only need the bytes. */
    const cuuint64_t words = size / 2;
    const cuuint64_t dims[3] = {(cuuint64_t)(k_major ? k : rows) * words,
                                (cuuint64_t)(k_major ? rows : k), stored};
    /* One stored matrix: any valid stride will do for the batch axis. */
    const cuuint64_t strides[2] = {(cuuint64_t)pitch * size,
                                   (cuuint64_t)(stored > 1 ? batch_stride : pitch * (int64_t)dims[1]) *
                                       size};
    const cuuint32_t box[3] = {GEMM_WGMMA_K_BYTES / 2,
                               k_major ? (cuuint32_t)rows_per_box
                                       : (cuuint32_t)(GEMM_WGMMA_K_BYTES / size),
                               1};
    const cuuint32_t element_strides[3] = {1, 1, 1};
    return check_driver(&ctx->driver,
                        ctx->driver.tensor_map_encode_tiled(
                            (CUtensorMap *)map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 3, (void *)x, dims,
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
    const int tensor_maps = family->params != PARAMS_GEMM_ARGS; /* struct gemm_tma_args */
    const size_t size = dtype_infos[g->dtype].size;
    const int64_t rows_per_launch = max_grid_x * family->tile_m;
    const int64_t cols_per_launch = max_grid_y * family->tile_n;
    /* op(X)(i, j) = X[i * row_stride + j * col_stride]: a transpose swaps them. */
    const int64_t a_row = g->trans_a ? 1 : g->la.ld, a_col = g->trans_a ? g->la.ld : 1;
    const int64_t b_row = g->trans_b ? 1 : g->lb.ld, b_col = g->trans_b ? g->lb.ld : 1;
    struct gemm_tma_args tma;
    int64_t z, i, j;
    for (z = 0; z < g->batch; z += max_grid_z)
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
                    .c = at(g->c, z * g->lc.stride + i * g->lc.ld + j, size),
                    .ldc = g->lc.ld, .c_batch_stride = g->lc.stride};
                const int64_t batches = min64(g->batch - z, max_grid_z);
                void *params[] = {tensor_maps ? (void *)&tma : (void *)&args};
                CUresult result;
                gpumatmul_status status;
                if (tensor_maps) {
                    tma.gemm = args;
                    if ((status = tma_operand(ctx, &tma.a_map, args.a, args.m, args.k, a_row, a_col,
                                              g->la.stride, batches, family->tile_m, size)) ||
                        (status = tma_operand(ctx, &tma.b_map, args.b, args.n, args.k, b_col, b_row,
                                              g->lb.stride, batches, family->tile_n, size)))
                        return status;
                }
                result = ctx->driver.launch_kernel(
                    ctx->kernels[f][g->dtype],
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

/* The product, k > 0, on device memory. `worker` is the host call's; the device
 * call passes NULL and a worker is taken here only for cuBLAS: the kernels need
 * nothing of their own, so their calls never touch the lock. */
gpumatmul_status multiply(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                          cudaStream_t stream) {
    gpumatmul_status status;
    if (g->backend != GPUMATMUL_BACKEND_CUBLAS) {
        /* The first row whose params suit the operands; for AUTO, cuBLAS if that
         * is not the row measured (benchmarks/auto_table.py), one for other layouts. */
        const int arch = kernel_images[ctx->image_index].arch;
        const unsigned layouts = tma_layouts(g), shapes = shape_bit(g);
        const int f = kernel_family_for(g->backend, g->dtype, g->precision, arch, layouts, shapes);
        /* A family that takes k-major operands only, and would take these repacked. */
        const int k_major = kernel_family_for(g->backend, g->dtype, g->precision, arch,
                                              layouts | 1u << PARAMS_TMA_K_MAJOR, shapes);
        int64_t splits;
        if (k_major != f && kernel_families[k_major].params == PARAMS_TMA_K_MAJOR &&
            repackable(g) && (!g->automatic || k_major == g->family))
            return repacked_gemm(ctx, g, k_major, stream);
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

gpumatmul_status gpumatmul_matmul_strided_batched_device(
    gpumatmul_context *ctx, gpumatmul_backend backend, gpumatmul_dtype dtype,
    gpumatmul_precision precision, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    int64_t batch_count, const void *a, int64_t lda, int64_t stride_a, const void *b,
    int64_t ldb, int64_t stride_b, void *c, int64_t ldc, int64_t stride_c, void *stream) {
    const gpumatmul_gemm_desc desc = {backend, dtype, precision, trans_a, trans_b, m, n, k,
                                      batch_count, lda, stride_a, ldb, stride_b, ldc, stride_c};
    return gpumatmul_gemm_device(ctx, &desc, a, b, c, stream);
}

gpumatmul_status gpumatmul_gemm_device(gpumatmul_context *ctx, const gpumatmul_gemm_desc *desc,
                                       const void *a, const void *b, void *c, void *stream) {
    struct gemm g;
    int previous;
    gpumatmul_status status = prepare(&g, ctx, desc, a, b, c, 0);
    if (status || nothing_to_do(&g)) return status;
    if ((status = enter_device(ctx->device, &previous))) return status;
    status = g.k == 0 ? zero_device_c(&g, (cudaStream_t)stream)
                      : multiply(ctx, NULL, &g, (cudaStream_t)stream);
    return leave_device(previous, status);
}

gpumatmul_status gpumatmul_gemm_device_new(gpumatmul_context *ctx, const gpumatmul_gemm_desc *desc,
                                           const void *a, const void *b, void *stream,
                                           void **c) {
    struct gemm g;
    int previous;
    gpumatmul_status status;
    if (!c) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "c is NULL");
    *c = NULL;
    if ((status = prepare(&g, ctx, desc, a, b, NULL, 1)) || g.c_bytes == 0) return status;
    if ((status = enter_device(ctx->device, &previous))) return status;
    status = check_cuda(cudaMallocFromPoolAsync(c, (size_t)g.c_bytes, ctx->pool,
                                                (cudaStream_t)stream),
                        "cudaMallocFromPoolAsync");
    if (status == GPUMATMUL_SUCCESS) {
        g.c = *c;
        status = g.k == 0 ? zero_device_c(&g, (cudaStream_t)stream)
                          : multiply(ctx, NULL, &g, (cudaStream_t)stream);
        if (status) cudaFreeAsync(*c, (cudaStream_t)stream); /* the failure to report is status */
    }
    if (status) *c = NULL;
    return leave_device(previous, status);
}

gpumatmul_status gpumatmul_matmul_strided_batched_host(
    gpumatmul_context *ctx, gpumatmul_backend backend, gpumatmul_dtype dtype,
    gpumatmul_precision precision, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    int64_t batch_count, const void *a, int64_t lda, int64_t stride_a, const void *b,
    int64_t ldb, int64_t stride_b, void *c, int64_t ldc, int64_t stride_c) {
    const gpumatmul_gemm_desc desc = {backend, dtype, precision, trans_a, trans_b, m, n, k,
                                      batch_count, lda, stride_a, ldb, stride_b, ldc, stride_c};
    return gpumatmul_gemm_host(ctx, &desc, a, b, c);
}

/* ---- The first ABI: one product at the highest precision ---- */

gpumatmul_status gpumatmul_matmul_host(gpumatmul_context *ctx, gpumatmul_backend backend,
                                       gpumatmul_dtype dtype, int trans_a, int trans_b,
                                       int64_t m, int64_t n, int64_t k, const void *a,
                                       int64_t lda, const void *b, int64_t ldb, void *c,
                                       int64_t ldc) {
    return gpumatmul_matmul_strided_batched_host(ctx, backend, dtype,
                                                 GPUMATMUL_PRECISION_HIGHEST, trans_a, trans_b,
                                                 m, n, k, 1, a, lda, 0, b, ldb, 0, c, ldc, 0);
}

gpumatmul_status gpumatmul_matmul_device(gpumatmul_context *ctx, gpumatmul_backend backend,
                                         gpumatmul_dtype dtype, int trans_a, int trans_b,
                                         int64_t m, int64_t n, int64_t k, const void *a,
                                         int64_t lda, const void *b, int64_t ldb, void *c,
                                         int64_t ldc, void *stream) {
    return gpumatmul_matmul_strided_batched_device(ctx, backend, dtype,
                                                   GPUMATMUL_PRECISION_HIGHEST, trans_a, trans_b,
                                                   m, n, k, 1, a, lda, 0, b, ldb, 0, c, ldc, 0,
                                                   stream);
}
