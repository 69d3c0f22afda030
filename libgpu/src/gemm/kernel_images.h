/* The kernel images embedded at build time (see libgpu/tools/embed_kernels.py). */
#ifndef GPUMATMUL_KERNEL_IMAGES_H
#define GPUMATMUL_KERNEL_IMAGES_H

#include <stddef.h>

#include "gpumatmul.h"

struct kernel_image {
    int arch; /* 10 * major + minor */
    gpumatmul_image_kind kind;
    const unsigned char *data;
    size_t size;
};

extern const struct kernel_image kernel_images[];
extern const int kernel_image_count;

#endif
