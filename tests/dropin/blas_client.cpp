// tests/dropin/blas_client.cpp — calls dgemm_, zgemm_, cblas_dgemm and cblas_zgemm (linked against
// the system libblas) on valid, quick-return and invalid arguments and prints one line per case: a
// hash of every bit of the C buffer (padding rows included) and what xerbla_ / cblas_xerbla received;
// likewise dsyrk_, dsymm_, cblas_dsyrk and cblas_dsymm, checked against the system's own routines
// (symmetric_cases below).
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
#include <cstdlib>
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
void dsyrk_(const char*, const char*, const int*, const int*, const double*, const double*, const int*, const double*,
            double*, const int*, size_t, size_t);
void dsymm_(const char*, const char*, const int*, const int*, const double*, const double*, const int*, const double*,
            const int*, const double*, double*, const int*, size_t, size_t);
void cblas_dsyrk(int, int, int, int, int, double, const double*, int, double, double*, int);
void cblas_dsymm(int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
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


// ---- DSYRK and DSYMM (dsyrk_, cblas_dsyrk, dsymm_, cblas_dsymm) ----------------------------------
// Each result is compared with the system BLAS's own Fortran routine (dlsym on libblas.so.3's handle,
// which never finds the preloaded library) run on a copy, the CBLAS forms with a direct product in the
// call's own layout (row-major indexing, op applied literally; the system's cblas_dsyrk would call
// the preloaded dsyrk_): the written entries within rounding (the mock's
// blocked SYRK rounds differently from reference DSYRK), every other entry of C (the other triangle,
// padding rows) bit for bit as it was. C's written entries hold NaN when beta == 0; DSYMM's A holds
// NaN outside its uplo triangle (never read). The printed line says only what must be the same with
// and without the preload (ok, or what differed, and what xerbla_ received).
using SyrkF77 = void (*)(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
                         const double*, double*, const int*, size_t, size_t);
using SymmF77 = void (*)(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
                         const double*, const int*, const double*, double*, const int*, size_t, size_t);
struct SystemSymmetric {
  SyrkF77 syrk = nullptr;
  SymmF77 symm = nullptr;
};
const SystemSymmetric& system_symmetric() {
  static const SystemSymmetric s = [] {
    SystemSymmetric r;
    void* lib = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return r;
    r.syrk = reinterpret_cast<SyrkF77>(dlsym(lib, "dsyrk_"));
    r.symm = reinterpret_cast<SymmF77>(dlsym(lib, "dsymm_"));
    return r;
  }();
  return s;
}

// Calls per entry point: dsyrk_, cblas_dsyrk, dsymm_, cblas_dsymm; and the invalid ones among them.
int g_sym_calls[4] = {0, 0, 0, 0}, g_sym_invalid = 0;
// mock-partial under the preload: symmetric cases marked `partial` make the mock's 3rd next
// device-to-host copy fail. C's 100 rows are the most any case has, so the staging buffer (64 bytes,
// grown to the largest column seen) holds one column: the first column comes back, the copy of the
// third fails, and the offload finishes the columns from the second on on the host.
bool g_arm_partial = false;
int g_partial_armed = 0;
void arm_partial_failure() {
  if (!g_arm_partial) return;
  const char* path = std::getenv("OZGEMM_LIBRARY");
  void* mock = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto copies = mock ? reinterpret_cast<long (*)()>(dlsym(mock, "mock_ozgemm_d2h_copies")) : nullptr;
  if (!copies) return;  // not loaded by the preloaded library (yet): nothing to arm
  setenv("MOCK_D2H_FAIL_AT", std::to_string(copies() + 3).c_str(), 1);
  ++g_partial_armed;
}

// What xerbla_ must have received for an invalid Fortran call: reference BLAS's routine and number.
void expect_xerbla(const char* name, const char* srname, int info) {
  char want[64];
  std::snprintf(want, sizeof want, "xerbla(%s,%d)", srname, info);
  if (g_err != want) {
    std::fprintf(stderr, "FAIL %s: error report '%s', reference BLAS gives '%s'\n", name, g_err.c_str(), want);
    ++g_bad;
  }
}

// Just before the call under test: entry point `api` (g_sym_calls index) counted, xerbla_'s record cleared.
void begin_symmetric_call(int api, bool invalid, bool partial) {
  if (partial) arm_partial_failure();
  g_err.clear();
  ++g_sym_calls[api];
  g_sym_invalid += invalid;
}
// Element (r, c) of a matrix stored row-major (row) or column-major with leading dimension ld.
double& element(std::vector<double>& X, bool row, int ld, int r, int c) {
  return row ? X[size_t(r) * ld + c] : X[size_t(c) * ld + r];
}

int cblas_uplo(char u) { return u == 'U' ? 121 : u == 'L' ? 122 : 120; }
int cblas_trans(char t) { return t == 'N' ? 111 : t == 'T' ? 112 : t == 'C' ? 113 : 110; }
int cblas_side(char s) { return s == 'L' ? 141 : s == 'R' ? 142 : 140; }
bool in_uplo(char uplo, int i, int j) { return uplo == 'U' || uplo == 'u' ? i <= j : i >= j; }

// Compares C (after the call) with Ref (the system's result) and C0 (before): written(i, j) entries
// within rounding, the others bit for bit; (i, j) of buffer index p by the layout. Returns "ok" or
// what differed.
template <typename Written>
std::string compare_c(const char* name, bool row, int ldc, const std::vector<double>& C0, const std::vector<double>& C,
                      const std::vector<double>& Ref, double scale, Written written) {
  for (size_t p = 0; p < C.size(); ++p) {
    const int i = int(row ? p / ldc : p % ldc), j = int(row ? p % ldc : p / ldc);
    if (written(i, j)) {
      if (!(std::fabs(C[p] - Ref[p]) <= 1e-13 * scale)) {
        std::fprintf(stderr, "FAIL %s: C(%d,%d) = %.17g, the system BLAS gives %.17g\n", name, i, j, C[p], Ref[p]);
        ++g_bad;
        return "WRONG";
      }
    } else if (std::memcmp(&C[p], &C0[p], sizeof(double)) != 0) {
      std::fprintf(stderr, "FAIL %s: C(%d,%d), outside what the routine writes, changed\n", name, i, j);
      ++g_bad;
      return "TOUCHED";
    }
  }
  return "ok";
}

// DSYRK: layout 0 is dsyrk_, 101/102 cblas_dsyrk. expect_info: the reference number (dsyrk_) or any
// nonzero (cblas: invalid, whatever the system reports).
void syrk_case(const char* name, int layout, char uplo, char trans, int n, int k, double alpha, int lda, double beta,
               int ldc, int expect_info = 0, bool partial = false) {
  const bool row = layout == 101, notrans = trans == 'N' || trans == 'n';
  const int rows = notrans ? n : k, cols = notrans ? k : n;  // A as stored, column-major sense
  auto A = fill(size_t(std::max(lda, 1)) * std::max(row ? rows : cols, 1), 7);
  auto C = fill(size_t(std::max(ldc, 1)) * std::max(n, 1), 8);
  auto written = [&](int i, int j) { return expect_info == 0 && i < n && j < n && in_uplo(uplo, i, j); };
  for (size_t p = 0; p < C.size(); ++p)
    if (beta == 0.0 && written(int(row ? p / ldc : p % ldc), int(row ? p % ldc : p / ldc))) set_nan(C[p]);
  const auto C0 = C;
  auto Ref = C;
  const SystemSymmetric& sys = system_symmetric();
  if (expect_info == 0) {  // the reference (an invalid call would report twice)
    if (layout == 0)
      sys.syrk(&uplo, &trans, &n, &k, &alpha, A.data(), &lda, &beta, Ref.data(), &ldc, 1, 1);
    else  // Ref(i, j) = alpha sum_l op(A)(i, l) op(A)(j, l) + beta Ref(i, j) on the triangle
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          if (!in_uplo(uplo, i, j)) continue;
          auto a = [&](int r, int c) { return element(A, row, lda, r, c); };
          double t = 0;
          for (int l = 0; l < k; ++l) t += notrans ? a(i, l) * a(j, l) : a(l, i) * a(l, j);
          double& c = element(Ref, row, ldc, i, j);
          c = beta == 0.0 ? alpha * t : alpha * t + beta * c;
        }
  }
  begin_symmetric_call(layout == 0 ? 0 : 1, expect_info != 0, partial);
  if (layout == 0)
    dsyrk_(&uplo, &trans, &n, &k, &alpha, A.data(), &lda, &beta, C.data(), &ldc, 1, 1);
  else
    cblas_dsyrk(layout, cblas_uplo(uplo), cblas_trans(trans), n, k, alpha, A.data(), lda, beta, C.data(), ldc);
  const std::string verdict =
      compare_c(name, row, ldc, C0, C, Ref, 1.0 + std::fabs(alpha) * 16.0 * k + std::fabs(beta) * 4.0, written);
  std::printf("%-28s %s L%d %c%c n=%d k=%d %s %s\n", name, layout ? "cblas_dsyrk" : "dsyrk_", layout, uplo, trans, n, k,
              verdict.c_str(), g_err.c_str());
  if (layout == 0 && expect_info > 0) expect_xerbla(name, "DSYRK ", expect_info);
}

