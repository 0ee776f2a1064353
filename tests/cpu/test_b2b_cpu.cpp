// CPU tests of the back-to-back GEMM: the planner's limits and reasons (src/plan/b2b_planner.cpp),
// the family choice and workspace layout, the int8 requantisation, the fp16 conversions and the host
// reference against direct computations. No CUDA needed.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "b2b_test_problems.hpp"
#include "ozgemm/reference/b2b.hpp"
#include "plan/b2b_planner.hpp"

using namespace ozgemm::b2b;
using ozgemm::DeviceDesc;
using ozgemm::KernelFamily;
using oztest::batched_shape;
using oztest::grouped_shape;
using oztest::shape;

namespace {

Options fused(Residency r, KernelFamily f = KernelFamily::Portable) { return Options{false, r, f}; }
Options unfused() { return Options{true, Residency::Register, KernelFamily::Auto}; }

// The planner's reason for a fused run (empty: it plans), on an H100 with every kernel built.
std::string why(const Problem& p, Residency r, KernelFamily f = KernelFamily::Portable, const DeviceDesc& dev = DeviceDesc{}) {
  Plan plan;
  Refusal refusal;
  return make_plan(p, fused(r, f), dev, &plan, &refusal);
}

Plan plan_of(const Problem& p, const Options& o, const DeviceDesc& dev = DeviceDesc{}) {
  Plan plan;
  Refusal refusal;
  const std::string reason = make_plan(p, o, dev, &plan, &refusal);
  EXPECT_EQ(reason, "");
  return plan;
}

}  // namespace

TEST(B2bLimits, CanImplementExplainsEveryLimit) {
  EXPECT_EQ(why(shape(81920, 576, 64, 128), Residency::Register), "");
  EXPECT_EQ(why(shape(81920, 576, 64, 256), Residency::Shared), "");
  EXPECT_EQ(why(shape(1, 32, 256, 256), Residency::Shared), "");
  EXPECT_EQ(why(shape(0, 32, 64, 64), Residency::Register), "");  // empty problem is fine
  EXPECT_NE(why(shape(100, 576, 96, 128), Residency::Register).find("n0"), std::string::npos);
  EXPECT_NE(why(shape(100, 576, 64, 512), Residency::Shared).find("n1"), std::string::npos);
  EXPECT_NE(why(shape(100, 500, 64, 64), Residency::Register).find("k0"), std::string::npos);
  EXPECT_NE(why(shape(100, 0, 64, 64), Residency::Register).find("k0"), std::string::npos);
  EXPECT_NE(why(shape(-1, 32, 64, 64), Residency::Register), "");
  const std::string rf = why(shape(100, 64, 256, 256), Residency::Register);
  EXPECT_NE(rf.find("shared-memory residency"), std::string::npos) << rf;
  EXPECT_EQ(why(shape(100, 64, 128, 256), Residency::Register), "");  // 32 + 128 = 160
  Problem b = shape(100, 64, 64, 64);
  b.batch = 0;
  EXPECT_NE(why(b, Residency::Shared), "");
  b.batch = 2;
  b.group_m = {3, 4};
  EXPECT_NE(why(b, Residency::Shared).find("grouped"), std::string::npos);
  b.batch = 1;
  b.group_m = {3, -4};
  EXPECT_NE(why(b, Residency::Shared), "");
  EXPECT_EQ(plan_of(shape(100, 64, 128, 64), fused(Residency::Register)).workspace_bytes, 0u);
  EXPECT_GE(plan_of(shape(100, 64, 128, 64), unfused()).workspace_bytes, size_t(100) * 128 * 2 + 128 * 2);  // D0 + fp16 bias
}

TEST(B2bLimits, Int8Limits) {
  Problem p = shape(81920, 576, 64, 128);
  p.type = DataType::S8;
  EXPECT_EQ(why(p, Residency::Register), "");
  p.k0 = 32;  // 32 bytes: not a whole 64-byte chunk of int8
  EXPECT_NE(why(p, Residency::Register).find("multiple of 64"), std::string::npos);
  p.k0 = 131072;
  EXPECT_NE(why(p, Residency::Register).find("131071"), std::string::npos);
  p = shape(100, 64, 256, 256);
  p.type = DataType::S8;
  EXPECT_EQ(why(p, Residency::Register), "") << "int8 packs D0 twice as densely: 32 + 128 = 160";
  p.batch = 2;
  p.stride_a0 = 100 * 64 + 8;  // 8 bytes: misaligned for 16-byte copies
  EXPECT_NE(why(p, Residency::Shared).find("16 bytes"), std::string::npos);
  p.type = DataType::F16;      // 16 bytes as fp16
  EXPECT_EQ(why(p, Residency::Shared), "");
  Problem w = shape(100, 64, 128, 256);
  w.type = DataType::S8;
  EXPECT_GE(plan_of(w, unfused()).workspace_bytes, size_t(100) * 128 + size_t(100) * 256 * 4);  // D0 + int32 GEMM output
}

