// CPU tests of the planner (src/plan/planner.hpp): k-blocking within the int32 exactness bound,
// padding, column chunking within the diagonal-buffer cap, the workspace layout, the slice layout,
// the AUTO rules, the fused kernels' limits read from their policies, fallbacks and the reasons
// given for problems that cannot be planned.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <tuple>
#include <vector>

#include "kernels/dgemm/policy.hpp"
#include "ozgemm/numerics/ozaki1.hpp"
#include "plan/auto_rules.hpp"
#include "plan/planner.hpp"

namespace nm = ozgemm::numerics;
using ozgemm::DeviceDesc;
using ozgemm::GemmShape;
using ozgemm::Op;
using ozgemm::Ozaki1Plan;
using Policy = ozgemm::kernels::UnfusedPolicy;
constexpr int64_t kKAlign = Policy::kKAlign, kRowAlign = Policy::kRowAlign, kMaxChunkCols = Policy::kMaxChunkCols;
constexpr int64_t kFusedKAlign = ozgemm::kernels::kFusedKAlign, kFusedChunkAlign = ozgemm::kernels::kFusedChunkAlign;

namespace {

// The planner's answer for an explicit variant; a fused request it had to run unfused counts as a
// refusal here (the reason is Plan::fallback).
std::string plan_variant(const GemmShape& sh, int s, const DeviceDesc& dev, ozgemm::Variant v, Ozaki1Plan* p,
                         ozgemm::KernelFamily family = ozgemm::KernelFamily::Auto,
                         ozgemm::FusedAccumulator acc = ozgemm::FusedAccumulator::Auto) {
  ozgemm::Request rq;
  rq.shape = sh;
  rq.slices = s;
  rq.variant = v;
  rq.family = family;
  rq.accumulator = acc;
  const std::string why = ozgemm::plan_ozaki1(rq, dev, p);
  if (!why.empty()) return why;
  if (p->variant != v) return p->fallback.empty() ? "planned another variant without a reason" : p->fallback;
  return {};
}
std::string plan_unfused(const GemmShape& sh, int s, const DeviceDesc& dev, Ozaki1Plan* p) {
  return plan_variant(sh, s, dev, ozgemm::Variant::Unfused, p);
}

GemmShape tight_shape(Op ta, Op tb, int64_t m, int64_t n, int64_t k) {
  return ozgemm::gemm_shape(ta, tb, m, n, k, std::max<int64_t>(1, ta == Op::N ? m : k),
                            std::max<int64_t>(1, tb == Op::N ? k : n), std::max<int64_t>(1, m));
}

int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// Checks every documented property of a successful plan for device `dev`.
::testing::AssertionResult plan_ok(const GemmShape& sh, int s, const Ozaki1Plan& p, const DeviceDesc& dev = DeviceDesc{}) {
  auto fail = [&]() {
    return ::testing::AssertionFailure() << "m=" << sh.m << " n=" << sh.n << " k=" << sh.k << " s=" << s << ": ";
  };
  if (p.variant != ozgemm::Variant::Unfused) return fail() << "variant";
  if (p.slices != s || p.m != sh.m || p.n != sh.n || p.k != sh.k) return fail() << "problem not copied";
  // k-blocking.
  if (p.kblock <= 0 || p.kblock % kKAlign != 0) return fail() << "kblock " << p.kblock;
  if (int64_t(s) * p.kblock * nm::kMaxDigitProduct > int64_t(INT32_MAX))
    return fail() << "slices * kblock * 2^14 exceeds INT32_MAX (kblock " << p.kblock << ")";
  if (p.kblock > nm::int32_exact_k(s)) return fail() << "kblock above int32_exact_k(s)";
  if (p.kblocks < 1 || p.kblocks * p.kblock < sh.k) return fail() << "blocks do not cover k";
  const int64_t kpad = round_up(std::max<int64_t>(1, sh.k), kKAlign);
  const int64_t kmax = nm::int32_exact_k(s) / kKAlign * kKAlign;
  if (p.kblocks != (kpad + kmax - 1) / kmax) return fail() << "not the fewest k-blocks: " << p.kblocks;
  if (p.kblocks * p.kblock - kpad >= kKAlign * p.kblocks)
    return fail() << "more than kKAlign-1 padding per block (kblocks " << p.kblocks << ", kblock " << p.kblock << ")";
  if (p.slices_a.ld != p.kblocks * s * p.kblock || p.slices_b.ld != p.slices_a.ld) return fail() << "ld_slices";
  if (!p.slices_a.reversed || p.slices_b.reversed) return fail() << "A's slices reversed, B's in order";
  if (p.planes.planes() != int64_t(s) * p.kblocks) return fail() << "diag_planes";
  // Row padding.
  for (auto pr : {std::pair<int64_t, int64_t>{p.m_pad, sh.m}, std::pair<int64_t, int64_t>{p.n_pad, sh.n}}) {
    if (pr.first % kRowAlign != 0 || pr.first < std::max<int64_t>(1, pr.second) ||
        pr.first >= std::max<int64_t>(1, pr.second) + kRowAlign)
      return fail() << "row padding " << pr.first << " for " << pr.second;
  }
  // Column chunks.
  if (p.n_chunk <= 0 || p.n_chunk > p.n_pad || p.n_chunk > kMaxChunkCols ||
      (p.n_chunk % kRowAlign != 0 && p.n_chunk != p.n_pad))
    return fail() << "n_chunk " << p.n_chunk;
  if (p.m_chunk <= 0 || p.m_chunk > p.m_pad || p.m_chunk % kRowAlign != 0)
    return fail() << "m_chunk " << p.m_chunk;
  if (p.m_chunk < p.m_pad && p.n_chunk != std::min(p.n_pad, ozgemm::kMinChunkCols))
    return fail() << "rows chunked although columns could shrink (n_chunk " << p.n_chunk << ")";
  const int64_t diag_bytes = p.planes.planes() * p.m_chunk * p.n_chunk * int64_t(sizeof(int32_t));
  if (diag_bytes > ozgemm::diag_buffer_cap(dev))
    return fail() << "diagonal buffer " << diag_bytes << " bytes above the cap " << ozgemm::diag_buffer_cap(dev);
  // Workspace: every region 256-aligned, inside the workspace, pairwise disjoint.
  struct Region {
    const char* name;
    size_t off, size;
  };
  const size_t m_pad = size_t(p.m_pad), n_pad = size_t(p.n_pad);
  const std::vector<Region> regions = {
      {"shift_a", p.stats.shift_a, 4 * m_pad},
      {"shift_b", p.stats.shift_b, 4 * n_pad},
      {"flag_a", p.stats.flag_a, 4 * m_pad},
      {"flag_b", p.stats.flag_b, 4 * n_pad},
      {"slices_a", p.off_slices_a, m_pad * size_t(p.slices_a.ld)},
      {"slices_b", p.off_slices_b, n_pad * size_t(p.slices_b.ld)},
      {"diag", p.off_diag, size_t(diag_bytes)},
      {"lt_workspace", p.off_lt_workspace, size_t(Policy::kLtWorkspaceBytes)},
  };
  if (p.workspace_bytes % 256 != 0) return fail() << "workspace size not 256-aligned";
  for (size_t i = 0; i < regions.size(); ++i) {
    const Region& a = regions[i];
    if (a.off % 256 != 0) return fail() << a.name << " offset not 256-aligned";
    if (a.off + a.size > p.workspace_bytes) return fail() << a.name << " beyond the workspace";
    for (size_t j = i + 1; j < regions.size(); ++j) {
      const Region& b = regions[j];
      if (a.off < b.off + b.size && b.off < a.off + a.size) return fail() << a.name << " overlaps " << b.name;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(Planner, InvariantsOverAShapeSweep) {
  const DeviceDesc dev;  // sm_90
  const int64_t ms[] = {0, 1, 15, 16, 17, 100, 1000, 4097};
  const int64_t ks[] = {0, 1, 15, 16, 17, 1000, 6544, 6545, 8192, 18720, 18721, 65536, 131071, 131072, 1000003};
  int planned = 0;
  for (Op ta : {Op::N, Op::T})
    for (Op tb : {Op::N, Op::T})
      for (int64_t m : ms)
        for (int64_t n : {int64_t(0), int64_t(1), int64_t(33), int64_t(4096)})
          for (int64_t k : ks)
            for (int s = 1; s <= nm::kMaxSlices; ++s) {
              const GemmShape sh = tight_shape(ta, tb, m, n, k);
              Ozaki1Plan p;
              const std::string why = plan_unfused(sh, s, dev, &p);
              ASSERT_TRUE(why.empty()) << why;
              ASSERT_TRUE(plan_ok(sh, s, p));
              ++planned;
            }
  EXPECT_GT(planned, 10000);
}

TEST(Planner, LargerLeadingDimensionsDoNotChangeThePlan) {
  const DeviceDesc dev;
  GemmShape sh = tight_shape(Op::N, Op::T, 100, 70, 5000);
  Ozaki1Plan a, b;
  ASSERT_TRUE(plan_unfused(sh, 8, dev, &a).empty());
  sh.lda += 13;
  sh.ldb += 7;
  sh.ldc += 1;
  ASSERT_TRUE(plan_unfused(sh, 8, dev, &b).empty());
  EXPECT_EQ(a.kblock, b.kblock);
  EXPECT_EQ(a.kblocks, b.kblocks);
  EXPECT_EQ(a.m_pad, b.m_pad);
  EXPECT_EQ(a.workspace_bytes, b.workspace_bytes);
}

TEST(Planner, ConcreteTables) {
  const DeviceDesc dev;
  struct Row {
    int64_t m, n, k;
    int s;
    int64_t kblocks, kblock, m_pad, n_pad;
  };
  // kmax(s) = floor(131071 / s) rounded down to 16: s=7 -> 18720, s=8 -> 16368, s=20 -> 6544.
  const Row rows[] = {
      {1024, 1024, 8192, 7, 1, 8192, 1024, 1024},
      {1024, 1024, 65536, 8, 5, 13120, 1024, 1024},  // ceil(65536/16368) = 5; ceil(65536/5) -> 13120
      {100, 50, 18720, 7, 1, 18720, 112, 64},
      {100, 50, 18721, 7, 2, 9376, 112, 64},  // kpad 18736 / 2 = 9368 -> 9376
      {1, 1, 1, 20, 1, 16, 16, 16},
      {1, 1, 0, 8, 1, 16, 16, 16},
      {17, 33, 6544, 20, 1, 6544, 32, 48},
      {17, 33, 6545, 20, 2, 3280, 32, 48},  // kpad 6560 / 2
      {16, 16, 131071, 1, 2, 65536, 16, 16},  // s = 1: kmax 131056 < kpad 131072: two blocks
      {16, 16, 131056, 1, 1, 131056, 16, 16},
  };
  for (const Row& r : rows) {
    Ozaki1Plan p;
    const GemmShape sh = tight_shape(Op::N, Op::N, r.m, r.n, r.k);
    ASSERT_TRUE(plan_unfused(sh, r.s, dev, &p).empty());
    EXPECT_EQ(p.kblocks, r.kblocks) << "k=" << r.k << " s=" << r.s;
    EXPECT_EQ(p.kblock, r.kblock) << "k=" << r.k << " s=" << r.s;
    EXPECT_EQ(p.m_pad, r.m_pad);
    EXPECT_EQ(p.n_pad, r.n_pad);
    EXPECT_TRUE(plan_ok(sh, r.s, p));
  }
  // Typical square problem: one chunk covers all columns.
  Ozaki1Plan p;
  ASSERT_TRUE(plan_unfused(tight_shape(Op::N, Op::N, 1024, 1024, 8192), 7, dev, &p).empty());
  EXPECT_EQ(p.n_chunk, 1024);
  EXPECT_EQ(p.planes.planes(), 7);
  EXPECT_EQ(p.slices_a.ld, 7 * 8192);
}

TEST(Planner, DiagBufferCapFollowsDeviceMemory) {
  // An eighth of the device memory, clamped to [kDiagBufferMin, kDiagBufferCap].
  DeviceDesc dev;
  dev.memory_bytes = int64_t(80) << 30;
  EXPECT_EQ(ozgemm::diag_buffer_cap(dev), int64_t(10) << 30);
  dev.memory_bytes = int64_t(1) << 30;
  EXPECT_EQ(ozgemm::diag_buffer_cap(dev), ozgemm::kDiagBufferMin);
  dev.memory_bytes = int64_t(1) << 40;
  EXPECT_EQ(ozgemm::diag_buffer_cap(dev), ozgemm::kDiagBufferCap);
  dev.memory_bytes = 0;
  EXPECT_EQ(ozgemm::diag_buffer_cap(dev), ozgemm::kDiagBufferMin);
  EXPECT_LE(ozgemm::kDiagBufferMin, ozgemm::kDiagBufferCap);
}

TEST(Planner, ChunksColumnsWhenTheDiagonalBufferWouldBeLarge) {
  // 16384 x 16384, k = 65536, s = 8: 40 planes of 16384 int32 = 2.5 MiB per column.
  const GemmShape sh = tight_shape(Op::N, Op::N, 16384, 16384, 65536);
  for (int64_t gib : {int64_t(8), int64_t(24), int64_t(80), int64_t(141)}) {
    DeviceDesc dev;
    dev.memory_bytes = gib << 30;
    Ozaki1Plan p;
    ASSERT_TRUE(plan_unfused(sh, 8, dev, &p).empty());
    EXPECT_EQ(p.planes.planes(), 40);
    const int64_t per_col = 40 * int64_t(16384) * 4;
    // Columns first, rounded down to kRowAlign; rows stay whole while >= kMinChunkCols fit.
    const int64_t want = std::min<int64_t>(16384, ozgemm::diag_buffer_cap(dev) / per_col / 16 * 16);
    ASSERT_GE(want, ozgemm::kMinChunkCols);
    EXPECT_EQ(p.n_chunk, want) << gib << " GiB";
    EXPECT_EQ(p.m_chunk, p.m_pad) << gib << " GiB";
    EXPECT_LT(p.n_chunk, p.n_pad) << gib << " GiB";
    EXPECT_TRUE(plan_ok(sh, 8, p, dev)) << gib << " GiB";
  }
  // planner.hpp: "square problems up to 16384 with 7 slices run in one chunk on an 80 GB GPU".
  for (int64_t nsq : {int64_t(1024), int64_t(8192), int64_t(16384)}) {
    DeviceDesc dev;
    dev.memory_bytes = int64_t(80) << 30;
    Ozaki1Plan p;
    const GemmShape sq = tight_shape(Op::N, Op::N, nsq, nsq, nsq);
    ASSERT_TRUE(plan_unfused(sq, 7, dev, &p).empty());
    EXPECT_EQ(p.n_chunk, p.n_pad) << nsq;
    EXPECT_TRUE(plan_ok(sq, 7, p, dev));
  }
  // Very wide problems stop at kMaxChunkCols columns per chunk.
  {
    DeviceDesc dev;
    dev.memory_bytes = int64_t(1) << 40;
    Ozaki1Plan p;
    const GemmShape wide = tight_shape(Op::N, Op::N, 16, 200000, 16);
    ASSERT_TRUE(plan_unfused(wide, 1, dev, &p).empty());
    EXPECT_EQ(p.n_chunk, kMaxChunkCols);
    EXPECT_TRUE(plan_ok(wide, 1, p, dev));
  }
}

TEST(Planner, SliceLayoutMakesEachDiagonalOneContiguousRange) {
  // The invariant of numerics::SliceLayout, evaluated on a real plan: for every diagonal d and
  // k-block b, the d+1 A slices (A_d .. A_0) and the d+1 B slices (B_0 .. B_d) occupy one
  // contiguous range of diagonal_length(d) bytes from diagonal_start(d, b), and position t of the
  // range pairs A_{d-t} with B_t (so i + j = d).
  Ozaki1Plan p;
  const int s = 6;
  ASSERT_TRUE(plan_unfused(tight_shape(Op::N, Op::N, 40, 40, 40000), s, DeviceDesc{}, &p).empty());
  ASSERT_GT(p.kblocks, 1);
  const nm::SliceLayout& A = p.slices_a;
  const nm::SliceLayout& B = p.slices_b;
  for (int64_t b = 0; b < p.kblocks; ++b)
    for (int d = 0; d < s; ++d) {
      ASSERT_EQ(A.diagonal_length(d), (d + 1) * p.kblock);
      const int64_t a0 = A.row(3) + A.diagonal_start(d, b), b0 = B.row(5) + B.diagonal_start(d, b);
      for (int t = 0; t <= d; ++t)
        for (int64_t q : {int64_t(0), p.kblock / 2, p.kblock - 1}) {
          ASSERT_EQ(A.offset(3, d - t, b * p.kblock + q), a0 + t * p.kblock + q);
          ASSERT_EQ(B.offset(5, t, b * p.kblock + q), b0 + t * p.kblock + q);
          // digit_stride walks the digits of one element.
          ASSERT_EQ(A.offset(3, d - t, b * p.kblock + q) - A.offset(3, 0, b * p.kblock + q), (d - t) * A.digit_stride());
        }
      // The range stays inside the row's k-block.
      ASSERT_LE(a0 + A.diagonal_length(d), A.row(3) + A.block_start(b + 1));
      ASSERT_GE(b0, B.row(5) + B.block_start(b));
    }
}

TEST(Planner, ReasonsForProblemsThatCannotBePlanned) {
  DeviceDesc dev;
  Ozaki1Plan p;
  auto why = [&](GemmShape sh, int s, const DeviceDesc& d) { return plan_unfused(sh, s, d, &p); };
  const GemmShape ok = tight_shape(Op::N, Op::N, 64, 64, 64);
  EXPECT_TRUE(why(ok, 8, dev).empty());
  GemmShape bad = ok;
  bad.m = -1;
  EXPECT_FALSE(why(bad, 8, dev).empty());
  bad = ok;
  bad.k = -5;
  EXPECT_FALSE(why(bad, 8, dev).empty());
  bad = ok;
  bad.lda = 63;
  EXPECT_NE(why(bad, 8, dev).find("lda"), std::string::npos);
  bad = ok;
  bad.ldc = 0;
  EXPECT_NE(why(bad, 8, dev).find("ldc"), std::string::npos);
  for (int s : {0, -1, 21, 100}) EXPECT_NE(why(ok, s, dev).find("slices"), std::string::npos) << s;
  for (int s : {1, 20}) EXPECT_TRUE(why(ok, s, dev).empty()) << s;
  // Compute capability: INT8 tensor cores (IMMA through cuBLASLt) need sm_75+.
  for (auto cc : {std::pair<int, int>{7, 0}, std::pair<int, int>{7, 2}, std::pair<int, int>{6, 1},
                  std::pair<int, int>{5, 3}}) {
    dev.cc_major = cc.first;
    dev.cc_minor = cc.second;
    EXPECT_FALSE(why(ok, 8, dev).empty()) << cc.first << "." << cc.second;
  }
  for (auto cc : {std::pair<int, int>{7, 5}, std::pair<int, int>{8, 0}, std::pair<int, int>{8, 9},
                  std::pair<int, int>{9, 0}, std::pair<int, int>{10, 0}, std::pair<int, int>{12, 0}}) {
    dev.cc_major = cc.first;
    dev.cc_minor = cc.second;
    EXPECT_TRUE(why(ok, 8, dev).empty()) << cc.first << "." << cc.second;
  }
  dev = DeviceDesc{};
  // 32-bit GEMM dimensions: the sliced k extent (kblocks * s * kblock) above INT32_MAX.
  GemmShape huge_k = tight_shape(Op::N, Op::N, 16, 16, int64_t(1) << 31);
  EXPECT_FALSE(why(huge_k, 1, dev).empty());
  // Rows above INT32_MAX after padding.
  GemmShape huge_m = tight_shape(Op::N, Op::N, int64_t(INT32_MAX) - 3, 16, 16);
  EXPECT_FALSE(why(huge_m, 4, dev).empty());
}

// The diagonal buffers of one column chunk must stay within diag_buffer_cap(dev)
// (planner.hpp: "Upper bound on the int32 diagonal buffers of one column chunk"), or the
// plan must be refused. n_chunk never goes below kRowAlign = 16, so a tall problem whose
// single column already needs more than cap/16 bytes (slices * kblocks * m_pad * 4 >
// 640 MiB on an 80 GB device) is planned with a buffer above the cap.
TEST(Planner, DiagBufferWithinCapForTallProblemsByChunkingRows) {
  const DeviceDesc dev;
  struct Case {
    int64_t m, n, k;
    int s;
  };
  // Realistic on an 80 GB device: m = 2^25, n = 16, k = 16 (A and C 4 GiB each) with 8
  // slices plans a 16 GiB diagonal buffer against a 10 GiB cap.
  for (Case c : {Case{int64_t(1) << 25, 16, 16, 8}, Case{int64_t(1) << 26, 16, 16, 4},
                 Case{int64_t(1) << 24, 64, 65536, 8}}) {
    const GemmShape sh = tight_shape(Op::N, Op::N, c.m, c.n, c.k);
    Ozaki1Plan p;
    const std::string why = plan_unfused(sh, c.s, dev, &p);
    ASSERT_TRUE(why.empty()) << why;
    EXPECT_LT(p.m_chunk, p.m_pad) << "rows must be chunked for m=" << c.m;
    EXPECT_EQ(p.m_chunk % kRowAlign, 0);
    {
      const int64_t diag_bytes = p.planes.planes() * p.m_chunk * p.n_chunk * int64_t(sizeof(int32_t));
      EXPECT_LE(diag_bytes, ozgemm::diag_buffer_cap(dev))
          << "m=" << c.m << " k=" << c.k << " s=" << c.s << ": n_chunk " << p.n_chunk << ", " << p.planes.planes()
          << " planes";
    }
  }
}

TEST(Planner, FallbackToUnfusedIsReportedAndAutoResolves) {
  using ozgemm::Variant;
  DeviceDesc small;  // 2 GiB: a 256 MiB buffer cap
  small.memory_bytes = int64_t(2) << 30;
  ozgemm::Request rq;
  rq.shape = tight_shape(Op::N, Op::N, 8192, 8192, 40000);
  rq.slices = 7;
  rq.variant = Variant::FullyFused;
  Ozaki1Plan p;
  ASSERT_EQ(ozgemm::plan_ozaki1(rq, small, &p), "");
  EXPECT_EQ(p.variant, Variant::Unfused);
  EXPECT_EQ(p.requested, Variant::FullyFused);
  EXPECT_NE(p.fallback.find("buffer cap"), std::string::npos) << p.fallback;
  // AUTO on Hopper at 6 slices and 8192^3: the measured rule (partially fused, Hopper kernels).
  rq.shape = tight_shape(Op::N, Op::N, 8192, 8192, 8192);
  rq.slices = 6;
  rq.variant = Variant::Auto;
  ASSERT_EQ(ozgemm::plan_ozaki1(rq, DeviceDesc{}, &p), "");
  EXPECT_EQ(p.variant, Variant::PartiallyFused);
  EXPECT_EQ(p.family, ozgemm::KernelFamily::Sm90);
  // ... but never a kernel the build lacks.
  DeviceDesc bare;
  bare.sm90_kernels = bare.portable_kernels = false;
  ASSERT_EQ(ozgemm::plan_ozaki1(rq, bare, &p), "");
  EXPECT_EQ(p.variant, Variant::Unfused);
  rq.variant = Variant::PartiallyFused;
  EXPECT_NE(ozgemm::plan_ozaki1(rq, bare, &p), "") << "an explicit request for a kernel the build lacks is refused";
  // Native needs no workspace.
  rq.variant = Variant::Native;
  ASSERT_EQ(ozgemm::plan_ozaki1(rq, DeviceDesc{}, &p), "");
  EXPECT_EQ(p.variant, Variant::Native);
  EXPECT_EQ(p.workspace_bytes, 0u);
}

TEST(Planner, FusedTilesComeFromTheKernelPolicies) {
  using ozgemm::KernelFamily;
  using ozgemm::kernels::FusedMode;
  using ozgemm::kernels::fused_tile;
  const auto partial = fused_tile(KernelFamily::Sm90, FusedMode::Partial);
  EXPECT_EQ(partial.n, ozgemm::kernels::Sm90PartialPolicy::kTileN);
  EXPECT_EQ(fused_tile(KernelFamily::Sm90, FusedMode::FullyRegisters).n, ozgemm::kernels::Sm90FullyRegistersPolicy::kTileN);
  EXPECT_EQ(fused_tile(KernelFamily::Portable, FusedMode::FullyGlobal).k, ozgemm::kernels::PortableFusedPolicy::kTileK);
  // The grid rounds tiles up to whole clusters.
  const auto g = ozgemm::kernels::fused_grid(300, 520, fused_tile(KernelFamily::Sm90, FusedMode::FullyRegisters));
  EXPECT_EQ(g.tiles_m, 4);  // 3 tiles of 128 -> 2 x 2 clusters
  EXPECT_EQ(g.tiles_n, 6);  // 5 tiles of 128 -> 6
}

TEST(Planner, VariantNames) {
  std::set<std::string> names;
  for (auto v : {ozgemm::Variant::Auto, ozgemm::Variant::Unfused, ozgemm::Variant::PartiallyFused,
                 ozgemm::Variant::FullyFused, ozgemm::Variant::Native}) {
    const char* n = ozgemm::variant_name(v);
    ASSERT_NE(n, nullptr);
    names.insert(n);
    ozgemm::Variant back;
    ASSERT_TRUE(ozgemm::parse_variant(n, &back));
    EXPECT_EQ(back, v);
  }
  EXPECT_EQ(names.size(), 5u);
  EXPECT_STREQ(ozgemm::variant_name(ozgemm::Variant::Unfused), "unfused");
  EXPECT_EQ(ozgemm::variant_name(static_cast<ozgemm::Variant>(42)), nullptr);
  ozgemm::Variant v;
  EXPECT_FALSE(ozgemm::parse_variant("bogus", &v));
  EXPECT_FALSE(ozgemm::parse_variant("partially", &v));         // a prefix is not a name
  EXPECT_FALSE(ozgemm::parse_variant("partially-fused-x", &v));  // nor a longer string
  EXPECT_FALSE(ozgemm::parse_variant("", &v));
  ASSERT_TRUE(ozgemm::parse_variant("partially_fused", &v));    // Python's spelling (OZGEMM_VARIANT)
  EXPECT_EQ(v, ozgemm::Variant::PartiallyFused);
}

TEST(Planner, AutoVariantFollowsMeasurementsAndRoofline) {
  using ozgemm::Variant;
  const GemmShape sq = tight_shape(Op::N, Op::N, 8192, 8192, 8192);
  DeviceDesc hopper;  // 9.0: the table measured on H100
  for (int s : {7, 8, 12}) EXPECT_EQ(ozgemm::auto_variant(sq, s, hopper), Variant::Native) << s;
  EXPECT_EQ(ozgemm::auto_variant(sq, 6, hopper), Variant::PartiallyFused);  // 61.6 vs 57.0 TFLOPS
  EXPECT_EQ(ozgemm::auto_variant(tight_shape(Op::N, Op::N, 4096, 4096, 4096), 6, hopper),
            Variant::Native);  // 57.0 vs 60.0
  EXPECT_EQ(ozgemm::auto_variant(tight_shape(Op::N, Op::N, 32768, 256, 4096), 6, hopper), Variant::Native);
  DeviceDesc ada;  // 8.9, weak FP64: 733 / 36 * 0.6 = 12.2 TFLOPS emulated vs 1.4 native
  ada.cc_major = 8;
  ada.cc_minor = 9;
  EXPECT_EQ(ozgemm::auto_variant(sq, 8, ada), Variant::Unfused);
  DeviceDesc a100;  // 8.0: 624 / 36 * 0.6 = 10.4 < 19.5
  a100.cc_major = 8;
  a100.cc_minor = 0;
  EXPECT_EQ(ozgemm::auto_variant(sq, 8, a100), Variant::Native);
  EXPECT_EQ(ozgemm::auto_variant(sq, 2, a100), Variant::Unfused);  // 624 / 3 * 0.6 = 124.8 > 19.5
  DeviceDesc old;  // no INT8 tensor cores
  old.cc_major = 7;
  old.cc_minor = 0;
  EXPECT_EQ(ozgemm::auto_variant(sq, 8, old), Variant::Native);
  DeviceDesc blackwell;  // 10.0: 4500 / 36 * 0.6 = 75 > 40
  blackwell.cc_major = 10;
  blackwell.cc_minor = 0;
  EXPECT_EQ(ozgemm::auto_variant(sq, 8, blackwell), Variant::Unfused);
}

TEST(Planner, AutoOzaki2FollowsMeasurementsAndRoofline) {
  const GemmShape sq = tight_shape(Op::N, Op::N, 8192, 8192, 8192);
  // Hopper: the shapes measured to win with the fused products (auto_rules.cpp): min(m, n) >= 8192
  // and 8192 <= k <= 16384 up to 18 moduli, min(m, n) >= 16384 and 8192 <= k <= 16384 up to 20,
  // min(m, n) >= 16384 and 4096 <= k < 8192 up to 18, or min(m, n) >= 8192 and 4096 <= k < 8192 up to
  // 16; not 4096^3, not k < 4096 or past 16384 on 8192-wide outputs, not without the Hopper kernels.
  DeviceDesc hopper;
  for (int moduli : {2, 14, 16, 17, 18}) {
    EXPECT_TRUE(ozgemm::auto_ozaki2(sq, moduli, hopper)) << moduli;
    EXPECT_TRUE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 12288, 12288, 12288), moduli, hopper));
    EXPECT_TRUE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 16384, 16384, 8192), moduli, hopper));
    EXPECT_TRUE(ozgemm::auto_ozaki2(tight_shape(Op::T, Op::N, 32768, 8192, 10000), moduli, hopper));
    EXPECT_TRUE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 16384, 16384, 16384), moduli, hopper));
    EXPECT_TRUE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 16384, 20000, 4096), moduli, hopper));
    for (int64_t n : {4096, 32768})
      EXPECT_FALSE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, n, n, n), moduli, hopper)) << n;
    EXPECT_EQ(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 8192, 8192, 4096), moduli, hopper), moduli <= 16);
    EXPECT_EQ(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 12288, 12288, 8191), moduli, hopper), moduli <= 16);
    EXPECT_FALSE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 8192, 8192, 4095), moduli, hopper));
    EXPECT_TRUE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 8192, 8192, 16384), moduli, hopper));
    EXPECT_FALSE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 8192, 8192, 16385), moduli, hopper));
    EXPECT_FALSE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 16384, 16384, 2048), moduli, hopper));
    EXPECT_FALSE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 8192, 4096, 8192), moduli, hopper));
  }
  // The wide counts' rates: 19-20 moduli only on 16384-wide outputs with k >= 8192.
  for (int moduli : {19, 20}) {
    EXPECT_TRUE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 16384, 16384, 16384), moduli, hopper)) << moduli;
    EXPECT_TRUE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 16384, 16384, 8192), moduli, hopper)) << moduli;
    EXPECT_FALSE(ozgemm::auto_ozaki2(sq, moduli, hopper)) << moduli;
    EXPECT_FALSE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 12288, 12288, 12288), moduli, hopper)) << moduli;
    EXPECT_FALSE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 16384, 20000, 4096), moduli, hopper)) << moduli;
  }
  EXPECT_FALSE(ozgemm::auto_ozaki2(tight_shape(Op::N, Op::N, 16384, 16384, 16384), ozgemm::kMaxModuli + 1, hopper));
  DeviceDesc hopper_portable_only = hopper;
  hopper_portable_only.sm90_kernels = false;
  EXPECT_FALSE(ozgemm::auto_ozaki2(sq, 16, hopper_portable_only));
  DeviceDesc a100;  // 8.0: 624 / (16 + 3.4) * 0.6 = 19.3 < 19.5; 624 / (8 + 3.4) * 0.6 = 32.8 > 19.5
  a100.cc_major = 8;
  a100.cc_minor = 0;
  EXPECT_FALSE(ozgemm::auto_ozaki2(sq, 16, a100));
  EXPECT_TRUE(ozgemm::auto_ozaki2(sq, 8, a100));
  DeviceDesc ada;  // 8.9: 733 / 19.4 * 0.6 = 22.7 > 1.4
  ada.cc_major = 8;
  ada.cc_minor = 9;
  EXPECT_TRUE(ozgemm::auto_ozaki2(sq, 16, ada));
  DeviceDesc old;  // no INT8 tensor cores
  old.cc_major = 7;
  old.cc_minor = 0;
  EXPECT_FALSE(ozgemm::auto_ozaki2(sq, 4, old));
  // Ranking: on Hopper Ozaki-II at 16 moduli before Ozaki-I at 7 slices, Ozaki-I at 2 before
  // Ozaki-II at 16; elsewhere by product counts (6 slices = 21 products vs 16).
  using ozgemm::Scheme;
  EXPECT_GT(ozgemm::expected_tflops(Scheme::Ozaki2, 16, hopper), ozgemm::expected_tflops(Scheme::Ozaki1, 7, hopper));
  EXPECT_GT(ozgemm::expected_tflops(Scheme::Ozaki1, 2, hopper), ozgemm::expected_tflops(Scheme::Ozaki2, 16, hopper));
  EXPECT_GT(ozgemm::expected_tflops(Scheme::Ozaki2, 16, a100), ozgemm::expected_tflops(Scheme::Ozaki1, 6, a100));
}

