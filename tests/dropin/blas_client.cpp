// tests/dropin/blas_client.cpp — calls dgemm_ and cblas_dgemm (linked against the system libblas)
// on valid, quick-return and invalid arguments and prints one line per case: a hash of every bit of
// the C buffer (padding rows included) and what xerbla_ / cblas_xerbla received. run_client.sh runs
// it with and without the preloaded libozgemm_blas.so and requires identical output; dgemm_'s error
// numbers are also checked against reference BLAS's (BLAS/SRC/dgemm.f) here. With
// --expect-preload <variant> it checks that dgemm_ resolves into libozgemm_blas.so and its counters.
#include <dlfcn.h>

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
}

namespace {
std::string g_err;  // what the error handlers received for the current case
int g_dgemm_calls = 0, g_cblas_calls = 0;
}  // namespace

// The program's own error handlers (exported: ENABLE_EXPORTS), as the netlib testers have.
extern "C" void xerbla_(const char* srname, const int* info, size_t len) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "xerbla(%.*s,%d)", int(len > 6 ? 6 : len), srname, *info);
  g_err += buf;
}
extern "C" void cblas_xerbla(int p, const char* rout, const char* form, ...) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "cblas_xerbla(%s,%d)", rout, p);
  g_err += buf;
}

namespace {

uint64_t hash(const std::vector<double>& v) {
  uint64_t h = 1469598103934665603ull;
  for (double d : v) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    for (int i = 0; i < 8; ++i) h = (h ^ ((b >> (8 * i)) & 0xff)) * 1099511628211ull;
  }
  return h;
}

std::vector<double> fill(size_t n, uint64_t seed, bool nan_fill = false) {
  std::vector<double> v(n);
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto& x : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x = nan_fill ? std::nan("") : double(int64_t(s % 2001) - 1000) / 256.0 + double(s % 7) * 1e-9;
  }
  return v;
}

int g_bad = 0;

void f77(const char* name, char ta, char tb, int m, int n, int k, double alpha, int lda, int ldb, double beta,
         int ldc, int expect_info = 0, bool nan_c = false) {
  const bool nota = ta == 'N' || ta == 'n', notb = tb == 'N' || tb == 'n';
  const int ca = nota ? k : m, cb = notb ? n : k;
  auto A = fill(size_t(std::max(lda, 1)) * std::max(ca, 1), 1), B = fill(size_t(std::max(ldb, 1)) * std::max(cb, 1), 2);
  auto C = fill(size_t(std::max(ldc, 1)) * std::max(n, 1), 3, nan_c);
  if (!nan_c)  // padding rows of C hold NaN: they must stay untouched
    for (int j = 0; j < n; ++j)
      for (int i = std::max(m, 0); i < ldc; ++i) C[size_t(j) * ldc + i] = std::nan("");
  g_err.clear();
  ++g_dgemm_calls;
  dgemm_(&ta, &tb, &m, &n, &k, &alpha, A.data(), &lda, B.data(), &ldb, &beta, C.data(), &ldc, 1, 1);
  std::printf("%-28s dgemm_ %c%c m=%d n=%d k=%d hash=%016llx %s\n", name, ta, tb, m, n, k,
              (unsigned long long)hash(C), g_err.c_str());
  if (expect_info >= 0) {
    char want[64] = "";
    if (expect_info > 0) std::snprintf(want, sizeof want, "xerbla(DGEMM ,%d)", expect_info);
    if (g_err != want) {
      std::fprintf(stderr, "FAIL %s: error report '%s', reference BLAS gives '%s'\n", name, g_err.c_str(), want);
      ++g_bad;
    }
  }
}

