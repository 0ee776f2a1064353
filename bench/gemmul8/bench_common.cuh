// bench/gemmul8/bench_common.cuh — what the GEMMul8 side-by-side benchmarks share (side_by_side.cu: real,
// zgemm_side_by_side.cu: complex): the phi-family inputs generated on the GPU, the NaN poison, the timing
// method, the rotated rounds, the ozgemm handle's settings per method and the JSON formatting.
#pragma once

#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "../cuda_check.hpp"
#include "ozgemm/ozgemm.h"

namespace bench {

// x[i] = (U(0,1) - 0.5) exp(phi N(0,1)) (phi < 0: U(0,1) - 0.5), entry i from Philox subsequence i of `seed`,
// so the values do not depend on the launch shape. A complex array is filled as 2 count doubles: real and
// imaginary parts are independent draws of the same family.
__global__ void fill_phi_kernel(double* x, size_t count, double phi, unsigned long long seed) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  curandStatePhilox4_32_10_t st;
  curand_init(seed, i, 0, &st);
  const double u = curand_uniform_double(&st), g = curand_normal_double(&st);
  x[i] = (u - 0.5) * (phi < 0 ? 1.0 : std::exp(phi * g));
}

__global__ void fill_nan_kernel(double* x, size_t count) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) x[i] = __longlong_as_double(0x7ff8dead00000000ll);
}

inline void fill_phi(double* x, size_t count, double phi, unsigned long long seed) {
  fill_phi_kernel<<<unsigned((count + 255) / 256), 256>>>(x, count, phi, seed);
  CHECK_CUDA(cudaGetLastError());
}
inline void poison(double* x, size_t count) {
  fill_nan_kernel<<<unsigned((count + 255) / 256), 256>>>(x, count);
  CHECK_CUDA(cudaGetLastError());
}

// Median milliseconds of `iters` timed calls after 2 warm-ups, C (c_doubles doubles) poisoned with NaN
// before each, so a method that leaves entries unwritten shows in its error.
inline double time_ms(const std::function<void()>& call, double* C, size_t c_doubles, int iters) {
  cudaEvent_t t0, t1;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));
  std::vector<float> ms;
  for (int it = 0; it < iters + 2; ++it) {
    poison(C, c_doubles);
    CHECK_CUDA(cudaEventRecord(t0));
    call();
    CHECK_CUDA(cudaEventRecord(t1));
    CHECK_CUDA(cudaEventSynchronize(t1));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, t0, t1));
    if (it >= 2) ms.push_back(t);
  }
  CHECK_CUDA(cudaEventDestroy(t0));
  CHECK_CUDA(cudaEventDestroy(t1));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// `rounds` rounds, each running every method once; round r starts at method r (mod the method count), so
// no method keeps one slot. The card runs at its power limit under these loads and its SM clock swings
// (about 1000-1980 MHz, H100 2026-11-26), so one method's ITERS calls at 8192^3 (about 0.2 s) catch one
// phase of the swing; the summaries take each method's median over the rounds.
inline void run_rotated(const std::vector<std::function<void(int)>>& methods, int rounds) {
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < methods.size(); ++i) methods[(i + size_t(r)) % methods.size()](r);
}

inline std::string env_string(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}
inline int env_int(const char* name, int fallback) {
  return std::getenv(name) ? std::atoi(std::getenv(name)) : fallback;
}

// "14,15,16" -> {14, 15, 16}: a comma-separated list of T (int or double).
template <typename T>
std::vector<T> parse_list(const std::string& list) {
  std::vector<T> out;
  std::stringstream ss(list);
  std::string tok;
  while (std::getline(ss, tok, ',')) out.push_back(static_cast<T>(std::atof(tok.c_str())));
  return out;
}

// A JSON value for x: the number, or null where it is not finite (a non-finite entry in C).
inline std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}

// A JSON string literal of s (quotes, backslashes and control characters escaped).
inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// Sets one ozgemm handle for a method: scheme, variant, and the count: FIXED mode with `count` moduli
// (scheme OZAKI2; ozgemmZgemm whatever the scheme) or slices (OZAKI1); count 0: FP64 mode, the data decide.
// False (with a line on stderr) where this device or build refuses a setting.
inline bool set_ozgemm_method(ozgemmHandle_t oz, ozgemmScheme_t scheme, ozgemmVariant_t v, int count) {
  const bool ok = ozgemmSetScheme(oz, scheme) == OZGEMM_STATUS_SUCCESS &&
                  ozgemmSetVariant(oz, v) == OZGEMM_STATUS_SUCCESS &&
                  (count == 0 ? ozgemmSetAccuracy(oz, OZGEMM_ACCURACY_FP64)
                   : scheme == OZGEMM_SCHEME_OZAKI1 ? ozgemmSetSlices(oz, count)
                                                     : ozgemmSetModuli(oz, count)) == OZGEMM_STATUS_SUCCESS;
  if (!ok)
    std::fprintf(stderr, "ozgemm scheme %d %s count %d: not available on this device or build\n", int(scheme),
                 ozgemmGetVariantString(v), count);
  return ok;
}

// The variant the last call on `oz` ran (ozgemmGetLastCallInfo, into *info), with the requested one beside
// it where they differ.
inline std::string ozgemm_ran_mode(ozgemmHandle_t oz, ozgemmVariant_t requested, ozgemmCallInfo_t* info) {
  *info = ozgemmCallInfo_t{};
  ozgemmGetLastCallInfo(oz, info);
  std::string mode = ozgemmGetVariantString(info->variant);
  if (info->variant != requested) mode += std::string(" (requested ") + ozgemmGetVariantString(requested) + ")";
  return mode;
}

}  // namespace bench
