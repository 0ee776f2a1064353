// src/dropin/common.cpp — environment and accuracy settings, GEMM argument checks, re-entrancy depth,
// messages, what ozgemm ran and the counters, and the lazy loader of libozgemm, shared by
// libozgemm_hook.so and libozgemm_blas.so (common.hpp).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dropin/common.hpp"

#include <dlfcn.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

namespace ozgemm {
namespace dropin {

// ---- environment ------------------------------------------------------------------------------

const char* env_str(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

bool env_bool(const char* prefix, const char* name, bool fallback) {
  const char* v = env_str(name);
  if (!v) return fallback;
  if (!strcasecmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "true") || !strcasecmp(v, "yes")) return true;
  if (!strcasecmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcasecmp(v, "no")) return false;
  say(prefix, "%s=%s is not 0/1/on/off; using %d", name, v, fallback ? 1 : 0);
  return fallback;
}

int64_t env_size(const char* prefix, const char* name, int64_t fallback) {
  const char* v = env_str(name);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  if (v[0] == '2' && v[1] == '^') {
    const long e = std::strtol(v + 2, &end, 10);
    if (end != v + 2 && *end == '\0' && e >= 0 && e <= 62) return int64_t(1) << e;
  } else {
    const long long x = std::strtoll(v, &end, 10);
    if (end != v && errno == 0 && x >= 0) {
      int shift = 0;
      if (*end == 'k' || *end == 'K') shift = 10, ++end;
      else if (*end == 'm' || *end == 'M') shift = 20, ++end;
      else if (*end == 'g' || *end == 'G') shift = 30, ++end;
      if (*end == '\0' && (shift == 0 || x < (int64_t(1) << (62 - shift)))) return int64_t(x) << shift;
    }
  }
  say(prefix, "%s=%s is not a non-negative size (e.g. 0, 1048576, 64M, 2^30); using %" PRId64, name, v, fallback);
  return fallback;
}

LogMode env_log(const char* prefix, const char* name) {
  const char* v = env_str(name);
  if (!v || !strcasecmp(v, "none") || !strcmp(v, "0")) return LogMode::None;
  if (!strcasecmp(v, "calls")) return LogMode::Calls;
  if (!strcasecmp(v, "all")) return LogMode::All;
  if (!strcasecmp(v, "summary")) return LogMode::Summary;
  say(prefix, "%s=%s is not none|calls|all|summary; logging nothing", name, v);
  return LogMode::None;
}

// ---- what ozgemm is asked to run ------------------------------------------------------------------------

std::string AccuracySetting::text() const {
  if (mode == OZGEMM_ACCURACY_FP64)
    return std::string("fp64, scheme ") +
           (scheme == OZGEMM_SCHEME_OZAKI1 ? "ozaki1" : scheme == OZGEMM_SCHEME_OZAKI2 ? "ozaki2" : "auto");
  return scheme == OZGEMM_SCHEME_OZAKI2 ? "fixed, Ozaki-II " + std::to_string(count) + " moduli"
                                        : "fixed, Ozaki-I " + std::to_string(count) + " slices";
}

namespace {
// A whole decimal number (digits only) in [lo, hi], or -1.
int parse_count(const char* v, int lo, int hi) {
  if (!std::isdigit(static_cast<unsigned char>(*v))) return -1;
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  return (end != v && *end == '\0' && errno == 0 && x >= lo && x <= hi) ? int(x) : -1;
}
}  // namespace

std::string parse_accuracy(const char* accuracy_name, const char* accuracy, const char* scheme_name,
                           const char* scheme, AccuracySetting* out) {
  const std::string acc = accuracy ? std::string(accuracy_name) + "=" + accuracy : std::string();
  AccuracySetting r;
  bool scheme_named = false;  // the scheme variable names one scheme (not auto)
  if (scheme && strcasecmp(scheme, "auto") != 0) {
    scheme_named = true;
    if (!strcasecmp(scheme, "ozaki1")) {
      r.scheme = OZGEMM_SCHEME_OZAKI1;
    } else if (!strcasecmp(scheme, "ozaki2")) {
      r.scheme = OZGEMM_SCHEME_OZAKI2;
    } else {
      return std::string(scheme_name) + "=" + scheme + " is not auto, ozaki1 or ozaki2";
    }
  }
  if (accuracy && strcasecmp(accuracy, "fp64") != 0 && strcasecmp(accuracy, "default") != 0) {
    const bool moduli = !strncasecmp(accuracy, "moduli:", 7), slices = !strncasecmp(accuracy, "slices:", 7);
    const ozgemmScheme_t of = moduli ? OZGEMM_SCHEME_OZAKI2 : OZGEMM_SCHEME_OZAKI1;  // the count's scheme
    const int count = moduli ? parse_count(accuracy + 7, OZGEMM_MIN_MODULI, OZGEMM_MAX_MODULI)
                             : parse_count(accuracy + (slices ? 7 : 0), 1, OZGEMM_MAX_SLICES);
    char why[160];
    if (count < 0) {
      if (moduli)
        std::snprintf(why, sizeof why, " is not an Ozaki-II moduli count moduli:%d..%d", OZGEMM_MIN_MODULI,
                      OZGEMM_MAX_MODULI);
      else
        std::snprintf(why, sizeof why, " is not fp64, an Ozaki-I slice count 1..%d (or slices:<s>) or moduli:<n>",
                      OZGEMM_MAX_SLICES);
      return acc + why;
    }
    if (scheme_named && r.scheme != of)
      return acc + (moduli ? " is an Ozaki-II moduli count" : " is an Ozaki-I slice count") + ", but " +
             scheme_name + "=" + scheme + " names the other scheme";
    r.mode = OZGEMM_ACCURACY_FIXED;
    r.scheme = of;
    r.count = count;
  }
  *out = r;
  return "";
}

bool env_accuracy(const char* prefix, const char* accuracy_var, const char* scheme_var, AccuracySetting* out) {
  const std::string error =
      parse_accuracy(accuracy_var, env_str(accuracy_var), scheme_var, env_str(scheme_var), out);
  if (error.empty()) return true;
  say(prefix, "%s; every GEMM call is forwarded unchanged", error.c_str());
  return false;
}

void Settings::read(const char* prefix, const std::string& var, const char* fallback_var, int64_t default_min_size) {
  // <var>_<suffix> when set, else <fallback_var>_<suffix>
  auto name = [&](const char* suffix) {
    const std::string own = var + suffix;
    return (env_str(own.c_str()) || !fallback_var) ? own : std::string(fallback_var) + suffix;
  };
  enabled = env_bool(prefix, var.c_str(), true);
  accuracy_valid = env_accuracy(prefix, name("_ACCURACY").c_str(), name("_SCHEME").c_str(), &accuracy);
  min_size = env_size(prefix, (var + "_MIN_SIZE").c_str(), default_min_size);
  log = env_log(prefix, (var + "_LOG").c_str());
  if (const char* f = env_str((var + "_STATS").c_str())) stats_file = f;
}

int Settings::set_enabled(int on) {
  const bool prev = enabled.load();
  if (on >= 0) enabled.store(on != 0);
  return prev ? 1 : 0;
}

// ---- GEMM arguments -----------------------------------------------------------------------------------

Op op_of_char(char c) {
  switch (c) {
    case 'N': case 'n': return Op::N;
    case 'T': case 't': return Op::T;
    case 'C': case 'c': return Op::C;
    default: return Op::Invalid;
  }
}

Op op_of_cublas(int op) {
  switch (op) {
    case CUBLAS_OP_N: return Op::N;
    case CUBLAS_OP_T: return Op::T;
    case CUBLAS_OP_C: return Op::C;
    default: return Op::Invalid;
  }
}

int gemm_argument_error(Op ta, Op tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  if (ta == Op::Invalid) return 1;
  if (tb == Op::Invalid) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max<int64_t>(1, rows_a(ta, m, k))) return 8;
  if (ldb < std::max<int64_t>(1, rows_b(tb, k, n))) return 10;
  if (ldc < std::max<int64_t>(1, m)) return 13;
  return 0;
}

// ---- re-entrancy ----------------------------------------------------------------------------------

int& depth() {
  static thread_local int d = 0;
  return d;
}

// ---- messages ---------------------------------------------------------------------------------------

namespace {
void vsay(const char* prefix, const char* fmt, va_list ap) {
  char line[1024];
  int n = std::snprintf(line, sizeof line, "%s: ", prefix);
  if (n < 0) return;
  if (n < int(sizeof line)) std::vsnprintf(line + n, sizeof line - n, fmt, ap);
  // One fputs per line so that lines from several threads do not interleave.
  std::string s(line);
  s += '\n';
  std::fputs(s.c_str(), stderr);
  std::fflush(stderr);
}
}  // namespace

void say(const char* prefix, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(prefix, fmt, ap);
  va_end(ap);
}

void say_once(const char* prefix, const char* key, const char* fmt, ...) {
  static std::mutex mu;
  static std::set<std::string>* seen = new std::set<std::string>();  // never destroyed (used at exit)
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen->insert(key).second) return;
  }
  va_list ap;
  va_start(ap, fmt);
  vsay(prefix, fmt, ap);
  va_end(ap);
}

