// ozgemm/numerics/ozaki2_complex.hpp — the shared host/device numerics of the complex Ozaki-II scheme
// (ZGEMM emulation), the "2M" form: two real INT8 products per modulus. Used by the host reference
// (src/reference/ozaki2_complex_reference.cpp) and the GPU kernels (kernels/dgemm/ozaki2_complex.cu),
// so both compute the same bits. The real scheme (ozaki2.hpp) is the model; docs/numerics.md, "Complex products (ZGEMM)",
// has the proofs and the numbers behind the choices.
//
// The scheme, for N moduli p_0 .. p_{N-1} of kComplexModuliTable (pairwise coprime, odd, every prime
// factor 1 mod 4, so Z_p holds a j with j^2 = -1), P = prod p_i, Q = floor((P - 1) / 4):
//   1. Scaling (order-free integers). Row r of op(A) (complex, k elements a_l = ar_l + i ai_l) gets
//      2^s_r with s_r = sigma_r - 1 + d_r: sigma_r = shift_from_max(max_l max(|ar_l|, |ai_l|)) over the
//      finite parts, S_r = sum_l oz2_norm_term(ar_l, sigma_r - 1) + oz2_norm_term(ai_l, sigma_r - 1)
//      (the real scheme's S of the 2k parts), d_r = oz2_extra_shift(S_r) in the complex constants'
//      limits. A'r = rnd(ar 2^s), A'i = rnd(ai 2^s), rnd to the nearest integer, ties away from zero
//      (scaled_significand_integer; truncated where d < 0: oz2_rounds_to_nearest), so S still bounds
//      the norm; half the truncation's error, which the bound below counts. Then ||A'_r||_2^2 = sum (A'r^2 + A'i^2) <= Q,
//      likewise for column c of op(B), and entrywise (Cauchy-Schwarz twice)
//        |Re(A'B')|, |Im(A'B')| <= sum_l |A'_l||B'_l| <= ||A'_r|| ||B'_c|| <= Q.
//   2. Residues. ur = sym_p(A'r), ui = sym_p(A'i); op C (conjugate transpose) negates ui. The 2M
//      transform (oz2c_forward): plane 0 holds x0 = sym_p(ur + j ui), plane 1 x1 = sym_p(ur - j ui),
//      int8 in [-(p-1)/2, (p-1)/2] (|.| <= 120). Conjugation swaps the two planes (x0 <-> x1).
//   3. Products. Two exact INT8 GEMMs per modulus (k in chunks of kOz2ChunkK: 120^2 k < 2^31):
//        U1 = sym_p(sum_l x0(a_l) x0(b_l)),   U2 = sym_p(sum_l x1(a_l) x1(b_l)).
//      x -> (x0, x1) is a ring isomorphism Z_p[i] -> Z_p x Z_p, so U1 and U2 are the images of the
//      entry's Gaussian integer A'B' mod p.
//   4. Inverse transform (oz2c_inverse): Re_i = sym_p((U1 + U2) inv2), Im_i = sym_p((U1 - U2) inv2j)
//      with inv2 = 2^-1, inv2j = (2j)^-1 mod p; then the real CRT reconstruction (oz2_reconstruct_n,
//      the complex set's constants) for Re and for Im, each scaled by 2^-(s_r + t_c) (scale_pow2), then
//      C = alpha acc + beta C in oz2c_apply_alpha_beta's order. Rows or columns with Inf/NaN take the
//      special path (oz2c_special_accumulate).
// Integer steps have unique results (the symmetric residue of an integer), so the GPU may compute them
// any exact way; the FP64 steps are fixed here operation by operation.
#pragma once

#include <climits>
#include <cstdint>

#include "ozgemm/export.h"
#include "ozgemm/numerics/accuracy.hpp"
#include "ozgemm/numerics/fp.hpp"
#include "ozgemm/numerics/ozaki2.hpp"

