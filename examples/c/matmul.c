/* Two products on the GPU through libgpumatmul's C API, each checked against the CPU:
 * a float32 product, and a batch of three float64 products in one call.
 *
 *   cc -std=c99 matmul.c $(python -m pyctk --cflags --libs) -o matmul && ./matmul
 *   cc -std=c99 matmul.c $(pkg-config --cflags --libs gpumatmul) -o matmul && ./matmul
 *
 * Exit status (the same in every example of examples/): 0 when every product matches
 * the CPU's, 1 when one does not or a call fails, 77 when there is no GPU to run on
 * (no NVIDIA driver, or no GPU): then it prints the status and the library's message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpumatmul.h"

enum { OK = 0, FAILED = 1, NO_GPU = 77 };

/* C[i] = A[i] @ B[i] for i < batch: A[i] is m x k, B[i] k x n, row-major and packed. */
struct problem {
    const char *dtype_name;
    gpumatmul_dtype dtype;
    double tolerance; /* largest relative error accepted against the float64 CPU product */
    int64_t batch, m, n, k;
};

static const struct problem problems[] = {
    {"float32", GPUMATMUL_FLOAT32, 1e-5, 1, 64, 32, 48},
    {"float64", GPUMATMUL_FLOAT64, 1e-12, 3, 33, 9, 17},
};

/* Element i of a buffer of the problem's dtype, as a double, and back. */
static double get(const struct problem *p, const void *data, int64_t i) {
    return p->dtype == GPUMATMUL_FLOAT32 ? ((const float *)data)[i] : ((const double *)data)[i];
}

static void put(const struct problem *p, void *data, int64_t i, double value) {
    if (p->dtype == GPUMATMUL_FLOAT32)
        ((float *)data)[i] = (float)value;
    else
        ((double *)data)[i] = value;
}

static double larger(double x, double y) { return x > y ? x : y; }
static double distance(double x, double y) { return x > y ? x - y : y - x; }

/* Multiplies on the GPU and on the CPU; returns OK or FAILED. */
static int run(gpumatmul_context *ctx, const struct problem *p) {
    const int64_t size_a = p->m * p->k, size_b = p->k * p->n, size_c = p->m * p->n;
    const size_t element = p->dtype == GPUMATMUL_FLOAT32 ? sizeof(float) : sizeof(double);
    void *a = malloc(p->batch * size_a * element), *b = malloc(p->batch * size_b * element);
    void *c = malloc(p->batch * size_c * element);
    double error = 0, scale = 0;
    int64_t z, i, j, l;
    gpumatmul_status status;
    int result = FAILED;
    if (!a || !b || !c) {
        fprintf(stderr, "failed: out of host memory\n");
        goto done;
    }
    for (i = 0; i < p->batch * size_a; ++i) put(p, a, i, (double)(i * 37 % 101) / 101 - 0.5);
    for (i = 0; i < p->batch * size_b; ++i) put(p, b, i, (double)(i * 53 % 97) / 97 - 0.5);

    status = gpumatmul_matmul_strided_batched_host(
        ctx, GPUMATMUL_BACKEND_AUTO, p->dtype, GPUMATMUL_PRECISION_HIGHEST, 0, 0, p->m, p->n,
        p->k, p->batch, a, p->k, size_a, b, p->n, size_b, c, p->n, size_c);
    if (status != GPUMATMUL_SUCCESS) {
        fprintf(stderr, "failed: %s: %s: %s\n", p->dtype_name, gpumatmul_status_name(status),
                gpumatmul_last_error_message());
        goto done;
    }
    for (z = 0; z < p->batch; ++z)
        for (i = 0; i < p->m; ++i)
            for (j = 0; j < p->n; ++j) {
                double expected = 0;
                for (l = 0; l < p->k; ++l)
                    expected += get(p, a, z * size_a + i * p->k + l) * get(p, b, z * size_b + l * p->n + j);
                error = larger(error, distance(get(p, c, z * size_c + i * p->n + j), expected));
                scale = larger(scale, distance(expected, 0));
            }
    error /= scale;
    result = error <= p->tolerance ? OK : FAILED;
    printf("%s: %lld x (%lld x %lld) @ (%lld x %lld): %s, max relative error %.1e\n",
           p->dtype_name, (long long)p->batch, (long long)p->m, (long long)p->k, (long long)p->k,
           (long long)p->n, result == OK ? "ok" : "WRONG", error);
done:
    free(a);
    free(b);
    free(c);
    return result;
}

int main(void) {
    gpumatmul_context *ctx;
    gpumatmul_status status;
    const int version = gpumatmul_version();
    size_t i;
    int result = OK;
    printf("libgpumatmul %d.%d.%d for CUDA %d\n", version / 10000, version / 100 % 100,
           version % 100, gpumatmul_cuda_major());
    status = gpumatmul_create(&ctx, 0);
    if (status != GPUMATMUL_SUCCESS) {
        const int no_gpu = status == GPUMATMUL_ERROR_NO_DRIVER || status == GPUMATMUL_ERROR_NO_DEVICE;
        fprintf(stderr, "%s: gpumatmul_create: %s: %s\n", no_gpu ? "no GPU" : "failed",
                gpumatmul_status_name(status), gpumatmul_last_error_message());
        return no_gpu ? NO_GPU : FAILED;
    }
    for (i = 0; i < sizeof problems / sizeof problems[0]; ++i)
        if (run(ctx, &problems[i]) != OK) result = FAILED;
    gpumatmul_destroy(ctx);
    return result;
}
