// ozgemm/numerics/ozaki2.hpp — the shared host/device numerics of the Ozaki scheme II (integer CRT;
// Ozaki, Uchino, Imamura, arXiv 2504.08009). Used by the GPU kernels (kernels/dgemm/ozaki2.cu) and
// the host reference (src/reference/ozaki2_reference.cpp), so both compute the same bits.
//
// The scheme, for N moduli p_0 .. p_{N-1} (pairwise coprime, <= 256), P = prod p_i:
//   1. Scaling. Row r of op(A) gets the power of two 2^s_r, column c of op(B) 2^t_c, and
//      A'_rl = rnd(a_rl 2^s_r), B'_lc = rnd(b_lc 2^t_c), rounded to nearest with ties away from zero
//      where the row's extra shift d >= 0, truncated where d < 0 (oz2_rounds_to_nearest), are integers
//      (below 2^(4N - 1): int64 up
//      to 16 moduli, past int64 from 17 on, where they exist only as x 2^e, oz2_wide) with
//      |A'||B'| <= Q = floor((P - 1) / 4) entrywise (one spare bit below P/2, so the CRT's rounded
//      quotient below can never pick the wrong multiple of P). The rule (integer Cauchy-Schwarz,
//      order-free): s0 = shift_from_max(row max) - 1, so |a| 2^s0 <= 63.5; abar_l = ceil(|a_l| 2^s0) in
//      [0, 64]; S = sum abar_l^2 (exact int64); s = s0 + d with d the largest integer such that
//      S 4^d <= Q (limits table, computed exactly on the host). Then ||A'_r||_2 <= 2^d sqrt(S) and
//      |A'||B'|_rc <= ||A'_r|| ||B'_c|| <= sqrt(Q 4^-d_r 4^d_r ... ) <= Q.
//   2. Residues. U^A_i = sym_p_i(A') in [-(p-1)/2, (p-1)/2] (p = 256: [-128, 127]) as int8; likewise B.
//   3. Products. One exact INT8 GEMM per modulus (k in chunks within int32), each sum reduced to
//      sym_p_i: U_i = sym_p_i((A'B')_rc).
//   4. CRT reconstruction in FP64, fixed order (fma explicit, the same IEEE operation on host and device):
//        x = sum_i hi_i U_i     (exact: hi_i on a grid g with sum |hi_i U_i| < 2^53 g)
//        z = sum_i lo_i U_i     (rounded, i ascending)
//        q = rint(x * inv_P)
//        y = fma(-P_lo, q, fma(-P_hi, q, x) + z)
//      with w_i = (P/p_i) ((P/p_i)^-1 mod p_i) = hi_i + lo_i (+ rounding) and P = P_hi + P_lo. y is
//      A'B' to 2 ulps plus an absolute term of the constants' size (oz2_reconstruction_error). Then C = alpha * (y 2^-(s_r + t_c)) + beta * C (ozaki1.hpp's
//      apply_alpha_beta order); rows or columns with Inf/NaN take Ozaki-I's special path.
// The error comes from step 1 only (the products are exact): per entry
//   |AB - 2^-(s+t) A'B'| <= (2^-s sum_l |b_l| + 2^-t sum_l |a_l|) / 2 + 2^-(s+t) k / 4, plus y's ulps,
// a truncated side (d < 0) counting its term in full and the cross term up to k / 2 (docs/numerics.md,
// "Ozaki-II"; until 2026-11-26 A' was truncated everywhere).
#pragma once

#include <cstdint>

#include "ozgemm/export.h"
#include "ozgemm/numerics/fp.hpp"
#include "ozgemm/numerics/ozaki1.hpp"
#include "ozgemm/types.hpp"

