// CPU tests of the Ozaki scheme II (ozgemm/numerics/ozaki2.hpp, ozgemm/reference/ozaki2.hpp): the
// moduli, symmetric residues (exhaustively on a range), the CRT constants (reconstruction of known
// 128-bit integers), the scaling's guarantee |A'||B'| <= Q, exact results on integer inputs, errors
// within the documented truncation bound on the phi family, and the special values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "ozgemm/numerics/ozaki2.hpp"
#include "ozgemm/numerics/ozaki2_complex.hpp"
#include "ozgemm/reference/ozaki2.hpp"
#include "ozgemm/reference/reference.hpp"
#include "test_util.hpp"

namespace nm = ozgemm::numerics;
namespace ref = ozgemm::ref;
using ozgemm::Op;

TEST(Ozaki2Numerics, ModuliArePairwiseCoprimeAndGreedy) {
  for (int i = 0; i < 20; ++i) {
    EXPECT_LE(nm::kModuliTable[i], 256);
    for (int j = 0; j < i; ++j) EXPECT_EQ(std::gcd(nm::kModuliTable[i], nm::kModuliTable[j]), 1) << i << " " << j;
  }
  // Greedy: every number skipped between two moduli shares a factor with an earlier modulus.
  for (int i = 1; i < 20; ++i)
    for (int v = nm::kModuliTable[i] + 1; v < nm::kModuliTable[i - 1]; ++v) {
      bool shares = false;
      for (int j = 0; j < i; ++j) shares = shares || std::gcd(v, nm::kModuliTable[j]) != 1;
      EXPECT_TRUE(shares) << v;
    }
}

TEST(Ozaki2Numerics, SymmetricResiduesExhaustiveOnARange) {
  for (int i = 0; i < nm::kMaxModuli; ++i) {
    const int p = nm::kModuliTable[i];
    for (int64_t v = -70000; v <= 70000; ++v) {
      const int32_t r = nm::sym_mod(v, p);
      ASSERT_EQ(((v - r) % p + p) % p, 0) << v << " mod " << p;
      if (p % 2) {
        ASSERT_LE(std::abs(r), (p - 1) / 2);
      } else {
        ASSERT_GE(r, -p / 2);
        ASSERT_LT(r, p / 2);
      }
    }
    for (int64_t v : {INT64_MIN + 1, INT64_MAX, int64_t(1) << 62, -(int64_t(1) << 62) - 7})
      EXPECT_EQ((((v % p) - nm::sym_mod(v, p)) % p + p) % p, 0);
  }
}

