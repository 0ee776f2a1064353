// ozgemm/reference/reference.hpp — host (CPU) models used to check every GPU path:
//   * ozaki_dgemm:   the whole Ozaki-I algorithm on the CPU, built from ozgemm/numerics/ozaki1.hpp;
//                    the GPU paths must equal it bit for bit.
//   * accurate_gemm: a double-double GEMM (error ~1e-32 relative to sum |a||b|) for error figures.
//   * plain_dgemm:   the textbook FP64 triple loop (k ascending, no FMA), the "native" baseline.
//   * error metrics, and the generators of test matrices.
// All matrices are column-major with BLAS leading dimensions. Functions throw
// std::invalid_argument on bad arguments (the message is check_shape's reason).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ozgemm/numerics/slice_layout.hpp"
#include "ozgemm/problem.hpp"

namespace ozgemm {
namespace ref {

// ---------------------------------------------------------------------------------------------
// Pieces of the algorithm (exposed so tests and GPU checks can look at each phase).

// One operand cut into slices. Rows are the rows of op(A), or the columns of op(B), stored in
// the SliceLayout with one k-block and no reversal: digit i of element (r, l) at
// layout.offset(r, i, l) = (r * s + i) * k + l.
struct SlicedOperand {
  int64_t rows = 0;
  int64_t k = 0;
  int s = 0;
  numerics::SliceLayout layout;
  std::vector<int32_t> shift;     // per row: numerics::shift_from_max of its finite max-abs
  std::vector<uint8_t> nonfinite; // per row: 1 if the row holds Inf or NaN
  std::vector<int8_t> digits;     // rows * s * k
  // The k digits i of row r (contiguous).
  const int8_t* row_slice(int64_t r, int i) const { return digits.data() + layout.offset(r, i, 0); }
};

// Rows of op(A) (m x k).
SlicedOperand slice_rows_of_op_a(Op transa, int64_t m, int64_t k, const double* A, int64_t lda, int s);
// Columns of op(B) (k x n).
SlicedOperand slice_cols_of_op_b(Op transb, int64_t k, int64_t n, const double* B, int64_t ldb, int s);

// Exact anti-diagonal sums D_d(r, c) = sum_{i+j=d} sum_l a_i(r,l) b_j(c,l), d = 0..s-1,
// in int64 (exact for any k < 2^31). Result index: (d * n + c) * m + r.
std::vector<int64_t> diagonal_sums(const SlicedOperand& a, const SlicedOperand& b);

// The value an entry takes when its row of op(A) or column of op(B) holds Inf/NaN:
// the IEEE sum, in ascending l, of the products a(r,l)*b(l,c) whose factors include a
// non-finite value. Native DGEMM gives the same class (NaN, +Inf, -Inf) unless the
// finite part of the dot product itself overflows (docs/numerics.md).
double special_dot(Op transa, const double* A, int64_t lda, Op transb, const double* B, int64_t ldb, int64_t r,
                   int64_t c, int64_t k);

// The whole Ozaki-I DGEMM on the CPU, in the documented order (numerics/ozaki1.hpp).
// slices in 1..numerics::kMaxSlices.
void ozaki_dgemm(Op transa, Op transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A, int64_t lda,
                 const double* B, int64_t ldb, double beta, double* C, int64_t ldc, int slices);

// ---------------------------------------------------------------------------------------------
// References.

// Textbook FP64 GEMM: acc = sum_l a*b in ascending l (no FMA), then alpha*acc + beta*C.
void plain_dgemm(Op transa, Op transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A, int64_t lda,
                 const double* B, int64_t ldb, double beta, double* C, int64_t ldc);

// Double-double result of alpha * op(A) op(B) + beta * C0 (C0 read only if beta != 0),
// stored as hi + lo (each m x n, leading dimension m), plus absprod = |alpha| |op(A)| |op(B)|
// + |beta| |C0| (the componentwise error's denominator).
struct AccurateResult {
  int64_t m = 0, n = 0;
  std::vector<double> hi, lo, absprod;
};
AccurateResult accurate_gemm(Op transa, Op transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A,
                             int64_t lda, const double* B, int64_t ldb, double beta, const double* C0, int64_t ldc0);

// Errors of C (leading dimension ldc) against an accurate result.
struct ErrorMetrics {
  double normwise = 0;       // ||C - Cref||_F / ||Cref||_F
  double componentwise = 0;  // max |C - Cref| / absprod   (entries with absprod == 0 must be exact)
  double elementwise = 0;    // max |C - Cref| / |Cref|    (entries with Cref == 0 must be exact)
  int64_t nonfinite_mismatch = 0;  // entries where exactly one of C, Cref is non-finite, or their class differs
  int64_t compared = 0;            // entries where both are finite: the ones the three errors cover
};
ErrorMetrics compare(const double* C, int64_t ldc, const AccurateResult& ref);

// ---------------------------------------------------------------------------------------------
// Test matrices (column-major, rows x cols, leading dimension ld >= rows; padding untouched).

// The usual family: phi < 0 gives plain N(0,1); otherwise (U(0,1) - 0.5) * exp(phi * N(0,1)).
void fill_phi(double* a, int64_t rows, int64_t cols, int64_t ld, double phi, std::mt19937_64& rng);
// Uniform integers in [-bound, bound].
void fill_integers(double* a, int64_t rows, int64_t cols, int64_t ld, int64_t bound, std::mt19937_64& rng);
// Returns a column-major vector rows x cols filled by fill_phi.
std::vector<double> random_matrix(int64_t rows, int64_t cols, double phi, std::mt19937_64& rng);

}  // namespace ref
}  // namespace ozgemm
