// CPU tests of the host reference (src/host_reference.cpp, src/accurate_reference.cpp):
// ref::ozaki_dgemm against exact integer products, the double-double accurate_gemm, the
// plain FP64 triple loop and a derived per-entry error bound; BLAS semantics (transposes,
// leading dimensions, alpha/beta, quick returns, argument errors); special values; and the
// documented reconstruction order, recomputed from the exposed phases.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "ozgemm/numerics/ozaki1.hpp"
#include "ozgemm/reference/reference.hpp"
#include "test_util.hpp"

namespace nm = ozgemm::numerics;
namespace ref = ozgemm::ref;
using ozgemm::Op;
using oztest::bits;
using oztest::Mat;
using oztest::same_bits;

namespace {

const Op kOps[2] = {Op::N, Op::T};

Mat rand_phi(int64_t rows, int64_t cols, double phi, std::mt19937_64& rng, int64_t ld = 0,
             double pad = oztest::kNaN) {
  Mat a(rows, cols, ld > 0 ? ld : std::max<int64_t>(1, rows), pad);
  ref::fill_phi(a.data(), rows, cols, a.ld, phi, rng);
  return a;
}

Mat rand_int(int64_t rows, int64_t cols, int64_t bound, std::mt19937_64& rng) {
  Mat a(rows, cols, oztest::kNaN);
  ref::fill_integers(a.data(), rows, cols, a.ld, bound, rng);
  return a;
}

// Stores op(X) = opx as X (transposed copy when t == T).
Mat store_as(const Mat& opx, Op t) { return t == Op::N ? opx : opx.transposed(); }

// Runs ozaki_dgemm. With beta == 0 the output is poisoned with a NaN marker first (the
// result must overwrite every entry); otherwise C starts as a copy of c0.
Mat run_ozaki(Op ta, Op tb, int64_t m, int64_t n, int64_t k, double alpha, const Mat& A, const Mat& B, double beta,
              const Mat* c0, int s) {
  Mat C = (beta != 0.0 && c0) ? *c0 : Mat(m, n, oztest::marker_nan());
  ref::ozaki_dgemm(ta, tb, m, n, k, alpha, A.data(), A.ld, B.data(), B.ld, beta, C.data(), C.ld, s);
  return C;
}
Mat run_plain(Op ta, Op tb, int64_t m, int64_t n, int64_t k, double alpha, const Mat& A, const Mat& B, double beta,
              const Mat* c0) {
  Mat C = (beta != 0.0 && c0) ? *c0 : Mat(m, n, oztest::marker_nan());
  ref::plain_dgemm(ta, tb, m, n, k, alpha, A.data(), A.ld, B.data(), B.ld, beta, C.data(), C.ld);
  return C;
}
ref::AccurateResult run_accurate(Op ta, Op tb, int64_t m, int64_t n, int64_t k, double alpha, const Mat& A,
                                 const Mat& B, double beta = 0.0, const Mat* c0 = nullptr) {
  return ref::accurate_gemm(ta, tb, m, n, k, alpha, A.data(), A.ld, B.data(), B.ld, beta, c0 ? c0->data() : nullptr,
                            c0 ? c0->ld : 1);
}

// Per-entry error bound of the Ozaki-I scheme for alpha = 1, beta = 0 (no over/underflow):
//   |C_rc - (AB)_rc| <= k * maxA_r * maxB_c * [ (s + 3) 2^(3 - 8s) + (s + 2) 2^-50 + 2^-100 ]
// where maxA_r = max_l |op(A)(r, l)|, maxB_c = max_l |op(B)(l, c)|. Derivation (numerics.hpp):
//   * scales: alpha_r = 2^-shift_r with maxA_r * 2^shift_r in (63.5, 127], so
//     alpha_r beta_c < maxA_r maxB_c / 63.5^2 < maxA_r maxB_c 2^-11.97;
//   * truncation: |a - a~| < alpha 2^(-8(s-1)), |a~| <= |a| <= 127 alpha, so per product
//     |ab - a~b~| < 254 * 256 alpha beta 2^-8s;
//   * dropped triangle i + j >= s (both digits are low digits, |digit| <= 128): per product
//     <= 2^14 alpha beta sum_{d>=s} (2s-1-d) 2^-8d <= 1.004 (s-1) 2^(14-8s) alpha beta;
//     together: k alpha beta 2^(14-8s) (3.97 + 1.004 (s-1)) <= k maxA maxB (s+3) 2^(2.03-8s);
//   * FP64: D_d -> double and the power-of-two scaling are exact here; the s-term recursive
//     sum errs by <= gamma_{s-1} sum_d |t_d| <= (s-1) 2^-53 * 1.008 * 2^14 k alpha beta
//     <= (s-1) * 4.1 * 2^-53 k maxA maxB; alpha = 1 is exact;
//   * accurate_gemm itself is good to ~2^-100 of sum |a||b| <= k maxA maxB.
// The constants above (8 for 4.08, 8 for 4.1) leave a factor ~2 of slack.
struct EntryBound {
  std::vector<double> maxA, maxB;  // per row of op(A), per column of op(B)
  int64_t k = 0;
  int s = 0;
  double subnormal_abs = 0;  // extra absolute term where results underflow (see the test)
  double operator()(int64_t r, int64_t c) const {
    const double rel = (s + 3) * std::ldexp(1.0, 3 - 8 * s) + (s + 2) * std::ldexp(1.0, -50) + std::ldexp(1.0, -100);
    return static_cast<double>(k) * maxA[r] * maxB[c] * rel + subnormal_abs;
  }
};
EntryBound make_bound(Op ta, Op tb, int64_t m, int64_t n, int64_t k, const Mat& A, const Mat& B, int s) {
  EntryBound b;
  b.k = k;
  b.s = s;
  b.maxA.assign(m, 0.0);
  b.maxB.assign(n, 0.0);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t l = 0; l < k; ++l) b.maxA[r] = std::max(b.maxA[r], std::fabs(ozgemm::op_elem(A.data(), A.ld, ta, r, l)));
  for (int64_t c = 0; c < n; ++c)
    for (int64_t l = 0; l < k; ++l) b.maxB[c] = std::max(b.maxB[c], std::fabs(ozgemm::op_elem(B.data(), B.ld, tb, l, c)));
  return b;
}

// Checks every entry of C against the accurate result within the bound; returns the
// largest ratio |error| / bound seen.
double check_bound(const Mat& C, const ref::AccurateResult& acc, const EntryBound& bound, const char* what) {
  double worst = 0.0;
  for (int64_t c = 0; c < acc.n; ++c)
    for (int64_t r = 0; r < acc.m; ++r) {
      const double x = C.at(r, c);
      EXPECT_TRUE(std::isfinite(x)) << what << " (" << r << "," << c << ")";
      const double hi = acc.hi[r + c * acc.m], lo = acc.lo[r + c * acc.m];
      const double err = std::fabs((x - hi) - lo);
      const double b = bound(r, c);
      EXPECT_LE(err, b) << what << " entry (" << r << "," << c << "): C=" << x << " ref=" << hi;
      if (b > 0) worst = std::max(worst, err / b);
    }
  return worst;
}

bool all_finite(const Mat& C) {
  for (int64_t c = 0; c < C.cols; ++c)
    for (int64_t r = 0; r < C.rows; ++r)
      if (!std::isfinite(C.at(r, c))) return false;
  return true;
}

