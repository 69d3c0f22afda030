/* Uses libgpumatmul from C through its public header only, as another language would.
 * Prints one line per check. Without a driver it must report NO_DRIVER cleanly;
 * with a GPU it multiplies a small product and checks it. Exit status 0 = as expected. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpumatmul.h"

static int failures = 0;

static void check(int ok, const char *what) {
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    failures += !ok;
}

static int multiply_and_check(gpumatmul_context *ctx, gpumatmul_backend backend) {
    /* A is 2x3 row-major; B is given transposed (4x3 storage) to exercise trans_b. */
    const float a[6] = {1, 2, 3, 4, 5, 6};
    const float bt[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
    const float expected[8] = {1, 2, 3, 6, 4, 5, 6, 15};
    float c[8];
    int i;
    if (gpumatmul_matmul_host(ctx, backend, GPUMATMUL_FLOAT32, 0, 1, 2, 4, 3, a, 3, bt, 3, c, 4))
        return 0;
    for (i = 0; i < 8; ++i)
        if (fabsf(c[i] - expected[i]) > 1e-6f) return 0;
    return 1;
}

int main(void) {
    gpumatmul_context *ctx = NULL;
    gpumatmul_status status;
    int index = -1, arch = 0, count = 0;
    gpumatmul_image_kind kind;

    check(gpumatmul_version() == GPUMATMUL_VERSION, "library version matches the header");
    check(gpumatmul_cuda_major() == 12 || gpumatmul_cuda_major() == 13, "CUDA major is 12 or 13");
    check(gpumatmul_kernel_image_count() > 0, "kernel images are embedded");
    check(gpumatmul_kernel_image_select(9, 0, &index) == GPUMATMUL_SUCCESS &&
              gpumatmul_kernel_image_info(index, &arch, &kind, NULL) == GPUMATMUL_SUCCESS &&
              arch == 90 && kind == GPUMATMUL_IMAGE_SASS,
          "compute capability 9.0 selects the sm_90 SASS");
    check(gpumatmul_kernel_image_select(3, 5, &index) == GPUMATMUL_ERROR_NO_KERNEL_IMAGE &&
              strstr(gpumatmul_last_error_message(), "3.5") != NULL,
          "compute capability 3.5 has no image, and the message says so");
    check(strcmp(gpumatmul_status_name(GPUMATMUL_ERROR_NO_DRIVER), "GPUMATMUL_ERROR_NO_DRIVER") == 0,
          "status names");
    check(gpumatmul_create(NULL, 0) == GPUMATMUL_ERROR_INVALID_ARGUMENT, "NULL context pointer rejected");
    check(gpumatmul_destroy(NULL) == GPUMATMUL_SUCCESS, "destroying NULL is a no-op");

    status = gpumatmul_create(&ctx, 0);
    printf("gpumatmul_create: %s %s\n", gpumatmul_status_name(status), gpumatmul_last_error_message());
    if (status == GPUMATMUL_SUCCESS) {
        check(gpumatmul_device_count(&count) == GPUMATMUL_SUCCESS && count > 0, "a GPU is counted");
        check(multiply_and_check(ctx, GPUMATMUL_BACKEND_TILED), "tiled 2x3 @ (4x3)^T");
        check(multiply_and_check(ctx, GPUMATMUL_BACKEND_CUBLAS), "cublas 2x3 @ (4x3)^T");
        check(gpumatmul_matmul_host(ctx, GPUMATMUL_BACKEND_AUTO, GPUMATMUL_FLOAT32, 0, 0, 2, 2, 2,
                                    NULL, 1, NULL, 2, NULL, 2) == GPUMATMUL_ERROR_INVALID_ARGUMENT,
              "lda smaller than k is rejected");
        check(gpumatmul_destroy(ctx) == GPUMATMUL_SUCCESS, "destroy");
        printf("result: gpu\n");
    } else {
        check(status == GPUMATMUL_ERROR_NO_DRIVER || status == GPUMATMUL_ERROR_NO_DEVICE,
              "without a GPU, create reports no driver or no device");
        check(ctx == NULL, "no context on failure");
        check(strlen(gpumatmul_last_error_message()) > 0, "the failure has a message");
        printf("result: %s\n", gpumatmul_status_name(status));
    }
    return failures != 0;
}
