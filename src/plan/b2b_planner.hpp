// src/plan/b2b_planner.hpp — the back-to-back GEMM's planner: the one place that checks a problem
// against the kernels' limits (kernels/b2b/policy.hpp), resolves the kernel family and lays out
// the workspace. Host-only C++.
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
std::string make_plan(const Problem& p, const Options& o, const DeviceDesc& dev, Plan* out, Refusal* refusal);

// The grouped problem's device table (plan.groups > 0): 3 * groups + 1 int64 at `table`:
// [0, groups) each group's first row, [groups, 2 groups) its m, [2 groups, 3 groups) its first
// tile, and at 3 groups the total tile count (kernels/b2b/launch.hpp, B2bArgs).
void fill_group_table(const Problem& p, int64_t* table);

}  // namespace b2b
}  // namespace ozgemm
