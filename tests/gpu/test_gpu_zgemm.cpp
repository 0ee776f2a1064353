// GPU tests of ozgemmZgemm in FIXED mode (the complex Ozaki-II scheme, 2M: two INT8 products per
// modulus), for each of its variants (unfused: cuBLASLt products over 2N planes; partially fused: the
// Hopper GEMM that reduces the products in its epilogue): bitwise equal to the host reference
// (ref::ozaki2_complex_reference) across shapes (1x1x1, primes, tall, wide, k = 1, k past the int32
// chunk), all nine op pairs (N, T, C), leading dimensions past the rows, complex alpha/beta (beta == 0
// with a NaN-poisoned C), moduli counts, special values; the quick returns; variant NATIVE and FP64
// mode's AUTO rule at small shapes run native ZGEMM and say so. FP64 mode's complex decision
// (GpuZgemmFp64): the count and bound equal the host decision's (ref::decide_complex_moduli) bit for
// bit, the result equals the host reference at that count bit for bit and meets the contract
// |C - AB| <= bound u (|A||B|) <= min(4, k) u (|A||B|) entrywise against the double-double reference
// (ref::accurate_zgemm) on phi families and adversarial signs; where no count certifies (wide-range
// data), under graph capture: native ZGEMM with the reason. Skipped visibly without a GPU, and the
// partially fused cases without a Hopper GPU and its kernels. Seeds: gpu_test_util.hpp (printed;
// OZGEMM_TEST_SEED repeats).
#include <gtest/gtest.h>

#include <cuComplex.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/gpu_test_util.hpp"
#include "ozgemm/numerics/accuracy.hpp"
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

// A case of op(A) = ta, op(B) = tb and m x n x k, the other fields at their defaults.
Case op_case(ComplexOp ta, ComplexOp tb, int m, int n, int k) { return Case{ta, tb, m, n, k}; }

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
      Case c = op_case(ta, tb, 71, 45, 133);
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

// The per-element kernels' edges (kernels/dgemm/ozaki2_complex.cu): the residues and the int8
// reconstruction take 4 consecutive k-indices / rows a thread, 8 threads a 32-wide tile row, 128 rows
// a warp; the tiles have a no-bounds path when wholly inside the operand; op N / T / C give both
// load directions (k-contiguous or not) for A and B. Row counts and k around those multiples.
TEST_P(GpuZgemm, TileAndGroupEdgesBitwiseEqualHost) {
  const int shapes[][3] = {{1, 3, 5},     {2, 5, 3},     {3, 2, 17},   {5, 7, 33},  {127, 9, 31},
                           {129, 6, 64},  {131, 4, 250}, {64, 32, 64}, {65, 33, 70}, {259, 11, 129}};
  const ComplexOp ops[] = {ComplexOp::N, ComplexOp::T, ComplexOp::C};
  int i = 0;
  for (auto& sh : shapes) {
    Case c = op_case(ops[i % 3], ops[(i / 3) % 3], sh[0], sh[1], sh[2]);
    c.pad = i % 2;
    c.moduli = i % 2 ? 15 : 18;
    c.beta = i % 4 == 3 ? zcomplex(0.5, -1.0) : zcomplex(0.0, 0.0);
    ++i;
    EXPECT_EQ(check(c), 0) << c.describe();
  }
}

