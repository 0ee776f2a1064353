// src/dropin/blas.cpp — libozgemm_blas.so: host BLAS offload of DGEMM, ZGEMM, DSYRK and DSYMM.
// Exports dgemm_, zgemm_, dsyrk_ and dsymm_ (Fortran, gfortran ABI; COMPLEX*16 is two doubles, real
// part first) and cblas_dgemm, cblas_zgemm, cblas_dsyrk, cblas_dsymm; a call whose GEMM size (m*n*k;
// DSYRK n*n*k, DSYMM m*n*(m or n)) is at least OZGEMM_BLAS_MIN_SIZE is copied to the GPU through
// pinned staging buffers, run by ozgemm (ozgemmDgemm, ozgemmZgemm, ozgemmDsyrk, ozgemmDsymm), and
// copied back; every other call, and every call when no GPU or libozgemm is usable, goes to the
// system BLAS (dlopen'ed RTLD_LOCAL, by default the libblas.so.3 the loader finds, i.e. Debian's
// alternative). Every other BLAS symbol of a program is untouched: when this library is preloaded
// only these eight resolve here. The offloads of a process run on one GPU, the rank's own under a
// launcher (OZGEMM_DEVICE, else the local rank modulo the visible devices: device_choice.hpp).
//
// Argument checks of DGEMM and ZGEMM are reference BLAS's (BLAS/SRC/dgemm.f, zgemm.f): the first
// failing parameter, in the same order, is reported through xerbla_ (the program's own if it has
// one, else the system BLAS's) with the same number. DSYRK and DSYMM with an invalid argument, and
// every CBLAS call with one, are forwarded unchanged to the system's routine, so its xerbla_ /
// cblas_xerbla numbering (row-major remapping included) is exactly the system's.
// docs/dropin.md has the variables and the recipes (preload, FlexiBLAS, numpy from Debian).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "dropin/common.hpp"
#include "dropin/device_choice.hpp"
#include "dropin/reference_gemm.hpp"
#include "dropin/reference_symmetric.hpp"

