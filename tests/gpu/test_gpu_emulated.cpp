// GPU tests of the emulated variants (unfused, partially fused, fully fused): the GPU result must
// equal the host reference (ref::ozaki_dgemm) bit for bit. Without a usable GPU every test here is
// skipped (GTEST_SKIP), which ctest reports as "Skipped". Inputs are drawn from the printed suite
// seed (OZGEMM_TEST_SEED repeats a run; gpu_test_util.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "api/testing.hpp"  // testing::set_planning_memory
#include "gpu/gpu_test_util.hpp"
#include "ozgemm/ozgemm.hpp"
#include "ozgemm/reference/reference.hpp"

using ozgemm::Op;

namespace {

using oztest::same_bits;

struct Case {
  Op ta = Op::N, tb = Op::N;
  int m = 1, n = 1, k = 1;
  int lda_pad = 0, ldb_pad = 0, ldc_pad = 0;
  double alpha = 1.0, beta = 0.0;
  int slices = 8;
  double phi = 0.5;
  std::string describe() const {
    return std::string("ta=") + char(ta) + " tb=" + char(tb) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
           " k=" + std::to_string(k) + " pads=" + std::to_string(lda_pad) + "," + std::to_string(ldb_pad) + "," +
           std::to_string(ldc_pad) + " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta) +
           " s=" + std::to_string(slices) + " phi=" + std::to_string(phi);
  }
};

struct Operands {
  int lda, ldb, ldc;
  std::vector<double> A, B, C0;
};

Operands make_operands(const Case& c, std::mt19937_64& rng) {
  Operands o;
  const int a_rows = c.ta == Op::N ? c.m : c.k, a_cols = c.ta == Op::N ? c.k : c.m;
  const int b_rows = c.tb == Op::N ? c.k : c.n, b_cols = c.tb == Op::N ? c.n : c.k;
  o.lda = std::max(1, a_rows + c.lda_pad);
  o.ldb = std::max(1, b_rows + c.ldb_pad);
  o.ldc = std::max(1, c.m + c.ldc_pad);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Padding holds NaN: a read of it would show in C.
  o.A.assign(size_t(o.lda) * std::max(1, a_cols), nan);
  o.B.assign(size_t(o.ldb) * std::max(1, b_cols), nan);
  ozgemm::ref::fill_phi(o.A.data(), a_rows, a_cols, o.lda, c.phi, rng);
  ozgemm::ref::fill_phi(o.B.data(), b_rows, b_cols, o.ldb, c.phi, rng);
  // C: beta == 0 -> NaN poison everywhere (must not be read); else random, padding -7.25.
  o.C0.assign(size_t(o.ldc) * std::max(1, c.n), c.beta == 0.0 ? nan : -7.25);
  if (c.beta != 0.0) ozgemm::ref::fill_phi(o.C0.data(), c.m, c.n, o.ldc, 0.5, rng);
  return o;
}

// Runs GPU and host reference on the same inputs; returns the number of entries that differ.
int64_t compare_with_host(ozgemm::Handle& hd, const Case& c, const Operands& o, std::vector<double>* gpu_out = nullptr) {
  std::vector<double> host = o.C0, gpu = o.C0;
  ozgemm::ref::ozaki_dgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, o.A.data(), o.lda, o.B.data(), o.ldb, c.beta,
                           host.data(), o.ldc, c.slices);
  hd.set_slices(c.slices);
  // The requested variant must really run (no silent fallback to another kernel path).
  ozgemmVariant_t requested = OZGEMM_VARIANT_AUTO, planned = OZGEMM_VARIANT_AUTO;
  ozgemm::check(ozgemmGetVariant(hd.get(), &requested), "ozgemmGetVariant");
  ozgemm::check(ozgemmGetPlannedVariant(hd.get(), ozgemm::to_cublas(c.ta), ozgemm::to_cublas(c.tb), c.m, c.n, c.k,
                                        &planned),
                "ozgemmGetPlannedVariant");
  if (requested != OZGEMM_VARIANT_AUTO) {
    EXPECT_EQ(planned, requested) << c.describe();
  }
  ozgemm::dgemm_host_buffers(hd, c.ta, c.tb, c.m, c.n, c.k, c.alpha, o.A.data(), o.lda, o.B.data(), o.ldb, c.beta,
                             gpu.data(), o.ldc);
  int64_t bad = 0;
  for (size_t i = 0; i < host.size(); ++i)
    if (!same_bits(host[i], gpu[i])) {
      if (bad < 5)
        ADD_FAILURE() << c.describe() << ": entry " << i << " (row " << (i % o.ldc) << ", col " << (i / o.ldc)
                      << ") host " << host[i] << " gpu " << gpu[i];
      ++bad;
    }
  if (gpu_out) *gpu_out = gpu;
  return bad;
}