// The statistics' one-read norm S (groups of 8 elements a thread at their own shifts, merged):
// rows and columns whose parts span many binades, with the largest part in the first or the last
// group of a thread, rows of zeros but one subnormal, and k long enough for several groups a thread
// in both load directions. S sets the shifts, so any error shows as a differing result.
TEST_P(GpuZgemm, WideRangeRowsOneReadNormsBitwiseEqualHost) {
  std::uniform_int_distribution<int> binades(0, 70);
  for (ComplexOp ta : {ComplexOp::N, ComplexOp::C})
    for (ComplexOp tb : {ComplexOp::N, ComplexOp::T}) {
      Case c = op_case(ta, tb, 37, 29, 1100);
      const bool ta_n = ta == ComplexOp::N, tb_n = tb == ComplexOp::N;
      const int a_rows = ta_n ? c.m : c.k, a_cols = ta_n ? c.k : c.m, b_rows = tb_n ? c.k : c.n, b_cols = tb_n ? c.n : c.k;
      std::vector<zcomplex> A = complex_matrix(a_rows, a_cols, a_rows, 0.5, 0.5, rng_);
      std::vector<zcomplex> B = complex_matrix(b_rows, b_cols, b_rows, 0.5, 0.5, rng_);
      // Element (r, l) of op(A) / (l, col) of op(B) in the stored layout.
      auto at_a = [&](int r, int l) -> zcomplex& { return ta_n ? A[size_t(r) + size_t(l) * a_rows] : A[size_t(l) + size_t(r) * a_rows]; };
      auto at_b = [&](int l, int col) -> zcomplex& { return tb_n ? B[size_t(l) + size_t(col) * b_rows] : B[size_t(col) + size_t(l) * b_rows]; };
      for (int r = 0; r < c.m; ++r)
        for (int l = 0; l < c.k; ++l) {
          zcomplex& z = at_a(r, l);
          z = zcomplex(std::ldexp(z.real(), -binades(rng_)), std::ldexp(z.imag(), -binades(rng_)));
        }
      for (int col = 0; col < c.n; ++col)
        for (int l = 0; l < c.k; ++l) {
          zcomplex& z = at_b(l, col);
          z = zcomplex(std::ldexp(z.real(), -binades(rng_)), std::ldexp(z.imag(), -binades(rng_)));
        }
      for (int r = 0; r < c.m; r += 3) at_a(r, (r % 2) ? c.k - 1 : r % 7) *= 1e6;  // a far larger part, first or last group
      for (int col = 0; col < c.n; col += 4) at_b((col % 2) ? c.k - 2 : col % 5, col) *= zcomplex(0.0, -3e5);
      for (int l = 0; l < c.k; ++l) at_a(1, l) = zcomplex(0.0, 0.0);
      at_a(1, c.k / 2) = zcomplex(0.0, 4.9e-324);  // zeros but one subnormal
      EXPECT_EQ(check(c, &A, &B), 0) << c.describe();
    }
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

// FP64 mode (the default) at a shape its AUTO rule leaves to native ZGEMM, and variant NATIVE, run
// native ZGEMM and say so.
TEST(GpuZgemmNative, Fp64ModeAndNativeVariantRunCublasZgemm) {
  OZTEST_REQUIRE_GPU();
  ozgemm::Handle h;
  std::mt19937_64 rng = oztest::test_rng();
  const int m = 23, n = 19, k = 31;
  std::vector<zcomplex> A = complex_matrix(k, m, k, 0.5, 0.5, rng), B = complex_matrix(k, n, k, 0.5, 0.5, rng);
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  const bool hopper = prop.major == 9 && prop.minor == 0;  // the AUTO rule's size limit is Hopper's
  for (bool native_variant : {false, true}) {
    if (!native_variant && !hopper) {
      std::cout << "[ skipped  ] FP64 mode's half: off Hopper AUTO's roofline may emulate at any size (" << prop.name
                << ")" << std::endl;
      continue;
    }
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
    if (!native_variant) {
      EXPECT_NE(std::string(info.reason).find("native ZGEMM: complex Ozaki-II slower than native at this shape"),
                std::string::npos)
          << info.reason;
    }
    // Native ZGEMM of A^H B: within a few ulps of the textbook sum (cuBLAS sums in another order).
    std::vector<zcomplex> plain(size_t(m) * n);
    ref::plain_zgemm(ComplexOp::C, ComplexOp::N, m, n, k, zcomplex(1.0, 0.0), A.data(), k, B.data(), k,
                     zcomplex(0.0, 0.0), plain.data(), m);
    for (size_t i = 0; i < C.size(); ++i) ASSERT_LT(std::abs(C[i] - plain[i]), 1e-12 * (1.0 + std::abs(plain[i]))) << i;
  }
}

// ---- FP64 mode's complex decision ----

constexpr double kU = 0x1p-53;

// The operands of one FP64-mode case (column-major, tight leading dimensions for op's stored shape).
struct Operands {
  std::string name;
  std::vector<zcomplex> A, B;
};

// a_l = x (1 + i), b_l = y (1 - i) (stored; op C conjugates) with signs shared by a_l and b_l and every
// low significand bit set: all products of an entry have one phase, so each part's truncation error
// adds (tests/cpu/test_ozaki2_complex.cpp's adversarial case), and |a| = sqrt2 max part, the most the
// magnitude digits (the larger part) underestimate |A||B|. A, B stored a_rows x a_cols, b_rows x b_cols.
Operands adversarial(ComplexOp ta, ComplexOp tb, int a_rows, int a_cols, int b_rows, int b_cols, std::mt19937_64& rng) {
  std::uniform_int_distribution<uint64_t> bits(0, (uint64_t(1) << 52) - 1);
  const auto tail = [&] {  // in [0.5, 1) with the low 30 significand bits set
    const uint64_t u = (uint64_t(1022) << 52) | bits(rng) | ((uint64_t(1) << 30) - 1);
    double x;
    std::memcpy(&x, &u, 8);
    return x;
  };
  const int k = ta == ComplexOp::N ? a_cols : a_rows;
  std::vector<double> sign(static_cast<size_t>(k));
  for (auto& x : sign) x = rng() % 2 ? 1.0 : -1.0;
  Operands o{"adversarial signs", std::vector<zcomplex>(size_t(a_rows) * a_cols), std::vector<zcomplex>(size_t(b_rows) * b_cols)};
  for (size_t i = 0; i < o.A.size(); ++i) {
    const size_t l = ta == ComplexOp::N ? i / size_t(a_rows) : i % size_t(a_rows);
    o.A[i] = sign[l] * tail() * zcomplex(1, 1);
  }
  for (size_t i = 0; i < o.B.size(); ++i) {
    const size_t l = tb == ComplexOp::N ? i % size_t(b_rows) : i / size_t(b_rows);
    o.B[i] = sign[l] * tail() * zcomplex(1, -1);
  }
  return o;
}

// The phi families (fill_phi's phi for the real and the imaginary parts), Im = 0, Re = 0, |Im| >> |Re|,
// and the adversarial signs (A, B stored a_rows x a_cols, b_rows x b_cols for ops ta, tb).
std::vector<Operands> families(ComplexOp ta, ComplexOp tb, int a_rows, int a_cols, int b_rows, int b_cols,
                               std::mt19937_64& rng) {
  std::vector<Operands> v;
  const double phis[][2] = {{-1.0, -1.0}, {0.5, 0.5}, {1.0, 1.0}, {0.5, -1.0}, {-1.0, 1.0}};
  for (auto& phi : phis)
    v.push_back({"phi " + std::to_string(phi[0]) + "/" + std::to_string(phi[1]),
                 complex_matrix(a_rows, a_cols, a_rows, phi[0], phi[1], rng),
                 complex_matrix(b_rows, b_cols, b_rows, phi[0], phi[1], rng)});
  Operands re{"Im = 0", complex_matrix(a_rows, a_cols, a_rows, 0.5, 0.5, rng), complex_matrix(b_rows, b_cols, b_rows, 0.5, 0.5, rng)};
  Operands im = re, wide = re;
  for (auto* x : {&re.A, &re.B})
    for (auto& z : *x) z = zcomplex(z.real(), 0.0);
  im.name = "Re = 0";
  for (auto* x : {&im.A, &im.B})
    for (auto& z : *x) z = zcomplex(0.0, z.imag());
  wide.name = "|Im| >> |Re|";
  for (auto* x : {&wide.A, &wide.B})
    for (auto& z : *x) z = zcomplex(z.real(), std::ldexp(z.imag(), 30));
  v.push_back(re);
  v.push_back(im);
  v.push_back(wide);
  v.push_back(adversarial(ta, tb, a_rows, a_cols, b_rows, b_cols, rng));
  return v;
}

class GpuZgemmFp64 : public ::testing::TestWithParam<ozgemmVariant_t> {
 protected:
  void SetUp() override {
    OZTEST_REQUIRE_GPU();
    h_.emplace();
    native_.emplace();
    ozgemmAccuracy_t a;
    ASSERT_EQ(ozgemmGetAccuracy(h(), &a), OZGEMM_STATUS_SUCCESS);
    ASSERT_EQ(a, OZGEMM_ACCURACY_FP64) << "FP64 is the default";
    // A forced variant: past AUTO's speed rule (the decision runs at every shape).
    if (ozgemmSetVariant(h(), GetParam()) != OZGEMM_STATUS_SUCCESS)
      GTEST_SKIP() << ozgemmGetVariantString(GetParam()) << " does not run here";
    ASSERT_EQ(ozgemmSetVariant(native_->get(), OZGEMM_VARIANT_NATIVE), OZGEMM_STATUS_SUCCESS);
    // A 1x1x1 call: NOT_SUPPORTED where the complex scheme has not this variant (fused: Hopper).
    std::vector<zcomplex> one(1, zcomplex(1.0, 0.0)), c(1);
    ozgemmCallInfo_t info{};
    const ozgemmStatus_t st = call(h(), ComplexOp::N, ComplexOp::N, 1, 1, 1, one, 1, one, 1, &c, &info);
    if (st == OZGEMM_STATUS_NOT_SUPPORTED)
      GTEST_SKIP() << "the complex scheme's " << ozgemmGetVariantString(GetParam()) << " variant does not run here";
    ASSERT_EQ(st, OZGEMM_STATUS_SUCCESS);
    EXPECT_EQ(info.fell_back, 1) << "k = 1: c = 1 < 2.03, no count certifies: " << info.reason;
  }
  ozgemmHandle_t h() { return h_->get(); }

  // C = op(A) op(B) through handle `hh` (C NaN-poisoned first: beta = 0 must not read it); the status
  // and the call's info.
  static ozgemmStatus_t call(ozgemmHandle_t hh, ComplexOp ta, ComplexOp tb, int m, int n, int k,
                             const std::vector<zcomplex>& A, int lda, const std::vector<zcomplex>& B, int ldb,
                             std::vector<zcomplex>* C, ozgemmCallInfo_t* info) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    C->assign(size_t(m) * n, zcomplex(nan, nan));
    cuDoubleComplex *dA = nullptr, *dB = nullptr, *dC = nullptr;
    EXPECT_EQ(cudaMalloc(&dA, A.size() * 16), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&dB, B.size() * 16), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&dC, C->size() * 16), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dA, A.data(), A.size() * 16, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dB, B.data(), B.size() * 16, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dC, C->data(), C->size() * 16, cudaMemcpyHostToDevice), cudaSuccess);
    const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0), zero = make_cuDoubleComplex(0.0, 0.0);
    const ozgemmStatus_t st = ozgemmZgemm(hh, to_cublas(ta), to_cublas(tb), m, n, k, &one, dA, lda, dB, ldb, &zero, dC, m);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(C->data(), dC, C->size() * 16, cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    EXPECT_EQ(ozgemmGetLastCallInfo(hh, info), OZGEMM_STATUS_SUCCESS);
    return st;
  }

  // FP64 mode on one case: the GPU's count and bound equal the host decision's; the result equals the
  // host reference at that count (or, where it fell back, native ZGEMM's bits); with `contract`, every
  // entry's error against the double-double reference is within bound u (|A||B|). Returns the count
  // (0: native ZGEMM).
  int check(const std::string& what, ComplexOp ta, ComplexOp tb, int m, int n, int k, const std::vector<zcomplex>& A,
            const std::vector<zcomplex>& B, bool contract) {
    const int lda = ta == ComplexOp::N ? m : k, ldb = tb == ComplexOp::N ? k : n;
    const ref::Ozaki2Decision d = ref::decide_complex_moduli(ta, tb, m, n, k, A.data(), lda, B.data(), ldb);
    std::vector<zcomplex> C, want;
    ozgemmCallInfo_t info{};
    EXPECT_EQ(call(h(), ta, tb, m, n, k, A, lda, B, ldb, &C, &info), OZGEMM_STATUS_SUCCESS) << what;
    std::cout << "[ zfp64    ] " << what << ": host " << d.moduli << " moduli (bound " << d.bound << "); GPU: "
              << info.reason << std::endl;
    EXPECT_EQ(info.target, ozgemm::numerics::target_constant(k)) << what;
    if (info.fell_back) {
      EXPECT_EQ(d.moduli, 0) << what << ": " << info.reason;
      EXPECT_EQ(info.variant, OZGEMM_VARIANT_NATIVE) << what;
      EXPECT_EQ(info.moduli, 0) << what;
      EXPECT_NE(std::string(info.reason).find("FP64 mode ran native ZGEMM: no moduli count up to 20 meets the bound"),
                std::string::npos)
          << what << ": " << info.reason;
      ozgemmCallInfo_t native_info{};
      EXPECT_EQ(call(native_->get(), ta, tb, m, n, k, A, lda, B, ldb, &want, &native_info), OZGEMM_STATUS_SUCCESS);
      EXPECT_EQ(oztest::count_differences(want, C, what + " (native ZGEMM)"), 0);
      return 0;
    }
    EXPECT_EQ(info.scheme, OZGEMM_SCHEME_OZAKI2) << what << ": " << info.reason;
    EXPECT_EQ(info.moduli, d.moduli) << what << ": " << info.reason;
    EXPECT_TRUE(oztest::same_bits(info.bound, d.bound)) << what << ": GPU bound " << info.bound << " host " << d.bound;
    EXPECT_LE(info.bound, info.target) << what;
    EXPECT_EQ(info.variant, k <= ozgemm::numerics::kOz2ChunkK ? GetParam() : OZGEMM_VARIANT_UNFUSED) << what;
    if (d.moduli == 0) return 0;
    want.assign(C.size(), zcomplex(0.0, 0.0));
    ref::ozaki2_complex_reference(ta, tb, m, n, k, zcomplex(1.0, 0.0), A.data(), lda, B.data(), ldb, zcomplex(0.0, 0.0),
                                  want.data(), m, d.moduli);
    EXPECT_EQ(oztest::count_differences(want, C, what + " (host reference at the decided count)"), 0);
    if (contract) {
      const ref::ComplexAccurateResult acc = ref::accurate_zgemm(ta, tb, m, n, k, A.data(), lda, B.data(), ldb);
      const std::vector<double> err = ref::complex_errors(C.data(), m, acc);
      int64_t bad = 0;
      double worst = 0;
      for (size_t i = 0; i < err.size(); ++i) {
        if (!(err[i] <= d.bound * kU * acc.absprod[i]) && bad++ < 3)
          ADD_FAILURE() << what << ": entry " << i << " error " << err[i] << " > " << d.bound << " u |A||B| = "
                        << d.bound * kU * acc.absprod[i];
        if (acc.absprod[i] > 0) worst = std::max(worst, err[i] / (kU * acc.absprod[i]));
      }
      EXPECT_EQ(bad, 0) << what;
      std::cout << "[ zfp64    ]   largest error " << worst << " u |A||B| (bound " << d.bound << ", target "
                << info.target << ")" << std::endl;
    }
    return d.moduli;
  }

  std::optional<ozgemm::Handle> h_, native_;
  std::mt19937_64 rng_ = oztest::test_rng();
};

