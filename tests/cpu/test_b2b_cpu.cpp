// CPU tests of the back-to-back GEMM: the planner's limits and reasons (src/plan/b2b_planner.cpp),
// the family choice and workspace layout, the int8 requantisation, the fp16 conversions and the host
// reference against direct computations. No CUDA needed.
#include <gtest/gtest.h>

#include <algorithm>
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
  // GEMM 1 runs in column chunks: every n0 x n1 is register-resident, fp16 256 x 256 included.
  EXPECT_EQ(why(shape(100, 64, 256, 256), Residency::Register), "");
  EXPECT_EQ(why(shape(100, 64, 128, 256), Residency::Register), "");
  // n0 past 256: multiples of kB2bN0Chunk (GEMM 0 in column chunks), up to kB2bMaxN0, both families.
  for (int64_t n0 : {384, 512, 1024, 16384}) {
    EXPECT_EQ(why(shape(100, 64, n0, 128), Residency::Register), "") << n0;
    EXPECT_EQ(why(shape(100, 64, n0, 256), Residency::Shared), "") << n0;
    EXPECT_EQ(why(shape(100, 64, n0, 256), Residency::Register, KernelFamily::Sm90), "") << n0;
  }
  for (int64_t n0 : {320, 448, 16384 + 128}) {
    EXPECT_NE(why(shape(100, 64, n0, 128), Residency::Register).find("n0"), std::string::npos) << n0;
    EXPECT_NE(why(shape(100, 64, n0, 128), Residency::Register, KernelFamily::Sm90).find("n0"), std::string::npos) << n0;
  }
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
  EXPECT_EQ(why(shape(100, 64, 256, 256), Residency::Register, KernelFamily::Sm90), "");
  EXPECT_EQ(why(shape(100, 64, 384, 64), Residency::Register, KernelFamily::Sm90), "");  // chunked
  EXPECT_NE(why(shape(100, 64, 192, 64), Residency::Register, KernelFamily::Sm90).find("n0"),
            std::string::npos);
  EXPECT_NE(why(shape(100, 96, 64, 64), Residency::Register, KernelFamily::Sm90).find("k0"),
            std::string::npos);
  EXPECT_NE(why(shape(100, 64, 64, 64), Residency::Shared, KernelFamily::Sm90), "");
  // int8 too, with the same n0 and k0 limits (k0 in elements).
  Problem s8 = shape(100, 64, 64, 64);
  s8.type = DataType::S8;
  EXPECT_EQ(why(s8, Residency::Register, KernelFamily::Sm90), "");
  s8.k0 = 96;
  EXPECT_NE(why(s8, Residency::Register, KernelFamily::Sm90).find("k0"), std::string::npos);
  s8.k0 = 128;
  s8.n0 = 256;
  EXPECT_EQ(why(s8, Residency::Register, KernelFamily::Sm90), "");
  s8.n0 = 512;  // chunked
  EXPECT_EQ(why(s8, Residency::Register, KernelFamily::Sm90), "");
  s8.n0 = 96;
  EXPECT_NE(why(s8, Residency::Register, KernelFamily::Sm90).find("n0"), std::string::npos);
}

