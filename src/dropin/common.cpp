// src/dropin/common.cpp — environment, re-entrancy depth, messages, counters and the lazy loader of
// libozgemm shared by libozgemm_hook.so and libozgemm_blas.so (common.hpp).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dropin/common.hpp"

#include <dlfcn.h>
#include <strings.h>
#include <time.h>

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

int env_accuracy(const char* prefix, const char* name, int fallback) {
  const char* v = env_str(name);
  if (!v) return fallback;
  if (!strcasecmp(v, "fp64") || !strcasecmp(v, "default")) return 0;
  char* end = nullptr;
  const long s = std::strtol(v, &end, 10);
  if (end != v && *end == '\0' && s >= 1 && s <= OZGEMM_MAX_SLICES) return int(s);
  say(prefix, "%s=%s is neither fp64 nor a slice count 1..%d; using %s", name, v, OZGEMM_MAX_SLICES,
      fallback ? "the given slice count" : "fp64");
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

// ---- counters -------------------------------------------------------------------------------------

void Stats::reset() {
  for (auto* c : {&calls, &intercepted, &declined, &failed, &internal, &gemms, &emulated, &ozgemm_native, &flop,
                  &time_ns})
    c->store(0);
  for (auto& r : reasons) r.store(0);
  for (auto& s : slices) s.store(0);
  for (auto& a : per_api) a.store(0);
}

uint64_t Stats::get(const char* name) const {
  if (!name) return 0;
  struct {
    const char* n;
    const std::atomic<uint64_t>* c;
  } fixed[] = {{"calls", &calls},   {"intercepted", &intercepted}, {"declined", &declined},
               {"failed", &failed}, {"internal", &internal},       {"gemms", &gemms},
               {"emulated", &emulated}, {"ozgemm_native", &ozgemm_native}, {"flop", &flop},
               {"time_ns", &time_ns}};
  for (const auto& f : fixed)
    if (!std::strcmp(name, f.n)) return f.c->load();
  if (!std::strcmp(name, "unreported")) return gemms.load() - emulated.load() - ozgemm_native.load();
  if (!std::strncmp(name, "declined:", 9)) {
    for (int i = 0; i < reason_count; ++i)
      if (!std::strcmp(name + 9, reason_names[i])) return reasons[i].load();
    return 0;
  }
  if (!std::strncmp(name, "slices:", 7)) {
    const int s = std::atoi(name + 7);
    return (s >= 0 && s <= OZGEMM_MAX_SLICES) ? slices[s].load() : 0;
  }
  if (!std::strncmp(name, "api:", 4) && api_names) {
    for (int i = 0; i < 16 && api_names[i]; ++i)
      if (!std::strcmp(name + 4, api_names[i])) return per_api[i].load();
  }
  return 0;
}

std::string Stats::json() const {
  std::string j = "{";
  char buf[160];
  auto field = [&](const char* n, uint64_t v) {
    std::snprintf(buf, sizeof buf, "%s\"%s\": %" PRIu64, j.size() > 1 ? ", " : "", n, v);
    j += buf;
  };
  field("calls", calls.load());
  field("intercepted", intercepted.load());
  field("declined", declined.load());
  field("failed", failed.load());
  field("internal", internal.load());
  field("gemms", gemms.load());
  field("emulated", emulated.load());
  field("ozgemm_native", ozgemm_native.load());
  field("unreported", gemms.load() - emulated.load() - ozgemm_native.load());
  field("flop", flop.load());
  field("time_ns", time_ns.load());
  j += ", \"declined_by_reason\": {";
  bool first = true;
  for (int i = 0; i < reason_count; ++i) {
    std::snprintf(buf, sizeof buf, "%s\"%s\": %" PRIu64, first ? "" : ", ", reason_names[i], reasons[i].load());
    j += buf;
    first = false;
  }
  j += "}, \"emulated_by_slices\": {";
  first = true;
  for (int s = 0; s <= OZGEMM_MAX_SLICES; ++s) {
    if (!slices[s].load()) continue;
    std::snprintf(buf, sizeof buf, "%s\"%d\": %" PRIu64, first ? "" : ", ", s, slices[s].load());
    j += buf;
    first = false;
  }
  j += "}, \"calls_by_api\": {";
  first = true;
  for (int i = 0; api_names && i < 16 && api_names[i]; ++i) {
    std::snprintf(buf, sizeof buf, "%s\"%s\": %" PRIu64, first ? "" : ", ", api_names[i], per_api[i].load());
    j += buf;
    first = false;
  }
  j += "}}";
  return j;
}

void Stats::print_summary() const {
  say(prefix,
      "summary: %" PRIu64 " calls, %" PRIu64 " intercepted (%" PRIu64 " matrices: %" PRIu64 " emulated, %" PRIu64
      " native by ozgemm's choice, %" PRIu64 " unreported), %" PRIu64 " declined, %" PRIu64
      " failed and fell back; %.3f s in intercepted calls (host time), %.1f GFLOP",
      calls.load(), intercepted.load(), gemms.load(), emulated.load(), ozgemm_native.load(),
      gemms.load() - emulated.load() - ozgemm_native.load(), declined.load(), failed.load(), time_ns.load() * 1e-9,
      flop.load() * 1e-9);
  std::string r;
  char buf[96];
  for (int i = 0; i < reason_count; ++i) {
    if (!reasons[i].load()) continue;
    std::snprintf(buf, sizeof buf, "%s%s=%" PRIu64, r.empty() ? "" : ", ", reason_names[i], reasons[i].load());
    r += buf;
  }
  if (!r.empty()) say(prefix, "summary: declined by reason: %s", r.c_str());
  std::string s;
  for (int i = 0; i <= OZGEMM_MAX_SLICES; ++i) {
    if (!slices[i].load()) continue;
    std::snprintf(buf, sizeof buf, "%s%d:%" PRIu64, s.empty() ? "" : ", ", i, slices[i].load());
    s += buf;
  }
  if (!s.empty()) say(prefix, "summary: emulated matrices by slice count: %s", s.c_str());
  std::string a;
  for (int i = 0; api_names && i < 16 && api_names[i]; ++i) {
    if (!per_api[i].load()) continue;
    std::snprintf(buf, sizeof buf, "%s%s=%" PRIu64, a.empty() ? "" : ", ", api_names[i], per_api[i].load());
    a += buf;
  }
  if (!a.empty()) say(prefix, "summary: calls by entry point: %s", a.c_str());
  if (internal.load())
    say(prefix, "summary: %" PRIu64 " calls made from inside the drop-in itself were passed straight through",
        internal.load());
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
  sym(lib, "ozgemmDgemm", &api.dgemm, &missing);
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

}  // namespace dropin
}  // namespace ozgemm
