/* The gemm layer of libgpumatmul: one GPU's product. The dtype table and the
 * kernel registry (tables.c, auto_table.c), the kernel image and its kernels
 * (images.c), and the product itself: its route among cuBLAS and the kernels,
 * a pure function of the product and the device (route.c), run by a table of
 * runners (multiply.c): a kernel's launches (launch.c), cuBLAS (cublas.c,
 * cublas_lt.c),
 * split k (split_k.c), operands repacked for k-major kernels (repack.c),
 * complex products as real ones (complex_real.c), wider integers' products as
 * products of their bytes (byte_split.c); and copies with casts of any arrays
 * (convert.c). Builds on core/; calls nothing above. */
#ifndef GPUMATMUL_GEMM_H
#define GPUMATMUL_GEMM_H

#include "core/core.h"
#include "gemm/kernel_images.h"
#include "gemm_tiled.h"
#include "gemm_wgmma.h" /* struct gemm_c_update */

/* The enums are dense from 0, so their last value bounds the tables. */
#define DTYPE_COUNT (GPUMATMUL_FLOAT8_E5M2_E4M3FN + 1)
#define BACKEND_COUNT (GPUMATMUL_BACKEND_CUBLAS + 1)
#define PRECISION_COUNT (GPUMATMUL_PRECISION_FP16_ACCUMULATE + 1)

/* CUDA's grid limits (every GPU since compute capability 3.0): the blocks of
 * one launch along x, y and z; larger problems take several launches. */
#define MAX_GRID_X INT64_C(2147483647)
#define MAX_GRID_Y INT64_C(65535)
#define MAX_GRID_Z INT64_C(65535)

/* `count` elements of `size` bytes rounded up to whole 16-byte pieces: the
 * rows of the workspaces' copies, as TMA and 16-byte copies want them. */
static inline int64_t whole_16_bytes(int64_t count, size_t size) {
    const int64_t piece = 16 / (int64_t)size;
    return ceil_div(count, piece) * piece;
}

/* ---- The dtype table (tables.c): everything the library knows about a dtype ---- */

/* How cuBLAS computes one dtype at one precision. */
struct cublas_compute {
    cublasComputeType_t type; /* 0 (no such cublasComputeType_t): not at this precision */
    cudaDataType scale_type;  /* of alpha and beta */
    const void *one;          /* alpha = 1 in scale_type; beta = 0 is all-zero bits in any */
};

/* How cuBLAS multiplies a dtype its GEMM entry points lack, through cuBLASLt
 * (cublas_lt.c): its IMMA kernels sum int8 in int32, its FP8 kernels write
 * float32. */
struct by_cublaslt {
    int used;                /* 1: cuBLAS multiplies the dtype through cuBLASLt alone */
    int min_arch;            /* the oldest architecture with its kernels (10 * major + minor) */
    gpumatmul_dtype c_dtype; /* the dtype cuBLASLt writes C in ... */
    cudaDataType c_type;     /* ... by its CUDA name */
    /* The sizes its kernels take: n a multiple of n_multiple, k of k_multiple
     * (measured, cuBLASLt 13.1 on an H200: docs/kernel-log.md, step 19). */
    int n_multiple, k_multiple;
};

struct dtype_info {
    const char *name;         /* NumPy's name, for messages */
    size_t size;              /* bytes per element */
    /* The dtype of C in its products: its own, but float32 for the FP8 types
     * (NumPy's matmul returns float32); and what widened.c widens A and B to
     * where no kernel multiplies the dtype itself. */
    gpumatmul_dtype c_dtype;
    cudaDataType cuda_type;   /* of A, B and C for cuBLAS; NO_CUDA_TYPE if cuBLAS has none */
    struct cublas_compute cublas[PRECISION_COUNT];
    struct by_cublaslt cublaslt;
    const char *cublas_lacks; /* why cuBLAS does not multiply it, for messages; "" if it does */
    const char *kernel_suffix; /* kernel symbols are a family's prefix + this, e.g. "f32" */
    /* A's and B's element types where they differ (the mixed FP8 pairs, whose
     * cuda_type is A's); NULL: both are this dtype. */
    const gpumatmul_dtype *pair;
};
extern const struct dtype_info dtype_infos[DTYPE_COUNT];