namespace ozgemm {
namespace numerics {

// The moduli in their fixed order: the greedy pairwise-coprime sequence from 256 downward.
constexpr int kModuliTable[20] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227,
                                  223, 217, 211, 199, 197, 193, 191, 181, 179, 173};
using ozgemm::kMaxModuli;
using ozgemm::kMinModuli;
// |A'| <= sqrt(Q) < sqrt(P) / 2 <= 2^(4n - 1) (every p_i <= 2^8): the bits of A' and B' at n moduli.
OZGEMM_HD constexpr int oz2_operand_bits(int n) { return 4 * n - 1; }
constexpr bool oz2_moduli_within_2_8() {
  for (int p : kModuliTable)
    if (p < 2 || p > 256) return false;
  return true;
}
static_assert(oz2_moduli_within_2_8(), "oz2_operand_bits: every p_i <= 2^8");
// Counts whose A', B' may pass int64 (n >= 17). They are never formed as integers: the kernels cut
// pieces from the significand (oz2_pieces_for_count), the host reference takes residues from it
// (oz2_scaled_residue). Up to 16 moduli the kernels keep the int64 form.
OZGEMM_HD constexpr bool oz2_wide(int n) { return oz2_operand_bits(n) > 63; }
// Depth of one exact int32 product of residues: 128^2 k <= 2^31 - 1.
constexpr int64_t kOz2ChunkK = 131056;  // multiple of 16, <= 131071
constexpr int kOz2ShiftMin = -40, kOz2ShiftMax = 80;  // the range of d in the limits table
constexpr int kOz2Limits = kOz2ShiftMax - kOz2ShiftMin + 1;  // entries of a limits table

// Everything the scheme needs for one moduli count, computed exactly on the host
// (ozaki2_constants, src/core/ozaki2_constants.cpp) and passed by value to the kernels.
struct Ozaki2Constants {
  int n = 0;
  int32_t p[kMaxModuli] = {};
  double hi[kMaxModuli] = {}, lo[kMaxModuli] = {};
  double P_hi = 0, P_lo = 0, inv_P = 0;
  double grid = 0;   // g: every hi_i is a multiple of it, every lo_i in [0, g)
  int32_t rho = 0;   // sum of the residues' largest magnitudes, floor(p_i / 2)
  // The reconstruction's absolute error term in units of u = 2^-53 (oz2_reconstruction_error):
  // 1.01 [(n + 3) 128 n g + 3 (rho + 1) |P_lo|].
  double recon_abs_u = 0;
  // limit[d - kOz2ShiftMin] = min(floor(Q / 4^d), INT64_MAX), Q = floor((P - 1) / 4).
  int64_t limit[kOz2Limits] = {};
};
// n in [kMinModuli, kMaxModuli]; computed once per n (thread-safe, cached).
OZGEMM_API const Ozaki2Constants& ozaki2_constants(int n);
// The same constants for the first n entries of any pairwise-coprime moduli table (every p_i in
// [2, 256]; the complex scheme's table, ozaki2_complex.hpp); throws std::invalid_argument otherwise.
OZGEMM_API Ozaki2Constants ozaki2_constants_of_moduli(const int* moduli, int n);

// Symmetric residue of v modulo p (2 <= p <= 256): in [-(p-1)/2, (p-1)/2] for odd p, [-128, 127]
// for p = 256. In 32-bit arithmetic (64-bit division is slow on GPUs): with v = h 2^32 + l,
// v = h (2^32 mod p) + l (mod p), every step exact.
OZGEMM_HD int32_t sym_mod(int64_t v, int32_t p) {
  const uint32_t up = static_cast<uint32_t>(p);
  const uint64_t bits = static_cast<uint64_t>(v);
  const uint32_t lo = static_cast<uint32_t>(bits), hi = static_cast<uint32_t>(bits >> 32);  // v = hi' 2^32 + lo, hi' = hi - 2^32 [v < 0]
  const uint32_t two32 = static_cast<uint32_t>((uint64_t(1) << 32) % up);
  uint32_t r = (hi % up) * two32 % up;           // hi 2^32 mod p, hi as unsigned
  r = (r + lo % up) % up;                        // + lo
  if (v < 0) r = (r + up - (two32 * two32 % up)) % up;  // hi as unsigned is hi' + 2^32: subtract 2^64 mod p
  const int32_t sr = static_cast<int32_t>(r);
  return sr > (p - 1) / 2 ? sr - p : sr;
}

// r in (-P, P) with r = v (mod P) mapped into sym_mod's range.
template <int P>
OZGEMM_HD int32_t sym_range(int32_t r) {
  if (r > (P - 1) / 2) return r - P;
  if (r < -(P / 2)) return r + P;
  return r;
}

// sym_mod(v, P) for an int32 v (the products' int32 sums), P a compile-time constant: one division.
template <int P>
OZGEMM_HD int32_t sym_mod_i32(int32_t v) {
  return sym_range<P>(v % P);  // C++ truncating %: in (-P, P)
}

// The residues of A' in FP32 arithmetic (the kernels' form; the same values as sym_mod, checked in
// tests/cpu/test_ozaki2). FP32 instructions issue at twice the rate of the integer ones on the GPUs
// we target, and the residue pass was issue-bound on its integer divisions (H100, ncu).
// 1. Once per value a, |a| < 2^(14 W): a = sum_j f_j 2^(14 j), j < W, with |f_j| < 2^14 integers of
//    a's sign, exact in FP32 (oz2_pieces); a's low byte is its residue modulo 256.
// 2. Per odd modulus P: t = f_0 + sum_{j>=1} f_j c_j with c_j = sym_mod(2^(14 j), P), |c_j| <= 127, so
//    |t| <= sum_j max|f_j| |c_j| (oz2_piece_sum_bound: the top piece holds only A''s top bits) < 2^23
//    for every modulus of the table and every count up to kMaxModuli (static_assert below; the
//    generic (2^14 - 1)(1 + 127 (W - 1)) is below 2^23 only for W <= 5), every step exact (integers
//    below 2^24); t = a (mod P). Then q = rint(t fl(1/P)) is rint(t / P): the two differ by at most
//    |t| 2^-24 / P < 1 / (2P), and t / P lies at least 1 / (2P) from a half-integer (P odd), so the
//    rounding cannot cross one. r = t - q P is then sym_mod(a, P), in [-(P-1)/2, (P-1)/2].
//    rint by the magic constant 1.5 * 2^23: fma(t, 1/P, M) rounds t/P to an integer (|t/P| < 2^22).
//    The result is r + M, exact, whose low byte is r in two's complement (oz2_residue_biased).
constexpr int kOz2PieceBits = 14;
// Pieces for n moduli: |A'| < 2^oz2_operand_bits(n).
OZGEMM_HD constexpr int oz2_pieces(int n) { return (oz2_operand_bits(n) + kOz2PieceBits - 1) / kOz2PieceBits; }
constexpr int kOz2MaxPieces = 6;  // 84 bits: every count up to 20
static_assert(oz2_pieces(kMaxModuli) <= kOz2MaxPieces, "pieces of A' at the largest count");
constexpr float kOz2Magic = 12582912.0f;  // 1.5 * 2^23: x + M for an integer |x| < 2^22 is exact

template <int W>
struct Oz2Pieces {
  float f[W];
  uint32_t low_byte;  // a mod 2^8 (two's complement): the residue modulo 256
};
// sign u for a 14-bit piece u: 2^23 + u as an FP32 (u in the low mantissa bits), then
// sign (2^23 + u) - sign 2^23, exact.
OZGEMM_HD float oz2_piece_float(uint32_t u, float sign) {
  return fma_rn(float_of(0x4B000000u | u), sign, sign * -8388608.0f);
}
// The pieces of a = (neg ? -1 : 1) mant 2^p, |a| < 2^(14 W): piece j is bits [14 j, 14 j + 14) of
// mant 2^p, taken from mant by one shift (p = 0: of mant itself); low_byte is a mod 2^8.
template <int W>
OZGEMM_HD Oz2Pieces<W> oz2_pieces_shifted(uint64_t mant, int p, bool neg) {
  static_assert(W >= 1 && W <= kOz2MaxPieces, "14-bit pieces of a value below 2^84");
  const float sign = neg ? -1.0f : 1.0f;
  Oz2Pieces<W> out;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int j = 0; j < W; ++j) {
    const int sh = kOz2PieceBits * j - p;  // piece j = bits [sh, sh + 14) of mant
    const uint64_t window = sh >= 64 ? 0 : sh >= 0 ? mant >> sh : sh > -64 ? mant << -sh : 0;
    out.f[j] = oz2_piece_float(static_cast<uint32_t>(window) & ((1u << kOz2PieceBits) - 1), sign);
  }
  // a's low 64 bits (mant 2^p mod 2^64), negated for negative a: the low byte is a mod 2^8.
  const uint64_t low = p >= 64 ? 0 : p >= 0 ? mant << p : p > -64 ? mant >> -p : 0;
  out.low_byte = static_cast<uint32_t>(neg ? uint64_t(0) - low : low) & 0xffu;
  return out;
}
// The pieces of a = (neg ? -mag : mag); precondition mag < 2^(14 W).
template <int W>
OZGEMM_HD Oz2Pieces<W> oz2_pieces_from(uint64_t mag, bool neg) {
  static_assert(W >= 1 && W <= 5, "14-bit pieces of a value below 2^64 (wider: oz2_pieces_shifted)");
  return oz2_pieces_shifted<W>(mag, 0, neg);
}
// Precondition |a| < 2^(14 W) (a != INT64_MIN).
template <int W>
OZGEMM_HD Oz2Pieces<W> oz2_pieces_of(int64_t a) {
  return oz2_pieces_from<W>(a < 0 ? uint64_t(0) - static_cast<uint64_t>(a) : static_cast<uint64_t>(a), a < 0);
}
// Step 1's rounding of a row at extra shift d: to nearest where d >= 0, else truncation. The range
// rests on |A'| <= 2^d ceil(|a| 2^s0) (S sums those ceilings squared): for d >= 0 the right side is an
// integer >= |a| 2^s, so the nearest integer stays under it; for d < 0 it may not be one (|a| 2^s = 1/2
// rounds to 1 > 2^-6 32), and the truncation, never above |a| 2^s, keeps the range. d < 0 means S > Q:
// few moduli and a deep k (FIXED mode; FP64 mode never certifies such a count).
OZGEMM_HD constexpr bool oz2_rounds_to_nearest(int d) { return d >= 0; }
// The pieces of a = x 2^e as an integer (nearest, ties away from zero, or truncated:
// scaled_significand_integer), for finite x and |a| < 2^(14 N's pieces): the kernels' A' (step 1;
// the complex scheme's parts too). Up to 16 moduli a < 2^63 fits the int64 form's constant shifts;
// past it the pieces come from the significand by one shift each.
template <int N>
OZGEMM_HD Oz2Pieces<oz2_pieces(N)> oz2_pieces_for_count(double x, int e, bool nearest) {
  const ScaledSignificand s = scaled_significand_integer(x, e, nearest);
  const bool neg = (bits_of(x) >> 63) != 0;
  if constexpr (oz2_wide(N)) {
    return oz2_pieces_shifted<oz2_pieces(N)>(s.mant, s.p, neg);
  } else {
    return oz2_pieces_from<oz2_pieces(N)>(s.mant == 0 ? 0 : s.mant << s.p, neg);
  }
}

