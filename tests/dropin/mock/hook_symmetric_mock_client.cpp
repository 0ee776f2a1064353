// tests/dropin/mock/hook_symmetric_mock_client.cpp — the hook's symmetric Level-3 entry points
// (cublasDsyrk_v2, cublasDsyr2k_v2, cublasDsyrkx, cublasDsymm_v2 and their _64 forms) on a CPU: this
// program links the mock libcublas.so.13 and runs under LD_PRELOAD=libozgemm_hook.so with
// OZGEMM_LIBRARY=<mock libozgemm>, whose ozgemmDsyrk... take the real library's blocked steps on the
// host (nb = MOCK_SYMMETRIC_BLOCK). Checked for uplo L/U, trans N/T, side L/R, beta 0 (with NaN in
// C's written part), 0.5 and 1, n not a multiple of the block: the written triangle against the host
// reference (reference_symmetric.hpp) within a few ulps of its magnitude, the other triangle bit for bit
// (a NaN-payload sentinel), the counters; n == 0, k == 0, alpha == 0 and invalid arguments go to
// cuBLAS with their decline reason; a failure after C was written with beta != 0 fails the call, with
// beta == 0 cuBLAS redoes it. Run by ctest (cmake/dropin.cmake) with OZGEMM_HOOK_MIN_SIZE=0.
#include <cublas_api.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../check.hpp"
#include "dropin/reference_symmetric.hpp"

