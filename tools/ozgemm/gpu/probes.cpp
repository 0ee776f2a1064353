// tools/ozgemm/gpu/probes.cpp — measurements of the device's ceilings for the roofline model beside
// `ozgemm bench` (the INT8 GEMM rate is the library's own diagnostic, ozgemm::int8_gemm_tops).
#include "gpu/probes.hpp"

#include "gpu/cuda_check.hpp"
#include "gpu/event_timer.hpp"

namespace ozgemm {
namespace cli {

// Device-to-device copy rate, bytes read + written per second / 1e9 (median of 5 copies of 1 GiB).
double probe_copy_gbs(cudaStream_t stream) {
  const size_t bytes = size_t(1) << 30;
  void *src = nullptr, *dst = nullptr;
  OZ_TOOL_CUDA(cudaMalloc(&src, bytes));
  OZ_TOOL_CUDA(cudaMalloc(&dst, bytes));
  OZ_TOOL_CUDA(cudaMemsetAsync(src, 0x3c, bytes, stream));
  const std::vector<double> ms = event_times(stream, 1, 5, [&](int) {
    OZ_TOOL_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  cudaFree(src);
  cudaFree(dst);
  return 2.0 * double(bytes) / (median(ms) * 1e6);
}

}  // namespace cli
}  // namespace ozgemm
