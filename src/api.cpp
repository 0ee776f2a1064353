// The C API (ozgemm/ozgemm.h) and the C++ conveniences of ozgemm/ozgemm.hpp.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "context.hpp"
#include "kernels.hpp"
#include "ozgemm/ozgemm.h"
#include "ozgemm/ozgemm.hpp"
#include "planner.hpp"

using ozgemm::GemmShape;
using ozgemm::Op;

namespace {

bool to_op(cublasOperation_t t, Op* op) {
  switch (t) {
    case CUBLAS_OP_N: *op = Op::N; return true;
    case CUBLAS_OP_T:
    case CUBLAS_OP_C: *op = Op::T; return true;  // real data: conjugate transpose == transpose
    default: return false;
  }
}

int effective_slices(const ozgemmContext* h) { return h->slices > 0 ? h->slices : OZGEMM_DEFAULT_SLICES; }

ozgemmStatus_t make_shape(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, int lda, int ldb,
                          int ldc, GemmShape* s) {
  Op opa, opb;
  if (!to_op(ta, &opa) || !to_op(tb, &opb)) return OZGEMM_STATUS_INVALID_VALUE;
  *s = ozgemm::gemm_shape(opa, opb, m, n, k, lda, ldb, ldc);
  return ozgemm::check_shape(*s).empty() ? OZGEMM_STATUS_SUCCESS : OZGEMM_STATUS_INVALID_VALUE;
}

int effective_slices(const ozgemmContext* h);

// The shape of a problem with the smallest valid leading dimensions (they change neither the
// plan nor the workspace).
ozgemmStatus_t make_tight_shape(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, GemmShape* s) {
  const int lda = (ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1;
  const int ldb = (tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1;
  return make_shape(ta, tb, m, n, k, lda, ldb, m > 1 ? m : 1, s);
}

// Which path runs a problem: the handle's variant, or the planner's choice for AUTO.
bool fused_available(const ozgemmContext* h);

ozgemmVariant_t resolve_variant(const ozgemmContext* h, const GemmShape& s) {
  if (h->variant != OZGEMM_VARIANT_AUTO) return h->variant;
  auto v = static_cast<ozgemmVariant_t>(ozgemm::choose_auto_variant(s, effective_slices(h), h->dev));
  if ((v == OZGEMM_VARIANT_PARTIALLY_FUSED || v == OZGEMM_VARIANT_FULLY_FUSED) && !fused_available(h))
    v = OZGEMM_VARIANT_UNFUSED;
  return v;
}

// Plans an emulated variant. A fused variant the problem does not fit (a grid or spill buffer
// past the fused kernels' limits) falls back to the unfused plan: kernel limits are the
// planner's business, never the user's. ozgemmGetPlannedVariant reports what runs.
ozgemmStatus_t plan_for(const ozgemmContext* h, const GemmShape& s, ozgemmVariant_t v, ozgemm::Plan* plan) {
  const int slices = effective_slices(h);
  if (v == OZGEMM_VARIANT_PARTIALLY_FUSED || v == OZGEMM_VARIANT_FULLY_FUSED) {
    if (ozgemm::plan_variant(s, slices, h->dev, static_cast<ozgemm::Variant>(v), plan,
                             static_cast<ozgemm::KernelFamily>(h->family),
                             static_cast<ozgemm::FusedAccumulator>(h->accumulator))
            .empty())
      return OZGEMM_STATUS_SUCCESS;
  }
  const std::string why = ozgemm::plan_unfused(s, slices, h->dev, plan);
  return why.empty() ? OZGEMM_STATUS_SUCCESS : OZGEMM_STATUS_INVALID_VALUE;
}

bool family_available(const ozgemmContext* h, ozgemmKernelFamily_t f) {
  const bool hopper = h->dev.cc_major == 9 && h->dev.cc_minor == 0;
  if (f == OZGEMM_KERNELS_AUTO) f = hopper ? OZGEMM_KERNELS_SM90 : OZGEMM_KERNELS_PORTABLE;
  if (f == OZGEMM_KERNELS_SM90) return ozgemm::kernels::fused_sm90_built() && hopper;
  return ozgemm::kernels::fused_portable_built() && h->dev.cc_major >= 8;
}

bool fused_available(const ozgemmContext* h) { return family_available(h, h->family); }

ozgemmStatus_t ensure_workspace(ozgemmContext* h, size_t bytes, void** ws) {
  if (h->user_ws) {
    if (h->user_ws_bytes < bytes) return OZGEMM_STATUS_INSUFFICIENT_WORKSPACE;
    *ws = h->user_ws;
    return OZGEMM_STATUS_SUCCESS;
  }
  if (h->own_ws_bytes < bytes) {
    if (h->own_ws) {
      // Earlier calls on the stream may still use the old buffer.
      if (cudaStreamSynchronize(h->stream) != cudaSuccess) return OZGEMM_STATUS_EXECUTION_FAILED;
      cudaFree(h->own_ws);
      h->own_ws = nullptr;
      h->own_ws_bytes = 0;
    }
    if (cudaMalloc(&h->own_ws, bytes) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free allocation error
      h->own_ws = nullptr;
      return OZGEMM_STATUS_ALLOC_FAILED;
    }
    h->own_ws_bytes = bytes;
  }
  *ws = h->own_ws;
  return OZGEMM_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

ozgemmStatus_t ozgemmCreate(ozgemmHandle_t* handle) {
  if (!handle) return OZGEMM_STATUS_INVALID_VALUE;
  *handle = nullptr;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return OZGEMM_STATUS_ARCH_MISMATCH;
  }
  auto* h = new (std::nothrow) ozgemmContext();
  if (!h) return OZGEMM_STATUS_ALLOC_FAILED;
  cudaDeviceProp prop;
  if (cudaGetDevice(&h->device) != cudaSuccess || cudaGetDeviceProperties(&prop, h->device) != cudaSuccess) {
    delete h;
    return OZGEMM_STATUS_ARCH_MISMATCH;
  }
  h->dev.sm_count = prop.multiProcessorCount;
  h->dev.cc_major = prop.major;
  h->dev.cc_minor = prop.minor;
  h->dev.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  h->real_memory_bytes = h->dev.memory_bytes;
  if (prop.major * 10 + prop.minor < 75 || ozgemm::kernels::check_kernel_image() != cudaSuccess) {
    cudaGetLastError();
    delete h;
    return OZGEMM_STATUS_ARCH_MISMATCH;
  }
  if (const char* env = std::getenv("OZGEMM_LT_AUTOTUNE")) h->autotune = std::strcmp(env, "0") != 0;
  if (cublasCreate(&h->cublas) != CUBLAS_STATUS_SUCCESS || h->lt.init() != CUBLAS_STATUS_SUCCESS) {
    if (h->cublas) cublasDestroy(h->cublas);
    delete h;
    return OZGEMM_STATUS_NOT_INITIALIZED;
  }
  *handle = h;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmDestroy(ozgemmHandle_t h) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  // cudaFree waits for all work on the device, so no stream synchronisation is needed here
  // (and the user's stream may already be destroyed, as cuBLAS allows).
  if (h->own_ws) cudaFree(h->own_ws);
  if (h->cublas) cublasDestroy(h->cublas);
  delete h;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmSetStream(ozgemmHandle_t h, cudaStream_t stream) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  h->stream = stream;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmGetStream(ozgemmHandle_t h, cudaStream_t* stream) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!stream) return OZGEMM_STATUS_INVALID_VALUE;
  *stream = h->stream;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmSetSlices(ozgemmHandle_t h, int slices) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (slices < 0 || slices > OZGEMM_MAX_SLICES) return OZGEMM_STATUS_INVALID_VALUE;
  h->slices = slices;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmGetSlices(ozgemmHandle_t h, int* slices) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!slices) return OZGEMM_STATUS_INVALID_VALUE;
  *slices = effective_slices(h);
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmSetVariant(ozgemmHandle_t h, ozgemmVariant_t v) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  switch (v) {
    case OZGEMM_VARIANT_AUTO:
    case OZGEMM_VARIANT_UNFUSED:
    case OZGEMM_VARIANT_NATIVE: h->variant = v; return OZGEMM_STATUS_SUCCESS;
    case OZGEMM_VARIANT_PARTIALLY_FUSED:
    case OZGEMM_VARIANT_FULLY_FUSED:
      if (!fused_available(h)) return OZGEMM_STATUS_NOT_SUPPORTED;  // needs sm_90a code and a Hopper GPU
      h->variant = v;
      return OZGEMM_STATUS_SUCCESS;
  }
  return OZGEMM_STATUS_INVALID_VALUE;
}

ozgemmStatus_t ozgemmSetKernelFamily(ozgemmHandle_t h, ozgemmKernelFamily_t f) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (f != OZGEMM_KERNELS_AUTO && f != OZGEMM_KERNELS_SM90 && f != OZGEMM_KERNELS_PORTABLE)
    return OZGEMM_STATUS_INVALID_VALUE;
  if (!family_available(h, f)) return OZGEMM_STATUS_NOT_SUPPORTED;
  h->family = f;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmSetFusedAccumulator(ozgemmHandle_t h, ozgemmFusedAccumulator_t a) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (a != OZGEMM_ACCUMULATOR_AUTO && a != OZGEMM_ACCUMULATOR_REGISTERS && a != OZGEMM_ACCUMULATOR_GLOBAL)
    return OZGEMM_STATUS_INVALID_VALUE;
  h->accumulator = a;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmGetVariant(ozgemmHandle_t h, ozgemmVariant_t* v) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!v) return OZGEMM_STATUS_INVALID_VALUE;
  *v = h->variant;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmGetWorkspaceSize(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                      int k, size_t* bytes) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!bytes) return OZGEMM_STATUS_INVALID_VALUE;
  GemmShape s;
  ozgemmStatus_t st = make_tight_shape(ta, tb, m, n, k, &s);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  if (resolve_variant(h, s) == OZGEMM_VARIANT_NATIVE || m == 0 || n == 0 || k == 0) {
    *bytes = 0;
    return OZGEMM_STATUS_SUCCESS;
  }
  ozgemm::Plan plan;
  st = plan_for(h, s, resolve_variant(h, s), &plan);
  if (st == OZGEMM_STATUS_SUCCESS) *bytes = plan.workspace_bytes;
  return st;
}