/* The element type of operand `position` (0: A, 1: B) in products of `dtype`. */
static inline gpumatmul_dtype operand_dtype(gpumatmul_dtype dtype, int position) {
    return dtype_infos[dtype].pair ? dtype_infos[dtype].pair[position] : dtype;
}

/* Whether `dtype` is an element type, not a product's type of two (pair). */
#define IS_ELEMENT_TYPE(dtype) (dtype_infos[dtype].pair == NULL)

/* Bytes per element of C in products of `dtype`, and whether they write another dtype. */
#define C_SIZE(dtype) (dtype_infos[dtype_infos[dtype].c_dtype].size)
#define WRITES_OTHER_DTYPE(dtype) (dtype_infos[dtype].c_dtype != (dtype))

/* cuBLAS has no NumPy-exact product for these dtypes (integers and bool). */
#define NO_CUDA_TYPE ((cudaDataType)-1)

/* ---- Shape classes (tables.c) ----
 *
 * Products by size, for the kernel registry's rows and AUTO's measurements: a
 * class is m * n * k * batch_count of at most 32^3, 64^3, 512^3, 2048^3, or
 * more. Up to 64^3 a call costs the host more than the GPU's work, and a
 * kernel launch (4 to 5 us on an H200's host) a third of a cuBLAS call (13
 * us): the kernels win there, except complex128's above 32^3, which are
 * GPU-bound (docs/kernel-log.md, step 13): hence two classes. */
enum shape_class {
    SHAPE_TINY,
    SHAPE_VERY_SMALL,
    SHAPE_SMALL,
    SHAPE_MEDIUM,
    SHAPE_LARGE,
    SHAPE_CLASS_COUNT
};
enum shape_class shape_class(int64_t m, int64_t n, int64_t k, int64_t batch);
#define ALL_SHAPES ((1u << SHAPE_CLASS_COUNT) - 1)

/* ---- The kernel registry (tables.c): pyctk's own kernels ----
 *
 * A family is one kernel per dtype, named prefix + the dtype's kernel_suffix,
 * all taking one parameter (`params`) and launched on a grid of
 * ceil(m / tile_m) x ceil(n / tile_n) x batch blocks of `threads` threads with
 * `shared_bytes` of dynamic shared memory. A new kernel is a new .cu file
 * (listed in meson.build's kernel_images) plus one row in tables.c, counted
 * here. Rows are in order of preference: a product runs on the first row of
 * its backend that has its dtype and precision, whose [min_arch, max_arch] holds
 * the loaded image's architecture (a family that needs other instructions
 * compiles to an empty kernel elsewhere, and a later row, at least the tiled
 * family, takes those GPUs), whose params suit the operands and whose shapes
 * hold the product's shape class. */
enum kernel_params {
    /* struct gemm_args (gemm_tiled.h): every shape, stride and alignment. */
    PARAMS_GEMM_ARGS,
    /* struct gemm_tma_args (gemm_wgmma.h): TMA descriptors of A and B, made at
     * launch, for operands whose layout TMA describes (route.c: operand_layouts)... */
    PARAMS_TMA,
    /* ... and that are both contiguous along k. */
    PARAMS_TMA_K_MAJOR,
    /* struct gemm_args, for operands that are both contiguous along k (A not
     * transposed, B transposed), of any alignment. */
    PARAMS_K_MAJOR,
};
/* Whether kernels of these params read their operands through TMA
 * (struct gemm_tma_args), and whether they take k-major operands only. */
