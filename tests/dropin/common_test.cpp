// tests/dropin/common_test.cpp — what both drop-ins share (src/dropin/common.cpp), on its own:
//   * the accuracy settings (OZGEMM_*_ACCURACY, OZGEMM_*_SCHEME): valid values and what each asks
//     for, invalid values and their messages, the BLAS library's fallback to the hook's variables;
//   * apply(): which C API setters a setting calls, with which values, in which order;
//   * the GEMM argument checks (reference BLAS's parameter numbers);
//   * the counting of what ozgemm ran: an Ozaki-II call info (moduli, slices 0) is emulated, never
//     native; native calls are kept with ozgemm's reason; the JSON and the counter names.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"
#include "dropin/common.hpp"
#include "dropin/hook_core.hpp"

using namespace ozgemm::dropin;

namespace {

const char* show(const char* v) { return v ? v : "(unset)"; }

// A valid pair of values and what it must ask of ozgemm.
void valid(const char* accuracy, const char* scheme, ozgemmAccuracy_t mode, ozgemmScheme_t want_scheme, int count,
           const char* text) {
  AccuracySetting s;
  s.count = -1;  // overwritten
  const std::string error = parse_accuracy("ACC", accuracy, "SCH", scheme, &s);
  CHECK(error.empty(), "ACC=%s SCH=%s rejected: %s", show(accuracy), show(scheme), error.c_str());
  CHECK(s.mode == mode && s.scheme == want_scheme && s.count == count,
        "ACC=%s SCH=%s gives mode %d scheme %d count %d, want %d %d %d", show(accuracy), show(scheme), s.mode,
        s.scheme, s.count, mode, want_scheme, count);
  CHECK(s.text() == text, "ACC=%s SCH=%s reads \"%s\", want \"%s\"", show(accuracy), show(scheme), s.text().c_str(),
        text);
}

// An invalid pair: rejected with a message that quotes `quoted`; the setting is left as it was.
void invalid(const char* accuracy, const char* scheme, const char* quoted) {
  AccuracySetting s;
  s.mode = OZGEMM_ACCURACY_FIXED, s.scheme = OZGEMM_SCHEME_OZAKI2, s.count = 99;  // a marker
  const std::string error = parse_accuracy("ACC", accuracy, "SCH", scheme, &s);
  CHECK(!error.empty(), "ACC=%s SCH=%s accepted (mode %d scheme %d count %d)", show(accuracy), show(scheme), s.mode,
        s.scheme, s.count);
  CHECK(error.find(quoted) != std::string::npos, "ACC=%s SCH=%s: message \"%s\" does not quote \"%s\"",
        show(accuracy), show(scheme), error.c_str(), quoted);
  CHECK(s.count == 99 && s.scheme == OZGEMM_SCHEME_OZAKI2, "ACC=%s SCH=%s changed the setting on error",
        show(accuracy), show(scheme));
}

// apply(): the setters it calls, recorded through a fake OzApi.
std::vector<std::string> g_calls;
ozgemmStatus_t g_fail_scheme = OZGEMM_STATUS_SUCCESS;
void record(const char* what, int v) { g_calls.push_back(std::string(what) + "(" + std::to_string(v) + ")"); }
std::string applied(const AccuracySetting& s, ozgemmStatus_t* status = nullptr) {
  OzApi oz;
  oz.set_scheme = [](ozgemmHandle_t, ozgemmScheme_t v) { record("scheme", v); return g_fail_scheme; };
  oz.set_accuracy = [](ozgemmHandle_t, ozgemmAccuracy_t v) { record("accuracy", v); return OZGEMM_STATUS_SUCCESS; };
  oz.set_slices = [](ozgemmHandle_t, int v) { record("slices", v); return OZGEMM_STATUS_SUCCESS; };
  oz.set_moduli = [](ozgemmHandle_t, int v) { record("moduli", v); return OZGEMM_STATUS_SUCCESS; };
  g_calls.clear();
  const ozgemmStatus_t st = apply(oz, nullptr, s);
  if (status) *status = st;
  std::string r;
  for (const auto& c : g_calls) r += (r.empty() ? "" : " ") + c;
  return r;
}

AccuracySetting parsed(const char* accuracy, const char* scheme) {
  AccuracySetting s;
  parse_accuracy("ACC", accuracy, "SCH", scheme, &s);
  return s;
}

ozgemmCallInfo_t info_of(ozgemmVariant_t variant, ozgemmScheme_t scheme, int slices, int moduli, const char* reason) {
  ozgemmCallInfo_t i{};
  i.variant = variant, i.scheme = scheme, i.slices = slices, i.moduli = moduli;
  std::snprintf(i.reason, sizeof i.reason, "%s", reason);
  return i;
}
}  // namespace

