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
#include <string>

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
// OZGEMM_HOOK_ACCURACY / OZGEMM_BLAS_ACCURACY: "fp64" (returns 0) or a slice count 1..OZGEMM_MAX_SLICES.
int env_accuracy(const char* prefix, const char* name, int fallback);

enum class LogMode { None, Calls, All, Summary };
LogMode env_log(const char* prefix, const char* name);

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

// ---- counters -------------------------------------------------------------------------------------
// Each library has its own Stats with its own list of decline reasons.
constexpr int kMaxReasons = 32;
struct Stats {
  const char* prefix = "";
  const char* const* reason_names = nullptr;  // kMaxReasons at most, nullptr-terminated
  int reason_count = 0;
  std::atomic<uint64_t> calls{0};        // calls seen (not counting internal ones)
  std::atomic<uint64_t> intercepted{0};  // calls ozgemm ran (whatever it chose to run)
  std::atomic<uint64_t> declined{0};     // calls forwarded to the real function
  std::atomic<uint64_t> failed{0};       // calls where ozgemm failed and the real function ran instead
  std::atomic<uint64_t> internal{0};     // calls forwarded because this thread was inside the drop-in
  std::atomic<uint64_t> gemms{0};        // matrices ozgemm ran (a batched call counts its batch)
  std::atomic<uint64_t> emulated{0};     // ... of which ozgemm emulated (slices > 0)
  std::atomic<uint64_t> ozgemm_native{0};  // ... of which ozgemm ran native DGEMM (FP64 mode's choice)
  std::atomic<uint64_t> flop{0};         // 2mnk summed over `gemms`
  std::atomic<uint64_t> time_ns{0};      // host time spent in intercepted calls
  std::atomic<uint64_t> reasons[kMaxReasons]{};
  std::atomic<uint64_t> slices[OZGEMM_MAX_SLICES + 1]{};  // emulated matrices per slice count
  std::atomic<uint64_t> per_api[16]{};   // calls per entry point (names in api_names)
  const char* const* api_names = nullptr;  // nullptr-terminated, 16 at most

  void decline(int reason) {
    declined.fetch_add(1, std::memory_order_relaxed);
    reasons[reason].fetch_add(1, std::memory_order_relaxed);
  }
  void reset();
  // Counter by name: calls, intercepted, declined, failed, internal, gemms, emulated, ozgemm_native,
  // unreported, flop, time_ns, declined:<reason>, slices:<n>, api:<name>. Unknown names give 0.
  uint64_t get(const char* name) const;
  std::string json() const;
  void print_summary() const;  // several lines to stderr
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
  ozgemmStatus_t (*get_last_call_info)(ozgemmHandle_t, ozgemmCallInfo_t*) = nullptr;  // optional
  ozgemmStatus_t (*dgemm)(ozgemmHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const double*,
                          const double*, int, const double*, int, const double*, double*, int) = nullptr;
  const char* (*status_string)(ozgemmStatus_t) = nullptr;
  const char* (*variant_string)(ozgemmVariant_t) = nullptr;
  // CUDA runtime (the copy libozgemm links)
  cudaError_t (*get_device)(int*) = nullptr;
  cudaError_t (*set_device)(int) = nullptr;
  cudaError_t (*get_device_count)(int*) = nullptr;
  cudaError_t (*stream_is_capturing)(cudaStream_t, cudaStreamCaptureStatus*) = nullptr;
  cudaError_t (*memcpy_async)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t) = nullptr;
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

// Directory of the object that contains `addr` ("" when unknown).
std::string object_dir(const void* addr);
// File name of the object that contains `addr` ("" when unknown).
std::string object_path(const void* addr);

// Monotonic clock in nanoseconds.
uint64_t now_ns();

}  // namespace dropin
}  // namespace ozgemm
