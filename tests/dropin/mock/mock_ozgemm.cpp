// tests/dropin/mock/mock_ozgemm.cpp — a stand-in libozgemm (and the CUDA runtime calls the drop-ins
// make through it) for the CPU tests of the drop-ins' GPU paths: "device" memory is host memory,
// copies are memcpy, streams are opaque values. The accuracy settings are kept as the real library
// keeps them (ozgemmSetScheme / SetSlices / SetModuli / SetAccuracy). ozgemmDgemm and ozgemmZgemm
// compute on the host (src/dropin/reference_gemm.hpp) and report what the real library would: FIXED
// mode an emulated variant with Ozaki-I slices or, with scheme OZAKI2, Ozaki-II moduli (slices 0;
// complex data: always Ozaki-II, default OZGEMM_DEFAULT_COMPLEX_MODULI); FP64 mode runs "native" by
// calling cublasDgemm_v2 / cublasZgemm_v2 on an internal handle, as the real library's native path
// does, so that call goes through the preloaded hook (the re-entrancy test), unless
//   MOCK_FP64_OZAKI2=N        FP64 mode "chooses" Ozaki-II with N moduli (slices 0) for real data, as
//                             the real library does at large shapes on Hopper (scheme AUTO or OZAKI2).
// ozgemmDsyrk, Dsyr2k, Dsyrkx and Dsymm take the real library's steps on the host: the rank-k ones the
// blocked triangle (plan/symmetric_blocks.hpp, nb = MOCK_SYMMETRIC_BLOCK, default 3) with each block a
// mock ozgemmDgemm and the scratch's triangle merged (reference_triangle_merge); SYMM the full A
// (reference_symmetric_fill) and one mock ozgemmDgemm. Their call info is the last GEMM's.
// Fault injection by environment:
//   MOCK_OZGEMM_FAIL_AFTER=N  ozgemmDgemm fails (EXECUTION_FAILED) after N successful calls
//   MOCK_OZGEMM_FAIL_STATUS=S that failure's ozgemmStatus_t instead (e.g. 4: ALLOC_FAILED, before any launch)
//   MOCK_D2H_FAIL_AT=N        the N-th device-to-host copy fails (1-based)
//   MOCK_NO_GPU=1             cudaGetDeviceCount reports no device; ozgemmCreate ARCH_MISMATCH
// A stream equal to (cudaStream_t)0x5ca9 is "being captured".
#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "dropin/reference_gemm.hpp"
#include "dropin/reference_symmetric.hpp"
#include "plan/symmetric_blocks.hpp"
#include "ozgemm/ozgemm.h"

namespace {
struct Ctx {
  cudaStream_t stream = nullptr;
  ozgemmAccuracy_t accuracy = OZGEMM_ACCURACY_FP64;
  ozgemmScheme_t scheme = OZGEMM_SCHEME_AUTO;
  int slices = 0;  // 0: OZGEMM_DEFAULT_SLICES in FIXED mode
  int moduli = 0;  // 0: OZGEMM_DEFAULT_MODULI in FIXED mode
  ozgemmCallInfo_t last{};
  cublasHandle_t internal = nullptr;
};
std::atomic<long> g_created{0}, g_destroyed{0}, g_calls{0}, g_d2h{0};
std::atomic<cudaStream_t> g_last_stream{nullptr};
long env_long(const char* n, long d) {
  const char* v = std::getenv(n);
  return v && *v ? std::atol(v) : d;
}
const cudaStream_t kCapturing = reinterpret_cast<cudaStream_t>(uintptr_t(0x5ca9));
}  // namespace

#define API extern "C" __attribute__((visibility("default")))

API long mock_ozgemm_created(void) { return g_created.load(); }
API long mock_ozgemm_destroyed(void) { return g_destroyed.load(); }
API long mock_ozgemm_calls(void) { return g_calls.load(); }
API cudaStream_t mock_ozgemm_last_stream(void) { return g_last_stream.load(); }
// Device-to-host copies so far (MOCK_D2H_FAIL_AT counts the same ones; it is read at each copy).
API long mock_ozgemm_d2h_copies(void) { return g_d2h.load(); }

