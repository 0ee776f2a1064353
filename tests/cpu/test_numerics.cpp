// CPU tests of the shared host/device numerics (include/ozgemm/numerics.hpp) and of the
// BLAS argument rules (check_shape). Every invariant stated in numerics.hpp is checked
// against an independent oracle: std::ldexp / long double for exact scaling, and an exact
// multi-limb fixed-point number (oztest::Fixed) for the slice reconstruction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ozgemm/numerics/ozaki1.hpp"
#include "ozgemm/problem.hpp"
#include "test_util.hpp"

namespace nm = ozgemm::numerics;
using oztest::bits;
using oztest::Fixed;
using oztest::from_bits;
using oztest::same_bits;

namespace {

constexpr uint64_t kFracMask = 0x000fffffffffffffull;

// Random positive finite double, uniform over the bit patterns of each binade, binades
// uniform (subnormals included).
double random_positive_double(std::mt19937_64& rng) {
  const uint64_t biased = std::uniform_int_distribution<uint64_t>(0, 2046)(rng);
  uint64_t frac = rng() & kFracMask;
  if (biased == 0 && frac == 0) frac = 1;
  return from_bits((biased << 52) | frac);
}

// The shift invariant of numerics.hpp, checked with exact scaling (ldexp of a power of two
// is exact whenever the result is a normal number, which it is here: (63.5, 254]).
::testing::AssertionResult shift_is_largest_valid(double maxabs) {
  const int32_t sh = nm::shift_from_max(maxabs);
  const double scaled = std::ldexp(maxabs, sh);
  const double scaled_up = std::ldexp(maxabs, sh + 1);
  if (!(scaled <= 127.0))
    return ::testing::AssertionFailure() << "maxabs=" << maxabs << " (bits " << std::hex << bits(maxabs) << std::dec
                                         << ") shift=" << sh << ": maxabs*2^shift=" << scaled << " > 127";
  if (!(scaled_up > 127.0))
    return ::testing::AssertionFailure() << "maxabs=" << maxabs << " (bits " << std::hex << bits(maxabs) << std::dec
                                         << ") shift=" << sh << " is not the largest: maxabs*2^(shift+1)=" << scaled_up;
  return ::testing::AssertionSuccess();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Constants and bit access.

TEST(Numerics, Constants) {
  EXPECT_EQ(nm::kSliceBits, 8);
  EXPECT_EQ(nm::kMaxSlices, 20);
  // kMaxDigitProduct is the largest |digit product| over int8 digits, by brute force.
  int64_t mx = 0, mn = 0;
  for (int a = -128; a <= 127; ++a)
    for (int b = -128; b <= 127; ++b) {
      mx = std::max<int64_t>(mx, a * b);
      mn = std::min<int64_t>(mn, a * b);
    }
  EXPECT_EQ(mx, nm::kMaxDigitProduct);
  EXPECT_EQ(mn, -128 * 127);
  EXPECT_EQ(nm::kInt32ExactProducts, 131071);
  EXPECT_LE(nm::kInt32ExactProducts * nm::kMaxDigitProduct, int64_t(INT32_MAX));
  EXPECT_GT((nm::kInt32ExactProducts + 1) * nm::kMaxDigitProduct, int64_t(INT32_MAX));
}

TEST(Numerics, BitsRoundTripAndIsFinite) {
  std::mt19937_64 rng(11);
  for (int t = 0; t < 100000; ++t) {
    const uint64_t u = rng();
    ASSERT_EQ(nm::bits_of(nm::double_of(u)), u);
    const double x = from_bits(u);
    ASSERT_EQ(nm::is_finite(x), static_cast<bool>(std::isfinite(x))) << std::hex << u;
  }
  EXPECT_TRUE(nm::is_finite(0.0));
  EXPECT_TRUE(nm::is_finite(-0.0));
  EXPECT_TRUE(nm::is_finite(std::numeric_limits<double>::denorm_min()));
  EXPECT_TRUE(nm::is_finite(-DBL_MAX));
  EXPECT_FALSE(nm::is_finite(oztest::kInf));
  EXPECT_FALSE(nm::is_finite(-oztest::kInf));
  EXPECT_FALSE(nm::is_finite(oztest::kNaN));
  EXPECT_FALSE(nm::is_finite(-oztest::kNaN));
}

TEST(Numerics, RoundedArithmeticHelpers) {
  std::mt19937_64 rng(12);
  std::normal_distribution<double> nd;
  for (int t = 0; t < 10000; ++t) {
    volatile double a = nd(rng) * std::exp(10 * nd(rng)), b = nd(rng);
    const double p = a * b, s = a + b;
    ASSERT_TRUE(same_bits(nm::mul_rn(a, b), p));
    ASSERT_TRUE(same_bits(nm::add_rn(a, b), s));
  }
  // int64 -> double rounds to nearest even.
  EXPECT_EQ(nm::int64_to_double_rn((int64_t(1) << 53) + 1), 9007199254740992.0);
  EXPECT_EQ(nm::int64_to_double_rn((int64_t(1) << 53) + 3), 9007199254740996.0);
  EXPECT_EQ(nm::int64_to_double_rn(-((int64_t(1) << 53) + 1)), -9007199254740992.0);
  EXPECT_EQ(nm::int64_to_double_rn(INT64_MIN), -9223372036854775808.0);
  for (int t = 0; t < 10000; ++t) {
    const int64_t v = static_cast<int64_t>(rng());
    ASSERT_TRUE(same_bits(nm::int64_to_double_rn(v), static_cast<double>(v)));
  }
}

TEST(Numerics, FloorLog2MatchesIlogb) {
  std::mt19937_64 rng(13);
  auto check = [](double m) {
    uint64_t sig = 0;
    const int e = nm::floor_log2(m, &sig);
    ASSERT_EQ(e, std::ilogb(m)) << m;
    ASSERT_GE(sig, uint64_t(1) << 52);
    ASSERT_LT(sig, uint64_t(1) << 53);
    // |m| = sig * 2^(e - 52) exactly.
    ASSERT_TRUE(Fixed::dyadic(static_cast<int64_t>(sig), e - 52) == Fixed::of_double(std::fabs(m))) << m;
  };
  for (int b = 0; b < 64; ++b) check(from_bits(uint64_t(1) << std::min(b, 51)));  // subnormal powers
  check(std::numeric_limits<double>::denorm_min());
  check(-std::numeric_limits<double>::denorm_min());
  check(DBL_MAX);
  check(DBL_MIN);
  check(std::nextafter(DBL_MIN, 0.0));
  for (int t = 0; t < 20000; ++t) check(random_positive_double(rng) * ((t & 1) ? -1.0 : 1.0));
}

// ---------------------------------------------------------------------------------------------
// shift_from_max: exhaustive over binade edges.

TEST(ShiftFromMax, ExhaustiveNormalBinadesTop12Bits) {
  // Every normal binade, every pattern of the top 12 fraction bits, low 40 bits all zero
  // and all ones.
  for (uint64_t biased = 1; biased <= 2046; ++biased)
    for (uint64_t top = 0; top < 4096; ++top)
      for (uint64_t low : {uint64_t(0), (uint64_t(1) << 40) - 1}) {
        const double x = from_bits((biased << 52) | (top << 40) | low);
        ASSERT_TRUE(shift_is_largest_valid(x));
      }
}

TEST(ShiftFromMax, ExhaustiveSubnormalTop12Bits) {
  // Subnormals with the leading one at every bit position t, every pattern of the (up to)
  // 12 bits below it, and the remaining low bits all zero / all ones.
  for (int t = 0; t <= 51; ++t) {
    const int nb = std::min(12, t);
    const int lowbits = t - nb;
    for (uint64_t pat = 0; pat < (uint64_t(1) << nb); ++pat)
      for (uint64_t low : {uint64_t(0), (uint64_t(1) << lowbits) - 1}) {
        const uint64_t frac = (uint64_t(1) << t) | (pat << lowbits) | low;
        ASSERT_TRUE(shift_is_largest_valid(from_bits(frac)));
      }
  }
}

// The split row statistics (kernels/dgemm/row_stats_split.cuh) take a row's shift as the minimum of
// shift_from_max over partial maxima: that needs shift_from_max non-increasing in |x| over the
// non-zero finite values (subnormals included), so that the minimum is the shift of the maximum.
TEST(ShiftFromMax, NonIncreasingInTheMagnitude) {
  std::mt19937_64 rng(20261126);
  std::vector<double> v;
  for (int e = -1074; e <= 1023; ++e) {
    const double p = std::ldexp(1.0, e);
    v.push_back(p);
    if (e > -1074) v.push_back(std::nextafter(p, 0.0));
    if (e <= 1017 && e >= -1074) v.push_back(std::ldexp(127.0, e));
  }
  for (int t = 0; t < 200000; ++t) v.push_back(random_positive_double(rng));
  v.push_back(DBL_MAX);
  v.push_back(std::numeric_limits<double>::denorm_min());
  std::sort(v.begin(), v.end());
  v.erase(std::remove(v.begin(), v.end(), 0.0), v.end());
  for (size_t i = 1; i < v.size(); ++i)
    ASSERT_GE(nm::shift_from_max(v[i - 1]), nm::shift_from_max(v[i])) << v[i - 1] << " < " << v[i];
  // So the minimum over a row's elements is the maximum's shift, in any grouping.
  for (int t = 0; t < 1000; ++t) {
    double mx = 0.0;
    int32_t least = INT32_MAX;
    for (int j = 0; j < 16; ++j) {
      const double x = random_positive_double(rng);
      mx = std::max(mx, x);
      least = std::min(least, nm::shift_from_max(x));
    }
    ASSERT_EQ(least, nm::shift_from_max(mx));
  }
}

TEST(ShiftFromMax, PowersOfTwoTheirPredecessorsAnd127Edges) {
  for (int e = -1074; e <= 1023; ++e) {
    const double p = std::ldexp(1.0, e);
    ASSERT_TRUE(shift_is_largest_valid(p)) << "2^" << e;
    ASSERT_EQ(nm::shift_from_max(p), 6 - e) << "2^" << e;  // 2^e * 2^(6-e) = 64 <= 127 < 128
    if (e > -1074) {
      ASSERT_TRUE(shift_is_largest_valid(std::nextafter(p, 0.0))) << "pred 2^" << e;
    }
  }
  ASSERT_TRUE(shift_is_largest_valid(DBL_MAX));
  // 127 * 2^j is the exact edge: shift = -j; its successor needs one more step down.
  for (int j = -1074; j <= 1017; ++j) {
    const double edge = std::ldexp(127.0, j);
    if (edge == 0.0 || std::ldexp(edge, -j) != 127.0) continue;  // not exactly representable
    ASSERT_EQ(nm::shift_from_max(edge), -j) << "127*2^" << j;
    const double up = std::nextafter(edge, oztest::kInf);
    ASSERT_EQ(nm::shift_from_max(up), -j - 1) << "succ(127*2^" << j << ")";
    ASSERT_TRUE(shift_is_largest_valid(up));
    ASSERT_TRUE(shift_is_largest_valid(std::nextafter(edge, 0.0)));
  }
  ASSERT_EQ(nm::shift_from_max(127.0), 0);
  ASSERT_EQ(nm::shift_from_max(127.5), -1);
  ASSERT_EQ(nm::shift_from_max(64.0), 0);
  ASSERT_EQ(nm::shift_from_max(63.75), 0);  // 127.5 > 127: no further step
  ASSERT_EQ(nm::shift_from_max(63.5), 1);   // 63.5 * 2 = 127 exactly
  ASSERT_EQ(nm::shift_from_max(1.0), 6);
}

TEST(ShiftFromMax, ZeroInfNaNGiveZero) {
  EXPECT_EQ(nm::shift_from_max(0.0), 0);
  EXPECT_EQ(nm::shift_from_max(-0.0), 0);
  EXPECT_EQ(nm::shift_from_max(oztest::kInf), 0);
  EXPECT_EQ(nm::shift_from_max(oztest::kNaN), 0);
  EXPECT_EQ(nm::shift_from_max(-oztest::kNaN), 0);
}

TEST(ShiftFromMax, RandomValuesEverywhere) {
  std::mt19937_64 rng(21);
  for (int t = 0; t < 300000; ++t) ASSERT_TRUE(shift_is_largest_valid(random_positive_double(rng)));
}

// ---------------------------------------------------------------------------------------------
// slice_value: the representation invariant, checked exactly.

namespace {

// Slices x with (shift, s) and checks every claim of numerics.hpp with exact arithmetic:
//   * digits in [-128, 127]; the top digit in [-127, 127] (never -128);
//   * Digit = int8_t gives the same digits as Digit = int32_t (so int32 shows no wrap);
//   * sum = sum_i digit_i 2^(-8 i - shift) satisfies |x - sum| < 2^(-8(s-1) - shift),
//     sum is zero or has the sign of x, |sum| <= |x| (truncation toward zero);
//   * sum == x whenever x * 2^(shift + 8(s-1)) is an integer.
// Precondition (as documented): |x| * 2^shift <= 127.
::testing::AssertionResult slice_ok(double x, int32_t shift, int s) {
  int32_t d32[nm::kMaxSlices];
  int8_t d8[nm::kMaxSlices];
  for (int i = 0; i < nm::kMaxSlices; ++i) {
    d32[i] = 0x7fffffff;  // poison: out of the digit range
    d8[i] = 0x5a;
  }
  nm::slice_value(x, shift, s, d32, 1);
  nm::slice_value(x, shift, s, d8, 1);
  auto fail = [&]() {
    auto r = ::testing::AssertionFailure();
    r << "x=" << x << " (bits 0x" << std::hex << bits(x) << std::dec << ") shift=" << shift << " s=" << s
      << " digits:";
    for (int i = 0; i < s; ++i) r << ' ' << d32[i];
    r << " : ";
    return r;
  };
  for (int i = 0; i < s; ++i) {
    if (d32[i] < -128 || d32[i] > 127) return fail() << "digit " << i << " out of range";
    if (d32[i] != d8[i]) return fail() << "int8 digit " << i << " differs: " << int(d8[i]);
  }
  if (d32[0] == -128) return fail() << "top digit is -128";
  for (int i = s; i < nm::kMaxSlices; ++i)
    if (d32[i] != 0x7fffffff) return fail() << "wrote past s digits";
  Fixed sum;
  for (int i = 0; i < s; ++i) sum.add(d32[i], -8 * i - shift);
  const Fixed fx = Fixed::of_double(x);
  const Fixed diff = fx - sum;
  const Fixed bound = Fixed::dyadic(1, -8 * (s - 1) - shift);
  if (!(diff.abs() < bound)) return fail() << "|x - sum| >= 2^(-8(s-1)-shift)";
  if (sum.sign() != 0 && sum.sign() != fx.sign()) return fail() << "sum has the wrong sign";
  if (!(sum.abs() <= fx.abs())) return fail() << "|sum| > |x| (not truncation toward zero)";
  // Exactness when x * 2^(shift + 8(s-1)) is an integer.
  const uint64_t u = bits(x);
  const int biased = static_cast<int>((u >> 52) & 0x7ff);
  const uint64_t frac = u & kFracMask;
  if (biased != 0 || frac != 0) {
    const uint64_t mant = biased ? (frac | (uint64_t(1) << 52)) : frac;
    const int ex = biased ? biased - 1075 : -1074;
    const int p = ex + shift + 8 * (s - 1);
    const bool integer = p >= 0 || (-p < 64 && (mant & ((uint64_t(1) << -p) - 1)) == 0);
    if (integer && !diff.zero()) return fail() << "not exact although x*2^(shift+8(s-1)) is an integer";
    if (!integer && diff.zero()) return fail() << "exact although x*2^(shift+8(s-1)) is not an integer";
  } else if (!sum.zero()) {
    return fail() << "zero x gave non-zero digits";
  }
  return ::testing::AssertionSuccess();
}

// Candidate x values for a row whose largest magnitude is M (all satisfy |x| <= M).
std::vector<double> candidates_for_max(double M, std::mt19937_64& rng) {
  std::vector<double> xs = {M, -M, std::nextafter(M, 0.0), -std::nextafter(M, 0.0), 0.0, -0.0};
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int t = 0; t < 4; ++t) xs.push_back(M * u(rng));
  uint64_t sig;
  const int eM = nm::floor_log2(M, &sig);
  for (int t = 0; t < 3; ++t) {
    const int j = eM - std::uniform_int_distribution<int>(0, 70)(rng);
    const double p = std::ldexp(1.0, j);  // <= M
    const double sgn = (rng() & 1) ? -1.0 : 1.0;
    xs.push_back(sgn * p);
    xs.push_back(sgn * std::nextafter(p, 0.0));  // just below a binade edge
    // A random mantissa in the binade of 2^j (all ones at the low end sometimes).
    if (p >= DBL_MIN) {
      const uint64_t b = (bits(p) & ~kFracMask) | ((t == 0) ? kFracMask : (rng() & kFracMask));
      const double y = from_bits(b);
      if (y <= M) xs.push_back(-sgn * y);
    }
  }
  // Random subnormal below M.
  const double sub = from_bits(rng() & kFracMask);
  if (sub <= M) xs.push_back(sub);
  return xs;
}

}  // namespace

TEST(SliceValue, RandomRowMaximaAllSliceCounts) {
  std::mt19937_64 rng(31);
  for (int s = 1; s <= nm::kMaxSlices; ++s) {
    for (int t = 0; t < 2000; ++t) {
      const double M = random_positive_double(rng);
      const int32_t sh = nm::shift_from_max(M);
      for (double x : candidates_for_max(M, rng)) ASSERT_TRUE(slice_ok(x, sh, s));
      // The exact edge |x| * 2^shift = 127 (allowed by the precondition) and its neighbour.
      const double edge = std::ldexp(127.0, -sh);
      if (std::isfinite(edge) && edge != 0.0 && std::ldexp(edge, sh) == 127.0) {
        ASSERT_TRUE(slice_ok(edge, sh, s));
        ASSERT_TRUE(slice_ok(-edge, sh, s));
        ASSERT_TRUE(slice_ok(std::nextafter(edge, 0.0), sh, s));
      }
    }
  }
}

TEST(SliceValue, PhiRowsAtAllScales) {
  // Rows as the generators make them, (U - 0.5) exp(phi N), moved to scales from the
  // subnormal range to near DBL_MAX; each element sliced with the row's shift.
  std::mt19937_64 rng(32);
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> ud(0.0, 1.0);
  const double phis[] = {0.0, 0.5, 1.0, 2.0, 4.0, 8.0};
  const int scales[] = {-1074, -1060, -1030, -1022, -500, -60, 0, 30, 700, 1000, 1015};
  std::vector<double> row(48);
  for (int s = 1; s <= nm::kMaxSlices; ++s)
    for (double phi : phis)
      for (int sc : scales) {
        double M = 0.0;
        for (double& v : row) {
          v = std::ldexp((ud(rng) - 0.5) * std::exp(phi * nd(rng)), sc);
          if (!std::isfinite(v)) v = 0.0;
          M = std::max(M, std::fabs(v));
        }
        if (M == 0.0) continue;
        const int32_t sh = nm::shift_from_max(M);
        for (double x : row) ASSERT_TRUE(slice_ok(x, sh, s)) << "phi=" << phi << " scale=2^" << sc;
      }
}

TEST(SliceValue, SmallestAndLargestMagnitudes) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  for (int s = 1; s <= nm::kMaxSlices; ++s) {
    // Row max = the smallest subnormal: shift 1080, the value must be exactly representable.
    ASSERT_EQ(nm::shift_from_max(tiny), 1080);
    ASSERT_TRUE(slice_ok(tiny, 1080, s));
    ASSERT_TRUE(slice_ok(-tiny, 1080, s));
    // Row max DBL_MAX with tiny members (truncated to zero) and DBL_MAX itself.
    const int32_t sh = nm::shift_from_max(DBL_MAX);
    ASSERT_EQ(sh, -1018);
    ASSERT_TRUE(slice_ok(DBL_MAX, sh, s));
    ASSERT_TRUE(slice_ok(-DBL_MAX, sh, s));
    ASSERT_TRUE(slice_ok(tiny, sh, s));
    ASSERT_TRUE(slice_ok(1.0, sh, s));
    ASSERT_TRUE(slice_ok(DBL_MIN, sh, s));
  }
}

