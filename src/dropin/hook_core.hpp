// src/dropin/hook_core.hpp — the cuBLAS interposer's core, shared by the v2/Ex entry points
// (hook.cpp), the legacy cublasDgemm (hook_legacy.cpp, which must include cublas.h and so
// cannot see cublas_v2.h) and cublasLtMatmul (hook_lt.cpp). docs/dropin.md describes the behaviour.
#pragma once

#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>

#include <cstdint>
#include <cstring>

#include "ozgemm/ozgemm.h"  // ozgemmHandle_t, ozgemmStatus_t (declarations only)

namespace ozgemm {
namespace dropin {
struct OzApi;  // common.hpp
namespace hook {

// The hook's messages begin "<kPrefix>: ".
constexpr const char* kPrefix = "ozgemm-hook";

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
  // cuBLASLt (hook_lt.cpp)
  LtMatmul,
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
  // cuBLASLt (hook_lt.cpp; entry[Api::LtMatmul] is cublasLtMatmul): the descriptors' functions
  cublasStatus_t (*lt_destroy)(cublasLtHandle_t) = nullptr;
  cublasStatus_t (*lt_desc_create)(cublasLtMatmulDesc_t*, cublasComputeType_t, cudaDataType_t) = nullptr;
  cublasStatus_t (*lt_desc_destroy)(cublasLtMatmulDesc_t) = nullptr;
  cublasStatus_t (*lt_desc_get)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void*, size_t, size_t*) = nullptr;
  cublasStatus_t (*lt_desc_set)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*, size_t) = nullptr;
  cublasStatus_t (*lt_layout_create)(cublasLtMatrixLayout_t*, cudaDataType, uint64_t, uint64_t, int64_t) = nullptr;
  cublasStatus_t (*lt_layout_destroy)(cublasLtMatrixLayout_t) = nullptr;
  cublasStatus_t (*lt_layout_get)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void*, size_t,
                                  size_t*) = nullptr;
  cublasStatus_t (*lt_layout_set)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, const void*,
                                  size_t) = nullptr;
};

// The libraries whose functions the hook interposes: cuBLAS (libcublas.so.*) and cuBLASLt (libcublasLt.so.*).
enum class Library { Cublas, CublasLt };

// The real cuBLAS (or cuBLASLt) for a call made from return address `caller`: for a caller whose
// object looked the hook's entry points up with dlsym on a cuBLAS handle, the library whose function
// that lookup found (hook_dlsym.cpp); else the library that the caller's own object resolves (its
// dependencies, searched with dlopen(RTLD_NOLOAD) + dlsym), else the next definition after the hook
// (RTLD_NEXT), else an already loaded libcublas.so.{13,12,11} (libcublasLt.so.*). Cached per call
// site. Functions that cannot be found stay null. *from_ozgemm: the caller is ozgemm itself (an object
// whose file name contains "ozgemm", other than the drop-in libraries) or, for cuBLASLt, cuBLAS
// (libcublas*, whose GEMMs may run on cuBLASLt): its calls pass straight through, also when a program
// uses libozgemm directly.
const Real& real_for(const void* caller, bool* from_ozgemm, Library lib = Library::Cublas);

// Whether addr lies in libozgemm_hook.so itself.
bool is_self(const void* addr);
// Whether a library file's base name is cuBLAS or cuBLASLt itself (libcublas.so*, libcublasLt.so*): not
// another library whose name merely begins with "libcublas" (libcublasmp.so, a caller of cuBLAS).
inline bool is_cublas_file(const char* base) {
  return base && (std::strncmp(base, "libcublas.so", 12) == 0 || std::strncmp(base, "libcublasLt.so", 14) == 0);
}

// ---- dlsym (hook_dlsym.cpp) -------------------------------------------------------------------------
// The real function that the hook's dlsym answered with the hook's own for a lookup made from the
// object loaded at `object` (its dli_fbase) in library `lib` (the first such lookup); null when none.
const void* dlsym_redirected_real(const void* object, Library lib);
// Counts one such redirection (the dlsym-redirects counter) and logs it under OZGEMM_HOOK_LOG=all.
void note_dlsym_redirect(const char* name, const char* caller_file, const char* real_file);

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
// What a call runs under besides its arguments: from the cuBLAS handle (queried by run()) or, for
// cublasLtMatmul, from the call itself (its stream argument, the matmul descriptor's pointer mode).
struct Env {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
};

// Why hook_lt.cpp finds a cublasLtMatmul's descriptors not ozgemm's: run() declines the call with the
// reason of that name (hook.cpp's kReasonNames).
enum class LtDecline {
  None,
  DescriptorQuery,  // a descriptor attribute could not be read: descriptor-query-failed
  MatmulDesc,       // TRANSC, FILL_MODE, scaling pointers/modes, fast accumulation: matmul-desc-not-supported
  Layout,           // order other than COL, planar complex, pointer-array batches, C/D or batch mismatch: layout-not-supported
  Epilogue,         // an epilogue the hook does not run: epilogue-not-supported
  Emulation,        // an emulation descriptor on the matmul: cublas-fp64-emulation
  NotFp64,          // C's type or the scale type unlike D's: not-fp64
  InvalidArgs,      // no C or no D: invalid-args (cuBLASLt reports it)
};

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
  // cublasLtMatmul (hook_lt.cpp): the environment the call carries (null: the cuBLAS handle's); why
  // its descriptors are declined; the C that beta scales when the output (C above, D of cuBLASLt) is
  // another matrix (then copied into the output first, when beta != 0), with its leading dimension and
  // batch stride; whole_call: the caller can forward only the whole call (first is then 0, and a
  // failure after matrices were updated in place with beta != 0 fails the call).
  const Env* env = nullptr;
  LtDecline lt_decline = LtDecline::None;
  // cublasLtMatmul called with C == nullptr (cuBLASLt accepts it when beta is 0, reading no C; XLA
  // does so): C_in is D then, and run() declines the call if beta turns out non-zero.
  bool c_null = false;
  // cublasLtMatmul with an epilogue other than DEFAULT: the hook runs cuBLASLt's epilogue pass after the product.
  bool lt_epilogue = false;
  const void* C_in = nullptr;
  int64_t ld_in = 0;
  long long stride_in = 0;
  bool whole_call = false;
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
// run() for cublasLtMatmul (call.env set): the ozgemm state is kept per cublasLt handle.
bool run_lt(cublasLtHandle_t handle, Call& call, cublasStatus_t* status) noexcept;

// The hooked cublasDestroy_v2 / cublasShutdown: frees the handle's ozgemm state (never throws).
void forget(cublasHandle_t handle) noexcept;
// The hooked cublasLtDestroy: frees the cublasLt handle's ozgemm state.
void forget_lt(cublasLtHandle_t handle) noexcept;

// True while this thread is inside the hook (libozgemm's own cuBLAS calls) or when the call comes
// from ozgemm's own code (from_ozgemm of real_for).
bool passthrough(bool from_ozgemm = false) noexcept;

// One hooked call through entry point `api` (real function type Fn), made from return address
// `caller`: describe(c) fills the call's description, run() is offered it, and forward(fn, c) runs
// the real function on what run() left ([c.first, batch)). Every exported cuBLAS entry point ends
// here (cublasLtMatmul, with its epilogue pass, is hook_lt.cpp's).
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