API ozgemmStatus_t ozgemmCreate(ozgemmHandle_t* h) {
  if (env_long("MOCK_NO_GPU", 0)) return OZGEMM_STATUS_ARCH_MISMATCH;
  auto* c = new Ctx();
  cublasCreate_v2(&c->internal);
  *h = reinterpret_cast<ozgemmHandle_t>(c);
  ++g_created;
  return OZGEMM_STATUS_SUCCESS;
}
API ozgemmStatus_t ozgemmDestroy(ozgemmHandle_t h) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  auto* c = reinterpret_cast<Ctx*>(h);
  cublasDestroy_v2(c->internal);  // reaches the preloaded hook, which must pass it through
  delete c;
  ++g_destroyed;
  return OZGEMM_STATUS_SUCCESS;
}
API ozgemmStatus_t ozgemmSetStream(ozgemmHandle_t h, cudaStream_t s) {
  reinterpret_cast<Ctx*>(h)->stream = s;
  return OZGEMM_STATUS_SUCCESS;
}
// The settings, with the real library's checks and effects (ozgemm.h).
API ozgemmStatus_t ozgemmSetSlices(ozgemmHandle_t h, int s) {
  if (s < 0 || s > OZGEMM_MAX_SLICES) return OZGEMM_STATUS_INVALID_VALUE;
  auto* c = reinterpret_cast<Ctx*>(h);
  c->slices = s;
  c->accuracy = s > 0 ? OZGEMM_ACCURACY_FIXED : OZGEMM_ACCURACY_FP64;
  return OZGEMM_STATUS_SUCCESS;
}
API ozgemmStatus_t ozgemmSetModuli(ozgemmHandle_t h, int n) {
  if (n != 0 && (n < OZGEMM_MIN_MODULI || n > OZGEMM_MAX_MODULI)) return OZGEMM_STATUS_INVALID_VALUE;
  auto* c = reinterpret_cast<Ctx*>(h);
  c->moduli = n;
  if (n > 0) c->accuracy = OZGEMM_ACCURACY_FIXED;
  return OZGEMM_STATUS_SUCCESS;
}
API ozgemmStatus_t ozgemmSetScheme(ozgemmHandle_t h, ozgemmScheme_t s) {
  if (s != OZGEMM_SCHEME_OZAKI1 && s != OZGEMM_SCHEME_OZAKI2 && s != OZGEMM_SCHEME_AUTO)
    return OZGEMM_STATUS_INVALID_VALUE;
  reinterpret_cast<Ctx*>(h)->scheme = s;
  return OZGEMM_STATUS_SUCCESS;
}
API ozgemmStatus_t ozgemmSetAccuracy(ozgemmHandle_t h, ozgemmAccuracy_t a) {
  if (a != OZGEMM_ACCURACY_FP64 && a != OZGEMM_ACCURACY_FIXED) return OZGEMM_STATUS_INVALID_VALUE;
  reinterpret_cast<Ctx*>(h)->accuracy = a;
  return OZGEMM_STATUS_SUCCESS;
}
API ozgemmStatus_t ozgemmGetLastCallInfo(ozgemmHandle_t h, ozgemmCallInfo_t* info) {
  *info = reinterpret_cast<Ctx*>(h)->last;
  return OZGEMM_STATUS_SUCCESS;
}
namespace {
// The library's native path for element type T: cuBLAS on the internal handle (through the hook).
cublasStatus_t native(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                      const double* alpha, const double* A, int lda, const double* B, int ldb, const double* beta,
                      double* C, int ldc) {
  return cublasDgemm_v2(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t native(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                      const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda, const cuDoubleComplex* B,
                      int ldb, const cuDoubleComplex* beta, cuDoubleComplex* C, int ldc) {
  return cublasZgemm_v2(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// ozgemmDgemm (T double) and ozgemmZgemm (T cuDoubleComplex) as the real library runs them (ozgemm.h):
// FIXED mode emulates (real: the scheme set; complex: always Ozaki-II, the handle's moduli count or
// OZGEMM_DEFAULT_COMPLEX_MODULI); FP64 mode runs native (real data: unless MOCK_FP64_OZAKI2; FP64
// mode's complex decision is not built, so complex data always runs native ZGEMM).
template <typename T>
ozgemmStatus_t gemm(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const T* alpha,
                    const T* A, int lda, const T* B, int ldb, const T* beta, T* C, int ldc) {
  constexpr bool complex = sizeof(T) == 2 * sizeof(double);
  auto* c = reinterpret_cast<Ctx*>(h);
  if (!c) return OZGEMM_STATUS_NOT_INITIALIZED;
  const bool nota = ta == CUBLAS_OP_N, notb = tb == CUBLAS_OP_N;
  if (m < 0 || n < 0 || k < 0 || lda < (nota ? m : k) || ldb < (notb ? k : n) || ldc < m)
    return OZGEMM_STATUS_INVALID_VALUE;
  const long fail_after = env_long("MOCK_OZGEMM_FAIL_AFTER", -1);
  if (fail_after >= 0 && g_calls.load() >= fail_after)
    return static_cast<ozgemmStatus_t>(env_long("MOCK_OZGEMM_FAIL_STATUS", OZGEMM_STATUS_EXECUTION_FAILED));
  ++g_calls;
  g_last_stream = c->stream;
  c->last = ozgemmCallInfo_t{};
  const long fp64_moduli = complex ? 0 : env_long("MOCK_FP64_OZAKI2", 0);
  const bool fixed = c->accuracy == OZGEMM_ACCURACY_FIXED;
  if (fixed || (fp64_moduli > 0 && c->scheme != OZGEMM_SCHEME_OZAKI1)) {
    // An emulation: Ozaki-II reports its moduli and slices 0, Ozaki-I its slices (ozgemm.h).
    ozgemm::dropin::reference_gemm(nota, ta == CUBLAS_OP_C, notb, tb == CUBLAS_OP_C, m, n, k, *alpha, A, lda, B, ldb,
                                   *beta, C, ldc);
    const bool ozaki2 = complex || !fixed || c->scheme == OZGEMM_SCHEME_OZAKI2;
    c->last.variant = ozaki2 ? OZGEMM_VARIANT_PARTIALLY_FUSED : OZGEMM_VARIANT_FULLY_FUSED;
    c->last.scheme = ozaki2 ? OZGEMM_SCHEME_OZAKI2 : OZGEMM_SCHEME_OZAKI1;
    if (ozaki2)
      c->last.moduli = !fixed     ? int(fp64_moduli)
                       : c->moduli ? c->moduli
                                   : (complex ? OZGEMM_DEFAULT_COMPLEX_MODULI : OZGEMM_DEFAULT_MODULI);
    else
      c->last.slices = c->slices ? c->slices : OZGEMM_DEFAULT_SLICES;
    std::snprintf(c->last.reason, sizeof c->last.reason, "mock: %s %s%s %d %s", fixed ? "fixed" : "fp64 mode chose",
                  complex ? "complex " : "", ozaki2 ? "Ozaki-II," : "Ozaki-I,", ozaki2 ? c->last.moduli : c->last.slices,
                  ozaki2 ? "moduli" : "slices");
  } else {
    cublasSetStream_v2(c->internal, c->stream);
    if (native(c->internal, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) != CUBLAS_STATUS_SUCCESS)
      return OZGEMM_STATUS_EXECUTION_FAILED;
    c->last.variant = OZGEMM_VARIANT_NATIVE;
    c->last.fell_back = 1;
    std::snprintf(c->last.reason, sizeof c->last.reason, "mock: fp64 mode ran native%s", complex ? " ZGEMM" : "");
  }
  return OZGEMM_STATUS_SUCCESS;
}
}  // namespace

API ozgemmStatus_t ozgemmDgemm(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                               const double* alpha, const double* A, int lda, const double* B, int ldb,
                               const double* beta, double* C, int ldc) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
API ozgemmStatus_t ozgemmZgemm(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                               const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda,
                               const cuDoubleComplex* B, int ldb, const cuDoubleComplex* beta, cuDoubleComplex* C,
                               int ldc) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
namespace {
ozgemmStatus_t rank_k(ozgemmHandle_t h, int products, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                      const double* alpha, const double* A, int lda, const double* B, int ldb, const double* beta,
                      double* C, int ldc) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  const bool lower = uplo == CUBLAS_FILL_MODE_LOWER, transposed = trans != CUBLAS_OP_N;
  if (n == 0 || ((*alpha == 0.0 || k == 0) && *beta == 1.0)) return OZGEMM_STATUS_SUCCESS;
  if (*alpha == 0.0 || k == 0) {
    ozgemm::dropin::reference_triangle_merge(n, lower, nullptr, 0, *beta, C, ldc);
    return OZGEMM_STATUS_SUCCESS;
  }
  const int64_t nb = env_long("MOCK_SYMMETRIC_BLOCK", 3);
  std::vector<double> T(size_t(nb * nb));
  const cublasOperation_t ta = transposed ? CUBLAS_OP_T : CUBLAS_OP_N, tb = transposed ? CUBLAS_OP_N : CUBLAS_OP_T;
  const double zero = 0.0, one = 1.0;
  ozgemmStatus_t st = OZGEMM_STATUS_SUCCESS;
  auto c_block = [&](const ozgemm::TriangleBlock& blk) { return C + blk.row0 + blk.col0 * int64_t(ldc); };
  auto block_gemm = [&](const ozgemm::TriangleBlock& blk, int p, bool into_scratch) {
    const double *X = p ? B : A, *Y = p ? A : B;
    const int ldx = p ? ldb : lda, ldy = p ? lda : ldb;
    st = gemm(h, ta, tb, int(blk.rows), int(blk.cols), k, alpha, ozgemm::operand_row(X, ldx, transposed, blk.row0),
              ldx, ozgemm::operand_row(Y, ldy, transposed, blk.col0), ldy, p ? &one : into_scratch ? &zero : beta,
              into_scratch ? T.data() : c_block(blk), into_scratch ? int(blk.rows) : ldc);
    return st == OZGEMM_STATUS_SUCCESS;
  };
  auto merge = [&](const ozgemm::TriangleBlock& blk) {
    ozgemm::dropin::reference_triangle_merge(blk.rows, lower, T.data(), blk.rows, *beta, c_block(blk), ldc);
    return true;
  };
  ozgemm::for_each_triangle_step(n, nb, lower, products, block_gemm, merge);
  return st;
}
}  // namespace

API ozgemmStatus_t ozgemmDsyrk(ozgemmHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                               const double* alpha, const double* A, int lda, const double* beta, double* C, int ldc) {
  return rank_k(h, 1, uplo, trans, n, k, alpha, A, lda, A, lda, beta, C, ldc);
}
API ozgemmStatus_t ozgemmDsyr2k(ozgemmHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                                const double* alpha, const double* A, int lda, const double* B, int ldb,
                                const double* beta, double* C, int ldc) {
  return rank_k(h, 2, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
API ozgemmStatus_t ozgemmDsyrkx(ozgemmHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                                const double* alpha, const double* A, int lda, const double* B, int ldb,
                                const double* beta, double* C, int ldc) {
  return rank_k(h, 1, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
API ozgemmStatus_t ozgemmDsymm(ozgemmHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
                               const double* alpha, const double* A, int lda, const double* B, int ldb,
                               const double* beta, double* C, int ldc) {
  const bool left = side == CUBLAS_SIDE_LEFT;
  const int ka = left ? m : n;
  std::vector<double> full(size_t(ka) * size_t(ka));
  ozgemm::dropin::reference_symmetric_fill(ka, uplo == CUBLAS_FILL_MODE_LOWER, A, lda, full.data(), ka);
  return left ? gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, m, alpha, full.data(), ka, B, ldb, beta, C, ldc)
              : gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, n, alpha, B, ldb, full.data(), ka, beta, C, ldc);
}

API const char* ozgemmGetStatusString(ozgemmStatus_t s) {
  return s == OZGEMM_STATUS_EXECUTION_FAILED ? "MOCK_EXECUTION_FAILED" : "MOCK_STATUS";
}
API const char* ozgemmGetVariantString(ozgemmVariant_t v) {
  if (v == OZGEMM_VARIANT_NATIVE) return "native";
  return v == OZGEMM_VARIANT_PARTIALLY_FUSED ? "mock-partially-fused" : "mock-fused";
}

// ---- the CUDA runtime ------------------------------------------------------------------------------
API cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
API cudaError_t cudaSetDevice(int) { return cudaSuccess; }
API cudaError_t cudaGetDeviceCount(int* n) {
  *n = env_long("MOCK_NO_GPU", 0) ? 0 : 1;
  return *n ? cudaSuccess : cudaErrorNoDevice;
}
API cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* st) {
  *st = s == kCapturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
API cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  if (kind == cudaMemcpyDeviceToHost) {
    const long at = env_long("MOCK_D2H_FAIL_AT", 0);
    if (++g_d2h == at) return cudaErrorLaunchFailure;
  }
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}
// Row by row ("device" memory is host memory); the hook copies cublasLtMatmul's C into D with it.
API cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                  size_t height, cudaMemcpyKind, cudaStream_t) {
  if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
  for (size_t r = 0; r < height; ++r)
    std::memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  return cudaSuccess;
}
API cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
API cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  *s = reinterpret_cast<cudaStream_t>(uintptr_t(0x5700));
  return cudaSuccess;
}
API cudaError_t cudaMalloc(void** p, size_t b) {
  *p = std::malloc(b ? b : 1);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
API cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
API cudaError_t cudaMallocHost(void** p, size_t b) { return cudaMalloc(p, b); }
API cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }
API cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  *e = reinterpret_cast<cudaEvent_t>(new int(0));
  return cudaSuccess;
}
API cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
API cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
API cudaError_t cudaGetLastError(void) { return cudaSuccess; }
API const char* cudaGetErrorString(cudaError_t) { return "mock cuda error"; }
