// GPU tests of the Ozaki scheme II (ozgemmSetScheme(OZGEMM_SCHEME_OZAKI2)), for each of its variants
// (unfused: cuBLASLt products; partially fused: the Hopper GEMM that reduces the products in its
// epilogue): bitwise equal to the host reference (ref::ozaki2_dgemm) across shapes (1x1x1, primes,
// tall, wide, k = 1, k past the int32 chunk), transposes, leading dimensions, alpha/beta, moduli
// counts, special values; exact on integers; chunked plans equal unchunked ones. Skipped visibly
// without a GPU, and the partially fused cases without a Hopper GPU and its kernels.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu_test_util.hpp"
#include "ozgemm/ozgemm.hpp"
#include "ozgemm/reference/ozaki2.hpp"
#include "ozgemm/reference/reference.hpp"
#include "api/testing.hpp"
#include "ozgemm/numerics/ozaki2.hpp"

using ozgemm::Op;
namespace ref = ozgemm::ref;

namespace {

using oztest::same_bits;

struct Case {
  Op ta = Op::N, tb = Op::N;
  int m = 1, n = 1, k = 1, pad = 0, moduli = 14;
  double alpha = 1.0, beta = 0.0, phi = 0.5;
  std::string describe() const {
    return std::string("ta=") + char(ta) + " tb=" + char(tb) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
           std::to_string(k) + " pad=" + std::to_string(pad) + " N=" + std::to_string(moduli) +
           " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta) + " phi=" + std::to_string(phi);
  }
};

class GpuOzaki2 : public ::testing::TestWithParam<ozgemmVariant_t> {
 protected:
  void SetUp() override {
    OZTEST_REQUIRE_GPU();
    h_.emplace();  // after the GPU check: creating a handle without a GPU throws
    ASSERT_EQ(ozgemmSetScheme(h(), OZGEMM_SCHEME_OZAKI2), OZGEMM_STATUS_SUCCESS);
    ASSERT_EQ(ozgemmSetModuli(h(), 14), OZGEMM_STATUS_SUCCESS);
    const ozgemmStatus_t st = ozgemmSetVariant(h(), GetParam());
    ozgemmVariant_t planned = OZGEMM_VARIANT_AUTO;
    if (st == OZGEMM_STATUS_SUCCESS) {
      ASSERT_NE(ozgemmGetPlannedVariant(h(), CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &planned), OZGEMM_STATUS_INVALID_VALUE);
    }
    if (st != OZGEMM_STATUS_SUCCESS || planned != GetParam())
      GTEST_SKIP() << "Ozaki-II's " << ozgemmGetVariantString(GetParam()) << " variant does not run here";
  }
  // What a call of k within one int32 chunk runs: the variant asked for.
  ozgemmVariant_t expected(int k) const {
    return k <= ozgemm::numerics::kOz2ChunkK ? GetParam() : OZGEMM_VARIANT_UNFUSED;
  }
  ozgemmHandle_t h() { return h_->get(); }
  // Runs the case on the GPU and through the host reference; the number of differing entries.
  int64_t check(const Case& c, std::vector<double>* A_in = nullptr, std::vector<double>* B_in = nullptr) {
    const int a_rows = c.ta == Op::N ? c.m : c.k, a_cols = c.ta == Op::N ? c.k : c.m;
    const int b_rows = c.tb == Op::N ? c.k : c.n, b_cols = c.tb == Op::N ? c.n : c.k;
    const int lda = std::max(1, a_rows + c.pad), ldb = std::max(1, b_rows + c.pad), ldc = std::max(1, c.m + c.pad);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> A(size_t(lda) * std::max(1, a_cols), nan), B(size_t(ldb) * std::max(1, b_cols), nan);
    ref::fill_phi(A.data(), a_rows, a_cols, lda, c.phi, rng_);
    ref::fill_phi(B.data(), b_rows, b_cols, ldb, c.phi, rng_);
    if (A_in) A = *A_in;
    if (B_in) B = *B_in;
    std::vector<double> C0(size_t(ldc) * std::max(1, c.n), c.beta == 0.0 ? nan : -7.25);
    if (c.beta != 0.0) ref::fill_phi(C0.data(), c.m, c.n, ldc, 0.5, rng_);
    std::vector<double> host = C0, gpu = C0;
    ref::ozaki2_dgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, A.data(), lda, B.data(), ldb, c.beta, host.data(), ldc, c.moduli);
    EXPECT_EQ(ozgemmSetModuli(h(), c.moduli), OZGEMM_STATUS_SUCCESS);
    ozgemm::dgemm_host_buffers(*h_, c.ta, c.tb, c.m, c.n, c.k, c.alpha, A.data(), lda, B.data(), ldb, c.beta, gpu.data(), ldc);
    ozgemmCallInfo_t info{};
    EXPECT_EQ(ozgemmGetLastCallInfo(h(), &info), OZGEMM_STATUS_SUCCESS);
    EXPECT_EQ(info.scheme, OZGEMM_SCHEME_OZAKI2) << c.describe();
    EXPECT_EQ(info.moduli, c.moduli) << c.describe();
    EXPECT_EQ(info.variant, expected(c.k)) << c.describe() << ": " << info.reason;
    int64_t bad = 0;
    for (size_t i = 0; i < host.size(); ++i)
      if (!same_bits(host[i], gpu[i]) && bad++ < 3)
        ADD_FAILURE() << c.describe() << ": entry " << i << " host " << host[i] << " gpu " << gpu[i];
    return bad;
  }
  std::optional<ozgemm::Handle> h_;
  std::mt19937_64 rng_ = oztest::test_rng();
};

