// GPU tests of the back-to-back GEMM: fused kernels (both residencies, portable and Hopper) and the
// cuBLASLt unfused pair against the host reference, through the public plan/run sequence. Skipped
// visibly without a GPU. The planner's limits and the host reference are tested on the CPU
// (tests/cpu/test_b2b_cpu.cpp).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "b2b_test_problems.hpp"
#include "gpu/gpu_test_util.hpp"
#include "ozgemm/b2b.hpp"
#include "ozgemm/ozgemm.hpp"
#include "ozgemm/reference/b2b.hpp"
#include "kernels/b2b/policy.hpp"

using namespace ozgemm::b2b;
using ozgemm::KernelFamily;
using oztest::batched_shape;
using oztest::grouped_shape;
using oztest::shape;
using oztest::total_rows;

namespace {

// Elements of a0 a row: k0, or a convolution's channels (a0 is X, one row a pixel).
int64_t a0_columns(const Problem& p) { return p.conv.enabled() ? p.conv.c : p.k0; }

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
  d.a0.resize(size_t(batch) * rows * a0_columns(p));
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
const char* path_name(Path p) {
  switch (p) {
    case Path::Register: return "register";
    case Path::Shared: return "shared";
    case Path::Unfused: return "unfused";
    case Path::RegisterSm90: return "register-sm90";
    case Path::RegisterAuto: return "register-auto";
  }
  return "?";
}
Options options_of(Path path) {
  switch (path) {
    case Path::Register: return Options{false, Residency::Register, KernelFamily::Portable};
    case Path::Shared: return Options{false, Residency::Shared, KernelFamily::Portable};
    case Path::Unfused: return Options{true, Residency::Register, KernelFamily::Auto};
    case Path::RegisterSm90: return Options{false, Residency::Register, KernelFamily::Sm90};
    case Path::RegisterAuto: return Options{false, Residency::Register, KernelFamily::Auto};
  }
  return Options{};
}

// One handle for the whole binary (device facts read once, as users would).
ozgemm::Handle& handle() {
  static ozgemm::Handle* h = new ozgemm::Handle();
  return *h;
}

// Runs one path through the public plan/run sequence with a workspace of exactly the planned size;
// returns D1 (rows x n1 per batch). E: uint16_t (fp16 bits) or int8_t.
template <class E>
std::vector<E> run_gpu(const Problem& p, const DataT<E>& d, int64_t rows, Path path) {
  Plan plan;
  std::string why;
  EXPECT_EQ(ozgemm::b2b::plan(handle().get(), p, options_of(path), &plan, &why), OZGEMM_STATUS_SUCCESS)
      << path_name(path) << ": " << why;
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
  void* ws = nullptr;
  EXPECT_EQ(cudaMalloc(&ws, std::max<size_t>(256, plan.workspace_bytes)), cudaSuccess);
  EXPECT_EQ(cudaMemset(ws, 0x5a, std::max<size_t>(256, plan.workspace_bytes)), cudaSuccess);  // garbage must not matter
  EXPECT_EQ(ozgemm::b2b::run(handle().get(), plan, p, a, ws, plan.workspace_bytes), OZGEMM_STATUS_SUCCESS)
      << path_name(path);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(out.data(), d1, out.size() * sizeof(E), cudaMemcpyDeviceToHost), cudaSuccess);
  for (void* ptr : {(void*)a0, (void*)b0, (void*)b1, (void*)c1, (void*)bias, (void*)d1, ws}) cudaFree(ptr);
  return out;
}

// Register residency: the planner takes every shape (GEMM 1 runs in column chunks); a refusal
// would be a failure, not a skip.
bool register_allowed(const Problem& p, const std::string& what) {
  Plan plan;
  std::string why;
  const bool ok = ozgemm::b2b::plan(handle().get(), p, options_of(Path::Register), &plan, &why) == OZGEMM_STATUS_SUCCESS;
  EXPECT_TRUE(ok) << what << ": register residency refused: " << why;
  return ok;
}

// Whether the Hopper kernel takes the problem here (no Hopper GPU or kernel: no; a limit of the
// kernel's, n0 or k0: no, with the reason printed).
bool sm90_runs(const Problem& p, const std::string& what) {
  Plan plan;
  std::string why;
  const bool ok = ozgemm::b2b::plan(handle().get(), p, options_of(Path::RegisterSm90), &plan, &why) == OZGEMM_STATUS_SUCCESS;
  if (!ok) std::cout << "[ note     ] " << what << ": the Hopper kernel does not take it: " << why << std::endl;
  return ok;
}