TEST(B2bInt8, SaturateRoundsToNearestEvenAndClamps) {
  EXPECT_EQ(saturate_s8(2.5f), 2);
  EXPECT_EQ(saturate_s8(3.5f), 4);
  EXPECT_EQ(saturate_s8(-2.5f), -2);
  EXPECT_EQ(saturate_s8(-0.4f), 0);
  EXPECT_EQ(saturate_s8(126.5f), 126);
  EXPECT_EQ(saturate_s8(127.5f), 127);  // rounds to 128, saturates
  EXPECT_EQ(saturate_s8(1e9f), 127);
  EXPECT_EQ(saturate_s8(-128.5f), -128);
  EXPECT_EQ(saturate_s8(-1e9f), -128);
}

TEST(B2bInt8, ReferenceMatchesADirectComputation) {
  Problem p = shape(7, 128, 64, 128);
  p.type = DataType::S8;
  p.alpha0 = 1.0f / 256;
  p.alpha1 = 1.0f / 64;
  p.beta1 = 0.5f;
  p.relu1 = false;
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> d(-128, 127);
  auto fill = [&](std::vector<int8_t>& v, size_t n) {
    v.resize(n);
    for (auto& x : v) x = int8_t(d(rng));
  };
  std::vector<int8_t> a0, b0, b1, c1, d1(7 * 128);
  fill(a0, 7 * 128);
  fill(b0, 64 * 128);
  fill(b1, 128 * 64);
  fill(c1, 7 * 128);
  std::vector<float> bias(64);
  for (auto& x : bias) x = float(d(rng)) / 4;
  reference_s8(p, a0.data(), b0.data(), bias.data(), b1.data(), c1.data(), d1.data());
  auto sat = [](double v) { return std::min(127.0, std::max(-128.0, std::nearbyint(v))); };
  int saturated = 0;
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 128; ++j) {
      long acc1 = 0;
      for (int l = 0; l < 64; ++l) {
        long acc0 = 0;
        for (int t = 0; t < 128; ++t) acc0 += long(a0[i * 128 + t]) * b0[l * 128 + t];
        // acc0 / 256 + bias is exact in float and double (|acc0| < 2^21, bias in quarters)
        acc1 += long(sat(std::max(acc0 / 256.0 + bias[l], 0.0))) * b1[j * 64 + l];
      }
      const double v = acc1 / 64.0 + 0.5 * c1[i * 128 + j];  // exact: |acc1| < 2^21
      ASSERT_EQ(int(d1[i * 128 + j]), int(sat(v))) << i << "," << j;
      saturated += std::fabs(v) > 127.5;
    }
  EXPECT_GT(saturated, 0) << "the check covers saturation";
}

TEST(B2bHalf, ConversionsRoundToNearestEven) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 1234.0f})
    EXPECT_EQ(half_to_float(float_to_half(f)), f) << f;
  EXPECT_EQ(half_to_float(float_to_half(1234.5f)), 1234.0f);   // tie to even (spacing 1 in [1024, 2048))
  EXPECT_EQ(half_to_float(float_to_half(2049.0f)), 2048.0f);   // tie to even
  EXPECT_EQ(half_to_float(float_to_half(2051.0f)), 2052.0f);   // tie to even
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(70000.0f))));
  EXPECT_EQ(half_to_float(float_to_half(2.9802322e-08f)), 0.0f);  // half of the smallest subnormal: to even (0)
  for (uint32_t h = 0; h < 0x7c00; ++h) EXPECT_EQ(float_to_half(half_to_float(uint16_t(h))), h);
}

TEST(B2bReference, MatchesADirectComputationOnIntegers) {
  Problem p = shape(5, 32, 64, 64);
  p.alpha0 = 0.5f;
  p.beta1 = 2.0f;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> d(-2, 2);
  auto fill = [&](std::vector<uint16_t>& v, size_t n) {
    v.resize(n);
    for (auto& x : v) x = float_to_half(float(d(rng)));
  };
  std::vector<uint16_t> a0, b0, b1, c1, d1(5 * 64);
  fill(a0, 5 * 32);
  fill(b0, 64 * 32);
  fill(b1, 64 * 64);
  fill(c1, 5 * 64);
  std::vector<float> bias(64);
  for (auto& x : bias) x = float(d(rng));
  reference(p, a0.data(), b0.data(), bias.data(), b1.data(), c1.data(), d1.data());
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 64; ++j) {
      double acc1 = 0;
      for (int l = 0; l < 64; ++l) {
        double acc0 = 0;
        for (int t = 0; t < 32; ++t) acc0 += half_to_float(a0[i * 32 + t]) * half_to_float(b0[l * 32 + t]);
        const double v0 = std::max(0.5 * acc0 + bias[l], 0.0);  // exact: small integers and halves
        acc1 += v0 * half_to_float(b1[j * 64 + l]);
      }
      const double v1 = std::max(acc1 + 2.0 * half_to_float(c1[i * 64 + j]), 0.0);
      ASSERT_EQ(half_to_float(d1[i * 64 + j]), float(v1)) << i << "," << j;
    }
}

