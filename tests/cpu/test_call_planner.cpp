// CPU tests of plan_call (src/plan/planner.hpp), the one planning entry: FIXED mode's and the
// queries' plans, and FP64 mode's decision driven by scripted data (DecisionData): which passes it
// asks for, in which order, and the plan and report it returns for given counts. The device passes
// themselves are the GPU suites' (tests/gpu/test_gpu_fp64.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "kernels/dgemm/policy.hpp"
#include "ozgemm/numerics/accuracy.hpp"
#include "plan/auto_rules.hpp"
#include "plan/planner.hpp"

namespace nm = ozgemm::numerics;
using ozgemm::BoundRequest;
using ozgemm::CallPlan;
using ozgemm::CallProblem;
using ozgemm::CallSettings;
using ozgemm::DecisionCounts;
using ozgemm::DecisionPlan;
using ozgemm::DeviceDesc;
using ozgemm::GemmShape;
using ozgemm::Op;
using ozgemm::PlanStatus;
using ozgemm::Scheme;
using ozgemm::Variant;

namespace {

CallProblem square(int64_t n, int64_t k) { return {ozgemm::gemm_shape(Op::N, Op::N, n, n, k, n, k, n)}; }

// Scripted data: every pass succeeds and reports the counts given; the calls are recorded.
class ScriptedData final : public ozgemm::DecisionData {
 public:
  DecisionCounts digit_counts, bound_counts, sample_counts;
  std::vector<bool> digits_read_back;  // per digits call: counts asked for (else enqueued only)
  bool capture = false, fail_bound = false;
  std::vector<std::string> calls;
  std::vector<BoundRequest> bounds;
  std::vector<ozgemm::ElementType> plan_types;  // DecisionPlan::type of every pass
  size_t reserved = 0;

  bool capturing(bool* ok) override {
    calls.push_back("capturing");
    *ok = true;
    return capture;
  }
  int reserves_that_fit = -1;  // >= 0: reservations after this many fail for want of room
  bool reserve(size_t bytes, bool* no_memory, bool* moved) override {
    calls.push_back("reserve");
    *no_memory = *moved = false;
    if (reserves_that_fit >= 0 && reserves_that_fit-- == 0) {
      reserves_that_fit = 0;
      *no_memory = true;
      return false;
    }
    reserved = std::max(reserved, bytes);
    return true;
  }
  bool digits(const DecisionPlan& plan, DecisionCounts* c) override {
    calls.push_back("digits");
    plan_types.push_back(plan.type);
    digits_read_back.push_back(c != nullptr);
    if (c) *c = digit_counts;
    return true;
  }
  bool bound(const DecisionPlan& plan, const BoundRequest& rq, DecisionCounts* c) override {
    calls.push_back(rq.sample ? "sample" : "bound");
    plan_types.push_back(plan.type);
    bounds.push_back(rq);
    if (fail_bound) return false;
    const DecisionCounts& src = rq.sample ? sample_counts : bound_counts;
    for (int w = 0; w < nm::kModuliWindow; ++w) c->oz2_ratio_max[w] = src.oz2_ratio_max[w];
    for (int w = 0; w < nm::kSliceWindow; ++w) c->ratio_max[w] = src.ratio_max[w];
    c->s_max = src.s_max;
    if (rq.sample) {  // the sample's own digits pass: its maxima (the full pass's stay as digits() left them)
      c->q_max_a = src.q_max_a;
      c->q_max_b = src.q_max_b;
    }
    return true;
  }
};

// Ozaki-II's maxima that first meet `target` at `moduli` (the larger counts meet it too).
void certify_at(DecisionCounts* c, int moduli, double target) {
  for (int w = 0; w < nm::kModuliWindow; ++w) c->oz2_ratio_max[w] = nm::kMinModuli + w >= moduli ? target / 2 : target * 8;
}

// Maxima past `target` at every count (no count meets it).
void fail_every_count(DecisionCounts* c, double target) {
  for (double& r : c->oz2_ratio_max) r = target * 2;
}

// Data whose sample already rules every count out; the full pass (certifying 16 moduli) must not run.
ScriptedData ruled_out_by_the_sample(double target) {
  ScriptedData data;
  fail_every_count(&data.sample_counts, target);
  certify_at(&data.bound_counts, 16, target);
  return data;
}

CallSettings ozaki2_fp64() {
  CallSettings s;
  s.scheme = Scheme::Ozaki2;
  return s;
}

}  // namespace

TEST(CallPlanner, FixedOzaki2IsOneOzaki2PlanWithItsWorkspace) {
  CallSettings cs;
  cs.fp64_mode = false;
  cs.scheme = Scheme::Ozaki2;
  cs.moduli = 15;
  CallPlan p;
  ScriptedData data;
  ASSERT_EQ(ozgemm::plan_call(cs, square(4096, 4096), DeviceDesc{}, &data, &p), PlanStatus::Ok);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method));
  const auto& p2 = std::get<ozgemm::Ozaki2Plan>(p.method);
  EXPECT_EQ(p2.moduli, 15);
  EXPECT_EQ(p.workspace_bytes, p2.workspace_bytes);
  EXPECT_EQ(p.report.scheme, Scheme::Ozaki2);
  EXPECT_EQ(p.report.moduli, 15);
  EXPECT_EQ(p.report.slices, 0);
  EXPECT_NE(p.report.reason.find("15 moduli (FIXED)"), std::string::npos) << p.report.reason;
  EXPECT_TRUE(data.calls.empty()) << "FIXED mode reads no data";
}

