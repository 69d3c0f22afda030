// Hopper GEMM of float16 and bfloat16 with float32 sums, of float32 at
// precision TF32, of int8, uint8 and bool with int32 sums, and of the FP8 types
// (float8_e4m3fn, float8_e5m2, and the two mixed pairs) into float32 C: C[z] = op(A[z]) @
// op(B[z]), row-major C, any sizes; the operands' layouts must suit TMA (16-byte
// aligned addresses and pitches), and for TF32 and the 1-byte types both be
// contiguous along k, the one layout their wgmma reads (the host checks,
// multiply.c's operand_layouts, and repacks the others, repack.c). Built only
// for sm_90a, the one target with wgmma and setmaxnreg (embed_kernels.py
// compiles sm_90a in place of sm_90); every other image gets empty kernels,
// which the registry (min_arch = max_arch = 90) never selects. The launch
// contract is in gemm_wgmma.h.
//
// - A block is three warpgroups. The producer's one thread streams slabs of A
//   and B into a ring of GEMM_WGMMA_STAGES stages with TMA, which cuts them at
//   the matrix's edges (zero-filled) and lays them out in the 128-byte swizzle
//   wgmma reads without bank conflicts. Two mbarriers a stage say "full" (the
//   TMA's bytes arrived) and "empty" (every consumer warp is done with it).
// - Each consumer warpgroup multiplies its 64 rows of the tile by the whole
//   256 columns, four wgmma (64 x 256 x 32 bytes of k) a slab, its 128 sums
//   in registers.
//   setmaxnreg moves registers from the producer (which needs few) to them.
// - A slab is stored in its operand's own orientation: contiguous along k
//   ("K-major": rows of 128 bytes of k) or along M/N ("MN-major": 64 x 64
//   boxes, rows of 64 along M/N, one row per k), the two layouts wgmma's
//   descriptors describe; 16-bit wgmma transposes the MN-major ones itself, so
//   the four pairs of layouts are four instances of one code.
// - The 1-byte types: int8 and uint8 share one kernel (suffix "u8"), their
//   bytes multiplied as u8 and summed in s32 wrapping modulo 2^32, C keeping
//   each sum's low byte (NumPy's product modulo 256: an int8's bits read as
//   uint8 are the same modulo 256). The same kernel multiplies the byte planes
//   of wider integers (byte_split.c), writing wider elements of C shifted and
//   added as gemm_wgmma.h's gemm_c_update says: unsigned bytes make each
//   plane's sum exact. bool multiplies its bytes as u8 too (any non-zero byte
//   is true, and the product of two is positive), summed with .satfinite,
//   which stops at INT32_MAX instead of wrapping round to zero, and keeps
//   min(sum, 1).
// - The FP8 types multiply on FP8 wgmma, k-major, into float32 C. Hopper's FP8
//   wgmma keeps only about 14 bits of its running sum (DeepSeek-V3's
//   measurement), so each slab (128 of k) is summed afresh, in two halves of
//   128 columns (64 registers each beside the 128 of the tile's sums), and added
//   into the tile's float32 sums: cuBLAS's and DeepGEMM's promotion, which
//   bounds the short sums to 128 terms each. A mixed pair (A of one FP8 type,
//   B of the other) is one more type of operands to wgmma, so one more kernel
//   of the same code.
// - C leaves through shared memory (the ring, once both consumers are done) as
//   16-byte stores (store_tile); FP8's float32 C straight from the registers.

#include "gemm_tiled.h"

#include "gemm_common.cuh"
#include "gemm_wgmma.h"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