// c_j = sym_mod(2^(14 j), P) for an odd P.
// One closed expression (no loop): the kernels' unrolled loops fold it to a constant, where a loop
// here was left as run-time divisions (PTX, 2026-11-25: slicing 1.27 -> 5.3 ms at 8192^3). 2^(14 j)
// fits 64 bits for j <= 4; for j = 5, 2^70 = 2^56 2^14.
OZGEMM_HD constexpr int oz2_piece_weight(int P, int j) {
  const int r = static_cast<int>(
      j <= 4 ? (uint64_t(1) << (kOz2PieceBits * j)) % uint64_t(P)
             : (((uint64_t(1) << (4 * kOz2PieceBits)) % uint64_t(P)) << (kOz2PieceBits * (j - 4))) % uint64_t(P));
  return r > (P - 1) / 2 ? r - P : r;
}
static_assert(kOz2MaxPieces <= 6, "oz2_piece_weight's second form: j - 4 <= 1");
// The largest |t| = |sum_j f_j c_j| (c_0 = 1) for an odd P at n moduli: max|f_j| = 2^14 - 1 except the
// top piece, which holds the oz2_operand_bits(n) - 14 (W - 1) top bits of A'.
constexpr int64_t oz2_piece_sum_bound(int P, int n) {
  int64_t t = 0;
  for (int j = 0; j < oz2_pieces(n); ++j) {
    const int bits = oz2_operand_bits(n) - kOz2PieceBits * j;
    const int64_t f_max = (int64_t(1) << (bits < kOz2PieceBits ? bits : kOz2PieceBits)) - 1;
    const int c = j == 0 ? 1 : oz2_piece_weight(P, j);
    t += f_max * (c < 0 ? -c : c);
  }
  return t;
}
constexpr bool oz2_piece_sums_below_2_23() {
  for (int n = kMinModuli; n <= kMaxModuli; ++n)
    for (int i = 0; i < n; ++i)
      if (kModuliTable[i] % 2 == 1 && oz2_piece_sum_bound(kModuliTable[i], n) >= (int64_t(1) << 23)) return false;
  return true;
}
static_assert(kMaxModuli <= 20, "kModuliTable holds 20 moduli");
static_assert(oz2_piece_sums_below_2_23(), "step 2's premise |t| < 2^23 at every count and modulus");

