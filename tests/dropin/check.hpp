// tests/dropin/check.hpp — CHECK for the drop-ins' C++ test programs: a condition that fails is
// reported on stderr with its line and a printf-style message and counted in g_bad (the program
// then exits non-zero).
#pragma once
#include <cstdio>

inline int g_bad = 0;  // failed checks so far

#define CHECK(cond, ...)                                 \
  do {                                                   \
    if (!(cond)) {                                       \
      std::fprintf(stderr, "FAIL line %d: ", __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                 \
      std::fprintf(stderr, "\n");                        \
      ++g_bad;                                           \
    }                                                    \
  } while (0)