TEST(SliceValue, KnownDigits) {
  int32_t d[4];
  // 1.0 with shift 6: X = 64 * 256^3, digits (64, 0, 0, 0).
  nm::slice_value(1.0, 6, 4, d, 1);
  EXPECT_EQ(d[0], 64);
  EXPECT_EQ(d[1], 0);
  EXPECT_EQ(d[2], 0);
  EXPECT_EQ(d[3], 0);
  // 127 - 2^-9 with shift 0, s = 2: X = trunc(127*256 - 0.5) = 32511 = 127*256 - 1
  //   -> balanced: low byte 0xff = -1, carry: top = 127.
  nm::slice_value(127.0 - std::ldexp(1.0, -9), 0, 2, d, 1);
  EXPECT_EQ(d[0], 127);
  EXPECT_EQ(d[1], -1);
  // 0.5 + 128/256 * 2^-8 ... : x = 1 + 128/256 (shift 0, s = 2): X = 384 -> low 0x80 = -128, top 2.
  nm::slice_value(1.5, 0, 2, d, 1);
  EXPECT_EQ(d[0], 2);
  EXPECT_EQ(d[1], -128);
  // Negative: -1.5 -> X = -384: low byte of -384 is 0x80 = -128, top -1.
  nm::slice_value(-1.5, 0, 2, d, 1);
  EXPECT_EQ(d[0], -1);
  EXPECT_EQ(d[1], -128);
  // Truncation toward zero: 1 + 2^-20 with shift 0, s = 2 -> (1, 0); -(1 + 2^-20) -> (-1, 0).
  nm::slice_value(1.0 + std::ldexp(1.0, -20), 0, 2, d, 1);
  EXPECT_EQ(d[0], 1);
  EXPECT_EQ(d[1], 0);
  nm::slice_value(-1.0 - std::ldexp(1.0, -20), 0, 2, d, 1);
  EXPECT_EQ(d[0], -1);
  EXPECT_EQ(d[1], 0);
}