// DSYMM: layout 0 is dsymm_, 101/102 cblas_dsymm; as syrk_case.
void symm_case(const char* name, int layout, char side, char uplo, int m, int n, double alpha, int lda, int ldb,
               double beta, int ldc, int expect_info = 0, bool partial = false) {
  const bool row = layout == 101;
  const bool left = side == 'L' || side == 'l';
  const int ka = left ? m : n;
  auto A = fill(size_t(std::max(lda, 1)) * std::max(ka, 1), 9);
  for (size_t p = 0; p < A.size(); ++p) {  // NaN outside the uplo triangle: never read
    const int i = int(row ? p / lda : p % lda), j = int(row ? p % lda : p / lda);
    if (expect_info == 0 && i < ka && !in_uplo(uplo, i, j)) set_nan(A[p]);
  }
  auto B = fill(size_t(std::max(ldb, 1)) * std::max(row ? m : n, 1), 10);
  auto C = fill(size_t(std::max(ldc, 1)) * std::max(row ? m : n, 1), 11);
  auto written = [&](int i, int j) { return expect_info == 0 && i < m && j < n; };
  for (size_t p = 0; p < C.size(); ++p)
    if (beta == 0.0 && written(int(row ? p / ldc : p % ldc), int(row ? p % ldc : p / ldc))) set_nan(C[p]);
  const auto C0 = C;
  auto Ref = C;
  const SystemSymmetric& sys = system_symmetric();
  if (expect_info == 0) {
    if (layout == 0)
      sys.symm(&side, &uplo, &m, &n, &alpha, A.data(), &lda, B.data(), &ldb, &beta, Ref.data(), &ldc, 1, 1);
    else  // Ref = alpha A B + beta Ref (L) or alpha B A + beta Ref (R), A(i, j) read from its uplo triangle
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          auto at = [&](std::vector<double>& X, int ld, int r, int c) { return element(X, row, ld, r, c); };
          auto a = [&](int r, int c) { return in_uplo(uplo, r, c) ? at(A, lda, r, c) : at(A, lda, c, r); };
          double t = 0;
          for (int l = 0; l < ka; ++l) t += left ? a(i, l) * at(B, ldb, l, j) : at(B, ldb, i, l) * a(l, j);
          double& c = element(Ref, row, ldc, i, j);
          c = beta == 0.0 ? alpha * t : alpha * t + beta * c;
        }
  }
  begin_symmetric_call(layout == 0 ? 2 : 3, expect_info != 0, partial);
  if (layout == 0)
    dsymm_(&side, &uplo, &m, &n, &alpha, A.data(), &lda, B.data(), &ldb, &beta, C.data(), &ldc, 1, 1);
  else
    cblas_dsymm(layout, cblas_side(side), cblas_uplo(uplo), m, n, alpha, A.data(), lda, B.data(), ldb, beta, C.data(),
                ldc);
  const std::string verdict =
      compare_c(name, row, ldc, C0, C, Ref, 1.0 + std::fabs(alpha) * 16.0 * ka + std::fabs(beta) * 4.0, written);
  std::printf("%-28s %s L%d %c%c m=%d n=%d %s %s\n", name, layout ? "cblas_dsymm" : "dsymm_", layout, side, uplo, m, n,
              verdict.c_str(), g_err.c_str());
  if (layout == 0 && expect_info > 0) expect_xerbla(name, "DSYMM ", expect_info);
}

