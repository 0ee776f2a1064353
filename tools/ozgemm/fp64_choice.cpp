// tools/ozgemm/fp64_choice.cpp — FP64 mode's choice between the schemes on the host path
// (cli.hpp, choose_fp64_scheme). The tool's one call into the library's AUTO rules
// (src/plan/auto_rules.hpp; this file alone is compiled with the internal headers), the same rule
// as step 3 of plan_call's FP64 decision (src/plan/call_planner.cpp). plan_call reads the data
// through DecisionData (device passes); a host DecisionData over the host reference's statistics
// would let this function call plan_call instead, and only this function would change.
#include <string>

#include "cli.hpp"
#include "plan/auto_rules.hpp"

namespace ozgemm {
namespace cli {

namespace {

// The GPU whose choice the host path shows: the H100 SXM the Hopper AUTO rules were measured on,
// with every kernel family built (fp64_choice_device() says so in words).
DeviceDesc choice_device() {
  DeviceDesc d;
  d.sm_count = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.memory_bytes = int64_t(80) << 30;
  d.sm90_kernels = true;
  d.portable_kernels = true;
  return d;
}

std::string joined(const std::string& a, const std::string& b) { return a.empty() ? b : b.empty() ? a : a + "; " + b; }

}  // namespace

const char* fp64_choice_device() { return "an H100 SXM (compute capability 9.0, 132 SMs, every kernel built)"; }

Fp64Choice choose_fp64_scheme(const Sizes& s, Scheme allowed, int slices, int moduli) {
  const DeviceDesc dev = choice_device();
  GemmShape shape;  // the AUTO rules read m, n and k
  shape.m = s.m;
  shape.n = s.n;
  shape.k = s.k;
  // The candidates, each with why it dropped out (the GPU's wording, src/plan/call_planner.cpp).
  bool oz1 = allowed != Scheme::Ozaki2, oz2 = allowed != Scheme::Ozaki1;
  std::string why1, why2;
  if (oz1) {
    if (slices <= 0)
      why1 = "no slice count up to " + std::to_string(kMaxSlices) + " meets the bound";
    else if (auto_variant(shape, slices, dev) == Variant::Native)
      why1 = "Ozaki-I at " + std::to_string(slices) + " slices slower than native here";
    oz1 = why1.empty();
  }
  if (oz2) {
    if (moduli <= 0)
      why2 = "no moduli count up to " + std::to_string(kMaxModuli) + " meets the bound";
    else if (!auto_ozaki2(shape, moduli, dev))
      why2 = "Ozaki-II at " + std::to_string(moduli) + " moduli slower than native here";
    oz2 = why2.empty();
  }
  Fp64Choice c;
  if (!oz1 && !oz2) {
    c.reason = joined(why1, why2) + " (AUTO rules)";
    return c;
  }
  const bool take2 = oz2 && (!oz1 || ozaki2_preferred(moduli, slices, dev));
  c.path = take2 ? Fp64Path::Ozaki2 : Fp64Path::Ozaki1;
  c.count = take2 ? moduli : slices;
  if (take2 && oz1) c.reason = "expected faster than Ozaki-I at " + std::to_string(slices) + " slices";
  if (!take2 && oz2) c.reason = "expected faster than Ozaki-II at " + std::to_string(moduli) + " moduli";
  if (c.reason.empty()) c.reason = take2 ? why1 : why2;  // the other scheme's reason for dropping out
  return c;
}

}  // namespace cli
}  // namespace ozgemm
