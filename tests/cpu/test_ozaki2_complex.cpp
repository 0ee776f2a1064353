// CPU tests of the complex Ozaki-II scheme (2M; ozgemm/numerics/ozaki2_complex.hpp,
// ozgemm/reference/ozaki2_complex.hpp): the moduli and j, the transform and its inverse exhaustively,
// the reconstruction, exact Gaussian-integer products, errors within the proven bounds on phi families
// with different ranges of the two parts and on adversarial signs, all nine op pairs, alpha/beta,
// special values, the FP64 decision, and the comparison with Karatsuba (3 products per modulus over
// the real moduli) and the real scheme. Random inputs print their seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "ozgemm/numerics/ozaki2_complex.hpp"
#include "ozgemm/reference/accuracy.hpp"
#include "ozgemm/reference/ozaki2.hpp"
#include "ozgemm/reference/ozaki2_complex.hpp"
#include "ozgemm/reference/reference.hpp"
#include "test_util.hpp"

namespace nm = ozgemm::numerics;
namespace ref = ozgemm::ref;
using nm::ComplexOp;
using ref::zcomplex;

namespace {

constexpr double kU = 1.1102230246251565e-16;  // 2^-53
constexpr ComplexOp kOps[3] = {ComplexOp::N, ComplexOp::T, ComplexOp::C};

// The prime factors of n are all 1 mod 4 (n odd).
bool factors_1_mod_4(int n) {
  if (n % 2 == 0) return false;
  for (int p = 3; p * p <= n; p += 2)
    while (n % p == 0) {
      if (p % 4 != 1) return false;
      n /= p;
    }
  return n == 1 || n % 4 == 1;
}
int64_t mod_pos(int64_t v, int64_t p) { return ((v % p) + p) % p; }

// A complex matrix (rows x cols, column-major, ld = rows) with parts from fill_phi, the imaginary
// part scaled by im_scale (0: Im = 0) and the real part by re_scale.
std::vector<zcomplex> complex_matrix(int64_t rows, int64_t cols, double phi, double re_scale, double im_scale,
                                     std::mt19937_64& rng) {
  const std::vector<double> re = ref::random_matrix(rows, cols, phi, rng), im = ref::random_matrix(rows, cols, phi, rng);
  std::vector<zcomplex> z(size_t(rows * cols));
  for (size_t i = 0; i < z.size(); ++i) z[i] = zcomplex(re[i] * re_scale, im[i] * im_scale);
  return z;
}
// Stored dimensions of an operand whose op is rows x cols.
int64_t stored_rows(ComplexOp op, int64_t rows, int64_t cols) { return op == ComplexOp::N ? rows : cols; }
char op_char(ComplexOp op) { return static_cast<char>(op); }

std::vector<zcomplex> run_2m(ComplexOp ta, ComplexOp tb, int64_t m, int64_t n, int64_t k, const std::vector<zcomplex>& A,
                             const std::vector<zcomplex>& B, int moduli) {
  std::vector<zcomplex> C(size_t(m * n));
  ref::ozaki2_complex_reference(ta, tb, m, n, k, 1.0, A.data(), stored_rows(ta, m, k), B.data(), stored_rows(tb, k, n),
                                0.0, C.data(), m, moduli);
  return C;
}

// Karatsuba over the real moduli (a comparison model, not the scheme): the same scaling with the real
// set's constants, three products per modulus T1 = Ar Br, T2 = Ai Bi, T3 = (Ar + Ai)(Br + Bi) mod p,
// Re = T1 - T2, Im = T3 - T1 - T2, the real CRT. The result is the exact product of the same scaled
// operands, so it isolates what the moduli set costs.
std::vector<zcomplex> run_karatsuba(int64_t m, int64_t n, int64_t k, const std::vector<zcomplex>& A,
                                    const std::vector<zcomplex>& B, int moduli) {
  const nm::Ozaki2Constants& c = nm::ozaki2_constants(moduli);
  const ref::Ozaki2ComplexOperand a = ref::ozaki2_complex_rows_of_op_a(ComplexOp::N, m, k, A.data(), m, c);
  const ref::Ozaki2ComplexOperand b = ref::ozaki2_complex_cols_of_op_b(ComplexOp::N, k, n, B.data(), k, c);
  std::vector<zcomplex> C(size_t(m * n));
  std::vector<int32_t> re(static_cast<size_t>(moduli)), im(static_cast<size_t>(moduli));
  for (int64_t col = 0; col < n; ++col)
    for (int64_t r = 0; r < m; ++r) {
      for (int i = 0; i < moduli; ++i) {
        const int p = c.p[i];
        int64_t t1 = 0, t2 = 0, t3 = 0;
        for (int64_t l = 0; l < k; ++l) {
          const size_t ia = (size_t(i) * size_t(m) + size_t(r)) * size_t(k) + size_t(l);
          const size_t ib = (size_t(i) * size_t(n) + size_t(col)) * size_t(k) + size_t(l);
          t1 += int64_t(a.re[ia]) * b.re[ib];
          t2 += int64_t(a.im[ia]) * b.im[ib];
          t3 += int64_t(nm::sym_mod(int64_t(a.re[ia]) + a.im[ia], p)) * nm::sym_mod(int64_t(b.re[ib]) + b.im[ib], p);
        }
        re[size_t(i)] = nm::sym_mod(t1 - t2, p);
        im[size_t(i)] = nm::sym_mod(t3 - t1 - t2, p);
      }
      const nm::ComplexF64 v = nm::oz2c_reconstruct_n(c, moduli, a.shift[size_t(r)] + b.shift[size_t(col)],
                                                      [&](int i) { return re[size_t(i)]; },
                                                      [&](int i) { return im[size_t(i)]; });
      C[size_t(r + col * m)] = zcomplex(v.re, v.im);
    }
  return C;
}

// max_rc |C - AB| / (|A||B|) (complex moduli).
double componentwise(const std::vector<zcomplex>& C, int64_t m, const ref::ComplexAccurateResult& acc) {
  const std::vector<double> e = ref::complex_errors(C.data(), m, acc);
  double w = 0;
  for (size_t i = 0; i < e.size(); ++i) w = std::max(w, acc.absprod[i] > 0 ? e[i] / acc.absprod[i] : (e[i] > 0 ? INFINITY : 0));
  return w;
}

// The storage S (column-major, stored_rows(op, rows, cols) rows) with op(S) = X for X rows x cols:
// X itself for N, X^T for T, conj(X)^T for C.
std::vector<zcomplex> stored_as(ComplexOp op, const std::vector<zcomplex>& X, int64_t rows, int64_t cols) {
  std::vector<zcomplex> S(X.size());
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) {
      const zcomplex v = X[size_t(r + c * rows)];
      if (op == ComplexOp::N) {
        S[size_t(r + c * rows)] = v;
      } else {
        S[size_t(c + r * cols)] = op == ComplexOp::C ? std::conj(v) : v;
      }
    }
  return S;
}

// A generator with its seed printed (rerun a failure with the same seed).
std::mt19937_64 seeded(uint64_t seed) {
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  return std::mt19937_64(seed);
}

bool same_bits(zcomplex x, zcomplex y) {
  return nm::bits_of(x.real()) == nm::bits_of(y.real()) && nm::bits_of(x.imag()) == nm::bits_of(y.imag());
}

}  // namespace

// ---- Moduli, j, transform ----

TEST(Ozaki2ComplexNumerics, ModuliAreAdmissiblePairwiseCoprimeAndGreedy) {
  for (int i = 0; i < 20; ++i) {
    const int p = nm::kComplexModuliTable[i], j = nm::kComplexModuliJ[i];
    EXPECT_TRUE(factors_1_mod_4(p)) << p;
    EXPECT_EQ(mod_pos(int64_t(j) * j + 1, p), 0) << "j^2 = -1 mod " << p;
    for (int t = 0; t < i; ++t) EXPECT_EQ(std::gcd(p, nm::kComplexModuliTable[t]), 1) << p;
    // Greedy: every admissible number skipped above p shares a factor with an earlier modulus.
    const int above = i ? nm::kComplexModuliTable[i - 1] : 257;
    for (int v = p + 1; v < above; ++v) {
      if (!factors_1_mod_4(v)) continue;
      bool shares = false;
      for (int t = 0; t < i; ++t) shares = shares || std::gcd(v, nm::kComplexModuliTable[t]) != 1;
      EXPECT_TRUE(shares) << v;
    }
    const nm::Oz2cModulus md = nm::oz2c_modulus(i);
    EXPECT_EQ(mod_pos(int64_t(2) * md.inv2, p), 1);
    EXPECT_EQ(mod_pos(int64_t(2) * j * md.inv2j, p), 1);
    EXPECT_LE(std::abs(md.inv2j), (p - 1) / 2);
  }
  // The constants are those of the table.
  for (int n = nm::kMinModuli; n <= nm::kMaxModuli; ++n) {
    const nm::Ozaki2Constants& c = nm::ozaki2_complex_constants(n);
    ASSERT_EQ(c.n, n);
    for (int i = 0; i < n; ++i) EXPECT_EQ(c.p[i], nm::kComplexModuliTable[i]);
  }
  EXPECT_THROW(nm::ozaki2_complex_constants(1), std::invalid_argument);
  EXPECT_THROW(nm::ozaki2_complex_constants(nm::kMaxModuli + 1), std::invalid_argument);
}

