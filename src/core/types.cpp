// Names of the option enums of ozgemm/types.hpp.
#include <cstring>

#include "ozgemm/types.hpp"

namespace ozgemm {

namespace {
// Equal names, where '_' in `name` matches '-' (Python spells them partially_fused).
bool same_name(const char* name, const char* canonical) {
  for (; *name && *canonical; ++name, ++canonical)
    if (*name != *canonical && !(*name == '_' && *canonical == '-')) return false;
  return *name == *canonical;
}
template <class E, size_t N>
bool parse(const char* name, const char* const (&names)[N], E* out) {
  if (!name) return false;
  for (size_t i = 0; i < N; ++i)
    if (same_name(name, names[i])) {
      *out = static_cast<E>(i);
      return true;
    }
  return false;
}
template <class E, size_t N>
const char* name_of(E v, const char* const (&names)[N]) {
  const int i = static_cast<int>(v);
  return i >= 0 && size_t(i) < N ? names[i] : nullptr;
}
// Indexed by the enum values.
constexpr const char* kVariantNames[] = {"auto", "unfused", "partially-fused", "fully-fused", "native"};
constexpr const char* kFamilyNames[] = {"auto", "sm90", "portable"};
constexpr const char* kAccumulatorNames[] = {"auto", "registers", "global"};
}  // namespace

const char* variant_name(Variant v) { return name_of(v, kVariantNames); }
const char* family_name(KernelFamily f) { return name_of(f, kFamilyNames); }
const char* accumulator_name(FusedAccumulator a) { return name_of(a, kAccumulatorNames); }
bool parse_variant(const char* name, Variant* v) { return parse(name, kVariantNames, v); }
bool parse_family(const char* name, KernelFamily* f) { return parse(name, kFamilyNames, f); }
bool parse_accumulator(const char* name, FusedAccumulator* a) { return parse(name, kAccumulatorNames, a); }

}  // namespace ozgemm