TEST(CallPlanner, FixedOzaki1AndVariantNativeAreOzaki1OrNativePlans) {
  CallSettings cs;
  cs.fp64_mode = false;
  cs.slices = 7;
  cs.variant = Variant::Unfused;
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(cs, square(1024, 1024), DeviceDesc{}, nullptr, &p), PlanStatus::Ok);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki1Plan>(p.method));
  EXPECT_EQ(std::get<ozgemm::Ozaki1Plan>(p.method).slices, 7);
  EXPECT_EQ(p.report.slices, 7);
  EXPECT_GT(p.workspace_bytes, 0u);

  cs.variant = Variant::Native;
  cs.fp64_mode = true;  // variant NATIVE decides nothing in either mode
  ScriptedData data;
  ASSERT_EQ(ozgemm::plan_call(cs, square(8192, 8192), DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_EQ(p.workspace_bytes, 0u);
  EXPECT_EQ(p.report.reason, "variant NATIVE");
  EXPECT_TRUE(data.calls.empty());
}

TEST(CallPlanner, QueriesInFp64ModeCoverEveryCountsWorkspace) {
  CallSettings cs;  // FP64 mode, scheme AUTO
  CallPlan q;
  ASSERT_EQ(ozgemm::plan_call(cs, square(8192, 8192), DeviceDesc{}, nullptr, &q), PlanStatus::Ok);
  DecisionPlan dp;
  ASSERT_EQ(ozgemm::plan_decision(square(8192, 8192).shape, DeviceDesc{}, &dp), "");
  EXPECT_GE(q.workspace_bytes, dp.workspace_bytes);
  ozgemm::Ozaki2Plan widest;
  ASSERT_EQ(ozgemm::plan_ozaki2(square(8192, 8192).shape, ozgemm::kMaxModuli, Variant::Auto, DeviceDesc{}, &widest), "");
  EXPECT_GE(q.workspace_bytes, widest.workspace_bytes);
}

TEST(CallPlanner, RefusalsMapToTheirKinds) {
  CallSettings cs;
  cs.scheme = Scheme::Ozaki2;
  cs.variant = Variant::FullyFused;  // Ozaki-II has no fully fused form
  CallPlan p;
  std::string why;
  EXPECT_EQ(ozgemm::plan_call(cs, square(4096, 4096), DeviceDesc{}, nullptr, &p, &why), PlanStatus::NotSupported);
  EXPECT_NE(why.find("fully fused"), std::string::npos) << why;
  CallProblem unknown = square(64, 64);
  unknown.type = static_cast<ozgemm::ElementType>(7);
  EXPECT_EQ(ozgemm::plan_call(CallSettings{}, unknown, DeviceDesc{}, nullptr, &p, &why), PlanStatus::NotSupported);
  CallProblem complex = square(64, 64);
  complex.type = ozgemm::ElementType::ComplexF64;
  CallSettings fixed;
  fixed.fp64_mode = false;
  fixed.variant = Variant::FullyFused;  // no fully fused form for complex data either
  EXPECT_EQ(ozgemm::plan_call(fixed, complex, DeviceDesc{}, nullptr, &p, &why), PlanStatus::NotSupported);
  DeviceDesc a100;
  a100.cc_major = 8;
  fixed.variant = Variant::PartiallyFused;  // the fused products are Hopper's
  EXPECT_EQ(ozgemm::plan_call(fixed, complex, a100, nullptr, &p, &why), PlanStatus::NotSupported);
  fixed.variant = Variant::Auto;
  complex.shape.ldb = 1;
  EXPECT_EQ(ozgemm::plan_call(fixed, complex, DeviceDesc{}, nullptr, &p, &why), PlanStatus::Invalid);
  CallProblem bad = square(64, 64);
  bad.shape.lda = 1;  // smaller than the rows
  EXPECT_EQ(ozgemm::plan_call(CallSettings{}, bad, DeviceDesc{}, nullptr, &p, &why), PlanStatus::Invalid);
}

TEST(CallPlanner, Fp64ModeTakesTheFewestCertifiedModuli) {
  // 8192^3 on the default (H100-like) device: AUTO admits Ozaki-II there (auto_rules.cpp).
  const CallProblem pr = square(8192, 8192);
  ASSERT_TRUE(ozgemm::auto_ozaki2(pr.shape, 16, DeviceDesc{}));
  const double target = nm::target_constant(pr.shape.k);
  ScriptedData data;
  certify_at(&data.sample_counts, 16, target);
  certify_at(&data.bound_counts, 16, target);
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(ozaki2_fp64(), pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method));
  EXPECT_EQ(std::get<ozgemm::Ozaki2Plan>(p.method).moduli, 16);
  EXPECT_EQ(p.report.scheme, Scheme::Ozaki2);
  EXPECT_EQ(p.report.moduli, 16);
  EXPECT_FALSE(p.report.fell_back);
  EXPECT_DOUBLE_EQ(p.report.bound, target / 2);
  EXPECT_DOUBLE_EQ(p.report.target, target);
  EXPECT_TRUE(p.stats_ready) << "the decision's statistics are reused";
  EXPECT_GE(data.reserved, p.workspace_bytes);
  // Ozaki-II alone on 8192 rows: the sample first (the leading block, its own statistics), then (some
  // count passes there) the digits without a read back and the full pass, keeping the sample's dead counts.
  const std::vector<std::string> expected = {"capturing", "reserve", "sample", "digits", "bound", "reserve"};
  EXPECT_EQ(data.calls, expected);
  EXPECT_EQ(data.digits_read_back, std::vector<bool>{false});
  ASSERT_EQ(data.bounds.size(), 2u);
  EXPECT_TRUE(data.bounds[0].sample);
  EXPECT_FALSE(data.bounds[0].magnitudes_ready);
  EXPECT_FALSE(data.bounds[0].ozaki1);
  EXPECT_FALSE(data.bounds[1].sample);
  EXPECT_FALSE(data.bounds[1].magnitudes_ready);
  EXPECT_TRUE(data.bounds[1].keep_dead);
  EXPECT_TRUE(data.bounds[1].ozaki2);
  EXPECT_FALSE(data.bounds[1].ozaki1);
}

