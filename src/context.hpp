// src/context.hpp — the state behind an ozgemmHandle_t.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>

#include "int8_gemm_cublaslt.hpp"
#include "ozgemm/ozgemm.h"
#include "planner.hpp"

struct ozgemmContext {
  int device = 0;
  ozgemm::DeviceDesc dev;
  int64_t real_memory_bytes = 0;
  cudaStream_t stream = nullptr;
  int slices = 0;  // 0: library default
  ozgemmVariant_t variant = OZGEMM_VARIANT_AUTO;
  ozgemmKernelFamily_t family = OZGEMM_KERNELS_AUTO;
  ozgemmFusedAccumulator_t accumulator = OZGEMM_ACCUMULATOR_AUTO;
  cublasHandle_t cublas = nullptr;  // native DGEMM
  ozgemm::Int8GemmLt lt;
  bool autotune = true;  // time cuBLASLt candidates per shape (env OZGEMM_LT_AUTOTUNE=0 disables)
  // Workspace: user-provided if user_ws != nullptr, else handle-owned and grown on demand.
  void* user_ws = nullptr;
  size_t user_ws_bytes = 0;
  void* own_ws = nullptr;
  size_t own_ws_bytes = 0;
  // Instrumentation (ozgemm::set_phase_events): 5 events recorded around the phases
  // max-reduce | slicing | products | epilogue, or nullptr.
  cudaEvent_t* phase_events = nullptr;
};

namespace ozgemm {
namespace detail {
// The dispatch layer: the only place that maps a Plan to kernels and library calls.
// Unfused, partially fused or fully fused, as plan.variant says.
ozgemmStatus_t run_emulated(ozgemmContext* ctx, const Plan& plan, const GemmShape& shape, double alpha,
                           const double* A, const double* B, double beta, double* C, void* workspace);
ozgemmStatus_t run_native(ozgemmContext* ctx, const GemmShape& shape, double alpha, const double* A,
                          const double* B, double beta, double* C);
ozgemmStatus_t run_scale_c(ozgemmContext* ctx, const GemmShape& shape, double beta, double* C);
// Test hook: the device memory the planner assumes (it sizes the diagonal-buffer chunks),
// so GPU tests can force row and column chunking on small problems. 0 restores the real size.
void set_planning_memory(ozgemmHandle_t h, int64_t bytes);
}  // namespace detail
}  // namespace ozgemm
