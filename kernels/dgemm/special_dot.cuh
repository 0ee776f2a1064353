// kernels/dgemm/special_dot.cuh — the value of an entry whose row of op(A) or column of op(B) holds
// Inf/NaN, on the device. Same arithmetic as ref::special_dot (src/reference/host_reference.cpp): the
// IEEE sum, ascending l, of the products with a non-finite factor.
#pragma once

#include "kernels/dgemm/launch.hpp"
#include "ozgemm/numerics/fp.hpp"

namespace ozgemm {
namespace kernels {

__device__ inline double special_dot_device(const OperandView& a, const OperandView& b, int64_t r, int64_t c) {
  double acc = 0.0;
  for (int64_t l = 0; l < a.k; ++l) {
    const double x = a.ptr[r * a.stride_r + l * a.stride_l];
    const double y = b.ptr[c * b.stride_r + l * b.stride_l];
    if (!numerics::is_finite(x) || !numerics::is_finite(y)) acc = numerics::add_rn(acc, numerics::mul_rn(x, y));
  }
  return acc;
}

}  // namespace kernels
}  // namespace ozgemm
