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
// Numerics (F16): fp16 inputs, fp32 accumulation, then v = fmaf(alpha, acc, addend) with
// addend = bias0[j] (GEMM 0) or beta1 * C1 (GEMM 1, rounded product), ReLU, round to fp16.
// The host reference (reference()) uses the same formula; sums are in a different order, so
// results agree exactly only when the fp32 sums are exact (e.g. small integer inputs).
// Numerics (S8): int8 inputs, exact int32 accumulation, then v = fmaf(alpha, float(acc), addend)
// as above (float(acc) rounds to nearest even), ReLU, then requantisation to int8: round to
// nearest even and saturate to [-128, 127] (CUTLASS's s8 epilogue, cvt.rni.sat). D0 and D1 are
// int8; C1 is int8. Every step is deterministic, so the fused kernels, the unfused pair and the
// host reference agree bit for bit on any inputs (as long as |acc| < 2^31: k0 * 2^14 < 2^31).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ozgemm {
namespace b2b {

enum class DataType { F16, S8 };
const char* type_name(DataType t);
enum class Residency { Register, Shared };
const char* residency_name(Residency r);
// Which fused kernel: Portable (mma.sync, sm_80 and newer, every type and residency) or Sm90
// (Hopper wgmma for both GEMMs, D0 as GEMM 1's register operand: fp16, register residency,
// n0 in {64, 128}, k0 a multiple of 64). Auto: Sm90 where it applies on a Hopper GPU (measured
// faster there, docs/b2b.md), Portable otherwise.
enum class KernelFamily { Auto, Portable, Sm90 };

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

// Limits of the fused kernels (one CTA owns 64 rows and the whole of D0 and D1 for them):
//   n0, n1 in {64, 128, 256} ("thread-block tile N = problem N");
//   k0 a positive multiple of 64 bytes' worth of elements (32 fp16, 64 int8: 16-byte aligned
//   k-chunks); int8: k0 <= 131071 (int32 exactness);
//   batch strides multiples of 16 bytes;
//   Register residency: each thread holds n0/2 accumulators of D0 and n0/4 (fp16) or n0/8 (int8)
//   packed D0 registers plus n1/2 accumulators in the second GEMM; that sum must be <= 160 (so
//   fp16 256 x 256 needs Shared residency; int8 fits it);
//   m >= 0, any m (a partial last tile is masked).
// Empty string: implementable; otherwise one line saying why not.
std::string can_implement(const Problem& p, Residency r, KernelFamily family = KernelFamily::Auto);

// Fused kernels: no workspace. Unfused baseline: D0 in global memory (m x n0 per batch), and for
// int8 also the int32 GEMM outputs and cuBLASLt's scratch.
size_t workspace_size(const Problem& p, bool unfused);

// Fused run on `stream`. cudaErrorInvalidValue when can_implement says no (or bad pointers),
// cudaErrorNotSupported when the build or GPU lacks the kernels (sm_80+ needed).
// Is KernelFamily::Sm90 usable here (a build with sm_90a code and a Hopper GPU)?
bool sm90_kernel_available();
// Sm90 also needs a Hopper GPU and a build with sm_90a (cudaErrorNotSupported otherwise).
cudaError_t run(const Problem& p, const Arguments& a, Residency r, cudaStream_t stream,
                KernelFamily family = KernelFamily::Auto);

// The unfused pair, D0 written to and read back from `workspace` (workspace_size(p, true) bytes).
// fp16: two cuBLASLt GEMMs with their RELU_BIAS / RELU epilogues. int8: two cuBLASLt int8 GEMMs
// with int32 output (the same IMMA path as the Ozaki-I products), each followed by a
// requantisation kernel (cuBLASLt's int8-output epilogues do not round and saturate in the
// documented order). Holds cuBLASLt handles; not thread-safe.
class Unfused {
 public:
  Unfused();
  ~Unfused();
  Unfused(const Unfused&) = delete;
  Unfused& operator=(const Unfused&) = delete;
  cudaError_t run(const Problem& p, const Arguments& a, void* workspace, cudaStream_t stream);

 private:
  void* lt_ = nullptr;  // cublasLtHandle_t
  void* s8_ = nullptr;  // Int8GemmLt (src/int8_gemm_cublaslt.hpp)
};

// Host reference of the documented formula; host arrays laid out as the device ones
// (fp16 as uint16_t bit patterns). d1 receives m x n1 (per batch / all groups).
void reference(const Problem& p, const uint16_t* a0, const uint16_t* b0, const float* bias0, const uint16_t* b1,
               const uint16_t* c1, uint16_t* d1);

// int8 version: host arrays as int8_t.
void reference_s8(const Problem& p, const int8_t* a0, const int8_t* b0, const float* bias0, const int8_t* b1,
                  const int8_t* c1, int8_t* d1);
// The requantisation of the S8 numerics: round to nearest even, saturate to [-128, 127].
int8_t saturate_s8(float v);

// fp16 <-> float on the host (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

}  // namespace b2b
}  // namespace ozgemm