namespace {
// The kernels' residue of A' from its FP32 pieces (numerics/ozaki2.hpp): p = 256 from the low byte,
// odd p by oz2_residue_biased.
template <int P, int W>
int32_t residue_via_pieces(int64_t v) {
  const nm::Oz2Pieces<W> pc = nm::oz2_pieces_of<W>(v);
  if constexpr (P == 256) {
    return static_cast<int8_t>(static_cast<uint8_t>(pc.low_byte));
  } else {
    return nm::oz2_unbias(nm::oz2_residue_biased<P>(pc.f));
  }
}

// The kernels' two fast forms: the FP32 pieces (residues of A', |A'| < 2^63, five pieces) and
// sym_mod_i32 (the int32 product sums) against the general sym_mod, on random values of every
// magnitude and the edges.
template <int I>
void check_fast_residues(std::mt19937_64& rng) {
  if constexpr (I < nm::kMaxModuli) {
    constexpr int P = nm::kModuliTable[I];
    std::vector<int64_t> wide = {0, 1, -1, INT64_MAX, -INT64_MAX, (int64_t(1) << 62) - 1, -(int64_t(1) << 62),
                                 (int64_t(1) << 42), (int64_t(1) << 14) - 1, int64_t(1) << 14, -((int64_t(1) << 56) + 5),
                                 (int64_t(1) << 56) - 1, P, -P, P / 2, -(P / 2), (P - 1) / 2, -(P - 1) / 2 - 1, 128, -128, 129};
    for (int t = 0; t < 200000; ++t) {
      int64_t v = static_cast<int64_t>(rng() >> 1) >> (rng() % 63);
      wide.push_back(rng() % 2 ? v : -v);
    }
    for (const int64_t v : wide) ASSERT_EQ((residue_via_pieces<P, 5>(v)), nm::sym_mod(v, P)) << v << " mod " << P;
    std::vector<int32_t> narrow = {0, 1, -1, INT32_MAX, INT32_MIN, INT32_MIN + 1, P, -P, P / 2, -(P / 2), 127, -128};
    for (int t = 0; t < 200000; ++t) narrow.push_back(static_cast<int32_t>(static_cast<uint32_t>(rng())) >> (rng() % 32));
    for (const int32_t v : narrow) ASSERT_EQ(nm::sym_mod_i32<P>(v), nm::sym_mod(v, P)) << v << " mod " << P;
    check_fast_residues<I + 1>(rng);
  }
}

// Every integer t the piece sums can reach, |t| <= (2^14 - 1)(1 + 127 * 4), through the FP32
// rounding step, for every odd modulus: the proof's premise (|t| < 2^23) checked exhaustively.
template <int I>
void check_biased_exhaustive() {
  if constexpr (I < nm::kMaxModuli) {
    constexpr int P = nm::kModuliTable[I];
    if constexpr (P % 2 == 1) {
      constexpr int32_t kT = ((1 << nm::kOz2PieceBits) - 1) * (1 + 127 * 4);
      static_assert(kT < (1 << 23), "t below 2^23");
      // The premise of kT: the piece weights are residues of 2^(14 j) of magnitude at most (P - 1) / 2 <= 127.
      for (int j = 1; j < nm::kOz2MaxPieces; ++j) {
        const int c = nm::oz2_piece_weight(P, j);
        ASSERT_LE(std::abs(c), (P - 1) / 2) << "weight " << j << " mod " << P;
        __int128 two = 1;
        for (int b = 0; b < nm::kOz2PieceBits * j; ++b) two *= 2;
        ASSERT_EQ(static_cast<int64_t>((two - c) % P), 0) << "weight " << j << " mod " << P;
      }
      for (int32_t t = -kT; t <= kT; ++t) {
        int32_t r = t % P;  // truncating: (-P, P), then into [-(P-1)/2, (P-1)/2]
        if (r > (P - 1) / 2) r -= P;
        if (r < -(P - 1) / 2) r += P;
        ASSERT_EQ(nm::oz2_unbias(nm::oz2_sym_mod_biased<P>(static_cast<float>(t))), r) << t << " mod " << P;
      }
    }
    check_biased_exhaustive<I + 1>();
  }
}

template <int I, int N, int W>
void check_one_count(int64_t v) {
  if constexpr (I < N) {
    constexpr int P = nm::kModuliTable[I];
    ASSERT_EQ((residue_via_pieces<P, W>(v)), nm::sym_mod(v, P)) << v << " mod " << P << " with " << W << " pieces";
    check_one_count<I + 1, N, W>(v);
  }
}

// Each int64 count's piece count W = oz2_pieces(n) on values up to its bound 2^(4n - 1) (the wide
// counts: WideCountsResiduesFromTheSignificandAreExact).
template <int N>
void check_piece_counts(std::mt19937_64& rng) {
  if constexpr (!nm::oz2_wide(N)) {
    constexpr int W = nm::oz2_pieces(N);
    // The bound: |A'| <= sqrt(Q) < sqrt(P) / 2, and P = prod p_i <= 2^(8N).
    double log2_P = 0;
    for (int i = 0; i < N; ++i) log2_P += std::log2(double(nm::kModuliTable[i]));
    EXPECT_LE(log2_P / 2 - 1, 4.0 * N - 1) << N;
    ASSERT_GE(nm::kOz2PieceBits * W, 4 * N - 1) << N;
    const int bits = 4 * N - 1;
    const int64_t top = bits >= 63 ? INT64_MAX : (int64_t(1) << bits) - 1;
    std::vector<int64_t> vals = {0, 1, -1, top, -top, top / 2 + 1, -(top / 3)};
    for (int t = 0; t < 20000; ++t) {
      const int64_t v = static_cast<int64_t>(rng() & uint64_t(top)) >> (rng() % bits);
      vals.push_back(rng() % 2 ? v : -v);
    }
    for (const int64_t v : vals) {
      check_one_count<0, N, W>(v);
    }
    check_piece_counts<N + 1>(rng);
  }
}
}  // namespace

