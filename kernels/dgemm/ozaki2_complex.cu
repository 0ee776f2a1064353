// The complex Ozaki-II scheme's kernels, 2M form (ozgemm/numerics/ozaki2_complex.hpp; launch.hpp lists
// them): an operand's statistics (shifts, Inf/NaN flags, norms S over the 2k parts of a row; for FP64
// mode's decision also the exact digits, and the magnitude digits with U and S), its
// residues as two transformed int8 planes per modulus, the reconstruction from the products' planes
// with complex alpha/beta and the special path (the quick return C = beta C is reconstruct_epilogue.cu's,
// beside the real one). The products are the real scheme's (cuBLASLt over 2N planes, or the Hopper
// GEMM with planes_per_modulus = 2), the k-chunk reduction its launch_oz2_accumulate. Every numeric step is the shared header's, so the results equal
// the host reference's (src/reference/ozaki2_complex_reference.cpp) bit for bit.
#include <type_traits>

#include "kernels/dgemm/launch.hpp"
#include "kernels/dgemm/moduli_count.cuh"
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
template <bool kKContig>
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
    for (int64_t l = stats_first_l<kKContig>(); l < v.k; l += stats_step_l<kKContig>()) {
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
  const int32_t sh = nm::shift_from_max(mx);
  shift[r] = sh;
  flag[r] = bad;
  if (with_digits) {
    const int32_t q = nm::exact_digits(sh, lsb);
    digits.q[r] = q;
    if (!bad) atomicMax(digits.q_max, q);
  }
}

