// The symmetric Level-3 routines' launches (dispatch.hpp, "symmetric Level-3"): the two elementwise
// kernels (kernels/dgemm/symmetric.cu) and native cuBLAS. Decides nothing (src/plan/symmetric_plan).
#include "dispatch/dispatch.hpp"
#include "kernels/dgemm/launch.hpp"

namespace ozgemm {
namespace dispatch {

namespace {
ozgemmStatus_t of_cuda(cudaError_t e) { return e == cudaSuccess ? OZGEMM_STATUS_SUCCESS : OZGEMM_STATUS_EXECUTION_FAILED; }

// fn(handle) on ctx's handle after setting ctx's stream.
template <class Fn>
ozgemmStatus_t on_cublas(const ExecContext& ctx, Fn fn) {
  if (cublasSetStream(ctx.cublas, ctx.stream) != CUBLAS_STATUS_SUCCESS) return OZGEMM_STATUS_EXECUTION_FAILED;
  return fn(ctx.cublas) == CUBLAS_STATUS_SUCCESS ? OZGEMM_STATUS_SUCCESS : OZGEMM_STATUS_EXECUTION_FAILED;
}
}  // namespace

ozgemmStatus_t triangle_merge(const ExecContext& ctx, int64_t n, bool lower, const double* T, int64_t ldt, double beta,
                              double* C, int64_t ldc) {
  return of_cuda(kernels::launch_triangle_merge(n, lower, T, ldt, beta, C, ldc, ctx.stream));
}

ozgemmStatus_t symmetric_fill(const ExecContext& ctx, int64_t n, bool lower, const double* A, int64_t lda, double* F,
                              int64_t ldf) {
  return of_cuda(kernels::launch_symmetric_fill(n, lower, A, lda, F, ldf, ctx.stream));
}

ozgemmStatus_t native_syrk(const ExecContext& ctx, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                           const double* alpha, const double* A, int lda, const double* beta, double* C, int ldc) {
  return on_cublas(ctx, [&](cublasHandle_t h) { return cublasDsyrk(h, uplo, trans, n, k, alpha, A, lda, beta, C, ldc); });
}

ozgemmStatus_t native_syr2k(const ExecContext& ctx, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                            const double* alpha, const double* A, int lda, const double* B, int ldb,
                            const double* beta, double* C, int ldc) {
  return on_cublas(ctx, [&](cublasHandle_t h) {
    return cublasDsyr2k(h, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  });
}

ozgemmStatus_t native_syrkx(const ExecContext& ctx, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                            const double* alpha, const double* A, int lda, const double* B, int ldb,
                            const double* beta, double* C, int ldc) {
  return on_cublas(ctx, [&](cublasHandle_t h) {
    return cublasDsyrkx(h, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  });
}

ozgemmStatus_t native_symm(const ExecContext& ctx, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
                           const double* alpha, const double* A, int lda, const double* B, int ldb, const double* beta,
                           double* C, int ldc) {
  return on_cublas(ctx, [&](cublasHandle_t h) {
    return cublasDsymm(h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
  });
}

}  // namespace dispatch
}  // namespace ozgemm
