// The Ozaki-II constants (ozgemm/numerics/ozaki2.hpp), computed exactly with a small unsigned
// big-integer type: P, the CRT weights w_i = (P/p_i) ((P/p_i)^-1 mod p_i) split into a part on a
// common grid (exact sums) and a rounded rest, and the scaling limits floor(Q / 4^d).
#include <array>
#include <cstdint>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "ozgemm/numerics/ozaki2.hpp"
#include "ozgemm/numerics/ozaki2_complex.hpp"

namespace ozgemm {
namespace numerics {

namespace {

// Little-endian base-2^32 unsigned integer, with what the constants need.
struct Big {
  std::vector<uint32_t> w;  // no leading zero limbs

  static Big of(uint64_t v) {
    Big b;
    while (v) {
      b.w.push_back(static_cast<uint32_t>(v));
      v >>= 32;
    }
    return b;
  }
  bool zero() const { return w.empty(); }
  void trim() {
    while (!w.empty() && w.back() == 0) w.pop_back();
  }
  int bits() const {
    if (w.empty()) return 0;
    int b = 32 * int(w.size() - 1);
    for (uint32_t top = w.back(); top; top >>= 1) ++b;
    return b;
  }
  bool bit(int i) const { return size_t(i / 32) < w.size() && ((w[i / 32] >> (i % 32)) & 1u); }
  Big mul(uint32_t m) const {
    Big r;
    uint64_t carry = 0;
    for (uint32_t x : w) {
      const uint64_t t = uint64_t(x) * m + carry;
      r.w.push_back(static_cast<uint32_t>(t));
      carry = t >> 32;
    }
    if (carry) r.w.push_back(static_cast<uint32_t>(carry));
    r.trim();
    return r;
  }
  Big div(uint32_t d, uint32_t* rem = nullptr) const {
    Big q;
    q.w.assign(w.size(), 0);
    uint64_t r = 0;
    for (size_t i = w.size(); i-- > 0;) {
      const uint64_t cur = (r << 32) | w[i];
      q.w[i] = static_cast<uint32_t>(cur / d);
      r = cur % d;
    }
    q.trim();
    if (rem) *rem = static_cast<uint32_t>(r);
    return q;
  }
  Big shr(int s) const {
    Big r;
    const int limbs = s / 32, bits = s % 32;
    for (size_t i = size_t(limbs); i < w.size(); ++i) {
      uint64_t v = w[i] >> bits;
      if (bits && i + 1 < w.size()) v |= uint64_t(w[i + 1]) << (32 - bits);
      r.w.push_back(static_cast<uint32_t>(v));
    }
    r.trim();
    return r;
  }
  Big shl(int s) const {
    Big r;
    r.w.assign(size_t(s / 32), 0);
    const int bits = s % 32;
    uint32_t carry = 0;
    for (uint32_t x : w) {
      r.w.push_back(bits ? (x << bits) | carry : x);
      carry = bits ? x >> (32 - bits) : 0;
    }
    if (carry) r.w.push_back(carry);
    r.trim();
    return r;
  }
  int cmp(const Big& o) const {
    if (w.size() != o.w.size()) return w.size() < o.w.size() ? -1 : 1;
    for (size_t i = w.size(); i-- > 0;)
      if (w[i] != o.w[i]) return w[i] < o.w[i] ? -1 : 1;
    return 0;
  }
  Big sub(const Big& o) const {  // requires *this >= o
    Big r = *this;
    int64_t borrow = 0;
    for (size_t i = 0; i < r.w.size(); ++i) {
      int64_t t = int64_t(r.w[i]) - (i < o.w.size() ? int64_t(o.w[i]) : 0) - borrow;
      borrow = t < 0;
      r.w[i] = static_cast<uint32_t>(t + (borrow ? (int64_t(1) << 32) : 0));
    }
    r.trim();
    return r;
  }
  Big mul(const Big& o) const {
    Big r;
    r.w.assign(w.size() + o.w.size(), 0);
    for (size_t i = 0; i < w.size(); ++i) {
      uint64_t carry = 0;
      for (size_t j = 0; j < o.w.size(); ++j) {
        const uint64_t t = uint64_t(w[i]) * o.w[j] + r.w[i + j] + carry;
        r.w[i + j] = static_cast<uint32_t>(t);
        carry = t >> 32;
      }
      r.w[i + o.w.size()] += static_cast<uint32_t>(carry);
    }
    r.trim();
    return r;
  }
  // Round to the nearest double, ties to even.
  double to_double() const {
    const int n = bits();
    if (n <= 53) {
      double d = 0;
      for (size_t i = w.size(); i-- > 0;) d = d * 4294967296.0 + w[i];
      return d;
    }
    const int drop = n - 53;
    Big top = shr(drop);
    uint64_t mant = 0;
    for (size_t i = top.w.size(); i-- > 0;) mant = (mant << 32) | top.w[i];
    const bool half = bit(drop - 1);
    bool sticky = false;
    for (int i = 0; i < drop - 1 && !sticky; ++i) sticky = bit(i);
    if (half && (sticky || (mant & 1))) ++mant;  // may carry to 2^53: still exact as a double
    return std::ldexp(static_cast<double>(mant), drop);
  }
  int64_t to_int64_saturated() const {
    if (bits() > 63) return INT64_MAX;
    uint64_t v = 0;
    for (size_t i = w.size(); i-- > 0;) v = (v << 32) | w[i];
    return static_cast<int64_t>(v);
  }
};

// A signed difference x - y of two bigs as the nearest double.
double diff_to_double(const Big& x, const Big& y) {
  return x.cmp(y) >= 0 ? x.sub(y).to_double() : -y.sub(x).to_double();
}

// The exact big integer of a double holding an integer value (>= 0).
Big of_double(double d) {
  int e;
  const double f = std::frexp(d, &e);  // d = f 2^e, f in [0.5, 1)
  const uint64_t mant = static_cast<uint64_t>(std::ldexp(f, 53));
  return e >= 53 ? Big::of(mant).shl(e - 53) : Big::of(mant >> (53 - e));
}

uint32_t inverse_mod(uint32_t a, uint32_t p) {  // a^-1 mod p, gcd(a, p) = 1
  int64_t t = 0, nt = 1, r = p, nr = a % p;
  while (nr) {
    const int64_t q = r / nr;
    int64_t tmp = t - q * nt;
    t = nt;
    nt = tmp;
    tmp = r - q * nr;
    r = nr;
    nr = tmp;
  }
  if (r != 1) throw std::logic_error("ozaki2: moduli not coprime");
  return static_cast<uint32_t>(t < 0 ? t + p : t);
}

}  // namespace

Ozaki2Constants ozaki2_constants_of_moduli(const int* moduli, int n) {
  if (n < kMinModuli || n > kMaxModuli) throw std::invalid_argument("ozaki2: moduli count out of range");
  Ozaki2Constants c;
  c.n = n;
  Big P = Big::of(1);
  uint32_t rho = 0;  // sum of the residues' largest magnitudes
  for (int i = 0; i < n; ++i) {
    if (moduli[i] < 2 || moduli[i] > 256) throw std::invalid_argument("ozaki2: moduli must lie in [2, 256]");
    c.p[i] = moduli[i];
    P = P.mul(uint32_t(moduli[i]));
    rho += uint32_t(moduli[i]) / 2;
  }
  // The grid: sum |hi_i U_i| <= P rho < 2^(ceil log2 P + ceil log2 rho) = 2^53 g.
  int log_rho = 0;
  while ((1u << log_rho) < rho) ++log_rho;
  const int log_P = P.bits();  // P is not a power of two for n >= 2: ceil(log2 P) = bits
  const int g = log_P + log_rho - 53;
  c.grid = std::ldexp(1.0, g);
  c.rho = static_cast<int32_t>(rho);
  for (int i = 0; i < n; ++i) {
    uint32_t rem = 0;
    const Big Pi = P.div(uint32_t(c.p[i]));
    Pi.div(uint32_t(c.p[i]), &rem);
    const Big w = Pi.mul(inverse_mod(rem, uint32_t(c.p[i])));
    const Big hi_units = g > 0 ? w.shr(g) : w;
    const Big hi = g > 0 ? hi_units.shl(g) : hi_units;
    c.hi[i] = std::ldexp(hi_units.to_double(), g > 0 ? g : 0);  // exact: hi_units < 2^53
    c.lo[i] = w.sub(hi).to_double();
  }
  c.P_hi = P.to_double();
  c.P_lo = diff_to_double(P, of_double(c.P_hi));
  c.inv_P = 1.0 / c.P_hi;
  c.recon_abs_u = 1.01 * ((n + 3) * 128.0 * n * c.grid + 3.0 * (c.rho + 1) * std::fabs(c.P_lo));
  const Big Q = P.sub(Big::of(1)).shr(2);  // floor((P - 1) / 4)
  for (int d = kOz2ShiftMin; d <= kOz2ShiftMax; ++d)
    c.limit[d - kOz2ShiftMin] = (d >= 0 ? Q.shr(2 * d) : Q.shl(-2 * d)).to_int64_saturated();
  return c;
}

namespace {
// The constants of every count of one moduli table, computed once (thread-safe): one cache per table.
template <const int* Table>
const Ozaki2Constants& cached_constants(int n, const char* scheme) {
  if (n < kMinModuli || n > kMaxModuli) throw std::invalid_argument(std::string(scheme) + ": moduli count out of range");
  static std::array<Ozaki2Constants, kMaxModuli + 1> table;
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = kMinModuli; i <= kMaxModuli; ++i) table[size_t(i)] = ozaki2_constants_of_moduli(Table, i);
  });
  return table[size_t(n)];
}
}  // namespace

const Ozaki2Constants& ozaki2_constants(int n) { return cached_constants<kModuliTable>(n, "ozaki2"); }

// The complex scheme's (ozgemm/numerics/ozaki2_complex.hpp): the same computation for kComplexModuliTable.
const Ozaki2Constants& ozaki2_complex_constants(int n) {
  return cached_constants<kComplexModuliTable>(n, "ozaki2 complex");
}

}  // namespace numerics
}  // namespace ozgemm
