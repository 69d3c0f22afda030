/* The argument checks of every product entry point: a gpumatmul_gemm_desc and
 * its data against the header's contract, into a struct gemm, before any GPU
 * work; then which backend and kernel family compute it on the context's image
 * (gemm/route.c: settle_backend). */
#include <stdint.h>

#include "api/api.h"

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
    g->c_dtype = dtype_infos[g->dtype].c_dtype;
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
        if (!span_fits(l, batch, i == 2 ? C_SIZE(g->dtype) : dtype_infos[g->dtype].size, &span))
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
    return settle_backend(g, kernels_arch(ctx), (gpumatmul_backend)p->backend);
}
