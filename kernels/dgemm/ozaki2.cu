// The Ozaki scheme II's kernels (ozgemm/numerics/ozaki2.hpp; launch.hpp lists them): the norms and
// residues of an operand, the reduction of each modulus' int32 product, and the CRT reconstruction.
// The INT8 products themselves are cuBLASLt's (src/dispatch). Same numerics as the host reference
// (src/reference/ozaki2_reference.cpp).
#include "kernels/dgemm/launch.hpp"
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

// Residue i of a, for i < N, written at out + i * plane (the moduli as compile-time constants).
template <int I, int N>
__device__ __forceinline__ void write_residues(int64_t a, int8_t* out, int64_t plane) {
  if constexpr (I < N) {
    out[I * plane] = static_cast<int8_t>(nm::sym_mod_const<nm::kModuliTable[I]>(a));
    write_residues<I + 1, N>(a, out, plane);
  }
}

template <int N>
__global__ void __launch_bounds__(kThreads) oz2_residues_kernel(OperandView v, const int32_t* __restrict__ shift,
                                                                 const int64_t* __restrict__ S, nm::Ozaki2Constants c,
                                                                 int64_t rows_pad, int64_t kpad, int64_t plane,
                                                                 int8_t* __restrict__ res, int32_t* __restrict__ sft) {
  __shared__ tile::Tile t;
  __shared__ int32_t row_sft[tile::kRows];
  const tile::Origin at = tile::origin(kpad);
  const int64_t r0 = at.r0, l0 = at.l0;
  tile::load(v, at, t);
  if (threadIdx.x < tile::kRows && r0 + threadIdx.x < rows_pad) {
    const int64_t r = r0 + threadIdx.x;
    row_sft[threadIdx.x] = shift[r] - 1 + nm::oz2_extra_shift(S[r], c);
    if (l0 == 0) sft[r] = row_sft[threadIdx.x];
  }
  __syncthreads();
  const int rr = threadIdx.x / 8, part = threadIdx.x % 8;
  const int64_t r = r0 + rr;
  if (r >= rows_pad) return;
  const int32_t s = row_sft[rr];
#pragma unroll
  for (int j = 0; j < tile::kCols / 8; ++j) {
    const int64_t l = l0 + part + 8 * j;
    if (l >= kpad) break;
    const double x = t[rr][part + 8 * j];
    const int64_t a = nm::is_finite(x) ? nm::trunc_scaled(x, s) : 0;
    write_residues<0, N>(a, res + r * kpad + l, plane);
  }
}

__global__ void oz2_accumulate_kernel(const int32_t* __restrict__ c32, int64_t ldc32, int8_t* __restrict__ u,
                                      int64_t ldu, int64_t rows, int64_t cols, int32_t p, bool first) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t col = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r >= rows || col >= cols) return;
  const int64_t v = c32[r + col * ldc32];
  int8_t& out = u[r + col * ldu];
  out = static_cast<int8_t>(nm::sym_mod(first ? v : v + out, p));
}

__global__ void __launch_bounds__(256) oz2_reconstruct_kernel(Oz2ReconstructArgs a, nm::Ozaki2Constants c) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t col = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r >= a.m_rows || col >= a.n_cols) return;
  const int64_t rg = a.row0 + r, cg = a.col0 + col;
  double acc;
  if (a.flag_a[rg] | a.flag_b[cg]) {
    acc = special_dot_device(a.a, a.b, rg, cg);
  } else {
    const int8_t* u = a.U + r + col * a.ldu;
    const double y = nm::oz2_reconstruct(c, [&](int i) { return int32_t(u[i * a.plane_elems]); });
    acc = nm::scale_pow2(y, -(a.sft_a[rg] + a.sft_b[cg]));
  }
  double* out = a.C + rg + cg * a.ldc;
  const bool read_c = a.beta != 0.0;
  *out = nm::apply_alpha_beta(a.alpha, acc, a.beta, read_c ? *out : 0.0, read_c);
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
  using Kernel = void (*)(OperandView, const int32_t*, const int64_t*, nm::Ozaki2Constants, int64_t, int64_t, int64_t,
                         int8_t*, int32_t*);
  static constexpr Kernel kernels[] = {nullptr, nullptr, oz2_residues_kernel<2>, oz2_residues_kernel<3>,
                                       oz2_residues_kernel<4>, oz2_residues_kernel<5>, oz2_residues_kernel<6>,
                                       oz2_residues_kernel<7>, oz2_residues_kernel<8>, oz2_residues_kernel<9>,
                                       oz2_residues_kernel<10>, oz2_residues_kernel<11>, oz2_residues_kernel<12>,
                                       oz2_residues_kernel<13>, oz2_residues_kernel<14>, oz2_residues_kernel<15>,
                                       oz2_residues_kernel<16>};
  static_assert(sizeof(kernels) / sizeof(kernels[0]) == nm::kMaxModuli + 1, "one kernel per moduli count");
  if (c.n < nm::kMinModuli || c.n > nm::kMaxModuli) return cudaErrorInvalidValue;
  kernels[c.n]<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(view, shift, S, c, rows_pad, kpad, plane, res, sft);
  return cudaGetLastError();
}

cudaError_t launch_oz2_accumulate(const int32_t* c32, int64_t ldc32, int8_t* u, int64_t ldu, int64_t rows, int64_t cols,
                                  int32_t p, bool first, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  const dim3 block(128, 2), grid = grid_2d(rows, cols, block);
  if (grid.y > 65535) return cudaErrorInvalidValue;
  oz2_accumulate_kernel<<<grid, block, 0, stream>>>(c32, ldc32, u, ldu, rows, cols, p, first);
  return cudaGetLastError();
}

cudaError_t launch_oz2_reconstruct(const Oz2ReconstructArgs& args, const nm::Ozaki2Constants& c, cudaStream_t stream) {
  if (args.m_rows <= 0 || args.n_cols <= 0) return cudaSuccess;
  const dim3 block(128, 2), grid = grid_2d(args.m_rows, args.n_cols, block);
  if (grid.y > 65535) return cudaErrorInvalidValue;
  oz2_reconstruct_kernel<<<grid, block, 0, stream>>>(args, c);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace ozgemm
