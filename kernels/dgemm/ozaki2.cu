// The Ozaki scheme II's kernels (ozgemm/numerics/ozaki2.hpp; launch.hpp lists them): the norms and
// residues of an operand, the reduction of each modulus' int32 products past one k chunk, and the CRT
// reconstruction from the product planes (int32 or int8).
// The INT8 products themselves are cuBLASLt's (src/dispatch) or the Hopper GEMM's
// (ozaki2_products_sm90.cu). Same numerics as the host reference
// (src/reference/ozaki2_reference.cpp).
#include "kernels/dgemm/launch.hpp"
#include "kernels/dgemm/moduli_count.cuh"
#include "kernels/dgemm/operand_tile.cuh"
#include "kernels/dgemm/special_dot.cuh"
#include "ozgemm/numerics/ozaki2.hpp"

namespace ozgemm {
namespace kernels {

namespace nm = ozgemm::numerics;

namespace {

namespace tile = operand_tile;
using tile::kThreads;

__global__ void __launch_bounds__(kThreads) oz2_norms_kernel(OperandView v, const int32_t* __restrict__ shift,
                                                              int64_t rows_pad, int64_t* __restrict__ S) {
  __shared__ tile::Tile t;
  const tile::Origin at = tile::origin(v.k);
  const int64_t r0 = at.r0;
  tile::load(v, at, t);
  __syncthreads();
  const int rr = threadIdx.x / 8, part = threadIdx.x % 8;  // 8 threads a row
  const int64_t r = r0 + rr;
  unsigned long long sum = 0;
  if (r < rows_pad) {
    const int32_t s0 = shift[r] - 1;
#pragma unroll
    for (int j = 0; j < tile::kCols / 8; ++j) {
      const double x = t[rr][part + 8 * j];
      if (nm::is_finite(x)) sum += static_cast<unsigned long long>(nm::oz2_norm_term(x, s0));
    }
  }
  for (int o = 4; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (part == 0 && r < rows_pad && sum) atomicAdd(reinterpret_cast<unsigned long long*>(S + r), sum);
}

// The residue modulo p_I of a value from its pieces, as a 32-bit word whose low byte is the int8.
template <int I, int W>
__device__ __forceinline__ uint32_t residue_word(const nm::Oz2Pieces<W>& v) {
  constexpr int P = nm::kModuliTable[I];
  if constexpr (P == 256) {
    return v.low_byte;
  } else {
    return nm::bits_of(nm::oz2_residue_biased<P>(v.f));
  }
}

// Residues of modulus I.. N-1 of a thread's 4 consecutive values, 4 bytes packed per modulus (low
// bytes gathered by byte permutes), written at out + i * plane (the moduli as compile-time constants).
template <int I, int N, int W>
__device__ __forceinline__ void store_residues(const nm::Oz2Pieces<W> (&v)[4], int8_t* out, int64_t plane) {
  if constexpr (I < N) {
    uint32_t w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) w[q] = residue_word<I>(v[q]);
    *reinterpret_cast<uint32_t*>(out + I * plane) =
        __byte_perm(__byte_perm(w[0], w[1], 0x0040), __byte_perm(w[2], w[3], 0x0040), 0x5410);
    store_residues<I + 1, N>(v, out, plane);
  }
}

// Each thread: 8 k-indices of one row in two groups of 4 consecutive ones, 4 * part + 32 * g (g = 0,
// 1): each group's stores cover whole 32-byte sectors, 8 threads a row writing 32 contiguous bytes
// per modulus (groups of 4 consecutive values per thread, half a sector a store, measured 2.8x
// slower: partial-sector writes). kpad is a multiple of 8, so a group is all below kpad or all past it.
// The residues are FP32 arithmetic (numerics/ozaki2.hpp, oz2_residue_biased): the integer form
// (three 32-bit divisions' worth of IMAD/ISETP per residue) left this pass issue-bound at about
// twice its memory time (H100, 8192^3, N = 15: 0.89 ms a pass, ALU pipe 66%; ncu). Groups of 4
// values hold 20 pieces instead of 40: registers capped for 6 CTAs an SM (8 values at once took 64
// registers, 4 CTAs, and the FP32 form ran at 0.68 ms with 67% of the DRAM rate; ncu).
template <int N>
__global__ void __launch_bounds__(kThreads, 6) oz2_residues_kernel(OperandView v, const int32_t* __restrict__ shift,
                                                                 const int64_t* __restrict__ S, nm::Ozaki2Constants c,
                                                                 int64_t rows_pad, int64_t kpad, int64_t plane,
                                                                 int8_t* __restrict__ res, int32_t* __restrict__ sft) {
  static_assert(tile::kCols == 8 * 8, "8 threads a row, 2 groups of 4 values each");
  constexpr int W = nm::oz2_pieces(N);
  __shared__ tile::Tile t;
  __shared__ int32_t row_sft[tile::kRows];
  __shared__ bool row_nearest[tile::kRows];
  const tile::Origin at = tile::origin(kpad);
  const int64_t r0 = at.r0, l0 = at.l0;
  tile::load(v, at, t);
  if (threadIdx.x < tile::kRows && r0 + threadIdx.x < rows_pad) {
    const int64_t r = r0 + threadIdx.x;
    const nm::Oz2RowScaling rs = nm::oz2_row_scaling(shift[r] - 1, S[r], c);
    row_sft[threadIdx.x] = rs.shift;
    row_nearest[threadIdx.x] = rs.nearest;
    if (l0 == 0) sft[r] = row_sft[threadIdx.x];
  }
  __syncthreads();
  const int rr = threadIdx.x / 8, part = threadIdx.x % 8;
  const int64_t r = r0 + rr;
  if (r >= rows_pad) return;
  const int32_t s = row_sft[rr];
  const bool nearest = row_nearest[rr];
#pragma unroll 1
  for (int g = 0; g < 2; ++g) {
    const int ll = 4 * part + 32 * g;  // the group's first k-index in the tile
    if (l0 + ll >= kpad) return;
    nm::Oz2Pieces<W> pieces[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const double x = t[rr][ll + q];
      pieces[q] = nm::oz2_pieces_for_count<N>(nm::is_finite(x) ? x : 0.0, s, nearest);
    }
    store_residues<0, N>(pieces, res + r * kpad + l0 + ll, plane);
  }
}

// k past one int32 chunk: plane = sym_mod(plane + partial, p) (int64 sum, exact).
__global__ void oz2_accumulate_kernel(const int32_t* __restrict__ partial, int32_t* __restrict__ plane, int64_t ld,
                                      int64_t rows, int64_t cols, int32_t p) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t col = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r >= rows || col >= cols) return;
  const int64_t at = r + col * ld;
  plane[at] = nm::sym_mod(int64_t(plane[at]) + partial[at], p);
}

// Residues of modulus I.. N-1 of one entry from cuBLASLt's int32 product planes, reduced here.
template <int I, int N>
__device__ __forceinline__ void load_residues(const int32_t* at, int64_t plane, int32_t (&u)[N]) {
  if constexpr (I < N) {
    u[I] = nm::sym_mod_i32<nm::kModuliTable[I]>(at[I * plane]);
    load_residues<I + 1, N>(at, plane, u);
  }
}
// Residues of modulus I.. N-1 of 4 consecutive entries from the Hopper products' int8 planes: one
// 32-bit load a plane, byte q of it entry q's residue.
template <int I, int N>
__device__ __forceinline__ void load_residues4(const int8_t* at, int64_t plane, int32_t (&u)[4][N]) {
  if constexpr (I < N) {
    const uint32_t w = *reinterpret_cast<const uint32_t*>(at + I * plane);
#pragma unroll
    for (int q = 0; q < 4; ++q) u[q][I] = static_cast<int32_t>(w << (24 - 8 * q)) >> 24;  // sign-extended
    load_residues4<I + 1, N>(at, plane, u);
  }
}

// A(rg, cg) B's entry before alpha/beta: the special path for Inf/NaN rows and columns, else the CRT
// of the residues (as exact doubles, numerics::oz2_residue_double) scaled back.
template <int N>
__device__ __forceinline__ double reconstruct_entry(const Oz2ReconstructArgs& a, const nm::Ozaki2Constants& c,
                                                   const int32_t (&u)[N], int64_t rg, int64_t cg) {
  if (a.flag_a[rg] | a.flag_b[cg]) return special_dot_device(a.a, a.b, rg, cg);
  const double y = nm::oz2_reconstruct_n(c, N, [&](int i) { return nm::oz2_residue_double(u[i]); });
  return nm::scale_pow2(y, -(a.sft_a[rg] + a.sft_b[cg]));
}

// From int32 planes: one entry a thread, 128 x 2 threads a block.
template <int N>
__global__ void __launch_bounds__(256) oz2_reconstruct_kernel(Oz2ReconstructArgs a, nm::Ozaki2Constants c) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t col = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r >= a.m_rows || col >= a.n_cols) return;
  int32_t u[N];
  load_residues<0, N>(a.products + r + col * a.ld, a.plane_elems, u);
  const int64_t rg = a.row0 + r, cg = a.col0 + col;
  double* out = a.C + rg + cg * a.ldc;
  const bool read_c = a.beta != 0.0;
  *out = nm::apply_alpha_beta(a.alpha, reconstruct_entry(a, c, u, rg, cg), a.beta, read_c ? *out : 0.0, read_c);
}

