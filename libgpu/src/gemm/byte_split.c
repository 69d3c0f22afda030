/* Products of 2-, 4- and 8-byte integers as products of their bytes, on the
 * 1-byte tensor-core kernel (docs/kernel-log.md, step 12). NumPy's integer
 * product wraps modulo 2^W (W = 8 * bytes), and wrapping commutes with sums and
 * products. With each element as its bytes, x = sum_i x_i 2^(8i) (x_i the
 * unsigned bytes of its bits, whatever its sign),
 *
 *     C = sum_{s < bytes} 2^(8s) D_s  (mod 2^W),    D_s = sum_{i+j=s} A_i B_j,
 *
 * the pairs with i + j >= bytes vanishing modulo 2^W: 3 byte products for
 * 16-bit elements, 10 for 32-bit, 36 for 64-bit. D_s is one product of 1-byte
 * operands (s + 1) k deep: A's planes A_0 .. A_s side by side along k, times
 * B's B_s .. B_0 (byte_split.h: B's planes are stored reversed, so both are
 * the first or last planes of one row). gemm_wgmma_u8 sums them exactly modulo
 * 2^32, enough where W <= 32 (C needs D_s modulo 2^(W - 8s) only), and shifts
 * and adds each D_s into C itself (gemm_c_update). For 64-bit elements D_s
 * must be exact: k is cut into chunks of 2^13, so that a sum of (s + 1) 2^13
 * products of two bytes stays below 2^32 (255^2 * 8 * 2^13 < 2^32), and each
 * chunk's D_s is added on. Only from SHAPE_MEDIUM up: below it, the generic
 * kernel's one launch beats a split and `bytes` products. */
#include "gemm/gemm.h"
#include "byte_split.h"

/* The dtypes split, and the chunk of k (log2) of each: 62, k whole. */
static const struct {
    gpumatmul_dtype dtype;
    int chunk_shift;
} byte_splits[] = {
    {GPUMATMUL_INT16, 62}, {GPUMATMUL_UINT16, 62}, {GPUMATMUL_INT32, 62},
    {GPUMATMUL_UINT32, 62}, {GPUMATMUL_INT64, 13}, {GPUMATMUL_UINT64, 13},
};
#define BYTE_SPLIT_COUNT ((int)(sizeof byte_splits / sizeof byte_splits[0]))

/* g's dtype's chunk shift; -1 if it is not split. */
static int chunk_shift_of(gpumatmul_dtype dtype) {
    int i;
    for (i = 0; i < BYTE_SPLIT_COUNT; ++i)
        if (byte_splits[i].dtype == dtype) return byte_splits[i].chunk_shift;
    return -1;
}

int byte_planes_family(const struct gemm *g, int arch) {
    return kernel_family_for(GPUMATMUL_BACKEND_TILED, GPUMATMUL_UINT8,
                             GPUMATMUL_PRECISION_HIGHEST, arch, 1u << PARAMS_TMA_K_MAJOR,
                             shape_bit(g));
}

/* Bytes of a row of planes: every byte of k elements, k rounded up to 16. */
static int64_t planes_ld(const struct gemm *g) {
    return (int64_t)dtype_infos[g->dtype].size * whole_16_bytes(g->k, 1);
}

/* Whether the split's grid covers operand layout l (rows, and blocks of columns). */
static int splittable(const struct layout *l) {
    const int64_t tile = BYTE_SPLIT_TILE;
    return l->rows <= MAX_GRID_Y * tile && ceil_div(l->cols, tile) <= MAX_GRID_X;
}

/* The workspace's bytes, in double as the sizes' products are. */
static double workspace_bytes(const struct gemm *g) {
    return (double)planes_ld(g) * ((double)stored_count(&g->la, g->batch) * (double)g->m +
                                   (double)stored_count(&g->lb, g->batch) * (double)g->n);
}

int byte_split_runs(const struct gemm *g, int arch) {
    return chunk_shift_of(g->dtype) >= 0 && g->backend == GPUMATMUL_BACKEND_TILED &&
           shape_class(g->m, g->n, g->k, g->batch) >= SHAPE_MEDIUM &&
           byte_planes_family(g, arch) >= 0 &&
           g->m <= TMA_EXTENT_MAX && g->n <= TMA_EXTENT_MAX && planes_ld(g) <= TMA_EXTENT_MAX &&
           splittable(&g->la) && splittable(&g->lb) &&
           workspace_bytes(g) <= (double)g->workspace_max;
}

