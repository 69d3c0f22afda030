// PyCUDA's complex numbers for kernels: pycuda::complex<float> and <double>, as
// ``pyctk.tools.dtype_to_ctype`` names complex64 and complex128, with their arithmetic and
// math functions (exp, log, sqrt, sin ..., abs, arg, norm, conj, real, imag, polar, pow).
// It is cuda::std::complex (NVIDIA's CCCL, in the wheel pyctk's nvrtc extra installs), whose
// layout is PyCUDA's and NumPy's: the real part, then the imaginary part.
#pragma once
#include <cuda/std/complex>

namespace pycuda {
template <class T> using complex = ::cuda::std::complex<T>;
using ::cuda::std::abs;  using ::cuda::std::arg;   using ::cuda::std::norm;  using ::cuda::std::conj;
using ::cuda::std::real; using ::cuda::std::imag;  using ::cuda::std::polar; using ::cuda::std::proj;
using ::cuda::std::exp;  using ::cuda::std::log;   using ::cuda::std::log10; using ::cuda::std::pow;
using ::cuda::std::sqrt; using ::cuda::std::sin;   using ::cuda::std::cos;   using ::cuda::std::tan;
using ::cuda::std::sinh; using ::cuda::std::cosh;  using ::cuda::std::tanh;  using ::cuda::std::asin;
using ::cuda::std::acos; using ::cuda::std::atan;  using ::cuda::std::asinh; using ::cuda::std::acosh;
using ::cuda::std::atanh;
}  // namespace pycuda
