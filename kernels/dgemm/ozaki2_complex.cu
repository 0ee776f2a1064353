// The complex Ozaki-II scheme's kernels, 2M form (ozgemm/numerics/ozaki2_complex.hpp; launch.hpp lists
// them): an operand's statistics (shifts, Inf/NaN flags, norms S over the 2k parts of a row; for FP64
// mode's decision also the exact digits, and the magnitude digits with U and S), its
// residues as two transformed int8 planes per modulus, the reconstruction from the products' planes
// with complex alpha/beta and the special path (the quick return C = beta C is reconstruct_epilogue.cu's,
// beside the real one). The products are the real scheme's (cuBLASLt over 2N planes, or the Hopper
// GEMM with planes_per_modulus = 2), the k-chunk reduction its launch_oz2_accumulate. Every numeric step is the shared header's, so the results equal
// the host reference's (src/reference/ozaki2_complex_reference.cpp) bit for bit.
#include <cstdint>

#include "kernels/dgemm/launch.hpp"
#include "kernels/dgemm/moduli_count.cuh"
#include "kernels/dgemm/row_stats_split.cuh"
#include "ozgemm/numerics/accuracy.hpp"
#include "ozgemm/numerics/ozaki2.hpp"
#include "ozgemm/numerics/ozaki2_complex.hpp"

