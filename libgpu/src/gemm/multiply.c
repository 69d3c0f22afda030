/* One GPU's product: the device's facts read once, the product's route
 * (route.c), and the route run by its runner, a row of `runners` each. */
#include "gemm/gemm.h"

/* Whether the stored matrices' rows follow one another at the same pitch, so
 * that one 2-D copy (or memset) covers the batch. */
static int contiguous(const struct layout *l, int64_t batch) {
    return stored_count(l, batch) == 1 || l->stride == l->rows * l->ld;
}

/* k == 0 on the device: C is zeros (an empty sum, as in NumPy). */
static gpumatmul_status zero_fill(gpumatmul_context *ctx, struct worker *worker,
                                  const struct gemm *g, const struct route *route,
                                  const struct device_facts *device, cudaStream_t stream) {
    const size_t size = C_SIZE(g->dtype);
    const int one_call = contiguous(&g->lc, g->batch);
    const int64_t calls = one_call ? 1 : g->batch, rows = one_call ? g->batch * g->m : g->m;
    int64_t z;
    gpumatmul_status status = GPUMATMUL_SUCCESS;
    (void)ctx, (void)worker, (void)route, (void)device;
    for (z = 0; z < calls && !status; ++z)
        status = check_cuda(cudaMemset2DAsync(at(g->c, z * g->lc.stride, size),
                                              (size_t)g->lc.ld * size, 0, (size_t)g->n * size,
                                              (size_t)rows, stream),
                            "cudaMemset2DAsync");
    return status;
}

/* The runners that need less than every argument, each given what it needs. */
static gpumatmul_status byte_split(gpumatmul_context *ctx, struct worker *worker,
                                   const struct gemm *g, const struct route *route,
                                   const struct device_facts *device, cudaStream_t stream) {
    (void)worker, (void)device;
    return byte_split_gemm(ctx, g, route->family, stream);
}

static gpumatmul_status complex_as_real_product(gpumatmul_context *ctx, struct worker *worker,
                                                const struct gemm *g, const struct route *route,
                                                const struct device_facts *device,
                                                cudaStream_t stream) {
    (void)route;
    return complex_real_gemm(ctx, worker, g, device, stream);
}

static gpumatmul_status widened(gpumatmul_context *ctx, struct worker *worker,
                                const struct gemm *g, const struct route *route,
                                const struct device_facts *device, cudaStream_t stream) {
    (void)route;
    return widened_gemm(ctx, worker, g, device, stream);
}

static gpumatmul_status repacked(gpumatmul_context *ctx, struct worker *worker,
                                 const struct gemm *g, const struct route *route,
                                 const struct device_facts *device, cudaStream_t stream) {
    (void)worker, (void)device;
    return repacked_gemm(ctx, g, route->family, stream);
}

static gpumatmul_status split_k(gpumatmul_context *ctx, struct worker *worker,
                                const struct gemm *g, const struct route *route,
                                const struct device_facts *device, cudaStream_t stream) {
    (void)worker, (void)device;
    return split_k_gemm(ctx, g, route->family, route->splits, stream);
}

static gpumatmul_status kernel(gpumatmul_context *ctx, struct worker *worker,
                               const struct gemm *g, const struct route *route,
                               const struct device_facts *device, cudaStream_t stream) {
    (void)worker, (void)device;
    return kernel_gemm(ctx, g, route->family, stream);
}

/* `worker` is the host call's; the device call passes NULL and a worker is
 * taken here only for cuBLAS: the kernels need nothing of their own, so their
 * calls never touch the lock. */
static gpumatmul_status cublas(gpumatmul_context *ctx, struct worker *worker,
                               const struct gemm *g, const struct route *route,
                               const struct device_facts *device, cudaStream_t stream) {
    gpumatmul_status status;
    (void)route, (void)device;
    if (worker) return cublas_gemm(ctx, worker, g, stream);
    if ((status = take_worker(ctx, &worker))) return status;
    status = cublas_gemm(ctx, worker, g, stream);
    give_back_worker(ctx, worker);
    return status;
}

typedef gpumatmul_status runner_fn(gpumatmul_context *ctx, struct worker *worker,
                                   const struct gemm *g, const struct route *route,
                                   const struct device_facts *device, cudaStream_t stream);

static runner_fn *const runners[RUNNER_COUNT] = {
    [RUNNER_ZERO_FILL] = zero_fill,
    [RUNNER_BYTE_SPLIT] = byte_split,
    [RUNNER_COMPLEX_AS_REAL] = complex_as_real_product,
    [RUNNER_WIDENED] = widened,
    [RUNNER_REPACKED] = repacked,
    [RUNNER_SPLIT_K] = split_k,
    [RUNNER_KERNEL] = kernel,
    [RUNNER_CUBLAS] = cublas,
};

gpumatmul_status run_route(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                           const struct route *route, const struct device_facts *device,
                           cudaStream_t stream) {
    return runners[route->runner](ctx, worker, g, route, device, stream);
}

gpumatmul_status multiply(gpumatmul_context *ctx, struct worker *worker, const struct gemm *g,
                          cudaStream_t stream) {
    const struct device_facts device = {kernels_arch(ctx), ctx->multiprocessors};
    const struct route route = route_of(g, &device);
    return run_route(ctx, worker, g, &route, &device, stream);
}