// Bitwise equality of the m x n parts of two matrices (leading dimensions may differ).
::testing::AssertionResult same_matrix(const Mat& X, const Mat& Y, int64_t m, int64_t n) {
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r)
      if (!same_bits(X.at(r, c), Y.at(r, c)))
        return ::testing::AssertionFailure() << "entry (" << r << "," << c << "): " << X.at(r, c) << " vs "
                                             << Y.at(r, c);
  return ::testing::AssertionSuccess();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Exactness on integer inputs.

TEST(OzakiExact, IntegersUpTo127AnySliceCount) {
  // |a|, |b| <= 127: every row max is <= 127, so shift >= 0 and a * 2^shift is an integer
  // held by the top digit alone; D_0 = the exact integer dot product, the other diagonals
  // are 0, and |D_0| <= k * 127^2 < 2^53: exact for every s >= 1.
  std::mt19937_64 rng(101);
  struct Shape {
    int64_t m, n, k;
  };
  for (Shape sh : {Shape{13, 11, 37}, Shape{1, 1, 1}, Shape{40, 7, 300}, Shape{2, 3, 5000}})
    for (Op ta : kOps)
      for (Op tb : kOps) {
        const Mat opA = rand_int(sh.m, sh.k, 127, rng), opB = rand_int(sh.k, sh.n, 127, rng);
        const Mat A = store_as(opA, ta), B = store_as(opB, tb);
        Mat exact(sh.m, sh.n, 0.0);
        for (int64_t c = 0; c < sh.n; ++c)
          for (int64_t r = 0; r < sh.m; ++r) {
            int64_t sum = 0;
            for (int64_t l = 0; l < sh.k; ++l)
              sum += static_cast<int64_t>(opA.at(r, l)) * static_cast<int64_t>(opB.at(l, c));
            exact.at(r, c) = static_cast<double>(sum);  // |sum| < 2^53: exact
          }
        const auto acc = run_accurate(ta, tb, sh.m, sh.n, sh.k, 1.0, A, B);
        for (int s : {1, 2, 3, 7, 20}) {
          const Mat C = run_ozaki(ta, tb, sh.m, sh.n, sh.k, 1.0, A, B, 0.0, nullptr, s);
          ASSERT_TRUE(same_matrix(C, exact, sh.m, sh.n)) << "s=" << s;
          for (int64_t q = 0; q < sh.m * sh.n; ++q) ASSERT_EQ(acc.lo[q], 0.0);
          const auto err = ref::compare(C.data(), C.ld, acc);
          EXPECT_EQ(err.normwise, 0.0);
          EXPECT_EQ(err.componentwise, 0.0);
          EXPECT_EQ(err.nonfinite_mismatch, 0);
        }
      }
}

TEST(OzakiExact, IntegersUpTo1000FromThreeSlices) {
  // |a| <= 1000: shift >= -3, so a * 2^(shift + 8) is an integer (two digits per value);
  // all products a_i b_j have i + j <= 2, kept for s >= 3: exact. With s = 2 the a_1 b_1
  // terms are dropped, so some entries must be inexact (shows the check has teeth).
  std::mt19937_64 rng(102);
  const int64_t m = 19, n = 23, k = 411;
  const Mat opA = rand_int(m, k, 1000, rng), opB = rand_int(k, n, 1000, rng);
  Mat exact(m, n, 0.0);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) {
      int64_t sum = 0;
      for (int64_t l = 0; l < k; ++l) sum += static_cast<int64_t>(opA.at(r, l)) * static_cast<int64_t>(opB.at(l, c));
      exact.at(r, c) = static_cast<double>(sum);
    }
  for (Op ta : kOps)
    for (Op tb : kOps) {
      const Mat A = store_as(opA, ta), B = store_as(opB, tb);
      for (int s = 3; s <= nm::kMaxSlices; ++s) {
        const Mat C = run_ozaki(ta, tb, m, n, k, 1.0, A, B, 0.0, nullptr, s);
        ASSERT_TRUE(same_matrix(C, exact, m, n)) << "s=" << s;
      }
      const Mat C2 = run_ozaki(ta, tb, m, n, k, 1.0, A, B, 0.0, nullptr, 2);
      EXPECT_FALSE(same_matrix(C2, exact, m, n)) << "s=2 cannot be exact for |a| up to 1000";
    }
  // Long k with tiny m, n: |D| up to 3 * 1e6 * 20000 needs int64 diagonal sums.
  const int64_t kl = 20000;
  const Mat a1 = rand_int(2, kl, 1000, rng), b1 = rand_int(kl, 3, 1000, rng);
  const Mat C = run_ozaki(Op::N, Op::N, 2, 3, kl, 1.0, a1, b1, 0.0, nullptr, 4);
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t r = 0; r < 2; ++r) {
      int64_t sum = 0;
      for (int64_t l = 0; l < kl; ++l) sum += static_cast<int64_t>(a1.at(r, l)) * static_cast<int64_t>(b1.at(l, c));
      EXPECT_EQ(C.at(r, c), static_cast<double>(sum));
    }
}

TEST(OzakiExact, DigitSumsBeyondInt32UseExactChunks) {
  // Values whose low digits are all -128 (the largest digit products, 2^14): with
  // k = 140000 the diagonal sums exceed 2^31, so any int32 accumulation over more than
  // numerics::kInt32ExactProducts products would wrap. Check D against a naive int64 sum
  // of the digits from numerics::slice_value, and the final result against accurate_gemm.
  const int64_t k = 140000;
  const int s = 5;
  Mat A(1, k, 0.0), B(k, 2, 0.0);
  const double x = -126.501953125;  // digits (-126, -128, -128) at shift 0
  for (int64_t l = 0; l < k; ++l) {
    A.at(0, l) = x;
    B.at(l, 0) = x;
    B.at(l, 1) = (l % 3 == 0) ? -x : x;
  }
  A.at(0, 0) = 127.0;  // row max 127: shift 0
  B.at(0, 0) = 127.0;
  B.at(1, 1) = -127.0;
  const auto a = ref::slice_rows_of_op_a(Op::N, 1, k, A.data(), A.ld, s);
  const auto b = ref::slice_cols_of_op_b(Op::N, k, 2, B.data(), B.ld, s);
  ASSERT_EQ(a.shift[0], 0);
  ASSERT_EQ(b.shift[0], 0);
  ASSERT_EQ(b.shift[1], 0);
  int8_t dx[s];
  nm::slice_value(x, 0, s, dx, 1);
  ASSERT_EQ(dx[0], -126);
  ASSERT_EQ(dx[1], -128);
  ASSERT_EQ(dx[2], -128);
  const std::vector<int64_t> D = ref::diagonal_sums(a, b);
  for (int64_t c = 0; c < 2; ++c)
    for (int d = 0; d < s; ++d) {
      int64_t want = 0;
      for (int64_t l = 0; l < k; ++l) {
        int8_t da[s], db[s];
        nm::slice_value(A.at(0, l), 0, s, da, 1);
        nm::slice_value(B.at(l, c), 0, s, db, 1);
        for (int i = 0; i <= d; ++i) want += int64_t(da[i]) * int64_t(db[d - i]);
      }
      EXPECT_EQ(D[(d * 2 + c) * 1 + 0], want) << "c=" << c << " d=" << d;
      if (d == 2 && c == 0) {
        EXPECT_GT(want, int64_t(INT32_MAX));
      }
    }
  Mat C(1, 2, oztest::marker_nan());
  ref::ozaki_dgemm(Op::N, Op::N, 1, 2, k, 1.0, A.data(), A.ld, B.data(), B.ld, 0.0, C.data(), C.ld, s);
  const auto acc = run_accurate(Op::N, Op::N, 1, 2, k, 1.0, A, B);
  // Every digit product is kept for s = 5 (i + j <= 4), so only the FP64 sum of 5 exact
  // terms and the final rounding remain: a few ulps.
  for (int c = 0; c < 2; ++c) EXPECT_LE(std::fabs(C.at(0, c) - acc.hi[c]), 8 * std::ldexp(std::fabs(acc.hi[c]), -52));
}

