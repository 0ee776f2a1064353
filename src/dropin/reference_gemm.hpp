// src/dropin/reference_gemm.hpp — DGEMM and ZGEMM with reference BLAS's loops (BLAS/SRC/dgemm.f,
// zgemm.f: the same order of operations; no FMA, since the drop-ins and their tests compile with
// -ffp-contract=off). libozgemm_blas.so runs it when no system BLAS can be loaded; the drop-ins' test
// mocks compute their "GPU" results with it, so those equal the system reference BLAS's bit for bit.
#pragma once
#include <cuComplex.h>  // cuDoubleComplex (a struct of two doubles; no CUDA library is linked)

#include <cstdint>

namespace ozgemm {
namespace dropin {

// The arithmetic of the element types, as gfortran compiles reference BLAS: a complex product is
// (ar br - ai bi, ar bi + ai br), with no special handling of Inf and NaN.
namespace ref {
inline double mul(double a, double b) { return a * b; }
inline cuDoubleComplex mul(cuDoubleComplex a, cuDoubleComplex b) {
  return make_cuDoubleComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
inline double add(double a, double b) { return a + b; }
inline cuDoubleComplex add(cuDoubleComplex a, cuDoubleComplex b) { return make_cuDoubleComplex(a.x + b.x, a.y + b.y); }
inline double conj(double a) { return a; }
inline cuDoubleComplex conj(cuDoubleComplex a) { return make_cuDoubleComplex(a.x, -a.y); }
inline bool equals(double a, double v) { return a == v; }                     // v real
inline bool equals(cuDoubleComplex a, double v) { return a.x == v && a.y == 0.0; }
template <typename T>
T real(double v);
template <>
inline double real<double>(double v) { return v; }
template <>
inline cuDoubleComplex real<cuDoubleComplex>(double v) { return make_cuDoubleComplex(v, 0.0); }
}  // namespace ref

// C = alpha op(A) op(B) + beta C, column-major; op(A) m x k, op(B) k x n. op(X) is X (not_x), X^T, or
// X^H (conj_x; for real data the same as X^T). T is double (DGEMM) or cuDoubleComplex (ZGEMM).
template <typename T>
void reference_gemm(bool nota, bool conja, bool notb, bool conjb, int64_t m, int64_t n, int64_t k, T alpha,
                    const T* A, int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  using namespace ref;
  auto a = [&](int64_t i, int64_t l) { return A[i + l * lda]; };
  // op(B)(l, j)
  auto b = [&](int64_t l, int64_t j) {
    if (notb) return B[l + j * ldb];
    return conjb ? conj(B[j + l * ldb]) : B[j + l * ldb];
  };
  auto c = [&](int64_t i, int64_t j) -> T& { return C[i + j * ldc]; };
  const T zero = real<T>(0.0);
  if (m == 0 || n == 0 || ((equals(alpha, 0.0) || k == 0) && equals(beta, 1.0))) return;
  if (equals(alpha, 0.0)) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) c(i, j) = equals(beta, 0.0) ? zero : mul(beta, c(i, j));
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    if (nota) {
      if (equals(beta, 0.0))
        for (int64_t i = 0; i < m; ++i) c(i, j) = zero;
      else if (!equals(beta, 1.0))
        for (int64_t i = 0; i < m; ++i) c(i, j) = mul(beta, c(i, j));
      for (int64_t l = 0; l < k; ++l) {
        const T t = mul(alpha, b(l, j));
        for (int64_t i = 0; i < m; ++i) c(i, j) = add(c(i, j), mul(t, a(i, l)));
      }
    } else {
      for (int64_t i = 0; i < m; ++i) {
        T t = zero;
        for (int64_t l = 0; l < k; ++l) t = add(t, mul(conja ? conj(a(l, i)) : a(l, i), b(l, j)));
        c(i, j) = equals(beta, 0.0) ? mul(alpha, t) : add(mul(alpha, t), mul(beta, c(i, j)));
      }
    }
  }
}

// The same with op(A), op(B) given as BLAS characters: 'N', 'T' or 'C' (either case; anything else
// is taken as 'T', as reference BLAS does after its argument checks).
template <typename T>
void reference_gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T* A, int64_t lda, const T* B,
                    int64_t ldb, T beta, T* C, int64_t ldc) {
  auto is = [](char c, char u) { return c == u || c == u + ('a' - 'A'); };
  reference_gemm(is(ta, 'N'), is(ta, 'C'), is(tb, 'N'), is(tb, 'C'), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace dropin
}  // namespace ozgemm
