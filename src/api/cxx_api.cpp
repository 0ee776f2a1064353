// The C++ conveniences of ozgemm/ozgemm.hpp that are not inline, and the test hooks.
#include <algorithm>
#include <string>
#include <vector>

#include "api/handle.hpp"
#include "api/testing.hpp"
#include "baseline/int8_gemm_cublaslt.hpp"
#include "ozgemm/ozgemm.hpp"

namespace ozgemm {

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    if (why) {
      if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice || count == 0)
        *why = "no NVIDIA driver/GPU found";
      else
        *why = std::string("the CUDA runtime cannot use the GPU: ") + cudaGetErrorString(e);
    }
    return false;
  }
  cudaDeviceProp prop;
  int dev = 0;
  cudaGetDevice(&dev);
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess || prop.major * 10 + prop.minor < 75) {
    if (why) *why = "the GPU has no INT8 tensor cores (needs compute capability 7.5+)";
    return false;
  }
  DeviceDesc d;
  if (!dispatch::probe_build(&d)) {
    if (why) *why = "this build has no device code for the GPU's architecture (see OZGEMM_CUDA_ARCHITECTURES)";
    return false;
  }
  return true;
}

std::string gpu_description() {
  cudaDeviceProp prop;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    cudaGetLastError();
    return "no GPU";
  }
  return std::string(prop.name) + " (" + std::to_string(prop.multiProcessorCount) + " SMs, sm_" +
         std::to_string(prop.major) + std::to_string(prop.minor) + ")";
}

void set_phase_events(Handle& h, cudaEvent_t* events) { h.get()->phase_events = events; }

namespace testing {
void set_planning_memory(ozgemmHandle_t h, int64_t bytes) {
  h->dev.memory_bytes = bytes > 0 ? bytes : h->real_memory_bytes;
}
}  // namespace testing