TEST(SliceValue, NonFiniteGivesZeroDigits) {
  for (double x : {oztest::kInf, -oztest::kInf, oztest::kNaN, -oztest::kNaN, oztest::marker_nan()})
    for (int s = 1; s <= nm::kMaxSlices; ++s)
      for (int32_t sh : {0, 6, -1018, 1080}) {
        int32_t d[nm::kMaxSlices];
        for (int32_t& v : d) v = 77;
        nm::slice_value(x, sh, s, d, 1);
        for (int i = 0; i < s; ++i) ASSERT_EQ(d[i], 0) << x << " s=" << s << " i=" << i;
        for (int i = s; i < nm::kMaxSlices; ++i) ASSERT_EQ(d[i], 77);
      }
}

TEST(SliceValue, StrideWritesOnlyItsSlots) {
  std::mt19937_64 rng(33);
  for (int64_t stride : {int64_t(1), int64_t(2), int64_t(5), int64_t(1000)})
    for (int s : {1, 3, 7, 20}) {
      for (int t = 0; t < 50; ++t) {
        const double M = random_positive_double(rng);
        const int32_t sh = nm::shift_from_max(M);
        const double x = M * std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
        int8_t ref[nm::kMaxSlices];
        nm::slice_value(x, sh, s, ref, 1);
        std::vector<int8_t> buf(static_cast<size_t>(s * stride + 3), int8_t(0x5a));
        nm::slice_value(x, sh, s, buf.data() + 1, stride);
        for (size_t q = 0; q < buf.size(); ++q) {
          const int64_t off = static_cast<int64_t>(q) - 1;
          if (off >= 0 && off % stride == 0 && off / stride < s)
            ASSERT_EQ(buf[q], ref[off / stride]) << "stride " << stride << " digit " << off / stride;
          else
            ASSERT_EQ(buf[q], int8_t(0x5a)) << "stride " << stride << " wrote offset " << off;
        }
      }
    }
}