int main() {
  const auto FP64 = OZGEMM_ACCURACY_FP64, FIXED = OZGEMM_ACCURACY_FIXED;
  const auto AUTO = OZGEMM_SCHEME_AUTO, OZ1 = OZGEMM_SCHEME_OZAKI1, OZ2 = OZGEMM_SCHEME_OZAKI2;

  // 1. valid settings
  valid(nullptr, nullptr, FP64, AUTO, 0, "fp64, scheme auto");
  valid("fp64", "auto", FP64, AUTO, 0, "fp64, scheme auto");
  valid("FP64", "OZAKI2", FP64, OZ2, 0, "fp64, scheme ozaki2");
  valid("default", "ozaki1", FP64, OZ1, 0, "fp64, scheme ozaki1");
  valid(nullptr, "Ozaki2", FP64, OZ2, 0, "fp64, scheme ozaki2");
  valid("7", nullptr, FIXED, OZ1, 7, "fixed, Ozaki-I 7 slices");
  valid("1", "ozaki1", FIXED, OZ1, 1, "fixed, Ozaki-I 1 slices");
  valid("slices:20", "auto", FIXED, OZ1, OZGEMM_MAX_SLICES, "fixed, Ozaki-I 20 slices");
  valid("moduli:14", nullptr, FIXED, OZ2, 14, "fixed, Ozaki-II 14 moduli");
  valid("MODULI:2", "ozaki2", FIXED, OZ2, OZGEMM_MIN_MODULI, "fixed, Ozaki-II 2 moduli");
  valid("moduli:20", "auto", FIXED, OZ2, OZGEMM_MAX_MODULI, "fixed, Ozaki-II 20 moduli");

  // 2. invalid settings: the message names the variable and its value
  for (const char* v : {"0", "21", "7x", "-3", "+7", " 7", "7.0", "slices:", "slices:0", "slices:21", "fast",
                        "99999999999999999999", "fp32"})
    invalid(v, nullptr, (std::string("ACC=") + v + " is not fp64").c_str());
  for (const char* v : {"moduli:1", "moduli:21", "moduli:", "moduli:abc", "moduli:-14", "moduli:14x"})
    invalid(v, "auto", (std::string("ACC=") + v + " is not an Ozaki-II moduli count moduli:2..20").c_str());
  invalid(nullptr, "ozaki3", "SCH=ozaki3 is not auto, ozaki1 or ozaki2");
  invalid("fp64", "both", "SCH=both is not auto, ozaki1 or ozaki2");
  invalid("7", "ozaki2", "ACC=7 is an Ozaki-I slice count, but SCH=ozaki2 names the other scheme");
  invalid("slices:5", "OZAKI2", "ACC=slices:5 is an Ozaki-I slice count, but SCH=OZAKI2");
  invalid("moduli:14", "ozaki1", "ACC=moduli:14 is an Ozaki-II moduli count, but SCH=ozaki1 names the other scheme");

  // 3. the environment, as both libraries read it (the BLAS library falls back on the hook's variables)
  {
    setenv("OZGEMM_HOOK_ACCURACY", "moduli:9", 1);
    unsetenv("OZGEMM_HOOK_SCHEME");
    unsetenv("OZGEMM_BLAS_ACCURACY");
    setenv("OZGEMM_BLAS_SCHEME", "ozaki2", 1);
    Settings hook, blas;
    hook.read("test", "OZGEMM_HOOK", nullptr, 1);
    blas.read("test", "OZGEMM_BLAS", "OZGEMM_HOOK", 2);
    CHECK(hook.accuracy_valid && hook.accuracy.text() == "fixed, Ozaki-II 9 moduli", "hook reads %s",
          hook.accuracy.text().c_str());
    CHECK(blas.accuracy_valid && blas.accuracy.text() == "fixed, Ozaki-II 9 moduli" && blas.min_size == 2,
          "blas reads %s (min size %lld)", blas.accuracy.text().c_str(), (long long)blas.min_size);
    setenv("OZGEMM_BLAS_ACCURACY", "5", 1);  // the BLAS library's own variable wins, and conflicts with its scheme
    Settings conflicting;
    std::fprintf(stderr, "(an expected message follows)\n");
    conflicting.read("test", "OZGEMM_BLAS", "OZGEMM_HOOK", 2);
    CHECK(!conflicting.accuracy_valid, "OZGEMM_BLAS_ACCURACY=5 with OZGEMM_BLAS_SCHEME=ozaki2 accepted");
    unsetenv("OZGEMM_BLAS_SCHEME");
    Settings own;
    own.read("test", "OZGEMM_BLAS", "OZGEMM_HOOK", 2);
    CHECK(own.accuracy_valid && own.accuracy.text() == "fixed, Ozaki-I 5 slices", "blas reads %s",
          own.accuracy.text().c_str());
  }

  // 4. apply(): through the C API, scheme first; a count selects FIXED, fp64 sets the accuracy mode
  {
    const std::string fp64 = applied(parsed("fp64", "ozaki2"));
    CHECK(fp64 == "scheme(1) accuracy(0)", "fp64 + ozaki2 applies: %s", fp64.c_str());
    const std::string slices = applied(parsed("7", nullptr));
    CHECK(slices == "scheme(0) slices(7)", "7 applies: %s", slices.c_str());
    const std::string moduli = applied(parsed("moduli:14", nullptr));
    CHECK(moduli == "scheme(1) moduli(14)", "moduli:14 applies: %s", moduli.c_str());
    g_fail_scheme = OZGEMM_STATUS_NOT_SUPPORTED;
    ozgemmStatus_t st = OZGEMM_STATUS_SUCCESS;
    const std::string failed = applied(parsed("moduli:14", nullptr), &st);
    CHECK(st == OZGEMM_STATUS_NOT_SUPPORTED && failed == "scheme(1)", "a failing setter: status %d, calls %s", st,
          failed.c_str());
    g_fail_scheme = OZGEMM_STATUS_SUCCESS;
  }

  // 5. argument checks: reference BLAS's first failing parameter
  CHECK(gemm_argument_error(Op::N, Op::T, 3, 4, 5, 3, 4, 3) == 0, "valid NT rejected");
  CHECK(gemm_argument_error(Op::Invalid, Op::Invalid, -1, 4, 5, 0, 0, 0) == 1, "TRANSA first");
  CHECK(gemm_argument_error(Op::T, Op::N, 3, -1, 5, 5, 5, 3) == 4, "N");
  CHECK(gemm_argument_error(Op::T, Op::N, 3, 4, 5, 4, 5, 3) == 8, "LDA (T: rows k)");
  CHECK(gemm_argument_error(Op::N, Op::C, 3, 4, 5, 3, 3, 3) == 10, "LDB (C: rows n)");
  CHECK(gemm_argument_error(Op::N, Op::N, 0, 0, 0, 1, 1, 1) == 0, "empty with leading dimensions 1");
  CHECK(gemm_argument_error(Op::N, Op::N, 3, 4, 5, 3, 5, 2) == 13, "LDC");
  CHECK(op_of_char('c') == Op::C && op_of_char('x') == Op::Invalid && op_of_cublas(CUBLAS_OP_T) == Op::T &&
            op_of_cublas(7) == Op::Invalid,
        "operation mapping");

  // 6. what ran: Ozaki-II reports moduli with slices 0 and is emulated (an older count-by-slices
  //    would call it native); native keeps ozgemm's reason; variant AUTO is an empty call info.
  {
    const auto oz2 = info_of(OZGEMM_VARIANT_PARTIALLY_FUSED, OZ2, 0, 14, "FP64 mode: Ozaki-II, 14 moduli");
    const auto oz1 = info_of(OZGEMM_VARIANT_FULLY_FUSED, OZ1, 7, 0, "FIXED mode: 7 slices");
    const auto old = info_of(OZGEMM_VARIANT_UNFUSED, OZ1, 6, 0, "");  // a library without scheme/moduli
    const auto nat = info_of(OZGEMM_VARIANT_NATIVE, OZ1, 0, 0, "FP64 mode ran native DGEMM: \"quoted\"\\x");
    const auto empty = info_of(OZGEMM_VARIANT_AUTO, OZ1, 0, 0, "");
    CHECK(ran_of(&oz2) == Ran::Ozaki2 && ran_of(&oz1) == Ran::Ozaki1 && ran_of(&old) == Ran::Ozaki1 &&
              ran_of(&nat) == Ran::Native && ran_of(&empty) == Ran::Unreported && ran_of(nullptr) == Ran::Unreported,
          "ran_of");
    const char* const reasons[] = {"x", nullptr};
    Stats S("test", reasons);
    for (int i = 0; i < 3; ++i) S.record(Element::Real, &oz2);
    S.record(Element::Real, &oz1);
    S.record(Element::Complex, &nat);
    S.record(Element::Real, &nat);
    S.record(Element::Real, nullptr);
    S.intercepted(Element::Complex, gemm_flop(Element::Complex, 2, 3, 4), 5);
    CHECK(S.get("gemms") == 7 && S.get("emulated") == 4 && S.get("emulated:ozaki2") == 3 &&
              S.get("emulated:ozaki1") == 1 && S.get("moduli:14") == 3 && S.get("slices:7") == 1 &&
              S.get("slices:0") == 0 && S.get("ozgemm_native") == 2 && S.get("unreported") == 1,
          "counters: gemms %llu emulated %llu (Ozaki-I %llu, Ozaki-II %llu, moduli:14 %llu) native %llu "
          "unreported %llu",
          (unsigned long long)S.get("gemms"), (unsigned long long)S.get("emulated"),
          (unsigned long long)S.get("emulated:ozaki1"), (unsigned long long)S.get("emulated:ozaki2"),
          (unsigned long long)S.get("moduli:14"), (unsigned long long)S.get("ozgemm_native"),
          (unsigned long long)S.get("unreported"));
    CHECK(S.get("native:FP64 mode ran native DGEMM: \"quoted\"\\x") == 2, "native by reason");
    // by element type: the complex native matrix and call (8mnk flops) in complex:*, the rest in real:*
    CHECK(S.get("complex:gemms") == 1 && S.get("complex:ozgemm_native") == 1 && S.get("complex:emulated") == 0 &&
              S.get("complex:intercepted") == 1 && S.get("complex:flop") == 192 && S.get("real:gemms") == 6 &&
              S.get("real:moduli:14") == 3 && S.get("real:ozgemm_native") == 1 && S.get("real:unreported") == 1 &&
              S.get("real:intercepted") == 0 && S.get("intercepted") == 1 && S.get("flop") == 192 &&
              S.get("complex:nonsense") == 0 && S.get("imaginary:gemms") == 0,
          "counters by element type: complex gemms %llu native %llu flop %llu, real gemms %llu",
          (unsigned long long)S.get("complex:gemms"), (unsigned long long)S.get("complex:ozgemm_native"),
          (unsigned long long)S.get("complex:flop"), (unsigned long long)S.get("real:gemms"));
    const std::string j = S.json();
    for (const char* want : {"\"emulated\": 4", "\"emulated_ozaki1\": 1", "\"emulated_ozaki2\": 3",
                             "\"ozgemm_native\": 2", "\"unreported\": 1", "\"emulated_by_slices\": {\"7\": 1}",
                             "\"emulated_by_moduli\": {\"14\": 3}",
                             "\"native_by_reason\": {\"FP64 mode ran native DGEMM: \\\"quoted\\\"\\\\x\": 2}",
                             "\"by_element\": {\"real\": {\"intercepted\": 0, \"gemms\": 6, \"emulated\": 4",
                             "\"complex\": {\"intercepted\": 1, \"gemms\": 1, \"emulated\": 0, \"emulated_ozaki1\": 0, "
                             "\"emulated_ozaki2\": 0, \"ozgemm_native\": 1, \"unreported\": 0, \"flop\": 192"})
      CHECK(j.find(want) != std::string::npos, "the JSON lacks %s: %s", want, j.c_str());
    char small[8];
    CHECK(S.copy_json(small, sizeof small) == j.size() && std::strlen(small) == 7, "copy_json truncation");
    RunTally t;
    t.add(Ran::Ozaki2, oz2);
    t.add(Ran::Ozaki2, info_of(OZGEMM_VARIANT_PARTIALLY_FUSED, OZ2, 0, 12, ""));
    t.add(Ran::Ozaki1, oz1);
    t.add(Ran::Native, nat);
    CHECK(t.text() == "1 Ozaki-I (7 slices), 2 Ozaki-II (12..14 moduli), 1 native", "tally: %s", t.text().c_str());
    // kMaxNativeReasons distinct reasons are kept; later ones are counted together.
    Stats many;
    for (int i = 0; i < kMaxNativeReasons + 3; ++i) {
      const auto n = info_of(OZGEMM_VARIANT_NATIVE, OZ1, 0, 0, ("reason " + std::to_string(i)).c_str());
      many.record(Element::Real, &n);
    }
    CHECK(many.get("ozgemm_native") == uint64_t(kMaxNativeReasons + 3) && many.get("native:reason 0") == 1 &&
              many.json().find("\"(other reasons)\": 3") != std::string::npos,
          "native reasons past the limit: %s", many.json().c_str());
    many.reset();
    CHECK(many.get("ozgemm_native") == 0 && many.get("native:reason 0") == 0, "reset");
  }

  // cuBLAS itself, for the hook's "cuBLAS's own cuBLASLt calls" and dlsym rules: not cuBLASMp.
  {
    using ozgemm::dropin::hook::is_cublas_file;
    CHECK(is_cublas_file("libcublas.so.13") && is_cublas_file("libcublasLt.so.13") && is_cublas_file("libcublas.so"),
          "cuBLAS's own files");
    CHECK(!is_cublas_file("libcublasmp.so.0") && !is_cublas_file("libcublas_wrapper.so") && !is_cublas_file(nullptr) &&
              !is_cublas_file("libozgemm_hook.so"),
          "other libraries whose names begin with libcublas are not cuBLAS");
  }

  std::printf("%s: dropin common (%d failures)\n", g_bad ? "FAIL" : "OK", g_bad);
  return g_bad ? 1 : 0;
}
