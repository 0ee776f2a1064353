// FP64 accuracy mode (ozgemm.h; docs/numerics.md, "The accuracy contract"): per call, the scheme
// and its count are chosen from the data. The planner decides (plan_decision, plan at each count,
// the AUTO rules), the dispatch layer runs the statistics passes and reports their counts, and this
// file strings the steps together. A scheme is a candidate when the handle allows it (scheme AUTO:
// both) and, under variant AUTO, its rules say it can beat native DGEMM here:
//   0. no candidate (this shape, this device): native DGEMM before reading data;
//   1. digits pass (the max-reduce with the exact digit counts): Ozaki-I's lower bound L; Ozaki-I
//      drops out when AUTO would run native DGEMM at L;
//   2. magnitude digits (with Ozaki-II's norms), their INT8 product P, the bounds' reductions:
//      Ozaki-I's count S from L, Ozaki-II's maxima at every moduli count, hence its count N;
//   3. of the candidates that meet the target and beat native, the one expected fastest
//      (auto_rules' expected_tflops), reusing the statistics of steps 1-2.
// Each device step ends with one small copy back (the stream is synchronised twice per call).
#include <algorithm>
#include <cstdio>
#include <string>

#include "api/handle.hpp"
#include "plan/auto_rules.hpp"
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

std::string ozaki2_unavailable(const ozgemmContext* h, const GemmShape& s, int moduli, Ozaki2Plan* plan) {
  return plan_ozaki2(s, moduli, h->variant, h->dev, plan);
}

