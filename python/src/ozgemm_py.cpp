// python/src/ozgemm_py.cpp — the extension module ozgemm._ozgemm: a thin nanobind layer over the C
// API. Device pointers, leading dimensions and stream handles come in as Python ints; the array
// handling (frameworks, strides -> BLAS arguments, streams) is python/ozgemm/_arrays.py. Library
// calls return the ozgemmStatus_t as an int (the Python layer raises ozgemm.OzgemmError); only
// argument errors of the host reference raise here. Never raises for a missing GPU or driver.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime.h>

#include <climits>
#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ozgemm/ozgemm.h"
#include "ozgemm/ozgemm.hpp"
#include "ozgemm/problem.hpp"
#include "ozgemm/reference/ozaki2.hpp"
#include "ozgemm/reference/ozaki2_complex.hpp"
#include "ozgemm/reference/reference.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// Makes `device` current for the scope and restores the caller's device afterwards (the
// frameworks keep their own notion of the current device; ozgemm must not change it).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : device_(device) {
    if (cudaGetDevice(&prev_) != cudaSuccess) {
      cudaGetLastError();
      prev_ = -1;
    }
    if (prev_ == device_) return;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();
      status_ = OZGEMM_STATUS_ARCH_MISMATCH;  // no driver or no GPU: what ozgemmCreate reports
    } else if (device_ < 0 || device_ >= count || cudaSetDevice(device_) != cudaSuccess) {
      cudaGetLastError();
      status_ = OZGEMM_STATUS_INVALID_VALUE;
    }
  }
  ~DeviceGuard() {
    if (prev_ >= 0 && prev_ != device_) cudaSetDevice(prev_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ozgemmStatus_t status() const { return status_; }

 private:
  int device_;
  int prev_ = -1;
  ozgemmStatus_t status_ = OZGEMM_STATUS_SUCCESS;
};

// One handle per (thread, device), created on first use; each call sets the stream and options
// it needs. Destroyed at thread exit, and for the main thread by release_handles() (atexit).
struct Handles {
  std::unordered_map<int, ozgemmHandle_t> by_device;
  ~Handles() { release(); }
  void release() {
    for (auto& kv : by_device) ozgemmDestroy(kv.second);
    by_device.clear();
  }
};
thread_local Handles t_handles;

// The current device must be `device` (DeviceGuard).
ozgemmStatus_t get_handle(int device, ozgemmHandle_t* h) {
  auto it = t_handles.by_device.find(device);
  if (it != t_handles.by_device.end()) {
    *h = it->second;
    return OZGEMM_STATUS_SUCCESS;
  }
  const ozgemmStatus_t st = ozgemmCreate(h);
  if (st == OZGEMM_STATUS_SUCCESS) t_handles.by_device.emplace(device, *h);
  return st;
}

// The call's options: accuracy 0 = FP64, 1 = FIXED; slices 0 = the default count (FIXED) or none
// (FP64); scheme: ozgemmScheme_t; moduli 0 = the default count (> 0 selects FIXED); variant:
// ozgemmVariant_t.
struct Options {
  int accuracy, slices, scheme, moduli, variant;
};

// Handle for `device` with the call's stream and options (set on every call: handles are reused).
ozgemmStatus_t configured_handle(int device, uintptr_t stream, const Options& o, ozgemmHandle_t* h) {
  if (o.accuracy != OZGEMM_ACCURACY_FIXED && o.accuracy != OZGEMM_ACCURACY_FP64) return OZGEMM_STATUS_INVALID_VALUE;
  ozgemmStatus_t st = get_handle(device, h);
  if (st != OZGEMM_STATUS_SUCCESS) return st;
  if ((st = ozgemmSetStream(*h, reinterpret_cast<cudaStream_t>(stream))) != OZGEMM_STATUS_SUCCESS) return st;
  if ((st = ozgemmSetSlices(*h, o.slices)) != OZGEMM_STATUS_SUCCESS) return st;  // > 0 selects FIXED, 0 FP64
  if (o.accuracy == OZGEMM_ACCURACY_FIXED && (st = ozgemmSetAccuracy(*h, OZGEMM_ACCURACY_FIXED)) != OZGEMM_STATUS_SUCCESS)
    return st;
  if ((st = ozgemmSetScheme(*h, static_cast<ozgemmScheme_t>(o.scheme))) != OZGEMM_STATUS_SUCCESS) return st;
  if ((st = ozgemmSetModuli(*h, o.moduli)) != OZGEMM_STATUS_SUCCESS) return st;
  return ozgemmSetVariant(*h, static_cast<ozgemmVariant_t>(o.variant));
}

bool fits_int(std::initializer_list<int64_t> values) {
  for (int64_t v : values)
    if (v < 0 || v > INT_MAX) return false;
  return true;
}

// 'N', 'T' or 'C' (the conjugate transpose; the transpose for ozgemmDgemm, as in cuBLAS).
cublasOperation_t to_cublas(char op) {
  if (op == 'C' || op == 'c') return CUBLAS_OP_C;
  return (op == 'T' || op == 't') ? CUBLAS_OP_T : CUBLAS_OP_N;
}

// The host references' ops: 'N', 'T', and 'C' where `conjugate_ok` (the complex reference).
ozgemm::ref::ComplexOp to_complex_op(char op, bool conjugate_ok) {
  if (op == 'N' || op == 'n') return ozgemm::ref::ComplexOp::N;
  if (op == 'T' || op == 't') return ozgemm::ref::ComplexOp::T;
  if (conjugate_ok && (op == 'C' || op == 'c')) return ozgemm::ref::ComplexOp::C;
  throw nb::value_error(conjugate_ok ? "op must be 'N', 'T' or 'C'" : "op must be 'N' or 'T'");
}

// The BLAS argument checks of a host reference call (the shape of op(A), op(B): 'C' as 'T');
// raises ValueError. Returns the real ops of the shape.
ozgemm::GemmShape checked_shape(char ta, char tb, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb,
                                int64_t ldc, bool conjugate_ok) {
  const auto shape_op = [&](char op) {
    return to_complex_op(op, conjugate_ok) == ozgemm::ref::ComplexOp::N ? ozgemm::Op::N : ozgemm::Op::T;
  };
  const auto s = ozgemm::gemm_shape(shape_op(ta), shape_op(tb), M, N, K, lda, ldb, ldc);
  const std::string why = ozgemm::check_shape(s);
  if (!why.empty()) throw nb::value_error(why.c_str());
  return s;
}

void check_moduli(int moduli) {
  if (moduli < OZGEMM_MIN_MODULI || moduli > OZGEMM_MAX_MODULI)
    throw nb::value_error("moduli must be in OZGEMM_MIN_MODULI..OZGEMM_MAX_MODULI");
}

// The library's GEMM of one element type, with the scalar type Python passes: ozgemmDgemm
// (float) and ozgemmZgemm (complex; cuDoubleComplex has std::complex<double>'s layout).
template <class T>
struct GemmOf;
template <>
struct GemmOf<double> {
  using PyScalar = double;
  static double scalar(double v) { return v; }
  static constexpr auto gemm = ozgemmDgemm;
};
template <>
struct GemmOf<cuDoubleComplex> {
  using PyScalar = std::complex<double>;
  static cuDoubleComplex scalar(std::complex<double> v) { return make_cuDoubleComplex(v.real(), v.imag()); }
  static constexpr auto gemm = ozgemmZgemm;
};

// Defines `name`(device, stream, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, accuracy,
// slices, scheme, moduli, variant) -> ozgemmStatus_t as an int: the handle for `device` configured
// with the options, then GemmOf<T>::gemm (device pointers as ints).
template <class T>
void def_gemm(nb::module_& m, const char* name) {
  m.def(
      name,
      [](int device, uintptr_t stream, char ta, char tb, int64_t M, int64_t N, int64_t K,
         typename GemmOf<T>::PyScalar alpha, uintptr_t A, int64_t lda, uintptr_t B, int64_t ldb,
         typename GemmOf<T>::PyScalar beta, uintptr_t C, int64_t ldc, int accuracy, int slices, int scheme,
         int moduli, int variant) -> int {
        if (!fits_int({M, N, K, lda, ldb, ldc})) return int(OZGEMM_STATUS_INVALID_VALUE);
        const T a = GemmOf<T>::scalar(alpha), b = GemmOf<T>::scalar(beta);
        nb::gil_scoped_release nogil;  // FP64 mode synchronises the stream; allocation may block
        DeviceGuard g(device);
        if (g.status() != OZGEMM_STATUS_SUCCESS) return int(g.status());
        ozgemmHandle_t h;
        ozgemmStatus_t st = configured_handle(device, stream, {accuracy, slices, scheme, moduli, variant}, &h);
        if (st != OZGEMM_STATUS_SUCCESS) return int(st);
        return int(GemmOf<T>::gemm(h, to_cublas(ta), to_cublas(tb), int(M), int(N), int(K), &a,
                                   reinterpret_cast<const T*>(A), int(lda), reinterpret_cast<const T*>(B), int(ldb),
                                   &b, reinterpret_cast<T*>(C), int(ldc)));
      },
      "device"_a, "stream"_a, "transa"_a, "transb"_a, "m"_a, "n"_a, "k"_a, "alpha"_a, "A"_a, "lda"_a, "B"_a, "ldb"_a,
      "beta"_a, "C"_a, "ldc"_a, "accuracy"_a, "slices"_a, "scheme"_a, "moduli"_a, "variant"_a);
}

// (variant, slices, bound, target, fell_back, reason, scheme, moduli)
using CallInfo = std::tuple<int, int, double, double, int, std::string, int, int>;
CallInfo to_tuple(const ozgemmCallInfo_t& i) {
  return {int(i.variant), i.slices, i.bound, i.target, i.fell_back, std::string(i.reason), int(i.scheme), i.moduli};
}

const double* cptr(uintptr_t p) { return reinterpret_cast<const double*>(p); }
double* ptr(uintptr_t p) { return reinterpret_cast<double*>(p); }

}  // namespace

