// The C API (ozgemm/ozgemm.h): argument checks, handle state and the C ABI. Every decision is the
// planner's (plan_call, src/plan: one plan value per call), every launch the dispatch layer's
// (dispatch::run, src/dispatch); no kernel is called from here.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "api/handle.hpp"
#include "ozgemm/ozgemm.h"
#include "plan/planner.hpp"

using ozgemm::GemmShape;
using ozgemm::Op;

// The C enums and the C++ ones (ozgemm/types.hpp) are the same values.
static_assert(int(ozgemm::Variant::Auto) == OZGEMM_VARIANT_AUTO && int(ozgemm::Variant::Unfused) == OZGEMM_VARIANT_UNFUSED &&
                  int(ozgemm::Variant::PartiallyFused) == OZGEMM_VARIANT_PARTIALLY_FUSED &&
                  int(ozgemm::Variant::FullyFused) == OZGEMM_VARIANT_FULLY_FUSED &&
                  int(ozgemm::Variant::Native) == OZGEMM_VARIANT_NATIVE,
              "ozgemmVariant_t and ozgemm::Variant disagree");
static_assert(int(ozgemm::KernelFamily::Auto) == OZGEMM_KERNELS_AUTO && int(ozgemm::KernelFamily::Sm90) == OZGEMM_KERNELS_SM90 &&
                  int(ozgemm::KernelFamily::Portable) == OZGEMM_KERNELS_PORTABLE,
              "ozgemmKernelFamily_t and ozgemm::KernelFamily disagree");
static_assert(int(ozgemm::FusedAccumulator::Auto) == OZGEMM_ACCUMULATOR_AUTO &&
                  int(ozgemm::FusedAccumulator::Registers) == OZGEMM_ACCUMULATOR_REGISTERS &&
                  int(ozgemm::FusedAccumulator::Global) == OZGEMM_ACCUMULATOR_GLOBAL,
              "ozgemmFusedAccumulator_t and ozgemm::FusedAccumulator disagree");