namespace wgmma {

constexpr int BM = GEMM_WGMMA_M, BN = GEMM_WGMMA_N, STAGES = GEMM_WGMMA_STAGES;
constexpr int GROUP_THREADS = 128, CONSUMERS = GEMM_WGMMA_THREADS / GROUP_THREADS - 1;
constexpr int CONSUMER_THREADS = CONSUMERS * GROUP_THREADS, CONSUMER_WARPS = CONSUMER_THREADS / 32;
constexpr int ROWS_PER_CONSUMER = BM / CONSUMERS;
// The 128-byte swizzle repeats every 8 rows of 128 bytes; a slab is one such
// row deep, and one wgmma takes 32 bytes of it.
constexpr int ROW_BYTES = GEMM_WGMMA_K_BYTES, ATOM_BYTES = 8 * ROW_BYTES, MMA_K_BYTES = 32;
constexpr int A_SLAB_BYTES = BM * ROW_BYTES;
// An MN-major box: 128 bytes along M/N by a slab's depth.
constexpr int BOX_BYTES = ROW_BYTES * ROW_BYTES / 2;
// Elements in 128 bytes: a slab's depth, and an MN-major box's width.
template <typename S>
constexpr int ROW = ROW_BYTES / sizeof(S);
// Registers a thread after setmaxnreg (multiples of 8; 128 x 40 + 256 x 232 fit
// the 64 K registers of a multiprocessor).
constexpr int PRODUCER_REGISTERS = 40, CONSUMER_REGISTERS = 232;
static_assert(ROWS_PER_CONSUMER == 64 && BN == 256, "one consumer: wgmma m64n256");
static_assert(GEMM_WGMMA_STAGE_BYTES == A_SLAB_BYTES + BN * ROW_BYTES, "gemm_wgmma.h's stage");

// The 1-byte element types, as their bits: int8 and uint8 (wrapping), bool,
// the two FP8 formats, and their mixed pairs (A's format first).
struct u8_bits { unsigned char bits; };
struct bool_bits { unsigned char bits; };
struct e4m3_bits { unsigned char bits; };
struct e5m2_bits { unsigned char bits; };
struct e4m3_e5m2_bits { unsigned char bits; };
struct e5m2_e4m3_bits { unsigned char bits; };

// What each element type sums in, and how a sum becomes an element of C.
template <typename S>
struct sum_of { typedef float type; };
template <>
struct sum_of<u8_bits> { typedef int type; };
template <>
struct sum_of<bool_bits> { typedef int type; };
template <typename S>
using sum_t = typename sum_of<S>::type;

// The element type of C: S's own, but float32 for FP8 (NumPy's product type).
template <typename S>
struct c_of { typedef S type; };
template <>
struct c_of<e4m3_bits> { typedef float type; };
template <>
struct c_of<e5m2_bits> { typedef float type; };
template <>
struct c_of<e4m3_e5m2_bits> { typedef float type; };
template <>
struct c_of<e5m2_e4m3_bits> { typedef float type; };
template <typename S>
using c_t = typename c_of<S>::type;

// Whether S's sums are promoted slab by slab (the FP8 types: see the top).
template <typename S>
constexpr bool PROMOTES = false;
template <>
constexpr bool PROMOTES<e4m3_bits> = true;
template <>
constexpr bool PROMOTES<e5m2_bits> = true;
template <>
constexpr bool PROMOTES<e4m3_e5m2_bits> = true;
template <>
constexpr bool PROMOTES<e5m2_e4m3_bits> = true;

template <typename S>
__device__ __forceinline__ c_t<S> element(S, float sum) {
    return rounded<c_t<S>>(sum);
}
__device__ __forceinline__ u8_bits element(u8_bits, int sum) { return {(unsigned char)sum}; }
__device__ __forceinline__ bool_bits element(bool_bits, int sum) {
    return {(unsigned char)min(sum, 1)};  // bool's sums are not negative
}

__device__ __forceinline__ unsigned shared_address(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// ---- mbarriers ----
__device__ __forceinline__ void barrier_init(unsigned long long *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count));
}
// Waits until the barrier's phase of this parity has completed.
__device__ __forceinline__ void barrier_wait(unsigned long long *bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(shared_address(bar)), "r"(parity)
                     : "memory");
    } while (!done);
}
__device__ __forceinline__ void barrier_arrive(unsigned long long *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}
// Arrives, and makes the phase also wait for `bytes` of TMA copies.
__device__ __forceinline__ void barrier_arrive_expecting(unsigned long long *bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                     shared_address(bar)),
                 "r"(bytes)
                 : "memory");
}

// One TMA copy: the box at (c0, c1, c2) of `map`'s tensor into dst, its bytes
// counted on bar.
__device__ __forceinline__ void tma_load(void *dst, const tensor_map *map, int c0, int c1, int c2,
                                         unsigned long long *bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(shared_address(dst)),
        "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(shared_address(bar))
        : "memory");
}