// ---- what ozgemm ran ------------------------------------------------------------------------------------

Ran ran_of(const ozgemmCallInfo_t* info) {
  if (!info) return Ran::Unreported;
  if (info->variant == OZGEMM_VARIANT_NATIVE) return Ran::Native;
  // Ozaki-II reports its moduli with slices 0; Ozaki-I its slices (an older libozgemm leaves
  // scheme and moduli 0, which reads as Ozaki-I). An emulated variant with no count, or variant
  // AUTO, is a call info that was not filled in.
  if (info->variant == OZGEMM_VARIANT_AUTO) return Ran::Unreported;
  if (info->scheme == OZGEMM_SCHEME_OZAKI2 && info->moduli > 0) return Ran::Ozaki2;
  if (info->slices > 0) return Ran::Ozaki1;
  return Ran::Unreported;
}

namespace {
// [*lo, *hi] widened to hold count; the first count (none seen before) sets both.
void widen(int count, uint64_t seen_before, int* lo, int* hi) {
  if (!seen_before || count < *lo) *lo = count;
  if (!seen_before || count > *hi) *hi = count;
}
// "7" or "7..9"
std::string range(int lo, int hi) {
  return hi > lo ? std::to_string(lo) + ".." + std::to_string(hi) : std::to_string(lo);
}
}  // namespace

