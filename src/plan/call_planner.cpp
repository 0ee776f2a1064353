// plan_call (planner.hpp): the one planning entry. FIXED mode and queries without data plan the
// handle's count; FP64 accuracy mode (ozgemm.h; docs/numerics.md, "The accuracy contract") chooses
// the scheme and its count from the data. A scheme is a candidate when the settings allow it (scheme
// AUTO: both) and, under variant AUTO, its rules say it can beat native DGEMM here:
//   0. no candidate (this shape, this device), or a stream under graph capture: native DGEMM before
//      reading data;
//   1. with at least DecisionPolicy::kOz2SampleMinRows rows, a sample: the candidates' bounds over
//      the leading block of C from its rows and columns alone; where every moduli count fails there,
//      or (variant AUTO) its rules refuse the fewest count met there, Ozaki-II drops out, where an entry
//      needs more than kMaxSlices slices, Ozaki-I (native DGEMM at once when none is left);
//   2. digits pass (the max-reduce with the exact digit counts): Ozaki-I's lower bound L; Ozaki-I
//      drops out when AUTO would run native DGEMM at L (read back only when Ozaki-I is a candidate);
//   3. magnitude digits (with Ozaki-II's norms), their INT8 product P, the bounds' reductions:
//      Ozaki-I's count S from L, Ozaki-II's smallest count N every entry meets (the counts the
//      sample ruled out skipped);
//   4. of the candidates that meet the target and beat native, the one expected fastest
//      (auto_rules' expected_tflops), reusing the statistics of steps 2-3.
// Each step ends with one small copy back, step 2's only for Ozaki-I (Ozaki-II alone: the stream is
// synchronised twice per call, after the sample and after the bound). Complex data (ElementType::ComplexF64): FP64 mode takes the same steps
// with the complex Ozaki-II scheme (2M) the only candidate whatever the scheme setting (Ozaki-I has
// no complex form): step 2's digits feed R2c's exactness test only, step 3's bound is R2c
// (numerics/ozaki2_complex.hpp), the AUTO rule auto_ozaki2_complex, and every fallback native ZGEMM.
// plan_complex plans FIXED mode's complex Ozaki-II, variant NATIVE and the queries without data.
#include <algorithm>
#include <cstdio>
#include <string>

#include "ozgemm/numerics/accuracy.hpp"
#include "plan/auto_rules.hpp"
#include "plan/planner.hpp"

