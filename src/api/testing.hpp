// src/api/testing.hpp — hooks for the library's own GPU tests; not part of the public API and
// not installed (exported from the shared library only so that the tests can link it).
#pragma once

#include <cstdint>

#include "ozgemm/export.h"
#include "ozgemm/ozgemm.h"

namespace ozgemm {
namespace testing {
// The device memory the planner assumes (it sizes the diagonal-buffer chunks), so GPU tests can
// force row and column chunking on small problems. 0 restores the real size.
OZGEMM_API void set_planning_memory(ozgemmHandle_t h, int64_t bytes);
}  // namespace testing
}  // namespace ozgemm
