/* The host path's pinned staging, one per worker: its streams and events,
 * made on the worker's first host call, and the pinned slots that host memory
 * moves through (pipeline.h: struct host_staging), freed by host_release. */
#include <stdlib.h>

#include "host/pipeline.h"

/* Pinned staging: each slot at most this big (16 MiB crosses PCIe in 300 us,
 * long enough to hide a copy's launch and the host threads' wake-up; pinning
 * memory costs about 0.5 ms per MiB, paid once per worker). */
static const int64_t staging_slot_max = 16 << 20;

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

gpumatmul_status host_staging(struct worker *worker, struct host_staging **staging) {
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

gpumatmul_status reserve_slots(struct host_staging *s, int64_t largest) {
    const int64_t page = 4096;
    const int64_t slot_bytes = ceil_div(min64(staging_slot_max, largest), page) * page;
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