TEST(CallPlanner, Fp64ModeSkipsTheFullPassWhenTheSampleRulesEveryCountOut) {
  const CallProblem pr = square(8192, 8192);
  const double target = nm::target_constant(pr.shape.k);
  ScriptedData data = ruled_out_by_the_sample(target);
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(ozaki2_fp64(), pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_TRUE(p.report.fell_back);
  EXPECT_NE(p.report.reason.find("no moduli count"), std::string::npos) << p.report.reason;
  EXPECT_NE(p.report.reason.find("leading 512 x 1024 block"), std::string::npos) << p.report.reason;
  const std::vector<std::string> expected = {"capturing", "reserve", "sample"};  // no full pass reads A or B
  EXPECT_EQ(data.calls, expected);
}

// Scheme AUTO (both candidates) on wide-range data: the sample rules every moduli count out and its
// digits rule Ozaki-I out (AUTO: slower than native at the 7 slices they already need), so native
// DGEMM runs without any full pass; with digits that still allow few slices, the full digits decide.
TEST(CallPlanner, Fp64ModeDropsOzaki1OnTheSamplesDigits) {
  const CallProblem pr = square(8192, 8192);
  const double target = nm::target_constant(pr.shape.k);
  ScriptedData data = ruled_out_by_the_sample(target);
  data.sample_counts.q_max_a = data.sample_counts.q_max_b = 4;  // at least 7 slices
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method)) << p.report.reason;
  EXPECT_NE(p.report.reason.find("fewest the leading block already allows"), std::string::npos) << p.report.reason;
  EXPECT_EQ(data.calls, (std::vector<std::string>{"capturing", "reserve", "sample"}));
  // Integer-like data (one exact digit a side: one slice): Ozaki-I stays a candidate, the digits pass runs.
  ScriptedData few = ruled_out_by_the_sample(target);
  few.sample_counts.q_max_a = few.sample_counts.q_max_b = 1;
  few.digit_counts.q_max_a = few.digit_counts.q_max_b = 1;
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, pr, DeviceDesc{}, &few, &p), PlanStatus::Ok);
  ASSERT_GE(few.calls.size(), 4u);
  EXPECT_EQ(few.calls[3], "digits");
  // The same digits, but an entry of the sample already needs 7 slices (its bound): Ozaki-I drops there.
  ScriptedData needs7 = ruled_out_by_the_sample(target);
  needs7.sample_counts.q_max_a = needs7.sample_counts.q_max_b = 1;
  needs7.sample_counts.s_max = 7;
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, pr, DeviceDesc{}, &needs7, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method)) << p.report.reason;
  EXPECT_NE(p.report.reason.find("at 7 slices, the fewest the leading block already allows"), std::string::npos)
      << p.report.reason;
  EXPECT_EQ(needs7.calls, (std::vector<std::string>{"capturing", "reserve", "sample"}));
}

TEST(CallPlanner, Fp64ModeRunsNativeUnderGraphCaptureWithoutReadingData) {
  ScriptedData data;
  data.capture = true;
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, square(8192, 8192), DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_TRUE(p.report.fell_back);
  EXPECT_NE(p.report.reason.find("captured"), std::string::npos);
  EXPECT_EQ(data.calls, std::vector<std::string>{"capturing"});
}

TEST(CallPlanner, Fp64ModeGoesNativeBeforeReadingDataWhereNoSchemeCanWin) {
  // 256^3: AUTO prefers native DGEMM for both schemes at any count on the H100-like device.
  ScriptedData data;
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, square(256, 256), DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_NE(p.report.reason.find("AUTO rules"), std::string::npos) << p.report.reason;
  EXPECT_EQ(data.calls, std::vector<std::string>{"capturing"});
}

