// src/dropin/hook_legacy.cpp — the legacy cuBLAS API (cublas.h) entry points of libozgemm_hook.so:
// cublasDgemm (chars for the operations, alpha and beta by value, an implicit context and its
// stream set with cublasSetKernelStream), and cublasInit / cublasShutdown / cublasSetKernelStream,
// which are only watched (forwarded unchanged) so that the hook knows the context is initialised
// and which stream to use. This file must include cublas.h, which cannot be included together with
// cublas_v2.h (that header renames cublasDgemm to cublasDgemm_v2).
#include <cublas.h>

#include <atomic>

#include "dropin/common.hpp"
#include "dropin/hook_core.hpp"

using namespace ozgemm::dropin;
using namespace ozgemm::dropin::hook;

namespace {

std::atomic<bool> g_initialised{false};
std::atomic<cudaStream_t> g_stream{nullptr};

int legacy_op(char t) {
  switch (t) {
    case 'N': case 'n': return CUBLAS_OP_N;
    case 'T': case 't': return CUBLAS_OP_T;
    case 'C': case 'c': return CUBLAS_OP_C;
    default: return -1;  // invalid: cuBLAS reports it
  }
}

}  // namespace

#define OZ_CALLER __builtin_return_address(0)

extern "C" {

cublasStatus CUBLASWINAPI cublasInit(void) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.legacy_init) return missing("cublasInit");
  const cublasStatus st = r.legacy_init();
  if (st == CUBLAS_STATUS_SUCCESS && !passthrough(from_ozgemm)) g_initialised = true;
  return st;
}

cublasStatus CUBLASWINAPI cublasShutdown(void) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!passthrough(from_ozgemm)) {
    forget(kLegacyHandle);
    g_initialised = false;
    g_stream = nullptr;
  }
  if (!r.legacy_shutdown) return missing("cublasShutdown");
  return r.legacy_shutdown();
}

cublasStatus CUBLASWINAPI cublasSetKernelStream(cudaStream_t stream) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.legacy_set_kernel_stream) return missing("cublasSetKernelStream");
  const cublasStatus st = r.legacy_set_kernel_stream(stream);
  if (st == CUBLAS_STATUS_SUCCESS && !passthrough(from_ozgemm)) g_stream = stream;
  return st;
}

void CUBLASWINAPI cublasDgemm(char transa, char transb, int m, int n, int k, double alpha, const double* A, int lda,
                              const double* B, int ldb, double beta, double* C, int ldc) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  const auto real_dgemm = r.get<LegacyDgemmFn>(Api::LegacyDgemm);
  if (!real_dgemm) {
    missing(kApiNames[int(Api::LegacyDgemm)]);
    return;
  }
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::LegacyDgemm;
  c.legacy = true;
  c.legacy_initialised = g_initialised.load();
  c.legacy_stream = g_stream.load();
  c.transa = legacy_op(transa), c.transb = legacy_op(transb);
  c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = &alpha, c.beta = &beta, c.A = A, c.B = B, c.C = C;
  cublasStatus_t st;
  if (run(r, kLegacyHandle, c, &st)) return;
  real_dgemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // extern "C"
