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
// 8192^3: 2.3-2.5 ms before the first phase against 0.72 ms a product; bench/results/
// 2026-11-24-h100-fp64-decision/call4).
constexpr double kOzaki2DecisionProducts = 3.4;

// Hopper: FP64 mode's Ozaki-II with the fused products, the decision included, against native
// DGEMM in the same run (H100 SXM, 2026-11-24, commit 7b41bc3, bench/results/
// 2026-11-24-h100-fp64-decision/call4, `bash bench/device_fp64_profile.sh`), phi 0.5 / -1 / 1:
//   8192^3              1.20 / 1.24 / 0.92x      12288^3            1.32 / 1.29 / 0.94x
//   16384^2 x 8192      1.33 / 1.32 / 0.94x      16384^3            0.91 / 1.48 / 0.91x
//   8192^2 x 4096       1.10 / 1.09 / 0.86x      4096^3             0.87 / 0.87 / 0.78x
// (the slower figures: no count up to 16 meets the bound, native DGEMM after the decision). With the
// decision's sample (DecisionPolicy, commit 46c8d8e, call6-sample-46c8d8e) phi 0.5 / 1 became
// 8192^3 1.27 / 1.02x, 12288^3 1.34 / 0.95x, 16384^2 x 8192 1.33 / 0.97x; with it, past the first
// row (call7-rule-shapes-e74cd04), phi 0.5 / 1 / -1: 16384^3 0.99 / 0.98 / 1.47x, 16384^2 x 4096
// 1.18 / 0.97 / 1.19x, but 8192^2 x 16384 0.94 / 0.95 / 1.30x, 8192^2 x 24576 0.97 / 0.96 / 1.28x and
// 8192^2 x 4096 1.12 / 0.91 / 1.04x. The rule took the shapes that lose at most 5% where the bound
// fails (at k >= 16384 it failed for phi 0.5 too: 16 moduli were not enough there): on 8192-wide
// outputs the decision was too large a share past k = 12288 (until the wide counts below) or below
// 8192, on 16384-wide ones not.
// Past 16 moduli (2026-11-25, bench/results/2026-11-25-h100-oz2-wide, `bash bench/device_oz2_wide.sh`):
// FIXED mode at 16 / 17 / 18 / 20 moduli against native, 8192^3: 1.35 / 1.23 / 1.16 / 1.03x;
// 16384^3: 1.58 / 1.48 / 1.40 / 1.23x; so with the decision (2.7 ms at 8192^3, 14-16 ms at 16384^3)
// FP64 mode took 18 moduli at 8192^3 phi 1 (1.06x; native before), 17 at 16384^3 phi 0.5 (1.31x;
// 0.99x before), 18 at 16384^3 phi 1 (1.25x) and 12288^3 phi 1 (1.16x), 17 at 8192^2 x 16384
// phi 0.5 (1.18x, forced past the old k limit; call 3: phi 1 1.11x at 18, phi -1 1.24x at 16), so
// 8192-wide outputs now reach k = 16384. max_moduli: the largest count measured (or, where marked
// "predicted", extrapolated from these rates) to beat native with the decision included; a larger
// count meeting the bound runs native.
// 8192-wide outputs at 4096 <= k < 8192 (2026-11-26, bench/results/2026-11-26-h100-row-scaling-and-
// remeasure/call 4, FP64 mode with the variant set, the decision included, 5 rounds): 8192^2 x 4096
// phi 0.5 / -1 1.06 / 1.04x at 16 moduli, phi 1 0.95x at 18; 12288^2 x 4096 phi 0.5 1.15x at 16; 4096^3
// 0.83x (stays native). So up to 16 moduli there: data that need more (phi 1's sample already needs 17)
// go native after the sample (Fp64Decision: the sample's fewest count past the rule), not after the
// full decision.
struct HopperOzaki2Rule {
  int64_t min_mn, min_k, max_k;  // min(m, n) at least, k in [min_k, max_k]
  int max_moduli;
};
constexpr HopperOzaki2Rule kHopperOzaki2Rules[] = {
    {8192, 8192, 16384, 18},
    {16384, 8192, 16384, 20},  // 20 predicted: FIXED 1.23x at 16384^3 before a 14-16 ms decision
    {16384, 4096, 8191, 18},
    {8192, 4096, 8191, 16},
};

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
  if (dev.is_hopper()) {
    // Measured with the fused products only (the unfused ones lose: FIXED mode at 16 moduli ran
    // 17.5 ms at 8192^3 before the decision, bench/results/2026-11-23-h100-fp64-schemes).
    if (!dev.sm90_kernels || moduli > kMaxModuli) return false;
    for (const auto& r : kHopperOzaki2Rules)
      if (std::min(shape.m, shape.n) >= r.min_mn && shape.k >= r.min_k && shape.k <= r.max_k && moduli <= r.max_moduli)
        return true;
    return false;
  }
  return roofline_emulation_wins(moduli + kOzaki2DecisionProducts, dev);
}

