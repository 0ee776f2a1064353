// src/dropin/reference_dgemm.hpp — DGEMM with reference BLAS's loops (BLAS/SRC/dgemm.f: the same
// order of operations; no FMA, since the drop-ins and their tests compile with -ffp-contract=off).
// libozgemm_blas.so runs it when no system BLAS can be loaded; the drop-ins' test mocks compute
// their "GPU" results with it, so those equal the system reference BLAS's bit for bit.
#pragma once
#include <cstdint>

namespace ozgemm {
namespace dropin {

// C = alpha op(A) op(B) + beta C, column-major; op(A) m x k, op(B) k x n.
inline void reference_dgemm(bool nota, bool notb, int64_t m, int64_t n, int64_t k, double alpha, const double* A,
                            int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  auto a = [&](int64_t i, int64_t l) { return A[i + l * lda]; };
  auto b = [&](int64_t l, int64_t j) { return notb ? B[l + j * ldb] : B[j + l * ldb]; };
  auto c = [&](int64_t i, int64_t j) -> double& { return C[i + j * ldc]; };
  if (m == 0 || n == 0 || ((alpha == 0.0 || k == 0) && beta == 1.0)) return;
  if (alpha == 0.0) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) c(i, j) = beta == 0.0 ? 0.0 : beta * c(i, j);
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    if (nota) {
      if (beta == 0.0)
        for (int64_t i = 0; i < m; ++i) c(i, j) = 0.0;
      else if (beta != 1.0)
        for (int64_t i = 0; i < m; ++i) c(i, j) = beta * c(i, j);
      for (int64_t l = 0; l < k; ++l) {
        const double t = alpha * b(l, j);
        for (int64_t i = 0; i < m; ++i) c(i, j) += t * a(i, l);
      }
    } else {
      for (int64_t i = 0; i < m; ++i) {
        double t = 0.0;
        for (int64_t l = 0; l < k; ++l) t += a(l, i) * b(l, j);
        c(i, j) = beta == 0.0 ? alpha * t : alpha * t + beta * c(i, j);
      }
    }
  }
}

}  // namespace dropin
}  // namespace ozgemm
