/* The api layer of libgpumatmul: the public gpumatmul_* entry points that reach
 * several layers. Each checks its arguments (prepare.c for a product's), then
 * dispatches: a product of device memory to one GPU's product (device.c, into
 * gemm/), of host memory to the host pipeline (host.c, into host/); creating and
 * destroying a context (context.c). Public functions that touch one layer only
 * live in that layer (core/device.c, core/memory.c, gemm/images.c ...). */
#ifndef GPUMATMUL_API_H
#define GPUMATMUL_API_H

#include "host/host.h"

/* Fills *g from the problem and data and checks them against the header's
 * contract, before any GPU work; `ctx` NULL is INVALID_ARGUMENT, checked last.
 * With `c_to_allocate`, c may be NULL. */
gpumatmul_status prepare(struct gemm *g, const gpumatmul_context *ctx,
                         const gpumatmul_gemm_desc *p, const void *a, const void *b, void *c,
                         int c_to_allocate);

#endif
