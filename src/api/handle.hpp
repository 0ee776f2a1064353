// src/api/handle.hpp — the state behind an ozgemmHandle_t: the caller's settings, the device facts
// read once at creation (DeviceDesc), the libraries' handles and the workspace. The API layer
// (c_api.cpp, b2b_api.cpp) owns it; the planner and the dispatch layer receive plain views of it.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "baseline/int8_gemm_cublaslt.hpp"
#include "dispatch/dispatch.hpp"
#include "ozgemm/ozgemm.h"
#include "ozgemm/types.hpp"
#include "plan/planner.hpp"

struct ozgemmContext {
  int device = 0;
  ozgemm::DeviceDesc dev;           // read at ozgemmCreate; the planner's view of the device
  int64_t real_memory_bytes = 0;    // dev.memory_bytes as read (the test hook may change dev's)
  cudaStream_t stream = nullptr;
  int slices = 0;                   // FIXED mode's count; 0: kDefaultSlices
  ozgemmAccuracy_t accuracy = OZGEMM_ACCURACY_FP64;
  ozgemm::Scheme scheme = ozgemm::Scheme::Auto;
  int moduli = 0;                   // Ozaki-II; 0: kDefaultModuli
  ozgemmCallInfo_t last{};          // what the last ozgemmDgemm ran (ozgemmGetLastCallInfo)
  ozgemm::Variant variant = ozgemm::Variant::Auto;
  ozgemm::KernelFamily family = ozgemm::KernelFamily::Auto;
  ozgemm::FusedAccumulator accumulator = ozgemm::FusedAccumulator::Auto;
  cublasHandle_t cublas = nullptr;  // native DGEMM
  ozgemm::Int8GemmLt lt;            // INT8 GEMMs (unfused products, b2b int8 baseline); its cuBLASLt handle too
  bool autotune = true;             // time cuBLASLt candidates per shape (env OZGEMM_LT_AUTOTUNE=0 disables)
  // Workspace: user-provided if user_ws != nullptr, else handle-owned and grown on demand.
  void* user_ws = nullptr;
  size_t user_ws_bytes = 0;
  void* own_ws = nullptr;
  size_t own_ws_bytes = 0;
  // Pinned host staging for small per-call tables (the grouped b2b row table), grown on demand.
  void* pinned = nullptr;
  size_t pinned_bytes = 0;
  cudaEvent_t pinned_free = nullptr;  // recorded after the last copy out of `pinned`
  cudaEvent_t* phase_events = nullptr;  // ozgemm::set_phase_events

  int effective_slices() const { return slices > 0 ? slices : ozgemm::kDefaultSlices; }
  int effective_moduli() const { return moduli > 0 ? moduli : ozgemm::kDefaultModuli; }
  // Ozaki-II is the only scheme (scheme OZAKI2 and a variant other than NATIVE).
  bool ozaki2() const { return scheme == ozgemm::Scheme::Ozaki2 && variant != ozgemm::Variant::Native; }
  // FIXED mode's Ozaki-II: the handle's moduli count, no decision.
  bool fixed_ozaki2() const { return ozaki2() && accuracy == OZGEMM_ACCURACY_FIXED; }
  ozgemm::dispatch::ExecContext exec() {
    ozgemm::dispatch::ExecContext c;
    c.stream = stream;
    c.cublas = cublas;
    c.lt = &lt;
    c.autotune = autotune;
    c.phase_events = phase_events;
    return c;
  }
};

namespace ozgemm {
namespace detail {
// Workspace of at least `bytes`: the user's (INSUFFICIENT_WORKSPACE when smaller) or the handle's,
// grown (after synchronising the handle's stream) when too small; *moved (optional) says whether
// the buffer changed (its contents are then gone).
ozgemmStatus_t ensure_workspace(ozgemmContext* h, size_t bytes, void** ws, bool* moved = nullptr);

// The plan of the handle's settings at `slices` slices for a shape (NOT_SUPPORTED for a variant this
// device or build lacks, INVALID_VALUE for a problem the planner refuses).
ozgemmStatus_t plan_with(const ozgemmContext* h, const GemmShape& shape, int slices, Plan* plan);

// FP64 mode (ozgemm.h, docs/numerics.md): reads A and B, chooses the scheme and its count among the
// handle's allowed schemes, and returns what to run: Ozaki-II's plan in *plan2 when info->scheme is
// OZAKI2 and info->variant not NATIVE, else *plan (Native when no count meets the contract, the
// emulation would be slower here, or the stream is being captured), with `info` filled and
// *shifts_ready telling whether the plan's shifts and flags (Ozaki-II: and norms) are already in
// *ws (the workspace the decision used, which the plan fits).
ozgemmStatus_t decide_fp64(ozgemmContext* h, const GemmShape& shape, const double* A, const double* B, Plan* plan,
                           Ozaki2Plan* plan2, ozgemmCallInfo_t* info, void** ws, bool* shifts_ready);
// Why the handle's settings cannot take Ozaki-II at `moduli` for this shape (empty: they can, and
// *plan holds the plan).
std::string ozaki2_unavailable(const ozgemmContext* h, const GemmShape& shape, int moduli, Ozaki2Plan* plan);
// Fills `info` for a plan that ran without a decision (FIXED mode or variant NATIVE).
void describe_fixed(const ozgemmContext* h, const Plan& plan, ozgemmCallInfo_t* info);
}  // namespace detail
}  // namespace ozgemm
