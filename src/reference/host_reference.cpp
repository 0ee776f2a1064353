// Host reference of the whole Ozaki-I algorithm. Every FP64 operation follows the order
// documented in ozgemm/numerics/ozaki1.hpp; the integer phases are exact, so any grouping of the
// integer sums (k-splits, diagonal concatenation) gives the same bits.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ozgemm/numerics/ozaki1.hpp"
#include "ozgemm/reference/reference.hpp"
#include "reference/parallel.hpp"
#include "reference/row_scan.hpp"

namespace ozgemm {
namespace ref {

namespace nm = ozgemm::numerics;

namespace {

// rows x k view of op(X) where element (r, l) = get(r, l).
template <class Get>
SlicedOperand slice_rows(int64_t rows, int64_t k, int s, Get get) {
  if (s < 1 || s > nm::kMaxSlices) throw std::invalid_argument("slices must be in 1.." + std::to_string(nm::kMaxSlices));
  SlicedOperand out;
  out.rows = rows;
  out.k = k;
  out.s = s;
  out.layout = nm::SliceLayout::make(s, /*reversed=*/false, /*kblock=*/std::max<int64_t>(1, k), /*kblocks=*/1);
  out.shift.assign(rows, 0);
  out.nonfinite.assign(rows, 0);
  out.digits.assign(static_cast<size_t>(rows * s * k), 0);
  detail::parallel_for(rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const detail::RowScan row = detail::scan_row(r, k, get);
      const int32_t sh = nm::shift_from_max(row.max_abs);
      out.shift[r] = sh;
      out.nonfinite[r] = row.nonfinite;
      for (int64_t l = 0; l < k; ++l)
        nm::slice_value(get(r, l), sh, s, out.digits.data() + out.layout.offset(r, 0, l), out.layout.digit_stride());
    }
  });
  return out;
}

// Exact dot product of two int8 rows; int32 partial sums over chunks that cannot overflow.
inline int64_t dot_i8(const int8_t* a, const int8_t* b, int64_t k) {
  constexpr int64_t kChunk = 65536;  // <= numerics::kInt32ExactProducts
  int64_t total = 0;
  for (int64_t l0 = 0; l0 < k; l0 += kChunk) {
    const int64_t l1 = std::min(k, l0 + kChunk);
    int32_t acc = 0;
    for (int64_t l = l0; l < l1; ++l) acc += int32_t(a[l]) * int32_t(b[l]);
    total += acc;
  }
  return total;
}

}  // namespace

SlicedOperand slice_rows_of_op_a(Op transa, int64_t m, int64_t k, const double* A, int64_t lda, int s) {
  return slice_rows(m, k, s, [=](int64_t r, int64_t l) { return op_elem(A, lda, transa, r, l); });
}

SlicedOperand slice_cols_of_op_b(Op transb, int64_t k, int64_t n, const double* B, int64_t ldb, int s) {
  // Column c of op(B) is row c of op(B)^T: element (c, l) = op(B)(l, c).
  return slice_rows(n, k, s, [=](int64_t c, int64_t l) { return op_elem(B, ldb, transb, l, c); });
}

std::vector<int64_t> diagonal_sums(const SlicedOperand& a, const SlicedOperand& b) {
  if (a.k != b.k || a.s != b.s) throw std::invalid_argument("diagonal_sums: operands do not match");
  const int64_t m = a.rows, n = b.rows, k = a.k;
  const int s = a.s;
  std::vector<int64_t> D(static_cast<size_t>(s * m * n), 0);
  detail::parallel_for(n, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = 0; r < m; ++r)
        for (int d = 0; d < s; ++d) {
          int64_t sum = 0;
          for (int i = 0; i <= d; ++i) sum += dot_i8(a.row_slice(r, i), b.row_slice(c, d - i), k);
          D[(d * n + c) * m + r] = sum;
        }
  });
  return D;
}

double special_dot(Op transa, const double* A, int64_t lda, Op transb, const double* B, int64_t ldb, int64_t r,
                   int64_t c, int64_t k) {
  double acc = 0.0;
  for (int64_t l = 0; l < k; ++l) {
    const double x = op_elem(A, lda, transa, r, l), y = op_elem(B, ldb, transb, l, c);
    if (!nm::is_finite(x) || !nm::is_finite(y)) acc = nm::add_rn(acc, nm::mul_rn(x, y));
  }
  return acc;
}

namespace {
void check(Op transa, Op transb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  const std::string why = check_shape(gemm_shape(transa, transb, m, n, k, lda, ldb, ldc));
  if (!why.empty()) throw std::invalid_argument(why);
}

// BLAS quick return for k == 0 or alpha == 0: C = beta * C (C not read when beta == 0).
void scale_c(int64_t m, int64_t n, double beta, double* C, int64_t ldc) {
  if (beta == 1.0) return;
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) C[r + c * ldc] = beta == 0.0 ? 0.0 : nm::mul_rn(beta, C[r + c * ldc]);
}
}  // namespace

void ozaki_dgemm(Op transa, Op transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A, int64_t lda,
                 const double* B, int64_t ldb, double beta, double* C, int64_t ldc, int slices) {
  check(transa, transb, m, n, k, lda, ldb, ldc);
  if (slices < 1 || slices > nm::kMaxSlices)
    throw std::invalid_argument("slices must be in 1.." + std::to_string(nm::kMaxSlices));
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0.0) {
    scale_c(m, n, beta, C, ldc);
    return;
  }
  const SlicedOperand a = slice_rows_of_op_a(transa, m, k, A, lda, slices);
  const SlicedOperand b = slice_cols_of_op_b(transb, k, n, B, ldb, slices);
  const std::vector<int64_t> D = diagonal_sums(a, b);
  const bool read_c = beta != 0.0;
  detail::parallel_for(n, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = 0; r < m; ++r) {
        double acc;
        if (a.nonfinite[r] || b.nonfinite[c]) {
          acc = special_dot(transa, A, lda, transb, B, ldb, r, c, k);
        } else {
          acc = nm::reconstruct_diagonals(slices, a.shift[r] + b.shift[c],
                                          [&](int d) { return D[(d * n + c) * m + r]; });
        }
        double& out = C[r + c * ldc];
        out = nm::apply_alpha_beta(alpha, acc, beta, read_c ? out : 0.0, read_c);
      }
  });
}

void plain_dgemm(Op transa, Op transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A, int64_t lda,
                 const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  check(transa, transb, m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0.0) {
    scale_c(m, n, beta, C, ldc);
    return;
  }
  const bool read_c = beta != 0.0;
  detail::parallel_for(n, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = 0; r < m; ++r) {
        double acc = 0.0;
        for (int64_t l = 0; l < k; ++l)
          acc = nm::add_rn(acc, nm::mul_rn(op_elem(A, lda, transa, r, l), op_elem(B, ldb, transb, l, c)));
        double& out = C[r + c * ldc];
        out = nm::apply_alpha_beta(alpha, acc, beta, read_c ? out : 0.0, read_c);
      }
  });
}

}  // namespace ref
}  // namespace ozgemm
