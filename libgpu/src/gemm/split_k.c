/* Split k: a product whose grid leaves most multiprocessors idle (a 1024 x
 * 1024 float32 product is 32 blocks of gemm_simt's 128 x 256 tiles, for an
 * H100's 132 multiprocessors) computed as several products over pieces of k
 * side by side, their partial sums then added into C.
 *
 * The family's own kernel does the pieces, unchanged: for each matrix of the
 * batch one launch whose batch index (blockIdx.z) is the piece, with A and B
 * advanced by a piece of k per index and C a float workspace from the
 * context's stream-ordered pool. gemm_reduce.cu then adds the pieces in a
 * fixed order, so results are the same from run to run. */
#include "gemm/gemm.h"
#include "gemm_reduce.h"

/* Each piece spans at least this much of k (4 slabs of gemm_simt's 16): with
 * less, what splitting saves no longer pays for the reduction's 5 to 10 us
 * (docs/kernel-log.md, step 6). */
static const int64_t split_min_k = 64;

/* How g's k is cut: `splits` pieces of `chunk` (a multiple of 16 bytes, so
 * that the pieces of a 16-byte aligned operand stay aligned), and the `rest`,
 * if any, as one more piece of its own. Each piece's m x n partial product
 * is stored with rows `ld` apart: n rounded up to 16 bytes, for the GEMM's
 * 16-byte stores and the reduction's loads. */
struct split {
    int64_t splits, chunk, rest, pieces, ld;
};

/* Elements in 16 bytes. */
static int64_t vector(const struct gemm *g) {
    return GEMM_REDUCE_BYTES / (int64_t)dtype_infos[g->dtype].size;
}

static struct split cut(const struct gemm *g, int64_t splits) {
    const int64_t chunk = g->k / splits / vector(g) * vector(g), rest = g->k - splits * chunk;
    return (struct split){splits, chunk, rest, splits + (rest > 0),
                          ceil_div(g->n, vector(g)) * vector(g)};
}

static int64_t workspace_bytes(const struct gemm *g, const struct split *s) {
    return g->batch * s->pieces * g->m * s->ld * (int64_t)dtype_infos[g->dtype].size;
}

int64_t k_splits(const struct gemm *g, int f, int64_t multiprocessors) {
    const struct kernel_family *family = &kernel_families[f];
    const int64_t tiles = ceil_div(g->m, family->tile_m) * ceil_div(g->n, family->tile_n);
    int64_t splits, even;
    struct split s;
    /* A batch as large as the GPU fills it unsplit (and bounds the products
     * below); the reduction's grid has a block row per row of C. */
    if (!((family->split_dtypes >> g->dtype) & 1u) || tiles >= multiprocessors ||
        g->batch >= multiprocessors || g->m > MAX_GRID_Y)
        return 1;
    /* Pieces for one wave of blocks per launch (the splitting families run
     * one block per multiprocessor). */
    if ((splits = min64(multiprocessors / tiles, g->k / split_min_k)) < 2) return 1;
    /* A few pieces fewer that cut k evenly beat the rest as a launch of its own
     * (which runs after the others): 6 pieces of 128 for k = 768, not 7 and 12. */
    for (even = splits; 4 * even >= 3 * splits; --even)
        if (g->k % (even * vector(g)) == 0) {
            splits = even;
            break;
        }
    /* One launch per matrix of the batch: worth it where those launches take
     * at most half the waves of the unsplit grid. */
    if (2 * g->batch > splits * ceil_div(g->batch * tiles, multiprocessors)) return 1;
    s = cut(g, splits);
    return workspace_bytes(g, &s) <= g->workspace_max ? splits : 1;
}

/* Pieces first .. first + count - 1 of matrix z of g, as a product of `count`
 * matrices into their places in the workspace `partials`. */
static struct gemm pieces_of(const struct gemm *g, const struct split *s, void *partials,
                             int64_t z, int64_t first, int64_t count) {
    const size_t size = dtype_infos[g->dtype].size;
    const int64_t k = first < s->splits ? s->chunk : s->rest;
    /* Elements from one piece of k to the next in A as stored (k columns of
     * op(A)) and in B (k rows of op(B)). */
    const int64_t a_step = (g->trans_a ? g->la.ld : 1) * s->chunk;
    const int64_t b_step = (g->trans_b ? 1 : g->lb.ld) * s->chunk;
    struct gemm part = *g;
    part.k = k, part.batch = count;
    part.a = at(g->a, z * g->la.stride + first * a_step, size);
    part.la = g->trans_a ? (struct layout){k, g->m, g->la.ld, a_step}
                         : (struct layout){g->m, k, g->la.ld, a_step};
    part.b = at(g->b, z * g->lb.stride + first * b_step, size);
    part.lb = g->trans_b ? (struct layout){g->n, k, g->lb.ld, b_step}
                         : (struct layout){k, g->n, g->lb.ld, b_step};
    part.c = at(partials, (z * s->pieces + first) * g->m * s->ld, size);
    part.lc = (struct layout){g->m, g->n, s->ld, g->m * s->ld};
    return part;
}

/* C = the sum of the pieces' partial products. */
static gpumatmul_status reduce(gpumatmul_context *ctx, const struct gemm *g,
                               const struct split *s, const void *partials, cudaStream_t stream) {
    const struct reduce_args args = {.m = g->m, .n = g->n, .splits = s->pieces,
                                     .partials = partials, .ld = s->ld, .c = g->c,
                                     .ldc = g->lc.ld, .c_batch_stride = g->lc.stride};
    void *params[] = {(void *)&args};
    return check_driver(&ctx->driver,
                        ctx->driver.launch_kernel(
                            ctx->kernels->reduce[g->dtype],
                            (unsigned)ceil_div(s->ld / vector(g), GEMM_REDUCE_THREADS),
                            (unsigned)g->m, (unsigned)g->batch, GEMM_REDUCE_THREADS, 1, 1, 0,
                            (CUstream)stream, params, NULL),
                        "cuLaunchKernel (gemm_reduce)");
}

gpumatmul_status split_k_gemm(gpumatmul_context *ctx, const struct gemm *g, int f, int64_t splits,
                              cudaStream_t stream) {
    const struct split s = cut(g, splits);
    struct gemm part;
    void *partials;
    int64_t z;
    gpumatmul_status status = workspace_alloc(ctx, (size_t)workspace_bytes(g, &s), stream,
                                              "split-k workspace", &partials);
    if (status) return status;
    for (z = 0; z < g->batch && !status; ++z) {
        part = pieces_of(g, &s, partials, z, 0, s.splits);
        status = kernel_gemm(ctx, &part, f, stream);
        if (!status && s.rest > 0) {
            part = pieces_of(g, &s, partials, z, s.splits, 1);
            status = kernel_gemm(ctx, &part, f, stream);
        }
    }
    if (!status) status = reduce(ctx, g, &s, partials, stream);
    return workspace_free(partials, stream, status);
}