// A wgmma shared-memory descriptor: 128-byte swizzle, byte offsets between
// the core-matrix groups along the two axes (PTX ISA, "matrix descriptor").
__device__ __forceinline__ unsigned long long descriptor(const void *at, unsigned leading,
                                                         unsigned stride) {
    return (unsigned long long)((shared_address(at) & 0x3FFFF) >> 4) |
           (unsigned long long)(leading >> 4) << 16 | (unsigned long long)(stride >> 4) << 32 |
           1ull << 62;
}

// Keeps the compiler from moving reads or writes of the sums across the
// asynchronous wgmma that own them meanwhile.
template <int N>
__device__ __forceinline__ void hold(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void hold(int (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// wgmma's sums as inline asm's operands: "%0, %1, ..." in the text and "+f"(d[0]),
// ... in the operand list, written once here for the 128 registers of a 64 x 256
// tile (WGMMA_D_*) and the 64 of a 64 x 128 one (WGMMA_D64_*), ten at a time:
// TEN(t) is operands t0 to t9.
#define WGMMA_TEN_REGS(t) \
    "%" #t "0, %" #t "1, %" #t "2, %" #t "3, %" #t "4, %" #t "5, %" #t "6, %" #t "7, %" #t "8, %" #t "9, "
#define WGMMA_TEN_OPERANDS(d, C, t) \
    C(d[t##0]), C(d[t##1]), C(d[t##2]), C(d[t##3]), C(d[t##4]), C(d[t##5]), C(d[t##6]), \
    C(d[t##7]), C(d[t##8]), C(d[t##9])
#define WGMMA_SIXTY_REGS \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, " WGMMA_TEN_REGS(1) WGMMA_TEN_REGS(2) \
    WGMMA_TEN_REGS(3) WGMMA_TEN_REGS(4) WGMMA_TEN_REGS(5)
#define WGMMA_SIXTY_OPERANDS(d, C) \
    C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), C(d[7]), C(d[8]), C(d[9]), \
    WGMMA_TEN_OPERANDS(d, C, 1), WGMMA_TEN_OPERANDS(d, C, 2), WGMMA_TEN_OPERANDS(d, C, 3), \
    WGMMA_TEN_OPERANDS(d, C, 4), WGMMA_TEN_OPERANDS(d, C, 5)
#define WGMMA_D_REGS \
    WGMMA_SIXTY_REGS WGMMA_TEN_REGS(6) WGMMA_TEN_REGS(7) WGMMA_TEN_REGS(8) WGMMA_TEN_REGS(9) \
    WGMMA_TEN_REGS(10) WGMMA_TEN_REGS(11) "%120, %121, %122, %123, %124, %125, %126, %127"
#define WGMMA_D_OPERANDS(d, C) \
    WGMMA_SIXTY_OPERANDS(d, C), WGMMA_TEN_OPERANDS(d, C, 6), WGMMA_TEN_OPERANDS(d, C, 7), \
    WGMMA_TEN_OPERANDS(d, C, 8), WGMMA_TEN_OPERANDS(d, C, 9), WGMMA_TEN_OPERANDS(d, C, 10), \
    WGMMA_TEN_OPERANDS(d, C, 11), C(d[120]), C(d[121]), C(d[122]), C(d[123]), C(d[124]), \
    C(d[125]), C(d[126]), C(d[127])
#define WGMMA_D64_REGS WGMMA_SIXTY_REGS "%60, %61, %62, %63"
#define WGMMA_D64_OPERANDS(d, C) WGMMA_SIXTY_OPERANDS(d, C), C(d[60]), C(d[61]), C(d[62]), C(d[63])
// d += A (64 x 16, descriptor a) @ B (16 x 256, descriptor b); TRANS_*: the
// operand is MN-major.
#define WGMMA_64x256x16(TYPE)                                                                   \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"                                \
                 " wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {" WGMMA_D_REGS \
                 "}, %128, %129, p, 1, 1, %131, %132;\n}\n"                                     \
                 : WGMMA_D_OPERANDS(d, "+f")                                                    \
                 : "l"(a), "l"(b), "r"(1), "n"(TRANS_A), "n"(TRANS_B))
template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void mma(f16_bits, float (&d)[128], unsigned long long a,
                                    unsigned long long b) {
    WGMMA_64x256x16("f16");
}
template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void mma(bf16_bits, float (&d)[128], unsigned long long a,
                                    unsigned long long b) {
    WGMMA_64x256x16("bf16");
}
#undef WGMMA_64x256x16
// float32 operands read as TF32 (their 10 leading mantissa bits), k-major only.
template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void mma(float, float (&d)[128], unsigned long long a,
                                    unsigned long long b) {
    static_assert(!TRANS_A && !TRANS_B, "TF32 wgmma reads k-major operands only");
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" WGMMA_D_REGS
                 "}, %128, %129, p, 1, 1;\n}\n"
                 : WGMMA_D_OPERANDS(d, "+f")
                 : "l"(a), "l"(b), "r"(1));
}
// The 1-byte types, k-major only, as u8, sums in s32: wrapping for int8 and
// uint8, saturating for bool.
#define WGMMA_64x256x32_S32(TYPES)                                                            \
    static_assert(!TRANS_A && !TRANS_B, "8-bit wgmma reads k-major operands only");            \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"                              \
                 " wgmma.mma_async.sync.aligned.m64n256k32.s32" TYPES " {" WGMMA_D_REGS        \
                 "}, %128, %129, p;\n}\n"                                                      \
                 : WGMMA_D_OPERANDS(d, "+r")                                                   \
                 : "l"(a), "l"(b), "r"(1))
template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void mma(u8_bits, int (&d)[128], unsigned long long a,
                                    unsigned long long b) {
    WGMMA_64x256x32_S32(".u8.u8");
}
template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void mma(bool_bits, int (&d)[128], unsigned long long a,
                                    unsigned long long b) {
    WGMMA_64x256x32_S32(".u8.u8.satfinite");
}
#undef WGMMA_64x256x32_S32

// The FP8 types, k-major only: d = (accumulate ? d : 0) + A (64 x 32, descriptor
// a) @ B (32 x 128, descriptor b), one half of a consumer's columns; TYPES are
// A's and B's.
#define WGMMA_64x128x32_F8(TYPES)                                                             \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"                               \
                 " wgmma.mma_async.sync.aligned.m64n128k32.f32" TYPES                          \
                 " {" WGMMA_D64_REGS "}, %64, %65, p, 1, 1;\n}\n"                              \
                 : WGMMA_D64_OPERANDS(d, "+f")                                                 \
                 : "l"(a), "l"(b), "r"(accumulate))
__device__ __forceinline__ void mma_half(e4m3_bits, float (&d)[64], unsigned long long a,
                                         unsigned long long b, int accumulate) {
    WGMMA_64x128x32_F8(".e4m3.e4m3");
}
__device__ __forceinline__ void mma_half(e5m2_bits, float (&d)[64], unsigned long long a,
                                         unsigned long long b, int accumulate) {
    WGMMA_64x128x32_F8(".e5m2.e5m2");
}
__device__ __forceinline__ void mma_half(e4m3_e5m2_bits, float (&d)[64], unsigned long long a,
                                         unsigned long long b, int accumulate) {
    WGMMA_64x128x32_F8(".e4m3.e5m2");
}
__device__ __forceinline__ void mma_half(e5m2_e4m3_bits, float (&d)[64], unsigned long long a,
                                         unsigned long long b, int accumulate) {
    WGMMA_64x128x32_F8(".e5m2.e4m3");
}
#undef WGMMA_64x128x32_F8

// Where k-step kk of a slab starts, and its descriptor. K-major: rows of 128
// bytes of k, so a step is 32 bytes along the row (the swizzle is applied to
// the whole address, so an offset inside the 1 KiB pattern is allowed); groups
// of 8 rows 1 KiB apart. MN-major (16-bit): one 128-byte row per k, so a step
// is 16 rows; groups of 8 k 1 KiB apart, boxes of 64 along M/N BOX_BYTES apart.
template <bool K_MAJOR>
__device__ __forceinline__ unsigned long long step(const unsigned char *slab, int kk) {
    return K_MAJOR ? descriptor(slab + kk * MMA_K_BYTES, 16, ATOM_BYTES)
                   : descriptor(slab + kk * MMA_K_BYTES / 2 * ROW_BYTES, BOX_BYTES, ATOM_BYTES);
}

// One operand's slab at k0 of rows i0 .. i0 + ROWS - 1 (along M or N): one box
// if it is k-major, else ROWS / ROW<S> boxes of 128 bytes along M or N. The
// maps count GEMM_WGMMA_TMA_UNIT bytes along the contiguous axis (gemm/launch.c:
// tma_operand).
template <typename S, bool K_MAJOR, int ROWS>
__device__ __forceinline__ void load_slab(unsigned char *slab, const tensor_map *map, int k0,
                                          int i0, int z, unsigned long long *bar) {
    if (K_MAJOR) {
        tma_load(slab, map, k0 * (int)(sizeof(S) / GEMM_WGMMA_TMA_UNIT(sizeof(S))), i0, z, bar);
    } else {
#pragma unroll
        for (int h = 0; h < ROWS / ROW<S>; ++h)
            tma_load(slab + h * BOX_BYTES, map, i0 + h * ROW<S>, k0, z, bar);
    }
}

// The producer: slab s of A and B into stage s % STAGES, once that stage is empty.
template <typename S, bool A_K_MAJOR, bool B_K_MAJOR>
__device__ __forceinline__ void produce(const gemm_tma_args &args, unsigned char *ring,
                                        unsigned long long *full, unsigned long long *empty,
                                        index_t slabs, int row0, int col0, int z) {
    const int za = args.gemm.a_batch_stride ? z : 0, zb = args.gemm.b_batch_stride ? z : 0;
    for (index_t s = 0; s < slabs; ++s) {
        const int stage = (int)(s % STAGES), k0 = (int)(s * ROW<S>);
        unsigned char *a_slab = ring + stage * GEMM_WGMMA_STAGE_BYTES, *b_slab = a_slab + A_SLAB_BYTES;
        if (s >= STAGES) barrier_wait(&empty[stage], (unsigned)((s / STAGES - 1) & 1));
        barrier_arrive_expecting(&full[stage], GEMM_WGMMA_STAGE_BYTES);
        load_slab<S, A_K_MAJOR, BM>(a_slab, &args.a_map, k0, row0, za, &full[stage]);
        load_slab<S, B_K_MAJOR, BN>(b_slab, &args.b_map, k0, col0, zb, &full[stage]);
    }
}

// One slab of an FP8 product (k-major operands) added into the tile's sums d:
// each half of the columns summed afresh on the tensor cores into `part`, then
// added in float32. Half h of n256's registers is d[64 h ..] (four for every 8
// columns), B's half h its rows from 128 h, 16 KiB into the slab (whole 1 KiB
// swizzle periods).
template <typename S>
__device__ __forceinline__ void sum_slab(S, float (&d)[128], const unsigned char *a_slab,
                                         const unsigned char *b_slab) {
    constexpr int HALF = BN / 2;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float part[64];
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < ROW_BYTES / MMA_K_BYTES; ++kk)
            mma_half(S(), part, step<true>(a_slab, kk),
                     step<true>(b_slab + h * HALF * ROW_BYTES, kk), kk > 0);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        hold(part);
#pragma unroll
        for (int i = 0; i < 64; ++i) d[64 * h + i] += part[i];
    }
}

