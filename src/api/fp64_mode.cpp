// FP64 accuracy mode (ozgemm.h; docs/numerics.md, "The accuracy contract"): per call, the slice
// count is chosen from the data. The planner decides (plan_decision, plan at each count, the AUTO
// rules), the dispatch layer runs the statistics passes and reports their counts, and this file
// strings the steps together:
//   0. AUTO that runs native DGEMM at any count (this shape, this device) stops before reading data;
//   1. digits pass (the max-reduce with the exact digit counts): a lower bound L of the count;
//      AUTO that would run native DGEMM at L (emulation slower here) stops here;
//   2. magnitude digits, their INT8 product P, the bound's reduction from L: the count S;
//   3. the plan at S (AUTO may still prefer native DGEMM at S), reusing the shifts of step 1.
// Each device step ends with one small copy back (the stream is synchronised twice per call).
#include <cstdio>
#include <string>

#include "api/handle.hpp"
#include "ozgemm/numerics/accuracy.hpp"

namespace ozgemm {
namespace detail {

namespace {

void set_reason(ozgemmCallInfo_t* info, const std::string& why) {
  std::snprintf(info->reason, sizeof info->reason, "%s", why.c_str());
}

// Native DGEMM, with the reason.
ozgemmStatus_t go_native(Plan* plan, const GemmShape& s, ozgemmCallInfo_t* info, const std::string& why) {
  *plan = Plan{};
  plan->variant = Variant::Native;
  plan->m = s.m;
  plan->n = s.n;
  plan->k = s.k;
  info->variant = OZGEMM_VARIANT_NATIVE;
  info->slices = 0;
  info->fell_back = 1;
  set_reason(info, "FP64 mode ran native DGEMM: " + why);
  return OZGEMM_STATUS_SUCCESS;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

void describe_fixed(const ozgemmContext* h, const Plan& plan, ozgemmCallInfo_t* info) {
  *info = ozgemmCallInfo_t{};
  info->scheme = OZGEMM_SCHEME_OZAKI1;
  info->variant = static_cast<ozgemmVariant_t>(plan.variant);
  info->slices = plan.variant == Variant::Native ? 0 : plan.slices;
  if (plan.variant == Variant::Native)
    set_reason(info, h->variant == Variant::Native ? "variant NATIVE" : "FIXED mode: the planner chose native DGEMM");
  else
    set_reason(info, "FIXED mode: " + std::to_string(plan.slices) + " slices, no bound computed" +
                         (plan.fallback.empty() ? std::string() : "; ran unfused: " + plan.fallback));
}

ozgemmStatus_t decide_fp64(ozgemmContext* h, const GemmShape& s, const double* A, const double* B, Plan* plan,
                           ozgemmCallInfo_t* info, void** ws, bool* shifts_ready) {
  *info = ozgemmCallInfo_t{};
  *shifts_ready = false;
  info->target = numerics::target_constant(s.k);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(h->stream, &capture) != cudaSuccess) {
    cudaGetLastError();
    return OZGEMM_STATUS_EXECUTION_FAILED;
  }
  if (capture != cudaStreamCaptureStatusNone)
    return go_native(plan, s, info, "the stream is being captured into a CUDA graph (the decision reads data back)");
  // AUTO that prefers native DGEMM even at one slice (its rules only get stricter with more slices)
  // needs no look at the data.
  Plan at_one;
  ozgemmStatus_t st = plan_with(h, s, 1, &at_one);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  if (at_one.variant == Variant::Native)
    return go_native(plan, s, info, "the emulation is slower than native DGEMM here at any slice count (AUTO rules)");
  DecisionPlan dp;
  const std::string refused = plan_decision(s, h->dev, &dp);
  if (!refused.empty()) return go_native(plan, s, info, refused);
  // Workspace for the decision and, likely, the emulation after it (8 slices: no regrowth later
  // for the common counts).
  Plan guess;
  size_t bytes = dp.workspace_bytes;
  if (plan_with(h, s, kDefaultSlices, &guess) == OZGEMM_STATUS_SUCCESS) bytes = std::max(bytes, guess.workspace_bytes);
  st = ensure_workspace(h, bytes, ws);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  dispatch::ExecContext exec = h->exec();

  // 1. The exact digits: the smallest count the data can take.
  DecisionCounts counts;
  st = dispatch::decision_digits(exec, dp, s, A, B, *ws, &counts);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  const int lower = numerics::slices_lower_bound(counts.q_max_a, counts.q_max_b);
  Plan at_lower;
  st = plan_with(h, s, lower, &at_lower);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  if (at_lower.variant == Variant::Native)
    return go_native(plan, s, info,
                     "the emulation is slower than native here already at " + std::to_string(lower) +
                         " slices, the fewest these data allow (AUTO rules)");

  // 2. The bound over every entry from `lower`.
  st = dispatch::decision_bound(exec, dp, s, A, B, *ws, lower, info->target, /*magnitudes_ready=*/false, &counts);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  const int slices = counts.s_max < lower ? lower : counts.s_max;
  if (slices > kMaxSlices)
    return go_native(plan, s, info,
                     "no slice count up to " + std::to_string(kMaxSlices) + " meets the bound (entries with little " +
                         "|A||B| against their rows' and columns' scales)");
  double bound = 0.0;
  if (slices - lower < numerics::kSliceWindow) {
    bound = counts.ratio_max[slices - lower];
  } else {
    st = dispatch::decision_bound(exec, dp, s, A, B, *ws, slices, info->target, /*magnitudes_ready=*/true, &counts);
    if (st != OZGEMM_STATUS_SUCCESS) return st;
    bound = counts.ratio_max[0];
  }

  // 3. The plan at that count.
  st = plan_with(h, s, slices, plan);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  if (plan->variant == Variant::Native)
    return go_native(plan, s, info, "the emulation at " + std::to_string(slices) + " slices is slower than native here (AUTO rules)");
  bool moved = false;
  st = ensure_workspace(h, plan->workspace_bytes, ws, &moved);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  *shifts_ready = !moved;  // the shifts and flags sit at the same offsets in every plan
  info->variant = static_cast<ozgemmVariant_t>(plan->variant);
  info->slices = slices;
  info->bound = bound;
  set_reason(info, "FP64 mode: " + std::to_string(slices) + " slices, bound " + fmt(bound) + " u|A||B| <= " +
                       fmt(info->target) + " (at least " + std::to_string(lower) + " for these data)" +
                       (plan->fallback.empty() ? std::string() : "; ran unfused: " + plan->fallback));
  return OZGEMM_STATUS_SUCCESS;
}

}  // namespace detail
}  // namespace ozgemm