// One configuration of the emulation: variant and, for the fused variants, kernel family.
struct Config {
  ozgemmVariant_t variant;
  ozgemmKernelFamily_t family;
  ozgemmFusedAccumulator_t accumulator = OZGEMM_ACCUMULATOR_AUTO;  // fully fused
};

// One handle per configuration, set explicitly (AUTO may pick native DGEMM on this GPU).
ozgemm::Handle& handle(const Config& c) {
  static ozgemm::Handle* handles[5][3][3] = {};
  ozgemm::Handle*& h = handles[c.variant][c.family][c.accumulator];
  if (!h) {
    h = new ozgemm::Handle();
    h->set_variant(c.variant);
    ozgemm::check(ozgemmSetKernelFamily(h->get(), c.family), "ozgemmSetKernelFamily");
    ozgemm::check(ozgemmSetFusedAccumulator(h->get(), c.accumulator), "ozgemmSetFusedAccumulator");
  }
  return *h;
}

// Every test runs for each configuration; one this build or GPU lacks is skipped.
class GpuEmulated : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override {
    OZTEST_REQUIRE_GPU();
    ozgemmHandle_t probe = nullptr;
    ASSERT_EQ(ozgemmCreate(&probe), OZGEMM_STATUS_SUCCESS);
    ozgemmStatus_t st = ozgemmSetVariant(probe, GetParam().variant);
    if (st == OZGEMM_STATUS_SUCCESS) st = ozgemmSetKernelFamily(probe, GetParam().family);
    ozgemmDestroy(probe);
    if (st == OZGEMM_STATUS_NOT_SUPPORTED)
      GTEST_SKIP() << ozgemmGetVariantString(GetParam().variant) << " (family " << int(GetParam().family)
                   << ") is not available on this GPU/build";
    ASSERT_EQ(st, OZGEMM_STATUS_SUCCESS);
  }
  ozgemm::Handle& h() { return handle(GetParam()); }
  std::mt19937_64 rng = oztest::test_rng();
};

TEST_P(GpuEmulated, ShapesBitwiseEqualHost) {
  const int shapes[][3] = {{1, 1, 1},    {17, 33, 9},   {997, 1009, 1013}, {8192, 16, 8192}, {16, 8192, 512},
                           {64, 40, 1},  {300, 7, 129}, {33, 65, 4097}};
  for (auto& s : shapes) {
    Case c;
    c.m = s[0];
    c.n = s[1];
    c.k = s[2];
    Operands o = make_operands(c, rng);
    EXPECT_EQ(compare_with_host(h(), c, o), 0) << c.describe();
  }
}

TEST_P(GpuEmulated, GeneratedShapesBitwiseEqualHost) {
  // Random shapes from the test's seed: sizes that cross the tiles' edges (128, 256) and the
  // k-block edges of 8 slices (16256 fused, 16368 unfused), transposes, alpha/beta, slice counts.
  std::uniform_int_distribution<int> mn(1, 600), kk(1, 1200), slices(1, 10), coin(0, 1);
  std::uniform_int_distribution<int> small(1, 40), kedge(16200, 16500);
  for (int i = 0; i < 10; ++i) {
    Case c;
    const bool deep = i >= 8;  // two deep cases near the k-block edge, on small m and n
    c.m = deep ? small(rng) : mn(rng);
    c.n = deep ? small(rng) : mn(rng);
    c.k = deep ? kedge(rng) : kk(rng);
    c.slices = deep ? 8 : slices(rng);
    c.ta = coin(rng) ? Op::T : Op::N;
    c.tb = coin(rng) ? Op::T : Op::N;
    c.lda_pad = coin(rng) * 3;
    c.beta = coin(rng) ? 0.0 : -1.5;
    c.alpha = coin(rng) ? 1.0 : 0.75;
    Operands o = make_operands(c, rng);
    EXPECT_EQ(compare_with_host(h(), c, o), 0) << c.describe();
  }
}

