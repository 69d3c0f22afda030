// pyctk-elementwise.cuh's functions for complex operands too: comparisons in NumPy's
// lexicographic order (a NaN part compares false) and powers with NumPy's exact cases (x**0,
// 0**y, small integral powers by squaring). Declared before the real header, whose templates
// (pyctk_positive) then find these overloads.
#pragma once
#include <pycuda-complex.hpp>

template <class T> __device__ bool pyctk_lt(pycuda::complex<T> a, pycuda::complex<T> b) {
  return (a.real() < b.real() && a.imag() == a.imag() && b.imag() == b.imag())
         || (a.real() == b.real() && a.imag() < b.imag());
}

template <class T> __device__ bool pyctk_le(pycuda::complex<T> a, pycuda::complex<T> b) {
  return (a.real() < b.real() && a.imag() == a.imag() && b.imag() == b.imag())
         || (a.real() == b.real() && a.imag() <= b.imag());
}

template <class T> __device__ pycuda::complex<T> pyctk_cpow(pycuda::complex<T> a, pycuda::complex<T> b) {
  if (b.real() == 0 && b.imag() == 0) return pycuda::complex<T>(1);
  if (a.real() == 0 && a.imag() == 0)
    return b.real() > 0 ? pycuda::complex<T>(0) : pycuda::complex<T>(T(nan("")), T(nan("")));
  if (b.imag() == 0 && b.real() == (int) b.real() && fabs(b.real()) < 100) {
    int n = (int) b.real();
    unsigned k = n < 0 ? -n : n;
    pycuda::complex<T> result(1), power = a;
    for (; k; k /= 2) {
      if (k % 2) result *= power;
      power *= power;
    }
    return n < 0 ? pycuda::complex<T>(1) / result : result;
  }
  return pow(a, b);
}

#include <pyctk-elementwise.cuh>
