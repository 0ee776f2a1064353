// kernels/b2b/launch.hpp — launchers of the back-to-back GEMM kernels (b2b_sm80.cu, b2b_sm90.cu,
// requant.cu). Plain arguments; the b2b planner checks the limits (policy.hpp) and
// src/dispatch/b2b_dispatch.cpp builds these.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "kernels/b2b/policy.hpp"

namespace ozgemm {
namespace kernels {

struct B2bArgs {
  // fp16 (as __half / uint16_t bit patterns) or int8 data, by the launch's type
  const void* a0;
  const void* b0;
  const float* bias0;  // nullable
  const void* b1;
  const void* c1;      // read only when beta1 != 0
  void* d1;
  int64_t m, k0;       // per batch (not grouped) or the total rows (grouped)
  int64_t n0;          // D0's columns: the launch's n0 (a multiple of kB2bN0Chunk above 256: GEMM 0 in chunks)
  float alpha0, alpha1, beta1;
  bool relu0, relu1;
  // batched: blockIdx.z is the batch, element strides below (0 when not batched)
  int64_t stride_a0, stride_b0, stride_bias0, stride_b1, stride_c1, stride_d1;
  // grouped (group_count > 0): group g covers rows group_row0[g] .. + group_m[g] - 1 and tiles
  // group_tile0[g] .. group_tile0[g+1] - 1 of the grid (device arrays, group_tile0 has count+1)
  int group_count;
  const int64_t* group_row0;
  const int64_t* group_m;
  const int64_t* group_tile0;
  // Convolution pair (conv_c > 0; not batched, not grouped): a0 is X, NHWC with conv_h x conv_w
  // pixels an image and conv_c channels; row i of A0 is the conv_r x conv_r x conv_c patch
  // around pixel i (k = (tap_y * conv_r + tap_x) * conv_c + channel), zeros outside the image.
  int64_t conv_c, conv_h, conv_w;
  int conv_r;
  // Conv 0 alone (d0_out != nullptr, portable kernels): the kernel stops after epilogue 0 and
  // writes D0 (m x n0 row-major, the input type) there; b1, c1, d1, alpha1, beta1 are unused.
  // The first half of the unfused convolution pair.
  void* d0_out;
};

// int8 == false: fp16 in and out, fp32 accumulation; true: int8 in and out, int32 accumulation.
// n0 in {64, 128, 256} or b2b_chunked_n0 (GEMM 0 in chunks of kB2bN0Chunk columns, policy.hpp),
// n1 in {64, 128, 256}; k0 a multiple of kB2bChunkK units (32 fp16, 64 int8); element
// strides 16-byte aligned; convolutions: conv_c * element bytes a multiple of
// kB2bConvChannelBytes. cudaErrorNotSupported without sm_80 code.
cudaError_t launch_b2b(const B2bArgs& args, bool int8, int n0, int n1, bool shared_resident, int64_t grid_tiles,
                       int batch, cudaStream_t stream);

// The Hopper kernel (kernels/b2b_sm90.cu): fp16 or int8 (as launch_b2b), register residency, wgmma
// for both GEMMs (D0 as GEMM 1's register A operand), n0 in {64, 128, 256} or b2b_chunked_n0 (GEMM 0
// in chunks of kB2bN0Chunk columns, one CTA a tile; args.n0 == n0), n1 in {64, 128, 256}, k0 a
// multiple of 64 elements; convolutions: conv_c a multiple of 64; no d0_out. persistent_ctas > 0:
// the warp-specialised persistent schedule on that many CTAs (fp16 with n0 <= 128, or int8 with
// n0 = 64: B2bSm90Policy::ws_supports), 0: one CTA a tile (the b2b planner's Plan::persistent_ctas).
// cudaErrorNotSupported when the build has no sm_90a code.
cudaError_t launch_b2b_sm90(const B2bArgs& args, bool int8, int n0, int n1, int64_t grid_tiles, int batch,
                            int64_t persistent_ctas,
                            cudaStream_t stream);
bool b2b_sm90_built();
bool b2b_portable_built();

// out[i] = fp16(in[i]) (round to nearest even), i < n.
cudaError_t launch_f32_to_f16(const float* in, uint16_t* out, int64_t n, cudaStream_t stream);

// The unfused int8 baseline's epilogues: out[r * n + c] = int8(ReLU(alpha * acc(c, r) + addend)),
// acc column-major n x rows (ld n, cuBLASLt's int32 output), addend = bias[c] (if bias) plus
// beta * c_in[r * n + c] (if beta != 0); the fused kernels' formula.
cudaError_t launch_requant_s8(const int32_t* acc, int64_t rows, int64_t n, float alpha, const float* bias, float beta,
                              const int8_t* c_in, bool relu, int8_t* out, cudaStream_t stream);

}  // namespace kernels
}  // namespace ozgemm