TEST(Ozaki2ComplexNumerics, TransformAndInverseExhaustivePerModulus) {
  for (int i = 0; i < nm::kMaxModuli; ++i) {
    const nm::Oz2cModulus md = nm::oz2c_modulus(i);
    const int p = md.p, h = (p - 1) / 2;
    std::vector<uint8_t> hit(size_t(p) * size_t(p), 0);
    for (int ur = -h; ur <= h; ++ur)
      for (int ui = -h; ui <= h; ++ui) {
        const nm::Oz2cPlanes x = nm::oz2c_forward(ur, ui, md);
        ASSERT_LE(std::abs(x.x0), h);
        ASSERT_LE(std::abs(x.x1), h);
        ASSERT_EQ(mod_pos(x.x0 - ur - int64_t(md.j) * ui, p), 0);
        ASSERT_EQ(mod_pos(x.x1 - ur + int64_t(md.j) * ui, p), 0);
        ++hit[size_t(x.x0 + h) * size_t(p) + size_t(x.x1 + h)];
        // The inverse of the planes themselves (the product with 1 = (1, 1)) is the input.
        const nm::Oz2cResidue back = nm::oz2c_inverse(x.x0, x.x1, md);
        ASSERT_EQ(back.re, ur) << p;
        ASSERT_EQ(back.im, ui) << p;
        // Conjugation swaps the planes.
        const nm::Oz2cPlanes xc = nm::oz2c_forward(ur, -ui, md);
        ASSERT_EQ(xc.x0, x.x1);
        ASSERT_EQ(xc.x1, x.x0);
      }
    // A bijection of Z_p[i] onto Z_p x Z_p.
    for (uint8_t v : hit) ASSERT_EQ(v, 1) << p;
  }
}

TEST(Ozaki2ComplexNumerics, TransformIsMultiplicative) {
  std::mt19937_64 rng = seeded(20261201);
  for (int i = 0; i < nm::kMaxModuli; ++i) {
    const nm::Oz2cModulus md = nm::oz2c_modulus(i);
    const int h = (md.p - 1) / 2;
    std::uniform_int_distribution<int> d(-h, h);
    for (int t = 0; t < 20000; ++t) {
      const int ar = d(rng), ai = d(rng), br = d(rng), bi = d(rng);
      const nm::Oz2cPlanes xa = nm::oz2c_forward(ar, ai, md), xb = nm::oz2c_forward(br, bi, md);
      const nm::Oz2cResidue z = nm::oz2c_inverse(nm::sym_mod(int64_t(xa.x0) * xb.x0, md.p),
                                                 nm::sym_mod(int64_t(xa.x1) * xb.x1, md.p), md);
      ASSERT_EQ(z.re, nm::sym_mod(int64_t(ar) * br - int64_t(ai) * bi, md.p));
      ASSERT_EQ(z.im, nm::sym_mod(int64_t(ar) * bi + int64_t(ai) * br, md.p));
    }
  }
}

TEST(Ozaki2ComplexNumerics, ReconstructionRecoversKnownIntegers) {
  // Integers X = Y 2^sh of every size up to Q (|Y| < 2^120) from their residues, within
  // oz2_reconstruction_error, at every count of the complex set.
  std::mt19937_64 rng = seeded(77);
  for (int n = nm::kMinModuli; n <= nm::kMaxModuli; ++n) {
    const nm::Ozaki2Constants& c = nm::ozaki2_complex_constants(n);
    const int max_bits = static_cast<int>(std::log2(static_cast<long double>(c.P_hi)) - 2.01L);  // below Q
    for (int t = 0; t < 2000; ++t) {
      const int bits = 1 + int(rng() % uint64_t(max_bits)), ybits = std::min(bits, 120), sh = bits - ybits;
      __int128 Y = 0;
      for (int done = 0; done < ybits;) {
        const int w = std::min(60, ybits - done);
        Y = (Y << w) | static_cast<__int128>(rng() & ((uint64_t(1) << w) - 1));
        done += w;
      }
      if (rng() & 1) Y = -Y;
      const double y = nm::oz2_reconstruct(c, [&](int i) {
        __int128 r = Y % c.p[i];
        for (int b = 0; b < sh; ++b) r = 2 * r % c.p[i];
        return nm::sym_mod(static_cast<int64_t>(r), c.p[i]);
      });
      const long double exact = std::ldexp(static_cast<long double>(Y), sh);
      ASSERT_LE(std::fabs(static_cast<long double>(y) - exact),
                nm::oz2_reconstruction_error(c, static_cast<double>(std::fabs(exact))))
          << "n " << n << " bits " << bits;
    }
  }
}

// ---- The host reference ----

TEST(Ozaki2ComplexReference, GaussianIntegersExactForAllOps) {
  std::mt19937_64 rng = seeded(4242);
  const int64_t m = 7, n = 5, k = 60;
  std::uniform_int_distribution<int> d(-100, 100);
  std::vector<zcomplex> A(size_t(m * k)), B(size_t(k * n));
  for (auto& z : A) z = zcomplex(d(rng), d(rng));
  for (auto& z : B) z = zcomplex(d(rng), d(rng));
  for (ComplexOp ta : kOps)
    for (ComplexOp tb : kOps) {
      // op(X) read from the same storage: A is m x k for N, k x m otherwise (same buffer size).
      const int64_t lda = stored_rows(ta, m, k), ldb = stored_rows(tb, k, n);
      for (int moduli : {3, 5, 9, 16, 17, 20}) {
        std::vector<zcomplex> C(size_t(m * n));
        ref::ozaki2_complex_reference(ta, tb, m, n, k, 1.0, A.data(), lda, B.data(), ldb, 0.0, C.data(), m, moduli);
        for (int64_t c = 0; c < n; ++c)
          for (int64_t r = 0; r < m; ++r) {
            int64_t re = 0, im = 0;
            for (int64_t l = 0; l < k; ++l) {
              const zcomplex a = ref::op_zelem(A.data(), lda, ta, r, l), b = ref::op_zelem(B.data(), ldb, tb, l, c);
              re += int64_t(a.real()) * int64_t(b.real()) - int64_t(a.imag()) * int64_t(b.imag());
              im += int64_t(a.real()) * int64_t(b.imag()) + int64_t(a.imag()) * int64_t(b.real());
            }
            ASSERT_EQ(C[size_t(r + c * m)], zcomplex(double(re), double(im)))
                << op_char(ta) << op_char(tb) << " moduli " << moduli << " at " << r << "," << c;
          }
      }
    }
}

TEST(Ozaki2ComplexReference, OpModesEqualTheMaterialisedOperands) {
  std::mt19937_64 rng = seeded(99);
  const int64_t m = 6, n = 9, k = 40;
  const std::vector<zcomplex> A = complex_matrix(m, k, 1.0, 1.0, 1.0, rng), B = complex_matrix(k, n, 1.0, 1.0, 1.0, rng);
  for (ComplexOp ta : kOps)
    for (ComplexOp tb : kOps) {
      const std::vector<zcomplex> As = stored_as(ta, A, m, k), Bs = stored_as(tb, B, k, n);
      for (int moduli : {8, 16, 19}) {
        const std::vector<zcomplex> C0 = run_2m(ComplexOp::N, ComplexOp::N, m, n, k, A, B, moduli);
        const std::vector<zcomplex> C1 = run_2m(ta, tb, m, n, k, As, Bs, moduli);
        for (size_t i = 0; i < C0.size(); ++i)
          ASSERT_TRUE(same_bits(C0[i], C1[i])) << op_char(ta) << op_char(tb) << " moduli " << moduli << " entry " << i;
      }
    }
}