template <bool kKContig>
__global__ void __launch_bounds__(256) oz2c_norms_kernel(ComplexOperandView v, const int32_t* __restrict__ shift,
                                                         int64_t rows_pad, int64_t* __restrict__ S) {
  __shared__ unsigned long long ssum[8][32];
  const int64_t r = stats_row<kKContig>();
  unsigned long long sum = 0;
  if (r < v.rows) {
    const int32_t s0 = shift[r] - 1;
    for (int64_t l = stats_first_l<kKContig>(); l < v.k; l += stats_step_l<kKContig>()) {
      const double2 x = load(v, r, l);
      const double parts[2] = {x.x, x.y};
      for (const double part : parts)
        if (nm::is_finite(part)) sum += static_cast<unsigned long long>(nm::oz2_norm_term(part, s0));
    }
  }
  ssum[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (!stats_combines<kKContig>() || r >= rows_pad) return;
  for (int j = 1; j < (kKContig ? 32 : 8); ++j) sum += stats_partial<kKContig>(ssum, j);  // slot 0: its own
  S[r] = static_cast<int64_t>(sum);
}

// ---- Residues: a tile of 32 rows x 32 k-indices a CTA of 256 threads ----
// The tile is loaded along whichever index is contiguous and written along l: a warp stores 32
// consecutive bytes of each plane.
constexpr int kTile = 32, kResThreads = 256;
using ComplexTile = double2[kTile][kTile + 1];

// Modulus I.. N-1's planes of one element from the pieces of its parts.
template <int I, int N, int W>
__device__ __forceinline__ void store_planes(const nm::Oz2Pieces<W>& re, const nm::Oz2Pieces<W>& im, int8_t* out,
                                             int64_t plane) {
  if constexpr (I < N) {
    constexpr int P = nm::kComplexModuliTable[I];
    constexpr nm::Oz2cModulus md = nm::oz2c_modulus(I);
    const int32_t ur = nm::oz2_unbias(nm::oz2_residue_biased<P>(re.f));
    const int32_t ui = nm::oz2_unbias(nm::oz2_residue_biased<P>(im.f));
    const nm::Oz2cPlanes x = nm::oz2c_forward(ur, ui, md);
    out[(2 * I) * plane] = x.x0;
    out[(2 * I + 1) * plane] = x.x1;
    store_planes<I + 1, N>(re, im, out, plane);
  }
}

// The tile of block blockIdx.x (row-major over tiles of rows_pad x kpad: tiles_l a row of tiles):
// its first row and k-index, its elements loaded into t (zeros past the operand).
struct TileOrigin {
  int64_t r0, l0;
};
__device__ __forceinline__ TileOrigin load_tile(const ComplexOperandView& v, int64_t kpad, ComplexTile& t) {
  const int64_t tiles_l = (kpad + kTile - 1) / kTile;
  const int64_t r0 = (int64_t(blockIdx.x) / tiles_l) * kTile, l0 = (int64_t(blockIdx.x) % tiles_l) * kTile;
  const bool kcontig = v.stride_l == 1;
  for (int idx = threadIdx.x; idx < kTile * kTile; idx += kResThreads) {
    const int rr = kcontig ? idx / kTile : idx % kTile, ll = kcontig ? idx % kTile : idx / kTile;
    const int64_t r = r0 + rr, l = l0 + ll;
    t[rr][ll] = (r < v.rows && l < v.k) ? load(v, r, l) : make_double2(0.0, 0.0);
  }
  return TileOrigin{r0, l0};
}
int64_t tile_count(int64_t rows_pad, int64_t kpad) {
  return ((rows_pad + kTile - 1) / kTile) * ((kpad + kTile - 1) / kTile);
}

template <int N>
__global__ void __launch_bounds__(kResThreads) oz2c_residues_kernel(ComplexOperandView v, const int32_t* __restrict__ shift,
                                                                    const int64_t* __restrict__ S, nm::Ozaki2Constants c,
                                                                    int64_t rows_pad, int64_t kpad, int64_t plane,
                                                                    int8_t* __restrict__ res, int32_t* __restrict__ sft) {
  __shared__ ComplexTile t;
  __shared__ int32_t row_sft[kTile];
  const TileOrigin at = load_tile(v, kpad, t);
  const int64_t r0 = at.r0, l0 = at.l0;
  if (threadIdx.x < kTile && r0 + threadIdx.x < rows_pad) {
    const int64_t r = r0 + threadIdx.x;
    row_sft[threadIdx.x] = shift[r] - 1 + nm::oz2_extra_shift(S[r], c);
    if (l0 == 0) sft[r] = row_sft[threadIdx.x];
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < kTile * kTile; idx += kResThreads) {
    const int rr = idx / kTile, ll = idx % kTile;
    const int64_t r = r0 + rr, l = l0 + ll;
    if (r >= rows_pad || l >= kpad) continue;
    // The element as op gives it (conjugated for op C), each non-finite part as 0 (the host's order).
    const double2 x = t[rr][ll];
    const double im_op = v.conj ? -x.y : x.y;
    const double re = nm::is_finite(x.x) ? x.x : 0.0, im = nm::is_finite(im_op) ? im_op : 0.0;
    const int32_t s = row_sft[rr];
    store_planes<0, N>(nm::oz2_pieces_for_count<N>(re, s), nm::oz2_pieces_for_count<N>(im, s), res + r * kpad + l,
                       plane);
  }
}

// ---- FP64 mode's magnitudes (launch_magnitudes): the residues' tiles ----
// Each warp takes one row of the tile at a time (32 consecutive l: 32 consecutive bytes of mag), its
// U and S partial sums reduced across the warp and added to U[r], S[r] once per tile (integer sums:
// order-free).
__global__ void __launch_bounds__(kResThreads) oz2c_magnitudes_kernel(ComplexOperandView v, const int32_t* __restrict__ shift,
                                                                      int64_t rows_pad, int64_t kpad, int64_t ld,
                                                                      uint8_t* __restrict__ mag, int64_t* __restrict__ U,
                                                                      int64_t* __restrict__ S) {
  __shared__ ComplexTile t;
  const TileOrigin at = load_tile(v, kpad, t);
  __syncthreads();
  static_assert(kTile == 32 && kResThreads % 32 == 0, "a warp a row of the tile");
  for (int idx = threadIdx.x; idx < kTile * kTile; idx += kResThreads) {
    const int rr = idx / kTile, ll = idx % kTile;  // warp-uniform rr
    const int64_t r = at.r0 + rr, l = at.l0 + ll;
    unsigned long long usum = 0, ssum = 0;
    if (r < rows_pad && l < kpad) {
      const double2 x = t[rr][ll];
      const double re = nm::is_finite(x.x) ? x.x : 0.0, im = nm::is_finite(x.y) ? x.y : 0.0;
      const nm::MagnitudeTerms terms = nm::oz2c_magnitude_terms(re, im, shift[r]);
      mag[r * ld + l] = static_cast<uint8_t>(terms.digit);
      usum = static_cast<unsigned long long>(terms.unit);
      ssum = static_cast<unsigned long long>(terms.norm);
    }
    for (int o = 16; o > 0; o >>= 1) {
      usum += __shfl_xor_sync(0xffffffffu, usum, o);
      ssum += __shfl_xor_sync(0xffffffffu, ssum, o);
    }
    if (ll == 0 && r < rows_pad) {
      if (usum) atomicAdd(reinterpret_cast<unsigned long long*>(U + r), usum);
      if (ssum) atomicAdd(reinterpret_cast<unsigned long long*>(S + r), ssum);
    }
  }
}

// ---- Reconstruction ----
// Modulus I.. N-1's Re and Im residues of one entry from its two planes (int32: reduced here).
template <int I, int N, class Plane>
__device__ __forceinline__ void load_inverse(const Plane* at, int64_t plane, int32_t (&re)[N], int32_t (&im)[N]) {
  if constexpr (I < N) {
    constexpr int P = nm::kComplexModuliTable[I];
    constexpr nm::Oz2cModulus md = nm::oz2c_modulus(I);
    int32_t u1 = at[(2 * I) * plane], u2 = at[(2 * I + 1) * plane];
    if constexpr (std::is_same<Plane, int32_t>::value) {
      u1 = nm::sym_mod_i32<P>(u1);
      u2 = nm::sym_mod_i32<P>(u2);
    }
    const nm::Oz2cResidue z = nm::oz2c_inverse(u1, u2, md);
    re[I] = z.re;
    im[I] = z.im;
    load_inverse<I + 1, N>(at, plane, re, im);
  }
}

// One entry a thread, 128 x 2 threads a block.
template <int N, class Plane>
__global__ void __launch_bounds__(256) oz2c_reconstruct_kernel(Oz2cReconstructArgs a, const Plane* __restrict__ planes,
                                                               nm::Ozaki2Constants c) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t col = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r >= a.m_rows || col >= a.n_cols) return;
  const int64_t rg = a.row0 + r, cg = a.col0 + col;
  nm::ComplexF64 acc{0.0, 0.0};
  if (a.flag_a[rg] | a.flag_b[cg]) {
    for (int64_t l = 0; l < a.a.k; ++l) acc = nm::oz2c_special_accumulate(acc, op_value(a.a, rg, l), op_value(a.b, cg, l));
  } else {
    int32_t re[N], im[N];
    load_inverse<0, N>(planes + r + col * a.ld, a.plane_elems, re, im);
    acc = nm::oz2c_reconstruct_n(
        c, N, a.sft_a[rg] + a.sft_b[cg], [&](int i) { return nm::oz2_residue_double(re[i]); },
        [&](int i) { return nm::oz2_residue_double(im[i]); });
  }
  double2* out = a.C + rg + cg * a.ldc;
  const nm::ComplexF64 alpha{a.alpha.x, a.alpha.y}, beta{a.beta.x, a.beta.y};
  const bool read_c = !nm::oz2c_is_zero(beta);
  const double2 old = read_c ? *out : make_double2(0.0, 0.0);
  const nm::ComplexF64 v = nm::oz2c_apply_alpha_beta(alpha, acc, beta, nm::ComplexF64{old.x, old.y}, read_c);
  *out = make_double2(v.re, v.im);
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
  const dim3 grid = stats_grid(view, rows_pad);
  if (view.stride_l == 1)
    oz2c_max_kernel<true><<<grid, kStatsBlock, 0, stream>>>(view, rows_pad, shift, flag, digits);
  else
    oz2c_max_kernel<false><<<grid, kStatsBlock, 0, stream>>>(view, rows_pad, shift, flag, digits);
  return cudaGetLastError();
}

