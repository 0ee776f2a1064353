// kernels/dgemm/launch.hpp — launchers of the Ozaki-I kernels. Plain arguments only: kernels read
// their configurations from policy.hpp and never see the planner; src/dispatch translates a Plan
// into these calls. Layouts of the intermediate buffers: ozgemm/numerics/slice_layout.hpp.
//
// An operand is viewed as `rows x k`, element (r, l) at X[r * stride_r + l * stride_l]:
//   rows of op(A):    N: stride_r = 1,   stride_l = lda      T: stride_r = lda, stride_l = 1
//   columns of op(B): N: stride_r = ldb, stride_l = 1        T: stride_r = 1,   stride_l = ldb
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "kernels/dgemm/policy.hpp"
#include "ozgemm/numerics/accuracy.hpp"
#include "ozgemm/numerics/ozaki2.hpp"
#include "ozgemm/numerics/slice_layout.hpp"

namespace ozgemm {
namespace kernels {

struct OperandView {
  const double* ptr;
  int64_t rows, k;
  int64_t stride_r, stride_l;
};
// A complex operand (cuDoubleComplex's layout: double2 = (re, im)) viewed as rows x k, element (r, l)
// at X[r * stride_r + l * stride_l] (strides in complex elements, as OperandView's), conjugated
// where conj (op C). Rows of op(A) and columns of op(B) as for OperandView.
struct ComplexOperandView {
  const double2* ptr;
  int64_t rows, k;
  int64_t stride_r, stride_l;
  bool conj;
};

// The accuracy statistics the max-reduce can add (numerics/accuracy.hpp): q[r] = the row's exact
// digit count, and *q_max = max of q over the finite rows (atomicMax; the caller initialises it).
struct RowDigits {
  int32_t* q = nullptr;  // nullptr: shifts and flags only
  int32_t* q_max = nullptr;
};

// For each of rows_pad rows: shift[r] = numerics::shift_from_max(max finite |X(r, :)|) and
// flag[r] = 1 if the row holds Inf/NaN (0 otherwise). Rows >= view.rows get shift 0, flag 0.
cudaError_t launch_row_shifts(const OperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag,
                              RowDigits digits, cudaStream_t stream);

// The accuracy decision's second pass over an operand (numerics/accuracy.hpp), after the shifts:
// mag[r * ld + l] = magnitude_digit(X(r, l)) for r < rows_pad, l < kpad (0 for padding and Inf/NaN),
// and U[r] += sum over the row of unit_term (U zeroed by the caller); with S (Ozaki-II's candidate,
// zeroed by the caller) also S[r] += sum of oz2_norm_term(x, shift - 1), the Ozaki-II scaling's norm;
// with mag_low also mag_low[r * ld + l] = magnitude_low_digit (the finer lower bound's second digit).
cudaError_t launch_magnitudes(const OperandView& view, const int32_t* shift, int64_t rows_pad, int64_t kpad,
                              int64_t ld, uint8_t* mag, int64_t* U, int64_t* S, cudaStream_t stream,
                              uint8_t* mag_low = nullptr);

// The decision's reduction over the entries of one column chunk of C (rows x cols, columns
// col0 ..): each finite entry's smallest count s >= s_from with R(s) <= target (max into
// result->s_max, kMaxSlices + 1: none) and the maxima of R(s_from .. s_from + kSliceWindow - 1)
// (result->ratio_max, as the bits of non-negative doubles). P: pblocks int32 planes of the
// magnitude product (entry (r, c) of plane b at P[b * plane_elems + r + c * ld]), summed exactly.
struct DecisionResult {
  int32_t q_max_a, q_max_b;  // launch_row_shifts' maxima
  int32_t s_max;
  // Ozaki-II (launch_oz2_bound): bit w set once some entry's R2(kMinModuli + w) is known to exceed
  // the target; later blocks skip that count (its maximum then stays a lower bound above the target).
  uint32_t oz2_dead;
  unsigned long long ratio_max[numerics::kSliceWindow];
  // Ozaki-II (launch_oz2_bound): the maxima of R2(N), N = kMinModuli + w, as bits, over the blocks that
  // evaluated N (every block, for the smallest count no block exceeded, once the passes settled).
  unsigned long long oz2_ratio_max[numerics::kModuliWindow];
  // Ozaki-II, lowest-first passes: bit i set when settle pass i marked a count dead (another pass needed).
  uint32_t oz2_settle_deaths;
};
struct BoundArgs {
  const int32_t* P;
  int64_t ld, plane_elems;
  int pblocks;
  int64_t rows, cols, col0;
  const int32_t *shift_a, *shift_b, *flag_a, *flag_b, *q_a, *q_b;  // by global row / column
  const int64_t *U_a, *U_b;
  int64_t k;
  int s_from;
  double target;
  DecisionResult* result;
};
cudaError_t launch_bound(const BoundArgs& args, cudaStream_t stream);

// Ozaki-II's decision (numerics/accuracy.hpp, R2): for every count N = kMinModuli + w of the
// window, d[w * rows_pad + r] = oz2_extra_shift(S[r], limits.limit[w]), for the rows_a rows of A
// and the rows_b columns of B, in one launch.
struct Oz2ShiftLimits {
  int64_t limit[numerics::kModuliWindow][numerics::kOz2Limits];  // Ozaki2Constants::limit of each N
};
cudaError_t launch_oz2_extra_shifts(const int64_t* S_a, int64_t rows_a, int8_t* d_a, const int64_t* S_b, int64_t rows_b,
                                    int8_t* d_b, const Oz2ShiftLimits& limits, cudaStream_t stream);
// The maxima of R2(N) over the finite entries of one column chunk of C into result->oz2_ratio_max (as
// bits), skipping the counts result->oz2_dead marks (a count is marked when a block's maximum exceeds
// base.target: its maximum then exceeds the target too, and only the counts that meet it are read).
// The decision takes the smallest count no block exceeds. R2 is not monotone in N, so a block that
// meets the target at one count says nothing of the next; two ways to reach the same decision:
//   all live counts (lowest_first false): every block evaluates every count not yet dead;
//   lowest first (the whole of C in one chunk): a block evaluates its live counts from the lowest up
//     and stops at the first one it meets, adding that count to its word of block_passed (counts it
//     evaluated and met). A later block may kill that count; then settle passes (settle true, the
//     same arguments) make every block whose word lacks the lowest live count evaluate from there
//     up. A settle pass in which no count died leaves every block having evaluated and met the
//     lowest live count: the decision, with its exact maximum (result->oz2_settle_deaths bit
//     settle_index says another pass is needed). Typically one count a block, against 4-6.
// d_a: kModuliWindow tables of the rows' extra shifts (N = kMinModuli + w at d_a + w * d_stride_a),
// likewise d_b; the product, statistics and result as in `base` (its k and s_from unused).
struct Oz2BoundArgs {
  BoundArgs base;
  const int8_t *d_a, *d_b;
  int64_t d_stride_a, d_stride_b;
  double recon_abs_u[numerics::kModuliWindow];  // of each count's moduli set (complex data: oz2c_recon_abs_u)
  // Complex data (the 2M scheme's R2c, numerics/ozaki2_complex.hpp): the sides are oz2c_side's (the
  // excess terms times sqrt2), d_a / d_b and recon_abs_u the complex set's.
  bool complex_data = false;
  // The rounding's cross term of the column side: oz2_rounding_cross(k), complex oz2c_rounding_cross(k).
  double rounding_cross = 0.0;
  // Real data, optional: the finer lower bound P14 = 2^14 P + 2^7 X + Y (numerics::oz2_fine_lower_bound)
  // in place of P. X: xblocks int32 planes, Y: base.pblocks planes, both in P's layout (entry (r, c) of
  // plane b at b * base.plane_elems + r + c * base.ld), each summed exactly: any exact split of
  // X = sum_l mag(a) low(b) + low(a) mag(b) and Y = sum_l low(a) low(b) over the planes. nullptr: P.
  const int32_t* X = nullptr;
  const int32_t* Y = nullptr;
  int xblocks = 0;
  // Lowest first: one word a block of DecisionPolicy::kBoundRows rows x kBoundCols columns of C
  // (DecisionPolicy::bound_blocks words, row blocks fastest); base.col0 a multiple of kBoundCols.
  bool lowest_first = false;
  bool settle = false;
  int settle_index = 0;  // < 32
  uint32_t* block_passed = nullptr;
};
cudaError_t launch_oz2_bound(const Oz2BoundArgs& args, cudaStream_t stream);

// Writes the layout.s slices of every element at layout.offset(r, i, l) (SliceLayout), for
// rows_pad rows and layout.kblocks * layout.kblock columns; padding (r >= rows or l >= k) gets zeros.
cudaError_t launch_slice(const OperandView& view, const int32_t* shift, const numerics::SliceLayout& layout,
                         int64_t rows_pad, int8_t* out, cudaStream_t stream);

struct EpilogueArgs {
  // int32 planes of this chunk (PlaneLayout; r, c local to the chunk).
  const int32_t* planes;
  numerics::PlaneLayout layout;
  // This chunk covers rows row0 .. row0 + m_rows - 1 and columns col0 .. col0 + n_cols - 1 of C.
  int64_t row0, m_rows, col0, n_cols;
  const int32_t *shift_a, *shift_b, *flag_a, *flag_b;  // indexed by global row / column
  double alpha, beta;
  double* C;
  int64_t ldc;
  // Raw operands, read only for entries whose row/column holds Inf/NaN.
  OperandView a, b;
};
// C(r, col0 + c) = reconstruct_epilogue, in the order of ozgemm/numerics/ozaki1.hpp.
cudaError_t launch_reconstruct_epilogue(const EpilogueArgs& args, cudaStream_t stream);

// The fused kernels (Hopper: TMA + wgmma through CUTLASS's warp-specialised mainloop; portable:
// mma.sync + cp.async through CUTLASS's sm80 mainloop), one CTA per tile of C, looping over the
// anti-diagonals d = s-1 .. 0 and, within each, over the k-blocks b of the slice layout; each (d, b)
// is one contiguous k-range (SliceLayout::diagonal_start). Fully fused: each diagonal's exact sum
// over the k-blocks is converted and summed in FP64 in the order of ozgemm/numerics/ozaki1.hpp and
// C is written once. Partially fused: the int32 tile of (d, b) goes to plane (d, b) of `planes`
// (PlaneLayout) and launch_reconstruct_epilogue finishes.
struct FusedArgs {
  const int8_t* slices_a;  // rows of op(A): layout_a (reversed)
  const int8_t* slices_b;  // columns of op(B): layout_b (in order)
  numerics::SliceLayout layout_a, layout_b;
  int64_t m_pad, n_pad;
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
  // fully fused with kblocks > 1: int64 running sums of the k-blocks before the last (SpillLayout
  // over the launch grid; the launchers check spill_capacity).
  int64_t* spill;
  int64_t spill_capacity;
  // partially fused: this launch covers rows row0 .. row0+rows-1 and columns col0 .. col0+cols-1
  // (multiples of the tile) of the chunk whose planes are at `planes`.
  int32_t* planes;
  numerics::PlaneLayout plane_layout;
  int64_t row0, col0, rows, cols;
  OZGEMM_HD int64_t kblocks() const { return layout_a.kblocks; }
};
// cudaErrorNotSupported when this build has no sm_90a code (OZGEMM_CUDA_ARCHITECTURES).
cudaError_t launch_fused_sm90(const FusedArgs& args, FusedMode mode, cudaStream_t stream);
bool fused_sm90_built();
// Same FusedArgs and semantics as launch_fused_sm90; sm_80 and newer.
cudaError_t launch_fused_portable(const FusedArgs& args, FusedMode mode, cudaStream_t stream);
bool fused_portable_built();

// Ozaki scheme II (ozgemm/numerics/ozaki2.hpp), after launch_row_shifts (the shifts it leaves are
// shift_from_max of the rows; the scheme's s0 is one less):
//   launch_oz2_norms:     S[r] += sum over the row of oz2_norm_term (S zeroed by the caller);
//   launch_oz2_residues:  sft[r] = s0 + oz2_extra_shift(S[r]) and, for each modulus i, the residues
//                         res[i * plane + r * kpad + l] = sym_mod(rnd(X(r, l) 2^sft[r]), p_i), rnd to
//                         nearest, ties away (past 16 moduli rnd(.) passes int64:
//                         oz2_pieces_for_count, oz2_scaled_residue; truncated where d < 0)
//                         for r < rows_pad, l < kpad (0 for padding and Inf/NaN);
//   launch_oz2_accumulate: k past one int32 chunk: plane = sym_mod(plane + partial, p) over rows x
//                         cols (both int32, leading dimension ld);
//   launch_oz2_reconstruct: C entries of a chunk from the N product planes (plane i at
//                         + i * plane_elems, entry (r, c) at r + c * ld; int32 planes reduced to
//                         sym_mod(., p_i) here, int8 ones already reduced), the CRT and the scaling back.
cudaError_t launch_oz2_norms(const OperandView& view, const int32_t* shift, int64_t rows_pad, int64_t* S,
                             cudaStream_t stream);
cudaError_t launch_oz2_residues(const OperandView& view, const int32_t* shift, const int64_t* S,
                                const numerics::Ozaki2Constants& c, int64_t rows_pad, int64_t kpad, int64_t plane,
                                int8_t* res, int32_t* sft, cudaStream_t stream);
cudaError_t launch_oz2_accumulate(const int32_t* partial, int32_t* plane, int64_t ld, int64_t rows, int64_t cols,
                                  int32_t p, cudaStream_t stream);
// Ozaki-II's products on Hopper with the reduction in the epilogue (ozaki2_products_sm90.cuh): for
// each plane l < constants->n * planes_per_modulus, D + l * stride_d (m x n int8, column-major, ldd)
// = sym_mod of (A + l * stride_a)(B + l * stride_b)^T modulo p_i, i = l / planes_per_modulus (1: the
// real scheme, plane i is modulus i's; 2: the complex scheme's two transformed planes per modulus),
// A's m rows and B's n columns k-contiguous (lda, ldb), every stride and ld a multiple of
// kOz2ProductsAlign bytes, k <= numerics::kOz2ChunkK. One launch. cudaErrorNotSupported when this
// build has no sm_90a code or the arguments do not fit.
struct Oz2ProductsArgs {
  const int8_t* A;
  int64_t lda, stride_a;
  const int8_t* B;
  int64_t ldb, stride_b;
  int8_t* D;
  int64_t ldd, stride_d;
  int64_t m, n, k;
  const numerics::Ozaki2Constants* constants;
  int sm_count;  // the persistent grid's size
  void* workspace;
  size_t workspace_bytes;
  int planes_per_modulus = 1;
};
cudaError_t launch_oz2_products_sm90(const Oz2ProductsArgs& args, cudaStream_t stream);
bool oz2_products_sm90_built();

// The reconstruction reads either the unfused path's int32 product planes (`products`, reduced here)
// or the Hopper products' int8 residue planes (`residues`, reduced in the GEMM): exactly one is set.
// Real data: Scalar double, View OperandView; complex data (Oz2cReconstructArgs): double2,
// ComplexOperandView.
template <class Scalar, class View>
struct Oz2ReconstructArgsOf {
  const int32_t* products;
  const int8_t* residues;
  int64_t ld, plane_elems;
  int64_t row0, m_rows, col0, n_cols;  // this chunk of C
  const int32_t *sft_a, *sft_b, *flag_a, *flag_b;
  Scalar alpha, beta;
  Scalar* C;
  int64_t ldc;
  View a, b;  // read only for entries whose row or column holds Inf/NaN
};
using Oz2ReconstructArgs = Oz2ReconstructArgsOf<double, OperandView>;
cudaError_t launch_oz2_reconstruct(const Oz2ReconstructArgs& args, const numerics::Ozaki2Constants& c,
                                   cudaStream_t stream);

// ---- The complex Ozaki-II scheme, 2M (ozgemm/numerics/ozaki2_complex.hpp; ozaki2_complex.cu) ----
// Step 1's statistics of each of rows_pad rows (the real ones over the row's 2k parts):
// shift[r] = shift_from_max(largest finite |part|), flag[r] = 1 if a part is Inf/NaN, and
// S[r] = sum of oz2_norm_term(part, shift[r] - 1) over the finite parts. Rows >= view.rows get the
// values of an all-zero row. One read of the operand: S from per-group states at the groups' own
// shifts (numerics/ozaki2_complex.hpp, Oz2cNormState), exact.
cudaError_t launch_oz2c_stats(const ComplexOperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag,
                              int64_t* S, cudaStream_t stream);
// Step 2: sft[r] = shift[r] - 1 + oz2_extra_shift(S[r], c) and, for each modulus i < c.n (c: the
// complex set's constants, ozaki2_complex_constants), the 2M planes oz2c_forward of the residues of
// A'r = rnd(ar 2^sft), A'i (rounded to nearest, ties away, truncated where d < 0:
// oz2_pieces_for_count; op C: A'i negated): plane 2i + t (t = 0: x0, 1: x1) at res + (2i + t) * plane, entry
// (r, l) at r * kpad + l, for r < rows_pad, l < kpad (0 for padding; non-finite parts count as 0).
// Packed 4-byte stores: kpad and plane multiples of 4, res 4-byte aligned (else cudaErrorInvalidValue).
cudaError_t launch_oz2c_residues(const ComplexOperandView& view, const int32_t* shift, const int64_t* S,
                                 const numerics::Ozaki2Constants& c, int64_t rows_pad, int64_t kpad, int64_t plane,
                                 int8_t* res, int32_t* sft, cudaStream_t stream);
// Steps 3-4 after the products: C entries of a chunk from the 2 c.n product planes (plane 2i + t at
// + (2i + t) * plane_elems, entry (r, c) at r + c * ld; int32 planes reduced to sym_mod(., p_i) here,
// int8 ones already reduced), oz2c_inverse per modulus, oz2c_reconstruct_n, oz2c_apply_alpha_beta;
// entries whose row or column holds Inf/NaN take oz2c_special_accumulate over the raw operands.
// int8 planes (oz2c_inverse_biased, the same integers): ld and plane_elems multiples of 4, the planes
// 4-byte aligned, rows readable to the next multiple of 4 (chunks are whole kRowAlign rows).
using Oz2cReconstructArgs = Oz2ReconstructArgsOf<double2, ComplexOperandView>;
cudaError_t launch_oz2c_reconstruct(const Oz2cReconstructArgs& args, const numerics::Ozaki2Constants& c,
                                    cudaStream_t stream);
// FP64 mode's decision for complex data (numerics/ozaki2_complex.hpp, "The accuracy contract"): the
// real statistics of each row's 2k parts. launch_row_shifts: shift[r] and flag[r] as launch_oz2c_stats
// and, with digits.q, the exact digits q[r] over the parts and their maximum over the finite rows.
// launch_magnitudes: mag[r * ld + l] = the element's magnitude digit (oz2c_magnitude_terms: from the
// complex modulus where it bounds it, else max(floor|ar'|, floor|ai'|); 0 for padding; a non-finite
// part counts as 0) for r < rows_pad, l < kpad, U[r] += the element's unit term (the same function)
// and S[r] += the parts' oz2_norm_term (U and S zeroed by the caller; S is
// required: complex data has Ozaki-II only). Conjugation (view.conj) changes none of them. The complex
// launch_magnitudes packs 4 digits a store: kpad and ld multiples of 4, mag 4-byte aligned.
cudaError_t launch_row_shifts(const ComplexOperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag,
                              RowDigits digits, cudaStream_t stream);
cudaError_t launch_magnitudes(const ComplexOperandView& view, const int32_t* shift, int64_t rows_pad, int64_t kpad,
                              int64_t ld, uint8_t* mag, int64_t* U, int64_t* S, cudaStream_t stream);
// C = oz2c_scale_c(beta, C) (beta == 0: C = 0 without reading C; beta == 1: nothing runs), the BLAS
// quick return for k == 0 or alpha == 0.
cudaError_t launch_oz2c_scale_c(int64_t m, int64_t n, double2 beta, double2* C, int64_t ldc, cudaStream_t stream);

// C = beta * C (beta == 0: C = 0 without reading C), the BLAS quick return for k == 0 or alpha == 0.
cudaError_t launch_scale_c(int64_t m, int64_t n, double beta, double* C, int64_t ldc, cudaStream_t stream);

// The symmetric Level-3 routines (symmetric.cu), n x n column-major matrices:
// C's `lower` (else upper) triangle, diagonal included, = T + beta C (T nullptr: 0; beta == 0: C is
// not read); the other triangle is not touched.
cudaError_t launch_triangle_merge(int64_t n, bool lower, const double* T, int64_t ldt, double beta, double* C,
                                  int64_t ldc, cudaStream_t stream);
// F (n x n, all of it) = the symmetric matrix whose `lower` (else upper) triangle A stores.
cudaError_t launch_symmetric_fill(int64_t n, bool lower, const double* A, int64_t lda, double* F, int64_t ldf,
                                  cudaStream_t stream);

// Probe: cudaSuccess when this build has device code for the current device.
cudaError_t check_kernel_image();

}  // namespace kernels
}  // namespace ozgemm
