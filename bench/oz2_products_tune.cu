// bench/oz2_products_tune.cu — Ozaki-II's products alone on Hopper: the library's fused-reduction GEMM
// (kernels/dgemm/ozaki2_products_sm90.cuh) in several CUTLASS configurations beside cuBLASLt's INT8
// GEMM (the unfused path's: one launch a modulus, int32 planes; and one strided-batched launch), on
// the same random residues, N moduli at n x n x k. Each fused configuration's int8 planes are checked
// entry by entry against cuBLASLt's int32 planes reduced modulo p_i (mismatches printed; must be 0).
// Also cuBLASLt on constant operands (0x11 / 0x07 bytes, as `ozgemm bench`'s INT8 probe uses): the
// rate random data do not reach. Timing: CUDA events, 2 warm-ups, median of ITERS runs, the
// variants interleaved over ROUNDS rounds (clock drift under sustained INT8 load).
// Usage: oz2_products_tune [n=8192] [k=n] [moduli=15] [iters=5] [rounds=2]; one JSON line per
// (round, variant) on stdout, a table on stderr. OZ2_TUNE_ONLY=name,... limits the fused configurations.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "baseline/int8_gemm_cublaslt.hpp"
#include "bench/cuda_check.hpp"
#include "kernels/dgemm/ozaki2_products_sm90.cuh"
#include "kernels/dgemm/policy.hpp"

using namespace ozgemm;
namespace nm = ozgemm::numerics;


__global__ void fill_residues(int8_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    p[i] = static_cast<int8_t>(int(x % 255) - 127);  // [-127, 127], as symmetric residues of odd moduli
  }
}

__global__ void count_mismatches(const int32_t* full, const int8_t* reduced, size_t plane, int moduli,
                                 nm::Ozaki2Constants c, unsigned long long* bad) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < plane * moduli; i += size_t(gridDim.x) * blockDim.x) {
    const int m = static_cast<int>(i / plane);
    if (int32_t(reduced[i]) != nm::sym_mod(int64_t(full[i]), c.p[m])) atomicAdd(bad, 1ull);
  }
}

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
  }
  template <class F>
  double median_ms(F&& f, int iters) {
    for (int w = 0; w < 2; ++w) f();
    std::vector<double> t;
    for (int i = 0; i < iters; ++i) {
      CHECK_CUDA(cudaEventRecord(a));
      f();
      CHECK_CUDA(cudaEventRecord(b));
      CHECK_CUDA(cudaEventSynchronize(b));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  }
};

// The first form of the epilogue's reduction, kept here to time against the library's FP32 one:
// q = rint(v fl(1/p)) in FP64, r = v - q p (exact for every int32; 64-bit conversions issue at a
// quarter of the FP64 rate).
struct Fp64Reduce {
  struct Modulus {
    int32_t p;
    double inv_p;
  };
  static Modulus make(int32_t p) { return Modulus{p, 1.0 / double(p)}; }
  __device__ static int8_t apply(int32_t v, const Modulus& m) {
    const double q = rint(double(v) * m.inv_p);
    return static_cast<int8_t>(static_cast<int32_t>(fma(-q, double(m.p), double(v))) & 0xff);
  }
};