TEST(Ozaki2Numerics, FastResidueFormsEqualTheGeneralOne) {
  std::mt19937_64 rng(41);
  check_fast_residues<0>(rng);
}

TEST(Ozaki2Numerics, Fp32ResidueStepExhaustiveOverTheReachableRange) { check_biased_exhaustive<0>(); }

// The Hopper products' epilogue reduction (oz2_sym_mod_i32 with a run-time modulus) equals sym_mod on
// every int32 class that matters: a full range around 0 (every low half-word, both signs of the high
// one), both ends of int32, the values next to every half-multiple of p (where rounding t / p could
// go wrong) at large magnitudes, each high half-word with extreme low ones, and random values.
TEST(Ozaki2Numerics, EpilogueReductionEqualsSymMod) {
  std::mt19937_64 rng(47);
  for (int i = 0; i < 20; ++i) {
    const int32_t p = nm::kModuliTable[i];
    const nm::Oz2Modulus mod = nm::oz2_modulus(p);
    auto check = [&](int64_t v) {
      ASSERT_EQ(int32_t(nm::oz2_sym_mod_i32(static_cast<int32_t>(v), mod)), nm::sym_mod(v, p)) << v << " mod " << p;
    };
    for (int64_t v = -(int64_t(1) << 18); v <= (int64_t(1) << 18); ++v) check(v);
    for (int64_t d = 0; d < 65536; ++d) {
      check(int64_t(INT32_MIN) + d);
      check(int64_t(INT32_MAX) - d);
    }
    for (int64_t h = -32768; h < 32768; ++h)
      for (int64_t l : {0, 1, 127, 128, 255, 256, 32767, 32768, 65534, 65535}) check(h * 65536 + l);
    for (int t = 0; t < 20000; ++t) {
      // q p + floor(p / 2) + {-1, 0, 1, 2}: the residues either side of the half-way point.
      const int64_t q = static_cast<int64_t>(rng() % (uint64_t(INT32_MAX) / p - 2)) * (rng() % 2 ? 1 : -1);
      for (int64_t e = -1; e <= 2; ++e) check(q * p + p / 2 + e);
      check(static_cast<int32_t>(rng()));
    }
  }
}

TEST(Ozaki2Numerics, ResidueDoubleIsExact) {
  for (int64_t r = -70000; r <= 70000; ++r) ASSERT_EQ(nm::oz2_residue_double(int32_t(r)), double(r)) << r;
  for (int64_t r : {int64_t(INT32_MIN), int64_t(INT32_MIN) + 1, int64_t(INT32_MAX), int64_t(INT32_MAX) - 1})
    ASSERT_EQ(nm::oz2_residue_double(int32_t(r)), double(r)) << r;
}

TEST(Ozaki2Numerics, PieceCountPerModuliCountCoversTheScaledValues) {
  std::mt19937_64 rng(43);
  check_piece_counts<nm::kMinModuli>(rng);
}