namespace ozgemm {
namespace kernels {

namespace nm = ozgemm::numerics;

namespace {

__device__ __forceinline__ double2 load(const ComplexOperandView& v, int64_t r, int64_t l) {
  return v.ptr[r * v.stride_r + l * v.stride_l];
}
// Element (r, l) as the products see it (conjugated for op C).
__device__ __forceinline__ nm::ComplexF64 op_value(const ComplexOperandView& v, int64_t r, int64_t l) {
  const double2 x = load(v, r, l);
  return nm::oz2c_op_value(nm::ComplexF64{x.x, x.y}, v.conj ? nm::ComplexOp::C : nm::ComplexOp::N);
}

// ---- Statistics: blocks of 32 x 8 threads over rows ----
// k-contiguous operands (stride_l == 1): a warp a row (kStatsRowsK rows a block), lanes striding over
// l; others: a thread a row (32 rows a block: a warp reads 32 consecutive rows when stride_r == 1),
// threadIdx.y striding over l. Each thread's partial result goes to shared memory, and one thread a
// row combines them (max, or, integer sums: order-free).
constexpr int kStatsRowsK = 8, kStatsRowsR = 32;
template <bool kKContig>
__device__ __forceinline__ int64_t stats_row() {
  return kKContig ? int64_t(blockIdx.x) * kStatsRowsK + threadIdx.y : int64_t(blockIdx.x) * kStatsRowsR + threadIdx.x;
}
template <bool kKContig>
__device__ __forceinline__ int stats_first_l() {
  return kKContig ? threadIdx.x : threadIdx.y;
}
template <bool kKContig>
constexpr int stats_step_l() {
  return kKContig ? 32 : 8;
}
// The thread that combines its row's partials, and the partials it combines (slot j of the row).
template <bool kKContig>
__device__ __forceinline__ bool stats_combines() {
  return kKContig ? threadIdx.x == 0 : threadIdx.y == 0;
}
template <bool kKContig, class T>
__device__ __forceinline__ T stats_partial(const T (&s)[8][32], int j) {
  return kKContig ? s[threadIdx.y][j] : s[j][threadIdx.x];
}

// Shifts and flags; with digits.q (FP64 mode's decision) also the exact digits q over the non-zero
// finite parts' lowest set bits, and their maximum over the finite rows.
// kSplit (few rows, row_stats_split.cuh): l split over blockIdx.y as well, the rows' partial results
// into the accumulators (row_split::partial; row_split::finish completes them).
template <bool kKContig, bool kSplit>
__global__ void __launch_bounds__(256) oz2c_max_kernel(ComplexOperandView v, int64_t rows_pad, int32_t* __restrict__ shift,
                                                       int32_t* __restrict__ flag, RowDigits digits) {
  __shared__ double smax[8][32];
  __shared__ int sbad[8][32];
  __shared__ int slsb[8][32];
  const bool with_digits = digits.q != nullptr;  // grid-uniform
  const int64_t r = stats_row<kKContig>();
  double mx = 0.0;
  int bad = 0, lsb = nm::kNoDigits;
  if (r < v.rows)
    for (int64_t l = stats_first_l<kKContig>() + int64_t(blockIdx.y) * stats_step_l<kKContig>(); l < v.k;
         l += int64_t(stats_step_l<kKContig>()) * gridDim.y) {
      const double2 x = load(v, r, l);
      const double parts[2] = {x.x, x.y};
      for (const double part : parts) {
        if (nm::is_finite(part)) {
          mx = fmax(mx, fabs(part));
          if (with_digits && part != 0.0) lsb = min(lsb, nm::lowest_bit_exponent(part));
        } else {
          bad = 1;
        }
      }
    }
  smax[threadIdx.y][threadIdx.x] = mx;
  sbad[threadIdx.y][threadIdx.x] = bad;
  slsb[threadIdx.y][threadIdx.x] = lsb;
  __syncthreads();
  if (!stats_combines<kKContig>() || r >= rows_pad) return;
  for (int j = 1; j < (kKContig ? 32 : 8); ++j) {  // slot 0: this thread's own
    mx = fmax(mx, stats_partial<kKContig>(smax, j));
    bad |= stats_partial<kKContig>(sbad, j);
    lsb = min(lsb, stats_partial<kKContig>(slsb, j));
  }
  if (kSplit) {
    row_split::partial(r, mx, lsb, bad, shift, flag, with_digits ? digits.q : nullptr);
    return;
  }
  const int32_t sh = nm::shift_from_max(mx);
  shift[r] = sh;
  flag[r] = bad;
  if (with_digits) {
    const int32_t q = nm::exact_digits(sh, lsb);
    digits.q[r] = q;
    if (!bad) atomicMax(digits.q_max, q);
  }
}

// The scheme's statistics in one read (launch_oz2c_stats): shifts, flags and S together. Each
// thread holds kStatsGroup elements at once (a group: numerics' Oz2cNormState at the group's own
// shift), merges it into its running state, and the row's combining thread merges the partial
// states and reads S at the row's shift (oz2c_norm_of): exact and order-free, so the norms need no
// second pass over the operand after the shifts (two reads: max 0.45 + norms 0.63 ms for A, 0.38 +
// 0.37 for B at 8192^2, H100, ncu).
// Predicted (H100, 8192^2): one read of 1 GiB, ~0.36 ms at 3 TB/s; per element 2 x (scaled_ceil
// ~18 + 7 sums x 3 + max/finite ~5) ~ 90 integer instructions at half issue rate: 2.1M warps x 90 /
// (528 x 0.5 x 1.98 GHz) = 0.36 ms: ~0.4-0.5 ms an operand.
constexpr int kStatsGroup = 8;
template <bool kKContig>
__global__ void __launch_bounds__(256) oz2c_stats_kernel(ComplexOperandView v, int64_t rows_pad, int32_t* __restrict__ shift,
                                                         int32_t* __restrict__ flag, int64_t* __restrict__ S) {
  __shared__ double smax[8][32];
  __shared__ int sbad[8][32];
  __shared__ nm::Oz2cNormState sstate[8][32];
  const int64_t r = stats_row<kKContig>();
  constexpr int kStep = stats_step_l<kKContig>();
  double mx = 0.0;
  int bad = 0;
  nm::Oz2cNormState st;
  if (r < v.rows)
    for (int64_t l0 = stats_first_l<kKContig>(); l0 < v.k; l0 += kStep * kStatsGroup) {
      double2 x[kStatsGroup];
#pragma unroll
      for (int i = 0; i < kStatsGroup; ++i) {
        const int64_t l = l0 + int64_t(i) * kStep;
        x[i] = l < v.k ? load(v, r, l) : make_double2(0.0, 0.0);
      }
      double gmax = 0.0;
#pragma unroll
      for (int i = 0; i < kStatsGroup; ++i) {
        const double parts[2] = {x[i].x, x[i].y};
        for (const double part : parts) {
          if (nm::is_finite(part))
            gmax = fmax(gmax, fabs(part));
          else
            bad = 1;
        }
      }
      if (gmax == 0.0) continue;  // no non-zero finite part: nothing to add
      mx = fmax(mx, gmax);
      nm::Oz2cNormState group;
      group.g = nm::shift_from_max(gmax) - 1;
#pragma unroll
      for (int i = 0; i < kStatsGroup; ++i) {
        if (nm::is_finite(x[i].x)) nm::oz2c_norm_add(group, x[i].x);
        if (nm::is_finite(x[i].y)) nm::oz2c_norm_add(group, x[i].y);
      }
      nm::oz2c_norm_merge(st, group);
    }
  smax[threadIdx.y][threadIdx.x] = mx;
  sbad[threadIdx.y][threadIdx.x] = bad;
  sstate[threadIdx.y][threadIdx.x] = st;
  __syncthreads();
  if (!stats_combines<kKContig>() || r >= rows_pad) return;
  for (int j = 1; j < (kKContig ? 32 : 8); ++j) {  // slot 0: this thread's own
    mx = fmax(mx, stats_partial<kKContig>(smax, j));
    bad |= stats_partial<kKContig>(sbad, j);
    nm::oz2c_norm_merge(st, stats_partial<kKContig>(sstate, j));
  }
  const int32_t sh = nm::shift_from_max(mx);
  shift[r] = sh;
  flag[r] = bad;
  S[r] = nm::oz2c_norm_of(st, sh);
}

// ---- Residues and magnitudes: a tile of 32 rows x 32 k-indices a CTA of 256 threads ----
// The real scheme's structure (ozaki2.cu, oz2_residues_kernel): the tile is loaded along whichever
// index is contiguous (a warp reads 512 contiguous bytes), then each thread takes kGroup = 4
// consecutive k-indices of one row, 8 threads a row, and writes one 32-bit word (4 int8) per plane:
// the 8 threads of a row write 32 contiguous bytes, a whole sector, per plane (byte stores, one
// element a thread, left the pass issue-bound on stores and 64-bit remainders: 4.07 ms a pass at
// 8192^2 and N = 15, SM 73%, DRAM 20%; H100, ncu). The tile holds as many bytes as the real one
// (32 x 64 doubles).
constexpr int kTileRows = 32, kTileCols = 32, kTileThreads = 256, kGroup = 4;
constexpr int kRowThreads = kTileCols / kGroup;  // threads a row
static_assert(kTileThreads == kTileRows * kRowThreads && kTileThreads % 32 == 0, "8 threads a row of the tile");
static_assert(kTileCols == 32, "a warp loads one row (or one column) of the tile a step");
using ComplexTile = double2[kTileRows][kTileCols + 1];  // + 1: column loads hit distinct banks

// The tile of block blockIdx.x: tiles row-major over rows_pad x cols (tiles_l a row of tiles).
struct TileOrigin {
  int64_t r0, l0;
};
__device__ __forceinline__ TileOrigin tile_origin(int64_t cols) {
  const int64_t tiles_l = (cols + kTileCols - 1) / kTileCols;
  return TileOrigin{(int64_t(blockIdx.x) / tiles_l) * kTileRows, (int64_t(blockIdx.x) % tiles_l) * kTileCols};
}
int64_t tile_count(int64_t rows_pad, int64_t cols) {
  return ((rows_pad + kTileRows - 1) / kTileRows) * ((cols + kTileCols - 1) / kTileCols);
}
// Loads the tile at o (entries past the operand read as 0): lane a of warp b takes the contiguous
// index's offset a and the other index's b + 8 i, i < 4. A tile wholly inside the operand takes a
// path with one pointer step a value and no bounds tests (operand_tile.cuh's reason). The caller
// synchronises before reading it.
__device__ __forceinline__ void load_tile(const ComplexOperandView& v, TileOrigin o, ComplexTile& t) {
  constexpr int kPerThread = kTileRows * kTileCols / kTileThreads, kStep = kTileThreads / 32;
  const bool kcontig = v.stride_l == 1;
  const int a = threadIdx.x % 32, b = threadIdx.x / 32;
  const int rr = kcontig ? b : a, ll = kcontig ? a : b;               // value 0's place in the tile
  const int drr = kcontig ? kStep : 0, dll = kcontig ? 0 : kStep;  // value i's: + i (drr, dll)
  if (o.r0 + kTileRows <= v.rows && o.l0 + kTileCols <= v.k) {
    const double2* p = v.ptr + (o.r0 + rr) * v.stride_r + (o.l0 + ll) * v.stride_l;
    const int64_t step = kStep * (kcontig ? v.stride_r : v.stride_l);
    double2 x[kPerThread];
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) x[i] = p[i * step];
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) t[rr + i * drr][ll + i * dll] = x[i];
    return;
  }
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int64_t r = o.r0 + rr + i * drr, l = o.l0 + ll + i * dll;
    t[rr + i * drr][ll + i * dll] = (r < v.rows && l < v.k) ? load(v, r, l) : make_double2(0.0, 0.0);
  }
}