TEST_P(GpuOzaki2, ShapesBitwiseEqualHost) {
  // Partial tiles of the fused kernel's 128 x 256 x 128 tiles in every mode, several tiles and
  // clusters in m and n, k below one k-tile, k = 1.
  const int shapes[][3] = {{1, 1, 1},     {17, 33, 9},    {997, 101, 1013}, {4000, 16, 700}, {16, 3000, 512},
                           {64, 40, 1},   {300, 7, 129},  {520, 780, 300},  {257, 513, 2049}};
  for (auto& s : shapes) {
    Case c;
    c.m = s[0];
    c.n = s[1];
    c.k = s[2];
    EXPECT_EQ(check(c), 0) << c.describe();
  }
}

// The wide counts (A' past int64, residues cut from the significand) over partial and whole tiles.
TEST_P(GpuOzaki2, WideCountsShapesBitwiseEqualHost) {
  const int shapes[][3] = {{1, 1, 1}, {997, 101, 1013}, {257, 513, 2049}};
  for (int moduli : {17, 19, 20})
    for (auto& s : shapes) {
      Case c;
      c.m = s[0];
      c.n = s[1];
      c.k = s[2];
      c.moduli = moduli;
      c.phi = 1.0;
      EXPECT_EQ(check(c), 0) << c.describe();
    }
}

TEST_P(GpuOzaki2, ModuliTransposesAlphaBetaAndPhi) {
  std::uniform_int_distribution<int> coin(0, 1);
  for (int moduli : {2, 5, 8, 11, 14, 16, 17, 18, 20})  // 17..20: A' past int64 (the wide residues)
    for (double phi : {-1.0, 0.5, 4.0}) {
      Case c;
      c.m = 131;
      c.n = 77;
      c.k = 203;
      c.pad = 5;
      c.moduli = moduli;
      c.phi = phi;
      c.ta = coin(rng_) ? Op::T : Op::N;
      c.tb = coin(rng_) ? Op::T : Op::N;
      c.alpha = coin(rng_) ? 1.0 : -0.5;
      c.beta = coin(rng_) ? 0.0 : 2.5;
      EXPECT_EQ(check(c), 0) << c.describe();
    }
}

TEST_P(GpuOzaki2, KPastTheInt32Chunk) {
  Case c;
  c.m = 20;
  c.n = 18;
  c.k = 131100;  // two k-chunks: the fused products take one, so this runs unfused (expected())
  c.moduli = 12;
  EXPECT_EQ(check(c), 0) << c.describe();
  ozgemmCallInfo_t info{};
  ASSERT_EQ(ozgemmGetLastCallInfo(h(), &info), OZGEMM_STATUS_SUCCESS);
  if (GetParam() == OZGEMM_VARIANT_PARTIALLY_FUSED) {
    EXPECT_NE(std::string(info.reason).find("ran unfused"), std::string::npos) << info.reason;
  }
}