namespace {
using u128 = unsigned __int128;
// One value a = x 2^e as an integer (nearest with ties away, or truncated), |a| = mag exactly
// (oztest::integer_magnitude), at count N: the kernels' pieces (each piece the 14-bit window of mag
// with a's sign, the low byte a mod 2^8), their FP32 residues and the host reference's
// oz2_scaled_residue, against 128-bit integer arithmetic, for every modulus of N.
template <int I, int N>
void check_wide_residues(double x, int e, bool nearest, u128 mag, bool neg, const nm::Oz2Pieces<nm::oz2_pieces(N)>& pc) {
  if constexpr (I < N) {
    constexpr int P = nm::kModuliTable[I];
    const int64_t r = static_cast<int64_t>(mag % u128(P));
    const int32_t exact = nm::sym_mod(neg ? -r : r, P);
    int32_t via_pieces = 0;
    if constexpr (P == 256) {
      via_pieces = static_cast<int8_t>(static_cast<uint8_t>(pc.low_byte));
    } else {
      via_pieces = nm::oz2_unbias(nm::oz2_residue_biased<P>(pc.f));
    }
    ASSERT_EQ(via_pieces, exact) << x << " 2^" << e << " mod " << P << " at " << N;
    ASSERT_EQ(nm::oz2_scaled_residue(x, e, P, nearest), exact) << x << " 2^" << e << " mod " << P;
    check_wide_residues<I + 1, N>(x, e, nearest, mag, neg, pc);
  }
}
template <int N>
void check_wide_counts(std::mt19937_64& rng) {
  if constexpr (N <= nm::kMaxModuli) {
    {
      constexpr int W = nm::oz2_pieces(N), kBits = nm::oz2_operand_bits(N);
      std::uniform_real_distribution<double> u(1.0, 2.0);
      for (int t = 0; t < 20000; ++t) {
        // |x| 2^e with its top bit at b in [-3, kBits - 1): every magnitude of A' up to the count's
        // bound (rounding up stays below 2^kBits); x normal or subnormal, either sign; every 11th a
        // tie (a half-integer at 2^e).
        double x = t % 7 == 0 ? std::ldexp(u(rng), -1030 - int(rng() % 40)) : std::ldexp(u(rng), int(rng() % 200) - 100);
        int b = int(rng() % uint64_t(kBits + 2)) - 3;
        if (t % 11 == 0) {
          b = std::min(b, 50);
          x = std::ldexp(std::floor(std::ldexp(std::fabs(x), b - std::ilogb(x))) + 0.5, std::ilogb(x) - b);
        }
        if (rng() & 1) x = -x;
        const int e = b - std::ilogb(x);
        const bool nearest = t % 3 != 0;  // both of step 1's roundings (oz2_rounds_to_nearest)
        const u128 mag = oztest::integer_magnitude(x, e, nearest);
        ASSERT_LT(mag, u128(1) << kBits);
        const bool neg = x < 0;
        const nm::Oz2Pieces<W> pc = nm::oz2_pieces_for_count<N>(x, e, nearest);
        for (int j = 0; j < W; ++j) {
          const double piece = double(uint32_t(mag >> (nm::kOz2PieceBits * j)) & ((1u << nm::kOz2PieceBits) - 1));
          ASSERT_EQ(double(pc.f[j]), neg ? -piece : piece) << x << " 2^" << e << " piece " << j;
        }
        ASSERT_EQ(pc.low_byte, uint32_t(neg ? u128(0) - mag : mag) & 0xffu) << x << " 2^" << e;
        check_wide_residues<0, N>(x, e, nearest, mag, neg, pc);
      }
    }
    check_wide_counts<N + 1>(rng);
  }
}
}  // namespace

// Past 16 moduli A' and B' pass int64 (|A'| < 2^(4N - 1)): they are never formed as integers. At
// every count the rounded pieces and residues are exact.
TEST(Ozaki2Numerics, WideCountsResiduesFromTheSignificandAreExact) {
  static_assert(nm::oz2_wide(17) && !nm::oz2_wide(16), "int64 up to 16 moduli");
  std::mt19937_64 rng(59);
  check_wide_counts<nm::kMinModuli>(rng);
  // The premise: every reachable t of the FP32 step inside the exhaustively checked range.
  for (int n = nm::kMinModuli; n <= nm::kMaxModuli; ++n) {
    for (int i = 0; i < n; ++i) {
      if (nm::kModuliTable[i] % 2 == 0) continue;
      ASSERT_LE(nm::oz2_piece_sum_bound(nm::kModuliTable[i], n), ((1 << nm::kOz2PieceBits) - 1) * (1 + 127 * 4))
          << n << " moduli, p = " << nm::kModuliTable[i];
    }
  }
}