// The 4 low bytes of w[0..3] as one word, byte q from w[q].
__device__ __forceinline__ uint32_t pack_low_bytes(const uint32_t (&w)[kGroup]) {
  return __byte_perm(__byte_perm(w[0], w[1], 0x0040), __byte_perm(w[2], w[3], 0x0040), 0x5410);
}

// Modulus I.. N-1's two planes of a thread's kGroup elements from the pieces of their parts
// (numerics: oz2c_forward_biased, FP32), one 32-bit store a plane.
template <int I, int N, int W>
__device__ __forceinline__ void store_planes(const nm::Oz2Pieces<W> (&re)[kGroup], const nm::Oz2Pieces<W> (&im)[kGroup],
                                             int8_t* out, int64_t plane) {
  if constexpr (I < N) {
    uint32_t x0[kGroup], x1[kGroup];
#pragma unroll
    for (int q = 0; q < kGroup; ++q) {
      const nm::Oz2cPlanesBiased x = nm::oz2c_forward_biased<I>(re[q].f, im[q].f);
      x0[q] = nm::bits_of(x.x0);
      x1[q] = nm::bits_of(x.x1);
    }
    *reinterpret_cast<uint32_t*>(out + (2 * I) * plane) = pack_low_bytes(x0);
    *reinterpret_cast<uint32_t*>(out + (2 * I + 1) * plane) = pack_low_bytes(x1);
    store_planes<I + 1, N>(re, im, out, plane);
  }
}

