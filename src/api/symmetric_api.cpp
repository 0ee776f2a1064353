// The symmetric Level-3 routines of the C API (ozgemm.h: ozgemmDsyrk, ozgemmDsyr2k, ozgemmDsyrkx,
// ozgemmDsymm): cuBLAS's argument checks and BLAS's quick returns, then the choice of
// src/plan/symmetric_plan (native cuBLAS, or GEMMs through ozgemmDgemm) and its launches (the
// dispatch layer's triangle merge, symmetric fill and native calls). Every GEMM is an ozgemmDgemm
// call, so FP64 mode's contract holds for each block product, and every entry of C's triangle is an
// entry of exactly one block (plan/symmetric_blocks.hpp).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "api/handle.hpp"
#include "ozgemm/ozgemm.h"
#include "plan/symmetric_blocks.hpp"
#include "plan/symmetric_plan.hpp"

namespace {

bool valid_fill(cublasFillMode_t u) { return u == CUBLAS_FILL_MODE_LOWER || u == CUBLAS_FILL_MODE_UPPER; }
bool valid_op(cublasOperation_t t) { return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C; }
int64_t at_least_one(int64_t x) { return std::max<int64_t>(1, x); }

// The rank-k routines: C's triangle = alpha op(A) op(B)^T + beta C (SYRK: B = A; SYRKX), or
// alpha (op(A) op(B)^T + op(B) op(A)^T) + beta C (SYR2K).
enum class RankK { Syrk, Syr2k, Syrkx };

// Device scratch of `bytes` on the handle's stream (stream-ordered; freed by the destructor).
class Scratch {
 public:
  Scratch(cudaStream_t stream, size_t bytes) : stream_(stream) {
    if (bytes == 0) return;  // (native runs: no allocation, no error state touched)
    if (cudaMallocAsync(&ptr_, bytes, stream) != cudaSuccess) {
      cudaGetLastError();
      ptr_ = nullptr;
    }
  }
  ~Scratch() {
    if (ptr_) cudaFreeAsync(ptr_, stream_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  double* get() const { return static_cast<double*>(ptr_); }

 private:
  cudaStream_t stream_;
  void* ptr_ = nullptr;
};

// What the GEMMs of one symmetric call ran, for ozgemmGetLastCallInfo.
struct Tally {
  int emulated = 0, native = 0;
  ozgemmCallInfo_t last_emulated{}, last{};
  void add(const ozgemmCallInfo_t& info) {
    last = info;
    if (info.variant == OZGEMM_VARIANT_NATIVE) {
      ++native;
    } else {
      ++emulated;
      last_emulated = info;
    }
  }
  // The call's report: the last emulated GEMM's (else the last GEMM's), its reason prefixed with the counts.
  void report(const char* what, ozgemmCallInfo_t* out) const {
    *out = emulated ? last_emulated : last;
    char counts[96];
    std::snprintf(counts, sizeof counts, "%s: %d GEMMs (%d emulated, %d native); ", what, emulated + native, emulated,
                  native);
    const std::string reason = std::string(counts) + out->reason;  // truncated to the field below
    std::snprintf(out->reason, sizeof out->reason, "%s", reason.c_str());
  }
};

void report_native(ozgemmContext* h, const char* reason) {
  h->last = ozgemmCallInfo_t{};
  h->last.variant = OZGEMM_VARIANT_NATIVE;
  h->last.fell_back = h->settings.fp64_mode ? 1 : 0;
  std::snprintf(h->last.reason, sizeof h->last.reason, "%s", reason);
}

// A failure after the first launch may leave C partly written: it is reported as EXECUTION_FAILED
// (never a status that says nothing ran, which a caller could answer by redoing the call on C).
ozgemmStatus_t after_launch(ozgemmStatus_t st, bool launched) {
  return st == OZGEMM_STATUS_SUCCESS || !launched ? st : OZGEMM_STATUS_EXECUTION_FAILED;
}

ozgemmStatus_t native_rank_k(ozgemmContext* h, RankK kind, cublasFillMode_t uplo, cublasOperation_t trans, int n,
                             int k, const double* alpha, const double* A, int lda, const double* B, int ldb,
                             const double* beta, double* C, int ldc) {
  const ozgemm::dispatch::ExecContext x = h->exec();
  switch (kind) {
    case RankK::Syrk: return ozgemm::dispatch::native_syrk(x, uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
    case RankK::Syr2k: return ozgemm::dispatch::native_syr2k(x, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    case RankK::Syrkx: return ozgemm::dispatch::native_syrkx(x, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  }
  return OZGEMM_STATUS_INTERNAL_ERROR;
}

const char* rank_k_name(RankK kind) {
  return kind == RankK::Syrk ? "syrk" : kind == RankK::Syr2k ? "syr2k" : "syrkx";
}

ozgemmStatus_t rank_k(ozgemmHandle_t h, RankK kind, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                      const double* alpha, const double* A, int lda, const double* B, int ldb, const double* beta,
                      double* C, int ldc) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  const ozgemm::detail::DeviceGuard on_handles_device(h->device);
  if (!on_handles_device.ok()) return OZGEMM_STATUS_EXECUTION_FAILED;
  const bool transposed = trans != CUBLAS_OP_N;
  const int64_t op_rows = transposed ? k : n;  // rows of the stored A (and B)
  if (!valid_fill(uplo) || !valid_op(trans) || n < 0 || k < 0 || lda < at_least_one(op_rows) ||
      (kind != RankK::Syrk && ldb < at_least_one(op_rows)) || ldc < at_least_one(n))
    return OZGEMM_STATUS_INVALID_VALUE;
  if (!alpha || !beta) return OZGEMM_STATUS_INVALID_VALUE;
  const double al = *alpha, be = *beta;
  if (n == 0 || ((al == 0.0 || k == 0) && be == 1.0)) return OZGEMM_STATUS_SUCCESS;
  if (!C) return OZGEMM_STATUS_INVALID_VALUE;
  const bool lower = uplo == CUBLAS_FILL_MODE_LOWER;
  if (al == 0.0 || k == 0) return ozgemm::dispatch::triangle_merge(h->exec(), n, lower, nullptr, 0, be, C, ldc);
  if (!A || (kind != RankK::Syrk && !B)) return OZGEMM_STATUS_INVALID_VALUE;
  if (kind == RankK::Syrk) {
    B = A;
    ldb = lda;
  }

  const ozgemm::SymmetricChoice choice = ozgemm::symmetric_rank_k_choice(h->settings, n, k, h->dev);
  const int64_t nb = std::min<int64_t>(choice.block, n);
  Scratch scratch(h->stream, choice.emulate ? size_t(nb) * size_t(nb) * sizeof(double) : 0);
  if (!choice.emulate || !scratch.get()) {
    ozgemmStatus_t st = native_rank_k(h, kind, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (st == OZGEMM_STATUS_SUCCESS)
      report_native(h, choice.emulate ? "symmetric: native (the diagonal blocks' scratch could not be allocated)"
                                      : choice.reason);
    return st;
  }

  // op(A) op(B)^T as a GEMM: op(A) = A (N) or A^T (T), and op(B)^T the other way round.
  const cublasOperation_t ta = transposed ? CUBLAS_OP_T : CUBLAS_OP_N, tb = transposed ? CUBLAS_OP_N : CUBLAS_OP_T;
  const double zero = 0.0, one = 1.0;
  double* T = scratch.get();
  Tally tally;
  bool launched = false;
  ozgemmStatus_t st = OZGEMM_STATUS_SUCCESS;
  auto c_block = [&](const ozgemm::TriangleBlock& blk) { return C + blk.row0 + blk.col0 * int64_t(ldc); };
  auto gemm = [&](const ozgemm::TriangleBlock& blk, int p, bool into_scratch) {
    const double *X = p ? B : A, *Y = p ? A : B;
    const int ldx = p ? ldb : lda, ldy = p ? lda : ldb;
    st = ozgemmDgemm(h, ta, tb, int(blk.rows), int(blk.cols), k, alpha,
                     ozgemm::operand_row(X, ldx, transposed, blk.row0), ldx,
                     ozgemm::operand_row(Y, ldy, transposed, blk.col0), ldy, p ? &one : into_scratch ? &zero : beta,
                     into_scratch ? T : c_block(blk), into_scratch ? int(blk.rows) : ldc);
    st = after_launch(st, launched);
    launched = true;
    if (st == OZGEMM_STATUS_SUCCESS) tally.add(h->last);
    return st == OZGEMM_STATUS_SUCCESS;
  };
  auto merge = [&](const ozgemm::TriangleBlock& blk) {
    st = after_launch(ozgemm::dispatch::triangle_merge(h->exec(), blk.rows, lower, T, blk.rows, be, c_block(blk), ldc),
                      launched);
    return st == OZGEMM_STATUS_SUCCESS;
  };
  if (!ozgemm::for_each_triangle_step(n, nb, lower, kind == RankK::Syr2k ? 2 : 1, gemm, merge)) return st;
  tally.report(rank_k_name(kind), &h->last);
  return OZGEMM_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

ozgemmStatus_t ozgemmDsyrk(ozgemmHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                           const double* alpha, const double* A, int lda, const double* beta, double* C, int ldc) {
  return rank_k(h, RankK::Syrk, uplo, trans, n, k, alpha, A, lda, nullptr, 0, beta, C, ldc);
}

ozgemmStatus_t ozgemmDsyr2k(ozgemmHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                            const double* alpha, const double* A, int lda, const double* B, int ldb,
                            const double* beta, double* C, int ldc) {
  return rank_k(h, RankK::Syr2k, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

ozgemmStatus_t ozgemmDsyrkx(ozgemmHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                            const double* alpha, const double* A, int lda, const double* B, int ldb,
                            const double* beta, double* C, int ldc) {
  return rank_k(h, RankK::Syrkx, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

ozgemmStatus_t ozgemmDsymm(ozgemmHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
                           const double* alpha, const double* A, int lda, const double* B, int ldb, const double* beta,
                           double* C, int ldc) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  const ozgemm::detail::DeviceGuard on_handles_device(h->device);
  if (!on_handles_device.ok()) return OZGEMM_STATUS_EXECUTION_FAILED;
  const bool left = side == CUBLAS_SIDE_LEFT;
  const int ka = left ? m : n;  // A is ka x ka
  if ((!left && side != CUBLAS_SIDE_RIGHT) || !valid_fill(uplo) || m < 0 || n < 0 || lda < at_least_one(ka) ||
      ldb < at_least_one(m) || ldc < at_least_one(m))
    return OZGEMM_STATUS_INVALID_VALUE;
  if (!alpha || !beta) return OZGEMM_STATUS_INVALID_VALUE;
  const double al = *alpha, be = *beta;
  if (m == 0 || n == 0 || (al == 0.0 && be == 1.0)) return OZGEMM_STATUS_SUCCESS;
  if (!C) return OZGEMM_STATUS_INVALID_VALUE;
  // The GEMM that runs: side L: C = A_full (m x m, ld ka) B; side R: C = B A_full (n x n, ld ka).
  const ozgemm::GemmShape gemm = ozgemm::gemm_shape(ozgemm::Op::N, ozgemm::Op::N, m, n, ka, left ? ka : ldb,
                                                    left ? ldb : ka, ldc);
  if (al == 0.0) return ozgemm::dispatch::scale_c(h->exec(), gemm, be, C);
  if (!A || !B) return OZGEMM_STATUS_INVALID_VALUE;

  const ozgemm::SymmetricChoice choice = ozgemm::symmetric_multiply_choice(h->settings, gemm, h->dev);
  Scratch full(h->stream, choice.emulate ? size_t(ka) * size_t(ka) * sizeof(double) : 0);
  if (!choice.emulate || !full.get()) {
    ozgemmStatus_t st = ozgemm::dispatch::native_symm(h->exec(), side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
    if (st == OZGEMM_STATUS_SUCCESS)
      report_native(h, choice.emulate ? "symmetric: native (the full A could not be allocated)" : choice.reason);
    return st;
  }
  ozgemmStatus_t st =
      ozgemm::dispatch::symmetric_fill(h->exec(), ka, uplo == CUBLAS_FILL_MODE_LOWER, A, lda, full.get(), ka);
  if (st != OZGEMM_STATUS_SUCCESS) return st;  // C not touched yet
  st = left ? ozgemmDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, m, alpha, full.get(), ka, B, ldb, beta, C, ldc)
            : ozgemmDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, n, alpha, B, ldb, full.get(), ka, beta, C, ldc);
  if (st != OZGEMM_STATUS_SUCCESS) return st;  // ozgemmDgemm's own status (it tells whether it launched)
  Tally tally;
  tally.add(h->last);
  tally.report("symm", &h->last);
  return OZGEMM_STATUS_SUCCESS;
}

}  // extern "C"
