// kernels/dgemm/operand_tile.cuh — the shared-memory tile of the per-element operand passes
// (slice.cu: Ozaki-I digits; accuracy.cu: magnitude digits; ozaki2.cu: norms and residues).
// A tile is kRows rows x kCols k-indices of op(A) rows / op(B) columns (an OperandView), one CTA
// of kThreads threads per tile, CTAs numbered row-major over (row tiles) x (k tiles).
#pragma once

#include <cstdint>

#include "kernels/dgemm/launch.hpp"

namespace ozgemm {
namespace kernels {
namespace operand_tile {

constexpr int kRows = 32, kCols = 64, kThreads = 256;
static_assert(kThreads % kCols == 0 && kThreads % kRows == 0 && (kRows * kCols) % kThreads == 0, "whole steps");
static_assert(kThreads == kRows * 8, "the row-wise passes give each row 8 threads");

// One column of padding: threads reading down a column (a column-major operand's load) hit
// distinct banks.
using Tile = double[kRows][kCols + 1];

// CTAs for rows x cols (both padded extents); the launchers refuse more than kMaxTiles (1-D grid).
constexpr int64_t kMaxTiles = 0x7fffffffLL;
inline int64_t count(int64_t rows, int64_t cols) { return ((rows + kRows - 1) / kRows) * ((cols + kCols - 1) / kCols); }

// The first row and k-index of this CTA's tile; cols as passed to count().
struct Origin {
  int64_t r0, l0;
};
__device__ __forceinline__ Origin origin(int64_t cols) {
  const int64_t tiles_l = (cols + kCols - 1) / kCols;
  return Origin{(int64_t(blockIdx.x) / tiles_l) * kRows, (int64_t(blockIdx.x) % tiles_l) * kCols};
}

// Loads the tile at o; consecutive threads read consecutive addresses of whichever index is
// contiguous. Entries past v.rows or v.k read as 0. The caller synchronises before reading it.
// A tile wholly inside the operand (all but the last row and k tiles) takes a path with one
// pointer step per value and no bounds tests: the general form's 64-bit index arithmetic was about
// as many integer instructions as the residue pass's own work (SASS, sm_90a).
__device__ __forceinline__ void load(const OperandView& v, Origin o, Tile& tile) {
  constexpr int kPerThread = kRows * kCols / kThreads;
  const bool kcontig = v.stride_l == 1;
  if (o.r0 + kRows <= v.rows && o.l0 + kCols <= v.k) {
    const double* base = v.ptr + o.r0 * v.stride_r + o.l0 * v.stride_l;
    if (kcontig) {  // value i: row threadIdx.x / kCols + i * (kThreads / kCols), k-index threadIdx.x % kCols
      constexpr int kRowStep = kThreads / kCols;
      const int rr = threadIdx.x / kCols, ll = threadIdx.x % kCols;
      const double* p = base + rr * v.stride_r + ll;
      const int64_t step = kRowStep * v.stride_r;
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) tile[rr + kRowStep * i][ll] = p[i * step];
    } else {  // value i: row threadIdx.x % kRows, k-index threadIdx.x / kRows + i * (kThreads / kRows)
      constexpr int kColStep = kThreads / kRows;
      const int rr = threadIdx.x % kRows, ll = threadIdx.x / kRows;
      const double* p = base + rr * v.stride_r + ll * v.stride_l;
      const int64_t step = kColStep * v.stride_l;
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) tile[rr][ll + kColStep * i] = p[i * step];
    }
    return;
  }
  for (int idx = threadIdx.x; idx < kRows * kCols; idx += kThreads) {
    const int rr = kcontig ? idx / kCols : idx % kRows;
    const int ll = kcontig ? idx % kCols : idx / kRows;
    const int64_t r = o.r0 + rr, l = o.l0 + ll;
    tile[rr][ll] = (r < v.rows && l < v.k) ? v.ptr[r * v.stride_r + l * v.stride_l] : 0.0;
  }
}

}  // namespace operand_tile
}  // namespace kernels
}  // namespace ozgemm