namespace ozgemm {

namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Ozaki-I at `slices` with the settings' variant, family and accumulator.
PlanStatus plan_ozaki1_at(const CallSettings& cs, const GemmShape& s, int slices, const DeviceDesc& dev,
                          Ozaki1Plan* plan, std::string* why) {
  Request rq;
  rq.shape = s;
  rq.slices = slices;
  rq.variant = cs.variant;
  rq.family = cs.family;
  rq.accumulator = cs.accumulator;
  std::string refused = variant_unavailable(rq.variant, rq.family, dev);
  if (!refused.empty()) {
    *why = refused;
    return PlanStatus::NotSupported;
  }
  refused = plan_ozaki1(rq, dev, plan);
  if (!refused.empty()) {
    *why = refused;
    return PlanStatus::Invalid;
  }
  return PlanStatus::Ok;
}

// Ozaki-II at `moduli` with the settings' variant (NotSupported for a variant Ozaki-II has not on this
// device or build: FULLY_FUSED anywhere, PARTIALLY_FUSED off Hopper).
PlanStatus plan_ozaki2_at(const CallSettings& cs, const GemmShape& s, int moduli, const DeviceDesc& dev,
                          Ozaki2Plan* plan, std::string* why, ElementType type = ElementType::RealF64) {
  std::string refused = ozaki2_variant_unavailable(cs.variant, dev);
  if (!refused.empty()) {
    *why = refused;
    return PlanStatus::NotSupported;
  }
  refused = plan_ozaki2(s, moduli, cs.variant, dev, plan, type);
  if (!refused.empty()) {
    *why = refused;
    return PlanStatus::Invalid;
  }
  return PlanStatus::Ok;
}

std::string ran_unfused(const std::string& fallback) {
  return fallback.empty() ? std::string() : "; ran unfused: " + fallback;
}

void set_ozaki1(const Ozaki1Plan& p, CallPlan* out) {
  if (p.variant == Variant::Native) {
    out->method = NativePlan{};
    out->workspace_bytes = 0;
  } else {
    out->method = p;
    out->workspace_bytes = p.workspace_bytes;
  }
  out->report.scheme = Scheme::Ozaki1;
  out->report.variant = p.variant;
  out->report.slices = p.variant == Variant::Native ? 0 : p.slices;
}

void set_ozaki2(const Ozaki2Plan& p, CallPlan* out) {
  out->method = p;
  out->workspace_bytes = p.workspace_bytes;
  out->report.scheme = Scheme::Ozaki2;
  out->report.variant = p.variant;
  out->report.moduli = p.moduli;
}

// FP64 mode's workspace without data: the decision's and the largest plan any count of an allowed
// scheme could take (complex data: the complex Ozaki-II scheme's only).
PlanStatus fp64_workspace(const CallSettings& cs, const GemmShape& s, const DeviceDesc& dev, ElementType type,
                          size_t* bytes, std::string* why) {
  const bool complex = type == ElementType::ComplexF64;
  size_t most = 0;
  DecisionPlan dp;
  if (plan_decision(s, dev, &dp, type).empty()) most = dp.workspace_bytes;
  Ozaki2Plan p2;  // the largest moduli count has the largest workspace
  if ((complex || cs.scheme != Scheme::Ozaki1) && plan_ozaki2(s, kMaxModuli, cs.variant, dev, &p2, type).empty())
    most = std::max(most, p2.workspace_bytes);
  if (!complex && cs.scheme != Scheme::Ozaki2)
    for (int sl = 1; sl <= kMaxSlices; ++sl) {
      Ozaki1Plan p;
      const PlanStatus st = plan_ozaki1_at(cs, s, sl, dev, &p, why);
      if (st != PlanStatus::Ok) return st;
      most = std::max(most, p.workspace_bytes);
    }
  *bytes = most;
  return PlanStatus::Ok;
}

// Complex data without a decision: FIXED mode runs the complex Ozaki-II scheme (2M,
// numerics/ozaki2_complex.hpp) at the settings' count (kDefaultComplexModuli unless set) with the
// settings' variant, whatever the scheme setting (Ozaki-I has no complex form); variant NATIVE runs
// native ZGEMM. FP64 mode gets here for queries without data (query: the workspace any decided count
// may need) and empty problems: the plan at that count, or native ZGEMM where AUTO rules the complex
// scheme out at every count (as the decision would before reading data).
PlanStatus plan_complex(const CallSettings& cs, const GemmShape& s, const DeviceDesc& dev, bool query, CallPlan* out,
                        std::string* why) {
  *out = CallPlan{};
  out->type = ElementType::ComplexF64;
  CallReport& r = out->report;
  r.scheme = Scheme::Ozaki1;  // as for native DGEMM: slices and moduli 0
  r.variant = Variant::Native;
  if (cs.variant == Variant::Native) {
    r.reason = "variant NATIVE: native ZGEMM";
    return PlanStatus::Ok;
  }
  if (cs.fp64_mode) {
    r.target = numerics::target_constant(s.k);
    if (cs.variant == Variant::Auto && !auto_ozaki2_complex(s, kMinModuli, dev)) {
      r.fell_back = true;
      r.reason = "FP64 mode ran native ZGEMM: complex Ozaki-II slower than native at this shape (AUTO rules)";
      return PlanStatus::Ok;
    }
  }
  Ozaki2Plan p2;
  const PlanStatus st = plan_ozaki2_at(cs, s, cs.effective_complex_moduli(), dev, &p2, why, ElementType::ComplexF64);
  if (st != PlanStatus::Ok) return st;
  set_ozaki2(p2, out);
  const std::string what = "complex Ozaki-II (2M): " + std::to_string(p2.moduli) + " moduli, " +
                           std::to_string(p2.planes()) + " INT8 products";
  if (!cs.fp64_mode) {
    r.reason = what + " (FIXED), " + variant_name(p2.variant) + ", no bound computed" + ran_unfused(p2.fallback);
    return PlanStatus::Ok;
  }
  r.reason = "FP64 mode without data: " + what + " planned; each call decides its count (up to " +
             std::to_string(kMaxModuli) + ") or native ZGEMM from the data";
  if (query && s.m > 0 && s.n > 0 && s.k > 0)
    return fp64_workspace(cs, s, dev, ElementType::ComplexF64, &out->workspace_bytes, why);
  return PlanStatus::Ok;
}

// The plan without a decision: the settings' count (FIXED mode, variant NATIVE, queries without data,
// empty problems).
PlanStatus plan_fixed(const CallSettings& cs, const GemmShape& s, const DeviceDesc& dev, bool query, CallPlan* out,
                      std::string* why) {
  if (cs.ozaki2_only()) {
    Ozaki2Plan p2;
    const PlanStatus st = plan_ozaki2_at(cs, s, cs.effective_moduli(), dev, &p2, why);
    if (st != PlanStatus::Ok) return st;
    set_ozaki2(p2, out);
    out->report.reason = "Ozaki-II: " + std::to_string(p2.moduli) + " moduli (FIXED), " + variant_name(p2.variant) +
                         ", no bound computed" + ran_unfused(p2.fallback);
  } else {
    Ozaki1Plan p;
    const PlanStatus st = plan_ozaki1_at(cs, s, cs.effective_slices(), dev, &p, why);
    if (st != PlanStatus::Ok) return st;
    set_ozaki1(p, out);
    if (p.variant == Variant::Native)
      out->report.reason = cs.variant == Variant::Native ? "variant NATIVE" : "FIXED mode: the planner chose native DGEMM";
    else
      out->report.reason = "FIXED mode: " + std::to_string(p.slices) + " slices, no bound computed" + ran_unfused(p.fallback);
  }
  if (query && cs.decides() && s.m > 0 && s.n > 0 && s.k > 0)
    return fp64_workspace(cs, s, dev, ElementType::RealF64, &out->workspace_bytes, why);
  return PlanStatus::Ok;
}

// FP64 mode's decision: reads the data through `data`, fills *out (report included). Complex data
// (type ComplexF64): the complex Ozaki-II scheme the only candidate, native ZGEMM the fallback.
class Fp64Decision {
 public:
  Fp64Decision(const CallSettings& cs, const CallProblem& pr, const DeviceDesc& dev, DecisionData* data, CallPlan* out,
               std::string* why)
      : cs_(cs), s_(pr.shape), type_(pr.type), dev_(dev), data_(data), out_(out), why_(why) {}