TEST(B2bPlan, FamilyChoiceAndRefusals) {
  DeviceDesc h100;  // compute capability 9.0, every kernel built
  // Auto takes the Hopper kernel where it applies, the portable one elsewhere.
  EXPECT_EQ(plan_of(shape(81920, 576, 64, 128), fused(Residency::Register, KernelFamily::Auto), h100).family,
            KernelFamily::Sm90);
  EXPECT_EQ(plan_of(shape(100, 64, 256, 64), fused(Residency::Register, KernelFamily::Auto), h100).family,
            KernelFamily::Sm90);
  Problem s8_chunked = shape(100, 64, 384, 64);
  s8_chunked.type = DataType::S8;
  EXPECT_EQ(plan_of(s8_chunked, fused(Residency::Register, KernelFamily::Auto), h100).family,
            KernelFamily::Sm90);  // n0 past 256: the chunked Hopper kernel
  EXPECT_EQ(plan_of(shape(100, 64, 384, 64), fused(Residency::Register, KernelFamily::Sm90), h100).persistent_ctas, 0);
  Problem s8 = shape(81920, 576, 64, 128);
  s8.type = DataType::S8;
  EXPECT_EQ(plan_of(s8, fused(Residency::Register, KernelFamily::Auto), h100).family, KernelFamily::Sm90);
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

// AUTO's choice between the fused kernels and the unfused pair (b2b_planner.cpp, auto_unfused): the
// unfused pair at every shape where it measured faster on the H100, the fused kernel at the measured
// neighbours where fusion won; a named family or Options::unfused is never overridden.
TEST(B2bPlan, AutoRunsTheUnfusedPairWhereItMeasuredFaster) {
  DeviceDesc h100;  // compute capability 9.0, every kernel built
  const Options automatic = fused(Residency::Register, KernelFamily::Auto);
  EXPECT_EQ(automatic.family, Options{}.family);  // the default options are AUTO
  EXPECT_EQ(automatic.unfused, Options{}.unfused);
  const auto with_type = [](Problem p, DataType t) {
    p.type = t;
    return p;
  };
  const Problem slower[] = {
      shape(81920, 576, 384, 128),                                       // fp16 0.74x
      shape(81920, 576, 512, 128),                                       // fp16 0.69x
      shape(65536, 1024, 512, 256),                                      // fp16 0.30x
      shape(65536, 1024, 256, 256),                                      // fp16 0.96x
      conv_pair(DataType::F16, Conv{32, 28, 28, 128, 3}, 512, 256),      // 0.80x
      conv_pair(DataType::S8, Conv{32, 28, 28, 128, 3}, 512, 256),       // 0.62x
      with_type(shape(65536, 1024, 512, 256), DataType::S8),             // 0.77x
      batched_shape(150, 64, 384, 64),                                   // the fp16 rule, batched
  };
  for (const Problem& p : slower) {
    const std::string what = std::string(type_name(p.type)) + (p.conv.enabled() ? " conv " : " GEMM ") +
                             std::to_string(p.m) + " x " + std::to_string(p.k0) + " -> " + std::to_string(p.n0) +
                             " -> " + std::to_string(p.n1);
    EXPECT_TRUE(auto_unfused(p)) << what;
    const Plan a = plan_of(p, automatic, h100);
    EXPECT_TRUE(a.unfused) << what;
    EXPECT_FALSE(a.options.unfused) << what;  // options as asked
    EXPECT_EQ(a.workspace_bytes, plan_of(p, unfused(), h100).workspace_bytes) << what;  // the pair's workspace
    const Plan named = plan_of(p, fused(Residency::Register, KernelFamily::Sm90), h100);
    EXPECT_FALSE(named.unfused) << what;  // a named family runs the fused kernel
    EXPECT_EQ(named.family, KernelFamily::Sm90) << what;
    EXPECT_FALSE(plan_of(p, fused(Residency::Shared, KernelFamily::Portable), h100).unfused) << what;
  }
  const Problem faster[] = {
      shape(81920, 576, 64, 128),                                        // the example: fp16 1.3x
      shape(81920, 576, 256, 128),                                       // fp16 1.09x
      shape(81920, 576, 256, 64),                                        // fp16 1.18x
      shape(65536, 1024, 256, 128),                                      // fp16 1.04x
      with_type(shape(81920, 576, 384, 128), DataType::S8),              // 2.01x
      with_type(shape(81920, 576, 512, 128), DataType::S8),              // 1.81x
      with_type(shape(65536, 1024, 256, 256), DataType::S8),             // 2.49x
      conv_pair(DataType::F16, Conv{32, 56, 56, 64, 3}, 512, 128),       // 1.69x
      conv_pair(DataType::S8, Conv{32, 56, 56, 64, 3}, 512, 128),        // 1.29x
      conv_pair(DataType::F16, Conv{32, 56, 56, 64, 3}, 256, 256),       // 1.92x
  };
  for (const Problem& p : faster) {
    const std::string what = std::string(type_name(p.type)) + (p.conv.enabled() ? " conv " : " GEMM ") +
                             std::to_string(p.k0) + " -> " + std::to_string(p.n0) + " -> " + std::to_string(p.n1);
    EXPECT_FALSE(auto_unfused(p)) << what;
    const Plan a = plan_of(p, automatic, h100);
    EXPECT_FALSE(a.unfused) << what;
    EXPECT_EQ(a.family, KernelFamily::Sm90) << what;
  }
  EXPECT_TRUE(plan_of(shape(81920, 576, 64, 128), unfused(), h100).unfused);  // asked for
  // AUTO refuses only what the fused kernels refuse: n0 = 320 is no chunk multiple.
  Plan plan;
  Refusal refusal;
  EXPECT_NE(make_plan(shape(100, 64, 320, 256), automatic, h100, &plan, &refusal), "");
  EXPECT_EQ(refusal, Refusal::Problem);
  // Where the unfused pair cannot run (a convolution's conv 0 needs the portable kernels), AUTO
  // keeps the fused kernel it can run.
  DeviceDesc sm90_only = h100;
  sm90_only.portable_kernels = false;
  const Plan kept = plan_of(conv_pair(DataType::F16, Conv{32, 28, 28, 128, 3}, 512, 256), automatic, sm90_only);
  EXPECT_FALSE(kept.unfused);
  EXPECT_EQ(kept.family, KernelFamily::Sm90);
}

// b2b::run's operand rule (the API asks the planner): 16-byte starts; C1 only when beta1 != 0.
TEST(B2bPlan, OperandsAligned) {
  alignas(16) static char buf[64];
  Arguments a;
  a.a0 = a.b0 = a.b1 = buf;
  a.d1 = buf + 16;
  Problem p = shape(1, 32, 64, 64);
  EXPECT_TRUE(operands_aligned(p, a));
  a.c1 = buf + 8;
  EXPECT_TRUE(operands_aligned(p, a));  // beta1 = 0: C1 is not read
  p.beta1 = 1.0f;
  EXPECT_FALSE(operands_aligned(p, a));
  a.c1 = buf + 32;
  EXPECT_TRUE(operands_aligned(p, a));
  a.b0 = buf + 4;
  EXPECT_FALSE(operands_aligned(p, a));
}

// The Hopper kernel's schedule (kernels/b2b/policy.hpp): warp-specialised persistent, one CTA an SM,
// for GEMM pairs of at least two tiles an SM, fp16 with n0 <= 128 or int8 with n0 = 64; one CTA a
// tile otherwise (n0 = 256 included).
TEST(B2bPlan, HopperScheduleFollowsThePolicy) {
  DeviceDesc h100;  // compute capability 9.0, every kernel built
  h100.sm_count = 132;
  const Options sm90 = fused(Residency::Register, KernelFamily::Sm90);
  const int64_t two_a_sm = 2 * 132 * 128;
  EXPECT_EQ(plan_of(shape(two_a_sm, 576, 64, 256), sm90, h100).persistent_ctas, 132);
  EXPECT_EQ(plan_of(shape(two_a_sm - 128, 576, 64, 256), sm90, h100).persistent_ctas, 0);  // 263 tiles
  EXPECT_EQ(plan_of(shape(81920, 576, 128, 128), sm90, h100).persistent_ctas, 132);
  Problem b = shape(100 * 128, 64, 64, 128);  // 100 tiles a batch, 3 batches: 300 >= 264
  b.batch = 3;
  EXPECT_EQ(plan_of(b, sm90, h100).persistent_ctas, 132);
  Problem s8 = shape(81920, 576, 64, 128);
  s8.type = DataType::S8;
  EXPECT_EQ(plan_of(s8, sm90, h100).persistent_ctas, 132);
  s8.n0 = 128;  // measured slower warp-specialised
  EXPECT_EQ(plan_of(s8, sm90, h100).persistent_ctas, 0);
  s8.n0 = 256;  // no warp-specialised n0 = 256 built, either type
  EXPECT_EQ(plan_of(s8, sm90, h100).persistent_ctas, 0);
  EXPECT_EQ(plan_of(shape(81920, 576, 256, 256), sm90, h100).persistent_ctas, 0);
  EXPECT_EQ(plan_of(shape(81920, 576, 256, 256), fused(Residency::Register, KernelFamily::Auto), h100).family,
            KernelFamily::Sm90);
  EXPECT_EQ(plan_of(shape(81920, 576, 64, 128), fused(Residency::Register, KernelFamily::Portable), h100).persistent_ctas, 0);
  // Convolutions keep one CTA a tile (measured slower warp-specialised): 784 tiles.
  EXPECT_EQ(plan_of(conv_pair(DataType::F16, Conv{32, 56, 56, 64, 3}, 64, 128), sm90, h100).persistent_ctas, 0);
  DeviceDesc small = h100;
  small.sm_count = 16;
  EXPECT_EQ(plan_of(shape(4096, 576, 64, 128), sm90, small).persistent_ctas, 16);  // 32 tiles >= 2 x 16
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


// ---- Convolution pairs ----

TEST(B2bConv, ConvPairIsTheGemmPairOverPatches) {
  const Problem p = conv_pair(DataType::F16, Conv{32, 56, 56, 64, 3}, 64, 128);
  EXPECT_TRUE(p.conv.enabled());
  EXPECT_EQ(p.m, 32 * 56 * 56);  // CUTLASS example 13's convolutions: the GEMM shapes it quotes
  EXPECT_EQ(p.k0, 576);
  EXPECT_EQ(p.n0, 64);
  EXPECT_EQ(p.n1, 128);
  EXPECT_FALSE(shape(100, 64, 64, 64).conv.enabled());
}

TEST(B2bConv, LimitsAndReasons) {
  auto conv = [](DataType t, int64_t n, int64_t h, int64_t w, int64_t c, int r, int64_t n0 = 64, int64_t n1 = 128) {
    return conv_pair(t, Conv{n, h, w, c, r}, n0, n1);
  };
  for (Residency r : {Residency::Register, Residency::Shared}) {
    EXPECT_EQ(why(conv(DataType::F16, 32, 56, 56, 64, 3), r), "");
    EXPECT_EQ(why(conv(DataType::F16, 1, 1, 1, 32, 7), r), "");    // a 1 x 1 image, every tap but the centre padding
    EXPECT_EQ(why(conv(DataType::S8, 2, 9, 5, 128, 5), r), "");
    EXPECT_EQ(why(conv(DataType::F16, 0, 56, 56, 64, 3), r), "");  // no pixels: nothing to do
  }
  EXPECT_NE(why(conv(DataType::F16, 1, 8, 8, 48, 3), Residency::Register).find("multiple of 32"), std::string::npos);
  EXPECT_NE(why(conv(DataType::S8, 1, 8, 8, 32, 3), Residency::Register).find("multiple of 64"), std::string::npos);
  EXPECT_NE(why(conv(DataType::F16, 1, 8, 8, 64, 2), Residency::Register).find("odd"), std::string::npos);
  EXPECT_NE(why(conv(DataType::F16, 1, 8, 8, 64, 9), Residency::Register).find("odd"), std::string::npos);
  EXPECT_NE(why(conv(DataType::F16, 1, 8, 8, 64, 3, 96), Residency::Register).find("n0"), std::string::npos);
  EXPECT_NE(why(conv(DataType::F16, -1, 8, 8, 64, 3), Residency::Register).find("conv"), std::string::npos);
  EXPECT_NE(why(conv(DataType::F16, 1, int64_t(1) << 31, 1, 64, 3), Residency::Register).find("2^31"),
            std::string::npos);
  Problem batched = conv(DataType::F16, 2, 8, 8, 64, 3);
  batched.batch = 2;
  EXPECT_NE(why(batched, Residency::Register).find("batched over n"), std::string::npos);
  Problem grouped = conv(DataType::F16, 2, 8, 8, 64, 3);
  grouped.group_m = {64, 64};
  EXPECT_NE(why(grouped, Residency::Register).find("batched over n"), std::string::npos);
  Problem edited = conv(DataType::F16, 2, 8, 8, 64, 3);
  edited.k0 = 64;  // a GEMM's k0 on a convolution: refused, not misread
  EXPECT_NE(why(edited, Residency::Register).find("r * r * c"), std::string::npos);
  edited = conv(DataType::F16, 2, 8, 8, 64, 3);
  edited.m = 100;
  EXPECT_NE(why(edited, Residency::Register).find("n * h * w"), std::string::npos);
  // Hopper: c a multiple of 64 (a k-tile within one tap); n0 64 or 128 as for GEMMs.
  EXPECT_EQ(why(conv(DataType::F16, 32, 56, 56, 64, 3), Residency::Register, KernelFamily::Sm90), "");
  EXPECT_NE(why(conv(DataType::F16, 1, 8, 8, 32, 3), Residency::Register, KernelFamily::Sm90).find("multiple of 64"),
            std::string::npos);
  EXPECT_EQ(plan_of(conv(DataType::F16, 1, 8, 8, 32, 3), fused(Residency::Register, KernelFamily::Auto)).family,
            KernelFamily::Portable);  // Auto falls back where the Hopper kernel cannot take c
  EXPECT_EQ(plan_of(conv(DataType::F16, 1, 8, 8, 64, 3), fused(Residency::Register, KernelFamily::Auto)).family,
            KernelFamily::Sm90);
}

TEST(B2bConv, UnfusedPairRunsConv0OnThePortableKernel) {
  const Problem big = conv_pair(DataType::F16, Conv{2, 8, 8, 64, 3}, 256, 256);
  const Plan u = plan_of(big, unfused());
  EXPECT_EQ(u.family, KernelFamily::Portable);
  EXPECT_EQ(u.grid_tiles, (2 * 8 * 8 + 127) / 128);
  EXPECT_GE(u.workspace_bytes, u.off_d0 + size_t(2 * 8 * 8) * 256 * 2);  // D0 through the workspace
  Plan plan;
  Refusal refusal;
  EXPECT_NE(make_plan(conv_pair(DataType::F16, Conv{2, 8, 8, 48, 3}, 64, 64), unfused(), DeviceDesc{}, &plan, &refusal),
            "");
  EXPECT_EQ(refusal, Refusal::Problem);
  DeviceDesc no_kernels;
  no_kernels.portable_kernels = false;
  EXPECT_NE(make_plan(big, unfused(), no_kernels, &plan, &refusal), "");
  EXPECT_EQ(refusal, Refusal::Device);
  EXPECT_EQ(make_plan(shape(100, 64, 64, 64), unfused(), no_kernels, &plan, &refusal), "");  // GEMM pairs: cuBLASLt only
}

namespace {
// D1 of the convolution pair computed directly: for every output pixel, the r x r window over
// X with explicit bounds checks (no im2col), the documented epilogues in float, rounded as the
// library rounds (fp16 / int8 requantisation). T: uint16_t (fp16) or int8_t.
template <class E>
std::vector<E> direct_conv_pair(const Problem& p, const std::vector<E>& x, const std::vector<E>& w0,
                                const std::vector<float>& bias, const std::vector<E>& w1, const std::vector<E>& c1) {
  const Conv& cv = p.conv;
  constexpr bool kHalf = sizeof(E) == 2;
  auto val = [](E v) { return kHalf ? half_to_float(uint16_t(v)) : float(v); };
  auto out = [](float v) { return kHalf ? E(float_to_half(v)) : E(saturate_s8(v)); };
  std::vector<E> d1(size_t(p.m * p.n1));
  std::vector<float> d0(size_t(p.n0));
  for (int64_t b = 0; b < cv.n; ++b)
    for (int64_t y = 0; y < cv.h; ++y)
      for (int64_t xx = 0; xx < cv.w; ++xx) {
        const int64_t pixel = (b * cv.h + y) * cv.w + xx;
        for (int64_t o = 0; o < p.n0; ++o) {
          double acc = 0;  // exact: integer inputs
          for (int ty = 0; ty < cv.r; ++ty)
            for (int tx = 0; tx < cv.r; ++tx) {
              const int64_t sy = y + ty - cv.r / 2, sx = xx + tx - cv.r / 2;
              if (sy < 0 || sy >= cv.h || sx < 0 || sx >= cv.w) continue;
              for (int64_t ch = 0; ch < cv.c; ++ch)
                acc += double(val(x[size_t(((b * cv.h + sy) * cv.w + sx) * cv.c + ch)])) *
                       val(w0[size_t(((o * cv.r + ty) * cv.r + tx) * cv.c + ch)]);
            }
          d0[size_t(o)] = val(out(std::max(std::fmaf(p.alpha0, float(acc), bias[size_t(o)]), 0.0f)));
        }
        for (int64_t j = 0; j < p.n1; ++j) {
          double acc = 0;
          for (int64_t o = 0; o < p.n0; ++o) acc += double(d0[size_t(o)]) * val(w1[size_t(j * p.n0 + o)]);
          const float c = p.beta1 != 0.0f ? p.beta1 * val(c1[size_t(pixel * p.n1 + j)]) : 0.0f;
          d1[size_t(pixel * p.n1 + j)] = out(std::max(std::fmaf(p.alpha1, float(acc), c), 0.0f));
        }
      }
  return d1;
}
// The host reference of a convolution pair against direct_conv_pair on inputs drawn by `draw`;
// most outputs must be non-zero (a test of ReLU's zeros would check little).
template <class E, class Draw>
void expect_reference_is_direct(const Problem& p, const std::vector<float>& bias, Draw draw, const std::string& what) {
  auto fill = [&](int64_t n) {
    std::vector<E> v(static_cast<size_t>(n));
    for (auto& e : v) e = draw();
    return v;
  };
  const auto x = fill(p.m * p.conv.c), w0 = fill(p.n0 * p.k0), w1 = fill(p.n1 * p.n0), c1 = fill(p.m * p.n1);
  std::vector<E> got(size_t(p.m * p.n1));
  if constexpr (sizeof(E) == 2)
    reference(p, x.data(), w0.data(), bias.data(), w1.data(), c1.data(), got.data());
  else
    reference_s8(p, x.data(), w0.data(), bias.data(), w1.data(), c1.data(), got.data());
  EXPECT_EQ(got, direct_conv_pair(p, x, w0, bias, w1, c1)) << what;
  int64_t nonzero = 0;
  for (E v : got) nonzero += sizeof(E) == 2 ? half_to_float(uint16_t(v)) != 0.0f : v != 0;
  EXPECT_GT(nonzero, int64_t(got.size()) / 8) << what << ": a test of mostly zeros checks little";
}
}  // namespace

TEST(B2bConv, ReferenceMatchesADirectConvolution) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(-2, 2), byte(-128, 127);
  struct Case {
    DataType type;
    Conv x;
    int64_t n0, n1;
  };
  for (const Case& k : {Case{DataType::F16, Conv{2, 5, 7, 32, 3}, 64, 64}, Case{DataType::F16, Conv{1, 1, 1, 32, 5}, 64, 128},
                        Case{DataType::F16, Conv{1, 4, 3, 64, 1}, 128, 64}, Case{DataType::S8, Conv{2, 3, 6, 64, 3}, 64, 64},
                        Case{DataType::S8, Conv{1, 6, 2, 64, 7}, 64, 64}}) {
    Problem p = conv_pair(k.type, k.x, k.n0, k.n1);
    p.beta1 = 0.5f;
    const std::string what = std::string(type_name(k.type)) + " n=" + std::to_string(k.x.n) + " h=" +
                             std::to_string(k.x.h) + " w=" + std::to_string(k.x.w) + " r=" + std::to_string(k.x.r);
    std::vector<float> bias(size_t(p.n0));
    for (auto& b : bias) b = float(small(rng));
    if (k.type == DataType::F16) {
      p.alpha0 = 0.25f;  // keeps D0 and D1 within fp16's exact integers and quarters
      p.alpha1 = 0.125f;
      expect_reference_is_direct<uint16_t>(p, bias, [&] { return float_to_half(float(small(rng))); }, what);
    } else {
      p.alpha0 = 1.0f / 256;
      p.alpha1 = 1.0f / 64;
      expect_reference_is_direct<int8_t>(p, bias, [&] { return int8_t(byte(rng)); }, what);
    }
  }
}

TEST(B2bConv, Im2colOfAOneByOneFilterIsX) {
  const Problem p = conv_pair(DataType::S8, Conv{2, 3, 4, 64, 1}, 64, 64);
  std::vector<int8_t> x(size_t(p.m * 64)), rows(size_t(p.m * p.k0));
  for (size_t i = 0; i < x.size(); ++i) x[i] = int8_t(i * 7 + 3);
  im2col(p, x.data(), 0, p.m, rows.data());
  EXPECT_EQ(rows, x);
  // A 3 x 3 patch of the corner pixel: 5 of its 9 taps are padding (zeros), the centre is X's.
  const Problem q = conv_pair(DataType::S8, Conv{2, 3, 4, 64, 3}, 64, 64);
  std::vector<int8_t> patch(size_t(q.k0));
  im2col(q, x.data(), 0, 1, patch.data());
  int64_t zeros = 0;
  for (int8_t v : patch) zeros += v == 0;
  EXPECT_GE(zeros, 5 * 64);
  EXPECT_TRUE(std::equal(patch.begin() + 4 * 64, patch.begin() + 5 * 64, x.begin()));
}
