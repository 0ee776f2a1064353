// kernels/b2b/requant.cu — the elementwise kernels of the unfused b2b baseline (dispatched beside
// its cuBLASLt GEMMs): fp32 -> fp16 bias conversion and the int8 requantisation of an int32 GEMM
// output with the fused kernels' epilogue formula. Plain CUDA, no CUTLASS/CuTe needed.
#include <cuda_fp16.h>

#include "kernels/b2b/b2b_device.cuh"

namespace ozgemm {
namespace kernels {

namespace {
__global__ void f32_to_f16_kernel(const float* in, __half* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2half_rn(in[i]);
}

__global__ void requant_s8_kernel(const int32_t* acc, int64_t count, int64_t n, float alpha, const float* bias,
                                  float beta, const int8_t* c_in, bool relu, int8_t* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // = r * n + c, and acc(c, r) = acc[i]
  if (i >= count) return;
  const float addend = bias ? bias[i % n] : (beta != 0.0f ? __fmul_rn(beta, float(c_in[i])) : 0.0f);
  out[i] = static_cast<int8_t>(to_s8(b2b_epilogue(alpha, float(acc[i]), addend, relu)));
}
}  // namespace

cudaError_t launch_f32_to_f16(const float* in, uint16_t* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  f32_to_f16_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(in, reinterpret_cast<__half*>(out), n);
  return cudaGetLastError();
}

cudaError_t launch_requant_s8(const int32_t* acc, int64_t rows, int64_t n, float alpha, const float* bias, float beta,
                              const int8_t* c_in, bool relu, int8_t* out, cudaStream_t stream) {
  const int64_t count = rows * n;
  if (count <= 0) return cudaSuccess;
  requant_s8_kernel<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(acc, count, n, alpha, bias, beta,
                                                                                    c_in, relu, out);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace ozgemm