// A consumer warpgroup: its 64 x 256 part of the tile, summed over every slab.
template <typename S, bool A_K_MAJOR, bool B_K_MAJOR>
__device__ __forceinline__ void consume(sum_t<S> (&d)[128], const unsigned char *ring,
                                        unsigned long long *full, unsigned long long *empty,
                                        index_t slabs, int consumer) {
    const bool warp_leader = threadIdx.x % 32 == 0;
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0;
    // Both layouts put this consumer's 64 rows of A 8 KiB into the slab.
    const int a_offset = consumer * ROWS_PER_CONSUMER * ROW_BYTES;
    for (index_t s = 0; s < slabs; ++s) {
        const int stage = (int)(s % STAGES);
        const unsigned char *a_slab = ring + stage * GEMM_WGMMA_STAGE_BYTES + a_offset;
        const unsigned char *b_slab = ring + stage * GEMM_WGMMA_STAGE_BYTES + A_SLAB_BYTES;
        barrier_wait(&full[stage], (unsigned)((s / STAGES) & 1));
        if constexpr (PROMOTES<S>) {
            sum_slab(S(), d, a_slab, b_slab);
        } else {
            hold(d);
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int kk = 0; kk < ROW_BYTES / MMA_K_BYTES; ++kk)
                mma<!A_K_MAJOR, !B_K_MAJOR>(S(), d, step<A_K_MAJOR>(a_slab, kk),
                                            step<B_K_MAJOR>(b_slab, kk));
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
            // Waiting for this slab's wgmma before issuing the next: keeping
            // one group in flight (wait_group 1) makes ptxas serialise every
            // wgmma (its warning C7514), and the other consumer keeps the
            // tensor cores busy meanwhile.
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            hold(d);
        }
        if (warp_leader) barrier_arrive(&empty[stage]);
    }
}

