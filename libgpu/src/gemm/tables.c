/* What each dtype is and who computes it: the dtype table, the kernel
 * registry, and gpumatmul_backend_supports, which answers from them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gemm/gemm.h"
#include "gemm_dmma.h"
#include "gemm_hmma.h"
#include "gemm_imma.h"
#include "gemm_simt.h"
#include "gemm_tiled.h"
#include "gemm_wgmma.h"

/* alpha = 1 in each cuBLAS scale type; a complex 1 is (1, 0), so one array
 * serves the real and the complex type of each width. */
static const unsigned short one_half = 0x3c00; /* 1.0 in IEEE binary16 */
static const float one_float[2] = {1.0f, 0.0f};
static const double one_double[2] = {1.0, 0.0};
static const int32_t one_int32 = 1;

/* The cublas column of the table, one entry per precision. */
#define BY_CUBLAS(type, scale, one) {type, scale, one}
#define F32 BY_CUBLAS(CUBLAS_COMPUTE_32F, CUDA_R_32F, one_float)
#define TF32 BY_CUBLAS(CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, one_float)
#define F16 BY_CUBLAS(CUBLAS_COMPUTE_16F, CUDA_R_16F, &one_half)
#define F64 BY_CUBLAS(CUBLAS_COMPUTE_64F, CUDA_R_64F, one_double)
#define C32 BY_CUBLAS(CUBLAS_COMPUTE_32F, CUDA_C_32F, one_float)
#define C32_TF32 BY_CUBLAS(CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_C_32F, one_float)
#define C64 BY_CUBLAS(CUBLAS_COMPUTE_64F, CUDA_C_64F, one_double)
#define I32 BY_CUBLAS(CUBLAS_COMPUTE_32I, CUDA_R_32I, &one_int32)
#define NO BY_CUBLAS((cublasComputeType_t)0, CUDA_R_32F, NULL)
#define NOT_LT {0, 0, GPUMATMUL_FLOAT32, CUDA_R_32F, 1, 1}
#define CUBLAS(type, highest, tf32, fp16_accumulate)                                               \
    type, {highest, tf32, fp16_accumulate}, NOT_LT, ""
/* The dtypes cuBLAS multiplies through cuBLASLt alone, at precision HIGHEST:
 * the oldest architecture with its kernels, their C dtype and the multiples of
 * n and k they take. */
#define CUBLASLT(type, highest, min_arch, c_dtype, c_type, n_multiple, k_multiple)                 \
    type, {highest, NO, NO}, {1, min_arch, c_dtype, c_type, n_multiple, k_multiple}, ""
/* The dtypes cuBLAS does not multiply as NumPy does, and why. */
#define NOT_CUBLAS(why) NO_CUDA_TYPE, {NO, NO, NO}, NOT_LT, why
#define INTEGER " (NumPy's integer matmul wraps around, which cuBLAS computes for int8 alone)"
#define BOOLEAN " (NumPy's boolean matmul is an OR of ANDs, which cuBLAS does not compute)"
#define E5M2 " (cuBLASLt multiplies float8_e5m2 only by float8_e4m3fn)"

/* The mixed FP8 pairs' operands: A's element type, then B's. */
static const gpumatmul_dtype e4m3_e5m2[2] = {GPUMATMUL_FLOAT8_E4M3FN, GPUMATMUL_FLOAT8_E5M2};
static const gpumatmul_dtype e5m2_e4m3[2] = {GPUMATMUL_FLOAT8_E5M2, GPUMATMUL_FLOAT8_E4M3FN};

/* Columns: NumPy name, element size, C's dtype, cuBLAS data type, cuBLAS compute
 * at precision {HIGHEST, TF32, FP16_ACCUMULATE}, cuBLASLt's part, why cuBLAS
 * lacks it, kernel suffix, and for the mixed FP8 pairs their operands' types. Signed integers use the unsigned kernel of their
 * width: wraparound gives the same bits. cuBLASLt sums int8 exactly in int32
 * (IMMA: integer tensor cores, from Turing's sm_75 on, as cuBLASLt's int8
 * kernels need), whose low byte is NumPy's int8 product, for n and k multiples of 4
 * (its documented rule; an H200 refused n = 33, k = 75 and n = 63, k = 129);
 * its FP8 kernels (FP8 tensor cores, from Ada's sm_89 on) take n of whole 16
 * bytes of float32 C and k of whole 16 bytes. */
