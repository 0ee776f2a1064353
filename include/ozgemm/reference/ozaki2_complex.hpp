// ozgemm/reference/ozaki2_complex.hpp — the host reference of the complex Ozaki-II scheme (2M: two INT8
// products per modulus; ozgemm/numerics/ozaki2_complex.hpp), which the GPU path (kernels/dgemm/
// ozaki2_complex.cu) equals bit for bit, plus what checks it: a double-double complex reference, the proven per-entry bound and the
// FP64 mode's decision of the moduli count.
// All matrices are column-major std::complex<double> (the layout of cuDoubleComplex) with BLAS
// leading dimensions; bad arguments throw std::invalid_argument.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "ozgemm/numerics/ozaki2_complex.hpp"
#include "ozgemm/reference/accuracy.hpp"

namespace ozgemm {
namespace ref {

using numerics::ComplexOp;
using zcomplex = std::complex<double>;

// Element op(X)(i, l) of a column-major complex X: conjugated for op C.
inline zcomplex op_zelem(const zcomplex* x, int64_t ld, ComplexOp t, int64_t i, int64_t l) {
  const zcomplex v = t == ComplexOp::N ? x[i + l * ld] : x[l + i * ld];
  return numerics::oz2c_conjugates(t) ? std::conj(v) : v;
}

// One complex operand scaled and reduced (rows of op(A) or columns of op(B)) with the constants of any
// moduli set (the scheme's is numerics::ozaki2_complex_constants; the real set's serves the
// Karatsuba comparison in the tests): the symmetric residues of A'r and A'i before the 2M transform,
// conjugation applied.
struct Ozaki2ComplexOperand {
  int64_t rows = 0, k = 0;
  int moduli = 0;
  std::vector<int32_t> shift;      // s = sigma - 1 + d, per row
  std::vector<uint8_t> nearest;    // 1: A' rounded to nearest, 0: truncated (d < 0: oz2_rounds_to_nearest)
  std::vector<uint8_t> nonfinite;  // 1: the row holds Inf/NaN in either part
  std::vector<int8_t> re, im;      // moduli x rows x k: residue i of A'(r, l) at (i * rows + r) * k + l
};
Ozaki2ComplexOperand ozaki2_complex_rows_of_op_a(ComplexOp transa, int64_t m, int64_t k, const zcomplex* A,
                                                 int64_t lda, const numerics::Ozaki2Constants& c);
Ozaki2ComplexOperand ozaki2_complex_cols_of_op_b(ComplexOp transb, int64_t k, int64_t n, const zcomplex* B,
                                                 int64_t ldb, const numerics::Ozaki2Constants& c);

// C = alpha op(A) op(B) + beta C through the 2M scheme with `moduli` complex moduli (kMinModuli..
// kMaxModuli), BLAS semantics (beta == 0: C not read; alpha == 0 or k == 0: C = beta C).
void ozaki2_complex_reference(ComplexOp transa, ComplexOp transb, int64_t m, int64_t n, int64_t k, zcomplex alpha,
                              const zcomplex* A, int64_t lda, const zcomplex* B, int64_t ldb, zcomplex beta,
                              zcomplex* C, int64_t ldc, int moduli);

// The scheme's per-entry error bound at `moduli` from the actual sums (m x n column-major; for every
// finite entry, whatever its statistics): |acc - (AB)_rc| (complex modulus, before alpha/beta) <=
//   e_a 2^-s sum_l |b_l| + e_b 2^-t sum_l |a_l| + 2^-(s+t) (sqrt2 recon_abs_u u + k) + 2.02 u (|A||B|)_rc,
// e = sqrt2/2 for a row (column) rounded to nearest, sqrt2 for one truncated (d < 0); the cross term is
// at most k 2^-(s+t).
std::vector<double> ozaki2_complex_error_bound(ComplexOp transa, ComplexOp transb, int64_t m, int64_t n, int64_t k,
                                               const zcomplex* A, int64_t lda, const zcomplex* B, int64_t ldb,
                                               int moduli);

// The textbook complex FP64 product acc = sum_l oz2c_mul(a_l, b_l), l ascending, then
// oz2c_apply_alpha_beta: the "native" baseline (cuBLAS's ZGEMM sums in another order).
void plain_zgemm(ComplexOp transa, ComplexOp transb, int64_t m, int64_t n, int64_t k, zcomplex alpha,
                 const zcomplex* A, int64_t lda, const zcomplex* B, int64_t ldb, zcomplex beta, zcomplex* C,
                 int64_t ldc);

// op(A) op(B) in double-double (each part a real GEMM of depth 2k through accurate_gemm: Re = [Ar, -Ai]
// [Br; Bi], Im = [Ar, Ai] [Bi; Br]) and |op(A)||op(B)| with complex moduli, m x n column-major.
struct ComplexAccurateResult {
  int64_t m = 0, n = 0;
  std::vector<double> re_hi, re_lo, im_hi, im_lo;
  std::vector<double> absprod;  // sum_l |a_l||b_l| (long double sums of hypot, rounded)
};
ComplexAccurateResult accurate_zgemm(ComplexOp transa, ComplexOp transb, int64_t m, int64_t n, int64_t k,
                                     const zcomplex* A, int64_t lda, const zcomplex* B, int64_t ldb);
// |C_rc - ref_rc| (complex modulus) per entry, m x n column-major (C with leading dimension ldc).
std::vector<double> complex_errors(const zcomplex* C, int64_t ldc, const ComplexAccurateResult& ref);

// The FP64 mode's statistics of a complex operand (numerics/ozaki2_complex.hpp, "The accuracy
// contract"): the real ones over the 2k parts (shift, flag, q, S), with U and mag (rows x k) from each
// element's oz2c_magnitude_terms (the complex modulus where it bounds it).
OperandStats complex_stats_rows_of_op_a(ComplexOp transa, int64_t m, int64_t k, const zcomplex* A, int64_t lda);
OperandStats complex_stats_cols_of_op_b(ComplexOp transb, int64_t k, int64_t n, const zcomplex* B, int64_t ldb);
// R2c(N) of every entry (m x n column-major; P from magnitude_product); entries whose row or column
// holds Inf/NaN get 0.
std::vector<double> oz2c_entry_ratios(const OperandStats& a, const OperandStats& b, const std::vector<int64_t>& P,
                                      int moduli);
// The smallest count N in kMinModuli..kMaxModuli whose maximum R2c over the finite entries meets
// target_constant(k) (moduli = 0: none), with every count's maximum.
Ozaki2Decision decide_complex_moduli(ComplexOp transa, ComplexOp transb, int64_t m, int64_t n, int64_t k,
                                     const zcomplex* A, int64_t lda, const zcomplex* B, int64_t ldb);

}  // namespace ref
}  // namespace ozgemm
