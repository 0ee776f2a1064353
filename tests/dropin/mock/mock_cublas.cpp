// tests/dropin/mock/mock_cublas.cpp — a stand-in libcublas.so.13 for the CPU tests of
// libozgemm_hook.so's GPU path: handles with a stream, pointer mode and math mode, and every GEMM
// entry point the hook interposes, real and complex, computed on the host with reference BLAS's
// loops (src/dropin/reference_gemm.hpp; "device" memory is host memory here). The
// test client (hook_mock_client.cpp) and the mock libozgemm (mock_ozgemm.cpp) link it.
#include <cublas_api.h>

#include <atomic>
#include <cstdint>

#include "dropin/reference_gemm.hpp"
#include "dropin/reference_symmetric.hpp"

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

// One GEMM of element type T (double, cuDoubleComplex) with cuBLAS's argument checks.
template <typename T>
cublasStatus_t gemm(cublasHandle_t hh, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
                    const T* alpha, const T* A, int64_t lda, const T* B, int64_t ldb, const T* beta, T* C,
                    int64_t ldc) {
  if (!hh) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_op(ta) || !valid_op(tb) || m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
  const bool nota = ta == CUBLAS_OP_N, notb = tb == CUBLAS_OP_N;
  if (lda < (nota ? m : k) || ldb < (notb ? k : n) || ldc < m || lda < 1 || ldb < 1 || ldc < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  ++g_native;
  ozgemm::dropin::reference_gemm(nota, ta == CUBLAS_OP_C, notb, tb == CUBLAS_OP_C, m, n, k, *alpha, A, lda, B, ldb,
                                 *beta, C, ldc);
  return CUBLAS_STATUS_SUCCESS;
}
// A strided batch (strides in elements).
template <typename T>
cublasStatus_t strided(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
                       const T* alpha, const T* A, int64_t lda, long long sa, const T* B, int64_t ldb, long long sb,
                       const T* beta, T* C, int64_t ldc, long long sc, int64_t batch) {
  for (int64_t i = 0; i < batch; ++i)
    if (cublasStatus_t s = gemm(h, ta, tb, m, n, k, alpha, A + i * sa, lda, B + i * sb, ldb, beta, C + i * sc, ldc))
      return s;
  return CUBLAS_STATUS_SUCCESS;
}
// A batch of pointer arrays ("device" arrays are host memory here).
template <typename T>
cublasStatus_t arrays(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
                      const T* alpha, const T* const A[], int64_t lda, const T* const B[], int64_t ldb, const T* beta,
                      T* const C[], int64_t ldc, int64_t batch) {
  for (int64_t i = 0; i < batch; ++i)
    if (cublasStatus_t s = gemm(h, ta, tb, m, n, k, alpha, A[i], lda, B[i], ldb, beta, C[i], ldc)) return s;
  return CUBLAS_STATUS_SUCCESS;
}
// An Ex call: f(T{}) with T its element type when A, B and C are all CUDA_R_64F (double) or all
// CUDA_C_64F (cuDoubleComplex) and the compute type is 64F (or the legacy CUDA_R_64F / CUDA_C_64F that
// cuBLAS's header maps to it); anything else is NOT_SUPPORTED here (the hook must forward it).
template <typename F>
cublasStatus_t ex(cudaDataType at, cudaDataType bt, cudaDataType ct, cublasComputeType_t comp, F f) {
  const bool fp64 = comp == CUBLAS_COMPUTE_64F || comp == CUBLAS_COMPUTE_64F_PEDANTIC || int(comp) == CUDA_R_64F ||
                    int(comp) == CUDA_C_64F;
  if (!fp64 || at != ct || bt != ct) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (ct == CUDA_R_64F) return f(double{});
  if (ct == CUDA_C_64F) return f(cuDoubleComplex{});
  return CUBLAS_STATUS_NOT_SUPPORTED;
}
}  // namespace

#define MOCK_API extern "C" __attribute__((visibility("default")))
MOCK_API long mock_cublas_native_calls(void) { return g_native.load(); }
MOCK_API long mock_cublas_live_handles(void) { return g_live.load(); }

extern "C" {
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
}  // extern "C"

