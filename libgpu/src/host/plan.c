/* The host path's tiles: how C is cut for a budget of device memory, and
 * what that budget is. */
#include "host/host.h"

/* C bytes per tile where the tile shape is free. A tile of whole matrices of
 * a batch brings its own A and B: tiles this size keep the pipeline's first
 * and last steps (which nothing overlaps) short. */
static const int64_t batch_tile_c_target = 32 << 20;
/* Tiles of rows of one matrix all read the whole of B, and the first is
 * multiplied while B arrives (pipeline.c's first_tile_by_k): its product
 * should last about as long, while larger tiles lengthen the last tile's copy
 * down. (At n = 8192
 * float32 from NumPy on an H100: 4 tiles 26 ms, 5 tiles 27-28 ms, 9 tiles
 * 30 ms.) */
static const int64_t row_tile_c_target = 128 << 20;
/* ... and at least this many rows, where that still leaves `overlap_tiles`:
 * the first tile's product then lasts about as long as B's upload whatever n
 * and k (per row of C, 2 n k flops at 50 TFLOP/s against B's k n 4 bytes at
 * 25-50 GB/s: 1000-2000 rows for float32 on an H100). Float32 on an H100,
 * from NumPy: 32768 x 8192 @ 8192 x 32768 355 ms with tiles of 2048 rows, 362
 * ms with the 993 rows of 128 MiB, 372 ms with 4096; the 90 GB product of
 * 150000 x 4096 @ 4096 x 150000 4.31 s, 4.46-5.08 s with 256 rows. */
static const int64_t row_tile_rows_min = 2048;
/* A matrix whose C is at least this big is cut into at least `overlap_tiles`
 * tiles of rows (as C allows), so that copies overlap products; a smaller one
 * is one tile. */
static const int64_t tile_c_split_min = 2 << 20;
static const int64_t overlap_tiles = 4;
/* cuBLAS computes C in blocks 128 to 256 wide: a thinner tile wastes the GPU,
 * so tiles are cut below this only when memory leaves no choice. */
static const int64_t efficient_dim = 256;
/* Device memory left to cuBLAS's workspace and to others: this much, or an
 * eighth of what is there if that is less. */
static const int64_t memory_margin = 256 << 20;

/* Counts the tiles, and the buffers each operand needs: two, so that the next
 * piece uploads while the last is multiplied, unless every tile uses the same
 * piece (B for a 2-D product whose columns are one panel). */
static void count_tiles(const struct gemm *g, struct plan *p) {
    const int64_t batches = ceil_div(g->batch, p->zc), rows = ceil_div(g->m, p->tm),
                  columns = ceil_div(g->n, p->tn);
    p->tiles = (double)batches * (double)rows * (double)columns;
    p->a_slots = (stored_count(&g->la, g->batch) == 1 ? 1 : batches) * rows > 1 ? ring : 1;
    p->b_slots = (stored_count(&g->lb, g->batch) == 1 ? 1 : batches) * columns > 1 ? ring : 1;
    p->c_slots = p->tiles > 1 ? ring : 1;
}

double plan_device_bytes(const struct gemm *g, const struct plan *p) {
    const double za = stored_count(&g->la, g->batch) == 1 ? 1 : (double)p->zc;
    const double zb = stored_count(&g->lb, g->batch) == 1 ? 1 : (double)p->zc;
    const double k = (double)g->k, tm = (double)p->tm, tn = (double)p->tn;
    return (double)dtype_infos[g->dtype].size *
           (p->a_slots * za * tm * k + p->b_slots * zb * k * tn +
            p->c_slots * (double)p->zc * tm * tn);
}

/* The columns of a tile after halving `columns`, down to no fewer than `least`:
 * a multiple of what cuBLASLt takes for n where the tile goes to it, so that
 * every tile's product keeps to the rule the whole product was checked against
 * (prepare.c); n itself then is one, so the last, narrower tile is too. */