namespace ozgemm {
namespace numerics {

// op(X) for complex operands: X, X^T, or X^H (the conjugate transpose; cublasOperation_t N, T, C).
enum class ComplexOp : char { N = 'N', T = 'T', C = 'C' };
OZGEMM_HD constexpr bool oz2c_transposes(ComplexOp op) { return op != ComplexOp::N; }
OZGEMM_HD constexpr bool oz2c_conjugates(ComplexOp op) { return op == ComplexOp::C; }

// A complex FP64 value laid out like cuDoubleComplex and std::complex<double> (re, then im).
struct ComplexF64 {
  double re, im;
};

// ---- The moduli ----
// The greedy pairwise-coprime sequence, from 256 downward, of the numbers <= 256 whose prime factors
// are all 1 mod 4 (221 = 13 17, 205 = 5 41; the others prime). Greedy is the largest product at every
// count: the only conflicts are the multiples of 5 (205, 185, 145, 125) and of 13 (221, 169), and the
// largest of each is taken. 22 exist (37 and 29 follow); the scheme uses up to kMaxModuli.
constexpr int kComplexModuliTable[20] = {241, 233, 229, 221, 205, 197, 193, 181, 173, 157,
                                         149, 137, 113, 109, 101, 97,  89,  73,  61,  53};
// j_i: the smallest positive square root of -1 modulo p_i (for 221 = 13 17 one of four).
constexpr int kComplexModuliJ[20] = {64, 89, 107, 21, 32, 14, 81, 19, 80, 28, 44, 37, 15, 33, 10, 22, 34, 27, 11, 23};
static_assert(kMaxModuli <= 20, "kComplexModuliTable holds 20 moduli");

constexpr int oz2c_gcd(int a, int b) { return b == 0 ? a : oz2c_gcd(b, a % b); }
constexpr bool oz2c_moduli_valid() {
  for (int i = 0; i < 20; ++i) {
    const int p = kComplexModuliTable[i], j = kComplexModuliJ[i];
    if (p % 2 == 0 || p > 256 || j <= 0 || j > (p - 1) / 2 || (j * j + 1) % p != 0) return false;
    for (int l = 1; l < j; ++l)
      if ((l * l + 1) % p == 0) return false;  // j is the smallest root
    for (int t = 0; t < i; ++t)
      if (oz2c_gcd(p, kComplexModuliTable[t]) != 1 || kComplexModuliTable[t] <= p) return false;
  }
  return true;
}
static_assert(oz2c_moduli_valid(), "odd, descending, pairwise coprime moduli <= 256 with j^2 = -1 (mod p)");
// The GPU residue step of the real scheme (FP32 pieces, oz2_residue_biased) needs |t| < 2^23 for every
// odd modulus at every count: the complex moduli are odd and below 256, so it applies to them as well.
constexpr bool oz2c_piece_sums_below_2_23() {
  for (int n = kMinModuli; n <= kMaxModuli; ++n)
    for (int i = 0; i < n; ++i)
      if (oz2_piece_sum_bound(kComplexModuliTable[i], n) >= (int64_t(1) << 23)) return false;
  return true;
}
static_assert(oz2c_piece_sums_below_2_23(), "the FP32 residue step's premise for the complex moduli");
// Every transformed residue has |x| <= 120 <= 128: kOz2ChunkK (sized for 128^2 k < 2^31) keeps the
// int32 sums of either plane's products exact.
static_assert((kComplexModuliTable[0] - 1) / 2 <= 128, "the products' int32 chunk");

// The complex set's CRT constants and limits (the real structure, Ozaki2Constants, for
// kComplexModuliTable): n in [kMinModuli, kMaxModuli], computed once (thread-safe, cached;
// src/core/ozaki2_constants.cpp).
OZGEMM_API const Ozaki2Constants& ozaki2_complex_constants(int n);

// Per-modulus constants of the transform, symmetric representatives: j, inv2 = 2^-1 = (p + 1) / 2 - p,
// inv2j = (2j)^-1 = -j 2^-1 (j^-1 = -j). Host-side (the table is host data): kernels take them by value.
struct Oz2cModulus {
  int32_t p, j, inv2, inv2j;
};
constexpr Oz2cModulus oz2c_modulus(int i) {
  const int32_t p = kComplexModuliTable[i], j = kComplexModuliJ[i], inv2 = (p + 1) / 2 - p;
  const int32_t t = (-j * inv2) % p;  // in (-p, p)
  const int32_t inv2j = t > (p - 1) / 2 ? t - p : (t < -(p - 1) / 2 ? t + p : t);
  return Oz2cModulus{p, j, inv2, inv2j};
}

// ---- The transform ----
// The symmetric residue of an int32 v modulo an odd p, one 32-bit remainder (the transform's values
// lie far inside int32: sym_mod's 64-bit split is not needed).
OZGEMM_HD int32_t oz2c_sym_mod(int32_t v, int32_t p) {
  const int32_t r = v % p, h = (p - 1) / 2;  // C++ truncating %: in (-p, p)
  return r > h ? r - p : (r < -h ? r + p : r);
}
// The two planes' residues of x = ur + i ui (ur, ui symmetric residues, |.| <= 128): |ur +- j ui| <=
// 128 + 120 128 < 2^31.
struct Oz2cPlanes {
  int8_t x0, x1;
};
OZGEMM_HD Oz2cPlanes oz2c_forward(int32_t ur, int32_t ui, const Oz2cModulus& m) {
  return Oz2cPlanes{static_cast<int8_t>(oz2c_sym_mod(ur + m.j * ui, m.p)),
                    static_cast<int8_t>(oz2c_sym_mod(ur - m.j * ui, m.p))};
}
// Re and Im residues from the planes' products U1, U2 (symmetric residues): |U1 +- U2| |inv| <= 240 120.
struct Oz2cResidue {
  int32_t re, im;
};
OZGEMM_HD Oz2cResidue oz2c_inverse(int32_t u1, int32_t u2, const Oz2cModulus& m) {
  return Oz2cResidue{oz2c_sym_mod((u1 + u2) * m.inv2, m.p), oz2c_sym_mod((u1 - u2) * m.inv2j, m.p)};
}

// ---- The kernels' FP32 forms of the transform (the same integers; tests/cpu/test_ozaki2_complex) ----
// FP32 instructions issue at twice the integer ones' rate, and the 32-bit remainders by constants
// (several IMAD/SHF each) left the residue and reconstruction passes issue-bound (H100, ncu). Every
// step below is exact (integers below 2^24 in FP32); the roundings to integers use kOz2Magic as
// oz2_sym_mod_biased does, whose proof (numerics/ozaki2.hpp) needs |t| < 2^23 and P odd.
// t - P rint(t / P) = sym_P(t) for an integer |t| < 2^23 held in FP32 (unbiased: no + M).
template <int P>
OZGEMM_HD float oz2c_sym_mod_float(float t) {
  const float q = add_rn(fma_rn(t, 1.0f / static_cast<float>(P), kOz2Magic), -kOz2Magic);
  return fma_rn(-q, static_cast<float>(P), t);
}
// Forward, modulus I, from the FP32 pieces of A'r and A'i (oz2_pieces_for_count): t_re, t_im as
// oz2_residue_biased sums them (|t| <= oz2_piece_sum_bound(P, n), t = A' mod P), ui = sym_P(t_im),
// a = t_re +- j ui (exact: |a| < 2^23, oz2c_forward_sums_below_2_23), x = oz2_sym_mod_biased(a): the
// planes of oz2c_forward(sym_P(A'r), sym_P(A'i)) as r + M (low byte: the int8; oz2_unbias: the int32).
struct Oz2cPlanesBiased {
  float x0, x1;
};
template <int I, int W>
OZGEMM_HD Oz2cPlanesBiased oz2c_forward_biased(const float (&re)[W], const float (&im)[W]) {
  constexpr int P = kComplexModuliTable[I];
  constexpr float J = static_cast<float>(kComplexModuliJ[I]);
  float t_re = re[0], t_im = im[0];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int l = 1; l < W; ++l) {
    const float c = static_cast<float>(oz2_piece_weight(P, l));
    t_re = fma_rn(re[l], c, t_re);
    t_im = fma_rn(im[l], c, t_im);
  }
  const float ui = oz2c_sym_mod_float<P>(t_im);
  return Oz2cPlanesBiased{oz2_sym_mod_biased<P>(fma_rn(J, ui, t_re)), oz2_sym_mod_biased<P>(fma_rn(-J, ui, t_re))};
}
// The premise of oz2c_forward_biased: |t_re| + j (p - 1) / 2 < 2^23 at every count and modulus.
constexpr bool oz2c_forward_sums_below_2_23() {
  for (int n = kMinModuli; n <= kMaxModuli; ++n)
    for (int i = 0; i < n; ++i) {
      const int p = kComplexModuliTable[i];
      if (oz2_piece_sum_bound(p, n) + int64_t(kComplexModuliJ[i]) * ((p - 1) / 2) >= (int64_t(1) << 23)) return false;
    }
  return true;
}
static_assert(oz2c_forward_sums_below_2_23(), "oz2c_forward_biased's exact FP32 sums");

// Inverse, modulus I, from the planes' residues as biased floats f = u + kOz2cByteBias (u in
// [-128, 127]; the kernels build them from the int8 bytes by one byte permute, u + 128 in the low
// byte of 2^23's bits): s = u1 + u2 = f1 + (f2 - 2 kOz2cByteBias) and d = u1 - u2 = f1 - f2, exact;
// then re = sym_P(s inv2), im = sym_P(d inv2j) as r + M: t + M = fma(s, inv2, M) exact (|t| <= 240
// 120 < 2^22), q = rint(s fl(inv2 / P)) = rint(t / P) (|s| |fl(c) - c| <= 240 2^-26 < 1 / (2P), and
// t / P is at least 1 / (2P) from a half-integer, P odd), r + M = fma(-q, P, t + M) exact.
constexpr float kOz2cByteBias = 8388736.0f;  // 2^23 + 128: the float whose bits are 0x4B000080
struct Oz2cResidueBiased {
  float re, im;
};
// sym_P(s inv) + M; inv_over_p = fl(inv / P).
OZGEMM_HD float oz2c_scaled_sym_mod_biased(float s, float inv, float p, float inv_over_p) {
  const float q = add_rn(fma_rn(s, inv_over_p, kOz2Magic), -kOz2Magic);
  return fma_rn(-q, p, fma_rn(s, inv, kOz2Magic));
}
template <int I>
OZGEMM_HD Oz2cResidueBiased oz2c_inverse_biased(float f1, float f2) {
  constexpr Oz2cModulus md = oz2c_modulus(I);
  constexpr float p = static_cast<float>(md.p), inv2 = static_cast<float>(md.inv2), inv2j = static_cast<float>(md.inv2j);
  constexpr float inv2_over_p = inv2 / p, inv2j_over_p = inv2j / p;
  const float s = add_rn(f1, add_rn(f2, -2.0f * kOz2cByteBias)), d = add_rn(f1, -f2);
  return Oz2cResidueBiased{oz2c_scaled_sym_mod_biased(s, inv2, p, inv2_over_p),
                           oz2c_scaled_sym_mod_biased(d, inv2j, p, inv2j_over_p)};
}
// The residue r of a biased float r + M (|r| < 2^22) as an exact double without a conversion
// instruction (oz2_residue_double's reason): the bits 0x43380000:bits(r + M) are 1.5 2^52 +
// bits(M) + r, and one subtraction leaves r.
OZGEMM_HD double oz2c_biased_double(float biased) {
  const uint64_t bits = (uint64_t(0x43380000u) << 32) | bits_of(biased);
  return add_rn(double_of(bits), -6755400703541248.0);  // -(1.5 2^52 + 0x4B400000), 0x4B400000 = bits(M)
}

// ---- The scaling norm S in one read of the operand (the statistics kernel's form) ----
// S_r = sum over the row's finite parts of ceil(|x| 2^s0)^2, s0 = shift_from_max(row max) - 1, needs
// the row's maximum first. Exactly from one read instead: a group of parts (the values a thread
// holds at once) with non-zero maximum takes its own g = shift_from_max(group max) - 1 >= s0 (the
// shift never increases with the maximum) and digits a = ceil(|x| 2^g) <= 64; since
// ceil(ceil(y) / 2^d) = ceil(y / 2^d), the row's digit of x is ceil(a / 2^(g - s0)). So a state
// keeps, for its smallest g, T[e] = sum ceil(a / 2^e)^2, e < kOz2cNormDepth, and ceil(a / 2^e) =
// [a > 0] for every e >= 6 (a <= 64), so T[6] serves all larger e. Merging two states is exact and
// order-free (integer sums), and S_r = T[min(g - s0, 6)].
constexpr int kOz2cNormDepth = 7;
struct Oz2cNormState {
  int32_t g = INT32_MAX;  // INT32_MAX: no non-zero part yet (T all 0)
  uint64_t T[kOz2cNormDepth] = {};
};
// A part's terms under the state's g: a = ceil(|x| 2^g) in [0, 64], T[e] += ceil(a / 2^e)^2.
OZGEMM_HD void oz2c_norm_add(Oz2cNormState& st, double x) {
  uint32_t a = static_cast<uint32_t>(scaled_ceil(x, st.g));
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int e = 0; e < kOz2cNormDepth; ++e) {
    st.T[e] += uint64_t(a) * a;
    a = (a + 1) >> 1;  // ceil(a / 2^(e + 1)) from ceil(a / 2^e)
  }
}
// T re-expressed for g + d (d >= 0): T[e] becomes T[min(e + d, 6)].
OZGEMM_HD void oz2c_norm_coarsen(uint64_t (&T)[kOz2cNormDepth], int64_t d) {
  for (int64_t i = 0; i < d && i < kOz2cNormDepth - 1; ++i) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int e = 0; e + 1 < kOz2cNormDepth; ++e) T[e] = T[e + 1];
  }
}
// into += other (either may be empty).
OZGEMM_HD void oz2c_norm_merge(Oz2cNormState& into, Oz2cNormState other) {
  if (other.g == INT32_MAX) return;
  if (into.g == INT32_MAX) {
    into = other;
    return;
  }
  if (other.g < into.g) {
    oz2c_norm_coarsen(into.T, int64_t(into.g) - other.g);
    into.g = other.g;
  } else {
    oz2c_norm_coarsen(other.T, int64_t(other.g) - into.g);
  }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int e = 0; e < kOz2cNormDepth; ++e) into.T[e] += other.T[e];
}
// S of the row from its state and its shift_from_max (row_shift - 1 <= g for every group).
OZGEMM_HD int64_t oz2c_norm_of(const Oz2cNormState& st, int32_t row_shift) {
  if (st.g == INT32_MAX) return 0;
  const int64_t d = int64_t(st.g) - (int64_t(row_shift) - 1);
  return static_cast<int64_t>(st.T[d < kOz2cNormDepth - 1 ? d : kOz2cNormDepth - 1]);
}

