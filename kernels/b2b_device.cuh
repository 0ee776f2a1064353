// kernels/b2b_device.cuh — device code both back-to-back GEMM kernels share (b2b_sm80.cu,
// b2b_sm90.cu): which rows a CTA owns, and the documented epilogue formula.
#pragma once

#include "b2b_kernels.hpp"

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

}  // namespace kernels
}  // namespace ozgemm