namespace {
struct Family {
  const char* name;
  double phi, re_scale, im_scale;
};
constexpr Family kFamilies[] = {
    {"N(0,1)", -1, 1, 1},          {"phi 0.5", 0.5, 1, 1},         {"phi 1", 1, 1, 1},
    {"phi 2", 2, 1, 1},            {"Im = 0", 0.5, 1, 0},           {"Re = 0", 0.5, 0, 1},
    {"|Im| >> |Re|", 0.5, 1, 1 << 20}, {"|Re| >> |Im|, phi 1", 1, 1 << 24, 1},
};

// Every entry within both proven bounds: the direct one at every count, R2c u |A||B| where finite.
void check_bounds(ComplexOp ta, ComplexOp tb, int64_t m, int64_t n, int64_t k, const std::vector<zcomplex>& A,
                  const std::vector<zcomplex>& B, const std::vector<int>& counts, const char* what) {
  const int64_t lda = stored_rows(ta, m, k), ldb = stored_rows(tb, k, n);
  const ref::ComplexAccurateResult acc = ref::accurate_zgemm(ta, tb, m, n, k, A.data(), lda, B.data(), ldb);
  const ref::OperandStats sa = ref::complex_stats_rows_of_op_a(ta, m, k, A.data(), lda);
  const ref::OperandStats sb = ref::complex_stats_cols_of_op_b(tb, k, n, B.data(), ldb);
  const std::vector<int64_t> P = ref::magnitude_product(sa, sb);
  for (int moduli : counts) {
    std::vector<zcomplex> C(size_t(m * n));
    ref::ozaki2_complex_reference(ta, tb, m, n, k, 1.0, A.data(), lda, B.data(), ldb, 0.0, C.data(), m, moduli);
    const std::vector<double> err = ref::complex_errors(C.data(), m, acc);
    const std::vector<double> bound =
        ref::ozaki2_complex_error_bound(ta, tb, m, n, k, A.data(), lda, B.data(), ldb, moduli);
    const std::vector<double> R = ref::oz2c_entry_ratios(sa, sb, P, moduli);
    for (size_t i = 0; i < err.size(); ++i) {
      ASSERT_LE(err[i], bound[i]) << what << " " << op_char(ta) << op_char(tb) << " moduli " << moduli << " entry " << i;
      if (std::isfinite(R[i])) {
        ASSERT_LE(err[i], R[i] * kU * acc.absprod[i]) << what << " moduli " << moduli << " entry " << i << " R " << R[i];
      }
    }
  }
}
}  // namespace

TEST(Ozaki2ComplexReference, ErrorsWithinTheProvenBoundsOnPhiFamilies) {
  std::mt19937_64 rng = seeded(1234567);
  const int64_t m = 12, n = 10, k = 300;
  for (const Family& f : kFamilies) {
    const std::vector<zcomplex> A = complex_matrix(m, k, f.phi, f.re_scale, f.im_scale, rng);
    const std::vector<zcomplex> B = complex_matrix(k, n, f.phi, f.re_scale, f.im_scale, rng);
    check_bounds(ComplexOp::N, ComplexOp::N, m, n, k, A, B, {2, 4, 7, 10, 13, 15, 16, 17, 18, 20}, f.name);
  }
  // Rows whose magnitudes spread over 2^+-40, and one family against another (Im = 0 times Re = 0).
  std::vector<zcomplex> A = complex_matrix(m, k, 0.5, 1, 1, rng), B = complex_matrix(k, n, 0.5, 1, 1, rng);
  for (int64_t l = 0; l < k; ++l) A[size_t(l * m)] *= std::ldexp(1.0, int(l % 81) - 40);
  check_bounds(ComplexOp::N, ComplexOp::N, m, n, k, A, B, {6, 12, 16, 20}, "spread 2^+-40");
  const std::vector<zcomplex> Ar = complex_matrix(m, k, 0.5, 1, 0, rng), Bi = complex_matrix(k, n, 0.5, 0, 1, rng);
  check_bounds(ComplexOp::N, ComplexOp::N, m, n, k, Ar, Bi, {6, 12, 16, 20}, "real times imaginary");
}

TEST(Ozaki2ComplexReference, ErrorsWithinTheProvenBoundsForAllOpPairs) {
  std::mt19937_64 rng = seeded(31337);
  const int64_t m = 5, n = 7, k = 150;
  const std::vector<zcomplex> A = complex_matrix(m, k, 1.0, 1, 1, rng), B = complex_matrix(k, n, 1.0, 1, 1, rng);
  for (ComplexOp ta : kOps)
    for (ComplexOp tb : kOps) check_bounds(ta, tb, m, n, k, A, B, {5, 12, 16, 18}, "phi 1");
}

TEST(Ozaki2ComplexReference, AdversarialSignsStayWithinTheBoundAndNearIt) {
  // Every rounding error of a part adds: a_l = x_l (1 + i), b_l = y_l (1 - i) with the part's bits below
  // 2^-s just under one half (rounding to nearest drops the most: (1/2 - 2^-20) 2^-s), sign flips
  // shared by a_l and b_l (each product keeps its sign): Re(a b) = 2 x y, and each dropped part lowers
  // it. The shifts depend on the count, so the tails are set per count from the scheme's own shifts
  // (which the tails leave unchanged: x in [0.5, 0.75) stays in its binade, S sees only the top bits).
  std::mt19937_64 rng = seeded(555);
  const int64_t m = 3, n = 3, k = 512;
  std::vector<zcomplex> A0(size_t(m * k)), B0(size_t(k * n));
  std::uniform_real_distribution<double> top(0.5, 0.75);
  std::vector<double> sign(static_cast<size_t>(k));
  for (auto& s : sign) s = rng() % 2 ? 1.0 : -1.0;
  for (int64_t l = 0; l < k; ++l) {
    for (int64_t r = 0; r < m; ++r) A0[size_t(r + l * m)] = sign[size_t(l)] * top(rng) * zcomplex(1, 1);
    for (int64_t c = 0; c < n; ++c) B0[size_t(l + c * k)] = sign[size_t(l)] * top(rng) * zcomplex(1, -1);
  }
  // |v| with its bits below 2^-s replaced by (1/2 - 2^-20) 2^-s, v's sign kept.
  const auto below_half = [](double v, int32_t s) {
    const double mag = std::ldexp(std::floor(std::ldexp(std::fabs(v), s)) + 0.5 - 0x1p-20, -s);
    return v < 0 ? -mag : mag;
  };
  std::printf("adversarial signs, %lldx%lldx%lld: moduli, max error / direct bound\n", (long long)m, (long long)n,
              (long long)k);
  for (int moduli : {4, 6, 8, 10, 12, 14, 16}) {
    const nm::Ozaki2Constants& cst = nm::ozaki2_complex_constants(moduli);
    const ref::Ozaki2ComplexOperand sa = ref::ozaki2_complex_rows_of_op_a(ComplexOp::N, m, k, A0.data(), m, cst);
    const ref::Ozaki2ComplexOperand sb = ref::ozaki2_complex_cols_of_op_b(ComplexOp::N, k, n, B0.data(), k, cst);
    std::vector<zcomplex> A = A0, B = B0;
    for (int64_t l = 0; l < k; ++l) {
      for (int64_t r = 0; r < m; ++r) {
        const zcomplex v = A0[size_t(r + l * m)];
        A[size_t(r + l * m)] = zcomplex(below_half(v.real(), sa.shift[size_t(r)]), below_half(v.imag(), sa.shift[size_t(r)]));
      }
      for (int64_t c = 0; c < n; ++c) {
        const zcomplex v = B0[size_t(l + c * k)];
        B[size_t(l + c * k)] = zcomplex(below_half(v.real(), sb.shift[size_t(c)]), below_half(v.imag(), sb.shift[size_t(c)]));
      }
    }
    const ref::Ozaki2ComplexOperand ta = ref::ozaki2_complex_rows_of_op_a(ComplexOp::N, m, k, A.data(), m, cst);
    const ref::Ozaki2ComplexOperand tb = ref::ozaki2_complex_cols_of_op_b(ComplexOp::N, k, n, B.data(), k, cst);
    ASSERT_EQ(ta.shift, sa.shift) << moduli;
    ASSERT_EQ(tb.shift, sb.shift) << moduli;
    const ref::ComplexAccurateResult acc = ref::accurate_zgemm(ComplexOp::N, ComplexOp::N, m, n, k, A.data(), m, B.data(), k);
    const std::vector<zcomplex> C = run_2m(ComplexOp::N, ComplexOp::N, m, n, k, A, B, moduli);
    const std::vector<double> err = ref::complex_errors(C.data(), m, acc);
    const std::vector<double> bound =
        ref::ozaki2_complex_error_bound(ComplexOp::N, ComplexOp::N, m, n, k, A.data(), m, B.data(), k, moduli);
    double worst = 0;
    for (size_t i = 0; i < err.size(); ++i) {
      ASSERT_LE(err[i], bound[i]) << "moduli " << moduli;
      worst = std::max(worst, err[i] / bound[i]);
    }
    std::printf("  %2d  %.6f\n", moduli, worst);
    // The errors align: the rounding term cannot be improved (the bound is within 1% of the error
    // while it dominates the reconstruction's).
    if (moduli <= 12) {
      EXPECT_GT(worst, 0.99) << moduli;
    }
    check_bounds(ComplexOp::N, ComplexOp::N, m, n, k, A, B, {moduli}, "adversarial signs");
  }
}