void symmetric_cases() {
  // Every uplo, trans (C is T for real data) and side in both layouts and Fortran; beta 0 (NaN in the
  // written part), 1 and -0.5; padded leading dimensions.
  for (int layout : {0, 102, 101})
    for (double beta : {0.0, 1.0, -0.5}) {
      for (char uplo : {'U', 'L'})
        for (char trans : {'N', 'T', 'C'}) {
          const int n = 7, k = 5;
          const bool notrans = trans == 'N', row = layout == 101;
          const int rows = notrans ? n : k, cols = notrans ? k : n;
          syrk_case("valid", layout, uplo, trans, n, k, 1.25, (row ? cols : rows) + 2, beta, n + 3);
        }
      for (char side : {'L', 'R'})
        for (char uplo : {'U', 'L'}) {
          const int m = 8, n = 6, ka = side == 'L' ? m : n;
          const bool row = layout == 101;
          symm_case("valid", layout, side, uplo, m, n, -0.75, ka + 1, (row ? n : m) + 2, beta, (row ? n : m) + 1);
        }
    }
  syrk_case("valid lower-case", 0, 'l', 't', 6, 4, 0.5, 4, 2.0, 6);
  symm_case("valid lower-case", 0, 'r', 'u', 5, 4, 0.5, 4, 5, 2.0, 5);
  syrk_case("valid 40x33", 0, 'U', 'T', 40, 33, -1.5, 35, 0.25, 41);
  symm_case("valid 37x29 R", 0, 'R', 'L', 37, 29, 2.0, 30, 38, 0.0, 40);
  // A copy back failing part-way under mock-partial (elsewhere: plain valid calls): the remaining
  // columns on the host (SYRK upper: a GEMM above the trailing triangle; SYMM right: a GEMM and SYMM).
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T'}) syrk_case("partial", 0, uplo, trans, 100, 6, 1.5, 100, 0.5, 101, 0, true);
  for (char side : {'L', 'R'})
    for (char uplo : {'U', 'L'}) symm_case("partial", 0, side, uplo, 100, 60, -1.0, 100, 100, 0.0, 100, 0, true);
  // Quick returns: n, m or k == 0, alpha == 0 (C's written part = beta C; beta == 0 zeroes NaN).
  syrk_case("n=0", 0, 'U', 'N', 0, 3, 1.0, 1, 2.0, 1);
  syrk_case("k=0 beta=2", 0, 'L', 'N', 5, 0, 1.0, 5, 2.0, 5);
  syrk_case("alpha=0 beta=0 (NaN C)", 0, 'U', 'T', 5, 3, 0.0, 3, 0.0, 6);
  syrk_case("alpha=0 beta=3 row", 101, 'L', 'N', 5, 3, 0.0, 3, 3.0, 5);
  symm_case("m=0", 0, 'L', 'U', 0, 4, 1.0, 1, 1, 2.0, 1);
  symm_case("n=0", 0, 'R', 'U', 4, 0, 1.0, 1, 4, 2.0, 4);
  symm_case("alpha=0 beta=0 (NaN C)", 0, 'L', 'L', 5, 4, 0.0, 5, 5, 0.0, 5);
  symm_case("alpha=0 beta=2 row", 101, 'R', 'U', 5, 4, 0.0, 4, 4, 2.0, 4);
  // Invalid arguments: reference DSYRK's / DSYMM's numbers through the system's routine and xerbla_;
  // cblas: whatever the system's cblas_xerbla receives.
  syrk_case("bad uplo", 0, 'X', 'N', 4, 4, 1.0, 4, 0.0, 4, 1);
  syrk_case("bad trans", 0, 'U', 'Q', 4, 4, 1.0, 4, 0.0, 4, 2);
  syrk_case("n<0", 0, 'U', 'N', -1, 4, 1.0, 4, 0.0, 4, 3);
  syrk_case("k<0", 0, 'L', 'N', 4, -1, 1.0, 4, 0.0, 4, 4);
  syrk_case("lda<n (N)", 0, 'L', 'N', 4, 4, 1.0, 3, 0.0, 4, 7);
  syrk_case("lda<k (T)", 0, 'U', 'T', 4, 5, 1.0, 4, 0.0, 4, 7);
  syrk_case("ldc<n", 0, 'U', 'N', 4, 4, 1.0, 4, 0.0, 3, 10);
  symm_case("bad side", 0, 'X', 'U', 4, 4, 1.0, 4, 4, 0.0, 4, 1);
  symm_case("bad uplo", 0, 'L', 'Q', 4, 4, 1.0, 4, 4, 0.0, 4, 2);
  symm_case("m<0", 0, 'L', 'U', -1, 4, 1.0, 4, 4, 0.0, 4, 3);
  symm_case("n<0", 0, 'R', 'U', 4, -1, 1.0, 4, 4, 0.0, 4, 4);
  symm_case("lda<n (R)", 0, 'R', 'U', 4, 5, 1.0, 4, 4, 0.0, 4, 7);
  symm_case("ldb<m", 0, 'L', 'U', 4, 5, 1.0, 4, 3, 0.0, 4, 9);
  symm_case("ldc<m", 0, 'L', 'L', 4, 5, 1.0, 4, 4, 0.0, 3, 12);
  syrk_case("bad layout", 100, 'U', 'N', 4, 4, 1.0, 4, 0.0, 4, -1);
  syrk_case("bad uplo row", 101, 'X', 'N', 4, 4, 1.0, 4, 0.0, 4, -1);
  syrk_case("lda bad row (N)", 101, 'U', 'N', 4, 5, 1.0, 4, 0.0, 4, -1);
  symm_case("bad side col", 102, 'X', 'U', 4, 4, 1.0, 4, 4, 0.0, 4, -1);
  symm_case("ldb bad row", 101, 'L', 'U', 4, 5, 1.0, 4, 4, 0.0, 5, -1);
}

}  // namespace