namespace {

bool to_op(cublasOperation_t t, Op* op) {
  switch (t) {
    case CUBLAS_OP_N: *op = Op::N; return true;
    case CUBLAS_OP_T:
    case CUBLAS_OP_C: *op = Op::T; return true;  // real data: conjugate transpose == transpose (complex: conj too)
    default: return false;
  }
}

ozgemmStatus_t make_shape(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, int lda, int ldb, int ldc,
                          GemmShape* s) {
  Op opa, opb;
  if (!to_op(ta, &opa) || !to_op(tb, &opb)) return OZGEMM_STATUS_INVALID_VALUE;
  *s = ozgemm::gemm_shape(opa, opb, m, n, k, lda, ldb, ldc);
  return ozgemm::check_shape(*s).empty() ? OZGEMM_STATUS_SUCCESS : OZGEMM_STATUS_INVALID_VALUE;
}

// The shape of a problem with the smallest valid leading dimensions (they change neither the
// plan nor the workspace).
ozgemmStatus_t make_tight_shape(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, GemmShape* s) {
  const int a_rows = ta == CUBLAS_OP_N ? m : k, b_rows = tb == CUBLAS_OP_N ? k : n;
  return make_shape(ta, tb, m, n, k, a_rows > 1 ? a_rows : 1, b_rows > 1 ? b_rows : 1, m > 1 ? m : 1, s);
}

ozgemmStatus_t to_status(ozgemm::PlanStatus st) {
  switch (st) {
    case ozgemm::PlanStatus::Ok: return OZGEMM_STATUS_SUCCESS;
    case ozgemm::PlanStatus::Invalid: return OZGEMM_STATUS_INVALID_VALUE;
    case ozgemm::PlanStatus::NotSupported: return OZGEMM_STATUS_NOT_SUPPORTED;
    case ozgemm::PlanStatus::DataFailed: break;  // the DecisionData's own status
  }
  return OZGEMM_STATUS_INTERNAL_ERROR;
}

void to_info(const ozgemm::CallReport& r, ozgemmCallInfo_t* info) {
  *info = ozgemmCallInfo_t{};
  info->variant = static_cast<ozgemmVariant_t>(r.variant);
  info->slices = r.slices;
  info->bound = r.bound;
  info->target = r.target;
  info->fell_back = r.fell_back ? 1 : 0;
  std::snprintf(info->reason, sizeof info->reason, "%s", r.reason.c_str());
  info->scheme = static_cast<ozgemmScheme_t>(r.scheme);
  info->moduli = r.moduli;
}

// The element type of operands T (double: real, cuDoubleComplex: complex).
template <class T>
constexpr ozgemm::ElementType element_type() {
  return std::is_same<T, cuDoubleComplex>::value ? ozgemm::ElementType::ComplexF64 : ozgemm::ElementType::RealF64;
}

// FP64 mode's access to the data (planner.hpp): the dispatch layer's passes on the handle's stream
// over operands of type T (double or cuDoubleComplex), the handle's workspace. Keeps the status of
// the first failure.
template <class T>
class HandleData final : public ozgemm::DecisionData {
 public:
  HandleData(ozgemmContext* h, const GemmShape& s, const T* A, const T* B)
      : h_(h), s_(s), A_(A), B_(B), exec_(h->exec()) {}
  bool capturing(bool* ok) override {
    // The first call of every decision: data it cannot read is refused here.
    if (!A_ || !B_) return fail(OZGEMM_STATUS_INVALID_VALUE, ok);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(h_->stream, &capture) != cudaSuccess) {
      cudaGetLastError();
      return fail(OZGEMM_STATUS_EXECUTION_FAILED, ok);
    }
    *ok = true;
    return capture != cudaStreamCaptureStatusNone;
  }
  bool reserve(size_t bytes, bool* no_memory, bool* moved) override {
    status_ = ozgemm::detail::ensure_workspace(h_, bytes, &ws_, moved);
    // No room (the handle's allocation failed, or the caller's workspace is too small): a smaller
    // request, or native DGEMM/ZGEMM, may still run.
    *no_memory = status_ == OZGEMM_STATUS_ALLOC_FAILED || status_ == OZGEMM_STATUS_INSUFFICIENT_WORKSPACE;
    return status_ == OZGEMM_STATUS_SUCCESS;
  }
  bool digits(const ozgemm::DecisionPlan& plan, ozgemm::DecisionCounts* counts) override {
    status_ = ozgemm::dispatch::decision_digits(exec_, plan, s_, A_, B_, ws_, counts);
    return status_ == OZGEMM_STATUS_SUCCESS;
  }
  bool bound(const ozgemm::DecisionPlan& plan, const ozgemm::BoundRequest& rq, ozgemm::DecisionCounts* counts) override {
    status_ = ozgemm::dispatch::decision_bound(exec_, plan, s_, A_, B_, ws_, rq, counts);
    return status_ == OZGEMM_STATUS_SUCCESS;
  }
  ozgemmStatus_t status() const { return status_; }

 private:
  bool fail(ozgemmStatus_t st, bool* ok) {
    status_ = st;
    *ok = false;
    return false;
  }
  ozgemmContext* h_;
  const GemmShape& s_;
  const T *A_, *B_;
  ozgemm::dispatch::ExecContext exec_;
  void* ws_ = nullptr;
  ozgemmStatus_t status_ = OZGEMM_STATUS_SUCCESS;
};

// A query's plan (plan_call without data): the settings' count, and in FP64 mode the workspace any
// decided count may need. Real data: the C API's queries (ozgemmGetWorkspaceSize, ozgemmPlanCall, ...)
// take no element type (ozgemm.h); plan_call answers complex queries too.
ozgemmStatus_t plan_query(const ozgemmContext* h, const GemmShape& s, ozgemm::CallPlan* plan) {
  return to_status(ozgemm::plan_call(h->settings, {s}, h->dev, nullptr, plan));
}

// A call's plan (T = double or cuDoubleComplex): FP64 mode decides from A and B (null ones are
// refused where it reads them).
template <class T>
ozgemmStatus_t plan_run(ozgemmContext* h, const GemmShape& s, const T* A, const T* B, ozgemm::CallPlan* plan) {
  HandleData<T> data(h, s, A, B);
  const ozgemm::PlanStatus st = ozgemm::plan_call(h->settings, {s, element_type<T>()}, h->dev, &data, plan);
  return st == ozgemm::PlanStatus::DataFailed ? data.status() : to_status(st);
}