TEST_P(GpuEmulated, KSplitBeyondInt32BoundBitwiseEqualHost) {
  // s = 8: k-blocks of at most 16368 (16256 for the fused kernels); k = 40000 needs 3 blocks;
  // s = 10 with k = 70000; s = 7 just past the fused bound of 18688 (2 blocks), on several
  // tiles and clusters with partial tiles and beta; s = 1 just past 130944.
  struct KCase {
    int s, m, n, k;
    double beta;
  };
  for (const KCase& kc : {KCase{8, 48, 40, 40000, 0.0}, KCase{10, 48, 40, 70000, 0.0}, KCase{3, 48, 40, 50000, 0.0},
                          KCase{7, 136, 264, 18689, 2.5}, KCase{1, 200, 130, 130945, 0.0}}) {
    Case c;
    c.m = kc.m;
    c.n = kc.n;
    c.k = kc.k;
    c.slices = kc.s;
    c.beta = kc.beta;
    Operands o = make_operands(c, rng);
    EXPECT_EQ(compare_with_host(h(), c, o), 0) << c.describe();
  }
}

TEST_P(GpuEmulated, RowAndColumnChunksBitwiseEqualHost) {
  // Planning as if the GPU had 2 GiB: a 256 MiB diagonal buffer forces row chunks for a tall
  // problem (m = 300000, 8 planes); a wide one is cut into column chunks of at most 65536.
  auto& hd = h();
  ozgemm::testing::set_planning_memory(hd.get(), int64_t(2) << 30);
  for (auto [m, n, k, ta] : {std::tuple<int, int, int, Op>{300000, 40, 64, Op::N}, {300001, 37, 33, Op::T},
                             {40, 140000, 32, Op::N}}) {
    Case c;
    c.m = m;
    c.n = n;
    c.k = k;
    c.ta = ta;
    c.beta = 2.5;
    c.ldc_pad = 3;
    Operands o = make_operands(c, rng);
    EXPECT_EQ(compare_with_host(hd, c, o), 0) << c.describe();
  }
  ozgemm::testing::set_planning_memory(hd.get(), 0);
}

TEST_P(GpuEmulated, ResultNearDblMaxDoesNotOverflow) {
  // DBL_MAX * 1: the most significant diagonal alone overflows; the result must not.
  const int m = 3, n = 2, k = 4;
  std::vector<double> A(m * k, 0.0), B(k * n, 0.0), C(m * n, std::nan(""));
  A[0] = 1.7976931348623157e308;  // (0, 0)
  A[1 + 1 * m] = -1.7976931348623157e308 / 4;
  A[2] = 0.5;
  B[0] = 1.0;
  B[1] = 1.0;
  B[0 + 1 * k] = 0.75;
  auto& hd = h();
  for (int s : {2, 7, 8}) {
    std::vector<double> host = C, gpu = C;
    ozgemm::ref::ozaki_dgemm(Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, host.data(), m, s);
    hd.set_slices(s);
    ozgemm::dgemm_host_buffers(hd, Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, gpu.data(), m);
    for (size_t i = 0; i < gpu.size(); ++i) EXPECT_TRUE(same_bits(host[i], gpu[i])) << "s=" << s << " entry " << i;
    EXPECT_TRUE(std::isfinite(gpu[0])) << "s=" << s;
    if (s >= 7) {
      EXPECT_EQ(gpu[0], 1.7976931348623157e308);
    }
  }
}

TEST_P(GpuEmulated, TransposesLeadingDimsAlphaBeta) {
  for (Op ta : {Op::N, Op::T})
    for (Op tb : {Op::N, Op::T})
      for (double alpha : {1.0, -0.5})
        for (double beta : {0.0, 1.0, 2.5}) {
          Case c;
          c.ta = ta;
          c.tb = tb;
          c.m = 131;
          c.n = 77;
          c.k = 203;
          c.lda_pad = 5;
          c.ldb_pad = 3;
          c.ldc_pad = 11;
          c.alpha = alpha;
          c.beta = beta;
          Operands o = make_operands(c, rng);
          EXPECT_EQ(compare_with_host(h(), c, o), 0) << c.describe();
        }
}

