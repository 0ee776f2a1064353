// The AUTO rules (auto_rules.hpp), each with the measurement it comes from.
#include "plan/auto_rules.hpp"

#include <algorithm>

#include "ozgemm/numerics/ozaki1.hpp"

namespace ozgemm {

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

// Elsewhere, the roofline with the decision's cost as this many extra INT8 products (H100,
// 8192^3: 3.8 ms against 0.72 ms a product).
constexpr double kOzaki2DecisionProducts = 5.3;
// Effective product rates (TFLOPS x products) of the best measured Hopper variants, for ranking:
// Ozaki-I 61.6 TFLOPS at 6 slices (21 products, partially fused, 8192^3, 2026-11-21);
// Ozaki-II 77.6 TFLOPS at 15 moduli (8192^3, partially fused, 2026-11-24, commit b93b608:
// bench/results/2026-11-24-h100-ozaki2-fused/call3-b93b608).
constexpr double kHopperOzaki1ProductRate = 61.6 * 21;
constexpr double kHopperOzaki2ProductRate = 77.6 * 15;

const ArchRates& closest_arch(const DeviceDesc& dev) {
  const ArchRates* best = &kArchRates[0];  // the closest known architecture not newer
  for (const auto& r : kArchRates)
    if (r.cc <= dev.cc() && r.cc > best->cc) best = &r;
  return *best;
}

bool roofline_emulation_wins(double products, const DeviceDesc& dev) {
  const ArchRates& arch = closest_arch(dev);
  return arch.int8_tops / products * kEmulationEfficiency > arch.fp64_tflops;
}
}  // namespace

Variant auto_variant(const GemmShape& shape, int slices, const DeviceDesc& dev) {
  if (!dev.has_int8_tensor_cores()) return Variant::Native;
  if (dev.is_hopper()) {
    for (const auto& r : kHopperRules)
      if (slices <= r.max_slices && std::min(shape.m, shape.n) >= r.min_mn && shape.k >= r.min_k) return r.variant;
    return Variant::Native;
  }
  return roofline_emulation_wins(numerics::triangle_products(slices), dev) ? Variant::Unfused : Variant::Native;
}

bool auto_ozaki2(const GemmShape& shape, int moduli, const DeviceDesc& dev) {
  if (!dev.has_int8_tensor_cores()) return false;
  // Hopper: no shape measured where FP64 mode's Ozaki-II beats native DGEMM. FIXED mode at 16 moduli
  // runs 8192^3 in 17.5 ms (62.9 TFLOPS) against native's 19.4-20.0 ms, but FP64 mode's decision
  // adds 3.8 ms (20.4 ms, 53.8 TFLOPS against native 54.9 in the same run), and at 16384^3 (phi 0.5)
  // or 8192^3 (phi 1) no count up to 16 meets the bound, so the decision's 4.3 ms (8192^3) to 24 ms
  // (16384^3) would be spent before native DGEMM runs anyway (bench/results/2026-11-23-h100-fp64-schemes,
  // `bash bench/device_schemes.sh`). With the fused products (2026-11-24, commit 25a95ec,
  // bench/results/2026-11-24-h100-ozaki2-fused/call6-fp64-profile-25a95ec): FP64 mode at 8192^3 ran
  // 16 moduli in 19.18 / 19.54 ms against native's 20.21 / 20.10 (phi 0.5 / -1: 1.05x, 1.03x), but
  // 25.28 ms against 20.29 at phi 1 (no count meets the bound: native after the decision) and
  // 3.41 ms against 2.35 at 4096^3: a few percent on benign data, 20-45% lost elsewhere, so still no
  // Hopper rule. A shape-based rule goes here once one is measured to win.
  if (dev.is_hopper()) return false;
  return roofline_emulation_wins(moduli + kOzaki2DecisionProducts, dev);
}

Variant auto_ozaki2_variant(const GemmShape&, const DeviceDesc& dev) {
  // H100 SXM, 2026-11-24, 15 moduli, phi 0.5, both variants in one run (bench/results/
  // 2026-11-24-h100-ozaki2-fused/call7-final-5daf45f, `bash bench/device_ozaki2_fused.sh`): partially
  // fused 2.03 / 13.92 / 99.35 ms against unfused 2.22 / 14.63 / 106.64 ms at 4096^3 / 8192^3 /
  // 16384^3 (call3-b93b608, 14 moduli: 1.96 / 13.08 / 90.80 against 2.10 / 14.29 / 97.56). Smaller
  // shapes were not measured; the fused products' int8 planes are a quarter of the bytes at every shape.
  return dev.is_hopper() && dev.sm90_kernels ? Variant::PartiallyFused : Variant::Unfused;
}

double expected_tflops(Scheme scheme, int count, const DeviceDesc& dev) {
  const double products = scheme == Scheme::Ozaki2 ? double(count) : numerics::triangle_products(count);
  if (dev.is_hopper())
    return (scheme == Scheme::Ozaki2 ? kHopperOzaki2ProductRate : kHopperOzaki1ProductRate) / products;
  return closest_arch(dev).int8_tops * kEmulationEfficiency / products;
}

// Measured on an H200, 2026-11-21, 7 slices (bench/results/2026-11-21-h200-ksplit-accumulators):
// registers won with one k-block (8192^3: 41.9 vs 34.3 TFLOPS; 4096^3: 43.4 vs 26.7) and the
// global accumulator's larger tile won with k-blocks (2048 x 2048 x 65536: 39.4 vs 30.7). The
// portable kernels: registers 19.1 / 19.0 vs 17.5 / 16.2, global 18.8 vs 18.4 at the large k.
FusedAccumulator auto_accumulator(KernelFamily, int64_t kblocks) {
  return kblocks > 1 ? FusedAccumulator::Global : FusedAccumulator::Registers;
}

}  // namespace ozgemm