// Few moduli and a deep k give d < 0 (S > Q), where step 1 truncates instead of rounding (rounding
// there wrapped the CRT: 2 moduli, k = 28250, found in review): the result stays within the direct bound.
TEST(Ozaki2ComplexReference, FewModuliDeepKTruncatesWhereTheShiftIsNegative) {
  const int64_t m = 1, n = 1, k = 28250;
  const std::vector<zcomplex> A(size_t(k), zcomplex(32.3125, 0.0)), B(size_t(k), zcomplex(32.3125, 0.0));
  for (int moduli : {2, 3}) {
    const nm::Ozaki2Constants& cst = nm::ozaki2_complex_constants(moduli);
    const ref::Ozaki2ComplexOperand a = ref::ozaki2_complex_rows_of_op_a(ComplexOp::N, m, k, A.data(), m, cst);
    if (moduli == 2) {
      EXPECT_EQ(a.nearest[0], 0) << "d < 0 at 2 moduli";
    }
    const std::vector<zcomplex> C = run_2m(ComplexOp::N, ComplexOp::N, m, n, k, A, B, moduli);
    const ref::ComplexAccurateResult acc = ref::accurate_zgemm(ComplexOp::N, ComplexOp::N, m, n, k, A.data(), m, B.data(), k);
    const std::vector<double> err = ref::complex_errors(C.data(), m, acc);
    const std::vector<double> bound =
        ref::ozaki2_complex_error_bound(ComplexOp::N, ComplexOp::N, m, n, k, A.data(), m, B.data(), k, moduli);
    EXPECT_LE(err[0], bound[0]) << moduli << " moduli: C " << C[0];
    EXPECT_GE(C[0].real(), 0.0) << moduli << " moduli: no wrap to the other sign";
  }
}

TEST(Ozaki2ComplexReference, AlphaBetaBlasSemantics) {
  std::mt19937_64 rng = seeded(8);
  const int64_t m = 4, n = 3, k = 20;
  const std::vector<zcomplex> A = complex_matrix(m, k, 0.5, 1, 1, rng), B = complex_matrix(k, n, 0.5, 1, 1, rng);
  const std::vector<zcomplex> C0 = complex_matrix(m, n, 0.5, 1, 1, rng);
  const std::vector<zcomplex> acc = run_2m(ComplexOp::N, ComplexOp::N, m, n, k, A, B, 16);  // alpha 1, beta 0
  const zcomplex alpha(0.75, -1.25), beta(-0.5, 2.0);
  std::vector<zcomplex> C = C0;
  ref::ozaki2_complex_reference(ComplexOp::N, ComplexOp::N, m, n, k, alpha, A.data(), m, B.data(), k, beta, C.data(),
                                m, 16);
  for (size_t i = 0; i < C.size(); ++i) {
    const nm::ComplexF64 want = nm::oz2c_apply_alpha_beta({alpha.real(), alpha.imag()}, {acc[i].real(), acc[i].imag()},
                                                          {beta.real(), beta.imag()}, {C0[i].real(), C0[i].imag()}, true);
    ASSERT_TRUE(same_bits(C[i], zcomplex(want.re, want.im))) << i;
  }
  // beta == 0: C is not read (NaN there does not propagate).
  std::vector<zcomplex> Cn(C0.size(), zcomplex(NAN, NAN));
  ref::ozaki2_complex_reference(ComplexOp::N, ComplexOp::N, m, n, k, alpha, A.data(), m, B.data(), k, 0.0, Cn.data(),
                                m, 16);
  for (size_t i = 0; i < Cn.size(); ++i) {
    const nm::ComplexF64 want = nm::oz2c_mul({alpha.real(), alpha.imag()}, {acc[i].real(), acc[i].imag()});
    ASSERT_TRUE(same_bits(Cn[i], zcomplex(want.re, want.im))) << i;
  }
  // alpha == 0: C = beta C, A and B not read (NaN there does not propagate); k == 0 the same.
  std::vector<zcomplex> Anan(A.size(), zcomplex(NAN, 0)), Ca = C0, Ck = C0;
  ref::ozaki2_complex_reference(ComplexOp::N, ComplexOp::N, m, n, k, 0.0, Anan.data(), m, B.data(), k, beta, Ca.data(),
                                m, 16);
  ref::ozaki2_complex_reference(ComplexOp::N, ComplexOp::N, m, n, 0, alpha, nullptr, m, nullptr, 1, beta, Ck.data(), m,
                                16);
  for (size_t i = 0; i < Ca.size(); ++i) {
    const nm::ComplexF64 want = nm::oz2c_mul({beta.real(), beta.imag()}, {C0[i].real(), C0[i].imag()});
    ASSERT_TRUE(same_bits(Ca[i], zcomplex(want.re, want.im))) << i;
    ASSERT_TRUE(same_bits(Ck[i], zcomplex(want.re, want.im))) << i;
  }
  // alpha == 0, beta == 1: C untouched (NaN stays); alpha == 0, beta == 0: zeros without reading C.
  std::vector<zcomplex> C1(C0.size(), zcomplex(NAN, 1.0)), Cz(C0.size(), zcomplex(NAN, NAN));
  ref::ozaki2_complex_reference(ComplexOp::N, ComplexOp::N, m, n, k, 0.0, A.data(), m, B.data(), k, 1.0, C1.data(), m, 16);
  ref::ozaki2_complex_reference(ComplexOp::N, ComplexOp::N, m, n, k, 0.0, A.data(), m, B.data(), k, 0.0, Cz.data(), m, 16);
  for (size_t i = 0; i < C1.size(); ++i) {
    EXPECT_TRUE(std::isnan(C1[i].real()) && C1[i].imag() == 1.0);
    EXPECT_TRUE(same_bits(Cz[i], zcomplex(0.0, 0.0)));
  }
  // Bad arguments.
  std::vector<zcomplex> Cb = C0;
  EXPECT_THROW(ref::ozaki2_complex_reference(ComplexOp::N, ComplexOp::N, m, n, k, alpha, A.data(), m - 1, B.data(), k,
                                             beta, Cb.data(), m, 16),
               std::invalid_argument);
  EXPECT_THROW(ref::ozaki2_complex_reference(ComplexOp::C, ComplexOp::N, m, n, k, alpha, A.data(), m, B.data(), k,
                                             beta, Cb.data(), m, 16),
               std::invalid_argument);  // op C: A is k x m, lda >= k
  EXPECT_THROW(ref::ozaki2_complex_reference(ComplexOp::N, ComplexOp::N, m, n, k, alpha, A.data(), m, B.data(), k,
                                             beta, Cb.data(), m, 21),
               std::invalid_argument);
  EXPECT_THROW(ref::ozaki2_complex_reference(static_cast<ComplexOp>('X'), ComplexOp::N, m, n, k, alpha, A.data(), m,
                                             B.data(), k, beta, Cb.data(), m, 16),
               std::invalid_argument);
}