class GpuB2b : public ::testing::Test {
 protected:
  void SetUp() override { OZTEST_REQUIRE_GPU(); }
  std::mt19937 rng{static_cast<uint32_t>(oztest::test_rng()())};
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
  // n0 = 384, 512: GEMM 0 in column chunks (policy.hpp, b2b_chunked_n0), with one and two column
  // chunks of D1 (GEMM 0 recomputed for the second).
  for (S s : {S{1000, 576, 64, 128, 1, 1, 0}, S{777, 64, 128, 64, 0.5f, 1, 1}, S{129, 96, 256, 128, 1, 0.5f, 2},
              S{64, 32, 64, 256, 1, 1, 0}, S{300, 128, 256, 256, 1, 1, 1}, S{1, 32, 128, 128, 1, 1, 0},
              S{513, 64, 384, 128, 1, 0.5f, 1}, S{200, 96, 512, 256, 0.5f, 0.25f, 0}}) {
    Problem p = shape(s.m, s.k0, s.n0, s.n1);
    p.alpha0 = s.alpha0;
    p.alpha1 = s.alpha1;
    p.beta1 = s.beta1;
    const Data d = make_data(p, p.m, true, rng);
    std::vector<uint16_t> want(size_t(p.m) * p.n1);
    reference(p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
    const std::string what = "m=" + std::to_string(s.m) + " k0=" + std::to_string(s.k0) + " n0=" +
                             std::to_string(s.n0) + " n1=" + std::to_string(s.n1);
    if (register_allowed(p, what)) expect_equal(run_gpu(p, d, p.m, Path::Register), want, "register " + what);
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
  for (Path path : paths) expect_equal(run_gpu(p, d, rows, path), want, what + " path " + path_name(path));
}

TEST_F(GpuB2b, BatchedAndGrouped) {
  check_f16_paths(batched_shape(333, 64, 64, 128), {Path::Register, Path::Shared, Path::Unfused}, "batched", rng);
  check_f16_paths(batched_shape(150, 64, 384, 64), {Path::Register, Path::Shared, Path::Unfused, Path::RegisterAuto},
                  "batched, n0 in chunks", rng);
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
    EXPECT_LT(worst, 2e-2) << "path " << path_name(path);
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
  fill(d.a0, size_t(batch) * rows * a0_columns(p));
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

// Whether the Hopper b2b kernel runs here: false, with the planner's reason in *why, when it refuses
// for the device or the build (NOT_SUPPORTED); any other answer on this small pair is reported.
bool hopper_kernel_runs(std::string* why) {
  Plan plan;
  const ozgemmStatus_t st =
      ozgemm::b2b::plan(handle().get(), shape(128, 64, 64, 64), options_of(Path::RegisterSm90), &plan, why);
  return st != OZGEMM_STATUS_NOT_SUPPORTED;
}

TEST_F(GpuB2b, Int8ExactForBothResidenciesAndTheUnfusedPair) {
  struct S {
    int64_t m, k0, n0, n1;
    float alpha0, alpha1, beta1;
    bool relu1;
  };
  int sm90_ran = 0;
  for (S s : {S{1000, 576, 64, 128, 1.0f / 1024, 1.0f / 512, 0, true}, S{777, 64, 128, 64, 1.0f / 128, 1.0f / 256, 1, false},
              S{129, 192, 256, 128, 1.0f / 256, 1.0f / 1024, 0.5f, false}, S{64, 64, 64, 256, 1.0f / 100, 1.0f / 300, 0, true},
              S{300, 128, 256, 256, 1.0f / 200, 1.0f / 700, 0.25f, false}, S{1, 64, 128, 128, 1.0f / 128, 1.0f / 400, 0, false},
              S{257, 128, 512, 128, 1.0f / 256, 1.0f / 2048, 0, true}, S{130, 64, 384, 256, 1.0f / 128, 1.0f / 1500, 0.5f, false},
              // the Hopper chunked kernel (6 stages, 4 k-tiles ahead): B1's group covered by the
              // block's own waits (k0 = 320: 5 k-tiles) and waited for apart (k0 = 192: 3)
              S{300, 320, 384, 128, 1.0f / 512, 1.0f / 2048, 0.25f, false}, S{150, 192, 512, 256, 1.0f / 256, 1.0f / 4096, 0, true}}) {
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
    ASSERT_TRUE(register_allowed(p, what));
    expect_equal_s8(run_gpu(p, d, p.m, Path::Register), want, "register " + what);
    expect_equal_s8(run_gpu(p, d, p.m, Path::Shared), want, "shared " + what);
    expect_equal_s8(run_gpu(p, d, p.m, Path::Unfused), want, "unfused " + what);
    if (sm90_runs(p, what)) {
      ++sm90_ran;
      expect_equal_s8(run_gpu(p, d, p.m, Path::RegisterSm90), want, "sm90 " + what);
      expect_equal_s8(run_gpu(p, d, p.m, Path::RegisterAuto), want, "auto " + what);
    }
  }
  // The Hopper kernel takes every case (n0 = 384 and 512: its chunked kernel).
  std::cout << "[ note     ] the Hopper int8 kernel ran " << sm90_ran << " of the 10 cases" << std::endl;
  std::string why;
  if (hopper_kernel_runs(&why)) {
    EXPECT_EQ(sm90_ran, 10);
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
      expect_equal_s8(run_gpu(*p, d, rows, path), want, what + " path " + path_name(path));
    if (sm90_runs(*p, what)) expect_equal_s8(run_gpu(*p, d, rows, Path::RegisterSm90), want, what + " path sm90");
  }
}

// The Hopper wgmma kernel against the host reference (integer inputs: exact), every n0 x n1 it
// supports, partial tiles, alpha/beta, batched and grouped. fp16 n0 = 256, n1 = 256 loads B1's
// second chunk through the ring (policy.hpp, tile_b1_resident_chunks). n0 past 256 (the chunked
// kernel, fp16: 5 stages, 3 k-tiles ahead): k0 = 64 and 192 (1 and 3 k-tiles a chunk: B1's block
// waited for apart), 256 (4: covered by the block's last wait, exactly), 576 (past the ring), n1 =
// 64, 128, 256 (GEMM 0 recomputed for D1's second chunk).
TEST_F(GpuB2b, HopperKernelExactOnIntegers) {
  std::string why;
  if (!hopper_kernel_runs(&why)) GTEST_SKIP() << "the Hopper b2b kernel does not run here: " << why;
  ASSERT_EQ(why, "");
  struct S {
    int64_t m, k0, n0, n1;
    float alpha0, alpha1, beta1;
  };
  for (S s : {S{1000, 576, 64, 128, 1, 1, 0}, S{777, 64, 128, 64, 0.5f, 1, 1}, S{129, 192, 128, 256, 1, 0.5f, 2},
              S{64, 64, 64, 256, 1, 1, 0}, S{300, 128, 128, 128, 1, 1, 1}, S{1, 64, 64, 64, 1, 1, 0},
              S{513, 576, 256, 128, 0.5f, 0.25f, 0}, S{300, 128, 256, 256, 1, 0.5f, 1}, S{1, 64, 256, 64, 1, 1, 0},
              S{129, 192, 256, 256, 0.25f, 0.125f, 2}, S{513, 64, 384, 128, 1, 0.5f, 1},
              S{200, 192, 512, 256, 0.5f, 0.25f, 0}, S{130, 576, 384, 64, 0.25f, 0.125f, 2},
              S{1, 128, 640, 256, 1, 1, 0}, S{260, 256, 512, 128, 0.5f, 0.125f, 1}}) {
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
  check_f16_paths(batched_shape(200, 128, 256, 256), {Path::RegisterSm90}, "sm90 batched n0 = 256", rng);
  check_f16_paths(grouped_shape(64, 128, 64), {Path::RegisterSm90}, "sm90 grouped", rng);
  check_f16_paths(grouped_shape(128, 256, 256), {Path::RegisterSm90}, "sm90 grouped n0 = 256", rng);
  check_f16_paths(batched_shape(150, 128, 384, 256), {Path::RegisterSm90}, "sm90 batched n0 = 384", rng);
  check_f16_paths(grouped_shape(64, 512, 128), {Path::RegisterSm90}, "sm90 grouped n0 = 512", rng);
}

// The Hopper kernel's warp-specialised persistent schedule (GEMM pairs of at least
// kWsMinTilesPerSm tiles an SM, kernels/b2b/policy.hpp): the k-tile stream crosses tiles (k0 = 64:
// every k-tile; 576: nine k-tiles past the ring's depth), partial last tiles, every n0 x n1,
// alpha/beta, batched (B1 reloaded at each batch) and grouped, fp16 and int8, against the host
// reference bit for bit.
TEST_F(GpuB2b, HopperWarpSpecialisedScheduleExact) {
  std::string why;
  if (!hopper_kernel_runs(&why)) GTEST_SKIP() << "the Hopper b2b kernel does not run here: " << why;
  ASSERT_EQ(why, "");
  int device = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  const int64_t ws_rows = int64_t(ozgemm::kernels::B2bSm90Policy::kWsMinTilesPerSm) * sms * 128;
  struct S {
    int64_t m, k0, n0, n1;
    float beta1;
  };
  for (S s : {S{ws_rows + 77, 64, 64, 128, 0}, S{ws_rows + 5 * 128, 576, 64, 256, 1}, S{ws_rows + 1, 192, 128, 64, 2},
              S{ws_rows, 128, 128, 256, 0}}) {
    Problem p = shape(s.m, s.k0, s.n0, s.n1);
    p.beta1 = s.beta1;
    const Data d = make_data(p, p.m, true, rng);
    std::vector<uint16_t> want(size_t(p.m) * p.n1);
    reference(p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
    expect_equal(run_gpu(p, d, p.m, Path::RegisterSm90), want,
                 "ws fp16 m=" + std::to_string(s.m) + " k0=" + std::to_string(s.k0) + " n0=" + std::to_string(s.n0) +
                     " n1=" + std::to_string(s.n1));
  }
  Problem b = batched_shape(ws_rows / 2 + 33, 128, 64, 128);  // 3 batches: the work crosses batches mid-CTA
  check_f16_paths(b, {Path::RegisterSm90}, "ws fp16 batched", rng);
  b.stride_a0 = b.stride_b0 = 0;  // one A0 and one B0 for every batch (batch strides 0)
  check_f16_paths(b, {Path::RegisterSm90}, "ws fp16 batched, A0 and B0 shared", rng);
  Problem g = grouped_shape(64, 128, 64);
  g.group_m = {100, 1, 0, ws_rows + 257, 64};
  check_f16_paths(g, {Path::RegisterSm90}, "ws fp16 grouped", rng);
  for (S s : {S{ws_rows + 77, 576, 64, 256, 1}, S{ws_rows + 3, 128, 64, 128, 0}}) {  // (int8 n0 = 128: one CTA a tile)
    Problem p = shape(s.m, s.k0, s.n0, s.n1);
    p.type = DataType::S8;
    p.beta1 = s.beta1;
    p.alpha0 = 1.0f / 256, p.alpha1 = 1.0f / 256;
    const DataT<int8_t> d = make_data_s8(p, p.m, rng);
    std::vector<int8_t> want(size_t(p.m) * p.n1);
    reference_s8(p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
    expect_equal_s8(run_gpu(p, d, p.m, Path::RegisterSm90), want,
                    "ws int8 m=" + std::to_string(s.m) + " k0=" + std::to_string(s.k0) + " n0=" + std::to_string(s.n0));
  }
}

TEST_F(GpuB2b, RejectsWhatItCannotRun) {
  Plan plan;
  std::string why;
  EXPECT_EQ(ozgemm::b2b::plan(handle().get(), shape(100, 64, 96, 64), options_of(Path::Shared), &plan, &why),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(why.find("n0"), std::string::npos) << why;
  EXPECT_EQ(ozgemm::b2b::plan(nullptr, shape(100, 64, 64, 64), options_of(Path::Shared), &plan), OZGEMM_STATUS_NOT_INITIALIZED);
  ASSERT_EQ(ozgemm::b2b::plan(handle().get(), shape(100, 64, 64, 64), options_of(Path::Shared), &plan), OZGEMM_STATUS_SUCCESS);
  Arguments a;  // null pointers
  EXPECT_EQ(ozgemm::b2b::run(handle().get(), plan, shape(100, 64, 64, 64), a, nullptr, 0), OZGEMM_STATUS_INVALID_VALUE);
  // A grouped problem's plan cannot run a non-grouped problem.
  ASSERT_EQ(ozgemm::b2b::plan(handle().get(), oztest::grouped_shape(64, 64, 64), options_of(Path::Shared), &plan),
            OZGEMM_STATUS_SUCCESS);
  alignas(16) int dummy[4] = {};
  a.a0 = a.b0 = a.b1 = dummy;
  a.d1 = dummy;
  EXPECT_EQ(ozgemm::b2b::run(handle().get(), plan, shape(100, 64, 64, 64), a, nullptr, 0), OZGEMM_STATUS_INVALID_VALUE);
}

// Operands the kernels read or write in 16-byte vectors must start on 16 bytes: a clear refusal,
// not a misaligned-address fault. The same pointers, aligned, run.
TEST_F(GpuB2b, RefusesMisalignedOperands) {
  Problem p = shape(100, 64, 64, 64);
  p.beta1 = 1.0f;  // C1 is read
  Plan plan;
  ASSERT_EQ(ozgemm::b2b::plan(handle().get(), p, options_of(Path::Register), &plan), OZGEMM_STATUS_SUCCESS);
  char* base = nullptr;
  ASSERT_EQ(cudaMalloc(&base, 5 * 16384), cudaSuccess);  // a0 (12.5 KB), b0, b1, d1, c1 (8-12.5 KB each)
  ASSERT_EQ(cudaMemset(base, 0, 5 * 16384), cudaSuccess);
  // Operand i at base + i 16 KB, or 2 bytes (one fp16 element) further for the one named `shifted`.
  const auto args = [&](int shifted) {
    Arguments a;
    const auto at = [&](int i) { return base + i * 16384 + (i == shifted ? 2 : 0); };
    a.a0 = at(0);
    a.b0 = at(1);
    a.b1 = at(2);
    a.d1 = at(3);
    a.c1 = at(4);
    return a;
  };
  EXPECT_EQ(ozgemm::b2b::run(handle().get(), plan, p, args(-1), nullptr, 0), OZGEMM_STATUS_SUCCESS);
  for (int shifted = 0; shifted < 5; ++shifted)
    EXPECT_EQ(ozgemm::b2b::run(handle().get(), plan, p, args(shifted), nullptr, 0), OZGEMM_STATUS_INVALID_VALUE)
        << "operand " << shifted;
  // With beta1 = 0, C1 is never read: its alignment does not matter.
  Problem q = p;
  q.beta1 = 0.0f;
  ASSERT_EQ(ozgemm::b2b::plan(handle().get(), q, options_of(Path::Register), &plan), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(ozgemm::b2b::run(handle().get(), plan, q, args(4), nullptr, 0), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaFree(base);
}

// ---- Convolution pairs ----

// Every path on a convolution pair: each one the planner takes must equal the host reference
// bit for bit; only the Hopper kernel may refuse, for a documented reason (its c, n0 or the
// device), never silently.
template <class E>
void check_conv_paths(const Problem& p, const DataT<E>& d, const std::vector<E>& want, const std::string& what) {
  for (Path path : {Path::Register, Path::Shared, Path::Unfused, Path::RegisterSm90, Path::RegisterAuto}) {
    Plan plan;
    std::string why;
    const ozgemmStatus_t st = ozgemm::b2b::plan(handle().get(), p, options_of(path), &plan, &why);
    if (st != OZGEMM_STATUS_SUCCESS) {
      const bool documented = path == Path::RegisterSm90 && (st == OZGEMM_STATUS_NOT_SUPPORTED ||
                                                             why.find("Hopper b2b kernel") != std::string::npos);
      EXPECT_TRUE(documented) << what << " path " << path_name(path) << ": unexpected refusal: " << why;
      std::cout << "[ note     ] " << what << " path " << path_name(path) << " refused: " << why << std::endl;
      continue;
    }
    if (path == Path::RegisterSm90) std::cout << "[ note     ] " << what << ": the Hopper kernel ran" << std::endl;
    const std::vector<E> got = run_gpu(p, d, p.m, path);
    if constexpr (sizeof(E) == 2)
      expect_equal(got, want, what + " path " + path_name(path));
    else
      expect_equal_s8(got, want, what + " path " + path_name(path));
  }
}

struct ConvCase {
  Conv x;
  int64_t n0, n1;
  float alpha0, alpha1, beta1;
};
std::string conv_name(const ConvCase& c) {
  return "conv n=" + std::to_string(c.x.n) + " h=" + std::to_string(c.x.h) + " w=" + std::to_string(c.x.w) +
         " c=" + std::to_string(c.x.c) + " r=" + std::to_string(c.x.r) + " -> " + std::to_string(c.n0) + " -> " +
         std::to_string(c.n1);
}

// fp16 integer inputs: partial tiles (m = 126, 255), a single pixel (every tap but the centre is
// padding), r = 1, 3, 5, 7, channel counts the Hopper kernel takes (64, 128) and does not (32, 96),
// n0 = 256, beta1 != 0, CUTLASS example 13's geometry for one image.
TEST_F(GpuB2b, ConvPairsExactOnEveryPath) {
  for (const ConvCase& c : {ConvCase{Conv{2, 7, 9, 64, 3}, 64, 128, 0.25f, 0.125f, 0},
                            ConvCase{Conv{1, 1, 1, 32, 3}, 64, 64, 1, 1, 1},
                            ConvCase{Conv{3, 17, 5, 128, 5}, 128, 256, 0.125f, 0.0625f, 0.5f},
                            ConvCase{Conv{2, 30, 30, 64, 1}, 256, 64, 0.25f, 0.125f, 0},
                            ConvCase{Conv{2, 12, 11, 96, 7}, 128, 128, 0.0625f, 0.125f, 1},
                            ConvCase{Conv{1, 56, 56, 64, 3}, 64, 256, 0.25f, 0.125f, 0},
                            ConvCase{Conv{1, 9, 13, 64, 3}, 384, 128, 0.25f, 0.0625f, 0},
                            ConvCase{Conv{2, 11, 13, 64, 3}, 256, 256, 0.125f, 0.0625f, 0.5f}}) {
    Problem p = conv_pair(DataType::F16, c.x, c.n0, c.n1);
    p.alpha0 = c.alpha0;
    p.alpha1 = c.alpha1;
    p.beta1 = c.beta1;
    const Data d = make_data(p, p.m, true, rng);
    std::vector<uint16_t> want(size_t(p.m) * p.n1);
    reference(p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
    int64_t nonzero = 0;
    for (uint16_t v : want) nonzero += v != 0 && v != 0x8000;
    EXPECT_GT(nonzero, int64_t(want.size()) / 8) << conv_name(c) << ": mostly zeros would check little";
    check_conv_paths(p, d, want, "fp16 " + conv_name(c));
  }
}

TEST_F(GpuB2b, Int8ConvPairsExactOnEveryPath) {
  for (const ConvCase& c : {ConvCase{Conv{2, 7, 9, 64, 3}, 64, 128, 1.0f / 1024, 1.0f / 512, 0},
                            ConvCase{Conv{1, 1, 1, 64, 7}, 128, 64, 1.0f / 128, 1.0f / 256, 1},
                            ConvCase{Conv{3, 17, 5, 128, 5}, 256, 256, 1.0f / 2048, 1.0f / 700, 0.25f},
                            ConvCase{Conv{2, 30, 30, 64, 1}, 64, 64, 1.0f / 128, 1.0f / 300, 0},
                            ConvCase{Conv{2, 7, 9, 64, 3}, 512, 256, 1.0f / 1024, 1.0f / 4096, 0}}) {
    Problem p = conv_pair(DataType::S8, c.x, c.n0, c.n1);
    p.alpha0 = c.alpha0;
    p.alpha1 = c.alpha1;
    p.beta1 = c.beta1;
    p.relu1 = c.beta1 == 0;
    const DataT<int8_t> d = make_data_s8(p, p.m, rng);
    std::vector<int8_t> want(size_t(p.m) * p.n1);
    reference_s8(p, d.a0.data(), d.b0.data(), d.bias.data(), d.b1.data(), d.c1.data(), want.data());
    check_conv_paths(p, d, want, "int8 " + conv_name(c));
  }
}

TEST_F(GpuB2b, ConvPairRefusals) {
  Plan plan;
  std::string why;
  // c = 48 fp16 is 96 bytes: a 64-byte k-chunk would straddle two taps.
  EXPECT_EQ(ozgemm::b2b::plan(handle().get(), conv_pair(DataType::F16, Conv{1, 8, 8, 48, 3}, 64, 64),
                              options_of(Path::Shared), &plan, &why),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(why.find("multiple of 32"), std::string::npos) << why;
  Problem batched = conv_pair(DataType::F16, Conv{1, 8, 8, 64, 3}, 64, 64);
  batched.batch = 2;
  EXPECT_EQ(ozgemm::b2b::plan(handle().get(), batched, options_of(Path::Unfused), &plan, &why),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(why.find("batched over n"), std::string::npos) << why;
}

}  // namespace
