// The symmetric Level-3 routines' choice between native cuBLAS and ozgemm's GEMM path
// (symmetric_plan.hpp).
#include "plan/symmetric_plan.hpp"

#include <algorithm>

#include "plan/auto_rules.hpp"

namespace ozgemm {

namespace {
// FP64 mode: AUTO's rules emulate `shape` with a scheme the settings allow, at the default counts
// (the data decides the real count later; a shape no rule emulates at these runs native anyway).
bool auto_emulates(const CallSettings& settings, const GemmShape& shape, const DeviceDesc& dev) {
  const bool ozaki2 = settings.scheme != Scheme::Ozaki1 && auto_ozaki2(shape, kDefaultModuli, dev);
  const bool ozaki1 = settings.scheme != Scheme::Ozaki2 && auto_variant(shape, kDefaultSlices, dev) != Variant::Native;
  return ozaki1 || ozaki2;
}

GemmShape square_shape(int64_t size, int64_t k) {
  GemmShape s;
  s.transb = Op::T;
  s.m = s.n = size;
  s.k = k;
  s.lda = s.ldb = s.ldc = size;
  return s;
}
}  // namespace

SymmetricChoice symmetric_rank_k_choice(const CallSettings& settings, int64_t n, int64_t k, const DeviceDesc& dev) {
  SymmetricChoice c;
  if (settings.variant == Variant::Native) {
    c.reason = "symmetric: variant native";
    return c;
  }
  // The smallest block whose diagonal GEMM AUTO emulates (larger blocks only add work), else none.
  int64_t nb = 0;
  for (int64_t b = kSymmetricBlockStep; nb == 0 && b < n + kSymmetricBlockStep; b += kSymmetricBlockStep)
    if (auto_emulates(settings, square_shape(std::min(b, n), k), dev)) nb = b;
  if (!settings.fp64_mode) {
    c.emulate = true;
    c.block = nb ? nb : kSymmetricBlockStep;
    c.reason = "symmetric: FIXED mode, blocked triangle";
  } else if (nb > 0 && double(nb) <= double(n) * kSymmetricMaxOverhead) {
    c.emulate = true;
    c.block = nb;
    c.reason = "symmetric: FP64 mode, blocked triangle";
  } else {
    c.reason = nb ? "symmetric: native (the blocks AUTO emulates add more than kSymmetricMaxOverhead of work)"
                  : "symmetric: native (AUTO emulates no block of this k)";
  }
  return c;
}

SymmetricChoice symmetric_multiply_choice(const CallSettings& settings, const GemmShape& gemm, const DeviceDesc& dev) {
  SymmetricChoice c;
  if (settings.variant == Variant::Native) {
    c.reason = "symmetric: variant native";
  } else if (!settings.fp64_mode) {
    c.emulate = true;
    c.reason = "symmetric: FIXED mode, full A and one GEMM";
  } else if (auto_emulates(settings, gemm, dev)) {
    c.emulate = true;
    c.reason = "symmetric: FP64 mode, full A and one GEMM";
  } else {
    c.reason = "symmetric: native (AUTO does not emulate this GEMM's shape)";
  }
  return c;
}

}  // namespace ozgemm
