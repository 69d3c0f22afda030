// Copies an array of any shape and strides into another, converting each element from
// one dtype to another as NumPy casts it (ml_dtypes for bfloat16): the copies and casts
// pyctk.matmul makes of GPU operands and results, and DeviceArray's. The launch contract
// is in convert.h; the host code (libgpu/src/gemm/convert.c) merges the axes it can and
// launches one thread per element.
//
// An element is read exactly into a `number` (every float type fits a double, every
// integer an int64 or a uint64), then written in the destination type. Where NumPy's
// cast rounds twice, so does this one: ml_dtypes makes bfloat16 from a float32 made
// first (from float64 and from integers); NumPy makes float16 from float64 directly, and
// ml_dtypes the FP8 types.
// A float out of an integer type's range has no defined cast (NumPy warns "invalid value
// encountered in cast" and gives what its CPU's loop gives, which differs between CPUs);
// here it converts as x86-64's scalar C casts do: through a 32-bit conversion for types
// of up to 32 bits (64 for uint32), which gives INT_MIN for what does not fit.

#include "convert.h"

namespace {

enum kind { SIGNED, UNSIGNED, REAL, COMPLEX };

struct number {
    int kind;
    long long s;           // SIGNED
    unsigned long long u;  // UNSIGNED (bool: 0 or 1)
    double re, im;         // REAL, COMPLEX
};

__device__ number signed_number(long long s) { number x = {SIGNED}; x.s = s; return x; }
__device__ number unsigned_number(unsigned long long u) { number x = {UNSIGNED}; x.u = u; return x; }
__device__ number real_number(double re) { number x = {REAL}; x.re = re; return x; }
__device__ number complex_number(double re, double im) {
    number x = {COMPLEX};
    x.re = re, x.im = im;
    return x;
}

__device__ double from_half(unsigned short bits) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
}

__device__ unsigned short to_half(double d) {  // rounded once, to nearest even
    unsigned short bits;
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(bits) : "d"(d));
    return bits;
}

