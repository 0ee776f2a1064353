// src/dropin/common.hpp — what libozgemm_hook.so and libozgemm_blas.so share (docs/dropin.md):
//   * environment parsing (read once),
//   * a thread-local depth counter: a call that arrives while this thread is already inside the
//     drop-in (libozgemm's own cuBLAS calls, the system BLAS calling our dgemm_) is forwarded at once,
//   * counters and the log (one line per call, a summary at exit, a JSON stats file),
//   * libozgemm.so and the CUDA runtime it links, loaded lazily with dlopen: neither drop-in library
//     has a DT_NEEDED on CUDA, so preloading it costs nothing in a process that never calls a GEMM
//     and a machine without a GPU (or without libozgemm) only forwards.
// Nothing here is exported (both libraries are linked with a version script).
#pragma once

#include <cublas_api.h>         // cublasOperation_t (types only; cuBLAS is never linked)
#include <cuda_runtime_api.h>  // cudaStream_t, cudaError_t (types only; cudart is reached via dlsym)

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ozgemm/ozgemm.h"

namespace ozgemm {
namespace dropin {

// ---- environment ------------------------------------------------------------------------------
// The value of `name`, or nullptr when unset or empty.
const char* env_str(const char* name);
// 0/1, off/on, false/true, no/yes (any case); `fallback` when unset; a warning for anything else.
bool env_bool(const char* prefix, const char* name, bool fallback);
// A non-negative integer (decimal; suffixes k/M/G = 2^10/2^20/2^30 and the form 2^N accepted).
int64_t env_size(const char* prefix, const char* name, int64_t fallback);

// ---- what ozgemm is asked to run ------------------------------------------------------------------------
// OZGEMM_<LIB>_ACCURACY and OZGEMM_<LIB>_SCHEME (docs/dropin.md, "Accuracy and scheme"), applied to
// every ozgemm handle the drop-in creates. One parser for both drop-ins.
struct AccuracySetting {
  ozgemmAccuracy_t mode = OZGEMM_ACCURACY_FP64;
  // FP64: the schemes FP64 mode may choose from (AUTO: both). FIXED: the scheme of `count`
  // (OZAKI1 or OZAKI2, never AUTO).
  ozgemmScheme_t scheme = OZGEMM_SCHEME_AUTO;
  // FIXED: Ozaki-I slices (1..OZGEMM_MAX_SLICES) or Ozaki-II moduli
  // (OZGEMM_MIN_MODULI..OZGEMM_MAX_MODULI), by `scheme`. FP64: 0.
  int count = 0;
  // For messages: "fp64, scheme auto", "fixed, Ozaki-I 7 slices", "fixed, Ozaki-II 14 moduli".
  std::string text() const;
};
// Parses an accuracy value (fp64 | default | <s> | slices:<s> | moduli:<n>, any case; nullptr: fp64)
// and a scheme value (auto | ozaki1 | ozaki2, any case; nullptr: auto); the names are the variables'
// (for the message). Returns "" and sets *out, or one sentence that says what is wrong (a value out
// of range, an unknown word, or a count of the other scheme than the one named) and leaves *out.
std::string parse_accuracy(const char* accuracy_name, const char* accuracy, const char* scheme_name,
                           const char* scheme, AccuracySetting* out);
// parse_accuracy on the environment. An error is said on stderr and returns false: the drop-in then
// forwards every call (reason invalid-setting) rather than run something other than what was asked.
bool env_accuracy(const char* prefix, const char* accuracy_var, const char* scheme_var, AccuracySetting* out);

enum class LogMode { None, Calls, All, Summary };
LogMode env_log(const char* prefix, const char* name);

// What both drop-ins read from the environment (read once; docs/dropin.md, "Variables").
struct Settings {
  std::atomic<bool> enabled{true};  // OZGEMM_<LIB>; the library's SetEnabled function at run time
  bool accuracy_valid = true;       // false: the accuracy settings are invalid; every call is forwarded
  AccuracySetting accuracy;
  int64_t min_size = 0;             // m*n*k below which calls are forwarded
  LogMode log = LogMode::None;
  std::string stats_file;           // "" or the JSON file written at exit ("%p": the process id)
  // Reads <var> (on/off), <var>_ACCURACY and <var>_SCHEME (each, when unset, from <fallback_var>_...
  // if given), <var>_MIN_SIZE (default `min_size`), <var>_LOG and <var>_STATS; says what is wrong.
  void read(const char* prefix, const std::string& var, const char* fallback_var, int64_t default_min_size);
  // The library's SetEnabled: on 1/0 sets, negative only queries; returns the previous setting.
  int set_enabled(int on);
};

// ---- GEMM arguments -----------------------------------------------------------------------------------
// op(X) of a column-major GEMM; C (conjugate transpose) is T for real data.
enum class Op { N, T, C, Invalid };
Op op_of_char(char c);            // 'N'/'n', 'T'/'t', 'C'/'c'
Op op_of_cublas(int op);          // CUBLAS_OP_N/T/C
// Rows of the stored A (op(A) is m x k) and of the stored B (op(B) is k x n).
inline int64_t rows_a(Op ta, int64_t m, int64_t k) { return ta == Op::N ? m : k; }
inline int64_t rows_b(Op tb, int64_t k, int64_t n) { return tb == Op::N ? k : n; }
// The first argument reference BLAS's DGEMM (BLAS/SRC/dgemm.f) rejects, in its order and by its
// parameter number: 1 TRANSA, 2 TRANSB, 3 M, 4 N, 5 K, 8 LDA, 10 LDB, 13 LDC; 0 when all are valid.
// cuBLAS rejects the same arguments (with its own status).
int gemm_argument_error(Op ta, Op tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc);

// ---- re-entrancy ----------------------------------------------------------------------------------
// Calls that arrive while depth() > 0 on this thread are forwarded untouched.
int& depth();
struct DepthGuard {
  DepthGuard() { ++depth(); }
  ~DepthGuard() { --depth(); }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
};

// ---- messages ---------------------------------------------------------------------------------------
// One line to stderr: "<prefix>: <text>".
void say(const char* prefix, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// As say(), but only the first time `key` is seen in this process.
void say_once(const char* prefix, const char* key, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// ---- element types ----------------------------------------------------------------------------------
// The FP64 element types the drop-ins run: double (DGEMM, CUDA_R_64F) and cuDoubleComplex (ZGEMM,
// CUDA_C_64F, two doubles: real then imaginary part). Counters are kept per element type as well.
enum class Element { Real, Complex };
constexpr int kElements = 2;
const char* element_name(Element e);  // "real", "complex"
// Bytes of one element.
inline size_t element_bytes(Element e) { return e == Element::Complex ? 2 * sizeof(double) : sizeof(double); }
// Real floating-point operations of one m x n x k GEMM: 2mnk (real), 8mnk (complex: four real
// products and their sums per multiply-add).
inline double gemm_flop(Element e, int64_t m, int64_t n, int64_t k) {
  return (e == Element::Complex ? 8.0 : 2.0) * double(m) * double(n) * double(k);
}

// ---- what ozgemm ran ------------------------------------------------------------------------------------
// One ozgemmDgemm / ozgemmZgemm, read from its ozgemmCallInfo_t: an emulation (Ozaki-I with `slices`,
// Ozaki-II with `moduli`: slices is 0 there; complex data always runs Ozaki-II), native DGEMM/ZGEMM
// by ozgemm's choice (variant NATIVE, with `reason`), or unreported (no call info: an older
// libozgemm, or one that left it empty).
enum class Ran { Unreported, Ozaki1, Ozaki2, Native };
Ran ran_of(const ozgemmCallInfo_t* info);  // nullptr: no call info

// The matrices of one call by what ran (the log line of a batched call).
struct RunTally {
  uint64_t ozaki1 = 0, ozaki2 = 0, native = 0, unreported = 0;
  int slices_lo = 0, slices_hi = 0, moduli_lo = 0, moduli_hi = 0;  // ranges over the emulated ones
  void add(Ran ran, const ozgemmCallInfo_t& info);
  // "5 Ozaki-I (7 slices), 3 Ozaki-II (13..14 moduli), 0 native"
  std::string text() const;
};

// ---- counters -------------------------------------------------------------------------------------
// Each library has its own Stats with its own lists of decline reasons and entry points.
constexpr int kMaxReasons = 32;
constexpr int kMaxApis = 32;
// Distinct native reasons kept (ozgemm's reason lines; later distinct ones count as "other").
constexpr int kMaxNativeReasons = 16;

// What ozgemm ran, over all intercepted calls or over those of one element type.
struct Outcomes {
  std::atomic<uint64_t> intercepted{0};    // calls ozgemm ran (whatever it chose to run)
  std::atomic<uint64_t> gemms{0};          // matrices ozgemm ran (a batched call counts its batch)
  std::atomic<uint64_t> ozaki1{0};         // ... of which ozgemm emulated with Ozaki-I
  std::atomic<uint64_t> ozaki2{0};         // ... with Ozaki-II
  std::atomic<uint64_t> ozgemm_native{0};  // ... of which ozgemm ran native DGEMM/ZGEMM (its own choice)
  std::atomic<uint64_t> flop{0};           // real flops (gemm_flop) of fully intercepted calls
  std::atomic<uint64_t> time_ns{0};        // host time spent in intercepted calls
  std::atomic<uint64_t> slices[OZGEMM_MAX_SLICES + 1]{};  // Ozaki-I matrices per slice count
  std::atomic<uint64_t> moduli[OZGEMM_MAX_MODULI + 1]{};  // Ozaki-II matrices per moduli count
  uint64_t emulated() const { return ozaki1.load() + ozaki2.load(); }
  uint64_t unreported() const { return gemms.load() - emulated() - ozgemm_native.load(); }
  void add(Ran ran, const ozgemmCallInfo_t* info);  // one matrix
  void reset();
  // The counter `name` (intercepted, gemms, emulated, emulated:ozaki1, emulated:ozaki2, ozgemm_native,
  // unreported, flop, time_ns, slices:<s>, moduli:<n>) into *out; false for other names.
  bool get(const char* name, uint64_t* out) const;
  // Its counters as JSON members (no braces): "intercepted": 3, ..., "emulated_by_moduli": {...}
  std::string json_members() const;
  // "12 matrices: 10 emulated (Ozaki-II 16 moduli: 10), 2 native by ozgemm's choice, 0 unreported"
  std::string text() const;
};

struct Stats {
  // reason_names: kMaxReasons at most, nullptr-terminated (Stats::reasons indices); api_names:
  // kMaxApis at most, nullptr-terminated (per_api indices); either may be nullptr.
  explicit Stats(const char* prefix = "", const char* const* reason_names = nullptr,
                 const char* const* api_names = nullptr);
  const char* const prefix;
  const char* const* const reason_names;
  const int reason_count;
  const char* const* const api_names;
  std::atomic<uint64_t> calls{0};        // calls seen (not counting internal ones)
  std::atomic<uint64_t> declined{0};     // calls forwarded to the real function
  std::atomic<uint64_t> failed{0};       // calls where ozgemm failed and the real function ran instead
  std::atomic<uint64_t> internal{0};     // calls forwarded because this thread was inside the drop-in
  // dlsym lookups of a cuBLAS function on a library handle answered with the drop-in's own (the hook's
  // dlsym, hook_dlsym.cpp); counter "dlsym-redirects"
  std::atomic<uint64_t> dlsym_redirects{0};
  std::atomic<uint64_t> reasons[kMaxReasons]{};
  std::atomic<uint64_t> per_api[kMaxApis]{};  // calls per entry point (names in api_names)
  Outcomes all;                               // every intercepted call
  Outcomes by_element[kElements];             // ... by element type (Element)

  void decline(int reason) {
    declined.fetch_add(1, std::memory_order_relaxed);
    reasons[reason].fetch_add(1, std::memory_order_relaxed);
  }
  // One matrix of type e that ozgemm ran (info nullptr: no call info): counted in `all` and
  // by_element[e] as what ran, with its count or (native) reason.
  Ran record(Element e, const ozgemmCallInfo_t* info);
  // One intercepted call of type e, done: its flops (gemm_flop over its matrices) and host time.
  void intercepted(Element e, double flop, uint64_t ns);
  void reset();
  // Counter by name: calls, declined, failed, internal, dlsym-redirects, declined:<reason>, api:<name>,
  // native:<ozgemm's reason line>, the Outcomes names over all calls (intercepted, gemms, emulated,
  // emulated:ozaki1, emulated:ozaki2, ozgemm_native, unreported, flop, time_ns, slices:<s>,
  // moduli:<n>), and each of those for one element type as real:<name> / complex:<name>. Unknown
  // names give 0.
  uint64_t get(const char* name) const;
  std::string json() const;
  void print_summary() const;  // several lines to stderr
  // The JSON into buf (NUL-terminated, truncated to len); returns the length the whole text needs.
  size_t copy_json(char* buf, size_t len) const;
  // Whether the process made a GEMM call (or looked one up through the hook's dlsym): a process that did not (e.g. a tool spawned by the program,
  // inheriting LD_PRELOAD) reads no settings at exit, prints nothing and leaves the stats file alone.
  bool any_calls() const { return calls.load() != 0 || internal.load() != 0 || dlsym_redirects.load() != 0; }
  // At exit: the summary (log summary or all) and the stats file. Touches only objects that are
  // never freed (it runs after static destructors).
  void report_at_exit(const Settings& settings) const;

 private:
  // Native matrices by ozgemm's reason line: the first kMaxNativeReasons distinct lines, in the
  // order first seen; the rest in native_other.
  mutable std::mutex native_mu;
  std::vector<std::pair<std::string, uint64_t>> native_reasons;
  uint64_t native_other = 0;
};

// ---- libozgemm and the CUDA runtime ------------------------------------------------------------------
struct OzApi {
  bool ok = false;
  std::string error;  // why not ok
  std::string path;   // the libozgemm that was loaded
  // ozgemm
  ozgemmStatus_t (*create)(ozgemmHandle_t*) = nullptr;
  ozgemmStatus_t (*destroy)(ozgemmHandle_t) = nullptr;
  ozgemmStatus_t (*set_stream)(ozgemmHandle_t, cudaStream_t) = nullptr;
  ozgemmStatus_t (*set_slices)(ozgemmHandle_t, int) = nullptr;
  ozgemmStatus_t (*set_moduli)(ozgemmHandle_t, int) = nullptr;
  ozgemmStatus_t (*set_scheme)(ozgemmHandle_t, ozgemmScheme_t) = nullptr;
  ozgemmStatus_t (*set_accuracy)(ozgemmHandle_t, ozgemmAccuracy_t) = nullptr;
  ozgemmStatus_t (*get_last_call_info)(ozgemmHandle_t, ozgemmCallInfo_t*) = nullptr;  // optional
  ozgemmStatus_t (*dgemm)(ozgemmHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const double*,
                          const double*, int, const double*, int, const double*, double*, int) = nullptr;
  // Optional: a libozgemm without complex GEMM lacks it (complex calls are then not taken).
  ozgemmStatus_t (*zgemm)(ozgemmHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                          const cuDoubleComplex*, const cuDoubleComplex*, int, const cuDoubleComplex*, int,
                          const cuDoubleComplex*, cuDoubleComplex*, int) = nullptr;
  // Optional: the symmetric Level-3 routines (a libozgemm without them: those calls are not taken).
  ozgemmStatus_t (*dsyrk)(ozgemmHandle_t, cublasFillMode_t, cublasOperation_t, int, int, const double*, const double*,
                          int, const double*, double*, int) = nullptr;
  ozgemmStatus_t (*dsyr2k)(ozgemmHandle_t, cublasFillMode_t, cublasOperation_t, int, int, const double*,
                           const double*, int, const double*, int, const double*, double*, int) = nullptr;
  ozgemmStatus_t (*dsyrkx)(ozgemmHandle_t, cublasFillMode_t, cublasOperation_t, int, int, const double*,
                           const double*, int, const double*, int, const double*, double*, int) = nullptr;
  ozgemmStatus_t (*dsymm)(ozgemmHandle_t, cublasSideMode_t, cublasFillMode_t, int, int, const double*, const double*,
                          int, const double*, int, const double*, double*, int) = nullptr;
  const char* (*status_string)(ozgemmStatus_t) = nullptr;
  const char* (*variant_string)(ozgemmVariant_t) = nullptr;
  // CUDA runtime (the copy libozgemm links)
  cudaError_t (*get_device)(int*) = nullptr;
  cudaError_t (*set_device)(int) = nullptr;
  cudaError_t (*get_device_count)(int*) = nullptr;
  cudaError_t (*stream_is_capturing)(cudaStream_t, cudaStreamCaptureStatus*) = nullptr;
  cudaError_t (*memcpy_async)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t) = nullptr;
  cudaError_t (*memcpy2d_async)(void*, size_t, const void*, size_t, size_t, size_t, cudaMemcpyKind,
                                cudaStream_t) = nullptr;
  cudaError_t (*stream_synchronize)(cudaStream_t) = nullptr;
  cudaError_t (*stream_create)(cudaStream_t*, unsigned int) = nullptr;
  cudaError_t (*malloc)(void**, size_t) = nullptr;
  cudaError_t (*free)(void*) = nullptr;
  cudaError_t (*malloc_host)(void**, size_t) = nullptr;
  cudaError_t (*free_host)(void*) = nullptr;
  cudaError_t (*event_create)(cudaEvent_t*, unsigned int) = nullptr;
  cudaError_t (*event_record)(cudaEvent_t, cudaStream_t) = nullptr;
  cudaError_t (*event_synchronize)(cudaEvent_t) = nullptr;
  cudaError_t (*get_last_error)() = nullptr;
  const char* (*get_error_string)(cudaError_t) = nullptr;
};
// Loads libozgemm once per process (thread-safe): $OZGEMM_LIBRARY, else libozgemm.so.0 next to
// `self` (an address inside the calling drop-in library), else the loader's search path. Loading runs
// with depth() raised. The result is never unloaded.
const OzApi& oz_api(const void* self);

// The call info of h's last ozgemmDgemm into *info; nullptr when the library gives none.
const ozgemmCallInfo_t* last_call_info(const OzApi& oz, ozgemmHandle_t h, ozgemmCallInfo_t* info);

// Gives handle h the setting, through the C API (scheme, then the count or the accuracy mode).
ozgemmStatus_t apply(const OzApi& oz, ozgemmHandle_t h, const AccuracySetting& setting);

// What one ozgemmDgemm / ozgemmZgemm (element type e) ran, for a log line: "fully-fused, Ozaki-I 7
// slices", "partially-fused, Ozaki-II 14 moduli", "unfused, complex Ozaki-II 16 moduli", "native
// DGEMM", "native ZGEMM (FP64 fallback)", "no call info".
std::string describe_run(const OzApi& oz, Ran ran, const ozgemmCallInfo_t& info, Element e);

// Directory of the object that contains `addr` ("" when unknown).
std::string object_dir(const void* addr);
// File name of the object that contains `addr` ("" when unknown).
std::string object_path(const void* addr);

// Monotonic clock in nanoseconds.
uint64_t now_ns();

}  // namespace dropin
}  // namespace ozgemm
