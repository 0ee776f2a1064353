#include "planner.hpp"

#include <algorithm>

#include "ozgemm/numerics.hpp"

namespace ozgemm {

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::Auto: return "auto";
    case Variant::Unfused: return "unfused";
    case Variant::PartiallyFused: return "partially-fused";
    case Variant::FullyFused: return "fully-fused";
    case Variant::Native: return "native";
  }
  return "unknown";
}

namespace {
int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }
size_t align256(size_t x) { return (x + 255) / 256 * 256; }
}  // namespace

namespace {
// Datasheet dense rates (TOPS / TFLOPS) by compute capability, for the roofline choice.
struct ArchRates {
  int cc;
  double int8_tops, fp64_tflops;
};
constexpr ArchRates kArchRates[] = {
    {75, 130.0, 0.25},   // T4-class Turing
    {80, 624.0, 19.5},   // A100 (FP64 tensor cores)
    {86, 284.0, 0.6},    // RTX 30 / A40-class Ampere
    {87, 275.0, 0.4},    // Orin
    {89, 733.0, 1.4},    // L40S / RTX 4090-class Ada
    {90, 1979.0, 67.0},  // H100 / H200 SXM
    {100, 4500.0, 40.0}, // B200
};
}  // namespace

// Hopper (sm_90), measured on an H100 SXM, 2026-11-21 (bench/results/2026-11-21-h100-variants,
// measured by `bash bench/device_session.sh`, winners tabulated by
// `bench/summarize.py <results> --tuning`): native DGEMM 51-60 TFLOPS at every benchmarked shape.
// Emulation won only with 6 slices at 8192^3 (partially fused 61.6, unfused 61.5 vs native 57.0);
// at 4096^3 with 6 slices native still won (60.0 vs 57.0). With 7 or 8 slices native won
// everywhere (best emulated: 47.0 TFLOPS at 16384^3, 7 slices).
struct HopperRule {
  int max_slices;
  int64_t min_mn, min_k;  // min(m, n) and k at least
  Variant variant;
};
constexpr HopperRule kHopperRules[] = {
    {6, 8192, 8192, Variant::PartiallyFused},
};

Variant choose_auto_variant(const GemmShape& shape, int slices, const DeviceDesc& dev) {
  const int cc = dev.cc_major * 10 + dev.cc_minor;
  if (cc < 75) return Variant::Native;  // no INT8 tensor cores
  if (dev.cc_major == 9) {
    for (const auto& r : kHopperRules)
      if (slices <= r.max_slices && std::min(shape.m, shape.n) >= r.min_mn && shape.k >= r.min_k) return r.variant;
    return Variant::Native;
  }
  const ArchRates* best = nullptr;                  // the closest known architecture not newer
  for (const auto& r : kArchRates)
    if (r.cc <= cc && (!best || r.cc > best->cc)) best = &r;
  const double products = numerics::triangle_products(slices);
  const double emulated_tflops = best->int8_tops / products * kEmulationEfficiency;
  return emulated_tflops > best->fp64_tflops ? Variant::Unfused : Variant::Native;
}

int64_t diag_buffer_cap(const DeviceDesc& dev) {
  return std::min(kDiagBufferCap, std::max(kDiagBufferMin, dev.memory_bytes / 8));
}

// Measured on an H200, 2026-11-21, 7 slices (bench/results/2026-11-21-h200-ksplit-accumulators):
// registers won with one k-block (8192^3: 41.9 vs 34.3 TFLOPS; 4096^3: 43.4 vs 26.7) and the
// global accumulator's larger tile won with k-blocks (2048 x 2048 x 65536: 39.4 vs 30.7). The
// portable kernels: registers 19.1 / 19.0 vs 17.5 / 16.2, global 18.8 vs 18.4 at the large k.
FusedAccumulator default_fused_accumulator(KernelFamily, int64_t kblocks) {
  return kblocks > 1 ? FusedAccumulator::Global : FusedAccumulator::Registers;
}

TileConfig fused_tile_config(Variant v, KernelFamily family, FusedAccumulator acc) {
  TileConfig t;
  if (v != Variant::PartiallyFused && v != Variant::FullyFused) return t;
  if (family == KernelFamily::Portable) {
    t.m = 128, t.n = 128, t.k = 64;
  } else if (v == Variant::PartiallyFused || acc == FusedAccumulator::Global) {
    t.m = 128, t.n = 256, t.k = 128, t.cluster_m = 2, t.cluster_n = 1;
  } else {
    t.m = 128, t.n = 128, t.k = 128, t.cluster_m = 2, t.cluster_n = 2;
  }
  return t;
}