// ---------------------------------------------------------------------------------------------
// scale_pow2 == correctly rounded v * 2^e.

namespace {
// Oracle 1: std::ldexp (glibc: exact, or one correct rounding into the subnormal range).
// Oracle 2: long double (64-bit significand, wider exponent): exact product, then one
// rounding to double.
::testing::AssertionResult scale_ok(double v, int e) {
  const double got = nm::scale_pow2(v, e);
  const double want = std::ldexp(v, e);
  if (!same_bits(got, want))
    return ::testing::AssertionFailure() << "scale_pow2(" << v << " [0x" << std::hex << bits(v) << std::dec << "], "
                                         << e << ") = " << got << " [0x" << std::hex << bits(got)
                                         << "], ldexp gives " << want << " [0x" << bits(want) << "]";
  if (std::numeric_limits<long double>::digits >= 64 && std::numeric_limits<long double>::min_exponent < -16000) {
    const double want2 = static_cast<double>(std::ldexp(static_cast<long double>(v), e));
    if (!same_bits(got, want2))
      return ::testing::AssertionFailure() << "scale_pow2(" << v << ", " << e << ") = " << got
                                           << ", long double oracle gives " << want2;
  }
  return ::testing::AssertionSuccess();
}
}  // namespace

TEST(ScalePow2, AllRegimesRandom) {
  std::mt19937_64 rng(41);
  int normal = 0, overflow = 0, subnormal = 0, zero = 0;
  for (int t = 0; t < 400000; ++t) {
    double v = random_positive_double(rng);
    if (rng() & 1) v = -v;
    const int ev = std::ilogb(v);
    // Aim the result's exponent anywhere from well below the subnormal range to above DBL_MAX.
    const int target = std::uniform_int_distribution<int>(-1140, 1090)(rng);
    const int e = target - ev;
    ASSERT_TRUE(scale_ok(v, e));
    const double r = nm::scale_pow2(v, e);
    if (std::isinf(r))
      ++overflow;
    else if (r == 0.0)
      ++zero;
    else if (std::fabs(r) < DBL_MIN)
      ++subnormal;
    else
      ++normal;
  }
  // Every regime was exercised many times.
  EXPECT_GT(normal, 10000);
  EXPECT_GT(overflow, 1000);
  EXPECT_GT(subnormal, 1000);
  EXPECT_GT(zero, 1000);
}

