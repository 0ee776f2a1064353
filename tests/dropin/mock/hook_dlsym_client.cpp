// tests/dropin/mock/hook_dlsym_client.cpp — libozgemm_hook.so's dlsym (hook_dlsym.cpp) on a CPU, as
// XLA's stubs use cuBLAS: this program links no cuBLAS; it dlopen()s the mock libcublas.so.13 and
// libcublasLt.so.13 (paths MOCK_CUBLAS, MOCK_CUBLASLT) with RTLD_LOCAL, looks every function up with
// dlsym on those handles and calls cublasDgemm_v2 and cublasLtMatmul through what it got, under
// LD_PRELOAD=libozgemm_hook.so with OZGEMM_LIBRARY=<mock libozgemm>. HOOK_DLSYM_EXPECT says what the
// lookups must give:
//   redirect  (default settings) the hook's function for every name the hook exports: both calls
//             intercepted, with results equal bit for bit to the hook-off run (ozgemmHookSetEnabled(0):
//             the hook forwards to the mock library the lookup found), and dlsym-redirects counted;
//   off       (OZGEMM_HOOK_DLSYM=0) the mock's functions: the calls never reach the hook.
// Either way: other names give the mock's functions, a failed lookup gives null and a dlerror, a
// successful one leaves no dlerror; dlsym(RTLD_NEXT, ...) still means "after this program" (the
// preloaded hook's function) and RTLD_DEFAULT the global scope; a reference to the older
// dlsym@GLIBC_2.2.5 (x86_64) reaches the hook's dlsym as well.
#include <cublasLt.h>
#include <cublas_api.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../check.hpp"
#include "client_support.hpp"

#if defined(__x86_64__)
// dlsym under its base version (as programs linked against glibc before 2.34 reference it).
extern "C" void* dlsym_base_version(void* handle, const char* name);
__asm__(".symver dlsym_base_version, dlsym@GLIBC_2.2.5");
#endif

