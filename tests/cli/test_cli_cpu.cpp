// CPU tests of the `ozgemm` tool's library (ozgemm_cli_common): the matrices a seed gives do not
// depend on the number of threads that draw them, and FP64 mode's host-path choice between the
// schemes follows the GPU's rule (src/plan/call_planner.cpp, step 3). No CUDA needed.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cli.hpp"

using namespace ozgemm::cli;
using ozgemm::Op;
using ozgemm::Scheme;

namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

// `--seed S` names the matrices: 1, 2, 3 and 16 threads draw the same bits, for shapes of one block
// and of many (past kGenBlockEntries, uneven last blocks), transposed layouts and C0 (beta != 0).
TEST(CliGenerator, SameSeedSameBitsOnAnyThreadCount) {
  CliOptions o;
  o.seed = 1234567;
  o.beta = 0.5;
  o.transa = Op::T;
  for (const Sizes s : {Sizes{5, 7, 3}, Sizes{300, 200, 1100}, Sizes{1, 1, 600000}}) {
    const HostProblem one = make_problem(o, s, 2.0, 1);
    ASSERT_GT(one.A.size(), 0u);
    for (unsigned threads : {2u, 3u, 16u}) {
      const HostProblem many = make_problem(o, s, 2.0, threads);
      EXPECT_TRUE(same_bits(one.A, many.A)) << s.m << "x" << s.n << "x" << s.k << ", " << threads << " threads";
      EXPECT_TRUE(same_bits(one.B, many.B)) << s.m << "x" << s.n << "x" << s.k << ", " << threads << " threads";
      EXPECT_TRUE(same_bits(one.C0, many.C0)) << s.m << "x" << s.n << "x" << s.k << ", " << threads << " threads";
    }
    EXPECT_TRUE(same_bits(one.A, make_problem(o, s, 2.0, 0).A));  // hardware_concurrency threads
  }
}

// The seed and the matrix both reach every block: another seed, or A against B of the same shape,
// gives other values; the blocks of one matrix are not copies of each other.
TEST(CliGenerator, SeedAndMatrixChangeTheValues) {
  const int64_t rows = 64, cols = 3 * kGenBlockEntries / rows;  // 3 blocks
  ASSERT_EQ(gen_block_cols(rows), kGenBlockEntries / rows);
  std::vector<double> a(rows * cols), b(rows * cols), c(rows * cols);
  fill_phi_blocks(a.data(), rows, cols, rows, 0.5, 42, GenMatrix::A, 4);
  fill_phi_blocks(b.data(), rows, cols, rows, 0.5, 43, GenMatrix::A, 4);
  fill_phi_blocks(c.data(), rows, cols, rows, 0.5, 42, GenMatrix::B, 4);
  EXPECT_FALSE(same_bits(a, b));
  EXPECT_FALSE(same_bits(a, c));
  const size_t block = size_t(kGenBlockEntries);
  EXPECT_NE(std::memcmp(a.data(), a.data() + block, block * sizeof(double)), 0);
  // The leading dimension's padding is left alone.
  std::vector<double> padded(size_t(rows + 3) * 2, -7.0);
  fill_phi_blocks(padded.data(), rows, 2, rows + 3, 0.5, 42, GenMatrix::A, 2);
  EXPECT_EQ(padded[rows], -7.0);
  EXPECT_EQ(padded[2 * (rows + 3) - 1], -7.0);
  EXPECT_EQ(std::memcmp(padded.data(), a.data(), rows * sizeof(double)), 0);  // column 0 as in the tight layout
}

// The host path's FP64-mode choice, as an H100 makes it (auto_rules.cpp's Hopper tables):
// native below the measured shapes whatever the counts; at 8192^3 Ozaki-II at up to 18 moduli and
// Ozaki-I only at up to 6 slices; of two candidates the one with the higher expected rate.
TEST(CliFp64Choice, FollowsTheGpuRule) {
  const Sizes small{256, 256, 256}, large{8192, 8192, 8192};
  Fp64Choice c = choose_fp64_scheme(small, Scheme::Auto, 5, 14);
  EXPECT_EQ(c.path, Fp64Path::Native);
  EXPECT_EQ(c.count, 0);
  EXPECT_NE(c.reason.find("Ozaki-I at 5 slices slower than native"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("Ozaki-II at 14 moduli slower than native"), std::string::npos) << c.reason;

  c = choose_fp64_scheme(large, Scheme::Auto, 7, 15);  // Ozaki-I at 7 slices loses to native on the H100
  EXPECT_EQ(c.path, Fp64Path::Ozaki2);
  EXPECT_EQ(c.count, 15);
  c = choose_fp64_scheme(large, Scheme::Auto, 7, 19);  // past 18 moduli at 8192^3: native
  EXPECT_EQ(c.path, Fp64Path::Native);
  c = choose_fp64_scheme(large, Scheme::Auto, 6, 0);  // no moduli count meets the bound
  EXPECT_EQ(c.path, Fp64Path::Ozaki1);
  EXPECT_EQ(c.count, 6);
  EXPECT_NE(c.reason.find("no moduli count"), std::string::npos) << c.reason;
  // Both candidates: Ozaki-I at 6 slices (21 products at 61.6 TFLOPS x 21) is expected at 61.6
  // TFLOPS, Ozaki-II at 15 moduli at 77.6: Ozaki-II.
  c = choose_fp64_scheme(large, Scheme::Auto, 6, 15);
  EXPECT_EQ(c.path, Fp64Path::Ozaki2);
  EXPECT_NE(c.reason.find("Ozaki-I at 6 slices"), std::string::npos) << c.reason;
  // --scheme limits the candidates.
  c = choose_fp64_scheme(large, Scheme::Ozaki1, 6, 15);
  EXPECT_EQ(c.path, Fp64Path::Ozaki1);
  c = choose_fp64_scheme(large, Scheme::Ozaki1, 7, 15);
  EXPECT_EQ(c.path, Fp64Path::Native);
  c = choose_fp64_scheme(large, Scheme::Ozaki2, 6, 16);
  EXPECT_EQ(c.path, Fp64Path::Ozaki2);
  EXPECT_EQ(c.count, 16);
}
