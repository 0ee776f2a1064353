// src/baseline/b2b_cublaslt.hpp — the fp16 GEMM of the unfused back-to-back baseline: one cuBLASLt
// GEMM with its bias / ReLU epilogue (the int8 pair uses Int8GemmLt and the requantisation
// kernels; src/dispatch/b2b_dispatch.cpp composes both pairs).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ozgemm {
namespace baseline {

// out (n x m, column-major, ld n, fp16) = epilogue(alpha * W^T (n x k) * X (k x m) + beta * C),
// W and X fp16 with leading dimensions ldw, ldx; epilogue: + bias (fp16, length n, if non-null),
// then ReLU if relu. Batched with element strides sw, sx, sc, so, sbias when batch > 1.
cudaError_t lt_gemm_f16(cublasLtHandle_t lt, int64_t n, int64_t m, int64_t k, const void* w, int64_t ldw, const void* x,
                        int64_t ldx, const void* c, void* out, float alpha, float beta, bool relu, const uint16_t* bias,
                        int batch, int64_t sw, int64_t sx, int64_t sc, int64_t so, int64_t sbias, cudaStream_t stream);

}  // namespace baseline
}  // namespace ozgemm