// Predicted (H100, 8192^2, N = 15, W = 5 pieces a part): per element 2 x ~25 instructions for the
// pieces, per modulus 2 (W - 1) FMAs for t_re and t_im, 3 for ui, 2 for t_re +- j ui, 2 x 4 for the
// biased reductions and 1.5 byte permutes (~22.5: ~340), with the tile load ~400 issue slots an
// element: 2.1M warps x 400 / (528 schedulers x 1.98 GHz) = 0.8 ms at full issue, ~1.0 ms at 80%;
// the bytes, 1 GiB read + 30 planes x 64 MiB written, ~1.05 ms at 2.9 TB/s: ~1.1-1.3 ms a pass.
// The 2 x kGroup elements' pieces (40 floats at W = 5, 48 at W = 6) stay in registers across the
// moduli: capped for 4 CTAs an SM (64 registers, no spills for any N; ptxas -v). At 3 CTAs (80
// registers) ncu measured 37% occupancy and each warp 3.7 of its 8.3 cycles an instruction waiting at
// the tile's barrier (N = 18, 8192^2: 2.08 ms a pass, SM 71%, DRAM 41%).
template <int N>
__global__ void __launch_bounds__(kTileThreads, 4) oz2c_residues_kernel(ComplexOperandView v, const int32_t* __restrict__ shift,
                                                                        const int64_t* __restrict__ S, nm::Ozaki2Constants c,
                                                                        int64_t rows_pad, int64_t kpad, int64_t plane,
                                                                        int8_t* __restrict__ res, int32_t* __restrict__ sft) {
  constexpr int W = nm::oz2_pieces(N);
  __shared__ ComplexTile t;
  __shared__ int32_t row_sft[kTileRows];
  __shared__ bool row_nearest[kTileRows];
  const TileOrigin at = tile_origin(kpad);
  load_tile(v, at, t);
  if (threadIdx.x < kTileRows && at.r0 + threadIdx.x < rows_pad) {
    const int64_t r = at.r0 + threadIdx.x;
    const nm::Oz2RowScaling rs = nm::oz2_row_scaling(shift[r] - 1, S[r], c);
    row_sft[threadIdx.x] = rs.shift;
    row_nearest[threadIdx.x] = rs.nearest;
    if (at.l0 == 0) sft[r] = row_sft[threadIdx.x];
  }
  __syncthreads();
  const int rr = threadIdx.x / kRowThreads, ll = kGroup * (threadIdx.x % kRowThreads);
  const int64_t r = at.r0 + rr;
  if (r >= rows_pad || at.l0 + ll >= kpad) return;  // kpad % kGroup == 0: a group is all inside or all past it
  const int32_t s = row_sft[rr];
  const bool nearest = row_nearest[rr];
  nm::Oz2Pieces<W> re[kGroup], im[kGroup];
#pragma unroll
  for (int q = 0; q < kGroup; ++q) {
    // The element as op gives it (conjugated for op C), each non-finite part as 0 (the host's order).
    const double2 x = t[rr][ll + q];
    const double im_op = v.conj ? -x.y : x.y;
    re[q] = nm::oz2_pieces_for_count<N>(nm::is_finite(x.x) ? x.x : 0.0, s, nearest);
    im[q] = nm::oz2_pieces_for_count<N>(nm::is_finite(im_op) ? im_op : 0.0, s, nearest);
  }
  store_planes<0, N>(re, im, res + r * kpad + at.l0 + ll, plane);
}

