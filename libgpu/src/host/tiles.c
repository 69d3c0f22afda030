/* The tile scheduler of one GPU's pipeline (pipeline.c): the pieces of A and
 * B a tile needs go up on one stream, the tile is multiplied on another, and
 * it comes down on a third (one per C tile of the ring) while the next is
 * multiplied. Host memory moves through the worker's pinned staging slots
 * (staging.c), copied by copy.c's threads, so the bus runs at its pinned speed
 * however the caller's memory was allocated; the threads also fault in the
 * pages of each tile of C ahead of its copy. Operands the caller keeps in
 * page-locked memory skip the staging: the copy engines read and write them
 * in place, and no host thread touches them. */
#include <string.h>

#include "host/pipeline.h"

static int same_piece(const struct piece *x, const struct piece *y) {
    return !memcmp(x, y, sizeof *x);
}

int64_t piece_bytes(const struct pipeline *q, const struct piece *p) {
    return p->zc * p->rows * p->cols * (int64_t)q->size;
}

struct host_copy host_side(const struct pipeline *q, const void *host,
                           const struct layout *l, const struct piece *p, int to_host) {
    const int64_t size = (int64_t)q->size;
    const struct host_copy copy = {
        .host = at(host, p->z0 * l->stride + p->r0 * l->ld + p->c0, q->size),
        .line_bytes = p->cols * size, .lines_per_matrix = p->rows,
        .line_pitch = l->ld * size, .matrix_pitch = l->stride * size, .to_host = to_host};
    return copy;
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

void tile_pieces(const struct gemm *g, const struct plan *p, int64_t z0, int64_t i0,
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

void free_tiles(struct pipeline *q, const struct plan *p, gpumatmul_status *status) {
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

gpumatmul_status allocate_tiles(struct pipeline *q, const struct plan *p) {
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

gpumatmul_status run_tiles(struct pipeline *q, const struct plan *p) {
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

int64_t largest_piece(const struct pipeline *q, const struct plan *p) {
    struct piece a, b, c;
    tile_pieces(q->g, p, 0, 0, 0, &a, &b, &c);
    return max64(piece_bytes(q, &a), max64(piece_bytes(q, &b), piece_bytes(q, &c)));
}