// Consumer threads only: a barrier among them (the producer has left).
__device__ __forceinline__ void consumers_sync() {
    asm volatile("bar.sync 1, %0;\n" ::"n"(CONSUMER_THREADS) : "memory");
}

// Whether the kernel of S also multiplies byte planes (gemm_c_update).
template <typename S>
constexpr bool WRITES_WIDE_C = false;
template <>
constexpr bool WRITES_WIDE_C<u8_bits> = true;

// C of elements wider than a byte, as gemm_c_update says, from the tile's sums
// in shared memory (sums[r * SUMS_PITCH + c]: the ring, which the consumers
// are done with): each consumer thread updates elements of C, a warp's
// consecutive ones together, WIDE_C_BATCH at a time (their loads all issued
// before any store, so that their latencies overlap). Out of line: one loop
// for every element size, rarely run beside the 1-byte products' own stores.
constexpr int SUMS_PITCH = BN + 8;  // ints: a warp's pairs hit distinct banks
constexpr int WIDE_C_BATCH = 4;
static_assert(BM * SUMS_PITCH * 4 <= STAGES * GEMM_WGMMA_STAGE_BYTES, "the sums fit the ring");
static_assert(BM * BN % (CONSUMER_THREADS * WIDE_C_BATCH) == 0, "whole batches");
__device__ __forceinline__ unsigned long long load_wide(const unsigned char *e, int size) {
    return size == 2 ? *(const unsigned short *)e
           : size == 4 ? *(const unsigned *)e
                       : *(const unsigned long long *)e;
}
__device__ __forceinline__ void store_wide(unsigned char *e, int size, unsigned long long v) {
    if (size == 2)
        *(unsigned short *)e = (unsigned short)v;
    else if (size == 4)
        *(unsigned *)e = (unsigned)v;
    else
        *(unsigned long long *)e = v;
}
__device__ __noinline__ void update_wide_c(const gemm_tma_args &args, const int *sums, index_t row0,
                                           index_t col0, int z) {
    const gemm_args &p = args.gemm;
    const gemm_c_update u = args.c_update;
    const index_t rows = min((index_t)BM, p.m - row0), cols = min((index_t)BN, p.n - col0);
    unsigned char *const c =
        (unsigned char *)p.c + (z * p.c_batch_stride + row0 * p.ldc + col0) * u.size;
#pragma unroll 1
    for (int base = threadIdx.x; base < BM * BN; base += CONSUMER_THREADS * WIDE_C_BATCH) {
        unsigned long long old[WIDE_C_BATCH];
#pragma unroll
        for (int i = 0; i < WIDE_C_BATCH; ++i) {
            const int at = base + i * CONSUMER_THREADS, r = at / BN, cc = at % BN;
            old[i] = u.add && r < rows && cc < cols ? load_wide(c + (r * p.ldc + cc) * u.size, u.size)
                                                    : 0;
        }
#pragma unroll
        for (int i = 0; i < WIDE_C_BATCH; ++i) {
            const int at = base + i * CONSUMER_THREADS, r = at / BN, cc = at % BN;
            if (r < rows && cc < cols)
                store_wide(c + (r * p.ldc + cc) * u.size, u.size,
                           old[i] + ((unsigned long long)(unsigned)sums[r * SUMS_PITCH + cc]
                                     << u.shift));
        }
    }
}

