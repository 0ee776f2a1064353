// tests/dropin/blas_client.cpp — calls dgemm_, zgemm_, cblas_dgemm and cblas_zgemm (linked against
// the system libblas) on valid, quick-return and invalid arguments and prints one line per case: a
// hash of every bit of the C buffer (padding rows included) and what xerbla_ / cblas_xerbla received.
// Valid cblas_zgemm results are also checked against a direct complex product in the call's own
// layout (row-major indexing, op(X) = X, X^T, X^H applied literally), independently of the
// C^T = op(B)^T op(A)^T mapping the libraries use. run_client.sh runs
// it with and without the preloaded libozgemm_blas.so and requires identical output; dgemm_'s error
// numbers are also checked against reference BLAS's (BLAS/SRC/dgemm.f) here. With
// --expect-preload <variant> it checks that dgemm_ resolves into libozgemm_blas.so and its counters.
#include <dlfcn.h>

#include <cuComplex.h>

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
void zgemm_(const char*, const char*, const int*, const int*, const int*, const cuDoubleComplex*,
            const cuDoubleComplex*, const int*, const cuDoubleComplex*, const int*, const cuDoubleComplex*,
            cuDoubleComplex*, const int*, size_t, size_t);
void cblas_zgemm(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*, void*,
                 int);
}

namespace {
std::string g_err;  // what the error handlers received for the current case
int g_dgemm_calls = 0, g_cblas_calls = 0, g_zgemm_calls = 0, g_cblas_z_calls = 0;
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

// The element types: double (dgemm_, cblas_dgemm) and cuDoubleComplex (zgemm_, cblas_zgemm).
template <typename T>
struct Kind;
template <>
struct Kind<double> {
  static constexpr const char *f77 = "dgemm_", *cblas_name = "cblas_dgemm", *srname = "DGEMM ";
  static double scalar(double v) { return v; }
  static void call(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* al,
                   const double* A, const int* lda, const double* B, const int* ldb, const double* be, double* C,
                   const int* ldc) {
    ++g_dgemm_calls;
    dgemm_(ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc, 1, 1);
  }
  static void cblas(int L, int ta, int tb, int m, int n, int k, double al, const double* A, int lda, const double* B,
                    int ldb, double be, double* C, int ldc) {
    ++g_cblas_calls;
    cblas_dgemm(L, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
  }
};
template <>
struct Kind<cuDoubleComplex> {
  static constexpr const char *f77 = "zgemm_", *cblas_name = "cblas_zgemm", *srname = "ZGEMM ";
  // A complex scalar for the real value v of a case: 0 and 1 stay 0 and 1 (BLAS's special cases).
  static cuDoubleComplex scalar(double v) { return make_cuDoubleComplex(v, v == 0.0 || v == 1.0 ? 0.0 : v / 2); }
  static void call(const char* ta, const char* tb, const int* m, const int* n, const int* k, const cuDoubleComplex* al,
                   const cuDoubleComplex* A, const int* lda, const cuDoubleComplex* B, const int* ldb,
                   const cuDoubleComplex* be, cuDoubleComplex* C, const int* ldc) {
    ++g_zgemm_calls;
    zgemm_(ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc, 1, 1);
  }
  static void cblas(int L, int ta, int tb, int m, int n, int k, cuDoubleComplex al, const cuDoubleComplex* A, int lda,
                    const cuDoubleComplex* B, int ldb, cuDoubleComplex be, cuDoubleComplex* C, int ldc) {
    ++g_cblas_z_calls;
    cblas_zgemm(L, ta, tb, m, n, k, &al, A, lda, B, ldb, &be, C, ldc);
  }
};

template <typename T>
uint64_t hash(const std::vector<T>& t) {
  const double* p = reinterpret_cast<const double*>(t.data());
  const std::vector<double> v(p, p + t.size() * sizeof(T) / sizeof(double));
  uint64_t h = 1469598103934665603ull;
  for (double d : v) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    for (int i = 0; i < 8; ++i) h = (h ^ ((b >> (8 * i)) & 0xff)) * 1099511628211ull;
  }
  return h;
}

template <typename T = double>
std::vector<T> fill(size_t n, uint64_t seed, bool nan_fill = false) {
  std::vector<T> t(n);
  double* v = reinterpret_cast<double*>(t.data());
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n * sizeof(T) / sizeof(double); ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v[i] = nan_fill ? std::nan("") : double(int64_t(s % 2001) - 1000) / 256.0 + double(s % 7) * 1e-9;
  }
  return t;
}
// A matrix element set to NaN (both parts for complex data).
void set_nan(double& x) { x = std::nan(""); }
void set_nan(cuDoubleComplex& x) { x = make_cuDoubleComplex(std::nan(""), std::nan("")); }