void RunTally::add(Ran ran, const ozgemmCallInfo_t& info) {
  switch (ran) {
    case Ran::Ozaki1: widen(info.slices, ozaki1++, &slices_lo, &slices_hi); break;
    case Ran::Ozaki2: widen(info.moduli, ozaki2++, &moduli_lo, &moduli_hi); break;
    case Ran::Native: ++native; break;
    case Ran::Unreported: ++unreported; break;
  }
}

std::string RunTally::text() const {
  std::string t;
  if (ozaki1) t += std::to_string(ozaki1) + " Ozaki-I (" + range(slices_lo, slices_hi) + " slices), ";
  if (ozaki2) t += std::to_string(ozaki2) + " Ozaki-II (" + range(moduli_lo, moduli_hi) + " moduli), ";
  t += std::to_string(native) + " native";
  if (unreported) t += ", " + std::to_string(unreported) + " unreported";
  return t;
}

// ---- counters -------------------------------------------------------------------------------------

namespace {
int count_names(const char* const* names) {
  int n = 0;
  while (names && names[n]) ++n;
  return n;
}
}  // namespace

const char* element_name(Element e) { return e == Element::Complex ? "complex" : "real"; }

Stats::Stats(const char* prefix_, const char* const* reason_names_, const char* const* api_names_)
    : prefix(prefix_), reason_names(reason_names_), reason_count(count_names(reason_names_)), api_names(api_names_) {}

