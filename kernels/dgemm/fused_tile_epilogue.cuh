// kernels/dgemm/fused_tile_epilogue.cuh — what a fused kernel's consumer threads do with the int32
// sums of one (anti-diagonal d, k-block b) of their tile, and the final write of C. Shared by
// the Hopper (fused_ozaki_sm90.cu) and portable (fused_ozaki_sm80.cu) kernels, which differ only
// in how the int32 sums are produced.
//
// A thread owns kFrag entries of the tile: accum(i) is entry coords(i) = (row, column) local to
// the tile (cute tensors of the tiled MMA's C partition). Shifts of the tile's rows and columns
// are in shared memory, indexed by local row / column.
//
// k-blocks (FusedArgs::kblocks() > 1, the int32 exactness split of the planner):
//   partially fused: (d, b) goes to plane (d, b) (numerics::PlaneLayout); the epilogue sums planes exactly.
//   fully fused (both accumulators): the blocks before the last are summed exactly into an int64
//     per entry in args.spill (numerics::SpillLayout), written and read only by the owning thread
//     (program order, no barrier); the last block adds its int32 sums and converts. The FP64
//     arithmetic is the single-block one, so bits do not depend on the split (the order of
//     ozgemm/numerics/ozaki1.hpp).
//
// Code size: the loops over a thread's entries must be unrolled (accumulators are registers),
// so their bodies are kept to the common case: the power-of-two scaling is one multiplication
// (numerics::pow2_normal, equal to scale_pow2 while the exponent is in the normal range) and C
// is written without the special-value and huge-offset paths. When any entry of the thread needs
// those, a rolled loop over a local copy takes the general numerics. An unrolled general body
// made the fully fused kernels tens of thousands of instructions long and cost up to a quarter of
// their speed in instruction fetch (docs/performance.md).
#pragma once

#include "kernels/dgemm/launch.hpp"
#include "kernels/dgemm/special_dot.cuh"
#include "ozgemm/numerics/ozaki1.hpp"
#include "ozgemm/numerics/slice_layout.hpp"

