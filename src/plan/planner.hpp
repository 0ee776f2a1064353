// src/plan/planner.hpp — turns a problem and the caller's settings into ONE plan value (CallPlan:
// plain data): the one place where what runs is decided (the scheme and its count, FP64 mode's
// decision from the data, AUTO resolved, kernel family chosen, fused requests that a problem does not
// fit turned into unfused with the reason recorded), sizes and workspace laid out. plan_call is the
// entry; the per-scheme layout functions below it are its parts. The dispatch layer (src/dispatch)
// maps a CallPlan to launches and decides nothing. Host-only C++; reads the kernels' configurations
// from kernels/dgemm/policy.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "kernels/dgemm/policy.hpp"
#include "ozgemm/numerics/accuracy.hpp"
#include "ozgemm/numerics/slice_layout.hpp"
#include "ozgemm/problem.hpp"
#include "ozgemm/types.hpp"

namespace ozgemm {

// What the caller asked for (the handle's settings and the call's shape).
struct Request {
  GemmShape shape;
  int slices = kDefaultSlices;  // 1..kMaxSlices
  Variant variant = Variant::Auto;
  KernelFamily family = KernelFamily::Auto;
  FusedAccumulator accumulator = FusedAccumulator::Auto;
};

// The first four regions of every workspace (Ozaki1Plan and DecisionPlan alike): the operands' shifts and
// Inf/NaN flags, int32 per row, 256-aligned. An emulation planned after FP64 mode's decision finds
// them where the decision wrote them.
struct StatsOffsets {
  size_t shift_a = 0, shift_b = 0, flag_a = 0, flag_b = 0, end = 0;
};
StatsOffsets stats_offsets(int64_t m_pad, int64_t n_pad);

struct Ozaki1Plan {
  Variant variant = Variant::Native;          // what runs: Native, Unfused, PartiallyFused, FullyFused
  Variant requested = Variant::Auto;           // what was asked for
  std::string fallback;                        // why a requested fused variant runs unfused (empty: it does not)
  KernelFamily family = KernelFamily::Auto;    // fused variants: Sm90 or Portable
  FusedAccumulator accumulator = FusedAccumulator::Auto;  // fully fused: Registers or Global
  kernels::FusedMode mode = kernels::FusedMode::Partial;  // fused variants
  kernels::TileShape tile;                     // fused variants
  int slices = kDefaultSlices;
  int64_t m = 0, n = 0, k = 0;
  int64_t m_pad = 0, n_pad = 0;                // rows of the sliced operands (multiples of kRowAlign)
  int64_t kblock = 0, kblocks = 0;             // k-blocking within the int32 exactness bound
  numerics::SliceLayout slices_a, slices_b;    // A reversed, B in order (numerics/slice_layout.hpp)
  // Workspace layout (byte offsets, each 256-aligned).
  StatsOffsets stats;
  size_t off_slices_a = 0, off_slices_b = 0, off_diag = 0, off_spill = 0, off_lt_workspace = 0;
  size_t workspace_bytes = 0;
  // Unfused and partially fused: the products and the epilogue run over chunks of m_chunk x
  // n_chunk entries of C (multiples of kRowAlign; partially fused: of kFusedChunkAlign) so the int32
  // planes stay within diag_buffer_cap; planes.ld = m_chunk, planes.cols = n_chunk, at off_diag.
  // Columns are chunked first; rows only when even kMinChunkCols columns of all rows do not fit.
  int64_t m_chunk = 0, n_chunk = 0;
  numerics::PlaneLayout planes;
  // Fully fused with kblocks > 1: int64 running sums at off_spill (numerics::SpillLayout).
  int64_t spill_entries = 0;
  // Fully fused with the Global accumulator: FP64 entries (r, c) at off_diag + 8 * (r + c * m_pad).
  int64_t acc_entries = 0;

