// Max-reduce of each row of op(A) / column of op(B) into its power-of-two shift and Inf/NaN flag;
// with the accuracy statistics (RowDigits non-null) also the row's exact digit count q and the
// maximum of q over the finite rows (ozgemm/numerics/accuracy.hpp), in the same read.
#include "kernels/dgemm/launch.hpp"
#include "ozgemm/numerics/accuracy.hpp"
#include "ozgemm/numerics/ozaki1.hpp"

namespace ozgemm {
namespace kernels {

namespace nm = ozgemm::numerics;

namespace {

constexpr int kWarps = 8;       // rows per block in the k-contiguous kernel
constexpr int kSplitL = 32;     // l-splits per row in the other kernel (block 32 x kSplitL)

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

// k-contiguous rows (stride_l == 1): one warp per row, lanes stride over l.
template <bool kDigits>
__global__ void row_shifts_kcontig_kernel(OperandView v, int64_t rows_pad, int32_t* shift, int32_t* flag,
                                          RowDigits digits) {
  const int lane = threadIdx.x & 31;
  const int64_t r = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (r >= rows_pad) return;
  double mx = 0.0;
  int bad = 0, lsb = nm::kNoDigits;
  if (r < v.rows) {
    const double* row = v.ptr + r * v.stride_r;
    for (int64_t l = lane; l < v.k; l += 32) take<kDigits>(row[l], mx, lsb, bad);
  }
  for (int o = 16; o > 0; o >>= 1) {
    mx = fmax(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    bad |= __shfl_xor_sync(0xffffffffu, bad, o);
    if (kDigits) lsb = min(lsb, __shfl_xor_sync(0xffffffffu, lsb, o));
  }
  if (lane == 0) finish<kDigits>(r, mx, lsb, bad, shift, flag, digits);
}

// Other layouts (row-contiguous when stride_r == 1): threadIdx.x picks the row, so a warp
// reads 32 consecutive doubles when stride_r == 1; threadIdx.y splits l.
template <bool kDigits>
__global__ void row_shifts_rcontig_kernel(OperandView v, int64_t rows_pad, int32_t* shift, int32_t* flag,
                                          RowDigits digits) {
  __shared__ double smax[kSplitL][33];
  __shared__ int sbad[kSplitL][33];
  __shared__ int slsb[kDigits ? kSplitL : 1][33];
  const int64_t r = int64_t(blockIdx.x) * 32 + threadIdx.x;
  double mx = 0.0;
  int bad = 0, lsb = nm::kNoDigits;
  if (r < v.rows) {
#pragma unroll 4
    for (int64_t l = threadIdx.y; l < v.k; l += kSplitL) take<kDigits>(v.ptr[r * v.stride_r + l * v.stride_l], mx, lsb, bad);
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
    finish<kDigits>(r, mx, lsb, bad, shift, flag, digits);
  }
}

template <bool kDigits>
void launch(const OperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag, RowDigits digits,
            cudaStream_t stream) {
  if (view.stride_l == 1) {
    const dim3 grid(static_cast<unsigned>((rows_pad + kWarps - 1) / kWarps));
    row_shifts_kcontig_kernel<kDigits><<<grid, 32 * kWarps, 0, stream>>>(view, rows_pad, shift, flag, digits);
  } else {
    const dim3 grid(static_cast<unsigned>((rows_pad + 31) / 32));
    row_shifts_rcontig_kernel<kDigits><<<grid, dim3(32, kSplitL), 0, stream>>>(view, rows_pad, shift, flag, digits);
  }
}

}  // namespace

cudaError_t launch_row_shifts(const OperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag,
                              RowDigits digits, cudaStream_t stream) {
  if (rows_pad <= 0) return cudaSuccess;
  if (digits.q)
    launch<true>(view, rows_pad, shift, flag, digits, stream);
  else
    launch<false>(view, rows_pad, shift, flag, digits, stream);
  return cudaGetLastError();
}

cudaError_t check_kernel_image() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, row_shifts_kcontig_kernel<false>);
}

}  // namespace kernels
}  // namespace ozgemm