namespace {
// Host arrays in and out around one call of ozgemmDgemm / ozgemmZgemm (T double / cuDoubleComplex).
ozgemmStatus_t call(Handle& h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double* alpha,
                    const double* A, int lda, const double* B, int ldb, const double* beta, double* C, int ldc) {
  return ozgemmDgemm(h.get(), ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
ozgemmStatus_t call(Handle& h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda, const cuDoubleComplex* B, int ldb,
                    const cuDoubleComplex* beta, cuDoubleComplex* C, int ldc) {
  return ozgemmZgemm(h.get(), ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <class T>
void host_buffers(const char* what, Handle& h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, T alpha,
                  const T* A, int lda, const T* B, int ldb, T beta, T* C, int ldc) {
  const Op opa = ta == CUBLAS_OP_N ? Op::N : Op::T, opb = tb == CUBLAS_OP_N ? Op::N : Op::T;
  const std::string why = check_shape(gemm_shape(opa, opb, m, n, k, lda, ldb, ldc));
  if (!why.empty()) throw Error(OZGEMM_STATUS_INVALID_VALUE, why);
  const size_t na = size_t(lda) * size_t(opa == Op::N ? k : m);
  const size_t nb = size_t(ldb) * size_t(opb == Op::N ? n : k);
  const size_t nc = size_t(ldc) * size_t(n);
  constexpr size_t bytes = sizeof(T);
  T *dA = nullptr, *dB = nullptr, *dC = nullptr;
  auto cleanup = [&] {
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
  };
  if (cudaMalloc(&dA, std::max<size_t>(1, na) * bytes) != cudaSuccess ||
      cudaMalloc(&dB, std::max<size_t>(1, nb) * bytes) != cudaSuccess ||
      cudaMalloc(&dC, std::max<size_t>(1, nc) * bytes) != cudaSuccess) {
    cudaGetLastError();
    cleanup();
    throw Error(OZGEMM_STATUS_ALLOC_FAILED, what);
  }
  cudaStream_t st = nullptr;
  ozgemmGetStream(h.get(), &st);
  bool ok = cudaMemcpyAsync(dA, A, na * bytes, cudaMemcpyHostToDevice, st) == cudaSuccess &&
            cudaMemcpyAsync(dB, B, nb * bytes, cudaMemcpyHostToDevice, st) == cudaSuccess &&
            cudaMemcpyAsync(dC, C, nc * bytes, cudaMemcpyHostToDevice, st) == cudaSuccess;
  ozgemmStatus_t status =
      ok ? call(h, ta, tb, m, n, k, &alpha, dA, lda, dB, ldb, &beta, dC, ldc) : OZGEMM_STATUS_EXECUTION_FAILED;
  if (status == OZGEMM_STATUS_SUCCESS)
    ok = cudaMemcpyAsync(C, dC, nc * bytes, cudaMemcpyDeviceToHost, st) == cudaSuccess &&
         cudaStreamSynchronize(st) == cudaSuccess;
  cleanup();
  if (status != OZGEMM_STATUS_SUCCESS) throw Error(status, what);
  if (!ok) throw Error(OZGEMM_STATUS_EXECUTION_FAILED, std::string(what) + ": copy");
}
}  // namespace

void dgemm_host_buffers(Handle& h, Op ta, Op tb, int m, int n, int k, double alpha, const double* A, int lda,
                        const double* B, int ldb, double beta, double* C, int ldc) {
  host_buffers("ozgemmDgemm", h, to_cublas(ta), to_cublas(tb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void zgemm_host_buffers(Handle& h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                        cuDoubleComplex alpha, const cuDoubleComplex* A, int lda, const cuDoubleComplex* B, int ldb,
                        cuDoubleComplex beta, cuDoubleComplex* C, int ldc) {
  host_buffers("ozgemmZgemm", h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

double int8_gemm_tops(int n, cudaStream_t stream) {
  if (n <= 0) throw Error(OZGEMM_STATUS_INVALID_VALUE, "int8_gemm_tops: n must be > 0");
  const size_t ws_bytes = size_t(32) << 20;
  int8_t *a = nullptr, *b = nullptr;
  int32_t* c = nullptr;
  void* ws = nullptr;
  auto cleanup = [&] {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(ws);
  };
  const size_t nn = size_t(n) * size_t(n);
  if (cudaMalloc(&a, nn) != cudaSuccess || cudaMalloc(&b, nn) != cudaSuccess || cudaMalloc(&c, nn * 4) != cudaSuccess ||
      cudaMalloc(&ws, ws_bytes) != cudaSuccess) {
    cudaGetLastError();
    cleanup();
    throw Error(OZGEMM_STATUS_ALLOC_FAILED, "int8_gemm_tops");
  }
  cudaMemsetAsync(a, 0x11, nn, stream);
  cudaMemsetAsync(b, 0x07, nn, stream);
  Int8GemmLt lt;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  std::vector<double> ms;
  bool ok = lt.init() == CUBLAS_STATUS_SUCCESS && cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess;
  for (int it = 0; ok && it < 13; ++it) {
    ok = cudaEventRecord(e0, stream) == cudaSuccess &&
         lt.run(n, n, n, a, n, b, n, c, n, ws, ws_bytes, stream, /*autotune=*/true) == CUBLAS_STATUS_SUCCESS &&
         cudaEventRecord(e1, stream) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess;
    float t = 0;
    if (ok && it >= 3 && cudaEventElapsedTime(&t, e0, e1) == cudaSuccess) ms.push_back(t);
  }
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  cleanup();
  if (!ok || ms.empty()) throw Error(OZGEMM_STATUS_EXECUTION_FAILED, "int8_gemm_tops");
  std::sort(ms.begin(), ms.end());
  const size_t h = ms.size() / 2;
  const double median = ms.size() % 2 ? ms[h] : 0.5 * (ms[h - 1] + ms[h]);
  return 2.0 * double(n) * n * n / (median * 1e9);
}

}  // namespace ozgemm
