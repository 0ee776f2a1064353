// tools/ozgemm/gpu/cuda_check.hpp — the GPU commands' CUDA error check: any failing runtime call becomes a
// std::runtime_error naming the call, which the dispatcher reports as one error line.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#define OZ_TOOL_CUDA(x)                                                                           \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) throw std::runtime_error(std::string(#x) + ": " + cudaGetErrorString(e_)); \
  } while (0)