// The typed entry points (cublas_api.h's parameters), int and _64 forms: NAME with sizes Int, element T.
#define MOCK_OP cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb
#define MOCK_GEMM(NAME, T, Int)                                                                                 \
  extern "C" cublasStatus_t NAME(MOCK_OP, Int m, Int n, Int k, const T* alpha, const T* A, Int lda, const T* B, \
                                 Int ldb, const T* beta, T* C, Int ldc) {                                      \
    return gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                                      \
  }
#define MOCK_STRIDED(NAME, T, Int)                                                                             \
  extern "C" cublasStatus_t NAME(MOCK_OP, Int m, Int n, Int k, const T* alpha, const T* A, Int lda, long long sa, \
                                 const T* B, Int ldb, long long sb, const T* beta, T* C, Int ldc, long long sc,   \
                                 Int batch) {                                                                    \
    return strided(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);                  \
  }
#define MOCK_ARRAYS(NAME, T, Int)                                                                               \
  extern "C" cublasStatus_t NAME(MOCK_OP, Int m, Int n, Int k, const T* alpha, const T* const A[], Int lda,      \
                                 const T* const B[], Int ldb, const T* beta, T* const C[], Int ldc, Int batch) { \
    return arrays(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch);                              \
  }
#define MOCK_EX(NAME, Int)                                                                                      \
  extern "C" cublasStatus_t NAME(MOCK_OP, Int m, Int n, Int k, const void* alpha, const void* A, cudaDataType at, \
                                 Int lda, const void* B, cudaDataType bt, Int ldb, const void* beta, void* C,     \
                                 cudaDataType ct, Int ldc, cublasComputeType_t comp, cublasGemmAlgo_t) {          \
    return ex(at, bt, ct, comp, [&](auto t) {                                                                    \
      using T = decltype(t);                                                                                     \
      return gemm(h, ta, tb, m, n, k, static_cast<const T*>(alpha), static_cast<const T*>(A), lda,              \
                  static_cast<const T*>(B), ldb, static_cast<const T*>(beta), static_cast<T*>(C), ldc);          \
    });                                                                                                          \
  }
#define MOCK_STRIDED_EX(NAME, Int)                                                                              \
  extern "C" cublasStatus_t NAME(MOCK_OP, Int m, Int n, Int k, const void* alpha, const void* A, cudaDataType at, \
                                 Int lda, long long sa, const void* B, cudaDataType bt, Int ldb, long long sb,     \
                                 const void* beta, void* C, cudaDataType ct, Int ldc, long long sc, Int batch,    \
                                 cublasComputeType_t comp, cublasGemmAlgo_t) {                                    \
    return ex(at, bt, ct, comp, [&](auto t) {                                                                    \
      using T = decltype(t);                                                                                     \
      return strided(h, ta, tb, m, n, k, static_cast<const T*>(alpha), static_cast<const T*>(A), lda, sa,       \
                     static_cast<const T*>(B), ldb, sb, static_cast<const T*>(beta), static_cast<T*>(C), ldc, sc, \
                     batch);                                                                                     \
    });                                                                                                          \
  }
#define MOCK_ARRAYS_EX(NAME, Int)                                                                               \
  extern "C" cublasStatus_t NAME(MOCK_OP, Int m, Int n, Int k, const void* alpha, const void* const A[],         \
                                 cudaDataType at, Int lda, const void* const B[], cudaDataType bt, Int ldb,       \
                                 const void* beta, void* const C[], cudaDataType ct, Int ldc, Int batch,          \
                                 cublasComputeType_t comp, cublasGemmAlgo_t) {                                    \
    return ex(at, bt, ct, comp, [&](auto t) {                                                                    \
      using T = decltype(t);                                                                                     \
      return arrays(h, ta, tb, m, n, k, static_cast<const T*>(alpha), reinterpret_cast<const T* const*>(A), lda, \
                    reinterpret_cast<const T* const*>(B), ldb, static_cast<const T*>(beta),                     \
                    reinterpret_cast<T* const*>(C), ldc, batch);                                                 \
    });                                                                                                          \
  }
#define MOCK_BOTH(MACRO, NAME, ...) MACRO(NAME, __VA_ARGS__ int) MACRO(NAME##_64, __VA_ARGS__ int64_t)

