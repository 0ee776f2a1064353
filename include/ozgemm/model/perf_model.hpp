// ozgemm/model/perf_model.hpp — the roofline model of the Ozaki-I variants (after the seed tutorial):
// INT8 operations at a device's INT8 rate, bytes moved at its memory bandwidth, per phase.
// Host-only, no CUDA; used by `ozgemm model` and by `ozgemm bench` (prediction beside the
// measurement).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ozgemm/types.hpp"

namespace ozgemm {
namespace model {

struct DeviceSpec {
  std::string name;
  double int8_tops;      // dense INT8 tensor rate, 1e12 ops/s
  double bandwidth_gbs;  // memory bandwidth, 1e9 bytes/s (read + write)
  double fp64_tflops;    // native FP64 (tensor) rate, for the native-DGEMM prediction
};
// Datasheet figures (dense, no sparsity): H100 SXM, H200, L40S, B200.
const std::vector<DeviceSpec>& datasheet_specs();

// Variants are ozgemm::Variant (types.hpp); Auto is not a variant the model predicts.
using ozgemm::Variant;

struct Phase {
  std::string name;
  double ops = 0;    // INT8 operations (2 per multiply-add) or FP64 flops for native
  double bytes = 0;  // bytes read + written in device memory
  double ms = 0;     // max(ops / rate, bytes / bandwidth)
};
struct Prediction {
  Variant variant;
  std::vector<Phase> phases;
  double ms = 0;  // phases run one after another: the sum
  double flops_per_mnk = 2.0;  // 2 (a real multiply-add), 8 for complex products (predict_zgemm)
  double tflops(int64_t m, int64_t n, int64_t k) const { return flops_per_mnk * m * n * k / (ms * 1e9); }
};

// C (m x n) = A (m x k) B (k x n) with s slices, beta != 0 reading C once.
// Bytes counted (each operand read once per pass, nothing cached across kernels):
//   max-reduce  reads A, B (8 bytes an element)
//   slicing     reads A, B again, writes s int8 slices of each
//   products    unfused: one int32 m x n plane per diagonal written (s planes; ozgemm's unfused
//               path sums each diagonal inside cuBLASLt), INT8 ops 2mnk s(s+1)/2
//               partially fused: the same planes, written by the fused kernel
//               fully fused: no planes; C written (and read when beta != 0) by the kernel
//   epilogue    unfused / partially fused: reads the s planes, writes C (reads it if beta != 0)
// The GEMM operands' re-reads from L2 are not memory traffic in this model.
Prediction predict(Variant v, int64_t m, int64_t n, int64_t k, int s, bool beta_nonzero, const DeviceSpec& dev);

// The Ozaki-II scheme with N moduli, variant Unfused or PartiallyFused (k within one int32 chunk):
//   max-reduce + norms   read A, B twice (8 bytes an element each time)
//   residues             read A, B again, write N int8 residues of each
//   products             N INT8 GEMMs (2mnk N ops), each writing one plane: int32 from cuBLASLt
//                        (Unfused), int8 residues from the Hopper GEMM's epilogue (PartiallyFused)
//   reconstruction       reads the N planes (4 or 1 bytes an entry), writes C (reads it if beta != 0)
Prediction predict_ozaki2(int64_t m, int64_t n, int64_t k, int moduli, bool beta_nonzero, const DeviceSpec& dev,
                          Variant variant = Variant::Unfused);

// Complex FP64 (ZGEMM; 16-byte elements, tflops counts 8 m n k):
//   Native               one phase, 8mnk flops at the FP64 rate (four real products' work), A, B, C once
//   Unfused, PartiallyFused: the complex Ozaki-II scheme "2M" with N moduli, the phases of predict_ozaki2
//                        with complex operands and two residue planes per modulus and operand (x + jy and
//                        x - jy mod p): 2N INT8 GEMMs (2mnk 2N ops), 2N planes written and read back
Prediction predict_zgemm(Variant v, int64_t m, int64_t n, int64_t k, int moduli, bool beta_nonzero,
                         const DeviceSpec& dev);

}  // namespace model
}  // namespace ozgemm
