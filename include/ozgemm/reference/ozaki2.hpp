// ozgemm/reference/ozaki2.hpp — the host reference of the Ozaki scheme II (ozgemm/numerics/ozaki2.hpp):
// the GPU path (ozgemmSetScheme(OZGEMM_SCHEME_OZAKI2)) equals it bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "ozgemm/problem.hpp"

namespace ozgemm {
namespace ref {

// One operand scaled and reduced: rows of op(A) or columns of op(B).
struct Ozaki2Operand {
  int64_t rows = 0, k = 0;
  int moduli = 0;
  std::vector<int32_t> shift;      // s (the power of two applied), per row
  std::vector<uint8_t> nearest;    // 1: A' rounded to nearest, 0: truncated (extra shift d < 0: oz2_rounds_to_nearest)
  std::vector<uint8_t> nonfinite;  // 1: the row holds Inf/NaN
  std::vector<int8_t> residues;    // moduli x rows x k: residue i of A'(r, l) at (i * rows + r) * k + l
};
Ozaki2Operand ozaki2_rows_of_op_a(Op transa, int64_t m, int64_t k, const double* A, int64_t lda, int moduli);
Ozaki2Operand ozaki2_cols_of_op_b(Op transb, int64_t k, int64_t n, const double* B, int64_t ldb, int moduli);

// C = alpha op(A) op(B) + beta C through the scheme with `moduli` moduli (kMinModuli..kMaxModuli).
void ozaki2_dgemm(Op transa, Op transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A, int64_t lda,
                  const double* B, int64_t ldb, double beta, double* C, int64_t ldc, int moduli);

// The documented per-entry bound of |(AB)_rc - 2^-(s_r + t_c) (A'B')_rc| (the scaling's cut, A' rounded
// to nearest; the products are exact) plus the reconstruction's absolute term, m x n column-major:
// (2^-s sum|b| + 2^-t sum|a|) / 2 + 2^-(s+t) (k + numerics::oz2_reconstruction_error(c, 0)) (k covers
// the cross term k / 4).
std::vector<double> ozaki2_truncation_bound(Op transa, Op transb, int64_t m, int64_t n, int64_t k, const double* A,
                                            int64_t lda, const double* B, int64_t ldb, int moduli);

}  // namespace ref
}  // namespace ozgemm