TEST(Planner, DecisionAndOzaki2ShareTheStatisticsOffsets) {
  // FP64 mode's decision leaves shifts, flags and the Ozaki-II norms where run_ozaki2 reads them.
  DeviceDesc hopper;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {300, 70, 5000}, {8192, 8192, 8192}}) {
    const GemmShape s = tight_shape(Op::N, Op::T, m, n, k);
    ozgemm::DecisionPlan d;
    ASSERT_EQ(ozgemm::plan_decision(s, hopper, &d), "");
    for (int moduli : {ozgemm::kMinModuli, 15, ozgemm::kMaxModuli})
      for (auto v : {ozgemm::Variant::Unfused, ozgemm::Variant::PartiallyFused}) {
        ozgemm::Ozaki2Plan p;
        ASSERT_EQ(ozgemm::plan_ozaki2(s, moduli, v, hopper, &p), "");
        EXPECT_EQ(p.stats.shift_a, d.stats.shift_a);
        EXPECT_EQ(p.stats.flag_b, d.stats.flag_b);
        EXPECT_EQ(p.off_S_a, d.off_S_a);
        EXPECT_EQ(p.off_S_b, d.off_S_b);
        EXPECT_GT(d.off_S_b, d.off_S_a);
      }
    EXPECT_GE(d.off_q_a, d.off_d_b + size_t(ozgemm::numerics::kModuliWindow) * size_t(d.n_pad));
  }
}

