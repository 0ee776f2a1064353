// CPU tests of plan_call (src/plan/planner.hpp), the one planning entry: FIXED mode's and the
// queries' plans, and FP64 mode's decision driven by scripted data (DecisionData): which passes it
// asks for, in which order, and the plan and report it returns for given counts. The device passes
// themselves are the GPU suites' (tests/gpu/test_gpu_fp64.cpp).
#include <gtest/gtest.h>

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
  bool capture = false, fail_bound = false;
  std::vector<std::string> calls;
  std::vector<BoundRequest> bounds;
  size_t reserved = 0;

  bool capturing(bool* ok) override {
    calls.push_back("capturing");
    *ok = true;
    return capture;
  }
  bool reserve(size_t bytes, bool* no_memory, bool* moved) override {
    calls.push_back("reserve");
    *no_memory = *moved = false;
    reserved = std::max(reserved, bytes);
    return true;
  }
  bool digits(const DecisionPlan&, DecisionCounts* c) override {
    calls.push_back("digits");
    *c = digit_counts;
    return true;
  }
  bool bound(const DecisionPlan&, const BoundRequest& rq, DecisionCounts* c) override {
    calls.push_back(rq.sample_rows > 0 ? "sample" : "bound");
    bounds.push_back(rq);
    if (fail_bound) return false;
    const DecisionCounts& src = rq.sample_rows > 0 ? sample_counts : bound_counts;
    for (int w = 0; w < nm::kModuliWindow; ++w) c->oz2_ratio_max[w] = src.oz2_ratio_max[w];
    for (int w = 0; w < nm::kSliceWindow; ++w) c->ratio_max[w] = src.ratio_max[w];
    c->s_max = src.s_max;
    return true;
  }
};

// Ozaki-II's maxima that first meet `target` at `moduli` (the larger counts meet it too).
void certify_at(DecisionCounts* c, int moduli, double target) {
  for (int w = 0; w < nm::kModuliWindow; ++w) c->oz2_ratio_max[w] = nm::kMinModuli + w >= moduli ? target / 2 : target * 8;
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
  // Ozaki-II alone on 8192 rows: the sample first, then (some count passes there) the full pass,
  // which reuses the sample's magnitudes.
  const std::vector<std::string> expected = {"capturing", "reserve", "digits", "sample", "bound", "reserve"};
  EXPECT_EQ(data.calls, expected);
  ASSERT_EQ(data.bounds.size(), 2u);
  EXPECT_EQ(data.bounds[0].sample_rows, ozgemm::kernels::DecisionPolicy::kOz2SampleRows);
  EXPECT_FALSE(data.bounds[0].magnitudes_ready);
  EXPECT_EQ(data.bounds[1].sample_rows, 0);
  EXPECT_TRUE(data.bounds[1].magnitudes_ready);
  EXPECT_TRUE(data.bounds[1].ozaki2);
  EXPECT_FALSE(data.bounds[1].ozaki1);
}

TEST(CallPlanner, Fp64ModeSkipsTheFullPassWhenTheSampleRulesEveryCountOut) {
  const CallProblem pr = square(8192, 8192);
  const double target = nm::target_constant(pr.shape.k);
  ScriptedData data;
  for (double& r : data.sample_counts.oz2_ratio_max) r = target * 2;
  certify_at(&data.bound_counts, 16, target);  // never read: the full pass must not run
  CallPlan p;
  ASSERT_EQ(ozgemm::plan_call(ozaki2_fp64(), pr, DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_TRUE(p.report.fell_back);
  EXPECT_NE(p.report.reason.find("no moduli count"), std::string::npos) << p.report.reason;
  const std::vector<std::string> expected = {"capturing", "reserve", "digits", "sample"};
  EXPECT_EQ(data.calls, expected);
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

TEST(CallPlannerComplex, Fp64ModeAndVariantNativeRunNativeZgemmWithoutReadingData) {
  CallSettings cs;  // FP64 mode
  CallPlan p;
  ScriptedData data;
  ASSERT_EQ(ozgemm::plan_call(cs, complex_square(8192, 8192), DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(data.calls.empty());
  EXPECT_EQ(p.type, ozgemm::ElementType::ComplexF64);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_EQ(p.workspace_bytes, 0u);
  EXPECT_EQ(p.report.variant, Variant::Native);
  EXPECT_EQ(p.report.moduli, 0);
  EXPECT_TRUE(p.report.fell_back);
  EXPECT_EQ(p.report.target, nm::target_constant(8192));
  EXPECT_EQ(p.report.reason, "FP64 mode: complex decision not implemented; native ZGEMM");

  cs.fp64_mode = false;
  cs.variant = Variant::Native;
  ASSERT_EQ(ozgemm::plan_call(cs, complex_square(64, 64), DeviceDesc{}, &data, &p), PlanStatus::Ok);
  EXPECT_TRUE(std::holds_alternative<ozgemm::NativePlan>(p.method));
  EXPECT_EQ(p.type, ozgemm::ElementType::ComplexF64);
  EXPECT_FALSE(p.report.fell_back);
  EXPECT_EQ(p.report.reason, "variant NATIVE: native ZGEMM");
  EXPECT_TRUE(data.calls.empty());
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
