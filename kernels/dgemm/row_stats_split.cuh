// kernels/dgemm/row_stats_split.cuh — the row statistics (shift, Inf/NaN flag, exact digits) of few
// rows with each row's l range split over blocks as well (max_reduce.cu's real kernels,
// ozaki2_complex.cu's oz2c_max_kernel).
//
// With few rows (the decision's sample: 512 rows of op(A), 1024 columns of op(B); small problems) the
// row blocks alone leave most SMs idle: the sample's 512 strided rows took 122 us (real) and 370 us
// (complex) at k = 8192 in 16 blocks. Split, each block's partial result of a row meets the others'
// in the output arrays through atomics (partial), and finish_kernel turns them into the values the
// one-pass kernels write, bit for bit:
//   shift: the minimum of shift_from_max over the partial maxima. shift_from_max is non-increasing in
//          the magnitude of a non-zero finite value (it is the largest s with |x| 2^s <= 127), so the
//          minimum is the shift of the row's maximum; no non-zero finite element: shift_from_max(0).
//   flag:  the or of the partial flags.
//   q:     exact_digits(shift, the minimum of the partial lowest set bits).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/dgemm/launch.hpp"
#include "kernels/dgemm/policy.hpp"
#include "ozgemm/numerics/accuracy.hpp"
#include "ozgemm/numerics/ozaki1.hpp"

namespace ozgemm {
namespace kernels {
namespace row_split {

constexpr unsigned char kUnsetByte = 0x7f;  // memset byte of the shift and lsb accumulators
constexpr int32_t kUnset = 0x7f7f7f7f;      // "no non-zero finite element yet": above every shift and lsb

// The l-splits for `row_blocks` blocks whose threads of a row cover `lanes` consecutive l at a time
// (RowStatsPolicy; 1: no split, where the row blocks fill the GPU or the rows are short).
inline int64_t l_splits(int64_t row_blocks, int64_t k, int64_t lanes) {
  if (row_blocks >= RowStatsPolicy::kSplitBelowBlocks) return 1;
  const int64_t want = (RowStatsPolicy::kSplitBelowBlocks + row_blocks - 1) / row_blocks;
  const int64_t most = k / (lanes * RowStatsPolicy::kMinPerThread);
  return std::max<int64_t>(1, std::min<int64_t>({want, most, 65535}));
}

// One block's part of row r (its finite maximum, lowest set bit, any Inf/NaN) into the accumulators;
// lsb_min null: no digits.
__device__ __forceinline__ void partial(int64_t r, double mx, int lsb, int bad, int32_t* shift, int32_t* flag,
                                        int32_t* lsb_min) {
  if (mx > 0.0) atomicMin(shift + r, numerics::shift_from_max(mx));
  if (bad) atomicOr(flag + r, 1);
  if (lsb_min && lsb != numerics::kNoDigits) atomicMin(lsb_min + r, lsb);
}

namespace {
__global__ void finish_kernel(int64_t rows_pad, int32_t* shift, int32_t* flag, RowDigits digits) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows_pad) return;
  const int32_t sh = shift[r] == kUnset ? numerics::shift_from_max(0.0) : shift[r];
  shift[r] = sh;
  if (digits.q) {
    const int32_t q = numerics::exact_digits(sh, digits.q[r] == kUnset ? numerics::kNoDigits : digits.q[r]);
    digits.q[r] = q;
    if (!flag[r]) atomicMax(digits.q_max, q);
  }
}
}  // namespace

// Before the split kernel: the accumulators of rows [0, rows_pad) (digits.q holds the lsb until finish).
inline cudaError_t begin(int64_t rows_pad, int32_t* shift, int32_t* flag, RowDigits digits, cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(shift, kUnsetByte, sizeof(int32_t) * size_t(rows_pad), stream);
  if (e == cudaSuccess) e = cudaMemsetAsync(flag, 0, sizeof(int32_t) * size_t(rows_pad), stream);
  if (e == cudaSuccess && digits.q) e = cudaMemsetAsync(digits.q, kUnsetByte, sizeof(int32_t) * size_t(rows_pad), stream);
  return e;
}

// After it: the rows' shifts, flags and digits (and digits.q_max over the finite rows).
inline cudaError_t finish(int64_t rows_pad, int32_t* shift, int32_t* flag, RowDigits digits, cudaStream_t stream) {
  finish_kernel<<<static_cast<unsigned>((rows_pad + 255) / 256), 256, 0, stream>>>(rows_pad, shift, flag, digits);
  return cudaGetLastError();
}

}  // namespace row_split
}  // namespace kernels
}  // namespace ozgemm