MOCK_BOTH(MOCK_GEMM, cublasDgemm_v2, double, )
MOCK_BOTH(MOCK_GEMM, cublasZgemm_v2, cuDoubleComplex, )
MOCK_BOTH(MOCK_GEMM, cublasZgemm3m, cuDoubleComplex, )
MOCK_BOTH(MOCK_STRIDED, cublasDgemmStridedBatched, double, )
MOCK_BOTH(MOCK_STRIDED, cublasZgemmStridedBatched, cuDoubleComplex, )
MOCK_BOTH(MOCK_ARRAYS, cublasDgemmBatched, double, )
MOCK_BOTH(MOCK_ARRAYS, cublasZgemmBatched, cuDoubleComplex, )
MOCK_BOTH(MOCK_EX, cublasGemmEx, )
MOCK_BOTH(MOCK_STRIDED_EX, cublasGemmStridedBatchedEx, )
MOCK_BOTH(MOCK_ARRAYS_EX, cublasGemmBatchedEx, )

// legacy API (declared by hand: cublas.h cannot be included with cublas_api.h's v2 names in use here)
extern "C" {
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

// The symmetric Level-3 routines (src/dropin/reference_symmetric.hpp), with cuBLAS's argument checks.
namespace {
bool valid_fill(cublasFillMode_t u) { return u == CUBLAS_FILL_MODE_LOWER || u == CUBLAS_FILL_MODE_UPPER; }
int64_t at_least_one(int64_t x) { return x > 1 ? x : 1; }
cublasStatus_t rank_k(cublasHandle_t h, int products, cublasFillMode_t uplo, cublasOperation_t trans, int64_t n,
                      int64_t k, const double* alpha, const double* A, int64_t lda, const double* B, int64_t ldb,
                      const double* beta, double* C, int64_t ldc) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  const int64_t rows = trans == CUBLAS_OP_N ? n : k;
  if (!valid_fill(uplo) || !valid_op(trans) || n < 0 || k < 0 || lda < at_least_one(rows) ||
      ldb < at_least_one(rows) || ldc < at_least_one(n))
    return CUBLAS_STATUS_INVALID_VALUE;
  ++g_native;
  ozgemm::dropin::reference_rank_k(products, uplo == CUBLAS_FILL_MODE_LOWER, trans != CUBLAS_OP_N, n, k, *alpha, A,
                                   lda, B, ldb, *beta, C, ldc);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t symm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, int64_t m, int64_t n,
                    const double* alpha, const double* A, int64_t lda, const double* B, int64_t ldb,
                    const double* beta, double* C, int64_t ldc) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  const bool left = side == CUBLAS_SIDE_LEFT;
  if ((!left && side != CUBLAS_SIDE_RIGHT) || !valid_fill(uplo) || m < 0 || n < 0 ||
      lda < at_least_one(left ? m : n) || ldb < at_least_one(m) || ldc < at_least_one(m))
    return CUBLAS_STATUS_INVALID_VALUE;
  ++g_native;
  ozgemm::dropin::reference_symm(left, uplo == CUBLAS_FILL_MODE_LOWER, m, n, *alpha, A, lda, B, ldb, *beta, C, ldc);
  return CUBLAS_STATUS_SUCCESS;
}
}  // namespace

#define MOCK_SYRK(NAME, Int)                                                                                    \
  extern "C" cublasStatus_t NAME(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, Int n, Int k, \
                                 const double* alpha, const double* A, Int lda, const double* beta, double* C,  \
                                 Int ldc) {                                                                    \
    return rank_k(h, 1, uplo, trans, n, k, alpha, A, lda, A, lda, beta, C, ldc);                               \
  }
#define MOCK_RANK2K(NAME, PRODUCTS, Int)                                                                        \
  extern "C" cublasStatus_t NAME(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, Int n, Int k, \
                                 const double* alpha, const double* A, Int lda, const double* B, Int ldb,       \
                                 const double* beta, double* C, Int ldc) {                                     \
    return rank_k(h, PRODUCTS, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                        \
  }
#define MOCK_SYMM(NAME, Int)                                                                                    \
  extern "C" cublasStatus_t NAME(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, Int m, Int n,   \
                                 const double* alpha, const double* A, Int lda, const double* B, Int ldb,       \
                                 const double* beta, double* C, Int ldc) {                                     \
    return symm(h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);                                     \
  }
MOCK_BOTH(MOCK_SYRK, cublasDsyrk_v2, )
MOCK_BOTH(MOCK_RANK2K, cublasDsyr2k_v2, 2, )
MOCK_BOTH(MOCK_RANK2K, cublasDsyrkx, 1, )
MOCK_BOTH(MOCK_SYMM, cublasDsymm_v2, )