void Outcomes::add(Ran ran, const ozgemmCallInfo_t* info) {
  gemms.fetch_add(1, std::memory_order_relaxed);
  switch (ran) {
    case Ran::Ozaki1:
      ozaki1.fetch_add(1, std::memory_order_relaxed);
      if (info->slices <= OZGEMM_MAX_SLICES) slices[info->slices].fetch_add(1, std::memory_order_relaxed);
      break;
    case Ran::Ozaki2:
      ozaki2.fetch_add(1, std::memory_order_relaxed);
      if (info->moduli <= OZGEMM_MAX_MODULI) moduli[info->moduli].fetch_add(1, std::memory_order_relaxed);
      break;
    case Ran::Native: ozgemm_native.fetch_add(1, std::memory_order_relaxed); break;
    case Ran::Unreported: break;
  }
}

void Outcomes::reset() {
  for (auto* c : {&intercepted, &gemms, &ozaki1, &ozaki2, &ozgemm_native, &flop, &time_ns}) c->store(0);
  for (auto& s : slices) s.store(0);
  for (auto& s : moduli) s.store(0);
}

Ran Stats::record(Element e, const ozgemmCallInfo_t* info) {
  const Ran ran = ran_of(info);
  all.add(ran, info);
  by_element[int(e)].add(ran, info);
  if (ran == Ran::Native) {
    const std::string why(info->reason, strnlen(info->reason, sizeof info->reason));
    std::lock_guard<std::mutex> lock(native_mu);
    const auto it =
        std::find_if(native_reasons.begin(), native_reasons.end(), [&](const auto& r) { return r.first == why; });
    if (it != native_reasons.end())
      ++it->second;
    else if (int(native_reasons.size()) < kMaxNativeReasons)
      native_reasons.emplace_back(why, 1);
    else
      ++native_other;
  }
  return ran;
}

void Stats::intercepted(Element e, double flop, uint64_t ns) {
  for (Outcomes* o : {&all, &by_element[int(e)]}) {
    o->intercepted.fetch_add(1, std::memory_order_relaxed);
    o->flop.fetch_add(uint64_t(flop), std::memory_order_relaxed);
    o->time_ns.fetch_add(ns, std::memory_order_relaxed);
  }
}

void Stats::reset() {
  for (auto* c : {&calls, &declined, &failed, &internal, &dlsym_redirects}) c->store(0);
  for (auto& r : reasons) r.store(0);
  for (auto& a : per_api) a.store(0);
  all.reset();
  for (auto& o : by_element) o.reset();
  std::lock_guard<std::mutex> lock(native_mu);
  native_reasons.clear();
  native_other = 0;
}

namespace {
// For a `name` of the form `prefix<key>`: true, with *out the value(i) of the names(i) equal to key
// (0 when none); names end at the first nullptr or at `count`. False for other names.
template <typename Names, typename Value>
bool lookup(const char* name, const char* prefix, int count, Names names, Value value, uint64_t* out) {
  const size_t p = std::strlen(prefix);
  if (std::strncmp(name, prefix, p) != 0) return false;
  *out = 0;
  for (int i = 0; i < count && names(i); ++i)
    if (!std::strcmp(name + p, names(i))) *out = value(i);
  return true;
}

std::string json_string(const std::string& s) {
  std::string j = "\"";
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      j += '\\';
      j += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      j += buf;
    } else {
      j += ch;
    }
  }
  return j + "\"";
}

// Appends `item` to a list separated by ", ".
void append(std::string& list, const std::string& item) { list += (list.empty() ? "" : ", ") + item; }

// A JSON member: "key": value (value already JSON).
std::string member(const std::string& key, const std::string& value) { return json_string(key) + ": " + value; }

// {"<count>": matrices, ...} of the non-zero entries of counts[lo..hi].
std::string json_by_count(const std::atomic<uint64_t>* counts, int lo, int hi) {
  std::string j;
  for (int i = lo; i <= hi; ++i)
    if (const uint64_t v = counts[i].load()) append(j, member(std::to_string(i), std::to_string(v)));
  return "{" + j + "}";
}

// "7 slices: 40, 8 slices: 2" of the non-zero entries of counts[lo..hi].
std::string text_by_count(const std::atomic<uint64_t>* counts, int lo, int hi, const char* unit) {
  std::string t;
  for (int i = lo; i <= hi; ++i)
    if (const uint64_t v = counts[i].load()) append(t, std::to_string(i) + " " + unit + ": " + std::to_string(v));
  return t;
}
}  // namespace