// ---------------------------------------------------------------------------------------------
// Accuracy.

TEST(OzakiAccuracy, ErrorDecreasesWithSlicesThenReachesTheFp64Floor) {
  // Each added slice adds 8 bits; the normwise error must fall by a large factor per slice
  // (we ask for 16x, the scheme gives ~256x) until it reaches the FP64 floor, and from 8
  // slices on it must stay at that floor (within a few units of 2^-53).
  std::mt19937_64 rng(201);
  const int64_t m = 48, n = 40, k = 256;
  for (double phi : {-1.0, 0.5, 2.0}) {
    const Mat A = rand_phi(m, k, phi, rng), B = rand_phi(k, n, phi, rng);
    const auto acc = run_accurate(Op::N, Op::N, m, n, k, 1.0, A, B);
    const Mat P = run_plain(Op::N, Op::N, m, n, k, 1.0, A, B, 0.0, nullptr);
    const auto plain_err = ref::compare(P.data(), P.ld, acc);
    const double plain_nw = plain_err.normwise;
    const double floor_nw = std::max(4 * plain_nw, std::ldexp(1.0, -50));
    std::vector<double> nw(13, 0.0), cw(13, 0.0);
    for (int s = 1; s <= 12; ++s) {
      const Mat C = run_ozaki(Op::N, Op::N, m, n, k, 1.0, A, B, 0.0, nullptr, s);
      const auto e = ref::compare(C.data(), C.ld, acc);
      ASSERT_EQ(e.nonfinite_mismatch, 0);
      nw[s] = e.normwise;
      cw[s] = e.componentwise;
    }
    for (int s = 1; s < 12; ++s) {
      if (nw[s + 1] > floor_nw) {
        EXPECT_LE(nw[s + 1], nw[s] / 16) << "phi=" << phi << " s=" << s + 1 << " (prev " << nw[s] << ")";
        EXPECT_LE(cw[s + 1], cw[s] / 16) << "phi=" << phi << " s=" << s + 1 << " (prev " << cw[s] << ")";
      }
    }
    for (int s = 8; s <= 12; ++s) EXPECT_LE(nw[s], floor_nw) << "phi=" << phi << " s=" << s;
    // From 9 slices on the truncation (< 2^-64 of the row/column maxima) is below FP64
    // rounding, and the s-term sum of rapidly decaying diagonals rounds about once, while the
    // plain k-term recursive sum accumulates ~sqrt(k) roundings: Ozaki is no worse.
    for (int s = 9; s <= 12; ++s)
      EXPECT_LE(cw[s], plain_err.componentwise) << "phi=" << phi << " s=" << s;
    // The very first slices are far from the floor (the decrease above is really tested).
    EXPECT_GT(nw[2], 1e4 * floor_nw) << "phi=" << phi;
  }
}

TEST(OzakiAccuracy, SevenSlicesNoWorseThanPlainFp64AtPhiHalf) {
  // At phi = 0.5 the row maxima are close to the typical magnitudes, so 7 slices (56 bits)
  // already beat the k-term FP64 recursive sum (componentwise error ~ sqrt(k) u).
  std::mt19937_64 rng(202);
  const int64_t m = 64, n = 64, k = 1024;
  const Mat A = rand_phi(m, k, 0.5, rng), B = rand_phi(k, n, 0.5, rng);
  const auto acc = run_accurate(Op::N, Op::N, m, n, k, 1.0, A, B);
  const Mat P = run_plain(Op::N, Op::N, m, n, k, 1.0, A, B, 0.0, nullptr);
  const Mat C = run_ozaki(Op::N, Op::N, m, n, k, 1.0, A, B, 0.0, nullptr, 7);
  const auto ep = ref::compare(P.data(), P.ld, acc), eo = ref::compare(C.data(), C.ld, acc);
  EXPECT_EQ(eo.nonfinite_mismatch, 0);
  EXPECT_GT(ep.componentwise, 0.0);
  EXPECT_LE(eo.componentwise, ep.componentwise) << "ozaki(7) " << eo.componentwise << " plain " << ep.componentwise;
  EXPECT_LE(eo.normwise, ep.normwise);
}

TEST(OzakiAccuracy, DerivedBoundHoldsForEveryPhiAndSliceCount) {
  std::mt19937_64 rng(203);
  const int64_t m = 24, n = 20, k = 300;
  for (double phi : {-1.0, 0.0, 0.5, 1.0, 2.0, 4.0}) {
    const Mat A = rand_phi(m, k, phi, rng), B = rand_phi(k, n, phi, rng);
    const auto acc = run_accurate(Op::N, Op::T, m, n, k, 1.0, A, B.transposed());
    for (int s : {1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 16, 20}) {
      const Mat Bt = B.transposed();
      const Mat C = run_ozaki(Op::N, Op::T, m, n, k, 1.0, A, Bt, 0.0, nullptr, s);
      const EntryBound bound = make_bound(Op::N, Op::T, m, n, k, A, Bt, s);
      const double worst = check_bound(C, acc, bound, "bound");
      // The bound must not be vacuous for few slices: the error reaches a visible part of it.
      if (s <= 3) {
        EXPECT_GT(worst, 1e-5) << "phi=" << phi << " s=" << s;
      }
    }
  }
}

TEST(OzakiAccuracy, ShapesPrimesTallWideAndKOne) {
  std::mt19937_64 rng(204);
  struct Shape {
    int64_t m, n, k;
  };
  for (Shape sh : {Shape{1, 1, 1}, Shape{37, 53, 29}, Shape{300, 3, 50}, Shape{3, 300, 50}, Shape{17, 13, 1},
                   Shape{1, 64, 200}, Shape{64, 1, 200}, Shape{5, 7, 997}})
    for (Op ta : kOps)
      for (Op tb : kOps) {
        const Mat opA = rand_phi(sh.m, sh.k, 0.5, rng), opB = rand_phi(sh.k, sh.n, 0.5, rng);
        const Mat A = store_as(opA, ta), B = store_as(opB, tb);
        const auto acc = run_accurate(ta, tb, sh.m, sh.n, sh.k, 1.0, A, B);
        for (int s : {1, 4, 8}) {
          const Mat C = run_ozaki(ta, tb, sh.m, sh.n, sh.k, 1.0, A, B, 0.0, nullptr, s);
          check_bound(C, acc, make_bound(ta, tb, sh.m, sh.n, sh.k, A, B, s), "shape");
          if (s == 8) {
            EXPECT_LE(ref::compare(C.data(), C.ld, acc).normwise, 1e-14);
          }
        }
      }
}

