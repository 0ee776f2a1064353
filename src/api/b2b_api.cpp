// The back-to-back GEMM's public functions (ozgemm/b2b.hpp): argument checks and the handle's
// state; the b2b planner decides, the dispatch layer launches.
#include <cstdint>
#include <cstring>
#include <string>

#include "api/handle.hpp"
#include "dispatch/b2b_dispatch.hpp"
#include "ozgemm/b2b.hpp"
#include "plan/b2b_planner.hpp"

namespace ozgemm {
namespace b2b {

ozgemmStatus_t plan(ozgemmHandle_t h, const Problem& problem, const Options& options, Plan* out, std::string* why) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!out) return OZGEMM_STATUS_INVALID_VALUE;
  Refusal refusal = Refusal::None;
  const std::string reason = make_plan(problem, options, h->dev, out, &refusal);
  if (why) *why = reason;
  if (reason.empty()) return OZGEMM_STATUS_SUCCESS;
  return refusal == Refusal::Device ? OZGEMM_STATUS_NOT_SUPPORTED : OZGEMM_STATUS_INVALID_VALUE;
}

ozgemmStatus_t run(ozgemmHandle_t h, const Plan& plan, const Problem& p, const Arguments& a, void* workspace,
                   size_t workspace_bytes) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  const detail::DeviceGuard on_handles_device(h->device);
  if (!on_handles_device.ok()) return OZGEMM_STATUS_EXECUTION_FAILED;
  if (!a.a0 || !a.b0 || !a.b1 || !a.d1 || (p.beta1 != 0.0f && !a.c1)) return OZGEMM_STATUS_INVALID_VALUE;
  // Every matrix the kernels touch starts on 16 bytes (cudaMalloc's do; the planner's rule).
  if (!operands_aligned(p, a)) return OZGEMM_STATUS_INVALID_VALUE;
  if (plan.groups != static_cast<int>(p.group_m.size())) return OZGEMM_STATUS_INVALID_VALUE;  // another problem's plan
  void* ws = workspace;
  if (plan.workspace_bytes > 0) {
    if (ws) {
      if (workspace_bytes < plan.workspace_bytes) return OZGEMM_STATUS_INSUFFICIENT_WORKSPACE;
      if (reinterpret_cast<uintptr_t>(ws) % 256 != 0) return OZGEMM_STATUS_INVALID_VALUE;
    } else {
      const ozgemmStatus_t st = detail::ensure_workspace(h, plan.workspace_bytes, &ws);
      if (st != OZGEMM_STATUS_SUCCESS) return st;
    }
  }
  const int64_t* table = nullptr;
  if (plan.groups > 0 && !plan.unfused) {
    // Stage the group table in the handle's pinned buffer (the previous copy out of it done first).
    const size_t bytes = (3 * size_t(plan.groups) + 1) * sizeof(int64_t);
    if (h->pinned_free && cudaEventSynchronize(h->pinned_free) != cudaSuccess) return OZGEMM_STATUS_EXECUTION_FAILED;
    if (h->pinned_bytes < bytes) {
      if (h->pinned) cudaFreeHost(h->pinned);
      h->pinned = nullptr;
      h->pinned_bytes = 0;
      if (cudaMallocHost(&h->pinned, bytes) != cudaSuccess) {
        cudaGetLastError();
        return OZGEMM_STATUS_ALLOC_FAILED;
      }
      h->pinned_bytes = bytes;
    }
    if (!h->pinned_free && cudaEventCreateWithFlags(&h->pinned_free, cudaEventDisableTiming) != cudaSuccess)
      return OZGEMM_STATUS_EXECUTION_FAILED;
    fill_group_table(p, static_cast<int64_t*>(h->pinned));
    table = static_cast<const int64_t*>(h->pinned);
  }
  const ozgemmStatus_t st = dispatch::run_b2b(h->exec(), plan, p, a, ws, table);
  if (table && cudaEventRecord(h->pinned_free, h->stream) != cudaSuccess) return OZGEMM_STATUS_EXECUTION_FAILED;
  return st;
}

}  // namespace b2b
}  // namespace ozgemm