void cblas(const char* name, int layout, int ta, int tb, int m, int n, int k, double alpha, int lda, int ldb,
           double beta, int ldc, bool nan_c = false) {
  const bool row = layout == 101;
  const bool nota = ta == 111, notb = tb == 111;
  // Storage: column-major A is rows x cols with ld >= rows; row-major with ld >= cols.
  const int ar = nota ? m : k, ac = nota ? k : m, br = notb ? k : n, bc = notb ? n : k;
  const size_t na = size_t(std::max(lda, 1)) * std::max(row ? ar : ac, 1);
  const size_t nb = size_t(std::max(ldb, 1)) * std::max(row ? br : bc, 1);
  const size_t nc = size_t(std::max(ldc, 1)) * std::max(row ? m : n, 1);
  auto A = fill(na, 4), B = fill(nb, 5), C = fill(nc, 6, nan_c);
  g_err.clear();
  ++g_cblas_calls;
  cblas_dgemm(layout, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
  std::printf("%-28s cblas_dgemm L%d %d%d m=%d n=%d k=%d hash=%016llx %s\n", name, layout, ta, tb, m, n, k,
              (unsigned long long)hash(C), g_err.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  // Valid calls: every operation pair (upper and lower case), padded leading dimensions, beta 0
  // (C full of NaN must not matter), 1 and -0.5.
  const char ops[] = {'N', 'T', 'C', 'n', 't', 'c'};
  for (char ta : ops)
    for (char tb : ops)
      for (double beta : {0.0, 1.0, -0.5}) {
        const int m = 7, n = 5, k = 6;
        const bool nota = ta == 'N' || ta == 'n', notb = tb == 'N' || tb == 'n';
        f77("valid", ta, tb, m, n, k, 1.25, (nota ? m : k) + 2, (notb ? k : n) + 1, beta, m + 3, 0, beta == 0.0);
      }
  f77("valid 96x80x64", 'N', 'N', 96, 80, 64, -0.75, 100, 64, 0.5, 97);
  f77("valid 33x65x129 TT", 'T', 'T', 33, 65, 129, 2.0, 129, 65, 0.0, 40);
  // Quick returns and alpha == 0 (C = beta C, A and B not read; beta == 0 zeroes NaN).
  f77("m=0", 'N', 'N', 0, 5, 4, 1.0, 1, 4, 2.0, 1);
  f77("n=0", 'N', 'N', 5, 0, 4, 1.0, 5, 4, 2.0, 5);
  f77("k=0 beta=2", 'N', 'N', 5, 4, 0, 1.0, 5, 1, 2.0, 5);
  f77("k=0 beta=1", 'N', 'N', 5, 4, 0, 1.0, 5, 1, 1.0, 5);
  f77("alpha=0 beta=0 (NaN C)", 'N', 'N', 5, 4, 3, 0.0, 5, 3, 0.0, 5, 0, true);
  f77("alpha=0 beta=3", 'T', 'N', 5, 4, 3, 0.0, 3, 3, 3.0, 6);
  // Invalid arguments: reference DGEMM's parameter numbers, the first failing one reported.
  f77("bad transa", 'X', 'N', 4, 4, 4, 1.0, 4, 4, 0.0, 4, 1);
  f77("bad transb", 'N', '*', 4, 4, 4, 1.0, 4, 4, 0.0, 4, 2);
  f77("bad transa+m", 'Q', 'N', -1, 4, 4, 1.0, 4, 4, 0.0, 4, 1);
  f77("m<0", 'N', 'N', -1, 4, 4, 1.0, 4, 4, 0.0, 4, 3);
  f77("n<0", 'N', 'N', 4, -1, 4, 1.0, 4, 4, 0.0, 4, 4);
  f77("k<0", 'N', 'N', 4, 4, -1, 1.0, 4, 4, 0.0, 4, 5);
  f77("m<0 and lda bad", 'N', 'N', -2, 4, 4, 1.0, 0, 4, 0.0, 4, 3);
  f77("lda<m (N)", 'N', 'N', 4, 4, 4, 1.0, 3, 4, 0.0, 4, 8);
  f77("lda<k (T)", 'T', 'N', 4, 4, 5, 1.0, 4, 5, 0.0, 4, 8);
  f77("lda=0 m=0", 'N', 'N', 0, 4, 4, 1.0, 0, 4, 0.0, 1, 8);
  f77("ldb<k (N)", 'N', 'N', 4, 4, 5, 1.0, 4, 4, 0.0, 4, 10);
  f77("ldb<n (T)", 'N', 'T', 4, 6, 5, 1.0, 4, 5, 0.0, 4, 10);
  f77("ldc<m", 'N', 'N', 4, 4, 4, 1.0, 4, 4, 0.0, 3, 13);
  f77("ldb and ldc bad", 'N', 'N', 4, 4, 4, 1.0, 4, 3, 0.0, 3, 10);

  // cblas_dgemm: both layouts, every operation pair, padded leading dimensions.
  for (int layout : {101, 102})
    for (int ta : {111, 112, 113})
      for (int tb : {111, 112, 113})
        for (double beta : {0.0, 1.5}) {
          const int m = 6, n = 9, k = 4;
          const bool row = layout == 101, nota = ta == 111, notb = tb == 111;
          const int ar = nota ? m : k, ac = nota ? k : m, br = notb ? k : n, bc = notb ? n : k;
          cblas("valid", layout, ta, tb, m, n, k, 0.5, (row ? ac : ar) + 1, (row ? bc : br) + 2, beta,
                (row ? n : m) + 1, beta == 0.0);
        }
  cblas("valid 70x50x90 row", 101, 111, 112, 70, 50, 90, 1.0, 90, 90, 0.25, 50);
  cblas("alpha=0", 102, 111, 111, 5, 5, 5, 0.0, 5, 5, 2.0, 5);
  cblas("k=0", 101, 111, 111, 5, 5, 0, 1.0, 1, 5, 2.0, 5);
  // Invalid: whatever the system cblas_dgemm reports, the preloaded library must report the same.
  cblas("bad layout", 100, 111, 111, 4, 4, 4, 1.0, 4, 4, 0.0, 4);
  cblas("bad transa col", 102, 110, 111, 4, 4, 4, 1.0, 4, 4, 0.0, 4);
  cblas("bad transb row", 101, 111, 114, 4, 4, 4, 1.0, 4, 4, 0.0, 4);
  cblas("m<0 col", 102, 111, 111, -1, 4, 4, 1.0, 4, 4, 0.0, 4);
  cblas("m<0 row", 101, 111, 111, -1, 4, 4, 1.0, 4, 4, 0.0, 4);
  cblas("n<0 row", 101, 111, 111, 4, -1, 4, 1.0, 4, 4, 0.0, 4);
  cblas("k<0 row", 101, 111, 111, 4, 4, -1, 1.0, 4, 4, 0.0, 4);
  cblas("lda bad col", 102, 111, 111, 4, 4, 4, 1.0, 3, 4, 0.0, 4);
  cblas("lda bad row", 101, 111, 111, 4, 5, 6, 1.0, 5, 5, 0.0, 5);
  cblas("ldb bad row", 101, 111, 111, 4, 5, 6, 1.0, 6, 4, 0.0, 5);
  cblas("ldc bad row", 101, 111, 111, 4, 5, 6, 1.0, 6, 5, 0.0, 4);
  cblas("ldc bad col", 102, 112, 112, 4, 5, 6, 1.0, 6, 5, 0.0, 3);
  std::fflush(stdout);

  if (argc >= 3 && std::strcmp(argv[1], "--expect-preload") == 0) {
    const std::string variant = argv[2];
    Dl_info info{};
    void* f = dlsym(RTLD_DEFAULT, "dgemm_");
    const char* where = f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "?";
    std::fprintf(stderr, "dgemm_ resolves to %s\n", where);
    if (!std::strstr(where, "libozgemm_blas")) {
      std::fprintf(stderr, "FAIL: dgemm_ is not libozgemm_blas.so's\n");
      ++g_bad;
    }
    auto counter = reinterpret_cast<unsigned long long (*)(const char*)>(dlsym(RTLD_DEFAULT, "ozgemmBlasCounter"));
    if (!counter) {
      std::fprintf(stderr, "FAIL: ozgemmBlasCounter not found\n");
      return 1;
    }
    auto expect = [&](const char* name, long long want) {  // want < 0: > 0 expected
      const unsigned long long got = counter(name);
      std::fprintf(stderr, "  %-28s %llu (want %s%lld)\n", name, got, want < 0 ? "> " : "", want < 0 ? 0 : want);
      if (want < 0 ? got == 0 : got != (unsigned long long)want) ++g_bad;
    };
    const int calls = g_dgemm_calls + g_cblas_calls;
    std::fprintf(stderr, "blas counters after %d dgemm_ and %d cblas_dgemm calls (variant %s):\n", g_dgemm_calls,
                 g_cblas_calls, variant.c_str());
    expect("calls", calls);
    expect("api:dgemm_", g_dgemm_calls);
    expect("api:cblas_dgemm", g_cblas_calls);
    const bool mock = variant.rfind("mock", 0) == 0;
    if (!mock) {
      expect("declined", calls);
      expect("intercepted", 0);
    }
    expect("declined:invalid-args", 14 + 12);  // the invalid dgemm_ and cblas_dgemm cases above
    if (variant == "off") {
      expect("declined:disabled", calls - 26);
    } else if (variant == "invalid-setting") {
      expect("declined:invalid-setting", calls - 26);
    } else if (mock) {
      // every valid call past the quick returns went through the (mock) GPU path
      expect("declined:below-min-size", 0);
      expect("declined:ozgemm-unavailable", 0);
      expect("declined:quick-return", -1);
      expect("gemms", (long long)counter("intercepted"));
      const int failures = variant == "mock-partial" ? 1 : 0;
      expect("failed", failures);
      expect("declined:offload-failed", failures);
      expect("declined", (long long)(counter("declined:invalid-args") + counter("declined:quick-return") +
                                     counter("declined:offload-failed")));
      expect("intercepted", calls - (long long)counter("declined"));
      // What the mock ran (run_client.sh's settings): every offloaded call counted as that.
      const long long offloaded = (long long)counter("intercepted");
      if (variant == "mock") {
        expect("emulated:ozaki1", offloaded);
        expect("slices:7", offloaded);
      } else if (variant == "mock-ozaki2" || variant == "mock-fp64-ozaki2") {
        expect("emulated:ozaki2", offloaded);
        expect(variant == "mock-ozaki2" ? "moduli:14" : "moduli:12", offloaded);
        expect("ozgemm_native", 0);
      }
    } else {
      expect("declined:quick-return", -1);
      if (variant == "min0")
        expect("declined:ozgemm-unavailable", -1);
      else
        expect("declined:below-min-size", -1);
    }
  }
  if (g_bad) std::fprintf(stderr, "FAIL: %d check(s)\n", g_bad);
  return g_bad ? 1 : 0;
}
