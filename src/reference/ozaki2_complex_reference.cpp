// Host reference of the complex Ozaki-II scheme (ozgemm/reference/ozaki2_complex.hpp), from the shared
// numerics (ozgemm/numerics/ozaki2_complex.hpp).
#include "ozgemm/reference/ozaki2_complex.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "ozgemm/problem.hpp"
#include "ozgemm/reference/reference.hpp"
#include "reference/parallel.hpp"
#include "reference/row_scan.hpp"

namespace ozgemm {
namespace ref {

namespace nm = ozgemm::numerics;

namespace {

nm::ComplexF64 to_f64(zcomplex z) { return nm::ComplexF64{z.real(), z.imag()}; }
zcomplex of_f64(nm::ComplexF64 z) { return zcomplex(z.re, z.im); }

// The shape rules are the real ones (op C transposes like op T).
Op shape_op(ComplexOp op) { return nm::oz2c_transposes(op) ? Op::T : Op::N; }
void check_shape_args(ComplexOp ta, ComplexOp tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                      int64_t ldc) {
  const std::string why = check_shape(gemm_shape(shape_op(ta), shape_op(tb), m, n, k, lda, ldb, ldc));
  if (!why.empty()) throw std::invalid_argument(why);
}
void check_moduli(int moduli) {
  if (moduli < nm::kMinModuli || moduli > nm::kMaxModuli)
    throw std::invalid_argument("moduli must be in " + std::to_string(nm::kMinModuli) + ".." +
                                std::to_string(nm::kMaxModuli));
}
void check_op(ComplexOp op) {
  if (op != ComplexOp::N && op != ComplexOp::T && op != ComplexOp::C)
    throw std::invalid_argument("op must be N, T or C");
}

// Part t of element l (t even: Re of l = t / 2, odd: Im): the 2k real parts of a complex row, on which
// the real scheme's row scan and statistics run unchanged.
template <class Get>
auto parts_of(Get get) {
  return [get](int64_t r, int64_t t) {
    const zcomplex v = get(r, t / 2);
    return t % 2 ? v.imag() : v.real();
  };
}

// Step 1 and the residues of step 2 (numerics/ozaki2_complex.hpp) with the constants c.
template <class Get>
Ozaki2ComplexOperand scale(int64_t rows, int64_t k, const nm::Ozaki2Constants& c, Get get) {
  Ozaki2ComplexOperand o;
  o.rows = rows;
  o.k = k;
  o.moduli = c.n;
  o.shift.assign(size_t(rows), 0);
  o.nearest.assign(size_t(rows), 0);
  o.nonfinite.assign(size_t(rows), 0);
  o.re.assign(size_t(c.n) * size_t(rows) * size_t(k), 0);
  o.im.assign(o.re.size(), 0);
  const auto part = parts_of(get);
  detail::parallel_for(rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const detail::RowScan row = detail::scan_row(r, 2 * k, part);
      const int32_t s0 = nm::shift_from_max(row.max_abs) - 1;
      int64_t S = 0;
      for (int64_t t = 0; t < 2 * k; ++t) {
        const double v = part(r, t);
        if (nm::is_finite(v)) S += nm::oz2_norm_term(v, s0);
      }
      const nm::Oz2RowScaling rs = nm::oz2_row_scaling(s0, S, c);
      const int32_t s = rs.shift;
      const bool nearest = rs.nearest;
      o.shift[size_t(r)] = s;
      o.nearest[size_t(r)] = nearest;
      o.nonfinite[size_t(r)] = row.nonfinite;
      for (int64_t l = 0; l < k; ++l) {
        const double vr = part(r, 2 * l), vi = part(r, 2 * l + 1);
        const double xr = nm::is_finite(vr) ? vr : 0.0, xi = nm::is_finite(vi) ? vi : 0.0;
        for (int i = 0; i < c.n; ++i) {
          const size_t at = (size_t(i) * size_t(rows) + size_t(r)) * size_t(k) + size_t(l);
          o.re[at] = static_cast<int8_t>(nm::oz2_scaled_residue(xr, s, c.p[i], nearest));
          o.im[at] = static_cast<int8_t>(nm::oz2_scaled_residue(xi, s, c.p[i], nearest));
        }
      }
    }
  });
  return o;
}

// The two planes (x0, x1) of modulus i's residues of an operand: rows x k each.
struct Planes {
  std::vector<int8_t> x0, x1;
};
Planes planes_of(const Ozaki2ComplexOperand& o, int i) {
  const nm::Oz2cModulus md = nm::oz2c_modulus(i);
  const size_t size = size_t(o.rows) * size_t(o.k), base = size_t(i) * size;
  Planes pl;
  pl.x0.resize(size);
  pl.x1.resize(size);
  for (size_t e = 0; e < size; ++e) {
    const nm::Oz2cPlanes x = nm::oz2c_forward(o.re[base + e], o.im[base + e], md);
    pl.x0[e] = x.x0;
    pl.x1[e] = x.x1;
  }
  return pl;
}

int64_t dot_i8(const int8_t* x, const int8_t* y, int64_t k) {
  int64_t sum = 0;
  for (int64_t l = 0; l < k; ++l) sum += int64_t(x[l]) * int64_t(y[l]);
  return sum;
}

// Applies BLAS's quick return or the product: acc(r, c) for the entries, then alpha/beta.
template <class Acc>
void write_c(int64_t m, int64_t n, zcomplex alpha, zcomplex beta, zcomplex* C, int64_t ldc, Acc acc) {
  const bool read_c = beta != zcomplex(0.0, 0.0);
  detail::parallel_for(n, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = 0; r < m; ++r) {
        zcomplex& out = C[r + c * ldc];
        out = of_f64(nm::oz2c_apply_alpha_beta(to_f64(alpha), acc(r, c), to_f64(beta),
                                               read_c ? to_f64(out) : nm::ComplexF64{0.0, 0.0}, read_c));
      }
  });
}
// alpha == 0 or k == 0 (C = beta C); true when it applied.
bool quick_return(int64_t m, int64_t n, int64_t k, zcomplex alpha, zcomplex beta, zcomplex* C, int64_t ldc) {
  if (k != 0 && alpha != zcomplex(0.0, 0.0)) return false;
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) C[r + c * ldc] = of_f64(nm::oz2c_scale_c(to_f64(beta), to_f64(C[r + c * ldc])));
  return true;
}

