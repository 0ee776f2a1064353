// ozgemm/numerics/accuracy.hpp — the accuracy contract of the Ozaki-I scheme: the per-entry error
// bound, the statistics it reads, and the choice of the slice count. Shared by the GPU decision
// kernels (kernels/dgemm/accuracy.cu) and the host reference (src/reference/accuracy_reference.cpp)
// so both choose the same count from the same data. Derivation: docs/numerics.md, "The accuracy
// contract".
//
// Units. For row r of op(A) with shift sigma_r (shift_from_max), a' = a * 2^sigma_r, |a'| <= 127
// ("digit units"); likewise b' for column c of op(B). All statistics are exact integers, so every
// order of summation gives the same bits.
//
// Statistics per row (column):
//   q  = the digits that represent every element of the row exactly (1 + ceil((-sigma - lsb)/8)
//        over the row's lowest set bit lsb; 1 for an all-zero row);
//   U  = sum_l ceil(|a'_l| 2^kUnitBits): an upper bound of ||a'||_1 in units of 2^-kUnitBits;
//   mag_l = floor(|a'_l|) in [0, 127]: the magnitude digits, whose INT8 GEMM gives
//   P_rc = sum_l mag(a_rl) mag(b_lc) <= (|A||B|)_rc 2^(sigma_r + sigma_c): a LOWER bound of |A||B|.
//
// The bound (exact arithmetic of the scheme at s slices, then its FP64 reconstruction; no over- or
// underflow in the reconstruction; finite row and column), in units of 2^-(sigma_r + sigma_c):
//   |C_rc - (AB)_rc| <= T + u (1 + u)^s [ (|A||B|)' + T + F ],     u = 2^-53,
//   T = 0 when q_r + q_c <= s + 1 (every digit product kept, every slice exact), otherwise
//   T = 2^(-8(s-1)) [ (U_r + U_c) 2^-kUnitBits + k (1.02 + 64.26 (s-1)) ],
//   F = 0.504 (U_r + U_c) 2^-kUnitBits + 1.012 k.
// The contract asks |C_rc - (AB)_rc| <= c u (|A||B|)_rc with c = target_constant(k) = min(4, k);
// since (|A||B|)' >= P it holds when the entry's ratio
//   R(s) = 1.0001 + (T / u + F) (1 + 2^-40) / P  <=  c.
// (P = 0 gives R = inf: no lower bound of |A||B|, no guarantee.) R is what the library reports as
// the bound's value: the constant the data achieved.
#pragma once

#include <cstdint>

#include "ozgemm/numerics/fp.hpp"
#include "ozgemm/numerics/ozaki1.hpp"
#include "ozgemm/numerics/ozaki2.hpp"

