// ozgemm/numerics/ozaki1.hpp — the shared host/device numerics of the Ozaki-I scheme.
//
// Every function here is used both by the GPU kernels and by the host reference
// (src/reference/host_reference.cpp), so the two compute the same bits. The header compiles
// with a plain C++17 compiler when CUDA is absent.
//
// Notation (units are powers of two unless said otherwise):
//   s         number of slices (1 <= s <= kMaxSlices)
//   shift     per-row (A) / per-column (B) power-of-two exponent, int32
//   digit i   signed 8-bit slice value, i = 0 is the most significant
//   D_d       exact integer sum of the products of anti-diagonal d = i + j
//
// Representation invariant (proved at slice_value):
//   x ~= sum_{i<s} digit_i(x) * 2^(-8 i - shift),   digit_i in [-128, 127],
//   with |x - sum| < 2^(-8(s-1) - shift)  (truncation toward zero of the last digit),
//   and the sum exact whenever x * 2^(shift + 8(s-1)) is an integer.
//
// Reconstruction order (fixed; the GPU paths and the host reference follow it bit for bit):
//   acc = +0.0
//   for d = s-1 down to 0:   acc = acc + scale_pow2(double(D_d), -8 d - (shiftA + shiftB) - off)
//   acc = scale_pow2(acc, off)   (off = 64 only for shiftA + shiftB < -900, see reconstruct_diagonals)
//   C   = alpha * acc                      (beta == 0: C is not read)
//   C   = (alpha * acc) + (beta * C_old)   (beta != 0; two roundings for the products, one for the sum)
// No fused multiply-add is used anywhere in this order; device code uses the __d*_rn
// intrinsics so the compiler cannot contract, host code is built with -ffp-contract=off.
#pragma once

#include <cstdint>

#include "ozgemm/numerics/fp.hpp"
#include "ozgemm/types.hpp"