  bool emulated() const { return variant != Variant::Native; }
  bool fused() const { return variant == Variant::PartiallyFused || variant == Variant::FullyFused; }
};

// Right after them in the decision's and Ozaki-II's workspaces: the Ozaki-II scaling's norms S of
// op(A)'s rows and op(B)'s columns (int64), so an Ozaki-II run after the decision finds them too.
// Returns the end of the region.
size_t oz2_norm_offsets(const StatsOffsets& stats, int64_t m_pad, int64_t n_pad, size_t* S_a, size_t* S_b);

// The element type of a product (part of the problem the planner reads).
enum class ElementType : int { RealF64 = 0, ComplexF64 = 1 };

// FP64 mode's decision (numerics/accuracy.hpp): the statistics pass, the magnitude digits, their
// INT8 product P (k in blocks of at most kMagExactK, columns of C in chunks so the int32 planes stay
// within diag_buffer_cap) and the bound's reduction. Workspace layout, byte offsets, 256-aligned.
// Complex data (type ComplexF64; numerics/ozaki2_complex.hpp): the same layout, with the statistics
// of each row's 2k parts, one magnitude digit an element (the larger of its parts'), and the complex
// moduli set's bound R2c (Ozaki-II only).
struct DecisionPlan {
  ElementType type = ElementType::RealF64;
  int64_t m = 0, n = 0, k = 0;
  int64_t m_pad = 0, n_pad = 0;
  int64_t kmag = 0;                 // k padded to kKAlign: the magnitude digits' row length
  int64_t kmag_block = 0, pblocks = 0;
  int64_t n_chunk = 0;              // columns of P per chunk (planes m_pad x n_chunk, ld m_pad)
  // The sample (BoundRequest::sample): the leading sample_m x sample_n entries of C (0: none, too few
  // rows), its operands' rows padded to sample_m_pad / sample_n_pad.
  int64_t sample_m = 0, sample_n = 0, sample_m_pad = 0, sample_n_pad = 0;
  StatsOffsets stats;
  size_t off_S_a = 0, off_S_b = 0;  // oz2_norm_offsets
  size_t off_d_a = 0, off_d_b = 0;  // Ozaki-II's extra shifts, kModuliWindow int8 tables of m_pad / n_pad
  size_t off_q_a = 0, off_q_b = 0, off_u_a = 0, off_u_b = 0, off_result = 0;
  size_t off_mag_a = 0, off_mag_b = 0, off_p = 0, off_lt = 0;
  size_t off_block_passed = 0;      // the Ozaki-II bound's block words (DecisionPolicy::bound_blocks(m, n) uint32)
  size_t workspace_bytes = 0;
};
// Empty string, or why the decision cannot run (then FP64 mode runs native DGEMM).
std::string plan_decision(const GemmShape& shape, const DeviceDesc& dev, DecisionPlan* plan,
                          ElementType type = ElementType::RealF64);

// The Ozaki-II scheme's plan (numerics/ozaki2.hpp; complex data: numerics/ozaki2_complex.hpp, the 2M
// form): the operands' residues (planes() planes of rows_pad x kpad int8, k-contiguous: real data one
// a modulus, complex data two, the transformed x0 and x1 of modulus i at planes 2i and 2i + 1), the
// products, and the reconstruction, over chunks of m_chunk x n_chunk entries of C within
// diag_buffer_cap. The products, one per plane:
//   Unfused: per plane one cuBLASLt INT8 GEMM per k-chunk of at most kOz2ChunkK into an int32
//     plane (past one chunk, each further chunk's product folded in modulo its p_i); the
//     reconstruction reduces each plane modulo its p_i.
//   PartiallyFused (Hopper, k within one chunk): one launch of the sm_90a GEMM that reduces each
//     product modulo its p_i in its epilogue (kernels/dgemm/ozaki2_products_sm90.cuh) into int8 planes.
struct Ozaki2Plan {
  ElementType type = ElementType::RealF64;  // ComplexF64: the complex moduli set, two planes a modulus
  int moduli = 0;
  Variant variant = Variant::Unfused;  // Unfused or PartiallyFused
  std::string fallback;                // why a requested PartiallyFused runs unfused (empty: it does not)
  int sm_count = 0;                    // PartiallyFused: the persistent grid
  int64_t m = 0, n = 0, k = 0;
  int64_t m_pad = 0, n_pad = 0, kpad = 0;
  int64_t kchunk = 0, kchunks = 0;
  int64_t m_chunk = 0, n_chunk = 0;
  StatsOffsets stats;                   // shifts (shift_from_max) and flags
  size_t off_S_a = 0, off_S_b = 0, off_sft_a = 0, off_sft_b = 0;
  size_t off_res_a = 0, off_res_b = 0;  // planes() planes each
  size_t off_products = 0;  // planes() planes of m_chunk x n_chunk (column-major, ld m_chunk): int32 (Unfused), int8
  size_t off_partial = 0;   // one more such plane when kchunks > 1 (a chunk's product before its reduction)
  size_t off_lt = 0;
  size_t workspace_bytes = 0;
  // Planes a modulus (the products' Oz2ProductsArgs::planes_per_modulus) and in all.
  int planes_per_modulus() const { return type == ElementType::ComplexF64 ? 2 : 1; }
  int planes() const { return planes_per_modulus() * moduli; }
  int64_t res_a_plane() const { return m_pad * kpad; }
  int64_t res_b_plane() const { return n_pad * kpad; }
  int64_t product_plane() const { return m_chunk * n_chunk; }
};
// Empty string, or why the problem cannot be planned for Ozaki-II with `variant` (Auto, Unfused or
// PartiallyFused: auto_rules' choice, the cuBLASLt path, the Hopper products; a PartiallyFused
// request whose k needs several int32 chunks is planned unfused with Ozaki2Plan::fallback saying so),
// for real or complex data (`type`).
std::string plan_ozaki2(const GemmShape& shape, int moduli, Variant variant, const DeviceDesc& dev, Ozaki2Plan* plan,
                        ElementType type = ElementType::RealF64);
// Why this device and build cannot run Ozaki-II's `variant` at all (empty: they can): FullyFused and
// Native have no Ozaki-II form; PartiallyFused needs a Hopper GPU and the sm_90a kernels.
std::string ozaki2_variant_unavailable(Variant variant, const DeviceDesc& dev);

// What the decision's device passes report (the dispatch layer copies them back).
struct DecisionCounts {
  int q_max_a = 1, q_max_b = 1;  // exact digits, maxima over the finite rows / columns
  int s_max = 0;                 // largest of the entries' smallest counts from s_from (kMaxSlices + 1: none)
  double ratio_max[numerics::kSliceWindow] = {};  // maxima of R(s_from + w)
  double oz2_ratio_max[numerics::kModuliWindow] = {};  // Ozaki-II: maxima of R2(kMinModuli + w)
};

// Upper bound on the int32 diagonal planes of one chunk (bytes): an eighth of the device memory,
// between kDiagBufferMin and kDiagBufferCap. Large enough that square problems up to 16384 with 7
// slices run in one chunk on an 80 GB GPU.
constexpr int64_t kDiagBufferCap = int64_t(16) << 30;
constexpr int64_t kDiagBufferMin = int64_t(256) << 20;
int64_t diag_buffer_cap(const DeviceDesc& dev);
constexpr int64_t kMinChunkCols = 256;  // columns per chunk at least, before rows are chunked too

// Can the device and build run `variant` with kernel family `family` at all (any problem)?
// Empty string: yes; otherwise why not (no INT8 tensor cores, no Hopper GPU for Sm90, kernels not
// built). Auto family resolves to Sm90 on compute capability 9.0, Portable elsewhere.
std::string variant_unavailable(Variant variant, KernelFamily family, const DeviceDesc& dev);

// Ozaki-I's plan for a request. Empty string on success; otherwise why it cannot be planned (invalid
// shape or slice count, or a variant/family this device or build cannot run). A fused variant that
// the problem does not fit (grid or spill buffer past the kernels' limits) is planned unfused, with
// Ozaki1Plan::fallback saying why. AUTO takes the rule of src/plan/auto_rules.hpp (variant Native:
// AUTO found native DGEMM faster at this count). Empty problems (m, n or k == 0) are planned like
// any other; the API's BLAS quick returns never run them.
std::string plan_ozaki1(const Request& request, const DeviceDesc& dev, Ozaki1Plan* plan);

// ---- The call's plan: plan_call ------------------------------------------------------------------

// One call's problem: its shape and element type.
struct CallProblem {
  GemmShape shape;
  ElementType type = ElementType::RealF64;
};

// A handle's settings, as plain data (ozgemm.h's setters).
struct CallSettings {
  bool fp64_mode = true;      // accuracy FP64 (the count decided per call from the data); false: FIXED
  Scheme scheme = Scheme::Auto;
  int slices = 0;             // FIXED mode's Ozaki-I count; 0: kDefaultSlices
  int moduli = 0;             // FIXED mode's Ozaki-II count; 0: kDefaultModuli (complex data: kDefaultComplexModuli)
  Variant variant = Variant::Auto;
  KernelFamily family = KernelFamily::Auto;
  FusedAccumulator accumulator = FusedAccumulator::Auto;