int g_bad = 0;

// The Fortran xGEMM of element type T on a case (alpha, beta: Kind<T>::scalar of the values given).
template <typename T = double>
void f77(const char* name, char ta, char tb, int m, int n, int k, double alpha_value, int lda, int ldb,
         double beta_value, int ldc, int expect_info = 0, bool nan_c = false) {
  const bool nota = ta == 'N' || ta == 'n', notb = tb == 'N' || tb == 'n';
  const int ca = nota ? k : m, cb = notb ? n : k;
  const T alpha = Kind<T>::scalar(alpha_value), beta = Kind<T>::scalar(beta_value);
  auto A = fill<T>(size_t(std::max(lda, 1)) * std::max(ca, 1), 1);
  auto B = fill<T>(size_t(std::max(ldb, 1)) * std::max(cb, 1), 2);
  auto C = fill<T>(size_t(std::max(ldc, 1)) * std::max(n, 1), 3, nan_c);
  if (!nan_c)  // padding rows of C hold NaN: they must stay untouched
    for (int j = 0; j < n; ++j)
      for (int i = std::max(m, 0); i < ldc; ++i) set_nan(C[size_t(j) * ldc + i]);
  g_err.clear();
  Kind<T>::call(&ta, &tb, &m, &n, &k, &alpha, A.data(), &lda, B.data(), &ldb, &beta, C.data(), &ldc);
  std::printf("%-28s %s %c%c m=%d n=%d k=%d hash=%016llx %s\n", name, Kind<T>::f77, ta, tb, m, n, k,
              (unsigned long long)hash(C), g_err.c_str());
  if (expect_info >= 0) {
    char want[64] = "";
    if (expect_info > 0) std::snprintf(want, sizeof want, "xerbla(%s,%d)", Kind<T>::srname, expect_info);
    if (g_err != want) {
      std::fprintf(stderr, "FAIL %s: error report '%s', reference BLAS gives '%s'\n", name, g_err.c_str(), want);
      ++g_bad;
    }
  }
}

// max |C - (alpha op(A) op(B) + beta C0)| / (|alpha| sum |op(A)||op(B)| + |beta C0|) over the m x n
// entries, computed directly in the layout's own indexing (row-major: X(i, j) = X[i ld + j]).
double direct_error(bool row, int ta, int tb, int m, int n, int k, cuDoubleComplex alpha, const cuDoubleComplex* A,
                    int lda, const cuDoubleComplex* B, int ldb, cuDoubleComplex beta, const cuDoubleComplex* C0,
                    const cuDoubleComplex* C, int ldc) {
  auto at = [&](const cuDoubleComplex* X, int ld, int i, int j) { return row ? X[size_t(i) * ld + j] : X[size_t(j) * ld + i]; };
  // op(X)(i, j) for the CBLAS operation op (111 N, 112 T, 113 C)
  auto op = [&](int o, const cuDoubleComplex* X, int ld, int i, int j) {
    return o == 111 ? at(X, ld, i, j) : o == 112 ? at(X, ld, j, i) : cuConj(at(X, ld, j, i));
  };
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      cuDoubleComplex s = make_cuDoubleComplex(0, 0);
      double scale = 0;
      for (int l = 0; l < k; ++l) {
        const cuDoubleComplex p = cuCmul(op(ta, A, lda, i, l), op(tb, B, ldb, l, j));
        s = cuCadd(s, p);
        scale += cuCabs(op(ta, A, lda, i, l)) * cuCabs(op(tb, B, ldb, l, j));
      }
      const cuDoubleComplex want = cuCadd(cuCmul(alpha, s), cuCmul(beta, at(C0, ldc, i, j)));
      const double denom = cuCabs(alpha) * scale + cuCabs(cuCmul(beta, at(C0, ldc, i, j)));
      worst = std::max(worst, cuCabs(cuCsub(at(C, ldc, i, j), want)) / (denom > 0 ? denom : 1.0));
    }
  return worst;
}

