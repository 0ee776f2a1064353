// tests/dropin/mock/hook_lt_client.cpp — libozgemm_hook.so's cublasLtMatmul path on a CPU: this
// program links the mock libcublasLt.so.13 (mock_cublaslt.cpp) and runs under
// LD_PRELOAD=libozgemm_hook.so with OZGEMM_LIBRARY=<mock libozgemm> (mock_ozgemm.cpp). Each case runs
// one cublasLtMatmul twice on the same inputs: with the hook on, and with it off
// (ozgemmHookSetEnabled(0): the mock cuBLASLt computes it); the statuses, D, C and the epilogue's aux
// output must be equal bit for bit (the mocks compute with the same loops), and the hook's counters
// must show the call intercepted or declined for the case's reason. Cases: the four transposes, leading
// dimensions past the rows, strided batches, D apart from C (C untouched) and D in place of C, beta 0,
// host and device pointer modes, complex data, every forward epilogue (taken: cuBLASLt's own epilogue
// pass after ozgemm), and the declined ones: other types, ROW order, pedantic and emulated compute,
// TRANSC, backward epilogues, complex epilogues, device-vector alpha, C and D partly overlapping, graph
// capture, alpha 0; a failure part-way through a batch; cublasLtDestroy freeing the ozgemm state.
// Run by ctest (cmake/dropin.cmake) with OZGEMM_HOOK_MIN_SIZE=0 and OZGEMM_HOOK_MAX_BATCH=8.
#include <cublasLt.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../check.hpp"
#include "client_support.hpp"

extern "C" {
long mock_cublaslt_matmuls(void);
long mock_cublaslt_alpha_zero_matmuls(void);
}