TEST(Ozaki2ComplexReference, InfNanAsNativeComplexArithmetic) {
  std::mt19937_64 rng = seeded(2718);
  const int64_t m = 6, n = 5, k = 30;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<zcomplex> A = complex_matrix(m, k, 0.5, 1, 1, rng), B = complex_matrix(k, n, 0.5, 1, 1, rng);
  B[size_t(3 + 4 * k)] = zcomplex(0.0, 0.0);  // column 4 meets row 1's Inf with a zero: NaN
  std::vector<zcomplex> A0 = A, B0 = B;       // the specials set to 0 below
  A[size_t(1 + 3 * m)] = zcomplex(inf, 0.0);   // row 1: Inf in Re
  A[size_t(2 + 7 * m)] = zcomplex(0.5, -inf);  // row 2: -Inf in Im
  A[size_t(4 + 0 * m)] = zcomplex(NAN, 1.0);   // row 4: NaN
  B[size_t(5 + 2 * k)] = zcomplex(0.0, inf);   // column 2: Inf in Im (meets row 1's Inf)
  for (size_t i : {size_t(1 + 3 * m), size_t(2 + 7 * m), size_t(4)}) A0[i] = 0.0;
  B0[size_t(5 + 2 * k)] = 0.0;
  for (ComplexOp tb : {ComplexOp::N, ComplexOp::C}) {
    const std::vector<zcomplex> Bs = stored_as(tb, B, k, n), B0s = stored_as(tb, B0, k, n);
    const std::vector<zcomplex> C = run_2m(ComplexOp::N, tb, m, n, k, A, Bs, 16);
    const std::vector<zcomplex> Cf = run_2m(ComplexOp::N, tb, m, n, k, A0, B0s, 16);
    std::vector<zcomplex> Cp(size_t(m * n));
    ref::plain_zgemm(ComplexOp::N, tb, m, n, k, 1.0, A.data(), m, Bs.data(), stored_rows(tb, k, n), 0.0, Cp.data(), m);
    for (int64_t c = 0; c < n; ++c)
      for (int64_t r = 0; r < m; ++r) {
        const size_t i = size_t(r + c * m);
        const bool special = r == 1 || r == 2 || r == 4 || c == 2;
        if (!special) {
          ASSERT_TRUE(same_bits(C[i], Cf[i])) << r << "," << c;  // unaffected entries
          continue;
        }
        for (int part = 0; part < 2; ++part) {
          const double x = part ? C[i].imag() : C[i].real(), y = part ? Cp[i].imag() : Cp[i].real();
          ASSERT_FALSE(std::isfinite(x)) << r << "," << c << " part " << part;
          if (std::isnan(y)) {
            ASSERT_TRUE(std::isnan(x)) << r << "," << c << " part " << part;
          } else {
            ASSERT_EQ(x, y) << r << "," << c << " part " << part;
          }
        }
      }
    // Row 1 against column 4: Inf times 0 gives NaN in both parts, as native arithmetic.
    EXPECT_TRUE(std::isnan(C[size_t(1 + 4 * m)].real()) && std::isnan(C[size_t(1 + 4 * m)].imag()));
  }
}

// ---- Accuracy against Karatsuba and the real scheme; the FP64 decision ----

TEST(Ozaki2ComplexAccuracy, ErrorPerModuliCountAgainstKaratsubaAndTheRealScheme) {
  std::mt19937_64 rng = seeded(9090);
  const int64_t m = 16, n = 16, k = 1024;
  std::printf("bits of P: count, complex set (2M), real set\n");
  for (int moduli = 12; moduli <= 20; ++moduli) {
    double b2 = 0, br = 0;
    for (int i = 0; i < moduli; ++i) {
      b2 += std::log2(double(nm::kComplexModuliTable[i]));
      br += std::log2(double(nm::kModuliTable[i]));
    }
    std::printf("  %2d  %6.2f  %6.2f\n", moduli, b2, br);
  }
  for (double phi : {-1.0, 0.5, 1.0}) {
    const std::vector<zcomplex> A = complex_matrix(m, k, phi, 1, 1, rng), B = complex_matrix(k, n, phi, 1, 1, rng);
    const ref::ComplexAccurateResult acc = ref::accurate_zgemm(ComplexOp::N, ComplexOp::N, m, n, k, A.data(), m, B.data(), k);
    std::vector<zcomplex> Cp(size_t(m * n));
    ref::plain_zgemm(ComplexOp::N, ComplexOp::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, Cp.data(), m);
    const double native = componentwise(Cp, m, acc);
    // The real scheme on real data of the same shape (its own double-double reference).
    const std::vector<double> Ar = ref::random_matrix(m, k, phi, rng), Br = ref::random_matrix(k, n, phi, rng);
    const ref::AccurateResult racc =
        ref::accurate_gemm(ozgemm::Op::N, ozgemm::Op::N, m, n, k, 1.0, Ar.data(), m, Br.data(), k, 0.0, nullptr, m);
    std::printf("phi %.1f, %lldx%lldx%lld, componentwise error |C - AB| / |A||B| (plain complex FP64 %.2e)\n", phi,
                (long long)m, (long long)n, (long long)k, native);
    std::printf("  count  2M (2 products)  Karatsuba (3)  real Ozaki-II (real data, 1)\n");
    int first_2m = 0, first_kara = 0;
    double prev = INFINITY;
    for (int moduli = 12; moduli <= 20; ++moduli) {
      const double e2 = componentwise(run_2m(ComplexOp::N, ComplexOp::N, m, n, k, A, B, moduli), m, acc);
      const double ek = componentwise(run_karatsuba(m, n, k, A, B, moduli), m, acc);
      std::vector<double> Cr(size_t(m * n));
      ref::ozaki2_dgemm(ozgemm::Op::N, ozgemm::Op::N, m, n, k, 1.0, Ar.data(), m, Br.data(), k, 0.0, Cr.data(), m, moduli);
      const double er = ref::compare(Cr.data(), m, racc).componentwise;
      std::printf("  %5d  %15.2e  %13.2e  %12.2e\n", moduli, e2, ek, er);
      if (!first_2m && e2 <= native) first_2m = moduli;
      if (!first_kara && ek <= native) first_kara = moduli;
      // The error falls with the count until it reaches the reconstruction's few ulps.
      if (prev > 16 * kU) {
        EXPECT_LT(e2, prev) << moduli;
      }
      prev = e2;
    }
    std::printf("  at or below plain FP64: 2M from %d moduli (%d products), Karatsuba from %d (%d products)\n",
                first_2m, 2 * first_2m, first_kara, 3 * first_kara);
    ASSERT_GT(first_2m, 0);
    ASSERT_GT(first_kara, 0);
    // The complex set has fewer bits per modulus: 2M needs at most two moduli more than Karatsuba over
    // the real set, and fewer products.
    EXPECT_LE(first_2m, first_kara + 2);
    EXPECT_LT(2 * first_2m, 3 * first_kara);
  }
}

TEST(Ozaki2ComplexAccuracy, DecisionPicksTheSmallestCountMeetingTheBound) {
  std::mt19937_64 rng = seeded(4711);
  const int64_t m = 12, n = 10, k = 400;
  std::printf("FP64 decision, %lldx%lldx%lld: family, complex moduli (max R2c), real decision on the real parts\n",
              (long long)m, (long long)n, (long long)k);
  for (const Family& f : kFamilies) {
    const std::vector<zcomplex> A = complex_matrix(m, k, f.phi, f.re_scale, f.im_scale, rng);
    const std::vector<zcomplex> B = complex_matrix(k, n, f.phi, f.re_scale, f.im_scale, rng);
    const ref::Ozaki2Decision d = ref::decide_complex_moduli(ComplexOp::N, ComplexOp::N, m, n, k, A.data(), m, B.data(), k);
    ASSERT_EQ(d.ratio_max.size(), size_t(nm::kModuliWindow));
    EXPECT_EQ(d.target, 4.0);
    // Real parts through the real decision, for comparison.
    std::vector<double> Ar(A.size()), Br(B.size());
    for (size_t i = 0; i < A.size(); ++i) Ar[i] = A[i].real() != 0 ? A[i].real() : A[i].imag();
    for (size_t i = 0; i < B.size(); ++i) Br[i] = B[i].real() != 0 ? B[i].real() : B[i].imag();
    const ref::Ozaki2Decision dr = ref::decide_moduli(ozgemm::Op::N, ozgemm::Op::N, m, n, k, Ar.data(), m, Br.data(), k);
    std::printf("  %-22s %2d (%.3g)   real %2d (%.3g)\n", f.name, d.moduli, d.bound, dr.moduli, dr.bound);
    if (!d.moduli) {
      for (double r : d.ratio_max) EXPECT_GT(r, d.target);
      continue;
    }
    // The smallest: every count below misses the target; at the count the bound holds for every entry.
    for (int w = 0; w < d.moduli - nm::kMinModuli; ++w) EXPECT_GT(d.ratio_max[size_t(w)], d.target);
    EXPECT_LE(d.bound, d.target);
    const ref::ComplexAccurateResult acc = ref::accurate_zgemm(ComplexOp::N, ComplexOp::N, m, n, k, A.data(), m, B.data(), k);
    const std::vector<zcomplex> C = run_2m(ComplexOp::N, ComplexOp::N, m, n, k, A, B, d.moduli);
    const std::vector<double> err = ref::complex_errors(C.data(), m, acc);
    for (size_t i = 0; i < err.size(); ++i) ASSERT_LE(err[i], d.bound * kU * acc.absprod[i]) << f.name << " " << i;
  }
  // Deep products (the decision only; 6 x 5): the complex and the real decision side by side.
  std::printf("FP64 decision at depth: family, k, complex moduli (max R2c), real moduli on real data (max R2)\n");
  for (double phi : {-1.0, 0.5, 1.0})
    for (int64_t kk : {4096, 16384}) {
      const std::vector<zcomplex> A = complex_matrix(6, kk, phi, 1, 1, rng), B = complex_matrix(kk, 5, phi, 1, 1, rng);
      const ref::Ozaki2Decision d = ref::decide_complex_moduli(ComplexOp::N, ComplexOp::N, 6, 5, kk, A.data(), 6, B.data(), kk);
      const std::vector<double> Ar = ref::random_matrix(6, kk, phi, rng), Br = ref::random_matrix(kk, 5, phi, rng);
      const ref::Ozaki2Decision dr = ref::decide_moduli(ozgemm::Op::N, ozgemm::Op::N, 6, 5, kk, Ar.data(), 6, Br.data(), kk);
      std::printf("  phi %4.1f  k %6lld  %2d (%.3g)  real %2d (%.3g)\n", phi, (long long)kk, d.moduli, d.bound, dr.moduli,
                  dr.bound);
      for (int w = 0; d.moduli && w < d.moduli - nm::kMinModuli; ++w) EXPECT_GT(d.ratio_max[size_t(w)], d.target);
    }
  // Depth 2: c = 2 < 2.03, never met.
  const std::vector<zcomplex> A = complex_matrix(3, 2, 0.5, 1, 1, rng), B = complex_matrix(2, 3, 0.5, 1, 1, rng);
  EXPECT_EQ(ref::decide_complex_moduli(ComplexOp::N, ComplexOp::N, 3, 3, 2, A.data(), 3, B.data(), 2).moduli, 0);
}