static inline int params_read_tma(enum kernel_params p) {
    return p == PARAMS_TMA || p == PARAMS_TMA_K_MAJOR;
}
static inline int params_k_major_only(enum kernel_params p) {
    return p == PARAMS_TMA_K_MAJOR || p == PARAMS_K_MAJOR;
}
struct kernel_family {
    gpumatmul_backend backend; /* the backend value that selects it */
    const char *prefix;        /* e.g. "gemm_tiled_" */
    int tile_m, tile_n;        /* C elements per block */
    int threads;               /* per block */
    unsigned shared_bytes;     /* dynamic shared memory per block */
    int min_arch, max_arch;    /* the images (10 * major + minor) with its code */
    unsigned dtypes;           /* bit d set: has a kernel for gpumatmul_dtype d */
    unsigned precisions;       /* bit p set: computes at gpumatmul_precision p */
    enum kernel_params params;
    /* bit d set: a product of gpumatmul_dtype d whose grid leaves multiprocessors
     * idle may cut k into pieces computed side by side, their partial sums kept
     * in d and added by gemm_reduce_<suffix> (split_k.c). Never float16 or
     * bfloat16, whose sums are float32: a 16-bit partial would lose them. */
    unsigned split_dtypes;
    /* bit c set: taken for products of shape_class c. A row for some classes
     * goes before the row that takes the rest (gemm_tiled's float32 row takes
     * the tiny products, which gemm_simt's large blocks finish later). */
    unsigned shapes;
};
#define KERNEL_FAMILY_COUNT 13
extern const struct kernel_family kernel_families[KERNEL_FAMILY_COUNT];

/* The registry row that computes dtype at precision for `backend` on an image
 * of architecture `arch` (any architecture: ANY_ARCH), for operands whose
 * layout suits the params whose bits `layouts` sets (ANY_LAYOUT: ask about
 * any operands) and a product of a shape class whose bit `shapes` sets
 * (ALL_SHAPES: of any size); -1 if none. */
#define ANY_ARCH 0x7fffffff
#define ANY_LAYOUT (~0u)
int kernel_family_for(gpumatmul_backend backend, gpumatmul_dtype dtype,
                      gpumatmul_precision precision, int arch, unsigned layouts, unsigned shapes);
/* The same among the rows after row `previous`: the next choice. */
int kernel_family_after(int previous, gpumatmul_backend backend, gpumatmul_dtype dtype,
                        gpumatmul_precision precision, int arch, unsigned layouts,
                        unsigned shapes);

/* Whether family f has code in an image of architecture `arch`. */
int kernel_family_runs_on(int f, int arch);

/* ---- AUTO's measurements (auto_table.c, written by benchmarks/auto_table.py) ----
 *
 * AUTO multiplies with cuBLAS where it computes the case, except where the
 * tiled backend (its first registry row for the image) measured faster than
 * cuBLAS for the image's architecture, the dtype, the precision and the shape
 * class: one row per architecture, dtype and precision measured. */
struct auto_choice {
    int arch; /* the kernel image's, 10 * major + minor */
    gpumatmul_dtype dtype;
    gpumatmul_precision precision;
    unsigned classes; /* bit c set: the kernels were faster on shape class c */
};
extern const struct auto_choice auto_choices[];
extern const int auto_choice_count;

/* Whether AUTO takes the tiled backend over cuBLAS for this product on an
 * image of architecture `arch`. */
int auto_prefers_tiled(int arch, gpumatmul_dtype dtype, gpumatmul_precision precision, int64_t m,
                       int64_t n, int64_t k, int64_t batch);

/* Which implementation computes `dtype` at `precision` when `backend` is asked
 * for: `backend` itself, or for AUTO cuBLAS if it can, else a kernel family.
 * Sets *chosen (CUBLAS or a family's backend, never AUTO) and *family (the
 * registry row for ANY_ARCH, -1 for cuBLAS). INVALID_ARGUMENT for a value
 * outside the enums, NOT_SUPPORTED (with gpumatmul_backend_supports's message)
 * if none computes it. */
gpumatmul_status choose_backend(gpumatmul_backend backend, gpumatmul_dtype dtype,
                                gpumatmul_precision precision, gpumatmul_backend *chosen,
                                int *family);

/* ---- The loaded kernels (images.c) ---- */

/* The transposes repack.c launches (defined there): gemm_transpose_b<8 x size>
 * for elements of `size` bytes, a block a square of `tile` elements a side. */
