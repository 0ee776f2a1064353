// tests/b2b_test_problems.hpp — the back-to-back GEMM problems the CPU and GPU tests share.
#pragma once

#include <cstdint>

#include "ozgemm/b2b_types.hpp"

namespace oztest {

using ozgemm::b2b::Problem;

inline Problem shape(int64_t m, int64_t k0, int64_t n0, int64_t n1) {
  Problem p;
  p.m = m;
  p.k0 = k0;
  p.n0 = n0;
  p.n1 = n1;
  return p;
}

// Three batches, each operand densely strided, beta1 = 1.
inline Problem batched_shape(int64_t m, int64_t k0, int64_t n0, int64_t n1) {
  Problem p = shape(m, k0, n0, n1);
  p.batch = 3;
  p.stride_a0 = m * k0;
  p.stride_b0 = n0 * k0;
  p.stride_bias0 = n0;
  p.stride_b1 = n1 * n0;
  p.stride_c1 = p.stride_d1 = m * n1;
  p.beta1 = 1.0f;
  return p;
}

// Five groups stacked by rows, an empty and a one-row group among them.
inline Problem grouped_shape(int64_t k0, int64_t n0, int64_t n1) {
  Problem p = shape(0, k0, n0, n1);
  p.group_m = {100, 1, 0, 257, 64};
  return p;
}

// Rows of A0, C1 and D1 per batch, or of all groups.
inline int64_t total_rows(const Problem& p) {
  if (p.group_m.empty()) return p.m;
  int64_t rows = 0;
  for (int64_t gm : p.group_m) rows += gm;
  return rows;
}

}  // namespace oztest