// The complex sides: the real ones times fl(sqrt2), the cross term k 2^52 (rounded column) or k 2^53
// (truncated column, d < 0), none on an exact side.
TEST(Ozaki2ComplexAccuracy, SidesScaleTheRealOnesAndCarryTheCrossTerm) {
  const double cross = nm::oz2c_rounding_cross(4096);
  EXPECT_EQ(cross, std::ldexp(4096.0, 52));
  const nm::Oz2Side rounded = nm::oz2c_side(9, 3, cross), truncated = nm::oz2c_side(9, -3, cross);
  const nm::Oz2Side exact = nm::oz2c_side(1, 3, cross);
  EXPECT_EQ(rounded.x, nm::mul_rn(std::ldexp(1.0, 53 - nm::kUnitBits - 3), nm::kSqrt2Up));
  EXPECT_EQ(truncated.x, nm::mul_rn(std::ldexp(1.0, 54 - nm::kUnitBits + 3), nm::kSqrt2Up));
  EXPECT_EQ(rounded.recon_add, cross);
  EXPECT_EQ(truncated.recon_add, 2 * cross);
  EXPECT_EQ(exact.x, 0.0);
  EXPECT_EQ(exact.recon_add, 0.0);
  EXPECT_GT(nm::kSqrt2Up * nm::kSqrt2Up, 2.0);  // fl(sqrt2) rounds up
}

TEST(Ozaki2ComplexAccuracy, PerEntryRatioEqualsTheHostEvaluation) {
  // oz2c_entry_ratio (what a GPU pass evaluates per entry) against oz2c_entry_ratios, bit for bit.
  std::mt19937_64 rng = seeded(606);
  const int64_t m = 5, n = 4, k = 200;
  const std::vector<zcomplex> A = complex_matrix(m, k, 1.0, 1, 1, rng), B = complex_matrix(k, n, 1.0, 1, 1, rng);
  const ref::OperandStats sa = ref::complex_stats_rows_of_op_a(ComplexOp::C, m, k, A.data(), k);
  const ref::OperandStats sb = ref::complex_stats_cols_of_op_b(ComplexOp::N, k, n, B.data(), k);
  const std::vector<int64_t> P = ref::magnitude_product(sa, sb);
  for (int moduli = nm::kMinModuli; moduli <= nm::kMaxModuli; ++moduli) {
    const nm::Ozaki2Constants& c = nm::ozaki2_complex_constants(moduli);
    const std::vector<double> R = ref::oz2c_entry_ratios(sa, sb, P, moduli);
    for (int64_t col = 0; col < n; ++col)
      for (int64_t r = 0; r < m; ++r) {
        const double cross = nm::oz2c_rounding_cross(k);
        const nm::Oz2Side row = nm::oz2c_side(sa.q[size_t(r)], nm::oz2_extra_shift(sa.S[size_t(r)], c), cross);
        const nm::Oz2Side cs = nm::oz2c_side(sb.q[size_t(col)], nm::oz2_extra_shift(sb.S[size_t(col)], c), cross);
        const double want = nm::oz2c_entry_ratio(nm::oz2_inverse(P[size_t(r + col * m)]),
                                                 nm::int64_to_double_rn(sa.U[size_t(r)]),
                                                 nm::int64_to_double_rn(sb.U[size_t(col)]), row, cs,
                                                 sa.shift[size_t(r)] + sb.shift[size_t(col)], c);
        ASSERT_EQ(nm::bits_of(R[size_t(r + col * m)]), nm::bits_of(want)) << moduli;
      }
  }
}

