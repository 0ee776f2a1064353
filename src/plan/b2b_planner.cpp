// The back-to-back GEMM's planner (b2b_planner.hpp).
#include "plan/b2b_planner.hpp"

#include <algorithm>
#include <cstdint>

#include "kernels/b2b/policy.hpp"

namespace ozgemm {
namespace b2b {

const char* residency_name(Residency r) { return r == Residency::Register ? "register" : "shared"; }
const char* type_name(DataType t) { return t == DataType::S8 ? "int8" : "fp16"; }

namespace {
using kernels::B2bSm90Policy;

int elem_bytes(DataType t) { return t == DataType::S8 ? 1 : 2; }
size_t align256(size_t x) { return (x + 255) / 256 * 256; }

// Rows of all problems together: m (per batch) or the sum of the groups.
int64_t total_rows(const Problem& p) {
  if (p.group_m.empty()) return p.m;
  int64_t rows = 0;
  for (int64_t gm : p.group_m) rows += gm;
  return rows;
}

// Why the problem is outside the limits both fused families share (empty: inside).
std::string common_limits(const Problem& p) {
  if (p.type != DataType::F16 && p.type != DataType::S8) return "unknown data type";
  if (p.m < 0 || p.k0 < 0 || p.n0 < 0 || p.n1 < 0) return "sizes must be >= 0";
  if (!kernels::b2b_tile_n(p.n0) && !kernels::b2b_chunked_n0(p.n0))
    return "n0 = " + std::to_string(p.n0) + " must be 64, 128, 256 or a multiple of " +
           std::to_string(kernels::kB2bN0Chunk) + " up to " + std::to_string(kernels::kB2bMaxN0) +
           " (one CTA owns all of D0's columns, past 256 in chunks)";
  if (!kernels::b2b_tile_n(p.n1))
    return "n1 = " + std::to_string(p.n1) + " must be 64, 128 or 256 (one CTA owns all of D1's columns)";
  const int eb = elem_bytes(p.type);
  const int64_t chunk = kernels::kB2bChunkK * 2 / eb;  // elements in 64 bytes
  if (p.k0 < chunk || p.k0 % chunk != 0)
    return "k0 = " + std::to_string(p.k0) + " must be a positive multiple of " + std::to_string(chunk) + " for " +
           type_name(p.type);
  if (p.type == DataType::S8 && p.k0 > kernels::kB2bMaxK0Int8)
    return "int8: k0 must be <= " + std::to_string(kernels::kB2bMaxK0Int8) + " (int32 accumulation exact)";
  return {};
}

// Why the Hopper kernel cannot run the problem (empty: it can).
std::string sm90_limits(const Problem& p, Residency r) {
  if (r != Residency::Register) return "the Hopper b2b kernel is register-resident only";
  if (!B2bSm90Policy::supports_n0(p.n0) && !kernels::b2b_chunked_n0(p.n0))
    return "the Hopper b2b kernel needs n0 = 64, 128, 256 or a multiple of " + std::to_string(kernels::kB2bN0Chunk) +
           " up to " + std::to_string(kernels::kB2bMaxN0);
  if (p.k0 % B2bSm90Policy::kTileK != 0)
    return "the Hopper b2b kernel needs k0 to be a multiple of " + std::to_string(B2bSm90Policy::kTileK);
  if (p.conv.enabled() && !B2bSm90Policy::supports_conv_c(p.conv.c))
    return "the Hopper b2b kernel needs a convolution's c to be a multiple of " + std::to_string(B2bSm90Policy::kTileK);
  return {};
}

// Why a convolution pair is outside the limits every path shares (empty: inside, or not a
// convolution). The channel granularity is the fused kernels' (a 64-byte k-chunk within one
// filter tap); the unfused pair's conv 0 is the same kernel.
std::string conv_limits(const Problem& p) {
  const Conv& x = p.conv;
  if (!x.enabled()) return x.c < 0 ? "conv: c must be >= 0 (0: not a convolution)" : "";
  if (x.n < 0 || x.h < 0 || x.w < 0) return "conv: n, h and w must be >= 0";
  if (x.n > kernels::kB2bMaxConvExtent || x.h > kernels::kB2bMaxConvExtent || x.w > kernels::kB2bMaxConvExtent)
    return "conv: n, h and w must each be < 2^31";
  if (x.r < 1 || x.r > kernels::kB2bMaxConvFilter || x.r % 2 == 0)
    return "conv: the filter size r = " + std::to_string(x.r) + " must be odd, 1 to " +
           std::to_string(kernels::kB2bMaxConvFilter) + " (stride 1, padding r / 2)";
  const int64_t channel_step = kernels::kB2bConvChannelBytes / elem_bytes(p.type);
  if (x.c % channel_step != 0)
    return "conv: c = " + std::to_string(x.c) + " must be a multiple of " + std::to_string(channel_step) + " for " +
           type_name(p.type) + " (a 64-byte k-chunk lies within one filter tap)";
  if (p.batch != 1 || !p.group_m.empty())
    return "conv: the pair is batched over n by construction: batch must be 1 and the problem not grouped";
  // each extent < 2^31, so h * w cannot overflow; n * h * w is checked by division
  if (x.h * x.w > 0 && x.n > (int64_t(1) << 40) / (x.h * x.w)) return "conv: n * h * w too large";
  if (p.m != x.pixels() || p.k0 != x.patch())
    return "conv: m must be n * h * w and k0 must be r * r * c (b2b::conv_pair sets both)";
  return {};
}

// Limits of the batch, strides and groups (every path).
std::string batch_limits(const Problem& p) {
  const int eb = elem_bytes(p.type);
  for (int64_t st : {p.stride_a0, p.stride_b0, p.stride_b1, p.stride_c1, p.stride_d1})
    if (st < 0 || (st * eb) % kernels::kB2bVectorBytes != 0) return "batch strides must be >= 0 and multiples of 16 bytes";
  if (p.stride_bias0 < 0) return "batch strides must be >= 0";
  if (p.batch < 1 || p.batch > kernels::kB2bMaxBatch) return "batch must be in 1.." + std::to_string(kernels::kB2bMaxBatch);
  if (!p.group_m.empty()) {
    if (p.batch != 1) return "grouped problems are not batched (batch must be 1)";
    for (int64_t gm : p.group_m)
      if (gm < 0) return "every group's m must be >= 0";
  }
  if (total_rows(p) > (int64_t(1) << 40)) return "m too large";
  return {};
}
}  // namespace

// Measured on an H100 SXM, 2026-11-26 (docs/b2b.md, "The Hopper kernel for n0 = 256 and past it";
// bench/results/2026-11-26-h100-b2b-n0-256/, `bash bench/device_b2b_conv.sh`, median of 30 runs
// each, every path 0 mismatches). Times in us, the Hopper kernel (the faster fused family at every
// one of these shapes) against the unfused pair (the cuBLASLt pair for GEMMs, our conv 0 plus
// cuBLASLt for convolutions):
//   fp16 GEMM 81920 x 576 -> 384 -> 128        157.7 against 116.0: 0.74x
//   fp16 GEMM 81920 x 576 -> 512 -> 128        204.6 against 142.1: 0.69x
//   fp16 GEMM 65536 x 1024 -> 512 -> 256       513.4 against 153.2: 0.30x
//   fp16 GEMM 65536 x 1024 -> 256 -> 256       109.9 against 105.5: 0.96x (0.95x in call 2)
//   fp16 conv 32x28x28x128 r3 -> 512 -> 256    380.0 against 303.0: 0.80x
//   int8 conv 32x28x28x128 r3 -> 512 -> 256    307.6 against 190.5: 0.62x
//   int8 GEMM 65536 x 1024 -> 512 -> 256       404.2 against 312.0: 0.77x
// and fused faster at the neighbours: fp16 GEMM 65536 x 1024 -> 256 -> 128 1.04x, 81920 x 576 ->
// 256 -> 128 / -> 64 1.09 / 1.18x; int8 GEMM -> 384 / 512 -> 128 2.01 / 1.81x, -> 256 -> 256 2.49x;
// conv 32x56x56x64 r3 -> 512 -> 128 fp16 1.69x, int8 1.29x; fp16 conv -> 256 -> 256 1.92x. The
// portable kernels lost by more at every shape of the first list (0.17-0.67x the unfused pair), so
// the rule holds whichever family AUTO would take.
// Why: fp16 pairs with large n0 are compute-bound, and the fused kernels' GEMM 0 mainloop (one CTA
// an SM, the CTA synchronised every k-tile) runs well below cuBLASLt's; with n1 = 256 and n0 past
// 256 every type recomputes GEMM 0 for D1's second column chunk. Measured at n0 = 384 and 512,
// k0 = 576 and 1024, m = 25088 to 81920 (smaller m not measured); the rule extends to every chunked
// n0 (the recompute and the mainloop scale with n0 as the work fusion saves does) and to k0 above
// 1024 (a larger share of GEMM 0). Other GPUs: not measured.
bool auto_unfused(const Problem& p) {
  const bool chunked = kernels::b2b_chunked_n0(p.n0);
  if (chunked && p.n1 == 256) return true;  // GEMM 0 recomputed, every type, GEMM or convolution
  if (p.type != DataType::F16 || p.conv.enabled()) return false;
  return chunked || (p.n0 == 256 && p.k0 >= 1024 && p.n1 == 256);  // fp16 GEMM pairs: the mainloop
}

bool operands_aligned(const Problem& p, const Arguments& a) {
  const auto aligned = [](const void* ptr) {
    return reinterpret_cast<uintptr_t>(ptr) % uintptr_t(kernels::kB2bVectorBytes) == 0;
  };
  return aligned(a.a0) && aligned(a.b0) && aligned(a.b1) && aligned(a.d1) && (p.beta1 == 0.0f || aligned(a.c1));
}

std::string make_plan(const Problem& p, const Options& o, const DeviceDesc& dev, Plan* out, Refusal* refusal) {
  *refusal = Refusal::Problem;
  if (o.residency != Residency::Register && o.residency != Residency::Shared) return "unknown residency";
  if (!family_name(o.family)) return "unknown kernel family";
  std::string why = batch_limits(p);
  if (why.empty()) why = conv_limits(p);
  if (!why.empty()) return why;
  Plan plan;
  plan.options = o;
  plan.unfused = o.unfused;
  plan.groups = static_cast<int>(p.group_m.size());
  const int eb = elem_bytes(p.type);
  const int64_t rows = total_rows(p);
  size_t off = 0;
  if (o.unfused) {
    if (p.type != DataType::F16 && p.type != DataType::S8) return "unknown data type";
    if (p.m < 0 || p.k0 < 0 || p.n0 < 0 || p.n1 < 0) return "sizes must be >= 0";
    if (p.type == DataType::S8 && p.k0 > kernels::kB2bMaxK0Int8)
      return "int8: k0 must be <= " + std::to_string(kernels::kB2bMaxK0Int8) + " (int32 accumulation exact)";
    if (!dev.has_int8_tensor_cores() && p.type == DataType::S8) {
      *refusal = Refusal::Device;
      return "the int8 baseline needs INT8 tensor cores (compute capability 7.5 or newer)";
    }
    if (p.conv.enabled()) {
      // Conv 0 runs on the portable fused kernel alone (implicit GEMM, D0 to the workspace), so
      // it has that kernel's limits; conv 1 is the cuBLASLt GEMM of the GEMM pair.
      why = common_limits(p);
      if (!why.empty()) return why;
      *refusal = Refusal::Device;
      if (dev.cc_major < 8) return "the unfused convolution pair's conv 0 needs compute capability 8.0 or newer";
      if (!dev.portable_kernels) return "this build has no portable b2b kernels (CUTLASS headers missing)";
      *refusal = Refusal::Problem;
      plan.family = KernelFamily::Portable;
      plan.grid_tiles = (p.m + kernels::kB2bTileM - 1) / kernels::kB2bTileM;
      if (plan.grid_tiles > 0x7fffffffLL) return "m too large for the grid";
    }
    // D0 for all batches / groups; int8: then one int32 GEMM output (the larger of m x n0 and
    // m x n1 of one problem at a time) and cuBLASLt's scratch; fp16: bias0 as fp16 per batch.
    plan.off_d0 = off;
    off = align256(off + size_t(rows) * size_t(p.n0) * size_t(eb) * size_t(p.batch));
    if (p.type == DataType::S8) {
      int64_t one = p.m;
      if (!p.group_m.empty()) one = *std::max_element(p.group_m.begin(), p.group_m.end());
      plan.off_acc = off;
      off = align256(off + size_t(std::max<int64_t>(one, 0)) * size_t(std::max(p.n0, p.n1)) * 4);
      plan.off_scratch = off;
      off = align256(off + kB2bLtScratchBytes);
    } else {
      plan.off_bias16 = off;
      off = align256(off + size_t(p.n0) * 2 * size_t(p.batch));
    }
    plan.workspace_bytes = off;
    *out = plan;
    *refusal = Refusal::None;
    return {};
  }
  why = common_limits(p);
  if (!why.empty()) return why;
  // The family: Auto takes the Hopper kernel wherever it applies (measured faster than the
  // portable kernels on every shape it supports, fp16 and int8, H100, docs/b2b.md), the portable
  // one otherwise.
  KernelFamily family = o.family;
  if (family == KernelFamily::Auto)
    family = dev.is_hopper() && dev.sm90_kernels && sm90_limits(p, o.residency).empty() ? KernelFamily::Sm90
                                                                                          : KernelFamily::Portable;
  if (family == KernelFamily::Sm90) {
    why = sm90_limits(p, o.residency);
    if (!why.empty()) return why;
    *refusal = Refusal::Device;
    if (!dev.is_hopper()) return "the Hopper b2b kernel needs a compute capability 9.0 GPU";
    if (!dev.sm90_kernels) return "this build has no sm_90a b2b kernel (OZGEMM_CUDA_ARCHITECTURES, CUTLASS headers)";
  } else {
    *refusal = Refusal::Device;
    if (dev.cc_major < 8) return "the fused b2b kernels need compute capability 8.0 or newer";
    if (!dev.portable_kernels) return "this build has no portable b2b kernels (CUTLASS headers missing)";
  }
  plan.family = family;
  const int64_t tile_m = kernels::kB2bTileM;
  if (p.group_m.empty()) {
    plan.grid_tiles = (p.m + tile_m - 1) / tile_m;
  } else {
    for (int64_t gm : p.group_m) plan.grid_tiles += (gm + tile_m - 1) / tile_m;
    plan.off_table = off;
    off = align256(off + (3 * size_t(plan.groups) + 1) * sizeof(int64_t));
  }
  if (plan.grid_tiles > 0x7fffffffLL) {
    *refusal = Refusal::Problem;
    return "m too large for the grid";
  }
  // The Hopper kernel's schedule: warp-specialised persistent for GEMM pairs of at least
  // kWsMinTilesPerSm tiles an SM of the types it is built for, one CTA an SM (its ring takes the
  // shared memory); one CTA a tile otherwise (policy.hpp has the measurements).
  const int64_t work = plan.grid_tiles * (p.group_m.empty() ? p.batch : 1);
  if (family == KernelFamily::Sm90 && !p.conv.enabled() && B2bSm90Policy::ws_supports(int(p.n0), eb) &&
      work >= int64_t(B2bSm90Policy::kWsMinTilesPerSm) * dev.sm_count)
    plan.persistent_ctas = std::min<int64_t>(work, dev.sm_count);
  plan.workspace_bytes = off;
  // AUTO: the unfused pair where it measured faster (auto_unfused), if it can run here; the fused
  // plan otherwise (so AUTO refuses only what the fused kernels refuse).
  if (!o.unfused && o.family == KernelFamily::Auto && auto_unfused(p)) {
    Options pair = o;
    pair.unfused = true;
    Plan unfused_plan;
    Refusal pair_refusal = Refusal::None;
    if (make_plan(p, pair, dev, &unfused_plan, &pair_refusal).empty()) {
      unfused_plan.options = o;  // as asked
      *out = unfused_plan;
      *refusal = Refusal::None;
      return {};
    }
  }
  *out = plan;
  *refusal = Refusal::None;
  return {};
}

void fill_group_table(const Problem& p, int64_t* table) {
  const size_t groups = p.group_m.size();
  int64_t row = 0, tile = 0;
  for (size_t g = 0; g < groups; ++g) {
    table[g] = row;
    table[groups + g] = p.group_m[g];
    table[2 * groups + g] = tile;
    row += p.group_m[g];
    tile += (p.group_m[g] + kernels::kB2bTileM - 1) / kernels::kB2bTileM;
  }
  table[3 * groups] = tile;
}

}  // namespace b2b
}  // namespace ozgemm