const struct dtype_info dtype_infos[DTYPE_COUNT] = {
    [GPUMATMUL_FLOAT32] = {"float32", 4, GPUMATMUL_FLOAT32, CUBLAS(CUDA_R_32F, F32, TF32, NO), "f32"},
    [GPUMATMUL_FLOAT64] = {"float64", 8, GPUMATMUL_FLOAT64, CUBLAS(CUDA_R_64F, F64, NO, NO), "f64"},
    [GPUMATMUL_FLOAT16] = {"float16", 2, GPUMATMUL_FLOAT16, CUBLAS(CUDA_R_16F, F32, NO, F16), "f16"},
    [GPUMATMUL_BFLOAT16] = {"bfloat16", 2, GPUMATMUL_BFLOAT16, CUBLAS(CUDA_R_16BF, F32, NO, NO),
                            "bf16"},
    [GPUMATMUL_COMPLEX64] = {"complex64", 8, GPUMATMUL_COMPLEX64,
                             CUBLAS(CUDA_C_32F, C32, C32_TF32, NO), "c64"},
    [GPUMATMUL_COMPLEX128] = {"complex128", 16, GPUMATMUL_COMPLEX128,
                              CUBLAS(CUDA_C_64F, C64, NO, NO), "c128"},
    [GPUMATMUL_INT8] = {"int8", 1, GPUMATMUL_INT8,
                        CUBLASLT(CUDA_R_8I, I32, 75, GPUMATMUL_INT32, CUDA_R_32I, 4, 4), "u8"},
    [GPUMATMUL_INT16] = {"int16", 2, GPUMATMUL_INT16, NOT_CUBLAS(INTEGER), "u16"},
    [GPUMATMUL_INT32] = {"int32", 4, GPUMATMUL_INT32, NOT_CUBLAS(INTEGER), "u32"},
    [GPUMATMUL_INT64] = {"int64", 8, GPUMATMUL_INT64, NOT_CUBLAS(INTEGER), "u64"},
    [GPUMATMUL_UINT8] = {"uint8", 1, GPUMATMUL_UINT8, NOT_CUBLAS(INTEGER), "u8"},
    [GPUMATMUL_UINT16] = {"uint16", 2, GPUMATMUL_UINT16, NOT_CUBLAS(INTEGER), "u16"},
    [GPUMATMUL_UINT32] = {"uint32", 4, GPUMATMUL_UINT32, NOT_CUBLAS(INTEGER), "u32"},
    [GPUMATMUL_UINT64] = {"uint64", 8, GPUMATMUL_UINT64, NOT_CUBLAS(INTEGER), "u64"},
    [GPUMATMUL_BOOL] = {"bool", 1, GPUMATMUL_BOOL, NOT_CUBLAS(BOOLEAN), "bool"},
    [GPUMATMUL_FLOAT8_E4M3FN] = {"float8_e4m3fn", 1, GPUMATMUL_FLOAT32,
                                 CUBLASLT(CUDA_R_8F_E4M3, F32, 89, GPUMATMUL_FLOAT32, CUDA_R_32F, 4, 16),
                                 "e4m3"},
    [GPUMATMUL_FLOAT8_E5M2] = {"float8_e5m2", 1, GPUMATMUL_FLOAT32, NOT_CUBLAS(E5M2), "e5m2"},
    /* cuBLASLt's FP8 kernels take either mixed pair, of the sizes of e4m3's. */
    [GPUMATMUL_FLOAT8_E4M3FN_E5M2] = {"float8_e4m3fn_e5m2", 1, GPUMATMUL_FLOAT32,
                                      CUBLASLT(CUDA_R_8F_E4M3, F32, 89, GPUMATMUL_FLOAT32,
                                               CUDA_R_32F, 4, 16),
                                      "e4m3_e5m2", e4m3_e5m2},
    [GPUMATMUL_FLOAT8_E5M2_E4M3FN] = {"float8_e5m2_e4m3fn", 1, GPUMATMUL_FLOAT32,
                                      CUBLASLT(CUDA_R_8F_E5M2, F32, 89, GPUMATMUL_FLOAT32,
                                               CUDA_R_32F, 4, 16),
                                      "e5m2_e4m3", e5m2_e4m3},
};

/* The dtypes whose C is their own: the plain tiled kernels' (FP8 multiplies on
 * FP8 tensor cores, or widened.c widens it to its C's dtype). */