// ---- FP64 mode's magnitudes (launch_magnitudes): the residues' tiles and threads ----
// Each thread: kGroup consecutive elements of one row, their magnitude digits in one 32-bit store
// (8 threads a row: 32 contiguous bytes of mag), its U and S partial sums reduced over the row's 8
// threads and added to U[r], S[r] once per tile (integer sums: order-free).
// Predicted (H100, 8192^2): per element 2 magnitude_terms (~30 integer instructions each, half issue
// rate) and ~4 for the rest: 2.1M warps x ~64 x 2 / (528 x 1.98 GHz) = 0.26 ms of issue, under the
// 1 GiB read (+ 64 MiB of digits): ~0.4 ms, memory-bound (one element a thread with byte stores and
// 32-lane reductions: 0.83 ms, DRAM 41%, SM 65%; ncu).
__global__ void __launch_bounds__(kTileThreads) oz2c_magnitudes_kernel(ComplexOperandView v, const int32_t* __restrict__ shift,
                                                                       int64_t rows_pad, int64_t kpad, int64_t ld,
                                                                       uint8_t* __restrict__ mag, int64_t* __restrict__ U,
                                                                       int64_t* __restrict__ S) {
  static_assert(32 % kRowThreads == 0, "a row's threads in one warp");
  __shared__ ComplexTile t;
  const TileOrigin at = tile_origin(kpad);
  load_tile(v, at, t);
  __syncthreads();
  const int rr = threadIdx.x / kRowThreads, ll = kGroup * (threadIdx.x % kRowThreads);
  const int64_t r = at.r0 + rr;
  const bool mine = r < rows_pad && at.l0 + ll < kpad;  // kpad % kGroup == 0
  unsigned long long usum = 0, ssum = 0;
  if (mine) {
    const int32_t sh = shift[r];
    uint32_t digit[kGroup];
#pragma unroll
    for (int q = 0; q < kGroup; ++q) {
      const double2 x = t[rr][ll + q];
      const double re = nm::is_finite(x.x) ? x.x : 0.0, im = nm::is_finite(x.y) ? x.y : 0.0;
      const nm::MagnitudeTerms terms = nm::oz2c_magnitude_terms(re, im, sh);
      digit[q] = static_cast<uint32_t>(terms.digit);
      usum += static_cast<unsigned long long>(terms.unit);
      ssum += static_cast<unsigned long long>(terms.norm);
    }
    *reinterpret_cast<uint32_t*>(mag + r * ld + at.l0 + ll) = pack_low_bytes(digit);
  }
  for (int o = kRowThreads / 2; o > 0; o >>= 1) {  // the row's threads: consecutive lanes
    usum += __shfl_xor_sync(0xffffffffu, usum, o);
    ssum += __shfl_xor_sync(0xffffffffu, ssum, o);
  }
  if (mine && ll == 0) {
    if (usum) atomicAdd(reinterpret_cast<unsigned long long*>(U + r), usum);
    if (ssum) atomicAdd(reinterpret_cast<unsigned long long*>(S + r), ssum);
  }
}

// ---- Reconstruction ----
// One entry's accumulator before alpha/beta: the special path for Inf/NaN rows and columns, else
// oz2c_reconstruct_n of the residues re(i), im(i) (exact doubles).
template <int N, class ReAt, class ImAt>
__device__ __forceinline__ nm::ComplexF64 reconstruct_entry(const Oz2cReconstructArgs& a, const nm::Ozaki2Constants& c,
                                                            int64_t rg, int64_t cg, ReAt re, ImAt im) {
  nm::ComplexF64 acc{0.0, 0.0};
  if (a.flag_a[rg] | a.flag_b[cg]) {
    for (int64_t l = 0; l < a.a.k; ++l) acc = nm::oz2c_special_accumulate(acc, op_value(a.a, rg, l), op_value(a.b, cg, l));
    return acc;
  }
  return nm::oz2c_reconstruct_n(c, N, a.sft_a[rg] + a.sft_b[cg], re, im);
}
__device__ __forceinline__ double2 apply_alpha_beta(const Oz2cReconstructArgs& a, nm::ComplexF64 acc, const double2* out) {
  const nm::ComplexF64 alpha{a.alpha.x, a.alpha.y}, beta{a.beta.x, a.beta.y};
  const bool read_c = !nm::oz2c_is_zero(beta);
  const double2 old = read_c ? *out : make_double2(0.0, 0.0);
  const nm::ComplexF64 v = nm::oz2c_apply_alpha_beta(alpha, acc, beta, nm::ComplexF64{old.x, old.y}, read_c);
  return make_double2(v.re, v.im);
}

