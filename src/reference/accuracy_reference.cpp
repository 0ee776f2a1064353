// Host reference of the accuracy contract's decision (ozgemm/reference/accuracy.hpp).
#include "ozgemm/reference/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "ozgemm/numerics/accuracy.hpp"
#include "reference/parallel.hpp"

namespace ozgemm {
namespace ref {

namespace nm = ozgemm::numerics;

namespace {
template <class Get>
OperandStats stats(int64_t rows, int64_t k, Get get) {
  OperandStats s;
  s.rows = rows;
  s.k = k;
  s.shift.assign(rows, 0);
  s.nonfinite.assign(rows, 0);
  s.q.assign(rows, 1);
  s.U.assign(rows, 0);
  s.mag.assign(size_t(rows * k), 0);
  s.mag_low.assign(size_t(rows * k), 0);
  s.S.assign(rows, 0);
  detail::parallel_for(rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      double mx = 0.0;
      int32_t lsb = nm::kNoDigits;
      uint8_t bad = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double v = get(r, l);
        if (!nm::is_finite(v)) {
          bad = 1;
          continue;
        }
        mx = std::max(mx, std::fabs(v));
        if (v != 0.0) lsb = std::min(lsb, nm::lowest_bit_exponent(v));
      }
      const int32_t sh = nm::shift_from_max(mx);
      s.shift[r] = sh;
      s.nonfinite[r] = bad;
      s.q[r] = nm::exact_digits(sh, lsb);
      int64_t u = 0, norm = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double v = get(r, l);
        if (!nm::is_finite(v)) continue;
        const nm::MagnitudeTerms t = nm::magnitude_terms(v, sh);
        u += t.unit;
        norm += t.norm;
        s.mag[size_t(r * k + l)] = static_cast<uint8_t>(t.digit);
        s.mag_low[size_t(r * k + l)] = static_cast<uint8_t>(nm::magnitude_low_digit(v, sh));
      }
      s.U[r] = u;
      s.S[r] = norm;
    }
  });
  for (int64_t r = 0; r < rows; ++r)
    if (!s.nonfinite[r]) s.q_max = std::max(s.q_max, s.q[r]);
  return s;
}
}  // namespace

OperandStats stats_rows_of_op_a(Op transa, int64_t m, int64_t k, const double* A, int64_t lda) {
  return stats(m, k, [=](int64_t r, int64_t l) { return op_elem(A, lda, transa, r, l); });
}

OperandStats stats_cols_of_op_b(Op transb, int64_t k, int64_t n, const double* B, int64_t ldb) {
  return stats(n, k, [=](int64_t c, int64_t l) { return op_elem(B, ldb, transb, l, c); });
}

namespace {
// sum_l x(a_rl) y(b_lc) of two digit planes (rows x k, k-contiguous), exact; m x n column-major.
std::vector<int64_t> digit_product(const OperandStats& a, const std::vector<uint8_t>& x_a, const OperandStats& b,
                                   const std::vector<uint8_t>& y_b) {
  if (a.k != b.k) throw std::invalid_argument("magnitude_product: depths differ");
  const int64_t m = a.rows, n = b.rows, k = a.k;
  std::vector<int64_t> P(size_t(m * n), 0);
  detail::parallel_for(n, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = 0; r < m; ++r) {
        const uint8_t* x = x_a.data() + r * k;
        const uint8_t* y = y_b.data() + c * k;
        int64_t sum = 0;
        for (int64_t l = 0; l < k; ++l) sum += int64_t(x[l]) * int64_t(y[l]);
        P[size_t(r + c * m)] = sum;
      }
  });
  return P;
}
}  // namespace

std::vector<int64_t> magnitude_product(const OperandStats& a, const OperandStats& b) {
  return digit_product(a, a.mag, b, b.mag);
}

std::vector<int64_t> fine_magnitude_product(const OperandStats& a, const OperandStats& b) {
  const std::vector<int64_t> P = magnitude_product(a, b), X1 = digit_product(a, a.mag, b, b.mag_low),
                             X2 = digit_product(a, a.mag_low, b, b.mag), Y = digit_product(a, a.mag_low, b, b.mag_low);
  std::vector<int64_t> P14(P.size());
  for (size_t i = 0; i < P.size(); ++i) P14[i] = nm::oz2_fine_lower_bound(P[i], X1[i] + X2[i], Y[i]);
  return P14;
}

std::vector<double> entry_ratios(const OperandStats& a, const OperandStats& b, const std::vector<int64_t>& P, int s) {
  const int64_t m = a.rows, n = b.rows;
  std::vector<double> R(size_t(m * n), 1.0);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) {
      if (a.nonfinite[r] || b.nonfinite[c]) continue;
      R[size_t(r + c * m)] =
          nm::entry_ratio(s, P[size_t(r + c * m)], a.U[r], b.U[c], a.q[r], b.q[c], a.shift[r] + b.shift[c], a.k);
    }
  return R;
}

