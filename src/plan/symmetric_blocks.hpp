// src/plan/symmetric_blocks.hpp — how ozgemm's symmetric Level-3 routines (ozgemmDsyrk, Dsyr2k,
// Dsyrkx: src/api/symmetric_api.cpp) split the `uplo` triangle of an n x n C into GEMMs: block rows
// (lower) or block columns (upper) of height/width nb; in each, the part off the diagonal is ONE
// GEMM straight into C, the nb x nb diagonal block a GEMM into a scratch buffer whose triangle is
// then merged into C (the other triangle of C is never written). Header-only plain C++ (no CUDA):
// the library, the CPU tests and the drop-ins' mock libozgemm use the same decomposition.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ozgemm {

// One GEMM of the decomposition: C(row0 : row0 + rows, col0 : col0 + cols) (0-based, column-major C)
// from rows row0.. of the first operand and rows col0.. of the second (SYRK: op(A) op(A)^T).
// diagonal: the block straddles the diagonal (row0 == col0, rows == cols): only its `uplo` triangle
// belongs to C's triangle.
struct TriangleBlock {
  int64_t row0 = 0, col0 = 0, rows = 0, cols = 0;
  bool diagonal = false;
};

// The blocks that cover the lower (lower = true) or upper triangle of an n x n matrix, diagonal
// included, each entry of the triangle by exactly one block (a diagonal block by its own triangle),
// and no entry of the other triangle outside a diagonal block. Order: block row (column) by block
// row, the off-diagonal GEMM before its diagonal block. n >= 0, nb >= 1.
inline std::vector<TriangleBlock> triangle_blocks(int64_t n, int64_t nb, bool lower) {
  std::vector<TriangleBlock> blocks;
  for (int64_t d0 = 0; d0 < n; d0 += nb) {
    const int64_t size = std::min(nb, n - d0);
    if (d0 > 0) {
      // lower: block row d0 left of the diagonal (size x d0); upper: block column above it (d0 x size)
      blocks.push_back(lower ? TriangleBlock{d0, 0, size, d0, false} : TriangleBlock{0, d0, d0, size, false});
    }
    blocks.push_back(TriangleBlock{d0, d0, size, size, true});
  }
  return blocks;
}

// Row r of op(X) (X^T when `transposed`; column-major X, leading dimension ld) as the first row of
// a GEMM operand with X's leading dimension and X's transpose.
template <class T>
T* operand_row(T* X, int64_t ld, bool transposed, int64_t r) {
  return transposed ? X + r * ld : X + r;
}

// The steps of the blocked rank-k update of C's triangle, in order: per block of
// triangle_blocks(n, nb, lower), gemm(block, p, into_scratch) for each product p < products (SYR2K:
// 2, else 1), into_scratch = block.diagonal, then, for a diagonal block, merge(block). The caller's
// gemm computes, with X_0 = A, Y_0 = B, X_1 = B, Y_1 = A (SYRK: B = A) and its rows row0.. / col0..,
//   out = alpha op(X_p)(row0.., :) op(Y_p)(col0.., :)^T + b out,  b = beta (p == 0, into C),
//                                                                    0 (p == 0, into scratch), 1 (p > 0),
// out being C's block or the rows x rows scratch; merge puts the scratch's triangle into C's block
// (C_tri = T_tri + beta C_tri). Stops at the first step that returns false; returns whether all ran.
template <class Gemm, class Merge>
bool for_each_triangle_step(int64_t n, int64_t nb, bool lower, int products, Gemm gemm, Merge merge) {
  for (const TriangleBlock& blk : triangle_blocks(n, nb, lower)) {
    for (int p = 0; p < products; ++p)
      if (!gemm(blk, p, blk.diagonal)) return false;
    if (blk.diagonal && !merge(blk)) return false;
  }
  return true;
}

}  // namespace ozgemm