// 8192^2 x 4096: AUTO admits Ozaki-II up to 16 moduli there (auto_rules.cpp). Where the sample already
// needs 17 (phi 1 does), the full count can only be 17 or more: native DGEMM after the sample, before
// any full pass; where it meets 16 the full pass decides; with a variant set AUTO's rule does not apply.
TEST(CallPlanner, Fp64ModeGoesNativeAfterTheSampleWhereItsFewestCountIsPastAutosRule) {
  const CallProblem pr = square(8192, 4096);
  ASSERT_TRUE(ozgemm::auto_ozaki2(pr.shape, 16, DeviceDesc{}));
  ASSERT_FALSE(ozgemm::auto_ozaki2(pr.shape, 17, DeviceDesc{}));
  const double target = nm::target_constant(pr.shape.k);
  ScriptedData needs17;
  certify_at(&needs17.sample_counts, 17, target);
  certify_at(&needs17.bound_counts, 17, target);
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(ozaki2_fp64(), pr, DeviceDesc{}, &needs17, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_TRUE(p.report.fell_back);
  EXPECT_NE(p.report.reason.find("at 17 moduli, the fewest the leading block already allows"), std::string::npos)
      << p.report.reason;
  EXPECT_NE(p.report.reason.find("AUTO rules"), std::string::npos) << p.report.reason;
  EXPECT_EQ(needs17.calls, (std::vector<std::string>{"capturing", "reserve", "sample"}));

  ScriptedData meets16;  // the sample meets 16, the full pass too: Ozaki-II at 16
  certify_at(&meets16.sample_counts, 16, target);
  certify_at(&meets16.bound_counts, 16, target);
  ASSERT_EQ(ozgemm::plan_call(ozaki2_fp64(), pr, DeviceDesc{}, &meets16, &p), PlanStatus::Ok);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method));
  EXPECT_EQ(std::get<ozgemm::Ozaki2Plan>(p.method).moduli, 16);
  EXPECT_EQ(meets16.calls, (std::vector<std::string>{"capturing", "reserve", "sample", "digits", "bound", "reserve"}));

  ScriptedData full17;  // the sample meets 16, an entry past it needs 17: native after the full pass
  certify_at(&full17.sample_counts, 16, target);
  certify_at(&full17.bound_counts, 17, target);
  ASSERT_EQ(ozgemm::plan_call(ozaki2_fp64(), pr, DeviceDesc{}, &full17, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_NE(p.report.reason.find("at 17 moduli slower than native here"), std::string::npos) << p.report.reason;
  EXPECT_EQ(full17.calls, (std::vector<std::string>{"capturing", "reserve", "sample", "digits", "bound"}));

  CallSettings variant_set = ozaki2_fp64();  // an explicit variant: the data decide, AUTO's rule does not
  variant_set.variant = Variant::PartiallyFused;
  ScriptedData explicit17;
  certify_at(&explicit17.sample_counts, 17, target);
  certify_at(&explicit17.bound_counts, 17, target);
  ASSERT_EQ(ozgemm::plan_call(variant_set, pr, DeviceDesc{}, &explicit17, &p), PlanStatus::Ok);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method));
  EXPECT_EQ(std::get<ozgemm::Ozaki2Plan>(p.method).moduli, 17);
  EXPECT_EQ(explicit17.calls, (std::vector<std::string>{"capturing", "reserve", "sample", "digits", "bound", "reserve"}));
  ASSERT_EQ(explicit17.bounds.size(), 2u);
  EXPECT_TRUE(explicit17.bounds[1].keep_dead);
}

TEST(CallPlanner, AFailedPassIsReportedAsDataFailed) {
  ScriptedData data;
  data.fail_bound = true;
  CallPlan p;
  std::string why;
  EXPECT_EQ(ozgemm::plan_call(ozaki2_fp64(), square(8192, 8192), DeviceDesc{}, &data, &p, &why), PlanStatus::DataFailed);
  EXPECT_NE(why.find("bound pass"), std::string::npos) << why;
}

namespace {
CallProblem complex_square(int64_t n, int64_t k) {
  CallProblem p = square(n, k);
  p.type = ozgemm::ElementType::ComplexF64;
  return p;
}
}  // namespace

TEST(CallPlannerComplex, FixedModeIsTheComplexOzaki2PlanAtTheDefaultCount) {
  CallSettings cs;
  cs.fp64_mode = false;
  cs.scheme = Scheme::Ozaki1;  // no complex Ozaki-I: FIXED mode runs the complex Ozaki-II scheme anyway
  CallPlan p;
  ScriptedData data;
  ASSERT_EQ(ozgemm::plan_call(cs, complex_square(4096, 4096), DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(data.calls.empty()) << "FIXED mode reads no data";
  EXPECT_EQ(p.type, ozgemm::ElementType::ComplexF64);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method));
  const auto& p2 = std::get<ozgemm::Ozaki2Plan>(p.method);
  EXPECT_EQ(p2.type, ozgemm::ElementType::ComplexF64);
  EXPECT_EQ(p2.moduli, ozgemm::kDefaultComplexModuli);
  EXPECT_EQ(p2.planes_per_modulus(), 2);
  EXPECT_EQ(p2.planes(), 2 * ozgemm::kDefaultComplexModuli);
  EXPECT_EQ(p2.variant, Variant::PartiallyFused);  // AUTO on Hopper: the fused products
  EXPECT_EQ(p.workspace_bytes, p2.workspace_bytes);
  EXPECT_EQ(p.report.scheme, Scheme::Ozaki2);
  EXPECT_EQ(p.report.moduli, ozgemm::kDefaultComplexModuli);
  EXPECT_EQ(p.report.variant, Variant::PartiallyFused);
  EXPECT_FALSE(p.report.fell_back);
  EXPECT_NE(p.report.reason.find("complex Ozaki-II (2M): 16 moduli, 32 INT8 products (FIXED)"), std::string::npos)
      << p.report.reason;

  // The handle's count and variant; off Hopper AUTO runs unfused.
  cs.moduli = 12;
  DeviceDesc a100;
  a100.cc_major = 8;
  ASSERT_EQ(ozgemm::plan_call(cs, complex_square(1000, 300), a100, nullptr, &p), PlanStatus::Ok);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method));
  EXPECT_EQ(std::get<ozgemm::Ozaki2Plan>(p.method).moduli, 12);
  EXPECT_EQ(std::get<ozgemm::Ozaki2Plan>(p.method).variant, Variant::Unfused);
  EXPECT_EQ(p.report.moduli, 12);
}

TEST(CallPlannerComplex, VariantNativeRunsNativeZgemmWithoutReadingData) {
  CallSettings cs;
  cs.variant = Variant::Native;
  CallPlan p;
  ScriptedData data;
  for (bool fp64 : {true, false}) {
    cs.fp64_mode = fp64;
    ASSERT_EQ(ozgemm::plan_call(cs, complex_square(8192, 8192), DeviceDesc{}, &data, &p), PlanStatus::Ok);
    EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
    EXPECT_EQ(p.type, ozgemm::ElementType::ComplexF64);
    EXPECT_EQ(p.workspace_bytes, 0u);
    EXPECT_FALSE(p.report.fell_back);
    EXPECT_EQ(p.report.reason, "variant NATIVE: native ZGEMM");
  }
  EXPECT_TRUE(data.calls.empty());
}

