// ozgemm/numerics/fp.hpp — FP64 (and a few FP32) building blocks shared by every scheme's host and device code:
// bit access, rounded arithmetic the compiler may not contract into an FMA, exact exponents and
// correctly rounded power-of-two scaling. Compiles with a plain C++17 compiler when CUDA is absent.
// Host translation units that use these must be built with -ffp-contract=off (CMake does it).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define OZGEMM_HD __host__ __device__ __forceinline__
#else
#define OZGEMM_HD inline
#endif

namespace ozgemm {
namespace numerics {

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

// |x| (clears the sign bit; exact).
OZGEMM_HD double abs_of(double x) { return double_of(bits_of(x) & 0x7fffffffffffffffull); }

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
OZGEMM_HD double div_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
// 1 / b correctly rounded, as div_rn(1.0, b) (the device's reciprocal sequence is shorter).
OZGEMM_HD double rcp_rn(double b) {
#if defined(__CUDA_ARCH__)
  return __drcp_rn(b);
#else
  return 1.0 / b;
#endif
}
OZGEMM_HD double sqrt_rn(double x) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return std::sqrt(x);  // IEEE correctly rounded, as __dsqrt_rn
#endif
}
// floor(x) and ceil(x) of a finite x as integers (exact operations: the same on host and device).
// Preconditions: the result fits the type.
OZGEMM_HD int32_t floor_to_int32(double x) {
#if defined(__CUDA_ARCH__)
  return __double2int_rd(x);
#else
  return static_cast<int32_t>(std::floor(x));
#endif
}
OZGEMM_HD int64_t ceil_to_int64(double x) {
#if defined(__CUDA_ARCH__)
  return __double2ll_ru(x);
#else
  return static_cast<int64_t>(std::ceil(x));
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

// |x| 2^e = mant 2^p exactly, mant < 2^53 the significand (0 for +-0), for a finite x.
struct ScaledSignificand {
  uint64_t mant;
  int p;
};
OZGEMM_HD ScaledSignificand scaled_significand(double x, int e) {
  const uint64_t u = bits_of(x);
  const int biased = static_cast<int>((u >> 52) & 0x7ff);
  const uint64_t frac = u & 0x000fffffffffffffull;
  return {biased ? (frac | (1ull << 52)) : frac, (biased ? biased - 1075 : -1074) + e};
}

// |x| 2^e as an integer, mant 2^p with p >= 0, exactly: rounded to the nearest (ties away from zero,
// floor(|x| 2^e + 1/2): where p < 0, floor((floor(|x| 2^(e+1)) + 1) / 2)) or truncated (floor(|x| 2^e)).
// The nearest is never above ceil(|x| 2^e) and at most 1/2 from |x| 2^e (rnd(0.6) = 1 > 0.6).
OZGEMM_HD ScaledSignificand scaled_significand_integer(double x, int e, bool nearest) {
  const ScaledSignificand s = scaled_significand(x, e);
  if (s.p >= 0) return s;
  if (!nearest) return {s.p <= -64 ? 0 : s.mant >> (-s.p), 0};
  const uint64_t twice = s.p <= -64 ? 0 : s.mant >> (-s.p - 1);  // floor(|x| 2^(e+1)) < 2^53
  return {(twice + 1) >> 1, 0};
}

// floor(|x| 2^e) and ceil(|x| 2^e) of a finite x, exactly (integer arithmetic on the significand).
// Callers keep |x| 2^e below 2^62.
OZGEMM_HD int64_t scaled_floor(double x, int e) {
  const ScaledSignificand s = scaled_significand(x, e);
  if (s.mant == 0) return 0;  // +-0 at any e (no shift past 63)
  if (s.p >= 0) return static_cast<int64_t>(s.mant << s.p);
  return s.p <= -64 ? 0 : static_cast<int64_t>(s.mant >> (-s.p));
}
OZGEMM_HD int64_t scaled_ceil(double x, int e) {
  const ScaledSignificand s = scaled_significand(x, e);
  if (s.mant == 0) return 0;
  if (s.p >= 0) return static_cast<int64_t>(s.mant << s.p);
  if (s.p <= -64) return 1;
  const bool rest = (s.mant & ((1ull << (-s.p)) - 1)) != 0;
  return static_cast<int64_t>(s.mant >> (-s.p)) + (rest ? 1 : 0);
}

// Fused multiply-add and round-to-nearest-even integer, each one IEEE operation on host and device
// (used explicitly where the order of operations says so; never contracted implicitly).
OZGEMM_HD double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
OZGEMM_HD double rint_rn(double x) {
#if defined(__CUDA_ARCH__)
  return rint(x);
#else
  return std::nearbyint(x);  // the default rounding mode: to nearest even, as rint
#endif
}

// ---------------------------------------------------------------------------------------------
// FP32 building blocks (Ozaki-II's residues run on the FP32 pipes: ozaki2.hpp)
OZGEMM_HD uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__float_as_uint(x));
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
OZGEMM_HD float float_of(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}
OZGEMM_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;  // SSE single precision, host TUs built with -ffp-contract=off
#endif
}
OZGEMM_HD float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

}  // namespace numerics
}  // namespace ozgemm
