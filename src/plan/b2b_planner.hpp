// src/plan/b2b_planner.hpp — the back-to-back GEMM's planner: the one place that checks a problem
// against the kernels' limits (kernels/b2b/policy.hpp), chooses between the fused kernels and the
// unfused pair under AUTO, resolves the kernel family and lays out the workspace. Only the planner
// and the dispatch layer read policy.hpp; the API layer (src/api/b2b_api.cpp) asks here. Host-only C++.
#pragma once

#include <cstddef>
#include <string>

#include "ozgemm/b2b_types.hpp"
#include "ozgemm/types.hpp"

namespace ozgemm {
namespace b2b {

// cuBLASLt scratch of the unfused int8 pair (bytes).
constexpr size_t kB2bLtScratchBytes = size_t(4) << 20;

// Why a plan failed: the problem or options (INVALID_VALUE) or the device/build (NOT_SUPPORTED).
enum class Refusal { None, Problem, Device };

// Empty string and *out filled; otherwise why not, with *refusal saying whose fault it is.
// AUTO (Options::unfused false, family Auto) plans the unfused pair (Plan::unfused) where
// auto_unfused says the fused kernels measured slower and the pair can run on `dev`; a family
// named (Sm90, Portable) always plans the fused kernel.
std::string make_plan(const Problem& p, const Options& o, const DeviceDesc& dev, Plan* out, Refusal* refusal);

// The measured AUTO rule (b2b_planner.cpp has the measurements): true where the unfused pair ran
// faster than the fused kernels of both families, for problems the fused kernels take.
bool auto_unfused(const Problem& p);

// b2b::run's operand rule: every matrix the kernels touch (A0, B0, B1, D1, and C1 when
// beta1 != 0) starts on a 16-byte boundary (kernels/b2b/policy.hpp, kB2bVectorBytes).
bool operands_aligned(const Problem& p, const Arguments& a);

// The grouped problem's device table (plan.groups > 0): 3 * groups + 1 int64 at `table`:
// [0, groups) each group's first row, [groups, 2 groups) its m, [2 groups, 3 groups) its first
// tile, and at 3 groups the total tile count (kernels/b2b/launch.hpp, B2bArgs).
void fill_group_table(const Problem& p, int64_t* table);

}  // namespace b2b
}  // namespace ozgemm