// FP64 mode on complex data: the real decision's passes with complex Ozaki-II the only candidate,
// whatever the scheme setting.
TEST(CallPlannerComplex, Fp64ModeTakesTheFewestCertifiedModuli) {
  const CallProblem pr = complex_square(8192, 8192);
  ASSERT_TRUE(ozgemm::auto_ozaki2_complex(pr.shape, 17, DeviceDesc{}));
  const double target = nm::target_constant(pr.shape.k);
  for (Scheme scheme : {Scheme::Auto, Scheme::Ozaki1, Scheme::Ozaki2}) {
    CallSettings cs;  // FP64 mode
    cs.scheme = scheme;
    ScriptedData data;
    certify_at(&data.sample_counts, 17, target);
    certify_at(&data.bound_counts, 17, target);
    data.digit_counts.q_max_a = 12;  // Ozaki-I's lower bound: not read for complex data
    CallPlan p;
    ASSERT_EQ(ozgemm::plan_call(cs, pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
    EXPECT_EQ(p.type, ozgemm::ElementType::ComplexF64);
    ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method)) << p.report.reason;
    const auto& p2 = std::get<ozgemm::Ozaki2Plan>(p.method);
    EXPECT_EQ(p2.type, ozgemm::ElementType::ComplexF64);
    EXPECT_EQ(p2.moduli, 17);
    EXPECT_EQ(p2.planes(), 34);
    EXPECT_EQ(p2.variant, Variant::PartiallyFused);  // AUTO on Hopper: the fused products
    EXPECT_EQ(p.workspace_bytes, p2.workspace_bytes);
    EXPECT_GE(data.reserved, p.workspace_bytes);
    EXPECT_TRUE(p.stats_ready) << "the decision's shifts, flags and norms are reused";
    EXPECT_EQ(p.report.scheme, Scheme::Ozaki2);
    EXPECT_EQ(p.report.variant, Variant::PartiallyFused);
    EXPECT_EQ(p.report.moduli, 17);
    EXPECT_EQ(p.report.slices, 0);
    EXPECT_FALSE(p.report.fell_back);
    EXPECT_DOUBLE_EQ(p.report.bound, target / 2);
    EXPECT_DOUBLE_EQ(p.report.target, target);
    EXPECT_EQ(p.report.reason, "FP64 mode: complex Ozaki-II (2M), 17 moduli (34 INT8 products), bound 2 u|A||B| <= 4");
    // The sample (8192 rows), then the digits (not read back) and the full pass; Ozaki-II's bound only.
    const std::vector<std::string> expected = {"capturing", "reserve", "sample", "digits", "bound", "reserve"};
    EXPECT_EQ(data.calls, expected);
    ASSERT_EQ(data.bounds.size(), 2u);
    for (const BoundRequest& rq : data.bounds) {
      EXPECT_FALSE(rq.ozaki1);
      EXPECT_TRUE(rq.ozaki2);
      EXPECT_DOUBLE_EQ(rq.target, target);
    }
    EXPECT_TRUE(data.bounds[0].sample);
    EXPECT_FALSE(data.bounds[1].sample);
    EXPECT_TRUE(data.bounds[1].keep_dead);
    EXPECT_EQ(data.digits_read_back, std::vector<bool>{false});
    for (ozgemm::ElementType t : data.plan_types) EXPECT_EQ(t, ozgemm::ElementType::ComplexF64);
    // The first reservation covers the decision and every count's complex plan.
    DecisionPlan dp;
    ASSERT_EQ(ozgemm::plan_decision(pr.shape, DeviceDesc{}, &dp, ozgemm::ElementType::ComplexF64), "");
    EXPECT_EQ(dp.type, ozgemm::ElementType::ComplexF64);
    ozgemm::Ozaki2Plan widest;
    ASSERT_EQ(ozgemm::plan_ozaki2(pr.shape, ozgemm::kMaxModuli, Variant::Auto, DeviceDesc{}, &widest,
                                  ozgemm::ElementType::ComplexF64),
              "");
    EXPECT_GE(data.reserved, std::max(dp.workspace_bytes, widest.workspace_bytes));
  }
}

TEST(CallPlannerComplex, Fp64ModeTakesTheSmallestCountMeetingTheTarget) {
  // R2c need not fall with N: the smallest count whose maximum meets the target (14, exactly at it),
  // not the smallest maximum (19).
  const CallProblem pr = complex_square(5000, 4096);  // the sample first (its maxima the same here), then the full pass
  const double target = nm::target_constant(pr.shape.k);
  ScriptedData data;
  for (int w = 0; w < nm::kModuliWindow; ++w) data.bound_counts.oz2_ratio_max[w] = target * 3;
  data.bound_counts.oz2_ratio_max[14 - nm::kMinModuli] = target;  // exactly the target: meets it
  data.bound_counts.oz2_ratio_max[19 - nm::kMinModuli] = 1.5;
  data.sample_counts = data.bound_counts;
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method)) << p.report.reason;
  EXPECT_EQ(p.report.moduli, 14);
  EXPECT_DOUBLE_EQ(p.report.bound, target);
}

