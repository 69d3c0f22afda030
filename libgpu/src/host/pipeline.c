/* One GPU's part of the host path (share.c): its tiles (plan.c) run as a
 * pipeline on the calling worker's streams (tiles.c), through its pinned
 * staging (staging.c), or a product small enough by zero copy (zero_copy.c).
 * Here: the wiring, from the worker and the budget to the last
 * synchronisation. */
#include <string.h>

#include "host/pipeline.h"

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
    if (zero_copy_plan(g, &p)) {
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
    if (!status) status = reserve_slots(q.s, largest_piece(&q, &p));
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
