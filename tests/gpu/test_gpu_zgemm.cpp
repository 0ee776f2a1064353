// GPU tests of ozgemmZgemm in FIXED mode (the complex Ozaki-II scheme, 2M: two INT8 products per
// modulus), for each of its variants (unfused: cuBLASLt products over 2N planes; partially fused: the
// Hopper GEMM that reduces the products in its epilogue): bitwise equal to the host reference
// (ref::ozaki2_complex_reference) across shapes (1x1x1, primes, tall, wide, k = 1, k past the int32
// chunk), all nine op pairs (N, T, C), leading dimensions past the rows, complex alpha/beta (beta == 0
// with a NaN-poisoned C), moduli counts, special values; the quick returns; FP64 mode and variant
// NATIVE run native ZGEMM and say so. Skipped visibly without a GPU, and the partially fused cases
// without a Hopper GPU and its kernels. Seeds: gpu_test_util.hpp (printed; OZGEMM_TEST_SEED repeats).
#include <gtest/gtest.h>

#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cmath>
#include <complex>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/gpu_test_util.hpp"
#include "ozgemm/numerics/ozaki2.hpp"
#include "ozgemm/ozgemm.hpp"
#include "ozgemm/reference/ozaki2_complex.hpp"
#include "ozgemm/reference/reference.hpp"

namespace ref = ozgemm::ref;
using ozgemm::numerics::ComplexOp;
using zcomplex = std::complex<double>;

namespace {

static_assert(sizeof(zcomplex) == sizeof(cuDoubleComplex), "std::complex<double> and cuDoubleComplex share a layout");

cublasOperation_t to_cublas(ComplexOp op) {
  return op == ComplexOp::N ? CUBLAS_OP_N : op == ComplexOp::T ? CUBLAS_OP_T : CUBLAS_OP_C;
}
cuDoubleComplex to_cu(zcomplex z) { return make_cuDoubleComplex(z.real(), z.imag()); }

// Column-major rows x cols (leading dimension ld) with fill_phi's distribution in each part; the
// padding rows hold NaN (never read).
std::vector<zcomplex> complex_matrix(int rows, int cols, int ld, double phi_re, double phi_im, std::mt19937_64& rng) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> re(size_t(ld) * std::max(1, cols), nan), im(re.size(), nan);
  ref::fill_phi(re.data(), rows, cols, ld, phi_re, rng);
  ref::fill_phi(im.data(), rows, cols, ld, phi_im, rng);
  std::vector<zcomplex> z(re.size());
  for (size_t i = 0; i < z.size(); ++i) z[i] = zcomplex(re[i], im[i]);
  return z;
}

struct Case {
  ComplexOp ta = ComplexOp::N, tb = ComplexOp::N;
  int m = 1, n = 1, k = 1, pad = 0, moduli = 16;
  zcomplex alpha{1.0, 0.0}, beta{0.0, 0.0};
  double phi_re = 0.5, phi_im = 0.5;
  std::string describe() const {
    auto z = [](zcomplex v) { return "(" + std::to_string(v.real()) + "," + std::to_string(v.imag()) + ")"; };
    return std::string("ta=") + char(ta) + " tb=" + char(tb) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
           std::to_string(k) + " pad=" + std::to_string(pad) + " N=" + std::to_string(moduli) + " alpha=" + z(alpha) +
           " beta=" + z(beta) + " phi=" + std::to_string(phi_re) + "/" + std::to_string(phi_im);
  }
};