// ---- FP64 steps, in their fixed order (fma only where written) ----
// The complex product as cuCmul writes it: re = ar br - ai bi, im = ar bi + ai br, each product rounded,
// then one rounded sum (no FMA). Used for alpha, beta and the special path.
OZGEMM_HD ComplexF64 oz2c_mul(ComplexF64 a, ComplexF64 b) {
  return ComplexF64{add_rn(mul_rn(a.re, b.re), -mul_rn(a.im, b.im)), add_rn(mul_rn(a.re, b.im), mul_rn(a.im, b.re))};
}
OZGEMM_HD bool oz2c_is_finite(ComplexF64 a) { return is_finite(a.re) && is_finite(a.im); }
OZGEMM_HD bool oz2c_is_zero(ComplexF64 a) { return a.re == 0.0 && a.im == 0.0; }
OZGEMM_HD bool oz2c_is_one(ComplexF64 a) { return a.re == 1.0 && a.im == 0.0; }
// The element of op(X) as the products see it: conjugated for op C.
OZGEMM_HD ComplexF64 oz2c_op_value(ComplexF64 x, ComplexOp op) {
  return oz2c_conjugates(op) ? ComplexF64{x.re, -x.im} : x;
}

// An entry from its reconstructed parts: y 2^-(s_r + t_c), exact while
// oz2_reconstruction_normal(s_r + t_c) holds (otherwise one correct rounding or +-Inf, as scale_pow2).
template <class ReAt, class ImAt>
OZGEMM_HD ComplexF64 oz2c_reconstruct_n(const Ozaki2Constants& c, int n, int32_t shift_sum, ReAt re, ImAt im) {
  return ComplexF64{scale_pow2(oz2_reconstruct_n(c, n, re), -shift_sum),
                    scale_pow2(oz2_reconstruct_n(c, n, im), -shift_sum)};
}

