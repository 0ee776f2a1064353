// The dispatch layer for the DGEMM and ZGEMM emulations (dispatch.hpp): maps a CallPlan to kernel
// launches and cuBLAS/cuBLASLt calls; decides nothing.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <variant>

#include "baseline/int8_gemm_cublaslt.hpp"
#include "dispatch/dispatch.hpp"
#include "kernels/b2b/launch.hpp"
#include "kernels/dgemm/launch.hpp"
#include "ozgemm/numerics/ozaki2_complex.hpp"

namespace ozgemm {
namespace dispatch {

namespace {

// Element (r, l) of the rows of op(A) / columns of op(B) at X[r * r + l * l] (in elements, real or complex).
struct Strides {
  int64_t r, l;
};
Strides strides_of_op_a(const GemmShape& s) {
  // Rows of op(A): N: A(r, l) at r + l*lda; T (and C): A(l, r) at l + r*lda.
  return s.transa == Op::N ? Strides{1, s.lda} : Strides{s.lda, 1};
}
Strides strides_of_op_b(const GemmShape& s) {
  // Columns of op(B): N: B(l, c) at l + c*ldb; T (and C): B(c, l) at c + l*ldb.
  return s.transb == Op::N ? Strides{s.ldb, 1} : Strides{1, s.ldb};
}
kernels::OperandView view_of_op_a(const GemmShape& s, const double* A) {
  const Strides st = strides_of_op_a(s);
  return kernels::OperandView{A, s.m, s.k, st.r, st.l};
}
kernels::OperandView view_of_op_b(const GemmShape& s, const double* B) {
  const Strides st = strides_of_op_b(s);
  return kernels::OperandView{B, s.n, s.k, st.r, st.l};
}
kernels::ComplexOperandView complex_view_of_op_a(const GemmShape& s, const cuDoubleComplex* A, bool conj) {
  const Strides st = strides_of_op_a(s);
  return kernels::ComplexOperandView{A, s.m, s.k, st.r, st.l, conj};
}
kernels::ComplexOperandView complex_view_of_op_b(const GemmShape& s, const cuDoubleComplex* B, bool conj) {
  const Strides st = strides_of_op_b(s);
  return kernels::ComplexOperandView{B, s.n, s.k, st.r, st.l, conj};
}

void record(const ExecContext& ctx, int i) {
  if (ctx.phase_events) cudaEventRecord(ctx.phase_events[i], ctx.stream);
}

#define OZ_CUDA_TRY(x)                                             \
  do {                                                             \
    if ((x) != cudaSuccess) return OZGEMM_STATUS_EXECUTION_FAILED; \
  } while (0)

// The operands' shifts and Inf/NaN flags in a workspace (StatsOffsets: the same regions in every plan).
struct Stats {
  int32_t *shift_a, *shift_b, *flag_a, *flag_b;
};
Stats stats_in(char* ws, const StatsOffsets& o) {
  return {reinterpret_cast<int32_t*>(ws + o.shift_a), reinterpret_cast<int32_t*>(ws + o.shift_b),
          reinterpret_cast<int32_t*>(ws + o.flag_a), reinterpret_cast<int32_t*>(ws + o.flag_b)};
}

// The fields every epilogue-writing launch shares (EpilogueArgs, FusedArgs, Oz2ReconstructArgs): the
// operands' Inf/NaN flags, alpha, beta, C and the raw operands for the special path.
template <class Args, class Scalar, class View>
void set_output(Args* x, const int32_t* flag_a, const int32_t* flag_b, Scalar alpha, Scalar beta, Scalar* C, int64_t ldc,
                const View& a, const View& b) {
  x->flag_a = flag_a;
  x->flag_b = flag_b;
  x->alpha = alpha;
  x->beta = beta;
  x->C = C;
  x->ldc = ldc;
  x->a = a;
  x->b = b;
}

cublasOperation_t to_cublas(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

ozgemmStatus_t run_native(const ExecContext& ctx, const GemmShape& s, double alpha, const double* A, const double* B,
                          double beta, double* C) {
  if (cublasSetStream(ctx.cublas, ctx.stream) != CUBLAS_STATUS_SUCCESS) return OZGEMM_STATUS_EXECUTION_FAILED;
  const cublasStatus_t st = cublasDgemm(ctx.cublas, to_cublas(s.transa), to_cublas(s.transb), static_cast<int>(s.m),
                                        static_cast<int>(s.n), static_cast<int>(s.k), &alpha, A, static_cast<int>(s.lda),
                                        B, static_cast<int>(s.ldb), &beta, C, static_cast<int>(s.ldc));
  return st == CUBLAS_STATUS_SUCCESS ? OZGEMM_STATUS_SUCCESS : OZGEMM_STATUS_EXECUTION_FAILED;
}

ozgemmStatus_t run_ozaki1(const ExecContext& ctx, const Ozaki1Plan& plan, bool stats_ready, const GemmShape& shape,
                          double alpha, const double* A, const double* B, double beta, double* C, void* workspace) {
  char* ws = static_cast<char*>(workspace);
  const Stats stats = stats_in(ws, plan.stats);
  int32_t *shift_a = stats.shift_a, *shift_b = stats.shift_b, *flag_a = stats.flag_a, *flag_b = stats.flag_b;
  auto* sl_a = reinterpret_cast<int8_t*>(ws + plan.off_slices_a);
  auto* sl_b = reinterpret_cast<int8_t*>(ws + plan.off_slices_b);
  auto* planes = reinterpret_cast<int32_t*>(ws + plan.off_diag);
  void* lt_ws = ws + plan.off_lt_workspace;
  const kernels::OperandView va = view_of_op_a(shape, A), vb = view_of_op_b(shape, B);
  const int s = plan.slices;
  cudaStream_t st = ctx.stream;

  record(ctx, 0);
  if (!stats_ready) {
    OZ_CUDA_TRY(kernels::launch_row_shifts(va, plan.m_pad, shift_a, flag_a, {}, st));
    OZ_CUDA_TRY(kernels::launch_row_shifts(vb, plan.n_pad, shift_b, flag_b, {}, st));
  }
  record(ctx, 1);
  OZ_CUDA_TRY(kernels::launch_slice(va, shift_a, plan.slices_a, plan.m_pad, sl_a, st));
  OZ_CUDA_TRY(kernels::launch_slice(vb, shift_b, plan.slices_b, plan.n_pad, sl_b, st));
  record(ctx, 2);

  kernels::EpilogueArgs e;
  e.planes = planes;
  e.layout = plan.planes;
  e.shift_a = shift_a;
  e.shift_b = shift_b;
  set_output(&e, flag_a, flag_b, alpha, beta, C, shape.ldc, va, vb);

  kernels::FusedArgs f;
  f.slices_a = sl_a;
  f.slices_b = sl_b;
  f.layout_a = plan.slices_a;
  f.layout_b = plan.slices_b;
  f.m_pad = plan.m_pad;
  f.n_pad = plan.n_pad;
  f.spill = reinterpret_cast<int64_t*>(ws + plan.off_spill);
  f.spill_capacity = plan.spill_entries;
  f.acc = reinterpret_cast<double*>(ws + plan.off_diag);
  f.ld_acc = plan.m_pad;
  f.s = s;
  f.m = plan.m;
  f.n = plan.n;
  f.shift_a = shift_a;
  f.shift_b = shift_b;
  set_output(&f, flag_a, flag_b, alpha, beta, C, shape.ldc, va, vb);
  f.planes = planes;
  f.plane_layout = plan.planes;

  auto launch_fused = [&](const kernels::FusedArgs& args) {
    return plan.family == KernelFamily::Sm90 ? kernels::launch_fused_sm90(args, plan.mode, st)
                                             : kernels::launch_fused_portable(args, plan.mode, st);
  };
  if (plan.variant == Variant::FullyFused) {
    // One kernel: products, reconstruction and alpha/beta; C written once.
    f.row0 = f.col0 = 0;
    f.rows = plan.m;
    f.cols = plan.n;
    OZ_CUDA_TRY(launch_fused(f));
    record(ctx, 3);  // products and epilogue are one phase: the epilogue interval is empty
    record(ctx, 4);
    return OZGEMM_STATUS_SUCCESS;
  }

  bool first = true;
  for (int64_t col0 = 0; col0 < plan.n; col0 += plan.n_chunk)
    for (int64_t row0 = 0; row0 < plan.m; row0 += plan.m_chunk) {
      const int64_t ncols = std::min(plan.n_chunk, plan.n_pad - col0);  // multiples of kRowAlign
      const int64_t nrows = std::min(plan.m_chunk, plan.m_pad - row0);
      if (plan.variant == Variant::PartiallyFused) {
        // One kernel computes every diagonal of each tile and stores the int32 planes.
        f.row0 = row0;
        f.col0 = col0;
        f.rows = nrows;
        f.cols = ncols;
        OZ_CUDA_TRY(launch_fused(f));
      } else {
        // Products: one GEMM per (diagonal d, k-block b) over the contiguous k-range of the
        // SliceLayout (diagonal_start, diagonal_length).
        for (int d = 0; d < s; ++d)
          for (int64_t b = 0; b < plan.kblocks; ++b) {
            const int8_t* a_ptr = sl_a + plan.slices_a.row(row0) + plan.slices_a.diagonal_start(d, b);
            const int8_t* b_ptr = sl_b + plan.slices_b.row(col0) + plan.slices_b.diagonal_start(d, b);
            int32_t* out = planes + plan.planes.plane(d, b);
            const cublasStatus_t cs = ctx.lt->run(
                static_cast<int>(nrows), static_cast<int>(ncols), static_cast<int>(plan.slices_a.diagonal_length(d)),
                a_ptr, static_cast<int>(plan.slices_a.ld), b_ptr, static_cast<int>(plan.slices_b.ld), out,
                static_cast<int>(plan.planes.ld), lt_ws, size_t(kernels::UnfusedPolicy::kLtWorkspaceBytes), st,
                ctx.autotune);
            if (cs != CUBLAS_STATUS_SUCCESS) return OZGEMM_STATUS_EXECUTION_FAILED;
          }
      }
      if (first) record(ctx, 3);  // exact phase split only for single-chunk plans
      first = false;
      e.row0 = row0;
      e.m_rows = std::min(nrows, plan.m - row0);
      e.col0 = col0;
      e.n_cols = std::min(ncols, plan.n - col0);
      OZ_CUDA_TRY(kernels::launch_reconstruct_epilogue(e, st));
    }
  record(ctx, 4);
  return OZGEMM_STATUS_SUCCESS;
}

// The moduli set's constants of the element type at n moduli: the real set, or the complex (2M) one.
const numerics::Ozaki2Constants& oz2_constants(ElementType type, int n) {
  return type == ElementType::ComplexF64 ? numerics::ozaki2_complex_constants(n) : numerics::ozaki2_constants(n);
}

// Every count's limits table of the window, per element type, gathered once (the constants never change).
kernels::Oz2ShiftLimits gather_shift_limits(ElementType type) {
  kernels::Oz2ShiftLimits l{};
  for (int w = 0; w < numerics::kModuliWindow; ++w)
    std::memcpy(l.limit[w], oz2_constants(type, numerics::kMinModuli + w).limit, sizeof l.limit[w]);
  return l;
}
const kernels::Oz2ShiftLimits& oz2_shift_limits(ElementType type) {
  static const kernels::Oz2ShiftLimits real = gather_shift_limits(ElementType::RealF64);
  static const kernels::Oz2ShiftLimits complex = gather_shift_limits(ElementType::ComplexF64);
  return type == ElementType::ComplexF64 ? complex : real;
}

// The decision's views of op(A)'s rows and op(B)'s columns. Complex data: without conjugation, which
// changes none of the decision's statistics (they read the parts' magnitudes and lowest bits).
kernels::OperandView decision_view_a(const GemmShape& s, const double* A) { return view_of_op_a(s, A); }
kernels::OperandView decision_view_b(const GemmShape& s, const double* B) { return view_of_op_b(s, B); }
kernels::ComplexOperandView decision_view_a(const GemmShape& s, const cuDoubleComplex* A) {
  return complex_view_of_op_a(s, A, false);
}
kernels::ComplexOperandView decision_view_b(const GemmShape& s, const cuDoubleComplex* B) {
  return complex_view_of_op_b(s, B, false);
}
// The element type of a decision's operands T (double or cuDoubleComplex): its plan must agree.
template <class T>
bool plan_fits(const DecisionPlan& plan) {
  return plan.type == (std::is_same<T, cuDoubleComplex>::value ? ElementType::ComplexF64 : ElementType::RealF64);
}

// Copies the device counts back (synchronising the stream). Ozaki-II's counts marked dead read +inf
// (their maximum is past the target; a pass may have skipped them). *settle_deaths (optional): the
// settle passes' bits (launch_oz2_bound).
ozgemmStatus_t read_counts(const ExecContext& ctx, const kernels::DecisionResult* dev, DecisionCounts* counts,
                           uint32_t* settle_deaths = nullptr) {
  kernels::DecisionResult host;
  OZ_CUDA_TRY(cudaMemcpyAsync(&host, dev, sizeof host, cudaMemcpyDeviceToHost, ctx.stream));
  OZ_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
  if (settle_deaths) *settle_deaths = host.oz2_settle_deaths;
  counts->q_max_a = host.q_max_a;
  counts->q_max_b = host.q_max_b;
  counts->s_max = host.s_max;
  for (int w = 0; w < numerics::kSliceWindow; ++w) {
    double r;
    static_assert(sizeof r == sizeof host.ratio_max[w], "ratio bits");
    std::memcpy(&r, &host.ratio_max[w], sizeof r);
    counts->ratio_max[w] = r;
  }
  for (int w = 0; w < numerics::kModuliWindow; ++w) {
    std::memcpy(&counts->oz2_ratio_max[w], &host.oz2_ratio_max[w], sizeof(double));
    if (host.oz2_dead >> w & 1u) counts->oz2_ratio_max[w] = std::numeric_limits<double>::infinity();
  }
  return OZGEMM_STATUS_SUCCESS;
}

// The decision passes (dispatch.hpp) for either element type T: the complex operands' statistics are
// the real ones over each row's 2k parts (kernels/dgemm/launch.hpp's ComplexOperandView overloads).
// The shifts, flags and exact digits of op(A)'s first rows_a rows and op(B)'s first rows_b columns
// (rows_pad_a / rows_pad_b written), into the result's digit maxima (zeroed first; the rest of the
// result untouched).
template <class T>
ozgemmStatus_t launch_digits(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape, const T* A,
                             const T* B, char* ws, int64_t rows_pad_a, int64_t rows_pad_b) {
  auto* result = reinterpret_cast<kernels::DecisionResult*>(ws + plan.off_result);
  OZ_CUDA_TRY(cudaMemsetAsync(&result->q_max_a, 0, sizeof result->q_max_a + sizeof result->q_max_b, ctx.stream));
  static_assert(offsetof(kernels::DecisionResult, q_max_b) == offsetof(kernels::DecisionResult, q_max_a) + 4, "");
  kernels::RowDigits da{reinterpret_cast<int32_t*>(ws + plan.off_q_a), &result->q_max_a};
  kernels::RowDigits db{reinterpret_cast<int32_t*>(ws + plan.off_q_b), &result->q_max_b};
  const Stats stats = stats_in(ws, plan.stats);
  OZ_CUDA_TRY(kernels::launch_row_shifts(decision_view_a(shape, A), rows_pad_a, stats.shift_a, stats.flag_a, da, ctx.stream));
  OZ_CUDA_TRY(kernels::launch_row_shifts(decision_view_b(shape, B), rows_pad_b, stats.shift_b, stats.flag_b, db, ctx.stream));
  return OZGEMM_STATUS_SUCCESS;
}

template <class T>
ozgemmStatus_t digits_pass(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape, const T* A,
                           const T* B, void* workspace, DecisionCounts* counts) {
  if (!plan_fits<T>(plan)) return OZGEMM_STATUS_INTERNAL_ERROR;
  char* ws = static_cast<char*>(workspace);
  const ozgemmStatus_t st = launch_digits(ctx, plan, shape, A, B, ws, plan.m_pad, plan.n_pad);
  if (st != OZGEMM_STATUS_SUCCESS || !counts) return st;
  return read_counts(ctx, reinterpret_cast<const kernels::DecisionResult*>(ws + plan.off_result), counts);
}

template <class T>
ozgemmStatus_t bound_pass(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape, const T* A,
                          const T* B, void* workspace, const BoundRequest& rq, DecisionCounts* counts) {
  static_assert(sizeof(kernels::DecisionResult) <= 256, "the planner reserves 256 bytes for the result");
  const bool complex = plan.type == ElementType::ComplexF64;
  const bool sample = rq.sample;
  // Complex data has Ozaki-II only (its magnitudes pass always computes S); the sample computes its own
  // magnitudes, for either scheme or both.
  if (!plan_fits<T>(plan) || (complex && (rq.ozaki1 || !rq.ozaki2)) ||
      (sample && ((!rq.ozaki1 && !rq.ozaki2) || rq.magnitudes_ready || plan.sample_m <= 0)))
    return OZGEMM_STATUS_INTERNAL_ERROR;
  char* ws = static_cast<char*>(workspace);
  auto* result = reinterpret_cast<kernels::DecisionResult*>(ws + plan.off_result);
  const Stats stats = stats_in(ws, plan.stats);
  const int32_t *shift_a = stats.shift_a, *shift_b = stats.shift_b;
  auto* mag_a = reinterpret_cast<uint8_t*>(ws + plan.off_mag_a);
  auto* mag_b = reinterpret_cast<uint8_t*>(ws + plan.off_mag_b);
  auto* u_a = reinterpret_cast<int64_t*>(ws + plan.off_u_a);
  auto* u_b = reinterpret_cast<int64_t*>(ws + plan.off_u_b);
  auto* S_a = reinterpret_cast<int64_t*>(ws + plan.off_S_a);
  auto* S_b = reinterpret_cast<int64_t*>(ws + plan.off_S_b);
  auto* d_a = reinterpret_cast<int8_t*>(ws + plan.off_d_a);
  auto* d_b = reinterpret_cast<int8_t*>(ws + plan.off_d_b);
  // The entries evaluated: the sample's leading block (rows x cols of C, its operands' rows padded),
  // or all of C.
  const int64_t rows = sample ? plan.sample_m : plan.m;
  const int64_t rows_pad_a = sample ? plan.sample_m_pad : plan.m_pad;
  const int64_t rows_pad_b = sample ? plan.sample_n_pad : plan.n_pad;
  GemmShape block = shape;  // the operands' views of the evaluated rows and columns
  block.m = rows;
  if (sample) block.n = plan.sample_n;
  if (sample) {  // the sample reads only its block's rows and columns: its own digits first
    OZ_CUDA_TRY(cudaMemsetAsync(result, 0, sizeof *result, ctx.stream));
    const ozgemmStatus_t st = launch_digits(ctx, plan, block, A, B, ws, rows_pad_a, rows_pad_b);
    if (st != OZGEMM_STATUS_SUCCESS) return st;
  }
  if (!rq.magnitudes_ready) {
    OZ_CUDA_TRY(cudaMemsetAsync(u_a, 0, sizeof(int64_t) * size_t(plan.m_pad), ctx.stream));
    OZ_CUDA_TRY(cudaMemsetAsync(u_b, 0, sizeof(int64_t) * size_t(plan.n_pad), ctx.stream));
    if (rq.ozaki2) {
      OZ_CUDA_TRY(cudaMemsetAsync(S_a, 0, sizeof(int64_t) * size_t(plan.m_pad), ctx.stream));
      OZ_CUDA_TRY(cudaMemsetAsync(S_b, 0, sizeof(int64_t) * size_t(plan.n_pad), ctx.stream));
    }
    OZ_CUDA_TRY(kernels::launch_magnitudes(decision_view_a(block, A), shift_a, rows_pad_a, plan.kmag, plan.kmag, mag_a,
                                           u_a, rq.ozaki2 ? S_a : nullptr, ctx.stream));
    OZ_CUDA_TRY(kernels::launch_magnitudes(decision_view_b(block, B), shift_b, rows_pad_b, plan.kmag, plan.kmag, mag_b,
                                           u_b, rq.ozaki2 ? S_b : nullptr, ctx.stream));
    if (rq.ozaki2)  // every row's (the tables' stride is m_pad / n_pad; rows past the sample's are unused)
      OZ_CUDA_TRY(kernels::launch_oz2_extra_shifts(S_a, plan.m_pad, d_a, S_b, plan.n_pad, d_b, oz2_shift_limits(plan.type),
                                                   ctx.stream));
  }
  // Only the bounds' fields restart (the digit maxima stay); with keep_dead, the counts an earlier
  // pass over some of the same entries (the sample) marked dead stay dead.
  if (!sample) {
    OZ_CUDA_TRY(cudaMemsetAsync(&result->s_max, 0, sizeof result->s_max, ctx.stream));
    if (!rq.keep_dead) OZ_CUDA_TRY(cudaMemsetAsync(&result->oz2_dead, 0, sizeof result->oz2_dead, ctx.stream));
    OZ_CUDA_TRY(cudaMemsetAsync(&result->ratio_max, 0,
                                sizeof(kernels::DecisionResult) - offsetof(kernels::DecisionResult, ratio_max), ctx.stream));
  }
  auto* P = reinterpret_cast<int32_t*>(ws + plan.off_p);
  kernels::BoundArgs b{};
  b.P = P;
  b.ld = plan.m_pad;
  b.plane_elems = plan.m_pad * plan.n_chunk;
  b.pblocks = static_cast<int>(plan.pblocks);
  b.rows = rows;
  b.shift_a = shift_a;
  b.shift_b = shift_b;
  b.flag_a = stats.flag_a;
  b.flag_b = stats.flag_b;
  b.q_a = reinterpret_cast<const int32_t*>(ws + plan.off_q_a);
  b.q_b = reinterpret_cast<const int32_t*>(ws + plan.off_q_b);
  b.U_a = u_a;
  b.U_b = u_b;
  b.k = plan.k;
  b.s_from = rq.s_from;
  b.target = rq.target;
  b.result = result;
  kernels::Oz2BoundArgs b2{};
  b2.d_a = d_a;
  b2.d_b = d_b;
  b2.d_stride_a = plan.m_pad;
  b2.d_stride_b = plan.n_pad;
  b2.complex_data = complex;
  b2.rounding_cross = complex ? numerics::oz2c_rounding_cross(plan.k) : numerics::oz2_rounding_cross(plan.k);
  for (int w = 0; w < numerics::kModuliWindow; ++w) {
    const numerics::Ozaki2Constants& c = oz2_constants(plan.type, numerics::kMinModuli + w);
    b2.recon_abs_u[w] = complex ? numerics::oz2c_recon_abs_u(c) : c.recon_abs_u;  // R2c's or R2's
  }
  // Lowest first (launch_oz2_bound) where P holds all of C at once (the settle passes re-read it);
  // else, and for the sample, every live count. The sample's few blocks start with every count live:
  // one at a time they took 14 sequential evaluations (252 us at 8192^3, ncu), three at a time about
  // a third; its maxima are then exact for its block, so it kills every count that fails there.
  b2.lowest_first = !sample && plan.n <= plan.n_chunk;
  b2.block_passed = reinterpret_cast<uint32_t*>(ws + plan.off_block_passed);
  // The magnitude product of rows [0, rows_pad) x columns [col0, col0 + ncols) into P (every k-block).
  auto magnitude_product = [&](int64_t rows_pad, int64_t col0, int64_t ncols) {
    for (int64_t blk = 0; blk < plan.pblocks; ++blk) {
      const int64_t k0 = blk * plan.kmag_block, kk = std::min(plan.kmag_block, plan.kmag - k0);
      const auto* a8 = reinterpret_cast<const int8_t*>(mag_a + k0);  // digits 0..127: the same bytes as int8
      const auto* b8 = reinterpret_cast<const int8_t*>(mag_b + col0 * plan.kmag + k0);
      if (ctx.lt->run(static_cast<int>(rows_pad), static_cast<int>(ncols), static_cast<int>(kk), a8,
                      static_cast<int>(plan.kmag), b8, static_cast<int>(plan.kmag), P + blk * b.plane_elems,
                      static_cast<int>(plan.m_pad), ws + plan.off_lt, size_t(kernels::UnfusedPolicy::kLtWorkspaceBytes),
                      ctx.stream, ctx.autotune) != CUBLAS_STATUS_SUCCESS)
        return false;
    }
    return true;
  };
  if (sample) {
    if (!magnitude_product(rows_pad_a, 0, rows_pad_b)) return OZGEMM_STATUS_EXECUTION_FAILED;
    b.col0 = 0;
    b.cols = plan.sample_n;
    if (rq.ozaki1) OZ_CUDA_TRY(kernels::launch_bound(b, ctx.stream));
    b2.base = b;
    if (rq.ozaki2) OZ_CUDA_TRY(kernels::launch_oz2_bound(b2, ctx.stream));
    return read_counts(ctx, result, counts);
  }
  for (int64_t col0 = 0; col0 < plan.n; col0 += plan.n_chunk) {
    const int64_t ncols = std::min(plan.n_chunk, plan.n_pad - col0);
    if (!magnitude_product(plan.m_pad, col0, ncols)) return OZGEMM_STATUS_EXECUTION_FAILED;
    b.col0 = col0;
    b.cols = std::min(ncols, plan.n - col0);
    if (rq.ozaki1) OZ_CUDA_TRY(kernels::launch_bound(b, ctx.stream));
    b2.base = b;
    if (rq.ozaki2) OZ_CUDA_TRY(kernels::launch_oz2_bound(b2, ctx.stream));
  }
  if (!rq.ozaki2 || !b2.lowest_first) return read_counts(ctx, result, counts);
  // Settle passes until one kills no count (usually the first): then every block has evaluated and
  // met the smallest live count, whose maximum is exact.
  b2.settle = true;
  for (int pass = 0; pass < 32; ++pass) {
    b2.settle_index = pass;
    OZ_CUDA_TRY(kernels::launch_oz2_bound(b2, ctx.stream));
    uint32_t deaths = 0;
    const ozgemmStatus_t st = read_counts(ctx, result, counts, &deaths);
    if (st != OZGEMM_STATUS_SUCCESS || !(deaths >> pass & 1u)) return st;
  }
  return OZGEMM_STATUS_INTERNAL_ERROR;  // each pass that kills a count leaves one fewer: at most kModuliWindow
}

}  // namespace

ozgemmStatus_t decision_digits(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape,
                               const double* A, const double* B, void* workspace, DecisionCounts* counts) {
  return digits_pass(ctx, plan, shape, A, B, workspace, counts);
}
ozgemmStatus_t decision_digits(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape,
                               const cuDoubleComplex* A, const cuDoubleComplex* B, void* workspace,
                               DecisionCounts* counts) {
  return digits_pass(ctx, plan, shape, A, B, workspace, counts);
}
ozgemmStatus_t decision_bound(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape,
                              const double* A, const double* B, void* workspace, const BoundRequest& rq,
                              DecisionCounts* counts) {
  return bound_pass(ctx, plan, shape, A, B, workspace, rq, counts);
}
ozgemmStatus_t decision_bound(const ExecContext& ctx, const DecisionPlan& plan, const GemmShape& shape,
                              const cuDoubleComplex* A, const cuDoubleComplex* B, void* workspace,
                              const BoundRequest& rq, DecisionCounts* counts) {
  return bound_pass(ctx, plan, shape, A, B, workspace, rq, counts);
}

namespace {
// The Ozaki-II workspace's regions (Ozaki2Plan's offsets).
struct Oz2Buffers {
  Stats stats;
  int64_t *S_a, *S_b;
  int32_t *sft_a, *sft_b;
  int8_t *res_a, *res_b;
  int32_t* products;  // Unfused: int32 planes
  int8_t* residues;   // PartiallyFused: int8 planes (the same region)
  int32_t* partial;
  void* lt;
};
Oz2Buffers oz2_buffers(char* ws, const Ozaki2Plan& plan) {
  return Oz2Buffers{stats_in(ws, plan.stats),
                    reinterpret_cast<int64_t*>(ws + plan.off_S_a),
                    reinterpret_cast<int64_t*>(ws + plan.off_S_b),
                    reinterpret_cast<int32_t*>(ws + plan.off_sft_a),
                    reinterpret_cast<int32_t*>(ws + plan.off_sft_b),
                    reinterpret_cast<int8_t*>(ws + plan.off_res_a),
                    reinterpret_cast<int8_t*>(ws + plan.off_res_b),
                    reinterpret_cast<int32_t*>(ws + plan.off_products),
                    reinterpret_cast<int8_t*>(ws + plan.off_products),
                    reinterpret_cast<int32_t*>(ws + plan.off_partial),
                    ws + plan.off_lt};
}

// The products of one chunk of C (rows row0 .., columns col0 .., nrows x ncols padded): plane l's
// residues of A times those of B into product plane l, for every plane of the plan (plane l is
// modulus l / planes_per_modulus's, cst's p_i). PartiallyFused: one launch of the Hopper GEMM, each
// product reduced modulo its p_i into an int8 plane. Unfused with one k-chunk: all planes through
// run_strided (one batched launch for products up to 4096^3, else a launch a plane); past it, each
// further chunk's product goes to the partial plane and is folded in modulo p_i.
ozgemmStatus_t oz2_products(const ExecContext& ctx, const Ozaki2Plan& plan, const numerics::Ozaki2Constants& cst,
                            const Oz2Buffers& w, int64_t row0, int64_t col0, int64_t nrows, int64_t ncols) {
  cudaStream_t st = ctx.stream;
  const size_t lt_bytes = size_t(kernels::UnfusedPolicy::kLtWorkspaceBytes);
  if (plan.variant == Variant::PartiallyFused) {
    kernels::Oz2ProductsArgs pa{};
    pa.A = w.res_a + row0 * plan.kpad;
    pa.lda = plan.kpad;
    pa.stride_a = plan.res_a_plane();
    pa.B = w.res_b + col0 * plan.kpad;
    pa.ldb = plan.kpad;
    pa.stride_b = plan.res_b_plane();
    pa.D = w.residues;
    pa.ldd = plan.m_chunk;
    pa.stride_d = plan.product_plane();
    pa.m = nrows;
    pa.n = ncols;
    pa.k = plan.kpad;
    pa.constants = &cst;
    pa.sm_count = plan.sm_count;
    pa.workspace = w.lt;
    pa.workspace_bytes = lt_bytes;
    pa.planes_per_modulus = plan.planes_per_modulus();
    OZ_CUDA_TRY(kernels::launch_oz2_products_sm90(pa, st));
    return OZGEMM_STATUS_SUCCESS;
  }
  if (plan.kchunks == 1) {
    if (ctx.lt->run_strided(static_cast<int>(nrows), static_cast<int>(ncols), static_cast<int>(plan.kpad),
                            w.res_a + row0 * plan.kpad, static_cast<int>(plan.kpad), plan.res_a_plane(),
                            w.res_b + col0 * plan.kpad, static_cast<int>(plan.kpad), plan.res_b_plane(), w.products,
                            static_cast<int>(plan.m_chunk), plan.product_plane(), plan.planes(), w.lt, lt_bytes, st,
                            ctx.autotune) != CUBLAS_STATUS_SUCCESS)
      return OZGEMM_STATUS_EXECUTION_FAILED;
    return OZGEMM_STATUS_SUCCESS;
  }
  for (int l = 0; l < plan.planes(); ++l)
    for (int64_t kc = 0; kc < plan.kchunks; ++kc) {
      const int64_t k0 = kc * plan.kchunk, kk = std::min(plan.kchunk, plan.kpad - k0);
      const int8_t* a_ptr = w.res_a + l * plan.res_a_plane() + row0 * plan.kpad + k0;
      const int8_t* b_ptr = w.res_b + l * plan.res_b_plane() + col0 * plan.kpad + k0;
      int32_t* plane = w.products + l * plan.product_plane();
      if (ctx.lt->run(static_cast<int>(nrows), static_cast<int>(ncols), static_cast<int>(kk), a_ptr,
                      static_cast<int>(plan.kpad), b_ptr, static_cast<int>(plan.kpad), kc == 0 ? plane : w.partial,
                      static_cast<int>(plan.m_chunk), w.lt, lt_bytes, st, ctx.autotune) != CUBLAS_STATUS_SUCCESS)
        return OZGEMM_STATUS_EXECUTION_FAILED;
      if (kc > 0)
        OZ_CUDA_TRY(kernels::launch_oz2_accumulate(w.partial, plane, plan.m_chunk, nrows, ncols,
                                                   cst.p[l / plan.planes_per_modulus()], st));
    }
  return OZGEMM_STATUS_SUCCESS;
}

// The products and the reconstruction of an Ozaki-II plan, chunk by chunk of C, with the phase events
// 3 and 4. e (Oz2ReconstructArgsOf, its output fields set) gets the plan's product planes and shifts
// here and each chunk's rows and columns; reconstruct(e) launches the reconstruction.
template <class Args, class Reconstruct>
ozgemmStatus_t oz2_chunks(const ExecContext& ctx, const Ozaki2Plan& plan, const numerics::Ozaki2Constants& cst,
                          const Oz2Buffers& w, Args e, Reconstruct reconstruct) {
  const bool fused = plan.variant == Variant::PartiallyFused;  // int8 planes from the Hopper products
  e.products = fused ? nullptr : w.products;
  e.residues = fused ? w.residues : nullptr;
  e.ld = plan.m_chunk;
  e.plane_elems = plan.product_plane();
  e.sft_a = w.sft_a;
  e.sft_b = w.sft_b;
  bool first_chunk = true;
  for (int64_t col0 = 0; col0 < plan.n; col0 += plan.n_chunk)
    for (int64_t row0 = 0; row0 < plan.m; row0 += plan.m_chunk) {
      const int64_t ncols = std::min(plan.n_chunk, plan.n_pad - col0), nrows = std::min(plan.m_chunk, plan.m_pad - row0);
      const ozgemmStatus_t ps = oz2_products(ctx, plan, cst, w, row0, col0, nrows, ncols);
      if (ps != OZGEMM_STATUS_SUCCESS) return ps;
      if (first_chunk) record(ctx, 3);
      first_chunk = false;
      e.row0 = row0;
      e.m_rows = std::min(nrows, plan.m - row0);
      e.col0 = col0;
      e.n_cols = std::min(ncols, plan.n - col0);
      OZ_CUDA_TRY(reconstruct(e));
    }
  record(ctx, 4);
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t run_ozaki2(const ExecContext& ctx, const Ozaki2Plan& plan, bool stats_ready, const GemmShape& shape,
                          double alpha, const double* A, const double* B, double beta, double* C, void* workspace) {
  const numerics::Ozaki2Constants& cst = numerics::ozaki2_constants(plan.moduli);
  const Oz2Buffers w = oz2_buffers(static_cast<char*>(workspace), plan);
  int32_t *shift_a = w.stats.shift_a, *shift_b = w.stats.shift_b, *flag_a = w.stats.flag_a, *flag_b = w.stats.flag_b;
  const kernels::OperandView va = view_of_op_a(shape, A), vb = view_of_op_b(shape, B);
  cudaStream_t st = ctx.stream;
  record(ctx, 0);
  if (!stats_ready) {  // else FP64 mode's decision left shifts, flags and S at these offsets
    OZ_CUDA_TRY(kernels::launch_row_shifts(va, plan.m_pad, shift_a, flag_a, {}, st));
    OZ_CUDA_TRY(kernels::launch_row_shifts(vb, plan.n_pad, shift_b, flag_b, {}, st));
    OZ_CUDA_TRY(cudaMemsetAsync(w.S_a, 0, sizeof(int64_t) * size_t(plan.m_pad), st));
    OZ_CUDA_TRY(cudaMemsetAsync(w.S_b, 0, sizeof(int64_t) * size_t(plan.n_pad), st));
    OZ_CUDA_TRY(kernels::launch_oz2_norms(va, shift_a, plan.m_pad, w.S_a, st));
    OZ_CUDA_TRY(kernels::launch_oz2_norms(vb, shift_b, plan.n_pad, w.S_b, st));
  }
  record(ctx, 1);
  OZ_CUDA_TRY(kernels::launch_oz2_residues(va, shift_a, w.S_a, cst, plan.m_pad, plan.kpad, plan.res_a_plane(), w.res_a,
                                           w.sft_a, st));
  OZ_CUDA_TRY(kernels::launch_oz2_residues(vb, shift_b, w.S_b, cst, plan.n_pad, plan.kpad, plan.res_b_plane(), w.res_b,
                                           w.sft_b, st));
  record(ctx, 2);
  kernels::Oz2ReconstructArgs e{};
  set_output(&e, flag_a, flag_b, alpha, beta, C, shape.ldc, va, vb);
  return oz2_chunks(ctx, plan, cst, w, e,
                    [&](const kernels::Oz2ReconstructArgs& x) { return kernels::launch_oz2_reconstruct(x, cst, st); });
}

ozgemmStatus_t run_native_complex(const ExecContext& ctx, const GemmShape& s, ComplexOps ops, cuDoubleComplex alpha,
                                  const cuDoubleComplex* A, const cuDoubleComplex* B, cuDoubleComplex beta,
                                  cuDoubleComplex* C) {
  if (cublasSetStream(ctx.cublas, ctx.stream) != CUBLAS_STATUS_SUCCESS) return OZGEMM_STATUS_EXECUTION_FAILED;
  const auto op = [](Op t, bool conj) { return t == Op::N ? CUBLAS_OP_N : conj ? CUBLAS_OP_C : CUBLAS_OP_T; };
  const cublasStatus_t st = cublasZgemm(ctx.cublas, op(s.transa, ops.conj_a), op(s.transb, ops.conj_b),
                                        static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k), &alpha, A,
                                        static_cast<int>(s.lda), B, static_cast<int>(s.ldb), &beta, C,
                                        static_cast<int>(s.ldc));
  return st == CUBLAS_STATUS_SUCCESS ? OZGEMM_STATUS_SUCCESS : OZGEMM_STATUS_EXECUTION_FAILED;
}

// The complex scheme (2M, numerics/ozaki2_complex.hpp): the statistics (unless stats_ready: FP64
// mode's decision left shifts, flags and S at these offsets) and the two transformed planes per
// modulus of each operand, the products over all planes (oz2_products, as the real scheme's), and the
// complex reconstruction per chunk.
ozgemmStatus_t run_ozaki2_complex(const ExecContext& ctx, const Ozaki2Plan& plan, bool stats_ready, const GemmShape& shape,
                                  ComplexOps ops, cuDoubleComplex alpha, const cuDoubleComplex* A,
                                  const cuDoubleComplex* B, cuDoubleComplex beta, cuDoubleComplex* C, void* workspace) {
  const numerics::Ozaki2Constants& cst = numerics::ozaki2_complex_constants(plan.moduli);
  const Oz2Buffers w = oz2_buffers(static_cast<char*>(workspace), plan);
  const kernels::ComplexOperandView va = complex_view_of_op_a(shape, A, ops.conj_a);
  const kernels::ComplexOperandView vb = complex_view_of_op_b(shape, B, ops.conj_b);
  cudaStream_t st = ctx.stream;
  record(ctx, 0);
  if (!stats_ready) {
    OZ_CUDA_TRY(kernels::launch_oz2c_stats(va, plan.m_pad, w.stats.shift_a, w.stats.flag_a, w.S_a, st));
    OZ_CUDA_TRY(kernels::launch_oz2c_stats(vb, plan.n_pad, w.stats.shift_b, w.stats.flag_b, w.S_b, st));
  }
  record(ctx, 1);
  OZ_CUDA_TRY(kernels::launch_oz2c_residues(va, w.stats.shift_a, w.S_a, cst, plan.m_pad, plan.kpad, plan.res_a_plane(),
                                            w.res_a, w.sft_a, st));
  OZ_CUDA_TRY(kernels::launch_oz2c_residues(vb, w.stats.shift_b, w.S_b, cst, plan.n_pad, plan.kpad, plan.res_b_plane(),
                                            w.res_b, w.sft_b, st));
  record(ctx, 2);
  kernels::Oz2cReconstructArgs e{};
  set_output(&e, w.stats.flag_a, w.stats.flag_b, alpha, beta, C, shape.ldc, va, vb);
  return oz2_chunks(ctx, plan, cst, w, e,
                    [&](const kernels::Oz2cReconstructArgs& x) { return kernels::launch_oz2c_reconstruct(x, cst, st); });
}

// std::visit's overload set from lambdas.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;
}  // namespace

ozgemmStatus_t run(const ExecContext& ctx, const CallPlan& plan, const GemmShape& shape, double alpha, const double* A,
                   const double* B, double beta, double* C, void* workspace) {
  if (plan.type != ElementType::RealF64) return OZGEMM_STATUS_INTERNAL_ERROR;  // a complex plan
  return std::visit(
      Overloaded{
          [&](const NativePlan&) { return run_native(ctx, shape, alpha, A, B, beta, C); },
          [&](const Ozaki1Plan& p) { return run_ozaki1(ctx, p, plan.stats_ready, shape, alpha, A, B, beta, C, workspace); },
          [&](const Ozaki2Plan& p) { return run_ozaki2(ctx, p, plan.stats_ready, shape, alpha, A, B, beta, C, workspace); },
      },
      plan.method);
}

ozgemmStatus_t run(const ExecContext& ctx, const CallPlan& plan, const GemmShape& shape, ComplexOps ops,
                   cuDoubleComplex alpha, const cuDoubleComplex* A, const cuDoubleComplex* B, cuDoubleComplex beta,
                   cuDoubleComplex* C, void* workspace) {
  if (plan.type != ElementType::ComplexF64) return OZGEMM_STATUS_INTERNAL_ERROR;  // a real plan
  return std::visit(
      Overloaded{
          [&](const NativePlan&) { return run_native_complex(ctx, shape, ops, alpha, A, B, beta, C); },
          [&](const Ozaki1Plan&) { return OZGEMM_STATUS_INTERNAL_ERROR; },  // the planner never makes one for complex data
          [&](const Ozaki2Plan& p) {
            return p.type == ElementType::ComplexF64
                       ? run_ozaki2_complex(ctx, p, plan.stats_ready, shape, ops, alpha, A, B, beta, C, workspace)
                       : OZGEMM_STATUS_INTERNAL_ERROR;
          },
      },
      plan.method);
}

ozgemmStatus_t scale_c(const ExecContext& ctx, const GemmShape& s, double beta, double* C) {
  OZ_CUDA_TRY(kernels::launch_scale_c(s.m, s.n, beta, C, s.ldc, ctx.stream));
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t scale_c(const ExecContext& ctx, const GemmShape& s, cuDoubleComplex beta, cuDoubleComplex* C) {
  OZ_CUDA_TRY(kernels::launch_oz2c_scale_c(s.m, s.n, beta, C, s.ldc, ctx.stream));
  return OZGEMM_STATUS_SUCCESS;
}

bool probe_build(DeviceDesc* dev) {
  // Both products' kernels of a family are built under the same condition (CMakeLists.txt).
  dev->sm90_kernels = kernels::fused_sm90_built() && kernels::b2b_sm90_built() && kernels::oz2_products_sm90_built();
  dev->portable_kernels = kernels::fused_portable_built() && kernels::b2b_portable_built();
  if (kernels::check_kernel_image() != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

}  // namespace dispatch
}  // namespace ozgemm