TEST_P(GpuZgemmFp64, DecisionAndResultEqualTheHostReferenceAndMeetTheContract) {
  struct Shape {
    ComplexOp ta, tb;
    int m, n, k;
  };
  const Shape shapes[] = {{ComplexOp::N, ComplexOp::N, 200, 150, 700},
                          {ComplexOp::C, ComplexOp::N, 33, 17, 2000},
                          {ComplexOp::T, ComplexOp::C, 130, 260, 129}};
  int emulated = 0;
  for (const Shape& sh : shapes) {
    const bool ta_n = sh.ta == ComplexOp::N, tb_n = sh.tb == ComplexOp::N;
    for (const Operands& o :
         families(sh.ta, sh.tb, ta_n ? sh.m : sh.k, ta_n ? sh.k : sh.m, tb_n ? sh.k : sh.n, tb_n ? sh.n : sh.k, rng_)) {
      const std::string what = o.name + " " + char(sh.ta) + char(sh.tb) + " " + std::to_string(sh.m) + "x" +
                               std::to_string(sh.n) + "x" + std::to_string(sh.k);
      emulated += check(what, sh.ta, sh.tb, sh.m, sh.n, sh.k, o.A, o.B, /*contract=*/true) > 0;
    }
  }
  EXPECT_GT(emulated, 10) << "the phi families take the complex scheme";
}

