// bench/gemmul8/zgemm_side_by_side.cu — complex FP64 GEMM (ZGEMM) side by side in one process, on the same
// inputs: native cublasZgemm, GEMMul8's complex GEMM (gemmul8::gemm<cuDoubleComplex>, Karatsuba: 3 INT8
// GEMMs per modulus; fast and accurate mode at each G8_MODULI count; built from a checkout the user points
// to, never vendored), ozgemmZgemm in FIXED mode at each OZ_MODULI count (the complex "2M" scheme, variant
// AUTO) and ozgemmZgemm in FP64 mode (the library's default: the data decide the moduli count, or native).
//
// Usage: zgemm_side_by_side [SIZE ...]   SIZE: N (N^3) or MxNxK; default 4096 8192.
//   Environment: PHI=0.5[,-1,1] (phi values, each a case), ITERS=5, ROUNDS=3, SEED=20261123,
//   OZ_MODULI=14,15,16, G8_MODULI=12,13,14,15,16,17,18, SKIP_GEMMUL8=1.
//   Built by bench/gemmul8/build.sh (with side_by_side); run with libozgemm.so.0 on LD_LIBRARY_PATH.
//
// Inputs: column-major A (m x k) and B (k x n), op N, alpha 1, beta 0; real and imaginary parts both from
// the phi family of side_by_side (bench::fill_phi over the 2 m k doubles of A with SEED, B with SEED + 1),
// C poisoned with NaN before every timed call.
// Timing: as side_by_side: CUDA events around each call, 2 warm-up calls, the median of ITERS, in ROUNDS
// rotated rounds over all methods (bench::run_rotated); the summary takes each method's median over the
// rounds. TFLOPS count 8 m n k flops (a complex multiply-add is 4 real multiplies and 4 adds). The speedup
// is the method's median over native ZGEMM's median.
// Error: componentwise max |C - AB|_ij / (|A||B|)_ij (complex magnitudes: |A|_il = |a_il|) over 128 random
// entries, the same sample for every method. The reference is independent of every method under test: for
// each sampled entry, the real and imaginary parts are each a sum of 2k products of doubles accumulated on
// the host in double-double (Ogita, Rump, Oishi's Dot2: TwoProduct by fma, TwoSum, the low parts summed),
// kept unrounded as hi + lo. Its error is at most about gamma_{2k}^2 sum_l (|re a re b| + |im a im b|)
// <= gamma_{2k}^2 (|A||B|)_ij (gamma_j = j u / (1 - j u), u = 2^-53): 3.3e-24 (|A||B|) at k = 8192, six
// orders below the errors measured here (native ZGEMM about 1e-16, the emulations 1e-18 .. 1e-15).
// (side_by_side's long double dot products would add up to k 2^-64 (|A||B|): 4.4e-16 at k = 8192.)
//
// Output: one JSON line per method and round on stdout ("componentwise": null where a sampled entry of C is
// not finite; ozgemm lines add "fell_back", "bound" and "reason" from ozgemmGetLastCallInfo; "moduli" is the
// count that ran: FP64 mode's decided count, 0 for native), then per case a "summary" block: each method's
// median TFLOPS over the rounds, their range, the speedup over native ZGEMM and the worst error.
#include <cublas_v2.h>
#include <cuComplex.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_common.cuh"
#include "gemmul8.hpp"
#include "ozgemm/ozgemm.h"