TEST(B2bLimits, HopperKernelLimits) {
  EXPECT_EQ(why(shape(81920, 576, 64, 128), Residency::Register, KernelFamily::Sm90), "");
  EXPECT_EQ(why(shape(100, 64, 128, 256), Residency::Register, KernelFamily::Sm90), "");
  EXPECT_NE(why(shape(100, 64, 256, 64), Residency::Register, KernelFamily::Sm90).find("n0"),
            std::string::npos);
  EXPECT_NE(why(shape(100, 96, 64, 64), Residency::Register, KernelFamily::Sm90).find("k0"),
            std::string::npos);
  EXPECT_NE(why(shape(100, 64, 64, 64), Residency::Shared, KernelFamily::Sm90), "");
  Problem s8 = shape(100, 64, 64, 64);
  s8.type = DataType::S8;
  EXPECT_NE(why(s8, Residency::Register, KernelFamily::Sm90).find("fp16"), std::string::npos);
}

TEST(B2bPlan, FamilyChoiceAndRefusals) {
  DeviceDesc h100;  // compute capability 9.0, every kernel built
  // Auto takes the Hopper kernel where it applies, the portable one elsewhere.
  EXPECT_EQ(plan_of(shape(81920, 576, 64, 128), fused(Residency::Register, KernelFamily::Auto), h100).family,
            KernelFamily::Sm90);
  EXPECT_EQ(plan_of(shape(100, 64, 256, 64), fused(Residency::Register, KernelFamily::Auto), h100).family,
            KernelFamily::Portable);  // n0 = 256: not the Hopper kernel's
  EXPECT_EQ(plan_of(shape(100, 64, 64, 64), fused(Residency::Shared, KernelFamily::Auto), h100).family,
            KernelFamily::Portable);
  DeviceDesc ada = h100;
  ada.cc_major = 8;
  ada.cc_minor = 9;
  EXPECT_EQ(plan_of(shape(81920, 576, 64, 128), fused(Residency::Register, KernelFamily::Auto), ada).family,
            KernelFamily::Portable);
  // The device's fault is told apart from the problem's (NOT_SUPPORTED vs INVALID_VALUE).
  Plan plan;
  Refusal refusal;
  EXPECT_NE(make_plan(shape(100, 64, 64, 64), fused(Residency::Register, KernelFamily::Sm90), ada, &plan, &refusal), "");
  EXPECT_EQ(refusal, Refusal::Device);
  DeviceDesc no_kernels = h100;
  no_kernels.portable_kernels = no_kernels.sm90_kernels = false;
  EXPECT_NE(make_plan(shape(100, 64, 64, 64), fused(Residency::Register), no_kernels, &plan, &refusal), "");
  EXPECT_EQ(refusal, Refusal::Device);
  EXPECT_NE(make_plan(shape(100, 64, 96, 64), fused(Residency::Register), h100, &plan, &refusal), "");
  EXPECT_EQ(refusal, Refusal::Problem);
  EXPECT_EQ(make_plan(shape(100, 64, 64, 64), fused(Residency::Register), h100, &plan, &refusal), "");
  EXPECT_EQ(refusal, Refusal::None);
}

TEST(B2bPlan, GridAndGroupTable) {
  const Plan p = plan_of(shape(1000, 64, 64, 64), fused(Residency::Register));
  EXPECT_EQ(p.grid_tiles, (1000 + 127) / 128);
  EXPECT_EQ(p.groups, 0);
  const Problem g = grouped_shape(64, 128, 64);  // groups 100, 1, 0, 257, 64
  const Plan pg = plan_of(g, fused(Residency::Shared));
  EXPECT_EQ(pg.groups, 5);
  EXPECT_EQ(plan_of(g, unfused()).groups, 5);  // every path knows the problem is grouped
  EXPECT_EQ(pg.grid_tiles, 1 + 1 + 0 + 3 + 1);
  EXPECT_GE(pg.workspace_bytes, pg.off_table + (3 * 5 + 1) * sizeof(int64_t));  // the device table lives in the workspace
  std::vector<int64_t> table(3 * 5 + 1);
  fill_group_table(g, table.data());
  EXPECT_EQ(table, (std::vector<int64_t>{0, 100, 101, 101, 358, 100, 1, 0, 257, 64, 0, 1, 2, 2, 5, 6}));
}

