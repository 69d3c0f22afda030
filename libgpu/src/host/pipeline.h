/* The insides of one GPU's host pipeline, shared by its files: the worker's
 * pinned staging (staging.c), the tile scheduler (tiles.c), zero copy
 * (zero_copy.c), and run_pipeline, which wires them (pipeline.c). */
#ifndef GPUMATMUL_HOST_PIPELINE_H
#define GPUMATMUL_HOST_PIPELINE_H

#include "host/host.h"

/* ---- Pinned staging (staging.c) ---- */

enum {
    in_slots = 3,  /* pinned staging slots for copies to the GPU */
    out_slots = 2 * ring, /* and from it: two per C tile */
};
struct host_staging {
    /* The worker's own stream multiplies; each C tile of the ring comes down
     * on its own stream, so that the rest of one tile does not wait for the
     * next tile's product. */
    cudaStream_t upload, download[ring];
    cudaEvent_t in_free[in_slots], out_ready[out_slots];
    cudaEvent_t inputs_ready, allocated, computed[ring], drained[ring];
    char *pinned; /* in_slots then out_slots slots of slot_bytes */
    int64_t slot_bytes;
    int next_in;
};

/* The worker's streams and events, made on its first host call. */
gpumatmul_status host_staging(struct worker *worker, struct host_staging **staging);

/* Grows the pinned slots to hold a piece of `largest` bytes each, up to
 * staging_slot_max, in whole pages (never shrinks: the next call likely needs
 * as much). */
gpumatmul_status reserve_slots(struct host_staging *s, int64_t largest);

/* Pinned slot `index`: in_slots for copies to the GPU, then out_slots. */
static inline char *slot(const struct host_staging *s, int index) {
    return s->pinned + index * s->slot_bytes;
}

/* ---- The tiles (tiles.c) ---- */

/* A part of a stored operand: matrices z0 .. z0 + zc (one if the operand is
 * broadcast), stored rows r0 .. r0 + rows, columns c0 .. c0 + cols, packed on
 * the device in that order. */
struct piece {
    int64_t z0, zc, r0, rows, c0, cols;
};

/* An operand's device buffers, each holding one piece, and where the pieces
 * come from. */
struct panels {
    const void *host; /* the caller's A or B, laid out as *layout */
    const struct layout *layout;
    int locked; /* host is page-locked (page_locked): pieces go up in place */
    void *slot[ring];
    struct piece held[ring]; /* rows == 0: nothing yet */
    int64_t last_tile[ring]; /* the last tile whose product reads it; -1: none */
    int count, current;
};

/* One product's pipeline on one GPU (run_pipeline). */
struct pipeline {
    gpumatmul_context *ctx;
    struct worker *worker;
    struct host_staging *s;
    const struct gemm *g;
    size_t size;
    cudaStream_t up, compute, down[ring]; /* all `compute` for a single tile */
    struct panels a, b;
    void *c[ring]; /* C tiles: tile t's is c[t % ring], copied down on down[t % ring] */
    int c_locked;  /* the caller's C is page-locked: tiles come down into it in place */
    /* Tile t's pages of the caller's C are faulted in by prefault[t % ring]
     * while it is computed (unless `whole`): faulting them as results are
     * copied in made that copy 7 times slower. */
    struct host_job prefault[ring];
    int whole;
};

/* A piece's bytes, packed. */
int64_t piece_bytes(const struct pipeline *q, const struct piece *p);

/* The host side of a piece, for host_copy_run. */
struct host_copy host_side(const struct pipeline *q, const void *host, const struct layout *l,
                           const struct piece *p, int to_host);

/* The pieces of A, B and C that tile (z0, i0, j0) of shape p covers. */
void tile_pieces(const struct gemm *g, const struct plan *p, int64_t z0, int64_t i0,
                 int64_t j0, struct piece *a, struct piece *b, struct piece *c);

/* Bytes of the largest piece of A, B or C in a tile of plan p: what a staging
 * slot holds whole, up to its limit. */
int64_t largest_piece(const struct pipeline *q, const struct plan *p);

/* Allocates the plan's device memory from the context's pool; on failure
 * frees what it took and reports it. */
gpumatmul_status allocate_tiles(struct pipeline *q, const struct plan *p);

/* Returns the pipeline's device memory to the pool, in the compute stream's order. */
void free_tiles(struct pipeline *q, const struct plan *p, gpumatmul_status *status);

/* The plan's tiles in order: batch, then column panels (each B panel is
 * uploaded once), then rows. Tile t comes down while the host uploads tile
 * t + 1, and is copied into C after that. */
gpumatmul_status run_tiles(struct pipeline *q, const struct plan *p);

/* ---- Zero copy (zero_copy.c) ---- */

/* Whether g runs by zero copy (one of pyctk's kernels, A, B and C within
 * zero_copy_max), with p its one tile. */
int zero_copy_plan(const struct gemm *g, struct plan *p);

/* A product small enough for zero_copy_max, with one of pyctk's kernels: A
 * and B are gathered into two input slots, the kernel reads them and writes C
 * into an output slot over the bus, and C is scattered from there. */
gpumatmul_status run_zero_copy(struct pipeline *q, const struct plan *p);

#endif
