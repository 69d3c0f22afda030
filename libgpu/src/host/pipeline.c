/* One GPU's part of the host path (share.c): its tiles (plan.c) run
 * as a pipeline on the calling worker's streams, through pinned staging.
 *
 * The pieces of A and B a tile needs go up on one stream, the tile is
 * multiplied on another, and it comes down on a third (one per C tile of the
 * ring) while the next is multiplied. Host memory moves through pinned
 * staging slots, copied by copy.c's threads, so the bus runs at its
 * pinned speed however the caller's memory was allocated; the threads also
 * fault in the pages of each tile of C ahead of its copy. Operands the caller
 * keeps in page-locked memory (cudaHostAlloc, cudaHostRegister) skip the
 * staging: the copy engines read and write them in place, and no host thread
 * touches them. A product small enough (zero_copy_max) skips the pipeline:
 * the kernel reads and writes the staging directly. */
#include <stdlib.h>
#include <string.h>

#include "host/host.h"

enum {
    in_slots = 3,  /* pinned staging slots for copies to the GPU */
    out_slots = 2 * ring, /* and from it: two per C tile */
};
/* Pinned staging: each slot at most this big (16 MiB crosses PCIe in 300 us,
 * long enough to hide a copy's launch and the host threads' wake-up; pinning
 * memory costs about 0.5 ms per MiB, paid once per worker). */
static const int64_t staging_slot_max = 16 << 20;
/* Up to this many bytes of A, B and C together, a product by one of pyctk's
 * kernels reads A and B from the pinned staging and writes C there, over the
 * bus: no device memory, no copies to queue and wait for (a 16 x 16 product
 * is then one launch and one synchronisation). cuBLAS is never given host
 * memory: its kernels are not documented to accept it. */
static const int64_t zero_copy_max = 256 << 10;
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

static void destroy_event(cudaEvent_t event, gpumatmul_status *status) {
    if (event) keep_first(status, check_cuda(cudaEventDestroy(event), "cudaEventDestroy"));
}

