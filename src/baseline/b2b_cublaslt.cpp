// The unfused back-to-back baseline's fp16 cuBLASLt GEMM (b2b_cublaslt.hpp).
#include "baseline/b2b_cublaslt.hpp"

namespace ozgemm {
namespace baseline {

namespace {
struct LtGemm {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, cc = nullptr;
  ~LtGemm() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (cc) cublasLtMatrixLayoutDestroy(cc);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
  }
};

void set_batch(cublasLtMatrixLayout_t l, int batch, int64_t stride) {
  cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
  cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
}

}  // namespace

cudaError_t lt_gemm_f16(cublasLtHandle_t lt, int64_t n, int64_t m, int64_t k, const void* w, int64_t ldw, const void* x,
                        int64_t ldx, const void* c, void* out, float alpha, float beta, bool relu, const uint16_t* bias,
                        int batch, int64_t sw, int64_t sx, int64_t sc, int64_t so, int64_t sbias, cudaStream_t stream) {
  LtGemm g;
  if (cublasLtMatmulDescCreate(&g.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  cublasLtEpilogue_t epi = bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
  if (bias) {  // fp16, the output type
    cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    if (batch > 1) cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &sbias, sizeof sbias);
  }
  if (cublasLtMatrixLayoutCreate(&g.a, CUDA_R_16F, k, n, ldw) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&g.b, CUDA_R_16F, k, m, ldx) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&g.c, CUDA_R_16F, n, m, n) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&g.cc, CUDA_R_16F, n, m, n) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  if (batch > 1) {
    set_batch(g.a, batch, sw);
    set_batch(g.b, batch, sx);
    set_batch(g.c, batch, so);
    set_batch(g.cc, batch, c ? sc : so);
  }
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulHeuristicResult_t res;
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(lt, g.desc, g.a, g.b, g.c, g.c, pref, 1, &res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (found == 0) return cudaErrorNotSupported;
  const cublasStatus_t st = cublasLtMatmul(lt, g.desc, &alpha, w, g.a, x, g.b, &beta, c ? c : out, g.cc, out, g.c,
                                           &res.algo, nullptr, 0, stream);
  return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

}  // namespace baseline
}  // namespace ozgemm
