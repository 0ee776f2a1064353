// GPU tests of the symmetric Level-3 routines (ozgemmDsyrk, Dsyr2k, Dsyrkx, Dsymm): against the host
// reference (src/dropin/reference_symmetric.hpp) within FP64 mode's contract (4 u (|alpha| |A||B|)_ij
// plus the final roundings of alpha, beta and the merge), the triangle the routine must not write
// bit for bit unchanged (a sentinel pattern), beta == 0 ignoring NaN in C, n not a multiple of the
// block, odd sizes, the quick returns and the argument errors. FIXED mode (Ozaki-II, 20 moduli) runs
// the blocked emulation at any size; FP64 mode and variant NATIVE follow the planner's choice. Skipped
// (visibly) without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dropin/reference_symmetric.hpp"
#include "gpu_test_util.hpp"
#include "ozgemm/ozgemm.h"

namespace {

using ozgemm::dropin::in_triangle;
constexpr double kU = 0x1p-53;

enum class Routine { Syrk, Syr2k, Syrkx, Symm };

// A device copy of a host vector, copied back by download().
struct Device {
  double* ptr = nullptr;
  size_t count = 0;
  explicit Device(const std::vector<double>& v) : count(v.size()) {
    EXPECT_EQ(cudaMalloc(&ptr, count * sizeof(double)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, v.data(), count * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~Device() { cudaFree(ptr); }
  std::vector<double> download() const {
    std::vector<double> v(count);
    EXPECT_EQ(cudaMemcpy(v.data(), ptr, count * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }
};

double sentinel(size_t i) { return -1.0e300 / double(i % 97 + 1); }

struct Case {
  Routine routine = Routine::Syrk;
  cublasFillMode_t uplo = CUBLAS_FILL_MODE_LOWER;
  cublasOperation_t trans = CUBLAS_OP_N;
  cublasSideMode_t side = CUBLAS_SIDE_LEFT;
  int m = 0, n = 0, k = 0;  // rank-k: C n x n; SYMM: C m x n
  double alpha = 1.25, beta = 0.5;
};

// Runs one case on `h` and checks it; `nan_in_c`: C's written part holds NaN (beta must be 0).
void check_case(ozgemmHandle_t h, const Case& t, bool nan_in_c = false) {
  SCOPED_TRACE("routine " + std::to_string(int(t.routine)) + " uplo " + std::to_string(int(t.uplo)) + " trans " +
               std::to_string(int(t.trans)) + " side " + std::to_string(int(t.side)) + " m " + std::to_string(t.m) +
               " n " + std::to_string(t.n) + " k " + std::to_string(t.k) + " beta " + std::to_string(t.beta));
  std::mt19937_64 rng = oztest::test_rng();
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  const bool symm = t.routine == Routine::Symm, lower = t.uplo == CUBLAS_FILL_MODE_LOWER;
  const bool transposed = t.trans != CUBLAS_OP_N;
  const int rows_c = symm ? t.m : t.n, ka = t.side == CUBLAS_SIDE_LEFT ? t.m : t.n;
  const int rows_ab = transposed ? t.k : t.n, cols_ab = transposed ? t.n : t.k;
  const int lda = (symm ? ka : rows_ab) + 3, ldb = (symm ? t.m : rows_ab) + 1, ldc = rows_c + 2;
  std::vector<double> A(size_t(lda) * (symm ? ka : cols_ab)), B(size_t(ldb) * (symm ? t.n : cols_ab)),
      C(size_t(ldc) * t.n);
  for (double& x : A) x = dist(rng);
  for (double& x : B) x = dist(rng);
  if (symm)  // the triangle SYMM must not read
    for (int j = 0; j < ka; ++j)
      for (int i = 0; i < ka; ++i)
        if (!in_triangle(i, j, lower)) A[i + size_t(j) * lda] = std::nan("");
  auto written = [&](int64_t i, int64_t j) { return i < rows_c && (symm || in_triangle(i, j, lower)); };
  for (int64_t j = 0; j < t.n; ++j)
    for (int64_t i = 0; i < ldc; ++i) {
      const size_t at = size_t(i + j * ldc);
      C[at] = !written(i, j) ? sentinel(at) : nan_in_c ? std::nan("") : dist(rng);
    }
  // The reference and, for the bound, |alpha| |op(A)| |op(B)|^T (SYR2K: both products) + |beta C|.
  std::vector<double> want = C, absA(A.size()), absB(B.size()), magnitude = C;
  for (size_t i = 0; i < A.size(); ++i) absA[i] = std::isnan(A[i]) ? A[i] : std::fabs(A[i]);
  for (size_t i = 0; i < B.size(); ++i) absB[i] = std::fabs(B[i]);
  for (double& x : magnitude) x = std::fabs(x);
  const double* Bref = t.routine == Routine::Syrk ? A.data() : B.data();
  const double* absBref = t.routine == Routine::Syrk ? absA.data() : absB.data();
  const int ldbref = t.routine == Routine::Syrk ? lda : ldb;
  const int products = t.routine == Routine::Syr2k ? 2 : 1;
  if (symm) {
    ozgemm::dropin::reference_symm(t.side == CUBLAS_SIDE_LEFT, lower, t.m, t.n, t.alpha, A.data(), lda, B.data(), ldb,
                                   t.beta, want.data(), ldc);
    ozgemm::dropin::reference_symm(t.side == CUBLAS_SIDE_LEFT, lower, t.m, t.n, std::fabs(t.alpha), absA.data(), lda,
                                   absB.data(), ldb, std::fabs(t.beta), magnitude.data(), ldc);
  } else {
    ozgemm::dropin::reference_rank_k(products, lower, transposed, t.n, t.k, t.alpha, A.data(), lda, Bref, ldbref,
                                     t.beta, want.data(), ldc);
    ozgemm::dropin::reference_rank_k(products, lower, transposed, t.n, t.k, std::fabs(t.alpha), absA.data(), lda,
                                     absBref, ldbref, std::fabs(t.beta), magnitude.data(), ldc);
  }
  Device dA(A), dB(B), dC(C);
  ozgemmStatus_t st = OZGEMM_STATUS_INTERNAL_ERROR;
  switch (t.routine) {
    case Routine::Syrk: st = ozgemmDsyrk(h, t.uplo, t.trans, t.n, t.k, &t.alpha, dA.ptr, lda, &t.beta, dC.ptr, ldc); break;
    case Routine::Syr2k:
      st = ozgemmDsyr2k(h, t.uplo, t.trans, t.n, t.k, &t.alpha, dA.ptr, lda, dB.ptr, ldb, &t.beta, dC.ptr, ldc);
      break;
    case Routine::Syrkx:
      st = ozgemmDsyrkx(h, t.uplo, t.trans, t.n, t.k, &t.alpha, dA.ptr, lda, dB.ptr, ldb, &t.beta, dC.ptr, ldc);
      break;
    case Routine::Symm:
      st = ozgemmDsymm(h, t.side, t.uplo, t.m, t.n, &t.alpha, dA.ptr, lda, dB.ptr, ldb, &t.beta, dC.ptr, ldc);
      break;
  }
  ASSERT_EQ(st, OZGEMM_STATUS_SUCCESS) << ozgemmGetStatusString(st);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<double> got = dC.download();
  // The contract's 4 u per product, plus roundings of alpha, beta, the sum (SYR2K, the merge): 8 u.
  const double c = 4.0 * products + 8.0;
  int64_t bad = 0;
  for (int64_t j = 0; j < t.n; ++j)
    for (int64_t i = 0; i < ldc; ++i) {
      const size_t at = size_t(i + j * ldc);
      const bool ok = written(i, j) ? std::fabs(got[at] - want[at]) <= c * kU * magnitude[at]
                                    : oztest::same_bits(got[at], C[at]) && !std::isnan(got[at]);
      if (!ok && bad++ < 3)
        ADD_FAILURE() << (written(i, j) ? "written" : "untouched") << " entry (" << i << ", " << j << "): got "
                      << got[at] << " want " << (written(i, j) ? want[at] : C[at]) << " bound "
                      << c * kU * magnitude[at];
    }
  EXPECT_EQ(bad, 0);
}

class SymmetricTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OZTEST_REQUIRE_GPU();
    ASSERT_EQ(ozgemmCreate(&h_), OZGEMM_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (h_) ozgemmDestroy(h_);
  }
  ozgemmHandle_t h_ = nullptr;
};

// FIXED mode: the blocked emulation whatever the size (blocks of 1024 here: 2500 = 1024 + 1024 + 452).
TEST_F(SymmetricTest, BlockedRankKInFixedMode) {
  ASSERT_EQ(ozgemmSetModuli(h_, 20), OZGEMM_STATUS_SUCCESS);
  for (Routine r : {Routine::Syrk, Routine::Syr2k, Routine::Syrkx})
    for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
      for (cublasOperation_t trans : {CUBLAS_OP_N, CUBLAS_OP_T}) {
        Case t;
        t.routine = r;
        t.uplo = uplo;
        t.trans = trans;
        t.n = 2500;
        t.k = 301;
        check_case(h_, t);
        ozgemmCallInfo_t info;
        ASSERT_EQ(ozgemmGetLastCallInfo(h_, &info), OZGEMM_STATUS_SUCCESS);
        // 3 diagonal and 2 off-diagonal blocks, one GEMM each a product
        const std::string gemms = std::to_string(r == Routine::Syr2k ? 10 : 5) + " GEMMs";
        EXPECT_NE(std::string(info.reason).find(gemms), std::string::npos) << info.reason;
      }
}

TEST_F(SymmetricTest, BetaZeroIgnoresNaNAndSmallOddSizes) {
  ASSERT_EQ(ozgemmSetModuli(h_, 20), OZGEMM_STATUS_SUCCESS);
  for (int n : {1, 3, 17, 1025}) {
    Case t;
    t.n = n;
    t.k = 7;
    t.beta = 0.0;
    check_case(h_, t, true);
    t.uplo = CUBLAS_FILL_MODE_UPPER;
    t.routine = Routine::Syr2k;
    check_case(h_, t, true);
  }
}

TEST_F(SymmetricTest, SymmInFixedMode) {
  ASSERT_EQ(ozgemmSetModuli(h_, 20), OZGEMM_STATUS_SUCCESS);
  for (cublasSideMode_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
    for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
      for (double beta : {0.0, 0.75}) {
        Case t;
        t.routine = Routine::Symm;
        t.side = side;
        t.uplo = uplo;
        t.m = 513;
        t.n = 301;
        t.beta = beta;
        check_case(h_, t, beta == 0.0);
      }
}

// FP64 mode and variant NATIVE: what the planner chooses (native at these sizes on Hopper), same checks.
TEST_F(SymmetricTest, Fp64ModeAndNative) {
  for (bool native : {false, true}) {
    if (native) {
      ASSERT_EQ(ozgemmSetVariant(h_, OZGEMM_VARIANT_NATIVE), OZGEMM_STATUS_SUCCESS);
    }
    Case t;
    t.n = 1531;
    t.k = 257;
    t.uplo = CUBLAS_FILL_MODE_UPPER;
    t.trans = CUBLAS_OP_T;
    check_case(h_, t);
    t.routine = Routine::Symm;
    t.m = 700;
    t.n = 300;
    t.side = CUBLAS_SIDE_RIGHT;
    check_case(h_, t);
  }
}

TEST_F(SymmetricTest, QuickReturnsScaleOnlyTheTriangle) {
  for (double beta : {1.0, 0.0, -2.0}) {
    Case t;
    t.n = 300;
    t.k = 0;
    t.beta = beta;
    check_case(h_, t);
    t.k = 10;
    t.alpha = 0.0;
    t.uplo = CUBLAS_FILL_MODE_UPPER;
    check_case(h_, t);
  }
}

TEST_F(SymmetricTest, ArgumentErrors) {
  double alpha = 1, beta = 0, *C = nullptr, *A = nullptr;
  const auto L = CUBLAS_FILL_MODE_LOWER;
  EXPECT_EQ(ozgemmDsyrk(nullptr, L, CUBLAS_OP_N, 4, 4, &alpha, A, 4, &beta, C, 4), OZGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(ozgemmDsyrk(h_, CUBLAS_FILL_MODE_FULL, CUBLAS_OP_N, 4, 4, &alpha, A, 4, &beta, C, 4),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmDsyrk(h_, L, cublasOperation_t(9), 4, 4, &alpha, A, 4, &beta, C, 4), OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmDsyrk(h_, L, CUBLAS_OP_N, 4, 4, &alpha, A, 3, &beta, C, 4), OZGEMM_STATUS_INVALID_VALUE);  // lda < n
  EXPECT_EQ(ozgemmDsyrk(h_, L, CUBLAS_OP_T, 4, 6, &alpha, A, 5, &beta, C, 4), OZGEMM_STATUS_INVALID_VALUE);  // lda < k
  EXPECT_EQ(ozgemmDsyr2k(h_, L, CUBLAS_OP_N, 4, 4, &alpha, A, 4, A, 3, &beta, C, 4), OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmDsyrkx(h_, L, CUBLAS_OP_N, 4, 4, &alpha, A, 4, A, 4, &beta, C, 3), OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmDsymm(h_, cublasSideMode_t(5), L, 4, 4, &alpha, A, 4, A, 4, &beta, C, 4), OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmDsymm(h_, CUBLAS_SIDE_RIGHT, L, 4, 6, &alpha, A, 5, A, 4, &beta, C, 4), OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmDsyrk(h_, L, CUBLAS_OP_N, 0, 4, &alpha, A, 1, &beta, C, 1), OZGEMM_STATUS_SUCCESS);  // n == 0
  EXPECT_EQ(ozgemmDsyrk(h_, L, CUBLAS_OP_N, 4, 4, nullptr, A, 4, &beta, C, 4), OZGEMM_STATUS_INVALID_VALUE);
}

}  // namespace