struct transpose_kernel {
    size_t size;
    int64_t tile;
};
#define TRANSPOSE_KERNEL_COUNT 2
extern const struct transpose_kernel transpose_kernels[TRANSPOSE_KERNEL_COUNT];

/* What gpumatmul_create loads for a context's device: the image that fits it
 * and every registered kernel of that image. Only read after that: shared by
 * every thread. */
struct kernels {
    int image_index;
    CUmodule module;
    /* family[f][d]: family f's kernel for dtype d (NULL where it has none). */
    CUfunction family[KERNEL_FAMILY_COUNT][DTYPE_COUNT];
    /* reduce[d]: gemm_reduce_<suffix> for each dtype some family may split
     * (split_dtypes), NULL elsewhere. */
    CUfunction reduce[DTYPE_COUNT];
    CUfunction transpose[TRANSPOSE_KERNEL_COUNT]; /* by transpose_kernels, for repack.c */
    CUfunction convert;   /* for convert.c */
    /* expand[d]: complex_expand_<suffix> for each complex dtype of complex_plans
     * (complex_real.c), NULL elsewhere. */
    CUfunction expand[DTYPE_COUNT];
    CUfunction byte_split; /* for byte_split.c */
};

/* Loads the image that fits ctx's device, which must be current, and looks up
 * every kernel of the registry into ctx->kernels: a missing one fails here, not
 * at the first product. NO_KERNEL_IMAGE if no image runs on the device. */
gpumatmul_status kernels_load(gpumatmul_context *ctx);

/* Unloads ctx's kernels, if any, and frees them (the device must be current). */
gpumatmul_status kernels_unload(gpumatmul_context *ctx);

/* The architecture (10 * major + minor) of ctx's kernel image. */
static inline int kernels_arch(const gpumatmul_context *ctx) {
    return kernel_images[ctx->kernels->image_index].arch;
}

/* ---- One product ---- */

/* How a batch of matrices is stored: matrix i is `rows` x `cols` elements at
 * base + i * stride, element (r, c) at r * ld + c. */
struct layout {
    int64_t rows, cols, ld, stride;
};

/* One checked call. */
struct gemm {
    gpumatmul_backend backend; /* the one that computes: never AUTO */
    int family;                /* its first registry row for the context's image (the launch
                                * may take a later one: route_of); -1 for cuBLAS */
    int automatic;             /* AUTO took the family over cuBLAS (auto_prefers_tiled) */
    gpumatmul_dtype dtype;
    /* C's: the dtype's c_dtype (prepare.c), but float32 for widened.c's
     * float16 copies of FP8 operands, which cuBLAS multiplies into float32 C. */
    gpumatmul_dtype c_dtype;
    gpumatmul_precision precision;
    int trans_a, trans_b;
    int64_t m, n, k, batch;
    const void *a, *b;
    void *c;
    struct layout la, lb, lc; /* as stored: A is k x m when trans_a, likewise B */
    int accumulate;           /* C += op(A) op(B) (cuBLAS only: beta = 1), else C = */
    int64_t a_bytes, b_bytes, c_bytes; /* from each first element to past its last */
    /* Device bytes the product may take for a workspace (split_k.c): all it
     * wants (INT64_MAX) unless the host path's budget leaves less. */
    int64_t workspace_max;
    /* Set by byte_split.c alone (zeros elsewhere): C's elements are
     * c_update.size bytes, not the dtype's, and written as gemm_wgmma.h's
     * struct gemm_c_update says. */
    struct gemm_c_update c_update;
};

/* The product on device memory of the current device, enqueued on `stream`
 * (k == 0: C is zeros, an empty sum as in NumPy): the device's facts read
 * once, g's route (route_of), then its runner (multiply.c). `worker` is the
 * caller's, or NULL to take one for cuBLAS. */
gpumatmul_status multiply(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                          cudaStream_t stream);

/* ---- The route (route.c) and its runners (multiply.c) ---- */

/* What a product's route depends on of the device, read once per product:
 * the architecture (10 * major + minor) of its kernel image, and its
 * multiprocessors, which split k fills. */
struct device_facts {
    int arch;
    int multiprocessors;
};

