// ozgemm/b2b.hpp — back-to-back fused GEMM (the capability of CUTLASS example 13):
//
//   D0 = ReLU(alpha0 * A0 x B0 + bias0)          (m x n0, rounded to the input type)
//   D1 = ReLU(alpha1 * D0 x B1 + beta1 * C1)     (m x n1)
//
// with D0 kept on chip: in registers (Residency::Register, each warp owns whole rows of D0 and
// feeds them as the A operand of the second GEMM) or in shared memory (Residency::Shared).
// Layouts ("TN", k contiguous everywhere it is reduced over):
//   A0   m x k0 row-major          (element (i, l) at a0[i * k0 + l])
//   B0   n0 x k0 row-major         (column j of the GEMM's B is row j here; "column-major K0 x N0")
//   bias0  n0 floats (nullable)
//   B1   n1 x n0 row-major         ("column-major N0 x N1")
//   C1, D1  m x n1 row-major; C1 read only when beta1 != 0
// Batched: `batch` problems with the given element strides. Grouped: `group_m` lists the m of each
// group; groups are stacked by rows in A0, C1 and D1 and share B0, bias0 and B1 (as mixture-of-
// experts layers do with one expert's weights); grouped and batched do not combine.
//
// Convolutions (the other half of CUTLASS example 13): b2b::conv_pair(type, Conv{n, h, w, c, r},
// c_mid, c_out) describes
//   D0 = ReLU(alpha0 * conv_rxr(X, W0) + bias0)     conv 0: r x r, stride 1, zero padding r / 2
//   D1 = ReLU(alpha1 * conv_1x1(D0, W1) + beta1 * C1) conv 1: 1 x 1, no padding
// on NHWC tensors (X: n x h x w x c; D0: c_mid channels, kept on chip; C1, D1: c_out channels),
// with KRSC filters (W0: c_mid x r x r x c, W1: c_out x c_mid). It is the GEMM pair with
// m = n * h * w pixels, k0 = r * r * c and A0 the implicit im2col of X (gathered by the kernels
// from X, never stored), so everything below applies; the second convolution is 1 x 1 because
// conv 0's output is held one CTA-row-block at a time with no halo. Batched over n by
// construction (batch 1, not grouped). The unfused pair runs conv 0 alone on the portable kernel
// (D0 through global memory) and conv 1 as the cuBLASLt GEMM.
// Numerics (F16): fp16 inputs, fp32 accumulation, then v = fmaf(alpha, acc, addend) with
// addend = bias0[j] (GEMM 0) or beta1 * C1 (GEMM 1, rounded product), ReLU, round to fp16.
// The host reference (ozgemm/reference/b2b.hpp) uses the same formula; sums are in a different
// order, so results agree exactly only when the fp32 sums are exact (e.g. small integer inputs).
// Numerics (S8): int8 inputs, exact int32 accumulation, then v = fmaf(alpha, float(acc), addend)
// as above (float(acc) rounds to nearest even), ReLU, then requantisation to int8: round to
// nearest even and saturate to [-128, 127] (CUTLASS's s8 epilogue, cvt.rni.sat). D0 and D1 are
// int8; C1 is int8. Every step is deterministic, so the fused kernels, the unfused pair and the
// host reference agree bit for bit on any inputs (as long as |acc| < 2^31: k0 * 2^14 < 2^31).
//
// Use, as for ozgemmDgemm: a handle (ozgemmCreate; device facts are read once there), then
//   b2b::Plan plan;  std::string why;
//   if (b2b::plan(h, problem, options, &plan, &why) != OZGEMM_STATUS_SUCCESS) ... // can_implement, with the reason
//   // plan.workspace_bytes of device workspace (or nullptr: the handle's own, as ozgemmDgemm)
//   b2b::run(h, plan, problem, args, workspace, plan.workspace_bytes);   // on the handle's stream
// run performs no allocation when given a workspace, and re-checks nothing the plan decided.
#pragma once

#include <cstddef>
#include <string>

#include "ozgemm/b2b_types.hpp"
#include "ozgemm/export.h"
#include "ozgemm/ozgemm.h"

namespace ozgemm {
namespace b2b {

// The limits of the fused kernels (kernels/b2b/policy.hpp): n0, n1 in {64, 128, 256} (one CTA owns
// 128 rows and the whole of D0 and D1 for them), and n0 also any multiple of 128 up to 16384
// (GEMM 0 in column chunks of 128; recomputed per 128 columns of D1; both kernel families; where
// the unfused pair measured faster, KernelFamily::Auto runs it: b2b_types.hpp, Options); k0 a
// positive multiple of 64 bytes' worth of elements (32 fp16, 64 int8); int8: k0 <= 131071 (int32
// exactness); batch strides multiples of 16 bytes; both residencies take every n0 x n1 (GEMM 1 runs
// in column chunks of 128); any m >= 0.
// Convolutions: r odd, 1 to 7; c a multiple of 32 (fp16) or 64 (int8), of 64 for the Hopper kernel;
// n, h, w < 2^31.
//
// SUCCESS and *plan filled; INVALID_VALUE when the problem is outside these limits or the
// options are invalid, NOT_SUPPORTED when this device or build lacks the kernel asked for
// (NOT_INITIALIZED for a null handle). *why (optional) gets one line saying why not.
OZGEMM_API ozgemmStatus_t plan(ozgemmHandle_t handle, const Problem& problem, const Options& options, Plan* plan,
                               std::string* why = nullptr);

// Runs a plan on the handle's stream. workspace: plan.workspace_bytes bytes of device memory
// (256-byte aligned), or nullptr for the handle's own workspace (grown as for ozgemmDgemm).
// INVALID_VALUE for missing or misaligned pointers (Arguments), INSUFFICIENT_WORKSPACE, EXECUTION_FAILED when a launch fails.
OZGEMM_API ozgemmStatus_t run(ozgemmHandle_t handle, const Plan& plan, const Problem& problem, const Arguments& args,
                              void* workspace, size_t workspace_bytes);

}  // namespace b2b
}  // namespace ozgemm
