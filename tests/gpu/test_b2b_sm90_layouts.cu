// The Hopper b2b kernel's register hand-over from GEMM 0 to GEMM 1 (kernels/b2b/b2b_sm90_config.cuh),
// checked against CuTe's own layouts on the host (no GPU needed): for every thread of the CTA, every
// element a of GEMM 1's register A operand must hold D0(row, k) where GEMM 0's accumulator element
// a_operand_source<T>(a) sits at (row, column) and k is that column's logical D0 column (int8: the
// B0 row permutation s8_d0_column; fp16: the column itself). A wrong mapping would compute a
// different D1 on every shape, which the GPU tests catch only on a Hopper GPU.
#include <gtest/gtest.h>

#include "kernels/b2b/b2b_device.cuh"
#include "kernels/b2b/b2b_sm90_config.cuh"

namespace {

using namespace cute;
namespace k = ozgemm::kernels;

template <class T, int N0, int N1>
int64_t mismatches() {
  using Cfg = k::b2b_sm90::B2bSm90Config<T, N0, N1>;
  typename Cfg::Mma0 mma0;
  typename Cfg::Mma1 mma1;
  int64_t bad = 0;
  for (int t = 0; t < k::b2b_sm90::kConsumerThreads; ++t) {  // the two consumer warp groups
    auto thr0 = mma0.get_slice(t);
    auto thr1 = mma1.get_slice(t);
    Tensor cC0 = thr0.partition_C(make_identity_tensor(Shape<Int<k::b2b_sm90::kM>, Int<N0>>{}));
    Tensor cA1 = thr1.partition_A(make_identity_tensor(Shape<Int<k::b2b_sm90::kM>, Int<N0>>{}));
    Tensor frag = thr1.partition_fragment_A(make_tensor(make_gmem_ptr(static_cast<const T*>(nullptr)),
                                                        make_layout(Shape<Int<k::b2b_sm90::kM>, Int<N0>>{}, LayoutRight{})));
    EXPECT_EQ(int(size(frag)), int(size(cC0)));
    for (int a = 0; a < int(size(frag)); ++a) {
      const auto want = cA1(frag.layout().get_hier_coord(a));  // (row, k) of fragment element a
      const auto have = cC0(k::b2b_sm90::a_operand_source<T>(a));
      const int col = std::is_same_v<T, int8_t> ? k::s8_d0_column(int(get<1>(have))) : int(get<1>(have));
      if (int(get<0>(have)) != int(get<0>(want)) || col != int(get<1>(want)))
        if (bad++ < 3)
          ADD_FAILURE() << "thread " << t << " element " << a << ": A wants (" << int(get<0>(want)) << ", "
                        << int(get<1>(want)) << "), the accumulator gives (" << int(get<0>(have)) << ", " << col << ")";
    }
  }
  return bad;
}

// D1's staging (b2b_sm90.cu, finish_tile) takes GEMM 1's accumulator of a chunk (kM x kN1Chunk) as
// kN1Chunk / kD1StageCols equal runs of values, run s holding the columns [s, s + 1) kD1StageCols,
// and values i, i + 1 (i even) as columns c, c + 1 of one row. The number of values that break it.
template <class T, int N0, int N1>
int64_t staging_mismatches() {
  using Cfg = k::b2b_sm90::B2bSm90Config<T, N0, N1>;
  typename Cfg::Mma1 mma1;
  constexpr int kSubs = Cfg::kN1Chunk / Cfg::kD1StageCols;
  int64_t bad = 0;
  for (int t = 0; t < k::b2b_sm90::kConsumerThreads; ++t) {
    auto thr1 = mma1.get_slice(t);
    Tensor cC1 = thr1.partition_C(make_identity_tensor(Shape<Int<k::b2b_sm90::kM>, Int<Cfg::kN1Chunk>>{}));
    const int values = int(size(cC1)), run = values / kSubs;
    EXPECT_EQ(values % (2 * kSubs), 0);
    for (int i = 0; i < values; ++i) {
      const int r = int(get<0>(cC1(i))), c = int(get<1>(cC1(i)));
      bool ok = c / Cfg::kD1StageCols == i / run;
      if (i % 2 == 1) ok = ok && int(get<0>(cC1(i - 1))) == r && int(get<1>(cC1(i - 1))) == c - 1;
      if (!ok && bad++ < 3) ADD_FAILURE() << "thread " << t << " value " << i << " at (" << r << ", " << c << ")";
    }
  }
  return bad;
}

TEST(B2bSm90Layouts, Gemm1AccumulatorRunsAreTheStagedColumns) {
  EXPECT_EQ((staging_mismatches<half_t, 64, 64>()), 0);
  EXPECT_EQ((staging_mismatches<half_t, 64, 256>()), 0);
  EXPECT_EQ((staging_mismatches<int8_t, 64, 128>()), 0);
  EXPECT_EQ((staging_mismatches<int8_t, 128, 256>()), 0);
  EXPECT_EQ((staging_mismatches<half_t, 256, 256>()), 0);
  EXPECT_EQ((staging_mismatches<int8_t, 256, 64>()), 0);
}

TEST(B2bSm90Layouts, Fp16AccumulatorIsGemm1Operand) {
  EXPECT_EQ((mismatches<half_t, 64, 64>()), 0);
  EXPECT_EQ((mismatches<half_t, 128, 256>()), 0);
  EXPECT_EQ((mismatches<half_t, 256, 128>()), 0);
}

TEST(B2bSm90Layouts, Int8AccumulatorUnderTheB0PermutationIsGemm1Operand) {
  EXPECT_EQ((mismatches<int8_t, 64, 128>()), 0);
  EXPECT_EQ((mismatches<int8_t, 128, 256>()), 0);
  EXPECT_EQ((mismatches<int8_t, 256, 256>()), 0);
}

}  // namespace