// r + M with r = t - p rint(t inv_p), t an integer with |t| < 2^23 held in FP32, inv_p = fl(1 / p):
// for odd p, r = sym_mod(t, p) (see above); for p = 256 (inv_p exact), r = t (mod 256) with
// |r| <= 128, so the low byte of the result's bits is sym_mod(t, 256) as int8.
OZGEMM_HD float oz2_sym_mod_biased(float t, float p, float inv_p) {
  const float q = add_rn(fma_rn(t, inv_p, kOz2Magic), -kOz2Magic);
  return add_rn(fma_rn(-q, p, t), kOz2Magic);
}
template <int P>
OZGEMM_HD float oz2_sym_mod_biased(float t) {
  static_assert(P % 2 == 1 && P < 256, "odd moduli below 2^8");
  return oz2_sym_mod_biased(t, static_cast<float>(P), 1.0f / static_cast<float>(P));
}

// The Hopper products' epilogue (kernels/dgemm/ozaki2_products_sm90.cuh): sym_mod(v, p) of an int32
// product v for a run-time modulus p (every p of kModuliTable), in FP32 instructions at full rate
// (an FP64 rint-based form needs 64-bit conversions, which issue at a quarter of the FP64 rate:
// ~10% of a tile's cycles by count; on the H100 the two forms timed alike, the products being
// power-bound; docs/performance.md, "Fourth step"). v = h 2^16 + l with h = v >> 16 in
// [-2^15, 2^15) and l in [0, 2^16), both exact in FP32 through the magic 2^23 (h through
// (v >> 16) + 2^15 = (u >> 16) ^ 0x8000 for u = v's bits); t = h c + l with c = sym_mod(2^16, p),
// |c| <= 128: |t| <= 2^15 128 + 2^16 < 2^23, every step exact, t = v (mod p); then the rounding step.
struct Oz2Modulus {
  float p = 0, inv_p = 0, c16 = 0;  // p, fl(1 / p), sym_mod(2^16, p)
};
inline Oz2Modulus oz2_modulus(int32_t p) {
  Oz2Modulus m;
  m.p = static_cast<float>(p);
  m.inv_p = 1.0f / static_cast<float>(p);
  m.c16 = static_cast<float>(sym_mod(int64_t(1) << 16, p));
  return m;
}
OZGEMM_HD int8_t oz2_sym_mod_i32(int32_t v, const Oz2Modulus& m) {
  const uint32_t u = static_cast<uint32_t>(v);
  const float lo = add_rn(float_of(0x4B000000u | (u & 0xffffu)), -8388608.0f);           // l
  const float hi = add_rn(float_of(0x4B000000u | ((u >> 16) ^ 0x8000u)), -8421376.0f);  // h: - (2^23 + 2^15)
  const float t = fma_rn(hi, m.c16, lo);
  return static_cast<int8_t>(static_cast<uint8_t>(bits_of(oz2_sym_mod_biased(t, m.p, m.inv_p)) & 0xffu));
}