static void destroy_stream(cudaStream_t stream, gpumatmul_status *status) {
    if (stream) keep_first(status, check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy"));
}

/* Frees a worker's host-path streams, events and pinned staging, if it has any. */
static gpumatmul_status destroy_host_staging(struct worker *worker) {
    struct host_staging *s = worker->host;
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    int i;
    if (!s) return GPUMATMUL_SUCCESS;
    for (i = 0; i < in_slots; ++i) destroy_event(s->in_free[i], &status);
    for (i = 0; i < out_slots; ++i) destroy_event(s->out_ready[i], &status);
    for (i = 0; i < ring; ++i) {
        destroy_event(s->computed[i], &status);
        destroy_event(s->drained[i], &status);
        destroy_stream(s->download[i], &status);
    }
    destroy_event(s->inputs_ready, &status);
    destroy_event(s->allocated, &status);
    destroy_stream(s->upload, &status);
    if (s->pinned) keep_first(&status, check_cuda(cudaFreeHost(s->pinned), "cudaFreeHost"));
    free(s);
    worker->host = NULL;
    return status;
}

gpumatmul_status host_release(gpumatmul_context *ctx) {
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    struct worker *w;
    for (w = ctx->idle; w; w = w->next) keep_first(&status, destroy_host_staging(w));
    return status;
}

static gpumatmul_status create_event(cudaEvent_t *event) {
    return check_cuda(cudaEventCreateWithFlags(event, cudaEventDisableTiming),
                      "cudaEventCreateWithFlags");
}

/* The worker's streams and events, made on its first host call. */
static gpumatmul_status host_staging(struct worker *worker, struct host_staging **staging) {
    struct host_staging *s;
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    int i;
    if ((*staging = worker->host)) return GPUMATMUL_SUCCESS;
    if (!(s = worker->host = calloc(1, sizeof *s)))
        return set_error(GPUMATMUL_ERROR_OUT_OF_MEMORY, "out of host memory for staging");
    keep_first(&status, check_cuda(cudaStreamCreateWithFlags(&s->upload, cudaStreamNonBlocking),
                                   "cudaStreamCreateWithFlags"));
    for (i = 0; i < ring; ++i)
        keep_first(&status, check_cuda(cudaStreamCreateWithFlags(&s->download[i],
                                                                 cudaStreamNonBlocking),
                                       "cudaStreamCreateWithFlags"));
    for (i = 0; i < in_slots && !status; ++i) status = create_event(&s->in_free[i]);
    for (i = 0; i < out_slots && !status; ++i) status = create_event(&s->out_ready[i]);
    for (i = 0; i < ring && !status; ++i)
        if (!(status = create_event(&s->computed[i]))) status = create_event(&s->drained[i]);
    if (!status && !(status = create_event(&s->inputs_ready))) status = create_event(&s->allocated);
    if (status) {
        destroy_host_staging(worker);
        return status;
    }
    *staging = s;
    return GPUMATMUL_SUCCESS;
}

/* Grows the pinned slots to at least `slot_bytes` each (never shrinks: the
 * next call likely needs as much). */
static gpumatmul_status reserve_slots(struct host_staging *s, int64_t slot_bytes) {
    void *pinned;
    if (s->slot_bytes >= slot_bytes) return GPUMATMUL_SUCCESS;
    if (s->pinned) {
        cudaFreeHost(s->pinned); /* no copy uses it: each call ends synchronised */
        s->pinned = NULL;
        s->slot_bytes = 0;
    }
    /* Mapped: kernels read and write it directly (zero_copy_max). */
    if (cudaHostAlloc(&pinned, (size_t)(slot_bytes * (in_slots + out_slots)),
                      cudaHostAllocPortable | cudaHostAllocMapped) != cudaSuccess) {
        cudaGetLastError();
        return set_error(GPUMATMUL_ERROR_OUT_OF_MEMORY,
                         "cudaHostAlloc could not pin %lld bytes of host memory for staging",
                         (long long)(slot_bytes * (in_slots + out_slots)));
    }
    s->pinned = pinned;
    s->slot_bytes = slot_bytes;
    return GPUMATMUL_SUCCESS;
}

static char *slot(const struct host_staging *s, int index) {
    return s->pinned + index * s->slot_bytes;
}

/* ---- One GPU's pipeline ---- */

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

static int same_piece(const struct piece *x, const struct piece *y) {
    return !memcmp(x, y, sizeof *x);
}

static int64_t piece_bytes(const struct pipeline *q, const struct piece *p) {
    return p->zc * p->rows * p->cols * (int64_t)q->size;
}

/* The host side of a piece, for host_copy_run. */
static struct host_copy host_side(const struct pipeline *q, const void *host,
                                  const struct layout *l, const struct piece *p, int to_host) {
    const int64_t size = (int64_t)q->size;
    const struct host_copy copy = {
        .host = at(host, p->z0 * l->stride + p->r0 * l->ld + p->c0, q->size),
        .line_bytes = p->cols * size, .lines_per_matrix = p->rows,
        .line_pitch = l->ld * size, .matrix_pitch = l->stride * size, .to_host = to_host};
    return copy;
}

/* Whether the host bytes of an operand, [p, p + bytes), lie in one page-locked
 * allocation (cudaHostAlloc, cudaHostRegister), whose pieces the copy engines
 * can move in place: its first and last bytes are host memory of one CUDA
 * buffer, and its rows are within cudaMemcpy2D's pitch. */
static int page_locked(const struct pipeline *q, const void *p, const struct layout *l,
                       int64_t bytes) {
    CUpointer_attribute asked[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_BUFFER_ID};
    unsigned type[2] = {0, 0};
    unsigned long long buffer[2] = {0, 0};
    int end;
    if (bytes <= 0 || l->ld * (int64_t)q->size > INT32_MAX) return 0;
    for (end = 0; end < 2; ++end) {
        void *values[2] = {&type[end], &buffer[end]};
        const char *at = (const char *)p + (end ? bytes - 1 : 0);
        /* Memory CUDA does not know is no error: its attributes read 0. */
        if (q->ctx->driver.pointer_get_attributes(2, asked, values,
                                                  (CUdeviceptr)(uintptr_t)at) != CUDA_SUCCESS)
            return 0;
    }
    return type[0] == CU_MEMORYTYPE_HOST && type[1] == CU_MEMORYTYPE_HOST &&
           buffer[0] == buffer[1];
}

/* Copies a piece between the caller's page-locked memory and its packed device
 * buffer on `stream`: one 2-D copy per matrix, or one for all where they lie
 * one after another. */
static gpumatmul_status copy_in_place(void *device, const struct host_copy *h, int64_t matrices,
                                      cudaStream_t stream) {
    const int64_t lines = h->lines_per_matrix, width = h->line_bytes;
    const int chained = matrices == 1 || h->matrix_pitch == lines * h->line_pitch;
    const int64_t copies = chained ? 1 : matrices, height = chained ? matrices * lines : lines;
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    int64_t z;
    for (z = 0; z < copies && !status; ++z) {
        char *host = h->host + z * h->matrix_pitch, *packed = (char *)device + z * lines * width;
        status = check_cuda(
            h->to_host ? cudaMemcpy2DAsync(host, (size_t)h->line_pitch, packed, (size_t)width,
                                           (size_t)width, (size_t)height,
                                           cudaMemcpyDeviceToHost, stream)
                       : cudaMemcpy2DAsync(packed, (size_t)width, host, (size_t)h->line_pitch,
                                           (size_t)width, (size_t)height,
                                           cudaMemcpyHostToDevice, stream),
            "cudaMemcpy2DAsync");
    }
    return status;
}

/* Copies a piece of host operand `from` into device memory: in place if it is
 * page-locked, else through the input slots, each filled once the copy out of
 * it before has finished. */
static gpumatmul_status upload(struct pipeline *q, void *device, const struct panels *from,
                               const struct piece *p) {
    struct host_copy copy = host_side(q, from->host, from->layout, p, 0);
    const int64_t total = piece_bytes(q, p);
    gpumatmul_status status;
    if (from->locked) return copy_in_place(device, &copy, p->zc, q->up);
    for (copy.begin = 0; copy.begin < total; copy.begin = copy.end) {
        const int index = q->s->next_in;
        q->s->next_in = (index + 1) % in_slots;
        copy.end = min64(total, copy.begin + q->s->slot_bytes);
        copy.packed = slot(q->s, index);
        if ((status = check_cuda(cudaEventSynchronize(q->s->in_free[index]),
                                 "cudaEventSynchronize")))
            return status;
        host_copy_run(&copy);
        if ((status = check_cuda(cudaMemcpyAsync((char *)device + copy.begin, copy.packed,
                                                 (size_t)(copy.end - copy.begin),
                                                 cudaMemcpyHostToDevice, q->up),
                                 "cudaMemcpyAsync")) ||
            (status = check_cuda(cudaEventRecord(q->s->in_free[index], q->up), "cudaEventRecord")))
            return status;
    }
    return GPUMATMUL_SUCCESS;
}

/* A C tile comes down in chunks through the two output slots of its ring
 * index: half a tile each, up to a slot, so that a tile that fits comes down
 * whole as soon as it is computed, while the host is still busy with the
 * tiles around it. */
static int64_t chunk_bytes(const struct pipeline *q, int64_t tile_bytes) {
    return min64(q->s->slot_bytes, max64(ceil_div(tile_bytes, 2), 64 << 10));
}

static int out_index(int64_t t, int64_t chunk) { return (int)(t % ring) * 2 + (int)(chunk % 2); }

/* Queues the copy of chunk i of tile t (`total` bytes at `device`) into its slot. */
static gpumatmul_status queue_chunk(struct pipeline *q, const void *device, int64_t total,
                                    int64_t t, int64_t i) {
    const int64_t chunk = chunk_bytes(q, total);
    const int index = out_index(t, i);
    gpumatmul_status status = check_cuda(
        cudaMemcpyAsync(slot(q->s, in_slots + index), (const char *)device + i * chunk,
                        (size_t)min64(chunk, total - i * chunk), cudaMemcpyDeviceToHost,
                        q->down[t % ring]),
        "cudaMemcpyAsync");
    return status ? status : check_cuda(cudaEventRecord(q->s->out_ready[index],
                                                        q->down[t % ring]),
                                        "cudaEventRecord");
}

/* Queues the copy of tile t's first chunks (of all of it, into a page-locked
 * C), once its product is done. */
static gpumatmul_status queue_download(struct pipeline *q, int64_t t, const struct piece *p) {
    const int64_t total = piece_bytes(q, p);
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    int64_t i;
    if (q->up != q->compute)
        status = check_cuda(cudaStreamWaitEvent(q->down[t % ring], q->s->computed[t % ring], 0),
                            "cudaStreamWaitEvent");
    if (q->c_locked) {
        const struct host_copy c = host_side(q, q->g->c, &q->g->lc, p, 1);
        if (!status) status = copy_in_place(q->c[t % ring], &c, p->zc, q->down[t % ring]);
        if (!status && q->up != q->compute)
            status = check_cuda(cudaEventRecord(q->s->drained[t % ring], q->down[t % ring]),
                                "cudaEventRecord");
        return status;
    }
    if (!q->whole) {
        const struct host_copy c = host_side(q, q->g->c, &q->g->lc, p, 1);
        const int64_t size = (int64_t)q->size;
        host_prefault_start(&q->prefault[t % ring], c.host,
                            ((p->zc - 1) * q->g->lc.stride + (p->rows - 1) * q->g->lc.ld +
                             p->cols) * size);
    }
    for (i = 0; i < min64(ceil_div(total, chunk_bytes(q, total)), 2) && !status; ++i)
        status = queue_chunk(q, q->c[t % ring], total, t, i);
    return status;
}

/* Copies tile t into the caller's C, chunk by chunk as each arrives, queuing
 * the chunk after next into each slot it empties (nothing to do for a
 * page-locked C: the copy engine writes it). */
static gpumatmul_status finish_download(struct pipeline *q, int64_t t, const struct piece *p) {
    struct host_copy copy;
    int64_t total, chunk, chunks, i;
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    if (q->c_locked) return GPUMATMUL_SUCCESS;
    copy = host_side(q, q->g->c, &q->g->lc, p, 1);
    total = piece_bytes(q, p), chunk = chunk_bytes(q, total), chunks = ceil_div(total, chunk);
    host_job_wait(&q->prefault[t % ring]);
    for (i = 0; i < chunks && !status; ++i) {
        if ((status = check_cuda(cudaEventSynchronize(q->s->out_ready[out_index(t, i)]),
                                 "cudaEventSynchronize")))
            break;
        copy.begin = i * chunk;
        copy.end = min64(total, copy.begin + chunk);
        copy.packed = slot(q->s, in_slots + out_index(t, i));
        host_copy_run(&copy);
        if (i + 2 < chunks) status = queue_chunk(q, q->c[t % ring], total, t, i + 2);
    }
    if (!status && q->up != q->compute)
        status = check_cuda(cudaEventRecord(q->s->drained[t % ring], q->down[t % ring]),
                            "cudaEventRecord");
    return status;
}

/* The pieces of A, B and C that tile (z0, i0, j0) of shape p covers. */
static void tile_pieces(const struct gemm *g, const struct plan *p, int64_t z0, int64_t i0,
                        int64_t j0, struct piece *a, struct piece *b, struct piece *c) {
    const int64_t zc = min64(p->zc, g->batch - z0), tm = min64(p->tm, g->m - i0),
                  tn = min64(p->tn, g->n - j0), k = g->k;
    const int a_broadcast = stored_count(&g->la, g->batch) == 1,
              b_broadcast = stored_count(&g->lb, g->batch) == 1;
    const int64_t za = a_broadcast ? 0 : z0, zb = b_broadcast ? 0 : z0;
    const int64_t zca = a_broadcast ? 1 : zc, zcb = b_broadcast ? 1 : zc;
    *a = g->trans_a ? (struct piece){za, zca, 0, k, i0, tm} : (struct piece){za, zca, i0, tm, 0, k};
    *b = g->trans_b ? (struct piece){zb, zcb, j0, tn, 0, k} : (struct piece){zb, zcb, 0, k, j0, tn};
    *c = (struct piece){z0, zc, i0, tm, j0, tn};
}

/* Makes `panels` hold `piece` for tile t: the current buffer if it does
 * already, else the other one, once the products reading it are done. */
static gpumatmul_status place(struct pipeline *q, struct panels *panels, const struct piece *piece,
                              int64_t t) {
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    if (!same_piece(&panels->held[panels->current], piece)) {
        const int next = (panels->current + 1) % panels->count;
        const int64_t reader = panels->last_tile[next];
        if (reader >= 0 && q->up != q->compute)
            status = check_cuda(cudaStreamWaitEvent(q->up, q->s->computed[reader % ring], 0),
                                "cudaStreamWaitEvent");
        if (!status) status = upload(q, panels->slot[next], panels, piece);
        if (status) return status;
        panels->held[next] = *piece;
        panels->current = next;
    }
    panels->last_tile[panels->current] = t;
    return GPUMATMUL_SUCCESS;
}

/* Whether the first tile may be multiplied by slices of k as B arrives: with
 * cuBLAS, one B matrix stored k x n, and C of the type products are summed in
 * (so that adding the slices' products in C rounds no more than cuBLAS's own
 * split-k does). */
static int first_tile_by_k(const struct pipeline *q, const struct piece *b) {
    const struct dtype_info *t = &dtype_infos[q->g->dtype];
    return q->up != q->compute && q->g->backend == GPUMATMUL_BACKEND_CUBLAS && !q->g->trans_b &&
           b->zc == 1 && t->cublas[q->g->precision].scale_type == t->cuda_type &&
           piece_bytes(q, b) > q->s->slot_bytes;
}

/* The first tile, while B goes up slot by slot: the GPU multiplies A by each
 * slice of B's rows (of k) as it arrives, adding into C, instead of idling
 * until all of B is there (6 ms of 31 at n = 8192 on an H100). */
static gpumatmul_status start_first_tile(struct pipeline *q, const struct piece *a,
                                         const struct piece *b, const struct piece *c) {
    const int64_t rows_per_slice = max64(1, q->s->slot_bytes / (b->cols * (int64_t)q->size));
    struct gemm product = *q->g;
    gpumatmul_status status;
    int64_t r0;
    if ((status = place(q, &q->a, a, 0))) return status;
    q->b.held[0] = *b, q->b.last_tile[0] = 0, q->b.current = 0;
    product.m = c->rows, product.n = c->cols, product.batch = c->zc;
    product.c = q->c[0];
    product.lc = (struct layout){c->rows, c->cols, c->cols, c->rows * c->cols};
    for (r0 = 0; r0 < b->rows && !status; r0 += rows_per_slice) {
        const int64_t k = min64(rows_per_slice, b->rows - r0);
        const struct piece slice = {b->z0, 1, b->r0 + r0, k, b->c0, b->cols};
        void *b_slice = at(q->b.slot[0], r0 * b->cols, q->size);
        if ((status = upload(q, b_slice, &q->b, &slice)) ||
            (status = check_cuda(cudaEventRecord(q->s->inputs_ready, q->up), "cudaEventRecord")) ||
            (status = check_cuda(cudaStreamWaitEvent(q->compute, q->s->inputs_ready, 0),
                                 "cudaStreamWaitEvent")))
            break;
        /* Columns r0.. of the packed A (rows r0.. when it is stored transposed). */
        product.k = k;
        product.a = at(q->a.slot[q->a.current], q->g->trans_a ? r0 * a->cols : r0, q->size);
        product.la = q->g->trans_a
                         ? (struct layout){k, a->cols, a->cols, a->zc == 1 ? 0 : a->rows * a->cols}
                         : (struct layout){a->rows, k, a->cols, a->zc == 1 ? 0 : a->rows * a->cols};
        product.b = b_slice;
        product.lb = (struct layout){k, b->cols, b->cols, 0};
        product.accumulate = r0 > 0;
        status = multiply(q->ctx, q->worker, &product, q->compute);
    }
    return status ? status
                  : check_cuda(cudaEventRecord(q->s->computed[0], q->compute), "cudaEventRecord");
}

/* Uploads tile t's pieces of A and B (those the GPU does not hold) and queues
 * its product into C tile t % ring. */
static gpumatmul_status start_tile(struct pipeline *q, const struct plan *p, int64_t t,
                                   int64_t z0, int64_t i0, int64_t j0, struct piece *c) {
    const int r = (int)(t % ring), separate = q->up != q->compute;
    struct piece a, b;
    struct gemm product = *q->g;
    gpumatmul_status status;
    tile_pieces(q->g, p, z0, i0, j0, &a, &b, c);
    if (t == 0 && first_tile_by_k(q, &b)) return start_first_tile(q, &a, &b, c);
    if ((status = place(q, &q->b, &b, t)) || (status = place(q, &q->a, &a, t)))
        return status;
    if (separate &&
        ((status = check_cuda(cudaEventRecord(q->s->inputs_ready, q->up), "cudaEventRecord")) ||
         (status = check_cuda(cudaStreamWaitEvent(q->compute, q->s->inputs_ready, 0),
                              "cudaStreamWaitEvent"))))
        return status;
    if (t >= ring && separate && /* C tile r: tile t - ring's copy out has finished */
        (status = check_cuda(cudaStreamWaitEvent(q->compute, q->s->drained[r], 0),
                             "cudaStreamWaitEvent")))
        return status;
    product.m = c->rows, product.n = c->cols, product.batch = c->zc;
    product.a = q->a.slot[q->a.current], product.b = q->b.slot[q->b.current], product.c = q->c[r];
    product.la = (struct layout){a.rows, a.cols, a.cols, a.zc == 1 ? 0 : a.rows * a.cols};
    product.lb = (struct layout){b.rows, b.cols, b.cols, b.zc == 1 ? 0 : b.rows * b.cols};
    product.lc = (struct layout){c->rows, c->cols, c->cols, c->rows * c->cols};
    if ((status = multiply(q->ctx, q->worker, &product, q->compute))) return status;
    return check_cuda(cudaEventRecord(q->s->computed[r], q->compute), "cudaEventRecord");
}

/* Every device buffer of the pipeline, with the bytes a plan gives it (0: not used). */
static int buffers(struct pipeline *q, const struct plan *p, void ***pointers, int64_t *bytes) {
    struct piece a, b, c;
    int i, count = 0;
    tile_pieces(q->g, p, 0, 0, 0, &a, &b, &c);
    for (i = 0; i < ring; ++i) {
        pointers[count] = &q->a.slot[i], bytes[count++] = i < p->a_slots ? piece_bytes(q, &a) : 0;
        pointers[count] = &q->b.slot[i], bytes[count++] = i < p->b_slots ? piece_bytes(q, &b) : 0;
        pointers[count] = &q->c[i], bytes[count++] = i < p->c_slots ? piece_bytes(q, &c) : 0;
    }
    return count;
}

/* Returns the pipeline's device memory to the pool, in the compute stream's order. */
static void free_tiles(struct pipeline *q, const struct plan *p, gpumatmul_status *status) {
    void **pointers[3 * ring];
    int64_t bytes[3 * ring];
    const int count = buffers(q, p, pointers, bytes);
    int i;
    for (i = 0; i < count; ++i)
        if (*pointers[i]) {
            keep_first(status,
                       check_cuda(cudaFreeAsync(*pointers[i], q->compute), "cudaFreeAsync"));
            *pointers[i] = NULL;
        }
}

/* Allocates the plan's device memory from the context's pool; on failure
 * frees what it took and reports it. */
static gpumatmul_status allocate_tiles(struct pipeline *q, const struct plan *p) {
    void **pointers[3 * ring];
    int64_t bytes[3 * ring];
    const int count = buffers(q, p, pointers, bytes);
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    int i;
    for (i = 0; i < ring; ++i) {
        q->a.held[i].rows = q->b.held[i].rows = 0;
        q->a.last_tile[i] = q->b.last_tile[i] = -1;
    }
    q->a.count = p->a_slots, q->b.count = p->b_slots, q->a.current = q->b.current = 0;
    for (i = 0; i < count && !status; ++i)
        if (bytes[i])
            status = check_cuda(pool_alloc(q->ctx, (size_t)bytes[i], q->compute, pointers[i]),
                                "cudaMallocFromPoolAsync");
    if (status) {
        free_tiles(q, p, &status);
        return status;
    }
    if (q->up == q->compute) return GPUMATMUL_SUCCESS;
    /* The other streams use the memory only after its allocation, in stream order. */
    if ((status = check_cuda(cudaEventRecord(q->s->allocated, q->compute), "cudaEventRecord")) ||
        (status = check_cuda(cudaStreamWaitEvent(q->up, q->s->allocated, 0),
                             "cudaStreamWaitEvent")))
        return status;
    for (i = 0; i < ring && !status; ++i)
        status = check_cuda(cudaStreamWaitEvent(q->down[i], q->s->allocated, 0),
                            "cudaStreamWaitEvent");
    return status;
}

/* The plan's tiles in order: batch, then column panels (each B panel is
 * uploaded once), then rows. Tile t comes down while the host uploads tile
 * t + 1, and is copied into C after that. */
static gpumatmul_status run_tiles(struct pipeline *q, const struct plan *p) {
    const struct gemm *g = q->g;
    struct piece done = {0, 0, 0, 0, 0, 0}; /* the tile to copy into C next (zc == 0: none) */
    int64_t t = 0, z0, j0, i0;
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    for (z0 = 0; z0 < g->batch && !status; z0 += p->zc)
        for (j0 = 0; j0 < g->n && !status; j0 += p->tn)
            for (i0 = 0; i0 < g->m && !status; i0 += p->tm, ++t) {
                struct piece c;
                if ((status = start_tile(q, p, t, z0, i0, j0, &c)) ||
                    (status = queue_download(q, t, &c)))
                    break;
                if (done.zc) status = finish_download(q, t - 1, &done);
                done = c;
            }
    if (!status && done.zc) status = finish_download(q, t - 1, &done);
    return status;
}

/* The staging slot size for a plan: its largest piece, up to staging_slot_max. */
static int64_t slot_bytes_for(const struct pipeline *q, const struct plan *p) {
    struct piece a, b, c;
    const int64_t page = 4096;
    tile_pieces(q->g, p, 0, 0, 0, &a, &b, &c);
    return ceil_div(min64(staging_slot_max, max64(piece_bytes(q, &a),
                                                  max64(piece_bytes(q, &b), piece_bytes(q, &c)))),
                    page) * page;
}

/* A product small enough for zero_copy_max, with one of pyctk's kernels: A
 * and B are gathered into two input slots, the kernel reads them and writes C
 * into an output slot over the bus, and C is scattered from there. */
static gpumatmul_status run_zero_copy(struct pipeline *q, const struct plan *p) {
    struct piece a, b, c;
    struct host_copy copy;
    struct gemm product = *q->g;
    gpumatmul_status status;
    tile_pieces(q->g, p, 0, 0, 0, &a, &b, &c);
    if ((status = reserve_slots(q->s, slot_bytes_for(q, p)))) return status;
    copy = host_side(q, q->g->a, &q->g->la, &a, 0);
    copy.begin = 0, copy.end = piece_bytes(q, &a), copy.packed = slot(q->s, 0);
    host_copy_run(&copy);
    copy = host_side(q, q->g->b, &q->g->lb, &b, 0);
    copy.begin = 0, copy.end = piece_bytes(q, &b), copy.packed = slot(q->s, 1);
    host_copy_run(&copy);
    product.a = slot(q->s, 0), product.b = slot(q->s, 1), product.c = slot(q->s, in_slots);
    product.la = (struct layout){a.rows, a.cols, a.cols, a.zc == 1 ? 0 : a.rows * a.cols};
    product.lb = (struct layout){b.rows, b.cols, b.cols, b.zc == 1 ? 0 : b.rows * b.cols};
    product.lc = (struct layout){c.rows, c.cols, c.cols, c.rows * c.cols};
    status = multiply(q->ctx, q->worker, &product, q->compute);
    /* Also after a failed launch: nothing may still use the staging on return. */
    keep_first(&status, check_cuda(cudaStreamSynchronize(q->compute), "cudaStreamSynchronize"));
    if (status) return status;
    copy = host_side(q, q->g->c, &q->g->lc, &c, 1);
    copy.begin = 0, copy.end = piece_bytes(q, &c), copy.packed = slot(q->s, in_slots);
    host_copy_run(&copy);
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status run_pipeline(gpumatmul_context *ctx, const struct gemm *g, size_t limit,
                              int whole) {
    struct pipeline q;
    struct plan p;
    struct gemm budgeted = *g; /* g, whose workspace_max the budget sets */
    int64_t budget;
    int i;
    int asked_free = 0;
    cudaError_t synchronized;
    gpumatmul_status status;
    memset(&q, 0, sizeof q);
    q.ctx = ctx, q.g = &budgeted, q.size = dtype_infos[g->dtype].size, q.whole = whole;
    if ((status = take_worker(ctx, &q.worker))) return status;
    if ((status = host_staging(q.worker, &q.s)) ||
        (status = device_budget(ctx, limit, 0, &budget))) {
        give_back_worker(ctx, q.worker);
        return status;
    }
    q.compute = q.worker->stream;
    q.a.host = g->a, q.a.layout = &g->la, q.b.host = g->b, q.b.layout = &g->lb;
    if (g->backend != GPUMATMUL_BACKEND_CUBLAS &&
        make_plan(g, zero_copy_max, 1, &p) == GPUMATMUL_SUCCESS) {
        budgeted.workspace_max = budget; /* the operands are in host memory */
        status = run_zero_copy(&q, &p); /* synchronised, failed or not */
        give_back_worker(ctx, q.worker);
        return status;
    }
    /* Plan for all the GPU's memory, and allocate. If the pool cannot give it,
     * plan for what is free; if it still cannot (fragmentation, another
     * process), for half as much, and so on. */
    for (;;) {
        if ((status = make_plan(g, budget, whole, &p))) break;
        q.up = p.tiles > 1 ? q.s->upload : q.compute;
        for (i = 0; i < ring; ++i) q.down[i] = p.tiles > 1 ? q.s->download[i] : q.compute;
        if ((status = allocate_tiles(&q, &p)) != GPUMATMUL_ERROR_OUT_OF_MEMORY || budget == 0)
            break;
        if (!asked_free) {
            asked_free = 1;
            if ((status = device_budget(ctx, limit, 1, &budget))) break;
        } else {
            budget /= 2;
        }
    }
    q.a.locked = page_locked(&q, g->a, &g->la, g->a_bytes);
    q.b.locked = page_locked(&q, g->b, &g->lb, g->b_bytes);
    q.c_locked = page_locked(&q, g->c, &g->lc, g->c_bytes);
    /* A kernel's workspace (split_k.c) takes what the plan leaves of the budget. */
    if (!status) budgeted.workspace_max = budget - (int64_t)plan_device_bytes(g, &p);
    if (!status) status = reserve_slots(q.s, slot_bytes_for(&q, &p));
    if (!status) status = run_tiles(&q, &p);
    /* Whatever happened, nothing may still read or write the caller's memory,
     * the staging or the tiles when this returns. */
    if (q.up) {
        if (q.up != q.compute) {
            keep_first(&status, check_cuda(cudaStreamSynchronize(q.up), "cudaStreamSynchronize"));
            for (i = 0; i < ring; ++i)
                keep_first(&status, check_cuda(cudaStreamSynchronize(q.down[i]),
                                               "cudaStreamSynchronize"));
        }
        free_tiles(&q, &p, &status);
    }
    synchronized = cudaStreamSynchronize(q.compute); /* also where a failed kernel shows */
    keep_first(&status, check_cuda(synchronized, "cudaStreamSynchronize"));
    for (i = 0; i < ring; ++i) host_job_wait(&q.prefault[i]); /* only after a failure */
    give_back_worker(ctx, q.worker);
    return status;
}