class GpuZgemm : public ::testing::TestWithParam<ozgemmVariant_t> {
 protected:
  void SetUp() override {
    OZTEST_REQUIRE_GPU();
    h_.emplace();  // after the GPU check: creating a handle without a GPU throws
    ASSERT_EQ(ozgemmSetAccuracy(h(), OZGEMM_ACCURACY_FIXED), OZGEMM_STATUS_SUCCESS);
    if (ozgemmSetVariant(h(), GetParam()) != OZGEMM_STATUS_SUCCESS)
      GTEST_SKIP() << ozgemmGetVariantString(GetParam()) << " does not run here";
    // A 1x1x1 call says whether the complex scheme runs this variant here (the fused products: Hopper).
    const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0);
    cuDoubleComplex* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, 3 * sizeof(cuDoubleComplex)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d, &one, sizeof one, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d + 1, &one, sizeof one, cudaMemcpyHostToDevice), cudaSuccess);
    const ozgemmStatus_t st = ozgemmZgemm(h(), CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, d, 1, d + 1, 1, &one, d + 2, 1);
    cudaFree(d);
    ozgemmCallInfo_t info{};
    ASSERT_EQ(ozgemmGetLastCallInfo(h(), &info), OZGEMM_STATUS_SUCCESS);
    if (st == OZGEMM_STATUS_NOT_SUPPORTED || (st == OZGEMM_STATUS_SUCCESS && info.variant != GetParam()))
      GTEST_SKIP() << "the complex scheme's " << ozgemmGetVariantString(GetParam()) << " variant does not run here: "
                   << info.reason;
    ASSERT_EQ(st, OZGEMM_STATUS_SUCCESS);
  }
  // What a call of k within one int32 chunk runs: the variant asked for.
  ozgemmVariant_t expected(int k) const {
    return k <= ozgemm::numerics::kOz2ChunkK ? GetParam() : OZGEMM_VARIANT_UNFUSED;
  }
  ozgemmHandle_t h() { return h_->get(); }

  // Runs the case on the GPU and through the host reference; the number of differing entries.
  // A_in / B_in replace the random operands (same layout).
  int64_t check(const Case& c, const std::vector<zcomplex>* A_in = nullptr, const std::vector<zcomplex>* B_in = nullptr) {
    const bool ta_n = c.ta == ComplexOp::N, tb_n = c.tb == ComplexOp::N;
    const int a_rows = ta_n ? c.m : c.k, a_cols = ta_n ? c.k : c.m;
    const int b_rows = tb_n ? c.k : c.n, b_cols = tb_n ? c.n : c.k;
    const int lda = std::max(1, a_rows + c.pad), ldb = std::max(1, b_rows + c.pad), ldc = std::max(1, c.m + c.pad);
    std::vector<zcomplex> A = A_in ? *A_in : complex_matrix(a_rows, a_cols, lda, c.phi_re, c.phi_im, rng_);
    std::vector<zcomplex> B = B_in ? *B_in : complex_matrix(b_rows, b_cols, ldb, c.phi_re, c.phi_im, rng_);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // beta == 0: C is NaN-poisoned (must not be read); else random with poisoned padding.
    std::vector<zcomplex> C0 = c.beta == zcomplex(0.0, 0.0)
                                   ? std::vector<zcomplex>(size_t(ldc) * std::max(1, c.n), zcomplex(nan, nan))
                                   : complex_matrix(c.m, c.n, ldc, 0.5, 0.5, rng_);
    std::vector<zcomplex> host = C0, gpu = C0;
    ref::ozaki2_complex_reference(c.ta, c.tb, c.m, c.n, c.k, c.alpha, A.data(), lda, B.data(), ldb, c.beta, host.data(),
                                  ldc, c.moduli);
    EXPECT_EQ(ozgemmSetModuli(h(), c.moduli), OZGEMM_STATUS_SUCCESS);
    ozgemm::zgemm_host_buffers(*h_, to_cublas(c.ta), to_cublas(c.tb), c.m, c.n, c.k, to_cu(c.alpha),
                               reinterpret_cast<const cuDoubleComplex*>(A.data()), lda,
                               reinterpret_cast<const cuDoubleComplex*>(B.data()), ldb, to_cu(c.beta),
                               reinterpret_cast<cuDoubleComplex*>(gpu.data()), ldc);
    ozgemmCallInfo_t info{};
    EXPECT_EQ(ozgemmGetLastCallInfo(h(), &info), OZGEMM_STATUS_SUCCESS);
    EXPECT_EQ(info.scheme, OZGEMM_SCHEME_OZAKI2) << c.describe() << ": " << info.reason;
    EXPECT_EQ(info.moduli, c.moduli) << c.describe();
    EXPECT_EQ(info.variant, expected(c.k)) << c.describe() << ": " << info.reason;
    return oztest::count_differences(host, gpu, c.describe());  // padding rows included: they must stay as they were
  }
  std::optional<ozgemm::Handle> h_;
  std::mt19937_64 rng_ = oztest::test_rng();
};

