// kernels/dgemm/policy.hpp — the compile-time configurations of the Ozaki-I kernels (tile shapes,
// clusters, pipeline depths, alignments), as plain constexpr data. The kernels instantiate
// themselves from these structs and the planner (src/plan) reads the same structs to size grids,
// chunks and buffers, so each number is written once. Host-only C++ (no CUDA headers): this is
// the one kernel header the planner includes.
#pragma once

#include <cstdint>

#include "ozgemm/types.hpp"

namespace ozgemm {
namespace kernels {

// What the fused kernels' consumers do with each diagonal: Partial stores int32 planes;
// FullyRegisters sums in FP64 registers and writes C once; FullyGlobal read-modify-writes the FP64
// sum in a device buffer once per diagonal (the tutorial's version) and writes C after the last.
// All give the same bits.
enum class FusedMode { Partial, FullyRegisters, FullyGlobal };

// A CTA tile of C (k in int8 elements) and the thread-block cluster around it.
struct TileShape {
  int m = 0, n = 0, k = 0;
  int cluster_m = 1, cluster_n = 1;
};

// Hopper kernels (fused_ozaki_sm90.cu): TMA + wgmma through CUTLASS's warp-specialised cooperative
// mainloop; one producer warp group and two consumer warp groups (384 threads). H100 measurements
// behind the choices (8192^3, 7 slices, docs/performance.md):
//   fully fused (registers): 128 x 128 tiles, 2 x 2 clusters. Each consumer thread keeps 64 int32
//     and 64 FP64 accumulators: a 128 x 256 tile would need 384 registers a thread. ~1200 TOPS.
//   partially fused and fully fused (global accumulator): 128 x 256 tiles, 2 x 1 clusters (only
//     int32 accumulators): 1449 TOPS against 1214 with 128 x 128 tiles and 2 x 2 clusters.
// Clusters share tiles through TMA multicast: without them the 128 x 128 kernel is L2-bound
// (128 INT8 ops per byte at ~5.5 TB/s is ~700 TOPS, what the single-CTA version measured).
template <int kTileN_, int kClusterM_, int kClusterN_>
struct Sm90FusedPolicy {
  static constexpr int kTileM = 128, kTileN = kTileN_, kTileK = 128;
  static constexpr int kClusterM = kClusterM_, kClusterN = kClusterN_;
  static constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;  // setmaxnreg
  // Rasterisation: clusters are taken in groups of kGroupTilesM / kClusterM cluster rows, n fastest
  // within a group, so the CTAs resident at one time share few A and B panels.
  static constexpr int kGroupTilesM = 16;
  static constexpr TileShape tile() { return TileShape{kTileM, kTileN, kTileK, kClusterM, kClusterN}; }
};
using Sm90FullyRegistersPolicy = Sm90FusedPolicy<128, 2, 2>;
using Sm90PartialPolicy = Sm90FusedPolicy<256, 2, 1>;
using Sm90FullyGlobalPolicy = Sm90PartialPolicy;  // the tutorial's version takes the larger tile

// Portable kernels (fused_ozaki_sm80.cu): mma.sync s8 (SM80_16x8x32) with a cp.async multistage
// pipeline through CUTLASS's sm80 mainloop; 8 warps as 4 (M) x 2 (N); every mode the same tile.
struct PortableFusedPolicy {
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 64;
  static constexpr int kStages = 4, kThreads = 256;
  static constexpr TileShape tile() { return TileShape{kTileM, kTileN, kTileK, 1, 1}; }
};

// The tile a fused launch uses (family Sm90 or Portable, resolved by the planner).
constexpr TileShape fused_tile(KernelFamily family, FusedMode mode) {
  if (family == KernelFamily::Portable) return PortableFusedPolicy::tile();
  switch (mode) {
    case FusedMode::Partial: return Sm90PartialPolicy::tile();
    case FusedMode::FullyRegisters: return Sm90FullyRegistersPolicy::tile();
    case FusedMode::FullyGlobal: return Sm90FullyGlobalPolicy::tile();
  }
  return TileShape{};
}

// Alignments every fused launch satisfies: k-blocks are whole k-tiles of every family, and
// partially fused chunks start on tile boundaries of every family (the widest tile).
constexpr int64_t kFusedKAlign = 128;
constexpr int64_t kFusedChunkAlign = 256;
static_assert(kFusedKAlign % Sm90PartialPolicy::kTileK == 0 && kFusedKAlign % PortableFusedPolicy::kTileK == 0,
              "fused k-blocks must be whole k-tiles");
static_assert(kFusedChunkAlign % Sm90PartialPolicy::kTileN == 0 && kFusedChunkAlign % Sm90PartialPolicy::kTileM == 0 &&
                  kFusedChunkAlign % PortableFusedPolicy::kTileN == 0 && kFusedChunkAlign % PortableFusedPolicy::kTileM == 0,
              "partially fused chunks must start on tile boundaries");

// The fused launch grid over rows x cols entries of C: whole tiles, rounded up to whole clusters
// (tiles past the matrix load zeros through TMA bounds and write nothing).
struct FusedGrid {
  int64_t tiles_m = 0, tiles_n = 0;
  int64_t tiles() const { return tiles_m * tiles_n; }
};
constexpr FusedGrid fused_grid(int64_t rows, int64_t cols, TileShape t) {
  const int64_t tm = (rows + t.m - 1) / t.m, tn = (cols + t.n - 1) / t.n;
  return FusedGrid{(tm + t.cluster_m - 1) / t.cluster_m * t.cluster_m, (tn + t.cluster_n - 1) / t.cluster_n * t.cluster_n};
}
constexpr int64_t kMaxGridY = 65535;  // CUDA's grid.y limit (columns of tiles)

// Ozaki-II's products on Hopper (ozaki2_products_sm90.cuh): CUTLASS's own persistent warp-specialised
// INT8 GEMM with the modular reduction in its epilogue, one launch over the tiles of every modulus.
// kPingpong: CUTLASS's ping-pong schedule (two consumer warp groups on alternate tiles) instead of the
// cooperative one (both on one tile); kSwizzle: the persistent scheduler's rasterisation swizzle.
template <int kTileM_, int kTileN_, int kClusterM_, int kClusterN_, bool kPingpong_, int kSwizzle_>
struct Sm90Oz2ProductsPolicyT {
  static constexpr int kTileM = kTileM_, kTileN = kTileN_, kTileK = 128;
  static constexpr int kClusterM = kClusterM_, kClusterN = kClusterN_;
  static constexpr bool kPingpong = kPingpong_;
  static constexpr int kSwizzle = kSwizzle_;
};
// The library's configuration (H100 measurements: docs/performance.md, "Fourth step").
using Sm90Oz2ProductsPolicy = Sm90Oz2ProductsPolicyT<128, 256, 2, 1, false, 8>;
// Its operands and planes: k and leading dimensions in multiples of 16 bytes (TMA), as the unfused
// path's (UnfusedPolicy below) already are.
constexpr int64_t kOz2ProductsAlign = 16;

// The unfused path: our slicing kernel writes operands for cuBLASLt's IMMA kernels, which want
// rows and leading dimensions in multiples of 16 bytes and k in multiples of 16; the epilogue kernel
// (reconstruct_epilogue.cu) runs 128 x 2 threads a block, at most kMaxChunkCols columns a launch.
struct UnfusedPolicy {
  static constexpr int64_t kRowAlign = 16;
  static constexpr int64_t kKAlign = 16;
  static constexpr int64_t kMaxChunkCols = 65536;   // keeps the epilogue grid within grid.y
  static constexpr int64_t kLtWorkspaceBytes = int64_t(32) << 20;  // scratch for cuBLASLt's kernels
};

// The row statistics kernels (max_reduce.cu, ozaki2_complex.cu's oz2c_max_kernel; row_stats_split.cuh):
// fewer row blocks than kSplitBelowBlocks split each row's l range over grid.y as well, into about
// that many blocks, keeping at least kMinPerThread elements a thread.
struct RowStatsPolicy {
  static constexpr int64_t kSplitBelowBlocks = 256, kMinPerThread = 8;
};

// FP64 mode's decision (src/plan/call_planner.cpp asks for the sample, decision_bound runs it): with
// at least kOz2SampleMinRows rows, the candidates' bounds run first over the leading
// kOz2SampleRows x kOz2SampleCols entries of C (fewer columns where C or a chunk of the magnitude
// product has fewer), from those rows and columns alone; when every moduli count already has an entry
// past the target there (a witness: the full maxima can only be larger), Ozaki-II drops out before
// any full pass, and Ozaki-I where an entry there needs more than kMaxSlices slices (native DGEMM
// where none is left). Otherwise the moduli counts it ruled out stay out of the full pass. Costs
// reading kOz2SampleRows rows of A and kOz2SampleCols columns of B.
struct DecisionPolicy {
  // The Ozaki-II bound pass (accuracy.cu): a block of kBoundRows rows (a thread each) x kBoundCols columns of C.
  static constexpr int kBoundRows = 128, kBoundCols = 64;
  // Every live count at once (not lowest first) over fewer blocks than this (the sample: 4 x 16):
  // the counts split over grid.z as well (accuracy.cu).
  static constexpr int64_t kSplitCountsBelowBlocks = 256;
  // Its blocks over rows x cols entries of C (the lowest-first pass keeps a word per block).
  static constexpr int64_t bound_blocks(int64_t rows, int64_t cols) {
    return (rows + kBoundRows - 1) / kBoundRows * ((cols + kBoundCols - 1) / kBoundCols);
  }
  static constexpr int64_t kOz2SampleRows = 512;
  static constexpr int64_t kOz2SampleCols = 1024;
  static constexpr int64_t kOz2SampleMinRows = 4 * kOz2SampleRows;
};

}  // namespace kernels
}  // namespace ozgemm