// The scaling's d by binary search (oz2_extra_shift) equals the linear walk it replaced (the largest d
// from kOz2ShiftMin up while S <= limit[d + 1]), for every count of both moduli sets, at every table
// entry and its neighbours, 0, INT64_MAX and random S of every magnitude; and the tables are
// non-increasing, which the search relies on.
TEST(Ozaki2Numerics, ExtraShiftBySearchEqualsTheLinearWalk) {
  const auto linear = [](int64_t S, const int64_t* limit) {
    int d = nm::kOz2ShiftMin;
    while (d < nm::kOz2ShiftMax && S <= limit[d + 1 - nm::kOz2ShiftMin]) ++d;
    return d;
  };
  std::mt19937_64 rng(61);
  for (int n = nm::kMinModuli; n <= nm::kMaxModuli; ++n) {
    for (const nm::Ozaki2Constants* c : {&nm::ozaki2_constants(n), &nm::ozaki2_complex_constants(n)}) {
      for (int i = 0; i + 1 < nm::kOz2Limits; ++i) ASSERT_GE(c->limit[i], c->limit[i + 1]) << n << " " << i;
      std::vector<int64_t> S = {0, 1, 2, std::numeric_limits<int64_t>::max()};
      for (int i = 0; i < nm::kOz2Limits; ++i)
        for (int64_t e : {-1, 0, 1})
          if (c->limit[i] + e >= 0 && !(e > 0 && c->limit[i] == std::numeric_limits<int64_t>::max()))
            S.push_back(c->limit[i] + e);
      for (int t = 0; t < 2000; ++t) S.push_back(static_cast<int64_t>(rng() >> (1 + rng() % 63)));
      for (int64_t s : S) ASSERT_EQ(nm::oz2_extra_shift(s, c->limit), linear(s, c->limit)) << n << " moduli, S " << s;
    }
  }
}

TEST(Ozaki2Numerics, NormTermIsTheSquaredCeiling) {
  std::mt19937_64 rng(53);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> xs = {0.0, -0.0, 1.0, -1.0, 63.5, std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::min(), std::numeric_limits<double>::max()};
  for (int t = 0; t < 100000; ++t) xs.push_back(std::ldexp(u(rng), int(rng() % 2100) - 1075));
  for (const double x : xs) {
    int ex = 0;
    std::frexp(x, &ex);
    // The row's own s0 puts |x| 2^s0 at most 64; also larger and far smaller scalings (both paths).
    for (int s0 : {6 - ex, 5 - ex, 20 - ex, 21 - ex, 30 - ex, -ex, -20 - ex, -70 - ex}) {
      if (s0 > 1100 || s0 < -1100) continue;
      const int64_t a = nm::scaled_ceil(x, s0);
      ASSERT_EQ(nm::oz2_norm_term(x, s0), a * a) << x << " 2^" << s0;
    }
  }
}

