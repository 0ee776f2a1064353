// bench/cuda_check.hpp — the benchmark programs' CUDA error check (bench/oz2_products_tune.cu,
// bench/gemmul8/side_by_side.cu): a failed call prints where and why and exits with status 2.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(x)                                                                           \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
      std::exit(2);                                                                             \
    }                                                                                           \
  } while (0)