/* The ways a product runs: a row each of multiply.c's table of runners. */
enum runner {
    RUNNER_ZERO_FILL,       /* k == 0: C is zeros */
    RUNNER_BYTE_SPLIT,      /* products of the operands' bytes on `family` (byte_split.c) */
    RUNNER_COMPLEX_AS_REAL, /* one real product, with a route of its own (complex_real.c) */
    RUNNER_WIDENED,         /* the product of A and B widened to C's dtype (widened.c) */
    RUNNER_REPACKED,        /* `family` on copies of the operands (repack.c) */
    RUNNER_SPLIT_K,         /* `family` over `splits` pieces of k (split_k.c) */
    RUNNER_KERNEL,          /* `family`'s launches (launch.c) */
    RUNNER_CUBLAS,          /* cublas.c (and cublas_lt.c) */
    RUNNER_COUNT
};

/* Settles g's backend and first kernel family (g checked and filled by
 * api/prepare.c, which choose_backend gave both for any architecture) for an
 * image of architecture `arch`, `asked` being the backend the caller asked
 * for: g moves from the registry's first family for its case to the first one
 * with code in the image, and for AUTO from cuBLAS to that family where it
 * measured faster (auto_prefers_tiled) or where cuBLAS would multiply copies
 * or not at all (cuBLASLt lacks the dtype, its sizes or the architecture).
 * NOT_SUPPORTED, saying what would do, where nothing computes g there. Reads g
 * and the tables only. */
gpumatmul_status settle_backend(struct gemm *g, int arch, gpumatmul_backend asked);

/* How one product runs. */
struct route {
    enum runner runner;
    int family;     /* the registry row the runner launches; -1 for those that pick none */
    int64_t splits; /* pieces of k: more than 1 for RUNNER_SPLIT_K alone */
};

/* How g (checked: api/prepare.c) runs on a device of these facts. Reads g and
 * the tables only: the same answer for the same arguments, with or without a
 * GPU. In order of preference: k == 0, a byte split, operands widened, cuBLAS
 * when g's backend is cuBLAS, a complex product as a real one, then
 * kernel_route. */
struct route route_of(const struct gemm *g, const struct device_facts *device);

/* The route among the kernels alone, for g's operands as they are: repacked
 * for an earlier family, else split k or the family's launches; cuBLAS where
 * AUTO measured another family than the one these operands get. Never a
 * complex product as a real one: that product's own real one runs by it. */
struct route kernel_route(const struct gemm *g, const struct device_facts *device);

/* Runs g by `route` (route_of or kernel_route) on `stream` (multiply.c). */
gpumatmul_status run_route(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                           const struct route *route, const struct device_facts *device,
                           cudaStream_t stream);

/* The product by cuBLAS, with the worker's handle (cublas.c); through cuBLASLt
 * (cublaslt_gemm) for the dtypes whose table row says so. */
gpumatmul_status cublas_gemm(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                             cudaStream_t stream);

/* ---- The product by cuBLASLt (cublas_lt.c) ---- */

/* Whether cuBLAS's kernels take g's sizes for `dtype` on an image of
 * architecture `arch`: any, unless cuBLAS multiplies it through cuBLASLt,
 * whose kernels run from its row's by_cublaslt.min_arch on and take n and k
 * of its multiples. */
int cublaslt_takes(const struct gemm *g, gpumatmul_dtype dtype, int arch);

/* g (k > 0; by_cublaslt.used, cublaslt_takes) by cuBLASLt with the worker's
 * handle: A and B copied k-major with 16-byte rows (repack_operands) where they
 * are not, as its kernels read them; C written through a workspace in
 * by_cublaslt.c_dtype, converted into C after, where C is another dtype or
 * its rows are not of whole 16 bytes; every workspace from the context's pool,
 * all on `stream`. NOT_SUPPORTED if cuBLASLt finds no kernel for the product,
 * OUT_OF_MEMORY if the pool cannot give a workspace. */
gpumatmul_status cublaslt_gemm(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                               cudaStream_t stream);