// ---------------------------------------------------------------------------------------------
// Special values and zeros.

TEST(OzakiSpecial, InfNaNStayInTheirRowsAndColumns) {
  std::mt19937_64 rng(301);
  const int64_t m = 12, n = 10, k = 15;
  const double inf = oztest::kInf, nan = oztest::kNaN;
  for (Op ta : kOps)
    for (Op tb : kOps)
      for (auto ab : {std::pair<double, double>{1.0, 0.0}, std::pair<double, double>{-0.5, 2.5}}) {
        const double alpha = ab.first, beta = ab.second;
        Mat opA = rand_phi(m, k, 0.0, rng), opB = rand_phi(k, n, 0.0, rng);
        Mat cleanA = opA, cleanB = opB;
        // Row 2 of op(A): +Inf at l = 4; op(B)(4, 7) = 0 makes entry (2, 7) NaN (Inf * 0).
        opA.at(2, 4) = inf;
        opB.at(4, 7) = cleanB.at(4, 7) = 0.0;
        // Row 5: NaN. Column 3 of op(B): NaN. Column 6: -Inf at l = 2; op(A)(0, 2) = 0 -> (0, 6) NaN.
        opA.at(5, 1) = nan;
        opB.at(8, 3) = nan;
        opB.at(2, 6) = -inf;
        opA.at(0, 2) = cleanA.at(0, 2) = 0.0;
        cleanA.at(2, 4) = 0.0;
        cleanA.at(5, 1) = 0.0;
        cleanB.at(8, 3) = 0.0;
        cleanB.at(2, 6) = 0.0;
        const Mat A = store_as(opA, ta), B = store_as(opB, tb);
        const Mat cA = store_as(cleanA, ta), cB = store_as(cleanB, tb);
        const Mat C0 = rand_phi(m, n, 0.0, rng);
        const Mat C = run_ozaki(ta, tb, m, n, k, alpha, A, B, beta, &C0, 6);
        const Mat P = run_plain(ta, tb, m, n, k, alpha, A, B, beta, &C0);
        const Mat Cc = run_ozaki(ta, tb, m, n, k, alpha, cA, cB, beta, &C0, 6);
        const auto acc = run_accurate(ta, tb, m, n, k, alpha, A, B, beta, &C0);
        EXPECT_EQ(ref::compare(C.data(), C.ld, acc).nonfinite_mismatch, 0);
        for (int64_t c = 0; c < n; ++c)
          for (int64_t r = 0; r < m; ++r) {
            const bool special = r == 2 || r == 5 || c == 3 || c == 6;
            const double x = C.at(r, c);
            if (special) {
              ASSERT_FALSE(std::isfinite(x)) << "(" << r << "," << c << ")";
              // Same class as native IEEE arithmetic (plain_dgemm): NaN, +Inf or -Inf.
              ASSERT_TRUE((std::isnan(x) && std::isnan(P.at(r, c))) || x == P.at(r, c))
                  << "(" << r << "," << c << "): " << x << " vs plain " << P.at(r, c);
              // And the documented special_dot value, scaled as BLAS.
              const double sd = ref::special_dot(ta, A.data(), A.ld, tb, B.data(), B.ld, r, c, k);
              const double want = nm::apply_alpha_beta(alpha, sd, beta, C0.at(r, c), beta != 0.0);
              ASSERT_TRUE((std::isnan(x) && std::isnan(want)) || x == want);
            } else {
              // The specials do not leak: bitwise what the zero-replaced matrices give.
              ASSERT_TRUE(same_bits(x, Cc.at(r, c))) << "(" << r << "," << c << "): " << x << " vs " << Cc.at(r, c);
            }
          }
        EXPECT_TRUE(std::isnan(C.at(2, 7)));
        EXPECT_TRUE(std::isnan(C.at(0, 6)));
        for (int64_t c = 0; c < n; ++c) EXPECT_TRUE(std::isnan(C.at(5, c)));
        for (int64_t r = 0; r < m; ++r) EXPECT_TRUE(std::isnan(C.at(r, 3)));
        // Row 2 away from the NaN columns: sign(alpha * op(B)(4, c)) * Inf.
        for (int64_t c : {int64_t(0), int64_t(1), int64_t(8)}) {
          const double sign = std::copysign(1.0, alpha * opB.at(4, c));
          EXPECT_EQ(C.at(2, c), sign * inf) << "c=" << c;
        }
      }
}

TEST(OzakiSpecial, ZeroRowsAndColumnsGiveExactZeros) {
  std::mt19937_64 rng(302);
  const int64_t m = 9, n = 8, k = 21;
  Mat A = rand_phi(m, k, 1.0, rng), B = rand_phi(k, n, 1.0, rng);
  for (int64_t l = 0; l < k; ++l) {
    A.at(3, l) = 0.0;
    B.at(l, 5) = (l % 2) ? 0.0 : -0.0;
  }
  const Mat C0 = rand_phi(m, n, 0.0, rng);
  for (int s : {1, 7, 20}) {
    const Mat C = run_ozaki(Op::N, Op::N, m, n, k, 1.0, A, B, 0.0, nullptr, s);
    const Mat Cb = run_ozaki(Op::N, Op::N, m, n, k, -0.5, A, B, 2.5, &C0, s);
    for (int64_t c = 0; c < n; ++c)
      for (int64_t r = 0; r < m; ++r) {
        if (r == 3 || c == 5) {
          EXPECT_EQ(C.at(r, c), 0.0) << r << "," << c;
          EXPECT_EQ(Cb.at(r, c), 2.5 * C0.at(r, c)) << r << "," << c;
        } else {
          EXPECT_NE(C.at(r, c), 0.0);
        }
      }
  }
  // All-zero operand.
  const Mat Z(m, k, 0.0);
  const Mat C = run_ozaki(Op::N, Op::N, m, n, k, 1.0, Z, B, 0.0, nullptr, 8);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) EXPECT_EQ(C.at(r, c), 0.0);
}