#define ALL_DTYPES ((1u << (GPUMATMUL_BOOL + 1)) - 1)
#define FP8_DTYPES                                                                                 \
    (ONLY(GPUMATMUL_FLOAT8_E4M3FN) | ONLY(GPUMATMUL_FLOAT8_E5M2) |                                 \
     ONLY(GPUMATMUL_FLOAT8_E4M3FN_E5M2) | ONLY(GPUMATMUL_FLOAT8_E5M2_E4M3FN))
#define ONLY(x) (1u << (x))
#define TILED GPUMATMUL_BACKEND_TILED
#define HIGHEST ONLY(GPUMATMUL_PRECISION_HIGHEST)

/* In order of preference (see gemm/gemm.h); each with its file in libgpu/kernels. The column
 * before the last, split_dtypes: only gemm_simt's grid of large tiles leaves multiprocessors
 * idle often enough to gain from split k (docs/kernel-log.md, step 6). */
const struct kernel_family kernel_families[KERNEL_FAMILY_COUNT] = {
    /* gemm_wgmma.cu: float16 and bfloat16 on Hopper (sm_90a), TMA and wgmma ... */
    {TILED, "gemm_wgmma_", GEMM_WGMMA_M, GEMM_WGMMA_N, GEMM_WGMMA_THREADS,
     GEMM_WGMMA_SHARED_BYTES, 90, 90, ONLY(GPUMATMUL_FLOAT16) | ONLY(GPUMATMUL_BFLOAT16), HIGHEST,
     PARAMS_TMA, 0, ALL_SHAPES},
    /* ... and float32 at precision TF32, for operands contiguous along k. */
    {TILED, "gemm_wgmma_", GEMM_WGMMA_M, GEMM_WGMMA_N, GEMM_WGMMA_THREADS,
     GEMM_WGMMA_SHARED_BYTES, 90, 90, ONLY(GPUMATMUL_FLOAT32), ONLY(GPUMATMUL_PRECISION_TF32),
     PARAMS_TMA_K_MAJOR, 0, ALL_SHAPES},
    /* ... and int8, uint8 and bool, for operands contiguous along k (repack.c
     * transposes the others); not the tiny products, as gemm_imma. */
    {TILED, "gemm_wgmma_", GEMM_WGMMA_M, GEMM_WGMMA_N, GEMM_WGMMA_THREADS,
     GEMM_WGMMA_SHARED_BYTES, 90, 90,
     ONLY(GPUMATMUL_INT8) | ONLY(GPUMATMUL_UINT8) | ONLY(GPUMATMUL_BOOL), HIGHEST,
     PARAMS_TMA_K_MAJOR, 0, ALL_SHAPES & ~ONLY(SHAPE_TINY)},
    /* ... and the FP8 types into float32 C, for operands contiguous along k
     * (repack.c transposes the others). */
    {TILED, "gemm_wgmma_", GEMM_WGMMA_M, GEMM_WGMMA_N, GEMM_WGMMA_THREADS,
     GEMM_WGMMA_SHARED_BYTES, 90, 90, FP8_DTYPES, HIGHEST, PARAMS_TMA_K_MAJOR, 0, ALL_SHAPES},
    /* gemm_hmma.cu: float16 and bfloat16 on tensor cores, sums in float32, on
     * every GPU from sm_80 but Hopper, whose image leaves its code out for
     * gemm_wgmma's (which repack.c gives every operand). */
#define HMMA_ROW(MIN_ARCH, MAX_ARCH)                                                               \
    {TILED, "gemm_hmma_", GEMM_HMMA_M, GEMM_HMMA_N, GEMM_HMMA_THREADS, GEMM_HMMA_SHARED_BYTES,     \
     MIN_ARCH, MAX_ARCH, ONLY(GPUMATMUL_FLOAT16) | ONLY(GPUMATMUL_BFLOAT16), HIGHEST,              \
     PARAMS_GEMM_ARGS, 0, ALL_SHAPES}
    HMMA_ROW(80, 89),
    HMMA_ROW(100, ANY_ARCH),
#undef HMMA_ROW
    /* gemm_dmma.cu: float64 on FP64 tensor cores. */
    {TILED, "gemm_dmma_", GEMM_DMMA_M, GEMM_DMMA_N, GEMM_DMMA_THREADS, GEMM_DMMA_SHARED_BYTES, 80,
     ANY_ARCH, ONLY(GPUMATMUL_FLOAT64), HIGHEST, PARAMS_GEMM_ARGS, 0, ALL_SHAPES},
    /* gemm_tiled.cu for float32 products up to 64^3, at either precision (it
     * computes exactly, which TF32 allows): a block of gemm_simt computes all of
     * its 128 x 256 tile, and a 16 x 16 product from host memory took 16 us a
     * call with it, 13 us with gemm_tiled. */
    {TILED, "gemm_tiled_", GEMM_TILED_M, GEMM_TILED_N, GEMM_TILED_THREADS, 0, 0, ANY_ARCH,
     ONLY(GPUMATMUL_FLOAT32), HIGHEST | ONLY(GPUMATMUL_PRECISION_TF32), PARAMS_GEMM_ARGS, 0,
     ONLY(SHAPE_TINY) | ONLY(SHAPE_VERY_SMALL)},
    /* gemm_simt.cu: float32 on CUDA cores; at precision TF32 too, for what the
     * TF32 kernel does not take (TF32 allows the shortcut, it does not ask for it). */
    {TILED, "gemm_simt_", GEMM_SIMT_M, GEMM_SIMT_N, GEMM_SIMT_THREADS, GEMM_SIMT_SHARED_BYTES,
     GEMM_SIMT_MIN_ARCH, ANY_ARCH, ONLY(GPUMATMUL_FLOAT32),
     HIGHEST | ONLY(GPUMATMUL_PRECISION_TF32), PARAMS_GEMM_ARGS, ONLY(GPUMATMUL_FLOAT32),
     ALL_SHAPES},
    /* gemm_tiled.cu for complex64 at precision TF32, exactly (which TF32 allows):
     * the products too small to run as one float32 product on TF32 tensor cores
     * (complex_real.c), and those whose workspace does not fit. */
    {TILED, "gemm_tiled_", GEMM_TILED_M, GEMM_TILED_N, GEMM_TILED_THREADS, 0, 0, ANY_ARCH,
     ONLY(GPUMATMUL_COMPLEX64), ONLY(GPUMATMUL_PRECISION_TF32), PARAMS_GEMM_ARGS, 0, ALL_SHAPES},
    /* gemm_imma.cu: int8, uint8 and bool on integer tensor cores, for operands
     * contiguous along k (repack.c transposes the others), on every GPU from
     * sm_80 but Hopper, whose image leaves its code out for gemm_wgmma's (which
     * repack.c gives every layout). Not the tiny products: one gemm_tiled
     * launch finishes those sooner than a transpose and a 128 x 128 block with
     * 80 KiB of shared memory. */
#define IMMA_ROW(MIN_ARCH, MAX_ARCH)                                                               \
    {TILED, "gemm_imma_", GEMM_IMMA_M, GEMM_IMMA_N, GEMM_IMMA_THREADS, GEMM_IMMA_SHARED_BYTES,     \
     MIN_ARCH, MAX_ARCH, ONLY(GPUMATMUL_INT8) | ONLY(GPUMATMUL_UINT8) | ONLY(GPUMATMUL_BOOL),      \
     HIGHEST, PARAMS_K_MAJOR, 0, ALL_SHAPES & ~ONLY(SHAPE_TINY)}
    IMMA_ROW(80, 89),
    IMMA_ROW(100, ANY_ARCH),
#undef IMMA_ROW
    /* gemm_tiled.cu: every dtype, in its own precision, every GPU. */
    {TILED, "gemm_tiled_", GEMM_TILED_M, GEMM_TILED_N, GEMM_TILED_THREADS, 0, 0, ANY_ARCH,
     ALL_DTYPES, HIGHEST, PARAMS_GEMM_ARGS, 0, ALL_SHAPES},
};

