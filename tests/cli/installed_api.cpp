// tests/cli/installed_api.cpp — a program of an installed ozgemm that includes every installed
// header and uses every function they declare out of line, so it links only if the library
// exports each of them. scripts/test_package.sh builds it against the install prefix (the shared
// and the static library) and runs it (no GPU needed: the C API is only linked, not called), and
// checks that every header under <prefix>/include/ozgemm is included below.
#include <cstdio>
#include <string>

#include <ozgemm/b2b.hpp>
#include <ozgemm/b2b_types.hpp>
#include <ozgemm/config.h>
#include <ozgemm/export.h>
#include <ozgemm/numerics/accuracy.hpp>
#include <ozgemm/numerics/fp.hpp>
#include <ozgemm/numerics/ozaki1.hpp>
#include <ozgemm/numerics/ozaki2.hpp>
#include <ozgemm/numerics/ozaki2_complex.hpp>
#include <ozgemm/numerics/slice_layout.hpp>
#include <ozgemm/ozgemm.h>
#include <ozgemm/ozgemm.hpp>
#include <ozgemm/problem.hpp>
#include <ozgemm/types.hpp>

// Taking a function's address makes the program link against its symbol without calling it.
#define LINKED(f) reinterpret_cast<const void*>(&f)

namespace {

int failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("installed_api: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  // The C API and the C++ layer's out-of-line functions: linked (their addresses), not called.
  const void* linked[] = {
      LINKED(ozgemmCreate), LINKED(ozgemmDestroy), LINKED(ozgemmSetStream), LINKED(ozgemmGetStream),
      LINKED(ozgemmSetSlices), LINKED(ozgemmGetSlices), LINKED(ozgemmSetScheme), LINKED(ozgemmGetScheme),
      LINKED(ozgemmSetModuli), LINKED(ozgemmSetAccuracy), LINKED(ozgemmGetAccuracy), LINKED(ozgemmGetLastCallInfo),
      LINKED(ozgemmPlanCall), LINKED(ozgemmSetVariant), LINKED(ozgemmGetVariant), LINKED(ozgemmSetKernelFamily),
      LINKED(ozgemmSetFusedAccumulator), LINKED(ozgemmGetWorkspaceSize), LINKED(ozgemmGetPlannedVariant),
      LINKED(ozgemmSetWorkspace), LINKED(ozgemmCanImplement), LINKED(ozgemmDgemm), LINKED(ozgemmGetStatusString),
      LINKED(ozgemmGetVariantString), LINKED(ozgemm::gpu_available), LINKED(ozgemm::gpu_description),
      LINKED(ozgemm::set_phase_events), LINKED(ozgemm::dgemm_host_buffers), LINKED(ozgemm::int8_gemm_tops),
      LINKED(ozgemm::b2b::plan), LINKED(ozgemm::b2b::run),
  };
  for (const void* f : linked) expect(f != nullptr, "a C API or C++ layer function has no address");

  // types.hpp: names and their parsers.
  ozgemm::Variant v = ozgemm::Variant::Auto;
  expect(ozgemm::parse_variant(ozgemm::variant_name(ozgemm::Variant::PartiallyFused), &v) &&
             v == ozgemm::Variant::PartiallyFused,
         "variant_name / parse_variant");
  ozgemm::KernelFamily fam = ozgemm::KernelFamily::Auto;
  expect(ozgemm::parse_family(ozgemm::family_name(ozgemm::KernelFamily::Sm90), &fam) && fam == ozgemm::KernelFamily::Sm90,
         "family_name / parse_family");
  ozgemm::FusedAccumulator acc = ozgemm::FusedAccumulator::Auto;
  expect(ozgemm::parse_accumulator(ozgemm::accumulator_name(ozgemm::FusedAccumulator::Global), &acc) &&
             acc == ozgemm::FusedAccumulator::Global,
         "accumulator_name / parse_accumulator");
  // problem.hpp: the shape checks.
  expect(ozgemm::check_shape(ozgemm::gemm_shape(ozgemm::Op::N, ozgemm::Op::N, 4, 4, 4, 4, 4, 4)).empty(),
         "check_shape accepts a valid shape");
  expect(!ozgemm::check_shape(ozgemm::gemm_shape(ozgemm::Op::N, ozgemm::Op::N, 4, 4, 4, 1, 4, 4)).empty(),
         "check_shape refuses lda < m");
  // b2b_types.hpp: the names.
  expect(std::string(ozgemm::b2b::type_name(ozgemm::b2b::DataType::S8)) == "int8", "b2b::type_name");
  expect(std::string(ozgemm::b2b::residency_name(ozgemm::b2b::Residency::Shared)) == "shared", "b2b::residency_name");
  // numerics/: the inline formulas and the out-of-line constants.
  expect(ozgemm::numerics::ozaki2_constants(ozgemm::kDefaultModuli).n == ozgemm::kDefaultModuli, "ozaki2_constants");
  const int coprime[] = {256, 255, 253};
  expect(ozgemm::numerics::ozaki2_constants_of_moduli(coprime, 3).n == 3, "ozaki2_constants_of_moduli");
  expect(ozgemm::numerics::ozaki2_complex_constants(ozgemm::kDefaultModuli).n == ozgemm::kDefaultModuli,
         "ozaki2_complex_constants");
  expect(ozgemm::numerics::target_constant(4) > 0, "numerics::target_constant");
  if (failures == 0) std::printf("installed_api: every installed header's functions link and run\n");
  return failures == 0 ? 0 : 1;
}