cudaError_t launch_oz2c_stats(const ComplexOperandView& view, int64_t rows_pad, int32_t* shift, int32_t* flag,
                              int64_t* S, cudaStream_t stream) {
  if (rows_pad <= 0) return cudaSuccess;
  const cudaError_t shifts = launch_row_shifts(view, rows_pad, shift, flag, RowDigits{}, stream);
  if (shifts != cudaSuccess) return shifts;
  const dim3 grid = stats_grid(view, rows_pad);
  if (view.stride_l == 1)
    oz2c_norms_kernel<true><<<grid, kStatsBlock, 0, stream>>>(view, shift, rows_pad, S);
  else
    oz2c_norms_kernel<false><<<grid, kStatsBlock, 0, stream>>>(view, shift, rows_pad, S);
  return cudaGetLastError();
}

cudaError_t launch_magnitudes(const ComplexOperandView& view, const int32_t* shift, int64_t rows_pad, int64_t kpad,
                              int64_t ld, uint8_t* mag, int64_t* U, int64_t* S, cudaStream_t stream) {
  if (rows_pad <= 0 || kpad <= 0) return cudaSuccess;
  if (!S || ld < kpad) return cudaErrorInvalidValue;
  const int64_t tiles = tile_count(rows_pad, kpad);
  if (tiles > 0x7fffffffLL) return cudaErrorInvalidValue;
  oz2c_magnitudes_kernel<<<static_cast<unsigned>(tiles), kResThreads, 0, stream>>>(view, shift, rows_pad, kpad, ld, mag,
                                                                                    U, S);
  return cudaGetLastError();
}

