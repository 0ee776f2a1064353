// src/dropin/hook_symmetric.cpp — the hook's symmetric Level-3 entry points: cublasDsyrk_v2,
// cublasDsyr2k_v2, cublasDsyrkx, cublasDsymm_v2 and their _64 forms. Each call is described as the GEMM
// of its operands plus its uplo/side (hook_core.hpp, SymmetricCall), so that run() applies every check
// of the GEMM entry points (settings, math and pointer modes, graph capture, minimum size, device,
// counters, decline reasons, the failure policy) and runs it with libozgemm's ozgemmDsyrk, Dsyr2k,
// Dsyrkx or Dsymm (run_symmetric); what run() declines goes to the real cuBLAS unchanged.
#include <cublas_api.h>

#include <cstdint>

#include "dropin/common.hpp"
#include "dropin/hook_core.hpp"

namespace ozgemm {
namespace dropin {
namespace hook {

bool symmetric_available(const OzApi& oz, const Call& c) {
  switch (c.sym.routine) {
    case SymmetricRoutine::Syrk: return oz.dsyrk != nullptr;
    case SymmetricRoutine::Syr2k: return oz.dsyr2k != nullptr;
    case SymmetricRoutine::Syrkx: return oz.dsyrkx != nullptr;
    case SymmetricRoutine::Symm: return oz.dsymm != nullptr;
    case SymmetricRoutine::None: break;
  }
  return false;
}

ozgemmStatus_t run_symmetric(const OzApi& oz, ozgemmHandle_t h, const Call& c, double alpha, double beta) {
  // run() has checked every size against INT_MAX.
  const auto uplo = cublasFillMode_t(c.sym.uplo);
  const auto trans = cublasOperation_t(c.transa);
  const auto* A = static_cast<const double*>(c.A);
  const auto* B = static_cast<const double*>(c.B);
  auto* C = static_cast<double*>(c.C);
  const int n = int(c.n), k = int(c.k), lda = int(c.lda), ldb = int(c.ldb), ldc = int(c.ldc);
  switch (c.sym.routine) {
    case SymmetricRoutine::Syrk: return oz.dsyrk(h, uplo, trans, n, k, &alpha, A, lda, &beta, C, ldc);
    case SymmetricRoutine::Syr2k: return oz.dsyr2k(h, uplo, trans, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
    case SymmetricRoutine::Syrkx: return oz.dsyrkx(h, uplo, trans, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
    case SymmetricRoutine::Symm: {
      const auto side = cublasSideMode_t(c.sym.side);
      const int m = int(c.m);
      // RIGHT: the Call's A is the caller's B and its B the symmetric A (hook_core.hpp).
      return side == CUBLAS_SIDE_LEFT ? oz.dsymm(h, side, uplo, m, n, &alpha, A, lda, B, ldb, &beta, C, ldc)
                                      : oz.dsymm(h, side, uplo, m, n, &alpha, B, ldb, A, lda, &beta, C, ldc);
    }
    case SymmetricRoutine::None: break;
  }
  return OZGEMM_STATUS_INTERNAL_ERROR;
}

double symmetric_flop(const Call& c) {
  // The triangle's n (n + 1) / 2 entries, k multiply-adds each (SYR2K: two products); SYMM a GEMM's.
  const double triangle = double(c.n) * double(c.n + 1) * double(c.k);
  switch (c.sym.routine) {
    case SymmetricRoutine::Syrk:
    case SymmetricRoutine::Syrkx: return triangle;
    case SymmetricRoutine::Syr2k: return 2.0 * triangle;
    case SymmetricRoutine::Symm:
    case SymmetricRoutine::None: break;
  }
  return gemm_flop(Element::Real, c.m, c.n, c.k);
}

namespace {

bool valid_uplo(int uplo) { return uplo == CUBLAS_FILL_MODE_LOWER || uplo == CUBLAS_FILL_MODE_UPPER; }

// SYRK (B = A), SYR2K, SYRKX as the GEMM op(A) op(B)^T (hook_core.hpp).
void describe_rank_k(Call& c, SymmetricRoutine routine, cublasFillMode_t uplo, cublasOperation_t trans, int64_t n,
                     int64_t k, const double* alpha, const double* A, int64_t lda, const double* B, int64_t ldb,
                     const double* beta, double* C, int64_t ldc) {
  c.sym.routine = routine;
  c.sym.uplo = uplo;
  c.sym.valid = valid_uplo(uplo);
  c.transa = trans;  // an invalid trans stays invalid for gemm_argument_error
  c.transb = trans == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.m = c.n = n;
  c.k = k;
  c.alpha = alpha;
  c.beta = beta;
  c.A = A;
  c.lda = lda;
  c.B = B;
  c.ldb = ldb;
  c.C = C;
  c.ldc = ldc;
}

// SYMM as the GEMM A B (LEFT, k = m) or B A (RIGHT, k = n).
void describe_symm(Call& c, cublasSideMode_t side, cublasFillMode_t uplo, int64_t m, int64_t n, const double* alpha,
                   const double* A, int64_t lda, const double* B, int64_t ldb, const double* beta, double* C,
                   int64_t ldc) {
  const bool left = side == CUBLAS_SIDE_LEFT;
  c.sym.routine = SymmetricRoutine::Symm;
  c.sym.uplo = uplo;
  c.sym.side = side;
  c.sym.valid = valid_uplo(uplo) && (left || side == CUBLAS_SIDE_RIGHT);
  c.transa = c.transb = CUBLAS_OP_N;
  c.m = m;
  c.n = n;
  c.k = left ? m : n;
  c.alpha = alpha;
  c.beta = beta;
  c.A = left ? A : B;
  c.lda = left ? lda : ldb;
  c.B = left ? B : A;
  c.ldb = left ? ldb : lda;
  c.C = C;
  c.ldc = ldc;
}

}  // namespace
}  // namespace hook
}  // namespace dropin
}  // namespace ozgemm

using namespace ozgemm::dropin::hook;

// The parameters of the rank-k routines (SYRK without B) and of SYMM, as cublas_api.h declares them.
#define OZ_SYRK_PARAMS(Int)                                                                                          \
  cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, Int n, Int k, const double *alpha,               \
      const double *A, Int lda, const double *beta, double *C, Int ldc
#define OZ_RANK2K_PARAMS(Int)                                                                                        \
  cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, Int n, Int k, const double *alpha,               \
      const double *A, Int lda, const double *B, Int ldb, const double *beta, double *C, Int ldc
#define OZ_SYMM_PARAMS(Int)                                                                                          \
  cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, Int m, Int n, const double *alpha,                 \
      const double *A, Int lda, const double *B, Int ldb, const double *beta, double *C, Int ldc

#define OZ_SYRK_ENTRY(NAME, API, Int)                                                                                \
  extern "C" cublasStatus_t NAME(OZ_SYRK_PARAMS(Int)) {                                                              \
    using Fn = cublasStatus_t (*)(OZ_SYRK_PARAMS(Int));                                                              \
    return intercept_call<Fn>(                                                                                       \
        Api::API, __builtin_return_address(0), h,                                                                    \
        [&](Call& c) {                                                                                               \
          describe_rank_k(c, SymmetricRoutine::Syrk, uplo, trans, n, k, alpha, A, lda, A, lda, beta, C, ldc);        \
        },                                                                                                           \
        [&](Fn fn, const Call&) { return fn(h, uplo, trans, n, k, alpha, A, lda, beta, C, ldc); });                  \
  }
#define OZ_RANK2K_ENTRY(NAME, API, ROUTINE, Int)                                                                     \
  extern "C" cublasStatus_t NAME(OZ_RANK2K_PARAMS(Int)) {                                                            \
    using Fn = cublasStatus_t (*)(OZ_RANK2K_PARAMS(Int));                                                            \
    return intercept_call<Fn>(                                                                                       \
        Api::API, __builtin_return_address(0), h,                                                                    \
        [&](Call& c) {                                                                                               \
          describe_rank_k(c, SymmetricRoutine::ROUTINE, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);     \
        },                                                                                                           \
        [&](Fn fn, const Call&) { return fn(h, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc); });          \
  }
#define OZ_SYMM_ENTRY(NAME, API, Int)                                                                                \
  extern "C" cublasStatus_t NAME(OZ_SYMM_PARAMS(Int)) {                                                              \
    using Fn = cublasStatus_t (*)(OZ_SYMM_PARAMS(Int));                                                              \
    return intercept_call<Fn>(                                                                                       \
        Api::API, __builtin_return_address(0), h,                                                                    \
        [&](Call& c) { describe_symm(c, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc); },                   \
        [&](Fn fn, const Call&) { return fn(h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc); });           \
  }

OZ_SYRK_ENTRY(cublasDsyrk_v2, Dsyrk, int)
OZ_SYRK_ENTRY(cublasDsyrk_v2_64, Dsyrk64, int64_t)
OZ_RANK2K_ENTRY(cublasDsyr2k_v2, Dsyr2k, Syr2k, int)
OZ_RANK2K_ENTRY(cublasDsyr2k_v2_64, Dsyr2k64, Syr2k, int64_t)
OZ_RANK2K_ENTRY(cublasDsyrkx, Dsyrkx, Syrkx, int)
OZ_RANK2K_ENTRY(cublasDsyrkx_64, Dsyrkx64, Syrkx, int64_t)
OZ_SYMM_ENTRY(cublasDsymm_v2, Dsymm, int)
OZ_SYMM_ENTRY(cublasDsymm_v2_64, Dsymm64, int64_t)