TEST(OzakiSpecial, ExtremeMagnitudes) {
  // Scales near DBL_MAX and in the subnormal range, with results that are representable.
  // For underflowing results the bound gets an absolute term: each of the s diagonal
  // conversions rounds once into the subnormal grid (<= 2^-1075), sums of subnormals are
  // exact, and accurate_gemm's two_prod loses <= 2^-1075 per product (k of them).
  std::mt19937_64 rng(303);
  struct Case {
    int ea, eb;        // A scaled by 2^ea, B by 2^eb
    bool underflows;   // products land in the subnormal range
  };
  const int64_t m = 16, n = 12, k = 24;
  for (Case cs : {Case{1000, 0, false}, Case{1015, -2, false}, Case{997, -1040, false}, Case{-1060, 0, true},
                  Case{-1000, -60, true}, Case{-1074 + 40, 30, false}, Case{500, 500, false}, Case{-520, -520, true}})
    for (int s : {8, 12, 20}) {
      Mat A = rand_phi(m, k, 0.5, rng), B = rand_phi(k, n, 0.5, rng);
      for (double& v : A.v) v = std::ldexp(v, cs.ea);
      for (double& v : B.v) v = std::ldexp(v, cs.eb);
      const Mat C = run_ozaki(Op::N, Op::N, m, n, k, 1.0, A, B, 0.0, nullptr, s);
      const auto acc = run_accurate(Op::N, Op::N, m, n, k, 1.0, A, B);
      ASSERT_TRUE(all_finite(C)) << "ea=" << cs.ea << " eb=" << cs.eb;
      EntryBound bound = make_bound(Op::N, Op::N, m, n, k, A, B, s);
      if (cs.underflows) bound.subnormal_abs = (s + k + 2) * std::numeric_limits<double>::denorm_min();
      check_bound(C, acc, bound, "extreme");
      const auto e = ref::compare(C.data(), C.ld, acc);
      EXPECT_EQ(e.nonfinite_mismatch, 0);
      if (!cs.underflows) {
        EXPECT_LE(e.normwise, 1e-14) << "ea=" << cs.ea << " eb=" << cs.eb;
      }
      // Results are not trivially zero.
      double mx = 0;
      for (int64_t q = 0; q < m * n; ++q) mx = std::max(mx, std::fabs(acc.hi[q]));
      EXPECT_GT(mx, 0.0);
    }
  // Single product exactly at the top of the range: 2^1023 * 1.5 (the result is finite).
  Mat a(1, 1, std::ldexp(1.0, 1023)), b(1, 1, 1.5);
  const Mat C = run_ozaki(Op::N, Op::N, 1, 1, 1, 1.0, a, b, 0.0, nullptr, 4);
  EXPECT_EQ(C.at(0, 0), std::ldexp(1.5, 1023));
  // Smallest subnormal times 1: exact.
  Mat a3(1, 1, std::numeric_limits<double>::denorm_min()), b3(1, 1, 1.0);
  EXPECT_EQ(run_ozaki(Op::N, Op::N, 1, 1, 1, 1.0, a3, b3, 0.0, nullptr, 1).at(0, 0),
            std::numeric_limits<double>::denorm_min());
}

TEST(OzakiSpecial, ResultNearDblMaxDoesNotOverflow) {
  // KNOWN BUG (reported): DBL_MAX * 1.0 is representable, and 7+ slices hold all 53 bits of
  // DBL_MAX, yet the result is +Inf for every s >= 2. DBL_MAX * 2^-1018 = 64 - 2^-47, whose
  // balanced digits are (64, -1, 0, ...): the top digit rounds up, so the d = 0 term
  // 64 * 64 * 2^(1018 - 6) = 2^1024 overflows on its own in the documented order, before
  // the negative lower diagonals are added. Native DGEMM gives DBL_MAX.
  Mat a(1, 1, DBL_MAX), b(1, 1, 1.0);
  double plain = 0;
  ref::plain_dgemm(Op::N, Op::N, 1, 1, 1, 1.0, a.data(), 1, b.data(), 1, 0.0, &plain, 1);
  ASSERT_EQ(plain, DBL_MAX);
  for (int s : {2, 8, 20}) {
    const double pos = run_ozaki(Op::N, Op::N, 1, 1, 1, 1.0, a, b, 0.0, nullptr, s).at(0, 0);
    const double neg = run_ozaki(Op::N, Op::N, 1, 1, 1, -1.0, a, b, 0.0, nullptr, s).at(0, 0);
    EXPECT_TRUE(std::isfinite(pos) && std::isfinite(neg)) << "s=" << s << ": " << pos << ", " << neg;
    if (s >= 7) {  // 8(s-1) >= 47 fraction bits: DBL_MAX is sliced exactly
      EXPECT_EQ(pos, DBL_MAX) << "s=" << s;
      EXPECT_EQ(neg, -DBL_MAX) << "s=" << s;
    }
  }
  // The same with a short dot product: sum of 4 * (DBL_MAX / 4) * 1 (exactly DBL_MAX).
  Mat a4(1, 4, DBL_MAX / 4), b4(4, 1, 1.0);
  EXPECT_EQ(run_ozaki(Op::N, Op::N, 1, 1, 4, 1.0, a4, b4, 0.0, nullptr, 8).at(0, 0), DBL_MAX);
}

// ---------------------------------------------------------------------------------------------
// BLAS semantics.

TEST(OzakiBlas, AllTransposeCombinationsAgreeBitwise) {
  std::mt19937_64 rng(401);
  const int64_t m = 23, n = 17, k = 41;
  const Mat opA = rand_phi(m, k, 2.0, rng), opB = rand_phi(k, n, 2.0, rng);
  const Mat C0 = rand_phi(m, n, 0.0, rng);
  for (int s : {3, 8}) {
    const Mat ref_nn = run_ozaki(Op::N, Op::N, m, n, k, -0.5, opA, opB, 2.5, &C0, s);
    const Mat plain_nn = run_plain(Op::N, Op::N, m, n, k, -0.5, opA, opB, 2.5, &C0);
    for (Op ta : kOps)
      for (Op tb : kOps) {
        const Mat A = store_as(opA, ta), B = store_as(opB, tb);
        EXPECT_TRUE(same_matrix(run_ozaki(ta, tb, m, n, k, -0.5, A, B, 2.5, &C0, s), ref_nn, m, n))
            << char(ta) << char(tb) << " s=" << s;
        EXPECT_TRUE(same_matrix(run_plain(ta, tb, m, n, k, -0.5, A, B, 2.5, &C0), plain_nn, m, n))
            << char(ta) << char(tb);
      }
  }
}

TEST(OzakiBlas, LeadingDimensionsLargerThanNeededPaddingUntouched) {
  std::mt19937_64 rng(402);
  const int64_t m = 13, n = 11, k = 19;
  const double pad = oztest::marker_nan();
  for (Op ta : kOps)
    for (Op tb : kOps)
      for (double beta : {0.0, 2.5}) {
        const Mat opA = rand_phi(m, k, 1.0, rng), opB = rand_phi(k, n, 1.0, rng);
        const Mat tightA = store_as(opA, ta), tightB = store_as(opB, tb);
        // Copies with extra rows of NaN padding.
        Mat A(tightA.rows, tightA.cols, tightA.rows + 3, pad), B(tightB.rows, tightB.cols, tightB.rows + 5, pad);
        for (int64_t c = 0; c < A.cols; ++c)
          for (int64_t r = 0; r < A.rows; ++r) A.at(r, c) = tightA.at(r, c);
        for (int64_t c = 0; c < B.cols; ++c)
          for (int64_t r = 0; r < B.rows; ++r) B.at(r, c) = tightB.at(r, c);
        const Mat A_before = A, B_before = B;
        const Mat C0 = rand_phi(m, n, 0.0, rng);
        Mat C(m, n, m + 4, pad);  // padding rows hold the marker; interior: marker or C0
        if (beta != 0.0)
          for (int64_t c = 0; c < n; ++c)
            for (int64_t r = 0; r < m; ++r) C.at(r, c) = C0.at(r, c);
        ref::ozaki_dgemm(ta, tb, m, n, k, 1.5, A.data(), A.ld, B.data(), B.ld, beta, C.data(), C.ld, 7);
        const Mat tight = run_ozaki(ta, tb, m, n, k, 1.5, tightA, tightB, beta, &C0, 7);
        EXPECT_TRUE(same_matrix(C, tight, m, n)) << char(ta) << char(tb) << " beta=" << beta;
        for (int64_t c = 0; c < n; ++c)
          for (int64_t r = 0; r < C.ld; ++r) {
            if (r < m)
              ASSERT_TRUE(std::isfinite(C.at(r, c)));
            else
              ASSERT_EQ(bits(C.at(r, c)), bits(pad)) << "C padding changed at (" << r << "," << c << ")";
          }
        for (size_t q = 0; q < A.v.size(); ++q) ASSERT_EQ(bits(A.v[q]), bits(A_before.v[q]));
        for (size_t q = 0; q < B.v.size(); ++q) ASSERT_EQ(bits(B.v[q]), bits(B_before.v[q]));
        // The padding of A and B was not read either (NaN would have spread).
        const Mat Cp = run_plain(ta, tb, m, n, k, 1.5, A, B, beta, &C0);
        EXPECT_TRUE(all_finite(Cp));
      }
}

