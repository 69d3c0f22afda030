/* gpumatmul_copy_device: its arguments checked against the header's contract, then
 * the copy (gemm/convert.c) on the caller's stream. */
#include <stdint.h>

#include "api/api.h"

/* Bytes to each element's smallest unit: a complex one is aligned as its parts. */
static int64_t alignment(gpumatmul_dtype dtype) {
    const int64_t size = (int64_t)dtype_infos[dtype].size;
    return dtype == GPUMATMUL_COMPLEX64 || dtype == GPUMATMUL_COMPLEX128 ? size / 2 : size;
}

/* Checks one descriptor (`name` in messages) and its data; sets *count. */
static gpumatmul_status check_array(const char *name, const gpumatmul_array_desc *x,
                                    const void *data, int64_t *count) {
    int64_t reach = 0, align;
    int d;
    if (!x) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "%s is NULL", name);
    if ((unsigned)x->dtype >= DTYPE_COUNT)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "%s->dtype %d is not a gpumatmul_dtype",
                         name, (int)x->dtype);
    if (!IS_ELEMENT_TYPE(x->dtype))
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "%s->dtype %d is a product's type (%s), not an element type; an array "
                         "holds one of the two", name, (int)x->dtype, dtype_infos[x->dtype].name);
    if (x->ndim < 0 || x->ndim > GPUMATMUL_MAX_DIMS)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "%s->ndim %d is not in [0, %d]", name,
                         (int)x->ndim, GPUMATMUL_MAX_DIMS);
    align = alignment((gpumatmul_dtype)x->dtype);
    *count = 1;
    for (d = 0; d < x->ndim; ++d) {
        const int64_t extent = x->shape[d], step = x->strides[d] < 0 ? -x->strides[d] : x->strides[d];
        if (extent < 0)
            return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "%s->shape[%d] is %lld", name, d,
                             (long long)extent);
        if (x->strides[d] % align)
            return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                             "%s->strides[%d] = %lld is not a multiple of the %lld-byte alignment "
                             "of %s", name, d, (long long)x->strides[d], (long long)align,
                             dtype_infos[x->dtype].name);
        if (extent > 1 && step > (INT64_MAX - reach) / (extent - 1))
            return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                             "%s spans more bytes than a pointer can address", name);
        if (extent > 1) reach += step * (extent - 1);
        if (*count && extent > INT64_MAX / *count)
            return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "%s has more than 2^63 elements", name);
        *count *= extent;
    }
    if (*count == 0) return GPUMATMUL_SUCCESS;
    if (!data) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "%s's data is NULL", name);
    if ((uintptr_t)data % (uintptr_t)align)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "%s's data is not aligned to the %lld bytes of %s", name,
                         (long long)align, dtype_infos[x->dtype].name);
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status gpumatmul_copy_device(gpumatmul_context *ctx, const gpumatmul_array_desc *dst,
                                       void *dst_data, const gpumatmul_array_desc *src,
                                       const void *src_data, void *stream) {
    int64_t dst_count, src_count;
    int d, entered;
    gpumatmul_status status;
    if ((status = check_array("dst", dst, dst_data, &dst_count)) ||
        (status = check_array("src", src, src_data, &src_count)))
        return status;
    if (dst->ndim != src->ndim)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "dst has %d dimensions and src %d",
                         (int)dst->ndim, (int)src->ndim);
    for (d = 0; d < dst->ndim; ++d)
        if (dst->shape[d] != src->shape[d])
            return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                             "dst->shape[%d] is %lld and src->shape[%d] %lld: the shapes differ",
                             d, (long long)dst->shape[d], d, (long long)src->shape[d]);
    if (!ctx) return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "context is NULL");
    if (dst_count == 0) return GPUMATMUL_SUCCESS;
    if ((status = enter_context(ctx, &entered))) return status;
    status = convert_array(ctx, dst, dst_data, src, src_data, (cudaStream_t)stream);
    return leave_context(ctx, entered, status);
}
