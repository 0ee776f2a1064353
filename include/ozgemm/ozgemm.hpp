// ozgemm/ozgemm.hpp — thin C++ layer over the C API (ozgemm.h): an RAII handle that
// throws ozgemm::Error on any non-success status, plus host-buffer conveniences for tools.
#pragma once

#include <stdexcept>
#include <string>

#include "ozgemm/export.h"
#include "ozgemm/ozgemm.h"
#include "ozgemm/problem.hpp"
#include "ozgemm/types.hpp"

namespace ozgemm {

class Error : public std::runtime_error {
 public:
  Error(ozgemmStatus_t status, const std::string& what)
      : std::runtime_error(what + ": " + ozgemmGetStatusString(status)), status_(status) {}
  ozgemmStatus_t status() const { return status_; }

 private:
  ozgemmStatus_t status_;
};

inline void check(ozgemmStatus_t st, const char* what) {
  if (st != OZGEMM_STATUS_SUCCESS) throw Error(st, what);
}

inline cublasOperation_t to_cublas(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

class Handle {
 public:
  Handle() { check(ozgemmCreate(&h_), "ozgemmCreate"); }
  ~Handle() {
    if (h_) ozgemmDestroy(h_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }

  ozgemmHandle_t get() const { return h_; }
  void set_stream(cudaStream_t s) { check(ozgemmSetStream(h_, s), "ozgemmSetStream"); }
  void set_slices(int s) { check(ozgemmSetSlices(h_, s), "ozgemmSetSlices"); }
  void set_variant(ozgemmVariant_t v) { check(ozgemmSetVariant(h_, v), "ozgemmSetVariant"); }
  int slices() const {
    int s = 0;
    check(ozgemmGetSlices(h_, &s), "ozgemmGetSlices");
    return s;
  }

  // Device pointers, as cublasDgemm.
  void dgemm(Op ta, Op tb, int m, int n, int k, double alpha, const double* A, int lda, const double* B, int ldb,
             double beta, double* C, int ldc) {
    check(ozgemmDgemm(h_, to_cublas(ta), to_cublas(tb), m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc),
          "ozgemmDgemm");
  }
  // Device pointers, as cublasZgemm (ta, tb: CUBLAS_OP_N, _T or _C, the conjugate transpose).
  void zgemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, cuDoubleComplex alpha,
             const cuDoubleComplex* A, int lda, const cuDoubleComplex* B, int ldb, cuDoubleComplex beta,
             cuDoubleComplex* C, int ldc) {
    check(ozgemmZgemm(h_, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc), "ozgemmZgemm");
  }

 private:
  ozgemmHandle_t h_ = nullptr;
};

// True when a CUDA device this build can run on (sm_75 or newer) is present; otherwise
// false with a one-line reason in *why (e.g. "no NVIDIA driver/GPU found").
OZGEMM_API bool gpu_available(std::string* why = nullptr);
// One line naming the current device (name, SM count, compute capability).
OZGEMM_API std::string gpu_description();

// Instrumentation for benchmarks: when events != nullptr, each ozgemmDgemm on the unfused
// path records events[0..4] on the handle's stream around the phases
// max-reduce | slicing | products | epilogue. The caller owns the 5 events.
OZGEMM_API void set_phase_events(Handle& h, cudaEvent_t* events);

// Host arrays in and out: copies A, B, C to the device, runs ozgemmDgemm on the handle's
// stream, copies C back. For tools and tests, not for speed.
OZGEMM_API void dgemm_host_buffers(Handle& h, Op ta, Op tb, int m, int n, int k, double alpha, const double* A, int lda,
                        const double* B, int ldb, double beta, double* C, int ldc);

// The same for ozgemmZgemm (ta, tb: CUBLAS_OP_N, _T or _C).
OZGEMM_API void zgemm_host_buffers(Handle& h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                   cuDoubleComplex alpha, const cuDoubleComplex* A, int lda, const cuDoubleComplex* B,
                                   int ldb, cuDoubleComplex beta, cuDoubleComplex* C, int ldc);

// Diagnostics for benchmarks: the rate (1e12 int8 operations/s, 2 n^3 / time) of the library's
// own cuBLASLt INT8 x INT8 -> INT32 GEMM (the unfused path's, algorithm chosen by timing its
// candidates) at n^3 on `stream`: median of 10 runs after 3 warm-ups. Throws ozgemm::Error.
OZGEMM_API double int8_gemm_tops(int n, cudaStream_t stream);

}  // namespace ozgemm