template <typename S, bool A_K_MAJOR, bool B_K_MAJOR>
__device__ __forceinline__ void tile(const gemm_tma_args &args, unsigned char *ring,
                                     unsigned long long *full, unsigned long long *empty,
                                     index_t row0, index_t col0, int z) {
    const gemm_args &p = args.gemm;
    const index_t slabs = (p.k + ROW<S> - 1) / ROW<S>;
    const int warpgroup = threadIdx.x / GROUP_THREADS;
    if (warpgroup == CONSUMERS) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGISTERS));
        if (threadIdx.x == CONSUMER_THREADS)
            produce<S, A_K_MAJOR, B_K_MAJOR>(args, ring, full, empty, slabs, (int)row0, (int)col0, z);
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGISTERS));
    sum_t<S> d[128];
    consume<S, A_K_MAJOR, B_K_MAJOR>(d, ring, full, empty, slabs, warpgroup);

    // Lane (group, quad) of warp w holds, for each 8 columns j, C(16 w + group
    // (+ 8), 8 j + 2 quad + {0, 1}) of its consumer's 64 rows.
    typedef c_t<S> C;
    const int lane = threadIdx.x % 32, warp = (threadIdx.x % GROUP_THREADS) / 32;
    const int row = warpgroup * ROWS_PER_CONSUMER + warp * 16 + lane / 4, col = 2 * (lane % 4);
    if constexpr (PROMOTES<S>) {
        // FP8's float32 C straight from the registers, a lane's pairs of columns as
        // 8-byte stores (a warp's fill whole 32-byte sectors): C is 4 bytes an
        // element where the operands are 1, and its trip through shared memory and
        // the barriers around it cost 6% at n = 8192 (H200, docs/kernel-log.md).
        C *const c = (C *)p.c + z * p.c_batch_stride;
        const bool pairs = p.ldc % 2 == 0 && ((unsigned long long)c & 7) == 0;
        const index_t r0 = row0 + row;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            const index_t cc = col0 + 8 * j + col;
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const index_t r = r0 + 8 * half;
                const float x = d[4 * j + 2 * half], y = d[4 * j + 2 * half + 1];
                if (r >= p.m || cc >= p.n) continue;
                C *const e = c + r * p.ldc + cc;
                if (pairs && cc + 1 < p.n) {
                    *(float2 *)e = make_float2(x, y);
                } else {
                    e[0] = x;
                    if (cc + 1 < p.n) e[1] = y;
                }
            }
        }
        return;
    }
    constexpr int C_PITCH = BN + 8;  // elements: a warp's pairs hit distinct banks
    static_assert(BM * C_PITCH * sizeof(C) <= STAGES * GEMM_WGMMA_STAGE_BYTES, "C fits the ring");
    struct pair { C x, y; };
    C *const c_tile = (C *)ring;
    consumers_sync();  // both consumers are done reading the ring
    if constexpr (WRITES_WIDE_C<S>) {
        if (args.c_update.size > 1) {
            int *const sums = (int *)ring;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                *(int2 *)&sums[row * SUMS_PITCH + 8 * j + col] = make_int2(d[4 * j], d[4 * j + 1]);
                *(int2 *)&sums[(row + 8) * SUMS_PITCH + 8 * j + col] =
                    make_int2(d[4 * j + 2], d[4 * j + 3]);
            }
            consumers_sync();
            update_wide_c(args, sums, row0, col0, z);
            return;
        }
    }
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        *(pair *)&c_tile[row * C_PITCH + 8 * j + col] = {element(S(), d[4 * j]),
                                                         element(S(), d[4 * j + 1])};
        *(pair *)&c_tile[(row + 8) * C_PITCH + 8 * j + col] = {element(S(), d[4 * j + 2]),
                                                               element(S(), d[4 * j + 3])};
    }
    consumers_sync();
    store_tile<C, BM, BN, C_PITCH, CONSUMER_THREADS>(
        threadIdx.x, c_tile, (C *)p.c + z * p.c_batch_stride + row0 * p.ldc + col0, p.ldc,
        p.m - row0, p.n - col0);
}

