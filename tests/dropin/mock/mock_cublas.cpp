// tests/dropin/mock/mock_cublas.cpp — a stand-in libcublas.so.13 for the CPU tests of
// libozgemm_hook.so's GPU path: handles with a stream, pointer mode and math mode, and every GEMM
// entry point the hook interposes, computed on the host ("device" memory is host memory here). The
// test client (hook_mock_client.cpp) and the mock libozgemm (mock_ozgemm.cpp) link it.
#include <cublas_api.h>

#include <atomic>
#include <cstdint>

#include "dropin/reference_dgemm.hpp"

namespace {
struct Handle {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pmode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};
std::atomic<long> g_native{0};
std::atomic<long> g_live{0};
cublasStatus_t g_legacy_error = CUBLAS_STATUS_SUCCESS;
bool g_legacy_init = false;

// f on the handle's settings; NOT_INITIALIZED for a null handle.
template <typename F>
cublasStatus_t on_handle(cublasHandle_t h, F f) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  f(*reinterpret_cast<Handle*>(h));
  return CUBLAS_STATUS_SUCCESS;
}

bool valid_op(cublasOperation_t o) { return o == CUBLAS_OP_N || o == CUBLAS_OP_T || o == CUBLAS_OP_C; }

cublasStatus_t gemm(cublasHandle_t hh, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
                    const double* alpha, const double* A, int64_t lda, const double* B, int64_t ldb,
                    const double* beta, double* C, int64_t ldc) {
  if (!hh) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_op(ta) || !valid_op(tb) || m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
  const bool nota = ta == CUBLAS_OP_N, notb = tb == CUBLAS_OP_N;
  if (lda < (nota ? m : k) || ldb < (notb ? k : n) || ldc < m || lda < 1 || ldb < 1 || ldc < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  ++g_native;
  ozgemm::dropin::reference_dgemm(nota, notb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
  return CUBLAS_STATUS_SUCCESS;
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) long mock_cublas_native_calls(void) { return g_native.load(); }
__attribute__((visibility("default"))) long mock_cublas_live_handles(void) { return g_live.load(); }

cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
  *h = reinterpret_cast<cublasHandle_t>(new Handle());
  ++g_live;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete reinterpret_cast<Handle*>(h);
  --g_live;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) {
  return on_handle(h, [&](Handle& x) { x.stream = s; });
}
cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t* s) {
  return on_handle(h, [&](Handle& x) { *s = x.stream; });
}
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t m) {
  return on_handle(h, [&](Handle& x) { x.pmode = m; });
}
cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t* m) {
  return on_handle(h, [&](Handle& x) { *m = x.pmode; });
}
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) {
  return on_handle(h, [&](Handle& x) { x.math = m; });
}
cublasStatus_t cublasGetMathMode(cublasHandle_t h, cublasMath_t* m) {
  return on_handle(h, [&](Handle& x) { *m = x.math; });
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const double* alpha, const double* A, int lda, const double* B, int ldb,
                              const double* beta, double* C, int ldc) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t cublasDgemm_v2_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                                 int64_t k, const double* alpha, const double* A, int64_t lda, const double* B,
                                 int64_t ldb, const double* beta, double* C, int64_t ldc) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
