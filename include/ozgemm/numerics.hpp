// ozgemm/numerics.hpp — the shared host/device numerics of the Ozaki-I scheme.
//
// Every function here is used both by the GPU kernels and by the host reference
// (src/host_reference.cpp), so the two compute the same bits. The header compiles
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
#include <cstring>

#if defined(__CUDACC__)
#define OZGEMM_HD __host__ __device__ __forceinline__
#else
#define OZGEMM_HD inline
#endif

namespace ozgemm {
namespace numerics {

constexpr int kSliceBits = 8;   // radix 256
constexpr int kMaxSlices = 20;  // largest slice count the library supports
// Largest |digit product|: (-128) * (-128) = 2^14. The most negative product is -128*127.
constexpr int64_t kMaxDigitProduct = 16384;
// Largest number of digit products an int32 accumulator can sum without overflow:
// N * 2^14 <= 2^31 - 1  <=>  N <= 131071.
constexpr int64_t kInt32ExactProducts = (int64_t(2147483647)) / kMaxDigitProduct;  // 131071

// ---------------------------------------------------------------------------------------------
// Bit access
OZGEMM_HD uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

OZGEMM_HD double double_of(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

// True for every finite double (zero and subnormals included); false for +-Inf and NaN.
OZGEMM_HD bool is_finite(double x) { return ((bits_of(x) >> 52) & 0x7ff) != 0x7ff; }

// Rounded-to-nearest arithmetic that the compiler may not contract into an FMA.
OZGEMM_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;  // host TUs are built with -ffp-contract=off
#endif
}
OZGEMM_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
OZGEMM_HD double int64_to_double_rn(int64_t v) {
#if defined(__CUDA_ARCH__)
  return __ll2double_rn(static_cast<long long>(v));
#else
  return static_cast<double>(v);  // IEEE round to nearest even, as __ll2double_rn
#endif
}

// ---------------------------------------------------------------------------------------------
// Exponent of a finite, non-zero magnitude: floor(log2 |m|), exact for subnormals.
// Also returns the significand normalised to 53 bits (bit 52 set) in *sig53.
OZGEMM_HD int floor_log2(double m, uint64_t* sig53) {
  const uint64_t u = bits_of(m) & 0x7fffffffffffffffull;
  const int biased = static_cast<int>(u >> 52);
  uint64_t frac = u & 0x000fffffffffffffull;
  if (biased != 0) {
    *sig53 = frac | (1ull << 52);
    return biased - 1023;
  }
  // Subnormal: value = frac * 2^-1074, frac != 0 (caller excludes zero).
  int e = -1074;
  int top = 63;
  while (((frac >> top) & 1ull) == 0) --top;  // index of the leading one, 0..51
  e += top;
  *sig53 = frac << (52 - top);
  return e;
}

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

// v * 2^e, correctly rounded (round to nearest even), for finite v; +-Inf on overflow,
// subnormal or signed zero on underflow. Fast path: the result is a normal number and
// only the exponent field changes. Slow path: one IEEE multiplication by 2^-1022, which
// rounds once, after an exact rescaling into the normal range.
OZGEMM_HD double scale_pow2(double v, int e) {
  const uint64_t u = bits_of(v);
  const int biased = static_cast<int>((u >> 52) & 0x7ff);
  if (v == 0.0 || biased == 0x7ff) return v;
  if (biased == 0) {
    // Subnormal input (never produced by diagonal conversion, kept for completeness):
    // normalise exactly by 2^64 first.
    return scale_pow2(mul_rn(v, 18446744073709551616.0), e - 64);
  }
  const int target = biased + e;
  if (target >= 1 && target <= 2046) {
    return double_of((u & ~(0x7ffull << 52)) | (static_cast<uint64_t>(target) << 52));
  }
  if (target > 2046) return double_of((u & (1ull << 63)) | (0x7ffull << 52));  // +-Inf
  if (target < -60) return double_of(u & (1ull << 63));  // |result| < 2^-1075: rounds to +-0
  // target in [-60, 0]: v * 2^(e + 1022) is normal (biased exponent target + 1022 >= 962).
  const double normal = double_of((u & ~(0x7ffull << 52)) | (static_cast<uint64_t>(target + 1022) << 52));
  return mul_rn(normal, 2.2250738585072014e-308);  // * 2^-1022, one rounding
}

// 2^e for e in [-1022, 1023] (a normal double). For every finite v and such e,
//   scale_pow2(v, e) == mul_rn(v, pow2_normal(e)),
// bit for bit: IEEE multiplication by a power of two rounds the exact product once to nearest
// even, overflowing to +-Inf and underflowing to subnormals or +-0 exactly as scale_pow2 does
// (tests/test_numerics.cpp checks it). Kernels use the multiplication as their fast path.
constexpr int kPow2NormalMin = -1022, kPow2NormalMax = 1023;
OZGEMM_HD bool pow2_is_normal(int e) { return e >= kPow2NormalMin && e <= kPow2NormalMax; }
OZGEMM_HD double pow2_normal(int e) { return double_of(static_cast<uint64_t>(e + 1023) << 52); }

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