// sym_mod(a, P) as r + M (low byte: r) for the value a of oz2_pieces_of(a), P odd.
template <int P, int W>
OZGEMM_HD float oz2_residue_biased(const float (&f)[W]) {
  float t = f[0];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int j = 1; j < W; ++j) t = fma_rn(f[j], static_cast<float>(oz2_piece_weight(P, j)), t);
  return oz2_sym_mod_biased<P>(t);
}
// The residue as an int32 (r = bits(r + M) - bits(M): both in [2^23, 2^24), one exponent).
OZGEMM_HD int32_t oz2_unbias(float biased) {
  return static_cast<int32_t>(bits_of(biased) - bits_of(kOz2Magic));
}

// sym_mod of (neg ? -1 : 1) mant 2^q, q >= 0: the residue of mant times that of 2^q.
inline int32_t oz2_signed_scaled_residue(uint64_t mant, int q, bool neg, int32_t p) {
  uint64_t r = mant % uint64_t(p);
  for (int i = 0; i < q; ++i) r = 2 * r % uint64_t(p);  // r < 256: no overflow
  const int64_t v = static_cast<int64_t>(r);
  return sym_mod(neg ? -v : v, p);
}
// sym_mod of x 2^e as an integer (nearest, ties away from zero, or truncated: scaled_significand_integer),
// for finite x and any magnitude: the host reference's residues (real and complex schemes).
inline int32_t oz2_scaled_residue(double x, int e, int32_t p, bool nearest) {
  const ScaledSignificand s = scaled_significand_integer(x, e, nearest);
  return oz2_signed_scaled_residue(s.mant, s.p, (bits_of(x) >> 63) != 0, p);
}