static cublasStatus_t ex(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                         int64_t k, const void* alpha, const void* A, cudaDataType at, int64_t lda, const void* B,
                         cudaDataType bt, int64_t ldb, const void* beta, void* C, cudaDataType ct, int64_t ldc,
                         cublasComputeType_t comp) {
  if (at != CUDA_R_64F || bt != CUDA_R_64F || ct != CUDA_R_64F ||
      (comp != CUBLAS_COMPUTE_64F && comp != CUBLAS_COMPUTE_64F_PEDANTIC))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return gemm(h, ta, tb, m, n, k, static_cast<const double*>(alpha), static_cast<const double*>(A), lda,
              static_cast<const double*>(B), ldb, static_cast<const double*>(beta), static_cast<double*>(C), ldc);
}
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* A, cudaDataType at, int lda, const void* B,
                            cudaDataType bt, int ldb, const void* beta, void* C, cudaDataType ct, int ldc,
                            cublasComputeType_t comp, cublasGemmAlgo_t) {
  return ex(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, comp);
}
cublasStatus_t cublasGemmEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                               int64_t k, const void* alpha, const void* A, cudaDataType at, int64_t lda,
                               const void* B, cudaDataType bt, int64_t ldb, const void* beta, void* C,
                               cudaDataType ct, int64_t ldc, cublasComputeType_t comp, cublasGemmAlgo_t) {
  return ex(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, comp);
}
static cublasStatus_t sb(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                         int64_t k, const double* alpha, const double* A, int64_t lda, long long sa, const double* B,
                         int64_t ldb, long long sbb, const double* beta, double* C, int64_t ldc, long long sc,
                         int64_t batch) {
  for (int64_t i = 0; i < batch; ++i) {
    cublasStatus_t s = gemm(h, ta, tb, m, n, k, alpha, A + i * sa, lda, B + i * sbb, ldb, beta, C + i * sc, ldc);
    if (s) return s;
  }
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double* alpha, const double* A, int lda, long long sa,
                                         const double* B, int ldb, long long sbb, const double* beta, double* C,
                                         int ldc, long long sc, int batch) {
  return sb(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sbb, beta, C, ldc, sc, batch);
}
cublasStatus_t cublasDgemmStridedBatched_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                            int64_t n, int64_t k, const double* alpha, const double* A, int64_t lda,
                                            long long sa, const double* B, int64_t ldb, long long sbb,
                                            const double* beta, double* C, int64_t ldc, long long sc,
                                            int64_t batch) {
  return sb(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sbb, beta, C, ldc, sc, batch);
}
static cublasStatus_t bt(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                         int64_t k, const double* alpha, const double* const A[], int64_t lda,
                         const double* const B[], int64_t ldb, const double* beta, double* const C[], int64_t ldc,
                         int64_t batch) {
  for (int64_t i = 0; i < batch; ++i) {
    cublasStatus_t s = gemm(h, ta, tb, m, n, k, alpha, A[i], lda, B[i], ldb, beta, C[i], ldc);
    if (s) return s;
  }
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const double* alpha, const double* const A[], int lda, const double* const B[],
                                  int ldb, const double* beta, double* const C[], int ldc, int batch) {
  return bt(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch);
}
cublasStatus_t cublasDgemmBatched_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                     int64_t n, int64_t k, const double* alpha, const double* const A[], int64_t lda,
                                     const double* const B[], int64_t ldb, const double* beta, double* const C[],
                                     int64_t ldc, int64_t batch) {
  return bt(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch);
}
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void* alpha, const void* A, cudaDataType, int lda,
                                          long long sa, const void* B, cudaDataType, int ldb, long long sbb,
                                          const void* beta, void* C, cudaDataType, int ldc, long long sc, int batch,
                                          cublasComputeType_t, cublasGemmAlgo_t) {
  return sb(h, ta, tb, m, n, k, static_cast<const double*>(alpha), static_cast<const double*>(A), lda, sa,
            static_cast<const double*>(B), ldb, sbb, static_cast<const double*>(beta), static_cast<double*>(C), ldc,
            sc, batch);
}
cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                             int64_t n, int64_t k, const void* alpha, const void* A, cudaDataType,
                                             int64_t lda, long long sa, const void* B, cudaDataType, int64_t ldb,
                                             long long sbb, const void* beta, void* C, cudaDataType, int64_t ldc,
                                             long long sc, int64_t batch, cublasComputeType_t, cublasGemmAlgo_t) {
  return sb(h, ta, tb, m, n, k, static_cast<const double*>(alpha), static_cast<const double*>(A), lda, sa,
            static_cast<const double*>(B), ldb, sbb, static_cast<const double*>(beta), static_cast<double*>(C), ldc,
            sc, batch);
}
cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                   const void* alpha, const void* const A[], cudaDataType, int lda,
                                   const void* const B[], cudaDataType, int ldb, const void* beta, void* const C[],
                                   cudaDataType, int ldc, int batch, cublasComputeType_t, cublasGemmAlgo_t) {
  return bt(h, ta, tb, m, n, k, static_cast<const double*>(alpha), reinterpret_cast<const double* const*>(A), lda,
            reinterpret_cast<const double* const*>(B), ldb, static_cast<const double*>(beta),
            reinterpret_cast<double* const*>(C), ldc, batch);
}
cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                      int64_t n, int64_t k, const void* alpha, const void* const A[], cudaDataType,
                                      int64_t lda, const void* const B[], cudaDataType, int64_t ldb, const void* beta,
                                      void* const C[], cudaDataType, int64_t ldc, int64_t batch, cublasComputeType_t,
                                      cublasGemmAlgo_t) {
  return bt(h, ta, tb, m, n, k, static_cast<const double*>(alpha), reinterpret_cast<const double* const*>(A), lda,
            reinterpret_cast<const double* const*>(B), ldb, static_cast<const double*>(beta),
            reinterpret_cast<double* const*>(C), ldc, batch);
}

// legacy API (declared by hand: cublas.h cannot be included with cublas_api.h's v2 names in use here)
static Handle g_legacy;
cublasStatus_t cublasInit(void) {
  g_legacy_init = true;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasShutdown(void) {
  g_legacy_init = false;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetError(void) {
  cublasStatus_t s = g_legacy_error;
  g_legacy_error = CUBLAS_STATUS_SUCCESS;
  return s;
}
cublasStatus_t cublasSetKernelStream(cudaStream_t s) {
  g_legacy.stream = s;
  return CUBLAS_STATUS_SUCCESS;
}
void cublasDgemm(char ta, char tb, int m, int n, int k, double alpha, const double* A, int lda, const double* B,
                 int ldb, double beta, double* C, int ldc) {
  if (!g_legacy_init) {
    g_legacy_error = CUBLAS_STATUS_NOT_INITIALIZED;
    return;
  }
  auto op = [](char c) {
    return (c == 'N' || c == 'n') ? CUBLAS_OP_N : (c == 'T' || c == 't') ? CUBLAS_OP_T : CUBLAS_OP_C;
  };
  g_legacy_error = gemm(reinterpret_cast<cublasHandle_t>(&g_legacy), op(ta), op(tb), m, n, k, &alpha, A, lda, B, ldb,
                        &beta, C, ldc);
}
}  // extern "C"
