/* Declarations shared by libgpumatmul's source files; not installed. */
#ifndef GPUMATMUL_INTERNAL_H
#define GPUMATMUL_INTERNAL_H

#include <pthread.h>

/* glibc 2.34 moved pthread_create and pthread_join into libc under a new
 * version. Binding the old one, in every file that may call them, keeps the
 * library loadable on glibc 2.17 (where libpthread.so.0, in DT_NEEDED through
 * meson.build, defines them). */
#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 34)
#if defined(__x86_64__)
__asm__(".symver pthread_create, pthread_create@GLIBC_2.2.5");
__asm__(".symver pthread_join, pthread_join@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver pthread_create, pthread_create@GLIBC_2.17");
__asm__(".symver pthread_join, pthread_join@GLIBC_2.17");
#endif
#endif
#endif

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "gpumatmul.h"

/* The enums are dense from 0, so their last value bounds the tables. */
#define DTYPE_COUNT (GPUMATMUL_BOOL + 1)
#define BACKEND_COUNT (GPUMATMUL_BACKEND_CUBLAS + 1)
#define PRECISION_COUNT (GPUMATMUL_PRECISION_FP16_ACCUMULATE + 1)

/* ---- The dtype table (tables.c): everything the library knows about a dtype ---- */

/* How cuBLAS computes one dtype at one precision. */
struct cublas_compute {
    cublasComputeType_t type; /* 0 (no such cublasComputeType_t): not at this precision */
    cudaDataType scale_type;  /* of alpha and beta */
    const void *one;          /* alpha = 1 in scale_type; beta = 0 is all-zero bits in any */
};

struct dtype_info {
    const char *name;         /* NumPy's name, for messages */
    size_t size;              /* bytes per element */
    cudaDataType cuda_type;   /* of A, B and C for cuBLAS; NO_CUDA_TYPE if cuBLAS has none */
    struct cublas_compute cublas[PRECISION_COUNT];
    const char *kernel_suffix; /* kernel symbols are a family's prefix + this, e.g. "f32" */
};
extern const struct dtype_info dtype_infos[DTYPE_COUNT];

/* cuBLAS has no NumPy-exact product for these dtypes (integers and bool). */
#define NO_CUDA_TYPE ((cudaDataType)-1)

/* ---- Shape classes (tables.c) ----
 *
 * Products by size, for the kernel registry's rows and AUTO's measurements: a
 * class is m * n * k * batch_count of at most 32^3, 512^3, 2048^3, or more. */
enum shape_class { SHAPE_TINY, SHAPE_SMALL, SHAPE_MEDIUM, SHAPE_LARGE, SHAPE_CLASS_COUNT };
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
     * launch, for operands whose layout TMA describes (gemm.c: tma_layouts)... */
    PARAMS_TMA,
    /* ... and that are both contiguous along k. */
    PARAMS_TMA_K_MAJOR,
};
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
#define KERNEL_FAMILY_COUNT 7
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

/* ---- Contexts ---- */

/* Driver API entry points, fetched through cudart so that libgpumatmul does
 * not link libcuda.so.1 and loads on machines without a driver. */
struct driver_api {
    CUresult (*module_load_data)(CUmodule *module, const void *image);
    CUresult (*module_unload)(CUmodule module);
    CUresult (*module_get_function)(CUfunction *function, CUmodule module, const char *name);
    CUresult (*func_set_attribute)(CUfunction function, CUfunction_attribute attribute, int value);
    CUresult (*launch_kernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                              unsigned block_x, unsigned block_y, unsigned block_z,
                              unsigned shared_bytes, CUstream stream, void **params, void **extra);
    CUresult (*get_error_name)(CUresult error, const char **name);
    CUresult (*tensor_map_encode_tiled)(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                        void *address, const cuuint64_t *dims,
                                        const cuuint64_t *strides, const cuuint32_t *box,
                                        const cuuint32_t *element_strides,
                                        CUtensorMapInterleave interleave,
                                        CUtensorMapSwizzle swizzle,
                                        CUtensorMapL2promotion l2_promotion,
                                        CUtensorMapFloatOOBfill oob_fill);
    CUresult (*pointer_get_attributes)(unsigned count, CUpointer_attribute *attributes,
                                       void **values, CUdeviceptr pointer);
};

