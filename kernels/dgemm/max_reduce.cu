// Max-reduce of each row of op(A) / column of op(B) into its power-of-two shift and Inf/NaN flag;
// with the accuracy statistics (RowDigits non-null) also the row's exact digit count q and the
// maximum of q over the finite rows (ozgemm/numerics/accuracy.hpp), in the same read.
#include "kernels/dgemm/launch.hpp"
#include "kernels/dgemm/row_stats_split.cuh"
#include "ozgemm/numerics/accuracy.hpp"
#include "ozgemm/numerics/ozaki1.hpp"

namespace ozgemm {
namespace kernels {

namespace nm = ozgemm::numerics;

namespace {

constexpr int kWarps = 8;       // rows per block in the k-contiguous kernel
constexpr int kSplitL = 32;     // l-splits per row in the other kernel (block 32 x kSplitL)
// Few rows: l split over grid.y as well (kSplit; row_stats_split.cuh).

// One element into the running (max, lsb, bad) of a row.
template <bool kDigits>
__device__ __forceinline__ void take(double x, double& mx, int& lsb, int& bad) {
  if (nm::is_finite(x)) {
    mx = fmax(mx, fabs(x));
    if (kDigits && x != 0.0) lsb = min(lsb, nm::lowest_bit_exponent(x));
  } else {
    bad = 1;
  }
}

// Writes one row's results.
template <bool kDigits>
__device__ __forceinline__ void finish(int64_t r, double mx, int lsb, int bad, int32_t* shift, int32_t* flag,
                                       RowDigits digits) {
  const int32_t sh = nm::shift_from_max(mx);
  shift[r] = sh;
  flag[r] = bad;
  if (kDigits) {
    const int32_t q = nm::exact_digits(sh, lsb);
    digits.q[r] = q;
    if (!bad) atomicMax(digits.q_max, q);
  }
}

// k-contiguous rows (stride_l == 1): one warp per row, lanes stride over l (kSplit: over the l's of
// this blockIdx.y, every gridDim.y-th group of 32).
template <bool kDigits, bool kSplit>
__global__ void row_shifts_kcontig_kernel(OperandView v, int64_t rows_pad, int32_t* shift, int32_t* flag,
                                          RowDigits digits) {
  const int lane = threadIdx.x & 31;
  const int64_t r = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (r >= rows_pad) return;
  double mx = 0.0;
  int bad = 0, lsb = nm::kNoDigits;
  if (r < v.rows) {
    const double* row = v.ptr + r * v.stride_r;
    const int64_t step = int64_t(32) * gridDim.y;
    for (int64_t l = int64_t(blockIdx.y) * 32 + lane; l < v.k; l += step) take<kDigits>(row[l], mx, lsb, bad);
  }
  for (int o = 16; o > 0; o >>= 1) {
    mx = fmax(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    bad |= __shfl_xor_sync(0xffffffffu, bad, o);
    if (kDigits) lsb = min(lsb, __shfl_xor_sync(0xffffffffu, lsb, o));
  }
  if (lane != 0) return;
  if (kSplit)
    row_split::partial(r, mx, lsb, bad, shift, flag, kDigits ? digits.q : nullptr);
  else
    finish<kDigits>(r, mx, lsb, bad, shift, flag, digits);
}

// Other layouts (row-contiguous when stride_r == 1): threadIdx.x picks the row, so a warp
// reads 32 consecutive doubles when stride_r == 1; threadIdx.y splits l (kSplit: and blockIdx.y).
template <bool kDigits, bool kSplit>
__global__ void row_shifts_rcontig_kernel(OperandView v, int64_t rows_pad, int32_t* shift, int32_t* flag,
                                          RowDigits digits) {
  __shared__ double smax[kSplitL][33];
  __shared__ int sbad[kSplitL][33];
  __shared__ int slsb[kDigits ? kSplitL : 1][33];
  const int64_t r = int64_t(blockIdx.x) * 32 + threadIdx.x;
  double mx = 0.0;
  int bad = 0, lsb = nm::kNoDigits;
  if (r < v.rows) {
    const int64_t step = int64_t(kSplitL) * gridDim.y;
#pragma unroll 4
    for (int64_t l = int64_t(blockIdx.y) * kSplitL + threadIdx.y; l < v.k; l += step)
      take<kDigits>(v.ptr[r * v.stride_r + l * v.stride_l], mx, lsb, bad);
  }
  smax[threadIdx.y][threadIdx.x] = mx;
  sbad[threadIdx.y][threadIdx.x] = bad;
  if (kDigits) slsb[threadIdx.y][threadIdx.x] = lsb;
  __syncthreads();
  if (threadIdx.y == 0 && r < rows_pad) {
    for (int w = 1; w < kSplitL; ++w) {
      mx = fmax(mx, smax[w][threadIdx.x]);
      bad |= sbad[w][threadIdx.x];
      if (kDigits) lsb = min(lsb, slsb[w][threadIdx.x]);
    }
    if (kSplit)
      row_split::partial(r, mx, lsb, bad, shift, flag, kDigits ? digits.q : nullptr);
    else
      finish<kDigits>(r, mx, lsb, bad, shift, flag, digits);
  }
}

template <bool kDigits>
cudaError_t launch(const OperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag, RowDigits digits,
                   cudaStream_t stream) {
  const bool kcontig = view.stride_l == 1;
  const int64_t row_blocks = kcontig ? (rows_pad + kWarps - 1) / kWarps : (rows_pad + 31) / 32;
  const int64_t splits = row_split::l_splits(row_blocks, view.k, kcontig ? 32 : kSplitL);
  const dim3 grid(static_cast<unsigned>(row_blocks), static_cast<unsigned>(splits));
  if (splits > 1) {
    const cudaError_t e = row_split::begin(rows_pad, shift, flag, digits, stream);
    if (e != cudaSuccess) return e;
    if (kcontig)
      row_shifts_kcontig_kernel<kDigits, true><<<grid, 32 * kWarps, 0, stream>>>(view, rows_pad, shift, flag, digits);
    else
      row_shifts_rcontig_kernel<kDigits, true><<<grid, dim3(32, kSplitL), 0, stream>>>(view, rows_pad, shift, flag, digits);
    const cudaError_t launched = cudaGetLastError();
    return launched != cudaSuccess ? launched : row_split::finish(rows_pad, shift, flag, digits, stream);
  } else if (kcontig) {
    row_shifts_kcontig_kernel<kDigits, false><<<grid, 32 * kWarps, 0, stream>>>(view, rows_pad, shift, flag, digits);
  } else {
    row_shifts_rcontig_kernel<kDigits, false><<<grid, dim3(32, kSplitL), 0, stream>>>(view, rows_pad, shift, flag, digits);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_row_shifts(const OperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag,
                              RowDigits digits, cudaStream_t stream) {
  if (rows_pad <= 0) return cudaSuccess;
  return digits.q ? launch<true>(view, rows_pad, shift, flag, digits, stream)
                  : launch<false>(view, rows_pad, shift, flag, digits, stream);
}

cudaError_t check_kernel_image() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, row_shifts_kcontig_kernel<false, false>);
}

}  // namespace kernels
}  // namespace ozgemm