TEST(ScalePow2, EdgesAndTies) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  // Zeros keep their sign; e = 0 is the identity.
  EXPECT_TRUE(same_bits(nm::scale_pow2(0.0, 100), 0.0));
  EXPECT_TRUE(same_bits(nm::scale_pow2(-0.0, -100), -0.0));
  EXPECT_TRUE(same_bits(nm::scale_pow2(1.25, 0), 1.25));
  // Round half to even into the subnormal range.
  EXPECT_TRUE(same_bits(nm::scale_pow2(1.0, -1075), 0.0));             // 0.5 ulp -> 0
  EXPECT_TRUE(same_bits(nm::scale_pow2(-1.0, -1075), -0.0));
  EXPECT_TRUE(same_bits(nm::scale_pow2(1.5, -1075), tiny));             // 0.75 ulp -> 1
  EXPECT_TRUE(same_bits(nm::scale_pow2(1.5, -1074), 2 * tiny));         // 1.5 -> 2
  EXPECT_TRUE(same_bits(nm::scale_pow2(2.5, -1074), 2 * tiny));         // 2.5 -> 2
  EXPECT_TRUE(same_bits(nm::scale_pow2(3.5, -1074), 4 * tiny));         // 3.5 -> 4
  EXPECT_TRUE(same_bits(nm::scale_pow2(std::nextafter(1.0, 2.0), -1075), tiny));  // just above a tie
  EXPECT_TRUE(same_bits(nm::scale_pow2(std::nextafter(std::nextafter(1.0, 0.0), 0.0), -1022),
                        std::nextafter(DBL_MIN, 0.0)));                                   // exact subnormal
  EXPECT_TRUE(same_bits(nm::scale_pow2(std::nextafter(1.0, 0.0), -1022), DBL_MIN));     // tie to even: up
  EXPECT_TRUE(same_bits(nm::scale_pow2(std::nextafter(2.0, 0.0), -1023), DBL_MIN));     // same value
  EXPECT_TRUE(same_bits(nm::scale_pow2(1.0, -1022), DBL_MIN));
  EXPECT_TRUE(same_bits(nm::scale_pow2(1.0, -1074), tiny));
  EXPECT_TRUE(same_bits(nm::scale_pow2(DBL_MAX, -2098), tiny));  // (1 - 2^-53) * 2^-1074 rounds up
  EXPECT_TRUE(same_bits(nm::scale_pow2(DBL_MAX, -2099), 0.0));   // just below half an ulp
  // Overflow.
  EXPECT_TRUE(same_bits(nm::scale_pow2(1.0, 1024), oztest::kInf));
  EXPECT_TRUE(same_bits(nm::scale_pow2(-1.0, 1024), -oztest::kInf));
  EXPECT_TRUE(same_bits(nm::scale_pow2(DBL_MAX, 1), oztest::kInf));
  EXPECT_TRUE(same_bits(nm::scale_pow2(1.0, 1023), std::ldexp(1.0, 1023)));
  EXPECT_TRUE(same_bits(nm::scale_pow2(DBL_MIN, 2045), std::ldexp(1.0, 1023)));
  // Subnormal inputs (normalised inside).
  EXPECT_TRUE(same_bits(nm::scale_pow2(tiny, 1074), 1.0));
  EXPECT_TRUE(same_bits(nm::scale_pow2(-3 * tiny, 1), -6 * tiny));
  EXPECT_TRUE(same_bits(nm::scale_pow2(3 * tiny, -1), 2 * tiny));  // 1.5 ulp -> 2
  EXPECT_TRUE(same_bits(nm::scale_pow2(tiny, 2098), oztest::kInf));
  for (double v : {tiny, 3 * tiny, DBL_MIN, std::nextafter(DBL_MIN, 0.0), 1.0, 1.5, DBL_MAX, 0.1, 127.0})
    for (int e = -2200; e <= 2200; e += 7) {
      ASSERT_TRUE(scale_ok(v, e));
      ASSERT_TRUE(scale_ok(-v, e));
    }
}