// ---- The GPU kernels' integer and FP32 forms for the complex moduli (kernels/dgemm/ozaki2_complex.cu) ----
namespace {
// Modulus I.. N-1's residue of a = x 2^e as an integer (nearest with ties away, or truncated) from the
// FP32 pieces (the residue kernel's form) against the reference's oz2_scaled_residue, and both against
// the exact integer's residue (oztest::integer_magnitude, 128-bit); the kernel's FP32 forward transform of the element
// x + i y (oz2c_forward_biased from both parts' pieces) against oz2c_forward of the reference's
// residues; and sym_mod_i32 (the unfused reconstruction's int32 reduction) against sym_mod.
using u128 = unsigned __int128;
int32_t exact_residue(u128 mag, bool neg, int p) {
  const int64_t r = static_cast<int64_t>(mag % u128(p));
  return nm::sym_mod(neg ? -r : r, p);
}
template <int I, int N, int W>
void expect_kernel_residues(double x, double y, int e, bool nearest, const nm::Oz2Pieces<W>& pc,
                            const nm::Oz2Pieces<W>& py, int32_t v32) {
  if constexpr (I < N) {
    constexpr int P = nm::kComplexModuliTable[I];
    const int32_t ur = nm::oz2_scaled_residue(x, e, P, nearest), ui = nm::oz2_scaled_residue(y, e, P, nearest);
    ASSERT_EQ(ur, exact_residue(oztest::integer_magnitude(x, e, nearest), x < 0, P)) << x << " 2^" << e << " mod " << P;
    ASSERT_EQ(ui, exact_residue(oztest::integer_magnitude(y, e, nearest), y < 0, P)) << y << " 2^" << e << " mod " << P;
    ASSERT_EQ(nm::oz2_unbias(nm::oz2_residue_biased<P>(pc.f)), ur)
        << x << " 2^" << e << " mod " << P << " at " << N << " moduli";
    const nm::Oz2cPlanes want = nm::oz2c_forward(ur, ui, nm::oz2c_modulus(I));
    const nm::Oz2cPlanesBiased got = nm::oz2c_forward_biased<I>(pc.f, py.f);
    ASSERT_EQ(nm::oz2_unbias(got.x0), want.x0) << x << " + i " << y << " 2^" << e << " mod " << P << " at " << N;
    ASSERT_EQ(nm::oz2_unbias(got.x1), want.x1) << x << " + i " << y << " 2^" << e << " mod " << P << " at " << N;
    ASSERT_EQ(nm::sym_mod_i32<P>(v32), nm::sym_mod(v32, P)) << v32 << " mod " << P;
    expect_kernel_residues<I + 1, N>(x, y, e, nearest, pc, py, v32);
  }
}
template <int N>
void check_kernel_residues(std::mt19937_64& rng) {
  if constexpr (N <= nm::kMaxModuli) {
    constexpr int kBits = nm::oz2_operand_bits(N);  // |A'| < 2^kBits at N moduli (the complex set's P is smaller)
    std::uniform_real_distribution<double> u(1.0, 2.0);
    for (int t = 0; t < 4000; ++t) {
      double x = t % 9 == 0 ? std::ldexp(u(rng), -1030 - int(rng() % 40)) : std::ldexp(u(rng), int(rng() % 200) - 100);
      if (t % 11 == 0) x = std::ldexp(std::floor(std::ldexp(x, 40)) + 0.5, -40);  // a tie at e = 40 (below)
      if (rng() & 1) x = -x;
      // The top bit of |x| 2^e, below kBits - 1: rounding up stays below 2^kBits (the scaling keeps
      // |A'| <= sqrt(Q) < 2^kBits).
      const int b = t % 11 == 0 && std::ilogb(x) + 40 < kBits - 1 ? std::ilogb(x) + 40
                                                                  : int(rng() % uint64_t(kBits + 1)) - 3;
      const int e = b - std::ilogb(x);
      // The imaginary part: its own top bit below the real part's range end, either sign, 0 at times.
      const int by = int(rng() % uint64_t(kBits + 1)) - 3;
      double y = t % 7 == 0 ? 0.0 : std::ldexp(u(rng), by - e);
      if (rng() & 1) y = -y;
      const auto v32 = static_cast<int32_t>(static_cast<uint32_t>(rng()));
      const bool nearest = t % 3 != 0;  // both of step 1's roundings (oz2_rounds_to_nearest)
      const nm::Oz2Pieces<nm::oz2_pieces(N)> px = nm::oz2_pieces_for_count<N>(x, e, nearest),
                                             py = nm::oz2_pieces_for_count<N>(y, e, nearest);
      // The pieces are the 14-bit windows of the integer's magnitude with the value's sign.
      const u128 mag = oztest::integer_magnitude(x, e, nearest);
      ASSERT_LT(mag, u128(1) << kBits);
      for (int j = 0; j < nm::oz2_pieces(N); ++j) {
        const double piece = double(uint32_t(mag >> (nm::kOz2PieceBits * j)) & ((1u << nm::kOz2PieceBits) - 1));
        ASSERT_EQ(double(px.f[j]), x < 0 ? -piece : piece) << x << " 2^" << e << " piece " << j << " at " << N;
      }
      expect_kernel_residues<0, N>(x, y, e, nearest, px, py, v32);
    }
    check_kernel_residues<N + 1>(rng);
  }
}

// The FP32 forward transform at the ends of its range: t_re at +-(the largest piece sum at any
// count) and near it, t_im over every residue class and at both ends, against oz2c_forward of the
// symmetric residues (oz2c_forward_biased with one piece: t itself).
int64_t largest_piece_sum(int p) {
  int64_t b = 0;
  for (int n = nm::kMinModuli; n <= nm::kMaxModuli; ++n) b = std::max(b, nm::oz2_piece_sum_bound(p, n));
  return b;
}
template <int I>
void check_forward_range_ends() {
  if constexpr (I < 20) {
    constexpr int P = nm::kComplexModuliTable[I];
    const nm::Oz2cModulus md = nm::oz2c_modulus(I);
    const int64_t bound = largest_piece_sum(P);
    std::vector<int64_t> ts = {0, 1, -1};
    for (int64_t d = 0; d < 2 * P; ++d) {
      ts.push_back(bound - d);
      ts.push_back(-bound + d);
    }
    for (int64_t t_re : ts) {
      for (int64_t t_im = -int64_t(P); t_im <= P; ++t_im) {
        for (int64_t shift_im : {int64_t(0), bound - P, -bound + P}) {
          const int64_t ti = t_im + shift_im;
          const float re[1] = {static_cast<float>(t_re)}, im[1] = {static_cast<float>(ti)};
          const nm::Oz2cPlanesBiased got = nm::oz2c_forward_biased<I>(re, im);
          const nm::Oz2cPlanes want = nm::oz2c_forward(nm::sym_mod(t_re, P), nm::sym_mod(ti, P), md);
          ASSERT_EQ(nm::oz2_unbias(got.x0), want.x0) << t_re << " + i " << ti << " mod " << P;
          ASSERT_EQ(nm::oz2_unbias(got.x1), want.x1) << t_re << " + i " << ti << " mod " << P;
        }
      }
    }
    check_forward_range_ends<I + 1>();
  }
}

// The reconstruction's FP32 inverse (oz2c_inverse_biased on the bytes as biased floats, the residue
// as a double by oz2c_biased_double) against oz2c_inverse, every pair of symmetric residues.
template <int I>
void check_inverse_exhaustive() {
  if constexpr (I < 20) {
    const nm::Oz2cModulus md = nm::oz2c_modulus(I);
    const int h = (md.p - 1) / 2;
    for (int u1 = -h; u1 <= h; ++u1)
      for (int u2 = -h; u2 <= h; ++u2) {
        const float f1 = static_cast<float>(u1) + nm::kOz2cByteBias, f2 = static_cast<float>(u2) + nm::kOz2cByteBias;
        ASSERT_EQ(nm::bits_of(f1), 0x4B000000u | uint32_t(u1 + 128));  // the kernel's byte permute
        const nm::Oz2cResidueBiased got = nm::oz2c_inverse_biased<I>(f1, f2);
        const nm::Oz2cResidue want = nm::oz2c_inverse(u1, u2, md);
        ASSERT_EQ(nm::oz2_unbias(got.re), want.re) << u1 << " " << u2 << " mod " << md.p;
        ASSERT_EQ(nm::oz2_unbias(got.im), want.im) << u1 << " " << u2 << " mod " << md.p;
        ASSERT_EQ(nm::bits_of(nm::oz2c_biased_double(got.re)), nm::bits_of(static_cast<double>(want.re)));
        ASSERT_EQ(nm::bits_of(nm::oz2c_biased_double(got.im)), nm::bits_of(static_cast<double>(want.im)));
      }
    check_inverse_exhaustive<I + 1>();
  }
}
}  // namespace

// The statistics kernel's one-read S (Oz2cNormState: groups at their own shifts, merged in any
// order) equals the direct sum of oz2_norm_term at the row's shift, on rows whose parts span many
// binades (groups whose shifts differ from the row's by 0 .. past 6), with zeros, subnormals and
// non-finite parts left out as the kernel does.
TEST(Ozaki2ComplexNumerics, OneReadNormEqualsTheTwoPassNorm) {
  std::mt19937_64 rng(2035);
  std::uniform_real_distribution<double> u(1.0, 2.0);
  for (int t = 0; t < 3000; ++t) {
    const int k = 1 + int(rng() % 300), spread = int(rng() % 80);
    const int base = int(rng() % 2000) - 1000 - (t % 10 == 0 ? 1100 : 0);  // some rows in the subnormals
    std::vector<double> parts(size_t(2 * k));
    for (double& x : parts) {
      const int kind = int(rng() % 16);
      x = kind == 0 ? 0.0 : std::ldexp(u(rng), std::max(-1074, base - int(rng() % uint64_t(spread + 1))));
      if (kind == 1 && t % 3 == 0) x = std::numeric_limits<double>::infinity();
      if (rng() & 1) x = -x;
    }
    double mx = 0.0;
    for (double x : parts)
      if (nm::is_finite(x)) mx = std::max(mx, std::fabs(x));
    const int32_t sh = nm::shift_from_max(mx);
    int64_t want = 0;
    for (double x : parts)
      if (nm::is_finite(x)) want += nm::oz2_norm_term(x, sh - 1);
    // Groups of random sizes, merged in a random tree order.
    std::vector<nm::Oz2cNormState> states;
    for (size_t i = 0; i < parts.size();) {
      const size_t n = std::min(parts.size() - i, size_t(1 + rng() % 20));
      double gmax = 0.0;
      for (size_t j = i; j < i + n; ++j)
        if (nm::is_finite(parts[j])) gmax = std::max(gmax, std::fabs(parts[j]));
      nm::Oz2cNormState g;
      if (gmax > 0.0) {
        g.g = nm::shift_from_max(gmax) - 1;
        for (size_t j = i; j < i + n; ++j)
          if (nm::is_finite(parts[j])) nm::oz2c_norm_add(g, parts[j]);
      }
      states.push_back(g);
      i += n;
    }
    while (states.size() > 1) {
      const size_t a = rng() % states.size();
      size_t b = rng() % (states.size() - 1);
      if (b >= a) ++b;
      nm::oz2c_norm_merge(states[a], states[b]);
      states.erase(states.begin() + static_cast<std::ptrdiff_t>(b));
    }
    ASSERT_EQ(nm::oz2c_norm_of(states[0], sh), want) << "row " << t << " (k " << k << ", spread " << spread << ")";
  }
}

TEST(Ozaki2ComplexNumerics, KernelForwardTransformExactAtTheRangeEnds) { check_forward_range_ends<0>(); }

TEST(Ozaki2ComplexNumerics, KernelInverseTransformExhaustivePerModulus) { check_inverse_exhaustive<0>(); }

TEST(Ozaki2ComplexNumerics, KernelResidueFormsEqualTheReference) {
  std::mt19937_64 rng(2032);
  check_kernel_residues<nm::kMinModuli>(rng);
}

