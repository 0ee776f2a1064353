// ozgemm/b2b_types.hpp — the plain data of the back-to-back GEMM API (ozgemm/b2b.hpp): the
// problem, its arguments, the run options and the plan. No CUDA needed, so the planner and the
// host reference (ozgemm/reference/b2b.hpp) build without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ozgemm/types.hpp"

namespace ozgemm {
namespace b2b {

enum class DataType { F16, S8 };
const char* type_name(DataType t);
enum class Residency { Register, Shared };
const char* residency_name(Residency r);

struct Problem {
  DataType type = DataType::F16;
  int64_t m = 0, k0 = 0, n0 = 0, n1 = 0;
  float alpha0 = 1.0f, alpha1 = 1.0f, beta1 = 0.0f;
  bool relu0 = true, relu1 = true;
  int batch = 1;  // >= 1
  int64_t stride_a0 = 0, stride_b0 = 0, stride_bias0 = 0, stride_b1 = 0, stride_c1 = 0, stride_d1 = 0;
  std::vector<int64_t> group_m;  // empty: not grouped
};

// Device pointers; fp16 data as uint16_t bit patterns (__half), int8 data as int8_t.
struct Arguments {
  const void* a0 = nullptr;
  const void* b0 = nullptr;
  const float* bias0 = nullptr;
  const void* b1 = nullptr;
  const void* c1 = nullptr;
  void* d1 = nullptr;
};

// How to run it. Fused: a residency and a kernel family (ozgemm::KernelFamily): Portable
// (mma.sync, sm_80 and newer, every type and residency), Sm90 (Hopper wgmma for both GEMMs, D0 as
// GEMM 1's register operand: fp16, register residency, n0 in {64, 128}, k0 a multiple of 64), or
// Auto (Sm90 where it applies on a Hopper GPU, measured faster there, docs/b2b.md; Portable
// otherwise). Unfused: the cuBLASLt pair with D0 through global memory (the baseline).
struct Options {
  bool unfused = false;
  Residency residency = Residency::Register;
  KernelFamily family = KernelFamily::Auto;
};

// A planned run (plain data; the planner's output).
struct Plan {
  Options options;                             // as asked
  KernelFamily family = KernelFamily::Portable;  // fused: the family that runs (Auto resolved)
  int64_t grid_tiles = 0;                      // CTAs along m (over all groups)
  int groups = 0;                              // grouped problems: number of groups (every path)
  size_t workspace_bytes = 0;
  // Workspace layout (byte offsets, 256-aligned). Grouped: the device table of the groups' first
  // rows, sizes and first tiles (3 * groups + 1 int64) at off_table. Unfused: D0 at off_d0, then for
  // int8 the int32 GEMM output (off_acc) and cuBLASLt's scratch (off_scratch), for fp16 bias0 as
  // fp16 (off_bias16).
  size_t off_table = 0, off_d0 = 0, off_acc = 0, off_scratch = 0, off_bias16 = 0;
};

}  // namespace b2b
}  // namespace ozgemm
