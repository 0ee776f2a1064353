// Accurate (double-double) GEMM, error metrics and test-matrix generators.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "ozgemm/numerics/fp.hpp"
#include "ozgemm/reference/reference.hpp"
#include "reference/parallel.hpp"

namespace ozgemm {
namespace ref {

namespace {

// Error-free transformations (Knuth TwoSum, FMA-based TwoProd). Host-only; the file is
// built with -ffp-contract=off so a + b and a * b stay separately rounded.
struct DD {
  double hi, lo;
};
inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}
inline DD two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}
inline DD dd_add(DD x, DD y) {
  DD s = two_sum(x.hi, y.hi);
  DD t = two_sum(x.lo, y.lo);
  s.lo += t.hi;
  s = two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return two_sum(s.hi, s.lo);
}
inline DD dd_mul_d(DD x, double y) {
  DD p = two_prod(x.hi, y);
  p.lo += x.lo * y;
  return two_sum(p.hi, p.lo);
}

}  // namespace

AccurateResult accurate_gemm(Op transa, Op transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A,
                             int64_t lda, const double* B, int64_t ldb, double beta, const double* C0, int64_t ldc0) {
  // C0 is read only when beta != 0: otherwise its leading dimension is not checked.
  const std::string why =
      check_shape(gemm_shape(transa, transb, m, n, k, lda, ldb, beta != 0.0 ? ldc0 : std::max<int64_t>(1, m)));
  if (!why.empty()) throw std::invalid_argument(why);
  AccurateResult res;
  res.m = m;
  res.n = n;
  res.hi.assign(m * n, 0.0);
  res.lo.assign(m * n, 0.0);
  res.absprod.assign(m * n, 0.0);
  const bool use_ab = alpha != 0.0 && k > 0;
  detail::parallel_for(n, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = 0; r < m; ++r) {
        DD acc{0.0, 0.0};
        double absacc = 0.0;
        bool special = false;
        double plain = 0.0;  // IEEE sum, used only when an input is non-finite
        if (use_ab) {
          for (int64_t l = 0; l < k; ++l) {
            const double x = op_elem(A, lda, transa, r, l), y = op_elem(B, ldb, transb, l, c);
            if (!numerics::is_finite(x) || !numerics::is_finite(y)) special = true;
            plain += x * y;
            acc = dd_add(acc, two_prod(x, y));
            absacc += std::fabs(x) * std::fabs(y);
          }
        }
        DD out = use_ab ? dd_mul_d(acc, alpha) : DD{0.0, 0.0};
        double absout = std::fabs(alpha) * absacc;
        double cold = 0.0;
        if (beta != 0.0) {
          cold = C0[r + c * ldc0];
          out = dd_add(out, two_prod(beta, cold));
          absout += std::fabs(beta) * std::fabs(cold);
        }
        if (special || !std::isfinite(out.hi)) {
          // Non-finite: the class native arithmetic gives.
          const double v = (use_ab ? alpha * plain : 0.0) + (beta != 0.0 ? beta * cold : 0.0);
          out = {v, 0.0};
        }
        res.hi[r + c * m] = out.hi;
        res.lo[r + c * m] = out.lo;
        res.absprod[r + c * m] = absout;
      }
  });
  return res;
}

ErrorMetrics compare(const double* C, int64_t ldc, const AccurateResult& ref) {
  ErrorMetrics e;
  long double num = 0, den = 0;
  for (int64_t c = 0; c < ref.n; ++c)
    for (int64_t r = 0; r < ref.m; ++r) {
      const double x = C[r + c * ldc];
      const double hi = ref.hi[r + c * ref.m], lo = ref.lo[r + c * ref.m];
      const bool xf = std::isfinite(x), rf = std::isfinite(hi);
      if (!xf || !rf) {
        const bool same = (!xf && !rf) && ((std::isnan(x) && std::isnan(hi)) || x == hi);
        if (!same) ++e.nonfinite_mismatch;
        continue;
      }
      ++e.compared;
      const double diff = std::fabs((x - hi) - lo);
      const double refv = std::fabs(hi);
      num += static_cast<long double>(diff) * diff;
      den += static_cast<long double>(refv) * refv;
      const double ap = ref.absprod[r + c * ref.m];
      if (diff > 0) {
        e.componentwise = std::max(e.componentwise, ap > 0 ? diff / ap : std::numeric_limits<double>::infinity());
        e.elementwise = std::max(e.elementwise, refv > 0 ? diff / refv : std::numeric_limits<double>::infinity());
      }
    }
  e.normwise = den > 0 ? static_cast<double>(std::sqrt(num / den)) : (num > 0 ? INFINITY : 0.0);
  return e;
}

void fill_phi(double* a, int64_t rows, int64_t cols, int64_t ld, double phi, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) {
      double v;
      if (phi < 0) {
        v = normal(rng);
      } else {
        const double u = unif(rng) - 0.5;
        v = u * std::exp(phi * normal(rng));
      }
      a[r + c * ld] = v;
    }
}

void fill_integers(double* a, int64_t rows, int64_t cols, int64_t ld, int64_t bound, std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> dist(-bound, bound);
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) a[r + c * ld] = static_cast<double>(dist(rng));
}

std::vector<double> random_matrix(int64_t rows, int64_t cols, double phi, std::mt19937_64& rng) {
  std::vector<double> v(static_cast<size_t>(std::max<int64_t>(1, rows * cols)));
  fill_phi(v.data(), rows, cols, std::max<int64_t>(1, rows), phi, rng);
  return v;
}

}  // namespace ref
}  // namespace ozgemm