namespace {
// What both decisions read: the operands' statistics and the magnitude product.
struct DecisionInputs {
  OperandStats a, b;
  std::vector<int64_t> P;
};
DecisionInputs decision_inputs(const char* who, Op transa, Op transb, int64_t m, int64_t n, int64_t k, const double* A,
                               int64_t lda, const double* B, int64_t ldb) {
  if (m < 1 || n < 1 || k < 1) throw std::invalid_argument(std::string(who) + ": m, n, k must be >= 1");
  DecisionInputs in;
  in.a = stats_rows_of_op_a(transa, m, k, A, lda);
  in.b = stats_cols_of_op_b(transb, k, n, B, ldb);
  in.P = magnitude_product(in.a, in.b);
  return in;
}
}  // namespace

AccuracyDecision decide_slices(Op transa, Op transb, int64_t m, int64_t n, int64_t k, const double* A, int64_t lda,
                               const double* B, int64_t ldb) {
  const DecisionInputs in = decision_inputs("decide_slices", transa, transb, m, n, k, A, lda, B, ldb);
  const OperandStats &a = in.a, &b = in.b;
  const std::vector<int64_t>& P = in.P;
  AccuracyDecision d;
  d.target = nm::target_constant(k);
  d.lower_bound = nm::slices_lower_bound(a.q_max, b.q_max);
  d.bound = std::numeric_limits<double>::infinity();
  // R never increases with s: the count is the largest of the entries' own smallest counts.
  int s = d.lower_bound;
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r)
      if (!a.nonfinite[r] && !b.nonfinite[c])
        s = std::max(s, nm::entry_slices(s, d.target, P[size_t(r + c * m)], a.U[r], b.U[c], a.q[r], b.q[c],
                                         a.shift[r] + b.shift[c], k));
  if (s > nm::kMaxSlices) return d;
  const std::vector<double> R = entry_ratios(a, b, P, s);
  d.slices = s;
  d.bound = *std::max_element(R.begin(), R.end());
  return d;
}

std::vector<double> oz2_entry_ratios_with(const OperandStats& a, const OperandStats& b, const std::vector<int64_t>& L,
                                          const nm::Ozaki2Constants& c, const Oz2SideOf& side,
                                          double recon_abs_u, Oz2LowerBound lower) {
  const int64_t m = a.rows, n = b.rows;
  std::vector<nm::Oz2Side> sa, sb;
  for (int64_t r = 0; r < m; ++r) sa.push_back(side(a.q[size_t(r)], nm::oz2_extra_shift(a.S[size_t(r)], c)));
  for (int64_t col = 0; col < n; ++col) sb.push_back(side(b.q[size_t(col)], nm::oz2_extra_shift(b.S[size_t(col)], c)));
  std::vector<double> R(size_t(m * n), 0.0);
  detail::parallel_for(n, [&](int64_t c0, int64_t c1) {
    for (int64_t col = c0; col < c1; ++col)
      for (int64_t r = 0; r < m; ++r) {
        if (a.nonfinite[r] || b.nonfinite[col]) continue;
        const int64_t l = L[size_t(r + col * m)];
        R[size_t(r + col * m)] = nm::oz2_entry_ratio(
            lower == Oz2LowerBound::Digits14 ? nm::oz2_inverse_fine(l) : nm::oz2_inverse(l), nm::int64_to_double_rn(a.U[size_t(r)]),
            nm::int64_to_double_rn(b.U[size_t(col)]), sa[size_t(r)], sb[size_t(col)], a.shift[r] + b.shift[col],
            recon_abs_u);
      }
  });
  return R;
}

std::vector<double> oz2_entry_ratios(const OperandStats& a, const OperandStats& b, const std::vector<int64_t>& L,
                                     int moduli, Oz2LowerBound lower) {
  const nm::Ozaki2Constants& c = nm::ozaki2_constants(moduli);
  const double cross = nm::oz2_rounding_cross(a.k);
  return oz2_entry_ratios_with(
      a, b, L, c, [cross](int32_t q, int32_t d) { return nm::oz2_side(q, d, cross); }, c.recon_abs_u, lower);
}

Ozaki2Decision smallest_moduli_meeting(int64_t k, const std::function<std::vector<double>(int moduli)>& ratios) {
  Ozaki2Decision d;
  d.target = nm::target_constant(k);
  d.bound = std::numeric_limits<double>::infinity();
  for (int w = 0; w < nm::kModuliWindow; ++w) {
    const std::vector<double> R = ratios(nm::kMinModuli + w);
    const double mx = *std::max_element(R.begin(), R.end());
    d.ratio_max.push_back(mx);
    if (!d.moduli && mx <= d.target) {
      d.moduli = nm::kMinModuli + w;
      d.bound = mx;
    }
  }
  return d;
}

Ozaki2Decision decide_moduli(Op transa, Op transb, int64_t m, int64_t n, int64_t k, const double* A, int64_t lda,
                             const double* B, int64_t ldb, Oz2LowerBound lower) {
  const DecisionInputs in = decision_inputs("decide_moduli", transa, transb, m, n, k, A, lda, B, ldb);
  const std::vector<int64_t> L = lower == Oz2LowerBound::Digits14 ? fine_magnitude_product(in.a, in.b) : in.P;
  return smallest_moduli_meeting(k, [&](int moduli) { return oz2_entry_ratios(in.a, in.b, L, moduli, lower); });
}

}  // namespace ref
}  // namespace ozgemm
