// kernels/b2b_kernels.hpp — launcher of the fused back-to-back GEMM kernels (b2b_sm80.cu).
// Plain arguments; src/b2b.cpp checks the limits and builds these.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace ozgemm {
namespace kernels {

constexpr int kB2bTileM = 64;   // rows of A0 / D0 / D1 per CTA (4 warps x 16 rows)
constexpr int kB2bChunkK = 32;  // k-chunk of both GEMMs (fp16 elements)

struct B2bArgs {
  const uint16_t* a0;  // fp16 bit patterns
  const uint16_t* b0;
  const float* bias0;  // nullable
  const uint16_t* b1;
  const uint16_t* c1;  // read only when beta1 != 0
  uint16_t* d1;
  int64_t m, k0;       // per batch (not grouped) or the total rows (grouped)
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
};

// n0, n1 in {64, 128, 256}; k0 % kB2bChunkK == 0. cudaErrorNotSupported without sm_80 code.
cudaError_t launch_b2b_f16(const B2bArgs& args, int n0, int n1, bool shared_resident, int64_t grid_tiles,
                           int batch, cudaStream_t stream);

// out[i] = fp16(in[i]) (round to nearest even), i < n.
cudaError_t launch_f32_to_f16(const float* in, uint16_t* out, int64_t n, cudaStream_t stream);

}  // namespace kernels
}  // namespace ozgemm
