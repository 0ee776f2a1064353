// ozgemm/types.hpp — the one C++ definition of each option enum and limit of the library. The C
// API (ozgemm.h) has C enums with the same values; src/api/c_api.cpp static_asserts that every
// value agrees, so a static_cast between the two is always valid. No CUDA needed.
#pragma once

#include <cstdint>

#include "ozgemm/config.h"
#include "ozgemm/export.h"

namespace ozgemm {

// Slice counts (config.h is the single source).
constexpr int kMaxSlices = OZGEMM_MAX_SLICES;
constexpr int kDefaultSlices = OZGEMM_DEFAULT_SLICES;

constexpr int kMinModuli = OZGEMM_MIN_MODULI;
constexpr int kMaxModuli = OZGEMM_MAX_MODULI;
constexpr int kDefaultModuli = OZGEMM_DEFAULT_MODULI;
constexpr int kDefaultComplexModuli = OZGEMM_DEFAULT_COMPLEX_MODULI;

// Which emulation scheme (ozgemmScheme_t): Ozaki-I (slices), Ozaki-II (moduli, CRT), or Auto (FP64
// mode: whichever meets the bound fastest; FIXED mode: Ozaki-I).
enum class Scheme : int { Ozaki1 = 0, Ozaki2 = 1, Auto = 2 };

// How the product is computed (ozgemmVariant_t).
enum class Variant : int { Auto = 0, Unfused = 1, PartiallyFused = 2, FullyFused = 3, Native = 4 };
// Which kernel family runs the fused kernels (ozgemmKernelFamily_t); also the back-to-back GEMMs'.
enum class KernelFamily : int { Auto = 0, Sm90 = 1, Portable = 2 };
// Where the fully fused kernel keeps its FP64 sum (ozgemmFusedAccumulator_t).
enum class FusedAccumulator : int { Auto = 0, Registers = 1, Global = 2 };

// Lower-case names as the CLI and the C API's string functions print them ("unfused",
// "partially-fused", ...); nullptr for a value outside the enum.
OZGEMM_API const char* variant_name(Variant v);
OZGEMM_API const char* family_name(KernelFamily f);
OZGEMM_API const char* accumulator_name(FusedAccumulator a);
// Parses a name back (the inverse of the functions above); false for an unknown name.
OZGEMM_API bool parse_variant(const char* name, Variant* v);
OZGEMM_API bool parse_family(const char* name, KernelFamily* f);
OZGEMM_API bool parse_accumulator(const char* name, FusedAccumulator* a);

// What the planner knows of a device: read once per handle (src/api), plain data.
struct DeviceDesc {
  int sm_count = 132;
  int cc_major = 9, cc_minor = 0;
  int64_t memory_bytes = int64_t(80) << 30;  // global memory, bytes
  // Which kernel families this build carries code for (the dispatch layer reports it).
  bool sm90_kernels = true;      // TMA + wgmma kernels built for sm_90a
  bool portable_kernels = true;  // mma.sync + cp.async kernels built
  int cc() const { return cc_major * 10 + cc_minor; }
  // The Hopper kernels run only on compute capability 9.0 (sm_90a code is not forward compatible).
  bool is_hopper() const { return cc_major == 9 && cc_minor == 0; }
  // INT8 tensor cores (IMMA): compute capability 7.5 and newer.
  bool has_int8_tensor_cores() const { return cc() >= 75; }
};

}  // namespace ozgemm
