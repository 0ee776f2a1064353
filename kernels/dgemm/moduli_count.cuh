// kernels/dgemm/moduli_count.cuh — the moduli count as a compile-time constant: the Ozaki-II kernels
// (ozaki2.cu, ozaki2_complex.cu) are instantiated per count so that their loops over the moduli
// unroll with each modulus a constant.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "ozgemm/numerics/ozaki2.hpp"

namespace ozgemm {
namespace kernels {

// f(std::integral_constant<int, N>) for the moduli count n; cudaErrorInvalidValue outside
// [kMinModuli, kMaxModuli].
template <int N = numerics::kMinModuli, class F>
cudaError_t with_moduli_count(int n, F&& f) {
  if constexpr (N > numerics::kMaxModuli) {
    return cudaErrorInvalidValue;
  } else {
    if (n == N) return f(std::integral_constant<int, N>{});
    return with_moduli_count<N + 1>(n, f);
  }
}

}  // namespace kernels
}  // namespace ozgemm