// From cuBLASLt's int32 planes (other GPUs, or k past one int32 chunk): one entry a thread, 128 x 2
// threads a block; each plane reduced by sym_mod_i32, then oz2c_inverse (32-bit).
template <int I, int N>
__device__ __forceinline__ void load_inverse(const int32_t* at, int64_t plane, int32_t (&re)[N], int32_t (&im)[N]) {
  if constexpr (I < N) {
    constexpr int P = nm::kComplexModuliTable[I];
    constexpr nm::Oz2cModulus md = nm::oz2c_modulus(I);
    const nm::Oz2cResidue z =
        nm::oz2c_inverse(nm::sym_mod_i32<P>(at[(2 * I) * plane]), nm::sym_mod_i32<P>(at[(2 * I + 1) * plane]), md);
    re[I] = z.re;
    im[I] = z.im;
    load_inverse<I + 1, N>(at, plane, re, im);
  }
}
template <int N>
__global__ void __launch_bounds__(256) oz2c_reconstruct_products_kernel(Oz2cReconstructArgs a, nm::Ozaki2Constants c) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t col = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r >= a.m_rows || col >= a.n_cols) return;
  const int64_t rg = a.row0 + r, cg = a.col0 + col;
  int32_t re[N], im[N];
  if (!(a.flag_a[rg] | a.flag_b[cg])) load_inverse<0, N>(a.products + r + col * a.ld, a.plane_elems, re, im);
  const nm::ComplexF64 acc = reconstruct_entry<N>(
      a, c, rg, cg, [&](int i) { return nm::oz2_residue_double(re[i]); },
      [&](int i) { return nm::oz2_residue_double(im[i]); });
  double2* out = a.C + rg + cg * a.ldc;
  *out = apply_alpha_beta(a, acc, out);
}

