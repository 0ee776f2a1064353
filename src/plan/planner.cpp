// The planner (planner.hpp): the one place that decides what runs.
#include "plan/planner.hpp"

#include <algorithm>

#include "ozgemm/numerics/ozaki1.hpp"
#include "ozgemm/numerics/ozaki2.hpp"
#include "plan/auto_rules.hpp"

namespace ozgemm {

namespace {
using kernels::FusedMode;
using kernels::UnfusedPolicy;

int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }
size_t align256(size_t x) { return (x + 255) / 256 * 256; }

bool is_fused(Variant v) { return v == Variant::PartiallyFused || v == Variant::FullyFused; }

KernelFamily resolve_family(KernelFamily f, const DeviceDesc& dev) {
  return f == KernelFamily::Auto ? (dev.is_hopper() ? KernelFamily::Sm90 : KernelFamily::Portable) : f;
}

FusedMode mode_of(Variant v, FusedAccumulator acc) {
  if (v == Variant::PartiallyFused) return FusedMode::Partial;
  return acc == FusedAccumulator::Global ? FusedMode::FullyGlobal : FusedMode::FullyRegisters;
}

// Sizes, k-blocking and workspace of an emulated variant (family and accumulator resolved).
// Empty string, or why this variant cannot run this problem (the caller may fall back).
std::string layout(const Request& rq, const DeviceDesc& dev, Variant variant, KernelFamily family,
                   FusedAccumulator accumulator, Ozaki1Plan* out) {
  const GemmShape& shape = rq.shape;
  const int slices = rq.slices;
  const bool fused = is_fused(variant);
  Ozaki1Plan p = *out;
  p.variant = variant;
  p.family = fused ? family : KernelFamily::Auto;
  p.fallback.clear();
  p.m_pad = round_up(std::max<int64_t>(1, shape.m), UnfusedPolicy::kRowAlign);
  p.n_pad = round_up(std::max<int64_t>(1, shape.n), UnfusedPolicy::kRowAlign);
  // The longest diagonal has `slices` terms; it bounds the k-block for int32 exactness.
  const int64_t kalign = fused ? kernels::kFusedKAlign : UnfusedPolicy::kKAlign;
  const int64_t kmax = numerics::int32_exact_k(slices) / kalign * kalign;
  const int64_t kpad = round_up(std::max<int64_t>(1, shape.k), kalign);
  p.kblocks = (kpad + kmax - 1) / kmax;
  p.accumulator = variant == Variant::FullyFused
                      ? (accumulator == FusedAccumulator::Auto ? auto_accumulator(family, p.kblocks) : accumulator)
                      : FusedAccumulator::Auto;
  p.mode = mode_of(variant, p.accumulator);
  p.tile = fused ? kernels::fused_tile(family, p.mode) : kernels::TileShape{};
  // Balance the blocks so padding is at most kalign-1 per block.
  p.kblock = round_up((kpad + p.kblocks - 1) / p.kblocks, kalign);
  p.slices_a = numerics::SliceLayout::make(slices, /*reversed=*/true, p.kblock, p.kblocks);
  p.slices_b = numerics::SliceLayout::make(slices, /*reversed=*/false, p.kblock, p.kblocks);
  // cuBLASLt and the TMA descriptors take int32 sizes and leading dimensions.
  const int64_t kmaxgemm = int64_t(slices) * p.kblock;
  if (p.slices_a.ld > INT32_MAX || p.m_pad > INT32_MAX || p.n_pad > INT32_MAX || kmaxgemm > INT32_MAX)
    return "problem too large for 32-bit GEMM dimensions";
  p.spill_entries = p.acc_entries = 0;
  if (variant == Variant::FullyFused) {
    p.m_chunk = p.m_pad;  // no int32 planes; one launch over all of C
    p.n_chunk = p.n_pad;
    const kernels::FusedGrid grid = kernels::fused_grid(p.m, p.n, p.tile);
    if (grid.tiles_n > kernels::kMaxGridY)
      return "n too large for the fully fused kernel's grid (at most 65535 column tiles)";
    p.spill_entries = numerics::SpillLayout::entries(p.kblocks, grid.tiles(), int64_t(p.tile.m) * p.tile.n);
    if (p.accumulator == FusedAccumulator::Global) p.acc_entries = p.m_pad * p.n;
    if ((p.spill_entries + p.acc_entries) * 8 > diag_buffer_cap(dev))
      return "the fully fused kernel's k-block spill and accumulator would exceed the buffer cap";
  } else {
    // Chunks: bytes per entry of C across all planes; columns first, then rows. Partially fused
    // chunks start on tile boundaries.
    const int64_t calign = fused ? kernels::kFusedChunkAlign : UnfusedPolicy::kRowAlign;
    const int64_t per_entry = int64_t(slices) * p.kblocks * int64_t(sizeof(int32_t));
    const int64_t cap_entries = diag_buffer_cap(dev) / per_entry;
    const int64_t cols_fit = cap_entries / p.m_pad / calign * calign;
    if (cols_fit >= std::min(p.n_pad, kMinChunkCols)) {
      p.m_chunk = p.m_pad;
      p.n_chunk = std::min({p.n_pad, UnfusedPolicy::kMaxChunkCols, cols_fit});
    } else {
      p.n_chunk = std::min(p.n_pad, kMinChunkCols);
      p.m_chunk = std::max<int64_t>(calign, std::min(p.m_pad, cap_entries / p.n_chunk / calign * calign));
    }
  }
  const bool planes = variant != Variant::FullyFused;
  p.planes = numerics::PlaneLayout{slices, p.kblocks, planes ? p.m_chunk : 0, planes ? p.n_chunk : 0};
  p.stats = stats_offsets(p.m_pad, p.n_pad);
  size_t off = p.stats.end;
  p.off_slices_a = off; off = align256(off + size_t(p.slices_a.bytes(p.m_pad)));
  p.off_slices_b = off; off = align256(off + size_t(p.slices_b.bytes(p.n_pad)));
  p.off_diag = off;
  if (planes) {
    off = align256(off + size_t(p.planes.bytes()));
    p.off_spill = off;
  } else {
    off = align256(off + sizeof(double) * size_t(p.acc_entries));
    p.off_spill = off;
    off = align256(off + sizeof(int64_t) * size_t(p.spill_entries));
  }
  p.off_lt_workspace = off;
  if (variant == Variant::Unfused) off = align256(off + size_t(UnfusedPolicy::kLtWorkspaceBytes));
  p.workspace_bytes = off;
  *out = p;
  return {};
}
}  // namespace

