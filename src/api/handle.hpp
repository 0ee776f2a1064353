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
  ozgemm::CallSettings settings;    // the setters' values, as the planner reads them (plan_call)
  ozgemmCallInfo_t last{};          // what the last ozgemmDgemm ran (ozgemmGetLastCallInfo)
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
// Makes the handle's device current for the scope of an API call that touches the GPU (its cuBLAS
// handles, workspace and kernels belong to the device current at ozgemmCreate), and restores the
// caller's device after: a handle used while another device is current runs on its own GPU, never on
// the current one. ok() is false when the device could not be made current.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&caller_) != cudaSuccess) {
      cudaGetLastError();
      ok_ = false;
    } else if (caller_ != device) {
      ok_ = switched_ = cudaSetDevice(device) == cudaSuccess;
      if (!ok_) cudaGetLastError();
    }
  }
  ~DeviceGuard() {
    if (switched_) cudaSetDevice(caller_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  bool ok() const { return ok_; }

 private:
  int caller_ = 0;
  bool ok_ = true, switched_ = false;
};

// Workspace of at least `bytes`: the user's (INSUFFICIENT_WORKSPACE when smaller) or the handle's,
// grown (after synchronising the handle's stream) when too small; *moved (optional) says whether
// the buffer changed (its contents are then gone).
ozgemmStatus_t ensure_workspace(ozgemmContext* h, size_t bytes, void** ws, bool* moved = nullptr);
}  // namespace detail
}  // namespace ozgemm