  int effective_slices() const { return slices > 0 ? slices : kDefaultSlices; }
  int effective_moduli() const { return moduli > 0 ? moduli : kDefaultModuli; }
  int effective_complex_moduli() const { return moduli > 0 ? moduli : kDefaultComplexModuli; }
  // Ozaki-II is the only scheme (scheme Ozaki2 and a variant other than Native).
  bool ozaki2_only() const { return scheme == Scheme::Ozaki2 && variant != Variant::Native; }
  // FP64 mode's decision runs (variant Native asks for no emulation in either mode).
  bool decides() const { return fp64_mode && variant != Variant::Native; }
};

// cuBLAS DGEMM (complex data: ZGEMM): no emulation.
struct NativePlan {};

// What ran and why (the C API's ozgemmCallInfo_t, ozgemm.h, says what each field means).
struct CallReport {
  Scheme scheme = Scheme::Ozaki1;   // Ozaki1 also for native DGEMM (slices and moduli 0 then)
  Variant variant = Variant::Native;
  int slices = 0, moduli = 0;
  double bound = 0, target = 0;
  bool fell_back = false;           // FP64 mode ran native DGEMM instead of an emulation
  std::string reason;
};

// The plan of one call: what runs (one alternative per method; complex adds its own), the workspace
// it needs, and the report.
struct CallPlan {
  ElementType type = ElementType::RealF64;  // the data's: the dispatch entry for the other type refuses the plan
  std::variant<NativePlan, Ozaki1Plan, Ozaki2Plan> method;
  // Bytes of workspace the call needs: the method's; for a query without data in FP64 mode, the
  // most any count the decision may choose needs (ozgemmGetWorkspaceSize).
  size_t workspace_bytes = 0;
  // The method's operand statistics (shifts, flags; Ozaki-II: and norms S) are already in the
  // workspace at the offsets it reads (FP64 mode's decision wrote them): the emulation skips them.
  bool stats_ready = false;
  CallReport report;
};

// FP64 mode's bound pass (numerics/accuracy.hpp; complex data: ozaki2_complex.hpp's R2c, with
// ozaki2 set and ozaki1 not): the magnitude digits and U (unless
// magnitudes_ready; with ozaki2 also the norms S and extra shifts), the magnitude product, and the
// bounds' reductions: Ozaki-I's from count s_from (ozaki1), Ozaki-II's at every moduli count
// (ozaki2; needs S: not with magnitudes_ready unless an earlier pass had ozaki2), else every entry.
// sample (DecisionPlan::sample_m > 0, before any other pass; either scheme or both): the leading block
// of C only (DecisionPlan's sample_m x sample_n), its rows' and columns' digits and magnitudes computed
// by the sample itself; a moduli count it gives +inf fails on all of C, and its s_max (from s_from) is
// at most the full pass's (past kMaxSlices: no slice count meets the bound). keep_dead: the counts the sample ruled
// out stay out (Ozaki-II's full pass after it: they read +inf, and the pass skips them).
struct BoundRequest {
  bool ozaki1 = true;
  int s_from = 1;
  bool ozaki2 = false;
  double target = 0;
  bool magnitudes_ready = false;
  bool sample = false;
  bool keep_dead = false;
};

// How FP64 mode reads the data: the device passes (the dispatch layer runs them) and the workspace
// (the API layer owns it), supplied by the caller of plan_call, over operands of the problem's
// element type (DecisionPlan::type says which). Each returns false on failure; the caller keeps the
// status.
class DecisionData {
 public:
  // The stream is being captured into a CUDA graph (the decision cannot read data back); *ok false
  // when the query failed or the data cannot be read (the first call of every decision).
  virtual bool capturing(bool* ok) = 0;
  // A workspace of at least `bytes` for the passes and the plan after them. *no_memory: the
  // allocation failed (a smaller request may still succeed); *moved: earlier contents are gone.
  virtual bool reserve(size_t bytes, bool* no_memory, bool* moved) = 0;
  // Pass 1: shifts, flags and exact digits of both operands (left in the workspace); their maxima
  // into *counts, or with counts null not read back (no synchronisation: the passes after it run in order).
  virtual bool digits(const DecisionPlan& plan, DecisionCounts* counts) = 0;
  // Pass 2: the BoundRequest.
  virtual bool bound(const DecisionPlan& plan, const BoundRequest& request, DecisionCounts* counts) = 0;

 protected:
  ~DecisionData() = default;
};

enum class PlanStatus : int {
  Ok = 0,
  Invalid,       // the planner refuses the problem or a count (OZGEMM_STATUS_INVALID_VALUE)
  NotSupported,  // a variant, kernel family or element type this device or build lacks (OZGEMM_STATUS_NOT_SUPPORTED)
  DataFailed,    // a DecisionData call failed (its status is the caller's)
};

// THE planning entry: the plan of one call. `data` null: a query without data (the settings' count;
// in FP64 mode with the workspace any decided count may need); with data, FP64 mode reads A and B
// through it and decides. Complex data: FIXED mode plans the complex Ozaki-II scheme (Ozaki2Plan of
// type ComplexF64) at effective_complex_moduli(), variant NATIVE native ZGEMM; FP64 mode decides as
// for real data with complex Ozaki-II the only candidate (R2c's count, or native ZGEMM: report.reason
// says why). *why (optional): why it was refused.
PlanStatus plan_call(const CallSettings& settings, const CallProblem& problem, const DeviceDesc& dev,
                     DecisionData* data, CallPlan* plan, std::string* why = nullptr);


}  // namespace ozgemm
