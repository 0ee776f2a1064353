// CPU tests of the symmetric Level-3 routines' planning: the blocked decomposition of C's triangle
// (src/plan/symmetric_blocks.hpp) covers exactly the triangle, each entry once, and, run on the host
// with plain GEMMs and the masked merge, gives the reference SYRK / SYR2K / SYRKX while leaving the
// other triangle bit for bit; the choice between native and emulation (src/plan/symmetric_plan.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dropin/reference_symmetric.hpp"
#include "plan/auto_rules.hpp"
#include "plan/symmetric_blocks.hpp"
#include "plan/symmetric_plan.hpp"

using ozgemm::DeviceDesc;
using ozgemm::TriangleBlock;
using ozgemm::dropin::in_triangle;

namespace {

// How many times each entry of an n x n matrix is written: off-diagonal blocks all of theirs,
// diagonal blocks their triangle.
std::vector<int> coverage(int64_t n, int64_t nb, bool lower) {
  std::vector<int> hits(size_t(n * n), 0);
  for (const TriangleBlock& b : ozgemm::triangle_blocks(n, nb, lower))
    for (int64_t j = b.col0; j < b.col0 + b.cols; ++j)
      for (int64_t i = b.row0; i < b.row0 + b.rows; ++i)
        if (!b.diagonal || in_triangle(i - b.row0, j - b.col0, lower)) ++hits[size_t(i + j * n)];
  return hits;
}

TEST(SymmetricBlocks, CoverTheTriangleExactlyOnce) {
  for (bool lower : {true, false})
    for (int64_t n : {0, 1, 2, 5, 7, 64, 1000, 3000})
      for (int64_t nb : {1, 3, 7, 1024}) {
        const std::vector<int> hits = coverage(n, nb, lower);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < n; ++i)
            ASSERT_EQ(hits[size_t(i + j * n)], in_triangle(i, j, lower) ? 1 : 0)
                << "n " << n << " nb " << nb << (lower ? " lower" : " upper") << " entry (" << i << ", " << j << ")";
        const int64_t diagonal_blocks = (n + nb - 1) / nb;
        EXPECT_EQ(int64_t(ozgemm::triangle_blocks(n, nb, lower).size()), diagonal_blocks ? 2 * diagonal_blocks - 1 : 0);
      }
}

TEST(SymmetricBlocks, DiagonalBlocksAreSquareAndOffDiagonalOnesStayInTheTriangle) {
  for (bool lower : {true, false})
    for (const TriangleBlock& b : ozgemm::triangle_blocks(2500, 1024, lower)) {
      if (b.diagonal) {
        EXPECT_EQ(b.row0, b.col0);
        EXPECT_EQ(b.rows, b.cols);
      } else {
        // lower: the whole block below the diagonal; upper: above it
        EXPECT_TRUE(lower ? b.row0 >= b.col0 + b.cols : b.col0 >= b.row0 + b.rows);
      }
    }
}

// The blocked rank-k update run on the host the way src/api/symmetric_api.cpp runs it on the GPU
// (for_each_triangle_step, operand_row, a plain GEMM per step, the masked merge).
void blocked_rank_k(int products, bool lower, bool transposed, int64_t n, int64_t k, int64_t nb, double alpha,
                    const double* A, int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  std::vector<double> T(size_t(nb * nb));
  auto op = [&](const double* X, int64_t ld, int64_t i, int64_t l) { return transposed ? X[l + i * ld] : X[i + l * ld]; };
  auto c_block = [&](const TriangleBlock& b) { return C + b.row0 + b.col0 * ldc; };
  auto gemm = [&](const TriangleBlock& b, int p, bool into_scratch) {
    const double *X = p ? B : A, *Y = p ? A : B;
    const int64_t ldx = p ? ldb : lda, ldy = p ? lda : ldb;
    const double *Xr = ozgemm::operand_row(X, ldx, transposed, b.row0), *Yr = ozgemm::operand_row(Y, ldy, transposed, b.col0);
    const double scale = p ? 1.0 : into_scratch ? 0.0 : beta;
    double* out = into_scratch ? T.data() : c_block(b);
    const int64_t ldo = into_scratch ? b.rows : ldc;
    for (int64_t j = 0; j < b.cols; ++j)
      for (int64_t i = 0; i < b.rows; ++i) {
        double t = 0.0;
        for (int64_t l = 0; l < k; ++l) t += op(Xr, ldx, i, l) * op(Yr, ldy, j, l);
        double& o = out[i + j * ldo];
        o = scale == 0.0 ? alpha * t : alpha * t + scale * o;
      }
    return true;
  };
  auto merge = [&](const TriangleBlock& b) {
    ozgemm::dropin::reference_triangle_merge(b.rows, lower, T.data(), b.rows, beta, c_block(b), ldc);
    return true;
  };
  ASSERT_TRUE(ozgemm::for_each_triangle_step(n, nb, lower, products, gemm, merge));
}