/* What one call in flight uses alone: a cuBLAS handle (each call binds it to its
 * stream with cublasSetStream, and cuBLAS forbids two threads using one handle at
 * once) and the host calls' stream (each host call synchronises its stream, so two
 * calls sharing one would wait for each other's work). */
struct worker {
    /* Made by the worker's first cuBLAS product (worker_cublas): creating one takes
     * tens of milliseconds, which a process whose products are all pyctk's own
     * kernels (its first tiny product, say) never needs to pay. */
    cublasHandle_t cublas;
    cudaStream_t stream;  /* non-blocking: a host call's copies, allocations, product */
    struct host_staging *host; /* the host path's own streams and buffers, made on first use */
    struct worker *next;  /* in the context's idle list */
};

struct gpumatmul_context {
    int device;
    size_t total_memory; /* the device's, in bytes */
    int image_index;
    struct driver_api driver;
    /* The module and its kernels are only read after gpumatmul_create: shared by
     * every thread. */
    CUmodule module;
    /* kernels[f][d]: family f's kernel for dtype d (NULL where it has none). */
    CUfunction kernels[KERNEL_FAMILY_COUNT][DTYPE_COUNT];
    /* reduce[d]: gemm_reduce_<suffix> for each dtype some family may split
     * (split_dtypes), NULL elsewhere. */
    CUfunction reduce[DTYPE_COUNT];
    CUfunction transpose; /* gemm_transpose_b32, for repack.c */
    int multiprocessors; /* the device's, asked once: split_k.c sizes grids by it */
    /* Workers no call is using. The lock guards only this list, held for one pop
     * or push, never across GPU work: threads multiply at once, each with a worker
     * of its own. */
    pthread_mutex_t lock;
    struct worker *idle;
    /* The host calls' device memory, shared by their workers' streams (a pool is
     * thread-safe). Its own pool, not the device's default one, so that keeping
     * freed memory for the next call (a release threshold of "never") changes no
     * other library's pool: returning memory to the driver at every
     * synchronisation, as a pool does by default, costs hundreds of microseconds
     * per call. */
    cudaMemPool_t pool;
};

/* Takes an idle worker, or creates one (outside the lock) when every worker is
 * in a call: the pool grows to the most calls ever in flight at once. The
 * context's device must be current. */
gpumatmul_status take_worker(gpumatmul_context *ctx, struct worker **worker);
/* Returns a worker to the idle list once its call no longer needs it. */
void give_back_worker(gpumatmul_context *ctx, struct worker *worker);
/* The worker's cuBLAS handle, created on the current device (the worker's) if it
 * has none yet. */
gpumatmul_status worker_cublas(struct worker *worker, cublasHandle_t *handle);

/* ---- Products (gemm.c), shared with the host path (host_pipeline.c) ---- */

/* How a batch of matrices is stored: matrix i is `rows` x `cols` elements at
 * base + i * stride, element (r, c) at r * ld + c. */
struct layout {
    int64_t rows, cols, ld, stride;
};

/* One checked call. */
struct gemm {
    gpumatmul_backend backend; /* the one that computes: never AUTO */
    int family;                /* its first registry row for the context's image (the launch
                                * may take a later one: multiply); -1 for cuBLAS */
    int automatic;             /* AUTO took the family over cuBLAS (auto_prefers_tiled) */
    gpumatmul_dtype dtype;
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
};

/* Fills *g from the problem and data and checks them against the header's
 * contract, before any GPU work; `ctx` NULL is INVALID_ARGUMENT, checked last.
 * With `c_to_allocate`, c may be NULL. */
gpumatmul_status prepare(struct gemm *g, const gpumatmul_context *ctx,
                         const gpumatmul_gemm_desc *p, const void *a, const void *b, void *c,
                         int c_to_allocate);

/* The product, k > 0, on device memory of the current device, enqueued on
 * `stream`. `worker` is the caller's, or NULL to take one for cuBLAS. */
gpumatmul_status multiply(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                          cudaStream_t stream);