StatsOffsets stats_offsets(int64_t m_pad, int64_t n_pad) {
  StatsOffsets o;
  size_t off = 0;
  o.shift_a = off; off = align256(off + sizeof(int32_t) * size_t(m_pad));
  o.shift_b = off; off = align256(off + sizeof(int32_t) * size_t(n_pad));
  o.flag_a = off;  off = align256(off + sizeof(int32_t) * size_t(m_pad));
  o.flag_b = off;  off = align256(off + sizeof(int32_t) * size_t(n_pad));
  o.end = off;
  return o;
}

size_t oz2_norm_offsets(const StatsOffsets& stats, int64_t m_pad, int64_t n_pad, size_t* S_a, size_t* S_b) {
  size_t off = stats.end;
  *S_a = off; off = align256(off + sizeof(int64_t) * size_t(m_pad));
  *S_b = off; off = align256(off + sizeof(int64_t) * size_t(n_pad));
  return off;
}

std::string plan_decision(const GemmShape& shape, const DeviceDesc& dev, DecisionPlan* out, ElementType type) {
  const std::string bad = check_shape(shape);
  if (!bad.empty()) return bad;
  if (shape.m < 1 || shape.n < 1 || shape.k < 1) return "empty problem";
  if (type != ElementType::RealF64 && type != ElementType::ComplexF64) return "unknown element type";
  DecisionPlan d;
  d.type = type;  // complex data: the same layout (one magnitude digit a complex element)
  d.m = shape.m;
  d.n = shape.n;
  d.k = shape.k;
  d.m_pad = round_up(shape.m, UnfusedPolicy::kRowAlign);
  d.n_pad = round_up(shape.n, UnfusedPolicy::kRowAlign);
  d.kmag = round_up(shape.k, UnfusedPolicy::kKAlign);
  const int64_t kb_max = numerics::kMagExactK / UnfusedPolicy::kKAlign * UnfusedPolicy::kKAlign;
  d.pblocks = (d.kmag + kb_max - 1) / kb_max;
  d.kmag_block = round_up((d.kmag + d.pblocks - 1) / d.pblocks, UnfusedPolicy::kKAlign);
  if (d.kmag > INT32_MAX || d.m_pad > INT32_MAX || d.n_pad > INT32_MAX) return "problem too large for the decision";
  const int64_t per_col = d.m_pad * d.pblocks * int64_t(sizeof(int32_t));
  // Chunks of whole bound blocks (the bound pass's block words are by global column block).
  constexpr int64_t col_align = kernels::DecisionPolicy::kBoundCols;
  static_assert(col_align % UnfusedPolicy::kRowAlign == 0 && UnfusedPolicy::kMaxChunkCols % col_align == 0,
                "column chunks of whole bound blocks");
  const int64_t cols_fit = diag_buffer_cap(dev) / per_col / col_align * col_align;
  if (cols_fit < col_align) return "too many rows for the decision's magnitude product";
  d.n_chunk = std::min({d.n_pad, cols_fit, UnfusedPolicy::kMaxChunkCols});
  if (d.m >= kernels::DecisionPolicy::kOz2SampleMinRows) {
    d.sample_m = kernels::DecisionPolicy::kOz2SampleRows;
    d.sample_n = std::min({kernels::DecisionPolicy::kOz2SampleCols, d.n, d.n_chunk});
    d.sample_m_pad = round_up(d.sample_m, UnfusedPolicy::kRowAlign);
    d.sample_n_pad = round_up(d.sample_n, UnfusedPolicy::kRowAlign);
  }
  d.stats = stats_offsets(d.m_pad, d.n_pad);
  size_t off = oz2_norm_offsets(d.stats, d.m_pad, d.n_pad, &d.off_S_a, &d.off_S_b);
  d.off_d_a = off; off = align256(off + size_t(numerics::kModuliWindow) * size_t(d.m_pad));
  d.off_d_b = off; off = align256(off + size_t(numerics::kModuliWindow) * size_t(d.n_pad));
  d.off_q_a = off; off = align256(off + sizeof(int32_t) * size_t(d.m_pad));
  d.off_q_b = off; off = align256(off + sizeof(int32_t) * size_t(d.n_pad));
  d.off_u_a = off; off = align256(off + sizeof(int64_t) * size_t(d.m_pad));
  d.off_u_b = off; off = align256(off + sizeof(int64_t) * size_t(d.n_pad));
  d.off_result = off; off = align256(off + 256);
  d.off_mag_a = off; off = align256(off + size_t(d.m_pad) * size_t(d.kmag));
  d.off_mag_b = off; off = align256(off + size_t(d.n_pad) * size_t(d.kmag));
  d.off_p = off; off = align256(off + size_t(per_col) * size_t(d.n_chunk));
  d.off_lt = off; off = align256(off + size_t(UnfusedPolicy::kLtWorkspaceBytes));
  d.off_block_passed = off; off = align256(off + sizeof(uint32_t) * size_t(kernels::DecisionPolicy::bound_blocks(d.m, d.n)));
  d.workspace_bytes = off;
  *out = d;
  return {};
}

