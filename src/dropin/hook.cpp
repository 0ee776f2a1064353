// src/dropin/hook.cpp — libozgemm_hook.so: an LD_PRELOAD interposer that runs the FP64 GEMMs of
// cuBLAS (cublasDgemm_v2, cublasGemmEx for FP64, the batched and _64 forms) through ozgemm and
// forwards everything else, and every call it declines, to the real cuBLAS. docs/dropin.md has the
// rules; hook_legacy.cpp has the legacy (cublas.h) entry points.
//
// Design points:
//  * no DT_NEEDED on CUDA: libozgemm (and through it cudart) is dlopen'ed at the first call the hook
//    wants to take; until then, and when that fails, the hook only forwards;
//  * the real function is the one the *caller's* object links (real_for), so a process holding two
//    cuBLAS copies (or one that cuBLAS reached only through an RTLD_LOCAL dlopen, as Python
//    extensions do) forwards to the right one;
//  * libozgemm calls cublasDgemm_v2/cublasDestroy_v2 itself (its native path, its own handle); those
//    calls reach this hook too (global scope first) and pass straight through: a thread-local depth
//    counter is raised around everything the hook calls in libozgemm;
//  * nothing here synchronises or allocates on a stream that is being captured into a CUDA graph:
//    the capture check comes before any other CUDA call, and capturing calls go to cuBLAS.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dropin/common.hpp"
#include "dropin/hook_core.hpp"