ozgemmStatus_t ozgemmGetPlannedVariant(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                       int k, ozgemmVariant_t* variant) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!variant) return OZGEMM_STATUS_INVALID_VALUE;
  GemmShape s;
  ozgemmStatus_t st = make_tight_shape(ta, tb, m, n, k, &s);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  const ozgemmVariant_t v = resolve_variant(h, s);
  if (v == OZGEMM_VARIANT_NATIVE || m == 0 || n == 0 || k == 0) {
    *variant = v;
    return OZGEMM_STATUS_SUCCESS;
  }
  ozgemm::Plan plan;
  st = plan_for(h, s, v, &plan);
  if (st == OZGEMM_STATUS_SUCCESS) *variant = static_cast<ozgemmVariant_t>(plan.variant);
  return st;
}

ozgemmStatus_t ozgemmSetWorkspace(ozgemmHandle_t h, void* ptr, size_t bytes) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (ptr && (reinterpret_cast<uintptr_t>(ptr) % 256) != 0) return OZGEMM_STATUS_INVALID_VALUE;
  h->user_ws = ptr;
  h->user_ws_bytes = ptr ? bytes : 0;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmCanImplement(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  int lda, int ldb, int ldc) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  GemmShape s;
  ozgemmStatus_t st = make_shape(ta, tb, m, n, k, lda, ldb, ldc, &s);
  if (st != OZGEMM_STATUS_SUCCESS || resolve_variant(h, s) == OZGEMM_VARIANT_NATIVE || m == 0 || n == 0 || k == 0)
    return st;
  ozgemm::Plan plan;
  return plan_for(h, s, resolve_variant(h, s), &plan);
}

