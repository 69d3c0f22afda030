/* Zero copy: a product small enough skips the pipeline (tiles.c). */
#include "host/pipeline.h"

/* Up to this many bytes of A, B and C together, a product by one of pyctk's
 * kernels reads A and B from the pinned staging and writes C there, over the
 * bus: no device memory, no copies to queue and wait for (a 16 x 16 product
 * is then one launch and one synchronisation). cuBLAS is never given host
 * memory: its kernels are not documented to accept it. */
static const int64_t zero_copy_max = 256 << 10;

int zero_copy_plan(const struct gemm *g, struct plan *p) {
    return g->backend != GPUMATMUL_BACKEND_CUBLAS &&
           make_plan(g, zero_copy_max, 1, p) == GPUMATMUL_SUCCESS;
}

gpumatmul_status run_zero_copy(struct pipeline *q, const struct plan *p) {
    struct piece a, b, c;
    struct host_copy copy;
    struct gemm product = *q->g;
    gpumatmul_status status;
    tile_pieces(q->g, p, 0, 0, 0, &a, &b, &c);
    if ((status = reserve_slots(q->s, largest_piece(q, p)))) return status;
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
