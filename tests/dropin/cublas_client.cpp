// tests/dropin/cublas_client.cpp — runs dropin_cublas_calls (cublas_calls.cpp), linked (OZ_LINKED)
// or through dlopen(RTLD_LOCAL) (OZ_CALLS_LIB), and with --expect-preload <variant> checks the
// hook's counters: every call seen, none intercepted (no GPU here), declined for the right reasons.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#ifdef OZ_LINKED
extern "C" int dropin_cublas_calls(void);
#endif

using Counter = unsigned long long (*)(const char*);

int main(int argc, char** argv) {
  int (*calls_fn)(void) = nullptr;
#ifdef OZ_LINKED
  calls_fn = dropin_cublas_calls;
#else
  void* lib = dlopen(OZ_CALLS_LIB, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "dlopen %s: %s\n", OZ_CALLS_LIB, dlerror());
    return 1;
  }
  calls_fn = reinterpret_cast<int (*)(void)>(dlsym(lib, "dropin_cublas_calls"));
  if (!calls_fn) return 1;
#endif
  const int calls = calls_fn();
  if (argc < 3 || std::strcmp(argv[1], "--expect-preload") != 0) return 0;

  const std::string variant = argv[2];
  auto counter = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "ozgemmHookCounter"));
  if (!counter) {
    std::fprintf(stderr, "FAIL: ozgemmHookCounter not found: the hook is not loaded\n");
    return 1;
  }
  int bad = 0;
  auto expect = [&](const char* name, unsigned long long want) {
    const unsigned long long got = counter(name);
    std::fprintf(stderr, "  %-34s %llu (want %llu)\n", name, got, want);
    if (got != want) ++bad;
  };
  auto expect_pos = [&](const char* name) {
    const unsigned long long got = counter(name);
    std::fprintf(stderr, "  %-34s %llu (want > 0)\n", name, got);
    if (got == 0) ++bad;
  };
  std::fprintf(stderr, "hook counters after %d GEMM calls (variant %s):\n", calls, variant.c_str());
  expect("calls", calls);
  expect("declined", calls);
  expect("intercepted", 0);
  expect("failed", 0);
  for (const char* api : {"cublasDgemm_v2", "cublasDgemm_v2_64", "cublasGemmEx_64", "cublasDgemmStridedBatched",
                          "cublasDgemmStridedBatched_64", "cublasDgemmBatched", "cublasDgemmBatched_64",
                          "cublasGemmStridedBatchedEx", "cublasGemmStridedBatchedEx_64", "cublasGemmBatchedEx",
                          "cublasGemmBatchedEx_64", "cublasDgemm", "cublasZgemm_v2", "cublasZgemm_v2_64",
                          "cublasZgemm3m", "cublasZgemm3m_64", "cublasZgemmStridedBatched",
                          "cublasZgemmStridedBatched_64", "cublasZgemmBatched", "cublasZgemmBatched_64"})
    expect_pos((std::string("api:") + api).c_str());
  expect("api:cublasGemmEx", 5);
  if (variant == "off") {
    expect("declined:disabled", calls);
  } else {
    // Checked before the size: the FP32 and pedantic GemmEx, the bad leading dimension.
    expect("declined:not-fp64", 1);
    expect("declined:pedantic-math", 1);
    expect("declined:invalid-args", 1);
    if (variant == "min0") {
      // 64^3 passes the threshold 0; the null handle cannot be queried; the legacy API was not initialised.
      expect("declined:below-min-size", 0);
      expect("declined:handle-query-failed", calls - 4);
      expect("declined:legacy-not-initialised", 1);
    } else {
      expect("declined:below-min-size", calls - 3);
    }
  }
  if (bad) std::fprintf(stderr, "FAIL: %d counter(s) differ\n", bad);
  return bad ? 1 : 0;
}
