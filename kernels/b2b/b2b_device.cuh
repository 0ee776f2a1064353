// kernels/b2b/b2b_device.cuh — device code the back-to-back GEMM kernels share (b2b_sm80.cu,
// b2b_sm90.cu, requant.cu): which rows a CTA owns, the documented epilogue formula, the int8
// requantisation and the convolution pair's implicit im2col.
#pragma once

#include "kernels/b2b/launch.hpp"

namespace ozgemm {
namespace kernels {

// The rows of tile x of batch z (kB2bTileM rows from row0, `valid` >= 1 of them inside the
// problem or group): grouped problems search the group whose tile range holds x.
struct B2bTileRows {
  int64_t row0, valid, z;
};
__device__ __forceinline__ B2bTileRows b2b_tile_rows(const B2bArgs& p, int64_t x, int64_t z) {
  int64_t row0 = x * kB2bTileM, rows = p.m;
  if (p.group_count > 0) {
    int gi = 0;
    while (gi + 1 < p.group_count && p.group_tile0[gi + 1] <= x) ++gi;
    row0 = p.group_row0[gi] + (x - p.group_tile0[gi]) * kB2bTileM;
    rows = p.group_row0[gi] + p.group_m[gi];
  }
  return B2bTileRows{row0, rows - row0, z};
}
// One CTA a tile (the portable kernels): tile blockIdx.x of batch blockIdx.z.
__device__ __forceinline__ B2bTileRows b2b_tile_rows(const B2bArgs& p) {
  return b2b_tile_rows(p, int64_t(blockIdx.x), int64_t(blockIdx.z));
}

// The documented epilogue (ozgemm/b2b.hpp): fmaf(alpha, acc, addend), then ReLU; the caller
// rounds to fp16 or requantises to int8.
__device__ __forceinline__ float b2b_epilogue(float alpha, float acc, float addend, bool relu) {
  const float v = __fmaf_rn(alpha, acc, addend);
  return relu ? fmaxf(v, 0.0f) : v;
}

// int8 requantisation: round to nearest even, saturate to [-128, 127] (cvt.rni.sat.s8.f32); the
// byte in the low 8 bits.
__device__ __forceinline__ uint32_t to_s8(float v) {
  const int i = __float2int_rn(v);
  return static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(i < -128 ? -128 : (i > 127 ? 127 : i))));
}

// int8 B0 row permutation (b2b_sm80.cu and b2b_sm90.cu, whose 8-bit A fragments of GEMM 1 take 4
// consecutive k of a row per thread where an int32 accumulator of GEMM 0 gives 2): shared row /
// accumulator column P = 32t + 8b + 2q + e (q the thread in its quad) holds D0's logical column
// 32t + 16(b/2) + 4q + 2(b%2) + e, so each thread's accumulators of blocks 2h', 2h'+1 are the 4
// consecutive columns its A fragment wants.
__host__ __device__ __forceinline__ int s8_d0_column(int P) {
  const int t = P & ~31, b = (P >> 3) & 3, q = (P >> 1) & 3, e = P & 1;
  return t + 16 * (b >> 1) + 4 * q + 2 * (b & 1) + e;
}

// ---- The implicit im2col of conv 0 (B2bArgs::conv_c > 0) ----
// A thread that copies rows of A0 keeps, for each of its rows, where that row's pixel is.
struct ConvPixel {
  int64_t offset;  // elements from X's start to the pixel's first channel
  int y, x;        // the pixel's row and column in its image
};
// The divisions in 32 bits where every operand fits (64-bit ones are long instruction sequences, and
// the Hopper kernel's producer warps issue every copy of a CTA: H100, 2026-11-25); the same values.
__device__ __forceinline__ ConvPixel conv_pixel(const B2bArgs& p, int64_t pixel) {
  const int64_t hw = p.conv_h * p.conv_w;
  if (pixel <= INT32_MAX && hw <= INT32_MAX) {
    const uint32_t in_image = uint32_t(pixel) % uint32_t(hw), w = uint32_t(p.conv_w);
    return ConvPixel{pixel * p.conv_c, int(in_image / w), int(in_image % w)};
  }
  const int64_t in_image = pixel % hw;
  return ConvPixel{pixel * p.conv_c, int(in_image / p.conv_w), int(in_image % p.conv_w)};
}
// The filter tap of the k-range starting at element k (a range the caller copies never straddles
// two taps: conv_c is a multiple of it, planner): the tapped pixel's offset from the centre pixel
// plus the first channel (elements), and the tap's displacement (dy, dx).
struct ConvTap {
  int64_t delta;
  int dy, dx;
};
__device__ __forceinline__ ConvTap conv_tap(const B2bArgs& p, int64_t k) {
  int64_t tap, channel;
  if (k <= INT32_MAX && p.conv_c <= INT32_MAX) {  // 32-bit divisions (conv_pixel)
    tap = uint32_t(k) / uint32_t(p.conv_c);
    channel = k - tap * p.conv_c;
  } else {
    tap = k / p.conv_c;
    channel = k - tap * p.conv_c;
  }
  const int t = int(tap), r = p.conv_r;  // tap < r^2 <= 49
  const int dy = t / r - r / 2, dx = t % r - r / 2;
  return ConvTap{(dy * p.conv_w + dx) * p.conv_c + channel, dy, dx};
}
// Whether the tapped pixel is inside the image (outside: zero padding).
__device__ __forceinline__ bool conv_inside(const B2bArgs& p, const ConvPixel& px, const ConvTap& t) {
  return unsigned(px.y + t.dy) < unsigned(p.conv_h) && unsigned(px.x + t.dx) < unsigned(p.conv_w);
}
// 16 bytes global -> shared with cp.async, or 16 zero bytes when !valid (source size 0: nothing
// is read, but `gmem` must still be an address inside the allocation).
__device__ __forceinline__ void cp_async16_zfill(void* smem, const void* gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(smem))),
               "l"(gmem), "r"(valid ? 16 : 0));
}
// The 16 bytes at byte `byte_in_range` of the k-range (of tap t) of the A0 row of pixel px.
__device__ __forceinline__ void conv_copy16(void* smem, const B2bArgs& p, const ConvPixel& px, const ConvTap& t,
                                            int elem_bytes, int byte_in_range) {
  const bool inside = conv_inside(p, px, t);
  const char* src = static_cast<const char*>(p.a0) + (px.offset + (inside ? t.delta : 0)) * elem_bytes + byte_in_range;
  cp_async16_zfill(smem, src, inside);
}

}  // namespace kernels
}  // namespace ozgemm
