// src/dispatch/dispatch.hpp — the dispatch layer: the ONLY code that includes kernel headers and
// launches kernels. It maps a CallPlan (src/plan) to kernel launches and cuBLAS/cuBLASLt calls and
// decides nothing: every choice is already in the plan. Also reports what the build carries for a
// device (the planner's DeviceDesc flags).
#pragma once

#include <cuComplex.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "ozgemm/ozgemm.h"
#include "ozgemm/problem.hpp"
#include "ozgemm/types.hpp"
#include "plan/planner.hpp"

namespace ozgemm {

class Int8GemmLt;

namespace dispatch {

// What a launch needs besides the plan: the caller's stream and the libraries' handles.
struct ExecContext {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;  // native DGEMM
  Int8GemmLt* lt = nullptr;         // the unfused path's INT8 GEMMs
  bool autotune = true;             // time cuBLASLt candidates per shape
  // Instrumentation (ozgemm::set_phase_events): 5 events recorded around the phases
  // max-reduce | slicing | products | epilogue, or nullptr.
  cudaEvent_t* phase_events = nullptr;
};

// THE launch entry: runs plan.method (native DGEMM, Ozaki-I or Ozaki-II in the variant the plan
// holds); workspace holds plan.workspace_bytes bytes (none for native). With plan.stats_ready the
// emulation reads the operands' shifts, flags (and Ozaki-II's norms) from the workspace (real and
// complex data alike).
ozgemmStatus_t run(const ExecContext& ctx, const CallPlan& plan, const GemmShape& shape, double alpha, const double* A,
                   const double* B, double beta, double* C, void* workspace);
// C = beta * C (beta == 0: C = 0 without reading it), the BLAS quick return for k == 0 or alpha == 0.
ozgemmStatus_t scale_c(const ExecContext& ctx, const GemmShape& shape, double beta, double* C);

// Complex data (cuDoubleComplex): shape's transposes with conjugation where set (op C = transposed in
// shape, conj_* true).
struct ComplexOps {
  bool conj_a = false, conj_b = false;
};
// The launch entry for complex data: plan (type ComplexF64) is native ZGEMM or the complex Ozaki-II
// scheme; INTERNAL_ERROR for a real plan (and the real entry refuses a complex one).
ozgemmStatus_t run(const ExecContext& ctx, const CallPlan& plan, const GemmShape& shape, ComplexOps ops,
                   cuDoubleComplex alpha, const cuDoubleComplex* A, const cuDoubleComplex* B, cuDoubleComplex beta,
                   cuDoubleComplex* C, void* workspace);
// C = beta C for complex data (numerics::oz2c_scale_c: beta == 0 gives 0 without reading C).
ozgemmStatus_t scale_c(const ExecContext& ctx, const GemmShape& shape, cuDoubleComplex beta, cuDoubleComplex* C);

// FP64 mode's decision passes over A and B (plan: DecisionPlan of the operands' element type; the
// complex overloads run the complex statistics and R2c, numerics/ozaki2_complex.hpp, and take
// Ozaki-II requests only; a plan of the other type is INTERNAL_ERROR). Each ends by copying the counts
// back (it synchronises ctx.stream).
// Pass 1: shifts, flags and exact digits of both operands, left in the workspace for the emulation.
ozgemmStatus_t decision_digits(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape,
                               const double* A, const double* B, void* workspace, DecisionCounts* counts);
ozgemmStatus_t decision_digits(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape,
                               const cuDoubleComplex* A, const cuDoubleComplex* B, void* workspace,
                               DecisionCounts* counts);
// Pass 2: the BoundRequest (planner.hpp), over its rows and columns.
ozgemmStatus_t decision_bound(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape,
                              const double* A, const double* B, void* workspace, const BoundRequest& request,
                              DecisionCounts* counts);
ozgemmStatus_t decision_bound(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape,
                              const cuDoubleComplex* A, const cuDoubleComplex* B, void* workspace,
                              const BoundRequest& request, DecisionCounts* counts);

// ---- symmetric Level-3 (src/api/symmetric_api.cpp; kernels/dgemm/symmetric.cu) ------------------------
// C's lower (else upper) triangle of an n x n C = T + beta C (T nullptr: 0; beta == 0: C not read);
// the other triangle untouched.
ozgemmStatus_t triangle_merge(const ExecContext& ctx, int64_t n, bool lower, const double* T, int64_t ldt, double beta,
                              double* C, int64_t ldc);
// F (n x n) = the full symmetric matrix whose lower (else upper) triangle A stores.
ozgemmStatus_t symmetric_fill(const ExecContext& ctx, int64_t n, bool lower, const double* A, int64_t lda, double* F,
                              int64_t ldf);
// Native cuBLAS on ctx's handle and stream, cuBLAS's arguments (alpha, beta host pointers).
ozgemmStatus_t native_syrk(const ExecContext& ctx, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                           const double* alpha, const double* A, int lda, const double* beta, double* C, int ldc);
ozgemmStatus_t native_syr2k(const ExecContext& ctx, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                            const double* alpha, const double* A, int lda, const double* B, int ldb,
                            const double* beta, double* C, int ldc);
ozgemmStatus_t native_syrkx(const ExecContext& ctx, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                            const double* alpha, const double* A, int lda, const double* B, int ldb,
                            const double* beta, double* C, int ldc);
ozgemmStatus_t native_symm(const ExecContext& ctx, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
                           const double* alpha, const double* A, int lda, const double* B, int ldb, const double* beta,
                           double* C, int ldc);

// Fills dev's kernel flags (sm90_kernels, portable_kernels) for the current device; false when
// this build has no device code that runs on it (OZGEMM_CUDA_ARCHITECTURES).
bool probe_build(DeviceDesc* dev);

}  // namespace dispatch
}  // namespace ozgemm
