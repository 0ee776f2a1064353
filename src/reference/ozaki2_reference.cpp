// Host reference of the Ozaki scheme II (ozgemm/reference/ozaki2.hpp), from the shared numerics.
#include "ozgemm/reference/ozaki2.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "ozgemm/numerics/ozaki2.hpp"
#include "ozgemm/reference/reference.hpp"
#include "reference/parallel.hpp"
#include "reference/row_scan.hpp"

namespace ozgemm {
namespace ref {

namespace nm = ozgemm::numerics;

namespace {
template <class Get>
Ozaki2Operand scale(int64_t rows, int64_t k, int moduli, Get get) {
  const nm::Ozaki2Constants& c = nm::ozaki2_constants(moduli);
  Ozaki2Operand o;
  o.rows = rows;
  o.k = k;
  o.moduli = moduli;
  o.shift.assign(rows, 0);
  o.nearest.assign(rows, 0);
  o.nonfinite.assign(rows, 0);
  o.residues.assign(size_t(moduli) * size_t(rows) * size_t(k), 0);
  detail::parallel_for(rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const detail::RowScan row = detail::scan_row(r, k, get);
      const int32_t s0 = nm::shift_from_max(row.max_abs) - 1;
      int64_t S = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double v = get(r, l);
        if (nm::is_finite(v)) S += nm::oz2_norm_term(v, s0);
      }
      const nm::Oz2RowScaling rs = nm::oz2_row_scaling(s0, S, c);
      const int32_t s = rs.shift;
      const bool nearest = rs.nearest;
      o.shift[r] = s;
      o.nearest[r] = nearest;
      o.nonfinite[r] = row.nonfinite;
      for (int64_t l = 0; l < k; ++l) {
        const double g = get(r, l), v = nm::is_finite(g) ? g : 0.0;
        // A' = v 2^s rounded to nearest (ties away from zero; truncated where d < 0), past int64 at the
        // wide counts: the residues from its significand at every count.
        for (int i = 0; i < moduli; ++i)
          o.residues[(size_t(i) * size_t(rows) + size_t(r)) * size_t(k) + size_t(l)] =
              static_cast<int8_t>(nm::oz2_scaled_residue(v, s, c.p[i], nearest));
      }
    }
  });
  return o;
}

void check_args(Op ta, Op tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int moduli) {
  const std::string why = check_shape(gemm_shape(ta, tb, m, n, k, lda, ldb, ldc));
  if (!why.empty()) throw std::invalid_argument(why);
  if (moduli < nm::kMinModuli || moduli > nm::kMaxModuli)
    throw std::invalid_argument("moduli must be in " + std::to_string(nm::kMinModuli) + ".." +
                                std::to_string(nm::kMaxModuli));
}
}  // namespace

Ozaki2Operand ozaki2_rows_of_op_a(Op transa, int64_t m, int64_t k, const double* A, int64_t lda, int moduli) {
  return scale(m, k, moduli, [=](int64_t r, int64_t l) { return op_elem(A, lda, transa, r, l); });
}

Ozaki2Operand ozaki2_cols_of_op_b(Op transb, int64_t k, int64_t n, const double* B, int64_t ldb, int moduli) {
  return scale(n, k, moduli, [=](int64_t c, int64_t l) { return op_elem(B, ldb, transb, l, c); });
}