// The Hopper products' epilogue reduction (oz2_sym_mod_i32, run-time modulus) for the complex moduli,
// as the real set's test does: a full range around 0, both ends of int32, random values.
TEST(Ozaki2ComplexNumerics, EpilogueReductionEqualsSymModForTheComplexModuli) {
  std::mt19937_64 rng(2033);
  for (int i = 0; i < 20; ++i) {
    const int32_t p = nm::kComplexModuliTable[i];
    const nm::Oz2Modulus mod = nm::oz2_modulus(p);
    auto check = [&](int64_t v) {
      ASSERT_EQ(int32_t(nm::oz2_sym_mod_i32(static_cast<int32_t>(v), mod)), nm::sym_mod(v, p)) << v << " mod " << p;
    };
    for (int64_t v = -(int64_t(1) << 17); v <= (int64_t(1) << 17); ++v) check(v);
    for (int64_t d = 0; d < 4096; ++d) {
      check(int64_t(INT32_MIN) + d);
      check(int64_t(INT32_MAX) - d);
    }
    for (int t = 0; t < 100000; ++t) check(static_cast<int32_t>(static_cast<uint32_t>(rng())));
  }
}

// FP64 mode's device passes in their per-element forms (kernels/dgemm/ozaki2_complex.cu): the digits
// pass's q from the parts' lowest bits, the magnitudes pass's oz2c_magnitude_terms of each element with
// a non-finite part as 0, summed or maximised per row, equal the host statistics
// (ref::complex_stats_rows_of_op_a) the host decision reads; and the decision's S equals the scheme's
// own scaling norm (the statistics kernel's, over the finite parts at shift - 1), so an emulation after
// the decision may reuse it (CallPlan::stats_ready).
TEST(Ozaki2ComplexAccuracy, DecisionPassFormsEqualTheHostStatistics) {
  std::mt19937_64 rng(2034);
  const int64_t m = 9, k = 77;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (double phi : {-1.0, 0.5, 2.0}) {
    std::vector<zcomplex> A = complex_matrix(m, k, phi, 1.0, phi == 2.0 ? 0x1p30 : 1.0, rng);
    A[1 + 3 * m] = zcomplex(inf, 0.5);
    A[2 + 5 * m] = zcomplex(0.25, nan);
    for (int64_t l = 0; l < k; ++l) A[4 + l * m] = zcomplex(0.0, 0.0);              // an all-zero row
    for (int64_t l = 0; l < k; ++l) A[6 + l * m] = zcomplex(std::ldexp(1.0, -3), 0.0);  // exact in one digit
    for (ComplexOp op : {ComplexOp::N, ComplexOp::C}) {
      const ref::OperandStats s = ref::complex_stats_rows_of_op_a(op, m, k, A.data(), m);
      for (int64_t r = 0; r < m; ++r) {
        double mx = 0.0;
        int32_t lsb = nm::kNoDigits;
        bool bad = false;
        for (int64_t l = 0; l < k; ++l) {
          const zcomplex z = ref::op_zelem(A.data(), m, op, r, l);
          for (double part : {z.real(), z.imag()}) {
            if (!nm::is_finite(part)) {
              bad = true;
              continue;
            }
            mx = std::max(mx, std::fabs(part));
            if (part != 0.0) lsb = std::min(lsb, nm::lowest_bit_exponent(part));
          }
        }
        const int32_t sh = nm::shift_from_max(mx);
        ASSERT_EQ(s.shift[size_t(r)], sh) << r;
        ASSERT_EQ(s.nonfinite[size_t(r)], bad ? 1 : 0) << r;
        ASSERT_EQ(s.q[size_t(r)], nm::exact_digits(sh, lsb)) << r;
        int64_t U = 0, S = 0, norm = 0;
        for (int64_t l = 0; l < k; ++l) {
          const zcomplex z = ref::op_zelem(A.data(), m, op, r, l);
          const double re = nm::is_finite(z.real()) ? z.real() : 0.0, im = nm::is_finite(z.imag()) ? z.imag() : 0.0;
          const nm::MagnitudeTerms t = nm::oz2c_magnitude_terms(re, im, sh);
          ASSERT_EQ(int32_t(s.mag[size_t(r * k + l)]), t.digit) << r << " " << l;
          U += t.unit;
          S += t.norm;
          for (double part : {z.real(), z.imag()})
            if (nm::is_finite(part)) norm += nm::oz2_norm_term(part, sh - 1);
        }
        EXPECT_EQ(s.U[size_t(r)], U) << r;
        EXPECT_EQ(s.S[size_t(r)], S) << r;
        EXPECT_EQ(S, norm) << r << ": the decision's S is the scaling's";
      }
      // The operand's scaling (step 1) from that S: the shifts the emulation uses.
      const nm::Ozaki2Constants& c = nm::ozaki2_complex_constants(16);
      const ref::Ozaki2ComplexOperand o = ref::ozaki2_complex_rows_of_op_a(op, m, k, A.data(), m, c);
      for (int64_t r = 0; r < m; ++r)
        EXPECT_EQ(o.shift[size_t(r)], s.shift[size_t(r)] - 1 + nm::oz2_extra_shift(s.S[size_t(r)], c)) << r;
    }
  }
}

// The complex magnitude terms (oz2c_magnitude_terms) against the element's modulus |a'| = |a| 2^sigma
// in long double: the digit a lower bound (<= min(|a'|, 127)), the unit term an upper bound of
// 2^10 |a'|, each never worse than the parts' own terms, on random phases, exact integers (3 + 4i:
// |a'| = 5), tiny parts, subnormals and shifts outside the normal powers (the parts' terms alone).
// On random phases the modulus gains about 4/pi in U and about 1.1 a digit (the bound's two factors).
TEST(Ozaki2ComplexAccuracy, MagnitudeTermsBoundTheModulus) {
  std::mt19937_64 rng = seeded(8080);
  std::normal_distribution<double> g(0.0, 1.0);
  double unit_parts = 0, unit_mod = 0, digit_parts = 0, digit_mod = 0;
  const auto check = [&](double re, double im, int32_t sigma, bool tally) {
    const nm::MagnitudeTerms t = nm::oz2c_magnitude_terms(re, im, sigma);
    const nm::MagnitudeTerms r = nm::magnitude_terms(re, sigma), i = nm::magnitude_terms(im, sigma);
    const long double h = std::hypot(std::ldexp(static_cast<long double>(re), sigma),
                                     std::ldexp(static_cast<long double>(im), sigma));
    ASSERT_LE(static_cast<long double>(t.digit), h) << re << " " << im << " 2^" << sigma;
    ASSERT_LE(t.digit, 127);
    ASSERT_GE(t.digit, std::max(r.digit, i.digit));
    ASSERT_GE(static_cast<long double>(t.unit), std::ldexp(h, nm::kUnitBits)) << re << " " << im << " 2^" << sigma;
    ASSERT_LE(t.unit, r.unit + i.unit);
    ASSERT_EQ(t.norm, r.norm + i.norm);
    if (tally) {
      unit_parts += double(r.unit + i.unit);
      unit_mod += double(t.unit);
      digit_parts += std::max(r.digit, i.digit);
      digit_mod += t.digit;
    }
  };
  for (int t = 0; t < 200000; ++t) {
    const double re = g(rng), im = g(rng);
    const double mx = std::max(std::fabs(re), std::fabs(im));
    // The row's shift: from this element (|a'| up to 128 sqrt2: the digit's cap) or from a larger one.
    const int32_t sigma = nm::shift_from_max(t % 3 ? mx : mx * std::ldexp(1.0, int(rng() % 12)));
    check(re, im, sigma, t % 3 != 0);
    if (t % 5 == 0) check(std::ldexp(re, -1040), std::ldexp(im, -1045), nm::shift_from_max(std::ldexp(mx, -1040)), false);
    if (t % 7 == 0) check(re, std::ldexp(im, -40), sigma, false);  // the smaller part far below
  }
  for (int32_t sigma = -3; sigma <= 3; ++sigma) check(std::ldexp(3.0, -sigma), std::ldexp(4.0, -sigma), sigma, false);
  check(0.0, 0.0, 5, false);
  check(1e-310, -3e-312, nm::shift_from_max(1e-310), false);  // 2^sigma past the normal powers
  std::printf("random phases: U parts / modulus %.3f, P digits modulus / parts %.3f\n", unit_parts / unit_mod,
              digit_mod / digit_parts);
  EXPECT_GT(unit_parts / unit_mod, 1.2);   // E(|x| + |y|) / E|x + iy| = 4/pi for Gaussian parts
  EXPECT_GT(digit_mod / digit_parts, 1.05);  // about 1.1 a digit (1.2 in P: products of two)
}