TEST_P(GpuEmulated, AlphaZeroScalesCAndReadsNothing) {
  for (double beta : {0.0, 1.0, 2.5}) {
    Case c;
    c.m = 70;
    c.n = 50;
    c.k = 90;
    c.alpha = 0.0;
    c.beta = beta;
    Operands o = make_operands(c, rng);
    std::fill(o.A.begin(), o.A.end(), std::numeric_limits<double>::quiet_NaN());  // must not be read
    std::vector<double> gpu;
    EXPECT_EQ(compare_with_host(h(), c, o, &gpu), 0) << c.describe();
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < c.m; ++i) ASSERT_FALSE(std::isnan(gpu[i + size_t(j) * o.ldc])) << c.describe();
  }
}

TEST_P(GpuEmulated, SlicesAndPhiSweep) {
  for (int s = 1; s <= 10; ++s)
    for (double phi : {-1.0, 0.5, 4.0}) {
      Case c;
      c.m = 96;
      c.n = 80;
      c.k = 257;
      c.slices = s;
      c.phi = phi;
      Operands o = make_operands(c, rng);
      EXPECT_EQ(compare_with_host(h(), c, o), 0) << c.describe();
    }
}

TEST_P(GpuEmulated, IntegerInputsExact) {
  // Entries in [-1000, 1000], 3 slices suffice (docs/numerics.md); the product is an
  // integer below 2^53 and must be exact.
  const int m = 150, n = 130, k = 700;
  std::vector<double> A(size_t(m) * k), B(size_t(k) * n), C(size_t(m) * n, std::nan(""));
  ozgemm::ref::fill_integers(A.data(), m, k, m, 1000, rng);
  ozgemm::ref::fill_integers(B.data(), k, n, k, 1000, rng);
  auto& hd = h();
  hd.set_slices(3);
  ozgemm::dgemm_host_buffers(hd, Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, C.data(), m);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      int64_t exact = 0;
      for (int l = 0; l < k; ++l) exact += int64_t(A[i + size_t(l) * m]) * int64_t(B[l + size_t(j) * k]);
      ASSERT_EQ(C[i + size_t(j) * m], double(exact)) << "entry " << i << "," << j;
    }
}

TEST_P(GpuEmulated, SpecialValuesMatchHostAndStayInTheirRowsAndColumns) {
  Case c;
  c.m = 40;
  c.n = 30;
  c.k = 50;
  Operands o = make_operands(c, rng);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  o.A[3 + 7 * size_t(o.lda)] = inf;    // row 3
  o.A[5 + 9 * size_t(o.lda)] = -inf;   // row 5
  o.A[5 + 10 * size_t(o.lda)] = inf;   // row 5: -inf * 1 + inf * 1 -> NaN in (5, 0)
  o.B[9 + 0 * size_t(o.ldb)] = 1.0;
  o.B[10 + 0 * size_t(o.ldb)] = 1.0;
  o.B[11 + 4 * size_t(o.ldb)] = nan;   // column 4
  o.B[12 + 8 * size_t(o.ldb)] = 0.0;
  o.A[9 + 12 * size_t(o.lda)] = inf;   // row 9 meets B(12, 8) == 0 -> NaN in (9, 8)
  for (int l = 0; l < c.k; ++l) o.A[20 + l * size_t(o.lda)] = 0.0;                     // zero row
  for (int l = 0; l < c.k; ++l) o.B[l + 20 * size_t(o.ldb)] = 1e300 * o.B[l + 20 * size_t(o.ldb)];  // huge column
  for (int l = 0; l < c.k; ++l) o.A[25 + l * size_t(o.lda)] *= 1e-310;                 // subnormal row
  std::vector<double> gpu;
  EXPECT_EQ(compare_with_host(h(), c, o, &gpu), 0);
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < c.m; ++i) {
      const double v = gpu[i + size_t(j) * o.ldc];
      const bool special_row = i == 3 || i == 5 || i == 9, special_col = j == 4;
      if (special_row || special_col) {
        EXPECT_FALSE(std::isfinite(v)) << i << "," << j;
      } else {
        EXPECT_TRUE(std::isfinite(v)) << i << "," << j;
      }
      if (i == 20 && !special_col) {
        EXPECT_EQ(v, 0.0);
      }
    }
  EXPECT_TRUE(std::isnan(gpu[5 + 0 * size_t(o.ldc)]));
  EXPECT_TRUE(std::isnan(gpu[9 + 8 * size_t(o.ldc)]));
}