namespace ozgemm {
namespace dropin {
namespace hook {

namespace {

constexpr const char* kPrefix = "ozgemm-hook";

// Decline reasons (Stats::reasons indices; names in kReasonNames, the same order).
enum Reason {
  kDisabled,
  kNotFp64,          // an Ex call with other types or another compute type
  kPedanticMath,     // CUBLAS_PEDANTIC_MATH or CUBLAS_COMPUTE_64F_PEDANTIC
  kCublasEmulation,  // CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH or CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT
  kInvalidArgs,      // cuBLAS reports the error itself
  kEmpty,            // m, n, k or batch 0 (k == 0: C = beta C, done by cuBLAS)
  kAlphaZero,
  kTooLarge,         // a _64 call past INT_MAX
  kBelowMinSize,
  kBatchTooLarge,
  kOverlappingC,     // strided batch whose C matrices overlap
  kHandleQuery,      // cublasGetStream/PointerMode/MathMode failed (e.g. invalid handle)
  kGraphCapture,
  kOzgemmUnavailable,
  kDeviceMismatch,
  kScalarRead,       // device-pointer-mode alpha/beta could not be read
  kPointerArrayRead, // batched pointer arrays could not be read
  kLegacyNotInit,
  kCudaError,        // the CUDA runtime failed on the stream query (e.g. no usable device)
  kFailed,           // ozgemm returned an error; cuBLAS ran the call (or its rest)
  kReasonCount
};
const char* const kReasonNames[] = {
    "disabled",  "not-fp64",        "pedantic-math",       "cublas-fp64-emulation", "invalid-args",
    "empty",     "alpha-zero",      "too-large-for-int32", "below-min-size",        "batch-too-large",
    "overlapping-c", "handle-query-failed", "graph-capture", "ozgemm-unavailable", "device-mismatch",
    "scalar-read-failed", "pointer-array-read-failed", "legacy-not-initialised", "cuda-error", "ozgemm-failed",
    nullptr};
static_assert(sizeof(kReasonNames) / sizeof(kReasonNames[0]) == kReasonCount + 1, "reason names");

const char* const kApiNames[] = {"cublasDgemm_v2",
                                 "cublasDgemm_v2_64",
                                 "cublasGemmEx",
                                 "cublasGemmEx_64",
                                 "cublasDgemmStridedBatched",
                                 "cublasDgemmStridedBatched_64",
                                 "cublasDgemmBatched",
                                 "cublasDgemmBatched_64",
                                 "cublasGemmStridedBatchedEx",
                                 "cublasGemmStridedBatchedEx_64",
                                 "cublasGemmBatchedEx",
                                 "cublasGemmBatchedEx_64",
                                 "cublasDgemm",
                                 nullptr};
static_assert(sizeof(kApiNames) / sizeof(kApiNames[0]) == int(Api::Count) + 1, "api names");

Stats& stats() {
  static Stats* s = [] {
    auto* st = new Stats();  // never destroyed: read by the exit report
    st->prefix = kPrefix;
    st->reason_names = kReasonNames;
    st->reason_count = kReasonCount;
    st->api_names = kApiNames;
    return st;
  }();
  return *s;
}

struct Config {
  std::atomic<bool> enabled{true};
  int slices = 0;                   // 0: FP64 accuracy mode; else FIXED with this count
  int64_t min_size = int64_t(1) << 30;
  int64_t max_batch = 1024;         // 0: no limit
  LogMode log = LogMode::None;
  std::string stats_file;
};

Config& config() {
  static Config* c = [] {
    auto* cfg = new Config();  // never destroyed
    cfg->enabled = env_bool(kPrefix, "OZGEMM_HOOK", true);
    cfg->slices = env_accuracy(kPrefix, "OZGEMM_HOOK_ACCURACY", 0);
    cfg->min_size = env_size(kPrefix, "OZGEMM_HOOK_MIN_SIZE", cfg->min_size);
    cfg->max_batch = env_size(kPrefix, "OZGEMM_HOOK_MAX_BATCH", cfg->max_batch);
    cfg->log = env_log(kPrefix, "OZGEMM_HOOK_LOG");
    if (const char* f = env_str("OZGEMM_HOOK_STATS")) cfg->stats_file = f;
    return cfg;
  }();
  return *c;
}

// An address inside this library (for dladdr).
const void* self_address() { return reinterpret_cast<const void*>(&self_address); }
const void* self_base() {
  static const void* base = [] {
    Dl_info info;
    return dladdr(self_address(), &info) ? info.dli_fbase : nullptr;
  }();
  return base;
}
bool is_self(const void* fn) {
  Dl_info info;
  return fn && dladdr(fn, &info) && info.dli_fbase == self_base();
}

// ---- the real cuBLAS ------------------------------------------------------------------------------

template <typename F>
void load_sym(void* lib, const char* name, F* fn) {
  void* p = dlsym(lib, name);
  *fn = (p && !is_self(p)) ? reinterpret_cast<F>(p) : nullptr;
}

struct Site {
  const Real* real;
  bool from_ozgemm;
};
struct Resolver {
  std::mutex mu;
  std::unordered_map<const void*, Site> by_site;  // call site -> cuBLAS
  std::map<std::string, Real*> by_path;                  // cuBLAS file -> its functions (never freed)
  const Real* fallback = nullptr;
  Real none;  // no cuBLAS found: every pointer null
};
Resolver& resolver() {
  static Resolver* r = new Resolver();  // never destroyed
  return *r;
}

// The Real of the library that defines `fn` (a cuBLAS function). Called with resolver().mu held.
const Real* real_of_library_defining(void* fn) {
  Resolver& R = resolver();
  Dl_info info;
  if (!fn || is_self(fn) || !dladdr(fn, &info) || !info.dli_fname) return nullptr;
  const std::string path = info.dli_fname;
  auto it = R.by_path.find(path);
  if (it != R.by_path.end()) return it->second;
  // dlsym on a handle searches that object first: its own definitions, never the hook's.
  void* lib = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return nullptr;  // kept open (reference) for the life of the process
  auto* r = new Real();
  r->path = strdup(path.c_str());
  load_sym(lib, "cublasDgemm_v2", &r->dgemm);
  load_sym(lib, "cublasDgemm_v2_64", &r->dgemm_64);
  load_sym(lib, "cublasGemmEx", &r->gemm_ex);
  load_sym(lib, "cublasGemmEx_64", &r->gemm_ex_64);
  load_sym(lib, "cublasDgemmStridedBatched", &r->dgemm_sb);
  load_sym(lib, "cublasDgemmStridedBatched_64", &r->dgemm_sb_64);
  load_sym(lib, "cublasDgemmBatched", &r->dgemm_b);
  load_sym(lib, "cublasDgemmBatched_64", &r->dgemm_b_64);
  load_sym(lib, "cublasGemmStridedBatchedEx", &r->gemm_sb_ex);
  load_sym(lib, "cublasGemmStridedBatchedEx_64", &r->gemm_sb_ex_64);
  load_sym(lib, "cublasGemmBatchedEx", &r->gemm_b_ex);
  load_sym(lib, "cublasGemmBatchedEx_64", &r->gemm_b_ex_64);
  load_sym(lib, "cublasDestroy_v2", &r->destroy);
  load_sym(lib, "cublasGetStream_v2", &r->get_stream);
  load_sym(lib, "cublasGetPointerMode_v2", &r->get_pointer_mode);
  load_sym(lib, "cublasGetMathMode", &r->get_math_mode);
  load_sym(lib, "cublasDgemm", &r->legacy_dgemm);
  load_sym(lib, "cublasInit", &r->legacy_init);
  load_sym(lib, "cublasShutdown", &r->legacy_shutdown);
  load_sym(lib, "cublasSetKernelStream", &r->legacy_set_kernel_stream);
  R.by_path[path] = r;
  return r;
}

// A cuBLAS function that no one interposes, to identify the library.
constexpr const char* kProbe = "cublasGetStream_v2";

const Real* resolve_fallback() {
  Resolver& R = resolver();
  if (R.fallback) return R.fallback;
  const Real* r = real_of_library_defining(dlsym(RTLD_NEXT, kProbe));
  for (const char* soname : {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}) {
    if (r) break;
    if (void* lib = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) {
      r = real_of_library_defining(dlsym(lib, kProbe));
      dlclose(lib);
    }
  }
  if (r) R.fallback = r;  // else retried next time (cuBLAS may be loaded later)
  return r;
}

}  // namespace

const Real& real_for(const void* caller, bool* from_ozgemm) {
  Resolver& R = resolver();
  std::lock_guard<std::mutex> lock(R.mu);
  auto it = R.by_site.find(caller);
  if (it != R.by_site.end()) {
    *from_ozgemm = it->second.from_ozgemm;
    return *it->second.real;
  }
  const Real* r = nullptr;
  bool oz = false;
  Dl_info info;
  if (caller && dladdr(caller, &info) && info.dli_fname && info.dli_fname[0] && info.dli_fbase != self_base()) {
    const char* slash = std::strrchr(info.dli_fname, '/');
    const std::string base = slash ? slash + 1 : info.dli_fname;
    oz = base.find("ozgemm") != std::string::npos && base.find("libozgemm_hook") == std::string::npos &&
         base.find("libozgemm_blas") == std::string::npos;
    // The caller's object and its dependencies: the cuBLAS it was linked against.
    if (void* obj = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
      r = real_of_library_defining(dlsym(obj, kProbe));
      dlclose(obj);
    }
  }
  if (!r) r = resolve_fallback();
  if (!r) {
    say_once(kPrefix, "no-cublas", "found no cuBLAS to forward to (called from %s)",
             caller && dladdr(caller, &info) && info.dli_fname ? info.dli_fname : "?");
    *from_ozgemm = oz;
    return R.none;  // not cached: cuBLAS may appear later
  }
  if (R.by_site.size() < 4096) R.by_site[caller] = Site{r, oz};
  *from_ozgemm = oz;
  return *r;
}

cublasStatus_t missing(const char* name) {
  std::string key = std::string("missing-") + name;
  say_once(kPrefix, key.c_str(), "the real %s was not found; returning CUBLAS_STATUS_NOT_SUPPORTED", name);
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

const cublasHandle_t kLegacyHandle = reinterpret_cast<cublasHandle_t>(uintptr_t(1));

bool passthrough(bool from_ozgemm) noexcept { return from_ozgemm || depth() > 0; }

namespace {

// ---- per-handle ozgemm state ---------------------------------------------------------------------------

struct HandleState {
  std::mutex mu;  // held while the ozgemm handle is used: one thread at a time
  ozgemmHandle_t oz = nullptr;
  int device = -1;
  bool unusable = false;
};

struct States {
  std::mutex mu;
  std::unordered_map<cublasHandle_t, std::shared_ptr<HandleState>> map;
};
States& states() {
  static States* s = new States();  // never destroyed (handles may outlive static destruction)
  return *s;
}

std::shared_ptr<HandleState> state_of(cublasHandle_t h) {
  States& S = states();
  std::lock_guard<std::mutex> lock(S.mu);
  auto& p = S.map[h];
  if (!p) p = std::make_shared<HandleState>();
  return p;
}

const char* op_name(int op) {
  switch (op) {
    case CUBLAS_OP_N: return "N";
    case CUBLAS_OP_T: return "T";
    case CUBLAS_OP_C: return "C";
    default: return "?";
  }
}

void log_call(const Call& c, const char* outcome) {
  char dims[160];
  if (c.batch != 1 || c.strided || c.arrays)
    std::snprintf(dims, sizeof dims, "%s%s m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64,
                  op_name(c.transa), op_name(c.transb), c.m, c.n, c.k, c.batch);
  else
    std::snprintf(dims, sizeof dims, "%s%s m=%" PRId64 " n=%" PRId64 " k=%" PRId64, op_name(c.transa),
                  op_name(c.transb), c.m, c.n, c.k);
  say(kPrefix, "%s %s -> %s", kApiNames[int(c.api)], dims, outcome);
}

bool decline(Call& c, Reason r) {
  stats().decline(r);
  if (config().log == LogMode::All) {
    std::string o = std::string("cuBLAS (") + kReasonNames[r] + ")";
    log_call(c, o.c_str());
  }
  c.first = 0;
  return false;
}

bool valid_op(int op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

bool run_checked(const Real& real, cublasHandle_t handle, Call& c, cublasStatus_t* status) {
  Stats& S = stats();
  Config& cfg = config();
  if (!cfg.enabled.load(std::memory_order_relaxed)) return decline(c, kDisabled);
  if (c.ex) {
    if (c.a_type != CUDA_R_64F || c.b_type != CUDA_R_64F || c.c_type != CUDA_R_64F) return decline(c, kNotFp64);
    if (c.compute == CUBLAS_COMPUTE_64F_PEDANTIC) return decline(c, kPedanticMath);
    if (int(c.compute) == 79) return decline(c, kCublasEmulation);  // CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT
    if (c.compute != CUBLAS_COMPUTE_64F) return decline(c, kNotFp64);
  }
  // Arguments: anything cuBLAS would reject, or a quick return, is cuBLAS's to do.
  if (!valid_op(c.transa) || !valid_op(c.transb)) return decline(c, kInvalidArgs);
  if (c.m < 0 || c.n < 0 || c.k < 0 || c.batch < 0) return decline(c, kInvalidArgs);
  const int64_t rows_a = c.transa == CUBLAS_OP_N ? c.m : c.k, rows_b = c.transb == CUBLAS_OP_N ? c.k : c.n;
  if (c.lda < std::max<int64_t>(1, rows_a) || c.ldb < std::max<int64_t>(1, rows_b) ||
      c.ldc < std::max<int64_t>(1, c.m))
    return decline(c, kInvalidArgs);
  if (!c.alpha || !c.beta) return decline(c, kInvalidArgs);
  if (c.m == 0 || c.n == 0 || c.k == 0 || c.batch == 0) return decline(c, kEmpty);
  if (c.arrays ? (!c.A_array || !c.B_array || !c.C_array) : (!c.A || !c.B || !c.C)) return decline(c, kInvalidArgs);
  if (c.m > INT_MAX || c.n > INT_MAX || c.k > INT_MAX || c.lda > INT_MAX || c.ldb > INT_MAX || c.ldc > INT_MAX)
    return decline(c, kTooLarge);
  if (double(c.m) * double(c.n) * double(c.k) < double(cfg.min_size)) return decline(c, kBelowMinSize);
  if (cfg.max_batch > 0 && c.batch > cfg.max_batch) return decline(c, kBatchTooLarge);
  if (c.strided && c.batch > 1) {
    // Distinct C matrices must not overlap (cuBLAS leaves that undefined; the hook does not guess).
    const long long span_c = (long long)(c.ldc) * (c.n - 1) + c.m;
    if (std::llabs(c.stride_c) < span_c) return decline(c, kOverlappingC);
  }

  // The handle's settings.
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pmode = CUBLAS_POINTER_MODE_HOST;
  if (c.legacy) {
    if (!c.legacy_initialised) return decline(c, kLegacyNotInit);
    stream = c.legacy_stream;
  } else {
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    if (!real.get_stream || !real.get_pointer_mode || !real.get_math_mode ||
        real.get_stream(handle, &stream) != CUBLAS_STATUS_SUCCESS ||
        real.get_pointer_mode(handle, &pmode) != CUBLAS_STATUS_SUCCESS ||
        real.get_math_mode(handle, &math) != CUBLAS_STATUS_SUCCESS)
      return decline(c, kHandleQuery);
    if ((int(math) & 0xf) == CUBLAS_PEDANTIC_MATH) return decline(c, kPedanticMath);
    if (int(math) & 8) return decline(c, kCublasEmulation);  // CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH
  }

  // libozgemm and the CUDA runtime; then, before anything else touches the stream, graph capture.
  const OzApi& oz = oz_api(self_address());
  if (!oz.ok) {
    say_once(kPrefix, "load", "%s; every call goes to cuBLAS", oz.error.c_str());
    return decline(c, kOzgemmUnavailable);
  }
  {
    cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    const cudaError_t e = oz.stream_is_capturing(stream, &cap);
    if (e != cudaSuccess) {
      oz.get_last_error();
      // 900..908: capture errors (e.g. the legacy stream while another stream captures): not ours
      // to run. Anything else (no device, a broken context): cuBLAS reports it if it applies.
      if (int(e) >= 900 && int(e) <= 908) return decline(c, kGraphCapture);
      std::string key = std::string("cuda-") + std::to_string(int(e));
      say_once(kPrefix, key.c_str(), "the CUDA runtime fails (%s); such calls go to cuBLAS", oz.get_error_string(e));
      return decline(c, kCudaError);
    }
    if (cap != cudaStreamCaptureStatusNone) return decline(c, kGraphCapture);
  }

  std::shared_ptr<HandleState> st = state_of(handle);
  std::lock_guard<std::mutex> lock(st->mu);
  if (!st->oz && !st->unusable) {
    DepthGuard guard;
    int dev = -1;
    ozgemmStatus_t s = oz.get_device(&dev) == cudaSuccess ? oz.create(&st->oz) : OZGEMM_STATUS_ARCH_MISMATCH;
    if (s == OZGEMM_STATUS_SUCCESS) s = oz.set_slices(st->oz, cfg.slices);
    if (s != OZGEMM_STATUS_SUCCESS) {
      if (st->oz) oz.destroy(st->oz);
      st->oz = nullptr;
      st->unusable = true;
      oz.get_last_error();
      say_once(kPrefix, "create", "ozgemm cannot run here (%s); the calls go to cuBLAS", oz.status_string(s));
    } else {
      st->device = dev;
    }
  }
  if (st->unusable) return decline(c, kOzgemmUnavailable);
  {
    int dev = -1;
    if (oz.get_device(&dev) != cudaSuccess || dev != st->device) {
      oz.get_last_error();
      return decline(c, kDeviceMismatch);
    }
  }

  // alpha and beta: host values, or read from the device (stream-ordered, synchronous).
  double alpha = 0, beta = 0;
  if (pmode == CUBLAS_POINTER_MODE_HOST) {
    alpha = *static_cast<const double*>(c.alpha);
    beta = *static_cast<const double*>(c.beta);
  } else {
    DepthGuard guard;
    if (oz.memcpy_async(&alpha, c.alpha, sizeof alpha, cudaMemcpyDefault, stream) != cudaSuccess ||
        oz.memcpy_async(&beta, c.beta, sizeof beta, cudaMemcpyDefault, stream) != cudaSuccess ||
        oz.stream_synchronize(stream) != cudaSuccess) {
      oz.get_last_error();
      return decline(c, kScalarRead);
    }
  }
  if (alpha == 0.0) return decline(c, kAlphaZero);

  // Batched calls with pointer arrays: the arrays live on the device; read them once.
  std::vector<const void*> pa, pb;
  std::vector<void*> pc;
  if (c.arrays) {
    DepthGuard guard;
    const size_t bytes = size_t(c.batch) * sizeof(void*);
    pa.resize(size_t(c.batch));
    pb.resize(size_t(c.batch));
    pc.resize(size_t(c.batch));
    if (oz.memcpy_async(pa.data(), c.A_array, bytes, cudaMemcpyDefault, stream) != cudaSuccess ||
        oz.memcpy_async(pb.data(), c.B_array, bytes, cudaMemcpyDefault, stream) != cudaSuccess ||
        oz.memcpy_async(pc.data(), c.C_array, bytes, cudaMemcpyDefault, stream) != cudaSuccess ||
        oz.stream_synchronize(stream) != cudaSuccess) {
      oz.get_last_error();
      return decline(c, kPointerArrayRead);
    }
  }

  // Run, one matrix at a time, on the caller's stream.
  const uint64_t t0 = now_ns();
  int64_t emulated = 0, native = 0;
  int smin = INT_MAX, smax = 0;
  ozgemmCallInfo_t last{};
  bool have_info = false;
  {
    DepthGuard guard;
    ozgemmStatus_t s = oz.set_stream(st->oz, stream);
    for (int64_t i = 0; i < c.batch && s == OZGEMM_STATUS_SUCCESS; ++i) {
      const double *A, *B;
      double* C;
      if (c.arrays) {
        A = static_cast<const double*>(pa[size_t(i)]);
        B = static_cast<const double*>(pb[size_t(i)]);
        C = static_cast<double*>(pc[size_t(i)]);
      } else {
        A = c.A + i * c.stride_a;
        B = c.B + i * c.stride_b;
        C = c.C + i * c.stride_c;
      }
      s = oz.dgemm(st->oz, cublasOperation_t(c.transa), cublasOperation_t(c.transb), int(c.m), int(c.n), int(c.k),
                   &alpha, A, int(c.lda), B, int(c.ldb), &beta, C, int(c.ldc));
      if (s != OZGEMM_STATUS_SUCCESS) {
        oz.get_last_error();
        S.failed.fetch_add(1, std::memory_order_relaxed);
        S.reasons[kFailed].fetch_add(1, std::memory_order_relaxed);
        S.declined.fetch_add(1, std::memory_order_relaxed);
        std::string key = std::string("fail-") + oz.status_string(s);
        say_once(kPrefix, key.c_str(), "ozgemm failed on %s m=%" PRId64 " n=%" PRId64 " k=%" PRId64
                 " (%s); cuBLAS runs this call%s (reported once per status)",
                 kApiNames[int(c.api)], c.m, c.n, c.k, oz.status_string(s), i > 0 ? "'s remaining matrices" : "");
        c.first = i;
        if (cfg.log == LogMode::All || cfg.log == LogMode::Calls) {
          std::string o = std::string("ozgemm failed (") + oz.status_string(s) + "), cuBLAS from matrix " +
                          std::to_string(i);
          log_call(c, o.c_str());
        }
        S.gemms.fetch_add(uint64_t(i), std::memory_order_relaxed);
        S.emulated.fetch_add(uint64_t(emulated), std::memory_order_relaxed);
        S.ozgemm_native.fetch_add(uint64_t(native), std::memory_order_relaxed);
        return false;
      }
      // What ozgemm ran. A library that does not fill the call info yet (variant AUTO, 0 slices)
      // leaves the matrix unreported: counted in gemms, neither emulated nor native.
      ozgemmCallInfo_t info{};
      const bool valid = oz.get_last_call_info && oz.get_last_call_info(st->oz, &info) == OZGEMM_STATUS_SUCCESS &&
                         (info.variant != OZGEMM_VARIANT_AUTO || info.slices > 0);
      if (valid) {
        have_info = true;
        last = info;
        if (info.slices > 0 && info.variant != OZGEMM_VARIANT_NATIVE) {
          ++emulated;
          smin = std::min(smin, info.slices);
          smax = std::max(smax, info.slices);
          if (info.slices <= OZGEMM_MAX_SLICES) S.slices[info.slices].fetch_add(1, std::memory_order_relaxed);
        } else {
          ++native;
        }
      }
    }
    if (s != OZGEMM_STATUS_SUCCESS) {  // set_stream failed
      oz.get_last_error();
      return decline(c, kFailed);
    }
  }
  const uint64_t dt = now_ns() - t0;
  S.intercepted.fetch_add(1, std::memory_order_relaxed);
  S.gemms.fetch_add(uint64_t(c.batch), std::memory_order_relaxed);
  S.emulated.fetch_add(uint64_t(emulated), std::memory_order_relaxed);
  S.ozgemm_native.fetch_add(uint64_t(native), std::memory_order_relaxed);
  S.flop.fetch_add(uint64_t(2.0 * double(c.m) * double(c.n) * double(c.k) * double(c.batch)),
                   std::memory_order_relaxed);
  S.time_ns.fetch_add(dt, std::memory_order_relaxed);
  if (cfg.log == LogMode::Calls || cfg.log == LogMode::All) {
    char o[400];
    if (!have_info) {
      std::snprintf(o, sizeof o, "ozgemm (%s; no call info) %.3f ms", cfg.slices ? "fixed" : "fp64", dt * 1e-6);
    } else if (c.batch == 1) {
      if (emulated)
        std::snprintf(o, sizeof o, "ozgemm: %s, %d slices%s [%s] %.3f ms", oz.variant_string(last.variant),
                      last.slices, cfg.slices ? " (fixed)" : "", last.reason, dt * 1e-6);
      else
        std::snprintf(o, sizeof o, "ozgemm: native DGEMM%s [%s] %.3f ms", last.fell_back ? " (FP64 fallback)" : "",
                      last.reason, dt * 1e-6);
    } else {
      std::snprintf(o, sizeof o, "ozgemm: %" PRId64 " emulated (slices %d..%d), %" PRId64 " native [last: %s] %.3f ms",
                    emulated, emulated ? smin : 0, smax, native, last.reason, dt * 1e-6);
    }
    log_call(c, o);
  }
  *status = CUBLAS_STATUS_SUCCESS;
  return true;
}

}  // namespace

bool run(const Real& real, cublasHandle_t handle, Call& c, cublasStatus_t* status) noexcept {
  if (passthrough(c.from_ozgemm)) {
    stats().internal.fetch_add(1, std::memory_order_relaxed);
    c.first = 0;
    return false;
  }
  Stats& S = stats();
  S.calls.fetch_add(1, std::memory_order_relaxed);
  S.per_api[int(c.api)].fetch_add(1, std::memory_order_relaxed);
  try {
    return run_checked(real, handle, c, status);
  } catch (const std::exception& e) {
    say_once(kPrefix, "exception", "internal error (%s); the call goes to cuBLAS", e.what());
  } catch (...) {
    say_once(kPrefix, "exception", "internal error; the call goes to cuBLAS");
  }
  // Matrices already run stay done (c.first says where cuBLAS continues).
  S.decline(kFailed);
  return false;
}

void forget(cublasHandle_t handle) noexcept {
  try {
    std::shared_ptr<HandleState> st;
    {
      States& S = states();
      std::lock_guard<std::mutex> lock(S.mu);
      auto it = S.map.find(handle);
      if (it == S.map.end()) return;
      st = it->second;
      S.map.erase(it);
    }
    std::lock_guard<std::mutex> lock(st->mu);
    if (st->oz) {
      DepthGuard guard;
      const OzApi& oz = oz_api(self_address());
      if (oz.ok) oz.destroy(st->oz);
      st->oz = nullptr;
    }
  } catch (...) {
  }
}

}  // namespace hook
}  // namespace dropin
}  // namespace ozgemm

// ======================================================================================================
// Exported entry points. Each resolves the real function for its caller, offers the call to run(),
// and forwards what run() leaves.
// ======================================================================================================
using namespace ozgemm::dropin;
using namespace ozgemm::dropin::hook;

#define OZ_CALLER __builtin_return_address(0)

extern "C" {

cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const double* alpha, const double* A, int lda, const double* B, int ldb,
                              const double* beta, double* C, int ldc) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.dgemm) return missing("cublasDgemm_v2");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::Dgemm;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta, c.A = A, c.B = B, c.C = C;
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  return r.dgemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t cublasDgemm_v2_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                                 int64_t k, const double* alpha, const double* A, int64_t lda, const double* B,
                                 int64_t ldb, const double* beta, double* C, int64_t ldc) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.dgemm_64) return missing("cublasDgemm_v2_64");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::Dgemm64;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta, c.A = A, c.B = B, c.C = C;
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  return r.dgemm_64(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.gemm_ex) return missing("cublasGemmEx");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::GemmEx;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta;
  c.A = static_cast<const double*>(A), c.B = static_cast<const double*>(B), c.C = static_cast<double*>(C);
  c.ex = true, c.a_type = Atype, c.b_type = Btype, c.c_type = Ctype, c.compute = computeType;
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  return r.gemm_ex(h, ta, tb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                               int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
                               const void* B, cudaDataType Btype, int64_t ldb, const void* beta, void* C,
                               cudaDataType Ctype, int64_t ldc, cublasComputeType_t computeType,
                               cublasGemmAlgo_t algo) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.gemm_ex_64) return missing("cublasGemmEx_64");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::GemmEx64;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta;
  c.A = static_cast<const double*>(A), c.B = static_cast<const double*>(B), c.C = static_cast<double*>(C);
  c.ex = true, c.a_type = Atype, c.b_type = Btype, c.c_type = Ctype, c.compute = computeType;
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  return r.gemm_ex_64(h, ta, tb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType,
                      algo);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double* alpha, const double* A, int lda, long long strideA,
                                         const double* B, int ldb, long long strideB, const double* beta, double* C,
                                         int ldc, long long strideC, int batchCount) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.dgemm_sb) return missing("cublasDgemmStridedBatched");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::DgemmStridedBatched;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta, c.A = A, c.B = B, c.C = C;
  c.strided = true, c.stride_a = strideA, c.stride_b = strideB, c.stride_c = strideC, c.batch = batchCount;
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  const long long f = c.first;
  return r.dgemm_sb(h, ta, tb, m, n, k, alpha, A + f * strideA, lda, strideA, B + f * strideB, ldb, strideB, beta,
                    C + f * strideC, ldc, strideC, batchCount - int(f));
}