bool is_zero(double a) { return a == 0.0; }
bool is_zero(cuDoubleComplex a) { return a.x == 0.0 && a.y == 0.0; }

ozgemmStatus_t launch(ozgemmContext* h, const ozgemm::CallPlan& plan, const GemmShape& s, cublasOperation_t,
                      cublasOperation_t, double alpha, const double* A, const double* B, double beta, double* C,
                      void* ws) {
  return ozgemm::dispatch::run(h->exec(), plan, s, alpha, A, B, beta, C, ws);
}
ozgemmStatus_t launch(ozgemmContext* h, const ozgemm::CallPlan& plan, const GemmShape& s, cublasOperation_t ta,
                      cublasOperation_t tb, cuDoubleComplex alpha, const cuDoubleComplex* A, const cuDoubleComplex* B,
                      cuDoubleComplex beta, cuDoubleComplex* C, void* ws) {
  const ozgemm::dispatch::ComplexOps ops{ta == CUBLAS_OP_C, tb == CUBLAS_OP_C};
  return ozgemm::dispatch::run(h->exec(), plan, s, ops, alpha, A, B, beta, C, ws);
}

// ozgemmDgemm and ozgemmZgemm (T = double or cuDoubleComplex): cuBLAS's argument checks and BLAS's
// quick returns, then the plan (plan_call) and its launch (dispatch::run); the call's report.
template <class T>
ozgemmStatus_t gemm(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const T* alpha,
                    const T* A, int lda, const T* B, int ldb, const T* beta, T* C, int ldc) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  const ozgemm::detail::DeviceGuard on_handles_device(h->device);
  if (!on_handles_device.ok()) return OZGEMM_STATUS_EXECUTION_FAILED;
  GemmShape s;
  ozgemmStatus_t st = make_shape(ta, tb, m, n, k, lda, ldb, ldc, &s);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  if (!alpha || !beta) return OZGEMM_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return OZGEMM_STATUS_SUCCESS;
  if (!C) return OZGEMM_STATUS_INVALID_VALUE;
  const T al = *alpha, be = *beta;
  if (k == 0 || is_zero(al)) return ozgemm::dispatch::scale_c(h->exec(), s, be, C);
  if (!A || !B) return OZGEMM_STATUS_INVALID_VALUE;
  ozgemm::CallPlan plan;
  st = plan_run(h, s, A, B, &plan);
  void* ws = nullptr;
  if (st == OZGEMM_STATUS_SUCCESS && plan.workspace_bytes > 0)  // FP64 mode reserved it already
    st = ozgemm::detail::ensure_workspace(h, plan.workspace_bytes, &ws);
  if (st == OZGEMM_STATUS_SUCCESS) st = launch(h, plan, s, ta, tb, al, A, B, be, C, ws);
  if (st == OZGEMM_STATUS_SUCCESS) to_info(plan.report, &h->last);
  return st;
}

}  // namespace