TEST(CallPlannerComplex, Fp64ModeWithoutTheSampleOnFewRows) {
  // m below DecisionPolicy::kOz2SampleMinRows: one full pass.
  const CallProblem pr = complex_square(ozgemm::kernels::DecisionPolicy::kOz2SampleMinRows - 16, 8192);
  CallSettings cs;
  cs.variant = Variant::Unfused;  // past AUTO's size rule
  ScriptedData data;
  certify_at(&data.bound_counts, 12, nm::target_constant(pr.shape.k));
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(cs, pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method)) << p.report.reason;
  EXPECT_EQ(std::get<ozgemm::Ozaki2Plan>(p.method).variant, Variant::Unfused);
  EXPECT_EQ(p.report.moduli, 12);
  const std::vector<std::string> expected = {"capturing", "reserve", "digits", "bound", "reserve"};
  EXPECT_EQ(data.calls, expected);
  ASSERT_EQ(data.bounds.size(), 1u);
  EXPECT_FALSE(data.bounds[0].magnitudes_ready);
  EXPECT_FALSE(data.bounds[0].ozaki1);
}

TEST(CallPlannerComplex, Fp64ModeRunsNativeZgemmWhereNoCountMeetsTheBound) {
  const CallProblem pr = complex_square(8192, 8192);
  const double target = nm::target_constant(pr.shape.k);
  // The sample already rules every count out: the full pass is skipped.
  ScriptedData sampled = ruled_out_by_the_sample(target);
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, pr, DeviceDesc{}, &sampled, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_EQ(p.type, ozgemm::ElementType::ComplexF64);
  EXPECT_EQ(p.workspace_bytes, 0u);
  EXPECT_FALSE(p.stats_ready);
  EXPECT_TRUE(p.report.fell_back);
  EXPECT_EQ(p.report.variant, Variant::Native);
  EXPECT_EQ(p.report.moduli, 0);
  EXPECT_EQ(p.report.bound, 0.0);
  EXPECT_DOUBLE_EQ(p.report.target, target);
  EXPECT_EQ(p.report.reason,
            "FP64 mode ran native ZGEMM: no moduli count up to 20 meets the bound (on the leading 512 x 1024 block "
            "already)");
  EXPECT_EQ(sampled.calls, (std::vector<std::string>{"capturing", "reserve", "sample"}));
  // The sample passes, the full pass does not (an entry past the sample's rows).
  ScriptedData full;
  certify_at(&full.sample_counts, 16, target);
  for (double& r : full.bound_counts.oz2_ratio_max) r = std::numeric_limits<double>::infinity();
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, pr, DeviceDesc{}, &full, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_NE(p.report.reason.find("native ZGEMM: no moduli count up to 20"), std::string::npos) << p.report.reason;
  EXPECT_EQ(full.calls, (std::vector<std::string>{"capturing", "reserve", "sample", "digits", "bound"}));
}

TEST(CallPlannerComplex, Fp64ModeRunsNativeZgemmUnderGraphCaptureWithoutReadingData) {
  ScriptedData data;
  data.capture = true;
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, complex_square(8192, 8192), DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_EQ(p.type, ozgemm::ElementType::ComplexF64);
  EXPECT_TRUE(p.report.fell_back);
  EXPECT_EQ(p.report.reason.rfind("FP64 mode ran native ZGEMM: ", 0), 0u) << p.report.reason;
  EXPECT_NE(p.report.reason.find("captured"), std::string::npos) << p.report.reason;
  EXPECT_EQ(data.calls, std::vector<std::string>{"capturing"});
}

TEST(CallPlannerComplex, Fp64ModeGoesNativeBeforeReadingDataWhereAutoRulesItOut) {
  ScriptedData data;
  CallPlan p;
  ASSERT_FALSE(ozgemm::auto_ozaki2_complex(complex_square(1024, 1024).shape, ozgemm::kMinModuli, DeviceDesc{}));
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, complex_square(1024, 1024), DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_TRUE(p.report.fell_back);
  EXPECT_EQ(p.report.reason,
            "FP64 mode ran native ZGEMM: complex Ozaki-II slower than native at this shape (AUTO rules)");
  EXPECT_EQ(data.calls, std::vector<std::string>{"capturing"});
  // A query without data says the same.
  CallPlan q;
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, complex_square(1024, 1024), DeviceDesc{}, nullptr, &q), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(q.method));
  EXPECT_EQ(q.report.reason, p.report.reason);
  EXPECT_EQ(q.workspace_bytes, 0u);
}

TEST(CallPlannerComplex, Fp64ModeRefusesAVariantTheComplexSchemeHasNot) {
  CallSettings cs;
  cs.variant = Variant::FullyFused;
  ScriptedData data;
  CallPlan p;
  std::string why;
  EXPECT_EQ(ozgemm::plan_call(cs, complex_square(8192, 8192), DeviceDesc{}, &data, &p, &why), PlanStatus::NotSupported);
  EXPECT_NE(why.find("fully fused"), std::string::npos) << why;
  EXPECT_EQ(ozgemm::plan_call(cs, complex_square(8192, 8192), DeviceDesc{}, nullptr, &p, &why), PlanStatus::NotSupported);
}

TEST(CallPlannerComplex, AFailedPassIsReportedAsDataFailed) {
  ScriptedData data;
  data.fail_bound = true;
  CallPlan p;
  std::string why;
  EXPECT_EQ(ozgemm::plan_call(CallSettings{}, complex_square(8192, 8192), DeviceDesc{}, &data, &p, &why),
            PlanStatus::DataFailed);
  EXPECT_NE(why.find("sampled bound pass"), std::string::npos) << why;
}