/* multiply's launches of kernel family f over the whole problem as it is. */
gpumatmul_status kernel_gemm(gpumatmul_context *ctx, const struct gemm *g, int f,
                             cudaStream_t stream);

/* How many matrices a batch stores: a zero stride is one matrix for all. */
int64_t stored_count(const struct layout *l, int64_t batch);

/* Whether TMA describes operand `data` (laid out as l) of g: 16-byte aligned,
 * strides of whole 16 bytes, sizes within 32-bit coordinates. */
int tma_describes(const struct gemm *g, const void *data, const struct layout *l);

/* ---- Workspaces from the context's pool (memory.c) ---- */

/* `bytes` of device memory from the context's pool, ordered on `stream`, for
 * work enqueued there. OUT_OF_MEMORY, naming `purpose`, if the pool cannot
 * give them. */
gpumatmul_status workspace_alloc(gpumatmul_context *ctx, size_t bytes, cudaStream_t stream,
                                 const char *purpose, void **workspace);

/* Frees `workspace` on `stream`, after what was enqueued there, which may
 * have failed with `status`; returns `status`, or else the free's own. */
gpumatmul_status workspace_free(void *workspace, cudaStream_t stream, gpumatmul_status status);

/* ---- Operands repacked for k-major kernels (repack.c) ---- */

/* Whether repacked_gemm can run g on a PARAMS_TMA_K_MAJOR family: 4-byte
 * elements; an operand that is not contiguous along k within the transpose's
 * grid, its copy within g->workspace_max; one that is, described by TMA. */
int repackable(const struct gemm *g);

/* g on family f (PARAMS_TMA_K_MAJOR) with each operand that is not contiguous
 * along k first transposed into a workspace from the context's pool (rows of
 * whole 16 bytes), freed after, all on `stream`. OUT_OF_MEMORY if the pool
 * cannot give the workspace. */
gpumatmul_status repacked_gemm(gpumatmul_context *ctx, const struct gemm *g, int f,
                               cudaStream_t stream);

/* ---- Split k (split_k.c) ---- */

/* Into how many pieces of k family f's product is best cut (1: not at all),
 * by the family's split_dtypes, the grid against the device's
 * multiprocessors, k, and g->workspace_max. */
int64_t k_splits(const gpumatmul_context *ctx, const struct gemm *g, int f);

/* The product of a kernel family cut into `splits` pieces of k (k_splits):
 * their partial products into a workspace from the context's pool, then
 * summed into C in a fixed order. OUT_OF_MEMORY if the pool cannot give the
 * workspace. Everything is enqueued on `stream`, the workspace's free too. */
gpumatmul_status split_k_gemm(gpumatmul_context *ctx, const struct gemm *g, int f, int64_t splits,
                              cudaStream_t stream);

static inline int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }
static inline int64_t max64(int64_t x, int64_t y) { return x > y ? x : y; }

/* Element `offset` of an array of `size`-byte elements. */
static inline void *at(const void *base, int64_t offset, size_t size) {
    return (char *)base + offset * (int64_t)size;
}

static inline int64_t ceil_div(int64_t x, int64_t y) { return x / y + (x % y != 0); }

/* ---- The host path: the API and several GPUs (host_gemm.c), tiles
 *      (host_plan.c), one GPU's pipeline (host_pipeline.c) ---- */

enum { ring = 2 }; /* device A panels and C tiles: one multiplied while the other fills or drains */

/* A tile's shape: zc matrices of the batch, tm rows and tn columns of each. */
struct plan {
    int64_t zc, tm, tn;
    double tiles;                  /* how many tiles cover C */
    int a_slots, b_slots, c_slots; /* device buffers of each: `ring`, or 1 if one suffices */
};

/* The tile shape for a budget of device bytes: tiles of about *_tile_c_target,
 * several for a large matrix so that copies overlap products, then halved
 * (batch, then rows, then columns) until they fit. `whole` asks for one tile:
 * all of A and B on the GPU before any C is written back. OUT_OF_MEMORY if
 * nothing fits. */
gpumatmul_status make_plan(const struct gemm *g, int64_t budget, int whole, struct plan *p);

