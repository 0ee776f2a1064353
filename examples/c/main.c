/* examples/c/main.c — ozgemm from C: a handle, the workspace query, one DGEMM, status strings and
 * error handling. C = alpha * A * B + beta * C (column-major, as cublasDgemm), checked against a
 * plain host loop.
 *
 * Build against an installed ozgemm (docs/guide.md):
 *   gcc main.c $(pkg-config --cflags --libs ozgemm) -o example_c
 *   (CMake: find_package(ozgemm) + target_link_libraries(app PRIVATE ozgemm::ozgemm), examples/CMakeLists.txt)
 *
 * Exit status: 0 the result matches; 1 an error (status string printed); 2 a wrong result;
 * 77 skipped: no GPU this build can use (the status string says why). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <ozgemm/ozgemm.h>

#define EXIT_WRONG_RESULT 2
#define EXIT_SKIPPED 77

/* Every ozgemm call returns a status; a failed one prints its string and leaves through `fail`. */
#define CHECK_OZ(call)                                                                  \
  do {                                                                                  \
    ozgemmStatus_t st_ = (call);                                                        \
    if (st_ != OZGEMM_STATUS_SUCCESS) {                                                 \
      fprintf(stderr, "example_c: %s failed: %s\n", #call, ozgemmGetStatusString(st_)); \
      goto fail;                                                                        \
    }                                                                                   \
  } while (0)
#define CHECK_CUDA(call)                                                                \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      fprintf(stderr, "example_c: %s failed: %s\n", #call, cudaGetErrorString(e_));     \
      goto fail;                                                                        \
    }                                                                                   \
  } while (0)

/* Deterministic values in [-1, 1). */
static double next_value(unsigned long long* state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*state >> 11) / 4503599627370496.0 - 1.0; /* 2^52 */
}

