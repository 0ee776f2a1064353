// src/dropin/hook_core.hpp — the cuBLAS interposer's core, shared by the v2/Ex entry points
// (hook.cpp) and the legacy cublasDgemm (hook_legacy.cpp, which must include cublas.h and so
// cannot see cublas_v2.h). docs/dropin.md describes the behaviour.
#pragma once

#include <cublas_api.h>
#include <library_types.h>

#include <cstdint>

#include "ozgemm/ozgemm.h"  // ozgemmHandle_t, ozgemmStatus_t (declarations only)

namespace ozgemm {
namespace dropin {
struct OzApi;  // common.hpp
namespace hook {

// ---- the hooked entry points ---------------------------------------------------------------------------
// One per exported GEMM symbol; kApiNames (hook.cpp) has their names in this order. The int and _64
// forms of an operation, real or complex, are instantiations of one template (hook.cpp, "Exported
// entry points").
enum class Api {
  Dgemm, Dgemm64, GemmEx, GemmEx64, DgemmStridedBatched, DgemmStridedBatched64, DgemmBatched, DgemmBatched64,
  GemmStridedBatchedEx, GemmStridedBatchedEx64, GemmBatchedEx, GemmBatchedEx64,
  Zgemm, Zgemm64, Zgemm3m, Zgemm3m64, ZgemmStridedBatched, ZgemmStridedBatched64, ZgemmBatched, ZgemmBatched64,
  LegacyDgemm,
  // the symmetric Level-3 routines (hook_symmetric.cpp)
  Dsyrk, Dsyrk64, Dsyr2k, Dsyr2k64, Dsyrkx, Dsyrkx64, Dsymm, Dsymm64,
  Count
};
extern const char* const kApiNames[];

using LegacyDgemmFn = void (*)(char, char, int, int, int, double, const double*, int, const double*, int, double,
                               double*, int);

// ---- the real cuBLAS ------------------------------------------------------------------------------
// The functions of one loaded cuBLAS (the one the caller's object links). Any pointer may be null
// when that cuBLAS lacks the function.
struct Real {
  const char* path = "";  // the library's file (for messages)
  void* entry[int(Api::Count)] = {};  // the real function of each hooked entry point
  // entry[api] as its function type (the operation's Fn in hook.cpp, LegacyDgemmFn)
  template <typename Fn>
  Fn get(Api api) const {
    return reinterpret_cast<Fn>(entry[int(api)]);
  }
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*get_stream)(cublasHandle_t, cudaStream_t*) = nullptr;
  cublasStatus_t (*get_pointer_mode)(cublasHandle_t, cublasPointerMode_t*) = nullptr;
  cublasStatus_t (*get_math_mode)(cublasHandle_t, cublasMath_t*) = nullptr;
  // legacy API (cublas.h), watched only
  cublasStatus_t (*legacy_init)() = nullptr;
  cublasStatus_t (*legacy_shutdown)() = nullptr;
  cublasStatus_t (*legacy_set_kernel_stream)(cudaStream_t) = nullptr;
};

// The real cuBLAS for a call made from return address `caller`: the cuBLAS that the caller's own
// object resolves (its dependencies, searched with dlopen(RTLD_NOLOAD) + dlsym), else the next
// definition after the hook (RTLD_NEXT), else an already loaded libcublas.so.{13,12,11}. Cached per
// call site. Functions that cannot be found stay null. *from_ozgemm: the caller is ozgemm itself (an
// object whose file name contains "ozgemm", other than the drop-in libraries): its calls are ozgemm's
// own native path and pass straight through, also when a program uses libozgemm directly.
const Real& real_for(const void* caller, bool* from_ozgemm);

// Reports (once per name) that the real function is missing; the status the hook then returns.
cublasStatus_t missing(const char* name);

// ---- the symmetric Level-3 routines (hook_symmetric.cpp) -------------------------------------------------
// A SYRK, SYR2K, SYRKX or SYMM call is described as the GEMM of the same operands (Call's m, n, k,
// transposes, leading dimensions and A, B, C: gemm_argument_error then checks its sizes, the
// min-size rule and the counters read it) plus what the GEMM lacks:
//   SYRK/SYR2K/SYRKX (uplo, trans, n, k): transa = trans, transb = the other op, m = n; SYRK: B = A;
//   SYMM (side, uplo, m, n): transa = transb = N, k = m (LEFT: A = the symmetric A, B = B) or k = n
//   (RIGHT: C = B A, so the Call's A is the caller's B and its B the symmetric A).
enum class SymmetricRoutine { None, Syrk, Syr2k, Syrkx, Symm };
struct SymmetricCall {
  SymmetricRoutine routine = SymmetricRoutine::None;
  int uplo = 0, side = 0;  // cublasFillMode_t, cublasSideMode_t values
  bool valid = true;       // false: an argument cuBLAS rejects that the GEMM description cannot show (uplo, side)
};

// ---- one call -----------------------------------------------------------------------------------------
// The handle the legacy API's implicit context stands for in the per-handle map.
extern const cublasHandle_t kLegacyHandle;

struct Call {
  Api api = Api::Dgemm;
  int transa = 0, transb = 0;  // cublasOperation_t values, or legacy chars 'N'/'T'/'C' (mapped before run)
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  const void* alpha = nullptr;  // host or device pointer (pointer mode); legacy: host copies
  const void* beta = nullptr;
  // The element types (the hook runs A, B and C all CUDA_R_64F or all CUDA_C_64F) and, for Ex calls,
  // the compute type (the hook runs CUBLAS_COMPUTE_64F and the legacy values CUDA_R_64F, CUDA_C_64F
  // that cuBLAS's header maps to it): calls of other types are forwarded.
  cudaDataType a_type = CUDA_R_64F, b_type = CUDA_R_64F, c_type = CUDA_R_64F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
  // single and strided calls (strides in elements)
  const void* A = nullptr;
  const void* B = nullptr;
  void* C = nullptr;
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  // pointer-array calls (device arrays of device pointers)
  const void* const* A_array = nullptr;
  const void* const* B_array = nullptr;
  void* const* C_array = nullptr;
  int64_t batch = 1;
  bool strided = false, arrays = false;
  // legacy calls: the stream of cublasSetKernelStream and whether cublasInit succeeded
  bool legacy = false;
  cudaStream_t legacy_stream = nullptr;
  bool legacy_initialised = false;
  // Called from ozgemm itself (real_for): passed straight through.
  bool from_ozgemm = false;
  // Out: the first batch member that ozgemm did not run (the caller forwards [first, batch)).
  int64_t first = 0;
  // A symmetric Level-3 call (routine None: a GEMM).
  SymmetricCall sym;
};

// The symmetric routines through libozgemm (hook_symmetric.cpp): whether `oz` has c.sym's routine;
// runs it (host alpha and beta) on ozgemm handle h; its real flops (the routine's nominal count).
bool symmetric_available(const OzApi& oz, const Call& c);
ozgemmStatus_t run_symmetric(const OzApi& oz, ozgemmHandle_t h, const Call& c, double alpha, double beta);
double symmetric_flop(const Call& c);

// Runs the call through ozgemm when every check passes. Returns true when the whole call was done
// (status in *status); false when the caller must run the real function on the batch members
// [call.first, batch) — all of them when the hook declined. Never throws.
bool run(const Real& real, cublasHandle_t handle, Call& call, cublasStatus_t* status) noexcept;

// The hooked cublasDestroy_v2 / cublasShutdown: frees the handle's ozgemm state (never throws).
void forget(cublasHandle_t handle) noexcept;

// True while this thread is inside the hook (libozgemm's own cuBLAS calls) or when the call comes
// from ozgemm's own code (from_ozgemm of real_for).
bool passthrough(bool from_ozgemm = false) noexcept;

// One hooked call through entry point `api` (real function type Fn), made from return address
// `caller`: describe(c) fills the call's description, run() is offered it, and forward(fn, c) runs
// the real function on what run() left ([c.first, batch)). Every exported entry point ends here.
template <typename Fn, typename Describe, typename Forward>
cublasStatus_t intercept_call(Api api, const void* caller, cublasHandle_t h, Describe describe, Forward forward) {
  bool from_ozgemm = false;
  const Real& r = real_for(caller, &from_ozgemm);
  const Fn fn = r.get<Fn>(api);
  if (!fn) return missing(kApiNames[int(api)]);
  Call c;
  c.from_ozgemm = from_ozgemm;
  c.api = api;
  describe(c);
  cublasStatus_t st;
  if (run(r, h, c, &st)) return st;
  return forward(fn, c);
}

}  // namespace hook
}  // namespace dropin
}  // namespace ozgemm