TEST(Planner, Ozaki2VariantsAndTheirPlanes) {
  using ozgemm::Variant;
  DeviceDesc hopper, a100, no_sm90;
  a100.cc_major = 8;
  no_sm90.sm90_kernels = false;
  const GemmShape sq = tight_shape(Op::N, Op::N, 8192, 8192, 8192);
  ozgemm::Ozaki2Plan p, u;
  // Hopper: AUTO takes the fused products (int8 planes, a quarter of the unfused path's bytes).
  ASSERT_EQ(ozgemm::plan_ozaki2(sq, 15, Variant::Auto, hopper, &p), "");
  EXPECT_EQ(p.variant, Variant::PartiallyFused);
  EXPECT_EQ(p.fallback, "");
  EXPECT_EQ(p.sm_count, hopper.sm_count);
  ASSERT_EQ(ozgemm::plan_ozaki2(sq, 15, Variant::Unfused, hopper, &u), "");
  EXPECT_EQ(u.variant, Variant::Unfused);
  EXPECT_EQ(p.n_chunk, 8192);  // one chunk: 15 int8 planes of 8192^2 fit the cap
  EXPECT_EQ(p.off_lt - p.off_products, size_t(15) * size_t(p.product_plane()));
  EXPECT_EQ(u.off_partial - u.off_products, size_t(4 * 15) * size_t(u.product_plane()));
  // The fused kernel's TMA wants 16-byte strides: row lengths, leading dimensions, plane offsets.
  EXPECT_EQ(p.kpad % ozgemm::kernels::kOz2ProductsAlign, 0);
  EXPECT_EQ(p.m_chunk % ozgemm::kernels::kOz2ProductsAlign, 0);
  EXPECT_EQ(p.off_products % 256, 0u);
  EXPECT_EQ(p.off_res_a % 256, 0u);
  // k past one int32 chunk: a fused request runs unfused and says why; AUTO does so silently.
  const GemmShape deep = tight_shape(Op::T, Op::N, 64, 64, int64_t(nm::kOz2ChunkK) + 1);
  ASSERT_EQ(ozgemm::plan_ozaki2(deep, 14, Variant::PartiallyFused, hopper, &p), "");
  EXPECT_EQ(p.variant, Variant::Unfused);
  EXPECT_NE(p.fallback.find("int32 chunks"), std::string::npos) << p.fallback;
  ASSERT_EQ(ozgemm::plan_ozaki2(deep, 14, Variant::Auto, hopper, &p), "");
  EXPECT_EQ(p.variant, Variant::Unfused);
  EXPECT_EQ(p.fallback, "");
  // No Hopper GPU or no sm_90a kernels: the fused products are refused, AUTO runs unfused.
  for (const DeviceDesc& d : {a100, no_sm90}) {
    EXPECT_NE(ozgemm::plan_ozaki2(sq, 14, Variant::PartiallyFused, d, &p), "");
    EXPECT_NE(ozgemm::ozaki2_variant_unavailable(Variant::PartiallyFused, d), "");
    ASSERT_EQ(ozgemm::plan_ozaki2(sq, 14, Variant::Auto, d, &p), "");
    EXPECT_EQ(p.variant, Variant::Unfused);
  }
  // No fully fused Ozaki-II anywhere; the refusal says what to take instead.
  const std::string no_full = ozgemm::plan_ozaki2(sq, 14, Variant::FullyFused, hopper, &p);
  EXPECT_NE(no_full.find("PARTIALLY_FUSED"), std::string::npos) << no_full;
  EXPECT_NE(ozgemm::plan_ozaki2(sq, 14, Variant::Native, hopper, &p), "");
}

