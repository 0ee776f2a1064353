// kernels/fused_tile_epilogue.cuh — what a fused kernel's consumer threads do with the int32
// sums of one (anti-diagonal d, k-block b) of their tile, and the final write of C. Shared by
// the Hopper (fused_ozaki_sm90.cu) and portable (fused_ozaki_sm80.cu) kernels, which differ only
// in how the int32 sums are produced.
//
// A thread owns kFrag entries of the tile: accum(i) is entry coords(i) = (row, column) local to
// the tile (cute tensors of the tiled MMA's C partition). Shifts of the tile's rows and columns
// are in shared memory, indexed by local row / column.
//
// k-blocks (FusedArgs::kblocks > 1, the int32 exactness split of src/planner.hpp):
//   partially fused: (d, b) goes to plane d * kblocks + b; the epilogue sums planes exactly.
//   fully fused (both accumulators): blocks b < kblocks-1 are spilled as int32 to args.spill, where only the same
//     thread reads them back (program order, no barrier); at the last block the exact int64 sum
//     of all blocks is converted. The FP64 arithmetic is therefore the single-block one, and
//     bits do not depend on the split (the order of ozgemm/numerics.hpp).
#pragma once

#include "kernels.hpp"
#include "ozgemm/numerics.hpp"
#include "special_dot.cuh"

namespace ozgemm {
namespace kernels {

// Where one thread's spilled int32 partials of k-block b live: consecutive threads' entries are
// adjacent (coalesced), tiles own disjoint ranges of (kblocks-1) * tile entries.
struct SpillSlot {
  int32_t* base;   // tile's range
  int nthreads;    // consumer threads of the CTA
  int thread;      // this thread's index among them
  int frag;        // entries per thread
  __device__ int32_t& at(int b, int i) const { return base[(int64_t(b) * frag + i) * nthreads + thread]; }
};

__device__ inline SpillSlot spill_slot(const FusedArgs& a, int64_t tile_lin, int tile_entries, int nthreads,
                                       int thread, int frag) {
  return SpillSlot{a.spill + tile_lin * int64_t(a.kblocks - 1) * tile_entries, nthreads, thread, frag};
}

// C(rg, cg) = alpha * scale_back(acc) + beta * C(rg, cg), or the special dot product when the
// entry's row or column holds Inf/NaN; acc is the FP64 sum of the diagonals (offset applied).
__device__ __forceinline__ void store_c_entry(const FusedArgs& a, double acc, int32_t shift_sum, int64_t rg,
                                              int64_t cg) {
  namespace nm = ozgemm::numerics;
  const double v = (a.flag_a[rg] | a.flag_b[cg]) ? special_dot_device(a.a, a.b, rg, cg)
                                                 : nm::scale_pow2(acc, nm::reconstruction_offset(shift_sum));
  double* out = a.C + rg + cg * a.ldc;
  const bool read_c = a.beta != 0.0;
  *out = nm::apply_alpha_beta(a.alpha, v, a.beta, read_c ? *out : 0.0, read_c);
}

// Consumes the int32 sums of (d, b):
//   Partial: stores the plane of (d, b) (entries inside this launch's chunk);
//   FullyRegisters: acc64[i] += diagonal d's value, at the last k-block;
//   FullyGlobal: the same sum read from and written back to a.acc (entries inside C), and C
//     written at the last diagonal (d == 0). Only this thread touches these entries of a.acc.
template <FusedMode kMode, int kFrag, class Accum, class Coords>
__device__ __forceinline__ void consume_kblock(const FusedArgs& a, const Accum& accum, const Coords& coords,
                                               double (&acc64)[kMode == FusedMode::FullyRegisters ? kFrag : 1], int d,
                                               int b, const int32_t* shift_a, const int32_t* shift_b,
                                               int64_t tile_row0, int64_t tile_col0, const SpillSlot& spill) {
  namespace nm = ozgemm::numerics;
  if constexpr (kMode == FusedMode::Partial) {
    int32_t* plane = a.planes + (int64_t(d) * a.kblocks + b) * a.plane_elems;
#pragma unroll
    for (int i = 0; i < kFrag; ++i) {
      const int64_t r = tile_row0 - a.row0 + cute::get<0>(coords(i)), c = tile_col0 - a.col0 + cute::get<1>(coords(i));
      if (r < a.rows && c < a.cols) plane[r + c * a.ld_plane] = accum(i);
    }
  } else {
    if (b < a.kblocks - 1) {
#pragma unroll
      for (int i = 0; i < kFrag; ++i) spill.at(b, i) = accum(i);
      return;
    }
    // The FP64 value of diagonal d at entry i (exact sum over the k-blocks).
    auto diagonal_value = [&](int i, int32_t shift_sum) {
      int64_t sum = accum(i);  // |sum| < kblocks * 2^31: exact in int64 and in FP64
      for (int q = 0; q < a.kblocks - 1; ++q) sum += spill.at(q, i);
      return nm::diagonal_to_fp64(sum, d, shift_sum + nm::reconstruction_offset(shift_sum));
    };
    if constexpr (kMode == FusedMode::FullyRegisters) {
#pragma unroll
      for (int i = 0; i < kFrag; ++i) {
        const int r = cute::get<0>(coords(i)), c = cute::get<1>(coords(i));
        acc64[i] = nm::add_rn(acc64[i], diagonal_value(i, shift_a[r] + shift_b[c]));
      }
    } else {
      const bool first = d == a.s - 1, last = d == 0;
#pragma unroll
      for (int i = 0; i < kFrag; ++i) {
        const int r = cute::get<0>(coords(i)), c = cute::get<1>(coords(i));
        const int64_t rg = tile_row0 + r, cg = tile_col0 + c;
        if (rg >= a.m || cg >= a.n) continue;
        const int32_t shift_sum = shift_a[r] + shift_b[c];
        double* w = a.acc + rg + cg * a.ld_acc;
        const double acc = nm::add_rn(first ? 0.0 : *w, diagonal_value(i, shift_sum));  // the first starts from 0
        if (!last)
          *w = acc;
        else
          store_c_entry(a, acc, shift_sum, rg, cg);
      }
    }
  }
}

// FullyRegisters: writes the tile's entries inside C from the FP64 sums.
template <int kFrag, class Coords>
__device__ __forceinline__ void write_c_tile(const FusedArgs& a, const double (&acc64)[kFrag], const Coords& coords,
                                             const int32_t* shift_a, const int32_t* shift_b, int64_t tile_row0,
                                             int64_t tile_col0) {
#pragma unroll
  for (int i = 0; i < kFrag; ++i) {
    const int r = cute::get<0>(coords(i)), c = cute::get<1>(coords(i));
    const int64_t rg = tile_row0 + r, cg = tile_col0 + c;
    if (rg < a.m && cg < a.n) store_c_entry(a, acc64[i], shift_a[r] + shift_b[c], rg, cg);
  }
}

// Required spill capacity (int32 entries) of a fully fused launch over grid_tiles tiles.
inline int64_t spill_entries(int64_t kblocks, int64_t grid_tiles, int64_t tile_entries) {
  return kblocks > 1 ? (kblocks - 1) * grid_tiles * tile_entries : 0;
}

}  // namespace kernels
}  // namespace ozgemm