cublasStatus_t cublasDgemmStridedBatched_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                            int64_t n, int64_t k, const double* alpha, const double* A, int64_t lda,
                                            long long strideA, const double* B, int64_t ldb, long long strideB,
                                            const double* beta, double* C, int64_t ldc, long long strideC,
                                            int64_t batchCount) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.dgemm_sb_64) return missing("cublasDgemmStridedBatched_64");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::DgemmStridedBatched64;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta, c.A = A, c.B = B, c.C = C;
  c.strided = true, c.stride_a = strideA, c.stride_b = strideB, c.stride_c = strideC, c.batch = batchCount;
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  const long long f = c.first;
  return r.dgemm_sb_64(h, ta, tb, m, n, k, alpha, A + f * strideA, lda, strideA, B + f * strideB, ldb, strideB, beta,
                       C + f * strideC, ldc, strideC, batchCount - f);
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const double* alpha, const double* const Aarray[], int lda,
                                  const double* const Barray[], int ldb, const double* beta, double* const Carray[],
                                  int ldc, int batchCount) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.dgemm_b) return missing("cublasDgemmBatched");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::DgemmBatched;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta;
  c.arrays = true, c.batch = batchCount;
  c.A_array = reinterpret_cast<const void* const*>(Aarray);
  c.B_array = reinterpret_cast<const void* const*>(Barray);
  c.C_array = reinterpret_cast<void* const*>(Carray);
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  const int f = int(c.first);  // device arrays: offsetting the array pointer is offsetting the batch
  return r.dgemm_b(h, ta, tb, m, n, k, alpha, Aarray + f, lda, Barray + f, ldb, beta, Carray + f, ldc,
                   batchCount - f);
}