/* Each backend's name in messages. */
static const char *const backend_names[BACKEND_COUNT] = {
    [GPUMATMUL_BACKEND_AUTO] = "auto",
    [GPUMATMUL_BACKEND_TILED] = "tiled",
    [GPUMATMUL_BACKEND_CUBLAS] = "cublas",
};
static const char *const precision_names[PRECISION_COUNT] = {
    [GPUMATMUL_PRECISION_HIGHEST] = "highest",
    [GPUMATMUL_PRECISION_TF32] = "tf32",
    [GPUMATMUL_PRECISION_FP16_ACCUMULATE] = "fp16_accumulate",
};

/* What AUTO tries, in order: cuBLAS is the fastest wherever it computes. */
static const gpumatmul_backend auto_order[] = {GPUMATMUL_BACKEND_CUBLAS, GPUMATMUL_BACKEND_TILED};
#define AUTO_ORDER_COUNT ((int)(sizeof auto_order / sizeof auto_order[0]))

int kernel_family_runs_on(int f, int arch) {
    /* ANY_ARCH: some image has its code. */
    return arch == ANY_ARCH || (kernel_families[f].min_arch <= arch &&
                                arch <= kernel_families[f].max_arch);
}

int kernel_family_for(gpumatmul_backend backend, gpumatmul_dtype dtype,
                      gpumatmul_precision precision, int arch, unsigned layouts, unsigned shapes) {
    return kernel_family_after(-1, backend, dtype, precision, arch, layouts, shapes);
}

