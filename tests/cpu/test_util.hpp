// tests/test_util.hpp — small helpers shared by the CPU tests (no CUDA).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace oztest {

inline uint64_t bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline double from_bits(uint64_t u) {
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
inline bool same_bits(double a, double b) { return bits(a) == bits(b); }

// |x| 2^e as an integer, rounded to nearest with ties away from zero or truncated, in 128-bit integer
// arithmetic on x's significand (independent of numerics::scaled_significand_integer, which the tests
// check against it). Precondition: |x| 2^e < 2^127.
inline unsigned __int128 integer_magnitude(double x, int e, bool nearest) {
  using u128 = unsigned __int128;
  const uint64_t u = bits(x);
  const int biased = static_cast<int>((u >> 52) & 0x7ff);
  const u128 mant = (u & 0x000fffffffffffffull) | (biased ? (uint64_t(1) << 52) : 0);
  const int q = (biased ? biased - 1075 : -1074) + e;  // |x| 2^e = mant 2^q
  if (mant == 0) return 0;
  if (q >= 0) return mant << q;
  const int sh = -q;
  if (sh >= 64) return 0;  // mant < 2^53 <= 2^(sh - 1): below one half
  const u128 floor_part = mant >> sh, rest = mant - (floor_part << sh), half = u128(1) << (sh - 1);
  return floor_part + (nearest && rest >= half ? 1 : 0);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// A NaN with a recognisable payload, used to poison outputs and padding.
inline double marker_nan() { return from_bits(0x7ff80000deadbeefull); }

// Column-major matrix with leading dimension ld >= rows; every element (padding included)
// starts as `init`.
struct Mat {
  int64_t rows = 0, cols = 0, ld = 1;
  std::vector<double> v;
  Mat() = default;
  Mat(int64_t r, int64_t c, int64_t ld_, double init)
      : rows(r), cols(c), ld(ld_), v(static_cast<size_t>(std::max<int64_t>(1, ld_ * std::max<int64_t>(1, c))), init) {}
  Mat(int64_t r, int64_t c, double init) : Mat(r, c, std::max<int64_t>(1, r), init) {}
  double& at(int64_t r, int64_t c) { return v[static_cast<size_t>(r + c * ld)]; }
  double at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r + c * ld)]; }
  double* data() { return v.data(); }
  const double* data() const { return v.data(); }
  // Explicit transpose (cols x rows, tight leading dimension).
  Mat transposed() const {
    Mat t(cols, rows, 0.0);
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t r = 0; r < rows; ++r) t.at(c, r) = at(r, c);
    return t;
  }
};

// Exact signed fixed-point number, two's complement over kLimbs 32-bit limbs:
// value = (integer held in the limbs) * 2^-kFrac. Covers every dyadic m * 2^e with
// e >= -kFrac and |value| < 2^(32 kLimbs - kFrac - 1) = 2^1259: the whole double range,
// and every digit weight 2^(-8 i - shift) the slicing can produce (>= 2^-1232).
class Fixed {
 public:
  static constexpr int kFrac = 1300;
  static constexpr int kLimbs = 80;

  Fixed() { w_.fill(0); }
  static Fixed dyadic(int64_t m, int e) {
    Fixed f;
    f.add(m, e);
    return f;
  }
  // Exact value of a finite double.
  static Fixed of_double(double x) {
    const uint64_t u = bits(x);
    const int biased = static_cast<int>((u >> 52) & 0x7ff);
    const uint64_t frac = u & 0x000fffffffffffffull;
    Fixed f;
    if (biased == 0 && frac == 0) return f;
    const int64_t mant = static_cast<int64_t>(biased ? (frac | (1ull << 52)) : frac);
    const int ex = biased ? biased - 1075 : -1074;
    f.add((u >> 63) ? -mant : mant, ex);
    return f;
  }
  // this += m * 2^e (exact).
  void add(int64_t m, int e) {
    const int pos = e + kFrac;
    if (pos < 0 || pos > 32 * kLimbs - 100) throw std::logic_error("Fixed: exponent out of range");
    const int limb = pos / 32, off = pos % 32;
    __int128 v = static_cast<__int128>(m) * (static_cast<__int128>(1) << off);  // |v| < 2^95
    uint64_t carry = 0;
    for (int i = limb; i < kLimbs; ++i) {
      const uint64_t part = static_cast<uint32_t>(static_cast<unsigned __int128>(v));
      v >>= 32;  // arithmetic: sign-extends once v is exhausted
      const uint64_t s = uint64_t(w_[i]) + part + carry;
      w_[i] = static_cast<uint32_t>(s);
      carry = s >> 32;
    }
  }
  Fixed operator-() const {
    Fixed r;
    uint64_t carry = 1;
    for (int i = 0; i < kLimbs; ++i) {
      const uint64_t s = uint64_t(static_cast<uint32_t>(~w_[i])) + carry;
      r.w_[i] = static_cast<uint32_t>(s);
      carry = s >> 32;
    }
    return r;
  }
  Fixed operator+(const Fixed& o) const {
    Fixed r;
    uint64_t carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const uint64_t s = uint64_t(w_[i]) + o.w_[i] + carry;
      r.w_[i] = static_cast<uint32_t>(s);
      carry = s >> 32;
    }
    return r;
  }
  Fixed operator-(const Fixed& o) const { return *this + (-o); }
  bool negative() const { return (w_[kLimbs - 1] >> 31) != 0; }
  bool zero() const {
    for (uint32_t x : w_)
      if (x) return false;
    return true;
  }
  int sign() const { return zero() ? 0 : (negative() ? -1 : 1); }
  Fixed abs() const { return negative() ? -*this : *this; }
  bool operator<(const Fixed& o) const { return (*this - o).negative(); }
  bool operator<=(const Fixed& o) const { return !(o < *this); }
  bool operator==(const Fixed& o) const { return (*this - o).zero(); }

 private:
  std::array<uint32_t, kLimbs> w_;
};

}  // namespace oztest
