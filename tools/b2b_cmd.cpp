// tools/b2b_cmd.cpp — `ozgemm b2b`: runs a back-to-back GEMM fused (register and/or shared
// residency) and as the cuBLASLt unfused pair, checks every path against the host reference
// (exactly on integer inputs, the default; --phi gives real inputs checked within 2e-2), and
// times each with CUDA events (median of --iters runs after 3 warm-ups, inputs rotated over
// enough buffer sets to exceed 3x the L2 cache).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "event_timer.hpp"
#include "ozgemm/b2b.hpp"
#include "ozgemm/ozgemm.hpp"

namespace ozgemm {
namespace cli {

namespace {

struct Buf {
  void* p = nullptr;
  explicit Buf(size_t bytes) { OZ_TOOL_CUDA(cudaMalloc(&p, std::max<size_t>(bytes, 1))); }
  ~Buf() { cudaFree(p); }
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int cmd_b2b(const CliOptions& o) {
  std::string why;
  if (!gpu_available(&why)) {
    std::cerr << "ozgemm: error: b2b needs a GPU (" << why << ")\n";
    return kExitFailure;
  }
  b2b::Problem p;
  p.m = o.m >= 0 ? o.m : 81920;
  p.k0 = o.k >= 0 ? o.k : 576;
  p.n0 = o.n0 >= 0 ? o.n0 : 64;
  p.n1 = o.n1 >= 0 ? o.n1 : 128;
  p.alpha0 = static_cast<float>(o.alpha);
  p.beta1 = static_cast<float>(o.beta);
  const bool integers = o.phi.empty();
  std::vector<b2b::Residency> res;
  if (o.residency != 2) res.push_back(b2b::Residency::Register);
  if (o.residency != 1) res.push_back(b2b::Residency::Shared);
  for (auto r : res) {
    const std::string reason = b2b::can_implement(p, r);
    if (!reason.empty() && o.residency != 0) throw UsageError(reason);
  }
  // Host data. fp16: small integers (exact) or U(-1,1) * scale. int8: uniform over all of int8,
  // alpha0 / alpha1 scaled by the depths so D0 and D1 land mostly inside int8 (some saturate).
  const bool s8 = o.int8;
  if (s8) {
    p.type = b2b::DataType::S8;
    if (o.alpha == 1.0) p.alpha0 = static_cast<float>(1.0 / (64.0 * std::sqrt(double(p.k0))));
    p.alpha1 = static_cast<float>(1.0 / (64.0 * std::sqrt(double(p.n0))));
  }
  const int eb = s8 ? 1 : 2;
  std::mt19937 rng(static_cast<uint32_t>(o.seed));
  std::uniform_int_distribution<int> di(-2, 2), d8(-128, 127);
  std::uniform_real_distribution<float> dr(-1.0f, 1.0f);
  std::vector<uint8_t> a0, b0, b1, c1;  // raw bytes of the device arrays
  std::vector<float> bias(size_t(p.n0));
  auto fill = [&](std::vector<uint8_t>& v, size_t n, float scale, bool halves) {
    v.resize(n * eb);
    for (size_t i = 0; i < n; ++i) {
      if (s8) {
        v[i] = static_cast<uint8_t>(static_cast<int8_t>(d8(rng)));
      } else {
        const float f = integers ? float(di(rng)) / (halves ? 2.0f : 1.0f) : dr(rng) * scale;
        const uint16_t h = b2b::float_to_half(f);
        std::memcpy(&v[2 * i], &h, 2);
      }
    }
  };
  fill(a0, size_t(p.m * p.k0), 1, false);
  fill(b0, size_t(p.n0 * p.k0), 1, false);
  // fp16 integers: B1 in {-1, -0.5, 0, 0.5, 1} keeps D1 within fp16's exact integers
  fill(b1, size_t(p.n1 * p.n0), 0.125f, true);
  fill(c1, size_t(p.m * p.n1), 1, false);
  for (auto& x : bias) x = s8 ? float(d8(rng)) / 4 : (integers ? float(di(rng)) : dr(rng));
  // Host reference on a sample of rows (all rows when m <= 1024): the naive host loops take
  // minutes at m = 65536 with n0 = 256.
  std::vector<int64_t> check_rows;
  const int64_t samples = std::min<int64_t>(p.m, 1024);
  for (int64_t i = 0; i < samples; ++i) check_rows.push_back(samples == p.m ? i : i * (p.m - 1) / (samples - 1));
  std::vector<uint8_t> want(check_rows.size() * size_t(p.n1) * eb);
  {
    b2b::Problem q = p;
    q.m = int64_t(check_rows.size());
    std::vector<uint8_t> qa0(size_t(q.m * p.k0) * eb), qc1(size_t(q.m * p.n1) * eb);
    for (size_t i = 0; i < check_rows.size(); ++i) {
      std::copy_n(a0.begin() + check_rows[i] * p.k0 * eb, p.k0 * eb, qa0.begin() + i * p.k0 * eb);
      std::copy_n(c1.begin() + check_rows[i] * p.n1 * eb, p.n1 * eb, qc1.begin() + i * p.n1 * eb);
    }
    if (s8) {
      auto i8 = [](std::vector<uint8_t>& v) { return reinterpret_cast<int8_t*>(v.data()); };
      b2b::reference_s8(q, i8(qa0), i8(b0), bias.data(), i8(b1), i8(qc1), i8(want));
    } else {
      auto h16 = [](std::vector<uint8_t>& v) { return reinterpret_cast<uint16_t*>(v.data()); };
      b2b::reference(q, h16(qa0), h16(b0), bias.data(), h16(b1), h16(qc1), h16(want));
    }
  }
  // Element i of D1 (or of the expected rows) as a number.
  auto value = [&](const std::vector<uint8_t>& v, size_t i) -> double {
    if (s8) return double(static_cast<int8_t>(v[i]));
    uint16_t h;
    std::memcpy(&h, &v[2 * i], 2);
    return b2b::half_to_float(h);
  };

  cudaDeviceProp prop;
  int dev = 0;
  OZ_TOOL_CUDA(cudaGetDevice(&dev));
  OZ_TOOL_CUDA(cudaGetDeviceProperties(&prop, dev));
  const size_t set_bytes = a0.size() + b0.size() + b1.size() + 2 * c1.size() + 4 * bias.size();
  const int sets = std::max(1, std::min(16, int(std::ceil(3.0 * prop.l2CacheSize / double(set_bytes)))));
  std::vector<std::unique_ptr<Buf>> A0, B0, B1, C1, D1, BIAS;
  for (int i = 0; i < sets; ++i) {
    A0.emplace_back(new Buf(a0.size()));
    B0.emplace_back(new Buf(b0.size()));
    B1.emplace_back(new Buf(b1.size()));
    C1.emplace_back(new Buf(c1.size()));
    D1.emplace_back(new Buf(c1.size()));
    BIAS.emplace_back(new Buf(bias.size() * 4));
    OZ_TOOL_CUDA(cudaMemcpy(A0[i]->p, a0.data(), a0.size(), cudaMemcpyHostToDevice));
    OZ_TOOL_CUDA(cudaMemcpy(B0[i]->p, b0.data(), b0.size(), cudaMemcpyHostToDevice));
    OZ_TOOL_CUDA(cudaMemcpy(B1[i]->p, b1.data(), b1.size(), cudaMemcpyHostToDevice));
    OZ_TOOL_CUDA(cudaMemcpy(C1[i]->p, c1.data(), c1.size(), cudaMemcpyHostToDevice));
    OZ_TOOL_CUDA(cudaMemcpy(BIAS[i]->p, bias.data(), bias.size() * 4, cudaMemcpyHostToDevice));
  }
  Buf ws(b2b::workspace_size(p, true));
  b2b::Unfused unfused;
  cudaStream_t st;
  OZ_TOOL_CUDA(cudaStreamCreate(&st));
  auto args = [&](int i) {
    b2b::Arguments a;
    a.a0 = A0[i]->p;
    a.b0 = B0[i]->p;
    a.bias0 = static_cast<const float*>(BIAS[i]->p);
    a.b1 = B1[i]->p;
    a.c1 = C1[i]->p;
    a.d1 = D1[i]->p;
    return a;
  };
  struct Row {
    std::string path;
    double ms = 0;
    int64_t mismatches = 0;
    double worst = 0;
    bool ran = false;
    std::string note;
  };
  std::vector<Row> rows;
  auto measure = [&](const std::string& name, auto&& launch) {
    Row r;
    r.path = name;
    // Check: poison D1, run on set 0, compare with the host reference.
    OZ_TOOL_CUDA(cudaMemset(D1[0]->p, 0x7f, c1.size()));
    OZ_TOOL_CUDA(launch(0));
    OZ_TOOL_CUDA(cudaStreamSynchronize(st));
    std::vector<uint8_t> got(c1.size());
    OZ_TOOL_CUDA(cudaMemcpy(got.data(), D1[0]->p, got.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < check_rows.size(); ++i)
      for (int64_t j = 0; j < p.n1; ++j) {
        const size_t gi = size_t(check_rows[i] * p.n1 + j), wi = i * size_t(p.n1) + size_t(j);
        if (std::memcmp(&got[gi * eb], &want[wi * eb], eb) != 0) ++r.mismatches;
        const double w = value(want, wi), x = value(got, gi);
        r.worst = std::max(r.worst, std::isfinite(x) ? std::fabs(x - w) / (1.0 + std::fabs(w)) : INFINITY);
      }
    const int iters = o.iters > 0 ? o.iters : 50;
    r.ms = median_of(event_times(st, 3, iters, [&](int it) { OZ_TOOL_CUDA(launch(it % sets)); }));
    r.ran = true;
    rows.push_back(r);
  };
  for (auto rsd : res) {
    const std::string reason = b2b::can_implement(p, rsd, b2b::KernelFamily::Portable);
    if (!reason.empty()) {
      Row r;
      r.path = std::string("fused, ") + b2b::residency_name(rsd);
      r.note = reason;
      rows.push_back(r);
      continue;
    }
    measure(std::string("fused, ") + b2b::residency_name(rsd),
            [&](int i) { return b2b::run(p, args(i), rsd, st, b2b::KernelFamily::Portable); });
  }
  // The Hopper wgmma kernel, where it applies (fp16, register residency, n0 <= 128).
  if (o.residency != 2 && b2b::sm90_kernel_available() &&
      b2b::can_implement(p, b2b::Residency::Register, b2b::KernelFamily::Sm90).empty())
    measure("fused, register, sm90 wgmma", [&](int i) {
      return b2b::run(p, args(i), b2b::Residency::Register, st, b2b::KernelFamily::Sm90);
    });
  measure("unfused cuBLASLt pair", [&](int i) { return unfused.run(p, args(i), ws.p, st); });
  cudaStreamDestroy(st);

  const double flops = 2.0 * double(p.m) * (double(p.k0) * p.n0 + double(p.n0) * p.n1);
  const Row* base = nullptr;
  for (const auto& r : rows)
    if (r.ran && r.path.rfind("unfused", 0) == 0) base = &r;
  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", "b2b").field("device", gpu_description());
    json_provenance(j);
    j.field("m", p.m).field("k0", p.k0).field("n0", p.n0).field("n1", p.n1).field("type", b2b::type_name(p.type));
    j.field("inputs", s8 ? "int8" : integers ? "integers" : "real").field("iters", o.iters > 0 ? o.iters : 50);
    j.field("checked_rows", int64_t(check_rows.size()));
    j.key("paths").begin_array();
    for (const auto& r : rows) {
      j.begin_object();
      j.field("path", r.path).field("ran", r.ran);
      if (r.ran) {
        j.field("ms", r.ms).field("tflops", flops / (r.ms * 1e9)).field("mismatches", r.mismatches);
        j.field("max_rel_error", r.worst);
        if (base) j.field("speedup_vs_unfused", base->ms / r.ms);
      } else {
        j.field("why", r.note);
      }
      j.end_object();
    }
    j.end_array();
    j.end_object();
    std::cout << j.str() << "\n";
  } else {
    std::cout << "ozgemm b2b on " << gpu_description() << ": D0 = ReLU(A0 (" << p.m << " x " << p.k0 << ") x B0 ("
              << p.k0 << " x " << p.n0 << ") + bias), D1 = ReLU(D0 x B1 (" << p.n0 << " x " << p.n1
              << ") + beta C1), " << b2b::type_name(p.type) << ", "
              << (s8 ? "uniform int8" : integers ? "integer" : "real") << " inputs\n";
    std::cout << "  checked " << check_rows.size() << " rows against the host reference\n";
    TextTable t({"path", "time ms", s8 ? "TOPS" : "TFLOPS", "vs unfused", "mismatches", "max rel err"});
    for (const auto& r : rows) {
      if (!r.ran) {
        t.add_row({r.path, "-", "-", "-", "-", "not run: " + r.note});
        continue;
      }
      t.add_row({r.path, fmt_fixed(r.ms, 4), fmt_fixed(flops / (r.ms * 1e9), 1),
                 base ? fmt_fixed(base->ms / r.ms, 2) + "x" : "-", std::to_string(r.mismatches), fmt_sci(r.worst)});
    }
    t.print(std::cout);
  }
  // int8 and integer fp16 inputs must match exactly; real inputs within 2e-2 (fp32 sums in
  // another order).
  for (const auto& r : rows)
    if (r.ran && ((s8 || integers) ? r.mismatches != 0 : !(r.worst < 2e-2))) {
      std::cerr << "ozgemm: error: " << r.path << " does not match the host reference\n";
      return kExitFailure;
    }
  return kExitOk;
}

}  // namespace cli
}  // namespace ozgemm