namespace {

using Counter = unsigned long long (*)(const char*);
using SetEnabled = int (*)(int);
Counter counter;
SetEnabled set_enabled;
unsigned long long c(const std::string& n) { return counter(n.c_str()); }

// The mock libozgemm's counters (loaded by the hook at its first call).
long mock_oz(const char* name) {
  const char* path = std::getenv("OZGEMM_LIBRARY");
  void* lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto f = lib ? reinterpret_cast<long (*)()>(dlsym(lib, name)) : nullptr;
  const long r = f ? f() : -1;
  if (lib) dlclose(lib);
  return r;
}

// One cublasLtMatmul's setting.
struct Case {
  std::string name;
  std::string expect = "intercepted";  // or the decline reason's name
  cudaDataType type = CUDA_R_64F;
  int32_t compute = CUBLAS_COMPUTE_64F;
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  int64_t m = 13, n = 11, k = 9;
  int32_t batch = 1;
  bool apart = false;        // D apart from C (else D is C)
  bool overlapping = false;  // D one element after C (partly overlapping)
  bool c_null = false;       // C passed as nullptr (XLA's way when beta is 0; D apart)
  bool beta_zero = false, alpha_zero = false;
  int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  int32_t order = CUBLASLT_ORDER_COL;
  int32_t transc = CUBLAS_OP_N;
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(uintptr_t(0x1234));
};

// What one run leaves: the status and every buffer the call may write or must not.
struct Outcome {
  cublasStatus_t status;
  std::vector<double> C, D, aux;
};

size_t words(cudaDataType t) { return t == CUDA_C_64F ? 2 : 1; }  // doubles per element (others: as doubles)

// Runs case k once on fresh inputs (the same every time for the same case and seed).
Outcome run(cublasLtHandle_t h, const Case& k, uint64_t seed) {
  const size_t w = words(k.type);
  const bool na = k.ta == CUBLAS_OP_N, nb = k.tb == CUBLAS_OP_N;
  const int64_t ra = na ? k.m : k.k, ca = na ? k.k : k.m, rb = nb ? k.k : k.n, cb = nb ? k.n : k.k;
  const int64_t lda = ra + 1, ldb = rb + 2, ldc = k.m + 3, ldd = k.apart ? k.m + 1 : ldc;
  const int64_t sa = lda * ca + 5, sb = ldb * cb + 1, sc = ldc * k.n + 2, sd = k.apart ? ldd * k.n + 4 : sc;
  std::vector<double> A = seeded_values(size_t(sa * k.batch) * w, seed), B = seeded_values(size_t(sb * k.batch) * w, seed + 1);
  Outcome o;
  o.C = seeded_values(size_t(sc * k.batch) * w + (k.overlapping ? w : 0), seed + 2);
  if (k.apart) o.D = seeded_values(size_t(sd * k.batch) * w, seed + 3);
  double* C = o.C.data();
  double* D = k.apart ? o.D.data() : k.overlapping ? C + w : C;
  // Epilogue inputs and outputs: a bias per row and batch member, the aux buffer (bits or doubles).
  const bool relu_aux = (k.epilogue & 128) && (k.epilogue & CUBLASLT_EPILOGUE_RELU);
  const int64_t aux_ld = relu_aux ? 128 : k.m + 3, aux_stride = aux_ld * k.n;
  std::vector<double> bias = seeded_values(size_t((k.m + 1) * k.batch), seed + 4);
  o.aux = seeded_values(size_t(aux_stride * k.batch), seed + 5);  // (RELU's bits: fewer than the doubles)

  cublasLtMatmulDesc_t md;
  cublasLtMatmulDescCreate(&md, cublasComputeType_t(k.compute), k.type);
  auto set = [&](cublasLtMatmulDescAttributes_t a, const auto& v) { cublasLtMatmulDescSetAttribute(md, a, &v, sizeof v); };
  set(CUBLASLT_MATMUL_DESC_TRANSA, int32_t(k.ta));
  set(CUBLASLT_MATMUL_DESC_TRANSB, int32_t(k.tb));
  set(CUBLASLT_MATMUL_DESC_TRANSC, k.transc);
  set(CUBLASLT_MATMUL_DESC_POINTER_MODE, k.pointer_mode);
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, k.epilogue);
  if (k.epilogue & CUBLASLT_EPILOGUE_BIAS) {
    set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias.data()));
    set(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, int64_t(k.m + 1));
  }
  if (k.epilogue & 128) {
    set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<void*>(o.aux.data()));
    set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, aux_ld);
    set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, aux_stride);
  }
  auto layout = [&](int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
    cublasLtMatrixLayout_t l;
    cublasLtMatrixLayoutCreate(&l, k.type, uint64_t(rows), uint64_t(cols), ld);
    cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &k.order, sizeof k.order);
    cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &k.batch, sizeof k.batch);
    cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
    return l;
  };
  cublasLtMatrixLayout_t la = layout(ra, ca, lda, sa), lb = layout(rb, cb, ldb, sb), lc = layout(k.m, k.n, ldc, sc),
                         ld = layout(k.m, k.n, ldd, sd);
  // alpha, beta (complex: imaginary parts too); "device" pointer mode reads them from heap memory here.
  std::vector<double> scalars = {k.alpha_zero ? 0.0 : 1.5, k.alpha_zero ? 0.0 : 0.25, k.beta_zero ? 0.0 : -0.75,
                                 k.beta_zero ? 0.0 : 0.5};
  const double* alpha = scalars.data();
  const double* beta = scalars.data() + 2;
  std::vector<double> tmp_alpha, tmp_beta;
  if (w == 1) {  // real: alpha, beta are single doubles
    tmp_alpha = {scalars[0]}, tmp_beta = {scalars[2]};
    alpha = tmp_alpha.data(), beta = tmp_beta.data();
  }
  std::vector<char> workspace(256);
  o.status = cublasLtMatmul(h, md, alpha, A.data(), la, B.data(), lb, beta, k.c_null ? nullptr : C, lc, D, ld, nullptr,
                            workspace.data(),
                            workspace.size(), k.stream);
  for (auto l : {la, lb, lc, ld}) cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulDescDestroy(md);
  return o;
}