template <typename T = double>
void cblas(const char* name, int layout, int ta, int tb, int m, int n, int k, double alpha_value, int lda, int ldb,
           double beta_value, int ldc, bool nan_c = false) {
  const bool row = layout == 101;
  const bool nota = ta == 111, notb = tb == 111;
  const T alpha = Kind<T>::scalar(alpha_value), beta = Kind<T>::scalar(beta_value);
  // Storage: column-major A is rows x cols with ld >= rows; row-major with ld >= cols.
  const int ar = nota ? m : k, ac = nota ? k : m, br = notb ? k : n, bc = notb ? n : k;
  const size_t na = size_t(std::max(lda, 1)) * std::max(row ? ar : ac, 1);
  const size_t nb = size_t(std::max(ldb, 1)) * std::max(row ? br : bc, 1);
  const size_t nc = size_t(std::max(ldc, 1)) * std::max(row ? m : n, 1);
  auto A = fill<T>(na, 4), B = fill<T>(nb, 5), C = fill<T>(nc, 6, nan_c);
  const auto C0 = C;
  g_err.clear();
  Kind<T>::cblas(layout, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
  std::printf("%-28s %s L%d %d%d m=%d n=%d k=%d hash=%016llx %s\n", name, Kind<T>::cblas_name, layout, ta, tb, m, n, k,
              (unsigned long long)hash(C), g_err.c_str());
  if constexpr (sizeof(T) == sizeof(cuDoubleComplex)) {
    if (g_err.empty() && !nan_c && m > 0 && n > 0) {
      // 64 u covers k <= 9 products and their sums with room; a wrong operation is O(1) off.
      const double err = direct_error(row, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, C0.data(),
                                      C.data(), ldc);
      if (!(err <= 64 * 0x1p-53)) {
        std::fprintf(stderr, "FAIL %s: cblas_zgemm L%d %d%d differs from the direct product (relative %.3g)\n", name,
                     layout, ta, tb, err);
        ++g_bad;
      }
    }
  }
}

// cblas_xgemm on an m x n x k case in both layouts, every operation pair, beta 0 (C full of NaN) and
// 1.5, padded leading dimensions.
template <typename T>
void cblas_every_op(int m, int n, int k, double alpha) {
  for (int layout : {101, 102})
    for (int ta : {111, 112, 113})
      for (int tb : {111, 112, 113})
        for (double beta : {0.0, 1.5}) {
          const bool row = layout == 101, nota = ta == 111, notb = tb == 111;
          const int ar = nota ? m : k, ac = nota ? k : m, br = notb ? k : n, bc = notb ? n : k;
          cblas<T>("valid", layout, ta, tb, m, n, k, alpha, (row ? ac : ar) + 1, (row ? bc : br) + 2, beta,
                   (row ? n : m) + 1, beta == 0.0);
        }
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
  cblas_every_op<double>(6, 9, 4, 0.5);
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

  // zgemm_ and cblas_zgemm: every operation pair (C is the conjugate transpose), both layouts,
  // padded leading dimensions, beta 0 with NaN in C, quick returns, reference ZGEMM's error numbers.
  using Z = cuDoubleComplex;
  for (char ta : {'N', 'T', 'C', 'c'})
    for (char tb : {'N', 'T', 'C', 't'})
      for (double beta : {0.0, 1.0, -0.5}) {
        const int m = 5, n = 6, k = 4;
        const bool nota = ta == 'N', notb = tb == 'N';
        f77<Z>("valid", ta, tb, m, n, k, 1.25, (nota ? m : k) + 1, (notb ? k : n) + 2, beta, m + 2, 0, beta == 0.0);
      }
  f77<Z>("valid 40x33x20 CC", 'C', 'C', 40, 33, 20, -0.75, 21, 34, 0.5, 41);
  f77<Z>("k=0 beta=2", 'N', 'N', 5, 4, 0, 1.0, 5, 1, 2.0, 5);
  f77<Z>("alpha=0 beta=0 (NaN C)", 'C', 'N', 5, 4, 3, 0.0, 3, 3, 0.0, 5, 0, true);
  f77<Z>("bad transa", 'X', 'N', 4, 4, 4, 1.0, 4, 4, 0.0, 4, 1);
  f77<Z>("bad transb", 'N', 'Q', 4, 4, 4, 1.0, 4, 4, 0.0, 4, 2);
  f77<Z>("k<0", 'C', 'N', 4, 4, -1, 1.0, 4, 4, 0.0, 4, 5);
  f77<Z>("lda<k (C)", 'C', 'N', 4, 4, 5, 1.0, 4, 5, 0.0, 4, 8);
  f77<Z>("ldb<n (C)", 'N', 'C', 4, 6, 5, 1.0, 4, 5, 0.0, 4, 10);
  f77<Z>("ldc<m", 'N', 'N', 4, 4, 4, 1.0, 4, 4, 0.0, 3, 13);
  cblas_every_op<Z>(6, 7, 5, -0.5);
  cblas<Z>("valid 30x20x40 row CT", 101, 113, 112, 30, 20, 40, 1.0, 30, 40, 0.25, 21);
  cblas<Z>("alpha=0", 101, 113, 111, 5, 5, 5, 0.0, 5, 5, 2.0, 5);
  cblas<Z>("bad layout", 100, 111, 111, 4, 4, 4, 1.0, 4, 4, 0.0, 4);
  cblas<Z>("bad transb row", 101, 111, 114, 4, 4, 4, 1.0, 4, 4, 0.0, 4);
  cblas<Z>("lda bad row (C)", 101, 113, 111, 4, 5, 6, 1.0, 3, 5, 0.0, 5);
  cblas<Z>("ldc bad row", 101, 111, 111, 4, 5, 6, 1.0, 6, 5, 0.0, 4);
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
    const int calls = g_dgemm_calls + g_cblas_calls + g_zgemm_calls + g_cblas_z_calls;
    std::fprintf(stderr, "blas counters after %d dgemm_, %d cblas_dgemm, %d zgemm_ and %d cblas_zgemm calls (variant "
                 "%s):\n", g_dgemm_calls, g_cblas_calls, g_zgemm_calls, g_cblas_z_calls, variant.c_str());
    expect("calls", calls);
    expect("api:dgemm_", g_dgemm_calls);
    expect("api:cblas_dgemm", g_cblas_calls);
    expect("api:zgemm_", g_zgemm_calls);
    expect("api:cblas_zgemm", g_cblas_z_calls);
    const int invalid = 14 + 12 + 6 + 4;  // the invalid dgemm_, cblas_dgemm, zgemm_ and cblas_zgemm cases above
    const bool mock = variant.rfind("mock", 0) == 0;
    if (!mock) {
      expect("declined", calls);
      expect("intercepted", 0);
    }
    expect("declined:invalid-args", invalid);
    if (variant == "off") {
      expect("declined:disabled", calls - invalid);
    } else if (variant == "invalid-setting") {
      expect("declined:invalid-setting", calls - invalid);
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
      // What the mock ran (run_client.sh's settings): every offloaded call counted as that, by
      // element type (complex data: Ozaki-II in FIXED mode, 16 moduli by default; native ZGEMM in
      // FP64 mode).
      const long long real = (long long)counter("real:intercepted"), complex = (long long)counter("complex:intercepted");
      expect("real:gemms", real);
      expect("complex:gemms", complex);
      if (complex == 0) expect("complex:intercepted", -1);  // zgemm_ and cblas_zgemm calls were offloaded
      if (variant == "mock") {
        expect("real:emulated:ozaki1", real);
        expect("real:slices:7", real);
        expect("complex:emulated:ozaki2", complex);
        expect("complex:moduli:16", complex);
      } else if (variant == "mock-ozaki2") {
        expect("emulated:ozaki2", real + complex);
        expect("moduli:14", real + complex);
        expect("complex:moduli:14", complex);
        expect("ozgemm_native", 0);
      } else if (variant == "mock-fp64-ozaki2") {
        expect("real:emulated:ozaki2", real);
        expect("real:moduli:12", real);
        expect("complex:ozgemm_native", complex);
        expect("native:mock: fp64 mode ran native ZGEMM", complex);
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
