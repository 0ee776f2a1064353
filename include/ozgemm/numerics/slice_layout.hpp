// ozgemm/numerics/slice_layout.hpp — where the Ozaki-I scheme's intermediate data sit in memory:
// the sliced operands (SliceLayout), the int32 planes of the diagonal sums (PlaneLayout) and the
// fully fused kernels' int64 k-block spill (SpillLayout). One definition each, __host__
// __device__, read by the planner (sizes), the dispatch layer (pointers), the kernels (indices)
// and the host reference (SliceLayout). All offsets are in elements of the buffer's type.
#pragma once

#include <cstdint>

#include "ozgemm/numerics/fp.hpp"  // OZGEMM_HD

namespace ozgemm {
namespace numerics {

// One operand cut into s slices: "rows" are the rows of op(A) or the columns of op(B), each
// stored k-contiguous. k is cut into `kblocks` blocks of `kblock` elements (zero-padded past k);
// within row r, k-block b holds the s slices of its elements one after another:
//
//   digit i of element (r, l), l = b * kblock + q   at   r * ld + b * (s * kblock) + position(i) * kblock + q
//
// with ld = kblocks * s * kblock (bytes between rows), position(i) = s - 1 - i for A (reversed)
// and position(i) = i for B. Invariant that the products rely on: within k-block b the d + 1
// terms of anti-diagonal d, A_{d-t} x B_t for t = 0..d, are ONE contiguous k-range of length
// (d + 1) * kblock in both operands (A from position s-1-d: A_d .. A_0; B from position 0:
// B_0 .. B_d), so one GEMM of depth (d + 1) * kblock sums the whole diagonal of that block.
// The host reference uses the same type with one block (kblock = k) and no reversal, where the
// formula reads digits[(r * s + i) * k + l].
struct SliceLayout {
  int s = 1;
  bool reversed = false;
  int64_t kblock = 0, kblocks = 1;
  int64_t ld = 0;  // = kblocks * s * kblock

  static SliceLayout make(int s, bool reversed, int64_t kblock, int64_t kblocks) {
    SliceLayout l;
    l.s = s;
    l.reversed = reversed;
    l.kblock = kblock;
    l.kblocks = kblocks;
    l.ld = kblocks * s * kblock;
    return l;
  }
  OZGEMM_HD int position(int i) const { return reversed ? s - 1 - i : i; }
  OZGEMM_HD int64_t row(int64_t r) const { return r * ld; }  // offset of row r
  OZGEMM_HD int64_t block_start(int64_t b) const { return b * s * kblock; }
  // Offset of digit i of element (r, l = b * kblock + q), for callers that know b and q.
  OZGEMM_HD int64_t at(int64_t r, int64_t b, int64_t q, int i) const {
    return row(r) + block_start(b) + int64_t(position(i)) * kblock + q;
  }
  // Offset of digit i of element (r, l).
  OZGEMM_HD int64_t offset(int64_t r, int i, int64_t l) const {
    const int64_t b = l / kblock;
    return at(r, b, l - b * kblock, i);
  }
  // Distance from digit i to digit i + 1 of one element (negative when reversed): digit i of
  // (r, l) is at offset(r, 0, l) + i * digit_stride().
  OZGEMM_HD int64_t digit_stride() const { return reversed ? -kblock : kblock; }
  // Start (within a row) of the contiguous k-range that holds anti-diagonal d's terms in k-block b,
  // and its length.
  OZGEMM_HD int64_t diagonal_start(int d, int64_t b) const {
    return block_start(b) + (reversed ? int64_t(s - 1 - d) * kblock : 0);
  }
  OZGEMM_HD int64_t diagonal_length(int d) const { return int64_t(d + 1) * kblock; }
  int64_t bytes(int64_t rows) const { return rows * ld; }
};

// The int32 planes of the diagonal sums of one chunk of C (rows x cols entries, column-major
// with leading dimension ld = rows): plane (d, b) holds diagonal d summed over k-block b only.
//   entry (r, c) of plane (d, b)  at  (d * kblocks + b) * plane_elems() + r + c * ld
struct PlaneLayout {
  int s = 1;
  int64_t kblocks = 1;
  int64_t ld = 0, cols = 0;

  OZGEMM_HD int64_t plane_elems() const { return ld * cols; }
  OZGEMM_HD int64_t planes() const { return int64_t(s) * kblocks; }
  OZGEMM_HD int64_t plane(int d, int64_t b) const { return (int64_t(d) * kblocks + b) * plane_elems(); }
  OZGEMM_HD int64_t index(int d, int64_t b, int64_t r, int64_t c) const { return plane(d, b) + r + c * ld; }
  int64_t bytes() const { return planes() * plane_elems() * int64_t(sizeof(int32_t)); }
};

// The fully fused kernels' exact int64 running sums of the k-blocks before the last: one per
// entry of every tile of the launch grid. Tile t (linear block index) owns tile_entries
// consecutive int64; within it, entry i of consumer thread `thread` (of `nthreads`) sits at
// i * nthreads + thread, so consecutive threads' entries are adjacent (coalesced).
struct SpillLayout {
  int64_t tile_entries = 0;
  int nthreads = 0;

  OZGEMM_HD int64_t index(int64_t tile, int i, int thread) const {
    return tile * tile_entries + int64_t(i) * nthreads + thread;
  }
  // Entries a launch over grid_tiles tiles needs (none with one k-block).
  static OZGEMM_HD int64_t entries(int64_t kblocks, int64_t grid_tiles, int64_t tile_entries) {
    return kblocks > 1 ? grid_tiles * tile_entries : 0;
  }
};

}  // namespace numerics
}  // namespace ozgemm