std::string ozaki2_variant_unavailable(Variant variant, const DeviceDesc& dev) {
  if (!dev.has_int8_tensor_cores()) return "INT8 tensor cores need compute capability 7.5 or newer";
  switch (variant) {
    case Variant::Auto:
    case Variant::Unfused: return {};
    case Variant::PartiallyFused:
      if (!dev.is_hopper()) return "Ozaki-II's fused products need a compute capability 9.0 GPU (Hopper)";
      if (!dev.sm90_kernels) return "this build has no sm_90a kernels (OZGEMM_CUDA_ARCHITECTURES, CUTLASS headers)";
      return {};
    case Variant::FullyFused:
      // Short: FP64 mode quotes it, after its own words, in ozgemmCallInfo_t::reason (160 characters).
      return "Ozaki-II has no fully fused variant (docs/performance.md says why); use PARTIALLY_FUSED or UNFUSED";
    case Variant::Native: return "variant NATIVE runs no Ozaki scheme";
  }
  return "unknown variant";
}

std::string plan_ozaki2(const GemmShape& shape, int moduli, Variant variant, const DeviceDesc& dev, Ozaki2Plan* out,
                        ElementType type) {
  const std::string bad = check_shape(shape);
  if (!bad.empty()) return bad;
  if (moduli < kMinModuli || moduli > kMaxModuli)
    return "moduli must be in " + std::to_string(kMinModuli) + ".." + std::to_string(kMaxModuli);
  const std::string unavailable = ozaki2_variant_unavailable(variant, dev);
  if (!unavailable.empty()) return unavailable;
  if (type != ElementType::RealF64 && type != ElementType::ComplexF64) return "unknown element type";
  Ozaki2Plan p;
  p.type = type;
  p.moduli = moduli;
  p.sm_count = dev.sm_count;
  p.m = shape.m;
  p.n = shape.n;
  p.k = shape.k;
  p.m_pad = round_up(std::max<int64_t>(1, shape.m), UnfusedPolicy::kRowAlign);
  p.n_pad = round_up(std::max<int64_t>(1, shape.n), UnfusedPolicy::kRowAlign);
  p.kpad = round_up(std::max<int64_t>(1, shape.k), UnfusedPolicy::kKAlign);
  p.kchunks = (p.kpad + numerics::kOz2ChunkK - 1) / numerics::kOz2ChunkK;
  p.kchunk = round_up((p.kpad + p.kchunks - 1) / p.kchunks, UnfusedPolicy::kKAlign);
  if (p.kpad > INT32_MAX || p.m_pad > INT32_MAX || p.n_pad > INT32_MAX) return "problem too large for 32-bit GEMM dimensions";
  const Variant wanted = variant == Variant::Auto ? auto_ozaki2_variant(shape, dev) : variant;
  p.variant = wanted;
  if (wanted == Variant::PartiallyFused && p.kchunks > 1) {
    p.variant = Variant::Unfused;
    if (variant == Variant::PartiallyFused)
      p.fallback = "k = " + std::to_string(shape.k) + " needs " + std::to_string(p.kchunks) +
                   " int32 chunks; the fused products take one (k <= " + std::to_string(numerics::kOz2ChunkK) + ")";
  }
  static_assert(kernels::kOz2ProductsAlign == UnfusedPolicy::kRowAlign && kernels::kOz2ProductsAlign == UnfusedPolicy::kKAlign,
                "the residue planes and product planes are laid out for both product paths");
  // Chunks of C: the product planes per entry (int8 when the GEMM reduces them, int32 from
  // cuBLASLt), plus one int32 partial-sum plane when k needs several int32 chunks.
  const int64_t plane_entry = p.variant == Variant::PartiallyFused ? int64_t(sizeof(int8_t)) : int64_t(sizeof(int32_t));
  const int64_t per_entry = plane_entry * p.planes() + (p.kchunks > 1 ? int64_t(sizeof(int32_t)) : 0);
  const int64_t cap_entries = diag_buffer_cap(dev) / per_entry;
  const int64_t cols_fit = cap_entries / p.m_pad / UnfusedPolicy::kRowAlign * UnfusedPolicy::kRowAlign;
  if (cols_fit >= std::min(p.n_pad, kMinChunkCols)) {
    p.m_chunk = p.m_pad;
    p.n_chunk = std::min({p.n_pad, UnfusedPolicy::kMaxChunkCols, cols_fit});
  } else {
    p.n_chunk = std::min(p.n_pad, kMinChunkCols);
    p.m_chunk = std::max<int64_t>(UnfusedPolicy::kRowAlign,
                                  std::min(p.m_pad, cap_entries / p.n_chunk / UnfusedPolicy::kRowAlign * UnfusedPolicy::kRowAlign));
  }
  p.stats = stats_offsets(p.m_pad, p.n_pad);
  size_t off = oz2_norm_offsets(p.stats, p.m_pad, p.n_pad, &p.off_S_a, &p.off_S_b);
  p.off_sft_a = off; off = align256(off + sizeof(int32_t) * size_t(p.m_pad));
  p.off_sft_b = off; off = align256(off + sizeof(int32_t) * size_t(p.n_pad));
  p.off_res_a = off; off = align256(off + size_t(p.planes()) * size_t(p.res_a_plane()));
  p.off_res_b = off; off = align256(off + size_t(p.planes()) * size_t(p.res_b_plane()));
  p.off_products = off; off = align256(off + size_t(plane_entry) * size_t(p.planes()) * size_t(p.product_plane()));
  p.off_partial = off; off = align256(off + (p.kchunks > 1 ? sizeof(int32_t) * size_t(p.product_plane()) : 0));
  p.off_lt = off; off = align256(off + size_t(UnfusedPolicy::kLtWorkspaceBytes));
  p.workspace_bytes = off;
  *out = p;
  return {};
}