/* Operand x (stored as l, k along its rows if k_rows) split into `out`: `rows`
 * rows of planes (m for A, n for B) per stored matrix, planes_ld apart. */
static gpumatmul_status split(gpumatmul_context *ctx, const struct gemm *g, const void *x,
                              const struct layout *l, int k_rows, int reversed, int64_t rows,
                              void *out, cudaStream_t stream) {
    const size_t size = dtype_infos[g->dtype].size;
    const int64_t tile = BYTE_SPLIT_TILE, stored = stored_count(l, g->batch), ld = planes_ld(g);
    int64_t z;
    for (z = 0; z < stored; z += MAX_GRID_Z) {
        const struct byte_split_args args = {
            .rows = l->rows, .cols = l->cols, .in = at(x, z * l->stride, size), .ld = l->ld,
            .in_batch_stride = l->stride, .out = at(out, z * rows * ld, 1), .out_ld = ld,
            .out_batch_stride = rows * ld, .bytes = (long long)size, .k_rows = k_rows,
            .chunk_shift = chunk_shift_of(g->dtype), .reversed = reversed};
        void *params[] = {(void *)&args};
        const CUresult result = ctx->driver.launch_kernel(
            ctx->kernels->byte_split, (unsigned)ceil_div(l->cols, tile),
            (unsigned)ceil_div(l->rows, tile), (unsigned)min64(stored - z, MAX_GRID_Z),
            BYTE_SPLIT_TILE, BYTE_SPLIT_ROWS, 1, 0, (CUstream)stream, params, NULL);
        if (result != CUDA_SUCCESS)
            return check_driver(&ctx->driver, result, "cuLaunchKernel (byte_split)");
    }
    return GPUMATMUL_SUCCESS;
}

/* The 1-byte product of diagonal s of chunk [first, first + width) of k, with
 * A's planes at a and B's at b, shifted into C (added to it but for the first). */
static struct gemm plane_product(const struct gemm *g, const void *a, const void *b,
                                 int64_t first, int64_t width, int s) {
    const int64_t bytes = (int64_t)dtype_infos[g->dtype].size, ld = planes_ld(g);
    struct gemm p = *g;
    p.dtype = GPUMATMUL_UINT8, p.precision = GPUMATMUL_PRECISION_HIGHEST;
    p.trans_a = 0, p.trans_b = 1;
    p.k = (s + 1) * width;
    p.a = at(a, first * bytes, 1);
    p.b = at(b, first * bytes + (bytes - 1 - s) * width, 1);
    p.la = (struct layout){g->m, p.k, ld, stored_count(&g->la, g->batch) == 1 ? 0 : g->m * ld};
    p.lb = (struct layout){g->n, p.k, ld, stored_count(&g->lb, g->batch) == 1 ? 0 : g->n * ld};
    p.c_update = (struct gemm_c_update){(int)bytes, 8 * s, first > 0 || s > 0, 0};
    return p;
}

gpumatmul_status byte_split_gemm(gpumatmul_context *ctx, const struct gemm *g, int f,
                                 cudaStream_t stream) {
    const int bytes = (int)dtype_infos[g->dtype].size;
    const int64_t ld = planes_ld(g), padded = whole_16_bytes(g->k, 1);
    const int64_t chunk = (int64_t)1 << chunk_shift_of(g->dtype);
    const int64_t a_bytes = stored_count(&g->la, g->batch) * g->m * ld;
    const int64_t all = a_bytes + stored_count(&g->lb, g->batch) * g->n * ld;
    int64_t first;
    int s;
    void *a, *b;
    gpumatmul_status status = workspace_alloc(ctx, (size_t)all, stream, "integer byte planes", &a);
    if (status) return status;
    b = at(a, a_bytes, 1); /* rows of whole 16 bytes: so is A's planes' end */
    if (!(status = split(ctx, g, g->a, &g->la, g->trans_a, 0, g->m, a, stream)))
        status = split(ctx, g, g->b, &g->lb, !g->trans_b, 1, g->n, b, stream);
    for (first = 0; first < padded && !status; first += chunk)
        for (s = 0; s < bytes && !status; ++s) {
            const struct gemm p = plane_product(g, a, b, first, min64(chunk, padded - first), s);
            status = kernel_gemm(ctx, &p, f, stream);
        }
    return workspace_free(a, stream, status);
}