// The kernels' fast path: one multiplication by pow2_normal(e) equals scale_pow2 for every
// e in [-1022, 1023], in all result regimes (normal, subnormal, zero, overflow).
TEST(ScalePow2, MultiplyByNormalPowerOfTwoIsTheSame) {
  EXPECT_TRUE(nm::pow2_is_normal(-1022));
  EXPECT_TRUE(nm::pow2_is_normal(1023));
  EXPECT_FALSE(nm::pow2_is_normal(-1023));
  EXPECT_FALSE(nm::pow2_is_normal(1024));
  EXPECT_EQ(nm::pow2_normal(0), 1.0);
  EXPECT_EQ(nm::pow2_normal(-1022), DBL_MIN);
  EXPECT_EQ(nm::pow2_normal(1023), std::ldexp(1.0, 1023));
  std::mt19937_64 rng(43);
  int subnormal_or_zero = 0, overflow = 0;
  for (int t = 0; t < 400000; ++t) {
    double v;
    if (t % 2) {  // an exact diagonal sum, as the kernels convert them
      const int b = std::uniform_int_distribution<int>(1, 53)(rng);
      v = static_cast<double>(static_cast<int64_t>(rng() >> (64 - b)));
    } else {
      v = random_positive_double(rng);
    }
    if (rng() & 1) v = -v;
    const int e = std::uniform_int_distribution<int>(nm::kPow2NormalMin, nm::kPow2NormalMax)(rng);
    const double fast = nm::mul_rn(v, nm::pow2_normal(e));
    ASSERT_TRUE(same_bits(fast, nm::scale_pow2(v, e))) << v << " e=" << e;
    if (std::isinf(fast)) ++overflow;
    if (fast != 0.0 && std::fabs(fast) < DBL_MIN) ++subnormal_or_zero;
    if (fast == 0.0 && v != 0.0) ++subnormal_or_zero;
  }
  EXPECT_GT(overflow, 1000);
  EXPECT_GT(subnormal_or_zero, 1000);
  for (double v : {1.0, 1.5, 2.5, 3.5, DBL_MAX, DBL_MIN, std::nextafter(1.0, 2.0), std::nextafter(DBL_MIN, 0.0)})
    for (int e = nm::kPow2NormalMin; e <= nm::kPow2NormalMax; ++e) {
      ASSERT_TRUE(same_bits(nm::mul_rn(v, nm::pow2_normal(e)), nm::scale_pow2(v, e))) << v << " e=" << e;
      ASSERT_TRUE(same_bits(nm::mul_rn(-v, nm::pow2_normal(e)), nm::scale_pow2(-v, e))) << -v << " e=" << e;
    }
}

