// src/dropin/hook.cpp — libozgemm_hook.so: an LD_PRELOAD interposer that runs the FP64 GEMMs of
// cuBLAS, real and complex (cublasDgemm_v2, cublasZgemm_v2, cublasZgemm3m, cublasGemmEx for FP64 and
// complex FP64, the batched and _64 forms) through ozgemm (ozgemmDgemm, ozgemmZgemm) and forwards
// everything else, and every call it declines, to the real cuBLAS. docs/dropin.md has the
// rules; hook_legacy.cpp has the legacy (cublas.h) entry points, hook_lt.cpp cublasLtMatmul.
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
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "dropin/common.hpp"
#include "dropin/hook_core.hpp"

namespace ozgemm {
namespace dropin {
namespace hook {

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
                                 "cublasZgemm_v2",
                                 "cublasZgemm_v2_64",
                                 "cublasZgemm3m",
                                 "cublasZgemm3m_64",
                                 "cublasZgemmStridedBatched",
                                 "cublasZgemmStridedBatched_64",
                                 "cublasZgemmBatched",
                                 "cublasZgemmBatched_64",
                                 "cublasDgemm",
                                 "cublasDsyrk_v2",
                                 "cublasDsyrk_v2_64",
                                 "cublasDsyr2k_v2",
                                 "cublasDsyr2k_v2_64",
                                 "cublasDsyrkx",
                                 "cublasDsyrkx_64",
                                 "cublasDsymm_v2",
                                 "cublasDsymm_v2_64",
                                 "cublasLtMatmul",
                                 nullptr};
static_assert(sizeof(kApiNames) / sizeof(kApiNames[0]) == int(Api::Count) + 1 && int(Api::Count) <= kMaxApis,
              "api names");

namespace {

// Decline reasons (Stats::reasons indices; names in kReasonNames, the same order).
enum Reason {
  kDisabled,
  kInvalidSetting,   // OZGEMM_HOOK_ACCURACY / OZGEMM_HOOK_SCHEME could not be read: everything forwarded
  kNotFp64,          // other element types (an Ex call: not all FP64 real or all FP64 complex) or compute type
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
  // cublasLtMatmul's descriptors (hook_lt.cpp, LtDecline)
  kDescriptorQuery,  // a descriptor attribute could not be read
  kMatmulDesc,       // TRANSC, FILL_MODE, scaling pointers or modes, fast accumulation set
  kLayout,           // an order other than COL, planar complex, pointer-array batches, C and D or batches unlike
  kEpilogue,         // an epilogue other than the forward ones (DEFAULT, BIAS, RELU, GELU and their AUX forms)
  kPointerMode,      // CUBLASLT_POINTER_MODE_DEVICE_VECTOR, ALPHA_DEVICE_VECTOR_*
  kReasonCount
};
const char* const kReasonNames[] = {
    "disabled",           "invalid-setting",           "not-fp64",           "pedantic-math",
    "cublas-fp64-emulation", "invalid-args",           "empty",              "alpha-zero",
    "too-large-for-int32", "below-min-size",           "batch-too-large",    "overlapping-c",
    "handle-query-failed", "graph-capture",            "ozgemm-unavailable", "device-mismatch",
    "scalar-read-failed", "pointer-array-read-failed", "legacy-not-initialised", "cuda-error",
    "ozgemm-failed",      "descriptor-query-failed", "matmul-desc-not-supported", "layout-not-supported",
    "epilogue-not-supported", "pointer-mode-not-supported", nullptr};
static_assert(sizeof(kReasonNames) / sizeof(kReasonNames[0]) == kReasonCount + 1 && kReasonCount <= kMaxReasons,
              "reason names");

Stats& stats() {
  static Stats* s = new Stats(kPrefix, kReasonNames, kApiNames);  // never destroyed: read by the exit report
  return *s;
}

struct Config {
  Settings settings;
  int64_t max_batch = 1024;  // 0: no limit
};

Config& config() {
  static Config* c = [] {
    auto* cfg = new Config();  // never destroyed
    cfg->settings.read(kPrefix, "OZGEMM_HOOK", nullptr, int64_t(1) << 30);
    cfg->max_batch = env_size(kPrefix, "OZGEMM_HOOK_MAX_BATCH", cfg->max_batch);
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

}  // namespace

bool is_self(const void* addr) {
  Dl_info info;
  return addr && dladdr(addr, &info) && info.dli_fbase == self_base();
}

void note_dlsym_redirect(const char* name, const char* caller_file, const char* real_file) {
  stats().dlsym_redirects.fetch_add(1, std::memory_order_relaxed);
  if (config().settings.log == LogMode::All)
    say(kPrefix, "dlsym(\"%s\") from %s: the hook's function, forwarding to %s", name, caller_file, real_file);
}

namespace {

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
constexpr int kLibraries = 2;  // Library values
struct Resolver {
  std::mutex mu;
  std::unordered_map<const void*, Site> by_site[kLibraries];  // per Library: call site -> cuBLAS / cuBLASLt
  std::map<std::string, Real*> by_path;                  // cuBLAS file -> its functions (never freed)
  const Real* fallback[kLibraries] = {};
  Real none;  // no cuBLAS found: every pointer null
};
Resolver& resolver() {
  static Resolver* r = new Resolver();  // never destroyed
  return *r;
}

// The Real of the library that defines `fn` (a cuBLAS function). Called with resolver().mu held.
const Real* real_of_library_defining(const void* fn) {
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
  for (int i = 0; i < int(Api::Count); ++i) load_sym(lib, kApiNames[i], &r->entry[i]);
  load_sym(lib, "cublasDestroy_v2", &r->destroy);
  load_sym(lib, "cublasGetStream_v2", &r->get_stream);
  load_sym(lib, "cublasGetPointerMode_v2", &r->get_pointer_mode);
  load_sym(lib, "cublasGetMathMode", &r->get_math_mode);
  load_sym(lib, "cublasInit", &r->legacy_init);
  load_sym(lib, "cublasShutdown", &r->legacy_shutdown);
  load_sym(lib, "cublasSetKernelStream", &r->legacy_set_kernel_stream);
  load_sym(lib, "cublasLtDestroy", &r->lt_destroy);
  load_sym(lib, "cublasLtMatmulDescCreate", &r->lt_desc_create);
  load_sym(lib, "cublasLtMatmulDescDestroy", &r->lt_desc_destroy);
  load_sym(lib, "cublasLtMatmulDescGetAttribute", &r->lt_desc_get);
  load_sym(lib, "cublasLtMatmulDescSetAttribute", &r->lt_desc_set);
  load_sym(lib, "cublasLtMatrixLayoutCreate", &r->lt_layout_create);
  load_sym(lib, "cublasLtMatrixLayoutDestroy", &r->lt_layout_destroy);
  load_sym(lib, "cublasLtMatrixLayoutGetAttribute", &r->lt_layout_get);
  load_sym(lib, "cublasLtMatrixLayoutSetAttribute", &r->lt_layout_set);
  R.by_path[path] = r;
  return r;
}

// Per Library: a function of it that no one interposes, to identify the library, and its file names.
constexpr const char* kProbe[kLibraries] = {"cublasGetStream_v2", "cublasLtMatmulDescGetAttribute"};
constexpr const char* kSonames[kLibraries][4] = {
    {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"},
    {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so"}};

const Real* resolve_fallback(Library which) {
  Resolver& R = resolver();
  const int l = int(which);
  if (R.fallback[l]) return R.fallback[l];
  const Real* r = real_of_library_defining(dlsym(RTLD_NEXT, kProbe[l]));
  for (const char* soname : kSonames[l]) {
    if (r) break;
    if (void* lib = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) {
      r = real_of_library_defining(dlsym(lib, kProbe[l]));
      dlclose(lib);
    }
  }
  if (r) R.fallback[l] = r;  // else retried next time (cuBLAS may be loaded later)
  return r;
}

}  // namespace

const Real& real_for(const void* caller, bool* from_ozgemm, Library which) {
  Resolver& R = resolver();
  const int l = int(which);
  std::lock_guard<std::mutex> lock(R.mu);
  auto it = R.by_site[l].find(caller);
  if (it != R.by_site[l].end()) {
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
    // cuBLAS's own cuBLASLt calls (its GEMMs' implementation) are not the program's.
    if (which == Library::CublasLt && is_cublas_file(base.c_str())) oz = true;
    // The library whose function the hook's dlsym stood in for, when the caller's object looked this
    // entry point up (hook_dlsym.cpp); else the caller's object and its dependencies: the library it
    // was linked against.
    if (const void* fn = dlsym_redirected_real(info.dli_fbase, which)) r = real_of_library_defining(fn);
    if (!r) {
      if (void* obj = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
        r = real_of_library_defining(dlsym(obj, kProbe[l]));
        dlclose(obj);
      }
    }
  }
  if (!r) r = resolve_fallback(which);
  if (!r) {
    say_once(kPrefix, which == Library::CublasLt ? "no-cublaslt" : "no-cublas", "found no %s to forward to (called from %s)",
             which == Library::CublasLt ? "cuBLASLt" : "cuBLAS",
             caller && dladdr(caller, &info) && info.dli_fname ? info.dli_fname : "?");
    *from_ozgemm = oz;
    return R.none;  // not cached: cuBLAS may appear later
  }
  if (R.by_site[l].size() < 4096) R.by_site[l][caller] = Site{r, oz};
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

// One per handle kind: cuBLAS handles (states(false)) and cublasLt handles (states(true)).
struct States {
  std::mutex mu;
  std::unordered_map<const void*, std::shared_ptr<HandleState>> map;
};
States& states(bool lt = false) {
  static States* s[2] = {new States(), new States()};  // never destroyed (handles may outlive static destruction)
  return *s[lt];
}

std::shared_ptr<HandleState> state_of(const void* h, bool lt) {
  States& S = states(lt);
  std::lock_guard<std::mutex> lock(S.mu);
  auto& p = S.map[h];
  if (!p) p = std::make_shared<HandleState>();
  return p;
}

// 'N', 'T', 'C', or '?' for an invalid cublasOperation_t value.
char op_name(int op) { return "NTC?"[int(op_of_cublas(op))]; }

void log_call(const Call& c, const char* outcome) {
  char dims[160];
  if (c.batch != 1 || c.strided || c.arrays)
    std::snprintf(dims, sizeof dims, "%c%c m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64,
                  op_name(c.transa), op_name(c.transb), c.m, c.n, c.k, c.batch);
  else
    std::snprintf(dims, sizeof dims, "%c%c m=%" PRId64 " n=%" PRId64 " k=%" PRId64, op_name(c.transa),
                  op_name(c.transb), c.m, c.n, c.k);
  say(kPrefix, "%s %s -> %s", kApiNames[int(c.api)], dims, outcome);
}

bool decline(Call& c, Reason r) {
  stats().decline(r);
  if (config().settings.log == LogMode::All) {
    std::string o = std::string("cuBLAS (") + kReasonNames[r] + ")";
    log_call(c, o.c_str());
    if (r == kInvalidArgs)  // which argument: pointers, leading dimensions
      say(kPrefix, "  invalid-args detail: A=%p B=%p C=%p C_in=%p alpha=%p beta=%p lda=%" PRId64 " ldb=%" PRId64
          " ldc=%" PRId64 " ld_in=%" PRId64 " batch=%" PRId64, c.A, c.B, c.C, c.C_in, c.alpha, c.beta, c.lda, c.ldb,
          c.ldc, c.ld_in, c.batch);
  }
  c.first = 0;
  return false;
}

// Bytes of one element of type t: only the types the hook runs (a call of another type is never
// partly run, so its offsets are 0).
size_t type_bytes(cudaDataType t) {
  return t == CUDA_R_64F ? element_bytes(Element::Real) : t == CUDA_C_64F ? element_bytes(Element::Complex) : 0;
}

// p advanced by `elements` elements of type t.
template <typename P>
P* advance(P* p, long long elements, cudaDataType t) {
  using Byte = typename std::conditional<std::is_const<P>::value, const char, char>::type;
  return elements ? reinterpret_cast<P*>(reinterpret_cast<Byte*>(p) + elements * (long long)type_bytes(t)) : p;
}

// The compute type an Ex call asks for. Callers built against CUDA 10 headers, or bindings that pass
// a cudaDataType where cuBLAS 11+ takes a cublasComputeType_t (CuPy's batched matmul passes its
// element type), give CUDA_R_64F (1) or CUDA_C_64F (5): cuBLAS's header maps those
// (cublasMigrateComputeType) to CUBLAS_COMPUTE_64F, or to _PEDANTIC under CUBLAS_PEDANTIC_MATH, which
// the math-mode check declines anyway.
cublasComputeType_t compute_of(cublasComputeType_t t) {
  return (int(t) == CUDA_R_64F || int(t) == CUDA_C_64F) ? CUBLAS_COMPUTE_64F : t;
}

// The reason of each LtDecline (hook_core.hpp), in its order.
constexpr Reason kLtReasons[] = {kReasonCount, kDescriptorQuery, kMatmulDesc,      kLayout,
                                 kEpilogue,    kCublasEmulation, kNotFp64, kInvalidArgs};
static_assert(sizeof(kLtReasons) / sizeof(kLtReasons[0]) == int(LtDecline::InvalidArgs) + 1, "one reason per LtDecline");

// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) meet.
bool overlap(const void* a, long long a_bytes, const void* b, long long b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + uintptr_t(b_bytes) && y < x + uintptr_t(a_bytes);
}

// handle: the cuBLAS handle, or the cublasLt handle when c.env is set (cublasLtMatmul).
bool run_checked(const Real& real, const void* handle, Call& c, cublasStatus_t* status) {
  Stats& S = stats();
  const Config& cfg = config();
  const Settings& set = cfg.settings;
  if (!set.enabled.load(std::memory_order_relaxed)) return decline(c, kDisabled);
  if (!set.accuracy_valid) return decline(c, kInvalidSetting);
  if (c.lt_decline != LtDecline::None) return decline(c, kLtReasons[int(c.lt_decline)]);
  // A, B and C all FP64 real (ozgemmDgemm) or all FP64 complex (ozgemmZgemm).
  if (c.a_type != c.c_type || c.b_type != c.c_type || (c.c_type != CUDA_R_64F && c.c_type != CUDA_C_64F))
    return decline(c, kNotFp64);
  const Element elem = c.c_type == CUDA_C_64F ? Element::Complex : Element::Real;
  const cublasComputeType_t compute = compute_of(c.compute);
  if (compute == CUBLAS_COMPUTE_64F_PEDANTIC) return decline(c, kPedanticMath);
  if (int(compute) == 79) return decline(c, kCublasEmulation);  // CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT
  if (compute != CUBLAS_COMPUTE_64F) return decline(c, kNotFp64);
  // Arguments: anything cuBLAS would reject, or a quick return, is cuBLAS's to do.
  if (gemm_argument_error(op_of_cublas(c.transa), op_of_cublas(c.transb), c.m, c.n, c.k, c.lda, c.ldb, c.ldc) ||
      c.batch < 0 || !c.sym.valid)
    return decline(c, kInvalidArgs);
  if (!c.alpha || !c.beta) return decline(c, kInvalidArgs);
  if (c.m == 0 || c.n == 0 || c.k == 0 || c.batch == 0) return decline(c, kEmpty);
  if (c.arrays ? (!c.A_array || !c.B_array || !c.C_array) : (!c.A || !c.B || !c.C)) return decline(c, kInvalidArgs);
  if (c.m > INT_MAX || c.n > INT_MAX || c.k > INT_MAX || c.lda > INT_MAX || c.ldb > INT_MAX || c.ldc > INT_MAX)
    return decline(c, kTooLarge);
  if (double(c.m) * double(c.n) * double(c.k) < double(set.min_size)) return decline(c, kBelowMinSize);
  if (cfg.max_batch > 0 && c.batch > cfg.max_batch) return decline(c, kBatchTooLarge);
  if (c.strided && c.batch > 1) {
    // Distinct C matrices must not overlap (cuBLAS leaves that undefined; the hook does not guess).
    const long long span_c = (long long)(c.ldc) * (c.n - 1) + c.m;
    if (std::llabs(c.stride_c) < span_c) return decline(c, kOverlappingC);
  }
  if (c.C_in) {
    // cublasLtMatmul with D != C: D in place of C (the same matrices) runs as any call; otherwise
    // the C read must not meet the D written (cuBLASLt requires it; the hook does not guess).
    const bool same = c.C_in == c.C && c.ld_in == c.ldc && (c.batch == 1 || c.stride_in == c.stride_c);
    if (same) {
      c.C_in = nullptr;
    } else {
      const long long elem_bytes = (long long)type_bytes(c.c_type);
      auto bytes = [&](int64_t ld, long long stride) {
        return (std::llabs(stride) * (c.batch - 1) + (long long)ld * (c.n - 1) + c.m) * elem_bytes;
      };
      auto first = [&](const void* p, long long stride) {  // the lowest matrix of a (negative-stride) batch
        return advance(p, stride < 0 ? stride * (c.batch - 1) : 0, c.c_type);
      };
      if (c.ld_in < c.m || overlap(first(c.C_in, c.stride_in), bytes(c.ld_in, c.stride_in), first(c.C, c.stride_c),
                                   bytes(c.ldc, c.stride_c)))
        return decline(c, c.ld_in < c.m ? kInvalidArgs : kOverlappingC);
    }
  }

  // The handle's settings (or the call's own).
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pmode = CUBLAS_POINTER_MODE_HOST;
  if (c.env) {
    stream = c.env->stream;
    pmode = c.env->pointer_mode;
  } else if (c.legacy) {
    if (!c.legacy_initialised) return decline(c, kLegacyNotInit);
    stream = c.legacy_stream;
  } else {
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    const auto cublas = static_cast<cublasHandle_t>(const_cast<void*>(handle));
    if (!real.get_stream || !real.get_pointer_mode || !real.get_math_mode ||
        real.get_stream(cublas, &stream) != CUBLAS_STATUS_SUCCESS ||
        real.get_pointer_mode(cublas, &pmode) != CUBLAS_STATUS_SUCCESS ||
        real.get_math_mode(cublas, &math) != CUBLAS_STATUS_SUCCESS)
      return decline(c, kHandleQuery);
    if ((int(math) & 0xf) == CUBLAS_PEDANTIC_MATH) return decline(c, kPedanticMath);
    if (int(math) & 8) return decline(c, kCublasEmulation);  // CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH
  }
  if (pmode != CUBLAS_POINTER_MODE_HOST && pmode != CUBLAS_POINTER_MODE_DEVICE) return decline(c, kPointerMode);

  // libozgemm and the CUDA runtime; then, before anything else touches the stream, graph capture.
  const OzApi& oz = oz_api(self_address());
  if (!oz.ok) {
    say_once(kPrefix, "load", "%s; every call goes to cuBLAS", oz.error.c_str());
    return decline(c, kOzgemmUnavailable);
  }
  if (c.sym.routine != SymmetricRoutine::None && !symmetric_available(oz, c)) {
    say_once(kPrefix, "no-symmetric", "%s lacks %s's routine; those calls go to cuBLAS", oz.path.c_str(),
             kApiNames[int(c.api)]);
    return decline(c, kOzgemmUnavailable);
  }
  if (elem == Element::Complex && !oz.zgemm) {
    say_once(kPrefix, "no-zgemm", "%s lacks ozgemmZgemm; complex GEMMs go to cuBLAS", oz.path.c_str());
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

  std::shared_ptr<HandleState> st = state_of(handle, c.env != nullptr);
  std::lock_guard<std::mutex> lock(st->mu);
  if (!st->oz && !st->unusable) {
    DepthGuard guard;
    int dev = -1;
    ozgemmStatus_t s = oz.get_device(&dev) == cudaSuccess ? oz.create(&st->oz) : OZGEMM_STATUS_ARCH_MISMATCH;
    const bool created = s == OZGEMM_STATUS_SUCCESS;
    if (created) s = apply(oz, st->oz, set.accuracy);
    if (s != OZGEMM_STATUS_SUCCESS) {
      if (st->oz) oz.destroy(st->oz);
      st->oz = nullptr;
      st->unusable = true;
      oz.get_last_error();
      if (created)
        say_once(kPrefix, "create", "ozgemm rejects the accuracy setting (%s: %s); the calls go to cuBLAS",
                 set.accuracy.text().c_str(), oz.status_string(s));
      else
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

  // alpha and beta (one element each; real data fills only the real part): host values, or read
  // from the device (stream-ordered, synchronous).
  cuDoubleComplex alpha = make_cuDoubleComplex(0, 0), beta = make_cuDoubleComplex(0, 0);
  const size_t scalar_bytes = element_bytes(elem);
  if (pmode == CUBLAS_POINTER_MODE_HOST) {
    std::memcpy(&alpha, c.alpha, scalar_bytes);
    std::memcpy(&beta, c.beta, scalar_bytes);
  } else {
    DepthGuard guard;
    if (oz.memcpy_async(&alpha, c.alpha, scalar_bytes, cudaMemcpyDefault, stream) != cudaSuccess ||
        oz.memcpy_async(&beta, c.beta, scalar_bytes, cudaMemcpyDefault, stream) != cudaSuccess ||
        oz.stream_synchronize(stream) != cudaSuccess) {
      oz.get_last_error();
      return decline(c, kScalarRead);
    }
  }
  if (alpha.x == 0.0 && alpha.y == 0.0) return decline(c, kAlphaZero);
  // cublasLtMatmul with C == nullptr (XLA passes none when beta is 0): legal only when beta is 0.
  if (c.c_null && (beta.x != 0.0 || beta.y != 0.0)) return decline(c, kInvalidArgs);
  // An epilogue pass after the product, in place (D is C) with beta != 0: a pass that then failed would
  // leave D changed where cuBLASLt would have left it untouched. cuBLASLt runs such calls.
  if (c.lt_epilogue && !c.C_in && !c.c_null && (beta.x != 0.0 || beta.y != 0.0)) return decline(c, kEpilogue);

  // The matrices: batched calls with pointer arrays have them on the device (read once); the others
  // lie i strides (in elements) after the first.
  const size_t batch = size_t(c.batch);
  std::vector<const void*> pa(batch), pb(batch);
  std::vector<void*> pc(batch);
  if (c.arrays) {
    DepthGuard guard;
    const size_t bytes = batch * sizeof(void*);
    if (oz.memcpy_async(pa.data(), c.A_array, bytes, cudaMemcpyDefault, stream) != cudaSuccess ||
        oz.memcpy_async(pb.data(), c.B_array, bytes, cudaMemcpyDefault, stream) != cudaSuccess ||
        oz.memcpy_async(pc.data(), c.C_array, bytes, cudaMemcpyDefault, stream) != cudaSuccess ||
        oz.stream_synchronize(stream) != cudaSuccess) {
      oz.get_last_error();
      return decline(c, kPointerArrayRead);
    }
  } else {
    for (size_t i = 0; i < batch; ++i) {
      pa[i] = advance(c.A, (long long)i * c.stride_a, c.a_type);
      pb[i] = advance(c.B, (long long)i * c.stride_b, c.b_type);
      pc[i] = advance(c.C, (long long)i * c.stride_c, c.c_type);
    }
  }

  // Run, one matrix at a time, on the caller's stream.
  const bool logging = set.log == LogMode::Calls || set.log == LogMode::All;
  const uint64_t t0 = now_ns();
  RunTally tally;  // what ran, for the log line
  ozgemmCallInfo_t last{};
  Ran last_ran = Ran::Unreported;
  {
    DepthGuard guard;
    ozgemmStatus_t s = oz.set_stream(st->oz, stream);
    if (s != OZGEMM_STATUS_SUCCESS) {
      oz.get_last_error();
      return decline(c, kFailed);
    }
    const auto ta = cublasOperation_t(c.transa), tb = cublasOperation_t(c.transb);
    const int m = int(c.m), n = int(c.n), k = int(c.k), lda = int(c.lda), ldb = int(c.ldb), ldc = int(c.ldc);
    // The matrix ozgemm writes is the one beta scales (in place): a failure may leave it half-updated.
    const bool reads_output = !c.C_in && (beta.x != 0.0 || beta.y != 0.0);
    for (int64_t i = 0; i < c.batch; ++i) {
      const size_t j = size_t(i);
      if (c.C_in && (beta.x != 0.0 || beta.y != 0.0)) {
        // cublasLtMatmul, D != C: D = C first (m x n, the leading dimensions in bytes), then in place.
        const size_t eb = element_bytes(elem);
        const cudaError_t e = oz.memcpy2d_async(pc[j], size_t(c.ldc) * eb, advance(c.C_in, i * c.stride_in, c.c_type),
                                                size_t(c.ld_in) * eb, size_t(c.m) * eb, size_t(c.n),
                                                cudaMemcpyDefault, stream);
        if (e != cudaSuccess) {
          oz.get_last_error();
          S.decline(kCudaError);  // the caller's C is untouched: cuBLASLt redoes the whole call
          c.first = 0;
          return false;
        }
      }
      if (c.sym.routine != SymmetricRoutine::None)
        s = run_symmetric(oz, st->oz, c, alpha.x, beta.x);  // batch 1
      else if (elem == Element::Complex)
        s = oz.zgemm(st->oz, ta, tb, m, n, k, &alpha, static_cast<const cuDoubleComplex*>(pa[j]), lda,
                     static_cast<const cuDoubleComplex*>(pb[j]), ldb, &beta, static_cast<cuDoubleComplex*>(pc[j]), ldc);
      else
        s = oz.dgemm(st->oz, ta, tb, m, n, k, &alpha.x, static_cast<const double*>(pa[j]), lda,
                     static_cast<const double*>(pb[j]), ldb, &beta.x, static_cast<double*>(pc[j]), ldc);
      if (s != OZGEMM_STATUS_SUCCESS) {
        oz.get_last_error();
        S.failed.fetch_add(1, std::memory_order_relaxed);
        S.decline(kFailed);
        // cuBLAS may redo matrix i only where C is as the caller left it: ozgemm refused before any
        // launch, or beta == 0 (C is not read). A launch that failed may have written part of C: with
        // beta != 0 a redo would scale a half-written C, a silent wrong answer, so the call fails.
        const bool before_launch = s == OZGEMM_STATUS_INVALID_VALUE || s == OZGEMM_STATUS_NOT_SUPPORTED ||
                                   s == OZGEMM_STATUS_ALLOC_FAILED || s == OZGEMM_STATUS_INSUFFICIENT_WORKSPACE ||
                                   s == OZGEMM_STATUS_ARCH_MISMATCH || s == OZGEMM_STATUS_NOT_INITIALIZED;
        // A caller that forwards only whole calls (whole_call) cannot leave matrices 0..i-1 done either.
        if ((!before_launch || (c.whole_call && i > 0)) && reads_output) {
          say_once(kPrefix, "fail-partial", "ozgemm failed on %s m=%" PRId64 " n=%" PRId64 " k=%" PRId64
                   " (%s) after writing to C with beta != 0: the call returns CUBLAS_STATUS_EXECUTION_FAILED",
                   kApiNames[int(c.api)], c.m, c.n, c.k, oz.status_string(s));
          *status = CUBLAS_STATUS_EXECUTION_FAILED;
          return true;
        }
        c.first = c.whole_call ? 0 : i;  // matrices 0..first-1 stay done (and counted)
        std::string key = std::string("fail-") + oz.status_string(s);
        say_once(kPrefix, key.c_str(), "ozgemm failed on %s m=%" PRId64 " n=%" PRId64 " k=%" PRId64
                 " (%s); cuBLAS runs this call%s (reported once per status)",
                 kApiNames[int(c.api)], c.m, c.n, c.k, oz.status_string(s), c.first > 0 ? "'s remaining matrices" : "");
        if (logging) {
          std::string o = std::string("ozgemm failed (") + oz.status_string(s) + "), cuBLAS from matrix " +
                          std::to_string(c.first);
          log_call(c, o.c_str());
        }
        return false;
      }
      last_ran = S.record(elem, last_call_info(oz, st->oz, &last));
      tally.add(last_ran, last);
    }
  }
  const uint64_t dt = now_ns() - t0;
  S.intercepted(elem, c.sym.routine != SymmetricRoutine::None ? symmetric_flop(c)
                                                              : gemm_flop(elem, c.m, c.n, c.k) * double(c.batch), dt);
  if (logging) {
    const std::string ran = c.batch == 1 ? describe_run(oz, last_ran, last, elem) : tally.text();
    char o[480];
    std::snprintf(o, sizeof o, "ozgemm: %s [%s%s] %.3f ms", ran.c_str(), c.batch == 1 ? "" : "last: ",
                  last_ran == Ran::Unreported ? set.accuracy.text().c_str() : last.reason, dt * 1e-6);
    log_call(c, o);
  }
  *status = CUBLAS_STATUS_SUCCESS;
  return true;
}

// run() and run_lt(): handle as for run_checked.
bool run_counted(const Real& real, const void* handle, Call& c, cublasStatus_t* status) noexcept {
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

void forget_state(const void* handle, bool lt) noexcept {
  try {
    std::shared_ptr<HandleState> st;
    {
      States& S = states(lt);
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

}  // namespace

bool run(const Real& real, cublasHandle_t handle, Call& c, cublasStatus_t* status) noexcept {
  return run_counted(real, handle, c, status);
}

bool run_lt(cublasLtHandle_t handle, Call& c, cublasStatus_t* status) noexcept {
  static const Real unused;  // c.env set: no cuBLAS handle is queried
  return c.env ? run_counted(unused, handle, c, status) : false;
}

void forget(cublasHandle_t handle) noexcept { forget_state(handle, false); }
void forget_lt(cublasLtHandle_t handle) noexcept { forget_state(handle, true); }

}  // namespace hook
}  // namespace dropin
}  // namespace ozgemm

// ======================================================================================================
// Exported entry points. Each cuBLAS GEMM operation is one table: the roles of its parameters
// (Operation<...>), from which one template describes the call (set) and forwards the matrices
// ozgemm left (rest). Its entry points, the int and the _64 forms, are instantiations of that template
// with their parameter types, one row each (OZ_HOOK_ENTRY); the complex entry points (cublasZgemm_v2,
// cublasZgemm3m, the Z batched ones) are rows of the same operations with T = cuDoubleComplex.
// intercept() resolves the real function for the caller, offers the call to run() and forwards what
// run() leaves.
// ======================================================================================================
namespace ozgemm {
namespace dropin {
namespace hook {
namespace {

// The cudaDataType of the hook's typed entry points' element types.
template <typename T>
struct TypeOf;
template <>
struct TypeOf<double> {
  static constexpr cudaDataType type = CUDA_R_64F;
};
template <>
struct TypeOf<cuDoubleComplex> {
  static constexpr cudaDataType type = CUDA_C_64F;
};

// What each parameter of a GEMM entry point (after the handle) stands for. The plain roles set the
// Call member of the same position in kPlainFields; A, B, C are the operands.
enum class Role {
  TransA, TransB, M, N, K, Alpha, Beta, Lda, Ldb, Ldc, AType, BType, CType, StrideA, StrideB, StrideC, Batch,
  Compute,                 // (AType .. CType, Compute: Ex calls only; typed calls take the types from T)
  A, B, C,                 // a matrix (T*), or a device array of matrices (T* const*: a pointer-array batch)
  Algo                     // Ex calls: not used (ozgemm has no algorithm choice)
};
constexpr auto kPlainFields =
    std::make_tuple(&Call::transa, &Call::transb, &Call::m, &Call::n, &Call::k, &Call::alpha, &Call::beta, &Call::lda,
                    &Call::ldb, &Call::ldc, &Call::a_type, &Call::b_type, &Call::c_type, &Call::stride_a,
                    &Call::stride_b, &Call::stride_c, &Call::batch, &Call::compute);
static_assert(std::tuple_size<decltype(kPlainFields)>::value == int(Role::A), "one Call member per plain role");
// Per operand (A, B, C): the matrix, the pointer array, the element type, the stride.
constexpr auto kMatrices = std::make_tuple(&Call::A, &Call::B, &Call::C);
constexpr auto kArrays = std::make_tuple(&Call::A_array, &Call::B_array, &Call::C_array);
constexpr auto kTypes = std::make_tuple(&Call::a_type, &Call::b_type, &Call::c_type);
constexpr auto kStrides = std::make_tuple(&Call::stride_a, &Call::stride_b, &Call::stride_c);

// True for a pointer array (const T* const*), false for a matrix (const T*).
template <typename P>
constexpr bool is_array = std::is_pointer<typename std::remove_cv<typename std::remove_pointer<P>::type>::type>::value;

// The parameter with role R, of value v, into the call's description.
template <Role R, typename V>
void set(Call& c, V v) {
  constexpr int operand = int(R) - int(Role::A);  // 0, 1, 2 for A, B, C
  if constexpr (R < Role::A) {
    c.*std::get<int(R)>(kPlainFields) = v;
  } else if constexpr (R != Role::Algo) {
    using Matrix = typename std::conditional<is_array<V>, typename std::remove_pointer<V>::type, V>::type;
    using T = typename std::remove_cv<typename std::remove_pointer<Matrix>::type>::type;
    if constexpr (!std::is_void<T>::value) c.*std::get<operand>(kTypes) = TypeOf<T>::type;  // typed call
    if constexpr (is_array<V>) {
      using Array = typename std::remove_reference<decltype(c.*std::get<operand>(kArrays))>::type;
      c.arrays = true;
      c.*std::get<operand>(kArrays) = reinterpret_cast<Array>(v);
    } else {
      c.*std::get<operand>(kMatrices) = v;
    }
  }
}

// The parameter with role R, of value v, for the call that forwards the matrices [c.first, batch):
// matrices and pointer arrays advanced by c.first, the batch count reduced by it.
template <Role R, typename V>
V rest(const Call& c, V v) {
  constexpr int operand = int(R) - int(Role::A);
  if constexpr (R == Role::A || R == Role::B || R == Role::C) {
    if constexpr (is_array<V>)
      return v + c.first;  // a device array: offsetting the array offsets the batch
    else
      return advance(v, c.first * c.*std::get<operand>(kStrides), c.*std::get<operand>(kTypes));
  } else if constexpr (R == Role::Batch) {
    return v - V(c.first);
  } else {
    return v;
  }
}

// A GEMM operation: the roles of its parameters after the handle, in order. Its int and _64 entry
// points (and complex ones) differ only in the parameters' types, which the templates deduce.
template <Role... R>
struct Operation {
  template <typename... V>
  static void describe(Call& c, V... v) {
    static_assert(sizeof...(R) == sizeof...(V), "one role per parameter");
    (set<R>(c, v), ...);
    c.strided = ((R == Role::StrideA) || ...);
  }
  template <typename Fn, typename... V>
  static cublasStatus_t forward(Fn fn, const Call& c, cublasHandle_t h, V... v) {
    return fn(h, rest<R>(c, v)...);
  }
};

// The operations, with their parameters (cublas_api.h) as OZ_PARAMS_<operation>(T, Int) and their
// names as OZ_ARGS_<operation>. The Ex operations take their element types at run time: T = void.
using R = Role;
// cublas<t>gemm (cublasDgemm_v2, _64)
using Gemm = Operation<R::TransA, R::TransB, R::M, R::N, R::K, R::Alpha, R::A, R::Lda, R::B, R::Ldb, R::Beta, R::C,
                       R::Ldc>;
#define OZ_PARAMS_Gemm(T, Int)                                                                                 \
  cublasOperation_t ta, cublasOperation_t tb, Int m, Int n, Int k, const T *alpha, const T *A, Int lda,        \
      const T *B, Int ldb, const T *beta, T *C, Int ldc
#define OZ_ARGS_Gemm ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc
// cublasGemmEx (_64)
using GemmEx = Operation<R::TransA, R::TransB, R::M, R::N, R::K, R::Alpha, R::A, R::AType, R::Lda, R::B, R::BType,
                         R::Ldb, R::Beta, R::C, R::CType, R::Ldc, R::Compute, R::Algo>;
#define OZ_PARAMS_GemmEx(T, Int)                                                                               \
  cublasOperation_t ta, cublasOperation_t tb, Int m, Int n, Int k, const T *alpha, const T *A, cudaDataType At, \
      Int lda, const T *B, cudaDataType Bt, Int ldb, const T *beta, T *C, cudaDataType Ct, Int ldc,            \
      cublasComputeType_t compute, cublasGemmAlgo_t algo
#define OZ_ARGS_GemmEx ta, tb, m, n, k, alpha, A, At, lda, B, Bt, ldb, beta, C, Ct, ldc, compute, algo
// cublas<t>gemmStridedBatched (_64)
using GemmStrided = Operation<R::TransA, R::TransB, R::M, R::N, R::K, R::Alpha, R::A, R::Lda, R::StrideA, R::B,
                              R::Ldb, R::StrideB, R::Beta, R::C, R::Ldc, R::StrideC, R::Batch>;
#define OZ_PARAMS_GemmStrided(T, Int)                                                                          \
  cublasOperation_t ta, cublasOperation_t tb, Int m, Int n, Int k, const T *alpha, const T *A, Int lda,        \
      long long sA, const T *B, Int ldb, long long sB, const T *beta, T *C, Int ldc, long long sC, Int batch
#define OZ_ARGS_GemmStrided ta, tb, m, n, k, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, batch
// cublas<t>gemmBatched (_64): A, B, C are device arrays of pointers
using GemmBatched = Operation<R::TransA, R::TransB, R::M, R::N, R::K, R::Alpha, R::A, R::Lda, R::B, R::Ldb, R::Beta,
                              R::C, R::Ldc, R::Batch>;
#define OZ_PARAMS_GemmBatched(T, Int)                                                                          \
  cublasOperation_t ta, cublasOperation_t tb, Int m, Int n, Int k, const T *alpha, const T *const A[], Int lda, \
      const T *const B[], Int ldb, const T *beta, T *const C[], Int ldc, Int batch
#define OZ_ARGS_GemmBatched ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch
// cublasGemmStridedBatchedEx (_64)
using GemmStridedEx = Operation<R::TransA, R::TransB, R::M, R::N, R::K, R::Alpha, R::A, R::AType, R::Lda, R::StrideA,
                                R::B, R::BType, R::Ldb, R::StrideB, R::Beta, R::C, R::CType, R::Ldc, R::StrideC,
                                R::Batch, R::Compute, R::Algo>;
#define OZ_PARAMS_GemmStridedEx(T, Int)                                                                        \
  cublasOperation_t ta, cublasOperation_t tb, Int m, Int n, Int k, const T *alpha, const T *A, cudaDataType At, \
      Int lda, long long sA, const T *B, cudaDataType Bt, Int ldb, long long sB, const T *beta, T *C,          \
      cudaDataType Ct, Int ldc, long long sC, Int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo
#define OZ_ARGS_GemmStridedEx \
  ta, tb, m, n, k, alpha, A, At, lda, sA, B, Bt, ldb, sB, beta, C, Ct, ldc, sC, batch, compute, algo
// cublasGemmBatchedEx (_64)
using GemmBatchedEx = Operation<R::TransA, R::TransB, R::M, R::N, R::K, R::Alpha, R::A, R::AType, R::Lda, R::B,
                                R::BType, R::Ldb, R::Beta, R::C, R::CType, R::Ldc, R::Batch, R::Compute, R::Algo>;
#define OZ_PARAMS_GemmBatchedEx(T, Int)                                                                        \
  cublasOperation_t ta, cublasOperation_t tb, Int m, Int n, Int k, const T *alpha, const T *const A[],          \
      cudaDataType At, Int lda, const T *const B[], cudaDataType Bt, Int ldb, const T *beta, T *const C[],     \
      cudaDataType Ct, Int ldc, Int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo
#define OZ_ARGS_GemmBatchedEx ta, tb, m, n, k, alpha, A, At, lda, B, Bt, ldb, beta, C, Ct, ldc, batch, compute, algo

// One hooked call of operation Op (real function type Fn) through entry point `api`, made from
// return address `caller`.
template <typename Op, typename Fn, typename... V>
cublasStatus_t intercept(Api api, const void* caller, cublasHandle_t h, V... v) {
  return intercept_call<Fn>(
      api, caller, h, [&](Call& c) { Op::describe(c, v...); },
      [&](Fn fn, const Call& c) { return Op::forward(fn, c, h, v...); });
}

}  // namespace
}  // namespace hook
}  // namespace dropin
}  // namespace ozgemm

using namespace ozgemm::dropin;
using namespace ozgemm::dropin::hook;

#define OZ_CALLER __builtin_return_address(0)

// The two exported entry points of an operation: NAME with int sizes (Api API) and NAME_64 with int64_t
// sizes (Api API64); OP is the operation (its parameters: OZ_PARAMS_<OP>), T the element type.
#define OZ_HOOK_ENTRY(NAME, API, OP, T, Int)                                   \
  cublasStatus_t NAME(cublasHandle_t h, OZ_PARAMS_##OP(T, Int)) {              \
    using Fn = cublasStatus_t (*)(cublasHandle_t, OZ_PARAMS_##OP(T, Int));      \
    return intercept<OP, Fn>(Api::API, OZ_CALLER, h, OZ_ARGS_##OP);             \
  }
#define OZ_HOOK_ENTRIES(NAME, API, OP, T) \
  OZ_HOOK_ENTRY(NAME, API, OP, T, int)    \
  OZ_HOOK_ENTRY(NAME##_64, API##64, OP, T, int64_t)

extern "C" {

OZ_HOOK_ENTRIES(cublasDgemm_v2, Dgemm, Gemm, double)
OZ_HOOK_ENTRIES(cublasGemmEx, GemmEx, GemmEx, void)
OZ_HOOK_ENTRIES(cublasDgemmStridedBatched, DgemmStridedBatched, GemmStrided, double)
OZ_HOOK_ENTRIES(cublasDgemmBatched, DgemmBatched, GemmBatched, double)
OZ_HOOK_ENTRIES(cublasGemmStridedBatchedEx, GemmStridedBatchedEx, GemmStridedEx, void)
OZ_HOOK_ENTRIES(cublasGemmBatchedEx, GemmBatchedEx, GemmBatchedEx, void)
OZ_HOOK_ENTRIES(cublasZgemm_v2, Zgemm, Gemm, cuDoubleComplex)
OZ_HOOK_ENTRIES(cublasZgemm3m, Zgemm3m, Gemm, cuDoubleComplex)  // the same product (ozgemm has no 3M variant)
OZ_HOOK_ENTRIES(cublasZgemmStridedBatched, ZgemmStridedBatched, GemmStrided, cuDoubleComplex)
OZ_HOOK_ENTRIES(cublasZgemmBatched, ZgemmBatched, GemmBatched, cuDoubleComplex)

cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
  bool from_ozgemm = false;
  const Real& r = real_for(OZ_CALLER, &from_ozgemm);
  if (!passthrough(from_ozgemm)) forget(h);  // libozgemm destroying its own handle: nothing of ours to free
  if (!r.destroy) return missing("cublasDestroy_v2");
  return r.destroy(h);
}

// ---- the hook's own interface (docs/dropin.md, "Counters"); for ctypes and tests ----------------------

// A counter by name (Stats::get has the names); 0 for unknown names.
unsigned long long ozgemmHookCounter(const char* name) { return stats().get(name); }

// The counters as one JSON object into buf (NUL-terminated, truncated to len); returns the length
// the whole text needs (without the NUL).
size_t ozgemmHookStatsJson(char* buf, size_t len) { return stats().copy_json(buf, len); }

void ozgemmHookResetStats(void) { stats().reset(); }

// Turns interception on (1) or off (0) at run time; returns the previous setting. Negative: query.
int ozgemmHookSetEnabled(int on) { return config().settings.set_enabled(on); }

}  // extern "C"

namespace {

// At exit: the summary (OZGEMM_HOOK_LOG=summary|all) and the stats file (OZGEMM_HOOK_STATS).
__attribute__((destructor)) void report_at_exit() {
  if (stats().any_calls()) stats().report_at_exit(config().settings);
}

}  // namespace
