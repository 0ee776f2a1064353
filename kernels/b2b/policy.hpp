// kernels/b2b/policy.hpp — compile-time configurations and limits of the back-to-back GEMM kernels,
// plain constexpr data read by the kernels and by the b2b planner (src/plan/b2b_planner.cpp), so
// each limit is written once. Host-only C++ (no CUDA headers).
#pragma once

#include <cstdint>

namespace ozgemm {
namespace kernels {

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

// The Hopper kernel (b2b_sm90.cu): fp16 or int8, register residency, wgmma for both GEMMs, two warp
// groups of 64 rows, a cp.async ring of 64-element k-tiles into swizzled shared memory (128B fp16,
// 64B int8; int8 tiles take half the bytes below). GEMM 1 and its
// epilogue run in column chunks of at most kN1Chunk (64 fp32 accumulators a thread), so with
// n0 = 64 two CTAs fit an SM (<= 128 registers a thread; shared memory: 4 stages of A0 and B0 plus
// B1 = 112 KB at n1 <= 128, 3 stages + B1 = 104 KB at n1 = 256) and one CTA's GEMM 1 and stores
// overlap the other's loads. (One CTA an SM, as n1 = 256 ran with 186 registers and 128 KB before
// the chunks, measured 106 us against 61 us at n1 = 128 on the example's convolutions, H100.)
struct B2bSm90Policy {
  static constexpr int kTileM = 128, kTileK = 64, kThreads = 256, kN1Chunk = 128;
  static constexpr int stages(int n1) { return n1 <= 128 ? 4 : 3; }
  static constexpr int min_ctas_per_sm(int n0) { return n0 == 64 ? 2 : 1; }
  static constexpr bool supports_n0(int64_t n0) { return n0 == 64 || n0 == 128; }
  // Convolutions: a k-tile (kTileK elements) must lie within one filter tap, so c % kTileK == 0.
  static constexpr bool supports_conv_c(int64_t c) { return c % kTileK == 0; }
};
static_assert(B2bSm90Policy::kTileM == B2bPortablePolicy::kTileM, "both families tile m alike (one grid formula)");

// Problem limits common to both families.
constexpr int kB2bTileM = B2bPortablePolicy::kTileM;
constexpr int kB2bChunkK = B2bPortablePolicy::kChunkK;
constexpr bool b2b_tile_n(int64_t n) { return n == 64 || n == 128 || n == 256; }  // n0, n1
// n0 past one tile (portable kernels): GEMM 0 runs in chunks of kB2bN0Chunk of D0's columns, each
// chunk's D0 feeding GEMM 1 as that k-range while D1's accumulators stay in registers; with more
// than one column chunk of D1 (n1 > kN1Chunk) GEMM 0 is recomputed for each. kB2bMaxN0 keeps the
// kernels' int offsets small.
constexpr int kB2bN0Chunk = 128;
constexpr int64_t kB2bMaxN0 = 16384;
constexpr bool b2b_chunked_n0(int64_t n0) { return n0 > 256 && n0 <= kB2bMaxN0 && n0 % kB2bN0Chunk == 0; }
constexpr int kB2bMaxBatch = 65535;                 // grid.z
constexpr int64_t kB2bMaxK0Int8 = 131071;           // int32 exactness: k0 * 2^14 < 2^31
constexpr int64_t kB2bStrideAlignBytes = 16;        // batch strides (16-byte vector loads)
// Convolution pairs (b2b::Conv): conv 0's filter is r x r, r odd and at most this; a k-chunk
// (kB2bChunkK units = 64 bytes) of the implicit A0 must lie within one filter tap, so the channel
// count c times the element size is a multiple of kB2bConvChannelBytes.
constexpr int kB2bMaxConvFilter = 7;
constexpr int64_t kB2bConvChannelBytes = 2 * kB2bChunkK;
constexpr int64_t kB2bMaxConvExtent = 0x7fffffff;   // n, h, w each (int image coordinates in the kernels)

}  // namespace kernels
}  // namespace ozgemm