ozgemmStatus_t decide_fp64(ozgemmContext* h, const GemmShape& s, const double* A, const double* B, Plan* plan,
                           Ozaki2Plan* plan2, ozgemmCallInfo_t* info, void** ws, bool* shifts_ready) {
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

  // 0. The candidates. AUTO that prefers native DGEMM even at one slice (its rules only get stricter
  // with more slices), or at the fewest moduli, needs no look at the data.
  bool oz1 = h->scheme != Scheme::Ozaki2, oz2 = h->scheme != Scheme::Ozaki1;
  std::string why1, why2;  // why a scheme dropped out
  Ozaki2Plan largest2;     // Ozaki-II at the most moduli: the largest workspace any count takes
  if (oz1) {
    Plan at_one;
    const ozgemmStatus_t st = plan_with(h, s, 1, &at_one);
    if (st != OZGEMM_STATUS_SUCCESS) return st;
    if (at_one.variant == Variant::Native) {
      oz1 = false;
      why1 = "Ozaki-I slower than native here at any slice count";
    }
  }
  if (oz2) {
    if (h->scheme == Scheme::Ozaki2 && !ozaki2_variant_unavailable(h->variant, h->dev).empty())
      return OZGEMM_STATUS_NOT_SUPPORTED;  // as FIXED mode: a variant Ozaki-II has not here
    why2 = ozaki2_unavailable(h, s, kMaxModuli, &largest2);
    if (why2.empty() && h->variant == Variant::Auto && !auto_ozaki2(s, kMinModuli, h->dev))
      why2 = "Ozaki-II slower than native at this shape";
    oz2 = why2.empty();
  }
  const auto both_out = [&]() {
    std::string why = why1;
    if (!why2.empty()) why += (why.empty() ? "" : "; ") + why2;
    return go_native(plan, s, info, why + " (AUTO rules)");
  };
  if (!oz1 && !oz2) return both_out();
  DecisionPlan dp;
  const std::string refused = plan_decision(s, h->dev, &dp);
  if (!refused.empty()) return go_native(plan, s, info, refused);
  // Workspace for the decision and, likely, the emulation after it (8 slices, kMaxModuli moduli: no regrowth
  // later for the common counts).
  size_t bytes = dp.workspace_bytes;
  Plan guess;
  if (oz1 && plan_with(h, s, kDefaultSlices, &guess) == OZGEMM_STATUS_SUCCESS) bytes = std::max(bytes, guess.workspace_bytes);
  ozgemmStatus_t st = ensure_workspace(h, oz2 ? std::max(bytes, largest2.workspace_bytes) : bytes, ws);
  // Without room for Ozaki-II at every count (kMaxModuli's planes), the decision's own: the chosen
  // count's workspace is ensured after it (step 3).
  if (st == OZGEMM_STATUS_ALLOC_FAILED && oz2) st = ensure_workspace(h, bytes, ws);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  dispatch::ExecContext exec = h->exec();

  // 1. The exact digits: the fewest slices the data can take.
  DecisionCounts counts;
  st = dispatch::decision_digits(exec, dp, s, A, B, *ws, &counts);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  const int lower = numerics::slices_lower_bound(counts.q_max_a, counts.q_max_b);
  if (oz1) {
    Plan at_lower;
    st = plan_with(h, s, lower, &at_lower);
    if (st != OZGEMM_STATUS_SUCCESS) return st;
    if (at_lower.variant == Variant::Native) {
      oz1 = false;
      why1 = "Ozaki-I slower than native here at " + std::to_string(lower) + " slices, the fewest these data allow";
    }
  }
  if (!oz1 && !oz2) return both_out();

  // 2. The bounds over every entry: Ozaki-I's from `lower`, Ozaki-II's at every moduli count.
  dispatch::BoundRequest rq;
  rq.ozaki1 = oz1;
  rq.s_from = lower;
  rq.ozaki2 = oz2;
  rq.target = info->target;
  st = dispatch::decision_bound(exec, dp, s, A, B, *ws, rq, &counts);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  int moduli = 0;
  double bound2 = 0.0;
  if (oz2) {
    for (int w = 0; w < numerics::kModuliWindow && !moduli; ++w)
      if (counts.oz2_ratio_max[w] <= info->target) {
        moduli = numerics::kMinModuli + w;
        bound2 = counts.oz2_ratio_max[w];
      }
    if (!moduli) {
      oz2 = false;
      why2 = "no moduli count up to " + std::to_string(kMaxModuli) + " meets the bound";
    } else if (h->variant == Variant::Auto && !auto_ozaki2(s, moduli, h->dev)) {
      oz2 = false;
      why2 = "Ozaki-II at " + std::to_string(moduli) + " moduli slower than native here";
    } else {
      const std::string why = ozaki2_unavailable(h, s, moduli, plan2);
      if (!why.empty()) return OZGEMM_STATUS_INVALID_VALUE;  // the candidate check planned kMaxModuli moduli
    }
  }
  int slices = 0;
  double bound1 = 0.0;
  if (oz1) {
    slices = counts.s_max < lower ? lower : counts.s_max;
    if (slices > kMaxSlices) {
      oz1 = false;
      why1 = "no slice count up to " + std::to_string(kMaxSlices) + " meets the bound";
    } else {
      if (slices - lower < numerics::kSliceWindow) {
        bound1 = counts.ratio_max[slices - lower];
      } else {
        dispatch::BoundRequest again;
        again.s_from = slices;
        again.target = info->target;
        again.magnitudes_ready = true;
        DecisionCounts more;
        st = dispatch::decision_bound(exec, dp, s, A, B, *ws, again, &more);
        if (st != OZGEMM_STATUS_SUCCESS) return st;
        bound1 = more.ratio_max[0];
      }
      st = plan_with(h, s, slices, plan);
      if (st != OZGEMM_STATUS_SUCCESS) return st;
      if (plan->variant == Variant::Native) {
        oz1 = false;
        why1 = "Ozaki-I at " + std::to_string(slices) + " slices slower than native here";
      }
    }
  }
  if (!oz1 && !oz2) return both_out();

  // 3. The candidate expected fastest.
  const bool take2 = oz2 && (!oz1 || expected_tflops(Scheme::Ozaki2, moduli, h->dev) >
                                         expected_tflops(Scheme::Ozaki1, slices, h->dev));
  bool moved = false;
  st = ensure_workspace(h, take2 ? plan2->workspace_bytes : plan->workspace_bytes, ws, &moved);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  *shifts_ready = !moved;  // the statistics sit at the same offsets in every plan
  const std::string other = take2 ? (oz1 ? "; Ozaki-I needs " + std::to_string(slices) + " slices" : std::string())
                                  : (oz2 ? "; Ozaki-II needs " + std::to_string(moduli) + " moduli" : std::string());
  if (take2) {
    info->scheme = OZGEMM_SCHEME_OZAKI2;
    info->moduli = moduli;
    info->variant = static_cast<ozgemmVariant_t>(plan2->variant);
    info->bound = bound2;
    set_reason(info, "FP64 mode: Ozaki-II, " + std::to_string(moduli) + " moduli, bound " + fmt(bound2) +
                         " u|A||B| <= " + fmt(info->target) + other +
                         (plan2->fallback.empty() ? std::string() : "; ran unfused: " + plan2->fallback));
    return OZGEMM_STATUS_SUCCESS;
  }
  info->scheme = OZGEMM_SCHEME_OZAKI1;
  info->variant = static_cast<ozgemmVariant_t>(plan->variant);
  info->slices = slices;
  info->bound = bound1;
  set_reason(info, "FP64 mode: " + std::to_string(slices) + " slices, bound " + fmt(bound1) + " u|A||B| <= " +
                       fmt(info->target) + " (at least " + std::to_string(lower) + " for these data)" + other +
                       (plan->fallback.empty() ? std::string() : "; ran unfused: " + plan->fallback));
  return OZGEMM_STATUS_SUCCESS;
}

}  // namespace detail
}  // namespace ozgemm