// From int8 planes: a warp takes 128 consecutive rows of one column, a thread 4 of them (one 32-bit
// load a plane: at one byte a load the pass ran at 0.85 ms, 8192^2 and N = 15, H100); the results go
// through shared memory so that C is read and written by lanes of consecutive rows (written straight
// from the 4-row threads, each store touched 32 sectors for 256 bytes, and the pass was bound by L2
// throughput at 98%: 0.78 ms, ncu). Four rows from a multiple of 4 stay inside the planes: chunks
// are whole multiples of 16 rows (UnfusedPolicy::kRowAlign), every one written by the products.
constexpr int kResidueWarpRows = 128, kResidueWarps = 8;
template <int N>
__global__ void __launch_bounds__(32 * kResidueWarps) oz2_reconstruct_residues_kernel(Oz2ReconstructArgs a,
                                                                                     nm::Ozaki2Constants c) {
  __shared__ double2 stage[kResidueWarps][kResidueWarpRows / 2];
  const int lane = threadIdx.x, w = threadIdx.y;
  const int64_t rbase = int64_t(blockIdx.x) * kResidueWarpRows;
  const int64_t col = int64_t(blockIdx.y) * kResidueWarps + w;
  if (col >= a.n_cols) return;  // the whole warp
  const int64_t cg = a.col0 + col;
  const int64_t r0 = rbase + 4 * lane;
  if (r0 < a.m_rows) {
    int32_t u[4][N];
    load_residues4<0, N>(a.residues + r0 + col * a.ld, a.plane_elems, u);
    double acc[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) acc[q] = r0 + q < a.m_rows ? reconstruct_entry(a, c, u[q], a.row0 + r0 + q, cg) : 0.0;
    stage[w][2 * lane] = make_double2(acc[0], acc[1]);
    stage[w][2 * lane + 1] = make_double2(acc[2], acc[3]);
  }
  __syncwarp();
  const double* staged = reinterpret_cast<const double*>(stage[w]);
  const bool read_c = a.beta != 0.0;
#pragma unroll
  for (int j = 0; j < kResidueWarpRows / 32; ++j) {
    const int64_t r = rbase + 32 * j + lane;
    if (r >= a.m_rows) break;
    double* out = a.C + a.row0 + r + cg * a.ldc;
    *out = nm::apply_alpha_beta(a.alpha, staged[32 * j + lane], a.beta, read_c ? *out : 0.0, read_c);
  }
}

