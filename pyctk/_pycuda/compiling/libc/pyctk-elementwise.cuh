// The device functions of pyctk's element-wise kernels (pyctk/_pycuda/gpuarrays/codegen.py
// includes this header in each; operations.py's expressions call them): NumPy's results where C's
// operators give another, for real operands. pyctk-elementwise-complex.cuh adds the complex ones.
#pragma once

template <class T> __device__ bool pyctk_eq(T a, T b) { return a == b; }
__device__ bool pyctk_eq(long a, unsigned long b) { return a >= 0 && (unsigned long) a == b; }
__device__ bool pyctk_eq(unsigned long a, long b) { return b >= 0 && a == (unsigned long) b; }

// int64 against uint64 compared exactly (C would convert the int64 to uint64)
template <class T> __device__ bool pyctk_lt(T a, T b) { return a < b; }
__device__ bool pyctk_lt(long a, unsigned long b) { return a < 0 || (unsigned long) a < b; }
__device__ bool pyctk_lt(unsigned long a, long b) { return b > 0 && a < (unsigned long) b; }

template <class T> __device__ bool pyctk_le(T a, T b) { return a <= b; }
__device__ bool pyctk_le(long a, unsigned long b) { return a < 0 || (unsigned long) a <= b; }
__device__ bool pyctk_le(unsigned long a, long b) { return b >= 0 && a <= (unsigned long) b; }

template <class T> __device__ bool pyctk_nonzero(T x) { return x != T(0); }

template <class T> __device__ bool pyctk_positive(T x) { return pyctk_lt(T(0), x); }

// by squaring, in 64 bits: wraps around as NumPy's integers do
template <class T> __device__ T pyctk_ipow(T base, T exponent) {
  unsigned long long result = 1, power = (unsigned long long) base;
  for (; exponent != 0; exponent /= 2) {
    if (exponent % 2 != 0) result *= power;
    power *= power;
  }
  return (T) result;
}

// NumPy refuses negative exponents; here they give 1/base**-e truncated
template <class T> __device__ T pyctk_ipow_signed(T base, T exponent) {
  if (exponent < 0) return base == 1 ? 1 : base == -1 ? (exponent % 2 != 0 ? -1 : 1) : 0;
  return pyctk_ipow(base, exponent);
}

// NumPy's floor division and remainder of floats (the remainder has b's sign)
template <class T> __device__ T pyctk_divmod(T a, T b, bool modulus) {
  T mod = fmod(a, b);
  if (b == 0) return modulus ? mod : a / b;
  T quotient = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) { mod += b; quotient -= 1; }
  } else mod = copysign(T(0), b);
  if (modulus) return mod;
  if (quotient == 0) return copysign(T(0), a / b);
  T floored = floor(quotient);
  return quotient - floored > T(0.5) ? floored + 1 : floored;
}

// the same for signed integers; 0 for b == 0, and MIN // -1 wraps, as NumPy's
template <class T> __device__ T pyctk_idivmod(T a, T b, bool modulus) {
  if (b == 0) return 0;
  if (b == -1) return modulus ? 0 : (T) (0ULL - (unsigned long long) a);
  T quotient = a / b, mod = a % b;
  if (mod != 0 && (mod < 0) != (b < 0)) { quotient -= 1; mod += b; }
  return modulus ? mod : quotient;
}

// an ldexp exponent as int: beyond +-100000 every double over/underflows
__device__ int pyctk_exponent(long e) { return e < -100000 ? -100000 : e > 100000 ? 100000 : (int) e; }
