// kernels/b2b/b2b_device.cuh — device code the back-to-back GEMM kernels share (b2b_sm80.cu,
// b2b_sm90.cu, requant.cu): which rows a CTA owns, the documented epilogue formula and the int8
// requantisation.
#pragma once

#include "kernels/b2b/launch.hpp"

namespace ozgemm {
namespace kernels {

// The rows of this CTA's tile (kB2bTileM rows from row0, `valid` >= 1 of them inside the
// problem or group) and its batch z: batched problems take blockIdx.z; grouped ones search the
// group whose tile range holds blockIdx.x.
struct B2bTileRows {
  int64_t row0, valid, z;
};
__device__ __forceinline__ B2bTileRows b2b_tile_rows(const B2bArgs& p) {
  int64_t row0 = int64_t(blockIdx.x) * kB2bTileM, rows = p.m;
  if (p.group_count > 0) {
    int gi = 0;
    while (gi + 1 < p.group_count && p.group_tile0[gi + 1] <= int64_t(blockIdx.x)) ++gi;
    row0 = p.group_row0[gi] + (int64_t(blockIdx.x) - p.group_tile0[gi]) * kB2bTileM;
    rows = p.group_row0[gi] + p.group_m[gi];
  }
  return B2bTileRows{row0, rows - row0, int64_t(blockIdx.z)};
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

}  // namespace kernels
}  // namespace ozgemm
