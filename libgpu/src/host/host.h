/* The host layer of libgpumatmul: products of matrices in host memory,
 * streamed through the GPU in tiles of C. A product is shared among GPUs
 * (share.c), cut into tiles for a budget of device memory (plan.c) and run as
 * a pipeline on each GPU (pipeline.c: the tiles, tiles.c, through pinned
 * staging, staging.c, or zero copy, zero_copy.c; their shared insides in
 * pipeline.h), with host copies on a pool of threads (copy.c). Builds on gemm/
 * (one GPU's product) and core/; calls nothing above. */
#ifndef GPUMATMUL_HOST_H
#define GPUMATMUL_HOST_H

#include "gemm/gemm.h"

/* ---- The product, shared among GPUs (share.c) ---- */

/* The most GPUs one host product is shared among. */
enum { HOST_MAX_DEVICES = 64 };

/* The whole product g (checked: api/prepare.c) of host memory on the `count`
 * contexts' GPUs at once, each within `limit` device bytes (0: no cap): a share
 * of the batch, or else of C's rows, each on a thread of its own. k == 0 writes
 * zeros on the host; a C that overlaps A or B runs whole on the first GPU.
 * Returns with nothing left running; the calling thread's current device is
 * unchanged. */
gpumatmul_status host_gemm(gpumatmul_context *const *contexts, int count, const struct gemm *g,
                           size_t limit);

/* The whole product g (checked, m, n and batch may be 0) of host memory on ctx's
 * GPU at once (whole.c), for dtypes whose C is another (FP8: float32), which
 * the tiles do not take: A's, B's and C's spans copied to one block of device
 * memory from the context's pool, g's product there by its route (multiply),
 * C's span copied back. OUT_OF_MEMORY, saying so, where the spans do not fit.
 * Returns with nothing left running. */
gpumatmul_status host_gemm_whole(gpumatmul_context *ctx, const struct gemm *g);

/* ---- Tiles (plan.c) and one GPU's pipeline (pipeline.c, staging.c) ---- */

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

/* Frees the host-path streams, events and pinned staging of ctx's workers, which
 * must all be idle (gpumatmul_destroy: no call in flight). */
gpumatmul_status host_release(gpumatmul_context *ctx);

/* ---- Host copies on a pool of threads (copy.c) ---- */

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

#endif
