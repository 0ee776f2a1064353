// tests/dropin/mock/hook_mock_client.cpp — libozgemm_hook.so's GPU path on a CPU: this program links
// the mock libcublas.so.13 (mock_cublas.cpp) and runs under LD_PRELOAD=libozgemm_hook.so with
// OZGEMM_LIBRARY=<mock libozgemm> (mock_ozgemm.cpp). Every hooked entry point, the handle's stream,
// pointer mode and math mode, graph capture, alpha == 0, overlapping strided C, a failure part-way
// through a batch, the legacy API, several threads with their own handles, and cublasDestroy_v2 are
// exercised; every result is compared bit-for-bit with the host reference and the hook's counters
// with what each case must do. The hook's settings (OZGEMM_HOOK_ACCURACY, OZGEMM_HOOK_SCHEME) and the
// mock's MOCK_FP64_OZAKI2 decide what the mock runs; HOOK_MOCK_EXPECT says what the counters must
// then show for every matrix the hook ran:
//   native      FP64 mode, the mock runs native through cublasDgemm_v2, which must pass through the
//               hook (counted as internal) and be counted "native by ozgemm's choice" with its reason;
//   ozaki1:S    emulated with Ozaki-I, S slices;
//   ozaki2:N    emulated with Ozaki-II, N moduli (the call info has slices 0: an Ozaki-II matrix
//               counted as native fails here);
//   unavailable, invalid-setting: every call goes to cuBLAS, declined for that reason (a short run).
// Run by ctest (cmake/dropin.cmake) with OZGEMM_HOOK_MIN_SIZE=0 and OZGEMM_HOOK_MAX_BATCH=8.
#include <cublas_api.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../check.hpp"
#include "dropin/reference_gemm.hpp"

extern "C" {
long mock_cublas_native_calls(void);
long mock_cublas_live_handles(void);
cublasStatus_t cublasInit(void);
cublasStatus_t cublasShutdown(void);
cublasStatus_t cublasSetKernelStream(cudaStream_t);
cublasStatus_t cublasGetError(void);
void cublasDgemm(char, char, int, int, int, double, const double*, int, const double*, int, double, double*, int);
}

namespace {

using Counter = unsigned long long (*)(const char*);
Counter counter;
// The mock libozgemm's own counters; it is loaded (by the hook) at the first call the hook takes.
template <typename R>
R mock_get(const char* name, R fallback) {
  const char* path = std::getenv("OZGEMM_LIBRARY");
  void* lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto f = lib ? reinterpret_cast<R (*)()>(dlsym(lib, name)) : nullptr;
  const R r = f ? f() : fallback;
  if (lib) dlclose(lib);
  return r;
}
long created() { return mock_get<long>("mock_ozgemm_created", -1); }
long destroyed() { return mock_get<long>("mock_ozgemm_destroyed", -1); }
long oz_calls() { return mock_get<long>("mock_ozgemm_calls", -1); }
cudaStream_t last_stream() { return mock_get<cudaStream_t>("mock_ozgemm_last_stream", nullptr); }

// n elements of type T (double, or cuDoubleComplex: two such numbers) from a seeded generator.
template <typename T>
std::vector<T> rnd(size_t n, uint64_t seed) {
  std::vector<T> v(n);
  double* x = reinterpret_cast<double*>(v.data());
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
  for (size_t i = 0; i < n * sizeof(T) / sizeof(double); ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x[i] = double(int64_t(s % 2001) - 1000) / 128.0;
  }
  return v;
}

// One call's operands (a batch of `batch` matrices at strides sa, sb, sc), C and its reference result.
template <typename T>
struct ProblemOf {
  int m = 13, n = 11, k = 9, lda, ldb, ldc, batch;
  cublasOperation_t ta, tb;
  long long sa, sb, sc;
  std::vector<T> A, B, C, ref;
  ProblemOf(cublasOperation_t ta_, cublasOperation_t tb_, int batch_, uint64_t seed) : batch(batch_), ta(ta_), tb(tb_) {
    lda = (ta == CUBLAS_OP_N ? m : k) + 1;
    ldb = (tb == CUBLAS_OP_N ? k : n) + 2;
    ldc = m + 3;
    sa = (long long)lda * (ta == CUBLAS_OP_N ? k : m) + 5;
    sb = (long long)ldb * (tb == CUBLAS_OP_N ? n : k) + 1;
    sc = (long long)ldc * n + 2;
    A = rnd<T>(size_t(sa * batch), seed);
    B = rnd<T>(size_t(sb * batch), seed + 1);
    C = rnd<T>(size_t(sc * batch), seed + 2);
    ref = C;
  }
  void reference(T alpha, T beta) {
    for (int i = 0; i < batch; ++i)
      ozgemm::dropin::reference_gemm(ta == CUBLAS_OP_N, ta == CUBLAS_OP_C, tb == CUBLAS_OP_N, tb == CUBLAS_OP_C, m, n,
                                     k, alpha, A.data() + i * sa, lda, B.data() + i * sb, ldb, beta,
                                     ref.data() + i * sc, ldc);
  }
  bool same() const { return std::memcmp(C.data(), ref.data(), C.size() * sizeof(T)) == 0; }
  std::vector<const T*> pa() { std::vector<const T*> p; for (int i = 0; i < batch; ++i) p.push_back(A.data() + i * sa); return p; }
  std::vector<const T*> pb() { std::vector<const T*> p; for (int i = 0; i < batch; ++i) p.push_back(B.data() + i * sb); return p; }
  std::vector<T*> pc() { std::vector<T*> p; for (int i = 0; i < batch; ++i) p.push_back(C.data() + i * sc); return p; }
};
using Problem = ProblemOf<double>;
using ZProblem = ProblemOf<cuDoubleComplex>;

// What every matrix of one element type that ozgemm runs must be counted as (HOOK_MOCK_EXPECT,
// HOOK_MOCK_EXPECT_COMPLEX): native (by ozgemm's choice), or emulated with scheme ozaki1 / ozaki2 and
// that many slices / moduli.
struct Expect {
  std::string scheme;  // native, ozaki1, ozaki2
  int count = 0;
  bool emulating() const { return scheme != "native"; }
  bool valid() const { return scheme == "native" || ((scheme == "ozaki1" || scheme == "ozaki2") && count > 0); }
};
Expect parse_expect(const std::string& e) {
  const size_t colon = e.find(':');
  Expect x;
  x.scheme = e.substr(0, colon);
  x.count = colon == std::string::npos ? 0 : std::atoi(e.c_str() + colon + 1);
  return x;
}

unsigned long long c(const char* n) { return counter(n); }

}  // namespace

