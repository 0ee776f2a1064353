// Slicing of op(A) rows / op(B) columns into int8 digits in the k-blocked SliceLayout
// (ozgemm/numerics/slice_layout.hpp). Both input layouts are read coalesced through a shared-memory tile.
#include <array>
#include <utility>

#include "kernels/dgemm/launch.hpp"
#include "kernels/dgemm/operand_tile.cuh"
#include "ozgemm/numerics/ozaki1.hpp"

namespace ozgemm {
namespace kernels {

namespace {

namespace tile = operand_tile;
using tile::kThreads;

// S: the slice count, a template parameter so slice_value's digit loop unrolls.
template <int S>
__global__ void __launch_bounds__(kThreads) slice_kernel(OperandView v, const int32_t* __restrict__ shift,
                                                         numerics::SliceLayout layout, int64_t rows_pad,
                                                         int8_t* __restrict__ out) {
  constexpr int s = S;
  const int64_t kblock = layout.kblock, k_total = kblock * layout.kblocks;
  __shared__ tile::Tile t;
  const tile::Origin at = tile::origin(k_total);
  const int64_t r0 = at.r0, l0 = at.l0;
  tile::load(v, at, t);
  __syncthreads();
  // Slice: consecutive threads take consecutive l, so each slice's bytes are written
  // as 64 contiguous bytes per row of the tile. k-block arithmetic in 32 bits relative to the
  // tile's first block (a 64-bit division per element cost more than the slicing itself).
  const int64_t b0 = l0 / kblock;
  const int q0 = static_cast<int>(l0 - b0 * kblock);
  const int kb = static_cast<int>(kblock);  // <= numerics::kInt32ExactProducts
  for (int idx = threadIdx.x; idx < tile::kRows * tile::kCols; idx += kThreads) {
    const int rr = idx / tile::kCols, ll = idx % tile::kCols;
    const int64_t r = r0 + rr, l = l0 + ll;
    if (r >= rows_pad || l >= k_total) continue;
    const int q = q0 + ll, db = q / kb;  // q: k-index within block b0; db: blocks past b0
    numerics::slice_value(t[rr][ll], shift[r], s, out + layout.at(r, b0 + db, q - db * kb, 0), layout.digit_stride());
  }
}

using SliceKernel = void (*)(OperandView, const int32_t*, numerics::SliceLayout, int64_t, int8_t*);
template <int... S>
constexpr std::array<SliceKernel, sizeof...(S)> slice_table(std::integer_sequence<int, S...>) {
  return {&slice_kernel<S + 1>...};
}
constexpr auto slice_kernels = slice_table(std::make_integer_sequence<int, numerics::kMaxSlices>{});

}  // namespace

cudaError_t launch_slice(const OperandView& view, const int32_t* shift, const numerics::SliceLayout& layout,
                         int64_t rows_pad, int8_t* out, cudaStream_t stream) {
  const int s = layout.s;
  const int64_t k_total = layout.kblock * layout.kblocks;
  if (rows_pad <= 0 || k_total <= 0) return cudaSuccess;
  const int64_t tiles = tile::count(rows_pad, k_total);
  if (tiles > tile::kMaxTiles) return cudaErrorInvalidValue;
  if (s < 1 || s > numerics::kMaxSlices) return cudaErrorInvalidValue;
  slice_kernels[s - 1]<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(view, shift, layout, rows_pad, out);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace ozgemm