cudaError_t launch_oz2c_residues(const ComplexOperandView& view, const int32_t* shift, const int64_t* S,
                                 const nm::Ozaki2Constants& c, int64_t rows_pad, int64_t kpad, int64_t plane,
                                 int8_t* res, int32_t* sft, cudaStream_t stream) {
  if (rows_pad <= 0 || kpad <= 0) return cudaSuccess;
  const int64_t tiles = tile_count(rows_pad, kpad);
  if (tiles > 0x7fffffffLL) return cudaErrorInvalidValue;
  return with_moduli_count(c.n, [&](auto n) {
    oz2c_residues_kernel<decltype(n)::value>
        <<<static_cast<unsigned>(tiles), kResThreads, 0, stream>>>(view, shift, S, c, rows_pad, kpad, plane, res, sft);
    return cudaGetLastError();
  });
}

cudaError_t launch_oz2c_reconstruct(const Oz2cReconstructArgs& args, const nm::Ozaki2Constants& c, cudaStream_t stream) {
  if (args.m_rows <= 0 || args.n_cols <= 0) return cudaSuccess;
  if ((args.products == nullptr) == (args.residues == nullptr)) return cudaErrorInvalidValue;
  const dim3 block(128, 2), grid = grid_2d(args.m_rows, args.n_cols, block);
  if (grid.y > 65535) return cudaErrorInvalidValue;
  return with_moduli_count(c.n, [&](auto n) {
    if (args.products)
      oz2c_reconstruct_kernel<decltype(n)::value, int32_t><<<grid, block, 0, stream>>>(args, args.products, c);
    else
      oz2c_reconstruct_kernel<decltype(n)::value, int8_t><<<grid, block, 0, stream>>>(args, args.residues, c);
    return cudaGetLastError();
  });
}

}  // namespace kernels
}  // namespace ozgemm