/* Kernel family f's launches over the whole problem as it is, k > 0 (launch.c). */
gpumatmul_status kernel_gemm(gpumatmul_context *ctx, const struct gemm *g, int f,
                             cudaStream_t stream);

/* The TMA families' largest m, n and k: the kernels' coordinates are 32-bit,
 * with a tile's worth of room past the end. */
#define TMA_EXTENT_MAX (INT64_C(2147483647) - 1024)

/* Whether TMA describes operand `data` (laid out as l) of g: 16-byte aligned,
 * strides of whole 16 bytes, sizes within 32-bit coordinates (launch.c). */
int tma_describes(const struct gemm *g, const void *data, const struct layout *l);

/* How many matrices a batch stores: a zero stride is one matrix for all. */
static inline int64_t stored_count(const struct layout *l, int64_t batch) {
    return l->stride == 0 ? 1 : batch;
}

/* The registry's shapes bit for g's product. */
static inline unsigned shape_bit(const struct gemm *g) {
    return 1u << shape_class(g->m, g->n, g->k, g->batch);
}

/* ---- Copies with casts (convert.c) ---- */

/* gpumatmul_copy_device's copy, its arguments checked (api/copy.c): enqueued on
 * `stream`, on the context's device, which is current. */
gpumatmul_status convert_array(gpumatmul_context *ctx, const gpumatmul_array_desc *dst,
                               void *dst_data, const gpumatmul_array_desc *src,
                               const void *src_data, cudaStream_t stream);

/* ---- Operands repacked for the TMA and k-major kernels (repack.c) ---- */

/* Whether family f takes some operands only as repacked_gemm copies them: a
 * TMA family (PARAMS_TMA, PARAMS_TMA_K_MAJOR) those TMA can read, a k-major
 * one (PARAMS_TMA_K_MAJOR, PARAMS_K_MAJOR) those contiguous along k. */
int takes_repacked(int f);

/* Whether repacked_gemm can run g on family f (takes_repacked): elements of a
 * size in transpose_kernels where an operand must be transposed, within the
 * transpose's grid, and the copies within g->workspace_max. */
int repackable(const struct gemm *g, int f);

/* *packed: g with each operand that kernels of these params cannot read as it
 * is copied into *workspace, from the context's pool (rows of whole 16 bytes;
 * transposed for k-major params), on `stream`; *workspace is NULL if none
 * needed a copy, else the caller frees it (workspace_free) after its product. */
gpumatmul_status repack_operands(gpumatmul_context *ctx, const struct gemm *g,
                                 enum kernel_params params, struct gemm *packed,
                                 void **workspace, cudaStream_t stream);

/* g on family f (takes_repacked) with each operand f cannot read as it is
 * first copied into a workspace from the context's pool (rows of whole 16
 * bytes; transposed for a k-major family), freed after, all on `stream`.
 * OUT_OF_MEMORY if the pool cannot give the workspace. */
gpumatmul_status repacked_gemm(gpumatmul_context *ctx, const struct gemm *g, int f,
                               cudaStream_t stream);

/* ---- Complex products as one real product (complex_real.c) ---- */

/* A complex case that runs as a real product of its parts: `dtype` at
 * `precision` as `real_dtype` at `real_precision`. */
struct complex_plan {
    gpumatmul_dtype dtype;
    gpumatmul_precision precision;
    gpumatmul_dtype real_dtype;
    gpumatmul_precision real_precision;
};
#define COMPLEX_PLAN_COUNT 3
extern const struct complex_plan complex_plans[COMPLEX_PLAN_COUNT];

/* Whether complex_real_gemm runs g: a case of complex_plans whose real
 * product has a family on an image of architecture `arch` for k-major
 * operands of any alignment (no real float32 kernel computes TF32 before
 * sm_70: there the complex kernel stays), of shape class SHAPE_MEDIUM or
 * larger, B within the expansion's grid, and the workspace (B expanded, twice
 * its size, and A's copy if A is transposed) within g->workspace_max. */
int complex_as_real(const struct gemm *g, int arch);