namespace {

using Counter = unsigned long long (*)(const char*);
using SetEnabled = int (*)(int);
Counter counter;
SetEnabled set_enabled;

// The file of the object that defines address p ("" when none).
std::string object_of(const void* p) {
  Dl_info info;
  return p && dladdr(p, &info) && info.dli_fname ? info.dli_fname : "";
}
bool in_hook(const void* p) { return object_of(p).find("libozgemm_hook") != std::string::npos; }

// Looks `name` up on `lib` and checks that the answer is the hook's (redirect) or the library's own.
void* lookup(void* lib, const char* name, bool hooks) {
  dlerror();
  void* p = dlsym(lib, name);
  const char* err = dlerror();
  CHECK(p, "dlsym(%s) found nothing (%s)", name, err ? err : "no dlerror");
  CHECK(!err, "dlsym(%s) succeeded but left the dlerror \"%s\"", name, err);
  CHECK(in_hook(p) == hooks, "dlsym(%s) gave a function of %s; expected %s", name, object_of(p).c_str(),
        hooks ? "the hook" : "the mock library");
  return p;
}

constexpr int kM = 13, kN = 11, kK = 9;

// One cublasDgemm_v2 (NT) through the looked-up functions; C with its status appended.
std::vector<double> dgemm(void* cublas, void* dgemm_fn) {
  auto create = reinterpret_cast<cublasStatus_t (*)(cublasHandle_t*)>(dlsym(cublas, "cublasCreate_v2"));
  auto destroy = reinterpret_cast<cublasStatus_t (*)(cublasHandle_t)>(dlsym(cublas, "cublasDestroy_v2"));
  auto gemm = reinterpret_cast<decltype(&cublasDgemm_v2)>(dgemm_fn);
  cublasHandle_t h = nullptr;
  CHECK(create && destroy && create(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate_v2 failed");
  std::vector<double> A = seeded_values(kM * kK, 1), B = seeded_values(kN * kK, 2), C = seeded_values(kM * kN, 3);
  const double alpha = 1.5, beta = -0.75;
  const cublasStatus_t st =
      gemm(h, CUBLAS_OP_N, CUBLAS_OP_T, kM, kN, kK, &alpha, A.data(), kM, B.data(), kN, &beta, C.data(), kM);
  destroy(h);
  C.push_back(double(st));
  return C;
}

// One cublasLtMatmul (NN, D in place of C, host pointer mode) through the looked-up functions; D
// with its status appended.
std::vector<double> lt_matmul(void* lt, void* matmul_fn) {
  auto sym = [&](const char* n) { return dlsym(lt, n); };
  auto create = reinterpret_cast<decltype(&cublasLtCreate)>(sym("cublasLtCreate"));
  auto destroy = reinterpret_cast<decltype(&cublasLtDestroy)>(sym("cublasLtDestroy"));
  auto desc_create = reinterpret_cast<decltype(&cublasLtMatmulDescCreate)>(sym("cublasLtMatmulDescCreate"));
  auto desc_destroy = reinterpret_cast<decltype(&cublasLtMatmulDescDestroy)>(sym("cublasLtMatmulDescDestroy"));
  auto layout_create = reinterpret_cast<decltype(&cublasLtMatrixLayoutCreate)>(sym("cublasLtMatrixLayoutCreate"));
  auto layout_destroy = reinterpret_cast<decltype(&cublasLtMatrixLayoutDestroy)>(sym("cublasLtMatrixLayoutDestroy"));
  auto matmul = reinterpret_cast<decltype(&cublasLtMatmul)>(matmul_fn);
  CHECK(create && destroy && desc_create && desc_destroy && layout_create && layout_destroy, "cuBLASLt lookups failed");
  cublasLtHandle_t h = nullptr;
  cublasLtMatmulDesc_t md = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  create(&h);
  desc_create(&md, CUBLAS_COMPUTE_64F, CUDA_R_64F);
  layout_create(&la, CUDA_R_64F, kM, kK, kM);
  layout_create(&lb, CUDA_R_64F, kK, kN, kK);
  layout_create(&lc, CUDA_R_64F, kM, kN, kM);
  std::vector<double> A = seeded_values(kM * kK, 4), B = seeded_values(kK * kN, 5), C = seeded_values(kM * kN, 6), workspace(32);
  const double alpha = 0.5, beta = 2.0;
  const cublasStatus_t st = matmul(h, md, &alpha, A.data(), la, B.data(), lb, &beta, C.data(), lc, C.data(), lc,
                                   nullptr, workspace.data(), workspace.size() * sizeof(double),
                                   reinterpret_cast<cudaStream_t>(uintptr_t(0x1234)));
  for (auto l : {la, lb, lc}) layout_destroy(l);
  desc_destroy(md);
  destroy(h);
  C.push_back(double(st));
  return C;
}

bool same(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

// fn run with the hook on and off: the same bits and status SUCCESS; intercepted (counted) only when
// the lookup gave the hook's function.
template <typename Run>
void check_call(const char* what, Run run, bool hooks) {
  const unsigned long long intercepted = counter("intercepted"), calls = counter("calls");
  const std::vector<double> on = run();
  const unsigned long long on_intercepted = counter("intercepted") - intercepted, on_calls = counter("calls") - calls;
  set_enabled(0);
  const std::vector<double> off = run();
  set_enabled(1);
  CHECK(on.back() == double(CUBLAS_STATUS_SUCCESS), "%s: status %g", what, on.back());
  CHECK(same(on, off), "%s: the result with the hook differs from the hook-off run", what);
  CHECK(on_intercepted == (hooks ? 1u : 0u), "%s: %llu calls intercepted, expected %d", what, on_intercepted, hooks);
  CHECK(hooks || on_calls == 0, "%s: %llu calls reached the hook with its dlsym off", what, on_calls);
}

}  // namespace

int main() {
  if (!find_hook(&counter, &set_enabled)) return 1;
  const char* expect = std::getenv("HOOK_DLSYM_EXPECT");
  const bool hooks = !expect || std::strcmp(expect, "off") != 0;
  void* cublas = dlopen(MOCK_CUBLAS, RTLD_NOW | RTLD_LOCAL);
  void* lt = dlopen(MOCK_CUBLASLT, RTLD_NOW | RTLD_LOCAL);
  if (!cublas || !lt) {
    std::fprintf(stderr, "FAIL: cannot dlopen the mocks: %s\n", dlerror());
    return 1;
  }

  // Every kind of name the hook exports (GEMM, Ex, symmetric, legacy, destroy; cuBLASLt).
  void* dgemm_fn = lookup(cublas, "cublasDgemm_v2", hooks);
  for (const char* n : {"cublasDgemm_v2_64", "cublasGemmEx", "cublasZgemmStridedBatched", "cublasDsyrk_v2",
                        "cublasDsymm_v2_64", "cublasDestroy_v2", "cublasDgemm", "cublasInit", "cublasShutdown",
                        "cublasSetKernelStream"})
    lookup(cublas, n, hooks);
  void* matmul_fn = lookup(lt, "cublasLtMatmul", hooks);
  lookup(lt, "cublasLtDestroy", hooks);
  // Names the hook does not export, or not cuBLAS's: the library's own.
  for (const char* n : {"cublasCreate_v2", "cublasGetStream_v2", "mock_cublas_native_calls"}) lookup(cublas, n, false);
  lookup(lt, "cublasLtMatmulDescGetAttribute", false);
  dlerror();
  CHECK(!dlsym(cublas, "cublasNoSuchFunction") && dlerror(), "a missing name must give null and a dlerror");
  // The hook's own library handle: its functions, unchanged.
  if (void* self = dlopen(object_of(reinterpret_cast<const void*>(counter)).c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    CHECK(in_hook(dlsym(self, "cublasDgemm_v2")), "dlsym(hook, cublasDgemm_v2) is not the hook's");
    dlclose(self);
  } else {
    CHECK(false, "cannot dlopen the hook by its path");
  }

  // RTLD_NEXT from this program: the next definition in the global scope, the preloaded hook's (the
  // mocks are RTLD_LOCAL); a dlsym that took the hook for the caller would find none.
  void* next = dlsym(RTLD_NEXT, "cublasDgemm_v2");
  CHECK(next && in_hook(next) && next == dlsym(RTLD_DEFAULT, "cublasDgemm_v2"),
        "dlsym(RTLD_NEXT, cublasDgemm_v2) gave %p (%s), expected the hook's", next, object_of(next).c_str());
  CHECK(dlsym(RTLD_NEXT, "getenv") == reinterpret_cast<void*>(&getenv), "dlsym(RTLD_NEXT, getenv) is not libc's");
  CHECK(!dlsym(RTLD_DEFAULT, "cublasGetStream_v2"), "RTLD_DEFAULT must not see the RTLD_LOCAL mock");
#if defined(__x86_64__)
  void* old = dlsym_base_version(cublas, "cublasDgemm_v2");
  CHECK(old && in_hook(old) == hooks, "dlsym@GLIBC_2.2.5(cublasDgemm_v2) gave a function of %s",
        object_of(old).c_str());
#endif

  check_call("cublasDgemm_v2", [&] { return dgemm(cublas, dgemm_fn); }, hooks);
  check_call("cublasLtMatmul", [&] { return lt_matmul(lt, matmul_fn); }, hooks);
  const unsigned long long redirects = counter("dlsym-redirects");
  CHECK(hooks ? redirects > 0 : redirects == 0, "dlsym-redirects %llu", redirects);
  if (g_bad) return 1;
  std::printf("hook_dlsym_client: OK (%s, %llu dlsym redirects)\n", hooks ? "redirect" : "off", redirects);
  return 0;
}