TEST(OzakiBlas, AlphaZeroDoesNotReadAB) {
  const int64_t m = 7, n = 6, k = 5;
  const Mat A(m, k, oztest::kNaN), B(k, n, oztest::kInf);
  std::mt19937_64 rng(403);
  const Mat C0 = rand_phi(m, n, 0.0, rng);
  // beta = 2.5: C = 2.5 * C0.
  Mat C = run_ozaki(Op::N, Op::N, m, n, k, 0.0, A, B, 2.5, &C0, 8);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) ASSERT_TRUE(same_bits(C.at(r, c), 2.5 * C0.at(r, c)));
  // beta = 0: C = 0 even though it held NaN.
  C = run_ozaki(Op::N, Op::N, m, n, k, 0.0, A, B, 0.0, nullptr, 8);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) ASSERT_EQ(C.at(r, c), 0.0);
  // beta = 1: C unchanged.
  C = run_ozaki(Op::N, Op::N, m, n, k, 0.0, A, B, 1.0, &C0, 8);
  EXPECT_TRUE(same_matrix(C, C0, m, n));
  // plain_dgemm follows the same rules.
  C = run_plain(Op::N, Op::N, m, n, k, 0.0, A, B, 0.0, nullptr);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) ASSERT_EQ(C.at(r, c), 0.0);
}

TEST(OzakiBlas, AlphaBetaFollowTheDocumentedOrder) {
  std::mt19937_64 rng(404);
  const int64_t m = 20, n = 18, k = 33;
  const Mat A = rand_phi(m, k, 1.0, rng), B = rand_phi(k, n, 1.0, rng);
  Mat C0 = rand_phi(m, n, 0.0, rng);
  C0.at(4, 4) = oztest::kNaN;  // beta != 0 reads C: this NaN must show up, and only there
  for (int s : {2, 7, 12}) {
    const Mat acc = run_ozaki(Op::N, Op::N, m, n, k, 1.0, A, B, 0.0, nullptr, s);  // 1 * acc == acc
    const Mat Cneg = run_ozaki(Op::N, Op::N, m, n, k, -0.5, A, B, 0.0, nullptr, s);
    const Mat Cab = run_ozaki(Op::N, Op::N, m, n, k, -0.5, A, B, 2.5, &C0, s);
    const Mat Cb1 = run_ozaki(Op::N, Op::N, m, n, k, 3.0, A, B, 1.0, &C0, s);
    for (int64_t c = 0; c < n; ++c)
      for (int64_t r = 0; r < m; ++r) {
        const double a = acc.at(r, c);
        ASSERT_TRUE(same_bits(Cneg.at(r, c), -0.5 * a));
        const double t = -0.5 * a, u = 2.5 * C0.at(r, c);
        const double want = t + u;
        if (r == 4 && c == 4) {
          ASSERT_TRUE(std::isnan(Cab.at(r, c)));
          ASSERT_TRUE(std::isnan(Cb1.at(r, c)));
        } else {
          ASSERT_TRUE(same_bits(Cab.at(r, c), want)) << r << "," << c;
          const double t3 = 3.0 * a;
          ASSERT_TRUE(same_bits(Cb1.at(r, c), t3 + C0.at(r, c))) << r << "," << c;
        }
      }
  }
}

TEST(OzakiBlas, QuickReturns) {
  std::mt19937_64 rng(405);
  const Mat A = rand_phi(6, 6, 0.0, rng), B = rand_phi(6, 6, 0.0, rng);
  const double mk = oztest::marker_nan();
  // m == 0 or n == 0: C is not touched at all (even with beta != 0).
  for (auto mn : {std::pair<int64_t, int64_t>{0, 4}, std::pair<int64_t, int64_t>{4, 0}}) {
    Mat C(6, 6, mk);
    ref::ozaki_dgemm(Op::N, Op::N, mn.first, mn.second, 3, 1.0, A.data(), A.ld, B.data(), B.ld, 2.5, C.data(), C.ld,
                     8);
    for (double v : C.v) ASSERT_EQ(bits(v), bits(mk));
  }
  // k == 0: C = beta * C.
  const Mat C0 = rand_phi(4, 5, 0.0, rng);
  Mat C = C0;
  ref::ozaki_dgemm(Op::N, Op::N, 4, 5, 0, 1.0, A.data(), 4, B.data(), 1, 2.5, C.data(), C.ld, 8);
  for (int64_t q = 0; q < 20; ++q) ASSERT_TRUE(same_bits(C.v[q], 2.5 * C0.v[q]));
  C = Mat(4, 5, mk);
  ref::ozaki_dgemm(Op::N, Op::N, 4, 5, 0, 1.0, A.data(), 4, B.data(), 1, 0.0, C.data(), C.ld, 8);
  for (int64_t q = 0; q < 20; ++q) ASSERT_EQ(C.v[q], 0.0);
  C = C0;
  ref::ozaki_dgemm(Op::T, Op::T, 4, 5, 0, 1.0, A.data(), 1, B.data(), 5, 1.0, C.data(), C.ld, 8);
  EXPECT_TRUE(same_matrix(C, C0, 4, 5));
  // accurate_gemm with k == 0 gives beta * C0.
  const auto acc = ref::accurate_gemm(Op::N, Op::N, 4, 5, 0, 1.0, A.data(), 4, B.data(), 1, 2.5, C0.data(), C0.ld);
  for (int64_t q = 0; q < 20; ++q) ASSERT_EQ(acc.hi[q], 2.5 * C0.v[q]);
}