namespace ozgemm {
namespace dropin {
namespace blas {

namespace {

constexpr const char* kPrefix = "ozgemm-blas";

// The Fortran xGEMM of element type T (double: DGEMM, cuDoubleComplex: ZGEMM).
template <typename T>
using F77GemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*,
                           const int*, const T*, const int*, const T*, T*, const int*, size_t, size_t);
using CblasDgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                              double*, int);
using CblasZgemmFn = void (*)(int, int, int, int, int, int, const void*, const void*, int, const void*, int,
                              const void*, void*, int);
using F77SyrkFn = void (*)(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
                          const double*, double*, const int*, size_t, size_t);
using F77SymmFn = void (*)(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
                          const double*, const int*, const double*, double*, const int*, size_t, size_t);
using CblasDsyrkFn = void (*)(int, int, int, int, int, double, const double*, int, double, double*, int);
using CblasDsymmFn = void (*)(int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                              int);
using XerblaFn = void (*)(const char*, const int*, size_t);
using CblasXerblaFn = void (*)(int, const char*, const char*, ...);

enum { kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112, kConjTrans = 113 };
enum { kUpper = 121, kLower = 122, kLeft = 141, kRight = 142 };  // CBLAS_UPLO, CBLAS_SIDE

enum Reason {
  kDisabled,
  kInvalidSetting,  // OZGEMM_BLAS_ACCURACY / _SCHEME (or the hook's) could not be read, or OZGEMM_DEVICE names
                    // no visible device: everything forwarded
  kInvalidArgs,     // reported through xerbla_ (dgemm_) or forwarded to the system cblas_dgemm
  kQuickReturn,     // m, n or k == 0, or alpha == 0: the system BLAS scales C by beta
  kBelowMinSize,
  kNoGpu,           // libozgemm or a usable GPU missing
  kFailed,          // the offload failed; the system BLAS ran the call (or its remaining columns)
  kReasonCount
};
const char* const kReasonNames[] = {"disabled", "invalid-setting", "invalid-args", "quick-return", "below-min-size",
                                    "ozgemm-unavailable", "offload-failed", nullptr};
static_assert(sizeof(kReasonNames) / sizeof(kReasonNames[0]) == kReasonCount + 1 && kReasonCount <= kMaxReasons,
              "reason names");
const char* const kApiNames[] = {"dgemm_", "cblas_dgemm", "zgemm_",      "cblas_zgemm", "dsyrk_",
                                 "cblas_dsyrk", "dsymm_", "cblas_dsymm", nullptr};
enum { kApiDsyrk = 4, kApiCblasDsyrk = 5, kApiDsymm = 6, kApiCblasDsymm = 7 };  // kApiNames indices

// What differs between the element types: T is double (DGEMM) or cuDoubleComplex (ZGEMM).
template <typename T>
struct Kind;
template <>
struct Kind<double> {
  static constexpr Element element = Element::Real;
  static constexpr const char* srname = "DGEMM ";  // for xerbla_
  static constexpr const char *routine = "DGEMM", *ozgemm_name = "ozgemmDgemm";  // for messages
  static constexpr int f77_api = 0, cblas_api = 1;  // kApiNames indices
  static bool is_zero(double a) { return a == 0.0; }
};
template <>
struct Kind<cuDoubleComplex> {
  static constexpr Element element = Element::Complex;
  static constexpr const char* srname = "ZGEMM ";
  static constexpr const char *routine = "ZGEMM", *ozgemm_name = "ozgemmZgemm";
  static constexpr int f77_api = 2, cblas_api = 3;
  static bool is_zero(cuDoubleComplex a) { return a.x == 0.0 && a.y == 0.0; }
};

Stats& stats() {
  static Stats* s = new Stats(kPrefix, kReasonNames, kApiNames);  // never destroyed: read by the exit report
  return *s;
}

struct Config {
  Settings settings;
  int64_t stage_bytes = int64_t(32) << 20;  // each of the two pinned staging buffers (a testing knob)
};
Config& config() {
  static Config* c = [] {
    auto* cfg = new Config();  // never destroyed
    // The accuracy and scheme default to the hook's variables (one setting for a process using both).
    cfg->settings.read(kPrefix, "OZGEMM_BLAS", "OZGEMM_HOOK", int64_t(1) << 27);  // 512^3
    cfg->stage_bytes = std::max<int64_t>(64, env_size(kPrefix, "OZGEMM_BLAS_STAGE_BYTES", cfg->stage_bytes));
    return cfg;
  }();
  return *c;
}

const void* self_address() { return reinterpret_cast<const void*>(&self_address); }
bool is_self(const void* p) {
  Dl_info a, b;
  return p && dladdr(p, &a) && dladdr(self_address(), &b) && a.dli_fbase == b.dli_fbase;
}

// ---- the system BLAS -------------------------------------------------------------------------------

struct System {
  void* lib = nullptr;
  std::string path;
  F77GemmFn<double> dgemm = nullptr;
  F77GemmFn<cuDoubleComplex> zgemm = nullptr;  // null: the built-in reference ZGEMM
  CblasDgemmFn cblas_dgemm = nullptr;
  CblasZgemmFn cblas_zgemm = nullptr;
  F77SyrkFn dsyrk = nullptr;  // null: the built-in reference DSYRK (reference_symmetric.hpp)
  F77SymmFn dsymm = nullptr;  // null: the built-in reference DSYMM
  CblasDsyrkFn cblas_dsyrk = nullptr;
  CblasDsymmFn cblas_dsymm = nullptr;
  template <typename T>
  F77GemmFn<T> f77() const;
};
template <>
F77GemmFn<double> System::f77<double>() const { return dgemm; }
template <>
F77GemmFn<cuDoubleComplex> System::f77<cuDoubleComplex>() const { return zgemm; }

#if defined(__x86_64__)
#define OZ_TRIPLET "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define OZ_TRIPLET "aarch64-linux-gnu"
#elif defined(__powerpc64__)
#define OZ_TRIPLET "powerpc64le-linux-gnu"
#else
#define OZ_TRIPLET ""
#endif

System load_system() {
  System s;
  DepthGuard guard;  // the BLAS's constructors (or LAPACK init) may call dgemm_
  std::string tried;
  auto attempt = [&](const std::string& p) {
    if (s.lib || p.empty()) return;
    void* lib = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(e ? e : p.c_str());
      return;
    }
    void* f = dlsym(lib, "dgemm_");
    if (!f || is_self(f)) {  // e.g. this library installed as the libblas.so.3 alternative
      tried += (tried.empty() ? "" : "; ") + p + (f ? ": is libozgemm_blas itself" : ": has no dgemm_");
      dlclose(lib);
      return;
    }
    s.lib = lib;
    s.path = object_path(f);
    s.dgemm = reinterpret_cast<F77GemmFn<double>>(f);
    // The others are optional (null: not in this BLAS, or, impossibly, ours).
    auto other = [&](const char* name) {
      void* g = dlsym(lib, name);
      return (g && !is_self(g)) ? g : nullptr;
    };
    s.zgemm = reinterpret_cast<F77GemmFn<cuDoubleComplex>>(other("zgemm_"));
    s.cblas_dgemm = reinterpret_cast<CblasDgemmFn>(other("cblas_dgemm"));
    s.cblas_zgemm = reinterpret_cast<CblasZgemmFn>(other("cblas_zgemm"));
    s.dsyrk = reinterpret_cast<F77SyrkFn>(other("dsyrk_"));
    s.dsymm = reinterpret_cast<F77SymmFn>(other("dsymm_"));
    s.cblas_dsyrk = reinterpret_cast<CblasDsyrkFn>(other("cblas_dsyrk"));
    s.cblas_dsymm = reinterpret_cast<CblasDsymmFn>(other("cblas_dsymm"));
  };
  if (const char* p = env_str("OZGEMM_SYSTEM_BLAS")) attempt(p);
  // The soname first: a copy already in the process (numpy's, the program's) or the one the loader's
  // search path (Debian: the libblas.so.3 alternative) gives.
  attempt("libblas.so.3");
  attempt("/usr/lib/" OZ_TRIPLET "/blas/libblas.so.3");
  attempt("/usr/lib/" OZ_TRIPLET "/openblas-pthread/libblas.so.3");
  attempt("/usr/lib64/libblas.so.3");
  attempt("libopenblas.so.0");
  if (!s.lib)
    say(kPrefix, "no system BLAS found (%s); set OZGEMM_SYSTEM_BLAS. Using a built-in reference DGEMM and ZGEMM",
        tried.c_str());
  return s;
}

const System& sys() {
  static std::once_flag once;
  static System* s = nullptr;
  std::call_once(once, [] { s = new System(load_system()); });
  return *s;
}

bool lsame(char c, char u) { return c == u || c == u + ('a' - 'A'); }

// The system's Fortran xGEMM (else the built-in reference one), column-major.
template <typename T>
void system_gemm(char ta, char tb, int m, int n, int k, T alpha, const T* A, int lda, const T* B, int ldb, T beta,
                 T* C, int ldc) {
  DepthGuard guard;
  if (const auto f = sys().f77<T>()) {
    f(&ta, &tb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
  } else {
    reference_gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  }
}

// The system's DSYRK and DSYMM (else the built-in reference ones), column-major.
void system_syrk(char uplo, char trans, int n, int k, double alpha, const double* A, int lda, double beta, double* C,
                 int ldc) {
  DepthGuard guard;
  if (const auto f = sys().dsyrk) {
    f(&uplo, &trans, &n, &k, &alpha, A, &lda, &beta, C, &ldc, 1, 1);
  } else {
    reference_rank_k(1, lsame(uplo, 'L'), !lsame(trans, 'N'), n, k, alpha, A, lda, A, lda, beta, C, ldc);
  }
}
void system_symm(char side, char uplo, int m, int n, double alpha, const double* A, int lda, const double* B, int ldb,
                 double beta, double* C, int ldc) {
  DepthGuard guard;
  if (const auto f = sys().dsymm) {
    f(&side, &uplo, &m, &n, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
  } else {
    reference_symm(lsame(side, 'L'), lsame(uplo, 'L'), m, n, alpha, A, lda, B, ldb, beta, C, ldc);
  }
}

// xerbla_ as reference BLAS calls it: the program's (RTLD_DEFAULT finds an executable's override
// first), else the system BLAS's; never a definition of our own.
void report(const char* srname, int info) {
  void* f = dlsym(RTLD_DEFAULT, "xerbla_");
  if (!f || is_self(f)) f = sys().lib ? dlsym(sys().lib, "xerbla_") : nullptr;
  if (f) {
    reinterpret_cast<XerblaFn>(f)(srname, &info, std::strlen(srname));
  } else {
    std::fprintf(stderr, " ** On entry to %.6s parameter number %2d had an illegal value\n", srname, info);
  }
}

// reference DGEMM's (and ZGEMM's: the same) checks: the first failing parameter number, 0 if all valid
int check_gemm(char ta, char tb, int m, int n, int k, int lda, int ldb, int ldc) {
  return gemm_argument_error(op_of_char(ta), op_of_char(tb), m, n, k, lda, ldb, ldc);
}

// reference DSYRK's checks (BLAS/SRC/dsyrk.f): the first failing parameter number, 0 if all valid
// (1 UPLO, 2 TRANS, 3 N, 4 K, 7 LDA, 10 LDC).
int check_syrk(char uplo, char trans, int n, int k, int lda, int ldc) {
  if (!lsame(uplo, 'U') && !lsame(uplo, 'L')) return 1;
  if (op_of_char(trans) == Op::Invalid) return 2;
  if (n < 0) return 3;
  if (k < 0) return 4;
  if (lda < std::max(1, lsame(trans, 'N') ? n : k)) return 7;
  if (ldc < std::max(1, n)) return 10;
  return 0;
}
// reference DSYMM's (BLAS/SRC/dsymm.f): 1 SIDE, 2 UPLO, 3 M, 4 N, 7 LDA, 9 LDB, 12 LDC.
int check_symm(char side, char uplo, int m, int n, int lda, int ldb, int ldc) {
  if (!lsame(side, 'L') && !lsame(side, 'R')) return 1;
  if (!lsame(uplo, 'U') && !lsame(uplo, 'L')) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (lda < std::max(1, lsame(side, 'L') ? m : n)) return 7;
  if (ldb < std::max(1, m)) return 9;
  if (ldc < std::max(1, m)) return 12;
  return 0;
}

// ---- the offload -------------------------------------------------------------------------------------

struct Offload {
  std::mutex mu;  // one offload at a time (the staging buffers and device buffers are shared)
  bool tried = false, usable = false;
  Reason unusable = kNoGpu;  // why not usable: kNoGpu, or kInvalidSetting (OZGEMM_DEVICE)
  int device = 0;            // choose_device's choice: the handle, stream and buffers live there
  ozgemmHandle_t oz = nullptr;
  cudaStream_t stream = nullptr;
  void* dev[3] = {nullptr, nullptr, nullptr};  // A, B, C (tight: ld = rows; of the last call's element type)
  size_t dev_bytes[3] = {0, 0, 0};
  void* stage[2] = {nullptr, nullptr};
  size_t stage_bytes = 0;
  cudaEvent_t ev[2] = {nullptr, nullptr};
  bool ev_pending[2] = {false, false};
};
Offload& offload_state() {
  static Offload* o = new Offload();  // never destroyed (the CUDA runtime may be gone at exit)
  return *o;
}

bool cuda_ok(const OzApi& oz, cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  oz.get_last_error();
  std::string key = std::string("cuda-") + what;
  say_once(kPrefix, key.c_str(), "%s failed (%s); the system BLAS runs such calls", what, oz.get_error_string(e));
  return false;
}

// The driver's current-context functions (libcuda.so.1, loaded by the CUDA runtime once it has run);
// null where that library is not in the process (the mock runtime of the CPU tests).
struct DriverContext {
  int (*get)(void** ctx) = nullptr;  // cuCtxGetCurrent
  int (*set)(void* ctx) = nullptr;   // cuCtxSetCurrent
};
const DriverContext& driver_context() {
  static const DriverContext d = [] {
    DriverContext r;
    if (void* lib = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY)) {
      r.get = reinterpret_cast<int (*)(void**)>(dlsym(lib, "cuCtxGetCurrent"));
      r.set = reinterpret_cast<int (*)(void*)>(dlsym(lib, "cuCtxSetCurrent"));
      if (!r.get || !r.set) r = DriverContext{};
    }
    return r;
  }();
  return d;
}

// Makes `device` current in this thread for its scope and the caller's context current again after
// (the program's current device is never changed by a BLAS call). The caller's *context* is restored
// through the driver where it can be: a thread (e.g. a CPU-only rank's) that had none gets none back,
// where cudaSetDevice(0) would create device 0's context in every such rank. ok() is false when the
// switch failed.
class ScopedDevice {
 public:
  ScopedDevice(const OzApi& oz, int device) : oz_(oz) {
    if (oz.get_device(&caller_) != cudaSuccess) {
      oz.get_last_error();
      caller_ = -1;
    }
    const DriverContext& d = driver_context();
    saved_ = d.get && d.get(&ctx_) == 0;
    if (caller_ != device) ok_ = switched_ = cuda_ok(oz, oz.set_device(device), "cudaSetDevice");
  }
  ~ScopedDevice() {
    if (!switched_) return;
    if (saved_)
      driver_context().set(ctx_);  // (null: no context current, as before the call)
    else if (caller_ >= 0)
      oz_.set_device(caller_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  bool ok() const { return ok_; }

 private:
  const OzApi& oz_;
  int caller_ = -1;
  void* ctx_ = nullptr;  // the caller's current driver context (saved_), possibly none
  bool ok_ = true, switched_ = false, saved_ = false;
};

// The device of this process's offloads (choose_device on the environment), said once: always when
// OZGEMM_DEVICE names no device or the GPU is shared with another local rank, else under a log
// setting. False: no device (o.unusable says why).
bool pick_device(Offload& o, const OzApi& oz, int visible) {
  int current = 0;
  if (oz.get_device(&current) != cudaSuccess) {
    oz.get_last_error();
    current = 0;
  }
  const DeviceChoice c = choose_device(visible, current, [](const char* name) { return env_str(name); });
  if (c.device < 0) {
    say_once(kPrefix, "device", "%s; every DGEMM and ZGEMM goes to the system BLAS", c.reason.c_str());
    o.unusable = kInvalidSetting;
    return false;
  }
  o.device = c.device;
  if (c.shared || config().settings.log != LogMode::None)
    say_once(kPrefix, "device", "offloads run on device %d (%s)", c.device, c.reason.c_str());
  return true;
}

bool init(Offload& o, const OzApi& oz) {
  o.tried = true;
  DepthGuard guard;
  int count = 0;
  if (oz.get_device_count(&count) != cudaSuccess || count == 0) {
    oz.get_last_error();
    say_once(kPrefix, "nogpu", "no usable GPU; every DGEMM goes to the system BLAS");
    return false;
  }
  if (!pick_device(o, oz, count)) return false;
  // The handle (and so its cuBLAS handles and workspace), the stream and the events belong to the
  // device current at their creation: o.device.
  ScopedDevice on_device(oz, o.device);
  if (!on_device.ok()) return false;
  ozgemmStatus_t s = oz.create(&o.oz);
  if (s != OZGEMM_STATUS_SUCCESS) {
    oz.get_last_error();
    say_once(kPrefix, "create", "ozgemm cannot run here (%s); every DGEMM goes to the system BLAS",
             oz.status_string(s));
    return false;
  }
  const AccuracySetting& accuracy = config().settings.accuracy;
  s = apply(oz, o.oz, accuracy);
  if (s != OZGEMM_STATUS_SUCCESS) {
    oz.get_last_error();
    say_once(kPrefix, "create", "ozgemm rejects the accuracy setting (%s: %s); every DGEMM goes to the system BLAS",
             accuracy.text().c_str(), oz.status_string(s));
    return false;
  }
  if (!cuda_ok(oz, oz.stream_create(&o.stream, cudaStreamNonBlocking), "cudaStreamCreate")) return false;
  for (auto& e : o.ev)
    if (!cuda_ok(oz, oz.event_create(&e, cudaEventDisableTiming), "cudaEventCreate")) return false;
  if (oz.set_stream(o.oz, o.stream) != OZGEMM_STATUS_SUCCESS) return false;
  return true;
}

bool ensure_stage(Offload& o, const OzApi& oz, size_t bytes) {
  if (o.stage_bytes >= bytes) return true;
  for (int i = 0; i < 2; ++i) {
    if (o.ev_pending[i]) oz.event_synchronize(o.ev[i]);
    o.ev_pending[i] = false;
    if (o.stage[i]) oz.free_host(o.stage[i]);
    o.stage[i] = nullptr;
  }
  o.stage_bytes = 0;
  for (auto& s : o.stage)
    if (!cuda_ok(oz, oz.malloc_host(&s, bytes), "cudaMallocHost")) return false;
  o.stage_bytes = bytes;
  return true;
}

bool ensure_dev(Offload& o, const OzApi& oz, int i, size_t bytes) {
  if (o.dev_bytes[i] >= bytes) return true;
  if (o.dev[i]) oz.free(o.dev[i]);  // earlier calls finished: every offload ends with a synchronisation
  o.dev[i] = nullptr;
  o.dev_bytes[i] = 0;
  void* p = nullptr;
  if (!cuda_ok(oz, oz.malloc(&p, bytes), "cudaMalloc")) return false;
  o.dev[i] = p;
  o.dev_bytes[i] = bytes;
  return true;
}

// Host (rows x cols, leading dimension ld) -> device (tight), through the two staging buffers: the
// packing of one chunk of columns overlaps the transfer of the previous one.
template <typename T>
bool upload(Offload& o, const OzApi& oz, const T* src, int64_t rows, int64_t cols, int64_t ld, void* dev, int* slot) {
  T* dst = static_cast<T*>(dev);
  const int64_t chunk = std::max<int64_t>(1, int64_t(o.stage_bytes / sizeof(T)) / rows);
  for (int64_t j0 = 0; j0 < cols; j0 += chunk) {
    const int64_t jn = std::min(chunk, cols - j0);
    const int s = *slot;
    *slot ^= 1;
    if (o.ev_pending[s] && !cuda_ok(oz, oz.event_synchronize(o.ev[s]), "cudaEventSynchronize")) return false;
    o.ev_pending[s] = false;
    T* st = static_cast<T*>(o.stage[s]);
    if (ld == rows) {
      std::memcpy(st, src + j0 * ld, size_t(rows * jn) * sizeof(T));
    } else {
      for (int64_t j = 0; j < jn; ++j) std::memcpy(st + j * rows, src + (j0 + j) * ld, size_t(rows) * sizeof(T));
    }
    if (!cuda_ok(oz, oz.memcpy_async(dst + j0 * rows, st, size_t(rows * jn) * sizeof(T),
                                     cudaMemcpyHostToDevice, o.stream),
                 "cudaMemcpyAsync (to the GPU)") ||
        !cuda_ok(oz, oz.event_record(o.ev[s], o.stream), "cudaEventRecord"))
      return false;
    o.ev_pending[s] = true;
  }
  return true;
}

// Device C (m x n, tight) -> host C (ldc): the transfer of one chunk overlaps the unpacking of the
// previous one. triangle 'U' / 'L': only that triangle of each column is written (rows 0..j or j..m-1;
// the other stays exactly as the caller's memory holds it, as BLAS's SYRK promises); else all of C.
// Returns the number of leading columns of C that hold the result (n on success).
template <typename T>
int64_t download(Offload& o, const OzApi& oz, const void* dev, int64_t m, int64_t n, T* C, int64_t ldc,
                 char triangle = 0) {
  const T* src = static_cast<const T*>(dev);
  const int64_t chunk = std::max<int64_t>(1, int64_t(o.stage_bytes / sizeof(T)) / m);
  const int64_t chunks = (n + chunk - 1) / chunk;
  auto issue = [&](int64_t c) {
    const int s = int(c & 1);
    const int64_t j0 = c * chunk, jn = std::min(chunk, n - j0);
    return cuda_ok(oz, oz.memcpy_async(o.stage[s], src + j0 * m, size_t(m * jn) * sizeof(T),
                                       cudaMemcpyDeviceToHost, o.stream),
                   "cudaMemcpyAsync (from the GPU)") &&
           cuda_ok(oz, oz.event_record(o.ev[s], o.stream), "cudaEventRecord");
  };
  // Staging buffers are free: upload() left events that the GEMM (later in the stream) implies.
  o.ev_pending[0] = o.ev_pending[1] = false;
  if (!issue(0)) return 0;
  for (int64_t c = 0; c < chunks; ++c) {
    const int s = int(c & 1);
    if (c + 1 < chunks && !issue(c + 1)) return c * chunk;
    if (!cuda_ok(oz, oz.event_synchronize(o.ev[s]), "cudaEventSynchronize")) return c * chunk;
    const int64_t j0 = c * chunk, jn = std::min(chunk, n - j0);
    const T* st = static_cast<const T*>(o.stage[s]);
    if (triangle == 'U' || triangle == 'L') {
      for (int64_t j = 0; j < jn; ++j) {
        const int64_t col = j0 + j, r0 = triangle == 'U' ? 0 : std::min(col, m), r1 = triangle == 'U' ? std::min(col + 1, m) : m;
        if (r1 > r0) std::memcpy(C + col * ldc + r0, st + j * m + r0, size_t(r1 - r0) * sizeof(T));
      }
    } else if (ldc == m) {
      std::memcpy(C + j0 * ldc, st, size_t(m * jn) * sizeof(T));
    } else {
      for (int64_t j = 0; j < jn; ++j) std::memcpy(C + (j0 + j) * ldc, st + j * m, size_t(m) * sizeof(T));
    }
  }
  return n;
}

// ozgemm on the device operands (tight leading dimensions) with BLAS's operation characters.
ozgemmStatus_t run_ozgemm(const OzApi& oz, ozgemmHandle_t h, char ta, char tb, int m, int n, int k, const double* alpha,
                          const void* A, int lda, const void* B, int ldb, const double* beta, void* C) {
  auto op = [](char t) { return lsame(t, 'N') ? CUBLAS_OP_N : CUBLAS_OP_T; };  // 'C' is 'T' for real data
  return oz.dgemm(h, op(ta), op(tb), m, n, k, alpha, static_cast<const double*>(A), lda,
                  static_cast<const double*>(B), ldb, beta, static_cast<double*>(C), m);
}
ozgemmStatus_t run_ozgemm(const OzApi& oz, ozgemmHandle_t h, char ta, char tb, int m, int n, int k,
                          const cuDoubleComplex* alpha, const void* A, int lda, const void* B, int ldb,
                          const cuDoubleComplex* beta, void* C) {
  auto op = [](char t) { return lsame(t, 'N') ? CUBLAS_OP_N : lsame(t, 'C') ? CUBLAS_OP_C : CUBLAS_OP_T; };
  return oz.zgemm(h, op(ta), op(tb), m, n, k, alpha, static_cast<const cuDoubleComplex*>(A), lda,
                  static_cast<const cuDoubleComplex*>(B), ldb, beta, static_cast<cuDoubleComplex*>(C), m);
}

// A column-major host operand to copy to the device: rows x cols, leading dimension ld (data nullptr:
// no such operand).
template <typename T>
struct HostOperand {
  const T* data = nullptr;
  int64_t rows = 0, cols = 0, ld = 0;
};

// One call on the GPU: the operands in[0] and in[1] (A, B) are copied to device buffers 0 and 1
// (tight: ld = rows), C (m x n, ldc) to buffer 2 when upload_c, run(oz, handle, dev) runs ozgemm on
// the offload's stream, and C comes back (all m x n of it, or only the `triangle` 'U'/'L' of it: the
// SYRK routines). Column-major, arguments valid, nothing
// empty. `needs` names the ozgemm function run() calls, present(oz) says whether libozgemm has it;
// `routine` ("DGEMM", "DSYRK", ...) and `shape` are for messages. Returns the number of leading
// columns of C that hold the final result: n when done, 0 when C was not touched (*unavailable: why:
// kNoGpu or kInvalidSetting when the offload cannot run at all, kFailed when this call failed; C is
// written only by the copy back, so a failure of ozgemm itself leaves it as it was). *info: what
// ozgemm ran (when *have_info).
template <typename T, typename Present, typename Run>
int64_t offload(const char* routine, const char* needs, Present present, const char* shape,
                const HostOperand<T> (&in)[2], T* C, int64_t m, int64_t n, int64_t ldc, bool upload_c, Run run,
                Reason* unavailable, ozgemmCallInfo_t* info, bool* have_info, char triangle = 0) {
  const OzApi& oz = oz_api(self_address());
  *unavailable = kFailed;
  if (!oz.ok) {
    say_once(kPrefix, "load", "%s; every DGEMM and ZGEMM goes to the system BLAS", oz.error.c_str());
    *unavailable = kNoGpu;
    return 0;
  }
  if (!present(oz)) {
    const std::string key = std::string("no-") + needs;
    say_once(kPrefix, key.c_str(), "%s lacks %s; every %s goes to the system BLAS", oz.path.c_str(), needs, routine);
    *unavailable = kNoGpu;
    return 0;
  }
  Offload& o = offload_state();
  std::lock_guard<std::mutex> lock(o.mu);
  if (!o.tried) o.usable = init(o, oz);
  if (!o.usable) {
    *unavailable = o.unusable;
    return 0;
  }
  DepthGuard guard;
  ScopedDevice on_device(oz, o.device);
  if (!on_device.ok()) return 0;

  const int64_t e = sizeof(T);
  int64_t done = 0;
  int64_t stage = std::max<int64_t>(config().stage_bytes, m * e);  // at least one column of each
  for (const auto& x : in) stage = std::max(stage, x.rows * e);
  bool ok = ensure_stage(o, oz, size_t(stage));
  for (int i = 0; i < 2; ++i) ok = ok && ensure_dev(o, oz, i, size_t(in[i].rows * in[i].cols * e));
  ok = ok && ensure_dev(o, oz, 2, size_t(m * n * e));
  int slot = 0;
  for (int i = 0; i < 2; ++i)
    if (in[i].data) ok = ok && upload(o, oz, in[i].data, in[i].rows, in[i].cols, in[i].ld, o.dev[i], &slot);
  if (ok && upload_c) ok = upload(o, oz, static_cast<const T*>(C), m, n, ldc, o.dev[2], &slot);
  if (ok) {
    ozgemmStatus_t s = oz.set_stream(o.oz, o.stream);
    if (s == OZGEMM_STATUS_SUCCESS) s = run(oz, o.oz, o.dev);
    if (s != OZGEMM_STATUS_SUCCESS) {
      oz.get_last_error();
      std::string key = std::string("fail-") + oz.status_string(s);
      say_once(kPrefix, key.c_str(), "ozgemm failed on %s %s (%s); the system BLAS runs the call"
               " (reported once per status)", routine, shape, oz.status_string(s));
      ok = false;
    } else {
      *have_info = last_call_info(oz, o.oz, info) != nullptr;
    }
  }
  if (ok) done = download<T>(o, oz, o.dev[2], m, n, C, ldc, triangle);
  if (!ok || done < n) {
    // Leave nothing in flight that reads the staging buffers.
    oz.stream_synchronize(o.stream);
    oz.get_last_error();
    o.ev_pending[0] = o.ev_pending[1] = false;
  }
  return done;
}

void log_call(const char* api, const char* shape, const char* outcome) {
  say(kPrefix, "%s %s -> %s", api, shape, outcome);
}

// What the decision needs to know of one valid column-major call.
struct CallFacts {
  int api;           // kApiNames index
  Element element;
  const char* routine;  // "DGEMM", "DSYRK", ... (messages)
  bool quick;        // nothing to compute: m, n or k == 0, or alpha == 0 (the system BLAS scales C by beta)
  double size;       // m*n*k of the GEMM the call is (SYRK n*n*k, SYMM m*n*(m or n)): OZGEMM_BLAS_MIN_SIZE's unit
  double flop;       // real flops of the call (the counters)
  int n;             // columns of C
};

// The decision and the run, for a valid column-major call. shape: the call for messages and log
// lines ("NT m=7 n=5 k=6"). offload(&unavailable, &info, &have_info) runs it on the GPU and returns
// the leading columns of C done (offload() above); forward() runs the whole call on the system BLAS
// (the entry point's own function, unchanged arguments); finish(j) computes C's columns j.. (0 < j <
// n) on the system BLAS after a copy back failed part-way (columns 0..j-1 hold the result, the rest
// of C is as the caller passed it).
template <typename Offload, typename Forward, typename Finish>
void run_call(const CallFacts& f, const char* shape, Offload offload, Forward forward, Finish finish) {
  Stats& S = stats();
  const Settings& set = config().settings;
  auto decline = [&](Reason r) {
    S.decline(r);
    if (set.log == LogMode::All) {
      std::string o = std::string("system BLAS (") + kReasonNames[r] + ")";
      log_call(kApiNames[f.api], shape, o.c_str());
    }
    DepthGuard guard;
    forward();
  };
  if (!set.enabled.load(std::memory_order_relaxed)) return decline(kDisabled);
  if (!set.accuracy_valid) return decline(kInvalidSetting);
  if (f.quick) return decline(kQuickReturn);
  if (f.size < double(set.min_size)) return decline(kBelowMinSize);

  const uint64_t t0 = now_ns();
  Reason unavailable = kFailed;
  bool have_info = false;
  ozgemmCallInfo_t info{};
  const int64_t done = offload(&unavailable, &info, &have_info);
  if (done == 0) return decline(unavailable);
  if (done < f.n) {
    S.failed.fetch_add(1, std::memory_order_relaxed);
    S.decline(kFailed);
    say_once(kPrefix, "partial", "a transfer from the GPU failed after %" PRId64 " of %d columns; the system BLAS"
             " computes the remaining columns", done, f.n);
    DepthGuard guard;
    finish(int(done));
    return;
  }
  const uint64_t dt = now_ns() - t0;
  S.intercepted(f.element, f.flop, dt);
  const Ran ran = S.record(f.element, have_info ? &info : nullptr);
  if (set.log == LogMode::Calls || set.log == LogMode::All) {
    const OzApi& oz = oz_api(self_address());
    char o[400];
    std::snprintf(o, sizeof o, "GPU ozgemm: %s [%s] %.3f ms (with transfers)",
                  describe_run(oz, ran, info, f.element).c_str(), have_info ? info.reason : set.accuracy.text().c_str(),
                  dt * 1e-6);
    log_call(kApiNames[f.api], shape, o);
  }
}

// xGEMM, valid, column-major.
template <typename T, typename Forward>
void gemm(int api, char ta, char tb, int m, int n, int k, T alpha, const T* A, int lda, const T* B, int ldb, T beta,
          T* C, int ldc, Forward forward) {
  constexpr Element elem = Kind<T>::element;
  const CallFacts f{api, elem, Kind<T>::routine, m == 0 || n == 0 || k == 0 || Kind<T>::is_zero(alpha),
                    double(m) * double(n) * double(k), gemm_flop(elem, m, n, k), n};
  char shape[80];
  std::snprintf(shape, sizeof shape, "%c%c m=%d n=%d k=%d", ta, tb, m, n, k);
  const Op opa = op_of_char(ta), opb = op_of_char(tb);
  const HostOperand<T> in[2] = {{A, rows_a(opa, m, k), opa == Op::N ? k : m, lda},
                                {B, rows_b(opb, k, n), opb == Op::N ? n : k, ldb}};
  auto present = [](const OzApi& oz) { return elem == Element::Real || oz.zgemm != nullptr; };
  auto run = [&](const OzApi& oz, ozgemmHandle_t h, void* const* dev) {
    return run_ozgemm(oz, h, ta, tb, m, n, k, &alpha, dev[0], int(in[0].rows), dev[1], int(in[1].rows), &beta, dev[2]);
  };
  run_call(
      f, shape,
      [&](Reason* unavailable, ozgemmCallInfo_t* info, bool* have_info) {
        // beta == 0: C is not read (NaN in it must not propagate), so it is not copied up
        return offload(Kind<T>::routine, Kind<T>::ozgemm_name, present, shape, in, C, m, n, ldc,
                       !Kind<T>::is_zero(beta), run, unavailable, info, have_info);
      },
      forward,
      [&](int j) {  // the columns j.. of C: op(B)'s columns j..
        system_gemm(ta, tb, m, n - j, k, alpha, A, lda, lsame(tb, 'N') ? B + int64_t(j) * ldb : B + j, ldb, beta,
                    C + int64_t(j) * ldc, ldc);
      });
}

// DSYRK, valid, column-major: C's uplo triangle = alpha op(A) op(A)^T + beta C, the other triangle
// untouched. The whole C goes to the GPU and back (also when beta == 0): ozgemmDsyrk leaves the other
// triangle of the device copy as it came, so it returns bit for bit, and whole columns are one copy
// each way (a triangle alone would need a copy per column).
template <typename Forward>
void syrk(int api, char uplo, char trans, int n, int k, double alpha, const double* A, int lda, double beta,
          double* C, int ldc, Forward forward) {
  const bool notrans = lsame(trans, 'N');
  const CallFacts f{api, Element::Real, "DSYRK", n == 0 || k == 0 || alpha == 0.0,
                    double(n) * double(n) * double(k), double(n) * double(n + 1) * double(k), n};
  char shape[80];
  std::snprintf(shape, sizeof shape, "%c%c n=%d k=%d", uplo, trans, n, k);
  const HostOperand<double> in[2] = {{A, notrans ? n : k, notrans ? k : n, lda}, {}};
  auto present = [](const OzApi& oz) { return oz.dsyrk != nullptr; };
  auto run = [&](const OzApi& oz, ozgemmHandle_t h, void* const* dev) {
    return oz.dsyrk(h, lsame(uplo, 'L') ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER,
                    notrans ? CUBLAS_OP_N : CUBLAS_OP_T, n, k, &alpha, static_cast<const double*>(dev[0]),
                    int(in[0].rows), &beta, static_cast<double*>(dev[2]), n);
  };
  run_call(
      f, shape,
      [&](Reason* unavailable, ozgemmCallInfo_t* info, bool* have_info) {
        return offload("DSYRK", "ozgemmDsyrk", present, shape, in, C, n, n, ldc, true, run, unavailable, info,
                       have_info, lsame(uplo, 'L') ? 'L' : 'U');
      },
      forward,
      [&](int j) {
        // Columns j.. of the triangle: the trailing triangle C(j:, j:), a DSYRK of op(A)'s rows j..,
        // and (upper) the rows 0..j-1 above it, the GEMM op(A)(0:j, :) op(A)(j:, :)^T.
        const double* rows_j = notrans ? A + j : A + int64_t(j) * lda;  // op(A)'s row j
        double* c_j = C + int64_t(j) * ldc;
        if (!lsame(uplo, 'L'))
          system_gemm(notrans ? 'N' : 'T', notrans ? 'T' : 'N', j, n - j, k, alpha, A, lda, rows_j, lda, beta, c_j,
                      ldc);
        system_syrk(uplo, trans, n - j, k, alpha, rows_j, lda, beta, c_j + j, ldc);
      });
}

// DSYMM, valid, column-major: C = alpha A B + beta C (side L, A m x m) or alpha B A + beta C (R, A n x n),
// only A's uplo triangle read. Every entry of C is written: C goes up only when beta != 0.
template <typename Forward>
void symm(int api, char side, char uplo, int m, int n, double alpha, const double* A, int lda, const double* B,
          int ldb, double beta, double* C, int ldc, Forward forward) {
  const bool left = lsame(side, 'L'), upper = lsame(uplo, 'U');
  const int ka = left ? m : n;
  const CallFacts f{api, Element::Real, "DSYMM", m == 0 || n == 0 || alpha == 0.0,
                    double(m) * double(n) * double(ka), gemm_flop(Element::Real, m, n, ka), n};
  char shape[80];
  std::snprintf(shape, sizeof shape, "%c%c m=%d n=%d", side, uplo, m, n);
  const HostOperand<double> in[2] = {{A, ka, ka, lda}, {B, m, n, ldb}};
  auto present = [](const OzApi& oz) { return oz.dsymm != nullptr; };
  auto run = [&](const OzApi& oz, ozgemmHandle_t h, void* const* dev) {
    return oz.dsymm(h, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER,
                    m, n, &alpha, static_cast<const double*>(dev[0]), ka, static_cast<const double*>(dev[1]), m,
                    &beta, static_cast<double*>(dev[2]), m);
  };
  run_call(
      f, shape,
      [&](Reason* unavailable, ozgemmCallInfo_t* info, bool* have_info) {
        return offload("DSYMM", "ozgemmDsymm", present, shape, in, C, m, n, ldc, beta != 0.0, run, unavailable, info,
                       have_info);
      },
      forward,
      [&](int j) {
        const double* b_j = B + int64_t(j) * ldb;
        double* c_j = C + int64_t(j) * ldc;
        if (left) {  // C(:, j:) = alpha A B(:, j:) + beta C(:, j:)
          system_symm(side, uplo, m, n - j, alpha, A, lda, b_j, ldb, beta, c_j, ldc);
          return;
        }
        // C(:, j:) = alpha B(:, :j) A(:j, j:) + alpha B(:, j:) A(j:, j:) + beta C(:, j:), where A(:j, j:)
        // is stored (upper) or is the transpose of the stored A(j:, :j) (lower).
        system_gemm('N', upper ? 'N' : 'T', m, n - j, j, alpha, B, ldb, upper ? A + int64_t(j) * lda : A + j, lda,
                    beta, c_j, ldc);
        system_symm(side, uplo, m, n - j, alpha, A + j + int64_t(j) * lda, lda, b_j, ldb, 1.0, c_j, ldc);
      });
}

}  // namespace

}  // namespace blas
}  // namespace dropin
}  // namespace ozgemm