int main(int argc, char** argv) {
  const bool expect_preload = argc >= 3 && std::strcmp(argv[1], "--expect-preload") == 0;
  g_arm_partial = expect_preload && std::strcmp(argv[2], "mock-partial") == 0;
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
  symmetric_cases();
  std::fflush(stdout);

  if (expect_preload) {
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
    const int calls = g_dgemm_calls + g_cblas_calls + g_zgemm_calls + g_cblas_z_calls + g_sym_calls[0] +
                      g_sym_calls[1] + g_sym_calls[2] + g_sym_calls[3];
    std::fprintf(stderr, "blas counters after %d dgemm_, %d cblas_dgemm, %d zgemm_, %d cblas_zgemm, %d dsyrk_, %d "
                 "cblas_dsyrk, %d dsymm_ and %d cblas_dsymm calls (variant %s):\n", g_dgemm_calls, g_cblas_calls,
                 g_zgemm_calls, g_cblas_z_calls, g_sym_calls[0], g_sym_calls[1], g_sym_calls[2], g_sym_calls[3],
                 variant.c_str());
    expect("calls", calls);
    expect("api:dgemm_", g_dgemm_calls);
    expect("api:cblas_dgemm", g_cblas_calls);
    expect("api:zgemm_", g_zgemm_calls);
    expect("api:cblas_zgemm", g_cblas_z_calls);
    expect("api:dsyrk_", g_sym_calls[0]);
    expect("api:cblas_dsyrk", g_sym_calls[1]);
    expect("api:dsymm_", g_sym_calls[2]);
    expect("api:cblas_dsymm", g_sym_calls[3]);
    // the invalid dgemm_, cblas_dgemm, zgemm_ and cblas_zgemm cases above, and the symmetric ones
    const int invalid = 14 + 12 + 6 + 4 + g_sym_invalid;
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
      // mock-partial: the variant's failing copy (a DGEMM) and each armed symmetric case
      const int failures = variant == "mock-partial" ? 1 + g_partial_armed : 0;
      if (variant == "mock-partial" && g_partial_armed != 8) {  // the 8 "partial" symmetric cases
        std::fprintf(stderr, "FAIL: %d of the 8 symmetric copy-back failures armed\n", g_partial_armed);
        ++g_bad;
      }
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