TEST(CallPlannerComplex, QueriesInFp64ModeCoverEveryCountsWorkspace) {
  const CallProblem pr = complex_square(8192, 8192);
  CallPlan q;
  ASSERT_EQ(ozgemm::plan_call(CallSettings{}, pr, DeviceDesc{}, nullptr, &q), PlanStatus::Ok);
  EXPECT_EQ(q.type, ozgemm::ElementType::ComplexF64);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(q.method));
  EXPECT_EQ(std::get<ozgemm::Ozaki2Plan>(q.method).moduli, ozgemm::kDefaultComplexModuli);
  EXPECT_EQ(q.report.scheme, Scheme::Ozaki2);
  EXPECT_NE(q.report.reason.find("FP64 mode without data"), std::string::npos) << q.report.reason;
  DecisionPlan dp;
  ASSERT_EQ(ozgemm::plan_decision(pr.shape, DeviceDesc{}, &dp, ozgemm::ElementType::ComplexF64), "");
  ozgemm::Ozaki2Plan widest;
  ASSERT_EQ(ozgemm::plan_ozaki2(pr.shape, ozgemm::kMaxModuli, Variant::Auto, DeviceDesc{}, &widest,
                                ozgemm::ElementType::ComplexF64),
            "");
  EXPECT_EQ(q.workspace_bytes, std::max(dp.workspace_bytes, widest.workspace_bytes));
  // Complex planes (two a modulus) need more than the real scheme's at the same count.
  ozgemm::Ozaki2Plan real_widest;
  ASSERT_EQ(ozgemm::plan_ozaki2(pr.shape, ozgemm::kMaxModuli, Variant::Auto, DeviceDesc{}, &real_widest), "");
  EXPECT_GT(widest.workspace_bytes, real_widest.workspace_bytes);
}

TEST(CallPlannerComplex, AutoRuleIsTheEstimatesShapeAndDeviceLimits) {
  const DeviceDesc hopper;
  const GemmShape big = complex_square(8192, 8192).shape, small = complex_square(2048, 2048).shape;
  for (int moduli = ozgemm::kMinModuli; moduli <= ozgemm::kMaxModuli; ++moduli) {
    EXPECT_TRUE(ozgemm::auto_ozaki2_complex(big, moduli, hopper)) << moduli;  // >= 2.2x by the estimate
    EXPECT_FALSE(ozgemm::auto_ozaki2_complex(small, moduli, hopper)) << moduli;
  }
  EXPECT_TRUE(ozgemm::auto_ozaki2_complex(complex_square(4096, 4096).shape, 16, hopper));
  EXPECT_FALSE(ozgemm::auto_ozaki2_complex(complex_square(8192, 2048).shape, 16, hopper)) << "small k";
  EXPECT_FALSE(ozgemm::auto_ozaki2_complex(big, ozgemm::kMaxModuli + 1, hopper));
  DeviceDesc no_sm90 = hopper;
  no_sm90.sm90_kernels = false;  // the unfused products lose on Hopper (as for real data)
  EXPECT_FALSE(ozgemm::auto_ozaki2_complex(big, 16, no_sm90));
  DeviceDesc volta;
  volta.cc_major = 7;
  volta.cc_minor = 0;
  EXPECT_FALSE(ozgemm::auto_ozaki2_complex(big, 16, volta)) << "no INT8 tensor cores";
  DeviceDesc a100;
  a100.cc_major = 8;
  EXPECT_TRUE(ozgemm::auto_ozaki2_complex(big, 20, a100)) << "the roofline: 624 TOPS INT8 against 19.5 TFLOPS FP64";
}

TEST(CallPlannerComplex, RealPlansAreTypedReal) {
  CallSettings cs;
  cs.fp64_mode = false;
  cs.scheme = Scheme::Ozaki2;
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(cs, square(512, 512), DeviceDesc{}, nullptr, &p), PlanStatus::Ok);
  EXPECT_EQ(p.type, ozgemm::ElementType::RealF64);
  ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method));
  EXPECT_EQ(std::get<ozgemm::Ozaki2Plan>(p.method).planes(), ozgemm::kDefaultModuli);
}

