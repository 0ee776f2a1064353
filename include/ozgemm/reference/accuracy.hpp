// ozgemm/reference/accuracy.hpp — the host reference of the accuracy contract's decision
// (ozgemm/numerics/accuracy.hpp): the operands' statistics, the magnitude product P, each entry's
// bound ratio R(s) and the smallest slice count whose bound meets the target everywhere. The GPU
// decision (kernels/dgemm/accuracy.cu) computes the same integers and the same R, so both choose
// the same count.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ozgemm/numerics/accuracy.hpp"
#include "ozgemm/problem.hpp"

namespace ozgemm {
namespace ref {

// Statistics of the rows of op(A) (or columns of op(B)): numerics/accuracy.hpp defines them.
struct OperandStats {
  int64_t rows = 0, k = 0;
  std::vector<int32_t> shift;      // shift_from_max of the finite max-abs
  std::vector<uint8_t> nonfinite;  // 1: the row holds Inf/NaN (its entries take the special path)
  std::vector<int32_t> q;          // exact digits
  std::vector<int64_t> U;          // sum of ceil(|a'| 2^kUnitBits)
  std::vector<uint8_t> mag;        // rows x k, k-contiguous: floor(|a'|)
  std::vector<uint8_t> mag_low;    // rows x k, k-contiguous: magnitude_low_digit, floor(|a'| 2^7) mod 2^7
  std::vector<int64_t> S;          // Ozaki-II's scaling norm: sum of oz2_norm_term(a, shift - 1)
  int32_t q_max = 1;               // max of q over finite rows
};
OperandStats stats_rows_of_op_a(Op transa, int64_t m, int64_t k, const double* A, int64_t lda);
OperandStats stats_cols_of_op_b(Op transb, int64_t k, int64_t n, const double* B, int64_t ldb);

// P_rc = sum_l mag_a(r, l) mag_b(c, l), exact (int64); m x n column-major.
std::vector<int64_t> magnitude_product(const OperandStats& a, const OperandStats& b);

// P14_rc = 2^14 P + 2^7 X + Y (numerics::oz2_fine_lower_bound), the finer lower bound of
// 2^14 (|A||B|)'; m x n column-major.
std::vector<int64_t> fine_magnitude_product(const OperandStats& a, const OperandStats& b);

// R(s) of every entry (m x n column-major); entries whose row or column holds Inf/NaN get 1.
std::vector<double> entry_ratios(const OperandStats& a, const OperandStats& b, const std::vector<int64_t>& P, int s);

struct AccuracyDecision {
  int lower_bound = 1;  // numerics::slices_lower_bound: no count below it can meet the target
  int slices = 0;       // smallest count >= lower_bound whose max R <= target; 0: none up to kMaxSlices
  double bound = 0;     // max over entries of R(slices) (the constant achieved); inf when slices == 0
  double target = 0;    // numerics::target_constant(k)
};
// The decision for C = op(A) op(B) (m, n, k >= 1).
AccuracyDecision decide_slices(Op transa, Op transb, int64_t m, int64_t n, int64_t k, const double* A, int64_t lda,
                               const double* B, int64_t ldb);

// Ozaki-II (numerics/accuracy.hpp, R2): the maxima over the finite entries of R2(N) for every
// moduli count N = kMinModuli + w, and the smallest N whose maximum meets the target.
struct Ozaki2Decision {
  int moduli = 0;       // 0: no count up to kMaxModuli meets the target
  double bound = 0;     // ratio_max at `moduli` (inf when moduli == 0)
  double target = 0;    // numerics::target_constant(k)
  std::vector<double> ratio_max;  // kModuliWindow maxima (0 when every entry is non-finite)
};
// Which lower bound of |A||B| R2 divides by: the magnitude digits' product P (the GPU decision's), or
// the finer P14 (numerics::oz2_fine_lower_bound; docs/numerics.md, "The finer lower bound").
enum class Oz2LowerBound { Digits7, Digits14 };
Ozaki2Decision decide_moduli(Op transa, Op transb, int64_t m, int64_t n, int64_t k, const double* A, int64_t lda,
                             const double* B, int64_t ldb, Oz2LowerBound lower = Oz2LowerBound::Digits7);
// R2(N) of every entry (m x n column-major); entries whose row or column holds Inf/NaN get 0. L: P
// (magnitude_product) or, with Digits14, P14 (fine_magnitude_product).
std::vector<double> oz2_entry_ratios(const OperandStats& a, const OperandStats& b, const std::vector<int64_t>& L,
                                     int moduli, Oz2LowerBound lower = Oz2LowerBound::Digits7);
// The same evaluation for any scheme of the Ozaki-II form (the complex one: ozaki2_complex.hpp): the
// count's constants c, its side function (of a row's or column's q and extra shift d) and
// reconstruction term.
using Oz2SideOf = std::function<numerics::Oz2Side(int32_t q, int32_t d)>;
std::vector<double> oz2_entry_ratios_with(const OperandStats& a, const OperandStats& b, const std::vector<int64_t>& L,
                                          const numerics::Ozaki2Constants& c,
                                          const Oz2SideOf& side, double recon_abs_u,
                                          Oz2LowerBound lower = Oz2LowerBound::Digits7);
// The decision from every count's ratios (ratios(N) for N = kMinModuli..kMaxModuli): the smallest N
// whose maximum meets target_constant(k), and every maximum.
Ozaki2Decision smallest_moduli_meeting(int64_t k, const std::function<std::vector<double>(int moduli)>& ratios);

}  // namespace ref
}  // namespace ozgemm