// (|op(A)||op(B)|)_rc with complex moduli, summed in long double.
long double abs_product(ComplexOp ta, const zcomplex* A, int64_t lda, ComplexOp tb, const zcomplex* B, int64_t ldb,
                        int64_t r, int64_t c, int64_t k) {
  long double s = 0;
  for (int64_t l = 0; l < k; ++l)
    s += std::abs(std::complex<long double>(op_zelem(A, lda, ta, r, l))) *
         std::abs(std::complex<long double>(op_zelem(B, ldb, tb, l, c)));
  return s;
}

nm::ComplexF64 special_dot(ComplexOp ta, const zcomplex* A, int64_t lda, ComplexOp tb, const zcomplex* B, int64_t ldb,
                           int64_t r, int64_t c, int64_t k) {
  nm::ComplexF64 acc{0.0, 0.0};
  for (int64_t l = 0; l < k; ++l)
    acc = nm::oz2c_special_accumulate(acc, to_f64(op_zelem(A, lda, ta, r, l)), to_f64(op_zelem(B, ldb, tb, l, c)));
  return acc;
}

}  // namespace

Ozaki2ComplexOperand ozaki2_complex_rows_of_op_a(ComplexOp transa, int64_t m, int64_t k, const zcomplex* A,
                                                 int64_t lda, const nm::Ozaki2Constants& c) {
  return scale(m, k, c, [=](int64_t r, int64_t l) { return op_zelem(A, lda, transa, r, l); });
}

Ozaki2ComplexOperand ozaki2_complex_cols_of_op_b(ComplexOp transb, int64_t k, int64_t n, const zcomplex* B,
                                                 int64_t ldb, const nm::Ozaki2Constants& c) {
  return scale(n, k, c, [=](int64_t col, int64_t l) { return op_zelem(B, ldb, transb, l, col); });
}