template <typename S>
__device__ __forceinline__ void gemm(const gemm_tma_args &args) {
    extern __shared__ unsigned char wgmma_shared[];
    __shared__ unsigned long long full[STAGES], empty[STAGES];
    // The swizzle pattern is a function of the address: the ring starts on its period.
    unsigned char *const ring =
        wgmma_shared + ((ATOM_BYTES - shared_address(wgmma_shared) % ATOM_BYTES) % ATOM_BYTES);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            barrier_init(&full[s], 1);
            barrier_init(&empty[s], CONSUMER_WARPS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    index_t row0, col0;
    block_origin<BM, BN>(row0, col0);
    const int z = blockIdx.z;
#define WGMMA_TILE(A_K_MAJOR, B_K_MAJOR) \
    tile<S, A_K_MAJOR, B_K_MAJOR>(args, ring, full, empty, row0, col0, z)
    // The same tests as the host's tma_operand (gemm/launch.c), which made the maps.
    if constexpr (sizeof(S) != 2) {
        WGMMA_TILE(true, true);  // the host gives TF32 and 1-byte types k-major operands only
    } else if (args.gemm.a_col_stride == 1) {
        if (args.gemm.b_row_stride == 1) WGMMA_TILE(true, true); else WGMMA_TILE(true, false);
    } else {
        if (args.gemm.b_row_stride == 1) WGMMA_TILE(false, true); else WGMMA_TILE(false, false);
    }
#undef WGMMA_TILE
}

}  // namespace wgmma