namespace ozgemm {
namespace detail {
ozgemmStatus_t ensure_workspace(ozgemmContext* h, size_t bytes, void** ws, bool* moved) {
  if (moved) *moved = false;
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
    if (moved) *moved = true;
  }
  *ws = h->own_ws;
  return OZGEMM_STATUS_SUCCESS;
}
}  // namespace detail
}  // namespace ozgemm

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
    cudaGetLastError();
    delete h;
    return OZGEMM_STATUS_ARCH_MISMATCH;
  }
  h->dev.sm_count = prop.multiProcessorCount;
  h->dev.cc_major = prop.major;
  h->dev.cc_minor = prop.minor;
  h->dev.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  h->real_memory_bytes = h->dev.memory_bytes;
  if (!h->dev.has_int8_tensor_cores() || !ozgemm::dispatch::probe_build(&h->dev)) {
    delete h;
    return OZGEMM_STATUS_ARCH_MISMATCH;
  }
  if (const char* env = std::getenv("OZGEMM_LT_AUTOTUNE")) h->autotune = std::strcmp(env, "0") != 0;
  // OZGEMM_VARIANT: the variant new handles start with (as ozgemmSetVariant), for programs that
  // reach ozgemm through the drop-in libraries or the Python package. A value that is not a
  // variant, or one this GPU and build cannot run, fails the creation and says why on stderr.
  if (const char* env = std::getenv("OZGEMM_VARIANT"); env && *env) {
    ozgemm::Variant v;
    if (!ozgemm::parse_variant(env, &v)) {
      std::fprintf(stderr, "ozgemm: OZGEMM_VARIANT=%s is not one of auto, unfused, partially-fused, fully-fused, native\n",
                   env);
      delete h;
      return OZGEMM_STATUS_INVALID_VALUE;
    }
    const std::string why = ozgemm::variant_unavailable(v, h->settings.family, h->dev);
    if (!why.empty()) {
      std::fprintf(stderr, "ozgemm: OZGEMM_VARIANT=%s cannot run here: %s\n", env, why.c_str());
      delete h;
      return OZGEMM_STATUS_NOT_SUPPORTED;
    }
    h->settings.variant = v;
  }
  h->last.variant = OZGEMM_VARIANT_NATIVE;
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
  const ozgemm::detail::DeviceGuard on_handles_device(h->device);  // its memory and cuBLAS handles live there
  // cudaFree waits for all work on the device, so no stream synchronisation is needed here
  // (and the user's stream may already be destroyed, as cuBLAS allows).
  if (h->own_ws) cudaFree(h->own_ws);
  if (h->pinned_free) {
    cudaEventSynchronize(h->pinned_free);  // the last copy out of the pinned buffer
    cudaEventDestroy(h->pinned_free);
  }
  if (h->pinned) cudaFreeHost(h->pinned);
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
  if (slices < 0 || slices > ozgemm::kMaxSlices) return OZGEMM_STATUS_INVALID_VALUE;
  h->settings.slices = slices;
  h->settings.fp64_mode = slices == 0;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmSetScheme(ozgemmHandle_t h, ozgemmScheme_t scheme) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (scheme != OZGEMM_SCHEME_OZAKI1 && scheme != OZGEMM_SCHEME_OZAKI2 && scheme != OZGEMM_SCHEME_AUTO)
    return OZGEMM_STATUS_INVALID_VALUE;
  h->settings.scheme = static_cast<ozgemm::Scheme>(scheme);
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmGetScheme(ozgemmHandle_t h, ozgemmScheme_t* scheme) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!scheme) return OZGEMM_STATUS_INVALID_VALUE;
  *scheme = static_cast<ozgemmScheme_t>(h->settings.scheme);
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmSetModuli(ozgemmHandle_t h, int moduli) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (moduli != 0 && (moduli < ozgemm::kMinModuli || moduli > ozgemm::kMaxModuli)) return OZGEMM_STATUS_INVALID_VALUE;
  h->settings.moduli = moduli;
  if (moduli > 0) h->settings.fp64_mode = false;  // a count is FIXED mode, as ozgemmSetSlices
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmSetAccuracy(ozgemmHandle_t h, ozgemmAccuracy_t a) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (a != OZGEMM_ACCURACY_FP64 && a != OZGEMM_ACCURACY_FIXED) return OZGEMM_STATUS_INVALID_VALUE;
  h->settings.fp64_mode = a == OZGEMM_ACCURACY_FP64;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmGetAccuracy(ozgemmHandle_t h, ozgemmAccuracy_t* a) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!a) return OZGEMM_STATUS_INVALID_VALUE;
  *a = h->settings.fp64_mode ? OZGEMM_ACCURACY_FP64 : OZGEMM_ACCURACY_FIXED;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmPlanCall(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const double* A, int lda, const double* B, int ldb, ozgemmCallInfo_t* info) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!info) return OZGEMM_STATUS_INVALID_VALUE;
  GemmShape s;
  ozgemmStatus_t st = make_shape(ta, tb, m, n, k, lda, ldb, m > 1 ? m : 1, &s);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  ozgemm::CallPlan p;
  *info = ozgemmCallInfo_t{};
  const ozgemm::detail::DeviceGuard on_handles_device(h->device);  // FP64 mode reads A and B there
  if (!on_handles_device.ok()) return OZGEMM_STATUS_EXECUTION_FAILED;
  st = plan_run(h, s, A, B, &p);
  if (st == OZGEMM_STATUS_SUCCESS) to_info(p.report, info);
  return st;
}