TEST(SymmetricBlocks, BlockedUpdateMatchesTheReferenceAndLeavesTheOtherTriangle) {
  const int64_t n = 11, k = 6, ldc = n + 2;
  for (int products : {1, 2})
    for (bool lower : {true, false})
      for (bool transposed : {false, true})
        for (double beta : {0.0, 0.75})
          for (int64_t nb : {1, 4, 11, 16}) {
            const int64_t rows = transposed ? k : n, cols = transposed ? n : k, lda = rows + 1, ldb = rows + 3;
            std::vector<double> A(size_t(lda * cols)), B(size_t(ldb * cols)), C(size_t(ldc * n));
            for (size_t i = 0; i < A.size(); ++i) A[i] = double(int(i * 7 % 23) - 11) / 8.0;
            for (size_t i = 0; i < B.size(); ++i) B[i] = double(int(i * 5 % 19) - 9) / 4.0;
            for (size_t i = 0; i < C.size(); ++i) C[i] = beta == 0.0 ? std::nan("") : double(int(i % 13) - 6);
            // the other triangle and the padding: values that must survive bit for bit
            for (int64_t j = 0; j < n; ++j)
              for (int64_t i = 0; i < ldc; ++i)
                if (i >= n || !in_triangle(i, j, lower)) C[size_t(i + j * ldc)] = -1e300 * double(i + 1) / double(j + 1);
            std::vector<double> want = C, got = C;
            ozgemm::dropin::reference_rank_k(products, lower, transposed, n, k, 1.5, A.data(), lda, B.data(), ldb, beta,
                                             want.data(), ldc);
            blocked_rank_k(products, lower, transposed, n, k, nb, 1.5, A.data(), lda, B.data(), ldb, beta, got.data(),
                           ldc);
            for (int64_t j = 0; j < n; ++j)
              for (int64_t i = 0; i < ldc; ++i) {
                const double g = got[size_t(i + j * ldc)], w = want[size_t(i + j * ldc)];
                if (i < n && in_triangle(i, j, lower))
                  ASSERT_NEAR(g, w, 1e-12 * (1.0 + std::fabs(w))) << "products " << products << " nb " << nb
                                                                  << " (" << i << ", " << j << ")";
                else
                  ASSERT_EQ(std::memcmp(&g, &w, sizeof g), 0) << "untouched entry (" << i << ", " << j << ") changed";
              }
          }
}

DeviceDesc hopper() { return DeviceDesc{}; }  // the defaults: an H100 with the Hopper kernels
DeviceDesc a100() {
  DeviceDesc d;
  d.cc_major = 8;
  d.sm90_kernels = false;
  return d;
}

TEST(SymmetricPlan, RankKChoice) {
  ozgemm::CallSettings fp64;
  // Hopper: AUTO emulates from 8192-wide GEMMs, so the block is 8192 and n must be 4 x that.
  auto c = ozgemm::symmetric_rank_k_choice(fp64, 32768, 16384, hopper());
  EXPECT_TRUE(c.emulate) << c.reason;
  EXPECT_EQ(c.block, 8192);
  EXPECT_LE(double(c.block), 32768 * ozgemm::kSymmetricMaxOverhead);
  c = ozgemm::symmetric_rank_k_choice(fp64, 16384, 16384, hopper());
  EXPECT_FALSE(c.emulate) << "8192-blocks of a 16384 triangle add half the work again";
  c = ozgemm::symmetric_rank_k_choice(fp64, 2048, 2048, hopper());
  EXPECT_FALSE(c.emulate);
  // The roofline (A100): every block size emulates, the smallest is taken.
  c = ozgemm::symmetric_rank_k_choice(fp64, 8192, 8192, a100());
  EXPECT_TRUE(c.emulate) << c.reason;
  EXPECT_EQ(c.block, ozgemm::kSymmetricBlockStep);
  // FIXED mode always emulates, with AUTO's block where there is one; variant NATIVE never.
  ozgemm::CallSettings fixed;
  fixed.fp64_mode = false;
  c = ozgemm::symmetric_rank_k_choice(fixed, 16384, 16384, hopper());
  EXPECT_TRUE(c.emulate);
  EXPECT_EQ(c.block, 8192);
  c = ozgemm::symmetric_rank_k_choice(fixed, 100, 100, hopper());
  EXPECT_TRUE(c.emulate);
  EXPECT_EQ(c.block, ozgemm::kSymmetricBlockStep);
  ozgemm::CallSettings native;
  native.variant = ozgemm::Variant::Native;
  EXPECT_FALSE(ozgemm::symmetric_rank_k_choice(native, 65536, 16384, hopper()).emulate);
}

TEST(SymmetricPlan, MultiplyChoiceFollowsTheGemmShape) {
  ozgemm::CallSettings fp64;
  const auto big = ozgemm::gemm_shape(ozgemm::Op::N, ozgemm::Op::N, 16384, 16384, 16384, 16384, 16384, 16384);
  const auto small = ozgemm::gemm_shape(ozgemm::Op::N, ozgemm::Op::N, 1024, 1024, 1024, 1024, 1024, 1024);
  EXPECT_EQ(ozgemm::symmetric_multiply_choice(fp64, big, hopper()).emulate,
            ozgemm::auto_ozaki2(big, ozgemm::kDefaultModuli, hopper()));
  EXPECT_TRUE(ozgemm::symmetric_multiply_choice(fp64, big, hopper()).emulate);
  EXPECT_FALSE(ozgemm::symmetric_multiply_choice(fp64, small, hopper()).emulate);
  ozgemm::CallSettings fixed;
  fixed.fp64_mode = false;
  EXPECT_TRUE(ozgemm::symmetric_multiply_choice(fixed, small, hopper()).emulate);
}

}  // namespace
