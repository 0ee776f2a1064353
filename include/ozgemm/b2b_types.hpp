// ozgemm/b2b_types.hpp — the plain data of the back-to-back GEMM API (ozgemm/b2b.hpp): the
// problem, its arguments, the run options and the plan. No CUDA needed, so the planner and the
// host reference (ozgemm/reference/b2b.hpp) build without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ozgemm/export.h"
#include "ozgemm/types.hpp"

namespace ozgemm {
namespace b2b {

enum class DataType { F16, S8 };
OZGEMM_API const char* type_name(DataType t);
enum class Residency { Register, Shared };
OZGEMM_API const char* residency_name(Residency r);

// A convolution pair instead of a GEMM pair (ozgemm/b2b.hpp, "Convolutions"): conv 0 is an
// r x r convolution, stride 1, zero padding r / 2 on every side (output H x W = input H x W), of
// an NHWC activation X (n x h x w x c), computed as the implicit GEMM whose A0 row i is the
// r x r x c patch around pixel i (never stored); conv 1 is 1 x 1, no padding, on conv 0's output
// kept on chip. c == 0: not a convolution (the default).
struct Conv {
  int64_t n = 0, h = 0, w = 0, c = 0;  // X's dimensions, elements; pixels n * h * w
  int r = 3;                           // conv 0's filter size: odd, 1 to 7 (kernels/b2b/policy.hpp)
  bool enabled() const { return c > 0; }
  int64_t pixels() const { return n * h * w; }
  int64_t patch() const { return int64_t(r) * r * c; }  // the GEMM's k0: elements of one patch
};

struct Problem {
  DataType type = DataType::F16;
  int64_t m = 0, k0 = 0, n0 = 0, n1 = 0;
  float alpha0 = 1.0f, alpha1 = 1.0f, beta1 = 0.0f;
  bool relu0 = true, relu1 = true;
  int batch = 1;  // >= 1
  int64_t stride_a0 = 0, stride_b0 = 0, stride_bias0 = 0, stride_b1 = 0, stride_c1 = 0, stride_d1 = 0;
  std::vector<int64_t> group_m;  // empty: not grouped
  Conv conv;                     // enabled: m = conv.pixels(), k0 = conv.patch(), batch 1, no groups
};

// The convolution pair as a Problem: conv 0 (x.r x x.r, x.c -> c_mid channels, + bias, ReLU), conv 1
// (1 x 1, c_mid -> c_out channels, + beta1 * C1, ReLU). Its arrays:
//   a0 = X, NHWC (pixel i = (b * h + y) * w + x, channel fastest)
//   b0 = conv 0's filter, KRSC: c_mid x r x r x c (the GEMM's n0 x k0 row-major B0)
//   b1 = conv 1's filter, KRSC with R = S = 1: c_out x c_mid
//   c1, d1 = NHWC, pixels x c_out (the GEMM's m x n1)
inline Problem conv_pair(DataType type, const Conv& x, int64_t c_mid, int64_t c_out) {
  Problem p;
  p.type = type;
  p.conv = x;
  p.m = x.pixels();
  p.k0 = x.patch();
  p.n0 = c_mid;
  p.n1 = c_out;
  return p;
}

// Device pointers; fp16 data as uint16_t bit patterns (__half), int8 data as int8_t. Every matrix
// (a0, b0, b1, d1, and c1 when beta1 != 0) starts on a 16-byte boundary (run() refuses it
// otherwise); bias0 on 4 bytes.
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
// GEMM 1's register operand: fp16 or int8, register residency, every n0, k0 a multiple of 64), or
// Auto (the default): the planner chooses, from measurements (docs/b2b.md): Sm90 where it applies
// on a Hopper GPU, Portable otherwise, and the unfused pair instead where that measured faster than
// both (fp16 GEMM pairs with n0 >= 384, or n0 = 256 with k0 >= 1024 and n1 = 256; pairs of any
// type, GEMM or convolution, with n0 > 256 and n1 = 256); Plan::unfused says which. Unfused
// (unfused = true, whatever the family): the cuBLASLt pair with D0 through global memory (the
// baseline); for a convolution pair, conv 0 on the portable kernel alone, then conv 1 as the
// cuBLASLt GEMM.
struct Options {
  bool unfused = false;
  Residency residency = Residency::Register;
  KernelFamily family = KernelFamily::Auto;
};

// A planned run (plain data; the planner's output).
struct Plan {
  Options options;                             // as asked
  bool unfused = false;                        // what runs: the unfused pair (asked, or AUTO's choice)
  KernelFamily family = KernelFamily::Portable;  // fused: the family that runs (Auto resolved)
  int64_t grid_tiles = 0;                      // CTAs along m (over all groups)
  // Sm90: > 0 runs the warp-specialised persistent schedule on this many CTAs (one an SM), 0 one CTA
  // a tile (kernels/b2b/policy.hpp, B2bSm90Policy).
  int64_t persistent_ctas = 0;
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
