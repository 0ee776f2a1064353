// ozgemm/reference/b2b.hpp — host (CPU) reference of the back-to-back GEMM (ozgemm/b2b.hpp):
// the documented formula, element by element, and the conversions it uses. No CUDA needed.
#pragma once

#include <cstdint>

#include "ozgemm/b2b_types.hpp"

namespace ozgemm {
namespace b2b {

// fp16 inputs and outputs as uint16_t bit patterns; host arrays laid out as the device ones.
// d1 receives m x n1 (per batch / all groups). A convolution pair (p.conv.enabled()) takes X as
// a0 and computes A0 by im2col below.
void reference(const Problem& p, const uint16_t* a0, const uint16_t* b0, const float* bias0, const uint16_t* b1,
               const uint16_t* c1, uint16_t* d1);
// int8 version: host arrays as int8_t.
void reference_s8(const Problem& p, const int8_t* a0, const int8_t* b0, const float* bias0, const int8_t* b1,
                  const int8_t* c1, int8_t* d1);
// The implicit A0 of a convolution pair, made explicit: rows [first, first + rows) of A0 (each
// p.k0 = r * r * c elements: the r x r x c patch around the row's pixel, tap-major, channel
// fastest, zeros outside the image) from X (NHWC) into `out`.
void im2col(const Problem& p, const uint16_t* x, int64_t first, int64_t rows, uint16_t* out);
void im2col(const Problem& p, const int8_t* x, int64_t first, int64_t rows, int8_t* out);

// The requantisation of the S8 numerics: round to nearest even, saturate to [-128, 127].
int8_t saturate_s8(float v);

// fp16 <-> float on the host (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

}  // namespace b2b
}  // namespace ozgemm
