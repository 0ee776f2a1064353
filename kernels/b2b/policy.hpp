// kernels/b2b/policy.hpp — compile-time configurations and limits of the back-to-back GEMM kernels,
// plain constexpr data read by the kernels and by the b2b planner (src/plan/b2b_planner.cpp), so
// each limit is written once. Host-only C++ (no CUDA headers).
#pragma once

#include <cstdint>

namespace ozgemm {
namespace kernels {

// n0 past one tile: GEMM 0 runs in chunks of kB2bN0Chunk of D0's columns (both families; see
// b2b_chunked_n0 below).
constexpr int kB2bN0Chunk = 128;

// Portable kernels (b2b_sm80.cu): mma.sync, one CTA = 8 warps = 128 rows, each warp owning 16 rows
// and all of D0's and D1's columns ("thread-block tile N = problem N").
struct B2bPortablePolicy {
  static constexpr int kTileM = 128;   // rows of A0 / D0 / D1 per CTA
  static constexpr int kChunkK = 32;   // k-chunk of both GEMMs in 16-bit units (32 fp16, 64 int8)
  // GEMM 1 and its epilogue run in column chunks of at most kN1Chunk, so a thread holds at most
  // kN1Chunk / 2 accumulators beside D0's n0/4 (fp16) or n0/8 (int8) packed registers (at most
  // 64 + 64): every n0 x n1 runs register-resident without spilling. (Before the chunks fp16
  // 256 x 256 needed n1 / 2 = 128 accumulators and shared residency.)
  static constexpr int kN1Chunk = 128;
  // GEMM 0's cp.async pipeline depth: A0 is streamed once from DRAM, so enough of it must be in
  // flight; 3 stages when n0 = 256 keep the largest configuration within shared memory.
  static constexpr int stages0(int n0) { return n0 <= 128 ? 4 : 3; }
};

// The Hopper kernels (b2b_sm90.cu): fp16 or int8, register residency, wgmma for both GEMMs, two
// consumer warp groups of 64 rows each (GEMM 0, D0's conversion, GEMM 1 in column chunks of at most
// kN1Chunk (64 fp32 accumulators a thread), the stores), a ring of swizzled shared-memory stages of
// A0's and B0's 64-element k-tiles (128B swizzle fp16, 64B int8), in two schedules (and, for n0
// past 256, the chunked kernel: chunked_stages below):
// - one CTA a tile (convolutions, int8 with n0 = 128, n0 = 256, GEMM pairs of fewer than
//   kWsMinTilesPerSm tiles an SM): 256 threads that also fill the ring (cp.async, tile_stages deep,
//   refilled at every tile); with n0 = 64 (and int8 n0 = 128) two CTAs fit an SM (<= 128 registers
//   a thread; shared memory, fp16: 4 stages plus B1 = 112 KB at n1 <= 128, 3 stages + B1 = 104 KB at
//   n1 = 256) and one CTA's GEMM 1 and stores overlap the other's loads; n0 = 256 runs one CTA an
//   SM (GEMM 0's accumulators: 128 registers a thread);
// - warp-specialised and persistent (GEMM pairs of at least kWsMinTilesPerSm tiles an SM): one CTA an
//   SM, a producer warp group streams the k-tiles of all the CTA's tiles through up to kMaxStages
//   stages (the shared memory B1 and D1's staging leave), mbarrier-signalled, while the consumers
//   finish the previous tile. Measured on the H100 (docs/b2b.md, "Warp-specialised"): 4-10% faster
//   on the fp16 GEMM pairs and int8 n0 = 64, 1.5-5% slower on int8 n0 = 128, up to 28% slower on
//   3 x 3 convolutions (whose A0 comes from L2: fewer warps an SM to hide latency), and slower where
//   the tiles do not fill two an SM (the 196-tile int8 convolution). With D1 staged (both schedules,
//   "D1 through shared memory") the GEMM pairs were measured again: still 4-7% faster; int8
//   n0 = 128 and the convolutions were not re-measured on it.
struct B2bSm90Policy {
  static constexpr int kTileM = 128, kTileK = 64, kN1Chunk = 128;
  static constexpr int kConsumerThreads = 256;
  static constexpr int kSmemBytes = 220 * 1024;  // of the 227 KB a CTA may take; the rest: barriers, alignment
  // Bytes of one ring stage (A0's and B0's k-tiles) and of one kN1Chunk-row chunk of B1 (n1 x n0,
  // one chunk when n1 < kN1Chunk). B1 lives in shared memory chunk by chunk, each chunk swizzled
  // on its own (b2b_sm90_config.cuh, SmemB1Chunk).
  static constexpr int stage_bytes(int n0, int elem_bytes) { return (kTileM + n0) * kTileK * elem_bytes; }
  static constexpr int b1_chunks(int n1) { return n1 <= kN1Chunk ? 1 : n1 / kN1Chunk; }
  static constexpr int b1_chunk_bytes(int n0, int n1, int elem_bytes) {
    return (n1 < kN1Chunk ? n1 : kN1Chunk) * n0 * elem_bytes;
  }
  // One CTA a tile.
  static constexpr int kTileThreads = kConsumerThreads;
  static constexpr int kTileMinStages = 3;
  // B1's chunks kept in shared memory beside the ring for the whole tile: all of them, unless all
  // of B1 and a kTileMinStages-deep ring exceed kSmemBytes (fp16 n0 = 256, n1 = 256: 128 KB of B1);
  // then the first only, and the second is loaded into the ring's B0 half once GEMM 0 has finished
  // with it, while GEMM 1 and the stores of the first chunk run.
  static constexpr int tile_b1_resident_chunks(int n0, int n1, int elem_bytes) {
    return b1_chunks(n1) * b1_chunk_bytes(n0, n1, elem_bytes) + kTileMinStages * stage_bytes(n0, elem_bytes) <= kSmemBytes
               ? b1_chunks(n1)
               : 1;
  }
  // The ring's depth: 4 stages (3 at n1 = 256), as many as the shared memory beside the resident
  // B1 takes if fewer (fp16 n0 = 256: 3).
  static constexpr int tile_stages(int n0, int n1, int elem_bytes) {
    const int want = n1 <= 128 ? 4 : kTileMinStages;
    const int fit = (kSmemBytes - tile_b1_resident_chunks(n0, n1, elem_bytes) * b1_chunk_bytes(n0, n1, elem_bytes)) /
                    stage_bytes(n0, elem_bytes);
    return fit < want ? fit : want;
  }
  // Two CTAs an SM where the shared memory and registers allow it (fp16 n0 = 128 takes 160 KB; n0 =
  // 256 takes 128 accumulators a thread for GEMM 0): <= 128 registers.
  static constexpr int tile_min_ctas_per_sm(int n0, int elem_bytes) {
    return n0 == 64 || (elem_bytes == 1 && n0 == 128) ? 2 : 1;
  }
  // Warp-specialised.
  static constexpr int kProducerThreads = 128;
  static constexpr int kWsThreads = kConsumerThreads + kProducerThreads;
  static constexpr int kWsMinTilesPerSm = 2;
  // Where it is built and runs (with enough tiles, no convolution): fp16 with n0 <= 128, and int8
  // with n0 = 64. int8 n0 = 128 (two CTAs an SM one a tile) measured 1.5-5% slower warp-specialised
  // (H100, docs/b2b.md); n0 = 256 would leave the ring one or two stages beside B1 (and its 384
  // threads 168 registers each, against GEMM 0's 128 accumulators).
  static constexpr bool ws_supports(int n0, int elem_bytes) { return n0 == 64 || (elem_bytes == 2 && n0 == 128); }
  static constexpr int kMaxStages = 8;
  // D1 leaves through shared memory (both schedules): kD1StageCols columns of a GEMM-1 chunk's rows
  // (kTileM; min(n1, kD1StageCols) elements a row) at a time are staged, then stored as whole
  // 16-byte vectors of consecutive columns. A staged row takes its bytes plus 16, so that the 8 rows
  // one fragment store of a warp touches fall in distinct banks. The one-CTA-a-tile kernel stages in
  // its ring (free after GEMM 0); the warp-specialised one, whose ring holds the next tile meanwhile,
  // in a buffer of its own, which its ring's stages make room for.
  static constexpr int kD1StageCols = 64;
  static_assert(kN1Chunk % kD1StageCols == 0, "a chunk is whole staging widths");
  static constexpr int d1_stage_cols(int n1) { return n1 < kD1StageCols ? n1 : kD1StageCols; }
  static constexpr int d1_stage_pitch(int n1, int elem_bytes) { return d1_stage_cols(n1) * elem_bytes + 16; }
  static constexpr int d1_stage_bytes(int n1, int elem_bytes) { return kTileM * d1_stage_pitch(n1, elem_bytes); }
  static constexpr int ws_stages(int n0, int n1, int elem_bytes) {
    const int b1 = b1_chunks(n1) * b1_chunk_bytes(n0, n1, elem_bytes);
    const int fit = (kSmemBytes - b1 - d1_stage_bytes(n1, elem_bytes)) / stage_bytes(n0, elem_bytes);
    return fit < kMaxStages ? fit : kMaxStages;
  }
  // n0 past 256 (b2b_chunked_n0): one CTA a tile, GEMM 0 in chunks of kB2bN0Chunk columns, each
  // chunk's D0 (registers) multiplied into D1's accumulators by its block of B1 (kN1Chunk x
  // kB2bN0Chunk, one buffer beside the ring); D1's staging in a buffer of its own (the ring
  // prefetches the next chunk meanwhile); as many stages as fit, up to kChunkedMaxStages (fp16: 5,
  // int8: 6). GEMM 0 keeps one k-tile's wgmma in flight, so the loads run kChunkedInFlight + 1
  // fewer stages ahead than the ring is deep.
  static constexpr int kChunkedMaxStages = 6, kChunkedInFlight = 1;
  static constexpr int chunked_stages(int n1, int elem_bytes) {
    const int fit = (kSmemBytes - b1_chunk_bytes(kB2bN0Chunk, n1, elem_bytes) - d1_stage_bytes(n1, elem_bytes)) /
                    stage_bytes(kB2bN0Chunk, elem_bytes);
    return fit < kChunkedMaxStages ? fit : kChunkedMaxStages;
  }
  // n0 of one chunk (D0 all in registers); past 256 see chunked_stages and b2b_chunked_n0.
  static constexpr bool supports_n0(int64_t n0) { return n0 == 64 || n0 == 128 || n0 == 256; }
  // Convolutions: a k-tile (kTileK elements) must lie within one filter tap, so c % kTileK == 0.
  static constexpr bool supports_conv_c(int64_t c) { return c % kTileK == 0; }
};
static_assert(B2bSm90Policy::ws_stages(128, 256, 2) >= 3, "the largest warp-specialised configuration keeps a 3-stage ring");
static_assert(B2bSm90Policy::tile_stages(256, 256, 2) >= B2bSm90Policy::kTileMinStages &&
                  B2bSm90Policy::tile_stages(256, 128, 2) >= B2bSm90Policy::kTileMinStages,
              "the largest one-CTA-a-tile configurations keep a 3-stage ring");
static_assert(B2bSm90Policy::tile_b1_resident_chunks(128, 256, 2) == 2 && B2bSm90Policy::tile_stages(128, 256, 2) == 3 &&
                  B2bSm90Policy::tile_stages(128, 128, 2) == 4 && B2bSm90Policy::tile_stages(64, 64, 1) == 4,
              "n0 <= 128 keeps the rings measured before n0 = 256 (docs/b2b.md)");
static_assert(B2bSm90Policy::kTileM == B2bPortablePolicy::kTileM, "both families tile m alike (one grid formula)");

// Problem limits common to both families.
constexpr int kB2bTileM = B2bPortablePolicy::kTileM;
constexpr int kB2bChunkK = B2bPortablePolicy::kChunkK;
constexpr bool b2b_tile_n(int64_t n) { return n == 64 || n == 128 || n == 256; }  // n0, n1
// n0 past one tile (both families; Hopper: B2bSm90Policy::chunked_stages): GEMM 0 runs in chunks of kB2bN0Chunk of D0's columns, each
// chunk's D0 feeding GEMM 1 as that k-range while D1's accumulators stay in registers; with more
// than one column chunk of D1 (n1 > kN1Chunk) GEMM 0 is recomputed for each. kB2bMaxN0 keeps the
// kernels' int offsets small.
constexpr int64_t kB2bMaxN0 = 16384;
constexpr bool b2b_chunked_n0(int64_t n0) { return n0 > 256 && n0 <= kB2bMaxN0 && n0 % kB2bN0Chunk == 0; }
constexpr int kB2bMaxBatch = 65535;                 // grid.z
constexpr int64_t kB2bMaxK0Int8 = 131071;           // int32 exactness: k0 * 2^14 < 2^31
// The kernels move 16-byte vectors (A0, B0, B1 loads; the Hopper kernel's D1 stores): operand pointers
// and batch strides are multiples of this many bytes.
constexpr int64_t kB2bVectorBytes = 16;
// Convolution pairs (b2b::Conv): conv 0's filter is r x r, r odd and at most this; a k-chunk
// (kB2bChunkK units = 64 bytes) of the implicit A0 must lie within one filter tap, so the channel
// count c times the element size is a multiple of kB2bConvChannelBytes.
constexpr int kB2bMaxConvFilter = 7;
constexpr int64_t kB2bConvChannelBytes = 2 * kB2bChunkK;
constexpr int64_t kB2bMaxConvExtent = 0x7fffffff;   // n, h, w each (int image coordinates in the kernels)

}  // namespace kernels
}  // namespace ozgemm
