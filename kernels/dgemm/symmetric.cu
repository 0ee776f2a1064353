// kernels/dgemm/symmetric.cu — the two elementwise kernels of the symmetric Level-3 routines
// (src/api/symmetric_api.cpp through src/dispatch/symmetric_dispatch.cpp): the masked merge of a
// diagonal block's product into C's triangle, and the full symmetric matrix built from one stored
// triangle. Column-major, leading dimensions in elements.
#include "kernels/dgemm/launch.hpp"

namespace ozgemm {
namespace kernels {

namespace {

// Entry (r, c) of an n x n matrix lies in the `lower` (else upper) triangle, diagonal included.
__device__ __forceinline__ bool in_triangle(int64_t r, int64_t c, bool lower) { return lower ? r >= c : r <= c; }

// Threads cover rows with x, columns with y in a grid-stride loop (the grid's y extent is capped).
__global__ void triangle_merge_kernel(int64_t n, bool lower, const double* T, int64_t ldt, double beta, double* C,
                                      int64_t ldc) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= n) return;
  for (int64_t c = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; c < n; c += int64_t(gridDim.y) * blockDim.y) {
    if (!in_triangle(r, c, lower)) continue;
    double* x = C + r + c * ldc;
    const double t = T ? T[r + c * ldt] : 0.0;
    *x = beta == 0.0 ? t : t + beta * *x;  // beta == 0: C is not read (NaN in C does not propagate)
  }
}

__global__ void symmetric_fill_kernel(int64_t n, bool lower, const double* A, int64_t lda, double* F, int64_t ldf) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= n) return;
  for (int64_t c = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; c < n; c += int64_t(gridDim.y) * blockDim.y)
    F[r + c * ldf] = in_triangle(r, c, lower) ? A[r + c * lda] : A[c + r * lda];
}

constexpr unsigned kRowsPerBlock = 32, kColsPerBlock = 8, kMaxGridY = 65535;

dim3 square_grid(int64_t n) {
  const int64_t gy = (n + kColsPerBlock - 1) / kColsPerBlock;
  return dim3(static_cast<unsigned>((n + kRowsPerBlock - 1) / kRowsPerBlock),
              static_cast<unsigned>(gy < kMaxGridY ? gy : kMaxGridY));
}

}  // namespace

cudaError_t launch_triangle_merge(int64_t n, bool lower, const double* T, int64_t ldt, double beta, double* C,
                                  int64_t ldc, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  triangle_merge_kernel<<<square_grid(n), dim3(kRowsPerBlock, kColsPerBlock), 0, stream>>>(n, lower, T, ldt, beta, C,
                                                                                          ldc);
  return cudaGetLastError();
}

cudaError_t launch_symmetric_fill(int64_t n, bool lower, const double* A, int64_t lda, double* F, int64_t ldf,
                                  cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  symmetric_fill_kernel<<<square_grid(n), dim3(kRowsPerBlock, kColsPerBlock), 0, stream>>>(n, lower, A, lda, F, ldf);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace ozgemm