// Wide-range data: phi 2 (the host decides; the GPU must agree) and phi 3 with an entry whose
// magnitude product is 0 (row 0 of A large only at l = 0, column 0 of B only at l = 1: no lower
// bound of |A||B|, R2c = inf at every count): native ZGEMM with the reason.
TEST_P(GpuZgemmFp64, WideRangeDataWithoutACertifiedCountRunNativeZgemm) {
  const int m = 150, n = 120, k = 600;
  for (double phi : {2.0, 3.0}) {
    std::vector<zcomplex> A = complex_matrix(m, k, m, phi, phi, rng_), B = complex_matrix(k, n, k, phi, phi, rng_);
    if (phi == 3.0) {
      A[0] = zcomplex(0x1p60, -0x1p60);
      B[1] = zcomplex(0x1p60, 0x1p60);
      const ref::Ozaki2Decision d = ref::decide_complex_moduli(ComplexOp::N, ComplexOp::N, m, n, k, A.data(), m, B.data(), k);
      ASSERT_EQ(d.moduli, 0) << "an entry with P = 0 certifies no count";
    }
    check("phi " + std::to_string(phi), ComplexOp::N, ComplexOp::N, m, n, k, A, B, /*contract=*/false);
  }
}

// Inf/NaN: entries whose row or column holds one take the special path (as native complex arithmetic)
// and are left out of the bound; where every entry is special, every count's maximum is 0 and the
// fewest moduli run.
TEST_P(GpuZgemmFp64, InfAndNanEntries) {
  const int m = 120, n = 90, k = 300;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<zcomplex> A = complex_matrix(m, k, m, 0.5, 0.5, rng_), B = complex_matrix(k, n, k, 0.5, 0.5, rng_);
  A[3 + 7 * size_t(m)] = zcomplex(inf, 0.5);
  A[9 + 2 * size_t(m)] = zcomplex(0.25, -inf);
  B[11 + 4 * size_t(k)] = zcomplex(nan, 1.0);
  EXPECT_GT(check("some Inf/NaN", ComplexOp::N, ComplexOp::N, m, n, k, A, B, /*contract=*/false), 0);
  std::vector<zcomplex> all = A;
  for (int r = 0; r < m; ++r) all[size_t(r) + size_t(r % k) * m] = zcomplex(r % 2 ? inf : 1.0, r % 2 ? 0.0 : nan);
  const ref::Ozaki2Decision d = ref::decide_complex_moduli(ComplexOp::N, ComplexOp::N, m, n, k, all.data(), m, B.data(), k);
  ASSERT_EQ(d.moduli, ozgemm::kMinModuli);
  EXPECT_EQ(check("every row of A non-finite", ComplexOp::N, ComplexOp::N, m, n, k, all, B, false), ozgemm::kMinModuli);
}

