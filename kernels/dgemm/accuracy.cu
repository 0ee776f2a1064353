// The accuracy decision's kernels (ozgemm/numerics/accuracy.hpp): the magnitude digits and U of an
// operand, and the per-entry reduction of the bound over the magnitude product (Ozaki-II's for real
// data, R2, or complex data, R2c of numerics/ozaki2_complex.hpp; the complex operands' magnitudes are
// ozaki2_complex.cu's). The same functions as the host references (src/reference/accuracy_reference.cpp,
// ozaki2_complex_reference.cpp), so both choose the same count.
#include "kernels/dgemm/launch.hpp"
#include "kernels/dgemm/operand_tile.cuh"
#include "ozgemm/numerics/accuracy.hpp"
#include "ozgemm/numerics/ozaki2_complex.hpp"

namespace ozgemm {
namespace kernels {

namespace nm = ozgemm::numerics;

namespace {

namespace tile = operand_tile;
using tile::kThreads;

// The bound reductions: one thread per entry of C, 128 x 2 a block.
const dim3 kEntryBlock(128, 2);
dim3 entry_grid(int64_t rows, int64_t cols) {
  return dim3(static_cast<unsigned>((rows + 127) / 128), static_cast<unsigned>((cols + 1) / 2));
}

// One operand tile (operand_tile.cuh) staged through shared memory, then written k-contiguous by 8 threads a row (8 consecutive bytes
// each step); each row's U partial sum is reduced across its 8 threads by shuffles and added to
// U[r] once per tile.
__global__ void __launch_bounds__(kThreads) magnitudes_kernel(OperandView v, const int32_t* __restrict__ shift,
                                                               int64_t rows_pad, int64_t kpad, int64_t ld,
                                                               uint8_t* __restrict__ mag, int64_t* __restrict__ U,
                                                               int64_t* __restrict__ S, uint8_t* __restrict__ mag_low) {
  __shared__ tile::Tile t;
  const tile::Origin at = tile::origin(kpad);
  const int64_t r0 = at.r0, l0 = at.l0;
  tile::load(v, at, t);
  __syncthreads();
  const int rr = threadIdx.x / 8, part = threadIdx.x % 8;
  const int64_t r = r0 + rr;
  unsigned long long usum = 0, ssum = 0;
  if (r < rows_pad) {
    const int32_t sh = shift[r];
#pragma unroll
    for (int j = 0; j < tile::kCols / 8; ++j) {
      const int ll = part + 8 * j;
      const int64_t l = l0 + ll;
      if (l >= kpad) break;
      const double x = t[rr][ll];
      const bool finite = nm::is_finite(x);
      const nm::MagnitudeTerms terms = finite ? nm::magnitude_terms(x, sh) : nm::MagnitudeTerms{0, 0, 0};
      mag[r * ld + l] = static_cast<uint8_t>(terms.digit);
      if (mag_low) mag_low[r * ld + l] = static_cast<uint8_t>(finite ? nm::magnitude_low_digit(x, sh) : 0);
      usum += static_cast<unsigned long long>(terms.unit);
      if (S) ssum += static_cast<unsigned long long>(terms.norm);
    }
  }
  for (int o = 4; o > 0; o >>= 1) {  // within the row's 8 lanes
    usum += __shfl_xor_sync(0xffffffffu, usum, o);
    ssum += __shfl_xor_sync(0xffffffffu, ssum, o);
  }
  if (part == 0 && r < rows_pad && usum != 0) atomicAdd(reinterpret_cast<unsigned long long*>(U + r), usum);
  if (part == 0 && r < rows_pad && ssum != 0) atomicAdd(reinterpret_cast<unsigned long long*>(S + r), ssum);
}

// One thread per entry; a block's maxima reduce through warp shuffles and shared memory, then one
// atomic per block and quantity.
__global__ void __launch_bounds__(256) bound_kernel(BoundArgs a) {
  constexpr int W = nm::kSliceWindow;
  __shared__ int s_red[8];
  __shared__ unsigned long long r_red[8][W];
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t c = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  int need = 0;
  unsigned long long ratio[W];
#pragma unroll
  for (int w = 0; w < W; ++w) ratio[w] = 0;
  if (r < a.rows && c < a.cols) {
    const int64_t cg = a.col0 + c;
    if (!(a.flag_a[r] | a.flag_b[cg])) {
      int64_t P = 0;
      for (int b = 0; b < a.pblocks; ++b) P += a.P[b * a.plane_elems + r + c * a.ld];
      const int32_t shift_sum = a.shift_a[r] + a.shift_b[cg];
      // The window's ratios; the entry's smallest passing count is the first of them at or below the
      // target, or found past the window (entry_slices' definition either way).
      need = 0;
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const int s = a.s_from + w;
        if (s <= nm::kMaxSlices) {
          const double R = nm::entry_ratio(s, P, a.U_a[r], a.U_b[cg], a.q_a[r], a.q_b[cg], shift_sum, a.k);
          ratio[w] = nm::bits_of(R);
          if (need == 0 && R <= a.target) need = s;
        }
      }
      if (need == 0)
        need = nm::entry_slices(a.s_from + W, a.target, P, a.U_a[r], a.U_b[cg], a.q_a[r], a.q_b[cg], shift_sum, a.k);
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    need = max(need, __shfl_xor_sync(0xffffffffu, need, o));
#pragma unroll
    for (int w = 0; w < W; ++w) ratio[w] = max(ratio[w], __shfl_xor_sync(0xffffffffu, ratio[w], o));
  }
  const int tid = threadIdx.x + threadIdx.y * blockDim.x, warp = tid >> 5, lane = tid & 31;
  if (lane == 0) {
    s_red[warp] = need;
#pragma unroll
    for (int w = 0; w < W; ++w) r_red[warp][w] = ratio[w];
  }
  __syncthreads();
  if (tid == 0) {
    const int warps = (blockDim.x * blockDim.y + 31) / 32;
    for (int i = 1; i < warps; ++i) {
      need = max(need, s_red[i]);
#pragma unroll
      for (int w = 0; w < W; ++w) ratio[w] = max(ratio[w], r_red[i][w]);
    }
    if (need > 0) atomicMax(&a.result->s_max, need);
#pragma unroll
    for (int w = 0; w < W; ++w)
      if (ratio[w]) atomicMax(&a.result->ratio_max[w], ratio[w]);
  }
}

// One thread per (row, count): rows of A first, then the columns of B.
__global__ void oz2_extra_shifts_kernel(const int64_t* __restrict__ S_a, int64_t rows_a, int8_t* __restrict__ d_a,
                                        const int64_t* __restrict__ S_b, int64_t rows_b, int8_t* __restrict__ d_b,
                                        Oz2ShiftLimits limits) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int w = static_cast<int>(blockIdx.y);
  if (i < rows_a)
    d_a[w * rows_a + i] = static_cast<int8_t>(nm::oz2_extra_shift(S_a[i], limits.limit[w]));
  else if (i < rows_a + rows_b)
    d_b[w * rows_b + (i - rows_a)] = static_cast<int8_t>(nm::oz2_extra_shift(S_b[i - rows_a], limits.limit[w]));
}

// The Ozaki-II bound over a block of kOz2BoundRows rows (a thread each) and kOz2BoundCols columns
// (their sides of every count in shared memory): per entry one reciprocal (1/P) and, per live
// count, the excess (numerics::oz2_entry_excess, 6 FP64 operations) with the exponent range check;
// 2.03 is added once to the block's largest excess (oz2_entry_ratio: the addition is monotone).
// Counts marked dead when the block starts are skipped; the block marks a count dead when its
// maximum exceeds the target. Lowest first (launch.hpp's Oz2BoundArgs): one live count at a time,
// up to the first the block meets. Otherwise every live count, kOz2BoundSlots at a time (slot s holds
// the s-th count's row side in registers; more live counts take further passes over the block's
// entries, from L1/L2): 4-6 counts stayed live through much of the grid at 8192^3 (docs/performance.md).
constexpr int kOz2BoundRows = DecisionPolicy::kBoundRows, kOz2BoundCols = DecisionPolicy::kBoundCols;
constexpr int kOz2BoundBatch = 4, kOz2BoundSlots = 3;
static_assert(nm::kModuliWindow < 32, "oz2_dead holds a bit per count (and 1u << W stays defined)");

struct Oz2BoundShared {
  double2 col_xy[kOz2BoundCols][nm::kModuliWindow];  // x, recon_abs_u y
  int32_t col_e[kOz2BoundCols][nm::kModuliWindow];   // sigma - 2 + d
  double col_u[kOz2BoundCols];
  int32_t col_skip[kOz2BoundCols];  // Inf/NaN column, or past the chunk
  unsigned long long block_max[kOz2BoundRows / 32][nm::kModuliWindow];  // a warp's largest excess (bits) by count
};

// A row's (column's) side of the bound: R2's, or for complex data R2c's (the excess terms times
// sqrt2); either with the rounding's cross term on the column's reconstruction term.
__device__ __forceinline__ nm::Oz2Side bound_side(const Oz2BoundArgs& a2, int32_t q, int32_t d) {
  return a2.complex_data ? nm::oz2c_side(q, d, a2.rounding_cross) : nm::oz2_side(q, d, a2.rounding_cross);
}

// This thread's row against the block's columns for the counts of `group` (at most S of them: slot
// s is the s-th), then each slot's maximum over the warp into sh.block_max.
template <int S>
__device__ void oz2_bound_rows(const Oz2BoundArgs& a2, int64_t r, int64_t c0, uint32_t group, Oz2BoundShared& sh) {
  const BoundArgs& a = a2.base;
  int w_of[S];  // the count of each slot; -1: unused
#pragma unroll
  for (int s = 0; s < S; ++s) {
    w_of[s] = group ? __ffs(group) - 1 : -1;
    group &= group - 1;
  }
  unsigned long long excess_max[S];  // bits of the largest excess (positive doubles and +inf order as integers); 0: none
#pragma unroll
  for (int s = 0; s < S; ++s) excess_max[s] = 0;
  if (r < a.rows && !a.flag_a[r]) {
    double x_row[S], y_row[S];
    int32_t e_row[S];
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const nm::Oz2Side side = bound_side(a2, a.q_a[r], w_of[s] < 0 ? 0 : a2.d_a[w_of[s] * a2.d_stride_a + r]);
      x_row[s] = side.x;
      y_row[s] = side.y;
      e_row[s] = a.shift_a[r] + side.d;
    }
    const double u_row = nm::int64_to_double_rn(a.U_a[r]);
    const int cols_here = static_cast<int>(min(int64_t(kOz2BoundCols), a.cols - c0));
    // kOz2BoundBatch columns at a time, their P loads in flight together (one at a time, the pass
    // waited on memory latency).
    for (int j0 = 0; j0 < cols_here; j0 += kOz2BoundBatch) {
      const int32_t* Pj = a.P + r + (c0 + j0) * a.ld;
      int64_t P[kOz2BoundBatch];
#pragma unroll
      for (int u = 0; u < kOz2BoundBatch; ++u) P[u] = j0 + u < cols_here ? Pj[u * a.ld] : 0;
      for (int b = 1; b < a.pblocks; ++b)
#pragma unroll
        for (int u = 0; u < kOz2BoundBatch; ++u) P[u] += j0 + u < cols_here ? Pj[b * a.plane_elems + u * a.ld] : 0;
      if (a2.X) {  // the finer lower bound: P becomes P14 = 2^14 P + 2^7 X + Y (block-uniform)
        const int32_t *Xj = a2.X + r + (c0 + j0) * a.ld, *Yj = a2.Y + r + (c0 + j0) * a.ld;
#pragma unroll
        for (int u = 0; u < kOz2BoundBatch; ++u) {
          if (j0 + u >= cols_here) continue;
          int64_t x = 0, y = 0;
          for (int b = 0; b < a2.xblocks; ++b) x += Xj[b * a.plane_elems + u * a.ld];
          for (int b = 0; b < a.pblocks; ++b) y += Yj[b * a.plane_elems + u * a.ld];
          P[u] = nm::oz2_fine_lower_bound(P[u], x, y);
        }
      }
#pragma unroll
      for (int u = 0; u < kOz2BoundBatch; ++u) {
        const int j = j0 + u;
        if (j >= cols_here || sh.col_skip[j]) continue;
        const double inv_P = a2.X ? nm::oz2_inverse_fine(P[u]) : nm::oz2_inverse(P[u]), u_col = sh.col_u[j];
#pragma unroll
        for (int s = 0; s < S; ++s) {
          const int w = w_of[s];
          if (w < 0) continue;  // block-uniform
          const double2 xy = sh.col_xy[j][w];
          const bool normal = nm::oz2_reconstruction_normal(int64_t(e_row[s]) + sh.col_e[j][w]);
          const double excess = inv_P != 0.0 && normal
                                    ? nm::oz2_entry_excess(inv_P, u_row, u_col, x_row[s], y_row[s], xy.x, xy.y)
                                    : nm::double_of(0x7ff0000000000000ull);
          excess_max[s] = max(excess_max[s], static_cast<unsigned long long>(nm::bits_of(excess)));
        }
      }
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
#pragma unroll
    for (int s = 0; s < S; ++s) excess_max[s] = max(excess_max[s], __shfl_xor_sync(0xffffffffu, excess_max[s], o));
  }
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s)
      if (w_of[s] >= 0) sh.block_max[threadIdx.x >> 5][w_of[s]] = excess_max[s];
  }
}