// Complex data: an ESTIMATE from the roofline, not a measurement (to be calibrated on the H100 and
// replaced by a measured table, as the real rules above were). The work in units of one real INT8
// product of m n k: 2 a modulus (the 2M planes) plus the decision, taken as the real decision's
// cost (its one magnitude product is the same size; its passes read the 16-byte complex elements
// once more: unmeasured). Native ZGEMM is kZgemmRealGemms real FP64 GEMMs of work.
constexpr double kOzaki2ComplexDecisionProducts = kOzaki2DecisionProducts;
constexpr double kZgemmRealGemms = 4.0;
double oz2c_products(int moduli) { return 2.0 * moduli + kOzaki2ComplexDecisionProducts; }
// Hopper: the speed-up over native ZGEMM with the real scheme's measured product rate
// (kHopperOzaki2ProductRate, fused products, 8192^3) against native ZGEMM's measured 48.1 TFLOPS
// (8 m n k flops; cublasZgemm at 8192^3 on the H100, issue 32): 4 R / (Z (2N + D)), 2.7x at 16
// moduli, 2.2x at 20. Taken only where it clears kHopperOzaki2ComplexMinSpeedup and the shape is at
// least kHopperOzaki2ComplexMinSize in m, n and k (the real scheme's products reached that rate from
// 8192; native ZGEMM does four times the work of DGEMM at the same shape, so the estimate admits
// 4096: the target is >= 0.98x native at 4096^3, to be checked by measurement).
constexpr double kHopperZgemmTflops = 48.1;
constexpr double kHopperOzaki2ComplexMinSpeedup = 1.25;
constexpr int64_t kHopperOzaki2ComplexMinSize = 4096;

bool auto_ozaki2_complex(const GemmShape& shape, int moduli, const DeviceDesc& dev) {
  if (!dev.has_int8_tensor_cores() || moduli < kMinModuli || moduli > kMaxModuli) return false;
  if (dev.is_hopper()) {
    if (!dev.sm90_kernels) return false;  // as for real data: the unfused products were measured slower
    if (std::min({shape.m, shape.n, shape.k}) < kHopperOzaki2ComplexMinSize) return false;
    const double speedup = kZgemmRealGemms * kHopperOzaki2ProductRate / (kHopperZgemmTflops * oz2c_products(moduli));
    return speedup >= kHopperOzaki2ComplexMinSpeedup;
  }
  return roofline_emulation_wins(oz2c_products(moduli) / kZgemmRealGemms, dev);
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

bool ozaki2_preferred(int moduli, int slices, const DeviceDesc& dev) {
  return expected_tflops(Scheme::Ozaki2, moduli, dev) > expected_tflops(Scheme::Ozaki1, slices, dev);
}

// Measured on an H200, 2026-11-21, 7 slices (bench/results/2026-11-21-h200-ksplit-accumulators):
// registers won with one k-block (8192^3: 41.9 vs 34.3 TFLOPS; 4096^3: 43.4 vs 26.7) and the
// global accumulator's larger tile won with k-blocks (2048 x 2048 x 65536: 39.4 vs 30.7). The
// portable kernels: registers 19.1 / 19.0 vs 17.5 / 16.2, global 18.8 vs 18.4 at the large k.
FusedAccumulator auto_accumulator(KernelFamily, int64_t kblocks) {
  return kblocks > 1 ? FusedAccumulator::Global : FusedAccumulator::Registers;
}

}  // namespace ozgemm
