/* The copy kernel's launch contract (convert.cu), shared with the host code
 * (libgpu/src/gemm/convert.c) like gemm_tiled.h: plain C, no includes. */
#ifndef GPUMATMUL_CONVERT_H
#define GPUMATMUL_CONVERT_H

/* Dimensions a launch takes, after the host has dropped axes of length 1 and
 * merged axes that both arrays step through contiguously; more are looped over
 * by the host, a launch each. */
#define CONVERT_DIMS 8
#define CONVERT_THREADS 256

/* The element types, numbered as gpumatmul_dtype (gpumatmul.h: the host code
 * checks that they agree). */
enum convert_dtype {
    CONVERT_FLOAT32, CONVERT_FLOAT64, CONVERT_FLOAT16, CONVERT_BFLOAT16, CONVERT_COMPLEX64,
    CONVERT_COMPLEX128, CONVERT_INT8, CONVERT_INT16, CONVERT_INT32, CONVERT_INT64, CONVERT_UINT8,
    CONVERT_UINT16, CONVERT_UINT32, CONVERT_UINT64, CONVERT_BOOL, CONVERT_FLOAT8_E4M3FN,
    CONVERT_FLOAT8_E5M2
};

/* x / d for 0 <= x < 2^31 and 1 <= d < 2^31, without a division: (x * multiplier)
 * >> (32 + shift), with multiplier = ceil(2^(31 + l) / d), shift = l - 1 and
 * l = ceil(log2 d); d == 1 has multiplier 0 and means x itself. */
struct convert_divisor {
    unsigned multiplier, shift;
};

/* The one parameter of convert, passed by value. Element i (0 <= i < count, count
 * < 2^31) is at multi-index (i_0, ..., i_{ndim-1}) of `shape` in C order (the last
 * axis fastest); src + sum(i_d * src_strides[d]) is converted from src_dtype to
 * dst_dtype and stored at dst + sum(i_d * dst_strides[d]). Strides are in bytes
 * and may be negative or zero; every element is aligned to its size (a complex
 * one to the size of its parts). */
struct convert_args {
    const void *src;
    void *dst;
    long long src_strides[CONVERT_DIMS], dst_strides[CONVERT_DIMS];
    unsigned shape[CONVERT_DIMS];
    struct convert_divisor divisors[CONVERT_DIMS]; /* by shape[d] */
    unsigned count;
    int ndim, src_dtype, dst_dtype;
};

#endif
