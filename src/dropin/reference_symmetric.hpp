// src/dropin/reference_symmetric.hpp — host references of the symmetric Level-3 routines (DSYRK,
// DSYR2K, DSYRKX, DSYMM; column-major, BLAS semantics) and of the two elementwise steps ozgemm's
// blocked routines take (the triangle merge and the symmetric fill, kernels/dgemm/symmetric.cu). The
// drop-ins' test mocks compute with them (the mock cuBLAS's native routines, the mock libozgemm's
// blocked ones) and the tests compare against them. Plain loops: an entry of C's triangle is
// alpha * (sum over l, in order) + beta * C; not reference BLAS's order of operations.
#pragma once

#include <cstdint>

namespace ozgemm {
namespace dropin {

// Entry (i, j) of an n x n matrix lies in the lower (else upper) triangle, diagonal included.
inline bool in_triangle(int64_t i, int64_t j, bool lower) { return lower ? i >= j : i <= j; }

// C_tri = T_tri + beta C_tri (T nullptr: 0; beta == 0: C is not read); the other triangle untouched.
inline void reference_triangle_merge(int64_t n, bool lower, const double* T, int64_t ldt, double beta, double* C,
                                     int64_t ldc) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      if (!in_triangle(i, j, lower)) continue;
      const double t = T ? T[i + j * ldt] : 0.0;
      double& c = C[i + j * ldc];
      c = beta == 0.0 ? t : t + beta * c;
    }
}

// F (n x n, leading dimension ldf) = the symmetric matrix whose lower (else upper) triangle A stores.
inline void reference_symmetric_fill(int64_t n, bool lower, const double* A, int64_t lda, double* F, int64_t ldf) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) F[i + j * ldf] = in_triangle(i, j, lower) ? A[i + j * lda] : A[j + i * lda];
}

// The rank-k routines on C's lower (else upper) triangle, op(X) = X (not transposed) or X^T, n x k:
//   products 1: C = alpha op(A) op(B)^T + beta C          (SYRK: B = A; SYRKX)
//   products 2: C = alpha (op(A) op(B)^T + op(B) op(A)^T) + beta C   (SYR2K)
// Quick returns as BLAS: n == 0, or (alpha == 0 or k == 0) with beta == 1; beta == 0: C not read.
inline void reference_rank_k(int products, bool lower, bool transposed, int64_t n, int64_t k, double alpha,
                             const double* A, int64_t lda, const double* B, int64_t ldb, double beta, double* C,
                             int64_t ldc) {
  if (n == 0 || ((alpha == 0.0 || k == 0) && beta == 1.0)) return;
  auto op = [&](const double* X, int64_t ld, int64_t i, int64_t l) { return transposed ? X[l + i * ld] : X[i + l * ld]; };
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      if (!in_triangle(i, j, lower)) continue;
      double t = 0.0;
      if (alpha != 0.0)
        for (int64_t l = 0; l < k; ++l) {
          t += op(A, lda, i, l) * op(B, ldb, j, l);
          if (products == 2) t += op(B, ldb, i, l) * op(A, lda, j, l);
        }
      double& c = C[i + j * ldc];
      c = beta == 0.0 ? alpha * t : alpha * t + beta * c;
    }
}

// DSYMM: C = alpha A B + beta C (left, A m x m) or alpha B A + beta C (right, A n x n); A symmetric,
// only its lower (else upper) triangle read; C and B m x n.
inline void reference_symm(bool left, bool lower, int64_t m, int64_t n, double alpha, const double* A, int64_t lda,
                           const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  if (m == 0 || n == 0 || (alpha == 0.0 && beta == 1.0)) return;
  auto a = [&](int64_t i, int64_t l) { return in_triangle(i, l, lower) ? A[i + l * lda] : A[l + i * lda]; };
  const int64_t ka = left ? m : n;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double t = 0.0;
      if (alpha != 0.0)
        for (int64_t l = 0; l < ka; ++l) t += left ? a(i, l) * B[l + j * ldb] : B[i + l * ldb] * a(l, j);
      double& c = C[i + j * ldc];
      c = beta == 0.0 ? alpha * t : alpha * t + beta * c;
    }
}

}  // namespace dropin
}  // namespace ozgemm