void ozaki2_complex_reference(ComplexOp transa, ComplexOp transb, int64_t m, int64_t n, int64_t k, zcomplex alpha,
                              const zcomplex* A, int64_t lda, const zcomplex* B, int64_t ldb, zcomplex beta,
                              zcomplex* C, int64_t ldc, int moduli) {
  check_op(transa);
  check_op(transb);
  check_shape_args(transa, transb, m, n, k, lda, ldb, ldc);
  check_moduli(moduli);
  if (m == 0 || n == 0 || quick_return(m, n, k, alpha, beta, C, ldc)) return;
  const nm::Ozaki2Constants& cst = nm::ozaki2_complex_constants(moduli);
  const Ozaki2ComplexOperand a = ozaki2_complex_rows_of_op_a(transa, m, k, A, lda, cst);
  const Ozaki2ComplexOperand b = ozaki2_complex_cols_of_op_b(transb, k, n, B, ldb, cst);
  std::vector<Planes> pa, pb;
  for (int i = 0; i < moduli; ++i) {
    pa.push_back(planes_of(a, i));
    pb.push_back(planes_of(b, i));
  }
  // Re and Im residues per entry and modulus: (i * n + c) * m + r.
  std::vector<int32_t> res_re(size_t(moduli) * size_t(m) * size_t(n)), res_im(res_re.size());
  detail::parallel_for(n, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = 0; r < m; ++r)
        for (int i = 0; i < moduli; ++i) {
          const size_t ra = size_t(r) * size_t(k), cb = size_t(c) * size_t(k);
          const nm::Oz2cModulus md = nm::oz2c_modulus(i);
          const int32_t u1 = nm::sym_mod(dot_i8(pa[size_t(i)].x0.data() + ra, pb[size_t(i)].x0.data() + cb, k), md.p);
          const int32_t u2 = nm::sym_mod(dot_i8(pa[size_t(i)].x1.data() + ra, pb[size_t(i)].x1.data() + cb, k), md.p);
          const nm::Oz2cResidue z = nm::oz2c_inverse(u1, u2, md);
          const size_t at = (size_t(i) * size_t(n) + size_t(c)) * size_t(m) + size_t(r);
          res_re[at] = z.re;
          res_im[at] = z.im;
        }
  });
  write_c(m, n, alpha, beta, C, ldc, [&](int64_t r, int64_t c) {
    if (a.nonfinite[size_t(r)] || b.nonfinite[size_t(c)]) return special_dot(transa, A, lda, transb, B, ldb, r, c, k);
    const auto at = [&](int i) { return (size_t(i) * size_t(n) + size_t(c)) * size_t(m) + size_t(r); };
    return nm::oz2c_reconstruct_n(
        cst, moduli, a.shift[size_t(r)] + b.shift[size_t(c)], [&](int i) { return res_re[at(i)]; },
        [&](int i) { return res_im[at(i)]; });
  });
}

std::vector<double> ozaki2_complex_error_bound(ComplexOp transa, ComplexOp transb, int64_t m, int64_t n, int64_t k,
                                               const zcomplex* A, int64_t lda, const zcomplex* B, int64_t ldb,
                                               int moduli) {
  check_shape_args(transa, transb, m, n, k, lda, ldb, std::max<int64_t>(m, 1));
  check_moduli(moduli);
  const nm::Ozaki2Constants& cst = nm::ozaki2_complex_constants(moduli);
  const Ozaki2ComplexOperand a = ozaki2_complex_rows_of_op_a(transa, m, k, A, lda, cst);
  const Ozaki2ComplexOperand b = ozaki2_complex_cols_of_op_b(transb, k, n, B, ldb, cst);
  // sum_l |a_l| per row of op(A), sum_l |b_l| per column of op(B).
  std::vector<long double> sa(size_t(m), 0), sb(size_t(n), 0);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t l = 0; l < k; ++l) sa[size_t(r)] += std::abs(std::complex<long double>(op_zelem(A, lda, transa, r, l)));
  for (int64_t c = 0; c < n; ++c)
    for (int64_t l = 0; l < k; ++l) sb[size_t(c)] += std::abs(std::complex<long double>(op_zelem(B, ldb, transb, l, c)));
  const long double u = std::ldexp(1.0L, -53), sqrt2 = std::sqrt(2.0L);
  const long double rec = sqrt2 * static_cast<long double>(cst.recon_abs_u) * u;
  std::vector<double> out(size_t(m * n));
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) {
      const long double abs_ab = abs_product(transa, A, lda, transb, B, ldb, r, c, k);
      const int32_t s = a.shift[size_t(r)], t = b.shift[size_t(c)];
      // Rounded to nearest: |a - a~| <= (sqrt2/2) 2^-s (truncated where d < 0: < sqrt2 2^-s), and the
      // cross term sum_l e_a e_b <= k 2^-(s+t).
      const long double ea = a.nearest[size_t(r)] ? sqrt2 / 2 : sqrt2, eb = b.nearest[size_t(c)] ? sqrt2 / 2 : sqrt2;
      const long double bound = ea * std::ldexp(sb[size_t(c)], -s) + eb * std::ldexp(sa[size_t(r)], -t) +
                                std::ldexp(rec + static_cast<long double>(k), -(s + t)) + 2.02L * u * abs_ab;
      out[size_t(r + c * m)] = static_cast<double>(bound * (1.0L + 1e-12L));
    }
  return out;
}

