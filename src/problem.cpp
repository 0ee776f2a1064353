#include "ozgemm/problem.hpp"

#include <algorithm>

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
  return {};
}

}  // namespace ozgemm