// The block's largest excess at count w (the warps' maxima in sh.block_max) as R2: 0 when the block
// has no finite entry, else recorded in result->oz2_ratio_max[w] and, above the target, count w marked
// dead. Thread 0 only; true when the block meets the target at w.
__device__ bool oz2_block_meets(const Oz2BoundArgs& a2, const Oz2BoundShared& sh, int w) {
  const BoundArgs& a = a2.base;
  unsigned long long m = 0;
  for (int i = 0; i < kOz2BoundRows / 32; ++i) m = max(m, sh.block_max[i][w]);
  if (!m) return true;
  const double R = nm::add_rn(2.03, nm::double_of(m));  // oz2_entry_ratio of the largest excess
  atomicMax(&a.result->oz2_ratio_max[w], static_cast<unsigned long long>(nm::bits_of(R)));
  if (!(R > a.target)) return true;
  atomicOr(&a.result->oz2_dead, 1u << w);
  if (a2.settle) atomicOr(&a.result->oz2_settle_deaths, 1u << a2.settle_index);
  return false;
}

// The counts not yet dead (read once by thread 0 for the block: other blocks may mark counts meanwhile).
__device__ uint32_t oz2_live_counts(const BoundArgs& a) {
  return ~*reinterpret_cast<volatile const uint32_t*>(&a.result->oz2_dead) & ((1u << nm::kModuliWindow) - 1u);
}