// The bound pass over many blocks (blocks skip the counts earlier blocks found past the target) and,
// with m >= DecisionPolicy::kOz2SampleMinRows, the sample of the first rows: large last rows (outside
// the sample) or small first columns, so the entries that decide lie in different places. The count
// and the bound equal the host's.
TEST_P(GpuZgemmFp64, DecisionOverManyBlocksAndTheSampleEqualsTheHostReference) {
  const int m = 2560, n = 640, k = 256;
  for (double phi : {-1.0, 0.5, 1.0})
    for (int order = 0; order < 2; ++order) {
      std::vector<zcomplex> A = complex_matrix(m, k, m, phi, phi, rng_), B = complex_matrix(k, n, k, phi, phi, rng_);
      for (int r = m - 64; r < m && order == 0; ++r)
        for (int l = 0; l < k; ++l) A[size_t(r) + size_t(l) * m] *= 0x1p40;
      for (int c = 0; c < 64 && order == 1; ++c)
        for (int l = 0; l < k; ++l) B[size_t(l) + size_t(c) * k] *= 0x1p-40;
      const std::string what = "phi " + std::to_string(phi) + (order ? " (small first columns)" : " (large last rows)");
      const ref::Ozaki2Decision d = ref::decide_complex_moduli(ComplexOp::N, ComplexOp::N, m, n, k, A.data(), m, B.data(), k);
      std::vector<zcomplex> C;
      ozgemmCallInfo_t info{};
      ASSERT_EQ(call(h(), ComplexOp::N, ComplexOp::N, m, n, k, A, m, B, k, &C, &info), OZGEMM_STATUS_SUCCESS);
      std::cout << "[ zfp64    ] " << what << ": host " << d.moduli << " moduli, bound " << d.bound << "; GPU: "
                << info.reason << std::endl;
      EXPECT_EQ(info.moduli, d.moduli) << what << ": " << info.reason;
      EXPECT_EQ(info.fell_back, d.moduli == 0 ? 1 : 0) << what << ": " << info.reason;
      if (d.moduli) {
        EXPECT_TRUE(oztest::same_bits(info.bound, d.bound)) << what << ": GPU " << info.bound << " host " << d.bound;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Variants, GpuZgemmFp64, ::testing::Values(OZGEMM_VARIANT_UNFUSED, OZGEMM_VARIANT_PARTIALLY_FUSED),
                         [](const ::testing::TestParamInfo<ozgemmVariant_t>& i) {
                           return i.param == OZGEMM_VARIANT_UNFUSED ? std::string("Unfused") : std::string("PartiallyFused");
                         });

// Under CUDA graph capture FP64 mode cannot read the data back: native ZGEMM, and the captured graph
// replays it (the bits of a native call).
TEST(GpuZgemmFp64Capture, GraphCaptureRunsNativeZgemm) {
  OZTEST_REQUIRE_GPU();
  ozgemm::Handle h;
  const int m = 64, n = 64, k = 64;
  std::mt19937_64 rng = oztest::test_rng();
  const std::vector<zcomplex> A = complex_matrix(m, k, m, 0.5, 0.5, rng), B = complex_matrix(k, n, k, 0.5, 0.5, rng);
  cuDoubleComplex *dA = nullptr, *dB = nullptr, *dC = nullptr;
  ASSERT_EQ(cudaMalloc(&dA, A.size() * 16), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dB, B.size() * 16), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dC, size_t(m) * n * 16), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dA, A.data(), A.size() * 16, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dB, B.data(), B.size() * 16, cudaMemcpyHostToDevice), cudaSuccess);
  cudaStream_t st;
  ASSERT_EQ(cudaStreamCreate(&st), cudaSuccess);
  ASSERT_EQ(ozgemmSetStream(h.get(), st), OZGEMM_STATUS_SUCCESS);
  const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0), zero = make_cuDoubleComplex(0.0, 0.0);
  // Native ZGEMM once outside the capture (cuBLAS may allocate on first use, which capture forbids);
  // its result is what the graph must reproduce.
  ASSERT_EQ(ozgemmSetVariant(h.get(), OZGEMM_VARIANT_NATIVE), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(ozgemmZgemm(h.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &zero, dC, m), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  std::vector<zcomplex> want(size_t(m) * n), got(want.size());
  ASSERT_EQ(cudaMemcpy(want.data(), dC, want.size() * 16, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemset(dC, 0xff, want.size() * 16), cudaSuccess);  // NaN
  ASSERT_EQ(ozgemmSetVariant(h.get(), OZGEMM_VARIANT_UNFUSED), OZGEMM_STATUS_SUCCESS);  // FP64 mode decides here
  cudaGraph_t graph;
  ASSERT_EQ(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_EQ(ozgemmZgemm(h.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &zero, dC, m), OZGEMM_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamEndCapture(st, &graph), cudaSuccess);
  ozgemmCallInfo_t info{};
  ASSERT_EQ(ozgemmGetLastCallInfo(h.get(), &info), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(info.variant, OZGEMM_VARIANT_NATIVE);
  EXPECT_EQ(info.fell_back, 1);
  EXPECT_NE(std::string(info.reason).find("native ZGEMM"), std::string::npos) << info.reason;
  EXPECT_NE(std::string(info.reason).find("captured"), std::string::npos) << info.reason;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, st), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(got.data(), dC, got.size() * 16, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(oztest::count_differences(want, got, "graph replay vs native ZGEMM"), 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(st);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
}

}  // namespace
