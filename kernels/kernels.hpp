// kernels/kernels.hpp — launchers of the unfused path's device kernels. Plain arguments only:
// kernels never see the planner; src/dispatch.cpp translates a Plan into these calls.
//
// An operand is viewed as `rows x k`, element (r, l) at X[r * stride_r + l * stride_l]:
//   rows of op(A):    N: stride_r = 1,   stride_l = lda      T: stride_r = lda, stride_l = 1
//   columns of op(B): N: stride_r = ldb, stride_l = 1        T: stride_r = 1,   stride_l = ldb
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace ozgemm {
namespace kernels {

struct OperandView {
  const double* ptr;
  int64_t rows, k;
  int64_t stride_r, stride_l;
};

// For each of rows_pad rows: shift[r] = numerics::shift_from_max(max finite |X(r, :)|) and
// flag[r] = 1 if the row holds Inf/NaN (0 otherwise). Rows >= view.rows get shift 0, flag 0.
cudaError_t launch_row_shifts(const OperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag,
                              cudaStream_t stream);

// Writes the s slices of every element into the k-blocked layout of src/planner.hpp:
//   out[r * ld + b * (s * kblock) + pos(i) * kblock + q] = digit_i(X(r, b * kblock + q)),
//   pos(i) = reversed ? s - 1 - i : i.
// Covers rows_pad rows and kblocks * kblock columns; padding (r >= rows or l >= k) gets zeros.
cudaError_t launch_slice(const OperandView& view, const int32_t* shift, int s, bool reversed, int64_t rows_pad,
                         int64_t kblock, int64_t kblocks, int64_t ld, int8_t* out, cudaStream_t stream);

struct EpilogueArgs {
  // int32 planes: plane(d, b)[r + c * ld_plane], d < slices, b < kblocks; r, c local to the chunk.
  const int32_t* planes;
  int64_t plane_elems;  // elements per plane
  int64_t ld_plane;
  int slices, kblocks;
  // This chunk covers rows row0 .. row0 + m_rows - 1 and columns col0 .. col0 + n_cols - 1 of C.
  int64_t row0, m_rows, col0, n_cols;
  const int32_t *shift_a, *shift_b, *flag_a, *flag_b;  // indexed by global row / column
  double alpha, beta;
  double* C;
  int64_t ldc;
  // Raw operands, read only for entries whose row/column holds Inf/NaN.
  OperandView a, b;
};
// C(r, col0 + c) = reconstruct_epilogue, in the order of ozgemm/numerics.hpp.
cudaError_t launch_reconstruct_epilogue(const EpilogueArgs& args, cudaStream_t stream);

// C = beta * C (beta == 0: C = 0 without reading C), the BLAS quick return for k == 0 or alpha == 0.
cudaError_t launch_scale_c(int64_t m, int64_t n, double beta, double* C, int64_t ldc, cudaStream_t stream);

// Probe: cudaSuccess when this build has device code for the current device.
cudaError_t check_kernel_image();

}  // namespace kernels
}  // namespace ozgemm