// The special path of an entry whose row of op(A) or column of op(B) holds Inf/NaN (either part): the
// IEEE sum, l ascending, of the products oz2c_mul(a_l, b_l) (a_l, b_l as op gives them) that have a
// non-finite part; acc starts at +0 + 0i. Such a product has both parts non-finite (each part of
// oz2c_mul multiplies the non-finite part by one of the other factor's parts), so the entry is
// non-finite in both parts, with the NaN/Inf classes native complex arithmetic gives (docs: "Special
// values"; finite parts are left out exactly as in the real scheme).
OZGEMM_HD ComplexF64 oz2c_special_accumulate(ComplexF64 acc, ComplexF64 a, ComplexF64 b) {
  if (oz2c_is_finite(a) && oz2c_is_finite(b)) return acc;
  const ComplexF64 t = oz2c_mul(a, b);
  return ComplexF64{add_rn(acc.re, t.re), add_rn(acc.im, t.im)};
}

// C = alpha acc + beta C_old: t = oz2c_mul(alpha, acc); with read_c (beta != 0) t + oz2c_mul(beta, C_old),
// part by part (one rounded sum each). read_c == false: C_old is not read (it may hold NaN).
OZGEMM_HD ComplexF64 oz2c_apply_alpha_beta(ComplexF64 alpha, ComplexF64 acc, ComplexF64 beta, ComplexF64 c_old,
                                           bool read_c) {
  const ComplexF64 t = oz2c_mul(alpha, acc);
  if (!read_c) return t;
  const ComplexF64 b = oz2c_mul(beta, c_old);
  return ComplexF64{add_rn(t.re, b.re), add_rn(t.im, b.im)};
}
// BLAS quick return (alpha == 0 or k == 0): C = beta C; beta == 0 gives 0 without reading C, beta == 1
// leaves C as it is.
OZGEMM_HD ComplexF64 oz2c_scale_c(ComplexF64 beta, ComplexF64 c_old) {
  if (oz2c_is_zero(beta)) return ComplexF64{0.0, 0.0};
  return oz2c_is_one(beta) ? c_old : oz2c_mul(beta, c_old);
}

