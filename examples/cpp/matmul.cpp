// Two products on the GPU through libgpumatmul's C API from C++, each checked against the
// CPU: a float32 product, and a batch of three float64 products in one call.
//
//   c++ -std=c++17 matmul.cpp $(python -m pyctk --cflags --libs) -o matmul && ./matmul
//   c++ -std=c++17 matmul.cpp $(pkg-config --cflags --libs gpumatmul) -o matmul && ./matmul
//
// Exit status (the same in every example of examples/): 0 when every product matches the
// CPU's, 1 when one does not or a call fails, 77 when there is no GPU to run on (no NVIDIA
// driver, or no GPU): then it prints the status and the library's message.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpumatmul.h"

namespace {

enum exit_status { ok = 0, failed = 1, no_gpu = 77 };

// A failed call: its status, and the library's message.
struct gpumatmul_error : std::runtime_error {
    gpumatmul_status status;
    gpumatmul_error(const std::string &what, gpumatmul_status status)
        : std::runtime_error(what + ": " + gpumatmul_status_name(status) + ": " +
                             gpumatmul_last_error_message()),
          status(status) {}
};

void check(gpumatmul_status status, const std::string &what) {
    if (status != GPUMATMUL_SUCCESS) throw gpumatmul_error(what, status);
}

// The gpumatmul_dtype of each C++ element type, and how exact its product must be.
template <typename T> struct element;
template <> struct element<float> {
    static constexpr gpumatmul_dtype dtype = GPUMATMUL_FLOAT32;
    static constexpr const char *name = "float32";
    static constexpr double tolerance = 1e-5;
};
template <> struct element<double> {
    static constexpr gpumatmul_dtype dtype = GPUMATMUL_FLOAT64;
    static constexpr const char *name = "float64";
    static constexpr double tolerance = 1e-12;
};

using context_ptr = std::unique_ptr<gpumatmul_context, decltype(&gpumatmul_destroy)>;

context_ptr create_context(int device) {
    gpumatmul_context *context = nullptr;
    check(gpumatmul_create(&context, device), "gpumatmul_create");
    return context_ptr(context, gpumatmul_destroy);
}

// C[i] = A[i] @ B[i] for i < batch (A[i] m x k, B[i] k x n, row-major, packed) on the GPU,
// checked against the CPU; true when it matches.
template <typename T>
bool run(gpumatmul_context *context, std::int64_t batch, std::int64_t m, std::int64_t n,
         std::int64_t k) {
    std::vector<T> a(batch * m * k), b(batch * k * n), c(batch * m * n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = T(double(i * 37 % 101) / 101 - 0.5);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = T(double(i * 53 % 97) / 97 - 0.5);
    check(gpumatmul_matmul_strided_batched_host(
              context, GPUMATMUL_BACKEND_AUTO, element<T>::dtype, GPUMATMUL_PRECISION_HIGHEST, 0,
              0, m, n, k, batch, a.data(), k, m * k, b.data(), n, k * n, c.data(), n, m * n),
          element<T>::name);
    double error = 0, scale = 0;
    for (std::int64_t z = 0; z < batch; ++z)
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                double expected = 0;
                for (std::int64_t l = 0; l < k; ++l)
                    expected += double(a[(z * m + i) * k + l]) * double(b[(z * k + l) * n + j]);
                error = std::max(error, std::abs(double(c[(z * m + i) * n + j]) - expected));
                scale = std::max(scale, std::abs(expected));
            }
    error /= scale;
    const bool matches = error <= element<T>::tolerance;
    std::printf("%s: %lld x (%lld x %lld) @ (%lld x %lld): %s, max relative error %.1e\n",
                element<T>::name, (long long)batch, (long long)m, (long long)k, (long long)k,
                (long long)n, matches ? "ok" : "WRONG", error);
    return matches;
}

}  // namespace

int main() {
    const int version = gpumatmul_version();
    std::printf("libgpumatmul %d.%d.%d for CUDA %d\n", version / 10000, version / 100 % 100,
                version % 100, gpumatmul_cuda_major());
    try {
        context_ptr context = create_context(0);
        const bool single = run<float>(context.get(), 1, 64, 32, 48);
        const bool batched = run<double>(context.get(), 3, 33, 9, 17);
        return single && batched ? ok : failed;
    } catch (const gpumatmul_error &error) {
        const bool missing = error.status == GPUMATMUL_ERROR_NO_DRIVER ||
                             error.status == GPUMATMUL_ERROR_NO_DEVICE;
        std::fprintf(stderr, "%s: %s\n", missing ? "no GPU" : "failed", error.what());
        return missing ? no_gpu : failed;
    }
}
