#include "ozgemm/model/perf_model.hpp"

#include <algorithm>

namespace ozgemm {
namespace model {

const std::vector<DeviceSpec>& datasheet_specs() {
  static const std::vector<DeviceSpec> specs = {
      {"H100-SXM", 1979.0, 3350.0, 67.0},
      {"H200", 1979.0, 4800.0, 67.0},
      {"L40S", 733.0, 864.0, 1.4},
      {"B200", 4500.0, 8000.0, 40.0},
  };
  return specs;
}

namespace {
Phase phase(const std::string& name, double ops, double bytes, double rate_per_s, const DeviceSpec& dev) {
  Phase p;
  p.name = name;
  p.ops = ops;
  p.bytes = bytes;
  const double t_ops = rate_per_s > 0 ? ops / rate_per_s : 0.0;
  const double t_bytes = bytes / (dev.bandwidth_gbs * 1e9);
  p.ms = 1e3 * std::max(t_ops, t_bytes);
  return p;
}
}  // namespace

Prediction predict(Variant v, int64_t m, int64_t n, int64_t k, int s, bool beta_nonzero, const DeviceSpec& dev) {
  Prediction pr;
  pr.variant = v;
  const double M = double(m), N = double(n), K = double(k);
  const double c_bytes = 8.0 * M * N * (beta_nonzero ? 2.0 : 1.0);
  if (v == Variant::Native) {
    pr.phases.push_back(phase("dgemm", 2.0 * M * N * K, 8.0 * (M * K + K * N) + c_bytes, dev.fp64_tflops * 1e12, dev));
  } else {
    const double int8_ops = 2.0 * M * N * K * (s * (s + 1) / 2.0);
    const double operands = 8.0 * (M * K + K * N);
    const double planes = 4.0 * s * M * N;
    pr.phases.push_back(phase("max-reduce", 0, operands, 0, dev));
    pr.phases.push_back(phase("slicing", 0, operands + s * (M * K + K * N), 0, dev));
    const double rate = dev.int8_tops * 1e12;
    if (v == Variant::FullyFused) {
      pr.phases.push_back(phase("products+epilogue", int8_ops, c_bytes, rate, dev));
    } else {
      pr.phases.push_back(phase("products", int8_ops, planes, rate, dev));
      pr.phases.push_back(phase("epilogue", 0, planes + c_bytes, 0, dev));
    }
  }
  for (const auto& p : pr.phases) pr.ms += p.ms;
  return pr;
}

namespace {
// The Ozaki-II phases with `elem_bytes` per operand element (8 real, 16 complex) and `planes` residue
// planes (INT8 GEMMs) per modulus (1 real, 2 for the complex 2M scheme).
Prediction ozaki2_phases(int64_t m, int64_t n, int64_t k, int moduli, bool beta_nonzero, const DeviceSpec& dev,
                         Variant variant, double elem_bytes, double planes) {
  Prediction pr;
  pr.variant = variant == Variant::PartiallyFused ? Variant::PartiallyFused : Variant::Unfused;
  const double plane_bytes = pr.variant == Variant::PartiallyFused ? 1.0 : 4.0;
  const double M = double(m), N = double(n), K = double(k), Np = double(moduli) * planes;
  const double operands = elem_bytes * (M * K + K * N);
  const double c_bytes = elem_bytes * M * N * (beta_nonzero ? 2.0 : 1.0);
  pr.phases.push_back(phase("max-reduce+norms", 0, 2 * operands, 0, dev));
  pr.phases.push_back(phase("residues", 0, operands + Np * (M * K + K * N), 0, dev));
  // Each product writes a plane (int32 or int8), which the reconstruction reads back.
  pr.phases.push_back(phase("products", 2.0 * M * N * K * Np, Np * plane_bytes * M * N, dev.int8_tops * 1e12, dev));
  pr.phases.push_back(phase("reconstruction", 0, Np * plane_bytes * M * N + c_bytes, 0, dev));
  for (const auto& p : pr.phases) pr.ms += p.ms;
  return pr;
}
}  // namespace

Prediction predict_ozaki2(int64_t m, int64_t n, int64_t k, int moduli, bool beta_nonzero, const DeviceSpec& dev,
                          Variant variant) {
  return ozaki2_phases(m, n, k, moduli, beta_nonzero, dev, variant, 8.0, 1.0);
}

Prediction predict_zgemm(Variant v, int64_t m, int64_t n, int64_t k, int moduli, bool beta_nonzero,
                         const DeviceSpec& dev) {
  Prediction pr;
  if (v == Variant::Native) {
    pr.variant = Variant::Native;
    const double M = double(m), N = double(n), K = double(k);
    const double c_bytes = 16.0 * M * N * (beta_nonzero ? 2.0 : 1.0);
    pr.phases.push_back(phase("zgemm", 8.0 * M * N * K, 16.0 * (M * K + K * N) + c_bytes, dev.fp64_tflops * 1e12, dev));
    pr.ms = pr.phases.back().ms;
  } else {
    pr = ozaki2_phases(m, n, k, moduli, beta_nonzero, dev, v, 16.0, 2.0);
  }
  pr.flops_per_mnk = 8.0;
  return pr;
}

}  // namespace model
}  // namespace ozgemm