namespace ozgemm {
namespace numerics {

constexpr int kUnitBits = 10;                 // U's resolution: 2^-10 digit units
constexpr int kMagMax = 127;                  // mag digits lie in [0, 127]
// Largest depth whose magnitude GEMM is exact in int32: kMagMax^2 * k <= 2^31 - 1.
constexpr int64_t kMagExactK = int64_t(2147483647) / (kMagMax * kMagMax);  // 133143
constexpr int kNoDigits = 0x7fffffff;         // "no nonzero element": lsb of an empty row

// The exponent of the lowest set bit of a finite, non-zero x: x = odd * 2^lsb.
OZGEMM_HD int lowest_bit_exponent(double x) {
  const uint64_t u = bits_of(x);
  const int biased = static_cast<int>((u >> 52) & 0x7ff);
  uint64_t mant = u & 0x000fffffffffffffull;
  int ex;
  if (biased) {
    mant |= 1ull << 52;
    ex = biased - 1075;
  } else {
    ex = -1074;
  }
#if defined(__CUDA_ARCH__)
  return ex + __ffsll(static_cast<long long>(mant)) - 1;  // mant != 0 for x != 0
#else
  return ex + __builtin_ctzll(mant);
#endif
}

// Digits that represent every element of a row exactly, from its shift and the smallest lowest-bit
// exponent of its non-zero elements (kNoDigits: none). Element x is exact in q digits iff
// x 2^(shift + 8(q-1)) is an integer iff shift + 8(q-1) + lsb >= 0 (slice_value's X).
OZGEMM_HD int32_t exact_digits(int32_t shift, int32_t lsb_min) {
  if (lsb_min == kNoDigits) return 1;
  const int64_t need = -int64_t(shift) - int64_t(lsb_min);  // 8 (q - 1) >= need
  if (need <= 0) return 1;
  const int64_t q = 1 + (need + 7) / 8;
  return q > 100000 ? 100000 : static_cast<int32_t>(q);
}

// The magnitude digit and U's term of one finite element of a row with shift `shift`.
OZGEMM_HD int32_t magnitude_digit(double x, int32_t shift) { return static_cast<int32_t>(scaled_floor(x, shift)); }
OZGEMM_HD int64_t unit_term(double x, int32_t shift) { return scaled_ceil(x, shift + kUnitBits); }

// The magnitudes pass's three terms of one finite element at once: magnitude_digit(x, shift),
// unit_term(x, shift) and oz2_norm_term(x, shift - 1), equal to those one by one (tests/test_accuracy.cpp).
// With |x| 2^shift <= 127 every normal x has |x| 2^shift = mant 2^p, p <= -46, so all three scaled
// values are mhi 2^(p' + 32) + lo 2^p' with p' <= -32 (mhi the significand's top 21 bits, lo the
// rest): floor and "any bits below" in 32-bit steps on the high word (the 64-bit shifts of
// scaled_floor/scaled_ceil made the pass issue-bound: 350 us an operand at 8192^2, H100, ncu).
// Subnormal x under large shifts take the general functions.
struct MagnitudeTerms {
  int32_t digit;  // magnitude_digit
  int64_t unit;   // unit_term
  int64_t norm;   // oz2_norm_term at shift - 1
};
namespace detail {
// floor(v) and [v not an integer] of v = mant 2^-(t + 32), mant = mhi 2^32 + lo, t >= 0.
OZGEMM_HD uint32_t floor_hi(uint32_t mhi, int t) { return t < 21 ? mhi >> t : 0u; }
OZGEMM_HD bool below_hi(uint32_t mhi, uint32_t lo, int t) {
  return lo != 0 || (t < 21 ? (mhi & ((1u << t) - 1u)) != 0 : mhi != 0);
}
}  // namespace detail
OZGEMM_HD MagnitudeTerms magnitude_terms(double x, int32_t shift) {
  const uint64_t u = bits_of(x);
  const uint32_t hi = static_cast<uint32_t>(u >> 32), lo = static_cast<uint32_t>(u);
  const int biased = static_cast<int>((hi >> 20) & 0x7ff);
  const int64_t p = int64_t(biased ? biased - 1075 : -1074) + shift;  // |x| 2^shift = mant 2^p
  if (p > -42) return MagnitudeTerms{magnitude_digit(x, shift), unit_term(x, shift), oz2_norm_term(x, shift - 1)};
  const uint32_t mhi = (hi & 0xfffffu) | (biased ? 0x100000u : 0u);  // < 2^21
  const int t_digit = static_cast<int>(-p - 32), t_unit = t_digit - kUnitBits, t_norm = t_digit + 1;  // all >= 0
  const uint32_t unit = detail::floor_hi(mhi, t_unit) + (detail::below_hi(mhi, lo, t_unit) ? 1u : 0u);
  const uint32_t a = detail::floor_hi(mhi, t_norm) + (detail::below_hi(mhi, lo, t_norm) ? 1u : 0u);
  return MagnitudeTerms{static_cast<int32_t>(detail::floor_hi(mhi, t_digit)), int64_t(unit), int64_t(uint64_t(a) * a)};
}

// The contract's constant c for depth k: min(4, k) (native DGEMM's own bound is k u |A||B|).
OZGEMM_HD double target_constant(int64_t k) { return k < 4 ? static_cast<double>(k < 1 ? 1 : k) : 4.0; }

// Shift sums beyond this may push the smallest diagonal term of any slice count below the normal
// range, where the bound's "no underflow" assumption fails (and below kHugeShiftSum results near
// DBL_MAX take the offset path): such entries get no guarantee (R = inf). Independent of s, so R
// never increases with s and the smallest count meeting the target everywhere is the largest of
// the entries' own smallest counts.
OZGEMM_HD bool reconstruction_normal(int32_t shift_sum) {
  return int64_t(shift_sum) + kSliceBits * int64_t(kMaxSlices - 1) + 64 <= 1022 && shift_sum >= kHugeShiftSum;
}

// R(s) of one entry (see the top of this file); +inf when no guarantee is possible.
OZGEMM_HD double entry_ratio(int s, int64_t P, int64_t u_row, int64_t u_col, int32_t q_row, int32_t q_col,
                             int32_t shift_sum, int64_t k) {
  const double inf = double_of(0x7ff0000000000000ull);
  if (P <= 0 || !reconstruction_normal(shift_sum)) return inf;
  const double G = mul_rn(int64_to_double_rn(u_row + u_col), pow2_normal(-kUnitBits));  // exact
  const double kd = int64_to_double_rn(k);
  double t_over_u = 0.0;
  if (int64_t(q_row) + int64_t(q_col) > int64_t(s) + 1) {
    const double inner = add_rn(G, mul_rn(kd, add_rn(1.02, mul_rn(64.26, double(s - 1)))));
    t_over_u = mul_rn(inner, pow2_normal(53 - kSliceBits * (s - 1)));  // T / u; 2^(53..-99): normal
  }
  const double f = add_rn(mul_rn(0.504, G), mul_rn(1.012, kd));
  const double excess = mul_rn(add_rn(t_over_u, f), 1.0000000000009095);  // (1 + 2^-40)
  return add_rn(1.0001, div_rn(excess, int64_to_double_rn(P)));
}

// The smallest count s in [s_from, kMaxSlices] with R(s) <= target for one entry; kMaxSlices + 1
// when none. R is non-increasing in s.
OZGEMM_HD int entry_slices(int s_from, double target, int64_t P, int64_t u_row, int64_t u_col, int32_t q_row,
                           int32_t q_col, int32_t shift_sum, int64_t k) {
  for (int s = s_from; s <= kMaxSlices; ++s)
    if (entry_ratio(s, P, u_row, u_col, q_row, q_col, shift_sum, k) <= target) return s;
  return kMaxSlices + 1;
}

// The GPU decision reduces, besides each entry's smallest count, the maxima of R over a window of
// this many counts from the lower bound, so the chosen count's bound comes with the same pass.
constexpr int kSliceWindow = 4;

// A lower bound of the count any choice can take, from the rows' exact digits alone: every entry
// that is not exact at s needs s >= 7 (R(6) > 160 for any P <= 127^2 k), so the count is at least
// min(s_exact, 7) with s_exact = max q_r + max q_c - 1 (all entries exact from there on).
OZGEMM_HD int slices_lower_bound(int32_t q_max_rows, int32_t q_max_cols) {
  const int64_t s_exact = int64_t(q_max_rows) + int64_t(q_max_cols) - 1;
  return static_cast<int>(s_exact < 7 ? (s_exact < 1 ? 1 : s_exact) : 7);
}


// ---- The Ozaki-II contract (the same statistics; docs/numerics.md, "The accuracy contract") ----
// Row r of op(A) at N moduli has Ozaki-II's shift s_r = sigma_r - 1 + d_r, d_r = oz2_extra_shift(S_r)
// of N's constants (ozaki2.hpp; S from the same sigma), likewise t_c = sigma_c - 1 + d_c. With
// A~ = 2^-s A' the row rounded to nearest (e_a = |a - a~| <= 2^-s / 2, a~ = a when the row is exact at
// s: oz2_row_exact; |a~| <= |a| + e_a) and A'B' computed exactly (the moduli's product covers it by the
// scaling: for d >= 0, |rnd(y)| <= 2^d ceil(|a| 2^s0), which S sums; a row with d < 0 truncates
// instead, e_a < 2^-s and |a~| <= |a|: oz2_rounds_to_nearest, oz2_side):
//   |AB - A~B~| <= sum_l e_a |b| + |a| e_b + e_a e_b
//              <= ([row not exact] 2^-s ||b_c||_1 + [col not exact] 2^-t ||a_r||_1) / 2 + [both not exact] 2^-(s+t) k / 4,
// and the reconstruction y of A'B' is within u (2.02 |A'B'| + recon_abs_u); scaling y by
// 2^-(s_r + t_c) is exact while oz2_reconstruction_normal holds. In units of 2^-(sigma_r + sigma_c)
// (2^(2 - d_r - d_c) |A'||B'| <= (|A||B|)' + the bound above, whose 2.02 u multiple is inside the
// (1 + 2^-40) below):
//   |C - AB|' <= u { 2.02 (|A||B|)' + T2 + 2^(2 - d_r - d_c) (recon_abs_u + [!ex_c] k 2^51) },
//   T2 / u = 2^(52 - kUnitBits) ( [!ex_r] 2^(1 - d_r) U_c + [!ex_c] 2^(1 - d_c) U_r ),
// (the cross term k / 4 2^-(s+t) is k 2^51 in units of u 2^-(s+t); gated by the column's exactness
// alone, it is also counted where only the row is exact, which only loosens), and with P <= (|A||B|)'
// the contract |C - AB| <= c u |A||B| holds when
//   R2(N) = 2.03 + (T2 / u + 2^(2 - d_r - d_c) (recon_abs_u + [!ex_c] k 2^51)) (1 + 2^-40) / P  <=  c,
// or the same with 2^-14 P14 in place of P (the finer lower bound below: never a larger R2).
// R2 >= 2.03, so depths k <= 2 (c = k) never take Ozaki-II. R2 is not monotone in N in general (the
// constants grow with P while d grows), so the decision reduces every N's maximum and takes the
// smallest N whose maximum meets c.

// Moduli counts the decision considers: kMinModuli .. kMaxModuli.
constexpr int kModuliWindow = kMaxModuli - kMinModuli + 1;

// Row exact at Ozaki-II's shift sigma - 1 + d: every element's lowest bit at or above 2^-(sigma - 1 + d).
// From the exact digits q (accuracy.hpp's exact_digits: -sigma - lsb <= 8 (q - 1)) this is implied by
// 8 (q - 1) <= d - 1: a sufficient test (it may miss exactness by up to 7 bits, never claim it falsely).
OZGEMM_HD bool oz2_row_exact(int32_t q, int32_t d) { return int64_t(8) * (int64_t(q) - 1) <= int64_t(d) - 1; }

// y 2^-(s_r + t_c) exact: |y| >= 1 stays normal (scale_sum <= 1022) and |y| < P/2 <= 2^(8 kMaxModuli - 1)
// (every p_i <= 2^8) stays finite (scale_sum >= 8 kMaxModuli - 1 - 1023: -864 at 20 moduli; one limit for
// every count, sufficient for the smaller ones).
constexpr int64_t kOz2MinScaleSum = 8 * int64_t(kMaxModuli) - 1 - 1023;
OZGEMM_HD bool oz2_reconstruction_normal(int64_t scale_sum) { return scale_sum <= 1022 && scale_sum >= kOz2MinScaleSum; }

// R2(N) in parts, so that a pass over all entries and counts does one division per entry: per row
// (column) and count, its side x = [!exact] 2^(53 - kUnitBits - d) (T2's factor of the other side's
// U; the complex scheme's times fl(sqrt2)), y = 2^(1 - d), d and recon_add = [!exact] the rounding's
// cross term (oz2_rounding_cross(k), used on the column's side). A side that truncates (d < 0:
// oz2_rounds_to_nearest) has twice the error: x = 2^(54 - kUnitBits - d), and its recon_add twice the
// cross term (a rounded row's e_a times a truncated column's e_b < 2^-t). Per entry inv_P = 1 / P
// rounded (0 for P = 0). Every power of two is normal (d in [kOz2ShiftMin, kOz2ShiftMax]), x y products too; the
// roundings of U, 1/P, the sums and recon_abs_u + recon_add are covered by R2's (1 + 2^-40).
struct Oz2Side {
  double x, y;
  int32_t d;
  double recon_add = 0.0;  // added to recon_abs_u on this side's (the column's) term: the rounding's cross term
};
OZGEMM_HD Oz2Side oz2_side(int32_t q, int32_t d, double rounding_cross, double x_factor = 1.0) {
  const bool exact = oz2_row_exact(q, d), nearest = oz2_rounds_to_nearest(d);
  return Oz2Side{exact ? 0.0 : mul_rn(pow2_normal((nearest ? 53 : 54) - kUnitBits - d), x_factor), pow2_normal(1 - d), d,
                 exact ? 0.0 : nearest ? rounding_cross : mul_rn(rounding_cross, 2.0)};
}
// The cross term k / 4 in units of u: k 2^51 (exact: k < 2^53).
OZGEMM_HD double oz2_rounding_cross(int64_t k) { return mul_rn(int64_to_double_rn(k), 0x1p51); }
OZGEMM_HD double oz2_inverse(int64_t P) { return P > 0 ? rcp_rn(int64_to_double_rn(P)) : 0.0; }

// R2(N) - 2.03 of one entry, in the form the pass over entries evaluates (accuracy.cu's
// oz2_bound_kernel; also the host reference's, through oz2_entry_ratio): the column side enters as
// x_col and ry_col = recon_abs_u y_col (oz2_recon_y). Every product of a power of two here is exact
// (the powers, the U and recon_abs_u all lie where their products stay normal: Oz2Side), so the
// two FMAs round exactly where the written-out sum
//   t = u_col x_row + u_row x_col + recon_abs_u (y_row y_col),  two roundings, left to right,
// rounds, and the result is that sum's excess (1 + 2^-40) t / P, bit for bit
// (tests/test_accuracy.cpp checks it against the written-out form). Positive for every entry.
OZGEMM_HD double oz2_entry_excess(double inv_P, double u_row, double u_col, double x_row, double y_row, double x_col,
                                  double ry_col) {
  double t = fma_rn(u_col, x_row, mul_rn(u_row, x_col));
  t = fma_rn(y_row, ry_col, t);
  return mul_rn(mul_rn(t, 1.0000000000009095), inv_P);  // (1 + 2^-40)
}
// (recon_abs_u + col.recon_add) y_col; recon_add = 0 (the real sides) leaves recon_abs_u's bits.
OZGEMM_HD double oz2_recon_y(double recon_abs_u, const Oz2Side& col) {
  return mul_rn(add_rn(recon_abs_u, col.recon_add), col.y);
}

// ---- The finer lower bound of |A||B| (docs/numerics.md, "The finer lower bound") ----
// The magnitude digits at 14 bits: m14(x) = floor(|x'| 2^7) = 2^7 mag + low, mag = floor(|x'|) the
// magnitude digit, low in [0, 127] (magnitude_low_digit). Every term m14(a) m14(b) <= 2^14 |a'||b'|, so
//   P14_rc = sum_l m14(a_rl) m14(b_lc) = 2^14 P + 2^7 X + Y <= 2^14 (|A||B|)'_rc,
//   X = sum_l mag(a) low(b) + low(a) mag(b)  (one INT8 product of depth 2k),  Y = sum_l low(a) low(b),
// exact integers (order-free). P14 >= 2^14 P, so R2 with P14 never exceeds R2 with P (up to the last
// rounding); it is finite where P is 0 but some pair of elements is within 2^-14 of its row's and
// column's maxima. int64 holds P14 for k < 2^35 (P14 < 2^28 k).
constexpr int kMagLowBits = 7;
OZGEMM_HD int32_t magnitude_low_digit(double x, int32_t shift) {
  return static_cast<int32_t>(scaled_floor(x, shift + kMagLowBits) & ((int64_t(1) << kMagLowBits) - 1));
}
OZGEMM_HD int64_t oz2_fine_lower_bound(int64_t P, int64_t X, int64_t Y) {
  return P * (int64_t(1) << (2 * kMagLowBits)) + X * (int64_t(1) << kMagLowBits) + Y;
}
// 1 / (P14 2^-14) rounded (0 for P14 = 0): the inv_P that R2 takes with the finer lower bound. The
// conversion of P14 (exact below 2^53) and 1/P14 round once each, covered by R2's (1 + 2^-40); the
// scaling by 2^14 is exact, so P14 = 2^14 P (X = Y = 0) gives oz2_inverse(P)'s bits.
OZGEMM_HD double oz2_inverse_fine(int64_t P14) {
  return P14 > 0 ? mul_rn(rcp_rn(int64_to_double_rn(P14)), pow2_normal(2 * kMagLowBits)) : 0.0;
}

// R2(N) of one entry (above) from its parts (U as int64_to_double_rn); +inf when no guarantee is
// possible (P = 0, or a result outside the normal range). 2.03 + excess: adding 2.03 is monotone, so
// the maximum over entries may add it once, to the largest excess.
OZGEMM_HD double oz2_entry_ratio(double inv_P, double u_row, double u_col, const Oz2Side& row, const Oz2Side& col,
                                 int32_t sigma_sum, double recon_abs_u) {
  if (inv_P == 0.0 || !oz2_reconstruction_normal(int64_t(sigma_sum) - 2 + row.d + col.d))
    return double_of(0x7ff0000000000000ull);
  return add_rn(2.03, oz2_entry_excess(inv_P, u_row, u_col, row.x, row.y, col.x, oz2_recon_y(recon_abs_u, col)));
}

}  // namespace numerics
}  // namespace ozgemm