// The scaling's d for a row with integer norm S (see the top of this file): the largest d in
// [kOz2ShiftMin, kOz2ShiftMax] with S <= limit[d]; kOz2ShiftMax for S = 0. limit: a count's table
// (Ozaki2Constants::limit, kOz2Limits entries, non-increasing).
// The table is non-increasing, so "S <= limit[d]" holds on a prefix of the d range: a binary search
// (7 steps over the 121 entries) gives the same d as the linear walk from kOz2ShiftMin, which the
// residue kernels' row threads ran before each tile's barrier (~90 steps at 16-17 moduli, where ncu
// put 41% of the complex pass's stall samples; the search took it 1.83 -> 1.64 ms, H100;
// tests/cpu/test_ozaki2.cpp checks the two agree).
OZGEMM_HD int oz2_extra_shift(int64_t S, const int64_t* limit) {
  int lo = kOz2ShiftMin, hi = kOz2ShiftMax;  // the answer lies in [lo, hi]
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;  // in (lo, hi]
    if (S <= limit[mid - kOz2ShiftMin]) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}
OZGEMM_HD int oz2_extra_shift(int64_t S, const Ozaki2Constants& c) { return oz2_extra_shift(S, c.limit); }
// A row's step-1 scaling at a count, the one rule the residue kernels and the host references share:
// s = s0 + d with d = oz2_extra_shift(S) (s0 = sigma - 1, sigma = shift_from_max of the row's largest
// magnitude; S the row's norm at s0, oz2_norm_term), A' = a 2^s rounded to nearest where d >= 0 and
// truncated where d < 0 (oz2_rounds_to_nearest).
struct Oz2RowScaling {
  int32_t shift;  // s: A' = a 2^s
  bool nearest;   // A' rounded to nearest (ties away from zero), else truncated
};
OZGEMM_HD Oz2RowScaling oz2_row_scaling(int32_t s0, int64_t S, const Ozaki2Constants& c) {
  const int d = oz2_extra_shift(S, c);
  return {s0 + d, oz2_rounds_to_nearest(d)};
}