void ozaki2_dgemm(Op transa, Op transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A, int64_t lda,
                  const double* B, int64_t ldb, double beta, double* C, int64_t ldc, int moduli) {
  check_args(transa, transb, m, n, k, lda, ldb, ldc, moduli);
  if (m == 0 || n == 0) return;
  const bool read_c = beta != 0.0;
  if (k == 0 || alpha == 0.0) {
    for (int64_t c = 0; c < n; ++c)
      for (int64_t r = 0; r < m; ++r)
        C[r + c * ldc] = beta == 0.0 ? 0.0 : (beta == 1.0 ? C[r + c * ldc] : nm::mul_rn(beta, C[r + c * ldc]));
    return;
  }
  const nm::Ozaki2Constants& cst = nm::ozaki2_constants(moduli);
  const Ozaki2Operand a = ozaki2_rows_of_op_a(transa, m, k, A, lda, moduli);
  const Ozaki2Operand b = ozaki2_cols_of_op_b(transb, k, n, B, ldb, moduli);
  detail::parallel_for(n, [&](int64_t c0, int64_t c1) {
    std::vector<int32_t> u(static_cast<size_t>(moduli), 0);
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = 0; r < m; ++r) {
        double acc;
        if (a.nonfinite[r] || b.nonfinite[c]) {
          acc = special_dot(transa, A, lda, transb, B, ldb, r, c, k);
        } else {
          for (int i = 0; i < moduli; ++i) {
            const int8_t* x = a.residues.data() + (size_t(i) * size_t(m) + size_t(r)) * size_t(k);
            const int8_t* y = b.residues.data() + (size_t(i) * size_t(n) + size_t(c)) * size_t(k);
            int64_t sum = 0;
            for (int64_t l = 0; l < k; ++l) sum += int64_t(x[l]) * int64_t(y[l]);
            u[size_t(i)] = nm::sym_mod(sum, cst.p[i]);
          }
          const double y = nm::oz2_reconstruct(cst, [&](int i) { return u[size_t(i)]; });
          acc = nm::scale_pow2(y, -(a.shift[r] + b.shift[c]));
        }
        double& out = C[r + c * ldc];
        out = nm::apply_alpha_beta(alpha, acc, beta, read_c ? out : 0.0, read_c);
      }
  });
}

std::vector<double> ozaki2_truncation_bound(Op transa, Op transb, int64_t m, int64_t n, int64_t k, const double* A,
                                            int64_t lda, const double* B, int64_t ldb, int moduli) {
  check_args(transa, transb, m, n, k, std::max<int64_t>(lda, 1), std::max<int64_t>(ldb, 1), std::max<int64_t>(m, 1),
             moduli);
  const Ozaki2Operand a = ozaki2_rows_of_op_a(transa, m, k, A, lda, moduli);
  const Ozaki2Operand b = ozaki2_cols_of_op_b(transb, k, n, B, ldb, moduli);
  std::vector<long double> sa(size_t(m), 0), sb(size_t(n), 0);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t l = 0; l < k; ++l) sa[size_t(r)] += std::fabs(static_cast<long double>(op_elem(A, lda, transa, r, l)));
  for (int64_t c = 0; c < n; ++c)
    for (int64_t l = 0; l < k; ++l) sb[size_t(c)] += std::fabs(static_cast<long double>(op_elem(B, ldb, transb, l, c)));
  std::vector<double> out(size_t(m * n));
  const nm::Ozaki2Constants& cst = nm::ozaki2_constants(moduli);
  // The reconstruction's absolute term, |A'B'| <= Q < P_hi / 4 (its relative 2u |A'B'| part is left
  // to the caller's u |A||B| allowance).
  const long double rec = nm::oz2_reconstruction_error(cst, 0.0);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) {
      // A' rounded to nearest: |a - a~| <= 2^-s / 2 (truncated where d < 0: < 2^-s); the cross term, at
      // most k / 2 2^-(s+t), is inside the k.
      const long double ea = a.nearest[r] ? 0.5L : 1.0L, eb = b.nearest[c] ? 0.5L : 1.0L;
      const long double bound = ea * std::ldexp(sb[size_t(c)], -a.shift[r]) + eb * std::ldexp(sa[size_t(r)], -b.shift[c]) +
                                std::ldexp(static_cast<long double>(k) + rec, -(a.shift[r] + b.shift[c]));
      out[size_t(r + c * m)] = static_cast<double>(bound * (1.0L + 1e-12L));
    }
  return out;
}

}  // namespace ref
}  // namespace ozgemm