cublasStatus_t cublasDgemmBatched_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                     int64_t n, int64_t k, const double* alpha, const double* const Aarray[],
                                     int64_t lda, const double* const Barray[], int64_t ldb, const double* beta,
                                     double* const Carray[], int64_t ldc, int64_t batchCount) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.dgemm_b_64) return missing("cublasDgemmBatched_64");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::DgemmBatched64;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta;
  c.arrays = true, c.batch = batchCount;
  c.A_array = reinterpret_cast<const void* const*>(Aarray);
  c.B_array = reinterpret_cast<const void* const*>(Barray);
  c.C_array = reinterpret_cast<void* const*>(Carray);
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  const int64_t f = c.first;
  return r.dgemm_b_64(h, ta, tb, m, n, k, alpha, Aarray + f, lda, Barray + f, ldb, beta, Carray + f, ldc,
                      batchCount - f);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
                                          long long strideA, const void* B, cudaDataType Btype, int ldb,
                                          long long strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.gemm_sb_ex) return missing("cublasGemmStridedBatchedEx");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::GemmStridedBatchedEx;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta;
  c.A = static_cast<const double*>(A), c.B = static_cast<const double*>(B), c.C = static_cast<double*>(C);
  c.strided = true, c.stride_a = strideA, c.stride_b = strideB, c.stride_c = strideC, c.batch = batchCount;
  c.ex = true, c.a_type = Atype, c.b_type = Btype, c.c_type = Ctype, c.compute = computeType;
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  // Only FP64 calls are ever partly run (c.first > 0), so the offsets are in doubles.
  const long long f = c.first;
  return r.gemm_sb_ex(h, ta, tb, m, n, k, alpha, c.A + f * strideA, Atype, lda, strideA, c.B + f * strideB, Btype,
                      ldb, strideB, beta, c.C + f * strideC, Ctype, ldc, strideC, batchCount - int(f), computeType,
                      algo);
}

cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                             int64_t n, int64_t k, const void* alpha, const void* A,
                                             cudaDataType Atype, int64_t lda, long long strideA, const void* B,
                                             cudaDataType Btype, int64_t ldb, long long strideB, const void* beta,
                                             void* C, cudaDataType Ctype, int64_t ldc, long long strideC,
                                             int64_t batchCount, cublasComputeType_t computeType,
                                             cublasGemmAlgo_t algo) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.gemm_sb_ex_64) return missing("cublasGemmStridedBatchedEx_64");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::GemmStridedBatchedEx64;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta;
  c.A = static_cast<const double*>(A), c.B = static_cast<const double*>(B), c.C = static_cast<double*>(C);
  c.strided = true, c.stride_a = strideA, c.stride_b = strideB, c.stride_c = strideC, c.batch = batchCount;
  c.ex = true, c.a_type = Atype, c.b_type = Btype, c.c_type = Ctype, c.compute = computeType;
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  const long long f = c.first;
  return r.gemm_sb_ex_64(h, ta, tb, m, n, k, alpha, c.A + f * strideA, Atype, lda, strideA, c.B + f * strideB, Btype,
                         ldb, strideB, beta, c.C + f * strideC, Ctype, ldc, strideC, batchCount - f, computeType,
                         algo);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                   const void* alpha, const void* const Aarray[], cudaDataType Atype, int lda,
                                   const void* const Barray[], cudaDataType Btype, int ldb, const void* beta,
                                   void* const Carray[], cudaDataType Ctype, int ldc, int batchCount,
                                   cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.gemm_b_ex) return missing("cublasGemmBatchedEx");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::GemmBatchedEx;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta;
  c.arrays = true, c.batch = batchCount, c.A_array = Aarray, c.B_array = Barray, c.C_array = Carray;
  c.ex = true, c.a_type = Atype, c.b_type = Btype, c.c_type = Ctype, c.compute = computeType;
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  const int f = int(c.first);
  return r.gemm_b_ex(h, ta, tb, m, n, k, alpha, Aarray + f, Atype, lda, Barray + f, Btype, ldb, beta, Carray + f,
                     Ctype, ldc, batchCount - f, computeType, algo);
}

cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                      int64_t n, int64_t k, const void* alpha, const void* const Aarray[],
                                      cudaDataType Atype, int64_t lda, const void* const Barray[], cudaDataType Btype,
                                      int64_t ldb, const void* beta, void* const Carray[], cudaDataType Ctype,
                                      int64_t ldc, int64_t batchCount, cublasComputeType_t computeType,
                                      cublasGemmAlgo_t algo) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!r.gemm_b_ex_64) return missing("cublasGemmBatchedEx_64");
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = Api::GemmBatchedEx64;
  c.transa = ta, c.transb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc;
  c.alpha = alpha, c.beta = beta;
  c.arrays = true, c.batch = batchCount, c.A_array = Aarray, c.B_array = Barray, c.C_array = Carray;
  c.ex = true, c.a_type = Atype, c.b_type = Btype, c.c_type = Ctype, c.compute = computeType;
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  const int64_t f = c.first;
  return r.gemm_b_ex_64(h, ta, tb, m, n, k, alpha, Aarray + f, Atype, lda, Barray + f, Btype, ldb, beta, Carray + f,
                        Ctype, ldc, batchCount - f, computeType, algo);
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!passthrough(from_ozgemm)) forget(h);  // libozgemm destroying its own handle: nothing of ours to free
  if (!r.destroy) return missing("cublasDestroy_v2");
  return r.destroy(h);
}