TEST(Planner, ComplexOzaki2PlansHoldTwoPlanesAModulus) {
  using ozgemm::ElementType;
  using ozgemm::Variant;
  DeviceDesc hopper;
  const GemmShape s = tight_shape(Op::T, Op::N, 1000, 700, 3000);
  for (auto v : {Variant::Unfused, Variant::PartiallyFused}) {
    ozgemm::Ozaki2Plan r, c;
    ASSERT_EQ(ozgemm::plan_ozaki2(s, 16, v, hopper, &r), "");
    ASSERT_EQ(ozgemm::plan_ozaki2(s, 16, v, hopper, &c, ElementType::ComplexF64), "");
    EXPECT_EQ(r.planes(), 16);
    EXPECT_EQ(c.planes(), 32);
    EXPECT_EQ(c.variant, v);
    // The same padding, chunks and statistics; twice the residue and product planes.
    EXPECT_EQ(c.m_pad, r.m_pad);
    EXPECT_EQ(c.kpad, r.kpad);
    EXPECT_EQ(c.m_chunk, r.m_chunk);
    EXPECT_EQ(c.n_chunk, r.n_chunk);
    EXPECT_EQ(c.stats.shift_a, r.stats.shift_a);
    EXPECT_EQ(c.off_S_b, r.off_S_b);
    EXPECT_GE(c.off_res_b - c.off_res_a, size_t(32) * size_t(c.res_a_plane()));
    EXPECT_GE(c.off_products - c.off_res_b, size_t(32) * size_t(c.res_b_plane()));
    const size_t plane_bytes = v == Variant::PartiallyFused ? 1 : 4;
    EXPECT_GE(c.off_partial - c.off_products, plane_bytes * 32 * size_t(c.product_plane()));
    EXPECT_GT(c.workspace_bytes, r.workspace_bytes);
    EXPECT_EQ(c.off_res_a % 256, 0u);
    EXPECT_EQ(c.off_products % 256, 0u);
  }
  // k past one int32 chunk: the partial plane, and a fused request runs unfused.
  ozgemm::Ozaki2Plan d;
  const GemmShape deep = tight_shape(Op::N, Op::N, 64, 64, int64_t(nm::kOz2ChunkK) + 1000);
  ASSERT_EQ(ozgemm::plan_ozaki2(deep, 14, Variant::PartiallyFused, hopper, &d, ElementType::ComplexF64), "");
  EXPECT_EQ(d.variant, Variant::Unfused);
  EXPECT_EQ(d.kchunks, 2);
  EXPECT_GE(d.off_lt - d.off_partial, sizeof(int32_t) * size_t(d.product_plane()));
  // A small device chunks the columns so the 2N int32 planes stay within the cap.
  DeviceDesc small;
  small.memory_bytes = int64_t(2) << 30;
  const GemmShape wide = tight_shape(Op::N, Op::N, 4096, 8192, 256);
  ASSERT_EQ(ozgemm::plan_ozaki2(wide, 16, Variant::Unfused, small, &d, ElementType::ComplexF64), "");
  EXPECT_LE(int64_t(4) * 32 * d.product_plane(), ozgemm::diag_buffer_cap(small));
  EXPECT_LT(d.n_chunk, d.n_pad);
}