bool Outcomes::get(const char* name, uint64_t* out) const {
  const struct {
    const char* n;
    uint64_t v;
  } fixed[] = {{"intercepted", intercepted.load()},     {"gemms", gemms.load()},
               {"emulated", emulated()},                {"emulated:ozaki1", ozaki1.load()},
               {"emulated:ozaki2", ozaki2.load()},      {"ozgemm_native", ozgemm_native.load()},
               {"unreported", unreported()},            {"flop", flop.load()},
               {"time_ns", time_ns.load()}};
  for (const auto& f : fixed)
    if (!std::strcmp(name, f.n)) return *out = f.v, true;
  if (!std::strncmp(name, "slices:", 7)) {
    const int s = std::atoi(name + 7);
    *out = (s >= 0 && s <= OZGEMM_MAX_SLICES) ? slices[s].load() : 0;
    return true;
  }
  if (!std::strncmp(name, "moduli:", 7)) {
    const int n = std::atoi(name + 7);
    *out = (n >= 0 && n <= OZGEMM_MAX_MODULI) ? moduli[n].load() : 0;
    return true;
  }
  return false;
}

std::string Outcomes::json_members() const {
  std::string j;
  const auto field = [&](const char* name, uint64_t v) { append(j, member(name, std::to_string(v))); };
  field("intercepted", intercepted.load());
  field("gemms", gemms.load());
  field("emulated", emulated());
  field("emulated_ozaki1", ozaki1.load());
  field("emulated_ozaki2", ozaki2.load());
  field("ozgemm_native", ozgemm_native.load());
  field("unreported", unreported());
  field("flop", flop.load());
  field("time_ns", time_ns.load());
  append(j, member("emulated_by_slices", json_by_count(slices, 1, OZGEMM_MAX_SLICES)));
  append(j, member("emulated_by_moduli", json_by_count(moduli, OZGEMM_MIN_MODULI, OZGEMM_MAX_MODULI)));
  return j;
}

std::string Outcomes::text() const {
  std::string t = std::to_string(gemms.load()) + " matrices: " + std::to_string(emulated()) + " emulated";
  std::string by;
  if (ozaki1.load())
    append(by, "Ozaki-I " + text_by_count(slices, 1, OZGEMM_MAX_SLICES, "slices"));
  if (ozaki2.load())
    append(by, "Ozaki-II " + text_by_count(moduli, OZGEMM_MIN_MODULI, OZGEMM_MAX_MODULI, "moduli"));
  if (!by.empty()) t += " (" + by + ")";
  return t + ", " + std::to_string(ozgemm_native.load()) + " native by ozgemm's choice, " +
         std::to_string(unreported()) + " unreported";
}

uint64_t Stats::get(const char* name) const {
  if (!name) return 0;
  const struct {
    const char* n;
    uint64_t v;
  } fixed[] = {{"calls", calls.load()}, {"declined", declined.load()}, {"failed", failed.load()},
               {"internal", internal.load()}, {"dlsym-redirects", dlsym_redirects.load()}};
  for (const auto& f : fixed)
    if (!std::strcmp(name, f.n)) return f.v;
  uint64_t v = 0;
  if (all.get(name, &v)) return v;
  for (int e = 0; e < kElements; ++e) {
    const char* type = element_name(Element(e));
    const size_t len = std::strlen(type);
    if (!std::strncmp(name, type, len) && name[len] == ':') return by_element[e].get(name + len + 1, &v) ? v : 0;
  }
  if (lookup(name, "declined:", reason_count, [&](int i) { return reason_names[i]; },
             [&](int i) { return reasons[i].load(); }, &v))
    return v;
  if (lookup(name, "api:", kMaxApis, [&](int i) { return api_names ? api_names[i] : nullptr; },
             [&](int i) { return per_api[i].load(); }, &v))
    return v;
  if (!std::strncmp(name, "native:", 7)) {
    std::lock_guard<std::mutex> lock(native_mu);
    for (const auto& r : native_reasons)
      if (r.first == name + 7) return r.second;
  }
  return 0;
}