/* Device bytes plan p of g needs (in floating point: for the largest problems
 * the product of sizes passes 2^63). */
double plan_device_bytes(const struct gemm *g, const struct plan *p);

/* The device bytes a call may use: at most `limit` if it is not 0, and what
 * the GPU has, less a margin for cuBLAS's workspace and others: all it has
 * (`free` 0), asking the driver nothing (cudaMemGetInfo costs more than a
 * small product), or what is free (and what the context's pool keeps unused). */
gpumatmul_status device_budget(gpumatmul_context *ctx, size_t limit, int free, int64_t *budget);

/* The whole product of g on ctx's device, which is current, within `limit`
 * device bytes (0: no cap); `whole` keeps all of A, B and C on the GPU at
 * once (C overlaps A or B). Returns with nothing left running. */
gpumatmul_status run_pipeline(gpumatmul_context *ctx, const struct gemm *g, size_t limit,
                              int whole);

/* Frees a worker's host-path streams, events and pinned staging, if it has any. */
gpumatmul_status destroy_host_staging(struct worker *worker);

/* ---- Host copies on a pool of threads (host_copy.c) ---- */

/* Bytes [begin, end) of a piece of lines of `line_bytes` bytes each, packed
 * back to back on one side (staging) and in the caller's memory on the other:
 * byte x of the packed piece is byte x % line_bytes of line l = x / line_bytes,
 * which starts at host + (l / lines_per_matrix) * matrix_pitch +
 * (l % lines_per_matrix) * line_pitch. `packed` is where byte `begin` is. */
struct host_copy {
    char *host, *packed;
    int64_t begin, end;
    int64_t line_bytes, lines_per_matrix, line_pitch, matrix_pitch;
    int to_host; /* packed -> host, else host -> packed */
};

/* Work for the pool: `run` over [begin, end), cut into parts of part_bytes
 * aligned at `origin`. The fields after `end` are the pool's. */
struct host_job {
    void (*run)(const struct host_job *job, int64_t begin, int64_t end);
    const struct host_copy *copy; /* for copies */
    int64_t begin, end, origin, part_bytes, parts, claimed, done;
    struct host_job *next;
};

/* Runs the copy, on the calling thread alone if it is small, else on it and
 * the pool's threads (started on first use, one per CPU the process may run
 * on), ahead of background work; returns when every byte is copied. Any number
 * of threads may call it at once. */
void host_copy_run(const struct host_copy *copy);

/* Starts faulting in, for writing, the pages of [begin, begin + bytes) on the
 * pool's threads whenever they have nothing else to do, leaving the contents
 * as they are (concurrent writes are kept). Nothing is done for less than
 * 1 MiB. The caller must call host_job_wait on `job` before the memory or
 * `job` goes away. */
void host_prefault_start(struct host_job *job, void *begin, int64_t bytes);

/* Works on what is left of a started job, then waits until it is done. */
void host_job_wait(struct host_job *job);

/* ---- The caller's current device (device.c) ---- */

/* Every entry point that works on a device brackets its work with these, so that
 * the calling thread's current device is the same after the call as before it.
 * enter_device makes `device` current, switching only if it is not already, and
 * sets *previous to the device to return to, or -1 if it did not switch (also on
 * failure, so leave_device is always safe to call). leave_device switches back,
 * and returns `status`, or the switch's failure if `status` is SUCCESS. */
gpumatmul_status enter_device(int device, int *previous);
gpumatmul_status leave_device(int previous, gpumatmul_status status);

/* ---- Errors (status.c) ---- */

/* Record a failure for gpumatmul_last_error_message() and return `status`. */
gpumatmul_status set_error(gpumatmul_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Turn a failed CUDA runtime, driver or cuBLAS call into a status and message.
 * `what` names the call. Each returns GPUMATMUL_SUCCESS when the call succeeded. */
gpumatmul_status check_cuda(cudaError_t error, const char *what);
gpumatmul_status check_driver(const struct driver_api *driver, CUresult error, const char *what);
gpumatmul_status check_cublas(cublasStatus_t error, const char *what);

#endif
