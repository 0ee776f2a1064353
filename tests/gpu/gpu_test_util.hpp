// tests/gpu/gpu_test_util.hpp — what every GPU test shares: the GPU check, the random seed and the
// bitwise comparison of results.
//
// Seeds: one suite seed per test binary, from OZGEMM_TEST_SEED or else random, printed before the
// first test ("[ seed ] ... OZGEMM_TEST_SEED=<n> reproduces this run"). Each test draws from its
// own generator, seeded from the suite seed and the test's name, so a failing test repeats alone
// with the same inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "ozgemm/ozgemm.hpp"

namespace oztest {

inline uint64_t suite_seed() {
  static const uint64_t seed = [] {
    if (const char* env = std::getenv("OZGEMM_TEST_SEED")) return static_cast<uint64_t>(std::strtoull(env, nullptr, 10));
    return (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }();
  return seed;
}

class SeedPrinter : public ::testing::Environment {
 public:
  void SetUp() override {
    std::cout << "[ seed     ] suite seed " << suite_seed() << " (OZGEMM_TEST_SEED=" << suite_seed()
              << " reproduces this run)" << std::endl;
  }
};
inline ::testing::Environment* const kSeedPrinter = ::testing::AddGlobalTestEnvironment(new SeedPrinter);

// The current test's generator: the suite seed mixed with the test's full name.
inline std::mt19937_64 test_rng() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "";
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return std::mt19937_64(suite_seed() ^ h);
}

// Bitwise equal, except that any two NaNs match (x86 and the GPU produce NaNs with different
// sign/payload bits for the same invalid operation).
inline bool same_bits(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint64_t x, y;
  std::memcpy(&x, &a, 8);
  std::memcpy(&y, &b, 8);
  return x == y;
}

// Complex values: both parts.
inline bool same_bits(std::complex<double> a, std::complex<double> b) {
  return same_bits(a.real(), b.real()) && same_bits(a.imag(), b.imag());
}

// The entries where got differs from want (same_bits), the first three reported as failures.
template <class T>
int64_t count_differences(const std::vector<T>& want, const std::vector<T>& got, const std::string& what) {
  int64_t bad = 0;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i)
    if (!same_bits(want[i], got[i]) && bad++ < 3)
      ADD_FAILURE() << what << ": entry " << i << " want " << want[i] << " got " << got[i];
  return bad + static_cast<int64_t>(want.size() != got.size());
}

}  // namespace oztest

// Skips the test (visibly, with the reason) when there is no usable GPU.
#define OZTEST_REQUIRE_GPU()                                  \
  do {                                                        \
    std::string why_;                                         \
    if (!ozgemm::gpu_available(&why_)) GTEST_SKIP() << why_;  \
  } while (0)