// A variant set explicitly keeps Ozaki-I a candidate (AUTO's rules, which rule it out on Hopper, do
// not apply). Where Ozaki-II at the most moduli is still expected faster than Ozaki-I at the fewest
// slices the data allow, Ozaki-II's bound runs alone (with its sample) and Ozaki-I's only where no
// moduli count certifies: the same choice as with both reductions, one reduction less.
TEST(CallPlanner, ExplicitVariantEvaluatesOzaki1OnlyWhereOzaki2Fails) {
  const CallProblem pr = square(8192, 8192);
  const double target = nm::target_constant(pr.shape.k);
  CallSettings cs;
  cs.variant = Variant::PartiallyFused;
  DecisionCounts digits;
  digits.q_max_a = digits.q_max_b = 4;  // at least min(4 + 4 - 1, 7) = 7 slices
  const int lower = nm::slices_lower_bound(4, 4);
  ASSERT_GT(ozgemm::expected_tflops(Scheme::Ozaki2, ozgemm::kMaxModuli, DeviceDesc{}),
            ozgemm::expected_tflops(Scheme::Ozaki1, lower, DeviceDesc{}));
  {  // Ozaki-II certifies at 16: Ozaki-I is never evaluated
    ScriptedData data;
    data.digit_counts = digits;
    certify_at(&data.sample_counts, 16, target);
    certify_at(&data.bound_counts, 16, target);
    CallPlan p;
    ASSERT_EQ(ozgemm::plan_call(cs, pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
    ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki2Plan>(p.method)) << p.report.reason;
    EXPECT_EQ(p.report.moduli, 16);
    EXPECT_EQ(p.report.reason.find("Ozaki-I needs"), std::string::npos) << p.report.reason;
    const std::vector<std::string> expected = {"capturing", "reserve", "sample", "digits", "bound", "reserve"};
    EXPECT_EQ(data.calls, expected);
    EXPECT_EQ(data.digits_read_back, std::vector<bool>{true});  // Ozaki-I a candidate: its lower bound
    ASSERT_EQ(data.bounds.size(), 2u);
    EXPECT_TRUE(data.bounds[0].ozaki1) << "the sample evaluates both candidates";
    EXPECT_EQ(data.bounds[0].s_from, 1);
    EXPECT_TRUE(data.bounds[0].ozaki2);
    EXPECT_FALSE(data.bounds[1].ozaki1);
  }
  {  // wide-range data: an entry of the sample needs more than kMaxSlices, every moduli count fails
     // there: native DGEMM after the sample, no full pass (issue 33: the explicit variant ran 0.79x)
    ScriptedData data;
    data.digit_counts = digits;
    data.sample_counts.q_max_a = data.sample_counts.q_max_b = 4;
    data.sample_counts.s_max = ozgemm::kMaxSlices + 1;
    fail_every_count(&data.sample_counts, target);
    data.bound_counts.s_max = 8;  // what a full pass would say: must not be asked
    for (double& r : data.bound_counts.ratio_max) r = target / 2;
    CallPlan p;
    ASSERT_EQ(ozgemm::plan_call(cs, pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
    EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method)) << p.report.reason;
    EXPECT_EQ(data.calls, (std::vector<std::string>{"capturing", "reserve", "sample"}));
    EXPECT_NE(p.report.reason.find("no slice count up to " + std::to_string(ozgemm::kMaxSlices) +
                                   " meets the bound (on the leading"),
              std::string::npos)
        << p.report.reason;
  }
  {  // Ozaki-I alone (scheme OZAKI1): the sample evaluates Ozaki-I only
    CallSettings one = cs;
    one.scheme = Scheme::Ozaki1;
    ScriptedData data;
    data.digit_counts = digits;
    data.sample_counts.s_max = ozgemm::kMaxSlices + 1;
    CallPlan p;
    ASSERT_EQ(ozgemm::plan_call(one, pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
    EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method)) << p.report.reason;
    ASSERT_EQ(data.bounds.size(), 1u);
    EXPECT_TRUE(data.bounds[0].sample);
    EXPECT_TRUE(data.bounds[0].ozaki1);
    EXPECT_FALSE(data.bounds[0].ozaki2);
  }
  {  // an entry of the sample needs 9 slices, Ozaki-II fails there: Ozaki-I's full bound decides
    ScriptedData data;
    data.digit_counts = digits;
    data.sample_counts.s_max = 9;
    fail_every_count(&data.sample_counts, target);
    data.bound_counts.s_max = 9;
    for (double& r : data.bound_counts.ratio_max) r = target / 2;
    CallPlan p;
    ASSERT_EQ(ozgemm::plan_call(cs, pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
    ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki1Plan>(p.method)) << p.report.reason;
    EXPECT_EQ(p.report.slices, 9);
    ASSERT_EQ(data.bounds.size(), 2u);
    EXPECT_TRUE(data.bounds[1].ozaki1);
  }
  {  // no moduli count certifies (the sample already says so): Ozaki-I's bound, then its plan
    ScriptedData data;
    data.digit_counts = digits;
    for (double& r : data.sample_counts.oz2_ratio_max) r = target * 2;
    data.bound_counts.s_max = 8;
    for (double& r : data.bound_counts.ratio_max) r = target / 2;
    for (double& r : data.bound_counts.oz2_ratio_max) r = target * 2;
    CallPlan p;
    ASSERT_EQ(ozgemm::plan_call(cs, pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
    ASSERT_TRUE(std::holds_alternative<ozgemm::Ozaki1Plan>(p.method)) << p.report.reason;
    EXPECT_EQ(p.report.slices, 8);
    const std::vector<std::string> expected = {"capturing", "reserve", "sample", "digits", "bound", "reserve"};
    EXPECT_EQ(data.calls, expected);
    ASSERT_EQ(data.bounds.size(), 2u);
    EXPECT_TRUE(data.bounds[1].ozaki1);
    EXPECT_FALSE(data.bounds[1].ozaki2);
    EXPECT_FALSE(data.bounds[1].magnitudes_ready);
    EXPECT_EQ(data.bounds[1].s_from, lower);
  }
}

// Native DGEMM needs no workspace: where the decision's workspace, or the chosen emulation's, cannot be
// had (allocation failed, the caller's workspace too small), FP64 mode runs native DGEMM and says why.
TEST(CallPlanner, Fp64ModeRunsNativeWhereNoWorkspaceFits) {
  const CallProblem pr = square(8192, 8192);
  const double target = nm::target_constant(pr.shape.k);
  for (int fit : {0, 1}) {  // 0: not even the decision's; 1: the decision's, not the emulation's
    ScriptedData data;
    data.reserves_that_fit = fit;
    certify_at(&data.sample_counts, 16, target);
    certify_at(&data.bound_counts, 16, target);
    CallPlan p;
    ASSERT_EQ(ozgemm::plan_call(ozaki2_fp64(), pr, DeviceDesc{}, &data, &p), PlanStatus::Ok) << "fit " << fit;
    EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method)) << p.report.reason;
    EXPECT_TRUE(p.report.fell_back);
    EXPECT_EQ(p.workspace_bytes, 0u);
    EXPECT_NE(p.report.reason.find("no room"), std::string::npos) << p.report.reason;
  }
}