int kernel_family_after(int previous, gpumatmul_backend backend, gpumatmul_dtype dtype,
                        gpumatmul_precision precision, int arch, unsigned layouts,
                        unsigned shapes) {
    int f;
    for (f = previous + 1; f < KERNEL_FAMILY_COUNT; ++f)
        if (kernel_families[f].backend == backend && ((kernel_families[f].dtypes >> dtype) & 1u) &&
            ((kernel_families[f].precisions >> precision) & 1u) && kernel_family_runs_on(f, arch) &&
            ((layouts >> kernel_families[f].params) & 1u) && (kernel_families[f].shapes & shapes))
            return f;
    return -1;
}

enum shape_class shape_class(int64_t m, int64_t n, int64_t k, int64_t batch) {
    /* In double: the product of four 64-bit sizes may pass INT64_MAX. */
    const double work = (double)m * (double)n * (double)k * (double)batch;
    return work <= 32.0 * 32 * 32        ? SHAPE_TINY
           : work <= 64.0 * 64 * 64     ? SHAPE_VERY_SMALL
           : work <= 512.0 * 512 * 512 ? SHAPE_SMALL
           : work <= 2048.0 * 2048 * 2048 ? SHAPE_MEDIUM
                                          : SHAPE_LARGE;
}

int auto_prefers_tiled(int arch, gpumatmul_dtype dtype, gpumatmul_precision precision, int64_t m,
                       int64_t n, int64_t k, int64_t batch) {
    const unsigned bit = 1u << shape_class(m, n, k, batch);
    int i;
    for (i = 0; i < auto_choice_count; ++i)
        if (auto_choices[i].arch == arch && auto_choices[i].dtype == dtype &&
            auto_choices[i].precision == precision)
            return (auto_choices[i].classes & bit) != 0;
    return 0;
}

/* Whether `backend` (not AUTO) multiplies dtype itself at precision on some GPU: cuBLAS as
 * its column says, the kernels where a family has the dtype. */
static int computes_itself(gpumatmul_backend backend, gpumatmul_dtype dtype,
                           gpumatmul_precision precision) {
    if (backend == GPUMATMUL_BACKEND_CUBLAS) return dtype_infos[dtype].cublas[precision].type != 0;
    return kernel_family_for(backend, dtype, precision, ANY_ARCH, ANY_LAYOUT, ALL_SHAPES) >= 0;
}

/* Whether `backend` (not AUTO) computes dtype at precision: itself or, for a dtype whose C is
 * another, as the product of copies in C's dtype (widened.c: FP8 at precision TF32 is float32
 * copies at TF32, and float8_e5m2 by cuBLAS float32 copies). */
static int computes(gpumatmul_backend backend, gpumatmul_dtype dtype,
                    gpumatmul_precision precision) {
    return computes_itself(backend, dtype, precision) ||
           (WRITES_OTHER_DTYPE(dtype) &&
            computes_itself(backend, dtype_infos[dtype].c_dtype, precision));
}

/* Whether `backend` (not AUTO) computes dtype at any precision. */
static int computes_dtype(gpumatmul_backend backend, gpumatmul_dtype dtype) {
    int p;
    for (p = 0; p < PRECISION_COUNT; ++p)
        if (computes(backend, dtype, (gpumatmul_precision)p)) return 1;
    return 0;
}