// 8 blocks an SM (64 registers; on Hopper the shared memory allows 8 too, 8 x 25.7 KB of 228 KB; on sm_80
// it caps the blocks at 6 and the cap costs an 8-byte spill, unmeasured there): at 5 (96 registers, 20% achieved
// occupancy) the pass waited on dependent FP64 latencies, 400 us at 8192^3; at 8, 281 us (16384^2 x 4096:
// 1510 -> 1070 us; ncu, H100, bench/results/2026-11-26-h100-row-scaling-and-remeasure). Skipping the
// exact reciprocal where an entry cannot raise the thread's maximum did not help at 5 blocks (404 us).
__global__ void __launch_bounds__(kOz2BoundRows, 8) oz2_bound_kernel(Oz2BoundArgs a2) {
  constexpr int W = nm::kModuliWindow;
  const BoundArgs& a = a2.base;
  __shared__ Oz2BoundShared sh;
  __shared__ uint32_t live_counts, met;
  const int64_t c0 = int64_t(blockIdx.y) * kOz2BoundCols;
  // This block's word (lowest first): the counts it evaluated and met.
  uint32_t* const passed =
      a2.lowest_first ? a2.block_passed + blockIdx.x + int64_t(gridDim.x) * ((a.col0 + c0) / kOz2BoundCols) : nullptr;
  uint32_t done = a2.settle ? *passed : 0u;
  if (threadIdx.x == 0) live_counts = oz2_live_counts(a);
  __syncthreads();
  uint32_t live = live_counts;
  // Every live count (not lowest first) over few blocks (launch_oz2_bound: the sample's 64 blocks took
  // 233 us at 16384^3): grid.z splits the counts into fixed groups of kOz2BoundSlots window indices,
  // block z evaluating group z's live ones. Fixed by index, not by rank among the live counts: blocks
  // read the dead counts at different times, and every count live at the end must be evaluated on
  // every entry.
  if (!a2.lowest_first && gridDim.z > 1) live &= ((1u << kOz2BoundSlots) - 1u) << (kOz2BoundSlots * blockIdx.z);
  // Nothing to do (block-uniform): every count is past the target already, or (settling) this block
  // has evaluated and met the lowest live count.
  if (!live || (done & live & (0u - live))) {
    if (a2.lowest_first && !a2.settle && threadIdx.x == 0) *passed = 0u;
    return;
  }
  for (int i = threadIdx.x; i < kOz2BoundCols * W; i += kOz2BoundRows) {
    const int j = i / W, w = i % W;
    const int64_t c = c0 + j, cg = a.col0 + c;
    if (c < a.cols) {
      const nm::Oz2Side side = bound_side(a2, a.q_b[cg], a2.d_b[w * a2.d_stride_b + cg]);
      sh.col_xy[j][w] = make_double2(side.x, nm::oz2_recon_y(a2.recon_abs_u[w], side));
      sh.col_e[j][w] = a.shift_b[cg] - 2 + side.d;
      if (w == 0) {
        sh.col_u[j] = nm::int64_to_double_rn(a.U_b[cg]);
        sh.col_skip[j] = a.flag_b[cg];
      }
    } else if (w == 0) {
      sh.col_skip[j] = 1;
    }
  }
  for (int i = threadIdx.x; i < (kOz2BoundRows / 32) * W; i += kOz2BoundRows) sh.block_max[i / W][i % W] = 0;
  __syncthreads();
  const int64_t r = int64_t(blockIdx.x) * kOz2BoundRows + threadIdx.x;
  if (a2.lowest_first) {
    // The live counts from the lowest up, one at a time, until the block meets one; the counts other
    // blocks kill meanwhile are skipped.
    while (live) {
      const uint32_t bit = live & (0u - live);
      oz2_bound_rows<1>(a2, r, c0, bit, sh);
      __syncthreads();
      if (threadIdx.x == 0) {
        const int w = __ffs(bit) - 1;
        met = oz2_block_meets(a2, sh, w);
        live_counts = oz2_live_counts(a) & ~((bit << 1) - 1u);  // the live counts above w
      }
      __syncthreads();
      if (met) {
        done |= bit;
        break;
      }
      live = live_counts;
    }
    if (threadIdx.x == 0) *passed = done;
    return;
  }
  for (uint32_t rest = live; rest;) {
    uint32_t group = 0;
    for (int s = 0; s < kOz2BoundSlots && rest; ++s) {
      group |= rest & (0u - rest);  // the lowest live count left
      rest &= rest - 1;
    }
    oz2_bound_rows<kOz2BoundSlots>(a2, r, c0, group, sh);
  }
  __syncthreads();
  if (threadIdx.x < W && live >> threadIdx.x & 1u) oz2_block_meets(a2, sh, threadIdx.x);
}

}  // namespace

