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

// Fused Hopper (sm_90a) kernel: TMA + wgmma s8 x s8 -> s32 through CUTLASS's warp-specialized
// mainloop collective, one CTA per tile of C, looping over the anti-diagonals d = s-1 .. 0 and,
// within each, over the k-blocks b of the slice layout (src/planner.hpp, kblock a multiple of
// 128); each (d, b) is one contiguous k-range. Fully fused: each diagonal's exact sum over the
// k-blocks (kernels/fused_tile_epilogue.cuh) is converted and summed in FP64 registers in the
// order of ozgemm/numerics.hpp and C is written once. Partially fused: the int32 tile of (d, b)
// goes to plane d * kblocks + b of `planes` (the unfused layout) and
// launch_reconstruct_epilogue finishes.
struct FusedArgs {
  const int8_t* slices_a;  // rows of op(A), slices reversed
  const int8_t* slices_b;  // columns of op(B), slices in order
  int64_t ld_slices, m_pad, n_pad, kblock, kblocks;
  int s;
  int64_t m, n;
  const int32_t *shift_a, *shift_b, *flag_a, *flag_b;
  // fully fused
  double alpha, beta;
  double* C;
  int64_t ldc;
  OperandView a, b;
  // fully fused, FusedMode::FullyGlobal: the FP64 sum of entry (r, c) of C at acc[r + c * ld_acc]
  double* acc;
  int64_t ld_acc;
  // fully fused with kblocks > 1: int64 running sums of the k-blocks before the last, one per
  // entry of every tile of the grid (launchers check spill_capacity; fused_tile_epilogue.cuh).
  int64_t* spill;
  int64_t spill_capacity;
  // partially fused: this launch covers rows row0 .. row0+rows-1 and columns col0 .. col0+cols-1
  // (row0 a multiple of 128, col0 of 256); plane d at planes + d * plane_elems, element (r, c) of the
  // chunk at r + c * ld_plane.
  int32_t* planes;
  int64_t plane_elems, ld_plane;
  int64_t row0, col0, rows, cols;
};
// What the consumers do with each diagonal: Partial stores int32 planes; FullyRegisters sums in
// FP64 registers and writes C once; FullyGlobal read-modify-writes the FP64 sum in args.acc
// once per diagonal (the tutorial's version) and writes C after the last. Same bits.
enum class FusedMode { Partial, FullyRegisters, FullyGlobal };
// Tiles: 128 rows, 128-deep k; 128 columns (FullyRegisters) or 256 (Partial, FullyGlobal).
constexpr int kFusedTileM = 128, kFusedTileK = 128, kFusedMaxTileN = 256;
// cudaErrorNotSupported when this build has no sm_90a code (OZGEMM_CUDA_ARCHITECTURES).
cudaError_t launch_fused_sm90(const FusedArgs& args, FusedMode mode, cudaStream_t stream);
bool fused_sm90_built();
// The portable fused kernel (kernels/fused_ozaki_sm80.cu): mma.sync s8 + cp.async, sm_80 and
// newer, 128 x 128 tiles, k-tiles of 64; same FusedArgs and semantics as launch_fused_sm90.
cudaError_t launch_fused_portable(const FusedArgs& args, FusedMode mode, cudaStream_t stream);
bool fused_portable_built();

// C = beta * C (beta == 0: C = 0 without reading C), the BLAS quick return for k == 0 or alpha == 0.
cudaError_t launch_scale_c(int64_t m, int64_t n, double beta, double* C, int64_t ldc, cudaStream_t stream);

// Probe: cudaSuccess when this build has device code for the current device.
cudaError_t check_kernel_image();

}  // namespace kernels
}  // namespace ozgemm