/* Appends to a message buffer; the text is cut at the buffer's end. */
static void append(char *buffer, size_t size, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void append(char *buffer, size_t size, const char *format, ...) {
    const size_t used = strlen(buffer);
    va_list args;
    va_start(args, format);
    vsnprintf(buffer + used, size - used, format, args);
    va_end(args);
}

/* "x", "x and y", "x, y and z" (conjunction " and "): the `count` items. */
static void append_list(char *buffer, size_t size, const char *const *items, int count,
                        const char *conjunction) {
    int i;
    for (i = 0; i < count; ++i)
        append(buffer, size, "%s%s", i == 0 ? "" : i < count - 1 ? ", " : conjunction, items[i]);
}

/* NOT_SUPPORTED, saying who computes what instead. */
static gpumatmul_status not_supported(gpumatmul_backend backend, gpumatmul_dtype dtype,
                                      gpumatmul_precision precision) {
    char message[512] = "";
    const char *names[DTYPE_COUNT + BACKEND_COUNT]; /* room for either list */
    int i, b, groups, count = 0;
    /* Backends that would do: suggest them if the asked one lacks the dtype itself. */
    for (b = 0; b < BACKEND_COUNT; ++b)
        if (b != GPUMATMUL_BACKEND_AUTO && computes((gpumatmul_backend)b, dtype, precision))
            names[count++] = backend_names[b];
    if (backend != GPUMATMUL_BACKEND_AUTO && !computes_dtype(backend, dtype) && count > 0) {
        append(message, sizeof message, "the %s backend does not multiply %s%s; use backend ",
               backend_names[backend], dtype_infos[dtype].name,
               backend == GPUMATMUL_BACKEND_CUBLAS ? dtype_infos[dtype].cublas_lacks : "");
        names[count++] = backend_names[GPUMATMUL_BACKEND_AUTO];
        append_list(message, sizeof message, names, count, " or ");
        return set_error(GPUMATMUL_ERROR_NOT_SUPPORTED, "%s", message);
    }
    /* Otherwise the precision is the obstacle: say where it applies. */
    if (backend == GPUMATMUL_BACKEND_AUTO)
        append(message, sizeof message, "no backend computes %s at precision %s: ",
               dtype_infos[dtype].name, precision_names[precision]);
    else
        append(message, sizeof message, "the %s backend does not compute %s at precision %s: ",
               backend_names[backend], dtype_infos[dtype].name, precision_names[precision]);
    append(message, sizeof message, "precision %s applies to ", precision_names[precision]);
    for (groups = 0, b = 0; b < BACKEND_COUNT; ++b) {
        if (b == GPUMATMUL_BACKEND_AUTO) continue;
        for (count = 0, i = 0; i < DTYPE_COUNT; ++i)  /* the FP8 pairs go with their types */
            if (IS_ELEMENT_TYPE(i) && computes((gpumatmul_backend)b, (gpumatmul_dtype)i, precision))
                names[count++] = dtype_infos[i].name;
        if (count == 0) continue;
        append(message, sizeof message, "%s", groups++ ? "; " : "");
        append_list(message, sizeof message, names, count, " and ");
        append(message, sizeof message, " with the %s backend", backend_names[b]);
    }
    return set_error(GPUMATMUL_ERROR_NOT_SUPPORTED, "%s", message);
}

gpumatmul_status choose_backend(gpumatmul_backend backend, gpumatmul_dtype dtype,
                                gpumatmul_precision precision, gpumatmul_backend *chosen,
                                int *family) {
    const gpumatmul_backend *candidates = backend == GPUMATMUL_BACKEND_AUTO ? auto_order : &backend;
    const int candidate_count = backend == GPUMATMUL_BACKEND_AUTO ? AUTO_ORDER_COUNT : 1;
    int i;
    /* Enums may hold any int: compare as unsigned to reject negatives too. */
    if ((unsigned)backend >= BACKEND_COUNT)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "backend %d is not a gpumatmul_backend",
                         (int)backend);
    if ((unsigned)dtype >= DTYPE_COUNT)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT, "dtype %d is not a gpumatmul_dtype",
                         (int)dtype);
    if ((unsigned)precision >= PRECISION_COUNT)
        return set_error(GPUMATMUL_ERROR_INVALID_ARGUMENT,
                         "precision %d is not a gpumatmul_precision", (int)precision);
    for (i = 0; i < candidate_count; ++i)
        if (computes(candidates[i], dtype, precision)) {
            *chosen = candidates[i];
            *family = kernel_family_for(candidates[i], dtype, precision, ANY_ARCH, ANY_LAYOUT,
                                        ALL_SHAPES);
            return GPUMATMUL_SUCCESS;
        }
    return not_supported(backend, dtype, precision);
}

gpumatmul_status gpumatmul_backend_supports(gpumatmul_backend backend, gpumatmul_dtype dtype,
                                            gpumatmul_precision precision) {
    gpumatmul_backend chosen;
    int family;
    return choose_backend(backend, dtype, precision, &chosen, &family);
}