namespace {

using Counter = unsigned long long (*)(const char*);
Counter counter;
unsigned long long c(const char* name) { return counter(name); }
long oz_calls() {
  const char* path = std::getenv("OZGEMM_LIBRARY");
  void* lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto f = lib ? reinterpret_cast<long (*)()>(dlsym(lib, "mock_ozgemm_calls")) : nullptr;
  const long r = f ? f() : -1;
  if (lib) dlclose(lib);
  return r;
}

// A NaN with a payload: C's entries that must not change hold it, and are compared bit for bit.
double sentinel(int64_t i) {
  const uint64_t bits = 0x7ff8000000000000ull | (0x5e17ull << 20) | uint64_t(i & 0xfffff);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// `count` values in [-4, 4] with 1/64 steps (exact in binary) from a seeded generator.
std::vector<double> values(size_t count, uint64_t seed) {
  std::vector<double> v(count);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (double& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = double(int64_t((s >> 33) % 513) - 256) / 64.0;
  }
  return v;
}

// The routines under test, all with one signature (B unused by SYRK; side unused by the rank-k ones).
enum class Routine { Syrk, Syr2k, Syrkx, Symm };
const char* const kNames[] = {"cublasDsyrk_v2", "cublasDsyr2k_v2", "cublasDsyrkx", "cublasDsymm_v2"};

struct Case {
  Routine routine;
  bool wide;  // the _64 entry point
  cublasSideMode_t side = CUBLAS_SIDE_LEFT;
  cublasFillMode_t uplo = CUBLAS_FILL_MODE_LOWER;
  cublasOperation_t trans = CUBLAS_OP_N;
  int m = 7, n = 7, k = 5;  // rank-k: C n x n (m unused); SYMM: C m x n
  double alpha = 1.5, beta = 0.5;
};

cublasStatus_t call(cublasHandle_t h, const Case& t, const double* A, int lda, const double* B, int ldb, double* C,
                    int ldc) {
  const double *al = &t.alpha, *be = &t.beta;
  const int64_t n = t.n, k = t.k, m = t.m;
  switch (t.routine) {
    case Routine::Syrk:
      return t.wide ? cublasDsyrk_v2_64(h, t.uplo, t.trans, n, k, al, A, lda, be, C, ldc)
                    : cublasDsyrk_v2(h, t.uplo, t.trans, t.n, t.k, al, A, lda, be, C, ldc);
    case Routine::Syr2k:
      return t.wide ? cublasDsyr2k_v2_64(h, t.uplo, t.trans, n, k, al, A, lda, B, ldb, be, C, ldc)
                    : cublasDsyr2k_v2(h, t.uplo, t.trans, t.n, t.k, al, A, lda, B, ldb, be, C, ldc);
    case Routine::Syrkx:
      return t.wide ? cublasDsyrkx_64(h, t.uplo, t.trans, n, k, al, A, lda, B, ldb, be, C, ldc)
                    : cublasDsyrkx(h, t.uplo, t.trans, t.n, t.k, al, A, lda, B, ldb, be, C, ldc);
    case Routine::Symm:
      return t.wide ? cublasDsymm_v2_64(h, t.side, t.uplo, m, n, al, A, lda, B, ldb, be, C, ldc)
                    : cublasDsymm_v2(h, t.side, t.uplo, t.m, t.n, al, A, lda, B, ldb, be, C, ldc);
  }
  return CUBLAS_STATUS_INTERNAL_ERROR;
}

// One call on fresh operands: its status, and whether C is right (written part within the tolerance,
// the rest bit for bit). `nan_in_c`: C's written part holds NaN before the call (beta 0 must ignore it).
struct Outcome {
  cublasStatus_t status;
  bool right;
};
Outcome run_case(cublasHandle_t h, const Case& t, uint64_t seed, bool nan_in_c = false) {
  const bool symm = t.routine == Routine::Symm;
  const bool lower = t.uplo == CUBLAS_FILL_MODE_LOWER, transposed = t.trans != CUBLAS_OP_N;
  const int rows_c = symm ? t.m : t.n;
  const int ka = symm ? (t.side == CUBLAS_SIDE_LEFT ? t.m : t.n) : 0;
  const int rows_ab = transposed ? t.k : t.n, cols_ab = transposed ? t.n : t.k;
  const int lda = (symm ? ka : rows_ab) + 1, ldb = (symm ? t.m : rows_ab) + 2, ldc = rows_c + 3;
  std::vector<double> A = values(size_t(lda) * (symm ? ka : cols_ab) + 1, seed);
  std::vector<double> B = values(size_t(ldb) * (symm ? t.n : cols_ab) + 1, seed + 1);
  std::vector<double> C = values(size_t(ldc) * t.n, seed + 2);
  if (symm) {  // the triangle SYMM must not read: NaN there
    for (int j = 0; j < ka; ++j)
      for (int i = 0; i < ka; ++i)
        if (!ozgemm::dropin::in_triangle(i, j, lower)) A[i + size_t(j) * lda] = std::nan("");
  }
  // Which entries of C the call may write: the triangle (rank-k) or all m x n (SYMM); the rest, and
  // the padding rows, hold the sentinel.
  auto written = [&](int64_t i, int64_t j) {
    return i < rows_c && (symm || ozgemm::dropin::in_triangle(i, j, lower));
  };
  for (int64_t j = 0; j < t.n; ++j)
    for (int64_t i = 0; i < ldc; ++i) {
      double& x = C[i + j * ldc];
      if (!written(i, j)) x = sentinel(i + j * ldc);
      else if (nan_in_c) x = std::nan("");
    }
  std::vector<double> ref = C;
  if (symm)
    ozgemm::dropin::reference_symm(t.side == CUBLAS_SIDE_LEFT, lower, t.m, t.n, t.alpha, A.data(), lda, B.data(), ldb,
                                   t.beta, ref.data(), ldc);
  else
    ozgemm::dropin::reference_rank_k(t.routine == Routine::Syr2k ? 2 : 1, lower, transposed, t.n, t.k, t.alpha,
                                     A.data(), lda, t.routine == Routine::Syrk ? A.data() : B.data(),
                                     t.routine == Routine::Syrk ? lda : ldb, t.beta, ref.data(), ldc);
  const cublasStatus_t st = call(h, t, A.data(), lda, B.data(), ldb, C.data(), ldc);
  bool right = true;
  for (int64_t j = 0; j < t.n; ++j)
    for (int64_t i = 0; i < ldc; ++i) {
      const double got = C[i + j * ldc], want = ref[i + j * ldc];
      const bool ok = written(i, j) ? std::fabs(got - want) <= 1e-12 * (1.0 + std::fabs(want)) : same_bits(got, want);
      if (!ok && right && st == CUBLAS_STATUS_SUCCESS)
        std::fprintf(stderr, "  %s: C(%lld, %lld) = %.17g, want %.17g (%s)\n", kNames[int(t.routine)], (long long)i,
                     (long long)j, got, want, written(i, j) ? "written" : "must be untouched");
      right = right && ok;
    }
  return {st, right};
}

}  // namespace

int main() {
  counter = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "ozgemmHookCounter"));
  if (!counter) {
    std::fprintf(stderr, "FAIL: the hook is not preloaded\n");
    return 1;
  }
  cublasHandle_t h;
  cublasCreate_v2(&h);
  uint64_t seed = 1;

  // Every routine, entry point form, uplo, trans / side, and beta (0 with NaN in C, 0.5, 1).
  int taken = 0;
  for (Routine r : {Routine::Syrk, Routine::Syr2k, Routine::Syrkx, Routine::Symm})
    for (bool wide : {false, true})
      for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
        for (int variant = 0; variant < 2; ++variant)
          for (double beta : {0.0, 0.5, 1.0}) {
            Case t{r, wide};
            t.uplo = uplo;
            t.beta = beta;
            if (r == Routine::Symm) {
              t.side = variant ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
              t.m = 8;
              t.n = 6;
            } else {
              t.trans = variant ? CUBLAS_OP_T : CUBLAS_OP_N;
            }
            const std::string api = std::string("api:") + kNames[int(r)] + (wide ? "_64" : "");
            const unsigned long long before = c("intercepted"), api_before = c(api.c_str());
            const Outcome o = run_case(h, t, seed++, beta == 0.0);
            CHECK(o.status == CUBLAS_STATUS_SUCCESS && o.right, "%s uplo %d variant %d beta %g: status %d, C %s",
                  api.c_str(), int(uplo), variant, beta, int(o.status), o.right ? "right" : "WRONG");
            CHECK(c("intercepted") == before + 1 && c(api.c_str()) == api_before + 1,
                  "%s not taken by ozgemm (intercepted %llu -> %llu)", api.c_str(), before, c("intercepted"));
            ++taken;
          }

  // Quick returns and what cuBLAS does itself: n == 0, k == 0 (C = beta C on the triangle), alpha == 0.
  {
    Case t{Routine::Syrk, false};
    t.k = 0;
    const unsigned long long empty = c("declined:empty");
    Outcome o = run_case(h, t, seed++);
    CHECK(o.status == CUBLAS_STATUS_SUCCESS && o.right && c("declined:empty") == empty + 1, "k == 0: status %d, C %s",
          int(o.status), o.right ? "right" : "WRONG");
    t.k = 5;
    t.n = 0;
    o = run_case(h, t, seed++);
    CHECK(o.status == CUBLAS_STATUS_SUCCESS && c("declined:empty") == empty + 2, "n == 0: status %d", int(o.status));
    t.n = 7;
    t.alpha = 0.0;
    const unsigned long long zero = c("declined:alpha-zero");
    o = run_case(h, t, seed++);
    CHECK(o.status == CUBLAS_STATUS_SUCCESS && o.right && c("declined:alpha-zero") == zero + 1,
          "alpha == 0: status %d, C %s", int(o.status), o.right ? "right" : "WRONG");
  }
  // Invalid arguments go to cuBLAS, which reports them.
  {
    const unsigned long long invalid = c("declined:invalid-args");
    Case t{Routine::Syrk, false};
    t.uplo = CUBLAS_FILL_MODE_FULL;
    Outcome o = run_case(h, t, seed++);
    CHECK(o.status == CUBLAS_STATUS_INVALID_VALUE, "uplo FULL: status %d", int(o.status));
    Case s{Routine::Symm, true};
    s.side = cublasSideMode_t(7);
    o = run_case(h, s, seed++);
    CHECK(o.status == CUBLAS_STATUS_INVALID_VALUE, "side 7: status %d", int(o.status));
    Case x{Routine::Syr2k, false};
    x.trans = cublasOperation_t(9);
    o = run_case(h, x, seed++);
    CHECK(o.status == CUBLAS_STATUS_INVALID_VALUE, "trans 9: status %d", int(o.status));
    std::vector<double> A(64), C(64);
    const double one = 1.0;
    CHECK(cublasDsyrk_v2(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, 7, 5, &one, A.data(), 6, &one, C.data(), 7) ==
              CUBLAS_STATUS_INVALID_VALUE,
          "lda < n must be rejected");
    CHECK(c("declined:invalid-args") == invalid + 4, "invalid-args %llu, want %llu", c("declined:invalid-args"),
          invalid + 4);
  }
  // A failure after the first block was written: beta != 0 fails the call (no redo on a half-written
  // C); beta == 0 lets cuBLAS redo it.
  {
    const unsigned long long failed = c("failed");
    setenv("MOCK_OZGEMM_FAIL_AFTER", std::to_string(oz_calls() + 1).c_str(), 1);
    Case t{Routine::Syrk, false};
    Outcome o = run_case(h, t, seed++);
    CHECK(o.status == CUBLAS_STATUS_EXECUTION_FAILED, "failure with beta != 0: status %d", int(o.status));
    setenv("MOCK_OZGEMM_FAIL_AFTER", std::to_string(oz_calls() + 1).c_str(), 1);
    t.beta = 0.0;
    o = run_case(h, t, seed++, true);
    CHECK(o.status == CUBLAS_STATUS_SUCCESS && o.right, "failure with beta == 0: status %d, C %s", int(o.status),
          o.right ? "right" : "WRONG");
    unsetenv("MOCK_OZGEMM_FAIL_AFTER");
    CHECK(c("failed") == failed + 2, "failed %llu, want %llu", c("failed"), failed + 2);
  }
  cublasDestroy_v2(h);
  std::printf("%s: %d symmetric calls taken by ozgemm, %llu declined\n", g_bad ? "FAIL" : "OK", taken, c("declined"));
  return g_bad ? 1 : 0;
}