std::string plan_variant(const GemmShape& shape, int slices, const DeviceDesc& dev, Variant variant, Plan* plan,
                         KernelFamily family, FusedAccumulator accumulator) {
  const std::string why = check_shape(shape);
  if (!why.empty()) return why;
  if (slices < 1 || slices > numerics::kMaxSlices) return "slices must be in 1..20";
  if (dev.cc_major * 10 + dev.cc_minor < 75) return "INT8 tensor cores need compute capability 7.5 or newer";
  const bool fused = variant == Variant::PartiallyFused || variant == Variant::FullyFused;
  if (!fused && variant != Variant::Unfused) return "plan_variant plans the emulated variants only";
  const bool hopper = dev.cc_major == 9 && dev.cc_minor == 0;
  if (fused && family == KernelFamily::Auto) family = hopper ? KernelFamily::Sm90 : KernelFamily::Portable;
  if (fused && family == KernelFamily::Sm90 && !hopper) return "the Hopper fused kernels need an sm_90 GPU";
  if (fused && dev.cc_major < 8) return "the fused kernels need compute capability 8.0 or newer";
  Plan p;
  p.variant = variant;
  p.family = fused ? family : KernelFamily::Auto;
  p.slices = slices;
  p.m = shape.m;
  p.n = shape.n;
  p.k = shape.k;
  p.m_pad = round_up(std::max<int64_t>(1, shape.m), kRowAlign);
  p.n_pad = round_up(std::max<int64_t>(1, shape.n), kRowAlign);
  // Longest diagonal has `slices` terms; it bounds the k-block for int32 exactness.
  const int64_t kalign = fused ? kFusedKAlign : kKAlign;
  const int64_t kmax = numerics::int32_exact_k(slices) / kalign * kalign;
  const int64_t kpad = round_up(std::max<int64_t>(1, shape.k), kalign);
  p.kblocks = (kpad + kmax - 1) / kmax;
  if (variant == Variant::FullyFused)
    p.accumulator = accumulator == FusedAccumulator::Auto ? default_fused_accumulator(family, p.kblocks) : accumulator;
  p.tile = fused_tile_config(variant, p.family, p.accumulator);
  // Balance the blocks so padding is at most kalign-1 per block.
  p.kblock = round_up((kpad + p.kblocks - 1) / p.kblocks, kalign);
  p.ld_slices = p.kblocks * slices * p.kblock;
  // cuBLASLt and the TMA descriptors take int32 sizes and leading dimensions.
  const int64_t kmaxgemm = int64_t(slices) * p.kblock;
  if (p.ld_slices > INT32_MAX || p.m_pad > INT32_MAX || p.n_pad > INT32_MAX || kmaxgemm > INT32_MAX)
    return "problem too large for 32-bit GEMM dimensions";
  if (variant == Variant::FullyFused) {
    p.m_chunk = p.m_pad;  // no int32 planes; one launch over all of C
    p.n_chunk = p.n_pad;
    const int64_t tiles_m = round_up((p.m + p.tile.m - 1) / p.tile.m, p.tile.cluster_m);
    const int64_t tiles_n = round_up((p.n + p.tile.n - 1) / p.tile.n, p.tile.cluster_n);
    if (tiles_n > 65535) return "n too large for the fully fused kernel's grid (at most 65535 column tiles)";
    // k-blocks before the last are summed into one int64 per tile entry (kernels/fused_tile_epilogue.cuh).
    p.spill_entries = p.kblocks > 1 ? tiles_m * tiles_n * p.tile.m * p.tile.n : 0;
    if (p.accumulator == FusedAccumulator::Global) p.acc_entries = p.m_pad * p.n;
    if ((p.spill_entries + p.acc_entries) * 8 > diag_buffer_cap(dev))
      return "the fully fused kernel's k-block spill and accumulator would exceed the buffer cap";
  } else {
    // Chunks: bytes per entry of C across all planes; columns first, then rows. Partially
    // fused chunks start on 128 x 128 tile boundaries.
    const int64_t calign = fused ? kFusedChunkAlign : kRowAlign;
    const int64_t per_entry = p.diag_planes() * int64_t(sizeof(int32_t));
    const int64_t cap_entries = diag_buffer_cap(dev) / per_entry;
    const int64_t cols_fit = cap_entries / p.m_pad / calign * calign;
    if (cols_fit >= std::min(p.n_pad, kMinChunkCols)) {
      p.m_chunk = p.m_pad;
      p.n_chunk = std::min({p.n_pad, kMaxChunkCols, cols_fit});
    } else {
      p.n_chunk = std::min(p.n_pad, kMinChunkCols);
      p.m_chunk = std::max<int64_t>(calign, std::min(p.m_pad, cap_entries / p.n_chunk / calign * calign));
    }
  }
  const bool planes = variant != Variant::FullyFused;
  size_t off = 0;
  p.off_shift_a = off; off = align256(off + sizeof(int32_t) * p.m_pad);
  p.off_shift_b = off; off = align256(off + sizeof(int32_t) * p.n_pad);
  p.off_flag_a = off;  off = align256(off + sizeof(int32_t) * p.m_pad);
  p.off_flag_b = off;  off = align256(off + sizeof(int32_t) * p.n_pad);
  p.off_slices_a = off; off = align256(off + size_t(p.m_pad) * size_t(p.ld_slices));
  p.off_slices_b = off; off = align256(off + size_t(p.n_pad) * size_t(p.ld_slices));
  p.off_diag = off;
  if (planes) {
    off = align256(off + sizeof(int32_t) * size_t(p.diag_planes()) * size_t(p.m_chunk) * size_t(p.n_chunk));
    p.off_spill = off;
  } else {
    off = align256(off + sizeof(double) * size_t(p.acc_entries));
    p.off_spill = off;
    off = align256(off + sizeof(int64_t) * size_t(p.spill_entries));
  }
  p.off_lt_workspace = off;
  if (variant == Variant::Unfused) off = align256(off + kLtWorkspaceBytes);
  p.workspace_bytes = off;
  *plan = p;
  return {};
}

std::string plan_unfused(const GemmShape& shape, int slices, const DeviceDesc& dev, Plan* plan) {
  return plan_variant(shape, slices, dev, Variant::Unfused, plan);
}

}  // namespace ozgemm
