/* The host path: products of matrices in host memory, streamed through the GPU
 * in tiles of C.
 *
 * A call cuts C into tiles (plan.c: a few whole matrices of a batch, rows of
 * one matrix, or for products larger than the GPU's memory a block of rows and
 * columns) and runs them as a pipeline on its worker's streams (pipeline.c). Device memory holds up to `ring` pieces each of A and B
 * and tiles of C (one of each where one suffices); the tile shape is chosen so
 * that they fit the call's budget (the GPU's memory, what is free if that
 * cannot be had, or less if the caller caps it). With several contexts, C's
 * rows (or the batch) are shared out here and each GPU runs the pipeline on
 * its share, on a thread of its own. */
#include <pthread.h>
#include <string.h>

#include "host/host.h"

/* Share `index` of `count` of the product: a range of the batch when it has
 * matrices enough to go round, else a range of C's rows. */
static struct gemm share(const struct gemm *g, int index, int count) {
    const size_t size = dtype_infos[g->dtype].size;
    struct gemm s = *g;
    if (g->batch >= 4 * (int64_t)count) {
        const int64_t z0 = g->batch * index / count, z1 = g->batch * (index + 1) / count;
        s.batch = z1 - z0;
        s.a = at(g->a, z0 * g->la.stride, size);
        s.b = at(g->b, z0 * g->lb.stride, size);
        s.c = at(g->c, z0 * g->lc.stride, size);
    } else {
        const int64_t i0 = g->m * index / count, i1 = g->m * (index + 1) / count;
        s.m = i1 - i0;
        s.a = at(g->a, i0 * (g->trans_a ? 1 : g->la.ld), size);
        if (g->trans_a) s.la.cols = s.m;
        else s.la.rows = s.m;
        s.c = at(g->c, i0 * g->lc.ld, size);
        s.lc.rows = s.m;
    }
    s.c_bytes = s.m && s.batch
                    ? ((s.batch - 1) * s.lc.stride + (s.m - 1) * s.lc.ld + s.n) * (int64_t)size
                    : 0;
    return s;
}

struct device_run {
    gpumatmul_context *ctx;
    struct gemm share;
    size_t limit;
    int whole;
    gpumatmul_status status;
    char message[512]; /* the thread's error message, for the caller's thread */
};

static void *run_on_device(void *argument) {
    struct device_run *run = argument;
    int entered;
    run->status = GPUMATMUL_SUCCESS;
    if (run->share.m > 0 && run->share.batch > 0) {
        if (!(run->status = enter_context(run->ctx, &entered)))
            run->status = run_pipeline(run->ctx, &run->share, run->limit, run->whole);
        run->status = leave_context(run->ctx, entered, run->status);
    }
    if (run->status) {
        strncpy(run->message, gpumatmul_last_error_message(), sizeof run->message - 1);
        run->message[sizeof run->message - 1] = '\0';
    }
    return NULL;
}

static int overlaps(const void *x, int64_t x_bytes, const void *y, int64_t y_bytes) {
    const char *a = x, *b = y;
    return x_bytes > 0 && y_bytes > 0 && a < b + y_bytes && b < a + x_bytes;
}

gpumatmul_status host_gemm(gpumatmul_context *const *contexts, int count, const struct gemm *g,
                           size_t limit) {
    struct device_run runs[HOST_MAX_DEVICES];
    pthread_t threads[HOST_MAX_DEVICES];
    int started[HOST_MAX_DEVICES];
    int64_t z, i;
    int d, whole;
    gpumatmul_status status;
    if (g->m == 0 || g->n == 0 || g->batch == 0) return GPUMATMUL_SUCCESS;
    if (g->k == 0) { /* C is zeros (an empty sum, as in NumPy): no GPU work */
        for (z = 0; z < g->batch; ++z)
            for (i = 0; i < g->m; ++i)
                memset(at(g->c, z * g->lc.stride + i * g->lc.ld, dtype_infos[g->dtype].size), 0,
                       (size_t)g->n * dtype_infos[g->dtype].size);
        return GPUMATMUL_SUCCESS;
    }
    /* C written while A or B is still to be read would change what is read:
     * then one GPU holds the whole problem. */
    whole = overlaps(g->c, g->c_bytes, g->a, g->a_bytes) ||
            overlaps(g->c, g->c_bytes, g->b, g->b_bytes);
    if (whole) count = 1;
    for (d = 0; d < count; ++d) {
        runs[d].ctx = contexts[d];
        runs[d].share = share(g, d, count);
        runs[d].limit = limit;
        runs[d].whole = whole;
        started[d] = d > 0 && pthread_create(&threads[d], NULL, run_on_device, &runs[d]) == 0;
    }
    /* This thread runs the first share, and any a thread could not be made for. */
    for (d = 0; d < count; ++d)
        if (!started[d]) run_on_device(&runs[d]);
    status = GPUMATMUL_SUCCESS;
    for (d = 0; d < count; ++d) {
        if (started[d]) pthread_join(threads[d], NULL);
        if (runs[d].status && !status)
            status = count > 1 ? set_error(runs[d].status, "GPU %d: %s", contexts[d]->device,
                                           runs[d].message)
                               : set_error(runs[d].status, "%s", runs[d].message);
    }
    return status;
}