namespace {

constexpr int kSamples = 128;  // sampled entries of C per case

// A sum of products of doubles in double-double (Dot2): hi + lo, unrounded. Exact TwoProduct needs no
// underflow in a b (the phi family's entries are far from it).
struct DoubleDoubleSum {
  double hi = 0, lo = 0;
  void add_product(double a, double b) {
    const double p = a * b, p_err = std::fma(a, b, -p);  // a b = p + p_err exactly
    const double t = hi + p, z = t - hi;
    const double t_err = (hi - (t - z)) + (p - z);       // hi + p = t + t_err exactly (TwoSum)
    hi = t;
    lo += p_err + t_err;
  }
};

struct Sample {
  size_t i, j;
  DoubleDoubleSum re, im;  // (AB)_ij
  long double abs_ab = 0;  // (|A||B|)_ij
};

struct Shape {
  size_t m, n, k;
};

// "8192" -> 8192^3; "MxNxK" -> m x n x k. Exits on anything else.
Shape parse_shape(const char* arg) {
  size_t v[3] = {0, 0, 0};
  const int got = std::sscanf(arg, "%zux%zux%zu", &v[0], &v[1], &v[2]);
  if (got == 1) return {v[0], v[0], v[0]};
  if (got == 3 && v[0] > 0 && v[1] > 0 && v[2] > 0) return {v[0], v[1], v[2]};
  std::fprintf(stderr, "bad size '%s': N or MxNxK\n", arg);
  std::exit(2);
}

// Samples of (AB)_ij: row i of A (m x k) and column j of B (k x n) copied back, dots on the host.
std::vector<Sample> take_samples(const cuDoubleComplex* A, const cuDoubleComplex* B, Shape s,
                                 unsigned long long seed) {
  std::vector<Sample> out;
  std::mt19937_64 rng(seed);
  std::vector<cuDoubleComplex> row(s.k), col(s.k);
  for (int t = 0; t < kSamples; ++t) {
    Sample x;
    x.i = rng() % s.m;
    x.j = rng() % s.n;
    CHECK_CUDA(cudaMemcpy2D(row.data(), sizeof(cuDoubleComplex), A + x.i, s.m * sizeof(cuDoubleComplex),
                            sizeof(cuDoubleComplex), s.k, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(col.data(), B + x.j * s.k, s.k * sizeof(cuDoubleComplex), cudaMemcpyDeviceToHost));
    for (size_t l = 0; l < s.k; ++l) {
      const cuDoubleComplex a = row[l], b = col[l];
      x.re.add_product(a.x, b.x);
      x.re.add_product(-a.y, b.y);
      x.im.add_product(a.x, b.y);
      x.im.add_product(a.y, b.x);
      x.abs_ab += std::hypot(static_cast<long double>(a.x), a.y) * std::hypot(static_cast<long double>(b.x), b.y);
    }
    out.push_back(x);
  }
  return out;
}

// max over the samples of |C_ij - ref_ij| / (|A||B|)_ij; INFINITY where a sampled C_ij is not finite.
double comperr(const cuDoubleComplex* C, size_t m, const std::vector<Sample>& samples) {
  double worst = 0;
  for (const Sample& x : samples) {
    cuDoubleComplex c{};
    CHECK_CUDA(cudaMemcpy(&c, C + x.i + x.j * m, sizeof c, cudaMemcpyDeviceToHost));
    if (!std::isfinite(c.x) || !std::isfinite(c.y)) return INFINITY;
    const long double d_re = (static_cast<long double>(c.x) - x.re.hi) - x.re.lo;
    const long double d_im = (static_cast<long double>(c.y) - x.im.hi) - x.im.lo;
    worst = std::max(worst, double(std::hypot(d_re, d_im) / x.abs_ab));
  }
  return worst;
}

// One method's rounds: its TFLOPS per round, its worst error and what it ran (the last round's).
struct Record {
  std::string method, mode;
  int moduli = 0;
  std::vector<double> tflops;
  double worst = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  for (int a = 1; a < argc; ++a) shapes.push_back(parse_shape(argv[a]));
  if (shapes.empty()) shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  const std::vector<double> phis = bench::parse_list<double>(bench::env_string("PHI", "0.5"));
  const int iters = std::max(1, bench::env_int("ITERS", 5));
  const int rounds = std::max(1, bench::env_int("ROUNDS", 3));
  const unsigned long long seed = std::strtoull(bench::env_string("SEED", "20261123").c_str(), nullptr, 10);
  const std::vector<int> oz_moduli = bench::parse_list<int>(bench::env_string("OZ_MODULI", "14,15,16"));
  const std::vector<int> g8_moduli = bench::parse_list<int>(bench::env_string("G8_MODULI", "12,13,14,15,16,17,18"));
  const bool skip_gemmul8 = bench::env_int("SKIP_GEMMUL8", 0) == 1;
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(stderr, "device %s, seed %llu, iters %d, rounds %d\n", prop.name, seed, iters, rounds);

  cublasHandle_t cb;
  if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS) return 2;
  const cuDoubleComplex one{1.0, 0.0}, zero{0.0, 0.0};

  for (const Shape s : shapes) {
    const size_t a_count = s.m * s.k, b_count = s.k * s.n, c_count = s.m * s.n;  // complex entries
    const int mi = int(s.m), ni = int(s.n), ki = int(s.k);
    cuDoubleComplex *A, *B, *C;
    CHECK_CUDA(cudaMalloc(&A, a_count * sizeof(cuDoubleComplex)));
    CHECK_CUDA(cudaMalloc(&B, b_count * sizeof(cuDoubleComplex)));
    CHECK_CUDA(cudaMalloc(&C, c_count * sizeof(cuDoubleComplex)));
    double* const C_doubles = reinterpret_cast<double*>(C);
    // GEMMul8's workspace: one, of the largest size its moduli counts need (k <= 2^17: its limit).
    void* work = nullptr;
    bool run_gemmul8 = !skip_gemmul8 && !g8_moduli.empty();
    if (run_gemmul8 && s.k > (size_t(1) << 17)) {
      std::fprintf(stderr, "gemmul8: k %zu past its limit 2^17, skipped\n", s.k);
      run_gemmul8 = false;
    }
    if (run_gemmul8) {
      size_t bytes = 0;
      for (int N : g8_moduli)
        bytes = std::max(bytes, gemmul8::workSize<true, gemmul8::Backend::INT8>(s.m, s.n, s.k, unsigned(N)));
      if (cudaMalloc(&work, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        std::fprintf(stderr, "gemmul8: no memory for %zu bytes at %zux%zux%zu, skipped\n", bytes, s.m, s.n, s.k);
        work = nullptr;
        run_gemmul8 = false;
      }
    }
    // One ozgemm handle per size, its settings switched between methods (its workspace only grows; a
    // fresh one per size frees the last size's).
    ozgemmHandle_t oz;
    if (ozgemmCreate(&oz) != OZGEMM_STATUS_SUCCESS) return 2;

    for (const double phi : phis) {
      bench::fill_phi(reinterpret_cast<double*>(A), 2 * a_count, phi, seed);
      bench::fill_phi(reinterpret_cast<double*>(B), 2 * b_count, phi, seed + 1);
      CHECK_CUDA(cudaDeviceSynchronize());
      std::fprintf(stderr, "%zux%zux%zu, phi %g, seed %llu\n", s.m, s.n, s.k, phi, seed);
      const std::vector<Sample> samples = take_samples(A, B, s, seed + 2);
      const double flop = 8.0 * double(s.m) * double(s.n) * double(s.k);

      std::vector<Record> records;
      std::vector<std::function<void(int)>> methods;
      // Prints the JSON line of one method's round and adds it to its record. `extra`: more JSON fields.
      auto report = [&](size_t idx, int round, double ms, int moduli, const std::string& mode,
                        const std::string& extra) {
        Record& rec = records[idx];
        const double err = comperr(C, s.m, samples);
        rec.mode = mode;
        rec.moduli = moduli;
        rec.tflops.push_back(flop / ms * 1e-9);
        rec.worst = std::isfinite(err) ? std::max(rec.worst, err) : INFINITY;
        std::printf("{\"device\": \"%s\", \"m\": %zu, \"n\": %zu, \"k\": %zu, \"phi\": %g, \"seed\": %llu, "
                    "\"round\": %d, \"method\": \"%s\", \"moduli\": %d, \"mode\": %s, \"ms\": %.4f, "
                    "\"tflops\": %.2f, \"componentwise\": %s%s}\n",
                    prop.name, s.m, s.n, s.k, phi, seed, round, rec.method.c_str(), moduli,
                    bench::json_string(mode).c_str(), ms, flop / ms * 1e-9, bench::json_number(err).c_str(),
                    extra.c_str());
        std::fflush(stdout);
      };
      auto add = [&](const char* name, std::function<void(size_t, int)> body) {
        const size_t idx = records.size();
        records.emplace_back();
        records.back().method = name;
        methods.push_back([idx, body](int r) { body(idx, r); });
      };

      add("native_zgemm", [&](size_t idx, int r) {
        cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
        const double ms = bench::time_ms(
            [&] { st = cublasZgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, mi, ni, ki, &one, A, mi, B, ki, &zero, C, mi); },
            C_doubles, 2 * c_count, iters);
        if (st != CUBLAS_STATUS_SUCCESS) std::fprintf(stderr, "cublasZgemm: status %d\n", int(st));
        report(idx, r, ms, 0, "fp64", "");
      });
      if (run_gemmul8)
        for (const int N : g8_moduli)
          for (const bool fast : {true, false})
            add("gemmul8_zgemm", [&, N, fast](size_t idx, int r) {
              const double ms = bench::time_ms(
                  [&] {
                    gemmul8::gemm<cuDoubleComplex, gemmul8::Backend::INT8>(cb, CUBLAS_OP_N, CUBLAS_OP_N, s.m, s.n,
                                                                           s.k, &one, A, s.m, B, s.k, &zero, C,
                                                                           s.m, unsigned(N), fast, work);
                  },
                  C_doubles, 2 * c_count, iters);
              report(idx, r, ms, N, fast ? "fast" : "accurate", "");
            });
      // ozgemm: FIXED at each count (count > 0), then FP64 mode (count 0); variant AUTO, scheme AUTO (a
      // user's defaults; ozgemmZgemm runs the complex Ozaki-II scheme whatever the scheme setting).
      std::vector<int> oz_counts = oz_moduli;
      oz_counts.push_back(0);
      for (const int N : oz_counts)
        add(N > 0 ? "ozgemm_fixed" : "ozgemm_fp64", [&, N](size_t idx, int r) {
          if (!bench::set_ozgemm_method(oz, OZGEMM_SCHEME_AUTO, OZGEMM_VARIANT_AUTO, N)) return;
          ozgemmStatus_t st = OZGEMM_STATUS_SUCCESS;
          const double ms = bench::time_ms(
              [&] { st = ozgemmZgemm(oz, CUBLAS_OP_N, CUBLAS_OP_N, mi, ni, ki, &one, A, mi, B, ki, &zero, C, mi); },
              C_doubles, 2 * c_count, iters);
          if (st != OZGEMM_STATUS_SUCCESS) {
            std::fprintf(stderr, "ozgemmZgemm %s %d: %s\n", N > 0 ? "FIXED" : "FP64", N, ozgemmGetStatusString(st));
            return;
          }
          ozgemmCallInfo_t info{};
          const std::string mode = bench::ozgemm_ran_mode(oz, OZGEMM_VARIANT_AUTO, &info);
          const std::string extra = std::string(", \"fell_back\": ") + std::to_string(info.fell_back) +
                                    ", \"bound\": " + bench::json_number(info.bound) +
                                    ", \"reason\": " + bench::json_string(info.reason);
          if (N > 0 && info.moduli != N)
            std::fprintf(stderr, "ozgemmZgemm FIXED %d ran %d moduli (%s)\n", N, info.moduli, info.reason);
          report(idx, r, ms, info.moduli, mode, extra);
        });

      bench::run_rotated(methods, rounds);

      // The summary: medians over the rounds, native ZGEMM's median as the speedup's base.
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? NAN : v[v.size() / 2];
      };
      const double native_tf = median(records.front().tflops);
      std::printf("summary %zux%zux%zu phi %g seed %llu: median of %d rounds, TFLOPS at 8 m n k flops\n", s.m, s.n,
                  s.k, phi, seed, rounds);
      for (const Record& rec : records) {
        if (rec.tflops.empty()) {
          std::printf("summary   %-14s did not run (stderr says why)\n", rec.method.c_str());
          continue;
        }
        const double tf = median(rec.tflops);
        std::printf("summary   %-14s N=%2d %-34s %7.1f TF (%.1f-%.1f) %5.2fx native  comperr %.2e\n",
                    rec.method.c_str(), rec.moduli, rec.mode.c_str(), tf,
                    *std::min_element(rec.tflops.begin(), rec.tflops.end()),
                    *std::max_element(rec.tflops.begin(), rec.tflops.end()), tf / native_tf, rec.worst);
      }
      std::fflush(stdout);
    }
    ozgemmDestroy(oz);
    if (work) CHECK_CUDA(cudaFree(work));
    CHECK_CUDA(cudaFree(A));
    CHECK_CUDA(cudaFree(B));
    CHECK_CUDA(cudaFree(C));
  }
  cublasDestroy(cb);
  return 0;
}