int main(void) {
  const int m = 300, n = 200, k = 500;
  const int lda = m, ldb = k, ldc = m + 4; /* C sits in a taller buffer: ldc > m */
  const double alpha = 1.5, beta = -0.5;
  int rc = 1;
  ozgemmHandle_t handle = NULL;
  double *hA = NULL, *hB = NULL, *hC = NULL, *hRef = NULL, *hAbs = NULL;
  double *dA = NULL, *dB = NULL, *dC = NULL;
  void* workspace = NULL;
  size_t ws_bytes = 0;
  unsigned long long seed = 42;
  ozgemmStatus_t st;
  ozgemmCallInfo_t info;
  double worst = 0.0;
  int i, j, l;

  /* 1. A handle. Without a GPU this build can use, ozgemmCreate says so: report and skip. */
  st = ozgemmCreate(&handle);
  if (st == OZGEMM_STATUS_ARCH_MISMATCH) {
    printf("example_c: skipped: %s\n", ozgemmGetStatusString(st));
    return EXIT_SKIPPED;
  }
  CHECK_OZ(st);

  /* 2. Host data, and the reference C = alpha A B + beta C0 by a host loop, with
   *    absprod = |alpha| |A| |B| + |beta| |C0| for the componentwise error. */
  hA = (double*)malloc(sizeof(double) * (size_t)lda * k);
  hB = (double*)malloc(sizeof(double) * (size_t)ldb * n);
  hC = (double*)malloc(sizeof(double) * (size_t)ldc * n);
  hRef = (double*)malloc(sizeof(double) * (size_t)m * n);
  hAbs = (double*)malloc(sizeof(double) * (size_t)m * n);
  if (!hA || !hB || !hC || !hRef || !hAbs) {
    fprintf(stderr, "example_c: out of host memory\n");
    goto fail;
  }
  for (i = 0; i < lda * k; ++i) hA[i] = next_value(&seed);
  for (i = 0; i < ldb * n; ++i) hB[i] = next_value(&seed);
  for (i = 0; i < ldc * n; ++i) hC[i] = next_value(&seed);
  for (j = 0; j < n; ++j) {
    for (i = 0; i < m; ++i) {
      double s = 0.0, a = 0.0;
      for (l = 0; l < k; ++l) {
        s += hA[i + (size_t)l * lda] * hB[l + (size_t)j * ldb];
        a += fabs(hA[i + (size_t)l * lda] * hB[l + (size_t)j * ldb]);
      }
      hRef[i + (size_t)j * m] = alpha * s + beta * hC[i + (size_t)j * ldc];
      hAbs[i + (size_t)j * m] = fabs(alpha) * a + fabs(beta) * fabs(hC[i + (size_t)j * ldc]);
    }
  }

  CHECK_CUDA(cudaMalloc((void**)&dA, sizeof(double) * (size_t)lda * k));
  CHECK_CUDA(cudaMalloc((void**)&dB, sizeof(double) * (size_t)ldb * n));
  CHECK_CUDA(cudaMalloc((void**)&dC, sizeof(double) * (size_t)ldc * n));
  CHECK_CUDA(cudaMemcpy(dA, hA, sizeof(double) * (size_t)lda * k, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, hB, sizeof(double) * (size_t)ldb * n, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dC, hC, sizeof(double) * (size_t)ldc * n, cudaMemcpyHostToDevice));

  /* 3. Error handling: a leading dimension smaller than the rows is refused, nothing runs. */
  st = ozgemmDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m - 1, dB, ldb, &beta, dC, ldc);
  printf("example_c: lda < m is refused as expected: %s\n", ozgemmGetStatusString(st));
  if (st != OZGEMM_STATUS_INVALID_VALUE) {
    fprintf(stderr, "example_c: expected OZGEMM_STATUS_INVALID_VALUE\n");
    goto fail;
  }

  /* 4. Workspace: ask how much this problem needs with the handle's settings (default accuracy
   *    mode FP64) and give the handle our own buffer (without this, the handle allocates and
   *    grows its own). */
  CHECK_OZ(ozgemmGetWorkspaceSize(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &ws_bytes));
  printf("example_c: workspace for %d x %d x %d: %zu bytes\n", m, n, k, ws_bytes);
  if (ws_bytes > 0) {
    CHECK_CUDA(cudaMalloc(&workspace, ws_bytes)); /* cudaMalloc memory is 256-byte aligned */
    CHECK_OZ(ozgemmSetWorkspace(handle, workspace, ws_bytes));
  }

  /* 5. The DGEMM, on the handle's stream (the default stream here); then read C back. */
  CHECK_OZ(ozgemmDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, lda, dB, ldb, &beta, dC, ldc));
  CHECK_OZ(ozgemmGetLastCallInfo(handle, &info));
  printf("example_c: ran %s, %d slices%s%s\n", ozgemmGetVariantString(info.variant), info.slices,
         info.reason[0] ? ": " : "", info.reason);
  CHECK_CUDA(cudaMemcpy(hC, dC, sizeof(double) * (size_t)ldc * n, cudaMemcpyDeviceToHost));

  /* 6. Check: componentwise error |C - Cref| / absprod against a bound a few ulps above what
   *    the host loop itself may be off by (k u). */
  for (j = 0; j < n; ++j) {
    for (i = 0; i < m; ++i) {
      const double d = fabs(hC[i + (size_t)j * ldc] - hRef[i + (size_t)j * m]);
      const double a = hAbs[i + (size_t)j * m];
      const double e = a > 0 ? d / a : (d > 0 ? INFINITY : 0.0);
      if (!(e <= worst)) worst = e; /* also catches NaN */
    }
  }
  {
    const double bound = 2.0 * (k + 8) * ldexp(1.0, -53);
    if (!(worst <= bound)) {
      fprintf(stderr, "example_c: WRONG RESULT: componentwise error %.3e > %.3e\n", worst, bound);
      rc = EXIT_WRONG_RESULT;
      goto fail;
    }
    printf("example_c: OK: %d x %d x %d, componentwise error %.3e (bound %.3e)\n", m, n, k, worst, bound);
  }
  rc = 0;

fail:
  if (handle) ozgemmDestroy(handle); /* before freeing the workspace it may still use */
  cudaFree(workspace);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  free(hA);
  free(hB);
  free(hC);
  free(hRef);
  free(hAbs);
  return rc;
}