TEST_P(GpuZgemm, ShapesBitwiseEqualHost) {
  // 1x1x1, primes, tall, wide, k = 1, partial and whole tiles.
  const int shapes[][3] = {{1, 1, 1},   {67, 131, 97}, {997, 101, 263}, {2000, 16, 300}, {16, 2500, 256},
                           {64, 40, 1}, {300, 7, 129}, {257, 513, 1031}};
  for (auto& s : shapes) {
    Case c;
    c.m = s[0];
    c.n = s[1];
    c.k = s[2];
    EXPECT_EQ(check(c), 0) << c.describe();
  }
}

TEST_P(GpuZgemm, AllOpPairsLeadingDimensionsAlphaBeta) {
  const ComplexOp ops[] = {ComplexOp::N, ComplexOp::T, ComplexOp::C};
  const zcomplex alphas[] = {{1.0, 0.0}, {-0.5, 2.0}, {0.0, 1.0}};
  const zcomplex betas[] = {{0.0, 0.0}, {1.0, 0.0}, {0.25, -3.0}};
  int i = 0;
  for (ComplexOp ta : ops)
    for (ComplexOp tb : ops) {
      Case c;
      c.ta = ta;
      c.tb = tb;
      c.m = 71;
      c.n = 45;
      c.k = 133;
      c.pad = 3 + i % 4;
      c.alpha = alphas[i % 3];
      c.beta = betas[(i / 3) % 3];
      ++i;
      EXPECT_EQ(check(c), 0) << c.describe();
    }
}

TEST_P(GpuZgemm, ModuliCountsAndPartRanges) {
  // Part distributions (fill_phi's phi per part), counts from the fewest to past int64 A' (17..20:
  // wide residues); then Im = 0, Re = 0 and |Im| >> |Re|.
  const double phis[][2] = {{0.5, 0.5}, {-1.0, -1.0}, {1.0, 4.0}};
  std::uniform_int_distribution<int> op(0, 2);
  const ComplexOp ops[] = {ComplexOp::N, ComplexOp::T, ComplexOp::C};
  for (int moduli : {2, 7, 12, 14, 16, 17, 18, 20})
    for (auto& phi : phis) {
      Case c;
      c.m = 53;
      c.n = 37;
      c.k = 149;
      c.pad = 2;
      c.moduli = moduli;
      c.phi_re = phi[0];
      c.phi_im = phi[1];
      c.ta = ops[op(rng_)];
      c.tb = ops[op(rng_)];
      c.beta = zcomplex(0.5, 0.5);
      EXPECT_EQ(check(c), 0) << c.describe();
    }
  // One part zero.
  Case c;
  c.m = 33;
  c.n = 29;
  c.k = 77;
  const int lda = c.m, ldb = c.k;
  std::vector<zcomplex> A = complex_matrix(c.m, c.k, lda, 0.5, 0.5, rng_), B = complex_matrix(c.k, c.n, ldb, 0.5, 0.5, rng_);
  std::vector<zcomplex> A_real = A, B_imag = B, A_wide = A;
  for (auto& z : A_real) z = zcomplex(z.real(), 0.0);
  for (auto& z : B_imag) z = zcomplex(0.0, z.imag());
  EXPECT_EQ(check(c, &A_real, &B_imag), 0) << "Im(A) = 0, Re(B) = 0";
  for (auto& z : A_wide) z = zcomplex(z.real(), std::ldexp(z.imag(), 30));
  EXPECT_EQ(check(c, &A_wide, &B), 0) << "|Im(A)| >> |Re(A)|";
}