// A row's term of S: ceil(|x| 2^s0)^2 with s0 = shift_from_max(row max) - 1 (<= 64^2).
// Where |x| 2^s0 < 2^21 (always, under the row's own s0) in 32-bit steps: the norms pass and the
// FP64 decision were issue-bound on scaled_ceil's 64-bit shifts (H100, ncu); else scaled_ceil.
OZGEMM_HD int64_t oz2_norm_term(double x, int32_t s0) {
  const uint64_t u = bits_of(x);
  const uint32_t hi = static_cast<uint32_t>(u >> 32), lo = static_cast<uint32_t>(u);
  const int biased = static_cast<int>((hi >> 20) & 0x7ff);
  const int p = (biased ? biased - 1075 : -1074) + s0;  // |x| 2^s0 = mant 2^p, mant = mhi 2^32 + lo < 2^53
  if (p > -32) {
    const int64_t a = scaled_ceil(x, s0);
    return a * a;
  }
  const uint32_t mhi = (hi & 0xfffffu) | (biased ? 0x100000u : 0u);  // < 2^21
  const int sh = -p - 32;                                              // floor = mhi >> sh
  const uint32_t floor_part = sh < 21 ? mhi >> sh : 0u;
  const bool rest = lo != 0 || (sh < 21 ? (mhi & ((1u << sh) - 1u)) != 0 : mhi != 0);
  const uint32_t a = floor_part + (rest ? 1u : 0u);  // < 2^21
  return static_cast<int64_t>(uint64_t(a) * a);
}

// An int8 residue as an exact double without a 64-bit conversion instruction (those issue at a quarter
// of the FP64 rate on the GPUs we target; the int8 reconstruction was issue-bound on them, H100):
// the bits 0x43380000:(r + 2^31) are 1.5 2^52 + r + 2^31, exactly, and one subtraction leaves r.
OZGEMM_HD double oz2_residue_double(int32_t r) {
  const uint64_t bits = (uint64_t(0x43380000u) << 32) | (static_cast<uint32_t>(r) ^ 0x80000000u);
  return add_rn(double_of(bits), -6755401588539392.0);  // -(1.5 2^52 + 2^31)
}

// The CRT reconstruction of one entry from its N residues, in the fixed order above.
// u(i) for i < n = c.n; the kernels pass n as a compile-time constant (after inlining the loop unrolls).
template <class ResidueAt>
OZGEMM_HD double oz2_reconstruct_n(const Ozaki2Constants& c, int n, ResidueAt u) {
  double x = 0.0, z = 0.0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int i = 0; i < n; ++i) {
    const double ui = static_cast<double>(u(i));  // u may return the residue as an int or as its exact double
    x = fma_rn(c.hi[i], ui, x);  // exact (the grid g): the same value as add_rn(x, mul_rn(hi, ui)) in one instruction
    z = add_rn(z, mul_rn(c.lo[i], ui));
  }
  const double q = rint_rn(mul_rn(x, c.inv_P));
  return fma_rn(-c.P_lo, q, add_rn(fma_rn(-c.P_hi, q, x), z));
}
template <class ResidueAt>
OZGEMM_HD double oz2_reconstruct(const Ozaki2Constants& c, ResidueAt u) {
  return oz2_reconstruct_n(c, c.n, u);
}

// A bound of |y - A'B'| for the reconstruction above (u = 2^-53; |U_i| <= 128, |lo_i| < g,
// |q| <= rho + 1): the rounded z sum and the lo_i's own rounding, the rounded P_lo q, and the two
// final roundings: 1.01 {2u |A'B'| + u [(n + 3) 128 n g + 3 (rho + 1) |P_lo|]} (rounded up
// generously; the second term is c.recon_abs_u).
inline double oz2_reconstruction_error(const Ozaki2Constants& c, double abs_ab) {
  const double u = 1.1102230246251565e-16;
  return u * (2.02 * abs_ab + c.recon_abs_u);
}

}  // namespace numerics
}  // namespace ozgemm
