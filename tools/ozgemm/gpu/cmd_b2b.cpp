// tools/ozgemm/gpu/cmd_b2b.cpp — `ozgemm b2b`: runs a back-to-back GEMM pair (or, with --conv, a
// convolution pair) fused (register and/or shared residency, portable kernels, and the Hopper
// kernel where it applies) and unfused, checks every path against the host reference (exactly on
// integer inputs, the default; --phi gives real inputs checked within 2e-2), and times each with
// CUDA events (median of --iters runs after 3 warm-ups, inputs rotated over enough buffer sets to
// exceed 3x the L2).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>

#include "cli.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/event_timer.hpp"
#include "ozgemm/b2b.hpp"
#include "ozgemm/ozgemm.hpp"
#include "ozgemm/reference/b2b.hpp"

namespace ozgemm {
namespace cli {

namespace {

struct Buf {
  void* p = nullptr;
  explicit Buf(size_t bytes) { OZ_TOOL_CUDA(cudaMalloc(&p, std::max<size_t>(bytes, 1))); }
  ~Buf() { cudaFree(p); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
};

// The problem the options describe (default: CUTLASS example 13's first shape). int8 scales
// alpha0 / alpha1 by the depths so D0 and D1 land mostly inside int8 (some saturate).
// --conv: the example's convolution pair (N x H x W x C, conv 0 --filter x --filter).
b2b::Problem problem_of(const CliOptions& o) {
  b2b::Problem p;
  p.m = o.m >= 0 ? o.m : 81920;
  p.k0 = o.k >= 0 ? o.k : 576;
  p.n0 = o.n0 >= 0 ? o.n0 : 64;
  p.n1 = o.n1 >= 0 ? o.n1 : 128;
  if (!o.conv.empty())
    p = b2b::conv_pair(b2b::DataType::F16, b2b::Conv{o.conv[0], o.conv[1], o.conv[2], o.conv[3], o.filter > 0 ? o.filter : 3},
                       p.n0, p.n1);
  p.alpha0 = static_cast<float>(o.alpha);
  p.beta1 = static_cast<float>(o.beta);
  if (o.int8) {
    p.type = b2b::DataType::S8;
    if (o.alpha == 1.0) p.alpha0 = static_cast<float>(1.0 / (64.0 * std::sqrt(double(p.k0))));
    p.alpha1 = static_cast<float>(1.0 / (64.0 * std::sqrt(double(p.n0))));
  }
  return p;
}

// Host data (raw bytes of the device arrays) and the expected D1 rows on a sample.
struct HostData {
  bool s8 = false, integers = true;
  int eb = 2;  // bytes an element
  std::vector<uint8_t> a0, b0, b1, c1;
  std::vector<float> bias;
  std::vector<int64_t> check_rows;  // rows of D1 checked (all when m <= 1024)
  std::vector<uint8_t> want;        // their expected values
  // Element i of D1 (or of the expected rows) as a number.
  double value(const std::vector<uint8_t>& v, size_t i) const {
    if (s8) return double(static_cast<int8_t>(v[i]));
    uint16_t h;
    std::memcpy(&h, &v[2 * i], 2);
    return b2b::half_to_float(h);
  }
};

// fp16: small integers (exact) or U(-1,1) * scale; int8: uniform over all of int8.
HostData make_data(const b2b::Problem& p, const CliOptions& o) {
  HostData d;
  d.s8 = p.type == b2b::DataType::S8;
  d.integers = o.phi.empty();
  d.eb = d.s8 ? 1 : 2;
  std::mt19937 rng(static_cast<uint32_t>(o.seed));
  std::uniform_int_distribution<int> di(-2, 2), d8(-128, 127);
  std::uniform_real_distribution<float> dr(-1.0f, 1.0f);
  auto fill = [&](std::vector<uint8_t>& v, size_t n, float scale, bool halves) {
    v.resize(n * d.eb);
    for (size_t i = 0; i < n; ++i) {
      if (d.s8) {
        v[i] = static_cast<uint8_t>(static_cast<int8_t>(d8(rng)));
      } else {
        const float f = d.integers ? float(di(rng)) / (halves ? 2.0f : 1.0f) : dr(rng) * scale;
        const uint16_t h = b2b::float_to_half(f);
        std::memcpy(&v[2 * i], &h, 2);
      }
    }
  };
  fill(d.a0, size_t(p.m * (p.conv.enabled() ? p.conv.c : p.k0)), 1, false);  // A0, or a convolution's X
  fill(d.b0, size_t(p.n0 * p.k0), 1, false);
  // fp16 integers: B1 in {-1, -0.5, 0, 0.5, 1} keeps D1 within fp16's exact integers
  fill(d.b1, size_t(p.n1 * p.n0), 0.125f, true);
  fill(d.c1, size_t(p.m * p.n1), 1, false);
  d.bias.resize(size_t(p.n0));
  for (auto& x : d.bias) x = d.s8 ? float(d8(rng)) / 4 : (d.integers ? float(di(rng)) : dr(rng));
  // Host reference on a sample of rows: the naive host loops take minutes at m = 65536, n0 = 256.
  const int64_t samples = std::min<int64_t>(p.m, 1024);
  for (int64_t i = 0; i < samples; ++i) d.check_rows.push_back(samples == p.m ? i : i * (p.m - 1) / (samples - 1));
  // The sampled rows as a GEMM pair of their own (a convolution's rows: their patches, by im2col).
  b2b::Problem q = p;
  q.m = int64_t(d.check_rows.size());
  q.conv = b2b::Conv{};
  std::vector<uint8_t> qa0(size_t(q.m * p.k0) * d.eb), qc1(size_t(q.m * p.n1) * d.eb);
  for (size_t i = 0; i < d.check_rows.size(); ++i) {
    uint8_t* row = qa0.data() + i * p.k0 * d.eb;
    if (!p.conv.enabled())
      std::copy_n(d.a0.begin() + d.check_rows[i] * p.k0 * d.eb, p.k0 * d.eb, row);
    else if (d.s8)
      b2b::im2col(p, reinterpret_cast<const int8_t*>(d.a0.data()), d.check_rows[i], 1, reinterpret_cast<int8_t*>(row));
    else
      b2b::im2col(p, reinterpret_cast<const uint16_t*>(d.a0.data()), d.check_rows[i], 1, reinterpret_cast<uint16_t*>(row));
    std::copy_n(d.c1.begin() + d.check_rows[i] * p.n1 * d.eb, p.n1 * d.eb, qc1.begin() + i * p.n1 * d.eb);
  }
  d.want.resize(d.check_rows.size() * size_t(p.n1) * d.eb);
  if (d.s8) {
    auto i8 = [](std::vector<uint8_t>& v) { return reinterpret_cast<int8_t*>(v.data()); };
    b2b::reference_s8(q, i8(qa0), i8(d.b0), d.bias.data(), i8(d.b1), i8(qc1), i8(d.want));
  } else {
    auto h16 = [](std::vector<uint8_t>& v) { return reinterpret_cast<uint16_t*>(v.data()); };
    b2b::reference(q, h16(qa0), h16(d.b0), d.bias.data(), h16(d.b1), h16(qc1), h16(d.want));
  }
  return d;
}

// The inputs on the device, in enough copies to exceed 3x the L2 cache.
struct DeviceSets {
  int count = 0;
  std::vector<std::unique_ptr<Buf>> a0, b0, b1, c1, d1, bias;
  b2b::Arguments args(int i) const {
    b2b::Arguments a;
    a.a0 = a0[i]->p;
    a.b0 = b0[i]->p;
    a.bias0 = static_cast<const float*>(bias[i]->p);
    a.b1 = b1[i]->p;
    a.c1 = c1[i]->p;
    a.d1 = d1[i]->p;
    return a;
  }
};

DeviceSets upload(const HostData& d) {
  cudaDeviceProp prop;
  int dev = 0;
  OZ_TOOL_CUDA(cudaGetDevice(&dev));
  OZ_TOOL_CUDA(cudaGetDeviceProperties(&prop, dev));
  const size_t set_bytes = d.a0.size() + d.b0.size() + d.b1.size() + 2 * d.c1.size() + 4 * d.bias.size();
  DeviceSets s;
  s.count = std::max(1, std::min(16, int(std::ceil(3.0 * prop.l2CacheSize / double(set_bytes)))));
  auto put = [](std::vector<std::unique_ptr<Buf>>& v, const void* src, size_t bytes) {
    v.emplace_back(new Buf(bytes));
    if (src) OZ_TOOL_CUDA(cudaMemcpy(v.back()->p, src, bytes, cudaMemcpyHostToDevice));
  };
  for (int i = 0; i < s.count; ++i) {
    put(s.a0, d.a0.data(), d.a0.size());
    put(s.b0, d.b0.data(), d.b0.size());
    put(s.b1, d.b1.data(), d.b1.size());
    put(s.c1, d.c1.data(), d.c1.size());
    put(s.d1, nullptr, d.c1.size());
    put(s.bias, d.bias.data(), d.bias.size() * 4);
  }
  return s;
}

struct PathRow {
  std::string path;
  double ms = 0;
  int64_t mismatches = 0;
  double worst = 0;
  bool ran = false;
  std::string note;  // why not run
};

// Checks one planned path against the host reference (poisoned D1, set 0), then times it.
PathRow measure(const std::string& name, ozgemmHandle_t h, const b2b::Plan& plan, const b2b::Problem& p,
                const HostData& d, const DeviceSets& sets, void* ws, int iters) {
  PathRow r;
  r.path = name;
  cudaStream_t st = nullptr;
  check(ozgemmGetStream(h, &st), "ozgemmGetStream");
  auto launch = [&](int i) { check(b2b::run(h, plan, p, sets.args(i), ws, plan.workspace_bytes), "b2b::run"); };
  OZ_TOOL_CUDA(cudaMemset(sets.d1[0]->p, 0x7f, d.c1.size()));
  launch(0);
  OZ_TOOL_CUDA(cudaStreamSynchronize(st));
  std::vector<uint8_t> got(d.c1.size());
  OZ_TOOL_CUDA(cudaMemcpy(got.data(), sets.d1[0]->p, got.size(), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < d.check_rows.size(); ++i)
    for (int64_t j = 0; j < p.n1; ++j) {
      const size_t gi = size_t(d.check_rows[i] * p.n1 + j), wi = i * size_t(p.n1) + size_t(j);
      if (std::memcmp(&got[gi * d.eb], &d.want[wi * d.eb], d.eb) != 0) ++r.mismatches;
      const double w = d.value(d.want, wi), x = d.value(got, gi);
      r.worst = std::max(r.worst, std::isfinite(x) ? std::fabs(x - w) / (1.0 + std::fabs(w)) : INFINITY);
    }
  r.ms = median(event_times(st, 3, iters, [&](int it) { launch(it % sets.count); }));
  r.ran = true;
  return r;
}

// auto_path: the row the default options (AUTO) run, or why b2b::plan refused them.
void print(const CliOptions& o, const b2b::Problem& p, const HostData& d, const std::vector<PathRow>& rows, int iters,
           const std::string& auto_path) {
  const double flops = 2.0 * double(p.m) * (double(p.k0) * p.n0 + double(p.n0) * p.n1);
  const PathRow* base = nullptr;
  for (const auto& r : rows)
    if (r.ran && r.path.rfind("unfused", 0) == 0) base = &r;
  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", "b2b").field("device", gpu_description());
    json_provenance(j);
    j.field("m", p.m).field("k0", p.k0).field("n0", p.n0).field("n1", p.n1).field("type", b2b::type_name(p.type));
    if (p.conv.enabled()) {
      j.key("conv").begin_object();
      j.field("n", p.conv.n).field("h", p.conv.h).field("w", p.conv.w).field("c", p.conv.c).field("r", int64_t(p.conv.r));
      j.end_object();
    }
    j.field("inputs", d.s8 ? "int8" : d.integers ? "integers" : "real").field("iters", iters);
    j.field("seed", o.seed).field("checked_rows", int64_t(d.check_rows.size())).field("auto_path", auto_path);
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
    return;
  }
  std::cout << "ozgemm b2b on " << gpu_description() << ": ";
  if (p.conv.enabled())
    std::cout << "D0 = ReLU(conv " << p.conv.r << "x" << p.conv.r << "(X " << p.conv.n << "x" << p.conv.h << "x" << p.conv.w
              << "x" << p.conv.c << " NHWC) -> " << p.n0 << " channels + bias), D1 = ReLU(conv 1x1(D0) -> " << p.n1
              << " channels + beta C1) (GEMMs " << p.m << " x " << p.k0 << " -> " << p.n0 << " -> " << p.n1 << "), ";
  else
    std::cout << "D0 = ReLU(A0 (" << p.m << " x " << p.k0 << ") x B0 (" << p.k0 << " x " << p.n0
              << ") + bias), D1 = ReLU(D0 x B1 (" << p.n0 << " x " << p.n1 << ") + beta C1), ";
  std::cout << b2b::type_name(p.type) << ", " << (d.s8 ? "uniform int8" : d.integers ? "integer" : "real")
            << " inputs, seed " << o.seed << "\n";
  std::cout << "  checked " << d.check_rows.size() << " rows against the host reference\n";
  TextTable t({"path", "time ms", d.s8 ? "TOPS" : "TFLOPS", "vs unfused", "mismatches", "max rel err"});
  for (const auto& r : rows) {
    if (!r.ran) {
      t.add_row({r.path, "-", "-", "-", "-", "not run: " + r.note});
      continue;
    }
    t.add_row({r.path, fmt_fixed(r.ms, 4), fmt_fixed(flops / (r.ms * 1e9), 1),
               base ? fmt_fixed(base->ms / r.ms, 2) + "x" : "-", std::to_string(r.mismatches), fmt_sci(r.worst)});
  }
  t.print(std::cout);
  std::cout << "  AUTO (the default b2b::Options) runs: " << auto_path << "\n";
}

}  // namespace

int cmd_b2b(const CliOptions& o) {
  std::string why;
  if (!gpu_available(&why)) {
    std::cerr << "ozgemm: error: b2b needs a GPU (" << why << ")\n";
    return kExitFailure;
  }
  const b2b::Problem p = problem_of(o);
  std::vector<b2b::Residency> res;
  if (o.residency != 2) res.push_back(b2b::Residency::Register);
  if (o.residency != 1) res.push_back(b2b::Residency::Shared);
  Handle h;
  cudaStream_t st;
  OZ_TOOL_CUDA(cudaStreamCreate(&st));
  h.set_stream(st);
  // The paths to run: portable fused per residency, the Hopper kernel (register residency) and the
  // unfused pair. A path the problem or device does not allow is a row saying why.
  struct Path {
    std::string name;
    b2b::Options options;
  };
  std::vector<Path> paths;
  for (auto r : res) paths.push_back({std::string("fused, ") + b2b::residency_name(r), {false, r, KernelFamily::Portable}});
  if (o.residency != 2) paths.push_back({"fused, register, sm90 wgmma", {false, b2b::Residency::Register, KernelFamily::Sm90}});
  paths.push_back({p.conv.enabled() ? "unfused: conv 0 on our kernel, conv 1 on cuBLASLt" : "unfused cuBLASLt pair",
                   {true, b2b::Residency::Register, KernelFamily::Auto}});
  std::vector<b2b::Plan> plans(paths.size());
  std::vector<std::string> refused(paths.size());
  size_t ws_bytes = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (b2b::plan(h.get(), p, paths[i].options, &plans[i], &refused[i]) != OZGEMM_STATUS_SUCCESS) {
      // Asking for one residency the problem cannot take is a usage error; otherwise a row says why.
      if (o.residency != 0 && paths[i].options.family == KernelFamily::Portable && !paths[i].options.unfused)
        throw UsageError(refused[i]);
      continue;
    }
    refused[i].clear();
    ws_bytes = std::max(ws_bytes, plans[i].workspace_bytes);
  }
  // What the default options (AUTO: family Auto, not unfused) run: one of the rows above.
  std::string auto_path;
  {
    b2b::Plan auto_plan;
    std::string auto_why;
    if (b2b::plan(h.get(), p, b2b::Options{}, &auto_plan, &auto_why) != OZGEMM_STATUS_SUCCESS) {
      auto_path = "nothing (" + auto_why + ")";
    } else {
      for (const Path& path : paths)
        if (path.options.unfused == auto_plan.unfused &&
            (auto_plan.unfused || (path.options.family == auto_plan.family &&
                                   path.options.residency == auto_plan.options.residency)))
          auto_path = path.name;
      if (auto_path.empty())  // --residency shared left out AUTO's register-resident row
        auto_path = std::string("fused, ") + b2b::residency_name(auto_plan.options.residency) + ", " +
                    family_name(auto_plan.family) + " (not among the rows)";
      if (auto_plan.unfused) auto_path += " (the fused kernels measured slower at this shape)";
    }
  }
  // Where the planner took the Hopper kernel's warp-specialised schedule, the other one as a row of
  // its own (the same plan with persistent_ctas = 0: one CTA a tile), the comparison its rule rests on.
  for (size_t i = 0; i < paths.size(); ++i)
    if (refused[i].empty() && plans[i].persistent_ctas > 0) {
      b2b::Plan tiles = plans[i];
      tiles.persistent_ctas = 0;
      paths.insert(paths.begin() + i + 1, {paths[i].name + ", one CTA a tile", paths[i].options});
      plans.insert(plans.begin() + i + 1, tiles);
      refused.insert(refused.begin() + i + 1, std::string());
      ++i;
    }
  const HostData d = make_data(p, o);
  const DeviceSets sets = upload(d);
  Buf ws(ws_bytes);
  const int iters = o.iters > 0 ? o.iters : 50;
  std::vector<PathRow> rows;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!refused[i].empty()) {
      PathRow r;
      r.path = paths[i].name;
      r.note = refused[i];
      rows.push_back(r);
      continue;
    }
    rows.push_back(measure(paths[i].name, h.get(), plans[i], p, d, sets, ws.p, iters));
  }
  h.set_stream(nullptr);
  cudaStreamDestroy(st);
  print(o, p, d, rows, iters, auto_path);
  // int8 and integer fp16 inputs must match exactly; real inputs within 2e-2 (fp32 sums in another order).
  for (const auto& r : rows)
    if (r.ran && ((d.s8 || d.integers) ? r.mismatches != 0 : !(r.worst < 2e-2))) {
      std::cerr << "ozgemm: error: " << r.path << " does not match the host reference\n";
      return kExitFailure;
    }
  return kExitOk;
}

}  // namespace cli
}  // namespace ozgemm
