// ozgemm/problem.hpp — the problem description (plain data) and its argument checks,
// shared by the C API, the host reference and the CLI. No CUDA needed.
#pragma once

#include <cstdint>
#include <string>

#include "ozgemm/export.h"

namespace ozgemm {

// op(X) = X (N) or X^T (T). Real matrices: conjugate-transpose equals transpose.
enum class Op : char { N = 'N', T = 'T' };

// C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C, column-major, as BLAS.
struct GemmShape {
  Op transa = Op::N;
  Op transb = Op::N;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 1, ldb = 1, ldc = 1;

  int64_t a_rows() const { return transa == Op::N ? m : k; }  // rows of A as stored
  int64_t b_rows() const { return transb == Op::N ? k : n; }  // rows of B as stored
};

// The shape of a BLAS call, field by field.
inline GemmShape gemm_shape(Op transa, Op transb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                            int64_t ldc) {
  GemmShape s;
  s.transa = transa;
  s.transb = transb;
  s.m = m;
  s.n = n;
  s.k = k;
  s.lda = lda;
  s.ldb = ldb;
  s.ldc = ldc;
  return s;
}

// Empty string when the shape is valid; otherwise a one-line reason. Rules follow
// cuBLAS/BLAS: m, n, k >= 0; lda >= max(1, rows of A as stored); likewise ldb;
// ldc >= max(1, m); and every index fits the 64-bit offsets the library uses.
OZGEMM_API std::string check_shape(const GemmShape& s);

// Element op(A)(i, l) of a column-major A with leading dimension lda.
inline double op_elem(const double* a, int64_t lda, Op t, int64_t i, int64_t l) {
  return t == Op::N ? a[i + l * lda] : a[l + i * lda];
}

}  // namespace ozgemm