TEST_P(GpuEmulated, RepeatedRunsBitwiseEqual) {
  Case c;
  c.m = 513;
  c.n = 257;
  c.k = 1025;
  Operands o = make_operands(c, rng);
  std::vector<double> first = o.C0, again = o.C0;
  auto& hd = h();
  hd.set_slices(7);
  ozgemm::dgemm_host_buffers(hd, c.ta, c.tb, c.m, c.n, c.k, 1.0, o.A.data(), o.lda, o.B.data(), o.ldb, 0.0,
                             first.data(), o.ldc);
  for (int rep = 0; rep < 3; ++rep) {
    ozgemm::dgemm_host_buffers(hd, c.ta, c.tb, c.m, c.n, c.k, 1.0, o.A.data(), o.lda, o.B.data(), o.ldb, 0.0,
                               again.data(), o.ldc);
    ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * 8), 0);
  }
}

TEST_P(GpuEmulated, InvalidArgumentsGiveStatusCodes) {
  auto& hd = h();
  double one = 1.0, zero = 0.0;
  double* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 64 * 64 * 8), cudaSuccess);
  EXPECT_EQ(ozgemmDgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, 4, d, 4, &zero, d, 4),
            OZGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(ozgemmDgemm(hd.get(), CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, &one, d, 4, d, 4, &zero, d, 4),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmDgemm(hd.get(), CUBLAS_OP_N, CUBLAS_OP_N, 8, 4, 4, &one, d, 4, d, 4, &zero, d, 8),
            OZGEMM_STATUS_INVALID_VALUE);  // lda < m
  EXPECT_EQ(ozgemmDgemm(hd.get(), CUBLAS_OP_T, CUBLAS_OP_N, 8, 4, 6, &one, d, 5, d, 6, &zero, d, 8),
            OZGEMM_STATUS_INVALID_VALUE);  // lda < k for op T
  EXPECT_EQ(ozgemmDgemm(hd.get(), CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, 4, d, 4, &zero, d, 3),
            OZGEMM_STATUS_INVALID_VALUE);  // ldc < m
  EXPECT_EQ(ozgemmDgemm(hd.get(), CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, nullptr, 4, d, 4, &zero, d, 4),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmDgemm(hd.get(), CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, nullptr, d, 4, d, 4, &zero, d, 4),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmDgemm(hd.get(), static_cast<cublasOperation_t>(42), CUBLAS_OP_N, 4, 4, 4, &one, d, 4, d, 4, &zero,
                        d, 4),
            OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmSetSlices(hd.get(), 21), OZGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozgemmSetSlices(hd.get(), -1), OZGEMM_STATUS_INVALID_VALUE);
  // m == 0 / n == 0: quick return, nothing read (null pointers allowed).
  EXPECT_EQ(ozgemmDgemm(hd.get(), CUBLAS_OP_N, CUBLAS_OP_N, 0, 4, 4, &one, nullptr, 1, nullptr, 4, &zero, nullptr, 1),
            OZGEMM_STATUS_SUCCESS);
  // Too-small user workspace.
  size_t need = 0;
  ASSERT_EQ(ozgemmGetWorkspaceSize(hd.get(), CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &need), OZGEMM_STATUS_SUCCESS);
  EXPECT_GT(need, 0u);
  ASSERT_EQ(ozgemmSetWorkspace(hd.get(), d, 256), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(ozgemmDgemm(hd.get(), CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, d, 64, d, 64, &zero, d, 64),
            OZGEMM_STATUS_INSUFFICIENT_WORKSPACE);
  ASSERT_EQ(ozgemmSetWorkspace(hd.get(), nullptr, 0), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(ozgemmGetPlannedVariant(hd.get(), CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, nullptr),
            OZGEMM_STATUS_INVALID_VALUE);
  cudaFree(d);
}

TEST_P(GpuEmulated, PlannedVariantReportsFallback) {
  auto& hd = h();
  hd.set_slices(7);
  ozgemmVariant_t v = OZGEMM_VARIANT_AUTO;
  ASSERT_EQ(ozgemmGetPlannedVariant(hd.get(), CUBLAS_OP_N, CUBLAS_OP_T, 8192, 8192, 40000, &v), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(v, GetParam().variant) << "k-split plans run the requested variant";
  // Planning as if the GPU had 2 GiB: the fully fused kernel's k-block spill (512 MiB) is past
  // the 256 MiB buffer cap, so that problem runs unfused, and the query says so.
  ozgemm::testing::set_planning_memory(hd.get(), int64_t(2) << 30);
  ASSERT_EQ(ozgemmGetPlannedVariant(hd.get(), CUBLAS_OP_N, CUBLAS_OP_T, 8192, 8192, 40000, &v), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(v, GetParam().variant == OZGEMM_VARIANT_FULLY_FUSED ? OZGEMM_VARIANT_UNFUSED : GetParam().variant);
  ozgemm::testing::set_planning_memory(hd.get(), 0);
}

TEST_P(GpuEmulated, UserWorkspaceGivesSameBits) {
  Case c;
  c.m = 200;
  c.n = 150;
  c.k = 300;
  Operands o = make_operands(c, rng);
  auto& hd = h();
  hd.set_slices(c.slices);
  size_t need = 0;
  ASSERT_EQ(ozgemmGetWorkspaceSize(hd.get(), CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &need), OZGEMM_STATUS_SUCCESS);
  void* ws = nullptr;
  ASSERT_EQ(cudaMalloc(&ws, need), cudaSuccess);
  ASSERT_EQ(cudaMemset(ws, 0x5a, need), cudaSuccess);  // garbage in the workspace must not matter
  ASSERT_EQ(ozgemmSetWorkspace(hd.get(), ws, need), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(compare_with_host(hd, c, o), 0);
  ASSERT_EQ(ozgemmSetWorkspace(hd.get(), nullptr, 0), OZGEMM_STATUS_SUCCESS);
  cudaFree(ws);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, GpuEmulated,
    ::testing::Values(Config{OZGEMM_VARIANT_UNFUSED, OZGEMM_KERNELS_AUTO},
                      Config{OZGEMM_VARIANT_PARTIALLY_FUSED, OZGEMM_KERNELS_SM90},
                      Config{OZGEMM_VARIANT_FULLY_FUSED, OZGEMM_KERNELS_SM90, OZGEMM_ACCUMULATOR_REGISTERS},
                      Config{OZGEMM_VARIANT_FULLY_FUSED, OZGEMM_KERNELS_SM90, OZGEMM_ACCUMULATOR_GLOBAL},
                      Config{OZGEMM_VARIANT_PARTIALLY_FUSED, OZGEMM_KERNELS_PORTABLE},
                      Config{OZGEMM_VARIANT_FULLY_FUSED, OZGEMM_KERNELS_PORTABLE, OZGEMM_ACCUMULATOR_REGISTERS},
                      Config{OZGEMM_VARIANT_FULLY_FUSED, OZGEMM_KERNELS_PORTABLE, OZGEMM_ACCUMULATOR_GLOBAL}),
    [](const ::testing::TestParamInfo<Config>& i) {
      const std::string fam = i.param.family == OZGEMM_KERNELS_PORTABLE ? "Portable" : "Sm90";
      const std::string acc = i.param.accumulator == OZGEMM_ACCUMULATOR_GLOBAL ? "GlobalAcc" : "";
      return i.param.variant == OZGEMM_VARIANT_UNFUSED           ? std::string("Unfused")
             : i.param.variant == OZGEMM_VARIANT_PARTIALLY_FUSED ? "PartiallyFused" + fam
                                                                  : "FullyFused" + fam + acc;
    });

TEST(GpuNoGpu, CreateFailsCleanlyWithoutGpu) {
  std::string why;
  if (ozgemm::gpu_available(&why)) GTEST_SKIP() << "a GPU is present; this test checks the no-GPU behaviour";
  ozgemmHandle_t h = reinterpret_cast<ozgemmHandle_t>(0x1);
  EXPECT_EQ(ozgemmCreate(&h), OZGEMM_STATUS_ARCH_MISMATCH);
  EXPECT_EQ(h, nullptr);
  double one = 1.0;
  EXPECT_EQ(ozgemmDgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, nullptr, 4, nullptr, 4, &one, nullptr, 4),
            OZGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_FALSE(why.empty());
}

}  // namespace