namespace ozgemm {
namespace dropin {
namespace blas {
namespace {

// The Fortran entry point of element type T (dgemm_, zgemm_): the arguments as the caller passed them.
template <typename T>
void f77_gemm(const char* transa, const char* transb, const int* m, const int* n, const int* k, const T* alpha,
              const T* A, const int* lda, const T* B, const int* ldb, const T* beta, T* C, const int* ldc) {
  if (depth() > 0) {  // the system BLAS (its cblas_xgemm, its LAPACK) calling back: pass through
    stats().internal.fetch_add(1, std::memory_order_relaxed);
    if (const auto f = sys().f77<T>()) {
      f(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 1, 1);
    } else {
      system_gemm(*transa, *transb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
    }
    return;
  }
  Stats& S = stats();
  S.calls.fetch_add(1, std::memory_order_relaxed);
  S.per_api[Kind<T>::f77_api].fetch_add(1, std::memory_order_relaxed);
  const int info = check_gemm(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info) {
    S.decline(kInvalidArgs);
    report(Kind<T>::srname, info);
    return;
  }
  gemm(Kind<T>::f77_api, *transa, *transb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc, [&] {
    system_gemm(*transa, *transb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
  });
}

// The system's cblas_dgemm / cblas_zgemm (alpha and beta by value / by pointer); false when it has none.
bool system_cblas(int layout, int ta, int tb, int M, int N, int K, double alpha, const double* A, int lda,
                  const double* B, int ldb, double beta, double* C, int ldc) {
  if (!sys().cblas_dgemm) return false;
  sys().cblas_dgemm(layout, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  return true;
}
bool system_cblas(int layout, int ta, int tb, int M, int N, int K, cuDoubleComplex alpha, const cuDoubleComplex* A,
                  int lda, const cuDoubleComplex* B, int ldb, cuDoubleComplex beta, cuDoubleComplex* C, int ldc) {
  if (!sys().cblas_zgemm) return false;
  sys().cblas_zgemm(layout, ta, tb, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
  return true;
}

// The CBLAS entry point of element type T (cblas_dgemm, cblas_zgemm).
template <typename T>
void cblas_gemm(int layout, int TransA, int TransB, int M, int N, int K, T alpha, const T* A, int lda, const T* B,
                int ldb, T beta, T* C, int ldc) {
  auto forward = [&] {
    if (system_cblas(layout, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) return;
    // A Fortran-only system BLAS: do what reference CBLAS does, on the Fortran xGEMM.
    auto t = [](int x) { return x == kNoTrans ? 'N' : x == kTrans ? 'T' : x == kConjTrans ? 'C' : '?'; };
    if (layout == kColMajor)
      system_gemm(t(TransA), t(TransB), M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else if (layout == kRowMajor)
      system_gemm(t(TransB), t(TransA), N, M, K, alpha, B, ldb, A, lda, beta, C, ldc);
  };
  if (depth() > 0) {
    stats().internal.fetch_add(1, std::memory_order_relaxed);
    forward();
    return;
  }
  Stats& S = stats();
  S.calls.fetch_add(1, std::memory_order_relaxed);
  S.per_api[Kind<T>::cblas_api].fetch_add(1, std::memory_order_relaxed);
  auto trans = [](int x) { return x == kNoTrans ? 'N' : x == kTrans ? 'T' : x == kConjTrans ? 'C' : '\0'; };
  // The column-major problem: row-major C = op(A) op(B) is C^T = op(B)^T op(A)^T, where the row-major
  // X, read column-major, is X^T; so each operand keeps its operation (N, T, or C: op(B)^T of B^H is
  // conj(B) = (B^T)^H).
  const bool col = layout == kColMajor;
  const char ta = trans(col ? TransA : TransB), tb = trans(col ? TransB : TransA);
  const int m = col ? M : N, n = col ? N : M;
  const T* a = col ? A : B;
  const T* b = col ? B : A;
  const int la = col ? lda : ldb, lb = col ? ldb : lda;
  if ((layout != kColMajor && layout != kRowMajor) || !ta || !tb || check_gemm(ta, tb, m, n, K, la, lb, ldc)) {
    // The system's cblas_xgemm reports it (its cblas_xerbla numbering, row-major remapping included).
    S.decline(kInvalidArgs);
    DepthGuard guard;
    forward();
    return;
  }
  gemm(Kind<T>::cblas_api, ta, tb, m, n, K, alpha, a, la, b, lb, beta, C, ldc, forward);
}

// Counts a call of entry point `api` (kApiNames); false for one made from inside the drop-in (the
// system BLAS calling back), counted as internal, which the caller passes straight through.
bool count_call(int api) {
  Stats& S = stats();
  if (depth() > 0) {
    S.internal.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  S.calls.fetch_add(1, std::memory_order_relaxed);
  S.per_api[api].fetch_add(1, std::memory_order_relaxed);
  return true;
}

// Fortran DSYRK and DSYMM. Invalid arguments go to the system's routine unchanged, so its xerbla_
// reports them as it numbers them (without a system BLAS: reference numbering through report()).
void f77_syrk(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha, const double* A,
              const int* lda, const double* beta, double* C, const int* ldc) {
  auto forward = [&] {
    DepthGuard guard;
    if (const auto f = sys().dsyrk) {
      f(uplo, trans, n, k, alpha, A, lda, beta, C, ldc, 1, 1);
    } else if (const int info = check_syrk(*uplo, *trans, *n, *k, *lda, *ldc)) {
      report("DSYRK ", info);
    } else {
      system_syrk(*uplo, *trans, *n, *k, *alpha, A, *lda, *beta, C, *ldc);
    }
  };
  if (!count_call(kApiDsyrk)) return forward();  // the system BLAS (its CBLAS, its LAPACK) calling back
  Stats& S = stats();
  if (check_syrk(*uplo, *trans, *n, *k, *lda, *ldc)) {
    S.decline(kInvalidArgs);
    return forward();
  }
  syrk(kApiDsyrk, *uplo, *trans, *n, *k, *alpha, A, *lda, *beta, C, *ldc, forward);
}
void f77_symm(const char* side, const char* uplo, const int* m, const int* n, const double* alpha, const double* A,
              const int* lda, const double* B, const int* ldb, const double* beta, double* C, const int* ldc) {
  auto forward = [&] {
    DepthGuard guard;
    if (const auto f = sys().dsymm) {
      f(side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc, 1, 1);
    } else if (const int info = check_symm(*side, *uplo, *m, *n, *lda, *ldb, *ldc)) {
      report("DSYMM ", info);
    } else {
      system_symm(*side, *uplo, *m, *n, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
    }
  };
  if (!count_call(kApiDsymm)) return forward();  // the system BLAS (its CBLAS, its LAPACK) calling back
  Stats& S = stats();
  if (check_symm(*side, *uplo, *m, *n, *lda, *ldb, *ldc)) {
    S.decline(kInvalidArgs);
    return forward();
  }
  symm(kApiDsymm, *side, *uplo, *m, *n, *alpha, A, *lda, B, *ldb, *beta, C, *ldc, forward);
}

// CBLAS's enumerations as BLAS characters ('\0': invalid). A row-major matrix read column-major is
// its transpose: a row-major call is the column-major one with the triangle (C symmetric, A of DSYMM
// symmetric), the side and op(A) of DSYRK swapped (op(A) op(A)^T of row-major A is A^T A read
// column-major); `swap` applies that.
char uplo_char(int uplo, bool swap) {
  return uplo == kUpper ? (swap ? 'L' : 'U') : uplo == kLower ? (swap ? 'U' : 'L') : '\0';
}
char side_char(int side, bool swap) {
  return side == kLeft ? (swap ? 'R' : 'L') : side == kRight ? (swap ? 'L' : 'R') : '\0';
}
char syrk_trans_char(int trans, bool swap) {
  if (trans == kNoTrans) return swap ? 'T' : 'N';
  if (trans == kTrans || trans == kConjTrans) return swap ? 'N' : 'T';  // 'C' is 'T' for real data
  return '\0';
}

// cblas_dsyrk / cblas_dsymm: invalid arguments (and every call when the system has no CBLAS of its
// own but a valid layout: what reference CBLAS does, on the Fortran routine) go to the system's.
void cblas_syrk(int layout, int Uplo, int Trans, int N, int K, double alpha, const double* A, int lda, double beta,
                double* C, int ldc) {
  const bool row = layout == kRowMajor;
  const char uplo = uplo_char(Uplo, row), trans = syrk_trans_char(Trans, row);
  auto forward = [&] {
    DepthGuard guard;
    if (sys().cblas_dsyrk) {
      sys().cblas_dsyrk(layout, Uplo, Trans, N, K, alpha, A, lda, beta, C, ldc);
    } else if (layout == kColMajor || row) {
      system_syrk(uplo ? uplo : '?', trans ? trans : '?', N, K, alpha, A, lda, beta, C, ldc);
    }
  };
  if (!count_call(kApiCblasDsyrk)) return forward();  // the system BLAS (its CBLAS, its LAPACK) calling back
  Stats& S = stats();
  if ((layout != kColMajor && !row) || !uplo || !trans || check_syrk(uplo, trans, N, K, lda, ldc)) {
    S.decline(kInvalidArgs);
    return forward();
  }
  syrk(kApiCblasDsyrk, uplo, trans, N, K, alpha, A, lda, beta, C, ldc, forward);
}
void cblas_symm(int layout, int Side, int Uplo, int M, int N, double alpha, const double* A, int lda, const double* B,
                int ldb, double beta, double* C, int ldc) {
  const bool row = layout == kRowMajor;
  const char side = side_char(Side, row), uplo = uplo_char(Uplo, row);
  const int m = row ? N : M, n = row ? M : N;  // C^T is N x M
  auto forward = [&] {
    DepthGuard guard;
    if (sys().cblas_dsymm) {
      sys().cblas_dsymm(layout, Side, Uplo, M, N, alpha, A, lda, B, ldb, beta, C, ldc);
    } else if (layout == kColMajor || row) {
      system_symm(side ? side : '?', uplo ? uplo : '?', m, n, alpha, A, lda, B, ldb, beta, C, ldc);
    }
  };
  if (!count_call(kApiCblasDsymm)) return forward();  // the system BLAS (its CBLAS, its LAPACK) calling back
  Stats& S = stats();
  if ((layout != kColMajor && !row) || !side || !uplo || check_symm(side, uplo, m, n, lda, ldb, ldc)) {
    S.decline(kInvalidArgs);
    return forward();
  }
  symm(kApiCblasDsymm, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc, forward);
}

}  // namespace
}  // namespace blas
}  // namespace dropin
}  // namespace ozgemm

using namespace ozgemm::dropin;
using namespace ozgemm::dropin::blas;

extern "C" {

// Fortran DGEMM and ZGEMM (gfortran ABI: the two hidden CHARACTER lengths come last; many C callers
// omit them, so they are never read).
__attribute__((visibility("default"))) void dgemm_(const char* transa, const char* transb, const int* m,
                                                   const int* n, const int* k, const double* alpha, const double* A,
                                                   const int* lda, const double* B, const int* ldb,
                                                   const double* beta, double* C, const int* ldc, size_t, size_t) {
  f77_gemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
__attribute__((visibility("default"))) void zgemm_(const char* transa, const char* transb, const int* m,
                                                   const int* n, const int* k, const cuDoubleComplex* alpha,
                                                   const cuDoubleComplex* A, const int* lda, const cuDoubleComplex* B,
                                                   const int* ldb, const cuDoubleComplex* beta, cuDoubleComplex* C,
                                                   const int* ldc, size_t, size_t) {
  f77_gemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

__attribute__((visibility("default"))) void cblas_dgemm(int layout, int TransA, int TransB, int M, int N, int K,
                                                        double alpha, const double* A, int lda, const double* B,
                                                        int ldb, double beta, double* C, int ldc) {
  cblas_gemm(layout, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
// alpha and beta point to one COMPLEX*16 each (CBLAS passes complex scalars by address).
__attribute__((visibility("default"))) void cblas_zgemm(int layout, int TransA, int TransB, int M, int N, int K,
                                                        const void* alpha, const void* A, int lda, const void* B,
                                                        int ldb, const void* beta, void* C, int ldc) {
  cblas_gemm(layout, TransA, TransB, M, N, K, *static_cast<const cuDoubleComplex*>(alpha),
             static_cast<const cuDoubleComplex*>(A), lda, static_cast<const cuDoubleComplex*>(B), ldb,
             *static_cast<const cuDoubleComplex*>(beta), static_cast<cuDoubleComplex*>(C), ldc);
}

// Fortran DSYRK and DSYMM (gfortran ABI, the hidden CHARACTER lengths never read) and their CBLAS forms.
__attribute__((visibility("default"))) void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k,
                                                   const double* alpha, const double* A, const int* lda,
                                                   const double* beta, double* C, const int* ldc, size_t, size_t) {
  f77_syrk(uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
}
__attribute__((visibility("default"))) void dsymm_(const char* side, const char* uplo, const int* m, const int* n,
                                                   const double* alpha, const double* A, const int* lda,
                                                   const double* B, const int* ldb, const double* beta, double* C,
                                                   const int* ldc, size_t, size_t) {
  f77_symm(side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}
__attribute__((visibility("default"))) void cblas_dsyrk(int layout, int Uplo, int Trans, int N, int K, double alpha,
                                                        const double* A, int lda, double beta, double* C, int ldc) {
  cblas_syrk(layout, Uplo, Trans, N, K, alpha, A, lda, beta, C, ldc);
}
__attribute__((visibility("default"))) void cblas_dsymm(int layout, int Side, int Uplo, int M, int N, double alpha,
                                                        const double* A, int lda, const double* B, int ldb,
                                                        double beta, double* C, int ldc) {
  cblas_symm(layout, Side, Uplo, M, N, alpha, A, lda, B, ldb, beta, C, ldc);
}

// ---- counters (docs/dropin.md) ----------------------------------------------------------------------
__attribute__((visibility("default"))) unsigned long long ozgemmBlasCounter(const char* name) {
  return stats().get(name);
}
__attribute__((visibility("default"))) size_t ozgemmBlasStatsJson(char* buf, size_t len) {
  return stats().copy_json(buf, len);
}
__attribute__((visibility("default"))) void ozgemmBlasResetStats(void) { stats().reset(); }
__attribute__((visibility("default"))) int ozgemmBlasSetEnabled(int on) { return config().settings.set_enabled(on); }

}  // extern "C"

namespace {
__attribute__((destructor)) void report_at_exit() {
  if (stats().any_calls()) stats().report_at_exit(config().settings);
}
}  // namespace