std::string Stats::json() const {
  std::string j;
  const auto field = [&](const char* name, uint64_t v) { append(j, member(name, std::to_string(v))); };
  field("calls", calls.load());
  field("declined", declined.load());
  field("failed", failed.load());
  field("internal", internal.load());
  field("dlsym-redirects", dlsym_redirects.load());
  append(j, all.json_members());
  std::string r;
  for (int i = 0; i < reason_count; ++i) append(r, member(reason_names[i], std::to_string(reasons[i].load())));
  append(j, member("declined_by_reason", "{" + r + "}"));
  std::string n;
  {
    std::lock_guard<std::mutex> lock(native_mu);
    for (const auto& x : native_reasons) append(n, member(x.first, std::to_string(x.second)));
    if (native_other) append(n, member("(other reasons)", std::to_string(native_other)));
  }
  append(j, member("native_by_reason", "{" + n + "}"));
  std::string a;
  for (int i = 0; api_names && i < kMaxApis && api_names[i]; ++i)
    append(a, member(api_names[i], std::to_string(per_api[i].load())));
  append(j, member("calls_by_api", "{" + a + "}"));
  std::string e;
  for (int i = 0; i < kElements; ++i)
    append(e, member(element_name(Element(i)), "{" + by_element[i].json_members() + "}"));
  append(j, member("by_element", "{" + e + "}"));
  return "{" + j + "}";
}

size_t Stats::copy_json(char* buf, size_t len) const {
  const std::string j = json();
  if (buf && len) {
    const size_t n = std::min(len - 1, j.size());
    std::memcpy(buf, j.data(), n);
    buf[n] = '\0';
  }
  return j.size();
}

void Stats::print_summary() const {
  say(prefix,
      "summary: %" PRIu64 " calls, %" PRIu64 " intercepted (%" PRIu64 " matrices: %" PRIu64 " emulated, %" PRIu64
      " native by ozgemm's choice, %" PRIu64 " unreported), %" PRIu64 " declined, %" PRIu64
      " failed and fell back; %.3f s in intercepted calls (host time), %.1f GFLOP",
      calls.load(), all.intercepted.load(), all.gemms.load(), all.emulated(), all.ozgemm_native.load(),
      all.unreported(), declined.load(), failed.load(), all.time_ns.load() * 1e-9, all.flop.load() * 1e-9);
  std::string r;
  for (int i = 0; i < reason_count; ++i)
    if (const uint64_t v = reasons[i].load()) append(r, std::string(reason_names[i]) + "=" + std::to_string(v));
  if (!r.empty()) say(prefix, "summary: declined by reason: %s", r.c_str());
  if (all.ozaki1.load())
    say(prefix, "summary: emulated with Ozaki-I: %" PRIu64 " matrices (%s)", all.ozaki1.load(),
        text_by_count(all.slices, 1, OZGEMM_MAX_SLICES, "slices").c_str());
  if (all.ozaki2.load())
    say(prefix, "summary: emulated with Ozaki-II: %" PRIu64 " matrices (%s)", all.ozaki2.load(),
        text_by_count(all.moduli, OZGEMM_MIN_MODULI, OZGEMM_MAX_MODULI, "moduli").c_str());
  {
    std::lock_guard<std::mutex> lock(native_mu);
    for (const auto& x : native_reasons)
      say(prefix, "summary: native by ozgemm's choice: %" PRIu64 " matrices [%s]", x.second, x.first.c_str());
    if (native_other)
      say(prefix, "summary: native by ozgemm's choice: %" PRIu64 " matrices [other reasons]", native_other);
  }
  for (int i = 0; i < kElements; ++i) {
    const Outcomes& o = by_element[i];
    if (o.intercepted.load())
      say(prefix, "summary: %s: %" PRIu64 " calls, %s; %.3f s, %.1f GFLOP", element_name(Element(i)),
          o.intercepted.load(), o.text().c_str(), o.time_ns.load() * 1e-9, o.flop.load() * 1e-9);
  }
  std::string a;
  for (int i = 0; api_names && i < kMaxApis && api_names[i]; ++i)
    if (const uint64_t v = per_api[i].load()) append(a, std::string(api_names[i]) + "=" + std::to_string(v));
  if (!a.empty()) say(prefix, "summary: calls by entry point: %s", a.c_str());
  if (internal.load())
    say(prefix, "summary: %" PRIu64 " calls made from inside the drop-in itself were passed straight through",
        internal.load());
  if (dlsym_redirects.load())
    say(prefix, "summary: %" PRIu64 " dlsym lookups of cuBLAS functions on a library handle were answered with the hook's own",
        dlsym_redirects.load());
}