namespace ozgemm {
namespace kernels {

// One thread's int64 running sums of the k-blocks before the last, in the SpillLayout of its tile.
struct SpillSlot {
  int64_t* base;  // nullptr with one k-block
  numerics::SpillLayout layout;
  int64_t tile;
  int thread;
  __device__ int64_t& at(int i) const { return base[layout.index(tile, i, thread)]; }
};

__device__ inline SpillSlot spill_slot(const FusedArgs& a, int64_t tile_lin, int tile_entries, int nthreads,
                                       int thread) {
  return SpillSlot{a.kblocks() > 1 ? a.spill : nullptr, numerics::SpillLayout{tile_entries, nthreads}, tile_lin, thread};
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

// The common case of store_c_entry: no Inf/NaN in the entry's row or column, offset 0.
__device__ __forceinline__ void store_c_entry_plain(const FusedArgs& a, double acc, int64_t rg, int64_t cg) {
  namespace nm = ozgemm::numerics;
  double* out = a.C + rg + cg * a.ldc;
  const bool read_c = a.beta != 0.0;
  *out = nm::apply_alpha_beta(a.alpha, acc, a.beta, read_c ? *out : 0.0, read_c);
}

// What decides between the fast and the general bodies, for the entries one thread owns:
// the range of shift_sum = shiftA(row) + shiftB(column) and whether any of its entries inside C
// has Inf/NaN in its row or column. Computed once per tile, kept in registers.
struct ThreadRange {
  int32_t min_sum, max_sum;
  bool special;
  // Every entry's diagonal-d scaling is one multiplication by pow2_normal(-8d - shift_sum):
  // offset 0 (shift_sum >= kHugeShiftSum) and the exponent in the normal range.
  __device__ bool diagonal_fast(int d) const {
    namespace nm = ozgemm::numerics;
    const int e_lo = -nm::kSliceBits * d - max_sum, e_hi = -nm::kSliceBits * d - min_sum;
    return min_sum >= nm::kHugeShiftSum && nm::pow2_is_normal(e_lo) && nm::pow2_is_normal(e_hi);
  }
  // Every entry's C write is store_c_entry_plain.
  __device__ bool c_plain() const { return !special && min_sum >= ozgemm::numerics::kHugeShiftSum; }
};

template <int kFrag, class Coords>
__device__ __forceinline__ ThreadRange thread_range(const FusedArgs& a, const Coords& coords, const int32_t* shift_a,
                                                    const int32_t* shift_b, int64_t tile_row0, int64_t tile_col0) {
  ThreadRange t{INT32_MAX, INT32_MIN, false};
#pragma unroll
  for (int i = 0; i < kFrag; ++i) {
    const int r = cute::get<0>(coords(i)), c = cute::get<1>(coords(i));
    const int32_t shift_sum = shift_a[r] + shift_b[c];
    t.min_sum = min(t.min_sum, shift_sum);
    t.max_sum = max(t.max_sum, shift_sum);
    const int64_t rg = tile_row0 + r, cg = tile_col0 + c;
    if (rg < a.m && cg < a.n) t.special |= (a.flag_a[rg] | a.flag_b[cg]) != 0;
  }
  return t;
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
                                               int64_t tile_row0, int64_t tile_col0, const SpillSlot& spill,
                                               const ThreadRange& range) {
  namespace nm = ozgemm::numerics;
  if constexpr (kMode == FusedMode::Partial) {
#pragma unroll
    for (int i = 0; i < kFrag; ++i) {
      const int64_t r = tile_row0 - a.row0 + cute::get<0>(coords(i)), c = tile_col0 - a.col0 + cute::get<1>(coords(i));
      if (r < a.rows && c < a.cols) a.planes[a.plane_layout.index(d, b, r, c)] = accum(i);
    }
    return;
  } else {
    if (b < a.kblocks() - 1) {  // running exact sum of the blocks before the last
      if (b == 0) {
#pragma unroll
        for (int i = 0; i < kFrag; ++i) spill.at(i) = accum(i);
      } else {
#pragma unroll
        for (int i = 0; i < kFrag; ++i) spill.at(i) += accum(i);
      }
      return;
    }
    const bool carry = a.kblocks() > 1;
    const bool first = d == a.s - 1, last = d == 0;
    constexpr bool kGlobal = kMode == FusedMode::FullyGlobal;
    if (range.diagonal_fast(d) && (!kGlobal || !last || range.c_plain())) {
#pragma unroll
      for (int i = 0; i < kFrag; ++i) {
        const int r = cute::get<0>(coords(i)), c = cute::get<1>(coords(i));
        const int64_t sum = int64_t(accum(i)) + (carry ? spill.at(i) : 0);  // |sum| < 2^53: exact in FP64
        const int e = -nm::kSliceBits * d - (shift_a[r] + shift_b[c]);  // offset 0 here
        const double v = nm::mul_rn(nm::int64_to_double_rn(sum), nm::pow2_normal(e));
        if constexpr (!kGlobal) {
          acc64[i] = nm::add_rn(acc64[i], v);
        } else {
          const int64_t rg = tile_row0 + r, cg = tile_col0 + c;
          if (rg >= a.m || cg >= a.n) continue;
          double* w = a.acc + rg + cg * a.ld_acc;
          const double acc = nm::add_rn(first ? 0.0 : *w, v);  // the first diagonal starts from 0
          if (!last)
            *w = acc;
          else
            store_c_entry_plain(a, acc, rg, cg);
        }
      }
    } else {
      // General numerics over a local copy, one rolled loop.
      int64_t sums[kFrag];
      double accs[kFrag];
#pragma unroll
      for (int i = 0; i < kFrag; ++i) {
        sums[i] = int64_t(accum(i)) + (carry ? spill.at(i) : 0);
        if constexpr (!kGlobal) accs[i] = acc64[i];
      }
#pragma unroll 1
      for (int i = 0; i < kFrag; ++i) {
        const int r = cute::get<0>(coords(i)), c = cute::get<1>(coords(i));
        const int32_t shift_sum = shift_a[r] + shift_b[c];
        const double v = nm::diagonal_to_fp64(sums[i], d, shift_sum + nm::reconstruction_offset(shift_sum));
        if constexpr (!kGlobal) {
          accs[i] = nm::add_rn(accs[i], v);
        } else {
          const int64_t rg = tile_row0 + r, cg = tile_col0 + c;
          if (rg >= a.m || cg >= a.n) continue;
          double* w = a.acc + rg + cg * a.ld_acc;
          const double acc = nm::add_rn(first ? 0.0 : *w, v);
          if (!last)
            *w = acc;
          else
            store_c_entry(a, acc, shift_sum, rg, cg);
        }
      }
      if constexpr (!kGlobal) {
#pragma unroll
        for (int i = 0; i < kFrag; ++i) acc64[i] = accs[i];
      }
    }
  }
}

// FullyRegisters: writes the tile's entries inside C from the FP64 sums.
template <int kFrag, class Coords>
__device__ __forceinline__ void write_c_tile(const FusedArgs& a, const double (&acc64)[kFrag], const Coords& coords,
                                             const int32_t* shift_a, const int32_t* shift_b, int64_t tile_row0,
                                             int64_t tile_col0, const ThreadRange& range) {
  if (range.c_plain()) {
#pragma unroll
    for (int i = 0; i < kFrag; ++i) {
      const int64_t rg = tile_row0 + cute::get<0>(coords(i)), cg = tile_col0 + cute::get<1>(coords(i));
      if (rg < a.m && cg < a.n) store_c_entry_plain(a, acc64[i], rg, cg);
    }
  } else {
    double accs[kFrag];
#pragma unroll
    for (int i = 0; i < kFrag; ++i) accs[i] = acc64[i];
#pragma unroll 1
    for (int i = 0; i < kFrag; ++i) {
      const int r = cute::get<0>(coords(i)), c = cute::get<1>(coords(i));
      const int64_t rg = tile_row0 + r, cg = tile_col0 + c;
      if (rg < a.m && cg < a.n) store_c_entry(a, accs[i], shift_a[r] + shift_b[c], rg, cg);
    }
  }
}

}  // namespace kernels
}  // namespace ozgemm
