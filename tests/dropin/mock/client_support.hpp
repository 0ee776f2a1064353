// tests/dropin/mock/client_support.hpp — shared by the mock clients that run under the preloaded hook.
#pragma once
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

// The preloaded hook's ozgemmHookCounter and ozgemmHookSetEnabled; false (said on stderr) when the
// hook is not preloaded.
inline bool find_hook(unsigned long long (**counter)(const char*), int (**set_enabled)(int)) {
  *counter = reinterpret_cast<unsigned long long (*)(const char*)>(dlsym(RTLD_DEFAULT, "ozgemmHookCounter"));
  *set_enabled = reinterpret_cast<int (*)(int)>(dlsym(RTLD_DEFAULT, "ozgemmHookSetEnabled"));
  if (*counter && *set_enabled) return true;
  std::fprintf(stderr, "FAIL: the hook is not preloaded\n");
  return false;
}

// The input matrices: n doubles from a seeded xorshift generator, exact binary fractions of both
// signs (|x| <= 1000/128), the same for the same seed.

inline std::vector<double> seeded_values(size_t n, uint64_t seed) {
  std::vector<double> v(n);
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
  for (double& x : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x = double(int64_t(s % 2001) - 1000) / 128.0;
  }
  return v;
}