// The int64 form (up to 16 moduli) and the significand form (past it) of the pieces agree with the
// pieces of the integer itself (rounded to nearest and truncated), at every shift that keeps |x| 2^e
// below 2^62, down to those that round everything away (shifts of 54..62 and past 64 bits below the
// significand), on normal, subnormal and extreme values.
TEST(Ozaki2Numerics, RoundedPiecesEqualThePiecesOfTheRoundedInteger) {
  static_assert(nm::oz2_pieces(16) == 5 && nm::oz2_pieces(17) == 5, "five pieces in both forms");
  std::mt19937_64 rng(47);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> xs = {0.0, -0.0, 1.0, -1.0, 0.5, -0.75, 2.5, -2.5, std::numeric_limits<double>::denorm_min(),
                            -std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::max(), -std::numeric_limits<double>::max()};
  for (int t = 0; t < 100000; ++t) xs.push_back(std::ldexp(u(rng), int(rng() % 2100) - 1075));
  for (const double x : xs) {
    int ex = 0;
    std::frexp(x, &ex);
    for (int e : {61 - ex, 40 - ex, 13 - ex, 1 - ex, -ex, -1 - ex, -5 - ex, -60 - ex, -70 - ex})
     for (bool nearest : {true, false}) {
      if (e > 1100 || e < -1100) continue;
      const u128 mag = oztest::integer_magnitude(x, e, nearest);
      const int64_t v = x < 0 ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
      const nm::Oz2Pieces<5> b = nm::oz2_pieces_of<5>(v);
      const nm::Oz2Pieces<5> a = nm::oz2_pieces_for_count<16>(x, e, nearest);  // the int64 form
      const nm::Oz2Pieces<5> w = nm::oz2_pieces_for_count<17>(x, e, nearest);  // the wide form, same domain
      // Bit for bit: a zero piece is +0 whatever the sign (oz2_piece_float), the others carry x's sign.
      for (int j = 0; j < 5; ++j) ASSERT_EQ(nm::bits_of(a.f[j]), nm::bits_of(b.f[j])) << x << " 2^" << e;
      for (int j = 0; j < 5; ++j) ASSERT_EQ(nm::bits_of(w.f[j]), nm::bits_of(a.f[j])) << x << " 2^" << e;
      ASSERT_EQ(a.low_byte, b.low_byte) << x << " 2^" << e;
      ASSERT_EQ(w.low_byte, b.low_byte) << x << " 2^" << e;
    }
  }
}

TEST(Ozaki2Numerics, ReconstructionRecoversKnownIntegers) {
  std::mt19937_64 rng(41);
  for (int n = nm::kMinModuli; n <= nm::kMaxModuli; ++n) {
    const nm::Ozaki2Constants& c = nm::ozaki2_constants(n);
    // Q = floor((P - 1) / 4) >= limit at d = 0; integers X = Y 2^sh up to Q (|Y| < 2^120, sh > 0 only
    // past 2^120: the wide counts' products reach about 2^153).
    const long double logQ = std::log2(static_cast<long double>(c.P_hi)) - 2;
    const int bits = static_cast<int>(logQ - 0.01L);
    for (int t = 0; t < 3000; ++t) {
      const int b = 1 + int(rng() % uint64_t(bits));
      const int yb = std::min(b, 120), sh = b - yb;
      __int128 Y = 0;
      for (int w = 0; w < yb; w += 60) Y = (Y << std::min(60, yb - w)) | (rng() & ((uint64_t(1) << std::min(60, yb - w)) - 1));
      if (rng() & 1) Y = -Y;
      std::vector<int32_t> u(static_cast<size_t>(n), 0);
      for (int i = 0; i < n; ++i) {
        __int128 r = Y % c.p[i];
        for (int j = 0; j < sh; ++j) r = 2 * r % c.p[i];
        u[size_t(i)] = nm::sym_mod(static_cast<int64_t>(r), c.p[i]);
      }
      const double y = nm::oz2_reconstruct(c, [&](int i) { return u[size_t(i)]; });
      const long double exact = std::ldexp(static_cast<long double>(Y), sh);
      const long double tol = nm::oz2_reconstruction_error(c, static_cast<double>(std::fabs(exact)));
      ASSERT_LE(std::fabs(static_cast<long double>(y) - exact), tol) << "n=" << n << " bits=" << b;
    }
  }
}

namespace {
std::vector<double> run(int64_t m, int64_t n, int64_t k, const std::vector<double>& A, const std::vector<double>& B,
                        int moduli) {
  std::vector<double> C(size_t(m * n), std::nan(""));
  ref::ozaki2_dgemm(Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, C.data(), m, moduli);
  return C;
}
}  // namespace