int main() {
  counter = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "ozgemmHookCounter"));
  if (!counter) {
    std::fprintf(stderr, "FAIL: the hook is not preloaded\n");
    return 1;
  }
  const char* expect_env = std::getenv("HOOK_MOCK_EXPECT");
  const std::string expect = expect_env ? expect_env : "";
  if (expect == "unavailable" || expect == "invalid-setting") {
    // unavailable: libozgemm missing (OZGEMM_LIBRARY points nowhere) or no GPU (MOCK_NO_GPU=1);
    // invalid-setting: OZGEMM_HOOK_ACCURACY / _SCHEME cannot be read. cuBLAS runs everything.
    cublasHandle_t h;
    cublasCreate_v2(&h);
    const double alpha = 2.0, beta = 0.5;
    for (int i = 0; i < 3; ++i) {
      Problem p(CUBLAS_OP_N, CUBLAS_OP_T, 1, 40 + i);
      p.reference(alpha, beta);
      const cublasStatus_t st = cublasDgemm_v2(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.B.data(),
                                               p.ldb, &beta, p.C.data(), p.ldc);
      CHECK(st == CUBLAS_STATUS_SUCCESS && p.same(), "call %d: status %d, result %s", i, st,
            p.same() ? "right" : "WRONG");
    }
    cublasDestroy_v2(h);
    if (expect == "invalid-setting") {
      CHECK(c("intercepted") == 0 && c("declined:invalid-setting") == 3, "intercepted %llu, invalid-setting %llu",
            c("intercepted"), c("declined:invalid-setting"));
      CHECK(created() <= 0, "an invalid setting must not create ozgemm handles (%ld)", created());
    } else {
      // ozgemm-unavailable: no libozgemm or ozgemmCreate failed; cuda-error: the real CUDA runtime
      // (the real libozgemm loaded) finds no device already at the stream query.
      CHECK(c("intercepted") == 0 && c("declined:ozgemm-unavailable") + c("declined:cuda-error") == 3,
            "intercepted %llu, ozgemm-unavailable %llu, cuda-error %llu", c("intercepted"),
            c("declined:ozgemm-unavailable"), c("declined:cuda-error"));
    }
    std::printf("%s: %s, %llu calls went to cuBLAS\n", g_bad ? "FAIL" : "OK", expect.c_str(), c("declined"));
    return g_bad ? 1 : 0;
  }
  // What every real / complex matrix ozgemm runs must be counted as: "native", or "ozaki1:S" / "ozaki2:N".
  const char* expect_complex_env = std::getenv("HOOK_MOCK_EXPECT_COMPLEX");
  const Expect real_expect = parse_expect(expect), complex_expect = parse_expect(expect_complex_env ? expect_complex_env : "");
  if (!real_expect.valid() || !complex_expect.valid() || complex_expect.scheme == "ozaki1") {
    std::fprintf(stderr, "FAIL: HOOK_MOCK_EXPECT=%s is not native, ozaki1:S, ozaki2:N, unavailable or invalid-setting,"
                 " or HOOK_MOCK_EXPECT_COMPLEX=%s is not native or ozaki2:N\n", expect.c_str(),
                 expect_complex_env ? expect_complex_env : "(unset)");
    return 1;
  }
  const bool emulating = real_expect.emulating();
  std::printf("hook mock test, expecting %s (real), %s (complex)\n", expect.c_str(), expect_complex_env);

  cublasHandle_t h;
  cublasCreate_v2(&h);
  const cudaStream_t s1 = reinterpret_cast<cudaStream_t>(uintptr_t(0x1234));
  cublasSetStream_v2(h, s1);
  const double alpha = 1.5, beta = -0.25, zero = 0.0;
  const cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T, Cc = CUBLAS_OP_C;
  unsigned long long want_intercepted = 0, want_gemms = 0;

  // 1. every entry point, intercepted, results bit-for-bit
  int seed = 1;
  auto single = [&](const char* name, auto&& call, cublasOperation_t ta, cublasOperation_t tb) {
    Problem p(ta, tb, 1, seed += 3);
    p.reference(alpha, beta);
    const auto before = c("intercepted");
    const cublasStatus_t st = call(p);
    CHECK(st == CUBLAS_STATUS_SUCCESS, "%s status %d", name, st);
    CHECK(p.same(), "%s result differs", name);
    CHECK(c("intercepted") == before + 1, "%s not intercepted", name);
    ++want_intercepted, ++want_gemms;
  };
  single("cublasDgemm_v2 NT", [&](Problem& p) {
    return cublasDgemm_v2(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.B.data(), p.ldb, &beta, p.C.data(), p.ldc);
  }, N, T);
  CHECK(created() == 1, "one ozgemm handle expected, %ld", created());
  CHECK(last_stream() == s1, "ozgemm did not run on the handle's stream");
  single("cublasDgemm_v2_64 CN", [&](Problem& p) {
    return cublasDgemm_v2_64(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.B.data(), p.ldb, &beta, p.C.data(), p.ldc);
  }, Cc, N);
  single("cublasGemmEx TT", [&](Problem& p) {
    return cublasGemmEx(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), CUDA_R_64F, p.lda, p.B.data(), CUDA_R_64F,
                        p.ldb, &beta, p.C.data(), CUDA_R_64F, p.ldc, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
  }, T, T);
  single("cublasGemmEx_64 NN", [&](Problem& p) {
    return cublasGemmEx_64(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), CUDA_R_64F, p.lda, p.B.data(), CUDA_R_64F,
                           p.ldb, &beta, p.C.data(), CUDA_R_64F, p.ldc, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  }, N, N);
  auto batched = [&](const char* name, auto&& call, int batch, bool intercept) {
    Problem p(T, N, batch, seed += 3);
    p.reference(alpha, beta);
    const auto before = c("intercepted");
    const cublasStatus_t st = call(p);
    CHECK(st == CUBLAS_STATUS_SUCCESS, "%s status %d", name, st);
    CHECK(p.same(), "%s result differs", name);
    CHECK(c("intercepted") == before + (intercept ? 1 : 0), "%s: intercepted %llu -> %llu", name, before,
          c("intercepted"));
    if (intercept) ++want_intercepted, want_gemms += batch;
  };
  batched("cublasDgemmStridedBatched", [&](Problem& p) {
    return cublasDgemmStridedBatched(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.sa, p.B.data(), p.ldb,
                                     p.sb, &beta, p.C.data(), p.ldc, p.sc, p.batch);
  }, 3, true);
  batched("cublasDgemmStridedBatched_64", [&](Problem& p) {
    return cublasDgemmStridedBatched_64(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.sa, p.B.data(),
                                        p.ldb, p.sb, &beta, p.C.data(), p.ldc, p.sc, p.batch);
  }, 4, true);
  batched("cublasDgemmBatched", [&](Problem& p) {
    auto a = p.pa(); auto b = p.pb(); auto cc = p.pc();
    return cublasDgemmBatched(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, a.data(), p.lda, b.data(), p.ldb, &beta, cc.data(),
                              p.ldc, p.batch);
  }, 3, true);
  batched("cublasDgemmBatched_64", [&](Problem& p) {
    auto a = p.pa(); auto b = p.pb(); auto cc = p.pc();
    return cublasDgemmBatched_64(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, a.data(), p.lda, b.data(), p.ldb, &beta,
                                 cc.data(), p.ldc, p.batch);
  }, 2, true);
  batched("cublasGemmStridedBatchedEx", [&](Problem& p) {
    return cublasGemmStridedBatchedEx(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), CUDA_R_64F, p.lda, p.sa,
                                      p.B.data(), CUDA_R_64F, p.ldb, p.sb, &beta, p.C.data(), CUDA_R_64F, p.ldc, p.sc,
                                      p.batch, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  }, 3, true);
  batched("cublasGemmStridedBatchedEx_64", [&](Problem& p) {
    return cublasGemmStridedBatchedEx_64(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), CUDA_R_64F, p.lda, p.sa,
                                         p.B.data(), CUDA_R_64F, p.ldb, p.sb, &beta, p.C.data(), CUDA_R_64F, p.ldc,
                                         p.sc, p.batch, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  }, 2, true);
  batched("cublasGemmBatchedEx", [&](Problem& p) {
    auto a = p.pa(); auto b = p.pb(); auto cc = p.pc();
    return cublasGemmBatchedEx(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, (const void* const*)a.data(), CUDA_R_64F, p.lda,
                               (const void* const*)b.data(), CUDA_R_64F, p.ldb, &beta, (void* const*)cc.data(),
                               CUDA_R_64F, p.ldc, p.batch, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  }, 3, true);
  batched("cublasGemmBatchedEx_64", [&](Problem& p) {
    auto a = p.pa(); auto b = p.pb(); auto cc = p.pc();
    return cublasGemmBatchedEx_64(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, (const void* const*)a.data(), CUDA_R_64F,
                                  p.lda, (const void* const*)b.data(), CUDA_R_64F, p.ldb, &beta,
                                  (void* const*)cc.data(), CUDA_R_64F, p.ldc, p.batch, CUBLAS_COMPUTE_64F,
                                  CUBLAS_GEMM_DEFAULT);
  }, 2, true);
  // batch past OZGEMM_HOOK_MAX_BATCH=8: cuBLAS
  batched("strided batch of 9 (> max batch)", [&](Problem& p) {
    return cublasDgemmStridedBatched(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.sa, p.B.data(), p.ldb,
                                     p.sb, &beta, p.C.data(), p.ldc, p.sc, p.batch);
  }, 9, false);
  CHECK(c("declined:batch-too-large") == 1, "batch-too-large %llu", c("declined:batch-too-large"));

  // 1b. the complex entry points (and GemmEx with complex types, legacy compute types included),
  //     every operation pair with C among them, intercepted, results bit-for-bit
  unsigned long long want_complex_intercepted = 0, want_complex_gemms = 0;
  const cuDoubleComplex zalpha = make_cuDoubleComplex(0.75, -1.25), zbeta = make_cuDoubleComplex(-0.5, 0.25);
  const cublasComputeType_t legacy_c64 = cublasComputeType_t(CUDA_C_64F), legacy_r64 = cublasComputeType_t(CUDA_R_64F);
  auto zcase = [&](const char* name, cublasOperation_t ta, cublasOperation_t tb, int batch, auto&& call) {
    ZProblem p(ta, tb, batch, seed += 3);
    p.reference(zalpha, zbeta);
    const auto before = c("intercepted"), before_c = c("complex:gemms");
    const cublasStatus_t st = call(p);
    CHECK(st == CUBLAS_STATUS_SUCCESS, "%s status %d", name, st);
    CHECK(p.same(), "%s result differs", name);
    CHECK(c("intercepted") == before + 1 && c("complex:gemms") == before_c + batch,
          "%s: intercepted %llu -> %llu, complex matrices %llu -> %llu", name, before, c("intercepted"), before_c,
          c("complex:gemms"));
    ++want_intercepted, ++want_complex_intercepted, want_gemms += batch, want_complex_gemms += batch;
  };
  // the typed single-matrix entry points (int and _64 sizes alike)
  auto ztyped = [&](const char* name, cublasOperation_t ta, cublasOperation_t tb, auto fn) {
    zcase(name, ta, tb, 1, [&](ZProblem& p) {
      return fn(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, p.A.data(), p.lda, p.B.data(), p.ldb, &zbeta, p.C.data(),
                p.ldc);
    });
  };
  ztyped("cublasZgemm_v2 NC", N, Cc, cublasZgemm_v2);
  ztyped("cublasZgemm_v2_64 CT", Cc, T, cublasZgemm_v2_64);
  ztyped("cublasZgemm3m CC", Cc, Cc, cublasZgemm3m);
  ztyped("cublasZgemm3m_64 TN", T, N, cublasZgemm3m_64);
  zcase("cublasGemmEx C_64F NN", N, N, 1, [&](ZProblem& p) {
    return cublasGemmEx(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, p.A.data(), CUDA_C_64F, p.lda, p.B.data(), CUDA_C_64F,
                        p.ldb, &zbeta, p.C.data(), CUDA_C_64F, p.ldc, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  });
  zcase("cublasGemmEx_64 C_64F, legacy compute CUDA_C_64F, CN", Cc, N, 1, [&](ZProblem& p) {
    return cublasGemmEx_64(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, p.A.data(), CUDA_C_64F, p.lda, p.B.data(),
                           CUDA_C_64F, p.ldb, &zbeta, p.C.data(), CUDA_C_64F, p.ldc, legacy_c64, CUBLAS_GEMM_DEFAULT);
  });
  zcase("cublasZgemmStridedBatched CT", Cc, T, 3, [&](ZProblem& p) {
    return cublasZgemmStridedBatched(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, p.A.data(), p.lda, p.sa, p.B.data(),
                                     p.ldb, p.sb, &zbeta, p.C.data(), p.ldc, p.sc, p.batch);
  });
  zcase("cublasZgemmStridedBatched_64 NC", N, Cc, 2, [&](ZProblem& p) {
    return cublasZgemmStridedBatched_64(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, p.A.data(), p.lda, p.sa, p.B.data(),
                                        p.ldb, p.sb, &zbeta, p.C.data(), p.ldc, p.sc, p.batch);
  });
  zcase("cublasZgemmBatched CN", Cc, N, 3, [&](ZProblem& p) {
    auto a = p.pa(); auto b = p.pb(); auto cc = p.pc();
    return cublasZgemmBatched(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, a.data(), p.lda, b.data(), p.ldb, &zbeta,
                              cc.data(), p.ldc, p.batch);
  });
  zcase("cublasZgemmBatched_64 TC", T, Cc, 2, [&](ZProblem& p) {
    auto a = p.pa(); auto b = p.pb(); auto cc = p.pc();
    return cublasZgemmBatched_64(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, a.data(), p.lda, b.data(), p.ldb, &zbeta,
                                 cc.data(), p.ldc, p.batch);
  });
  zcase("cublasGemmStridedBatchedEx C_64F, legacy compute CUDA_C_64F (CuPy), NN", N, N, 3, [&](ZProblem& p) {
    return cublasGemmStridedBatchedEx(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, p.A.data(), CUDA_C_64F, p.lda, p.sa,
                                      p.B.data(), CUDA_C_64F, p.ldb, p.sb, &zbeta, p.C.data(), CUDA_C_64F, p.ldc,
                                      p.sc, p.batch, legacy_c64, CUBLAS_GEMM_DEFAULT);
  });
  zcase("cublasGemmStridedBatchedEx_64 C_64F CC", Cc, Cc, 2, [&](ZProblem& p) {
    return cublasGemmStridedBatchedEx_64(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, p.A.data(), CUDA_C_64F, p.lda, p.sa,
                                         p.B.data(), CUDA_C_64F, p.ldb, p.sb, &zbeta, p.C.data(), CUDA_C_64F, p.ldc,
                                         p.sc, p.batch, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  });
  zcase("cublasGemmBatchedEx C_64F, legacy compute CUDA_R_64F, TT", T, T, 3, [&](ZProblem& p) {
    auto a = p.pa(); auto b = p.pb(); auto cc = p.pc();
    return cublasGemmBatchedEx(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, (const void* const*)a.data(), CUDA_C_64F, p.lda,
                               (const void* const*)b.data(), CUDA_C_64F, p.ldb, &zbeta, (void* const*)cc.data(),
                               CUDA_C_64F, p.ldc, p.batch, legacy_r64, CUBLAS_GEMM_DEFAULT);
  });
  zcase("cublasGemmBatchedEx_64 C_64F NT", N, T, 2, [&](ZProblem& p) {
    auto a = p.pa(); auto b = p.pb(); auto cc = p.pc();
    return cublasGemmBatchedEx_64(h, p.ta, p.tb, p.m, p.n, p.k, &zalpha, (const void* const*)a.data(), CUDA_C_64F,
                                  p.lda, (const void* const*)b.data(), CUDA_C_64F, p.ldb, &zbeta,
                                  (void* const*)cc.data(), CUDA_C_64F, p.ldc, p.batch, CUBLAS_COMPUTE_64F,
                                  CUBLAS_GEMM_DEFAULT);
  });
  // alpha purely imaginary: not zero, taken
  {
    const cuDoubleComplex ialpha = make_cuDoubleComplex(0.0, 2.0);
    ZProblem p(Cc, N, 1, seed += 3);
    p.reference(ialpha, zbeta);
    const auto before = c("complex:intercepted");
    cublasZgemm_v2(h, p.ta, p.tb, p.m, p.n, p.k, &ialpha, p.A.data(), p.lda, p.B.data(), p.ldb, &zbeta, p.C.data(),
                   p.ldc);
    CHECK(p.same() && c("complex:intercepted") == before + 1, "alpha = 2i: result %s, intercepted %llu -> %llu",
          p.same() ? "right" : "WRONG", before, c("complex:intercepted"));
    ++want_intercepted, ++want_complex_intercepted, ++want_gemms, ++want_complex_gemms;
  }
  // device pointer mode: the complex alpha and beta (16 bytes each) read from "device" memory
  cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE);
  ztyped("cublasZgemm_v2, device pointer mode, TC", T, Cc, cublasZgemm_v2);
  cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST);
  // real data through GemmEx with the legacy compute type CUDA_R_64F: taken as COMPUTE_64F
  single("cublasGemmEx R_64F, legacy compute CUDA_R_64F", [&](Problem& p) {
    return cublasGemmEx(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), CUDA_R_64F, p.lda, p.B.data(), CUDA_R_64F,
                        p.ldb, &beta, p.C.data(), CUDA_R_64F, p.ldc, legacy_r64, CUBLAS_GEMM_DEFAULT);
  }, T, Cc);
  // declined complex calls: cuBLAS runs them (or rejects them: the mock's status comes back unchanged)
  auto zdeclined = [&](const char* name, const char* reason, cublasStatus_t want, const cuDoubleComplex& al,
                       auto&& call) {
    ZProblem p(Cc, T, 1, seed += 3);
    if (want == CUBLAS_STATUS_SUCCESS) p.reference(al, zbeta);
    const std::string key = std::string("declined:") + reason;
    const auto before = c("intercepted"), before_r = c(key.c_str());
    const long calls_before = oz_calls();
    const cublasStatus_t st = call(p, al);
    CHECK(st == want, "%s status %d, want %d", name, st, want);
    CHECK(p.same(), "%s result differs", name);
    CHECK(c("intercepted") == before && c(key.c_str()) == before_r + 1 && oz_calls() == calls_before,
          "%s: intercepted %llu -> %llu, %s %llu -> %llu, ozgemm calls %ld -> %ld", name, before, c("intercepted"),
          key.c_str(), before_r, c(key.c_str()), calls_before, oz_calls());
  };
  auto zex = [&](cudaDataType at, cudaDataType bt, cudaDataType ct, cublasComputeType_t comp) {
    return [&h, &zbeta, at, bt, ct, comp](ZProblem& p, const cuDoubleComplex& al) {
      return cublasGemmEx(h, p.ta, p.tb, p.m, p.n, p.k, &al, p.A.data(), at, p.lda, p.B.data(), bt, p.ldb, &zbeta,
                          p.C.data(), ct, p.ldc, comp, CUBLAS_GEMM_DEFAULT);
    };
  };
  const cublasStatus_t ok = CUBLAS_STATUS_SUCCESS, unsupported = CUBLAS_STATUS_NOT_SUPPORTED;
  zdeclined("GemmEx C_32F", "not-fp64", unsupported, zalpha, zex(CUDA_C_32F, CUDA_C_32F, CUDA_C_32F, CUBLAS_COMPUTE_32F));
  zdeclined("GemmEx mixed C_64F x R_64F", "not-fp64", unsupported, zalpha,
            zex(CUDA_C_64F, CUDA_R_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F));
  zdeclined("GemmEx C_64F, compute 32F", "not-fp64", unsupported, zalpha,
            zex(CUDA_C_64F, CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_32F));
  zdeclined("GemmEx C_64F, 64F_PEDANTIC", "pedantic-math", ok, zalpha,
            zex(CUDA_C_64F, CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F_PEDANTIC));
  auto zgemm = [&](ZProblem& p, const cuDoubleComplex& al) {
    return cublasZgemm_v2(h, p.ta, p.tb, p.m, p.n, p.k, &al, p.A.data(), p.lda, p.B.data(), p.ldb, &zbeta, p.C.data(),
                          p.ldc);
  };
  zdeclined("Zgemm alpha = 0", "alpha-zero", ok, make_cuDoubleComplex(-0.0, 0.0), zgemm);
  cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
  zdeclined("Zgemm, pedantic math", "pedantic-math", ok, zalpha, zgemm);
  zdeclined("GemmEx C_64F legacy compute, pedantic math", "pedantic-math", ok, zalpha,
            zex(CUDA_C_64F, CUDA_C_64F, CUDA_C_64F, legacy_c64));
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);

  // 2. device pointer mode: alpha/beta read from "device" memory, intercepted
  cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE);
  single("device pointer mode", [&](Problem& p) {
    return cublasDgemm_v2(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.B.data(), p.ldb, &beta, p.C.data(), p.ldc);
  }, N, N);
  cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST);

  // 3. declined: pedantic math, cuBLAS's own FP64 emulation, pedantic compute type, graph capture,
  //    alpha == 0, k == 0, overlapping strided C, an FP32 GemmEx. Results still right (cuBLAS ran).
  auto declined = [&](const char* name, const char* reason, auto&& call, double al = 1.5, int k = 9) {
    Problem p(N, T, 1, seed += 3);
    p.k = k;
    p.reference(al, beta);
    const auto before = c("intercepted"), before_r = c((std::string("declined:") + reason).c_str());
    const long calls_before = oz_calls();
    const cublasStatus_t st = call(p, al);
    CHECK(st == CUBLAS_STATUS_SUCCESS, "%s status %d", name, st);
    CHECK(p.same(), "%s result differs", name);
    CHECK(c("intercepted") == before, "%s was intercepted", name);
    CHECK(c((std::string("declined:") + reason).c_str()) == before_r + 1, "%s not declined as %s", name, reason);
    CHECK(oz_calls() == calls_before, "%s reached ozgemm", name);
  };
  auto dgemm = [&](Problem& p, double al) {
    return cublasDgemm_v2(h, p.ta, p.tb, p.m, p.n, p.k, &al, p.A.data(), p.lda, p.B.data(), p.ldb, &beta, p.C.data(), p.ldc);
  };
  cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
  declined("pedantic math", "pedantic-math", dgemm);
  cublasSetMathMode(h, cublasMath_t(8 | 16));  // FP64 emulated fixed point | disallow reduced precision
  declined("cuBLAS FP64 emulation math", "cublas-fp64-emulation", dgemm);
  cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);  // irrelevant to FP64: intercepted
  single("TF32 math mode (FP64 call)", [&](Problem& p) {
    return cublasDgemm_v2(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.B.data(), p.ldb, &beta, p.C.data(), p.ldc);
  }, N, N);
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  declined("64F_PEDANTIC compute", "pedantic-math", [&](Problem& p, double al) {
    return cublasGemmEx(h, p.ta, p.tb, p.m, p.n, p.k, &al, p.A.data(), CUDA_R_64F, p.lda, p.B.data(), CUDA_R_64F, p.ldb,
                        &beta, p.C.data(), CUDA_R_64F, p.ldc, CUBLAS_COMPUTE_64F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
  });
  cublasSetStream_v2(h, reinterpret_cast<cudaStream_t>(uintptr_t(0x5ca9)));  // the mock's "capturing" stream
  declined("graph capture", "graph-capture", dgemm);
  cublasSetStream_v2(h, s1);
  declined("alpha == 0", "alpha-zero", dgemm, 0.0);
  declined("k == 0", "empty", dgemm, 1.5, 0);
  {
    Problem p(N, N, 3, seed += 3);
    p.sc = 5;  // C matrices overlap
    p.ref = p.C;
    p.reference(alpha, beta);
    const auto before = c("declined:overlapping-c");
    cublasDgemmStridedBatched(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.sa, p.B.data(), p.ldb, p.sb,
                              &beta, p.C.data(), p.ldc, p.sc, p.batch);
    CHECK(p.same(), "overlapping C result differs");
    CHECK(c("declined:overlapping-c") == before + 1, "overlapping C not declined");
  }

  // 4. ozgemm fails part-way through a batch. Where C is as the caller left it (beta == 0, or a status
  // from before any launch), matrices 0-1 by ozgemm, the rest by cuBLAS, result right; a launch that
  // failed with beta != 0 may have written part of C: the call fails instead of a silent wrong answer.
  constexpr int kExecutionFailed = 6, kAllocFailed = 4;  // ozgemmStatus_t values (include/ozgemm/ozgemm.h)
  for (const auto& [fail_status, b, want_fallback] :
       {std::tuple<int, double, bool>{kExecutionFailed, 0.0, true}, std::tuple<int, double, bool>{kAllocFailed, beta, true},
        std::tuple<int, double, bool>{kExecutionFailed, beta, false}}) {
    const long done = oz_calls();
    setenv("MOCK_OZGEMM_FAIL_AFTER", std::to_string(done + 2).c_str(), 1);
    setenv("MOCK_OZGEMM_FAIL_STATUS", std::to_string(fail_status).c_str(), 1);
    Problem p(N, N, 5, seed += 3);
    p.reference(alpha, b);
    const auto failed = c("failed");
    const long native = mock_cublas_native_calls();
    const cublasStatus_t st = cublasDgemmStridedBatched(h, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.sa,
                                                        p.B.data(), p.ldb, p.sb, &b, p.C.data(), p.ldc, p.sc,
                                                        p.batch);
    if (want_fallback) {
      CHECK(st == CUBLAS_STATUS_SUCCESS && p.same(), "batch with a failure (status %d, beta %g): status %d, result %s",
            fail_status, b, st, p.same() ? "right" : "WRONG");
      CHECK(mock_cublas_native_calls() - native == (emulating ? 3 : 5), "cuBLAS ran %ld matrices",
            mock_cublas_native_calls() - native);
    } else {
      CHECK(st == CUBLAS_STATUS_EXECUTION_FAILED, "a failed launch with beta != 0 returned %d, want EXECUTION_FAILED",
            st);
      // (the mock's FP64 mode runs its two matrices through cuBLAS itself: those are not redone ones)
      CHECK(mock_cublas_native_calls() - native == (emulating ? 0 : 2),
            "cuBLAS redid matrices on a C ozgemm may have written (%ld cuBLAS runs)", mock_cublas_native_calls() - native);
    }
    CHECK(c("failed") == failed + 1, "failure not counted");
    CHECK(oz_calls() == done + 2, "ozgemm ran %ld matrices, want 2", oz_calls() - done);
    unsetenv("MOCK_OZGEMM_FAIL_AFTER");
    unsetenv("MOCK_OZGEMM_FAIL_STATUS");
    want_gemms += 2;
  }

  // 5. legacy API: intercepted on the cublasSetKernelStream stream once cublasInit succeeded
  {
    Problem p(T, N, 1, seed += 3);
    p.reference(alpha, beta);
    const auto before = c("intercepted");
    cublasDgemm('T', 'N', p.m, p.n, p.k, alpha, p.A.data(), p.lda, p.B.data(), p.ldb, beta, p.C.data(), p.ldc);
    CHECK(cublasGetError() == CUBLAS_STATUS_NOT_INITIALIZED, "legacy call before cublasInit must fail in cuBLAS");
    CHECK(c("declined:legacy-not-initialised") == 1, "legacy before init not declined");
    cublasInit();
    const cudaStream_t s2 = reinterpret_cast<cudaStream_t>(uintptr_t(0x777));
    cublasSetKernelStream(s2);
    cublasDgemm('T', 'N', p.m, p.n, p.k, alpha, p.A.data(), p.lda, p.B.data(), p.ldb, beta, p.C.data(), p.ldc);
    CHECK(p.same(), "legacy result differs");
    CHECK(c("intercepted") == before + 1, "legacy cublasDgemm not intercepted");
    CHECK(last_stream() == s2, "legacy call not on the kernel stream");
    ++want_intercepted, ++want_gemms;
    cublasShutdown();
  }

  // 6. threads, each with its own handle
  {
    const auto before = c("intercepted");
    std::vector<std::thread> ts;
    int bad[4] = {0, 0, 0, 0};
    for (int t = 0; t < 4; ++t)
      ts.emplace_back([&, t] {
        cublasHandle_t th;
        cublasCreate_v2(&th);
        cublasSetStream_v2(th, reinterpret_cast<cudaStream_t>(uintptr_t(0x1000 + t)));
        for (int i = 0; i < 25; ++i) {
          Problem p(i % 2 ? N : T, N, 1, 1000 + t * 100 + i);
          p.reference(alpha, beta);
          cublasDgemm_v2(th, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A.data(), p.lda, p.B.data(), p.ldb, &beta,
                         p.C.data(), p.ldc);
          bad[t] += !p.same();
        }
        cublasDestroy_v2(th);
      });
    for (auto& t : ts) t.join();
    CHECK(bad[0] + bad[1] + bad[2] + bad[3] == 0, "threads: %d wrong results", bad[0] + bad[1] + bad[2] + bad[3]);
    CHECK(c("intercepted") == before + 100, "threads: %llu intercepted, want 100", c("intercepted") - before);
    want_intercepted += 100, want_gemms += 100;
  }

  // 7. counters, re-entrancy, destruction
  cublasDestroy_v2(h);
  std::printf("created %ld ozgemm handles, destroyed %ld; cuBLAS handles alive %ld\n", created(), destroyed(),
              mock_cublas_live_handles());
  CHECK(created() == 6 && destroyed() == 6, "ozgemm handles: created %ld destroyed %ld (want 6: main, legacy, 4 threads)",
        created(), destroyed());
  CHECK(mock_cublas_live_handles() == 0, "%ld cuBLAS handles left (libozgemm's internal cublasDestroy_v2 lost?)",
        mock_cublas_live_handles());
  CHECK(c("intercepted") == want_intercepted, "intercepted %llu want %llu", c("intercepted"), want_intercepted);
  CHECK(c("gemms") == want_gemms, "gemms %llu want %llu", c("gemms"), want_gemms);
  // Every matrix counted as what the mock ran, in the counters and in the JSON stats.
  char json[4096];
  const auto stats_json = reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(RTLD_DEFAULT, "ozgemmHookStatsJson"));
  CHECK(stats_json && stats_json(json, sizeof json) < sizeof json, "ozgemmHookStatsJson missing or too long");
  const std::string js = stats_json ? json : "";
  const auto has = [&](const std::string& text) {
    CHECK(js.find(text) != std::string::npos, "the JSON stats lack %s: %s", text.c_str(), js.c_str());
  };
  // Per element type: every matrix counted as what the mock ran (Expect), in the counters and the JSON.
  const unsigned long long want_real_gemms = want_gemms - want_complex_gemms;
  unsigned long long want_internal = 0;  // native matrices: libozgemm's own cuBLAS call came back through the hook
  auto check_type = [&](const char* type, const Expect& e, unsigned long long calls, unsigned long long gemms,
                        const char* native_reason) {
    const auto t = [&](const std::string& name) { return c((std::string(type) + ":" + name).c_str()); };
    CHECK(t("intercepted") == calls && t("gemms") == gemms, "%s: intercepted %llu want %llu, matrices %llu want %llu",
          type, t("intercepted"), calls, t("gemms"), gemms);
    const std::string n = std::to_string(gemms);
    if (e.emulating()) {
      const bool oz2 = e.scheme == "ozaki2";
      const std::string per_count = (oz2 ? "moduli:" : "slices:") + std::to_string(e.count);
      CHECK(t("emulated") == gemms && t(oz2 ? "emulated:ozaki2" : "emulated:ozaki1") == gemms &&
                t(per_count) == gemms && t("ozgemm_native") == 0 && t("unreported") == 0,
            "%s: emulated %llu (Ozaki-I %llu, Ozaki-II %llu, %s %llu), native %llu, unreported %llu; want %llu %s",
            type, t("emulated"), t("emulated:ozaki1"), t("emulated:ozaki2"), per_count.c_str(), t(per_count),
            t("ozgemm_native"), t("unreported"), gemms, e.scheme.c_str());
      has(std::string("\"") + type + "\": {\"intercepted\": " + std::to_string(calls) + ", \"gemms\": " + n +
          ", \"emulated\": " + n);
      has(std::string(oz2 ? "\"emulated_by_moduli\": {\"" : "\"emulated_by_slices\": {\"") +
          std::to_string(e.count) + "\": " + n + "}");
    } else {
      CHECK(t("ozgemm_native") == gemms && t("emulated") == 0, "%s: emulated %llu native %llu, want %llu native", type,
            t("emulated"), t("ozgemm_native"), gemms);
      CHECK(c((std::string("native:") + native_reason).c_str()) == gemms, "%s: native for the mock's reason: %llu",
            type, c((std::string("native:") + native_reason).c_str()));
      has("\"" + std::string(native_reason) + "\": " + n);
      want_internal += gemms;
    }
  };
  check_type("real", real_expect, want_intercepted - want_complex_intercepted, want_real_gemms,
             "mock: fp64 mode ran native");
  check_type("complex", complex_expect, want_complex_intercepted, want_complex_gemms,
             "mock: fp64 mode ran native ZGEMM");
  CHECK(c("internal") == want_internal, "internal %llu want %llu", c("internal"), want_internal);
  if (!real_expect.emulating() && !complex_expect.emulating()) has("\"emulated_by_moduli\": {}");
  if (real_expect.emulating() && complex_expect.emulating()) has("\"native_by_reason\": {}");
  CHECK(c("calls") == c("intercepted") + c("declined"), "calls %llu != intercepted + declined", c("calls"));
  std::printf("%s: %llu calls, %llu intercepted, %llu matrices, %llu declined, %llu internal\n",
              g_bad ? "FAIL" : "OK", c("calls"), c("intercepted"), c("gemms"), c("declined"), c("internal"));
  return g_bad ? 1 : 0;
}