__device__ unsigned short to_bfloat16(float f) {  // to nearest even; NaN stays NaN
    const unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// The two FP8 formats, as ml_dtypes defines them: exponent bits, mantissa bits, the largest
// finite value's bits, and what a value past it becomes (float8_e4m3fn has no infinity: NaN).
// Both conversions work on the float64's bits, in integers.
struct float8_format {
    int exponent_bits, mantissa_bits;
    unsigned char largest, overflow, nan;  // magnitudes: the sign bit is added
};
__device__ const float8_format E4M3FN = {4, 3, 0x7e, 0x7f, 0x7f};
__device__ const float8_format E5M2 = {5, 2, 0x7b, 0x7c, 0x7e};

__device__ double from_float8(unsigned char bits, const float8_format &f) {
    const int bias = (1 << (f.exponent_bits - 1)) - 1, magnitude = bits & 0x7f;
    const unsigned long long sign = (unsigned long long)(bits & 0x80) << 56;
    const int exponent = magnitude >> f.mantissa_bits, mantissa = magnitude & ((1 << f.mantissa_bits) - 1);
    if (magnitude > f.largest)  // past the largest: e5m2's infinities, and the NaNs
        return __longlong_as_double((long long)(sign | (magnitude == f.overflow && f.overflow != f.nan
                                                            ? 0x7ff0000000000000ull
                                                            : 0x7ff8000000000000ull)));
    if (exponent == 0) {  // a subnormal (or zero): mantissa units of 2^(1 - bias - mantissa_bits)
        const double unit = __longlong_as_double((long long)(1023 + 1 - bias - f.mantissa_bits) << 52);
        return __longlong_as_double(__double_as_longlong(mantissa * unit) | (long long)sign);
    }
    return __longlong_as_double((long long)(sign | (unsigned long long)(exponent - bias + 1023) << 52 |
                                            (unsigned long long)mantissa << (52 - f.mantissa_bits)));
}

// d rounded once to nearest even, as ml_dtypes casts a float64: its 53-bit significand is
// cut to the quantum of its binade (of the subnormals below the smallest normal), and what
// rounds past the largest finite value overflows.
__device__ unsigned char to_float8(double d, const float8_format &f) {
    const unsigned long long bits = (unsigned long long)__double_as_longlong(d);
    const unsigned char sign = (unsigned char)(bits >> 56) & 0x80;
    const unsigned long long magnitude = bits & 0x7fffffffffffffffull;
    const int bias = (1 << (f.exponent_bits - 1)) - 1, exponent = (int)(magnitude >> 52) - 1023;
    if (magnitude > 0x7ff0000000000000ull) return sign | f.nan;
    if (exponent > bias + 1) return sign | f.overflow;  // twice the largest and more, infinity too
    // Bits dropped: those below the quantum; float64 subnormals drop all (they round to zero).
    const int dropped = 52 - f.mantissa_bits + max(1 - bias - exponent, 0);
    if (dropped >= 64 || magnitude == 0) return sign;
    const unsigned long long significand = (magnitude & ((1ull << 52) - 1)) | 1ull << 52;
    const unsigned long long kept = significand >> dropped, rest = significand & ((1ull << dropped) - 1);
    const unsigned long long half = 1ull << (dropped - 1);
    const unsigned long long quanta = kept + (rest > half || (rest == half && (kept & 1)));
    // A normal's quanta include its leading 1 (2^mantissa_bits), which the exponent field
    // stands for; a carry out of the mantissa moves into the exponent field by the same sum.
    const unsigned long long base =
        exponent >= 1 - bias ? (unsigned long long)(exponent + bias - 1) << f.mantissa_bits : 0;
    const unsigned long long encoded = base + quanta;
    return sign | (encoded > f.largest ? f.overflow : (unsigned char)encoded);
}

template <typename T>
__device__ T at(const void *p) { return *static_cast<const T *>(p); }

__device__ number load(int dtype, const void *p) {
    switch (dtype) {
    case CONVERT_FLOAT32: return real_number(at<float>(p));
    case CONVERT_FLOAT64: return real_number(at<double>(p));
    case CONVERT_FLOAT16: return real_number(from_half(at<unsigned short>(p)));
    case CONVERT_BFLOAT16: return real_number(__uint_as_float((unsigned)at<unsigned short>(p) << 16));
    case CONVERT_COMPLEX64: return complex_number(at<float>(p), static_cast<const float *>(p)[1]);
    case CONVERT_COMPLEX128: return complex_number(at<double>(p), static_cast<const double *>(p)[1]);
    case CONVERT_INT8: return signed_number(at<signed char>(p));
    case CONVERT_INT16: return signed_number(at<short>(p));
    case CONVERT_INT32: return signed_number(at<int>(p));
    case CONVERT_INT64: return signed_number(at<long long>(p));
    case CONVERT_UINT8: return unsigned_number(at<unsigned char>(p));
    case CONVERT_UINT16: return unsigned_number(at<unsigned short>(p));
    case CONVERT_UINT32: return unsigned_number(at<unsigned>(p));
    case CONVERT_UINT64: return unsigned_number(at<unsigned long long>(p));
    case CONVERT_FLOAT8_E4M3FN: return real_number(from_float8(at<unsigned char>(p), E4M3FN));
    case CONVERT_FLOAT8_E5M2: return real_number(from_float8(at<unsigned char>(p), E5M2));
    default: return unsigned_number(at<unsigned char>(p) != 0);  // CONVERT_BOOL
    }
}

// x86-64's truncating conversions: the most negative value for what does not fit (NaN too).
__device__ long long truncated64(double d) {
    return d > -9223372036854777856.0 && d < 9223372036854775808.0 ? (long long)d
                                                                     : (long long)(1ull << 63);
}
__device__ long long truncated32(double d) {
    return d > -2147483649.0 && d < 2147483648.0 ? (int)d : (int)0x80000000u;
}

// The bits of an integer destination of `bytes` bytes (the store keeps the low ones).
__device__ unsigned long long integer_bits(const number &x, int bytes, bool is_unsigned) {
    if (x.kind == SIGNED) return (unsigned long long)x.s;
    if (x.kind == UNSIGNED) return x.u;
    if (bytes < 4 || (bytes == 4 && !is_unsigned)) return (unsigned long long)truncated32(x.re);
    if (bytes == 8 && is_unsigned && x.re >= 9223372036854775808.0)  // the upper half of uint64
        return (unsigned long long)truncated64(x.re - 9223372036854775808.0) ^ (1ull << 63);
    return (unsigned long long)truncated64(x.re);
}

__device__ double to_double(const number &x) {
    return x.kind == SIGNED ? __ll2double_rn(x.s) : x.kind == UNSIGNED ? __ull2double_rn(x.u) : x.re;
}

__device__ float to_float(const number &x) {
    return x.kind == SIGNED ? __ll2float_rn(x.s) : x.kind == UNSIGNED ? __ull2float_rn(x.u)
                                                                        : __double2float_rn(x.re);
}

template <typename T>
__device__ void put(void *p, T value) { *static_cast<T *>(p) = value; }

__device__ void store(int dtype, void *p, const number &x) {
    const double im = x.kind == COMPLEX ? x.im : 0.0;
    switch (dtype) {
    case CONVERT_FLOAT32: put(p, to_float(x)); break;
    case CONVERT_FLOAT64: put(p, to_double(x)); break;
    case CONVERT_FLOAT16: put(p, to_half(to_double(x))); break;
    case CONVERT_BFLOAT16: put(p, to_bfloat16(to_float(x))); break;
    case CONVERT_COMPLEX64:  // parts one by one: a complex is aligned as its parts are
        put(p, to_float(x)), static_cast<float *>(p)[1] = __double2float_rn(im);
        break;
    case CONVERT_COMPLEX128:
        put(p, to_double(x)), static_cast<double *>(p)[1] = im;
        break;
    case CONVERT_INT8: case CONVERT_UINT8: put(p, (unsigned char)integer_bits(x, 1, dtype == CONVERT_UINT8)); break;
    case CONVERT_INT16: case CONVERT_UINT16: put(p, (unsigned short)integer_bits(x, 2, dtype == CONVERT_UINT16)); break;
    case CONVERT_INT32: case CONVERT_UINT32: put(p, (unsigned)integer_bits(x, 4, dtype == CONVERT_UINT32)); break;
    case CONVERT_INT64: case CONVERT_UINT64: put(p, integer_bits(x, 8, dtype == CONVERT_UINT64)); break;
    case CONVERT_FLOAT8_E4M3FN: put(p, to_float8(to_double(x), E4M3FN)); break;
    case CONVERT_FLOAT8_E5M2: put(p, to_float8(to_double(x), E5M2)); break;
    default:  // CONVERT_BOOL: nonzero (NaN too) is true
        put(p, (unsigned char)(x.kind == SIGNED ? x.s != 0 : x.kind == UNSIGNED ? x.u != 0
                                                                                : x.re != 0.0 || im != 0.0));
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(CONVERT_THREADS) convert(convert_args p) {
    unsigned rest = blockIdx.x * CONVERT_THREADS + threadIdx.x;
    if (rest >= p.count) return;
    long long from = 0, to = 0;
#pragma unroll
    for (int d = CONVERT_DIMS - 1; d >= 0; --d) {
        if (d >= p.ndim) continue;
        const unsigned quotient = p.divisors[d].multiplier
                                      ? __umulhi(rest, p.divisors[d].multiplier) >> p.divisors[d].shift
                                      : rest;
        const unsigned index = rest - quotient * p.shape[d];
        from += (long long)index * p.src_strides[d];
        to += (long long)index * p.dst_strides[d];
        rest = quotient;
    }
    store(p.dst_dtype, static_cast<char *>(p.dst) + to,
          load(p.src_dtype, static_cast<const char *>(p.src) + from));
}