// ---------------------------------------------------------------------------------------------
// diagonal_to_fp64, triangle_products, int32_exact_k, apply_alpha_beta.

TEST(DiagonalToFp64, MatchesExactScaling) {
  std::mt19937_64 rng(51);
  const bool ld_ok =
      std::numeric_limits<long double>::digits >= 64 && std::numeric_limits<long double>::min_exponent < -16000;
  for (int t = 0; t < 200000; ++t) {
    // |D| up to 2^62 (beyond 2^53 the int64 -> double conversion rounds once).
    const int bitsD = std::uniform_int_distribution<int>(0, 62)(rng);
    int64_t D = static_cast<int64_t>(rng() >> (64 - std::max(1, bitsD)));
    if (rng() & 1) D = -D;
    const int d = std::uniform_int_distribution<int>(0, nm::kMaxSlices - 1)(rng);
    const int32_t shift_sum = std::uniform_int_distribution<int32_t>(-2100, 2200)(rng);
    const int e = -8 * d - shift_sum;
    const double got = nm::diagonal_to_fp64(D, d, shift_sum);
    ASSERT_TRUE(same_bits(got, std::ldexp(static_cast<double>(D), e))) << D << " d=" << d << " shift_sum=" << shift_sum;
    if (ld_ok && (D <= (int64_t(1) << 53) && D >= -(int64_t(1) << 53))) {
      // One rounding from the exact value.
      const double exact = static_cast<double>(std::ldexp(static_cast<long double>(D), e));
      ASSERT_TRUE(same_bits(got, exact)) << D << " d=" << d << " shift_sum=" << shift_sum;
    }
  }
  EXPECT_TRUE(same_bits(nm::diagonal_to_fp64(0, 3, 17), 0.0));
  EXPECT_EQ(nm::diagonal_to_fp64(16129, 0, 12), 16129.0 / 4096.0);
  EXPECT_EQ(nm::diagonal_to_fp64(-5, 2, -20), -5.0 * 16.0);  // 2^(-16 + 20)
}

TEST(TriangleProducts, CountsPairsBelowTheDiagonal) {
  static_assert(nm::triangle_products(7) == 28, "constexpr");
  static_assert(nm::triangle_products(20) == 210, "constexpr");
  for (int s = 0; s <= nm::kMaxSlices; ++s) {
    int count = 0;
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j)
        if (i + j < s) ++count;
    EXPECT_EQ(nm::triangle_products(s), count) << s;
  }
}

TEST(Int32ExactK, IsTheLargestSafeDepth) {
  static_assert(nm::int32_exact_k(1) == 131071, "constexpr");
  for (int terms = 1; terms <= 4 * nm::kMaxSlices; ++terms) {
    const int64_t k = nm::int32_exact_k(terms);
    EXPECT_EQ(k, 131071 / terms);
    EXPECT_LE(int64_t(terms) * k * nm::kMaxDigitProduct, int64_t(INT32_MAX)) << terms;
    EXPECT_GT(int64_t(terms) * (k + 1) * nm::kMaxDigitProduct, int64_t(INT32_MAX)) << terms;
    // Worst case actually summed in int32 arithmetic (unsigned to avoid UB when checking):
    // terms * k products of (-128)*(-128) stay below 2^31.
    uint32_t acc = 0;
    for (int64_t q = 0; q < int64_t(terms) * k; ++q) acc += 16384u;
    EXPECT_LE(acc, uint32_t(INT32_MAX)) << terms;
  }
  EXPECT_EQ(nm::int32_exact_k(0), 0);
  EXPECT_EQ(nm::int32_exact_k(-3), 0);
  EXPECT_EQ(nm::int32_exact_k(131071), 1);
  EXPECT_EQ(nm::int32_exact_k(131072), 0);
}

TEST(ApplyAlphaBeta, FixedOrderWithoutFma) {
  std::mt19937_64 rng(61);
  std::normal_distribution<double> nd;
  int fma_would_differ = 0;
  for (int t = 0; t < 100000; ++t) {
    const double alpha = nd(rng), acc = nd(rng) * 1e3, beta = nd(rng), c = nd(rng) * 1e3;
    volatile double t1 = alpha * acc;
    volatile double t2 = beta * c;
    volatile double sum = t1 + t2;
    const double want = sum;
    ASSERT_TRUE(same_bits(nm::apply_alpha_beta(alpha, acc, beta, c, true), want));
    ASSERT_TRUE(same_bits(nm::apply_alpha_beta(alpha, acc, beta, c, false), static_cast<double>(t1)));
    if (!same_bits(std::fma(alpha, acc, t2), want)) ++fma_would_differ;
  }
  // The inputs are such that contraction would be visible: the check above is meaningful.
  EXPECT_GT(fma_would_differ, 1000);
  // beta == 0 path does not read C (NaN there does not leak).
  EXPECT_EQ(nm::apply_alpha_beta(2.0, 3.0, 0.0, oztest::kNaN, false), 6.0);
  EXPECT_EQ(nm::apply_alpha_beta(2.0, 3.0, 0.0, oztest::kInf, false), 6.0);
  // read_c with NaN propagates, as IEEE.
  EXPECT_TRUE(std::isnan(nm::apply_alpha_beta(2.0, 3.0, 1.0, oztest::kNaN, true)));
}

