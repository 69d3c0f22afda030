/* The Hopper wgmma kernels' launch contract (gemm_wgmma.cu),
 * shared with the host code like gemm_tiled.h: plain C, no includes. */
#ifndef GPUMATMUL_GEMM_WGMMA_H
#define GPUMATMUL_GEMM_WGMMA_H

/* Each block computes a GEMM_WGMMA_M x GEMM_WGMMA_N tile of C from slabs of A
 * and B GEMM_WGMMA_K_BYTES deep along k (128 1-byte, 64 16-bit or 32 32-bit elements: the
 * width of the 128-byte swizzle that both TMA and wgmma understand),
 * GEMM_WGMMA_STAGES slabs in flight in shared memory. Its threads are three
 * warpgroups (128 threads each): one loads the slabs with the tensor memory
 * accelerator (TMA), the other two each multiply 64 rows of the tile with
 * wgmma (64 x 256 per instruction). Of the shapes measured on an H100
 * (docs/kernel-log.md, step 4) this is the fastest. */
#define GEMM_WGMMA_M 128
#define GEMM_WGMMA_N 256
#define GEMM_WGMMA_K_BYTES 128
#define GEMM_WGMMA_STAGES 4
#define GEMM_WGMMA_THREADS 384

/* Bytes of one stage (a slab of A and one of B), and of the block's dynamic
 * shared memory: the ring plus 1 KiB to align it to the 1 KiB the 128-byte
 * swizzle repeats over. */
#define GEMM_WGMMA_STAGE_BYTES ((GEMM_WGMMA_M + GEMM_WGMMA_N) * GEMM_WGMMA_K_BYTES)
#define GEMM_WGMMA_SHARED_BYTES (GEMM_WGMMA_STAGES * GEMM_WGMMA_STAGE_BYTES + 1024)

/* The boxes TMA copies (128 bytes along the operand's contiguous axis): a slab
 * contiguous along k is one box of GEMM_WGMMA_K_BYTES by the slab's rows; one
 * contiguous along M or N (16-bit only: the float32 and 1-byte kernels take
 * k-major operands alone) is rows / 64 boxes of 64 x 64. */

/* The bytes a TMA element is, for elements of `size` bytes: the maps move
 * 16-bit words (the kernels only need the bytes), bytes for 1-byte elements,
 * whose rows may hold an odd number. */
#define GEMM_WGMMA_TMA_UNIT(size) ((size) == 1 ? 1 : 2)

/* A CUtensorMap (cuda.h), which the kernels receive by value: 128 opaque bytes,
 * 64-byte aligned. */
struct __attribute__((aligned(64))) tensor_map {
    unsigned long long words[16];
};

/* How gemm_wgmma_u8 writes C. A product of 1-byte integers: elements of one
 * byte (size 1), each its sum's low byte. The byte planes of wider integers
 * (libgpu/src/gemm/byte_split.c): elements of `size` bytes (2, 4 or 8), each
 * set to (its sum, read as unsigned 32 bits) << shift, modulo 2^(8 size), or
 * that added to it if `add`. The other kernels ignore it. */
struct gemm_c_update {
    int size, shift, add, unused;
};

/* The kernels' one parameter: the usual arguments (gemm_tiled.h; the kernels
 * read m, n, k, C and the strides from them; C's strides count elements of
 * c_update.size bytes for gemm_wgmma_u8), a TMA descriptor of A and of B, each
 * a 3-D tensor (contiguous axis, other axis, batch) as pyctk's host code
 * encodes it (gemm/launch.c: tma_operand), and how C is written. */
struct gemm_tma_args {
    struct tensor_map a_map, b_map;
    struct gemm_args gemm;
    struct gemm_c_update c_update;
};

#endif