bool same(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

unsigned long long g_calls = 0;  // cublasLtMatmul calls this program made

// Case k with the hook on against the hook off: equal outcomes, and the counters as k.expect says.
void check_case(cublasLtHandle_t h, const Case& k, uint64_t seed) {
  const std::string reason = "declined:" + k.expect;
  const unsigned long long intercepted = c("intercepted"), declined = c(reason);
  const long passes = mock_cublaslt_alpha_zero_matmuls();
  const Outcome on = run(h, k, seed);
  const auto passes_on = mock_cublaslt_alpha_zero_matmuls() - passes;
  set_enabled(0);
  const Outcome off = run(h, k, seed);
  set_enabled(1);
  g_calls += 2;
  CHECK(on.status == off.status, "%s: status %d with the hook, %d without", k.name.c_str(), on.status, off.status);
  CHECK(same(on.C, off.C) && same(on.D, off.D), "%s: the result differs from cuBLASLt's", k.name.c_str());
  CHECK(same(on.aux, off.aux), "%s: the epilogue's aux output differs from cuBLASLt's", k.name.c_str());
  if (k.expect == "intercepted") {
    CHECK(on.status == CUBLAS_STATUS_SUCCESS, "%s: status %d", k.name.c_str(), on.status);
    CHECK(c("intercepted") == intercepted + 1, "%s: not intercepted (declined: %llu)", k.name.c_str(),
          c("declined") );
    // The epilogue (non-default) is cuBLASLt's own pass, with alpha 0; the default has none.
    const long want_passes = k.epilogue == CUBLASLT_EPILOGUE_DEFAULT ? 0 : 1;
    CHECK(passes_on == want_passes, "%s: %ld epilogue passes, expected %ld", k.name.c_str(), passes_on, want_passes);
  } else {
    CHECK(c("intercepted") == intercepted && c(reason) == declined + 1, "%s: expected %s (intercepted %llu -> %llu, %s %llu -> %llu)",
          k.name.c_str(), reason.c_str(), intercepted, c("intercepted"), reason.c_str(), declined, c(reason));
  }
}

}  // namespace