ozgemmStatus_t ozgemmDgemm(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const double* alpha, const double* A, int lda, const double* B, int ldb,
                           const double* beta, double* C, int ldc) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  GemmShape s;
  ozgemmStatus_t st = make_shape(ta, tb, m, n, k, lda, ldb, ldc, &s);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  if (!alpha || !beta) return OZGEMM_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return OZGEMM_STATUS_SUCCESS;
  if (!C) return OZGEMM_STATUS_INVALID_VALUE;
  const double al = *alpha, be = *beta;
  if (k == 0 || al == 0.0) return ozgemm::detail::run_scale_c(h, s, be, C);
  if (!A || !B) return OZGEMM_STATUS_INVALID_VALUE;
  const ozgemmVariant_t v = resolve_variant(h, s);
  if (v == OZGEMM_VARIANT_NATIVE) return ozgemm::detail::run_native(h, s, al, A, B, be, C);
  ozgemm::Plan plan;
  st = plan_for(h, s, v, &plan);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  void* ws = nullptr;
  st = ensure_workspace(h, plan.workspace_bytes, &ws);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  return ozgemm::detail::run_emulated(h, plan, s, al, A, B, be, C, ws);
}

const char* ozgemmGetStatusString(ozgemmStatus_t s) {
  switch (s) {
    case OZGEMM_STATUS_SUCCESS: return "OZGEMM_STATUS_SUCCESS";
    case OZGEMM_STATUS_NOT_INITIALIZED: return "OZGEMM_STATUS_NOT_INITIALIZED (null or invalid handle)";
    case OZGEMM_STATUS_INVALID_VALUE: return "OZGEMM_STATUS_INVALID_VALUE (bad size, leading dimension, pointer or option)";
    case OZGEMM_STATUS_ARCH_MISMATCH: return "OZGEMM_STATUS_ARCH_MISMATCH (no GPU with INT8 tensor cores that this build supports)";
    case OZGEMM_STATUS_ALLOC_FAILED: return "OZGEMM_STATUS_ALLOC_FAILED (device workspace allocation failed)";
    case OZGEMM_STATUS_INSUFFICIENT_WORKSPACE: return "OZGEMM_STATUS_INSUFFICIENT_WORKSPACE (user workspace too small)";
    case OZGEMM_STATUS_EXECUTION_FAILED: return "OZGEMM_STATUS_EXECUTION_FAILED (a kernel or cuBLASLt call failed)";
    case OZGEMM_STATUS_NOT_SUPPORTED: return "OZGEMM_STATUS_NOT_SUPPORTED (valid request this build cannot serve)";
    case OZGEMM_STATUS_INTERNAL_ERROR: return "OZGEMM_STATUS_INTERNAL_ERROR";
  }
  return "unknown ozgemm status";
}

