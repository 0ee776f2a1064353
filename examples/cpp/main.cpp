// examples/cpp/main.cpp — ozgemm from C++ through the RAII layer (ozgemm/ozgemm.hpp): a Handle
// that throws ozgemm::Error (status + status string) on any failure, FIXED accuracy mode, a
// transposed operand, a user stream. C = A^T * B with A stored k x m, checked against a host loop.
//
// Build against an installed ozgemm: examples/CMakeLists.txt (find_package(ozgemm)), or
//   g++ -std=c++17 main.cpp $(pkg-config --cflags --libs ozgemm) -o example_cpp
//
// Exit status: 0 the result matches; 1 an error; 2 a wrong result; 77 skipped (no usable GPU).
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <ozgemm/ozgemm.hpp>

namespace {

constexpr int kExitWrongResult = 2;
constexpr int kExitSkipped = 77;

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Device memory owned by a unique_ptr (cudaFree on scope exit, also when an exception leaves).
struct CudaFree {
  void operator()(double* p) const { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<double, CudaFree>;

DeviceBuffer to_device(const std::vector<double>& h) {
  double* p = nullptr;
  cuda_check(cudaMalloc(reinterpret_cast<void**>(&p), h.size() * sizeof(double)), "cudaMalloc");
  DeviceBuffer d(p);
  cuda_check(cudaMemcpy(p, h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

// RAII stream.
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

}  // namespace

int main() {
  std::string why;
  if (!ozgemm::gpu_available(&why)) {
    std::printf("example_cpp: skipped: %s\n", why.c_str());
    return kExitSkipped;
  }
  try {
    const int m = 256, n = 192, k = 1000;
    const int slices = 7;  // FIXED mode: the same bits as the host reference of 7 slices
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal;
    std::vector<double> A(size_t(k) * m), B(size_t(k) * n), C(size_t(m) * n, 0.0);  // A is k x m: C = A^T B
    for (auto& v : A) v = normal(rng);
    for (auto& v : B) v = normal(rng);

    ozgemm::Handle h;  // throws ozgemm::Error, e.g. OZGEMM_STATUS_ARCH_MISMATCH
    std::printf("example_cpp: %s\n", ozgemm::gpu_description().c_str());
    Stream stream;
    h.set_stream(stream.s);
    h.set_slices(slices);  // selects OZGEMM_ACCURACY_FIXED
    std::printf("example_cpp: FIXED mode, %d slices\n", h.slices());

    DeviceBuffer dA = to_device(A), dB = to_device(B), dC = to_device(C);
    h.dgemm(ozgemm::Op::T, ozgemm::Op::N, m, n, k, 1.0, dA.get(), k, dB.get(), k, 0.0, dC.get(), m);
    cuda_check(cudaMemcpyAsync(C.data(), dC.get(), C.size() * sizeof(double), cudaMemcpyDeviceToHost, stream.s),
               "cudaMemcpyAsync");
    cuda_check(cudaStreamSynchronize(stream.s), "cudaStreamSynchronize");

    // Errors are exceptions carrying the status: a bad leading dimension.
    try {
      h.dgemm(ozgemm::Op::T, ozgemm::Op::N, m, n, k, 1.0, dA.get(), k - 1, dB.get(), k, 0.0, dC.get(), m);
      std::fprintf(stderr, "example_cpp: lda < k was not refused\n");
      return 1;
    } catch (const ozgemm::Error& e) {
      std::printf("example_cpp: refused as expected: %s\n", e.what());
      if (e.status() != OZGEMM_STATUS_INVALID_VALUE) return 1;
    }

    // Host check: componentwise error against |A^T| |B|. 7 slices of N(0,1) data are close to
    // FP64 (docs/numerics.md); the bound leaves room for the host loop's own rounding.
    double worst = 0;
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        double s = 0, a = 0;
        for (int l = 0; l < k; ++l) {
          s += A[size_t(i) * k + l] * B[size_t(j) * k + l];
          a += std::fabs(A[size_t(i) * k + l] * B[size_t(j) * k + l]);
        }
        const double e = std::fabs(C[size_t(j) * m + i] - s) / a;
        if (!(e <= worst)) worst = e;
      }
    }
    const double bound = 1e-12;
    if (!(worst <= bound)) {
      std::fprintf(stderr, "example_cpp: WRONG RESULT: componentwise error %.3e > %.3e\n", worst, bound);
      return kExitWrongResult;
    }
    std::printf("example_cpp: OK: C = A^T B, %d x %d x %d, componentwise error %.3e\n", m, n, k, worst);
    return 0;
  } catch (const ozgemm::Error& e) {
    std::fprintf(stderr, "example_cpp: %s\n", e.what());
    return e.status() == OZGEMM_STATUS_ARCH_MISMATCH ? kExitSkipped : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "example_cpp: %s\n", e.what());
    return 1;
  }
}
