// CPU tests of the `ozgemm` tool's library (ozgemm_cli_common): the matrices a seed gives do not
// depend on the number of threads that draw them, and FP64 mode's host-path choice between the
// schemes follows the GPU's rule (src/plan/call_planner.cpp, step 3). No CUDA needed.
#include <gtest/gtest.h>

#include <cmath>
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

// --complex: the real parts are the real problem's matrices (same seed, same bits), the imaginary
// parts scale with --imag-scale, and the errors of the complex host reference at 16 moduli are zero
// on Gaussian-integer data small enough to be exact, as they are for plain complex FP64.
TEST(CliComplex, ProblemAndErrors) {
  CliOptions o;
  o.seed = 99;
  o.complex = true;
  o.conj_a = true;
  o.transa = Op::T;
  o.imag_scale = 0.25;
  const Sizes s{7, 5, 9};
  const ComplexProblem p = make_complex_problem(o, s, 1.0, 1);
  const HostProblem re = make_problem(o, s, 1.0, 3);
  ASSERT_EQ(p.A.size(), re.A.size());
  ASSERT_EQ(p.opa, ozgemm::ref::ComplexOp::C);
  const ComplexProblem unit = [&] {
    CliOptions u = o;
    u.imag_scale = 1.0;
    return make_complex_problem(u, s, 1.0, 2);
  }();
  for (size_t i = 0; i < p.A.size(); ++i) {
    EXPECT_EQ(p.A[i].real(), re.A[i]);
    EXPECT_EQ(p.A[i].imag(), 0.25 * unit.A[i].imag());
  }
  // Gaussian integers: every product and sum exact in FP64.
  ComplexProblem q = p;
  for (auto* v : {&q.A, &q.B})
    for (auto& z : *v)
      z = {std::fmax(-3.0, std::fmin(3.0, std::round(4 * z.real()))), std::fmax(-3.0, std::fmin(3.0, std::round(4 * z.imag())))};
  std::vector<zcomplex> C(q.C0.size()), D(q.C0.size());
  ozgemm::ref::plain_zgemm(q.opa, q.opb, s.m, s.n, s.k, q.alpha, q.A.data(), q.re.lda, q.B.data(), q.re.ldb, q.beta,
                           C.data(), q.re.ldc);
  ozgemm::ref::ozaki2_complex_reference(q.opa, q.opb, s.m, s.n, s.k, q.alpha, q.A.data(), q.re.lda, q.B.data(),
                                        q.re.ldb, q.beta, D.data(), q.re.ldc, 16);
  const auto entries = all_entries(s.m, s.n);
  ASSERT_EQ(entries.size(), size_t(s.m * s.n));
  for (const auto* c : {&C, &D}) {
    const auto e = complex_errors_on(q, c->data(), q.re.ldc, entries);
    EXPECT_EQ(e.compared, s.m * s.n);
    EXPECT_EQ(e.componentwise, 0.0) << (c == &C ? "plain" : "2M, 16 moduli");
    EXPECT_EQ(e.normwise, 0.0);
  }
  C[3] += zcomplex(0.0, 1.0);  // one entry off by i: seen with the complex modulus
  const auto e = complex_errors_on(q, C.data(), q.re.ldc, entries);
  EXPECT_GT(e.componentwise, 0.0);
  EXPECT_EQ(e.nonfinite_mismatch, 0);
}