  PlanStatus run();

 private:
  PlanStatus native(const std::string& why) {
    out_->method = NativePlan{};
    out_->workspace_bytes = 0;
    out_->stats_ready = false;
    CallReport& r = out_->report;
    r.scheme = Scheme::Ozaki1;
    r.variant = Variant::Native;
    r.slices = r.moduli = 0;
    r.bound = 0;
    r.fell_back = true;
    r.reason = std::string("FP64 mode ran native ") + (complex() ? "ZGEMM: " : "DGEMM: ") + why;
    return PlanStatus::Ok;
  }
  bool complex() const { return type_ == ElementType::ComplexF64; }
  // The Ozaki-II candidate's name in the reasons, and AUTO's rule for it at `moduli`.
  const char* ozaki2_name() const { return complex() ? "complex Ozaki-II" : "Ozaki-II"; }
  bool ozaki2_faster(int moduli) const {
    return complex() ? auto_ozaki2_complex(s_, moduli, dev_) : auto_ozaki2(s_, moduli, dev_);
  }
  PlanStatus both_out() {
    std::string why = why1_;
    if (!why2_.empty()) why += (why.empty() ? "" : "; ") + why2_;
    return native(auto_dropped_ ? why + " (AUTO rules)" : why);
  }
  PlanStatus failed(const char* what) {
    *why_ = std::string("FP64 mode's decision: ") + what + " failed";
    return PlanStatus::DataFailed;
  }