// A' as step 1 forms it (rounded to nearest where the row's extra shift d >= 0, truncated where d < 0,
// which 2 and 3 moduli reach at this depth: S > Q) keeps sum_l |A'||B'| <= Q, the CRT's range.
TEST(Ozaki2Reference, ScalingKeepsProductsBelowQ) {
  std::mt19937_64 rng(42);
  const int64_t m = 12, n = 9, k = 400;
  int truncated_rows = 0;
  for (double phi : {-1.0, 0.5, 4.0})
    for (int moduli : {2, 3, 6, 10, 16, 17, 20}) {
      auto A = ref::random_matrix(m, k, phi, rng), B = ref::random_matrix(k, n, phi, rng);
      for (auto& v : A) v = std::ldexp(v, -20);  // scale-independence (GEMMul8's fast rule fails here)
      const auto a = ref::ozaki2_rows_of_op_a(Op::N, m, k, A.data(), m, moduli);
      const auto b = ref::ozaki2_cols_of_op_b(Op::N, k, n, B.data(), k, moduli);
      const long double Q = (static_cast<long double>(nm::ozaki2_constants(moduli).P_hi) - 1) / 4;
      for (int64_t c = 0; c < n; ++c)
        for (int64_t r = 0; r < m; ++r) {
          long double sum = 0;
          for (int64_t l = 0; l < k; ++l)
            sum += static_cast<long double>(oztest::integer_magnitude(A[size_t(r + l * m)], a.shift[size_t(r)], a.nearest[size_t(r)])) *
                   static_cast<long double>(oztest::integer_magnitude(B[size_t(l + c * k)], b.shift[size_t(c)], b.nearest[size_t(c)]));
          ASSERT_LE(sum, Q) << "phi=" << phi << " moduli=" << moduli;
        }
      for (int64_t r = 0; r < m; ++r) truncated_rows += a.nearest[size_t(r)] ? 0 : 1;
    }
  EXPECT_GT(truncated_rows, 0) << "some rows reach d < 0";
}

// Few moduli and a deep k give d < 0 (S > Q). Rounding to nearest there could push |A'| past
// 2^d ceil(|a| 2^s0): every element 32.3125 at 2 moduli and k = 32750 rounds 0.5 up a digit and the
// CRT wrapped (C = -1.3e8 against 3.4e7, found in review). Step 1 truncates where d < 0, so the
// result stays within the documented bound.
TEST(Ozaki2Reference, FewModuliDeepKTruncatesWhereTheShiftIsNegative) {
  const int64_t m = 1, n = 1, k = 32750;
  const std::vector<double> A(size_t(k), 32.3125), B(size_t(k), 32.3125);
  for (int moduli : {2, 3}) {
    const auto a = ref::ozaki2_rows_of_op_a(Op::N, m, k, A.data(), m, moduli);
    EXPECT_EQ(a.nearest[0], moduli == 2 ? 0 : a.nearest[0]);
    double C = oztest::marker_nan();
    ref::ozaki2_dgemm(Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, &C, m, moduli);
    const double exact = double(k) * 32.3125 * 32.3125;  // 34194638.671875, exact
    const std::vector<double> bound = ref::ozaki2_truncation_bound(Op::N, Op::N, m, n, k, A.data(), m, B.data(), k, moduli);
    EXPECT_LE(std::fabs(C - exact), bound[0] + 2.02 * std::ldexp(exact, -53)) << moduli << " moduli: C " << C;
    EXPECT_GE(C, 0.0) << moduli << " moduli: no wrap to the other sign";
  }
}