// ---- The accuracy contract (docs/numerics.md, "Complex products (ZGEMM)") ----
// Statistics per row of op(A) (column of op(B)), the real ones over the 2k parts (conjugation does not
// change them): sigma = shift_from_max of the largest finite part; q = exact_digits(sigma, lowest set
// bit over the non-zero parts); U = sum over the elements of unit_c >= 2^10 |a'_l| (the complex modulus);
// S the scaling norm above; and per element the magnitude digit mag_l <= min(|a'_l|, 127), so that
//   P_rc = sum_l mag(a_rl) mag(b_lc) <= (|A||B|)_rc 2^(sigma_r + sigma_c)
// (one INT8 GEMM of k; |A||B| with complex moduli).
// One element's three terms. From the parts' magnitude_terms: norm = the sum of theirs (S is the real
// one of the 2k parts); unit_c = min(their sum, ceil(2^10 h_hi)), mag = max(their digits,
// min(floor(h_lo), 127)), with h_lo <= |a'| <= h_hi from one square root of the scaled parts x, y:
// where 2^sigma is a normal power and M = max(|x|, |y|) >= 2^-20 (so M^2 is normal),
//   h = sqrt_rn(add_rn(mul_rn(x, x), mul_rn(y, y))) = |a'| (1 + theta), |theta| <= 2.01 u
// (three roundings of at most u, the smaller square's underflow at most 2^-1075 against M^2 >= 2^-40),
// and h_hi = mul_rn(h, 1 + 2^-49) >= |a'|, h_lo = mul_rn(h, 1 - 2^-49) <= |a'| (16 u of margin against
// 3.01 u). Elsewhere (tiny rows, parts below 2^-20 of the row's scale) the parts' terms alone: their
// digit max(floor|x|, floor|y|) <= |a'| and unit sum >= 2^10 (|x| + |y|) >= 2^10 |a'|. The modulus
// gains about 4/pi in U and 1.2 in P on random phases (docs/numerics.md).
OZGEMM_HD MagnitudeTerms oz2c_magnitude_terms(double re, double im, int32_t sigma) {
  const MagnitudeTerms r = magnitude_terms(re, sigma), i = magnitude_terms(im, sigma);
  MagnitudeTerms t{r.digit > i.digit ? r.digit : i.digit, r.unit + i.unit, r.norm + i.norm};
  if (!pow2_is_normal(sigma)) return t;
  const double scale = pow2_normal(sigma);
  const double x = mul_rn(abs_of(re), scale), y = mul_rn(abs_of(im), scale);
  if ((x > y ? x : y) < 0x1p-20) return t;
  const double h = sqrt_rn(add_rn(mul_rn(x, x), mul_rn(y, y)));
  const int64_t unit = ceil_to_int64(mul_rn(mul_rn(h, 1.0 + 0x1p-49), double(1 << kUnitBits)));
  const int32_t floor_lo = floor_to_int32(mul_rn(h, 1.0 - 0x1p-49));
  const int32_t digit = floor_lo < 127 ? floor_lo : 127;
  if (unit < t.unit) t.unit = unit;
  if (digit > t.digit) t.digit = digit;
  return t;
}
// The bound. With a~ = 2^-s A' rounded to nearest (e_a = |a - a~| <= (sqrt2/2) 2^-s, 0 when the row is
// exact at s; |a~| <= |a| + e_a; a row with d < 0 truncates: e_a < sqrt2 2^-s, |a~| <= |a|, and
// oz2_side doubles its x and its cross term) and A'B' exact in Z[i] (step 1's range):
//   |AB - A~B~| = |e_a-terms| <= sum_l e_a |b| + |a| e_b + e_a e_b
//              <= (sqrt2/2) ([!ex_r] 2^-s ||b||_1 + [!ex_c] 2^-t ||a||_1) + [!ex_r][!ex_c] 2^-(s+t) k / 2,
// and each part y of the reconstruction is within u (2.02 |part| + recon_abs_u), so the complex error
// of y is within u (2.02 |A'B'| + sqrt2 recon_abs_u) (Minkowski), with 2^-(s+t) |A'B'| <= |A||B| +
// |AB - A~B~|'s bound (the 2.02 u T2c that adds is inside R2's (1 + 2^-40)). In units of
// 2^-(sigma_r + sigma_c), with P <= (|A||B|)' the contract |C - AB| <= c u |A||B| (complex moduli) holds when
//   R2c(N) = 2.03 + (T2c/u + 2^(2 - d_r - d_c) (sqrt2 recon_abs_u + [!ex_c] k 2^52)) (1 + 2^-40) / P  <=  c,
//   T2c/u = (sqrt2/2) 2^(53 - kUnitBits) ([!ex_r] 2^(1 - d_r) U_c + [!ex_c] 2^(1 - d_c) U_r),  c = min(4, k)
// (the cross term k/2 2^-(s+t) in units of u 2^-(s+t) is k 2^52; gated by the column alone it is also
// counted where only the row is exact, which only loosens). This is the real R2 (whose excess terms
// carry rounding's 1/2) with sqrt2 on both excess terms and the cross term k 2^52 (the real one's k
// 2^51 twice) on the column's reconstruction term (Oz2Side::recon_add), so the real evaluation
// (oz2_entry_ratio) serves with the complex sides and oz2c_recon_abs_u. kSqrt2Up = fl(sqrt2) > sqrt2;
// the roundings of the products and sums with it are covered by R2's (1 + 2^-40), as those of U, 1/P
// and the sums.
constexpr double kSqrt2Up = 1.4142135623730951;  // sqrt2 = 1.41421356237309504880..., this 1.41421356237309514547
// The cross term's k 2^52 for depth k (exact: k < 2^53).
OZGEMM_HD double oz2c_rounding_cross(int64_t k) { return mul_rn(int64_to_double_rn(k), 0x1p52); }
// The real side (x = [!ex] 2^(53 - kUnitBits - d): rounding's half unit) times fl(sqrt2), the complex cross term.
OZGEMM_HD Oz2Side oz2c_side(int32_t q, int32_t d, double rounding_cross) {
  return oz2_side(q, d, rounding_cross, kSqrt2Up);
}
OZGEMM_HD double oz2c_recon_abs_u(const Ozaki2Constants& c) { return mul_rn(c.recon_abs_u, kSqrt2Up); }
// R2c(N) of one entry (sides from oz2c_side); +inf when no guarantee is possible (P = 0, or a result
// outside the normal range).
OZGEMM_HD double oz2c_entry_ratio(double inv_P, double u_row, double u_col, const Oz2Side& row, const Oz2Side& col,
                                  int32_t sigma_sum, const Ozaki2Constants& c) {
  return oz2_entry_ratio(inv_P, u_row, u_col, row, col, sigma_sum, oz2c_recon_abs_u(c));
}

}  // namespace numerics
}  // namespace ozgemm
