// The accuracy decision's kernels (ozgemm/numerics/accuracy.hpp): the magnitude digits and U of an
// operand, and the per-entry reduction of the bound over the magnitude product. The same functions
// as the host reference (src/reference/accuracy_reference.cpp), so both choose the same count.
#include "kernels/dgemm/launch.hpp"
#include "kernels/dgemm/operand_tile.cuh"
#include "ozgemm/numerics/accuracy.hpp"

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
                                                               int64_t* __restrict__ S) {
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
      mag[r * ld + l] = finite ? static_cast<uint8_t>(nm::magnitude_digit(x, sh)) : 0;
      if (finite) {
        usum += static_cast<unsigned long long>(nm::unit_term(x, sh));
        if (S) ssum += static_cast<unsigned long long>(nm::oz2_norm_term(x, sh - 1));
      }
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

__global__ void oz2_extra_shifts_kernel(const int64_t* __restrict__ S, int64_t rows_pad, nm::Ozaki2Constants c,
                                        int8_t* __restrict__ d) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows_pad) d[r] = static_cast<int8_t>(nm::oz2_extra_shift(S[r], c));
}

// One thread per row and kOz2BoundCols columns (the row's sides computed once, the shuffles of the
// reduction amortised over the columns), every N of the window; maxima as in bound_kernel.
constexpr int kOz2BoundCols = 16;
__global__ void __launch_bounds__(256) oz2_bound_kernel(Oz2BoundArgs a2) {
  constexpr int W = nm::kModuliWindow;
  const BoundArgs& a = a2.base;
  __shared__ unsigned long long r_red[8][W];
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t c_begin = (int64_t(blockIdx.y) * blockDim.y + threadIdx.y) * kOz2BoundCols;
  unsigned long long ratio[W];
#pragma unroll
  for (int w = 0; w < W; ++w) ratio[w] = 0;
  if (r < a.rows && !a.flag_a[r]) {
    nm::Oz2Side row[W];
#pragma unroll
    for (int w = 0; w < W; ++w) row[w] = nm::oz2_side(a.q_a[r], a2.d_a[w * a2.d_stride_a + r]);
    const double u_row = nm::int64_to_double_rn(a.U_a[r]);
    const int32_t sigma_row = a.shift_a[r];
    for (int j = 0; j < kOz2BoundCols; ++j) {
      const int64_t c = c_begin + j;
      if (c >= a.cols) break;
      const int64_t cg = a.col0 + c;
      if (a.flag_b[cg]) continue;
      int64_t P = 0;
      for (int b = 0; b < a.pblocks; ++b) P += a.P[b * a.plane_elems + r + c * a.ld];
      const double inv_P = nm::oz2_inverse(P), u_col = nm::int64_to_double_rn(a.U_b[cg]);
      const int32_t sigma_sum = sigma_row + a.shift_b[cg], q_col = a.q_b[cg];
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const nm::Oz2Side col = nm::oz2_side(q_col, a2.d_b[w * a2.d_stride_b + cg]);
        const double R = nm::oz2_entry_ratio(inv_P, u_row, u_col, row[w], col, sigma_sum, a2.recon_abs_u[w]);
        ratio[w] = max(ratio[w], static_cast<unsigned long long>(nm::bits_of(R)));
      }
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
#pragma unroll
    for (int w = 0; w < W; ++w) ratio[w] = max(ratio[w], __shfl_xor_sync(0xffffffffu, ratio[w], o));
  }
  const int tid = threadIdx.x + threadIdx.y * blockDim.x, warp = tid >> 5, lane = tid & 31;
  if (lane == 0) {
#pragma unroll
    for (int w = 0; w < W; ++w) r_red[warp][w] = ratio[w];
  }
  __syncthreads();
  if (tid < W) {
    const int warps = (blockDim.x * blockDim.y + 31) / 32;
    unsigned long long m = 0;
    for (int i = 0; i < warps; ++i) m = max(m, r_red[i][tid]);
    if (m) atomicMax(&a.result->oz2_ratio_max[tid], m);
  }
}

}  // namespace

cudaError_t launch_oz2_extra_shifts(const int64_t* S, int64_t rows_pad, const nm::Ozaki2Constants& c, int8_t* d,
                                    cudaStream_t stream) {
  if (rows_pad <= 0) return cudaSuccess;
  oz2_extra_shifts_kernel<<<static_cast<unsigned>((rows_pad + 255) / 256), 256, 0, stream>>>(S, rows_pad, c, d);
  return cudaGetLastError();
}

cudaError_t launch_oz2_bound(const Oz2BoundArgs& args, cudaStream_t stream) {
  if (args.base.rows <= 0 || args.base.cols <= 0) return cudaSuccess;
  const dim3 grid = entry_grid(args.base.rows, (args.base.cols + kOz2BoundCols - 1) / kOz2BoundCols);
  if (grid.y > 65535) return cudaErrorInvalidValue;  // the planner's column chunks keep it below
  oz2_bound_kernel<<<grid, kEntryBlock, 0, stream>>>(args);
  return cudaGetLastError();
}

cudaError_t launch_magnitudes(const OperandView& view, const int32_t* shift, int64_t rows_pad, int64_t kpad,
                              int64_t ld, uint8_t* mag, int64_t* U, int64_t* S, cudaStream_t stream) {
  if (rows_pad <= 0 || kpad <= 0) return cudaSuccess;
  const int64_t tiles = tile::count(rows_pad, kpad);
  if (tiles > tile::kMaxTiles) return cudaErrorInvalidValue;
  magnitudes_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(view, shift, rows_pad, kpad, ld, mag, U, S);
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