static int64_t halved_columns(const struct gemm *g, int64_t columns, int64_t least) {
    const struct by_cublaslt *lt = &dtype_infos[g->dtype].cublaslt;
    const int64_t multiple =
        g->backend == GPUMATMUL_BACKEND_CUBLAS && lt->used ? lt->n_multiple : 1;
    return min64(columns, ceil_div(max64(least, ceil_div(columns, 2)), multiple) * multiple);
}

gpumatmul_status make_plan(const struct gemm *g, int64_t budget, int whole, struct plan *p) {
    const double c_matrix = (double)g->m * (double)g->n * (double)dtype_infos[g->dtype].size;
    *p = (struct plan){1, g->m, g->n, 1, 1, 1, 1};
    if (whole) {
        p->zc = g->batch;
    } else if (g->batch > 1 && c_matrix < batch_tile_c_target) {
        p->zc = min64(g->batch,
                      max64(1, (int64_t)(batch_tile_c_target / max64((int64_t)c_matrix, 1))));
    } else if (c_matrix >= tile_c_split_min) {
        const int64_t tiles = max64((int64_t)(c_matrix / row_tile_c_target) + 1,
                                    min64(overlap_tiles, (int64_t)(c_matrix / tile_c_split_min)));
        const int64_t rows_min = max64(efficient_dim,
                                       min64(row_tile_rows_min, ceil_div(g->m, overlap_tiles)));
        p->tm = max64(ceil_div(g->m, tiles), min64(g->m, rows_min));
    }
    for (count_tiles(g, p); plan_device_bytes(g, p) > (double)budget; count_tiles(g, p)) {
        if (whole)
            return set_error(GPUMATMUL_ERROR_OUT_OF_MEMORY,
                             "C overlaps A or B in host memory, so all of A, B and C must be on "
                             "the GPU at once: %.0f bytes, and %lld bytes may be used; give C "
                             "memory of its own",
                             plan_device_bytes(g, p), (long long)budget);
        if (p->zc > 1) p->zc = ceil_div(p->zc, 2);
        else if (p->tm > efficient_dim) p->tm = max64(efficient_dim, ceil_div(p->tm, 2));
        else if (p->tn > efficient_dim) p->tn = halved_columns(g, p->tn, efficient_dim);
        else if (p->tm > 1) p->tm = ceil_div(p->tm, 2);
        else if (p->tn > halved_columns(g, p->tn, 1)) p->tn = halved_columns(g, p->tn, 1);
        else
            return set_error(GPUMATMUL_ERROR_OUT_OF_MEMORY,
                             "one row of A, one column of B and their product need %.0f bytes "
                             "of GPU memory, and %lld bytes may be used (what is free, less up to "
                             "%lld for cuBLAS, or the caller's limit)",
                             plan_device_bytes(g, p), (long long)budget, (long long)memory_margin);
    }
    return GPUMATMUL_SUCCESS;
}

gpumatmul_status device_budget(gpumatmul_context *ctx, size_t limit, int free, int64_t *budget) {
    size_t free_bytes, total;
    cuuint64_t reserved = 0, used = 0;
    gpumatmul_status status;
    int64_t available = (int64_t)ctx->total_memory;
    if (free) {
        if ((status = check_cuda(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo")) ||
            (status = check_cuda(cudaMemPoolGetAttribute(ctx->pool,
                                                          cudaMemPoolAttrReservedMemCurrent,
                                                          &reserved), "cudaMemPoolGetAttribute")) ||
            (status = check_cuda(cudaMemPoolGetAttribute(ctx->pool, cudaMemPoolAttrUsedMemCurrent,
                                                          &used), "cudaMemPoolGetAttribute")))
            return status;
        available = (int64_t)free_bytes + (int64_t)(reserved - used);
    }
    available -= min64(memory_margin, available / 8);
    *budget = limit && (int64_t)limit < available ? (int64_t)limit : available;
    return GPUMATMUL_SUCCESS;
}
