// src/reference/row_scan.hpp — the first pass the host references make over one row of op(A) (or
// column of op(B)): its largest finite magnitude, from which numerics::shift_from_max gives the
// row's power-of-two scale, and whether it holds an Inf or NaN (the row then takes the special path).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ozgemm/numerics/fp.hpp"

namespace ozgemm {
namespace detail {

struct RowScan {
  double max_abs = 0.0;   // max |x| over the finite entries (0 for an all-zero or all-special row)
  uint8_t nonfinite = 0;  // 1 if any entry is Inf or NaN
};

// get(r, l) is element l of row r, l < k.
template <class Get>
RowScan scan_row(int64_t r, int64_t k, Get get) {
  RowScan s;
  for (int64_t l = 0; l < k; ++l) {
    const double v = get(r, l);
    if (numerics::is_finite(v))
      s.max_abs = std::max(s.max_abs, std::fabs(v));
    else
      s.nonfinite = 1;
  }
  return s;
}

}  // namespace detail
}  // namespace ozgemm