  const CallSettings& cs_;
  const GemmShape& s_;
  const ElementType type_;
  const DeviceDesc& dev_;
  DecisionData* data_;
  CallPlan* out_;
  std::string* why_;
  bool oz1_ = false, oz2_ = false;
  std::string why1_, why2_;  // why a scheme dropped out
  // Ozaki-I's plan at `slices`; where AUTO chose native DGEMM there, Ozaki-I drops out with `why_native`.
  PlanStatus ozaki1_candidate(int slices, const std::string& why_native, Ozaki1Plan* plan) {
    const PlanStatus st = plan_ozaki1_at(cs_, s_, slices, dev_, plan, why_);
    if (st == PlanStatus::Ok && plan->variant == Variant::Native) {
      oz1_ = false;
      why1_ = why_native;
      auto_dropped_ = true;
    }
    return st;
  }
  bool auto_dropped_ = false;  // an AUTO rule dropped one
};

PlanStatus Fp64Decision::run() {
  *out_ = CallPlan{};
  out_->type = type_;
  const double target = numerics::target_constant(s_.k);
  out_->report.target = target;
  bool ok = true;
  const bool capturing = data_->capturing(&ok);
  if (!ok) return failed("the stream's capture query");
  if (capturing) return native("the stream is being captured into a CUDA graph (the decision reads data back)");

  // 0. The candidates. AUTO that prefers native DGEMM even at one slice (its rules only get stricter
  // with more slices), or at the fewest moduli, needs no look at the data. Complex data: Ozaki-II only.
  oz1_ = !complex() && cs_.scheme != Scheme::Ozaki2;
  oz2_ = complex() || cs_.scheme != Scheme::Ozaki1;
  Ozaki2Plan largest2;  // Ozaki-II at the most moduli: the largest workspace any count takes
  if (oz1_) {
    Ozaki1Plan at_one;
    const PlanStatus st = ozaki1_candidate(1, "Ozaki-I slower than native here at any slice count", &at_one);
    if (st != PlanStatus::Ok) return st;
  }
  if (oz2_) {
    if (complex() || cs_.scheme == Scheme::Ozaki2) {  // as FIXED mode: a variant Ozaki-II has not here
      const std::string refused = ozaki2_variant_unavailable(cs_.variant, dev_);
      if (!refused.empty()) {
        *why_ = refused;
        return PlanStatus::NotSupported;
      }
    }
    why2_ = plan_ozaki2(s_, kMaxModuli, cs_.variant, dev_, &largest2, type_);
    if (why2_.empty() && cs_.variant == Variant::Auto && !ozaki2_faster(kMinModuli)) {
      why2_ = std::string(ozaki2_name()) + " slower than native at this shape";
      auto_dropped_ = true;
    }
    oz2_ = why2_.empty();
  }
  if (!oz1_ && !oz2_) return both_out();
  DecisionPlan dp;
  const std::string refused = plan_decision(s_, dev_, &dp, type_);
  if (!refused.empty()) return native(refused);
  // Workspace for the decision and, likely, the emulation after it (8 slices, kMaxModuli moduli: no
  // regrowth later for the common counts). Without room for Ozaki-II at every count (kMaxModuli's
  // planes), the decision's own: the chosen count's workspace is reserved after it (step 3).
  size_t bytes = dp.workspace_bytes;
  Ozaki1Plan guess;
  std::string ignored;
  if (oz1_ && plan_ozaki1_at(cs_, s_, kDefaultSlices, dev_, &guess, &ignored) == PlanStatus::Ok)
    bytes = std::max(bytes, guess.workspace_bytes);
  bool no_memory = false, moved = false;
  if (!data_->reserve(oz2_ ? std::max(bytes, largest2.workspace_bytes) : bytes, &no_memory, &moved) &&
      !(no_memory && oz2_ && data_->reserve(bytes, &no_memory, &moved)))
    // Native DGEMM/ZGEMM needs no workspace: no room for the decision is a reason to run it, not an error.
    return no_memory ? native("no room for the decision's workspace (" + std::to_string(bytes) + " bytes)")
                     : failed("the workspace");

  // 1. The sample (DecisionPolicy: problems of many rows): the leading block of C, from its own rows
  // and columns only. Where every count already fails there, the full maxima can only be larger: the
  // scheme drops out before any full pass reads A and B (wide-range data go native at the cost of
  // reading a few rows, with a variant set too, where Ozaki-I stays a candidate). Otherwise the moduli
  // counts it ruled out stay out of the full pass.
  DecisionCounts counts;
  bool sampled = false;
  if ((oz1_ || oz2_) && dp.sample_m > 0) {
    BoundRequest sample;
    sample.ozaki1 = oz1_;
    sample.s_from = 1;
    sample.ozaki2 = oz2_;
    sample.target = target;
    sample.sample = true;
    if (!data_->bound(dp, sample, &counts)) return failed("the sampled bound pass");
    const std::string on_the_sample =
        " (on the leading " + std::to_string(dp.sample_m) + " x " + std::to_string(dp.sample_n) + " block already)";
    // Ozaki-I's R is non-increasing in s, and the sample's entries have the same statistics in the full
    // pass: an entry needing more than kMaxSlices there rules Ozaki-I out, and the sample's largest
    // need is at most the full count.
    if (oz1_ && counts.s_max > kMaxSlices) {
      oz1_ = false;
      why1_ = "no slice count up to " + std::to_string(kMaxSlices) + " meets the bound" + on_the_sample;
    }
    // The sample's digit maxima are over some rows and columns only: its slice count is at most the
    // full one, and AUTO's rules only get stricter with more slices, so Ozaki-I slower than native
    // there is slower at the full count too.
    if (oz1_) {
      const int fewest = std::max(numerics::slices_lower_bound(counts.q_max_a, counts.q_max_b), counts.s_max);
      Ozaki1Plan at_fewest;
      const PlanStatus st = ozaki1_candidate(fewest,
                                             "Ozaki-I slower than native here at " + std::to_string(fewest) +
                                                 " slices, the fewest the leading block already allows",
                                             &at_fewest);
      if (st != PlanStatus::Ok) return st;
    }
    bool all_past = oz2_;
    for (int w = 0; w < numerics::kModuliWindow; ++w) all_past = all_past && counts.oz2_ratio_max[w] > target;
    if (all_past) {
      oz2_ = false;
      why2_ = "no moduli count up to " + std::to_string(kMaxModuli) + " meets the bound" + on_the_sample;
    }
    // The full pass's count is at least the sample's fewest: the counts the sample killed stay dead in
    // the full pass (keep_dead below; launch_oz2_bound keeps oz2_dead), and they would fail there anyway
    // (the sample's entries are among the full pass's, with the same rows' and columns' statistics).
    // AUTO's rules admit fewer moduli only (auto_rules.cpp; the complex rule at the current constants
    // admits every count up to kMaxModuli), so a rule refusing that count refuses the full count too:
    // Ozaki-II drops out before the full pass (8192-wide outputs at k < 8192 admit 16 moduli, and phi 1's
    // sample already needs 17).
    int fewest2 = 0;
    for (int w = 0; oz2_ && w < numerics::kModuliWindow && !fewest2; ++w)
      if (counts.oz2_ratio_max[w] <= target) fewest2 = numerics::kMinModuli + w;
    if (fewest2 && cs_.variant == Variant::Auto && !ozaki2_faster(fewest2)) {
      oz2_ = false;
      why2_ = std::string(ozaki2_name()) + " slower than native here at " + std::to_string(fewest2) +
              " moduli, the fewest the leading block already allows";
      auto_dropped_ = true;
    }
    if (!oz1_ && !oz2_) return both_out();
    sampled = true;
  }

  // 2. The exact digits: the fewest slices the data can take (read back only for Ozaki-I).
  if (!data_->digits(dp, oz1_ ? &counts : nullptr)) return failed("the digits pass");
  const int lower = oz1_ ? numerics::slices_lower_bound(counts.q_max_a, counts.q_max_b) : 1;
  if (oz1_) {
    Ozaki1Plan at_lower;
    const PlanStatus st = ozaki1_candidate(
        lower, "Ozaki-I slower than native here at " + std::to_string(lower) + " slices, the fewest these data allow",
        &at_lower);
    if (st != PlanStatus::Ok) return st;
  }
  if (!oz1_ && !oz2_) return both_out();

  // 3. The bounds over every entry: Ozaki-I's from `lower`, Ozaki-II's at the moduli counts (the
  // smallest that every entry meets, with its maximum). With both schemes candidates (a variant set
  // explicitly keeps Ozaki-I in: AUTO's rules, which rule it out on Hopper, do not apply), where
  // Ozaki-II at the most moduli is still expected faster than Ozaki-I at the fewest slices these data
  // allow, step 4 takes Ozaki-II whenever a count certifies: its bound runs alone first, Ozaki-I's only
  // where no count does. Same choice, one reduction less (issue 33: the explicit variant's decision
  // cost 5-13% more).
  const bool ozaki2_first = oz1_ && oz2_ && ozaki2_preferred(kMaxModuli, lower, dev_);
  BoundRequest rq;
  rq.ozaki1 = oz1_ && !ozaki2_first;
  rq.s_from = lower;
  rq.ozaki2 = oz2_;
  rq.target = target;
  rq.keep_dead = sampled && oz2_;
  if (!data_->bound(dp, rq, &counts)) return failed("the bound pass");
  int moduli = 0;
  double bound2 = 0.0;
  Ozaki2Plan plan2;
  if (oz2_) {
    for (int w = 0; w < numerics::kModuliWindow && !moduli; ++w)
      if (counts.oz2_ratio_max[w] <= target) {
        moduli = numerics::kMinModuli + w;
        bound2 = counts.oz2_ratio_max[w];
      }
    if (!moduli) {
      oz2_ = false;
      why2_ = "no moduli count up to " + std::to_string(kMaxModuli) + " meets the bound";
    } else if (cs_.variant == Variant::Auto && !ozaki2_faster(moduli)) {
      oz2_ = false;
      why2_ = std::string(ozaki2_name()) + " at " + std::to_string(moduli) + " moduli slower than native here";
      auto_dropped_ = true;
    } else if (!plan_ozaki2(s_, moduli, cs_.variant, dev_, &plan2, type_).empty()) {
      *why_ = std::string(ozaki2_name()) + " at " + std::to_string(moduli) + " moduli could not be planned";
      return PlanStatus::Invalid;  // the candidate check planned kMaxModuli moduli
    }
  }
  if (ozaki2_first) {
    if (oz2_) {
      oz1_ = false;  // Ozaki-II certified: step 3 would take it over any Ozaki-I count
    } else {
      BoundRequest rq1;  // no moduli count certifies: Ozaki-I's bound, on the magnitudes computed above
      rq1.ozaki1 = true;
      rq1.s_from = lower;
      rq1.target = target;
      rq1.magnitudes_ready = true;
      if (!data_->bound(dp, rq1, &counts)) return failed("the bound pass");
    }
  }
  int slices = 0;
  double bound1 = 0.0;
  Ozaki1Plan plan1;
  if (oz1_) {
    slices = counts.s_max < lower ? lower : counts.s_max;
    if (slices > kMaxSlices) {
      oz1_ = false;
      why1_ = "no slice count up to " + std::to_string(kMaxSlices) + " meets the bound";
    } else {
      if (slices - lower < numerics::kSliceWindow) {
        bound1 = counts.ratio_max[slices - lower];
      } else {
        BoundRequest again;
        again.s_from = slices;
        again.target = target;
        again.magnitudes_ready = true;
        DecisionCounts more;
        if (!data_->bound(dp, again, &more)) return failed("the bound pass");
        bound1 = more.ratio_max[0];
      }
      const PlanStatus st =
          ozaki1_candidate(slices, "Ozaki-I at " + std::to_string(slices) + " slices slower than native here", &plan1);
      if (st != PlanStatus::Ok) return st;
    }
  }
  if (!oz1_ && !oz2_) return both_out();

  // 4. The candidate expected fastest.
  const bool take2 = oz2_ && (!oz1_ || ozaki2_preferred(moduli, slices, dev_));
  if (take2)
    set_ozaki2(plan2, out_);
  else
    set_ozaki1(plan1, out_);
  if (!data_->reserve(out_->workspace_bytes, &no_memory, &moved)) {
    if (!no_memory) return failed("the workspace");
    const size_t need = out_->workspace_bytes;
    return native("no room for the emulation's workspace (" + std::to_string(need) + " bytes)");
  }
  out_->stats_ready = !moved;  // the statistics sit at the same offsets in every plan
  CallReport& r = out_->report;
  const std::string other = take2 ? (oz1_ ? "; Ozaki-I needs " + std::to_string(slices) + " slices" : std::string())
                                  : (oz2_ ? "; Ozaki-II needs " + std::to_string(moduli) + " moduli" : std::string());
  if (take2) {
    r.bound = bound2;
    const std::string products = complex() ? " (" + std::to_string(plan2.planes()) + " INT8 products)" : "";
    r.reason = std::string("FP64 mode: ") + (complex() ? "complex Ozaki-II (2M)" : "Ozaki-II") + ", " +
               std::to_string(moduli) + " moduli" + products + ", bound " + fmt(bound2) + " u|A||B| <= " + fmt(target) +
               other + ran_unfused(plan2.fallback);
  } else {
    r.bound = bound1;
    r.reason = "FP64 mode: " + std::to_string(slices) + " slices, bound " + fmt(bound1) + " u|A||B| <= " + fmt(target) +
               " (at least " + std::to_string(lower) + " for these data)" + other + ran_unfused(plan1.fallback);
  }
  return PlanStatus::Ok;
}

}  // namespace

PlanStatus plan_call(const CallSettings& settings, const CallProblem& problem, const DeviceDesc& dev, DecisionData* data,
                     CallPlan* plan, std::string* why) {
  std::string scratch;
  std::string* reason = why ? why : &scratch;
  reason->clear();
  if (problem.type != ElementType::RealF64 && problem.type != ElementType::ComplexF64) {
    *reason = "unknown element type";
    return PlanStatus::NotSupported;
  }
  const GemmShape& s = problem.shape;
  const std::string bad = check_shape(s);
  if (!bad.empty()) {
    *reason = bad;
    return PlanStatus::Invalid;
  }
  const bool empty = s.m == 0 || s.n == 0 || s.k == 0;
  if (problem.type == ElementType::ComplexF64 && (!data || empty || !settings.decides()))
    return plan_complex(settings, s, dev, /*query=*/!data, plan, reason);
  if (!data || empty || !settings.decides()) {
    *plan = CallPlan{};
    return plan_fixed(settings, s, dev, /*query=*/!data, plan, reason);
  }
  return Fp64Decision(settings, problem, dev, data, plan, reason).run();
}

}  // namespace ozgemm
