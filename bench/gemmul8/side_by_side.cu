// bench/gemmul8/side_by_side.cu — native cuBLAS DGEMM, ozgemm's Ozaki-II and Ozaki-I, and GEMMul8 (the published
// Ozaki-II library, built from a checkout the user points to; never vendored) on the same inputs in
// one process: square n^3, A and B from the phi family (U(0,1) - 0.5) exp(phi N(0,1)) generated on
// the GPU from a printed seed, C poisoned with NaN before every timed call.
//
// Timing: CUDA events around each call, 2 warm-up calls, the median of `iters`, in ROUNDS rounds over
// all methods (summaries take each method's median over the rounds). At the sizes this is
// run at (n >= 4096, 128 MiB per operand) the operands are far past the 50 MiB L2, so no buffer
// rotation is needed. Error: componentwise max |C - AB|_ij / (|A||B|)_ij over `samples` random
// entries against a long double dot product on the host (the same sample for every method).
//
// Usage: side_by_side N MODULI_LIST PHI ITERS SEED   (MODULI_LIST like 14,15). Environment: SLICES=s
// adds Ozaki-I at s slices (default 0: none; its "moduli" field holds the slices); ROUNDS=r rounds
// over all methods, each starting one method later (default 1); SKIP_GEMMUL8=1, SKIP_OZ2_UNFUSED=1.
// One JSON line per method and round on stdout ("componentwise": null where a sampled entry of C is
// not finite). Built by bench/gemmul8/build.sh.
#include <cublas_v2.h>
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

using bench::env_int;
using bench::fill_phi;
using bench::json_number;
using bench::time_ms;

