// src/plan/auto_rules.hpp — what AUTO means, as measured: the variant a device runs fastest at a
// given slice count, and the fully fused kernel's accumulator. Each rule names the measurement
// behind it (auto_rules.cpp). Only the planner (planner.cpp) and FP64 mode's decision
// (src/plan/call_planner.cpp: which scheme may run, and which is faster) call these.
#pragma once

#include <cstdint>

#include "ozgemm/problem.hpp"
#include "ozgemm/types.hpp"

namespace ozgemm {

// The variant expected to be fastest for `shape` at `slices` slices (the slice count is the
// accuracy the caller asked for). Hopper: a table measured on H100; native DGEMM unless the table
// says an emulated variant won there. Other architectures follow the roofline: emulation is chosen
// when the INT8 rate divided by the s(s+1)/2 products, derated by kEmulationEfficiency, exceeds the
// FP64 rate. Returns Native, Unfused or PartiallyFused; the planner checks the fused kernels exist.
Variant auto_variant(const GemmShape& shape, int slices, const DeviceDesc& dev);
constexpr double kEmulationEfficiency = 0.6;  // unfused end-to-end vs INT8 peak (H100: 41.2 / 70.7 at s = 7)

// Ozaki-II at `moduli` moduli, FP64 mode's decision included, expected faster than native DGEMM for
// `shape`: Hopper, a table of shapes measured on H100 with the fused products (auto_rules.cpp);
// elsewhere the roofline as for Ozaki-I with one INT8 product per modulus plus the decision's cost.
bool auto_ozaki2(const GemmShape& shape, int moduli, const DeviceDesc& dev);

// Complex data (the 2M scheme, numerics/ozaki2_complex.hpp): the complex Ozaki-II scheme at
// `moduli` moduli, FP64 mode's decision included, expected faster than native ZGEMM for `shape`. An
// ESTIMATE until measured (issue 32; auto_rules.cpp says from what): 2 INT8 products a modulus plus
// the decision's cost against native ZGEMM's four real FP64 GEMMs of work; Hopper with the fused
// products only, from a minimum size.
bool auto_ozaki2_complex(const GemmShape& shape, int moduli, const DeviceDesc& dev);

// How AUTO runs Ozaki-II's products (plan_ozaki2 with Variant::Auto): PartiallyFused (the Hopper
// GEMM with the reduction in its epilogue) where the device and build have it (measured faster on
// the H100 at 4096^3 to 16384^3), else Unfused.
Variant auto_ozaki2_variant(const GemmShape& shape, const DeviceDesc& dev);

// Expected end-to-end rate (TFLOPS, rough) of an emulation that AUTO lets run: Ozaki-I at `count`
// slices or Ozaki-II at `count` moduli. Used only to rank two schemes that both meet the accuracy
// target and both beat native DGEMM.
double expected_tflops(Scheme scheme, int count, const DeviceDesc& dev);
// FP64 mode's choice between two candidates that both meet the bound and both beat native DGEMM:
// Ozaki-II at `moduli` over Ozaki-I at `slices` when it is expected faster (expected_tflops). The
// planner's decision (src/plan/call_planner.cpp) and the CLI's host path take it from here.
bool ozaki2_preferred(int moduli, int slices, const DeviceDesc& dev);

// What FusedAccumulator::Auto means for a fully fused plan with `kblocks` k-blocks.
FusedAccumulator auto_accumulator(KernelFamily family, int64_t kblocks);

}  // namespace ozgemm