#define WGMMA_BODY(S) wgmma::gemm<S>(args)
#else
#define WGMMA_BODY(S)
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// TMA reads the maps from the parameter itself; sm_5x/6x (whose empty kernels
// never run) have no __grid_constant__.
#if __CUDA_ARCH__ >= 700
#define GRID_CONSTANT __grid_constant__
#else
#define GRID_CONSTANT
#endif

extern "C" __global__ void __launch_bounds__(GEMM_WGMMA_THREADS, 1)
    gemm_wgmma_f16(const GRID_CONSTANT gemm_tma_args args) {
    WGMMA_BODY(f16_bits);
}
extern "C" __global__ void __launch_bounds__(GEMM_WGMMA_THREADS, 1)
    gemm_wgmma_bf16(const GRID_CONSTANT gemm_tma_args args) {
    WGMMA_BODY(bf16_bits);
}
extern "C" __global__ void __launch_bounds__(GEMM_WGMMA_THREADS, 1)
    gemm_wgmma_f32(const GRID_CONSTANT gemm_tma_args args) {
    WGMMA_BODY(float);
}
extern "C" __global__ void __launch_bounds__(GEMM_WGMMA_THREADS, 1)
    gemm_wgmma_u8(const GRID_CONSTANT gemm_tma_args args) {
    WGMMA_BODY(wgmma::u8_bits);
}
extern "C" __global__ void __launch_bounds__(GEMM_WGMMA_THREADS, 1)
    gemm_wgmma_bool(const GRID_CONSTANT gemm_tma_args args) {
    WGMMA_BODY(wgmma::bool_bits);
}
extern "C" __global__ void __launch_bounds__(GEMM_WGMMA_THREADS, 1)
    gemm_wgmma_e4m3(const GRID_CONSTANT gemm_tma_args args) {
    WGMMA_BODY(wgmma::e4m3_bits);
}
extern "C" __global__ void __launch_bounds__(GEMM_WGMMA_THREADS, 1)
    gemm_wgmma_e5m2(const GRID_CONSTANT gemm_tma_args args) {
    WGMMA_BODY(wgmma::e5m2_bits);
}
extern "C" __global__ void __launch_bounds__(GEMM_WGMMA_THREADS, 1)
    gemm_wgmma_e4m3_e5m2(const GRID_CONSTANT gemm_tma_args args) {
    WGMMA_BODY(wgmma::e4m3_e5m2_bits);
}
extern "C" __global__ void __launch_bounds__(GEMM_WGMMA_THREADS, 1)
    gemm_wgmma_e5m2_e4m3(const GRID_CONSTANT gemm_tma_args args) {
    WGMMA_BODY(wgmma::e5m2_e4m3_bits);
}