dim3 grid_2d(int64_t m, int64_t n, dim3 block) {
  return dim3(static_cast<unsigned>((m + block.x - 1) / block.x), static_cast<unsigned>((n + block.y - 1) / block.y));
}

}  // namespace

cudaError_t launch_oz2_norms(const OperandView& view, const int32_t* shift, int64_t rows_pad, int64_t* S,
                             cudaStream_t stream) {
  if (rows_pad <= 0 || view.k <= 0) return cudaSuccess;
  const int64_t tiles = tile::count(rows_pad, view.k);
  if (tiles > tile::kMaxTiles) return cudaErrorInvalidValue;
  oz2_norms_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(view, shift, rows_pad, S);
  return cudaGetLastError();
}

cudaError_t launch_oz2_residues(const OperandView& view, const int32_t* shift, const int64_t* S,
                                const nm::Ozaki2Constants& c, int64_t rows_pad, int64_t kpad, int64_t plane,
                                int8_t* res, int32_t* sft, cudaStream_t stream) {
  if (rows_pad <= 0 || kpad <= 0) return cudaSuccess;
  const int64_t tiles = tile::count(rows_pad, kpad);
  if (tiles > tile::kMaxTiles) return cudaErrorInvalidValue;
  // Packed 4-byte stores, groups of 4 at multiples of 4: kpad a multiple of 8 (whole groups), plane and res of 4.
  if (kpad % 8 || plane % 4 || reinterpret_cast<uintptr_t>(res) % 4) return cudaErrorInvalidValue;
  return with_moduli_count(c.n, [&](auto n) {
    oz2_residues_kernel<decltype(n)::value>
        <<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(view, shift, S, c, rows_pad, kpad, plane, res, sft);
    return cudaGetLastError();
  });
}

