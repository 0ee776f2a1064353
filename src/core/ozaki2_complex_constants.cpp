// The complex Ozaki-II scheme's CRT constants and limits (ozgemm/numerics/ozaki2_complex.hpp): the
// real scheme's exact computation (ozaki2_constants_of_moduli) for kComplexModuliTable.
#include <array>
#include <mutex>
#include <stdexcept>

#include "ozgemm/numerics/ozaki2_complex.hpp"

namespace ozgemm {
namespace numerics {

const Ozaki2Constants& ozaki2_complex_constants(int n) {
  if (n < kMinModuli || n > kMaxModuli) throw std::invalid_argument("ozaki2 complex: moduli count out of range");
  static std::array<Ozaki2Constants, kMaxModuli + 1> table;
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = kMinModuli; i <= kMaxModuli; ++i) table[size_t(i)] = ozaki2_constants_of_moduli(kComplexModuliTable, i);
  });
  return table[size_t(n)];
}

}  // namespace numerics
}  // namespace ozgemm