TEST_P(GpuZgemm, KPastTheInt32Chunk) {
  Case c;
  c.m = 64;
  c.n = 64;
  c.k = 140000;  // two k-chunks: the fused products take one, so this runs unfused (expected())
  c.moduli = 14;
  c.ta = ComplexOp::C;
  c.beta = zcomplex(1.0, -1.0);
  EXPECT_EQ(check(c), 0) << c.describe();
  ozgemmCallInfo_t info{};
  ASSERT_EQ(ozgemmGetLastCallInfo(h(), &info), OZGEMM_STATUS_SUCCESS);
  if (GetParam() == OZGEMM_VARIANT_PARTIALLY_FUSED) {
    EXPECT_NE(std::string(info.reason).find("ran unfused"), std::string::npos) << info.reason;
  }
}

TEST_P(GpuZgemm, SpecialValues) {
  Case c;
  c.m = 40;
  c.n = 30;
  c.k = 50;
  c.beta = zcomplex(2.0, 0.0);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (ComplexOp ta : {ComplexOp::N, ComplexOp::C}) {
    c.ta = ta;
    const int lda = ta == ComplexOp::N ? c.m : c.k;
    std::vector<zcomplex> A = complex_matrix(lda, ta == ComplexOp::N ? c.k : c.m, lda, 0.5, 0.5, rng_);
    std::vector<zcomplex> B = complex_matrix(c.k, c.n, c.k, 0.5, 0.5, rng_);
    A[3 + 7 * size_t(lda)] = zcomplex(inf, 0.5);     // Inf in Re
    A[9 + 2 * size_t(lda)] = zcomplex(0.25, -inf);   // -Inf in Im
    A[20 + 11 * size_t(lda)] = zcomplex(inf, 0.0);   // Inf x 0 in the products
    B[11 + 4 * size_t(c.k)] = zcomplex(nan, 1.0);    // NaN
    B[5 + 20 * size_t(c.k)] = zcomplex(0.0, 0.0);
    EXPECT_EQ(check(c, &A, &B), 0) << c.describe();
  }
}

TEST_P(GpuZgemm, QuickReturns) {
  const int m = 9, n = 7, ldc = 11;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<zcomplex> C0 = complex_matrix(m, n, ldc, 0.5, 0.5, rng_);
  std::vector<zcomplex> A(size_t(m) * 4, zcomplex(1.0, 1.0)), B(size_t(4) * n, zcomplex(1.0, -1.0));
  auto run = [&](int k, zcomplex alpha, zcomplex beta, std::vector<zcomplex>* C) {
    ozgemm::zgemm_host_buffers(*h_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, to_cu(alpha),
                               reinterpret_cast<const cuDoubleComplex*>(A.data()), m,
                               reinterpret_cast<const cuDoubleComplex*>(B.data()), std::max(1, k), to_cu(beta),
                               reinterpret_cast<cuDoubleComplex*>(C->data()), ldc);
  };
  for (int k : {0, 4}) {
    const zcomplex alpha = k == 0 ? zcomplex(1.0, 0.0) : zcomplex(0.0, 0.0);  // k == 0 or alpha == 0
    for (zcomplex beta : {zcomplex(0.0, 0.0), zcomplex(1.0, 0.0), zcomplex(-0.5, 2.0)}) {
      std::vector<zcomplex> host = C0, gpu = C0;
      if (beta == zcomplex(0.0, 0.0)) host.assign(host.size(), zcomplex(nan, nan)), gpu = host;
      ref::ozaki2_complex_reference(ComplexOp::N, ComplexOp::N, m, n, k, alpha, A.data(), m, B.data(), std::max(1, k),
                                    beta, host.data(), ldc, 16);
      run(k, alpha, beta, &gpu);
      std::ostringstream what;
      what << "k=" << k << " beta=" << beta;
      EXPECT_EQ(oztest::count_differences(host, gpu, what.str()), 0);
    }
  }
}

