// src/plan/symmetric_plan.hpp — what ozgemm's symmetric Level-3 routines (ozgemmDsyrk, Dsyr2k,
// Dsyrkx, Dsymm: src/api/symmetric_api.cpp) run: native cuBLAS or GEMMs through ozgemm's GEMM path,
// decided from the shape and the handle's settings before any data is read (each GEMM they run then
// decides for itself, as ozgemmDgemm does). The one place for these rules.
#pragma once

#include <cstdint>

#include "ozgemm/problem.hpp"
#include "ozgemm/types.hpp"
#include "plan/planner.hpp"

namespace ozgemm {

struct SymmetricChoice {
  bool emulate = false;     // false: native cublasDsyrk / Dsyr2k / Dsyrkx / Dsymm
  int64_t block = 0;        // rank-k routines: nb of triangle_blocks (plan/symmetric_blocks.hpp)
  const char* reason = "";  // one line: why (ozgemmGetLastCallInfo's reason when native runs)
};

// SYRK, SYR2K, SYRKX (C n x n, k the inner size). The blocked triangle (triangle_blocks) computes
// n (n + nb) k multiply-adds a product against native's n^2 k (n (n + 1) / 2 entries, k each, x 2
// flops), so nb / n is the extra work. nb: the smallest multiple of kSymmetricBlockStep whose
// nb x nb x k GEMM (capped at n) AUTO's rules emulate (auto_rules.hpp). FP64 mode emulates only when
// that nb exists and nb / n <= kSymmetricMaxOverhead; FIXED mode always (the caller asked for
// emulation; nb kSymmetricBlockStep where AUTO emulates no block); variant NATIVE never.
SymmetricChoice symmetric_rank_k_choice(const CallSettings& settings, int64_t n, int64_t k, const DeviceDesc& dev);

// SYMM: the full symmetric A is materialised from its stored triangle and ONE GEMM (`gemm`: m x n
// x m for side left, m x n x n for right) runs; emulated when AUTO's rules emulate that GEMM's shape
// (FP64 mode), always in FIXED mode, never with variant NATIVE.
SymmetricChoice symmetric_multiply_choice(const CallSettings& settings, const GemmShape& gemm, const DeviceDesc& dev);

constexpr int64_t kSymmetricBlockStep = 1024;
// ESTIMATE, to be calibrated with bench/syrk_side_by_side.py on the H100: the largest extra work
// (nb / n) that the emulated GEMMs' speed-up over native DGEMM (1.2-1.5x at the shapes AUTO emulates
// on Hopper, auto_rules.cpp) is taken to pay for.
constexpr double kSymmetricMaxOverhead = 0.25;

}  // namespace ozgemm