int main() {
  if (!find_hook(&counter, &set_enabled)) return 1;
  cublasLtHandle_t h;
  cublasLtCreate(&h);
  const cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T, Cc = CUBLAS_OP_C;
  uint64_t seed = 1;
  auto run_case = [&](Case k) { check_case(h, k, seed += 10); };

  // 1. taken: transposes, batches, D apart from C, beta 0, pointer modes, complex
  for (auto ops : {std::make_pair(N, N), std::make_pair(N, T), std::make_pair(T, N), std::make_pair(T, T)}) {
    Case k;
    k.name = std::string("real ") + "NT"[ops.first == T] + "NT"[ops.second == T];
    k.ta = ops.first, k.tb = ops.second;
    run_case(k);
  }
  CHECK(mock_oz("mock_ozgemm_created") == 1, "one ozgemm handle for the cublasLt handle, %ld", mock_oz("mock_ozgemm_created"));
  {
    Case k;
    k.name = "batch 3, D apart from C";
    k.batch = 3, k.apart = true, k.ta = T;
    run_case(k);
    k.name = "batch 3, D in place of C, beta 0";
    k.apart = false, k.beta_zero = true;
    run_case(k);
    k.name = "D apart from C, beta 0";
    k.apart = true, k.batch = 1;
    run_case(k);
    k.name = "C nullptr (XLA's call when beta is 0), D apart, beta 0, batch 2";
    k.c_null = true, k.batch = 2;
    run_case(k);
    k.name = "C nullptr with beta != 0 (cuBLASLt rejects it)";
    k.beta_zero = false, k.batch = 1, k.expect = "invalid-args";
    run_case(k);
    k.c_null = false, k.beta_zero = true, k.expect = "intercepted";
    k.name = "device pointer mode, batch 2";
    k.beta_zero = false, k.batch = 2, k.pointer_mode = CUBLASLT_POINTER_MODE_DEVICE;
    run_case(k);
  }
  {
    Case k;
    k.name = "complex CN, D apart";
    k.type = CUDA_C_64F, k.ta = Cc, k.apart = true;
    const auto complex_before = c("complex:intercepted");
    run_case(k);
    CHECK(c("complex:intercepted") == complex_before + 1, "complex call not counted as complex");
    k.name = "complex NT, batch 2, device pointers";
    k.ta = N, k.tb = T, k.batch = 2, k.apart = false, k.pointer_mode = CUBLASLT_POINTER_MODE_DEVICE;
    run_case(k);
  }
  // 2. every forward epilogue, taken (batch 2: the bias and aux batch strides): D apart from C, in place
  // with beta 0, and C == nullptr (beta 0); in place with beta != 0 declined (a pass failing after the
  // product would leave D changed where cuBLASLt leaves it untouched)
  for (uint32_t e : {CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_RELU_BIAS,
                     CUBLASLT_EPILOGUE_GELU, CUBLASLT_EPILOGUE_GELU_BIAS, CUBLASLT_EPILOGUE_RELU_AUX,
                     CUBLASLT_EPILOGUE_RELU_AUX_BIAS, CUBLASLT_EPILOGUE_GELU_AUX, CUBLASLT_EPILOGUE_GELU_AUX_BIAS}) {
    for (int variant = 0; variant < 4; ++variant) {
      Case k;
      static const char* const kNames[] = {" apart", " in place, beta 0", " C nullptr, beta 0", " in place, beta != 0"};
      k.name = "epilogue " + std::to_string(e) + kNames[variant];
      k.epilogue = e, k.batch = 2, k.tb = T;
      k.apart = variant == 0 || variant == 2;
      k.beta_zero = variant == 1 || variant == 2;
      k.c_null = variant == 2;
      if (variant == 3) k.expect = "epilogue-not-supported";
      run_case(k);
    }
  }
  // 3. declined, forwarded unchanged
  auto declined = [&](const char* name, const char* reason, auto&& edit) {
    Case k;
    k.name = name, k.expect = reason;
    edit(k);
    run_case(k);
  };
  declined("FP32", "not-fp64", [](Case& k) { k.type = CUDA_R_32F, k.compute = CUBLAS_COMPUTE_32F; });
  declined("ROW order", "layout-not-supported", [](Case& k) { k.order = CUBLASLT_ORDER_ROW; });
  declined("pedantic", "pedantic-math", [](Case& k) { k.compute = CUBLAS_COMPUTE_64F_PEDANTIC; });
  declined("emulated compute", "cublas-fp64-emulation", [](Case& k) { k.compute = 79; });
  declined("TRANSC", "matmul-desc-not-supported", [](Case& k) { k.transc = CUBLAS_OP_T; });
  declined("DRELU", "epilogue-not-supported", [](Case& k) { k.epilogue = CUBLASLT_EPILOGUE_DRELU; });
  declined("BGRADA", "epilogue-not-supported", [](Case& k) { k.epilogue = CUBLASLT_EPILOGUE_BGRADA; });
  declined("complex RELU", "epilogue-not-supported",
           [](Case& k) { k.type = CUDA_C_64F, k.epilogue = CUBLASLT_EPILOGUE_RELU; });
  declined("alpha device vector", "pointer-mode-not-supported",
           [](Case& k) { k.pointer_mode = CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST; });
  declined("C and D overlap", "overlapping-c", [](Case& k) { k.overlapping = true; });
  declined("graph capture", "graph-capture",
           [](Case& k) { k.stream = reinterpret_cast<cudaStream_t>(uintptr_t(0x5ca9)); });
  declined("alpha 0", "alpha-zero", [](Case& k) { k.alpha_zero = true; });
  declined("batch 9 > OZGEMM_HOOK_MAX_BATCH", "batch-too-large", [](Case& k) { k.batch = 9; });

  // 4. ozgemm failing at the second matrix of a batch (after a launch, as far as the hook knows)
  {
    Case k;
    k.batch = 3;
    auto fail_at_second = [] {
      char at[32];
      std::snprintf(at, sizeof at, "%ld", mock_oz("mock_ozgemm_calls") + 1);
      setenv("MOCK_OZGEMM_FAIL_AFTER", at, 1);
    };
    fail_at_second();
    // D apart from C: the caller's C is untouched, cuBLASLt redoes the whole call (same result).
    k.name = "failure, D apart", k.apart = true, k.expect = "ozgemm-failed";
    run_case(k);
    // D in place of C with beta != 0: the first matrix was updated; the call fails.
    k.apart = false;
    fail_at_second();
    const Outcome o = run(h, k, 99);
    ++g_calls;
    CHECK(o.status == CUBLAS_STATUS_EXECUTION_FAILED, "failure in place: status %d, expected EXECUTION_FAILED",
          o.status);
    unsetenv("MOCK_OZGEMM_FAIL_AFTER");
  }

  // 5. counters and cublasLtDestroy
  CHECK(c("api:cublasLtMatmul") == g_calls, "api:cublasLtMatmul %llu, calls %llu", c("api:cublasLtMatmul"), g_calls);
  const long destroyed = mock_oz("mock_ozgemm_destroyed");
  cublasLtDestroy(h);
  CHECK(mock_oz("mock_ozgemm_destroyed") == destroyed + 1, "cublasLtDestroy did not free the ozgemm state");
  std::printf("%s: %llu cublasLtMatmul calls, %llu intercepted, %llu declined, %ld mock epilogue passes\n",
              g_bad ? "FAIL" : "OK", g_calls, c("intercepted"), c("declined"), mock_cublaslt_alpha_zero_matmuls());
  return g_bad ? 1 : 0;
}
