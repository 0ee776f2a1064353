// The unfused path's epilogue: exact diagonal sums (int32 planes summed over k-blocks in
// int64), FP64 reconstruction least significant diagonal first, then alpha/beta — the
// order of ozgemm/numerics/ozaki1.hpp, so the result equals the host reference bit for bit. Also
// the BLAS quick return C = beta C, for real and complex data.
#include <array>
#include <utility>

#include "kernels/dgemm/launch.hpp"
#include "kernels/dgemm/special_dot.cuh"
#include "ozgemm/numerics/ozaki1.hpp"
#include "ozgemm/numerics/ozaki2_complex.hpp"

namespace ozgemm {
namespace kernels {

namespace nm = ozgemm::numerics;

namespace {

// One thread per entry of C. S is the slice count: the S diagonal loads are unrolled so
// they are all in flight before the FP64 chain (which must run d = S-1 .. 0) starts.
template <int S>
__global__ void __launch_bounds__(256) reconstruct_epilogue_kernel(EpilogueArgs p) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // local row
  const int64_t c = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;  // local column
  if (r >= p.m_rows || c >= p.n_cols) return;
  const int64_t rg = p.row0 + r, cg = p.col0 + c;
  double acc = 0.0;
  if (p.flag_a[rg] | p.flag_b[cg]) {
    acc = special_dot_device(p.a, p.b, rg, cg);
  } else {
    const int32_t shift_sum = p.shift_a[rg] + p.shift_b[cg];
    const int32_t* base = p.planes + p.layout.index(0, 0, r, c);
    int64_t sums[S];
#pragma unroll
    for (int d = 0; d < S; ++d) sums[d] = __ldcs(base + p.layout.plane(d, 0));
    for (int64_t b = 1; b < p.layout.kblocks; ++b) {
#pragma unroll
      for (int d = 0; d < S; ++d) sums[d] += __ldcs(base + p.layout.plane(d, b));
    }
    acc = nm::reconstruct_diagonals(S, shift_sum, [&](int d) { return sums[d]; });
  }
  double* out = p.C + rg + cg * p.ldc;
  const bool read_c = p.beta != 0.0;
  *out = nm::apply_alpha_beta(p.alpha, acc, p.beta, read_c ? *out : 0.0, read_c);
}

using EpilogueKernel = void (*)(EpilogueArgs);
template <int... S>
constexpr std::array<EpilogueKernel, sizeof...(S)> epilogue_table(std::integer_sequence<int, S...>) {
  return {&reconstruct_epilogue_kernel<S + 1>...};
}
// epilogue_kernels[s - 1] handles s slices, s = 1 .. kMaxSlices.
constexpr auto epilogue_kernels = epilogue_table(std::make_integer_sequence<int, nm::kMaxSlices>{});

// beta C of one entry for the quick return; beta == 0 gives 0 without reading C.
__device__ __forceinline__ double scaled_entry(double beta, const double* x) {
  return beta == 0.0 ? 0.0 : nm::mul_rn(beta, *x);
}
__device__ __forceinline__ double2 scaled_entry(double2 beta, const double2* x) {
  const nm::ComplexF64 b{beta.x, beta.y};
  const nm::ComplexF64 old = nm::oz2c_is_zero(b) ? nm::ComplexF64{0.0, 0.0} : nm::ComplexF64{x->x, x->y};
  const nm::ComplexF64 v = nm::oz2c_scale_c(b, old);
  return make_double2(v.re, v.im);
}

template <class T>
__global__ void scale_c_kernel(int64_t m, int64_t n, T beta, T* C, int64_t ldc) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t c = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r >= m || c >= n) return;
  T* x = C + r + c * ldc;
  *x = scaled_entry(beta, x);
}

dim3 grid_2d(int64_t m, int64_t n, dim3 block) {
  return dim3(static_cast<unsigned>((m + block.x - 1) / block.x), static_cast<unsigned>((n + block.y - 1) / block.y));
}

}  // namespace

cudaError_t launch_reconstruct_epilogue(const EpilogueArgs& args, cudaStream_t stream) {
  if (args.m_rows <= 0 || args.n_cols <= 0) return cudaSuccess;
  const dim3 block(128, 2);
  const dim3 grid = grid_2d(args.m_rows, args.n_cols, block);
  if (grid.y > 65535) return cudaErrorInvalidValue;  // the planner keeps chunks far below this
  if (args.layout.s < 1 || args.layout.s > nm::kMaxSlices) return cudaErrorInvalidValue;
  epilogue_kernels[args.layout.s - 1]<<<grid, block, 0, stream>>>(args);
  return cudaGetLastError();
}

namespace {
template <class T>
cudaError_t launch_scale(int64_t m, int64_t n, T beta, T* C, int64_t ldc, cudaStream_t stream) {
  const dim3 block(128, 2);
  for (int64_t c0 = 0; c0 < n; c0 += 65535 * 2) {  // grid.y limit
    const int64_t nc = (n - c0) < 65535 * 2 ? (n - c0) : 65535 * 2;
    scale_c_kernel<T><<<grid_2d(m, nc, block), block, 0, stream>>>(m, nc, beta, C + c0 * ldc, ldc);
  }
  return cudaGetLastError();
}
}  // namespace

cudaError_t launch_scale_c(int64_t m, int64_t n, double beta, double* C, int64_t ldc, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || beta == 1.0) return cudaSuccess;
  return launch_scale(m, n, beta, C, ldc, stream);
}

cudaError_t launch_oz2c_scale_c(int64_t m, int64_t n, double2 beta, double2* C, int64_t ldc, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || nm::oz2c_is_one(nm::ComplexF64{beta.x, beta.y})) return cudaSuccess;
  return launch_scale(m, n, beta, C, ldc, stream);
}

}  // namespace kernels
}  // namespace ozgemm
