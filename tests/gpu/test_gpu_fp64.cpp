// GPU tests of FP64 accuracy mode (the library's default): the count the GPU chooses from the data,
// and the bound it reports, equal the host reference's decision (ref::decide_slices, and for
// Ozaki-II ref::decide_moduli) bit for bit;
// the result at that count equals the host reference at that count bit for bit; where FP64 mode
// falls back, the result is native cuBLAS DGEMM's bits. Skipped visibly without a GPU.
#include <gtest/gtest.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <iostream>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu_test_util.hpp"
#include "ozgemm/ozgemm.hpp"
#include "ozgemm/reference/accuracy.hpp"
#include "ozgemm/reference/ozaki2.hpp"
#include "ozgemm/reference/reference.hpp"

using ozgemm::Op;
namespace ref = ozgemm::ref;

namespace {

using oztest::same_bits;

struct Dev {
  double* p = nullptr;
  explicit Dev(const std::vector<double>& v) {
    EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(1, v.size()) * 8), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p, v.data(), v.size() * 8, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~Dev() { cudaFree(p); }
  std::vector<double> get(size_t n) const {
    std::vector<double> v(n);
    EXPECT_EQ(cudaMemcpy(v.data(), p, n * 8, cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }
};

// C = A B (column-major, tight) through `h`; returns C and the call's info.
std::vector<double> run(ozgemmHandle_t h, int m, int n, int k, const std::vector<double>& A, const std::vector<double>& B,
                        ozgemmCallInfo_t* info) {
  Dev dA(A), dB(B), dC(std::vector<double>(size_t(m) * n, std::nan("")));
  const double one = 1.0, zero = 0.0;
  EXPECT_EQ(ozgemmDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA.p, m, dB.p, k, &zero, dC.p, m),
            OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(ozgemmGetLastCallInfo(h, info), OZGEMM_STATUS_SUCCESS);
  return dC.get(size_t(m) * n);
}

std::vector<double> native(int m, int n, int k, const std::vector<double>& A, const std::vector<double>& B) {
  Dev dA(A), dB(B), dC(std::vector<double>(size_t(m) * n, 0.0));
  cublasHandle_t cb;
  EXPECT_EQ(cublasCreate(&cb), CUBLAS_STATUS_SUCCESS);
  const double one = 1.0, zero = 0.0;
  EXPECT_EQ(cublasDgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA.p, m, dB.p, k, &zero, dC.p, m),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cublasDestroy(cb);
  return dC.get(size_t(m) * n);
}

struct Input {
  std::string name;
  std::vector<double> A, B;
};

std::vector<Input> inputs(int m, int n, int k, std::mt19937_64& rng) {
  std::vector<Input> v;
  for (double phi : {-1.0, 0.0, 0.5, 1.0, 2.0, 4.0})
    v.push_back({"phi=" + std::to_string(phi), ref::random_matrix(m, k, phi, rng), ref::random_matrix(k, n, phi, rng)});
  Input d{"dominant", ref::random_matrix(m, k, -1.0, rng), ref::random_matrix(k, n, -1.0, rng)};
  for (int r = 0; r < m; ++r) d.A[size_t(r + (r % k) * m)] = 1e6;
  v.push_back(d);
  Input x{"mixed 2^+-500", ref::random_matrix(m, k, 0.5, rng), ref::random_matrix(k, n, 0.5, rng)};
  std::uniform_int_distribution<int> e(-500, 500);
  for (auto& a : x.A) a = std::ldexp(a, e(rng));
  v.push_back(x);
  Input i{"integers", std::vector<double>(size_t(m) * k), std::vector<double>(size_t(k) * n)};
  ref::fill_integers(i.A.data(), m, k, m, 1000, rng);
  ref::fill_integers(i.B.data(), k, n, k, 1000, rng);
  v.push_back(i);
  return v;
}

class GpuFp64 : public ::testing::TestWithParam<ozgemmVariant_t> {
 protected:
  void SetUp() override {
    OZTEST_REQUIRE_GPU();
    ASSERT_EQ(ozgemmCreate(&h_), OZGEMM_STATUS_SUCCESS);
    ozgemmAccuracy_t a;
    ASSERT_EQ(ozgemmGetAccuracy(h_, &a), OZGEMM_STATUS_SUCCESS);
    ASSERT_EQ(a, OZGEMM_ACCURACY_FP64) << "FP64 is the default";
    ozgemmScheme_t scheme;
    ASSERT_EQ(ozgemmGetScheme(h_, &scheme), OZGEMM_STATUS_SUCCESS);
    ASSERT_EQ(scheme, OZGEMM_SCHEME_AUTO) << "AUTO is the default";
    ASSERT_EQ(ozgemmSetScheme(h_, scheme_), OZGEMM_STATUS_SUCCESS);
    const ozgemmStatus_t st = ozgemmSetVariant(h_, GetParam());
    if (st == OZGEMM_STATUS_NOT_SUPPORTED) GTEST_SKIP() << ozgemmGetVariantString(GetParam()) << " is not available here";
    ASSERT_EQ(st, OZGEMM_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (h_) ozgemmDestroy(h_);
  }
  ozgemmHandle_t h_ = nullptr;
  ozgemmScheme_t scheme_ = OZGEMM_SCHEME_OZAKI1;  // these tests: Ozaki-I's decision
  std::mt19937_64 rng = oztest::test_rng();
};

TEST_P(GpuFp64, DecisionAndResultEqualTheHostReference) {
  for (auto [m, n, k] : {std::tuple<int, int, int>{200, 150, 700}, {33, 17, 2000}, {130, 260, 129}}) {
    for (const Input& in : inputs(m, n, k, rng)) {
      const std::string what = in.name + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      const ref::AccuracyDecision d = ref::decide_slices(Op::N, Op::N, m, n, k, in.A.data(), m, in.B.data(), k);
      ozgemmCallInfo_t info{};
      const std::vector<double> C = run(h_, m, n, k, in.A, in.B, &info);
      std::vector<double> want;
      if (info.fell_back) {
        // The device may also fall back because the emulation is slower here (AUTO); never when the
        // host says no count meets the bound but the GPU emulated.
        EXPECT_EQ(info.variant, OZGEMM_VARIANT_NATIVE) << what;
        EXPECT_EQ(info.slices, 0) << what;
        if (GetParam() != OZGEMM_VARIANT_AUTO) {
          EXPECT_EQ(d.slices, 0) << what << ": " << info.reason;
        }
        want = native(m, n, k, in.A, in.B);
      } else {
        ASSERT_EQ(info.slices, d.slices) << what << ": " << info.reason;
        EXPECT_TRUE(same_bits(info.bound, d.bound)) << what << ": GPU bound " << info.bound << " host " << d.bound;
        EXPECT_LE(info.bound, info.target) << what;
        want.assign(size_t(m) * n, std::nan(""));
        ref::ozaki_dgemm(Op::N, Op::N, m, n, k, 1.0, in.A.data(), m, in.B.data(), k, 0.0, want.data(), m, d.slices);
      }
      int64_t bad = 0;
      for (size_t i = 0; i < C.size(); ++i)
        if (!same_bits(C[i], want[i]) && bad++ < 3)
          ADD_FAILURE() << what << " entry " << i << ": " << C[i] << " vs " << want[i] << " (" << info.reason << ")";
      EXPECT_EQ(bad, 0) << what;
      std::cout << "[ fp64     ] " << ozgemmGetVariantString(GetParam()) << " " << what << ": " << info.reason << std::endl;
    }
  }
}

// Past DecisionPolicy::kOz2SampleMinRows rows the decision samples the leading block first; Ozaki-I's
// bound there (a variant set explicitly keeps Ozaki-I a candidate) ends the decision where an entry of
// the block needs more than kMaxSlices slices. The chosen count and bound still equal the host
// reference's bit for bit; rows of wide-range entries (2^+-500) first (the sample rules Ozaki-I out)
// or last (only the full pass can).
TEST_P(GpuFp64, SampledDecisionEqualsTheHostReference) {
  const int m = 2560, n = 1024, k = 512;  // k: the sample's rows and columns split over l (row_stats_split.cuh)
  std::uniform_int_distribution<int> e(-500, 500);
  int sample_ended = 0;
  for (int rows_at : {-1, 0, m - 64}) {  // -1: no wide rows
    Input in{"phi=0.5", ref::random_matrix(m, k, 0.5, rng), ref::random_matrix(k, n, 0.5, rng)};
    if (rows_at >= 0) {
      in.name += ", wide rows from " + std::to_string(rows_at);
      for (int64_t r = rows_at; r < rows_at + 64; ++r)
        for (int64_t l = 0; l < k; ++l) in.A[size_t(r + l * m)] = std::ldexp(in.A[size_t(r + l * m)], e(rng));
    }
    const ref::AccuracyDecision d = ref::decide_slices(Op::N, Op::N, m, n, k, in.A.data(), m, in.B.data(), k);
    ozgemmCallInfo_t info{};
    run(h_, m, n, k, in.A, in.B, &info);
    std::cout << "[ fp64     ] " << ozgemmGetVariantString(GetParam()) << " " << in.name << ": host " << d.slices
              << " slices; GPU: " << info.reason << std::endl;
    if (GetParam() == OZGEMM_VARIANT_AUTO && info.fell_back) continue;  // AUTO may prefer native DGEMM here
    EXPECT_EQ(info.slices, d.slices) << in.name << ": " << info.reason;
    if (info.fell_back) {
      const bool in_sample = std::string(info.reason).find("on the leading") != std::string::npos;
      EXPECT_EQ(in_sample, rows_at == 0) << in.name << ": " << info.reason;
      sample_ended += in_sample;
    } else {
      EXPECT_TRUE(same_bits(info.bound, d.bound)) << in.name << ": GPU bound " << info.bound << " host " << d.bound;
    }
  }
  if (GetParam() != OZGEMM_VARIANT_AUTO) {
    EXPECT_EQ(sample_ended, 1);
  }
}

TEST_P(GpuFp64, PlanCallTellsWhatTheCallRuns) {
  const int m = 120, n = 90, k = 400;
  const auto A = ref::random_matrix(m, k, 0.5, rng), B = ref::random_matrix(k, n, 0.5, rng);
  Dev dA(A), dB(B);
  ozgemmCallInfo_t planned{}, ran{};
  ASSERT_EQ(ozgemmPlanCall(h_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, dA.p, m, dB.p, k, &planned), OZGEMM_STATUS_SUCCESS);
  run(h_, m, n, k, A, B, &ran);
  EXPECT_EQ(planned.variant, ran.variant);
  EXPECT_EQ(planned.slices, ran.slices);
  EXPECT_TRUE(same_bits(planned.bound, ran.bound));
  EXPECT_STREQ(planned.reason, ran.reason);
}

TEST_P(GpuFp64, UserWorkspaceOfTheQueriedSizeSuffices) {
  const int m = 100, n = 80, k = 300;
  const auto A = ref::random_matrix(m, k, -1.0, rng), B = ref::random_matrix(k, n, -1.0, rng);
  size_t need = 0;
  ASSERT_EQ(ozgemmGetWorkspaceSize(h_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &need), OZGEMM_STATUS_SUCCESS);
  void* ws = nullptr;
  ASSERT_EQ(cudaMalloc(&ws, std::max<size_t>(need, 256)), cudaSuccess);
  ASSERT_EQ(ozgemmSetWorkspace(h_, ws, need), OZGEMM_STATUS_SUCCESS);
  ozgemmCallInfo_t info{};
  run(h_, m, n, k, A, B, &info);
  ozgemmSetWorkspace(h_, nullptr, 0);
  cudaFree(ws);
}

INSTANTIATE_TEST_SUITE_P(Variants, GpuFp64,
                         ::testing::Values(OZGEMM_VARIANT_AUTO, OZGEMM_VARIANT_UNFUSED, OZGEMM_VARIANT_PARTIALLY_FUSED),
                         [](const ::testing::TestParamInfo<ozgemmVariant_t>& i) {
                           return i.param == OZGEMM_VARIANT_AUTO       ? std::string("Auto")
                                  : i.param == OZGEMM_VARIANT_UNFUSED ? std::string("Unfused")
                                                                       : std::string("PartiallyFused");
                         });

// FP64 mode with Ozaki-II (scheme OZAKI2) and with the scheme chosen (AUTO): the moduli count and its
// bound equal the host reference's decision (ref::decide_moduli) bit for bit, and the result equals
// the host reference of the scheme that ran.
class GpuFp64Schemes : public ::testing::TestWithParam<ozgemmScheme_t> {
 protected:
  void SetUp() override {
    OZTEST_REQUIRE_GPU();
    ASSERT_EQ(ozgemmCreate(&h_), OZGEMM_STATUS_SUCCESS);
    ASSERT_EQ(ozgemmSetScheme(h_, GetParam()), OZGEMM_STATUS_SUCCESS);
    ASSERT_EQ(ozgemmSetVariant(h_, OZGEMM_VARIANT_UNFUSED), OZGEMM_STATUS_SUCCESS);  // past AUTO's speed rules
  }
  void TearDown() override {
    if (h_) ozgemmDestroy(h_);
  }
  ozgemmHandle_t h_ = nullptr;
  std::mt19937_64 rng = oztest::test_rng();
};

TEST_P(GpuFp64Schemes, DecisionAndResultEqualTheHostReference) {
  int ozaki2_runs = 0;
  for (auto [m, n, k] : {std::tuple<int, int, int>{200, 150, 700}, {33, 17, 2000}, {130, 260, 129}}) {
    for (const Input& in : inputs(m, n, k, rng)) {
      const std::string what = in.name + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      const ref::Ozaki2Decision d2 = ref::decide_moduli(Op::N, Op::N, m, n, k, in.A.data(), m, in.B.data(), k);
      const ref::AccuracyDecision d1 = ref::decide_slices(Op::N, Op::N, m, n, k, in.A.data(), m, in.B.data(), k);
      ozgemmCallInfo_t info{};
      const std::vector<double> C = run(h_, m, n, k, in.A, in.B, &info);
      std::vector<double> want(size_t(m) * n, std::nan(""));
      if (info.fell_back) {
        EXPECT_EQ(info.variant, OZGEMM_VARIANT_NATIVE) << what;
        EXPECT_EQ(d2.moduli, 0) << what << ": " << info.reason;
        if (GetParam() == OZGEMM_SCHEME_AUTO) {
          EXPECT_EQ(d1.slices, 0) << what << ": " << info.reason;
        }
        want = native(m, n, k, in.A, in.B);
      } else if (info.scheme == OZGEMM_SCHEME_OZAKI2) {
        ++ozaki2_runs;
        ASSERT_EQ(info.moduli, d2.moduli) << what << ": " << info.reason;
        EXPECT_EQ(info.variant, OZGEMM_VARIANT_UNFUSED) << what;
        EXPECT_TRUE(same_bits(info.bound, d2.bound)) << what << ": GPU bound " << info.bound << " host " << d2.bound;
        EXPECT_LE(info.bound, info.target) << what;
        ref::ozaki2_dgemm(Op::N, Op::N, m, n, k, 1.0, in.A.data(), m, in.B.data(), k, 0.0, want.data(), m, d2.moduli);
      } else {
        ASSERT_EQ(GetParam(), OZGEMM_SCHEME_AUTO) << what << ": scheme OZAKI2 ran Ozaki-I";
        ASSERT_EQ(info.slices, d1.slices) << what << ": " << info.reason;
        EXPECT_TRUE(same_bits(info.bound, d1.bound)) << what;
        // Ozaki-I at 7 or more slices (28+ products) never wins against Ozaki-II at <= 20 moduli.
        if (d2.moduli > 0) {
          EXPECT_LT(d1.slices, 7) << what << ": " << info.reason;
        }
        ref::ozaki_dgemm(Op::N, Op::N, m, n, k, 1.0, in.A.data(), m, in.B.data(), k, 0.0, want.data(), m, d1.slices);
      }
      int64_t bad = 0;
      for (size_t i = 0; i < C.size(); ++i)
        if (!same_bits(C[i], want[i]) && bad++ < 3)
          ADD_FAILURE() << what << " entry " << i << ": " << C[i] << " vs " << want[i] << " (" << info.reason << ")";
      EXPECT_EQ(bad, 0) << what;
      std::cout << "[ fp64     ] scheme " << int(GetParam()) << " " << what << ": " << info.reason << std::endl;
    }
  }
  EXPECT_GT(ozaki2_runs, 0) << "the phi inputs take Ozaki-II";
}

// The bound pass over thousands of blocks, where blocks skip the counts that earlier blocks found
// past the target (result->oz2_dead), and (m >= DecisionPolicy::kOz2SampleMinRows)
// the sample of the first rows that ends the decision when no count can meet the target (scheme
// AUTO with the variant set: both schemes' bounds in that one sample pass): the chosen count and
// its bound still equal the host reference's, bit for bit, whichever scheme ran. Rows of large entries
// at the end of A (outside the sample), or small first columns of B, so the entries that kill the
// smaller counts lie in different places.
TEST_P(GpuFp64Schemes, DecisionOverManyBlocksEqualsTheHostReference) {
  const int m = 2560, n = 1024, k = 256;
  int ozaki2_runs = 0, ozaki1_runs = 0;
  for (const Input& in0 : inputs(m, n, k, rng)) {
    if (in0.name == "integers") continue;  // few moduli: nothing to skip
    for (int order = 0; order < 2; ++order) {
      Input in = in0;
      for (int64_t r = m - 64; r < m && order == 0; ++r)
        for (int64_t l = 0; l < k; ++l) in.A[size_t(r + l * m)] = std::ldexp(in.A[size_t(r + l * m)], 40);
      for (int64_t c = 0; c < 64 && order == 1; ++c)
        for (int64_t l = 0; l < k; ++l) in.B[size_t(l + c * k)] = std::ldexp(in.B[size_t(l + c * k)], -40);
      const std::string what = in.name + (order ? " (small first columns)" : " (large last rows)");
      const ref::Ozaki2Decision d2 = ref::decide_moduli(Op::N, Op::N, m, n, k, in.A.data(), m, in.B.data(), k);
      ozgemmCallInfo_t info{};
      run(h_, m, n, k, in.A, in.B, &info);
      std::cout << "[ fp64     ] " << what << ": host " << d2.moduli << " moduli, bound " << d2.bound << "; GPU: "
                << info.reason << std::endl;
      if (info.fell_back) {
        EXPECT_EQ(d2.moduli, 0) << what << ": " << info.reason;
        continue;
      }
      if (info.scheme != OZGEMM_SCHEME_OZAKI2) {
        // Scheme AUTO with the variant set: the sample evaluated both schemes' bounds in one pass
        // (Ozaki-I's from one slice up), then Ozaki-I ran; its count and bound are the host's.
        ASSERT_EQ(GetParam(), OZGEMM_SCHEME_AUTO) << what << ": scheme OZAKI2 ran Ozaki-I";
        const ref::AccuracyDecision d1 = ref::decide_slices(Op::N, Op::N, m, n, k, in.A.data(), m, in.B.data(), k);
        EXPECT_EQ(info.slices, d1.slices) << what << ": " << info.reason;
        EXPECT_TRUE(same_bits(info.bound, d1.bound)) << what << ": GPU bound " << info.bound << " host " << d1.bound;
        ++ozaki1_runs;
        continue;
      }
      ++ozaki2_runs;
      EXPECT_EQ(info.moduli, d2.moduli) << what << ": " << info.reason;
      EXPECT_TRUE(same_bits(info.bound, d2.bound)) << what << ": GPU bound " << info.bound << " host " << d2.bound;
    }
  }
  EXPECT_GT(ozaki2_runs, 2);
  std::cout << "[ fp64     ] scheme " << int(GetParam()) << ": " << ozaki2_runs << " Ozaki-II runs, " << ozaki1_runs
            << " Ozaki-I runs" << std::endl;
}

TEST_P(GpuFp64Schemes, PlanCallAndWorkspaceQueryMatchTheCall) {
  const int m = 120, n = 90, k = 400;
  const auto A = ref::random_matrix(m, k, 0.5, rng), B = ref::random_matrix(k, n, 0.5, rng);
  Dev dA(A), dB(B);
  size_t need = 0;
  ASSERT_EQ(ozgemmGetWorkspaceSize(h_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &need), OZGEMM_STATUS_SUCCESS);
  void* ws = nullptr;
  ASSERT_EQ(cudaMalloc(&ws, std::max<size_t>(need, 256)), cudaSuccess);
  ASSERT_EQ(ozgemmSetWorkspace(h_, ws, need), OZGEMM_STATUS_SUCCESS);
  ozgemmCallInfo_t planned{}, ran{};
  ASSERT_EQ(ozgemmPlanCall(h_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, dA.p, m, dB.p, k, &planned), OZGEMM_STATUS_SUCCESS);
  run(h_, m, n, k, A, B, &ran);
  EXPECT_EQ(planned.scheme, ran.scheme);
  EXPECT_EQ(planned.moduli, ran.moduli);
  EXPECT_EQ(planned.slices, ran.slices);
  EXPECT_TRUE(same_bits(planned.bound, ran.bound));
  EXPECT_STREQ(planned.reason, ran.reason);
  EXPECT_EQ(ran.scheme, OZGEMM_SCHEME_OZAKI2) << ran.reason;
  ozgemmSetWorkspace(h_, nullptr, 0);
  cudaFree(ws);
}

INSTANTIATE_TEST_SUITE_P(Schemes, GpuFp64Schemes, ::testing::Values(OZGEMM_SCHEME_OZAKI2, OZGEMM_SCHEME_AUTO),
                         [](const ::testing::TestParamInfo<ozgemmScheme_t>& i) {
                           return i.param == OZGEMM_SCHEME_OZAKI2 ? std::string("Ozaki2") : std::string("Auto");
                         });

// FP64 mode with Ozaki-II only: FULLY_FUSED is refused (no such Ozaki-II variant); PARTIALLY_FUSED
// runs the Hopper products on a Hopper GPU (the host reference's bits at the chosen count) and is
// refused elsewhere. A moduli count selects FIXED mode.
TEST(GpuFp64Schemes, FusedVariantsWithOzaki2OnlyAndSetModuliSelectsFixed) {
  OZTEST_REQUIRE_GPU();
  ozgemmHandle_t h = nullptr;
  ASSERT_EQ(ozgemmCreate(&h), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(ozgemmSetScheme(h, OZGEMM_SCHEME_OZAKI2), OZGEMM_STATUS_SUCCESS);
  ozgemmAccuracy_t a;
  ASSERT_EQ(ozgemmGetAccuracy(h, &a), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(a, OZGEMM_ACCURACY_FP64) << "choosing the scheme keeps FP64 mode";
  ASSERT_EQ(ozgemmSetModuli(h, 12), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(ozgemmGetAccuracy(h, &a), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(a, OZGEMM_ACCURACY_FIXED) << "a moduli count is FIXED mode";
  ASSERT_EQ(ozgemmSetAccuracy(h, OZGEMM_ACCURACY_FP64), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(ozgemmSetScheme(h, static_cast<ozgemmScheme_t>(7)), OZGEMM_STATUS_INVALID_VALUE);
  const int m = 64, n = 64, k = 64;
  std::mt19937_64 rng = oztest::test_rng();
  const auto A = ref::random_matrix(m, k, 0.5, rng), B = ref::random_matrix(k, n, 0.5, rng);
  Dev dA(A), dB(B), dC(std::vector<double>(size_t(m) * n, std::nan("")));
  const double one = 1.0, zero = 0.0;
  if (ozgemmSetVariant(h, OZGEMM_VARIANT_FULLY_FUSED) == OZGEMM_STATUS_SUCCESS) {
    EXPECT_EQ(ozgemmDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA.p, m, dB.p, k, &zero, dC.p, m),
              OZGEMM_STATUS_NOT_SUPPORTED);
  }
  if (ozgemmSetVariant(h, OZGEMM_VARIANT_PARTIALLY_FUSED) == OZGEMM_STATUS_SUCCESS) {
    int dev = 0;
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
    ASSERT_EQ(cudaGetDeviceProperties(&prop, dev), cudaSuccess);
    const ozgemmStatus_t st = ozgemmDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA.p, m, dB.p, k, &zero, dC.p, m);
    if (prop.major == 9 && prop.minor == 0) {
      ASSERT_EQ(st, OZGEMM_STATUS_SUCCESS);
      ozgemmCallInfo_t info{};
      ASSERT_EQ(ozgemmGetLastCallInfo(h, &info), OZGEMM_STATUS_SUCCESS);
      ASSERT_EQ(info.scheme, OZGEMM_SCHEME_OZAKI2) << info.reason;
      EXPECT_EQ(info.variant, OZGEMM_VARIANT_PARTIALLY_FUSED) << info.reason;
      std::vector<double> host(size_t(m) * n, std::nan(""));
      ref::ozaki2_dgemm(Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, host.data(), m, info.moduli);
      const std::vector<double> gpu = dC.get(host.size());
      int64_t bad = 0;
      for (size_t i = 0; i < host.size(); ++i) bad += !same_bits(host[i], gpu[i]);
      EXPECT_EQ(bad, 0) << info.reason;
    } else {
      EXPECT_EQ(st, OZGEMM_STATUS_NOT_SUPPORTED) << "the Hopper products elsewhere";
    }
  }
  ozgemmDestroy(h);
}

// The library's defaults (FP64 mode, scheme and variant AUTO) on Hopper with the fused products:
// on a shape of auto_rules.cpp's measured rule (8192^3) FP64 mode takes Ozaki-II partially fused,
// with the bits of FIXED mode at the chosen count (FIXED Ozaki-II equals the host reference:
// test_gpu_ozaki2); outside it (4096^3) native DGEMM runs without the decision, saying why.
TEST(GpuFp64Auto, HopperTakesOzaki2WhereTheRuleSaysAndNativeElsewhere) {
  OZTEST_REQUIRE_GPU();
  int dev = 0;
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaGetDeviceProperties(&prop, dev), cudaSuccess);
  if (!(prop.major == 9 && prop.minor == 0)) GTEST_SKIP() << "the rule is Hopper's; this GPU is " << prop.name;
  ozgemmHandle_t h = nullptr, fixed = nullptr;
  ASSERT_EQ(ozgemmCreate(&h), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(ozgemmCreate(&fixed), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(ozgemmSetScheme(fixed, OZGEMM_SCHEME_OZAKI2), OZGEMM_STATUS_SUCCESS);
  if (ozgemmSetVariant(fixed, OZGEMM_VARIANT_PARTIALLY_FUSED) != OZGEMM_STATUS_SUCCESS) {
    ozgemmDestroy(h);
    ozgemmDestroy(fixed);
    GTEST_SKIP() << "this build has no Hopper products";
  }
  std::mt19937_64 rng = oztest::test_rng();
  {
    const int n = 8192;
    const auto A = ref::random_matrix(n, n, 0.5, rng), B = ref::random_matrix(n, n, 0.5, rng);
    ozgemmCallInfo_t info{}, info_fixed{};
    const std::vector<double> C = run(h, n, n, n, A, B, &info);
    ASSERT_EQ(info.scheme, OZGEMM_SCHEME_OZAKI2) << info.reason;
    ASSERT_EQ(info.variant, OZGEMM_VARIANT_PARTIALLY_FUSED) << info.reason;
    EXPECT_EQ(info.fell_back, 0) << info.reason;
    EXPECT_GT(info.moduli, 0);
    EXPECT_LE(info.bound, info.target) << info.reason;
    ASSERT_EQ(ozgemmSetModuli(fixed, info.moduli), OZGEMM_STATUS_SUCCESS);
    const std::vector<double> Cf = run(fixed, n, n, n, A, B, &info_fixed);
    EXPECT_EQ(info_fixed.moduli, info.moduli);
    int64_t bad = 0;
    for (size_t i = 0; i < C.size(); ++i) bad += !same_bits(C[i], Cf[i]);
    EXPECT_EQ(bad, 0) << info.reason;
    std::cout << "[ fp64     ] 8192^3 phi 0.5, defaults: " << info.reason << std::endl;
  }
  {
    const int n = 4096;
    const auto A = ref::random_matrix(n, n, 0.5, rng), B = ref::random_matrix(n, n, 0.5, rng);
    ozgemmCallInfo_t info{};
    const std::vector<double> C = run(h, n, n, n, A, B, &info);
    EXPECT_EQ(info.variant, OZGEMM_VARIANT_NATIVE) << info.reason;
    EXPECT_EQ(info.fell_back, 1);
    EXPECT_NE(std::string(info.reason).find("AUTO rules"), std::string::npos) << info.reason;
    const std::vector<double> want = native(n, n, n, A, B);
    int64_t bad = 0;
    for (size_t i = 0; i < C.size(); ++i) bad += !same_bits(C[i], want[i]);
    EXPECT_EQ(bad, 0) << info.reason;
    std::cout << "[ fp64     ] 4096^3 phi 0.5, defaults: " << info.reason << std::endl;
  }
  ozgemmDestroy(h);
  ozgemmDestroy(fixed);
}

TEST(GpuFp64Capture, GraphCaptureRunsNativeDgemm) {
  OZTEST_REQUIRE_GPU();
  ozgemmHandle_t h = nullptr;
  ASSERT_EQ(ozgemmCreate(&h), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(ozgemmSetVariant(h, OZGEMM_VARIANT_UNFUSED), OZGEMM_STATUS_SUCCESS);
  const int m = 64, n = 64, k = 64;
  std::mt19937_64 rng = oztest::test_rng();
  const auto A = ref::random_matrix(m, k, 0.5, rng), B = ref::random_matrix(k, n, 0.5, rng);
  Dev dA(A), dB(B), dC(std::vector<double>(size_t(m) * n, 0.0));
  cudaStream_t st;
  ASSERT_EQ(cudaStreamCreate(&st), cudaSuccess);
  ASSERT_EQ(ozgemmSetStream(h, st), OZGEMM_STATUS_SUCCESS);
  // Warm the native path (cuBLAS may allocate on first use, which capture forbids).
  const double one = 1.0, zero = 0.0;
  ASSERT_EQ(ozgemmSetVariant(h, OZGEMM_VARIANT_NATIVE), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(ozgemmDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA.p, m, dB.p, k, &zero, dC.p, m), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  ASSERT_EQ(ozgemmSetVariant(h, OZGEMM_VARIANT_UNFUSED), OZGEMM_STATUS_SUCCESS);
  cudaGraph_t graph;
  ASSERT_EQ(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_EQ(ozgemmDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA.p, m, dB.p, k, &zero, dC.p, m), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamEndCapture(st, &graph), cudaSuccess);
  ozgemmCallInfo_t info{};
  ASSERT_EQ(ozgemmGetLastCallInfo(h, &info), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(info.variant, OZGEMM_VARIANT_NATIVE);
  EXPECT_EQ(info.fell_back, 1);
  EXPECT_NE(std::string(info.reason).find("captured"), std::string::npos) << info.reason;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, st), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  const auto C = dC.get(size_t(m) * n), want = native(m, n, k, A, B);
  for (size_t i = 0; i < C.size(); ++i) ASSERT_TRUE(same_bits(C[i], want[i])) << i;
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  ozgemmDestroy(h);
  cudaStreamDestroy(st);
}

}  // namespace