ozgemmStatus_t ozgemmGetLastCallInfo(ozgemmHandle_t h, ozgemmCallInfo_t* info) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!info) return OZGEMM_STATUS_INVALID_VALUE;
  *info = h->last;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmGetSlices(ozgemmHandle_t h, int* slices) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!slices) return OZGEMM_STATUS_INVALID_VALUE;
  *slices = h->settings.effective_slices();
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmSetVariant(ozgemmHandle_t h, ozgemmVariant_t v) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!ozgemm::variant_name(static_cast<ozgemm::Variant>(v))) return OZGEMM_STATUS_INVALID_VALUE;
  if (!ozgemm::variant_unavailable(static_cast<ozgemm::Variant>(v), h->settings.family, h->dev).empty())
    return OZGEMM_STATUS_NOT_SUPPORTED;
  h->settings.variant = static_cast<ozgemm::Variant>(v);
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmGetVariant(ozgemmHandle_t h, ozgemmVariant_t* v) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!v) return OZGEMM_STATUS_INVALID_VALUE;
  *v = static_cast<ozgemmVariant_t>(h->settings.variant);
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmSetKernelFamily(ozgemmHandle_t h, ozgemmKernelFamily_t f) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  const auto family = static_cast<ozgemm::KernelFamily>(f);
  if (!ozgemm::family_name(family)) return OZGEMM_STATUS_INVALID_VALUE;
  // The family serves the fused variants: refused when this device or build has no such kernels.
  if (!ozgemm::variant_unavailable(ozgemm::Variant::PartiallyFused, family, h->dev).empty())
    return OZGEMM_STATUS_NOT_SUPPORTED;
  h->settings.family = family;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmSetFusedAccumulator(ozgemmHandle_t h, ozgemmFusedAccumulator_t a) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  const auto acc = static_cast<ozgemm::FusedAccumulator>(a);
  if (!ozgemm::accumulator_name(acc)) return OZGEMM_STATUS_INVALID_VALUE;
  h->settings.accumulator = acc;
  return OZGEMM_STATUS_SUCCESS;
}

ozgemmStatus_t ozgemmGetWorkspaceSize(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                      int k, size_t* bytes) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!bytes) return OZGEMM_STATUS_INVALID_VALUE;
  GemmShape s;
  ozgemmStatus_t st = make_tight_shape(ta, tb, m, n, k, &s);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  // An empty problem is a BLAS quick return: it runs nothing and needs no workspace.
  if (m == 0 || n == 0 || k == 0) {
    *bytes = 0;
    return OZGEMM_STATUS_SUCCESS;
  }
  ozgemm::CallPlan p;
  st = plan_query(h, s, &p);
  if (st == OZGEMM_STATUS_SUCCESS) *bytes = p.workspace_bytes;
  return st;
}

ozgemmStatus_t ozgemmGetPlannedVariant(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                       int k, ozgemmVariant_t* variant) {
  if (!h) return OZGEMM_STATUS_NOT_INITIALIZED;
  if (!variant) return OZGEMM_STATUS_INVALID_VALUE;
  GemmShape s;
  ozgemmStatus_t st = make_tight_shape(ta, tb, m, n, k, &s);
  ozgemm::CallPlan p;
  if (st == OZGEMM_STATUS_SUCCESS) st = plan_query(h, s, &p);
  if (st == OZGEMM_STATUS_SUCCESS) *variant = static_cast<ozgemmVariant_t>(p.report.variant);
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
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  ozgemm::CallPlan p;
  return plan_query(h, s, &p);
}

ozgemmStatus_t ozgemmDgemm(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const double* alpha, const double* A, int lda, const double* B, int ldb,
                           const double* beta, double* C, int ldc) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

ozgemmStatus_t ozgemmZgemm(ozgemmHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda, const cuDoubleComplex* B,
                           int ldb, const cuDoubleComplex* beta, cuDoubleComplex* C, int ldc) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
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
  const char* name = ozgemm::variant_name(static_cast<ozgemm::Variant>(v));
  return name ? name : "unknown";
}

}  // extern "C"
