// src/planner.hpp — turns a problem into a Plan (plain data). The dispatch layer
// (src/dispatch.cu) is the only place that maps a Plan to kernels and library calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ozgemm/problem.hpp"

namespace ozgemm {

enum class Variant : int { Auto = 0, Unfused = 1, PartiallyFused = 2, FullyFused = 3, Native = 4 };
// Kernel family of the fused variants (values as ozgemmKernelFamily_t).
enum class KernelFamily : int { Auto = 0, Sm90 = 1, Portable = 2 };
// Where the fully fused kernel keeps the FP64 sum (values as ozgemmFusedAccumulator_t).
enum class FusedAccumulator : int { Auto = 0, Registers = 1, Global = 2 };
const char* variant_name(Variant v);

// What the planner knows of the device.
struct DeviceDesc {
  int sm_count = 132;
  int cc_major = 9, cc_minor = 0;
  int64_t memory_bytes = int64_t(80) << 30;  // global memory
};

// Unfused plan: operands sliced into padded, k-contiguous int8 buffers; one cuBLASLt
// INT8 GEMM per (anti-diagonal d, k-block b), each summing the d+1 terms of its diagonal
// over k-block b in one int32 accumulator; the epilogue sums the k-blocks in int64.
//
// Slice layout (both operands; "rows" are rows of op(A) or columns of op(B)):
//   element (r, l), l = b * kblock + q, slice i  ->  byte offset
//   r * ld_slices + b * (s * kblock) + pos(i) * kblock + q,   ld_slices = kblocks * s * kblock
//   pos(i) = s - 1 - i for A (slices reversed), pos(i) = i for B.
// Then the terms of diagonal d in k-block b are ONE contiguous k-range of length (d+1)*kblock:
//   A from pos s-1-d (A_d .. A_0) and B from pos 0 (B_0 .. B_d): A_{d-t} pairs with B_t.
// Tile shapes of the fused kernels (the kernels' compile-time configurations; src/dispatch.cpp
// checks they agree with kernels/kernels.hpp).
struct TileConfig {
  int m = 0, n = 0, k = 0;  // CTA tile (k in int8 elements); 0: chosen by cuBLASLt
  int cluster_m = 1, cluster_n = 1;
};
TileConfig fused_tile_config(Variant v, KernelFamily family, FusedAccumulator acc = FusedAccumulator::Registers);
// What FusedAccumulator::Auto means for a fully fused plan (measured; planner.cpp).
FusedAccumulator default_fused_accumulator(KernelFamily family, int64_t kblocks);

struct Plan {
  Variant variant = Variant::Unfused;
  KernelFamily family = KernelFamily::Auto;  // fused variants: Sm90 or Portable
  FusedAccumulator accumulator = FusedAccumulator::Auto;  // fully fused: Registers or Global
  TileConfig tile;                           // fused variants
  int slices = 8;
  int64_t m = 0, n = 0, k = 0;
  int64_t m_pad = 0, n_pad = 0;  // rows padded for the INT8 GEMM (multiple of kRowAlign)
  int64_t kblock = 0;            // k per block, multiple of kKAlign, zero-padded past k
  int64_t kblocks = 0;           // number of k-blocks
  int64_t ld_slices = 0;         // bytes between consecutive rows of a sliced operand
  // Workspace layout (byte offsets, each 256-aligned).
  size_t off_shift_a = 0, off_shift_b = 0, off_flag_a = 0, off_flag_b = 0;
  size_t off_slices_a = 0, off_slices_b = 0, off_diag = 0, off_lt_workspace = 0;
  size_t workspace_bytes = 0;
  // The products and the epilogue run over blocks of m_chunk x n_chunk entries of C (both
  // multiples of kRowAlign) so the int32 buffers stay within diag_buffer_cap: slices *
  // kblocks planes of m_chunk x n_chunk (column-major, ld m_chunk); plane (d, b) at
  // off_diag + (d * kblocks + b) * m_chunk * n_chunk * 4. Columns are chunked first; rows
  // only when even kMinChunkCols columns of all m_pad rows would not fit.
  int64_t m_chunk = 0, n_chunk = 0;
  // Fully fused with kblocks > 1: int64 entries at off_spill, the running sums of the k-blocks
  // before the last (one per entry of each tile of the cluster-rounded grid).
  int64_t spill_entries = 0;
  size_t off_spill = 0;
  // Fully fused with the Global accumulator: FP64 entries (r, c) at off_diag + 8 * (r + c * m_pad).
  int64_t acc_entries = 0;
  int64_t diag_planes() const { return int64_t(slices) * kblocks; }
};

constexpr int64_t kRowAlign = 16;  // cuBLASLt IMMA: rows and leading dims multiple of 16 bytes
constexpr int64_t kKAlign = 16;
// Upper bound on the int32 diagonal buffers of one column chunk (bytes): an eighth of the
// device memory, between kDiagBufferMin and kDiagBufferCap. Large enough that square
// problems up to 16384 with 7 slices run in one chunk on an 80 GB GPU.
constexpr int64_t kDiagBufferCap = int64_t(16) << 30;
constexpr int64_t kDiagBufferMin = int64_t(256) << 20;
int64_t diag_buffer_cap(const DeviceDesc& dev);
// Columns per chunk at least, before rows are chunked too.
constexpr int64_t kMinChunkCols = 256;
// Columns per chunk at most (keeps the epilogue grid within CUDA's grid.y limit).
constexpr int64_t kMaxChunkCols = 65536;
// Scratch for cuBLASLt's kernels.
constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;

// What OZGEMM_VARIANT_AUTO runs: the variant expected to be fastest at the requested slice
// count (the slice count is the accuracy the caller asked for). Hopper: a table measured on
// H100 (planner.cpp, docs/performance.md); native DGEMM unless the table says an emulated
// variant won there. A fused choice the problem does not fit falls back to unfused (api.cpp).
// Other architectures follow the roofline: emulation is chosen when the INT8 rate divided by
// the s(s+1)/2 products, derated by kEmulationEfficiency, exceeds the FP64 rate.
Variant choose_auto_variant(const GemmShape& shape, int slices, const DeviceDesc& dev);
constexpr double kEmulationEfficiency = 0.6;  // unfused end-to-end vs INT8 peak (H100: 41.2 / 70.7 at s = 7)

// Fused kernels (kernels/fused_ozaki_sm90.cu, fused_ozaki_sm80.cu): k-blocks are multiples of
// their 128-deep k-tile (s * kblock within the int32 bound, so one k-block up to k = 18688 at 7
// slices, 16256 at 8; more blocks beyond), and partially fused chunks start on tile boundaries
// (128 x 256).
constexpr int64_t kFusedKAlign = 128;
constexpr int64_t kFusedChunkAlign = 256;  // the partially fused kernel's widest tile

// Plans an emulated variant (Unfused, PartiallyFused, FullyFused). Returns an empty string, or
// why the problem cannot be planned for that variant (for the fused ones: no suitable GPU, or a
// grid or spill buffer past the kernels' limits; the caller then falls back to Unfused).
// family: Auto picks Sm90 on compute capability 9.0, Portable on other sm_80+ GPUs.
std::string plan_variant(const GemmShape& shape, int slices, const DeviceDesc& dev, Variant variant, Plan* plan,
                         KernelFamily family = KernelFamily::Auto,
                         FusedAccumulator accumulator = FusedAccumulator::Auto);

// Plans the unfused path. Returns an empty string, or why the problem cannot be planned.
// k-blocking: kblock = the largest multiple of kKAlign with slices * kblock products within
// the int32 exactness bound (numerics::int32_exact_k(slices)), or round_up(k) if smaller.
std::string plan_unfused(const GemmShape& shape, int slices, const DeviceDesc& dev, Plan* plan);

}  // namespace ozgemm