namespace ozgemm {
namespace numerics {

constexpr int kSliceBits = 8;   // radix 256
using ozgemm::kMaxSlices;      // largest slice count the library supports (config.h)
// Largest |digit product|: (-128) * (-128) = 2^14. The most negative product is -128*127.
constexpr int64_t kMaxDigitProduct = 16384;
// Largest number of digit products an int32 accumulator can sum without overflow:
// N * 2^14 <= 2^31 - 1  <=>  N <= 131071.
constexpr int64_t kInt32ExactProducts = (int64_t(2147483647)) / kMaxDigitProduct;  // 131071

// The shift of a row (of A) or column (of B) whose largest finite magnitude is `maxabs`.
//
// Invariant: maxabs * 2^shift <= 127, and shift is the largest integer with that property,
// so the row's largest element fills the top digit's range as far as balanced digits allow
// (maxabs * 2^shift lies in (63.5, 127]).
// Why 127 and not 128: with balanced digits the lower s-1 digits can borrow up to
// 128 * (256^(s-1) - 1) / 255 < 0.5021 * 256^(s-1) from the top digit; keeping
// |x| * 2^shift <= 127 leaves the top digit in [-128, 127] for every s (see slice_value).
// maxabs == 0 (an all-zero row) and non-finite maxabs give shift 0; their digits are all zero.
OZGEMM_HD int32_t shift_from_max(double maxabs) {
  if (!(maxabs > 0.0) || !is_finite(maxabs)) return 0;
  uint64_t sig53;
  const int e = floor_log2(maxabs, &sig53);
  // maxabs * 2^(6-e) = sig53 * 2^-46 lies in [64, 128); it is <= 127 iff sig53 <= 127 * 2^46.
  const int over = sig53 > (127ull << 46) ? 1 : 0;
  return 6 - e - over;
}

// Slices one value into s balanced base-256 digits, most significant first:
//   out[i * stride] = digit_i,   i = 0 .. s-1.
// Definition: X = trunc(x * 2^(shift + 8(s-1))) (an integer, truncated toward zero), and
// digit_i are the balanced base-256 digits of X (the unique representation with every
// digit in [-128, 127]). Requires |x| * 2^shift <= 127 (shift_from_max of a bound of |x|), hence
// |X| <= 127 * 256^(s-1) and the top digit lies in [-128, 127] (borrowed: < 0.5021).
// Exact for zero and subnormals (integer arithmetic on the significand, no FP rounding).
// Non-finite x yields all-zero digits: special values are handled outside the products.
template <class Digit>
OZGEMM_HD void slice_value(double x, int32_t shift, int s, Digit* out, int64_t stride) {
  const uint64_t u = bits_of(x);
  const int biased = static_cast<int>((u >> 52) & 0x7ff);
  const uint64_t frac = u & 0x000fffffffffffffull;
  int64_t v = 0;      // the integer still to be cut into digits, scaled by 256^-skip
  int skip = 0;       // number of least-significant digits known to be zero
  if (biased != 0x7ff && (biased != 0 || frac != 0)) {
    const uint64_t mant = biased ? (frac | (1ull << 52)) : frac;
    const int ex = biased ? biased - 1075 : -1074;  // x = +-mant * 2^ex
    const int p = ex + shift + kSliceBits * (s - 1);  // X = trunc(mant * 2^p)
    uint64_t mag;
    if (p >= 0) {
      skip = p / kSliceBits;                 // <= s-1 by the shift invariant
      mag = mant << (p % kSliceBits);        // < 2^60
    } else {
      mag = (p <= -64) ? 0 : (mant >> (-p));
    }
    v = (u >> 63) ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
  }
  // Balanced digits without a carry chain: with w = v + 0x8080808080808080 (unsigned), the
  // digit at position skip + j is byte_j(w) - 128 for j < 8, and 0 above. Why: |v| < 2^61,
  // so 0 < w < 2^64 and v = sum_j (byte_j(w) - 128) 256^j, a representation with digits in
  // [-128, 127]; such representations are unique, so these are the balanced digits of X,
  // which by the invariant above need no position past s - 1 (the top digit is in [-127, 127]).
  const uint64_t w = static_cast<uint64_t>(v) + 0x8080808080808080ull;
  for (int pos = 0; pos < s; ++pos) {  // pos = 0 is the least significant digit
    const int j = pos - skip;
    const Digit d = (j >= 0 && j < 8) ? static_cast<Digit>(static_cast<int>((w >> (8 * j)) & 0xff) - 128)
                                      : static_cast<Digit>(0);
    out[static_cast<int64_t>(s - 1 - pos) * stride] = d;
  }
}

// The FP64 value of anti-diagonal d's exact integer sum D, scaled back:
//   D * 2^(-8 d - shift_sum),   shift_sum = shiftA(row) + shiftB(col).
// Two roundings at most: int64 -> double (exact for |D| <= 2^53) and scale_pow2 (exact
// unless the result is subnormal or overflows).
OZGEMM_HD double diagonal_to_fp64(int64_t diag_sum, int d, int32_t shift_sum) {
  return scale_pow2(int64_to_double_rn(diag_sum), -kSliceBits * d - shift_sum);
}

// Exponent offset of the reconstruction, fixed per entry by shift_sum = shiftA + shiftB.
// Every term is below 2^(50 - shift_sum) (|D_d| < 20 * 2^31 * 2^14 < 2^50) and above
// 2^(-216 - shift_sum) when non-zero. For shift_sum >= kHugeShiftSum no term or partial sum
// can overflow (< 2^955 in magnitude). Below it the result may be near DBL_MAX while the most
// significant diagonal alone exceeds it (DBL_MAX * 1: top digit 64, the next -1), so the terms
// are summed 2^64 smaller, where nothing can underflow, and the sum is scaled back once.
// Either way the sum is what an unbounded exponent range would give, rounded the same way.
constexpr int32_t kHugeShiftSum = -900;
constexpr int kHugeOffset = 64;
OZGEMM_HD int reconstruction_offset(int32_t shift_sum) { return shift_sum < kHugeShiftSum ? kHugeOffset : 0; }

// The FP64 sum of the diagonals in the documented order, least significant first:
//   off = reconstruction_offset(shift_sum); acc = 0
//   for d = s-1 .. 0: acc = acc + diagonal_to_fp64(D_d, d, shift_sum + off)
//   result = scale_pow2(acc, off)
// sum_at(d) returns D_d.
template <class SumAt>
OZGEMM_HD double reconstruct_diagonals(int s, int32_t shift_sum, SumAt sum_at) {
  const int off = reconstruction_offset(shift_sum);
  double acc = 0.0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int d = s - 1; d >= 0; --d) acc = add_rn(acc, diagonal_to_fp64(sum_at(d), d, shift_sum + off));
  return scale_pow2(acc, off);
}

// Number of products i + j < s in the significant triangle: s (s + 1) / 2.
OZGEMM_HD constexpr int triangle_products(int s) { return s * (s + 1) / 2; }

// The int32 exactness bound: the largest k for which an int32 accumulator may sum
// `terms` digit-product GEMMs of depth k (terms * k digit products) without overflow.
// A diagonal d has terms = d + 1; a plan that sums a whole diagonal in one accumulator
// must split k into chunks of at most int32_exact_k(d + 1).
OZGEMM_HD constexpr int64_t int32_exact_k(int terms) {
  return terms > 0 ? kInt32ExactProducts / terms : 0;
}

// The final BLAS step, in the fixed order stated at the top of this file.
// read_c == false (beta == 0) means C_old is not read (it may hold NaN).
OZGEMM_HD double apply_alpha_beta(double alpha, double acc, double beta, double c_old, bool read_c) {
  const double t = mul_rn(alpha, acc);
  return read_c ? add_rn(t, mul_rn(beta, c_old)) : t;
}

}  // namespace numerics
}  // namespace ozgemm