cudaError_t launch_oz2_extra_shifts(const int64_t* S_a, int64_t rows_a, int8_t* d_a, const int64_t* S_b, int64_t rows_b,
                                    int8_t* d_b, const Oz2ShiftLimits& limits, cudaStream_t stream) {
  const int64_t rows = rows_a + rows_b;
  if (rows <= 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>((rows + 255) / 256), nm::kModuliWindow);
  oz2_extra_shifts_kernel<<<grid, 256, 0, stream>>>(S_a, rows_a, d_a, S_b, rows_b, d_b, limits);
  return cudaGetLastError();
}

cudaError_t launch_oz2_bound(const Oz2BoundArgs& args, cudaStream_t stream) {
  if (args.base.rows <= 0 || args.base.cols <= 0) return cudaSuccess;
  if (args.lowest_first && (!args.block_passed || args.base.col0 % kOz2BoundCols != 0 || args.settle_index < 0 ||
                            args.settle_index >= 32))
    return cudaErrorInvalidValue;
  if (args.settle && !args.lowest_first) return cudaErrorInvalidValue;
  dim3 grid(static_cast<unsigned>((args.base.rows + kOz2BoundRows - 1) / kOz2BoundRows),
            static_cast<unsigned>((args.base.cols + kOz2BoundCols - 1) / kOz2BoundCols));
  if (grid.y > 65535) return cudaErrorInvalidValue;  // the planner's column chunks keep it below
  // Every live count over fewer than kSplitCountsBelowBlocks blocks: the count groups over grid.z too.
  if (!args.lowest_first && int64_t(grid.x) * grid.y < DecisionPolicy::kSplitCountsBelowBlocks)
    grid.z = (nm::kModuliWindow + kOz2BoundSlots - 1) / kOz2BoundSlots;
  oz2_bound_kernel<<<grid, kOz2BoundRows, 0, stream>>>(args);
  return cudaGetLastError();
}

cudaError_t launch_magnitudes(const OperandView& view, const int32_t* shift, int64_t rows_pad, int64_t kpad,
                              int64_t ld, uint8_t* mag, int64_t* U, int64_t* S, cudaStream_t stream, uint8_t* mag_low) {
  if (rows_pad <= 0 || kpad <= 0) return cudaSuccess;
  const int64_t tiles = tile::count(rows_pad, kpad);
  if (tiles > tile::kMaxTiles) return cudaErrorInvalidValue;
  magnitudes_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(view, shift, rows_pad, kpad, ld, mag, U, S,
                                                                           mag_low);
  return cudaGetLastError();
}

cudaError_t launch_bound(const BoundArgs& args, cudaStream_t stream) {
  if (args.rows <= 0 || args.cols <= 0) return cudaSuccess;
  const dim3 grid = entry_grid(args.rows, args.cols);
  if (grid.y > 65535) return cudaErrorInvalidValue;  // the planner's column chunks keep it below
  bound_kernel<<<grid, kEntryBlock, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace ozgemm
