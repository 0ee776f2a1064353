// tests/dropin/cublas_calls.cpp — a small library that links cuBLAS and calls every entry point
// libozgemm_hook.so interposes, with a null handle (no GPU needed: the real cuBLAS answers
// CUBLAS_STATUS_NOT_INITIALIZED). It stands in for libtorch_cuda.so / CuPy's extension: the clients
// (cublas_client.cpp) load it linked or through dlopen(RTLD_LOCAL), and compare the statuses printed
// with and without the preloaded hook (tests/dropin/run_client.sh).
#include <cublas_v2.h>

#include <cstdio>
#include <vector>

// The legacy API (cublas.h cannot be included with cublas_v2.h, which renames cublasDgemm).
#undef cublasDgemm
extern "C" void cublasDgemm(char, char, int, int, int, double, const double*, int, const double*, int, double,
                            double*, int);
extern "C" cublasStatus_t cublasGetError(void);

extern "C" __attribute__((visibility("default"))) int dropin_cublas_calls(void) {
  const int n = 64;
  std::vector<double> a(2 * n * n, 1.0), b(2 * n * n, 1.0), c(2 * n * n, 0.0);
  std::vector<float> af(n * n, 1.0f), bf(n * n, 1.0f), cf(n * n, 0.0f);
  const double one = 1.0, zero = 0.0;
  const float onef = 1.0f, zerof = 0.0f;
  const double* pa[2] = {a.data(), a.data() + n * n};
  const double* pb[2] = {b.data(), b.data() + n * n};
  double* pc[2] = {c.data(), c.data() + n * n};
  const void* const* va = reinterpret_cast<const void* const*>(pa);
  const void* const* vb = reinterpret_cast<const void* const*>(pb);
  void* const* vc = reinterpret_cast<void* const*>(pc);
  cublasHandle_t h = nullptr;
  const cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T;
  const long long s = (long long)n * n;
  int calls = 0;
  auto show = [&](const char* what, int st) {
    std::printf("%-34s status=%d\n", what, st);
    ++calls;
  };
  show("cublasDgemm_v2", cublasDgemm_v2(h, N, T, n, n, n, &one, a.data(), n, b.data(), n, &zero, c.data(), n));
  show("cublasDgemm_v2_64", cublasDgemm_v2_64(h, T, N, n, n, n, &one, a.data(), n, b.data(), n, &zero, c.data(), n));
  show("cublasGemmEx(64F)", cublasGemmEx(h, N, N, n, n, n, &one, a.data(), CUDA_R_64F, n, b.data(), CUDA_R_64F, n,
                                          &zero, c.data(), CUDA_R_64F, n, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
  show("cublasGemmEx(32F)", cublasGemmEx(h, N, N, n, n, n, &onef, af.data(), CUDA_R_32F, n, bf.data(), CUDA_R_32F, n,
                                          &zerof, cf.data(), CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  show("cublasGemmEx(64F_PEDANTIC)",
       cublasGemmEx(h, N, N, n, n, n, &one, a.data(), CUDA_R_64F, n, b.data(), CUDA_R_64F, n, &zero, c.data(),
                    CUDA_R_64F, n, CUBLAS_COMPUTE_64F_PEDANTIC, CUBLAS_GEMM_DEFAULT));
  show("cublasGemmEx_64", cublasGemmEx_64(h, N, N, n, n, n, &one, a.data(), CUDA_R_64F, n, b.data(), CUDA_R_64F, n,
                                          &zero, c.data(), CUDA_R_64F, n, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
  show("cublasDgemmStridedBatched", cublasDgemmStridedBatched(h, N, N, n, n, n, &one, a.data(), n, s, b.data(), n, s,
                                                              &zero, c.data(), n, s, 2));
  show("cublasDgemmStridedBatched_64", cublasDgemmStridedBatched_64(h, N, N, n, n, n, &one, a.data(), n, s, b.data(),
                                                                    n, s, &zero, c.data(), n, s, 2));
  show("cublasDgemmBatched", cublasDgemmBatched(h, N, N, n, n, n, &one, pa, n, pb, n, &zero, pc, n, 2));
  show("cublasDgemmBatched_64", cublasDgemmBatched_64(h, N, N, n, n, n, &one, pa, n, pb, n, &zero, pc, n, 2));
  show("cublasGemmStridedBatchedEx",
       cublasGemmStridedBatchedEx(h, N, N, n, n, n, &one, a.data(), CUDA_R_64F, n, s, b.data(), CUDA_R_64F, n, s,
                                  &zero, c.data(), CUDA_R_64F, n, s, 2, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
  show("cublasGemmStridedBatchedEx_64",
       cublasGemmStridedBatchedEx_64(h, N, N, n, n, n, &one, a.data(), CUDA_R_64F, n, s, b.data(), CUDA_R_64F, n, s,
                                     &zero, c.data(), CUDA_R_64F, n, s, 2, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
  show("cublasGemmBatchedEx", cublasGemmBatchedEx(h, N, N, n, n, n, &one, va, CUDA_R_64F, n, vb, CUDA_R_64F, n, &zero,
                                                  vc, CUDA_R_64F, n, 2, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
  show("cublasGemmBatchedEx_64", cublasGemmBatchedEx_64(h, N, N, n, n, n, &one, va, CUDA_R_64F, n, vb, CUDA_R_64F, n,
                                                        &zero, vc, CUDA_R_64F, n, 2, CUBLAS_COMPUTE_64F,
                                                        CUBLAS_GEMM_DEFAULT));
  // complex: the Z entry points and GemmEx with CUDA_C_64F (legacy compute type CUDA_C_64F included)
  std::vector<cuDoubleComplex> za(2 * n * n, make_cuDoubleComplex(1, 0)), zb = za, zc = za;
  const cuDoubleComplex zone = make_cuDoubleComplex(1, 0), zzero = make_cuDoubleComplex(0, 0);
  const cuDoubleComplex* zpa[2] = {za.data(), za.data() + n * n};
  const cuDoubleComplex* zpb[2] = {zb.data(), zb.data() + n * n};
  cuDoubleComplex* zpc[2] = {zc.data(), zc.data() + n * n};
  const cublasOperation_t C = CUBLAS_OP_C;
  show("cublasZgemm_v2", cublasZgemm_v2(h, N, C, n, n, n, &zone, za.data(), n, zb.data(), n, &zzero, zc.data(), n));
  show("cublasZgemm_v2_64",
       cublasZgemm_v2_64(h, C, N, n, n, n, &zone, za.data(), n, zb.data(), n, &zzero, zc.data(), n));
  show("cublasZgemm3m", cublasZgemm3m(h, C, C, n, n, n, &zone, za.data(), n, zb.data(), n, &zzero, zc.data(), n));
  show("cublasZgemm3m_64",
       cublasZgemm3m_64(h, T, N, n, n, n, &zone, za.data(), n, zb.data(), n, &zzero, zc.data(), n));
  show("cublasZgemmStridedBatched", cublasZgemmStridedBatched(h, N, N, n, n, n, &zone, za.data(), n, s, zb.data(), n,
                                                              s, &zzero, zc.data(), n, s, 2));
  show("cublasZgemmStridedBatched_64", cublasZgemmStridedBatched_64(h, N, N, n, n, n, &zone, za.data(), n, s,
                                                                    zb.data(), n, s, &zzero, zc.data(), n, s, 2));
  show("cublasZgemmBatched", cublasZgemmBatched(h, N, N, n, n, n, &zone, zpa, n, zpb, n, &zzero, zpc, n, 2));
  show("cublasZgemmBatched_64", cublasZgemmBatched_64(h, N, N, n, n, n, &zone, zpa, n, zpb, n, &zzero, zpc, n, 2));
  show("cublasGemmEx(C_64F)", cublasGemmEx(h, N, N, n, n, n, &zone, za.data(), CUDA_C_64F, n, zb.data(), CUDA_C_64F,
                                            n, &zzero, zc.data(), CUDA_C_64F, n, CUBLAS_COMPUTE_64F,
                                            CUBLAS_GEMM_DEFAULT));
  show("cublasGemmEx(C_64F, legacy compute)",
       cublasGemmEx(h, N, N, n, n, n, &zone, za.data(), CUDA_C_64F, n, zb.data(), CUDA_C_64F, n, &zzero, zc.data(),
                    CUDA_C_64F, n, cublasComputeType_t(CUDA_C_64F), CUBLAS_GEMM_DEFAULT));
  show("cublasDgemm_v2(lda too small)",
       cublasDgemm_v2(h, N, N, n, n, n, &one, a.data(), 1, b.data(), n, &zero, c.data(), n));
  cublasDgemm('N', 'T', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
  show("cublasDgemm(legacy)+cublasGetError", cublasGetError());
  std::printf("%-34s status=%d\n", "cublasDestroy_v2(null)", cublasDestroy_v2(h));
  std::fflush(stdout);
  return calls;  // the GEMM calls made
}