NB_MODULE(_ozgemm, m) {
  m.doc() = "ozgemm's C API for Python (internal; use the ozgemm package)";
  m.attr("__version__") = OZGEMM_PY_VERSION;
  m.attr("BUILD") = nb::make_tuple(nb::str(OZGEMM_PY_ARCHS), bool(OZGEMM_PY_CUTLASS), bool(OZGEMM_PY_SM90),
                                   bool(OZGEMM_PY_CUDART_STATIC), nb::str(OZGEMM_PY_CUDA_VERSION));
  m.attr("DEFAULT_SLICES") = OZGEMM_DEFAULT_SLICES;
  m.attr("MAX_SLICES") = OZGEMM_MAX_SLICES;
  m.attr("DEFAULT_MODULI") = OZGEMM_DEFAULT_MODULI;
  m.attr("MIN_MODULI") = OZGEMM_MIN_MODULI;
  m.attr("MAX_MODULI") = OZGEMM_MAX_MODULI;
  m.attr("DEFAULT_COMPLEX_MODULI") = OZGEMM_DEFAULT_COMPLEX_MODULI;

  // --- CUDA facts (never raise) ---------------------------------------------------------------------
  m.def("device_count", []() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      n = 0;
    }
    return std::make_tuple(n, int(e), std::string(cudaGetErrorString(e)));
  });
  m.def("runtime_version", []() {
    int v = 0;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess) cudaGetLastError();
    return v;
  });
  m.def("driver_version", []() {
    int v = 0;
    if (cudaDriverGetVersion(&v) != cudaSuccess) cudaGetLastError();
    return v;
  });
  m.def("cuda_error_string", [](int e) { return std::string(cudaGetErrorString(cudaError_t(e))); });
  // (usable, reason, description) of `device`: ozgemm::gpu_available / gpu_description.
  m.def("gpu_status", [](int device) {
    DeviceGuard g(device);
    if (g.status() != OZGEMM_STATUS_SUCCESS) {
      std::string why;
      ozgemm::gpu_available(&why);
      if (why.empty()) why = "no such device";
      return std::make_tuple(false, why, std::string());
    }
    std::string why;
    const bool ok = ozgemm::gpu_available(&why);
    return std::make_tuple(ok, why, ozgemm::gpu_description());
  });
  // (cudaError_t, memory type, device) of a pointer: cudaPointerGetAttributes.
  m.def("pointer_device", [](uintptr_t p) {
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, reinterpret_cast<const void*>(p));
    if (e != cudaSuccess) cudaGetLastError();
    return std::make_tuple(int(e), int(a.type), a.device);
  });
  // Make `consumer` wait for the work queued so far on `producer` (cudaStream_t values as ints).
  m.def("stream_wait", [](int device, uintptr_t producer, uintptr_t consumer) -> int {
    if (producer == consumer) return 0;
    nb::gil_scoped_release nogil;
    DeviceGuard g(device);
    if (g.status() != OZGEMM_STATUS_SUCCESS) return int(cudaErrorInvalidDevice);
    cudaEvent_t ev;
    cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e == cudaSuccess) {
      e = cudaEventRecord(ev, reinterpret_cast<cudaStream_t>(producer));
      if (e == cudaSuccess) e = cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(consumer), ev, 0);
      cudaEventDestroy(ev);  // released once the wait is satisfied
    }
    if (e != cudaSuccess) cudaGetLastError();
    return int(e);
  });
  m.def("stream_synchronize", [](int device, uintptr_t stream) -> int {
    nb::gil_scoped_release nogil;
    DeviceGuard g(device);
    if (g.status() != OZGEMM_STATUS_SUCCESS) return int(cudaErrorInvalidDevice);
    const cudaError_t e = cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
    if (e != cudaSuccess) cudaGetLastError();
    return int(e);
  });

  // --- The C API ------------------------------------------------------------------------------------
  m.def("status_string", [](int st) { return std::string(ozgemmGetStatusString(ozgemmStatus_t(st))); });
  m.def("variant_string", [](int v) { return std::string(ozgemmGetVariantString(ozgemmVariant_t(v))); });

  def_gemm<double>(m, "dgemm");
  def_gemm<cuDoubleComplex>(m, "zgemm");

  // (status, info tuple): ozgemmPlanCall.
  m.def(
      "plan_call",
      [](int device, uintptr_t stream, char ta, char tb, int64_t M, int64_t N, int64_t K, uintptr_t A, int64_t lda,
         uintptr_t B, int64_t ldb, int accuracy, int slices, int scheme, int moduli, int variant) {
        ozgemmCallInfo_t info{};
        if (!fits_int({M, N, K, lda, ldb})) return std::make_tuple(int(OZGEMM_STATUS_INVALID_VALUE), to_tuple(info));
        ozgemmStatus_t st;
        {
          nb::gil_scoped_release nogil;
          DeviceGuard g(device);
          st = g.status();
          ozgemmHandle_t h;
          if (st == OZGEMM_STATUS_SUCCESS)
            st = configured_handle(device, stream, {accuracy, slices, scheme, moduli, variant}, &h);
          if (st == OZGEMM_STATUS_SUCCESS)
            st = ozgemmPlanCall(h, to_cublas(ta), to_cublas(tb), int(M), int(N), int(K), cptr(A), int(lda), cptr(B),
                                int(ldb), &info);
        }
        return std::make_tuple(int(st), to_tuple(info));
      },
      "device"_a, "stream"_a, "transa"_a, "transb"_a, "m"_a, "n"_a, "k"_a, "A"_a, "lda"_a, "B"_a, "ldb"_a,
      "accuracy"_a, "slices"_a, "scheme"_a, "moduli"_a, "variant"_a);

  // (status, variant, workspace bytes): ozgemmGetPlannedVariant + ozgemmGetWorkspaceSize.
  m.def(
      "planned_variant",
      [](int device, char ta, char tb, int64_t M, int64_t N, int64_t K, int accuracy, int slices, int scheme,
         int moduli, int variant) {
        if (!fits_int({M, N, K})) return std::make_tuple(int(OZGEMM_STATUS_INVALID_VALUE), 0, size_t(0));
        DeviceGuard g(device);
        ozgemmStatus_t st = g.status();
        ozgemmHandle_t h;
        if (st == OZGEMM_STATUS_SUCCESS) st = configured_handle(device, 0, {accuracy, slices, scheme, moduli, variant}, &h);
        ozgemmVariant_t v = OZGEMM_VARIANT_AUTO;
        size_t bytes = 0;
        if (st == OZGEMM_STATUS_SUCCESS)
          st = ozgemmGetPlannedVariant(h, to_cublas(ta), to_cublas(tb), int(M), int(N), int(K), &v);
        if (st == OZGEMM_STATUS_SUCCESS)
          st = ozgemmGetWorkspaceSize(h, to_cublas(ta), to_cublas(tb), int(M), int(N), int(K), &bytes);
        return std::make_tuple(int(st), int(v), bytes);
      },
      "device"_a, "transa"_a, "transb"_a, "m"_a, "n"_a, "k"_a, "accuracy"_a, "slices"_a, "scheme"_a, "moduli"_a,
      "variant"_a);

  // (status, info tuple) of the last ozgemmDgemm or ozgemmZgemm on this thread's handle for `device`.
  m.def("last_call_info", [](int device) {
    ozgemmCallInfo_t info{};
    auto it = t_handles.by_device.find(device);
    if (it == t_handles.by_device.end()) return std::make_tuple(int(OZGEMM_STATUS_NOT_INITIALIZED), to_tuple(info));
    // Two statements: the order in which a call's arguments are evaluated is unspecified (GCC
    // built the tuple from the still-empty info before the query filled it).
    const ozgemmStatus_t st = ozgemmGetLastCallInfo(it->second, &info);
    return std::make_tuple(int(st), to_tuple(info));
  });

  // Status of ozgemmSetVariant(v) on `device` (NOT_SUPPORTED: this GPU or build lacks it).
  m.def("variant_status", [](int device, int variant) {
    DeviceGuard g(device);
    ozgemmStatus_t st = g.status();
    ozgemmHandle_t h;
    if (st == OZGEMM_STATUS_SUCCESS) st = get_handle(device, &h);
    if (st != OZGEMM_STATUS_SUCCESS) return int(st);
    st = ozgemmSetVariant(h, static_cast<ozgemmVariant_t>(variant));
    ozgemmSetVariant(h, OZGEMM_VARIANT_AUTO);
    return int(st);
  });

  m.def("release_handles", []() { t_handles.release(); });

  // A C-contiguous float64 (complex128 when `complex`) device array of `shape` (any dimension, 0-D
  // included) owned by the returned object (cudaFree when the last reference goes), exported through
  // DLPack: results for producers other than CuPy and PyTorch (JAX, ...). Raises ValueError/RuntimeError.
  m.def(
      "device_empty",
      [](const std::vector<int64_t>& shape, int device, bool complex) {
        size_t count = 1;
        std::vector<size_t> dims;
        for (int64_t d : shape) {
          if (d < 0) throw nb::value_error("negative shape");
          count *= size_t(d);
          dims.push_back(size_t(d));
        }
        DeviceGuard g(device);
        if (g.status() != OZGEMM_STATUS_SUCCESS) throw std::runtime_error(ozgemmGetStatusString(g.status()));
        void* p = nullptr;
        const size_t bytes = (count > 0 ? count : 1) * (complex ? sizeof(cuDoubleComplex) : sizeof(double));
        const cudaError_t e = cudaMalloc(&p, bytes);
        if (e != cudaSuccess) {
          cudaGetLastError();
          throw std::runtime_error(std::string("cudaMalloc: ") + cudaGetErrorString(e));
        }
        nb::capsule owner(p, [](void* q) noexcept { cudaFree(q); });
        // nb::array_api: an object with __dlpack__ / __dlpack_device__ (what jax.dlpack.from_dlpack
        // and the other consumers take); without a framework nanobind would return a bare capsule.
        return nb::ndarray<nb::array_api, nb::c_contig, nb::device::cuda>(
            p, dims.size(), dims.data(), owner, nullptr,
            complex ? nb::dtype<std::complex<double>>() : nb::dtype<double>(), nb::device::cuda::value, device);
      },
      "shape"_a, "device"_a, "complex"_a = false);

  // Parse any DLPack capsule (versioned or not) without constraints or conversion:
  // (ptr incl. byte_offset, shape, strides in elements, (dtype code, bits, lanes), (device type, id), read-only).
  m.def(
      "dlpack_info",
      [](nb::ndarray<nb::ro> a) {
        std::vector<int64_t> shape, strides;
        for (size_t i = 0; i < a.ndim(); ++i) {
          shape.push_back(int64_t(a.shape(i)));
          strides.push_back(a.stride(i));
        }
        const auto dt = a.dtype();
        return std::make_tuple(uintptr_t(a.data()), shape, strides,
                               std::make_tuple(int(dt.code), int(dt.bits), int(dt.lanes)),
                               std::make_tuple(a.device_type(), a.device_id()));
      },
      "capsule"_a.noconvert());

  // --- Host reference (CPU; ozgemm::ref): host pointers as ints, column-major, BLAS arguments ---------
  // The Ozaki-I DGEMM of `slices` slices, the bits every emulated GPU variant gives in FIXED mode.
  m.def(
      "host_ozaki",
      [](char ta, char tb, int64_t M, int64_t N, int64_t K, double alpha, uintptr_t A, int64_t lda, uintptr_t B,
         int64_t ldb, double beta, uintptr_t C, int64_t ldc, int slices) {
        const auto s = checked_shape(ta, tb, M, N, K, lda, ldb, ldc, false);
        if (slices < 1 || slices > OZGEMM_MAX_SLICES) throw nb::value_error("slices must be in 1..OZGEMM_MAX_SLICES");
        nb::gil_scoped_release nogil;
        ozgemm::ref::ozaki_dgemm(s.transa, s.transb, M, N, K, alpha, cptr(A), lda, cptr(B), ldb, beta, ptr(C), ldc,
                                 slices);
      },
      "transa"_a, "transb"_a, "m"_a, "n"_a, "k"_a, "alpha"_a, "A"_a, "lda"_a, "B"_a, "ldb"_a, "beta"_a, "C"_a,
      "ldc"_a, "slices"_a);

  // The Ozaki-II DGEMM with `moduli` moduli: the bits the GPU gives with scheme OZAKI2.
  m.def(
      "host_ozaki2",
      [](char ta, char tb, int64_t M, int64_t N, int64_t K, double alpha, uintptr_t A, int64_t lda, uintptr_t B,
         int64_t ldb, double beta, uintptr_t C, int64_t ldc, int moduli) {
        const auto s = checked_shape(ta, tb, M, N, K, lda, ldb, ldc, false);
        check_moduli(moduli);
        nb::gil_scoped_release nogil;
        ozgemm::ref::ozaki2_dgemm(s.transa, s.transb, M, N, K, alpha, cptr(A), lda, cptr(B), ldb, beta, ptr(C), ldc,
                                  moduli);
      },
      "transa"_a, "transb"_a, "m"_a, "n"_a, "k"_a, "alpha"_a, "A"_a, "lda"_a, "B"_a, "ldb"_a, "beta"_a, "C"_a,
      "ldc"_a, "moduli"_a);

  // The complex Ozaki-II ZGEMM ("2M") with `moduli` moduli (ops 'N', 'T', 'C'; std::complex<double>
  // matrices): the bits ozgemmZgemm gives in FIXED mode.
  m.def(
      "host_ozaki2_complex",
      [](char ta, char tb, int64_t M, int64_t N, int64_t K, std::complex<double> alpha, uintptr_t A, int64_t lda,
         uintptr_t B, int64_t ldb, std::complex<double> beta, uintptr_t C, int64_t ldc, int moduli) {
        checked_shape(ta, tb, M, N, K, lda, ldb, ldc, true);
        check_moduli(moduli);
        using z = std::complex<double>;
        nb::gil_scoped_release nogil;
        ozgemm::ref::ozaki2_complex_reference(to_complex_op(ta, true), to_complex_op(tb, true), M, N, K, alpha,
                                              reinterpret_cast<const z*>(A), lda, reinterpret_cast<const z*>(B), ldb,
                                              beta, reinterpret_cast<z*>(C), ldc, moduli);
      },
      "transa"_a, "transb"_a, "m"_a, "n"_a, "k"_a, "alpha"_a, "A"_a, "lda"_a, "B"_a, "ldb"_a, "beta"_a, "C"_a,
      "ldc"_a, "moduli"_a);

  // Errors of C against the double-double result of alpha op(A) op(B) + beta C0 (ref::compare).
  m.def(
      "host_errors",
      [](char ta, char tb, int64_t M, int64_t N, int64_t K, double alpha, uintptr_t A, int64_t lda, uintptr_t B,
         int64_t ldb, double beta, uintptr_t C0, int64_t ldc0, uintptr_t C, int64_t ldc) {
        const auto s = checked_shape(ta, tb, M, N, K, lda, ldb, ldc, false);
        if (ldc0 < (M > 1 ? M : 1)) throw nb::value_error("ldc0 < max(1, m)");
        ozgemm::ref::ErrorMetrics e;
        {
          nb::gil_scoped_release nogil;
          const auto ref = ozgemm::ref::accurate_gemm(s.transa, s.transb, M, N, K, alpha, cptr(A), lda, cptr(B), ldb,
                                                      beta, beta != 0.0 ? cptr(C0) : nullptr, ldc0);
          e = ozgemm::ref::compare(cptr(C), ldc, ref);
        }
        nb::dict d;
        d["normwise"] = e.normwise;
        d["componentwise"] = e.componentwise;
        d["elementwise"] = e.elementwise;
        d["nonfinite_mismatch"] = e.nonfinite_mismatch;
        d["compared"] = e.compared;
        return d;
      },
      "transa"_a, "transb"_a, "m"_a, "n"_a, "k"_a, "alpha"_a, "A"_a, "lda"_a, "B"_a, "ldb"_a, "beta"_a, "C0"_a,
      "ldc0"_a, "C"_a, "ldc"_a);
}