cudaError_t launch_oz2_accumulate(const int32_t* partial, int32_t* plane, int64_t ld, int64_t rows, int64_t cols,
                                  int32_t p, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  const dim3 block(128, 2), grid = grid_2d(rows, cols, block);
  if (grid.y > 65535) return cudaErrorInvalidValue;
  oz2_accumulate_kernel<<<grid, block, 0, stream>>>(partial, plane, ld, rows, cols, p);
  return cudaGetLastError();
}

cudaError_t launch_oz2_reconstruct(const Oz2ReconstructArgs& args, const nm::Ozaki2Constants& c, cudaStream_t stream) {
  if (args.m_rows <= 0 || args.n_cols <= 0) return cudaSuccess;
  if ((args.products == nullptr) == (args.residues == nullptr)) return cudaErrorInvalidValue;
  if (args.residues) {
    // The 32-bit loads of 4 rows: rows of a chunk and planes on 4-byte boundaries.
    if (args.ld % 4 || args.plane_elems % 4 || reinterpret_cast<uintptr_t>(args.residues) % 4) return cudaErrorInvalidValue;
    const dim3 block(32, kResidueWarps), grid = grid_2d((args.m_rows + kResidueWarpRows - 1) / kResidueWarpRows * 32,
                                                        args.n_cols, block);
    if (grid.y > 65535) return cudaErrorInvalidValue;
    return with_moduli_count(c.n, [&](auto n) {
      oz2_reconstruct_residues_kernel<decltype(n)::value><<<grid, block, 0, stream>>>(args, c);
      return cudaGetLastError();
    });
  }
  const dim3 block(128, 2), grid = grid_2d(args.m_rows, args.n_cols, block);
  if (grid.y > 65535) return cudaErrorInvalidValue;
  return with_moduli_count(c.n, [&](auto n) {
    oz2_reconstruct_kernel<decltype(n)::value><<<grid, block, 0, stream>>>(args, c);
    return cudaGetLastError();
  });
}

}  // namespace kernels
}  // namespace ozgemm