namespace {

struct Sample {
  size_t i, j;
  long double ref, abs_ab;
};

double comperr(const double* C, size_t n, const std::vector<Sample>& s) {
  double worst = 0;
  for (const Sample& x : s) {
    double c = 0;
    CHECK_CUDA(cudaMemcpy(&c, C + x.i + x.j * n, sizeof(double), cudaMemcpyDeviceToHost));
    if (!std::isfinite(c)) return INFINITY;
    const double e = double(std::fabs(static_cast<long double>(c) - x.ref) / x.abs_ab);
    worst = std::max(worst, e);
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s N MODULI_LIST PHI ITERS SEED\n", argv[0]);
    return 2;
  }
  const size_t n = std::strtoull(argv[1], nullptr, 10);
  const std::vector<int> moduli = bench::parse_list<int>(argv[2]);
  const double phi = std::atof(argv[3]);
  const int iters = std::atoi(argv[4]);
  const unsigned long long seed = std::strtoull(argv[5], nullptr, 10);
  const size_t count = n * n;
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(stderr, "device %s, n %zu, phi %g, seed %llu, iters %d\n", prop.name, n, phi, seed, iters);

  double *A, *B, *C;
  CHECK_CUDA(cudaMalloc(&A, count * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&B, count * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&C, count * sizeof(double)));
  fill_phi(A, count, phi, seed);
  fill_phi(B, count, phi, seed + 1);
  CHECK_CUDA(cudaDeviceSynchronize());

  // The error sample: rows of A and columns of B copied back, long double dots on the host.
  std::vector<Sample> samples;
  {
    std::mt19937_64 rng(seed + 2);
    std::vector<double> row(n), col(n);
    for (int t = 0; t < 128; ++t) {
      Sample s{rng() % n, rng() % n, 0, 0};
      CHECK_CUDA(cudaMemcpy2D(row.data(), sizeof(double), A + s.i, n * sizeof(double), sizeof(double), n,
                              cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(col.data(), B + s.j * n, n * sizeof(double), cudaMemcpyDeviceToHost));
      for (size_t l = 0; l < n; ++l) {
        s.ref += static_cast<long double>(row[l]) * col[l];
        s.abs_ab += std::fabs(static_cast<long double>(row[l]) * col[l]);
      }
      samples.push_back(s);
    }
  }
  const double flop = 2.0 * double(n) * double(n) * double(n);
  auto report = [&](int round, const char* method, int N, const char* mode, double ms) {
    std::printf("{\"device\": \"%s\", \"n\": %zu, \"phi\": %g, \"seed\": %llu, \"round\": %d, \"method\": \"%s\", "
                "\"moduli\": %d, \"mode\": \"%s\", \"ms\": %.4f, \"tflops\": %.2f, \"componentwise\": %s}\n",
                prop.name, n, phi, seed, round, method, N, mode, ms, flop / ms * 1e-9,
                json_number(comperr(C, n, samples)).c_str());
    std::fflush(stdout);
  };
  const double one = 1.0, zero = 0.0;
  const int ni = static_cast<int>(n);
  // ROUNDS rounds over all methods, rotated (bench::run_rotated).
  const int rounds = std::max(1, env_int("ROUNDS", 1));
  const int slices = env_int("SLICES", 0);            // Ozaki-I's slice count; 0 (default) skips Ozaki-I
  const bool skip_gemmul8 = env_int("SKIP_GEMMUL8", 0) == 1;
  const bool skip_oz2_unfused = env_int("SKIP_OZ2_UNFUSED", 0) == 1;

  cublasHandle_t cb;
  if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS) return 2;
  ozgemmHandle_t oz;  // one handle, its settings switched between methods (its workspace only grows)
  if (ozgemmCreate(&oz) != OZGEMM_STATUS_SUCCESS) return 2;
  // GEMMul8's workspace: one, of the largest size the moduli counts need.
  void* work = nullptr;
  if (!skip_gemmul8) {
    size_t bytes = 0;
    for (int N : moduli) bytes = std::max(bytes, gemmul8::workSize<false, gemmul8::Backend::INT8>(n, n, n, unsigned(N)));
    if (cudaMalloc(&work, bytes) != cudaSuccess) {
      std::fprintf(stderr, "gemmul8: no memory for %zu bytes\n", bytes);
      return 2;
    }
  }
  // ozgemm with scheme, variant and count (moduli, or slices for Ozaki-I). The mode printed is the
  // variant that ran (ozgemmGetLastCallInfo), with the requested one beside it where they differ.
  auto run_ozgemm = [&](int round, ozgemmScheme_t scheme, ozgemmVariant_t v, int count_) {
    const bool two = scheme == OZGEMM_SCHEME_OZAKI2;
    const char* name = two ? "ozaki2" : "ozaki1";
    if (!bench::set_ozgemm_method(oz, scheme, v, count_)) return;
    ozgemmStatus_t st = OZGEMM_STATUS_SUCCESS;
    const double ms = time_ms(
        [&] { st = ozgemmDgemm(oz, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, A, ni, B, ni, &zero, C, ni); }, C, count,
        iters);
    if (st != OZGEMM_STATUS_SUCCESS) {
      std::fprintf(stderr, "ozgemm %s %s %d: %s\n", name, ozgemmGetVariantString(v), count_, ozgemmGetStatusString(st));
      return;
    }
    ozgemmCallInfo_t info{};
    const std::string mode = bench::ozgemm_ran_mode(oz, v, &info);
    report(round, two ? "ozgemm_ozaki2" : "ozgemm_ozaki1", count_, mode.c_str(), ms);
  };
  std::vector<std::function<void(int)>> methods;
  methods.push_back([&](int r) {
    report(r, "native_dgemm", 0, "fp64",
           time_ms([&] { cublasDgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, A, ni, B, ni, &zero, C, ni); }, C,
                   count, iters));
  });
  // Both Ozaki-II variants where the device has them (partially fused: the Hopper products).
  for (const ozgemmVariant_t v : {OZGEMM_VARIANT_UNFUSED, OZGEMM_VARIANT_PARTIALLY_FUSED})
    for (int N : moduli)
      if (!(v == OZGEMM_VARIANT_UNFUSED && skip_oz2_unfused))
        methods.push_back([&, v, N](int r) { run_ozgemm(r, OZGEMM_SCHEME_OZAKI2, v, N); });
  // Ozaki-I at SLICES slices (the issue's comparison table: 7), every variant; the table takes the fastest.
  for (const ozgemmVariant_t v : {OZGEMM_VARIANT_UNFUSED, OZGEMM_VARIANT_PARTIALLY_FUSED, OZGEMM_VARIANT_FULLY_FUSED})
    if (slices > 0) methods.push_back([&, v](int r) { run_ozgemm(r, OZGEMM_SCHEME_OZAKI1, v, slices); });
  for (int N : moduli)
    for (const bool fast : {true, false})
      if (!skip_gemmul8)
        methods.push_back([&, N, fast](int r) {
          const double ms = time_ms(
              [&] {
                gemmul8::gemm<double, gemmul8::Backend::INT8>(cb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n,
                                                              &zero, C, n, unsigned(N), fast, work);
              },
              C, count, iters);
          report(r, "gemmul8", N, fast ? "fast" : "accurate", ms);
        });
  bench::run_rotated(methods, rounds);
  ozgemmDestroy(oz);
  if (work) CHECK_CUDA(cudaFree(work));
  cublasDestroy(cb);
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));
  CHECK_CUDA(cudaFree(C));
  return 0;
}