/* g (complex, k > 0; complex_as_real) as one real product on the kernels of
 * its real dtype: B expanded into a workspace from the context's pool (and A
 * copied there if it is transposed), then the real product by its
 * kernel_route, the workspace freed after, all on `stream`. OUT_OF_MEMORY if
 * the pool cannot give the workspace. */
gpumatmul_status complex_real_gemm(gpumatmul_context *ctx, struct worker *worker,
                                   const struct gemm *g, const struct device_facts *device,
                                   cudaStream_t stream);

/* ---- Products of operands widened to a wider dtype (widened.c) ---- */

/* Whether widened_gemm runs g: a dtype whose C is another dtype (FP8: float32)
 * that g's backend does not multiply itself on an image of architecture `arch`
 * at g's precision (FP8 tensor cores are Hopper's, with sizes of cuBLASLt's
 * rule, at HIGHEST alone), where one of widened.c's widenings runs on g's
 * backend. */
int widens(const struct gemm *g, int arch);

/* The dtype widened_gemm copies g's operands into on an image of `arch`: the
 * first of widened.c's widenings that g's backend runs; -1 if g does not widen. */
int widened_dtype(const struct gemm *g, int arch);

/* Whether g's backend multiplies `dtype` itself, not through copies, on an
 * image of architecture `arch`: cuBLAS where its column has g's precision and
 * its kernels take g's sizes (cublaslt_takes), the kernels where a family has
 * code for the dtype. */
int backend_multiplies(const struct gemm *g, gpumatmul_dtype dtype, int arch);

/* g (k > 0; widens) as the product of A and B copied exactly into a wider
 * dtype (float16 for cuBLAS at HIGHEST: its tensor cores; else float32) in a
 * workspace from the context's pool, by that product's kernel_route, the
 * workspace freed after, all on `stream`. OUT_OF_MEMORY if the pool cannot
 * give the workspace. */
gpumatmul_status widened_gemm(gpumatmul_context *ctx, struct worker *worker,
                              const struct gemm *g, const struct device_facts *device,
                              cudaStream_t stream);

/* ---- Wider integers as products of their bytes (byte_split.c) ---- */

/* Whether byte_split_gemm runs g: a dtype of 2, 4 or 8 bytes of byte_splits,
 * the tiled backend, a family on an image of architecture `arch` that takes
 * 1-byte operands k-major through TMA (gemm_wgmma_u8, which writes wide C)
 * (byte_planes_family), shape class
 * SHAPE_MEDIUM or larger, the operands within the split's grid, and the
 * workspace (the operands' bytes, k rounded up to 16) within
 * g->workspace_max. */
int byte_split_runs(const struct gemm *g, int arch);

/* The family whose u8 kernel multiplies g's byte planes on an image of
 * architecture `arch`; -1 if none. */
int byte_planes_family(const struct gemm *g, int arch);

/* g (k > 0) as products of its operands' bytes: A and B split into planes of
 * their bytes in a workspace from the context's pool, then one 1-byte product
 * per diagonal of byte pairs (and per chunk of k for 8-byte elements), each
 * shifted into C by family f (byte_planes_family), the workspace freed after,
 * all on `stream`. OUT_OF_MEMORY if the pool cannot give the workspace. */
gpumatmul_status byte_split_gemm(gpumatmul_context *ctx, const struct gemm *g, int f,
                                 cudaStream_t stream);

/* ---- Split k (split_k.c) ---- */

/* Into how many pieces of k family f's product is best cut (1: not at all),
 * by the family's split_dtypes, the grid against the device's
 * `multiprocessors`, k, and g->workspace_max. */
int64_t k_splits(const struct gemm *g, int f, int64_t multiprocessors);

/* The product of a kernel family cut into `splits` pieces of k (k_splits):
 * their partial products into a workspace from the context's pool, then
 * summed into C in a fixed order. OUT_OF_MEMORY if the pool cannot give the
 * workspace. Everything is enqueued on `stream`, the workspace's free too. */
gpumatmul_status split_k_gemm(gpumatmul_context *ctx, const struct gemm *g, int f, int64_t splits,
                              cudaStream_t stream);

#endif