TEST(Planner, FusedPlansRespectTheKernelsLimits) {
  using ozgemm::KernelFamily;
  using ozgemm::Variant;
  DeviceDesc hopper;
  for (auto v : {Variant::PartiallyFused, Variant::FullyFused}) {
    for (auto [k, s] : {std::pair<int64_t, int>{8192, 7}, {18688, 7}, {16256, 8}, {1, 1}, {1000, 20}}) {
      Ozaki1Plan p;
      ASSERT_TRUE(plan_variant(tight_shape(Op::N, Op::T, 300, 200, k), s, hopper, v, &p).empty()) << k;
      EXPECT_EQ(p.kblocks, 1);
      EXPECT_EQ(p.kblock % kFusedKAlign, 0);
      EXPECT_GE(p.kblock, k);
      EXPECT_LE(int64_t(s) * p.kblock * ozgemm::numerics::kMaxDigitProduct, int64_t(INT32_MAX));
      EXPECT_EQ(p.family, KernelFamily::Sm90);
      EXPECT_EQ(p.tile.m, 128);
      EXPECT_EQ(p.tile.n, v == Variant::PartiallyFused ? 256 : 128);
      if (v == Variant::FullyFused) {
        EXPECT_EQ(p.off_lt_workspace, p.off_diag) << "fully fused needs no int32 planes";
        EXPECT_EQ(p.accumulator, ozgemm::FusedAccumulator::Registers) << "one k-block: registers (measured)";
      } else {
        EXPECT_EQ(p.m_chunk % kFusedChunkAlign == 0 || p.m_chunk == p.m_pad, true);
        EXPECT_EQ(p.n_chunk % kFusedChunkAlign == 0 || p.n_chunk == p.n_pad, true);
      }
    }
    // Past the int32 bound: k is split into balanced k-blocks, each within the bound.
    Ozaki1Plan p;
    for (auto [k, s, blocks] : {std::tuple<int64_t, int, int64_t>{18689, 7, 2}, {65536, 7, 4}, {130945, 1, 2},
                                {200000, 20, 31}}) {
      ASSERT_TRUE(plan_variant(tight_shape(Op::N, Op::N, 300, 520, k), s, hopper, v, &p).empty()) << k;
      EXPECT_EQ(p.kblocks, blocks) << k;
      EXPECT_EQ(p.kblock % kFusedKAlign, 0);
      EXPECT_GE(p.kblock * p.kblocks, k);
      EXPECT_LT(p.kblock * (p.kblocks - 1), k) << "no empty k-block";
      EXPECT_LE(int64_t(s) * p.kblock * ozgemm::numerics::kMaxDigitProduct, int64_t(INT32_MAX));
      EXPECT_EQ(p.slices_a.ld, p.kblocks * s * p.kblock);
      if (v == Variant::FullyFused) {
        // With k-blocks AUTO takes the global accumulator (measured faster there; planner.cpp).
        // Spill: one int64 per entry of each tile of the cluster-rounded grid (300 rows: 3 tiles
        // -> 4 with 2 x 1 clusters; 520 columns: 3 tiles of 256).
        EXPECT_EQ(p.accumulator, ozgemm::FusedAccumulator::Global);
        EXPECT_EQ(p.spill_entries, 4 * 3 * 128 * 256);
        EXPECT_GE(p.off_lt_workspace, p.off_spill + size_t(p.spill_entries) * 8);
        // The register accumulator: 128 x 128 tiles in 2 x 2 clusters (columns: 5 tiles -> 6).
        Ozaki1Plan r;
        ASSERT_TRUE(plan_variant(tight_shape(Op::N, Op::N, 300, 520, k), s, hopper, v, &r, KernelFamily::Auto,
                                         ozgemm::FusedAccumulator::Registers)
                        .empty());
        EXPECT_EQ(r.spill_entries, 4 * 6 * 128 * 128);
        EXPECT_EQ(r.acc_entries, 0);
      } else {
        EXPECT_EQ(p.planes.planes(), s * blocks);
      }
    }
    if (v == Variant::FullyFused) {
      // The global accumulator: partially fused tiles (128 x 256, 2 x 1 clusters), an FP64 buffer
      // of m_pad x n entries, then the spill (300 rows: 3 tiles -> 4; 520 columns: 3 tiles).
      ASSERT_TRUE(plan_variant(tight_shape(Op::N, Op::N, 300, 520, 18689), 7, hopper, v, &p,
                                       KernelFamily::Auto, ozgemm::FusedAccumulator::Global)
                      .empty());
      EXPECT_EQ(p.accumulator, ozgemm::FusedAccumulator::Global);
      EXPECT_EQ(p.tile.n, 256);
      EXPECT_EQ(p.acc_entries, p.m_pad * 520);
      EXPECT_EQ(p.spill_entries, 4 * 3 * 128 * 256);
      EXPECT_GE(p.off_spill, p.off_diag + size_t(p.acc_entries) * 8);
      EXPECT_GE(p.off_lt_workspace, p.off_spill + size_t(p.spill_entries) * 8);
      EXPECT_EQ(p.off_spill % 256, 0u);
      // A spill past the int32 buffer cap is refused (the API then falls back to unfused).
      DeviceDesc small = hopper;
      small.memory_bytes = int64_t(2) << 30;  // cap 256 MiB
      EXPECT_FALSE(plan_variant(tight_shape(Op::N, Op::N, 8192, 8192, 40000), 7, small, v, &p).empty());
      EXPECT_TRUE(plan_variant(tight_shape(Op::N, Op::N, 8192, 8192, 18688), 7, small, v, &p).empty());
    }
    // Family selection by architecture.
    DeviceDesc ada;
    ada.cc_major = 8;
    ada.cc_minor = 9;
    ASSERT_TRUE(plan_variant(tight_shape(Op::N, Op::N, 64, 64, 64), 7, ada, v, &p).empty());
    EXPECT_EQ(p.family, KernelFamily::Portable);
    EXPECT_EQ(p.tile.k, 64);
    EXPECT_FALSE(plan_variant(tight_shape(Op::N, Op::N, 64, 64, 64), 7, ada, v, &p, KernelFamily::Sm90).empty());
    ASSERT_TRUE(
        plan_variant(tight_shape(Op::N, Op::N, 64, 64, 64), 7, hopper, v, &p, KernelFamily::Portable).empty());
    EXPECT_EQ(p.family, KernelFamily::Portable);
    DeviceDesc turing;
    turing.cc_major = 7;
    turing.cc_minor = 5;
    EXPECT_FALSE(plan_variant(tight_shape(Op::N, Op::N, 64, 64, 64), 7, turing, v, &p).empty());
  }
}
