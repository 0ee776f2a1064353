// The Ozaki scheme II's kernels (ozgemm/numerics/ozaki2.hpp; launch.hpp lists them): the norms and
// residues of an operand, the reduction of each modulus' int32 products past one k chunk, and the CRT
// reconstruction from the product planes (int32 or int8).
// The INT8 products themselves are cuBLASLt's (src/dispatch) or the Hopper GEMM's
// (ozaki2_products_sm90.cu). Same numerics as the host reference
// (src/reference/ozaki2_reference.cpp).
#include <type_traits>

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
#pragma unroll 1
  for (int g = 0; g < 2; ++g) {
    const int ll = 4 * part + 32 * g;  // the group's first k-index in the tile
    if (l0 + ll >= kpad) return;
    nm::Oz2Pieces<W> pieces[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const double x = t[rr][ll + q];
      pieces[q] = nm::oz2_pieces_of_scaled<W>(nm::is_finite(x) ? x : 0.0, s);
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

// The rows a reconstruction thread takes: 4 consecutive ones from int8 planes (one 32-bit load a
// plane: at 1 byte a load the pass ran at 0.85 ms for 1.5 GB at 8192^2, N = 15, H100), 1 from int32
// ones. Four rows from r0 (a multiple of 4) stay inside the planes' rows: chunks are whole multiples
// of 16 rows (UnfusedPolicy::kRowAlign), every row of which the products wrote.
template <class Plane>
constexpr int kReconstructRows = std::is_same_v<Plane, int8_t> ? 4 : 1;

// Residues of modulus I.. N-1 of the thread's rows from the product planes: int32 ones (cuBLASLt's
// sums) reduced here, int8 ones (the Hopper products') already residues.
template <int I, int N, class Plane>
__device__ __forceinline__ void load_residues(const Plane* at, int64_t plane, int32_t (&u)[kReconstructRows<Plane>][N]) {
  if constexpr (I < N) {
    if constexpr (std::is_same_v<Plane, int8_t>) {
      const uint32_t w = *reinterpret_cast<const uint32_t*>(at + I * plane);
#pragma unroll
      for (int q = 0; q < 4; ++q) u[q][I] = static_cast<int32_t>(w << (24 - 8 * q)) >> 24;  // byte q, sign-extended
    } else {
      u[0][I] = nm::sym_mod_i32<nm::kModuliTable[I]>(at[I * plane]);
    }
    load_residues<I + 1, N>(at, plane, u);
  }
}

template <int N, class Plane>
__global__ void __launch_bounds__(256) oz2_reconstruct_kernel(Oz2ReconstructArgs a, const Plane* __restrict__ planes,
                                                              nm::Ozaki2Constants c) {
  constexpr int R = kReconstructRows<Plane>;
  const int64_t r0 = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * R;
  const int64_t col = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r0 >= a.m_rows || col >= a.n_cols) return;
  int32_t u[R][N];
  load_residues<0, N>(planes + r0 + col * a.ld, a.plane_elems, u);
  const int64_t cg = a.col0 + col;
  const bool read_c = a.beta != 0.0;
#pragma unroll
  for (int q = 0; q < R; ++q) {
    const int64_t rg = a.row0 + r0 + q;
    if (r0 + q >= a.m_rows) break;
    double acc;
    if (a.flag_a[rg] | a.flag_b[cg]) {
      acc = special_dot_device(a.a, a.b, rg, cg);
    } else {
      const double y = nm::oz2_reconstruct_n(c, N, [&](int i) { return nm::oz2_residue_double(u[q][i]); });
      acc = nm::scale_pow2(y, -(a.sft_a[rg] + a.sft_b[cg]));
    }
    double* out = a.C + rg + cg * a.ldc;
    *out = nm::apply_alpha_beta(a.alpha, acc, a.beta, read_c ? *out : 0.0, read_c);
  }
}

// f(std::integral_constant<int, N>) for the moduli count n; cudaErrorInvalidValue outside the range.
template <int N = nm::kMinModuli, class F>
cudaError_t with_moduli_count(int n, F&& f) {
  if constexpr (N > nm::kMaxModuli) {
    return cudaErrorInvalidValue;
  } else {
    if (n == N) return f(std::integral_constant<int, N>{});
    return with_moduli_count<N + 1>(n, f);
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
  const auto launch = [&](auto n, const auto* planes) {
    constexpr int R = kReconstructRows<std::remove_cv_t<std::remove_pointer_t<decltype(planes)>>>;
    const dim3 block(128 / R, 2 * R), grid = grid_2d((args.m_rows + R - 1) / R, args.n_cols, block);
    if (grid.y > 65535) return cudaErrorInvalidValue;
    if (R > 1 && (args.ld % R || args.plane_elems % R || reinterpret_cast<uintptr_t>(planes) % (R * sizeof *planes)))
      return cudaErrorInvalidValue;  // the 32-bit loads of 4 rows
    oz2_reconstruct_kernel<decltype(n)::value><<<grid, block, 0, stream>>>(args, planes, c);
    return cudaGetLastError();
  };
  return with_moduli_count(c.n, [&](auto n) {
    return args.residues ? launch(n, args.residues) : launch(n, args.products);
  });
}

}  // namespace kernels
}  // namespace ozgemm