void plain_zgemm(ComplexOp transa, ComplexOp transb, int64_t m, int64_t n, int64_t k, zcomplex alpha,
                 const zcomplex* A, int64_t lda, const zcomplex* B, int64_t ldb, zcomplex beta, zcomplex* C,
                 int64_t ldc) {
  check_op(transa);
  check_op(transb);
  check_shape_args(transa, transb, m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0 || quick_return(m, n, k, alpha, beta, C, ldc)) return;
  write_c(m, n, alpha, beta, C, ldc, [&](int64_t r, int64_t c) {
    nm::ComplexF64 acc{0.0, 0.0};
    for (int64_t l = 0; l < k; ++l) {
      const nm::ComplexF64 t =
          nm::oz2c_mul(to_f64(op_zelem(A, lda, transa, r, l)), to_f64(op_zelem(B, ldb, transb, l, c)));
      acc = nm::ComplexF64{nm::add_rn(acc.re, t.re), nm::add_rn(acc.im, t.im)};
    }
    return acc;
  });
}

ComplexAccurateResult accurate_zgemm(ComplexOp transa, ComplexOp transb, int64_t m, int64_t n, int64_t k,
                                     const zcomplex* A, int64_t lda, const zcomplex* B, int64_t ldb) {
  check_shape_args(transa, transb, m, n, k, lda, ldb, std::max<int64_t>(m, 1));
  // x_re = [Ar, -Ai], x_im = [Ar, Ai] (m x 2k); y = [Br; Bi], y_swap = [Bi; Br] (2k x n).
  const int64_t k2 = std::max<int64_t>(2 * k, 1), mm = std::max<int64_t>(m, 1);
  std::vector<double> x_re(size_t(mm * k2)), x_im(x_re.size()), y(size_t(k2 * n)), y_swap(y.size());
  for (int64_t l = 0; l < k; ++l)
    for (int64_t r = 0; r < m; ++r) {
      const zcomplex v = op_zelem(A, lda, transa, r, l);
      x_re[size_t(r + l * mm)] = x_im[size_t(r + l * mm)] = v.real();
      x_re[size_t(r + (k + l) * mm)] = -v.imag();
      x_im[size_t(r + (k + l) * mm)] = v.imag();
    }
  for (int64_t c = 0; c < n; ++c)
    for (int64_t l = 0; l < k; ++l) {
      const zcomplex v = op_zelem(B, ldb, transb, l, c);
      y[size_t(l + c * k2)] = y_swap[size_t(k + l + c * k2)] = v.real();
      y[size_t(k + l + c * k2)] = y_swap[size_t(l + c * k2)] = v.imag();
    }
  const AccurateResult re = accurate_gemm(Op::N, Op::N, m, n, 2 * k, 1.0, x_re.data(), mm, y.data(), k2, 0.0,
                                          nullptr, mm);
  const AccurateResult im = accurate_gemm(Op::N, Op::N, m, n, 2 * k, 1.0, x_im.data(), mm, y_swap.data(), k2, 0.0,
                                          nullptr, mm);
  ComplexAccurateResult out{m, n, re.hi, re.lo, im.hi, im.lo, std::vector<double>(size_t(m * n), 0.0)};
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r)
      out.absprod[size_t(r + c * m)] = static_cast<double>(abs_product(transa, A, lda, transb, B, ldb, r, c, k));
  return out;
}