// From the Hopper products' int8 planes: the real scheme's oz2_reconstruct_residues_kernel layout. A
// warp takes 128 consecutive rows of one column, a thread 4 of them: one 32-bit load a plane (2N
// loads in flight), byte q of it entry q's; the entries go through shared memory so that C is read
// and written by lanes of consecutive rows (512 contiguous bytes a warp store). Four rows from a
// multiple of 4 stay inside the planes: chunks are whole multiples of 16 rows (UnfusedPolicy::
// kRowAlign), every one written by the products.
// The inverse is oz2c_inverse_biased (FP32) on the bytes as biased floats: w ^ 0x80808080 holds
// u + 128 in each byte, and one byte permute with 0x4B000000 makes the float 2^23 + 128 + u.
// Predicted (H100, 8192^2, N = 15): per entry and modulus 2 permutes, 3 + 2 x 4 FP32 for the
// inverse, 2 x (MOV + DADD) for the doubles and 6 FP64 for the CRT sums (~23 issue slots, 8 FP64),
// with the tail (CRT, scaling, alpha/beta, staging) ~400 slots and ~140 FP64 an entry: 2.1M warps
// x 400 / (528 x 1.98 GHz) = 0.8 ms of issue, FP64 pipe 0.56 ms; the bytes, 30 planes x 64 MiB read
// + 1 GiB of C written (beta = 0), ~1.05 ms at 2.9 TB/s: ~1.2-1.3 ms (one entry a thread with
// 64-bit remainders in the inverse: 4.08 ms; ncu).
constexpr int kReconWarpRows = 128, kReconWarps = 8;
__device__ __forceinline__ float biased_byte(uint32_t flipped, int q) {  // flipped = w ^ 0x80808080
  return __uint_as_float(__byte_perm(flipped, 0x4B000000u, 0x7440u | static_cast<unsigned>(q)));
}
template <int I, int N>
__device__ __forceinline__ void load_planes4(const int8_t* at, int64_t plane, uint32_t (&w)[2 * N]) {
  if constexpr (I < 2 * N) {
    w[I] = *reinterpret_cast<const uint32_t*>(at + I * plane) ^ 0x80808080u;
    load_planes4<I + 1, N>(at, plane, w);
  }
}
// Entry q's Re and Im residues, modulus I.. N-1, as biased floats (r + M).
template <int I, int N>
__device__ __forceinline__ void inverse4(const uint32_t (&w)[2 * N], int q, float (&re)[N], float (&im)[N]) {
  if constexpr (I < N) {
    const nm::Oz2cResidueBiased z = nm::oz2c_inverse_biased<I>(biased_byte(w[2 * I], q), biased_byte(w[2 * I + 1], q));
    re[I] = z.re;
    im[I] = z.im;
    inverse4<I + 1, N>(w, q, re, im);
  }
}
template <int N>
__global__ void __launch_bounds__(32 * kReconWarps) oz2c_reconstruct_residues_kernel(Oz2cReconstructArgs a,
                                                                                     nm::Ozaki2Constants c) {
  __shared__ double2 stage[kReconWarps][kReconWarpRows];
  const int lane = threadIdx.x, w = threadIdx.y;
  const int64_t rbase = int64_t(blockIdx.x) * kReconWarpRows;
  const int64_t col = int64_t(blockIdx.y) * kReconWarps + w;
  if (col >= a.n_cols) return;  // the whole warp
  const int64_t cg = a.col0 + col;
  const int64_t r0 = rbase + kGroup * lane;
  if (r0 < a.m_rows) {
    uint32_t words[2 * N];
    load_planes4<0, N>(a.residues + r0 + col * a.ld, a.plane_elems, words);
#pragma unroll
    for (int q = 0; q < kGroup; ++q) {
      if (r0 + q >= a.m_rows) break;
      float re[N], im[N];
      inverse4<0, N>(words, q, re, im);
      const nm::ComplexF64 acc = reconstruct_entry<N>(
          a, c, a.row0 + r0 + q, cg, [&](int i) { return nm::oz2c_biased_double(re[i]); },
          [&](int i) { return nm::oz2c_biased_double(im[i]); });
      stage[w][kGroup * lane + q] = make_double2(acc.re, acc.im);
    }
  }
  __syncwarp();
#pragma unroll
  for (int j = 0; j < kReconWarpRows / 32; ++j) {
    const int64_t r = rbase + 32 * j + lane;
    if (r >= a.m_rows) break;
    double2* out = a.C + a.row0 + r + cg * a.ldc;
    const double2 x = stage[w][32 * j + lane];
    *out = apply_alpha_beta(a, nm::ComplexF64{x.x, x.y}, out);
  }
}
dim3 grid_2d(int64_t m, int64_t n, dim3 block) {
  return dim3(static_cast<unsigned>((m + block.x - 1) / block.x), static_cast<unsigned>((n + block.y - 1) / block.y));
}

}  // namespace

namespace {
// The statistics kernels' grid: kStatsRowsK (k-contiguous) or kStatsRowsR rows a block of 32 x 8.
dim3 stats_grid(const ComplexOperandView& view, int64_t rows_pad) {
  const int64_t rows = view.stride_l == 1 ? kStatsRowsK : kStatsRowsR;
  return dim3(static_cast<unsigned>((rows_pad + rows - 1) / rows));
}
const dim3 kStatsBlock(32, 8);
}  // namespace

cudaError_t launch_row_shifts(const ComplexOperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag,
                              RowDigits digits, cudaStream_t stream) {
  if (rows_pad <= 0) return cudaSuccess;
  const bool kcontig = view.stride_l == 1;
  dim3 grid = stats_grid(view, rows_pad);
  grid.y = static_cast<unsigned>(row_split::l_splits(grid.x, view.k, kcontig ? stats_step_l<true>() : stats_step_l<false>()));
  if (grid.y == 1) {
    if (kcontig)
      oz2c_max_kernel<true, false><<<grid, kStatsBlock, 0, stream>>>(view, rows_pad, shift, flag, digits);
    else
      oz2c_max_kernel<false, false><<<grid, kStatsBlock, 0, stream>>>(view, rows_pad, shift, flag, digits);
    return cudaGetLastError();
  }
  const cudaError_t e = row_split::begin(rows_pad, shift, flag, digits, stream);
  if (e != cudaSuccess) return e;
  if (kcontig)
    oz2c_max_kernel<true, true><<<grid, kStatsBlock, 0, stream>>>(view, rows_pad, shift, flag, digits);
  else
    oz2c_max_kernel<false, true><<<grid, kStatsBlock, 0, stream>>>(view, rows_pad, shift, flag, digits);
  const cudaError_t launched = cudaGetLastError();
  return launched != cudaSuccess ? launched : row_split::finish(rows_pad, shift, flag, digits, stream);
}

