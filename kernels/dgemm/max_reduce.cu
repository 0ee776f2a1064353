// Max-reduce of each row of op(A) / column of op(B) into its power-of-two shift.
#include "kernels/dgemm/launch.hpp"
#include "ozgemm/numerics/ozaki1.hpp"

namespace ozgemm {
namespace kernels {

namespace nm = ozgemm::numerics;

namespace {

constexpr int kWarps = 8;       // rows per block in the k-contiguous kernel
constexpr int kSplitL = 32;     // l-splits per row in the other kernel (block 32 x kSplitL)

// k-contiguous rows (stride_l == 1): one warp per row, lanes stride over l.
__global__ void row_shifts_kcontig_kernel(OperandView v, int64_t rows_pad, int32_t* shift, int32_t* flag) {
  const int lane = threadIdx.x & 31;
  const int64_t r = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (r >= rows_pad) return;
  double mx = 0.0;
  int bad = 0;
  if (r < v.rows) {
    const double* row = v.ptr + r * v.stride_r;
    for (int64_t l = lane; l < v.k; l += 32) {
      const double x = row[l];
      if (nm::is_finite(x)) mx = fmax(mx, fabs(x)); else bad = 1;
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    mx = fmax(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    bad |= __shfl_xor_sync(0xffffffffu, bad, o);
  }
  if (lane == 0) {
    shift[r] = nm::shift_from_max(mx);
    flag[r] = bad;
  }
}

// Other layouts (row-contiguous when stride_r == 1): threadIdx.x picks the row, so a warp
// reads 32 consecutive doubles when stride_r == 1; threadIdx.y splits l.
__global__ void row_shifts_rcontig_kernel(OperandView v, int64_t rows_pad, int32_t* shift, int32_t* flag) {
  __shared__ double smax[kSplitL][33];
  __shared__ int sbad[kSplitL][33];
  const int64_t r = int64_t(blockIdx.x) * 32 + threadIdx.x;
  double mx = 0.0;
  int bad = 0;
  if (r < v.rows) {
#pragma unroll 4
    for (int64_t l = threadIdx.y; l < v.k; l += kSplitL) {
      const double x = v.ptr[r * v.stride_r + l * v.stride_l];
      if (nm::is_finite(x)) mx = fmax(mx, fabs(x)); else bad = 1;
    }
  }
  smax[threadIdx.y][threadIdx.x] = mx;
  sbad[threadIdx.y][threadIdx.x] = bad;
  __syncthreads();
  if (threadIdx.y == 0 && r < rows_pad) {
    for (int w = 1; w < kSplitL; ++w) {
      mx = fmax(mx, smax[w][threadIdx.x]);
      bad |= sbad[w][threadIdx.x];
    }
    shift[r] = nm::shift_from_max(mx);
    flag[r] = bad;
  }
}

}  // namespace

cudaError_t launch_row_shifts(const OperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag,
                              cudaStream_t stream) {
  if (rows_pad <= 0) return cudaSuccess;
  if (view.stride_l == 1) {
    const dim3 grid(static_cast<unsigned>((rows_pad + kWarps - 1) / kWarps));
    row_shifts_kcontig_kernel<<<grid, 32 * kWarps, 0, stream>>>(view, rows_pad, shift, flag);
  } else {
    const dim3 grid(static_cast<unsigned>((rows_pad + 31) / 32));
    row_shifts_rcontig_kernel<<<grid, dim3(32, kSplitL), 0, stream>>>(view, rows_pad, shift, flag);
  }
  return cudaGetLastError();
}

cudaError_t check_kernel_image() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, row_shifts_kcontig_kernel);
}

}  // namespace kernels
}  // namespace ozgemm