void Stats::report_at_exit(const Settings& settings) const {
  if (settings.log == LogMode::Summary || settings.log == LogMode::All) print_summary();
  if (settings.stats_file.empty()) return;
  std::string path = settings.stats_file;
  const size_t p = path.find("%p");
  if (p != std::string::npos) path.replace(p, 2, std::to_string(getpid()));
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fprintf(f, "%s\n", json().c_str());
    std::fclose(f);
  } else {
    say(prefix, "cannot write the stats file %s", path.c_str());
  }
}

// ---- libozgemm and the CUDA runtime ------------------------------------------------------------------

std::string object_path(const void* addr) {
  Dl_info info;
  if (!dladdr(addr, &info) || !info.dli_fname) return "";
  return info.dli_fname;
}

std::string object_dir(const void* addr) {
  std::string p = object_path(addr);
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

namespace {

template <typename F>
bool sym(void* lib, const char* name, F* fn, std::string* missing) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!*fn) *missing += std::string(missing->empty() ? "" : " ") + name;
  return *fn != nullptr;
}

OzApi load(const void* self) {
  OzApi api;
  DepthGuard guard;  // libozgemm's constructors must not come back into the drop-in
  std::string tried;
  void* lib = nullptr;
  auto attempt = [&](const std::string& p) {
    if (lib || p.empty()) return;
    lib = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      api.path = p;
    } else {
      const char* e = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(e ? e : p.c_str());
    }
  };
  if (const char* p = env_str("OZGEMM_LIBRARY")) {
    attempt(p);
  } else {
    const std::string dir = object_dir(self);
    if (!dir.empty()) attempt(dir + "/libozgemm.so.0");
    attempt("libozgemm.so.0");
    attempt("libozgemm.so");
  }
  if (!lib) {
    api.error = "libozgemm could not be loaded (" + tried + "); set OZGEMM_LIBRARY";
    return api;
  }
  std::string missing;
  sym(lib, "ozgemmCreate", &api.create, &missing);
  sym(lib, "ozgemmDestroy", &api.destroy, &missing);
  sym(lib, "ozgemmSetStream", &api.set_stream, &missing);
  sym(lib, "ozgemmSetSlices", &api.set_slices, &missing);
  sym(lib, "ozgemmSetModuli", &api.set_moduli, &missing);
  sym(lib, "ozgemmSetScheme", &api.set_scheme, &missing);
  sym(lib, "ozgemmSetAccuracy", &api.set_accuracy, &missing);
  sym(lib, "ozgemmDgemm", &api.dgemm, &missing);
  api.zgemm = reinterpret_cast<decltype(api.zgemm)>(dlsym(lib, "ozgemmZgemm"));  // optional
  api.dsyrk = reinterpret_cast<decltype(api.dsyrk)>(dlsym(lib, "ozgemmDsyrk"));     // optional, the four
  api.dsyr2k = reinterpret_cast<decltype(api.dsyr2k)>(dlsym(lib, "ozgemmDsyr2k"));
  api.dsyrkx = reinterpret_cast<decltype(api.dsyrkx)>(dlsym(lib, "ozgemmDsyrkx"));
  api.dsymm = reinterpret_cast<decltype(api.dsymm)>(dlsym(lib, "ozgemmDsymm"));
  sym(lib, "ozgemmGetStatusString", &api.status_string, &missing);
  sym(lib, "ozgemmGetVariantString", &api.variant_string, &missing);
  // Optional: older libraries lack it; the log then has no variant/slice details.
  api.get_last_call_info =
      reinterpret_cast<decltype(api.get_last_call_info)>(dlsym(lib, "ozgemmGetLastCallInfo"));
  if (!missing.empty()) {
    api.error = api.path + " lacks " + missing;
    return api;
  }
  // The CUDA runtime libozgemm links (dlsym on its handle searches its dependencies). A libozgemm
  // with the runtime linked statically (OZGEMM_CUDART_STATIC) hides it: then a shared libcudart
  // (streams and devices are the driver's, so the two runtimes agree on them).
  void* rt = lib;
  if (!dlsym(lib, "cudaStreamIsCapturing")) {
    rt = nullptr;
    for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so"})
      if (!rt) rt = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!rt) {
      api.error = api.path + " exports no CUDA runtime and no libcudart.so could be loaded";
      return api;
    }
  }
  lib = rt;
  sym(lib, "cudaGetDevice", &api.get_device, &missing);
  sym(lib, "cudaSetDevice", &api.set_device, &missing);
  sym(lib, "cudaGetDeviceCount", &api.get_device_count, &missing);
  sym(lib, "cudaStreamIsCapturing", &api.stream_is_capturing, &missing);
  sym(lib, "cudaMemcpyAsync", &api.memcpy_async, &missing);
  sym(lib, "cudaMemcpy2DAsync", &api.memcpy2d_async, &missing);
  sym(lib, "cudaStreamSynchronize", &api.stream_synchronize, &missing);
  sym(lib, "cudaStreamCreateWithFlags", &api.stream_create, &missing);
  sym(lib, "cudaMalloc", &api.malloc, &missing);
  sym(lib, "cudaFree", &api.free, &missing);
  sym(lib, "cudaMallocHost", &api.malloc_host, &missing);
  sym(lib, "cudaFreeHost", &api.free_host, &missing);
  sym(lib, "cudaEventCreateWithFlags", &api.event_create, &missing);
  sym(lib, "cudaEventRecord", &api.event_record, &missing);
  sym(lib, "cudaEventSynchronize", &api.event_synchronize, &missing);
  sym(lib, "cudaGetLastError", &api.get_last_error, &missing);
  sym(lib, "cudaGetErrorString", &api.get_error_string, &missing);
  if (!missing.empty()) {
    api.error = api.path + " lacks " + missing;
    return api;
  }
  api.ok = true;
  return api;
}

}  // namespace