const char* ozgemmGetVariantString(ozgemmVariant_t v) {
  return ozgemm::variant_name(static_cast<ozgemm::Variant>(v));
}

}  // extern "C"

namespace ozgemm {

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    if (why) *why = e != cudaSuccess ? std::string("CUDA: ") + cudaGetErrorString(e) : "no CUDA device";
    return false;
  }
  cudaDeviceProp prop;
  int dev = 0;
  cudaGetDevice(&dev);
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess || prop.major * 10 + prop.minor < 75) {
    if (why) *why = "the GPU has no INT8 tensor cores (needs compute capability 7.5+)";
    return false;
  }
  if (kernels::check_kernel_image() != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = "this build has no device code for the GPU's architecture (see OZGEMM_CUDA_ARCHITECTURES)";
    return false;
  }
  return true;
}

std::string gpu_description() {
  cudaDeviceProp prop;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return "no GPU";
  return std::string(prop.name) + " (" + std::to_string(prop.multiProcessorCount) + " SMs, sm_" +
         std::to_string(prop.major) + std::to_string(prop.minor) + ")";
}

void set_phase_events(Handle& h, cudaEvent_t* events) { h.get()->phase_events = events; }

namespace detail {
void set_planning_memory(ozgemmHandle_t h, int64_t bytes) {
  h->dev.memory_bytes = bytes > 0 ? bytes : h->real_memory_bytes;
}
}  // namespace detail

void dgemm_host_buffers(Handle& h, Op ta, Op tb, int m, int n, int k, double alpha, const double* A, int lda,
                        const double* B, int ldb, double beta, double* C, int ldc) {
  const std::string why = check_shape(gemm_shape(ta, tb, m, n, k, lda, ldb, ldc));
  if (!why.empty()) throw Error(OZGEMM_STATUS_INVALID_VALUE, why);
  const size_t na = size_t(lda) * size_t(ta == Op::N ? k : m);
  const size_t nb = size_t(ldb) * size_t(tb == Op::N ? n : k);
  const size_t nc = size_t(ldc) * size_t(n);
  double *dA = nullptr, *dB = nullptr, *dC = nullptr;
  auto cleanup = [&] {
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
  };
  if (cudaMalloc(&dA, std::max<size_t>(1, na) * 8) != cudaSuccess ||
      cudaMalloc(&dB, std::max<size_t>(1, nb) * 8) != cudaSuccess ||
      cudaMalloc(&dC, std::max<size_t>(1, nc) * 8) != cudaSuccess) {
    cleanup();
    throw Error(OZGEMM_STATUS_ALLOC_FAILED, "dgemm_host_buffers");
  }
  cudaStream_t st = nullptr;
  ozgemmGetStream(h.get(), &st);
  bool ok = cudaMemcpyAsync(dA, A, na * 8, cudaMemcpyHostToDevice, st) == cudaSuccess &&
            cudaMemcpyAsync(dB, B, nb * 8, cudaMemcpyHostToDevice, st) == cudaSuccess &&
            cudaMemcpyAsync(dC, C, nc * 8, cudaMemcpyHostToDevice, st) == cudaSuccess;
  ozgemmStatus_t status = ok ? ozgemmDgemm(h.get(), to_cublas(ta), to_cublas(tb), m, n, k, &alpha, dA, lda, dB, ldb,
                                           &beta, dC, ldc)
                             : OZGEMM_STATUS_EXECUTION_FAILED;
  if (status == OZGEMM_STATUS_SUCCESS)
    ok = cudaMemcpyAsync(C, dC, nc * 8, cudaMemcpyDeviceToHost, st) == cudaSuccess &&
         cudaStreamSynchronize(st) == cudaSuccess;
  cleanup();
  if (status != OZGEMM_STATUS_SUCCESS) throw Error(status, "ozgemmDgemm");
  if (!ok) throw Error(OZGEMM_STATUS_EXECUTION_FAILED, "dgemm_host_buffers: copy");
}

}  // namespace ozgemm