// ---------------------------------------------------------------------------------------------
// check_shape follows BLAS/cuBLAS argument rules.

namespace {
ozgemm::GemmShape shape(char ta, char tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  return ozgemm::gemm_shape(ta == 'N' ? ozgemm::Op::N : ozgemm::Op::T, tb == 'N' ? ozgemm::Op::N : ozgemm::Op::T, m,
                            n, k, lda, ldb, ldc);
}
}  // namespace

TEST(CheckShape, BlasRulesExhaustiveSmall) {
  // Brute force over small shapes and leading dimensions against the BLAS rules written out:
  //   m, n, k >= 0; lda >= max(1, transa == N ? m : k); ldb >= max(1, transb == N ? k : n);
  //   ldc >= max(1, m).
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'})
      for (int64_t m = -1; m <= 3; ++m)
        for (int64_t n = -1; n <= 3; ++n)
          for (int64_t k = -1; k <= 3; ++k)
            for (int64_t lda = -1; lda <= 4; ++lda)
              for (int64_t ldb = 0; ldb <= 4; ++ldb)
                for (int64_t ldc = 0; ldc <= 4; ++ldc) {
                  const auto s = shape(ta, tb, m, n, k, lda, ldb, ldc);
                  const int64_t arows = ta == 'N' ? m : k, brows = tb == 'N' ? k : n;
                  const bool valid = m >= 0 && n >= 0 && k >= 0 && lda >= std::max<int64_t>(1, arows) &&
                                     ldb >= std::max<int64_t>(1, brows) && ldc >= std::max<int64_t>(1, m);
                  const std::string why = ozgemm::check_shape(s);
                  ASSERT_EQ(why.empty(), valid) << ta << tb << " m=" << m << " n=" << n << " k=" << k
                                                << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc << ": '"
                                                << why << "'";
                }
}

TEST(CheckShape, ReasonsNameTheArgument) {
  EXPECT_NE(ozgemm::check_shape(shape('N', 'N', -1, 2, 2, 2, 2, 2)).find("m must"), std::string::npos);
  EXPECT_NE(ozgemm::check_shape(shape('N', 'N', 2, -1, 2, 2, 2, 2)).find("n must"), std::string::npos);
  EXPECT_NE(ozgemm::check_shape(shape('N', 'N', 2, 2, -1, 2, 2, 2)).find("k must"), std::string::npos);
  EXPECT_NE(ozgemm::check_shape(shape('N', 'N', 5, 2, 3, 4, 3, 5)).find("lda"), std::string::npos);
  EXPECT_NE(ozgemm::check_shape(shape('T', 'N', 5, 2, 3, 2, 3, 5)).find("lda"), std::string::npos);  // T: lda >= k
  EXPECT_TRUE(ozgemm::check_shape(shape('T', 'N', 5, 2, 3, 3, 3, 5)).empty());
  EXPECT_NE(ozgemm::check_shape(shape('N', 'N', 5, 2, 3, 5, 2, 5)).find("ldb"), std::string::npos);
  EXPECT_NE(ozgemm::check_shape(shape('N', 'T', 5, 4, 3, 5, 3, 5)).find("ldb"), std::string::npos);  // T: ldb >= n
  EXPECT_TRUE(ozgemm::check_shape(shape('N', 'T', 5, 4, 3, 5, 4, 5)).empty());
  EXPECT_NE(ozgemm::check_shape(shape('N', 'N', 5, 2, 3, 5, 3, 4)).find("ldc"), std::string::npos);
  // Zero sizes still need leading dimensions >= 1 (BLAS: max(1, .)).
  EXPECT_FALSE(ozgemm::check_shape(shape('N', 'N', 0, 0, 0, 0, 1, 1)).empty());
  EXPECT_TRUE(ozgemm::check_shape(shape('N', 'N', 0, 0, 0, 1, 1, 1)).empty());
  // Invalid transpose values.
  ozgemm::GemmShape bad = shape('N', 'N', 1, 1, 1, 1, 1, 1);
  bad.transa = static_cast<ozgemm::Op>('C');
  EXPECT_FALSE(ozgemm::check_shape(bad).empty());
  bad = shape('N', 'N', 1, 1, 1, 1, 1, 1);
  bad.transb = static_cast<ozgemm::Op>('x');
  EXPECT_FALSE(ozgemm::check_shape(bad).empty());
}

// problem.hpp documents that check_shape also guarantees "every index fits the 64-bit
// offsets the library uses". An element offset is row + col * ld, so a shape whose last
// element (rows-1) + (cols-1) * ld exceeds INT64_MAX must be rejected.
TEST(CheckShape, RejectsOffsetsThatOverflowInt64) {
  const int64_t big = int64_t(1) << 62;
  // A: 1 x 4 (N), lda = 2^62: last offset 3 * 2^62 > INT64_MAX.
  EXPECT_FALSE(ozgemm::check_shape(shape('N', 'N', 1, 1, 4, big, 4, 1)).empty()) << "A offsets overflow";
  // B: 4 x 4 (N), ldb = 2^62.
  EXPECT_FALSE(ozgemm::check_shape(shape('N', 'N', 1, 4, 4, 1, big, 1)).empty()) << "B offsets overflow";
  // C: 1 x 4, ldc = 2^62.
  EXPECT_FALSE(ozgemm::check_shape(shape('N', 'N', 1, 4, 1, 1, 1, big)).empty()) << "C offsets overflow";
  // The same leading dimensions with a single column are fine (offsets stay small).
  EXPECT_TRUE(ozgemm::check_shape(shape('N', 'N', 1, 1, 1, big, big, big)).empty());
}