std::vector<double> complex_errors(const zcomplex* C, int64_t ldc, const ComplexAccurateResult& ref) {
  std::vector<double> e(size_t(ref.m * ref.n));
  for (int64_t c = 0; c < ref.n; ++c)
    for (int64_t r = 0; r < ref.m; ++r) {
      const size_t at = size_t(r + c * ref.m);
      const zcomplex x = C[r + c * ldc];
      e[at] = std::hypot((x.real() - ref.re_hi[at]) - ref.re_lo[at], (x.imag() - ref.im_hi[at]) - ref.im_lo[at]);
    }
  return e;
}

namespace {
// The real statistics of the 2k parts (rows x 2k as a real matrix, parts interleaved: shift, flag, q,
// S), then each element's magnitude digit and U's terms from the element (oz2c_magnitude_terms, a
// non-finite part as 0).
template <class Get>
OperandStats complex_stats(int64_t rows, int64_t k, Get get) {
  const int64_t ld = std::max<int64_t>(rows, 1);
  std::vector<double> parts(size_t(ld * 2 * k));
  const auto part = parts_of(get);
  for (int64_t t = 0; t < 2 * k; ++t)
    for (int64_t r = 0; r < rows; ++r) parts[size_t(r + t * ld)] = part(r, t);
  OperandStats s = stats_rows_of_op_a(Op::N, rows, 2 * k, parts.data(), ld);
  std::vector<uint8_t> mag(size_t(rows * k));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t U = 0;
    for (int64_t l = 0; l < k; ++l) {
      const double re = part(r, 2 * l), im = part(r, 2 * l + 1);
      const nm::MagnitudeTerms t = nm::oz2c_magnitude_terms(nm::is_finite(re) ? re : 0.0, nm::is_finite(im) ? im : 0.0,
                                                            s.shift[size_t(r)]);
      mag[size_t(r * k + l)] = static_cast<uint8_t>(t.digit);
      U += t.unit;
    }
    s.U[size_t(r)] = U;
  }
  s.mag = std::move(mag);
  s.mag_low.clear();
  s.k = k;
  return s;
}
}  // namespace

OperandStats complex_stats_rows_of_op_a(ComplexOp transa, int64_t m, int64_t k, const zcomplex* A, int64_t lda) {
  return complex_stats(m, k, [=](int64_t r, int64_t l) { return op_zelem(A, lda, transa, r, l); });
}

OperandStats complex_stats_cols_of_op_b(ComplexOp transb, int64_t k, int64_t n, const zcomplex* B, int64_t ldb) {
  return complex_stats(n, k, [=](int64_t c, int64_t l) { return op_zelem(B, ldb, transb, l, c); });
}

std::vector<double> oz2c_entry_ratios(const OperandStats& a, const OperandStats& b, const std::vector<int64_t>& P,
                                      int moduli) {
  const nm::Ozaki2Constants& c = nm::ozaki2_complex_constants(moduli);
  const double cross = nm::oz2c_rounding_cross(a.k);
  return oz2_entry_ratios_with(
      a, b, P, c, [cross](int32_t q, int32_t d) { return nm::oz2c_side(q, d, cross); }, nm::oz2c_recon_abs_u(c));
}

Ozaki2Decision decide_complex_moduli(ComplexOp transa, ComplexOp transb, int64_t m, int64_t n, int64_t k,
                                     const zcomplex* A, int64_t lda, const zcomplex* B, int64_t ldb) {
  if (m < 1 || n < 1 || k < 1) throw std::invalid_argument("decide_complex_moduli: m, n, k must be >= 1");
  check_shape_args(transa, transb, m, n, k, lda, ldb, m);
  const OperandStats a = complex_stats_rows_of_op_a(transa, m, k, A, lda);
  const OperandStats b = complex_stats_cols_of_op_b(transb, k, n, B, ldb);
  const std::vector<int64_t> P = magnitude_product(a, b);
  return smallest_moduli_meeting(k, [&](int moduli) { return oz2c_entry_ratios(a, b, P, moduli); });
}

}  // namespace ref
}  // namespace ozgemm
