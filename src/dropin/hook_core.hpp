// src/dropin/hook_core.hpp — the cuBLAS interposer's core, shared by the v2/Ex entry points
// (hook.cpp) and the legacy cublasDgemm (hook_legacy.cpp, which must include cublas.h and so
// cannot see cublas_v2.h). docs/dropin.md describes the behaviour.
#pragma once

#include <cublas_api.h>
#include <library_types.h>

#include <cstdint>

namespace ozgemm {
namespace dropin {
namespace hook {

// ---- the real cuBLAS ------------------------------------------------------------------------------
using DgemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const double*,
                                   const double*, int, const double*, int, const double*, double*, int);
using Dgemm64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t, int64_t,
                                     const double*, const double*, int64_t, const double*, int64_t, const double*,
                                     double*, int64_t);
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t, int64_t,
                                      const void*, const void*, cudaDataType, int64_t, const void*, cudaDataType,
                                      int64_t, const void*, void*, cudaDataType, int64_t, cublasComputeType_t,
                                      cublasGemmAlgo_t);
using DgemmSBFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                     const double*, const double*, int, long long, const double*, int, long long,
                                     const double*, double*, int, long long, int);
using DgemmSB64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t, int64_t,
                                       const double*, const double*, int64_t, long long, const double*, int64_t,
                                       long long, const double*, double*, int64_t, long long, int64_t);
using DgemmBFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                    const double*, const double* const[], int, const double* const[], int,
                                    const double*, double* const[], int, int);
using DgemmB64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t, int64_t,
                                      const double*, const double* const[], int64_t, const double* const[], int64_t,
                                      const double*, double* const[], int64_t, int64_t);
using GemmSBExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                      const void*, const void*, cudaDataType, int, long long, const void*,
                                      cudaDataType, int, long long, const void*, void*, cudaDataType, int, long long,
                                      int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmSBEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t,
                                        int64_t, const void*, const void*, cudaDataType, int64_t, long long,
                                        const void*, cudaDataType, int64_t, long long, const void*, void*,
                                        cudaDataType, int64_t, long long, int64_t, cublasComputeType_t,
                                        cublasGemmAlgo_t);
using GemmBExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                     const void*, const void* const[], cudaDataType, int, const void* const[],
                                     cudaDataType, int, const void*, void* const[], cudaDataType, int, int,
                                     cublasComputeType_t, cublasGemmAlgo_t);
using GemmBEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t,
                                       int64_t, const void*, const void* const[], cudaDataType, int64_t,
                                       const void* const[], cudaDataType, int64_t, const void*, void* const[],
                                       cudaDataType, int64_t, int64_t, cublasComputeType_t, cublasGemmAlgo_t);
using LegacyDgemmFn = void (*)(char, char, int, int, int, double, const double*, int, const double*, int, double,
                               double*, int);

// The functions of one loaded cuBLAS (the one the caller's object links). Any pointer may be null
// when that cuBLAS lacks the function.
struct Real {
  const char* path = "";  // the library's file (for messages)
  DgemmFn dgemm = nullptr;
  Dgemm64Fn dgemm_64 = nullptr;
  GemmExFn gemm_ex = nullptr;
  GemmEx64Fn gemm_ex_64 = nullptr;
  DgemmSBFn dgemm_sb = nullptr;
  DgemmSB64Fn dgemm_sb_64 = nullptr;
  DgemmBFn dgemm_b = nullptr;
  DgemmB64Fn dgemm_b_64 = nullptr;
  GemmSBExFn gemm_sb_ex = nullptr;
  GemmSBEx64Fn gemm_sb_ex_64 = nullptr;
  GemmBExFn gemm_b_ex = nullptr;
  GemmBEx64Fn gemm_b_ex_64 = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*get_stream)(cublasHandle_t, cudaStream_t*) = nullptr;
  cublasStatus_t (*get_pointer_mode)(cublasHandle_t, cublasPointerMode_t*) = nullptr;
  cublasStatus_t (*get_math_mode)(cublasHandle_t, cublasMath_t*) = nullptr;
  // legacy API (cublas.h)
  LegacyDgemmFn legacy_dgemm = nullptr;
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

// ---- one call -----------------------------------------------------------------------------------------
enum class Api {
  Dgemm, Dgemm64, GemmEx, GemmEx64, DgemmStridedBatched, DgemmStridedBatched64, DgemmBatched, DgemmBatched64,
  GemmStridedBatchedEx, GemmStridedBatchedEx64, GemmBatchedEx, GemmBatchedEx64, LegacyDgemm, Count
};

// The handle the legacy API's implicit context stands for in the per-handle map.
extern const cublasHandle_t kLegacyHandle;

struct Call {
  Api api = Api::Dgemm;
  int transa = 0, transb = 0;  // cublasOperation_t values, or legacy chars 'N'/'T'/'C' (mapped before run)
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  const void* alpha = nullptr;  // host or device pointer (pointer mode); legacy: host copies
  const void* beta = nullptr;
  // single and strided calls
  const double* A = nullptr;
  const double* B = nullptr;
  double* C = nullptr;
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  // pointer-array calls (device arrays of device pointers)
  const void* const* A_array = nullptr;
  const void* const* B_array = nullptr;
  void* const* C_array = nullptr;
  int64_t batch = 1;
  bool strided = false, arrays = false;
  // Ex calls: all four must be FP64 for the hook to take the call
  bool ex = false;
  cudaDataType a_type = CUDA_R_64F, b_type = CUDA_R_64F, c_type = CUDA_R_64F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
  // legacy calls: the stream of cublasSetKernelStream and whether cublasInit succeeded
  bool legacy = false;
  cudaStream_t legacy_stream = nullptr;
  bool legacy_initialised = false;
  // Called from ozgemm itself (real_for): passed straight through.
  bool from_ozgemm = false;
  // Out: the first batch member that ozgemm did not run (the caller forwards [first, batch)).
  int64_t first = 0;
};

// Runs the call through ozgemm when every check passes. Returns true when the whole call was done
// (status in *status); false when the caller must run the real function on the batch members
// [call.first, batch) — all of them when the hook declined. Never throws.
bool run(const Real& real, cublasHandle_t handle, Call& call, cublasStatus_t* status) noexcept;

// The hooked cublasDestroy_v2 / cublasShutdown: frees the handle's ozgemm state (never throws).
void forget(cublasHandle_t handle) noexcept;

// True while this thread is inside the hook (libozgemm's own cuBLAS calls) or when the call comes
// from ozgemm's own code (from_ozgemm of real_for).
bool passthrough(bool from_ozgemm = false) noexcept;

}  // namespace hook
}  // namespace dropin
}  // namespace ozgemm