TEST(OzakiBlas, InvalidArgumentsThrow) {
  std::vector<double> a(100, 1.0), b(100, 1.0), c(100, 0.0);
  auto oz = [&](Op ta, Op tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int s) {
    ref::ozaki_dgemm(ta, tb, m, n, k, 1.0, a.data(), lda, b.data(), ldb, 0.0, c.data(), ldc, s);
  };
  EXPECT_THROW(oz(Op::N, Op::N, -1, 2, 2, 2, 2, 2, 8), std::invalid_argument);
  EXPECT_THROW(oz(Op::N, Op::N, 2, -1, 2, 2, 2, 2, 8), std::invalid_argument);
  EXPECT_THROW(oz(Op::N, Op::N, 2, 2, -1, 2, 2, 2, 8), std::invalid_argument);
  EXPECT_THROW(oz(Op::N, Op::N, 3, 2, 2, 2, 2, 3, 8), std::invalid_argument);  // lda < m
  EXPECT_THROW(oz(Op::T, Op::N, 2, 2, 3, 2, 3, 2, 8), std::invalid_argument);  // lda < k
  EXPECT_THROW(oz(Op::N, Op::N, 2, 2, 3, 2, 2, 2, 8), std::invalid_argument);  // ldb < k
  EXPECT_THROW(oz(Op::N, Op::T, 2, 3, 2, 2, 2, 2, 8), std::invalid_argument);  // ldb < n
  EXPECT_THROW(oz(Op::N, Op::N, 3, 2, 2, 3, 2, 2, 8), std::invalid_argument);  // ldc < m
  EXPECT_THROW(oz(Op::N, Op::N, 0, 0, 0, 0, 1, 1, 8), std::invalid_argument);  // lda < 1
  EXPECT_THROW(oz(Op::N, Op::N, 2, 2, 2, 2, 2, 2, 0), std::invalid_argument);
  EXPECT_THROW(oz(Op::N, Op::N, 2, 2, 2, 2, 2, 2, 21), std::invalid_argument);
  EXPECT_THROW(oz(Op::N, Op::N, 2, 2, 2, 2, 2, 2, -3), std::invalid_argument);
  EXPECT_NO_THROW(oz(Op::N, Op::N, 2, 2, 2, 2, 2, 2, 1));
  EXPECT_NO_THROW(oz(Op::N, Op::N, 2, 2, 2, 2, 2, 2, 20));
  EXPECT_THROW(ref::plain_dgemm(Op::N, Op::N, 3, 2, 2, 1.0, a.data(), 2, b.data(), 2, 0.0, c.data(), 3),
               std::invalid_argument);
  EXPECT_THROW(ref::accurate_gemm(Op::N, Op::N, 2, 2, -1, 1.0, a.data(), 2, b.data(), 2, 0.0, nullptr, 1),
               std::invalid_argument);
  EXPECT_THROW(ref::slice_rows_of_op_a(Op::N, 2, 2, a.data(), 2, 0), std::invalid_argument);
  EXPECT_THROW(ref::slice_cols_of_op_b(Op::N, 2, 2, b.data(), 2, 21), std::invalid_argument);
  const auto sa = ref::slice_rows_of_op_a(Op::N, 2, 3, a.data(), 2, 4);
  const auto sb = ref::slice_cols_of_op_b(Op::N, 2, 2, b.data(), 2, 4);  // k = 2 != 3
  EXPECT_THROW(ref::diagonal_sums(sa, sb), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The phases and the documented reconstruction order.

TEST(OzakiPhases, SlicedOperandsMatchNumerics) {
  std::mt19937_64 rng(501);
  const int64_t m = 9, n = 7, k = 13;
  const int s = 6;
  Mat opA = rand_phi(m, k, 4.0, rng), opB = rand_phi(k, n, 4.0, rng);
  opA.at(1, 3) = oztest::kInf;
  opB.at(2, 4) = oztest::kNaN;
  for (Op ta : kOps)
    for (Op tb : kOps) {
      const Mat A = store_as(opA, ta), B = store_as(opB, tb);
      const auto a = ref::slice_rows_of_op_a(ta, m, k, A.data(), A.ld, s);
      const auto b = ref::slice_cols_of_op_b(tb, k, n, B.data(), B.ld, s);
      ASSERT_EQ(a.rows, m);
      ASSERT_EQ(b.rows, n);
      ASSERT_EQ(a.k, k);
      ASSERT_EQ(a.s, s);
      ASSERT_EQ(a.digits.size(), size_t(m * s * k));
      auto check = [&](const ref::SlicedOperand& so, int64_t rows, auto elem) {
        for (int64_t r = 0; r < rows; ++r) {
          double mx = 0;
          bool bad = false;
          for (int64_t l = 0; l < k; ++l) {
            const double v = elem(r, l);
            if (std::isfinite(v))
              mx = std::max(mx, std::fabs(v));
            else
              bad = true;
          }
          ASSERT_EQ(so.shift[r], nm::shift_from_max(mx));
          ASSERT_EQ(so.nonfinite[r] != 0, bad);
          for (int64_t l = 0; l < k; ++l) {
            int8_t d[nm::kMaxSlices];
            nm::slice_value(elem(r, l), so.shift[r], s, d, 1);
            for (int i = 0; i < s; ++i) ASSERT_EQ(so.row_slice(r, i)[l], d[i]);
          }
        }
      };
      check(a, m, [&](int64_t r, int64_t l) { return opA.at(r, l); });
      check(b, n, [&](int64_t c, int64_t l) { return opB.at(l, c); });
      EXPECT_EQ(a.nonfinite[1], 1);
      EXPECT_EQ(b.nonfinite[4], 1);
    }
}

TEST(OzakiPhases, DiagonalSumsAndReconstructionOrder) {
  // Recompute C from the exposed phases in the order documented in numerics.hpp:
  //   acc = +0; for d = s-1 .. 0: acc += diagonal_to_fp64(D_d, d, shiftA + shiftB);
  //   C = alpha * acc + beta * C_old
  // and compare bitwise with ozaki_dgemm. Also check that the opposite order (d ascending)
  // gives different bits somewhere, so this test does detect an order change.
  std::mt19937_64 rng(502);
  const int64_t m = 21, n = 19, k = 37;
  for (double phi : {0.5, 4.0})
    for (int s : {3, 9, 20}) {
      const Mat A = rand_phi(k, m, phi, rng), B = rand_phi(k, n, phi, rng);  // op(A) = A^T, op(B) = B
      const Mat C0 = rand_phi(m, n, 0.0, rng);
      const double alpha = 1.7, beta = -0.3;
      const Mat C = run_ozaki(Op::T, Op::N, m, n, k, alpha, A, B, beta, &C0, s);
      const auto a = ref::slice_rows_of_op_a(Op::T, m, k, A.data(), A.ld, s);
      const auto b = ref::slice_cols_of_op_b(Op::N, k, n, B.data(), B.ld, s);
      const std::vector<int64_t> D = ref::diagonal_sums(a, b);
      ASSERT_EQ(D.size(), size_t(s * m * n));
      int64_t order_differs = 0;
      for (int64_t c = 0; c < n; ++c)
        for (int64_t r = 0; r < m; ++r) {
          // D by a naive loop over the digits.
          for (int d = 0; d < s; ++d) {
            int64_t want = 0;
            for (int i = 0; i <= d; ++i)
              for (int64_t l = 0; l < k; ++l) want += int64_t(a.row_slice(r, i)[l]) * int64_t(b.row_slice(c, d - i)[l]);
            ASSERT_EQ(D[(d * n + c) * m + r], want);
          }
          const int32_t sh = a.shift[r] + b.shift[c];
          double acc = 0.0, acc_up = 0.0;
          for (int d = s - 1; d >= 0; --d) acc = nm::add_rn(acc, nm::diagonal_to_fp64(D[(d * n + c) * m + r], d, sh));
          for (int d = 0; d < s; ++d) acc_up = nm::add_rn(acc_up, nm::diagonal_to_fp64(D[(d * n + c) * m + r], d, sh));
          const double want = nm::apply_alpha_beta(alpha, acc, beta, C0.at(r, c), true);
          ASSERT_TRUE(same_bits(C.at(r, c), want)) << "(" << r << "," << c << ") s=" << s;
          if (!same_bits(nm::apply_alpha_beta(alpha, acc_up, beta, C0.at(r, c), true), want)) ++order_differs;
        }
      if (s >= 9) {
        EXPECT_GT(order_differs, 0) << "phi=" << phi << " s=" << s;
      }
    }
}

TEST(OzakiPhases, SpecialDotSumsOnlyNonFiniteProducts) {
  // a = [1, Inf, 2], b = [3, 4, NaN]: products with a non-finite factor: Inf*4, 2*NaN.
  const double inf = oztest::kInf;
  std::vector<double> a = {1.0, inf, 2.0}, b = {3.0, 4.0, 5.0};
  // op(A) 1 x 3 (row vector, lda 1), op(B) 3 x 1.
  EXPECT_EQ(ref::special_dot(Op::N, a.data(), 1, Op::N, b.data(), 3, 0, 0, 3), inf);
  b[1] = -4.0;
  EXPECT_EQ(ref::special_dot(Op::N, a.data(), 1, Op::N, b.data(), 3, 0, 0, 3), -inf);
  b[1] = 0.0;
  EXPECT_TRUE(std::isnan(ref::special_dot(Op::N, a.data(), 1, Op::N, b.data(), 3, 0, 0, 3)));
  b[1] = 4.0;
  b[2] = -inf;
  EXPECT_TRUE(std::isnan(ref::special_dot(Op::N, a.data(), 1, Op::N, b.data(), 3, 0, 0, 3)));  // Inf - Inf
  b[2] = oztest::kNaN;
  EXPECT_TRUE(std::isnan(ref::special_dot(Op::N, a.data(), 1, Op::N, b.data(), 3, 0, 0, 3)));
}

// ---------------------------------------------------------------------------------------------
// The other references and helpers.

TEST(References, AccurateGemmIsExactWherePlainFails) {
  // (1e16 + 1 - 1e16) and friends: the double-double result is exact, plain FP64 is not.
  std::vector<double> a = {1e16, 1.0, -1e16, std::ldexp(1.0, -60)}, b = {1.0, 1.0, 1.0, 1.0};
  const auto acc = ref::accurate_gemm(Op::N, Op::N, 1, 1, 4, 1.0, a.data(), 1, b.data(), 4, 0.0, nullptr, 1);
  EXPECT_EQ(acc.hi[0], 1.0);
  EXPECT_EQ(acc.lo[0], std::ldexp(1.0, -60));
  EXPECT_EQ(acc.absprod[0], 2e16);  // 1e16 + 1 + 1e16 + 2^-60, rounded
  double c = oztest::kNaN;
  ref::plain_dgemm(Op::N, Op::N, 1, 1, 4, 1.0, a.data(), 1, b.data(), 4, 0.0, &c, 1);
  EXPECT_NE(c, 1.0);
  // The Ozaki scheme with enough slices recovers it (the row max is 1e16, 1 is 2^-53.15
  // below it: 8 slices cover 56 bits below the top).
  double co = oztest::kNaN;
  ref::ozaki_dgemm(Op::N, Op::N, 1, 1, 4, 1.0, a.data(), 1, b.data(), 4, 0.0, &co, 1, 8);
  EXPECT_EQ(co, 1.0);
}

TEST(References, CompareMetrics) {
  ref::AccurateResult r;
  r.m = 2;
  r.n = 2;
  r.hi = {1.0, -2.0, 4.0, 0.0};
  r.lo = {0.0, 0.0, 0.0, 0.0};
  r.absprod = {2.0, 2.0, 8.0, 1.0};
  std::vector<double> C = {1.0, -2.0, 4.0, 0.0};
  auto e = ref::compare(C.data(), 2, r);
  EXPECT_EQ(e.normwise, 0.0);
  EXPECT_EQ(e.componentwise, 0.0);
  EXPECT_EQ(e.elementwise, 0.0);
  EXPECT_EQ(e.nonfinite_mismatch, 0);
  C[2] = 4.5;  // diff 0.5: componentwise 0.5/8, elementwise 0.5/4, normwise 0.5/sqrt(21)
  e = ref::compare(C.data(), 2, r);
  EXPECT_DOUBLE_EQ(e.componentwise, 0.0625);
  EXPECT_DOUBLE_EQ(e.elementwise, 0.125);
  EXPECT_DOUBLE_EQ(e.normwise, 0.5 / std::sqrt(21.0));
  C[3] = 1e-300;  // Cref == 0 must be exact: elementwise Inf
  e = ref::compare(C.data(), 2, r);
  EXPECT_TRUE(std::isinf(e.elementwise));
  C[3] = 0.0;
  C[0] = oztest::kNaN;
  e = ref::compare(C.data(), 2, r);
  EXPECT_EQ(e.nonfinite_mismatch, 1);
  r.hi[0] = oztest::kNaN;
  e = ref::compare(C.data(), 2, r);
  EXPECT_EQ(e.nonfinite_mismatch, 0);
  C[0] = oztest::kInf;
  e = ref::compare(C.data(), 2, r);
  EXPECT_EQ(e.nonfinite_mismatch, 1);  // Inf vs NaN: class differs
  // Leading dimension honoured.
  std::vector<double> Cld = {1.0, -2.0, 99.0, 4.0, 0.0, 99.0};
  r.hi[0] = 1.0;
  EXPECT_EQ(ref::compare(Cld.data(), 3, r).normwise, 0.0);
}

TEST(References, GeneratorsRespectBoundsAndPadding) {
  std::mt19937_64 rng(601);
  Mat a(5, 7, 9, oztest::marker_nan());
  ref::fill_integers(a.data(), 5, 7, 9, 3, rng);
  bool lo = false, hi = false;
  for (int64_t c = 0; c < 7; ++c)
    for (int64_t r = 0; r < 9; ++r) {
      const double v = a.at(r, c);
      if (r < 5) {
        ASSERT_TRUE(v == std::floor(v) && v >= -3 && v <= 3) << v;
        lo |= v == -3;
        hi |= v == 3;
      } else {
        ASSERT_EQ(bits(v), bits(oztest::marker_nan()));
      }
    }
  EXPECT_TRUE(lo && hi);
  Mat p(4, 6, 6, oztest::marker_nan());
  ref::fill_phi(p.data(), 4, 6, 6, 1.0, rng);
  for (int64_t c = 0; c < 6; ++c)
    for (int64_t r = 0; r < 6; ++r) {
      if (r < 4)
        ASSERT_TRUE(std::isfinite(p.at(r, c)) && std::fabs(p.at(r, c)) > 0);
      else
        ASSERT_EQ(bits(p.at(r, c)), bits(oztest::marker_nan()));
    }
  // Same seed, same matrix; phi widens the dynamic range.
  std::mt19937_64 r1(7), r2(7);
  EXPECT_EQ(ref::random_matrix(30, 30, 2.0, r1), ref::random_matrix(30, 30, 2.0, r2));
  std::mt19937_64 r3(8);
  auto range = [](const std::vector<double>& v) {
    double mx = 0, mn = oztest::kInf;
    for (double x : v) {
      mx = std::max(mx, std::fabs(x));
      if (x != 0) mn = std::min(mn, std::fabs(x));
    }
    return mx / mn;
  };
  const double r0 = range(ref::random_matrix(100, 100, 0.0, r3)), r4 = range(ref::random_matrix(100, 100, 4.0, r3));
  EXPECT_GT(r4, 1e6 * r0);
}