TEST_P(GpuZgemm, ArgumentChecks) {
  const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0);
  cuDoubleComplex* C = nullptr;
  EXPECT_EQ(ozgemmZgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, C, 1, C, 1, &one, C, 1),
            OZGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(ozgemmZgemm(h(), CUBLAS_OP_N, CUBLAS_OP_N, -1, 1, 1, &one, C, 1, C, 1, &one, C, 1),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmZgemm(h(), CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 1, &one, C, 3, C, 1, &one, C, 4),
            OZGEMM_STATUS_INVALID_VALUE);  // lda < m
  EXPECT_EQ(ozgemmZgemm(h(), static_cast<cublasOperation_t>(7), CUBLAS_OP_N, 1, 1, 1, &one, C, 1, C, 1, &one, C, 1),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmZgemm(h(), CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, nullptr, C, 1, C, 1, &one, C, 1),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmZgemm(h(), CUBLAS_OP_N, CUBLAS_OP_N, 0, 1, 1, &one, C, 1, C, 1, &one, C, 1), OZGEMM_STATUS_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Variants, GpuZgemm, ::testing::Values(OZGEMM_VARIANT_UNFUSED, OZGEMM_VARIANT_PARTIALLY_FUSED),
                         [](const ::testing::TestParamInfo<ozgemmVariant_t>& i) {
                           return i.param == OZGEMM_VARIANT_UNFUSED ? std::string("Unfused") : std::string("PartiallyFused");
                         });

// FP64 mode (the default) and variant NATIVE run native ZGEMM and say so.
TEST(GpuZgemmNative, Fp64ModeAndNativeVariantRunCublasZgemm) {
  OZTEST_REQUIRE_GPU();
  ozgemm::Handle h;
  std::mt19937_64 rng = oztest::test_rng();
  const int m = 23, n = 19, k = 31;
  std::vector<zcomplex> A = complex_matrix(k, m, k, 0.5, 0.5, rng), B = complex_matrix(k, n, k, 0.5, 0.5, rng);
  for (bool native_variant : {false, true}) {
    if (native_variant) {
      ASSERT_EQ(ozgemmSetVariant(h.get(), OZGEMM_VARIANT_NATIVE), OZGEMM_STATUS_SUCCESS);
    }
    std::vector<zcomplex> C(size_t(m) * n, zcomplex(std::nan(""), std::nan("")));
    ozgemm::zgemm_host_buffers(h, CUBLAS_OP_C, CUBLAS_OP_N, m, n, k, make_cuDoubleComplex(1.0, 0.0),
                               reinterpret_cast<const cuDoubleComplex*>(A.data()), k,
                               reinterpret_cast<const cuDoubleComplex*>(B.data()), k, make_cuDoubleComplex(0.0, 0.0),
                               reinterpret_cast<cuDoubleComplex*>(C.data()), m);
    ozgemmCallInfo_t info{};
    ASSERT_EQ(ozgemmGetLastCallInfo(h.get(), &info), OZGEMM_STATUS_SUCCESS);
    EXPECT_EQ(info.variant, OZGEMM_VARIANT_NATIVE) << info.reason;
    EXPECT_EQ(info.moduli, 0);
    EXPECT_EQ(info.fell_back, native_variant ? 0 : 1) << info.reason;
    // Native ZGEMM of A^H B: within a few ulps of the textbook sum (cuBLAS sums in another order).
    std::vector<zcomplex> plain(size_t(m) * n);
    ref::plain_zgemm(ComplexOp::C, ComplexOp::N, m, n, k, zcomplex(1.0, 0.0), A.data(), k, B.data(), k,
                     zcomplex(0.0, 0.0), plain.data(), m);
    for (size_t i = 0; i < C.size(); ++i) ASSERT_LT(std::abs(C[i] - plain[i]), 1e-12 * (1.0 + std::abs(plain[i]))) << i;
  }
}

}  // namespace
