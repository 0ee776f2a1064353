#include "ozgemm/problem.hpp"

#include <algorithm>
#include <cstdint>

namespace ozgemm {

std::string check_shape(const GemmShape& s) {
  if (s.transa != Op::N && s.transa != Op::T) return "transa must be N or T";
  if (s.transb != Op::N && s.transb != Op::T) return "transb must be N or T";
  if (s.m < 0) return "m must be >= 0 (got " + std::to_string(s.m) + ")";
  if (s.n < 0) return "n must be >= 0 (got " + std::to_string(s.n) + ")";
  if (s.k < 0) return "k must be >= 0 (got " + std::to_string(s.k) + ")";
  if (s.lda < std::max<int64_t>(1, s.a_rows()))
    return "lda must be >= max(1, " + std::to_string(s.a_rows()) + ") (got " + std::to_string(s.lda) + ")";
  if (s.ldb < std::max<int64_t>(1, s.b_rows()))
    return "ldb must be >= max(1, " + std::to_string(s.b_rows()) + ") (got " + std::to_string(s.ldb) + ")";
  if (s.ldc < std::max<int64_t>(1, s.m))
    return "ldc must be >= max(1, " + std::to_string(s.m) + ") (got " + std::to_string(s.ldc) + ")";
  // The last element of each matrix, (rows-1) + (cols-1) * ld, must fit an int64 offset.
  auto fits = [](int64_t rows, int64_t cols, int64_t ld) {
    return rows <= 0 || cols <= 0 || (cols - 1) <= (INT64_MAX - (rows - 1)) / ld;
  };
  if (!fits(s.a_rows(), s.transa == Op::N ? s.k : s.m, s.lda)) return "A's extent (lda * columns) overflows 64-bit offsets";
  if (!fits(s.b_rows(), s.transb == Op::N ? s.n : s.k, s.ldb)) return "B's extent (ldb * columns) overflows 64-bit offsets";
  if (!fits(s.m, s.n, s.ldc)) return "C's extent (ldc * n) overflows 64-bit offsets";
  return {};
}

}  // namespace ozgemm