// Chunks of C (planning as if the GPU had 2 GiB: the product planes' cap is 256 MiB, so 14 planes of
// 2000 x 12000 entries (336 MB as int8) take several column chunks) give the same bits as one chunk.
TEST_P(GpuOzaki2, ChunkedPlansEqualOneChunk) {
  const int m = 2000, n = 12000, k = 256;
  std::vector<double> A(size_t(m) * k), B(size_t(k) * n);
  ref::fill_phi(A.data(), m, k, m, 0.5, rng_);
  ref::fill_phi(B.data(), k, n, k, 0.5, rng_);
  std::vector<double> one(size_t(m) * n, std::nan("")), chunked(size_t(m) * n, -1.0);
  ozgemm::dgemm_host_buffers(*h_, Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, one.data(), m);
  ozgemm::testing::set_planning_memory(h(), int64_t(2) << 30);
  size_t small = 0, whole = 0;
  ASSERT_EQ(ozgemmGetWorkspaceSize(h(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &small), OZGEMM_STATUS_SUCCESS);
  ozgemm::dgemm_host_buffers(*h_, Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, chunked.data(), m);
  ozgemm::testing::set_planning_memory(h(), 0);
  ASSERT_EQ(ozgemmGetWorkspaceSize(h(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &whole), OZGEMM_STATUS_SUCCESS);
  EXPECT_LT(small, whole) << "the small plan must chunk";
  int64_t bad = 0;
  for (size_t i = 0; i < one.size(); ++i)
    if (!same_bits(one[i], chunked[i]) && bad++ < 3) ADD_FAILURE() << "entry " << i << ": " << one[i] << " vs " << chunked[i];
  EXPECT_EQ(bad, 0);
}

TEST_P(GpuOzaki2, IntegerInputsExactAndSpecialValues) {
  const int m = 150, n = 130, k = 700;
  std::vector<double> A(size_t(m) * k), B(size_t(k) * n);
  ref::fill_integers(A.data(), m, k, m, 1000, rng_);
  ref::fill_integers(B.data(), k, n, k, 1000, rng_);
  std::vector<double> C(size_t(m) * n, std::nan(""));
  ASSERT_EQ(ozgemmSetModuli(h(), 8), OZGEMM_STATUS_SUCCESS);
  ozgemm::dgemm_host_buffers(*h_, Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, C.data(), m);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      int64_t exact = 0;
      for (int l = 0; l < k; ++l) exact += int64_t(A[i + size_t(l) * m]) * int64_t(B[l + size_t(j) * k]);
      ASSERT_EQ(C[i + size_t(j) * m], double(exact)) << i << "," << j;
    }
  Case c;
  c.m = 40;
  c.n = 30;
  c.k = 50;
  std::vector<double> As(size_t(c.m) * c.k), Bs(size_t(c.k) * c.n);
  ref::fill_phi(As.data(), c.m, c.k, c.m, 0.5, rng_);
  ref::fill_phi(Bs.data(), c.k, c.n, c.k, 0.5, rng_);
  As[3 + 7 * size_t(c.m)] = std::numeric_limits<double>::infinity();
  Bs[11 + 4 * size_t(c.k)] = std::nan("");
  EXPECT_EQ(check(c, &As, &Bs), 0);
}

TEST_P(GpuOzaki2, FullyFusedIsRefused) {
  if (ozgemmSetVariant(h(), OZGEMM_VARIANT_FULLY_FUSED) != OZGEMM_STATUS_SUCCESS)
    GTEST_SKIP() << "no fused kernels here";
  size_t bytes = 0;
  EXPECT_EQ(ozgemmGetWorkspaceSize(h(), CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &bytes), OZGEMM_STATUS_NOT_SUPPORTED);
  ASSERT_EQ(ozgemmSetVariant(h(), GetParam()), OZGEMM_STATUS_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Variants, GpuOzaki2, ::testing::Values(OZGEMM_VARIANT_UNFUSED, OZGEMM_VARIANT_PARTIALLY_FUSED),
                         [](const ::testing::TestParamInfo<ozgemmVariant_t>& i) {
                           return i.param == OZGEMM_VARIANT_UNFUSED ? std::string("Unfused") : std::string("PartiallyFused");
                         });

}  // namespace
