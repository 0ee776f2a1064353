// tools/ozgemm/gpu/event_timer.hpp — CUDA-event timing for the GPU commands (bench, b2b, the rate probes).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "gpu/cuda_check.hpp"

namespace ozgemm {
namespace cli {

// warmup + iters rounds on `stream`: prepare(it) untimed, then work(it) between two events
// (work enqueues its GPU work and returns). Returns the iters timed rounds in ms.
template <class Prepare, class Work>
std::vector<double> event_times(cudaStream_t stream, int warmup, int iters, Prepare prepare, Work work) {
  cudaEvent_t e0, e1;
  OZ_TOOL_CUDA(cudaEventCreate(&e0));
  OZ_TOOL_CUDA(cudaEventCreate(&e1));
  std::vector<double> out;
  for (int it = 0; it < warmup + iters; ++it) {
    prepare(it);
    OZ_TOOL_CUDA(cudaEventRecord(e0, stream));
    work(it);
    OZ_TOOL_CUDA(cudaEventRecord(e1, stream));
    OZ_TOOL_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    OZ_TOOL_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    if (it >= warmup) out.push_back(ms);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return out;
}

// The median of a sample (the mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// event_times with nothing to prepare.
template <class Work>
std::vector<double> event_times(cudaStream_t stream, int warmup, int iters, Work work) {
  return event_times(stream, warmup, iters, [](int) {}, work);
}

}  // namespace cli
}  // namespace ozgemm
