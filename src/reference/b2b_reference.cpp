// Host reference of the back-to-back GEMM and the fp16 / int8 conversions it uses
// (ozgemm/reference/b2b.hpp).
#include "ozgemm/reference/b2b.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace ozgemm {
namespace b2b {

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int exp = int((x >> 23) & 0xff);
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = exp - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7c00u);  // overflow -> Inf
  if (e <= 0) {
    // Subnormal half (or zero): value = mant24 * 2^(exp-150); half unit 2^-24.
    if (e < -10) return uint16_t(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;  // 24-bit significand to 10-bit subnormal field
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return uint16_t(sign | h);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -14;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --e;
      }
      x = sign | (uint32_t(e + 127) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | (uint32_t(exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

int8_t saturate_s8(float v) {
  const float r = std::nearbyint(v);  // the default rounding mode: to nearest even
  return static_cast<int8_t>(r < -128.0f ? -128 : (r > 127.0f ? 127 : static_cast<int>(r)));
}

namespace {
float epilogue(float alpha, float acc, float addend, bool relu) {
  const float v = std::fmaf(alpha, acc, addend);
  return relu ? std::max(v, 0.0f) : v;
}

// The element types of the host reference: E as stored, Acc the GEMMs' accumulator (fp32 for
// fp16, exact int32 for int8), value() an element as an accumulator operand, to_float() an
// element of C1, out() the rounding of an epilogue result to E.
struct HostF16 {
  using E = uint16_t;
  using Acc = float;
  static Acc value(E x) { return half_to_float(x); }
  static float to_float(E x) { return half_to_float(x); }
  static E out(float v) { return float_to_half(v); }
};
struct HostS8 {
  using E = int8_t;
  using Acc = int32_t;
  static Acc value(E x) { return x; }
  static float to_float(E x) { return static_cast<float>(x); }
  static E out(float v) { return saturate_s8(v); }
};

// One problem of m rows, row by row: D0's row in the output type, then D1's row.
template <class T>
void reference_rows(const Problem& p, int64_t m, const typename T::E* a0, const typename T::E* b0, const float* bias0,
                    const typename T::E* b1, const typename T::E* c1, typename T::E* d1) {
  std::vector<typename T::E> d0(size_t(p.n0));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < p.n0; ++j) {
      typename T::Acc acc = 0;
      for (int64_t l = 0; l < p.k0; ++l) acc += T::value(a0[i * p.k0 + l]) * T::value(b0[j * p.k0 + l]);
      d0[j] = T::out(epilogue(p.alpha0, static_cast<float>(acc), bias0 ? bias0[j] : 0.0f, p.relu0));
    }
    for (int64_t j = 0; j < p.n1; ++j) {
      typename T::Acc acc = 0;
      for (int64_t l = 0; l < p.n0; ++l) acc += T::value(d0[l]) * T::value(b1[j * p.n0 + l]);
      const float c = p.beta1 != 0.0f ? p.beta1 * T::to_float(c1[i * p.n1 + j]) : 0.0f;
      d1[i * p.n1 + j] = T::out(epilogue(p.alpha1, static_cast<float>(acc), c, p.relu1));
    }
  }
}

template <class E>
void im2col_rows(const Problem& p, const E* x, int64_t first, int64_t rows, E* out) {
  const Conv& cv = p.conv;
  const int64_t half = cv.r / 2;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t pixel = first + i, image = pixel / (cv.h * cv.w), y = pixel / cv.w % cv.h, xx = pixel % cv.w;
    E* row = out + i * p.k0;
    for (int64_t ty = 0; ty < cv.r; ++ty)
      for (int64_t tx = 0; tx < cv.r; ++tx) {
        const int64_t sy = y + ty - half, sx = xx + tx - half;
        E* dst = row + (ty * cv.r + tx) * cv.c;
        if (sy < 0 || sy >= cv.h || sx < 0 || sx >= cv.w)
          std::fill(dst, dst + cv.c, E(0));
        else
          std::copy_n(x + ((image * cv.h + sy) * cv.w + sx) * cv.c, cv.c, dst);
      }
  }
}

// Every batch (strided) or group (stacked rows, shared B0, bias0, B1); a convolution pair through
// its explicit im2col.
template <class T>
void reference_all(const Problem& p, const typename T::E* a0, const typename T::E* b0, const float* bias0,
                   const typename T::E* b1, const typename T::E* c1, typename T::E* d1) {
  if (p.conv.enabled()) {
    std::vector<typename T::E> patches(size_t(p.m) * size_t(p.k0));
    im2col_rows(p, a0, 0, p.m, patches.data());
    reference_rows<T>(p, p.m, patches.data(), b0, bias0, b1, c1, d1);
    return;
  }
  if (p.group_m.empty()) {
    for (int z = 0; z < p.batch; ++z)
      reference_rows<T>(p, p.m, a0 + z * p.stride_a0, b0 + z * p.stride_b0,
                        bias0 ? bias0 + z * p.stride_bias0 : nullptr, b1 + z * p.stride_b1,
                        c1 ? c1 + z * p.stride_c1 : nullptr, d1 + z * p.stride_d1);
    return;
  }
  int64_t row = 0;
  for (int64_t gm : p.group_m) {
    reference_rows<T>(p, gm, a0 + row * p.k0, b0, bias0, b1, c1 ? c1 + row * p.n1 : nullptr, d1 + row * p.n1);
    row += gm;
  }
}
}  // namespace

void im2col(const Problem& p, const uint16_t* x, int64_t first, int64_t rows, uint16_t* out) {
  im2col_rows(p, x, first, rows, out);
}
void im2col(const Problem& p, const int8_t* x, int64_t first, int64_t rows, int8_t* out) {
  im2col_rows(p, x, first, rows, out);
}

void reference_s8(const Problem& p, const int8_t* a0, const int8_t* b0, const float* bias0, const int8_t* b1,
                  const int8_t* c1, int8_t* d1) {
  reference_all<HostS8>(p, a0, b0, bias0, b1, c1, d1);
}

void reference(const Problem& p, const uint16_t* a0, const uint16_t* b0, const float* bias0, const uint16_t* b1,
               const uint16_t* c1, uint16_t* d1) {
  reference_all<HostF16>(p, a0, b0, bias0, b1, c1, d1);
}

}  // namespace b2b
}  // namespace ozgemm
