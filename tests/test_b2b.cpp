// Back-to-back GEMM: limits and host reference on the CPU; fused kernels (both residencies)
// and the cuBLASLt unfused pair on the GPU, skipped visibly without one.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "ozgemm/b2b.hpp"
#include "ozgemm/ozgemm.hpp"

using namespace ozgemm::b2b;

namespace {

Problem shape(int64_t m, int64_t k0, int64_t n0, int64_t n1) {
  Problem p;
  p.m = m;
  p.k0 = k0;
  p.n0 = n0;
  p.n1 = n1;
  return p;
}

// Three batches, each operand densely strided, beta1 = 1.
Problem batched_shape(int64_t m, int64_t k0, int64_t n0, int64_t n1) {
  Problem p = shape(m, k0, n0, n1);
  p.batch = 3;
  p.stride_a0 = m * k0;
  p.stride_b0 = n0 * k0;
  p.stride_bias0 = n0;
  p.stride_b1 = n1 * n0;
  p.stride_c1 = p.stride_d1 = m * n1;
  p.beta1 = 1.0f;
  return p;
}

// Five groups stacked by rows, an empty and a one-row group among them.
Problem grouped_shape(int64_t k0, int64_t n0, int64_t n1) {
  Problem p = shape(0, k0, n0, n1);
  p.group_m = {100, 1, 0, 257, 64};
  return p;
}

// Rows of A0, C1 and D1 per batch, or of all groups.
int64_t total_rows(const Problem& p) {
  if (p.group_m.empty()) return p.m;
  int64_t rows = 0;
  for (int64_t gm : p.group_m) rows += gm;
  return rows;
}

TEST(B2bLimits, CanImplementExplainsEveryLimit) {
  EXPECT_EQ(can_implement(shape(81920, 576, 64, 128), Residency::Register), "");
  EXPECT_EQ(can_implement(shape(81920, 576, 64, 256), Residency::Shared), "");
  EXPECT_EQ(can_implement(shape(1, 32, 256, 256), Residency::Shared), "");
  EXPECT_EQ(can_implement(shape(0, 32, 64, 64), Residency::Register), "");  // empty problem is fine
  EXPECT_NE(can_implement(shape(100, 576, 96, 128), Residency::Register).find("n0"), std::string::npos);
  EXPECT_NE(can_implement(shape(100, 576, 64, 512), Residency::Shared).find("n1"), std::string::npos);
  EXPECT_NE(can_implement(shape(100, 500, 64, 64), Residency::Register).find("k0"), std::string::npos);
  EXPECT_NE(can_implement(shape(100, 0, 64, 64), Residency::Register).find("k0"), std::string::npos);
  EXPECT_NE(can_implement(shape(-1, 32, 64, 64), Residency::Register), "");
  const std::string rf = can_implement(shape(100, 64, 256, 256), Residency::Register);
  EXPECT_NE(rf.find("shared-memory residency"), std::string::npos) << rf;
  EXPECT_EQ(can_implement(shape(100, 64, 128, 256), Residency::Register), "");  // 32 + 128 = 160
  Problem b = shape(100, 64, 64, 64);
  b.batch = 0;
  EXPECT_NE(can_implement(b, Residency::Shared), "");
  b.batch = 2;
  b.group_m = {3, 4};
  EXPECT_NE(can_implement(b, Residency::Shared).find("grouped"), std::string::npos);
  b.batch = 1;
  b.group_m = {3, -4};
  EXPECT_NE(can_implement(b, Residency::Shared), "");
  EXPECT_EQ(workspace_size(shape(100, 64, 128, 64), false), 0u);
  EXPECT_GE(workspace_size(shape(100, 64, 128, 64), true), size_t(100) * 128 * 2 + 128 * 2);  // D0 + fp16 bias
}

TEST(B2bLimits, Int8Limits) {
  Problem p = shape(81920, 576, 64, 128);
  p.type = DataType::S8;
  EXPECT_EQ(can_implement(p, Residency::Register), "");
  p.k0 = 32;  // 32 bytes: not a whole 64-byte chunk of int8
  EXPECT_NE(can_implement(p, Residency::Register).find("multiple of 64"), std::string::npos);
  p.k0 = 131072;
  EXPECT_NE(can_implement(p, Residency::Register).find("131071"), std::string::npos);
  p = shape(100, 64, 256, 256);
  p.type = DataType::S8;
  EXPECT_EQ(can_implement(p, Residency::Register), "") << "int8 packs D0 twice as densely: 32 + 128 = 160";
  p.batch = 2;
  p.stride_a0 = 100 * 64 + 8;  // 8 bytes: misaligned for 16-byte copies
  EXPECT_NE(can_implement(p, Residency::Shared).find("16 bytes"), std::string::npos);
  p.type = DataType::F16;      // 16 bytes as fp16
  EXPECT_EQ(can_implement(p, Residency::Shared), "");
  Problem w = shape(100, 64, 128, 256);
  w.type = DataType::S8;
  EXPECT_GE(workspace_size(w, true), size_t(100) * 128 + size_t(100) * 256 * 4);  // D0 + int32 GEMM output
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

// ---------------------------------------------------------------------------------------------
// GPU

template <class E>
struct DataT {
  std::vector<E> a0, b0, b1, c1;
  std::vector<float> bias;
};
using Data = DataT<uint16_t>;

// Small integers (exact fp32 sums) or real values in [-1, 1].
Data make_data(const Problem& p, int64_t rows, bool integers, std::mt19937& rng) {
  Data d;
  std::uniform_int_distribution<int> di(-2, 2);
  std::uniform_real_distribution<float> dr(-1.0f, 1.0f);
  auto val = [&] { return integers ? float(di(rng)) : dr(rng); };
  const int batch = p.group_m.empty() ? p.batch : 1;
  d.a0.resize(size_t(batch) * rows * p.k0);
  d.b0.resize(size_t(batch) * p.n0 * p.k0);
  d.b1.resize(size_t(batch) * p.n1 * p.n0);
  d.c1.resize(size_t(batch) * rows * p.n1);
  d.bias.resize(size_t(batch) * p.n0);
  for (auto& x : d.a0) x = float_to_half(val());
  for (auto& x : d.b0) x = float_to_half(val());
  for (auto& x : d.b1) x = float_to_half(integers ? float(di(rng) / 2) : val() / 8);  // keep D1 in range
  for (auto& x : d.c1) x = float_to_half(val());
  for (auto& x : d.bias) x = integers ? float(di(rng)) : val();
  return d;
}

template <class T>
T* to_device(const std::vector<T>& v) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(1, v.size()) * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}

enum class Path { Register, Shared, Unfused, RegisterSm90, RegisterAuto };

// Runs one path; returns D1 (rows x n1 per batch). E: uint16_t (fp16 bits) or int8_t.
template <class E>
std::vector<E> run_gpu(const Problem& p, const DataT<E>& d, int64_t rows, Path path) {
  E *a0 = to_device(d.a0), *b0 = to_device(d.b0), *b1 = to_device(d.b1), *c1 = to_device(d.c1);
  float* bias = to_device(d.bias);
  const int batch = p.group_m.empty() ? p.batch : 1;
  // Poison: NaN for fp16; for int8 a value the results rarely take everywhere.
  std::vector<E> out(size_t(batch) * rows * p.n1, sizeof(E) == 2 ? E(0x7e00) : E(0x55));
  E* d1 = to_device(out);
  Arguments a;
  a.a0 = a0;
  a.b0 = b0;
  a.bias0 = bias;
  a.b1 = b1;
  a.c1 = c1;
  a.d1 = d1;
  if (path == Path::Unfused) {
    void* ws = nullptr;
    EXPECT_EQ(cudaMalloc(&ws, std::max<size_t>(1, workspace_size(p, true))), cudaSuccess);
    Unfused u;
    EXPECT_EQ(u.run(p, a, ws, nullptr), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    cudaFree(ws);
  } else {
    EXPECT_EQ(run(p, a, path == Path::Shared ? Residency::Shared : Residency::Register, nullptr,
                  path == Path::RegisterSm90   ? KernelFamily::Sm90
                  : path == Path::RegisterAuto ? KernelFamily::Auto
                                               : KernelFamily::Portable),
              cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  EXPECT_EQ(cudaMemcpy(out.data(), d1, out.size() * sizeof(E), cudaMemcpyDeviceToHost), cudaSuccess);
  for (void* ptr : {(void*)a0, (void*)b0, (void*)b1, (void*)c1, (void*)bias, (void*)d1}) cudaFree(ptr);
  return out;
}

class GpuB2b : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!ozgemm::gpu_available(&why)) GTEST_SKIP() << why;
  }
  std::mt19937 rng{std::random_device{}()};
};

void expect_equal(const std::vector<uint16_t>& got, const std::vector<uint16_t>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " got " << half_to_float(got[i]) << " want "
                    << half_to_float(want[i]);
  EXPECT_EQ(bad, 0) << what;
}

TEST_F(GpuB2b, IntegerInputsExactForBothResidenciesAndTheUnfusedPair) {
  struct S {
    int64_t m, k0, n0, n1;
    float alpha0, alpha1, beta1;
  };
  for (S s : {S{1000, 576, 64, 128, 1, 1, 0}, S{777, 64, 128, 64, 0.5f, 1, 1}, S{129, 96, 256, 128, 1, 0.5f, 2},
              S{64, 32, 64, 256, 1, 1, 0}, S{300, 128, 256, 256, 1, 1, 1}, S{1, 32, 128, 128, 1, 1, 0}}) {
    Problem p = shape(s.m, s.k0, s.n0, s.n1);
    p.alpha0 = s.alpha0;
    p.alpha1 = s.alpha1;
    p.beta1 = s.beta1;
    const Data d = make_data(p, p.m, true, rng);
    std::vector<uint16_t> want(size_t(p.m) * p.n1);
    reference(p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
    const std::string what = "m=" + std::to_string(s.m) + " k0=" + std::to_string(s.k0) + " n0=" +
                             std::to_string(s.n0) + " n1=" + std::to_string(s.n1);
    if (can_implement(p, Residency::Register).empty())
      expect_equal(run_gpu(p, d, p.m, Path::Register), want, "register " + what);
    expect_equal(run_gpu(p, d, p.m, Path::Shared), want, "shared " + what);
    expect_equal(run_gpu(p, d, p.m, Path::Unfused), want, "unfused " + what);
  }
}

// fp16 integer inputs through `paths`, each equal to the host reference.
void check_f16_paths(const Problem& p, std::initializer_list<Path> paths, const std::string& what, std::mt19937& rng) {
  const int64_t rows = total_rows(p);
  const Data d = make_data(p, rows, true, rng);
  std::vector<uint16_t> want(size_t(p.group_m.empty() ? p.batch : 1) * rows * p.n1);
  reference(p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
  for (Path path : paths) expect_equal(run_gpu(p, d, rows, path), want, what + " path " + std::to_string(int(path)));
}

TEST_F(GpuB2b, BatchedAndGrouped) {
  check_f16_paths(batched_shape(333, 64, 64, 128), {Path::Register, Path::Shared, Path::Unfused}, "batched", rng);
  check_f16_paths(grouped_shape(64, 128, 64), {Path::Register, Path::Shared, Path::Unfused}, "grouped", rng);
}

TEST_F(GpuB2b, RealInputsWithinTolerance) {
  // Different fp32 summation orders; D0 is rounded to fp16 between the GEMMs, so a D0 element
  // can differ by one fp16 ulp (2^-11 relative), and D1 by the sum of n0 such differences.
  Problem p = shape(1000, 256, 128, 128);
  p.relu0 = true;
  p.relu1 = false;
  const Data d = make_data(p, p.m, false, rng);
  std::vector<uint16_t> want(size_t(p.m) * p.n1);
  reference(p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
  for (Path path : {Path::Register, Path::Shared, Path::Unfused}) {
    const auto got = run_gpu(p, d, p.m, path);
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double w = half_to_float(want[i]), x = half_to_float(got[i]);
      ASSERT_TRUE(std::isfinite(x)) << i;
      worst = std::max(worst, std::fabs(x - w) / (1.0 + std::fabs(w)));
    }
    EXPECT_LT(worst, 2e-2) << "path " << int(path);
  }
}

// int8: any int8 inputs; every step is deterministic, so all paths equal the host reference.
DataT<int8_t> make_data_s8(const Problem& p, int64_t rows, std::mt19937& rng) {
  DataT<int8_t> d;
  std::uniform_int_distribution<int> di(-128, 127);
  const int batch = p.group_m.empty() ? p.batch : 1;
  auto fill = [&](std::vector<int8_t>& v, size_t n) {
    v.resize(n);
    for (auto& x : v) x = int8_t(di(rng));
  };
  fill(d.a0, size_t(batch) * rows * p.k0);
  fill(d.b0, size_t(batch) * p.n0 * p.k0);
  fill(d.b1, size_t(batch) * p.n1 * p.n0);
  fill(d.c1, size_t(batch) * rows * p.n1);
  d.bias.resize(size_t(batch) * p.n0);
  for (auto& x : d.bias) x = float(di(rng)) / 2;
  return d;
}

void expect_equal_s8(const std::vector<int8_t>& got, const std::vector<int8_t>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  int64_t bad = 0, saturated = 0, zero = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i] && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " got " << int(got[i]) << " want " << int(want[i]);
    saturated += want[i] == 127 || want[i] == -128;
    zero += want[i] == 0;
  }
  EXPECT_EQ(bad, 0) << what;
  // The data must exercise rounding, not only saturation or ReLU's zeros.
  EXPECT_LT(saturated + zero, int64_t(got.size()) * 9 / 10) << what << ": too few unsaturated, non-zero outputs";
}

TEST_F(GpuB2b, Int8ExactForBothResidenciesAndTheUnfusedPair) {
  struct S {
    int64_t m, k0, n0, n1;
    float alpha0, alpha1, beta1;
    bool relu1;
  };
  for (S s : {S{1000, 576, 64, 128, 1.0f / 1024, 1.0f / 512, 0, true}, S{777, 64, 128, 64, 1.0f / 128, 1.0f / 256, 1, false},
              S{129, 192, 256, 128, 1.0f / 256, 1.0f / 1024, 0.5f, false}, S{64, 64, 64, 256, 1.0f / 100, 1.0f / 300, 0, true},
              S{300, 128, 256, 256, 1.0f / 200, 1.0f / 700, 0.25f, false}, S{1, 64, 128, 128, 1.0f / 128, 1.0f / 400, 0, false}}) {
    Problem p = shape(s.m, s.k0, s.n0, s.n1);
    p.type = DataType::S8;
    p.alpha0 = s.alpha0;
    p.alpha1 = s.alpha1;
    p.beta1 = s.beta1;
    p.relu1 = s.relu1;
    const DataT<int8_t> d = make_data_s8(p, p.m, rng);
    std::vector<int8_t> want(size_t(p.m) * p.n1);
    reference_s8(p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
    const std::string what = "int8 m=" + std::to_string(s.m) + " k0=" + std::to_string(s.k0) + " n0=" +
                             std::to_string(s.n0) + " n1=" + std::to_string(s.n1);
    ASSERT_EQ(can_implement(p, Residency::Register), "") << what;
    expect_equal_s8(run_gpu(p, d, p.m, Path::Register), want, "register " + what);
    expect_equal_s8(run_gpu(p, d, p.m, Path::Shared), want, "shared " + what);
    expect_equal_s8(run_gpu(p, d, p.m, Path::Unfused), want, "unfused " + what);
  }
}

TEST_F(GpuB2b, Int8BatchedAndGrouped) {
  Problem b = batched_shape(333, 128, 64, 128);
  Problem g = grouped_shape(64, 128, 64);
  b.alpha0 = 1.0f / 256, b.alpha1 = 1.0f / 256;
  g.alpha0 = 1.0f / 128, g.alpha1 = 1.0f / 512;
  for (Problem* p : {&b, &g}) {
    p->type = DataType::S8;
    p->relu1 = false;
    const int64_t rows = total_rows(*p);
    const DataT<int8_t> d = make_data_s8(*p, rows, rng);
    std::vector<int8_t> want(size_t(p->batch) * rows * p->n1);
    reference_s8(*p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
    const std::string what = p->group_m.empty() ? "int8 batched" : "int8 grouped";
    for (Path path : {Path::Register, Path::Shared, Path::Unfused})
      expect_equal_s8(run_gpu(*p, d, rows, path), want, what + " path " + std::to_string(int(path)));
  }
}

TEST(B2bLimits, HopperKernelLimits) {
  EXPECT_EQ(can_implement(shape(81920, 576, 64, 128), Residency::Register, KernelFamily::Sm90), "");
  EXPECT_EQ(can_implement(shape(100, 64, 128, 256), Residency::Register, KernelFamily::Sm90), "");
  EXPECT_NE(can_implement(shape(100, 64, 256, 64), Residency::Register, KernelFamily::Sm90).find("n0"),
            std::string::npos);
  EXPECT_NE(can_implement(shape(100, 96, 64, 64), Residency::Register, KernelFamily::Sm90).find("k0"),
            std::string::npos);
  EXPECT_NE(can_implement(shape(100, 64, 64, 64), Residency::Shared, KernelFamily::Sm90), "");
  Problem s8 = shape(100, 64, 64, 64);
  s8.type = DataType::S8;
  EXPECT_NE(can_implement(s8, Residency::Register, KernelFamily::Sm90).find("fp16"), std::string::npos);
}

// The Hopper wgmma kernel against the host reference (integer inputs: exact), every n0 x n1 it
// supports, partial tiles, alpha/beta, batched and grouped.
TEST_F(GpuB2b, HopperKernelExactOnIntegers) {
  if (!sm90_kernel_available()) GTEST_SKIP() << "the Hopper b2b kernel needs an sm_90a build and a Hopper GPU";
  struct S {
    int64_t m, k0, n0, n1;
    float alpha0, alpha1, beta1;
  };
  for (S s : {S{1000, 576, 64, 128, 1, 1, 0}, S{777, 64, 128, 64, 0.5f, 1, 1}, S{129, 192, 128, 256, 1, 0.5f, 2},
              S{64, 64, 64, 256, 1, 1, 0}, S{300, 128, 128, 128, 1, 1, 1}, S{1, 64, 64, 64, 1, 1, 0}}) {
    Problem p = shape(s.m, s.k0, s.n0, s.n1);
    p.alpha0 = s.alpha0;
    p.alpha1 = s.alpha1;
    p.beta1 = s.beta1;
    const Data d = make_data(p, p.m, true, rng);
    std::vector<uint16_t> want(size_t(p.m) * p.n1);
    reference(p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
    const std::string what =
        "m=" + std::to_string(s.m) + " k0=" + std::to_string(s.k0) + " n0=" + std::to_string(s.n0) + " n1=" +
        std::to_string(s.n1);
    expect_equal(run_gpu(p, d, p.m, Path::RegisterSm90), want, "sm90 " + what);
    expect_equal(run_gpu(p, d, p.m, Path::RegisterAuto), want, "auto " + what);
  }
  check_f16_paths(batched_shape(333, 64, 64, 128), {Path::RegisterSm90}, "sm90 batched", rng);
  check_f16_paths(grouped_shape(64, 128, 64), {Path::RegisterSm90}, "sm90 grouped", rng);
}

TEST_F(GpuB2b, RejectsWhatItCannotRun) {
  Arguments a;
  EXPECT_EQ(run(shape(100, 64, 96, 64), a, Residency::Shared, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(run(shape(100, 64, 64, 64), a, Residency::Shared, nullptr), cudaErrorInvalidValue);  // null pointers
}

}  // namespace