template <int TM, int TN, int CM, int CN, bool PP, int SW>
using Pol = kernels::Sm90Oz2ProductsPolicyT<TM, TN, CM, CN, PP, SW>;

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 8192;
  const int64_t k = argc > 2 ? std::atoll(argv[2]) : n;
  const int N = argc > 3 ? std::atoi(argv[3]) : 15;
  const int iters = argc > 4 ? std::atoi(argv[4]) : 5;
  const int rounds = argc > 5 ? std::atoi(argv[5]) : 2;
  const nm::Ozaki2Constants& c = nm::ozaki2_constants(N);
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const size_t opnd = size_t(n) * size_t(k), plane = size_t(n) * size_t(n);
  int8_t *A, *B, *D8;
  int32_t* D32;
  void* ws;
  const size_t ws_bytes = size_t(kernels::UnfusedPolicy::kLtWorkspaceBytes);
  unsigned long long* bad;
  CHECK_CUDA(cudaMalloc(&A, opnd * N));
  CHECK_CUDA(cudaMalloc(&B, opnd * N));
  CHECK_CUDA(cudaMalloc(&D8, plane * N));
  CHECK_CUDA(cudaMalloc(&D32, plane * N * 4));
  CHECK_CUDA(cudaMalloc(&ws, ws_bytes));
  CHECK_CUDA(cudaMallocManaged(&bad, sizeof *bad));
  fill_residues<<<4096, 256>>>(A, opnd * N, 1);
  fill_residues<<<4096, 256>>>(B, opnd * N, 2);
  CHECK_CUDA(cudaGetLastError());
  Int8GemmLt lt;
  if (lt.init() != CUBLAS_STATUS_SUCCESS) return 1;
  auto lt_each = [&] {
    for (int i = 0; i < N; ++i)
      if (lt.run(int(n), int(n), int(k), A + i * opnd, int(k), B + i * opnd, int(k), D32 + i * plane, int(n), ws,
                 ws_bytes, nullptr, true) != CUBLAS_STATUS_SUCCESS)
        std::exit(2);
  };
  auto lt_batched = [&] {
    if (lt.run_batched(int(n), int(n), int(k), A, int(k), int64_t(opnd), B, int(k), int64_t(opnd), D32, int(n),
                       int64_t(plane), N, ws, ws_bytes, nullptr, true) != CUBLAS_STATUS_SUCCESS)
      std::exit(2);
  };
  kernels::Oz2ProductsArgs pa{A, int64_t(k), int64_t(opnd), B, int64_t(k), int64_t(opnd), D8, n, int64_t(plane),
                              n, n, k, &c, prop.multiProcessorCount, ws, ws_bytes};
  struct Variant {
    std::string name;
    cudaError_t (*run)(const kernels::Oz2ProductsArgs&, cudaStream_t);
  };
  using namespace kernels::oz2_sm90;
  using P = kernels::Sm90Oz2ProductsPolicy;
  const std::vector<Variant> all_fused = {
      {"library", &Oz2ProductsGemm<P>::run},
      {"library_fp64_epilogue", &Oz2ProductsGemm<P, Fp64Reduce>::run},
      {"coop_128x256_c2x1_sw1", &Oz2ProductsGemm<Pol<128, 256, 2, 1, false, 1>>::run},
      {"coop_128x256_c2x1_sw2", &Oz2ProductsGemm<Pol<128, 256, 2, 1, false, 2>>::run},
      {"coop_128x256_c2x1_sw4", &Oz2ProductsGemm<Pol<128, 256, 2, 1, false, 4>>::run},
      {"coop_256x128_c1x2_sw4", &Oz2ProductsGemm<Pol<256, 128, 1, 2, false, 4>>::run},
      {"pingpong_128x128_c1x2_sw4", &Oz2ProductsGemm<Pol<128, 128, 1, 2, true, 4>>::run},
      // Clusters of 4: each operand tile multicast to two CTAs (a quarter less L2-to-SM traffic than
      // 2 x 1 at 128 x 256), for the power-bound products (docs/performance.md).
      {"coop_128x256_c2x2_sw8", &Oz2ProductsGemm<Pol<128, 256, 2, 2, false, 8>>::run},
      {"coop_256x128_c2x2_sw8", &Oz2ProductsGemm<Pol<256, 128, 2, 2, false, 8>>::run},
      {"coop_256x128_c2x1_sw8", &Oz2ProductsGemm<Pol<256, 128, 2, 1, false, 8>>::run},
      // The tiles a fully fused kernel (the CRT sums x, z of docs/numerics.md held on chip across all
      // moduli) could use: x and z are two FP64 words an entry, 4 registers beside its int32
      // accumulator, so 2 consumer warp groups of 128 threads hold at most ~64 x 128 entries' worth
      // (5 x 32 = 160 registers a thread at 128 x 64, 5 x 64 = 320 at 128 x 128: over the 255 limit).
      // Their products alone bound such a kernel's time from below (docs/performance.md).
      {"coop_128x128_c2x1_sw8", &Oz2ProductsGemm<Pol<128, 128, 2, 1, false, 8>>::run},
      {"coop_128x64_c1x1_sw8", &Oz2ProductsGemm<Pol<128, 64, 1, 1, false, 8>>::run},
      {"coop_128x64_c2x1_sw8", &Oz2ProductsGemm<Pol<128, 64, 2, 1, false, 8>>::run},
      {"coop_128x64_c1x2_sw8", &Oz2ProductsGemm<Pol<128, 64, 1, 2, false, 8>>::run},
      {"coop_128x64_c2x2_sw8", &Oz2ProductsGemm<Pol<128, 64, 2, 2, false, 8>>::run},
  };
  // OZ2_TUNE_ONLY="name,name,...": time only these fused configurations (default: all).
  std::vector<Variant> fused;
  const char* only = std::getenv("OZ2_TUNE_ONLY");
  for (const auto& v : all_fused)
    if (!only || !*only || ("," + std::string(only) + ",").find("," + v.name + ",") != std::string::npos) fused.push_back(v);
  // Reference planes and the check of every fused configuration.
  lt_each();
  CHECK_CUDA(cudaDeviceSynchronize());
  for (const auto& v : fused) {
    CHECK_CUDA(cudaMemset(D8, 0x5a, plane * N));
    *bad = 0;
    const cudaError_t e = v.run(pa, nullptr);
    if (e != cudaSuccess) {
      std::fprintf(stderr, "%s: %s\n", v.name.c_str(), cudaGetErrorString(e));
      continue;
    }
    count_mismatches<<<4096, 256>>>(D32, D8, plane, N, c, bad);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::fprintf(stderr, "check %-24s mismatches %llu of %zu\n", v.name.c_str(), *bad, plane * N);
  }
  Timer t;
  auto report = [&](int round, const std::string& name, double ms, int products) {
    const double tops = 2.0 * double(n) * double(n) * double(k) * products / (ms * 1e9);
    std::printf("{\"device\": \"%s\", \"n\": %lld, \"k\": %lld, \"moduli\": %d, \"round\": %d, \"variant\": \"%s\", "
                "\"ms\": %.4f, \"tops\": %.1f}\n",
                prop.name, (long long)n, (long long)k, N, round, name.c_str(), ms, tops);
    std::fprintf(stderr, "r%d %-26s %9.3f ms %7.1f TOPS\n", round, name.c_str(), ms, tops);
    std::fflush(stdout);
  };
  for (int r = 0; r < rounds; ++r) {
    report(r, "cublaslt_each_int32", t.median_ms(lt_each, iters), N);
    report(r, "cublaslt_batched_int32", t.median_ms(lt_batched, iters), N);
    for (const auto& v : fused)
      report(r, v.name, t.median_ms([&] { CHECK_CUDA(v.run(pa, nullptr)); }, iters), N);
  }
  // The INT8 probe's constant operands (one product): what random data do not reach.
  CHECK_CUDA(cudaMemset(A, 0x11, opnd));
  CHECK_CUDA(cudaMemset(B, 0x07, opnd));
  auto lt_one = [&] {
    if (lt.run(int(n), int(n), int(k), A, int(k), B, int(k), D32, int(n), ws, ws_bytes, nullptr, true) != CUBLAS_STATUS_SUCCESS)
      std::exit(2);
  };
  report(rounds, "cublaslt_one_constant_data", t.median_ms(lt_one, iters), 1);
  fill_residues<<<4096, 256>>>(A, opnd, 1);
  fill_residues<<<4096, 256>>>(B, opnd, 2);
  report(rounds, "cublaslt_one_random_data", t.median_ms(lt_one, iters), 1);
  return 0;
}