TEST(Ozaki2Reference, IntegerInputsExact) {
  std::mt19937_64 rng(43);
  const int64_t m = 20, n = 15, k = 500;
  std::vector<double> A(size_t(m * k)), B(size_t(k * n));
  ref::fill_integers(A.data(), m, k, m, 1000, rng);
  ref::fill_integers(B.data(), k, n, k, 1000, rng);
  for (int moduli : {8, 12, 16, 17, 20}) {  // 17, 20: A' past int64 (integers scaled up by 2^d)
    const auto C = run(m, n, k, A, B, moduli);
    for (int64_t c = 0; c < n; ++c)
      for (int64_t r = 0; r < m; ++r) {
        int64_t exact = 0;
        for (int64_t l = 0; l < k; ++l) exact += int64_t(A[size_t(r + l * m)]) * int64_t(B[size_t(l + c * k)]);
        ASSERT_EQ(C[size_t(r + c * m)], double(exact)) << "moduli=" << moduli << " (" << r << "," << c << ")";
      }
  }
}

TEST(Ozaki2Reference, ErrorsWithinTheTruncationBoundAndFallingWithModuli) {
  std::mt19937_64 rng(44);
  const int64_t m = 24, n = 20, k = 300;
  constexpr double kU = 1.1102230246251565e-16;
  for (double phi : {-1.0, 0.0, 0.5, 1.0, 2.0, 4.0}) {
    const auto A = ref::random_matrix(m, k, phi, rng), B = ref::random_matrix(k, n, phi, rng);
    const auto acc = ref::accurate_gemm(Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, nullptr, 1);
    double prev = std::numeric_limits<double>::infinity();
    for (int moduli : {6, 8, 10, 12, 14, 16, 18, 20}) {
      const auto C = run(m, n, k, A, B, moduli);
      const auto bound = ref::ozaki2_truncation_bound(Op::N, Op::N, m, n, k, A.data(), m, B.data(), k, moduli);
      for (int64_t i = 0; i < m * n; ++i) {
        const double err = std::fabs((C[size_t(i)] - acc.hi[size_t(i)]) - acc.lo[size_t(i)]);
        ASSERT_LE(err, bound[size_t(i)] + 4 * kU * acc.absprod[size_t(i)]) << "phi=" << phi << " moduli=" << moduli;
      }
      const double cw = ref::compare(C.data(), m, acc).componentwise;
      if (prev > 1e-15) {
        EXPECT_LT(cw, prev) << "phi=" << phi << " moduli=" << moduli;
      }
      prev = cw;
    }
  }
}

TEST(Ozaki2Reference, SpecialValuesAndBlasSemantics) {
  std::mt19937_64 rng(45);
  const int64_t m = 10, n = 8, k = 30;
  auto A = ref::random_matrix(m, k, 0.5, rng), B = ref::random_matrix(k, n, 0.5, rng);
  A[size_t(3 + 5 * m)] = std::numeric_limits<double>::infinity();
  B[size_t(7 + 2 * k)] = std::nan("");
  for (int64_t l = 0; l < k; ++l) A[size_t(6 + l * m)] = 0.0;  // a zero row
  const auto C = run(m, n, k, A, B, 14);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) {
      const double v = C[size_t(r + c * m)];
      if (r == 3 || c == 2) {
        EXPECT_FALSE(std::isfinite(v)) << r << "," << c;
      } else {
        EXPECT_TRUE(std::isfinite(v)) << r << "," << c;
      }
      if (r == 6 && c != 2) {
        EXPECT_EQ(v, 0.0);
      }
    }
  // alpha = 0: C = beta C, A and B not read.
  std::vector<double> Cb(size_t(m * n), 2.0);
  std::vector<double> nanA(size_t(m * k), std::nan(""));
  ref::ozaki2_dgemm(Op::N, Op::N, m, n, k, 0.0, nanA.data(), m, B.data(), k, 0.5, Cb.data(), m, 8);
  for (double v : Cb) EXPECT_EQ(v, 1.0);
  EXPECT_THROW(ref::ozaki2_dgemm(Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, Cb.data(), m, nm::kMaxModuli + 1),
               std::invalid_argument);
}