const OzApi& oz_api(const void* self) {
  static std::once_flag once;
  static OzApi* api = nullptr;  // never destroyed: used until the process ends
  std::call_once(once, [&] { api = new OzApi(load(self)); });
  return *api;
}

const ozgemmCallInfo_t* last_call_info(const OzApi& oz, ozgemmHandle_t h, ozgemmCallInfo_t* info) {
  *info = ozgemmCallInfo_t{};
  return oz.get_last_call_info && oz.get_last_call_info(h, info) == OZGEMM_STATUS_SUCCESS ? info : nullptr;
}

ozgemmStatus_t apply(const OzApi& oz, ozgemmHandle_t h, const AccuracySetting& setting) {
  ozgemmStatus_t s = oz.set_scheme(h, setting.scheme);
  if (s != OZGEMM_STATUS_SUCCESS) return s;
  if (setting.mode == OZGEMM_ACCURACY_FP64) return oz.set_accuracy(h, OZGEMM_ACCURACY_FP64);
  // A count > 0 selects FIXED mode (ozgemm.h).
  return setting.scheme == OZGEMM_SCHEME_OZAKI2 ? oz.set_moduli(h, setting.count) : oz.set_slices(h, setting.count);
}

std::string describe_run(const OzApi& oz, Ran ran, const ozgemmCallInfo_t& info, Element e) {
  const bool complex = e == Element::Complex;
  switch (ran) {
    case Ran::Ozaki1:
      return std::string(oz.variant_string(info.variant)) + ", Ozaki-I " + std::to_string(info.slices) + " slices";
    case Ran::Ozaki2:
      return std::string(oz.variant_string(info.variant)) + (complex ? ", complex Ozaki-II " : ", Ozaki-II ") +
             std::to_string(info.moduli) + " moduli";
    case Ran::Native:
      return std::string(complex ? "native ZGEMM" : "native DGEMM") + (info.fell_back ? " (FP64 fallback)" : "");
    case Ran::Unreported: break;
  }
  return "no call info";
}

}  // namespace dropin
}  // namespace ozgemm
