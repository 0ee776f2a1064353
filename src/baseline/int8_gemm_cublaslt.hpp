// src/baseline/int8_gemm_cublaslt.hpp — INT8 x INT8 -> INT32 GEMMs through cuBLASLt (the unfused path's products
// and the int8 b2b baseline), TN as the IMMA kernels want, with a per-shape algorithm cache filled by timing the
// top heuristic candidates once (heuristic #0 is often far from the best, e.g. ~780 vs ~1400
// TOPS at 16384^3 on H100).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <tuple>

namespace ozgemm {

// Not thread-safe (the algorithm cache); each ozgemm handle owns one.
class Int8GemmLt {
 public:
  Int8GemmLt() = default;
  ~Int8GemmLt();
  Int8GemmLt(const Int8GemmLt&) = delete;
  Int8GemmLt& operator=(const Int8GemmLt&) = delete;

  cublasStatus_t init();
  cublasLtHandle_t handle() const { return lt_; }  // for other cuBLASLt baselines sharing the handle

  // D (m x n, int32, column-major, ldd) = A^T * B, A: K x m int8 column-major (lda), i.e.
  // row r of op(A) is k-contiguous at A + r * lda; B: K x n int8 column-major (ldb).
  // Exact as long as K * 2^14 <= 2^31 - 1 (the caller's k-blocking guarantees it).
  // autotune: time up to kCandidates heuristic algorithms on first use of a shape.
  cublasStatus_t run(int m, int n, int K, const int8_t* A, int lda, const int8_t* B, int ldb, int32_t* D, int ldd,
                     void* workspace, size_t workspace_bytes, cudaStream_t stream, bool autotune) {
    return run_batched(m, n, K, A, lda, 0, B, ldb, 0, D, ldd, 0, 1, workspace, workspace_bytes, stream, autotune);
  }
  // `batch` such products in one launch, product b on A + b * stride_a, B + b * stride_b,
  // D + b * stride_d (strides in elements). One launch's tiles fill the GPU's last wave far better
  // than `batch` launches of one product each (Ozaki-II's moduli).
  cublasStatus_t run_batched(int m, int n, int K, const int8_t* A, int lda, int64_t stride_a, const int8_t* B, int ldb,
                             int64_t stride_b, int32_t* D, int ldd, int64_t stride_d, int batch, void* workspace,
                             size_t workspace_bytes, cudaStream_t stream, bool autotune);
  // The same `batch` products, in one batched launch when one product has at most kBatchedMaxOps
  // multiply-adds, else in `batch` single launches. Measured on the H100 (Ozaki-II's 15 products,
  // docs/performance.md): batched 8% faster at 4096^3 (launch ramps and the last wave amortised),
  // 2-4% slower at 8192^3 and 16384 x 8192 x 16384. Choosing by timing on first use was tried and
  // dropped: under the clock drift of back-to-back products the choice (and the algorithm autotune
  // run after it) came out differently from run to run, and once cost 10% at 8192^3.
  cublasStatus_t run_strided(int m, int n, int K, const int8_t* A, int lda, int64_t stride_a, const int8_t* B, int ldb,
                             int64_t stride_b, int32_t* D, int ldd, int64_t stride_d, int batch, void* workspace,
                             size_t workspace_bytes, cudaStream_t stream, bool autotune);

  static constexpr int kCandidates = 8;
  static constexpr double kAutotuneMinOps = 1073741824.0;  // m*n*K >= 2^30
  static constexpr double kBatchedMaxOps = 68719476736.0;   // run_strided: m*n*K <= 2^36 (4096^3) batched

 private:
  using Key = std::tuple<int, int, int, int, int, int, size_t, int, int64_t, int64_t, int64_t>;
  struct Entry {
    cublasLtMatmulAlgo_t algo;
    bool valid;
  };
  cublasLtHandle_t lt_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  std::map<Key, Entry> cache_;
};

}  // namespace ozgemm