// ---- the hook's own interface (docs/dropin.md, "Counters"); for ctypes and tests ----------------------

// A counter by name (calls, intercepted, declined, failed, internal, gemms, emulated, ozgemm_native,
// unreported, flop, time_ns, declined:<reason>, slices:<n>, api:<entry point>); 0 for unknown names.
unsigned long long ozgemmHookCounter(const char* name) { return stats().get(name); }

// The counters as one JSON object into buf (NUL-terminated, truncated to len); returns the length
// the whole text needs (without the NUL).
size_t ozgemmHookStatsJson(char* buf, size_t len) {
  const std::string j = stats().json();
  if (buf && len) {
    const size_t n = std::min(len - 1, j.size());
    std::memcpy(buf, j.data(), n);
    buf[n] = '\0';
  }
  return j.size();
}

void ozgemmHookResetStats(void) { stats().reset(); }

// Turns interception on (1) or off (0) at run time; returns the previous setting. Negative: query.
int ozgemmHookSetEnabled(int on) {
  Config& cfg = config();
  const bool prev = cfg.enabled.load();
  if (on >= 0) cfg.enabled.store(on != 0);
  return prev ? 1 : 0;
}

}  // extern "C"

namespace {

// At exit: the summary (OZGEMM_HOOK_LOG=summary|all) and the stats file (OZGEMM_HOOK_STATS; "%p" in
// the name becomes the process id). Runs from the loader's fini, after static destructors: only
// heap objects that are never freed are touched.
__attribute__((destructor)) void report_at_exit() {
  Config& cfg = config();
  Stats& S = stats();
  // A process that never called a GEMM (e.g. a tool spawned by the program, inheriting LD_PRELOAD)
  // stays silent and leaves the stats file alone.
  if (S.calls.load() == 0 && S.internal.load() == 0) return;
  if (cfg.log == LogMode::Summary || cfg.log == LogMode::All) S.print_summary();
  if (!cfg.stats_file.empty()) {
    std::string path = cfg.stats_file;
    const size_t p = path.find("%p");
    if (p != std::string::npos) path.replace(p, 2, std::to_string(getpid()));
    if (FILE* f = std::fopen(path.c_str(), "w")) {
      std::fprintf(f, "%s\n", S.json().c_str());
      std::fclose(f);
    } else {
      say(kPrefix, "cannot write the stats file %s", path.c_str());
    }
  }
}

}  // namespace
