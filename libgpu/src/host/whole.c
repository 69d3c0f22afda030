/* Host products whose C is another dtype than A and B (the FP8 types' float32
 * C), which the pipeline's tiles, of one element size for A, B and C, do not
 * take: run whole on one GPU. A's, B's and C's spans go up (C's too, so that
 * what lies between its rows comes back as it was), the product runs there on
 * whatever route it gets (FP8 tensor cores on Hopper), and C's span comes back. */
#include "host/host.h"

/* A span's offset in the one device block: after `used` bytes, at 256 bytes. */
static int64_t placed(int64_t used) { return ceil_div(used, 256) * 256; }

static gpumatmul_status upload(void *device, const void *host, int64_t bytes, cudaStream_t stream) {
    return bytes ? check_cuda(cudaMemcpyAsync(device, host, (size_t)bytes, cudaMemcpyHostToDevice,
                                              stream),
                              "cudaMemcpyAsync (to the GPU)")
                 : GPUMATMUL_SUCCESS;
}

static gpumatmul_status run_whole(gpumatmul_context *ctx, struct worker *worker,
                                  const struct gemm *g) {
    const cudaStream_t stream = worker->stream;
    const int64_t b_at = placed(g->a_bytes), c_at = placed(b_at + g->b_bytes);
    struct gemm on_gpu = *g;
    cudaError_t done;
    void *block, *b_copy, *c_copy;
    gpumatmul_status status =
        workspace_alloc(ctx, (size_t)(c_at + g->c_bytes), stream,
                        "the whole product on the GPU (A, B and C)", &block);
    if (status) return status;
    b_copy = at(block, b_at, 1), c_copy = at(block, c_at, 1);
    on_gpu.a = block, on_gpu.b = b_copy, on_gpu.c = c_copy;
    if (!(status = upload(block, g->a, g->a_bytes, stream)) &&
        !(status = upload(b_copy, g->b, g->b_bytes, stream)) &&
        !(status = upload(c_copy, g->c, g->c_bytes, stream)) &&
        !(status = multiply(ctx, worker, &on_gpu, stream)))
        status = check_cuda(cudaMemcpyAsync(g->c, c_copy, (size_t)g->c_bytes,
                                            cudaMemcpyDeviceToHost, stream),
                            "cudaMemcpyAsync (from the GPU)");
    status = workspace_free(block, stream, status);
    /* Waited for whatever failed: no copy may still read or write the caller's memory. */
    done = cudaStreamSynchronize(stream);
    return status ? status : check_cuda(done, "cudaStreamSynchronize");
}

gpumatmul_status host_gemm_whole(gpumatmul_context *ctx, const struct gemm *g) {
    struct worker *worker;
    int entered;
    gpumatmul_status status;
    if (g->m == 0 || g->n == 0 || g->batch == 0) return GPUMATMUL_SUCCESS;
    if ((status = enter_context(ctx, &entered))) return leave_context(ctx, entered, status);
    if (!(status = take_worker(ctx, &worker))) {
        status = run_whole(ctx, worker, g);
        give_back_worker(ctx, worker);
    }
    return leave_context(ctx, entered, status);
}