cudaError_t launch_oz2c_stats(const ComplexOperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag,
                              int64_t* S, cudaStream_t stream) {
  if (rows_pad <= 0) return cudaSuccess;
  const dim3 grid = stats_grid(view, rows_pad);
  if (view.stride_l == 1)
    oz2c_stats_kernel<true><<<grid, kStatsBlock, 0, stream>>>(view, rows_pad, shift, flag, S);
  else
    oz2c_stats_kernel<false><<<grid, kStatsBlock, 0, stream>>>(view, rows_pad, shift, flag, S);
  return cudaGetLastError();
}

cudaError_t launch_magnitudes(const ComplexOperandView& view, const int32_t* shift, int64_t rows_pad, int64_t kpad,
                              int64_t ld, uint8_t* mag, int64_t* U, int64_t* S, cudaStream_t stream) {
  if (rows_pad <= 0 || kpad <= 0) return cudaSuccess;
  if (!S || ld < kpad) return cudaErrorInvalidValue;
  // Packed 4-byte stores of kGroup digits from multiples of kGroup.
  if (kpad % kGroup || ld % 4 || reinterpret_cast<uintptr_t>(mag) % 4) return cudaErrorInvalidValue;
  const int64_t tiles = tile_count(rows_pad, kpad);
  if (tiles > 0x7fffffffLL) return cudaErrorInvalidValue;
  oz2c_magnitudes_kernel<<<static_cast<unsigned>(tiles), kTileThreads, 0, stream>>>(view, shift, rows_pad, kpad, ld, mag,
                                                                                      U, S);
  return cudaGetLastError();
}

cudaError_t launch_oz2c_residues(const ComplexOperandView& view, const int32_t* shift, const int64_t* S,
                                 const nm::Ozaki2Constants& c, int64_t rows_pad, int64_t kpad, int64_t plane,
                                 int8_t* res, int32_t* sft, cudaStream_t stream) {
  if (rows_pad <= 0 || kpad <= 0) return cudaSuccess;
  // Packed 4-byte stores of kGroup elements from multiples of kGroup: kpad, plane and res on 4 bytes.
  if (kpad % kGroup || plane % 4 || reinterpret_cast<uintptr_t>(res) % 4) return cudaErrorInvalidValue;
  const int64_t tiles = tile_count(rows_pad, kpad);
  if (tiles > 0x7fffffffLL) return cudaErrorInvalidValue;
  return with_moduli_count(c.n, [&](auto n) {
    oz2c_residues_kernel<decltype(n)::value>
        <<<static_cast<unsigned>(tiles), kTileThreads, 0, stream>>>(view, shift, S, c, rows_pad, kpad, plane, res, sft);
    return cudaGetLastError();
  });
}

cudaError_t launch_oz2c_reconstruct(const Oz2cReconstructArgs& args, const nm::Ozaki2Constants& c, cudaStream_t stream) {
  if (args.m_rows <= 0 || args.n_cols <= 0) return cudaSuccess;
  if ((args.products == nullptr) == (args.residues == nullptr)) return cudaErrorInvalidValue;
  if (args.residues) {
    // The 32-bit loads of 4 rows: rows of a chunk and planes on 4-byte boundaries.
    if (args.ld % 4 || args.plane_elems % 4 || reinterpret_cast<uintptr_t>(args.residues) % 4) return cudaErrorInvalidValue;
    const dim3 block(32, kReconWarps),
        grid = grid_2d((args.m_rows + kReconWarpRows - 1) / kReconWarpRows * 32, args.n_cols, block);
    if (grid.y > 65535) return cudaErrorInvalidValue;
    return with_moduli_count(c.n, [&](auto n) {
      oz2c_reconstruct_residues_kernel<decltype(n)::value><<<grid, block, 0, stream>>>(args, c);
      return cudaGetLastError();
    });
  }
  const dim3 block(128, 2), grid = grid_2d(args.m_rows, args.n_cols, block);
  if (grid.y > 65535) return cudaErrorInvalidValue;
  return with_moduli_count(c.n, [&](auto n) {
    oz2c_reconstruct_products_kernel<decltype(n)::value><<<grid, block, 0, stream>>>(args, c);
    return cudaGetLastError();
  });
}

}  // namespace kernels
}  // namespace ozgemm