int64_t diag_buffer_cap(const DeviceDesc& dev) {
  return std::min(kDiagBufferCap, std::max(kDiagBufferMin, dev.memory_bytes / 8));
}

std::string variant_unavailable(Variant variant, KernelFamily family, const DeviceDesc& dev) {
  if (variant == Variant::Native || variant == Variant::Auto) return {};
  if (!dev.has_int8_tensor_cores()) return "INT8 tensor cores need compute capability 7.5 or newer";
  if (!is_fused(variant)) return {};
  if (family != KernelFamily::Auto && family != KernelFamily::Sm90 && family != KernelFamily::Portable)
    return "unknown kernel family";
  const KernelFamily f = resolve_family(family, dev);
  if (f == KernelFamily::Sm90) {
    if (!dev.is_hopper()) return "the Hopper fused kernels need a compute capability 9.0 GPU";
    if (!dev.sm90_kernels) return "this build has no sm_90a fused kernels (OZGEMM_CUDA_ARCHITECTURES, CUTLASS headers)";
    return {};
  }
  if (dev.cc_major < 8) return "the fused kernels need compute capability 8.0 or newer";
  if (!dev.portable_kernels) return "this build has no portable fused kernels (CUTLASS headers missing)";
  return {};
}

std::string plan_ozaki1(const Request& rq, const DeviceDesc& dev, Ozaki1Plan* out) {
  const std::string bad = check_shape(rq.shape);
  if (!bad.empty()) return bad;
  if (rq.slices < 1 || rq.slices > kMaxSlices) return "slices must be in 1.." + std::to_string(kMaxSlices);
  Ozaki1Plan p;
  p.requested = rq.variant;
  p.slices = rq.slices;
  p.m = rq.shape.m;
  p.n = rq.shape.n;
  p.k = rq.shape.k;
  Variant v = rq.variant;
  if (v == Variant::Auto) {
    v = auto_variant(rq.shape, rq.slices, dev);
    // AUTO never picks a kernel this device or build lacks.
    if (is_fused(v) && !variant_unavailable(v, rq.family, dev).empty()) v = Variant::Unfused;
  } else {
    const std::string why = variant_unavailable(v, rq.family, dev);
    if (!why.empty()) return why;
  }
  if (v == Variant::Native) {
    p.variant = Variant::Native;
    *out = p;
    return {};
  }
  if (!dev.has_int8_tensor_cores()) return "INT8 tensor cores need compute capability 7.5 or newer";
  if (is_fused(v)) {
    const std::string why = layout(rq, dev, v, resolve_family(rq.family, dev), rq.accumulator, &p);
    if (why.empty()) {
      *out = p;
      return {};
    }
    // Kernel limits are the planner's business, never the user's: run unfused, and say why.
    const std::string unfused = layout(rq, dev, Variant::Unfused, KernelFamily::Auto, FusedAccumulator::Auto, &p);
    if (!unfused.empty()) return unfused;
    p.fallback = why;
    *out = p;
    return {};
  }
  const std::string why = layout(rq, dev, Variant::Unfused, KernelFamily::Auto, FusedAccumulator::Auto, &p);
  if (!why.empty()) return why;
  *out = p;
  return {};
}

}  // namespace ozgemm
